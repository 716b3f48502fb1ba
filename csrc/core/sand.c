/* sand.c - the sand effect (see sand.h for the method and its paper).
 *
 * State: the static heightfield `bed` (whole grid; inside the DEM region it
 * is the floor the DEs rest on), the region mask, the DEs (double SoA), the
 * DE-DE contacts as pairs each computed once from a candidate list kept over
 * many steps (sand_internal.h, element_pairs; each DE then gathers its
 * share in a fixed order: same result for any thread count), the contact
 * histories' slots per DE that the checkpoint and renumbering carry, the
 * objects (rigid bodies or keyframed) with their span maps.
 *
 * One step:  objects' span maps -> neighbour grid (at every 4th frame's
 *            first step the DEs are put in its cell order) -> the pairs
 *            (kept, or found again) -> forces (parallel: the pairs, then
 *            each DE's shares and sources) -> integrate DEs (parallel) and
 *            objects -> landing of airborne grains, edges, region growth,
 *            splitting (serial, in index order).
 *
 * This file is the recipe (parameters, set-up, the step, outputs, checkpoint);
 * the stages are in their own files, listed in sand_internal.h.
 */
#include "sand_internal.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact.h"
#include "grid.h"
#include "parallel.h"
#include "hsmap.h"
#include "particles.h"
#include "mesh.h"
#include "motion.h"
#include "rigid.h"
#include "rigid_object.h"
#include "rng.h"
#include "vecmath.h"

/* -------------------------------------------------------------- parameters */

#define P ts_sand_params
static const ts_param_def PARAMS[] = {
    TS_REAL(P, cell_size, 1e-4, 100.0, 0.02),
    TS_REAL(P, noise, 0.0, 100.0, 0.0),
    TS_REAL(P, angle_of_repose, 1.0 * TS_RADIANS_PER_DEGREE, 90.0 * TS_RADIANS_PER_DEGREE,
            33.0 * TS_RADIANS_PER_DEGREE),
    TS_REAL(P, bulk_density, 1e-9, 30000.0, 1600.0),
    TS_REAL(P, element_radius, 1e-5, 100.0, 0.01),
    TS_INT(P, grains_per_element, 1, 1000, 30),
    TS_REAL(P, friction, 0.0, 10.0, 0.5),
    TS_REAL(P, restitution, 0.01, 1.0, 0.3),
    TS_REAL(P, rolling_friction, 0.0, 10.0, 0.0),
    TS_REAL(P, unloading_stiffness, 1.0, 20.0, 4.0),
    TS_REAL(P, contact_time, 0.0, 10.0, 0.0),
    TS_REAL(P, split_speed, 1e-4, 1000.0, 0.3),
    TS_REAL(P, resting_gap, 0.01, 100.0, 0.5),
    TS_REAL(P, cone_angle, 0.0, 90.0 * TS_RADIANS_PER_DEGREE, 15.0 * TS_RADIANS_PER_DEGREE),
    TS_REAL(P, dem_depth, 0.0, 1000.0, 0.0),
    TS_REAL(P, grow_force, 0.01, 1e6, 10.0),
    TS_REAL(P, rest_force, 0.0, 100.0, 0.05),
    TS_REAL(P, rest_speed, 0.0, 100.0, 0.005),
    TS_INT(P, smoothing, 0, 100, 2),
    TS_VEC3(P, gravity, -1000.0, 1000.0, 0.0, 0.0, -9.81),
    TS_REAL(P, steps_per_contact, 2.0, 1000.0, 10.0),
    TS_LONG(P, max_elements, 1, 200e6, 2e6),
    TS_SCENE_REAL(P, x0, -1e9, 1e9, 0.0),
    TS_SCENE_REAL(P, y0, -1e9, 1e9, 0.0),
    TS_SCENE_INT(P, nx, 2, 40e6, 64),
    TS_SCENE_INT(P, ny, 2, 40e6, 64),
    TS_SCENE_INT(P, frame_start, -1e6, 1e6, 1),
    TS_SCENE_REAL(P, fps, 1e-3, 1e4, 24.0),
    TS_SCENE_SEED(P, seed),
};
#undef P
const ts_param_table ts_sand_param_table = TS_PARAM_TABLE("sand", ts_sand_params, PARAMS);

ts_sand_params ts_sand_params_default(void)
{
    ts_sand_params p;
    ts_params_default(&ts_sand_param_table, &p);
    return p;
}

static ts_status check_params(const ts_sand_params *p, ts_error *err)
{
    ts_status st = ts_params_check(&ts_sand_param_table, p, err);
    if (st != TS_OK)
        return st;
    if ((double)p->nx * p->ny > 4e7)
        return ts_fail(err, TS_ERR_INVALID, "the sand bed grid is %d x %d cells; it needs 2-40M cells: change "
                       "cell_size", p->nx, p->ny);
    if (p->element_radius > 2.0 * p->cell_size || p->element_radius < 0.1 * p->cell_size)
        return ts_fail(err, TS_ERR_INVALID, "element_radius (%g m) must be 0.1-2 x cell_size (%g m)",
                       p->element_radius, p->cell_size);
    return TS_OK;
}

/* The contact time when none is given (contact_time 0): the one at which a DE resting on a wall under its own
 * weight is pressed in by CONTACT_SAG of its radius. Eq. A-9 with m_eff = m gives m g / k = g t_c^2 / (pi^2 +
 * ln^2 e_n), so t_c = sqrt(sag r (pi^2 + ln^2 e_n) / g): it grows as the square root of the DE's size, and
 * the sand behaves alike at every scale (0.014 s for 1 cm DEs of the default restitution, 0.1 s for the paper's
 * DEs of 0.5). Stiffer contacts burst a packed layer that a pressing object squeezes against the region's floor:
 * with 1 cm DEs, a 10 cm box pressed 1 cm in at 0.24 m/s threw 1.8 litres of sand up to 1 m high at 0.004 s (the
 * old default, a sag of 0.14 %), 0.7 litres at 0.006 s, nothing from 0.008 s (0.55 %) on. 1.7 % keeps a factor 3
 * from that edge; a layer of 5 DEs then sags about 5 % of a radius. Without gravity, Earth's.
 *
 * A heavy object asks for stiffer contacts: the DEs under it carry its weight over its mean horizontal section
 * (volume / height), rho_o g H, which is (rho_o / rho_b) H / (sqrt 2 r) DE weights per DE of a layer - soft
 * contacts let it down through the layer (a 10 cm cube of 3000 kg/m^3 on 1 cm DEs, 13 DE weights, sank 2.3 cells
 * through a 5-cell layer at a sag of 1.7 %, 0.26 cells at 0.87 %). So the sag is also at most OBJECT_SAG over the
 * heaviest simulated object's DE weights (a 10 cm cube of 1000 kg/m^3, 4.4 DE weights, keeps 1.7 %). A deeper
 * layer gives way sooner: the sag at which it does, measured for loads of 4.4 to 27 DE weights on layers of 3.5
 * to 21 DE layers (docs/sand.md), is about 0.8 / (weights x layers) - so the sag is also at most LAYER_SAG /
 * (weights x layers), the layers being the DEM depth (or the automatic one's bound, object_dem_depth)
 * over sqrt 2 r. Never under MIN_SAG, a little above the bursting edge above (keyframed objects press with no
 * weight to go by). */
#define CONTACT_SAG 0.017
#define OBJECT_SAG 0.10
#define LAYER_SAG 0.6
#define MIN_SAG 0.006
static double automatic_contact_time(const ts_sand *s)
{
    const double g_here = gravity_magnitude(s), g = g_here > 0.0 ? g_here : 9.80665, ln_e = log(s->p.restitution);
    const double layer = M_SQRT2 * s->p.element_radius; /* a layer's height */
    double deepest = 0.0, weights = 0.0;
    for (size_t k = 0; k < s->n_objects; k++) {
        deepest = fmax(deepest, object_dem_depth(s, &s->objects[k]));
        weights = fmax(weights, object_weights(s, &s->objects[k]));
    }
    const double depth = s->p.dem_depth > 0.0 ? s->p.dem_depth : deepest; /* sand_place_under_objects */
    const double layers = depth / layer;
    double sag = CONTACT_SAG;
    if (weights > 0.0)
        sag = fmin(sag, fmin(OBJECT_SAG / weights, LAYER_SAG / (weights * layers)));
    sag = fmax(sag, MIN_SAG);
    return sqrt(sag * s->p.element_radius * (M_PI * M_PI + ln_e * ln_e) / g);
}

/* ------------------------------------------------------------------ memory */

static ts_status register_elements(ts_sand *s, ts_error *err)
{
    const size_t d = sizeof(double), f = sizeof(float);
    const ts_particle_column columns[] = {
        TS_STATE_COLUMN("x", &s->x, TS_ATTR_F64, 1), TS_STATE_COLUMN("y", &s->y, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("z", &s->z, TS_ATTR_F64, 1), TS_STATE_COLUMN("vx", &s->vx, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("vy", &s->vy, TS_ATTR_F64, 1), TS_STATE_COLUMN("vz", &s->vz, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("wx", &s->wx, TS_ATTR_F64, 1), TS_STATE_COLUMN("wy", &s->wy, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("wz", &s->wz, TS_ATTR_F64, 1), TS_STATE_COLUMN("r", &s->r, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("volume", &s->vol, TS_ATTR_F64, 1), TS_STATE_COLUMN("mass", &s->m, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("id", &s->id, TS_ATTR_U32, 1), TS_STATE_COLUMN("flags", &s->flags, TS_ATTR_U8, 1),
        TS_STATE_COLUMN("contact_count", &s->c.count, TS_ATTR_U8, 1),
        TS_STATE_COLUMN("source_d_t", &s->c.source_d_t, TS_ATTR_F64, HISTORY * SOURCE_SLOTS),
        /* saved in sections of their own (save_contacts) */
        TS_CARRIED_COLUMN("partner", &s->c.partner, MAX_CONTACTS * sizeof *s->c.partner),
        TS_CARRIED_COLUMN("d_t", &s->c.d_t, MAX_CONTACTS * HISTORY * sizeof *s->c.d_t),
        TS_CARRIED_COLUMN("source", &s->c.source, SOURCE_SLOTS * sizeof *s->c.source),
        /* spatter detection reads it after the compaction; every force pass sets it */
        TS_CARRIED_COLUMN("supported", &s->supported, 1),
        TS_WORK_COLUMN("fx", &s->fx, d), TS_WORK_COLUMN("fy", &s->fy, d), TS_WORK_COLUMN("fz", &s->fz, d),
        TS_WORK_COLUMN("tx", &s->tx, d), TS_WORK_COLUMN("ty", &s->ty, d), TS_WORK_COLUMN("tz", &s->tz, d),
        TS_WORK_COLUMN("inv_m", &s->inv_m, d), TS_WORK_COLUMN("gx", &s->gx, f), TS_WORK_COLUMN("gy", &s->gy, f),
        TS_WORK_COLUMN("gz", &s->gz, f), TS_WORK_COLUMN("state", &s->state, sizeof *s->state),
        TS_WORK_COLUMN("acc", &s->acc, sizeof *s->acc),
        TS_WORK_COLUMN("reaction", &s->reaction, 6 * (s->n_objects + 1) * d), TS_WORK_COLUMN("keep", &s->keep, 1),
        TS_WORK_COLUMN("may_grow", &s->may_grow, 1),
        /* the rolling torques, last: without rolling friction they are not kept at all (every byte a DE
         * carries is moved by each sort and compaction: 7 % of a bed's bake time) */
        TS_STATE_COLUMN("source_m_r", &s->c.source_m_r, TS_ATTR_F64, 3 * SOURCE_SLOTS),
        TS_CARRIED_COLUMN("m_r", &s->c.m_r, MAX_CONTACTS * 3 * sizeof *s->c.m_r),
    };
    size_t n = sizeof columns / sizeof *columns - (s->p.rolling_friction > 0.0 ? 0 : 2);
    ts_particles_init(&s->el, "sand", (size_t)s->p.max_elements);
    return ts_particles_register(&s->el, columns, n, err);
}

ts_status sand_grow_elements(ts_sand *s, size_t need, ts_error *err)
{
    if (need > s->el.max)
        return ts_fail(err, TS_ERR_NOMEM, "sand: the bake needs more than max_elements = %ld distinct elements; "
                       "raise Max Elements, or use a larger element radius or a shallower DEM depth",
                       s->p.max_elements);
    return ts_particles_reserve(&s->el, need, err);
}

/* Append a DE at rest with no contacts; returns its index. */
size_t sand_add_element(ts_sand *s, ts_vec3 p, ts_vec3 v, double radius, double volume, uint8_t flags)
{
    size_t i = s->el.n++;
    s->x[i] = p.x, s->y[i] = p.y, s->z[i] = p.z;
    s->vx[i] = v.x, s->vy[i] = v.y, s->vz[i] = v.z;
    s->wx[i] = s->wy[i] = s->wz[i] = 0.0;
    s->r[i] = radius, s->vol[i] = volume, s->m[i] = volume * s->p.bulk_density;
    s->id[i] = s->next_id++;
    s->flags[i] = flags;
    s->supported[i] = 1; /* until its first force pass says otherwise: no spatter before it has felt a force */
    contacts *c = &s->c;
    c->count[i] = 0;
    for (int k = 0; k < SOURCE_SLOTS; k++)
        c->source[i * SOURCE_SLOTS + k] = NO_SOURCE;
    memset(c->source_d_t + i * SOURCE_SLOTS * HISTORY, 0, SOURCE_SLOTS * HISTORY * sizeof *c->source_d_t);
    if (c->source_m_r)
        memset(c->source_m_r + i * SOURCE_SLOTS * 3, 0, SOURCE_SLOTS * 3 * sizeof *c->source_m_r);
    if (s->el.n > s->max_seen)
        s->max_seen = s->el.n;
    return i;
}

/* ------------------------------------------------------------------ set-up */

static ts_status add_object(object *ob, const ts_object_input *o, ts_error *err)
{
    ts_mass_properties mp;
    ts_status st = ts_rigid_object_init(&ob->body, o, "object", &mp, err);
    if (st != TS_OK)
        return st;
    ob->vertex_count = o->vertex_count;
    ob->triangle_count = o->triangle_count;
    ob->rest = malloc(3 * o->vertex_count * sizeof *ob->rest);
    ob->world = malloc(3 * o->vertex_count * sizeof *ob->world);
    ob->triangles = malloc(3 * o->triangle_count * sizeof *ob->triangles);
    if (!ob->rest || !ob->world || !ob->triangles)
        return ts_fail(err, TS_ERR_NOMEM, "object '%s': out of memory", o->name);
    double zlo = INFINITY, zhi = -INFINITY;
    for (size_t k = 0; k < o->vertex_count; k++) {
        for (int a = 0; a < 3; a++)
            ob->rest[3 * k + a] = o->vertices[3 * k + a] - (a == 0 ? mp.centroid.x : a == 1 ? mp.centroid.y : mp.centroid.z);
        zlo = fmin(zlo, o->vertices[3 * k + 2]), zhi = fmax(zhi, o->vertices[3 * k + 2]);
    }
    memcpy(ob->triangles, o->triangles, 3 * o->triangle_count * sizeof *ob->triangles);
    ob->height = zhi - zlo;
    if (!ob->body.keyframed) /* see automatic_contact_time */
        ob->areal_mass = ob->body.rb.mass / mp.volume * ob->height;
    ts_hsmap_init(&ob->map);
    return TS_OK;
}

/* Diffusion between neighbouring masked columns (all when mask is NULL), in flux form so the sum of
 * heights (the volume) is kept to rounding; `rate` 1/8 is stable. */
void sand_smooth_heights(double *h, double *flux_sum, const uint8_t *mask, int nx, int ny, int passes)
{
    const double rate = 0.125;
    size_t n = (size_t)nx * (size_t)ny;
    for (int pass = 0; pass < passes; pass++) {
        memset(flux_sum, 0, n * sizeof *flux_sum);
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                size_t c = (size_t)i + (size_t)nx * j;
                if (mask && !mask[c])
                    continue;
                if (i + 1 < nx && (!mask || mask[c + 1])) {
                    double f = rate * (h[c] - h[c + 1]);
                    flux_sum[c] -= f, flux_sum[c + 1] += f;
                }
                if (j + 1 < ny && (!mask || mask[c + (size_t)nx])) {
                    double f = rate * (h[c] - h[c + (size_t)nx]);
                    flux_sum[c] -= f, flux_sum[c + (size_t)nx] += f;
                }
            }
        for (size_t c = 0; c < n; c++)
            h[c] += flux_sum[c];
    }
}

static void add_noise(ts_sand *s)
{
    if (s->p.noise <= 0.0)
        return;
    for (size_t c = 0; c < s->n_columns; c++)
        s->bed[c] += s->p.noise * (2.0 * ts_rng_hash_uniform(s->p.seed, 0x5a4d, c) - 1.0);
    /* white noise smoothed into bumps a few cells wide (volume kept) */
    sand_smooth_heights(s->bed, s->column_scratch, NULL, s->cols.nx, s->cols.ny, 4);
}

ts_status ts_sand_create(ts_sand **out, const ts_sand_params *p, const ts_sand_object *objects, size_t count,
                         ts_error *err)
{
    *out = NULL;
    ts_status st = check_params(p, err);
    if (st != TS_OK)
        return st;
    size_t grounds = 0;
    for (size_t k = 0; k < count; k++)
        grounds += objects[k].role == TS_SAND_GROUND;
    if (grounds != 1)
        return ts_fail(err, TS_ERR_INVALID, "the scene needs exactly one Sand Bed object (it has %zu)", grounds);
    ts_sand *s = calloc(1, sizeof *s);
    if (!s)
        return ts_fail(err, TS_ERR_NOMEM, "sand: out of memory");
    *out = s;
    s->p = *p;
    s->cols = (ts_columns){p->x0, p->y0, p->cell_size, p->nx, p->ny};
    s->n_columns = (size_t)p->nx * (size_t)p->ny;
    s->bed = malloc(s->n_columns * sizeof *s->bed);
    s->display = malloc(s->n_columns * sizeof *s->display);
    s->column_scratch = malloc(s->n_columns * sizeof *s->column_scratch);
    s->display_f = malloc(s->n_columns * sizeof *s->display_f);
    s->region = calloc(s->n_columns, 1);

    s->objects = calloc(count, sizeof *s->objects);
    if (!s->bed || !s->display || !s->column_scratch || !s->display_f || !s->region ||
        !s->objects)
        return ts_fail(err, TS_ERR_NOMEM, "sand: out of memory for a %d x %d bed", p->nx, p->ny);
    ts_grid_init(&s->grid);
    ts_skin_pairs_init(&s->pairs.list, 0.0, 0.0); /* radius and skin from the DEs' size at the first step */
    for (size_t k = 0; k < count; k++) {
        const ts_object_input *o = &objects[k].in;
        if (objects[k].role == TS_SAND_GROUND) {
            if (!o->vertex_count || !o->triangle_count)
                return ts_fail(err, TS_ERR_INVALID, "Sand Bed '%s' has no faces; give it a grid or a plane", o->name);
            char what[96];
            snprintf(what, sizeof what, "Sand Bed '%s'", o->name);
            if ((st = ts_columns_top_surface(&s->cols, o->vertices, o->vertex_count, o->triangles, o->triangle_count,
                                             what, s->bed, err)) != TS_OK)
                return st;
        } else if (objects[k].role == TS_SAND_OBJECT) {
            if ((st = add_object(&s->objects[s->n_objects++], o, err)) != TS_OK)
                return st;
        } else {
            return ts_fail(err, TS_ERR_INVALID, "object '%s': unknown role %d", o->name, (int)objects[k].role);
        }
    }
    add_noise(s);
    sand_unsettle(s, 0, 0, p->nx - 1, p->ny - 1); /* the bed as given may be steeper than the sand holds */
    for (size_t k = 0; k < s->n_objects; k++) { /* an object must start above the sand */
        object *ob = &s->objects[k];
        for (size_t v = 0; v < ob->vertex_count; v++) {
            int i, j;
            double x = ob->rest[3 * v] + ob->body.rb.x.x, y = ob->rest[3 * v + 1] + ob->body.rb.x.y;
            double z = ob->rest[3 * v + 2] + ob->body.rb.x.z;
            if (ts_columns_index(&s->cols, x, y, &i, &j) && z < s->bed[i + (size_t)p->nx * j] - 1e-9)
                return ts_fail(err, TS_ERR_INVALID, "object '%s' starts below the sand surface (a vertex at z = %.4g m "
                               "under a surface at %.4g m); move it above the Sand Bed at the first frame", ob->body.name,
                               z, s->bed[i + (size_t)p->nx * j]);
        }
    }
    size_t simulated = 0;
    for (size_t k = 0; k < s->n_objects; k++)
        simulated += !s->objects[k].body.keyframed;
    for (size_t k = 0, o = 0; s->n_objects > 1 && simulated > 0 && k < count; k++)
        if (objects[k].role == TS_SAND_OBJECT &&
            (st = ts_object_contacts_add(&s->object_contacts, &s->objects[o++].body, &objects[k].in, p->element_radius,
                                         err)) != TS_OK)
            return st;
    s->law = (ts_contact_law){p->contact_time > 0.0 ? p->contact_time : automatic_contact_time(s), p->restitution,
                              p->friction};
    ts_contact_coefficients(&s->law, 1.0, &s->K0, &s->C0);
    s->element_volume0 = 4.0 * M_SQRT2 * pow(p->element_radius, 3); /* FCC: (2r)^2 per DE per layer, layers sqrt(2) r apart */
    s->next_id = 0;
    if ((st = register_elements(s, err)) != TS_OK || (st = sand_grow_elements(s, 1, err)) != TS_OK)
        return st;
    s->now = (ts_step_context){p->frame_start, 1.0 / p->fps, 0.0, 0.0, 0.0};
    return TS_OK;
}

void ts_sand_destroy(ts_sand *s)
{
    if (!s)
        return;
    for (size_t k = 0; k < s->n_objects; k++) {
        free(s->objects[k].rest);
        free(s->objects[k].world);
        free(s->objects[k].triangles);
        ts_hsmap_free(&s->objects[k].map);
    }
    free(s->objects);
    ts_object_contacts_free(&s->object_contacts);
    void *all[] = {s->bed, s->region, s->display, s->display_f, s->column_scratch};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        free(all[k]);
    ts_particles_free(&s->el);
    ts_grid_free(&s->grid);
    sand_pairs_free(&s->pairs);
    free(s);
}

/* ------------------------------------------------------------- frame loop */

static ts_status sand_begin_frame(void *state, const ts_step_context *now, ts_error *err)
{
    ts_sand *s = state;
    s->now = *now;
    s->sort_pending = (now->frame - s->p.frame_start) % SORT_EVERY_FRAMES == 0;
    for (size_t k = 0; k < s->n_objects; k++)
        ts_rigid_object_begin_frame(&s->objects[k].body, now->frame - s->p.frame_start);
    return sand_update_span_maps(s, 0.0, err);
}

static ts_status sand_stable_dt(void *state, double *dt, ts_error *err)
{
    (void)err;
    ts_sand *s = state;
    *dt = s->law.contact_time / s->p.steps_per_contact;
    return TS_OK;
}

static ts_status check_finite(const ts_sand *s, ts_error *err)
{
    size_t first = SIZE_MAX; /* the first in DE order, whatever the threads */
    #pragma omp parallel for schedule(static) reduction(min : first) if (s->el.n >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < s->el.n; i++)
        if (!isfinite(s->x[i] + s->y[i] + s->z[i] + s->vx[i] + s->vy[i] + s->vz[i]))
            first = i < first ? i : first;
    if (first != SIZE_MAX)
        return ts_fail(err, TS_ERR_UNSTABLE, "element %u is not finite; raise Steps per Contact or the "
                       "Contact Time", s->id[first]);
    for (size_t k = 0; k < s->n_objects; k++)
        if (!isfinite(s->objects[k].body.rb.x.x + s->objects[k].body.rb.x.y + s->objects[k].body.rb.x.z))
            return ts_fail(err, TS_ERR_UNSTABLE, "object '%s' is not finite", s->objects[k].body.name);
    return TS_OK;
}

/* At the step's end, keyframed objects where their animation puts them: the simulated ones pushed out of each
 * other and of them. */
static void objects_against_each_other(ts_sand *s, const ts_step_context *now)
{
    if (!s->object_contacts.n)
        return;
    for (size_t k = 0; k < s->n_objects; k++)
        ts_rigid_object_follow(&s->objects[k].body, now->s_end);
    ts_object_contacts_resolve(&s->object_contacts, now->frame_dt, now->s_end);
}

static ts_status sand_step(void *state, const ts_step_context *now, ts_error *err)
{
    ts_sand *s = state; /* the span maps are current: begin_frame and the last step's end built them */
    const double dt = now->dt;
    s->now = *now;
    ts_status st = sand_place_under_objects(s, err);
    if (st == TS_OK)
        sand_prepare_elements(s);
    if (st == TS_OK && s->sort_pending) {
        st = sand_sort_into_cells(s, err);
        s->sort_pending = 0;
    }
    if (st == TS_OK)
        st = sand_find_pairs(s, err);
    if (st != TS_OK)
        return st;
    sand_compute_forces(s, dt);
    sand_integrate_elements(s, dt);
    sand_integrate_objects(s, dt);
    objects_against_each_other(s, now);
    if ((st = sand_update_span_maps(s, now->s_end, err)) == TS_OK)
        sand_objects_on_bed(s);
    if (st == TS_OK) st = sand_land_and_remove(s, err);
    if (st == TS_OK) st = sand_grow_region(s, err);
    if (st == TS_OK) sand_avalanche(s, dt);
    if (st == TS_OK) st = sand_detect_spatter(s, err);
    if (st == TS_OK) st = check_finite(s, err);
    double airborne = 0.0;
    for (size_t i = 0; i < s->el.n; i++)
        if (s->flags[i] & FLAG_AIRBORNE)
            airborne += s->vol[i];
    if (airborne > s->peak_airborne)
        s->peak_airborne = airborne;
    s->steps++;
    return st;
}

static void object_pose(const void *state, size_t k, ts_vec3 *position, ts_quat *rotation)
{
    ts_rigid_object_origin_pose(&((const ts_sand *)state)->objects[k].body, position, rotation);
}

/* The "volume" table: where the sand is at this frame, m^3 (the bed's relative to z = 0). The total stays what it
 * was at the first frame: what leaves over the bed's edges is counted, not lost. */
static ts_status write_volume(const ts_sand *s, ts_frame_output *out, ts_error *err)
{
    ts_sand_stats v;
    ts_sand_get_stats(s, &v);
    const char *names[] = {"bed", "elements", "airborne", "over_edges", "total"};
    const double row[] = {v.volume_bed, v.volume_elements, v.volume_airborne, v.volume_lost,
                          v.volume_bed + v.volume_elements + v.volume_airborne + v.volume_lost};
    ts_frame t;
    ts_frame_init(&t, out->frame, out->time, 1);
    ts_status st = TS_OK;
    for (size_t c = 0; c < sizeof row / sizeof *row && st == TS_OK; c++)
        st = ts_frame_add(&t, names[c], TS_ATTR_F64, 1, &row[c], err);
    return st == TS_OK ? ts_output_particles(out, "volume", &t, err) : st;
}

static ts_status sand_write_frame(void *state, ts_frame_output *out, ts_error *err)
{
    ts_sand *s = state;
    sand_rebuild_display(s);
    ts_frame f;
    ts_frame_init(&f, out->frame, out->time, s->n_columns);
    ts_status st = ts_frame_add(&f, "height", TS_ATTR_F32, 1, s->display_f, err);
    if (st == TS_OK)
        st = ts_output_particles(out, "ground", &f, err);
    size_t m = 0; /* the grains written: those the rebuild left out of the ground, marked in keep */
    for (size_t i = 0; i < s->el.n; i++)
        m += s->keep[i];
    float *pos = malloc((3 * m + 1) * sizeof *pos), *vel = malloc((3 * m + 1) * sizeof *vel);
    float *rad = malloc((m + 1) * sizeof *rad);
    uint8_t *air = malloc(m + 1);
    uint32_t *ids = malloc((m + 1) * sizeof *ids);
    if (st == TS_OK && (!pos || !vel || !rad || !air || !ids))
        st = ts_fail(err, TS_ERR_NOMEM, "sand: out of memory writing frame %d", out->frame);
    for (size_t i = 0, k = 0; st == TS_OK && i < s->el.n; i++) {
        if (!s->keep[i])
            continue;
        pos[3 * k] = (float)s->x[i], pos[3 * k + 1] = (float)s->y[i], pos[3 * k + 2] = (float)s->z[i];
        vel[3 * k] = (float)s->vx[i], vel[3 * k + 1] = (float)s->vy[i], vel[3 * k + 2] = (float)s->vz[i];
        rad[k] = (float)s->r[i], air[k] = (uint8_t)(s->flags[i] & FLAG_AIRBORNE), ids[k] = s->id[i];
        k++;
    }
    ts_frame g;
    ts_frame_init(&g, out->frame, out->time, m);
    if (st == TS_OK) st = ts_frame_add(&g, "position", TS_ATTR_F32, 3, pos, err);
    if (st == TS_OK) st = ts_frame_add(&g, "velocity", TS_ATTR_F32, 3, vel, err);
    if (st == TS_OK) st = ts_frame_add(&g, "radius", TS_ATTR_F32, 1, rad, err);
    if (st == TS_OK) st = ts_frame_add(&g, "airborne", TS_ATTR_U8, 1, air, err);
    if (st == TS_OK) st = ts_frame_add(&g, "id", TS_ATTR_U32, 1, ids, err);
    if (st == TS_OK) st = ts_output_particles(out, "grains", &g, err);
    free(pos), free(vel), free(rad), free(air), free(ids);
    if (st == TS_OK && s->n_objects > 0)
        st = ts_output_transforms(out, "rigid", s->n_objects, object_pose, s, err);
    if (st == TS_OK)
        st = write_volume(s, out, err);
    return st;
}

/* ------------------------------------------------------------- checkpoint */

/* Sections: "elements" (the DEs' state arrays, with each DE's number of
 * DE contacts and its source histories), "sources" (the objects or the bed
 * each DE touches), "contacts" (the DE contacts in the elements' order:
 * packed, not the MAX_CONTACTS slots), "bed", "objects", "counters". */
static void bed_columns(ts_sand *s, ts_column c[2])
{
    c[0] = (ts_column){"height", TS_ATTR_F64, 1, s->bed};
    c[1] = (ts_column){"region", TS_ATTR_U8, 1, s->region};
}

static ts_status save_contacts(const ts_sand *s, ts_checkpoint *cp, ts_error *err)
{
    const contacts *c = &s->c;
    const size_t n = s->el.n;
    size_t n_contacts = 0;
    for (size_t i = 0; i < n; i++)
        n_contacts += c->count[i];
    int32_t *source = ts_checkpoint_scratch(cp, n * SOURCE_SLOTS * sizeof *source, err);
    uint32_t *partner = ts_checkpoint_scratch(cp, n_contacts * sizeof *partner, err);
    float *d_t = ts_checkpoint_scratch(cp, n_contacts * HISTORY * sizeof *d_t, err);
    float *m_r = c->m_r ? ts_checkpoint_scratch(cp, n_contacts * 3 * sizeof *m_r, err) : NULL;
    if (!source || !partner || !d_t || (c->m_r && !m_r))
        return TS_ERR_NOMEM;
    for (size_t k = 0; k < n * SOURCE_SLOTS; k++)
        source[k] = c->source[k];
    for (size_t i = 0, at = 0; i < n; i++)
        for (int k = 0; k < c->count[i]; k++, at++) {
            partner[at] = c->partner[i * MAX_CONTACTS + (size_t)k];
            memcpy(d_t + HISTORY * at, c->d_t + (i * MAX_CONTACTS + (size_t)k) * HISTORY, HISTORY * sizeof *d_t);
            if (m_r)
                memcpy(m_r + 3 * at, c->m_r + (i * MAX_CONTACTS + (size_t)k) * 3, 3 * sizeof *m_r);
        }
    const ts_column source_column = {"object", TS_ATTR_I32, SOURCE_SLOTS, source};
    const ts_column contact_columns[] = {{"partner", TS_ATTR_U32, 1, partner}, {"d_t", TS_ATTR_F32, HISTORY, d_t},
                                         {"m_r", TS_ATTR_F32, 3, m_r}};
    ts_status st = ts_checkpoint_put(cp, "sources", n, &source_column, 1, err);
    /* the rolling torques only where they are kept (rolling friction on) */
    return st == TS_OK ? ts_checkpoint_put(cp, "contacts", n_contacts, contact_columns, m_r ? 3 : 2, err) : st;
}

static ts_status sand_save_state(void *state, ts_checkpoint *cp, ts_error *err)
{
    ts_sand *s = state;
    ts_column bed[2];
    bed_columns(s, bed);
    const ts_value counters[] = {{"next_id", s->next_id}, {"steps", (double)s->steps}, {"depth", s->depth},
                                 {"volume_lost", s->volume_lost}, {"peak_airborne", s->peak_airborne},
                                 {"max_seen", (double)s->max_seen}};
    sand_pairs_to_slots(s);
    ts_status st = ts_particles_save(&s->el, cp, "elements", err);
    if (st == TS_OK) st = save_contacts(s, cp, err);
    if (st == TS_OK) st = ts_checkpoint_put(cp, "bed", s->n_columns, bed, 2, err);
    if (st == TS_OK)
        st = ts_rigid_save(cp, "objects", s->objects, offsetof(object, body.rb), sizeof *s->objects, s->n_objects, err);
    if (st == TS_OK) st = ts_checkpoint_put_values(cp, "counters", counters, sizeof counters / sizeof *counters, err);
    return st;
}

/* The contacts of the restored elements back into their slots. */
static ts_status restore_contacts(ts_sand *s, const ts_checkpoint *cp, ts_error *err)
{
    const size_t n = s->el.n;
    uint64_t n_contacts;
    ts_status st = ts_checkpoint_rows(cp, "contacts", &n_contacts, err);
    if (st != TS_OK)
        return st;
    contacts *c = &s->c;
    int32_t *source = malloc((n * SOURCE_SLOTS + 1) * sizeof *source);
    uint32_t *partner = malloc(((size_t)n_contacts + 1) * sizeof *partner);
    float *d_t = malloc(((size_t)n_contacts * HISTORY + 1) * sizeof *d_t);
    float *m_r = c->m_r ? malloc(((size_t)n_contacts * 3 + 1) * sizeof *m_r) : NULL;
    const ts_column source_column = {"object", TS_ATTR_I32, SOURCE_SLOTS, source};
    const ts_column contact_columns[] = {{"partner", TS_ATTR_U32, 1, partner}, {"d_t", TS_ATTR_F32, HISTORY, d_t},
                                         {"m_r", TS_ATTR_F32, 3, m_r}};
    st = source && partner && d_t && (m_r || !c->m_r) ? TS_OK : ts_fail(err, TS_ERR_NOMEM, "sand: out of memory restoring the checkpoint");
    if (st == TS_OK) st = ts_checkpoint_get(cp, "sources", n, &source_column, 1, err);
    if (st == TS_OK) st = ts_checkpoint_get(cp, "contacts", n_contacts, contact_columns, m_r ? 3 : 2, err);
    size_t at = 0;
    for (size_t i = 0; st == TS_OK && i < n; i++) {
        if (c->count[i] > MAX_CONTACTS || at + c->count[i] > n_contacts)
            st = ts_fail(err, TS_ERR_CORRUPT, "%s: the contacts do not match the elements; bake again from the start",
                         cp->source);
        for (int k = 0; st == TS_OK && k < c->count[i]; k++, at++) {
            c->partner[i * MAX_CONTACTS + (size_t)k] = partner[at];
            memcpy(c->d_t + (i * MAX_CONTACTS + (size_t)k) * HISTORY, d_t + HISTORY * at, HISTORY * sizeof *d_t);
            if (m_r)
                memcpy(c->m_r + (i * MAX_CONTACTS + (size_t)k) * 3, m_r + 3 * at, 3 * sizeof *m_r);
        }
        for (size_t k = i * SOURCE_SLOTS; st == TS_OK && k < (i + 1) * SOURCE_SLOTS; k++) {
            if (source[k] != NO_SOURCE && (source[k] < 0 || (size_t)source[k] > s->n_objects))
                st = ts_fail(err, TS_ERR_CORRUPT, "%s: a contact with object %d, which this scene does not have; "
                             "bake again from the start", cp->source, (int)source[k]);
            c->source[k] = (int16_t)source[k];
        }
    }
    if (st == TS_OK && at != n_contacts)
        st = ts_fail(err, TS_ERR_CORRUPT, "%s: the contacts do not match the elements; bake again from the start",
                     cp->source);
    free(source);
    free(partner);
    free(d_t);
    free(m_r);
    return st;
}

ts_status ts_sand_restore(ts_sand *s, const ts_checkpoint *cp, ts_error *err)
{
    ts_column bed[2];
    bed_columns(s, bed);
    ts_value counters[] = {{"next_id", 0}, {"steps", 0}, {"depth", 0}, {"volume_lost", 0}, {"peak_airborne", 0},
                           {"max_seen", 0}};
    ts_skin_pairs_invalidate(&s->pairs.list);
    s->pairs.newer = 0; /* the slots hold the histories */
    ts_status st = ts_particles_restore(&s->el, cp, "elements", err);
    if (st == TS_OK) st = restore_contacts(s, cp, err);
    if (st == TS_OK) st = ts_checkpoint_get(cp, "bed", s->n_columns, bed, 2, err);
    if (st == TS_OK)
        st = ts_rigid_restore(cp, "objects", s->objects, offsetof(object, body.rb), sizeof *s->objects, s->n_objects,
                              err);
    if (st == TS_OK)
        st = ts_checkpoint_get_values(cp, "counters", counters, sizeof counters / sizeof *counters, err);
    if (st != TS_OK)
        return st;
    s->next_id = (uint32_t)counters[0].value, s->steps = (long)counters[1].value, s->depth = counters[2].value;
    s->volume_lost = counters[3].value, s->peak_airborne = counters[4].value, s->max_seen = (size_t)counters[5].value;
    s->now.frame = cp->frame;
    /* the box of unsettled columns is not saved: the whole bed is looked at once, where nothing moves */
    sand_unsettle(s, 0, 0, s->cols.nx - 1, s->cols.ny - 1);
    return TS_OK;
}

/* ------------------------------------------------------------------ stats */

void ts_sand_get_stats(const ts_sand *s, ts_sand_stats *st)
{
    memset(st, 0, sizeof *st);
    const double area = s->p.cell_size * s->p.cell_size;
    for (size_t c = 0; c < s->n_columns; c++) {
        st->volume_bed += s->bed[c] * area;
        st->region_columns += s->region[c] != 0;
    }
    for (size_t i = 0; i < s->el.n; i++) {
        double v = sqrt(s->vx[i] * s->vx[i] + s->vy[i] * s->vy[i] + s->vz[i] * s->vz[i]);
        if (v > st->max_speed)
            st->max_speed = v;
        if (s->flags[i] & FLAG_AIRBORNE) {
            st->airborne++;
            st->volume_airborne += s->vol[i];
        } else {
            st->elements++;
            st->volume_elements += s->vol[i];
            st->on_objects += (size_t)sand_resting_on_object(s, i);
        }
    }
    st->volume_lost = s->volume_lost;
    st->peak_airborne_volume = s->peak_airborne;
    st->max_elements_seen = s->max_seen;
    st->steps = s->steps;
    st->dem_depth = s->depth;
    st->contact_time = s->law.contact_time;
}

static ts_status sand_create(void **state, const void *params, const void *objects, size_t count, ts_error *err)
{
    return ts_sand_create((ts_sand **)state, params, objects, count, err);
}

static ts_status sand_restore(void *state, const ts_checkpoint *cp, ts_error *err) { return ts_sand_restore(state, cp, err); }

static void sand_destroy(void *state) { ts_sand_destroy(state); }

static size_t sand_stats(const void *state, ts_stat *out)
{
    ts_sand_stats s;
    ts_sand_get_stats(state, &s);
    const ts_stat all[] = {
        {"elements", (double)s.elements, 1}, {"airborne", (double)s.airborne, 1},
        {"on_objects", (double)s.on_objects, 1}, {"region_columns", (double)s.region_columns, 1},
        {"max_elements_seen", (double)s.max_elements_seen, 1}, {"volume_bed", s.volume_bed, 0},
        {"volume_elements", s.volume_elements, 0}, {"volume_airborne", s.volume_airborne, 0},
        {"volume_lost", s.volume_lost, 0}, {"peak_airborne_volume", s.peak_airborne_volume, 0},
        {"max_speed", s.max_speed, 0}, {"dem_depth", s.dem_depth, 0}, {"contact_time", s.contact_time, 0},
        {"steps", (double)s.steps, 1},
    };
    return ts_stats_copy(out, all, sizeof all / sizeof *all);
}

const ts_solver_ops ts_sand_ops = {
    "sand", &ts_sand_param_table, sizeof(ts_sand_object), 1000, sand_create, sand_restore, sand_destroy, sand_stats,
    sand_begin_frame, sand_stable_dt, sand_step, sand_write_frame, sand_save_state,
};
