/* sand.c - the sand effect (see sand.h for the method and its paper).
 *
 * State: the static heightfield `bed` (whole grid; inside the DEM region it
 * is the floor the DEs rest on), the region mask, the DEs (double SoA, with
 * per-DE contact histories in fixed slots, each rebuilt by its own DE, so
 * the force pass is a pure gather: same result for any thread count), the objects (rigid
 * bodies or keyframed) with their span maps.
 *
 * One step:  objects' span maps -> neighbour grid (at a frame's first step
 *            the DEs are put in its cell order) -> forces (parallel, gather)
 *            -> integrate DEs (parallel) and objects -> landing of airborne
 *            grains, edges, region growth, splitting (serial, in index order).
 */
#include "sand.h"

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

#define MAX_CONTACTS 16      /* DE-DE contact histories kept per DE (FCC has 12 touching neighbours) */
#define SOURCE_SLOTS 3       /* objects or the bed a DE touches at once, with history */
#define NO_SOURCE (-1)
#define MAX_SPAN_HITS 32     /* span contacts averaged per DE and source */
#define GROW_RADIUS 2        /* columns added around a DE that pushes the region's edge */
#define FOOTPRINT_MARGIN 2   /* columns around an object's footprint when a region is placed */
#define CARRIED_SQUEEZE 0.25 /* automatic DEM depth: bottom contacts squeezed by at most this x radius */
#define FLAG_AIRBORNE 1u
#define FLAG_SPLIT 2u       /* chosen to spatter in this step's scan */

typedef struct object {
    ts_rigid_object body;        /* simulated or keyframed */
    double *rest;                /* vertices, body frame (about the centre of mass at rest) */
    size_t vertex_count;
    int32_t *triangles;
    size_t triangle_count;
    double *world;               /* vertices now */
    double height;               /* vertical size at rest, m */
    double lowest;               /* lowest world z of its vertices now: no span reaches below */
    ts_hsmap map;
    ts_vec3 reaction_force, reaction_torque; /* from the DEs this step */
} object;

/* What the force pass reads of a partner DE, packed and in the grid's cell
 * order: a run of candidates is a run of these, a cache line and a half
 * each, instead of a line from each of a dozen arrays. */
typedef struct partner_state {
    double x, y, z, vx, vy, vz, wx, wy, wz, r, inv_m;
    uint32_t id, airborne;
} partner_state;

/* One DE's contact histories with other DEs and with sources (objects, the bed). */
typedef struct contacts {
    uint8_t *count;              /* DE-DE slots used */
    uint32_t *partner;           /* MAX_CONTACTS per DE: partner ids */
    float *d_t;                  /* MAX_CONTACTS x 3 per DE (float: half the bytes the force pass moves) */
    int16_t *source;             /* SOURCE_SLOTS per DE: object index, n_objects for the bed, NO_SOURCE */
    double *source_d_t;          /* SOURCE_SLOTS x 3 per DE */
} contacts;

/* DE i's tangential history in slot k (kept in float, used in double). */
static inline ts_vec3 history_at(const contacts *c, size_t i, int k)
{
    const float *d = c->d_t + (i * MAX_CONTACTS + (size_t)k) * 3;
    return ts_v3(d[0], d[1], d[2]);
}

static inline void put_history(contacts *c, size_t i, int k, ts_vec3 d_t)
{
    float *d = c->d_t + (i * MAX_CONTACTS + (size_t)k) * 3;
    d[0] = (float)d_t.x, d[1] = (float)d_t.y, d[2] = (float)d_t.z;
}

struct ts_sand {
    ts_sand_params p;
    ts_columns cols;
    double *bed;                 /* static heights; the floor under the region */
    uint8_t *region;             /* column is in the DEM region */
    double *display;             /* rebuilt heights (double), then float for output */
    float *display_f;
    double *column_scratch;
    size_t n_columns;

    /* DEs */
    ts_particles el;             /* el.n DEs; the arrays below are registered in it (register_elements) */
    double *x, *y, *z, *vx, *vy, *vz, *wx, *wy, *wz, *r, *vol, *m;
    double *fx, *fy, *fz, *tx, *ty, *tz;
    double *inv_m;               /* 1 / m, refreshed with the grid each step */
    uint32_t *id;
    uint8_t *flags;
    uint8_t *supported;          /* the last force pass found a DE under this one */
    contacts c;                  /* each DE's own slots: the force pass rebuilds them in place */
    double *reaction;            /* per DE and source: force xyz, point xyz (serial sum after the pass);
                                    simulated objects and the bed only */
    float *gx, *gy, *gz;         /* float positions for the grid */
    float *cx, *cy, *cz;         /* the same in the grid's cell order: contiguous candidates */
    partner_state *cell_state;   /* the DEs' state in the grid's cell order, built with the grid */
    uint8_t *keep;               /* still holds sand (the compaction after merges) */
    int sort_pending;            /* put the DEs in cell order at the next step (the first of a frame) */
    ts_grid grid;                /* cells of 2 r_max, built before each force pass */
    double r_max;                /* largest DE radius at the last grid build */

    object *objects;
    size_t n_objects;

    double K0, C0;               /* k / m_eff and c / m_eff of the contact law */
    ts_contact_law law;
    double element_volume0;      /* volume of a lattice DE, for grain sizes */
    double depth;                /* DEM region depth, fixed at the first contact */
    double volume_lost, peak_airborne;
    uint32_t next_id;
    ts_step_context now;         /* where the frame loop is */
    long steps;
    size_t max_seen;
};

/* -------------------------------------------------------------- parameters */

#define P ts_sand_params
static const ts_param_def PARAMS[] = {
    TS_REAL(P, cell_size, 1e-4, 100.0, 0.02),
    TS_REAL(P, noise, 0.0, 100.0, 0.0),
    TS_REAL(P, bulk_density, 1e-9, 30000.0, 1600.0),
    TS_REAL(P, element_radius, 1e-5, 100.0, 0.01),
    TS_INT(P, grains_per_element, 1, 1000, 30),
    TS_REAL(P, friction, 0.0, 10.0, 0.5),
    TS_REAL(P, restitution, 0.01, 1.0, 0.3),
    TS_REAL(P, contact_time, 1e-6, 10.0, 0.004),
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
        TS_STATE_COLUMN("source_d_t", &s->c.source_d_t, TS_ATTR_F64, 3 * SOURCE_SLOTS),
        /* saved in sections of their own (save_contacts) */
        TS_CARRIED_COLUMN("partner", &s->c.partner, MAX_CONTACTS * sizeof *s->c.partner),
        TS_CARRIED_COLUMN("d_t", &s->c.d_t, MAX_CONTACTS * 3 * sizeof *s->c.d_t),
        TS_CARRIED_COLUMN("source", &s->c.source, SOURCE_SLOTS * sizeof *s->c.source),
        /* spatter detection reads it after the compaction; every force pass sets it */
        TS_CARRIED_COLUMN("supported", &s->supported, 1),
        TS_WORK_COLUMN("fx", &s->fx, d), TS_WORK_COLUMN("fy", &s->fy, d), TS_WORK_COLUMN("fz", &s->fz, d),
        TS_WORK_COLUMN("tx", &s->tx, d), TS_WORK_COLUMN("ty", &s->ty, d), TS_WORK_COLUMN("tz", &s->tz, d),
        TS_WORK_COLUMN("inv_m", &s->inv_m, d), TS_WORK_COLUMN("gx", &s->gx, f), TS_WORK_COLUMN("gy", &s->gy, f),
        TS_WORK_COLUMN("gz", &s->gz, f), TS_WORK_COLUMN("cx", &s->cx, f), TS_WORK_COLUMN("cy", &s->cy, f),
        TS_WORK_COLUMN("cz", &s->cz, f), TS_WORK_COLUMN("cell_state", &s->cell_state, sizeof *s->cell_state),
        TS_WORK_COLUMN("reaction", &s->reaction, 6 * (s->n_objects + 1) * d), TS_WORK_COLUMN("keep", &s->keep, 1),
    };
    ts_particles_init(&s->el, "sand", (size_t)s->p.max_elements);
    return ts_particles_register(&s->el, columns, sizeof columns / sizeof *columns, err);
}

static ts_status grow_elements(ts_sand *s, size_t need, ts_error *err)
{
    if (need > s->el.max)
        return ts_fail(err, TS_ERR_NOMEM, "sand: the bake needs more than max_elements = %ld distinct elements; "
                       "raise Max Elements, or use a larger element radius or a shallower DEM depth",
                       s->p.max_elements);
    return ts_particles_reserve(&s->el, need, err);
}

/* Append a DE at rest with no contacts; returns its index. */
static size_t add_element(ts_sand *s, ts_vec3 p, ts_vec3 v, double radius, double volume, uint8_t flags)
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
    ts_hsmap_init(&ob->map);
    return TS_OK;
}

/* Diffusion between neighbouring masked columns (all when mask is NULL), in flux form so the sum of
 * heights (the volume) is kept to rounding; `rate` 1/8 is stable. */
static void smooth_heights(double *h, double *flux_sum, const uint8_t *mask, int nx, int ny, int passes)
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
    smooth_heights(s->bed, s->column_scratch, NULL, s->cols.nx, s->cols.ny, 4);
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
    s->law = (ts_contact_law){p->contact_time, p->restitution, p->friction};
    ts_contact_coefficients(&s->law, 1.0, &s->K0, &s->C0);
    s->element_volume0 = 4.0 * M_SQRT2 * pow(p->element_radius, 3); /* FCC: (2r)^2 per DE per layer, layers sqrt(2) r apart */
    s->next_id = 0;
    if ((st = register_elements(s, err)) != TS_OK || (st = grow_elements(s, 1, err)) != TS_OK)
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
    void *all[] = {s->bed, s->region, s->display, s->display_f, s->column_scratch};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        free(all[k]);
    ts_particles_free(&s->el);
    ts_grid_free(&s->grid);
    free(s);
}

/* ------------------------------------------------------------ the heights */

static double gravity_magnitude(const ts_sand *s)
{
    return ts_v3_length(ts_v3(s->p.gravity[0], s->p.gravity[1], s->p.gravity[2]));
}

static inline size_t column_of(const ts_sand *s, double x, double y, int *inside)
{
    int i, j;
    *inside = ts_columns_index(&s->cols, x, y, &i, &j);
    return (size_t)i + (size_t)s->cols.nx * (size_t)j;
}

static int resting_on_object(const ts_sand *s, size_t i);

/* §4.4 rebuild, volume-exact: each column shows the bed plus the volume of
 * the ground DEs over it (spread over the 2 x 2 nearest column centres),
 * then smoothing within the region. Airborne grains and DEs resting on
 * objects are not part of the ground. */
static void rebuild_display(ts_sand *s)
{
    const double area = s->p.cell_size * s->p.cell_size;
    const int nx = s->cols.nx, ny = s->cols.ny;
    memcpy(s->display, s->bed, s->n_columns * sizeof *s->display);
    for (size_t i = 0; i < s->el.n; i++) {
        if ((s->flags[i] & FLAG_AIRBORNE) || resting_on_object(s, i))
            continue;
        double fx = (s->x[i] - s->cols.x0) / s->cols.cell - 0.5, fy = (s->y[i] - s->cols.y0) / s->cols.cell - 0.5;
        int i0 = (int)floor(fx), j0 = (int)floor(fy);
        double ax = fx - i0, ay = fy - j0, h = s->vol[i] / area;
        int inside;
        size_t own = column_of(s, s->x[i], s->y[i], &inside);
        for (int b = 0; b < 2; b++)
            for (int a = 0; a < 2; a++) {
                int ci = i0 + a < 0 ? 0 : (i0 + a >= nx ? nx - 1 : i0 + a);
                int cj = j0 + b < 0 ? 0 : (j0 + b >= ny ? ny - 1 : j0 + b);
                size_t c = (size_t)ci + (size_t)nx * cj;
                double w = (a ? ax : 1.0 - ax) * (b ? ay : 1.0 - ay);
                s->display[s->region[c] ? c : own] += w * h; /* sand stays within the region's columns */
            }
    }
    smooth_heights(s->display, s->column_scratch, s->region, nx, ny, s->p.smoothing);
    for (size_t c = 0; c < s->n_columns; c++)
        s->display_f[c] = (float)s->display[c];
}

const float *ts_sand_heights(ts_sand *s)
{
    rebuild_display(s);
    return s->display_f;
}

/* -------------------------------------------------------- the DEM region */

/* Would a DE at offset (dx, dy) in column (i, j) reach into a neighbour
 * column that stays bed (not in the region, nor being converted)? The bed's
 * side there is a wall: a DE placed through it would be thrown out. */
static int touches_static_side(const ts_sand *s, int i, int j, double dx, double dy, double r)
{
    const double cell = s->p.cell_size;
    const int step[4][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};
    const double dist[4] = {dx, cell - dx, dy, cell - dy}; /* a DE just touching the side (to rounding) is fine */
    for (int e = 0; e < 4; e++) {
        int u = i + step[e][0], v = j + step[e][1];
            if (dist[e] >= r * (1.0 - 1e-9) || u < 0 || v < 0 || u >= s->cols.nx || v >= s->cols.ny)
            continue;
        if (!s->region[(size_t)u + (size_t)s->cols.nx * v])
            return 1;
    }
    return 0;
}

/* Is a new DE at p clear of the objects and of the DEs already there (the grid is current)? */
static int site_is_free(const ts_sand *s, ts_vec3 p, double r)
{
    int ci, cj;
    ts_columns_index(&s->cols, p.x, p.y, &ci, &cj);
    for (size_t k = 0; k < s->n_objects; k++) {
        int count;
        const ts_span *sp = ts_hsmap_column(&s->objects[k].map, ci, cj, &count);
        for (int q = 0; q < count; q++)
            if (p.z + r > sp[q].bottom && p.z - r < sp[q].top)
                return 0;
    }
    ts_neighbor_ranges nr;
    ts_grid_neighbor_ranges(&s->grid, (float)p.x, (float)p.y, (float)p.z, &nr);
    for (int q = 0; q < nr.n; q++)
        for (uint32_t k = nr.begin[q]; k < nr.end[q]; k++) {
            uint32_t j = s->grid.sorted[k];
            double dx = s->x[j] - p.x, dy = s->y[j] - p.y, dz = s->z[j] - p.z, rr = 0.95 * (r + s->r[j]);
            if (dx * dx + dy * dy + dz * dz < rr * rr)
                return 0;
        }
    return 1;
}

static ts_status build_grid(ts_sand *s, ts_error *err);

/* §4.2: turn the columns marked 2 in s->region into DEs, the sand between
 * each column's surface and the floor `depth` below shared equally among
 * the new DEs (volume exact); marks become 1. The DEs sit in an FCC lattice
 * seen along a cube axis turned by 45 degrees: square layers of touching
 * spheres (spacing 2r, aligned with the bed's cells) stacked sqrt(2) r
 * apart, each layer in the hollows of the one below. Aligned so, the lower
 * layers reach the region's edges and the upper ones rest on four DEs even
 * there, so a fresh region does not crumble at its sides. Each column's
 * layers start on its floor, and no DE is placed into one already there. */
static ts_status convert_marked_columns(ts_sand *s, int i0, int j0, int i1, int j1, ts_error *err)
{
    const double r = s->p.element_radius, cell = s->p.cell_size, layer = M_SQRT2 * r;
    const int nx = s->cols.nx;
    ts_status st = build_grid(s, err);
    if (st != TS_OK)
        return st;
    double volume = 0.0;
    size_t first = s->el.n;
    for (int j = j0; j <= j1; j++)
        for (int i = i0; i <= i1; i++) {
            size_t c = (size_t)i + (size_t)nx * j;
            if (s->region[c] != 2)
                continue;
            double top = s->bed[c], floor_z = top - s->depth;
            double xa = s->cols.x0 + i * cell, ya = s->cols.y0 + j * cell;
            for (long k = 0; floor_z + r + k * layer + r <= top; k++) {
                double shift = (k & 1) ? r : 0.0, z = floor_z + r + k * layer;
                /* lattice indices from the column's corner; eps keeps a site on a
                 * column's edge in exactly one column despite rounding */
                const double eps = 1e-9 * cell;
                long la = (long)ceil((xa - eps - s->cols.x0 - r - shift) / (2 * r));
                long ma = (long)ceil((ya - eps - s->cols.y0 - r - shift) / (2 * r));
                for (long m = ma;; m++) {
                    double y = s->cols.y0 + r + shift + 2 * r * m;
                    if (y >= ya + cell - eps)
                        break;
                    for (long l = la;; l++) {
                        double x = s->cols.x0 + r + shift + 2 * r * l;
                        if (x >= xa + cell - eps)
                            break;
                        ts_vec3 site = ts_v3(x, y, z);
                        if (x < xa - eps || y < ya - eps || touches_static_side(s, i, j, x - xa, y - ya, r) ||
                            !site_is_free(s, site, r))
                            continue;
                        if ((st = grow_elements(s, s->el.n + 1, err)) != TS_OK)
                            return st;
                        add_element(s, site, ts_v3(0, 0, 0), r, 0.0, 0);
                    }
                }
            }
            s->region[c] = 3; /* converted in this call */
            s->column_scratch[c] = top;
            volume += (top - floor_z) * cell * cell; /* the column's sand now lives in the new DEs */
            s->bed[c] = floor_z;
        }
    size_t added = s->el.n - first;
    for (int j = j0; j <= j1; j++) /* no room for any DE: the columns stay bed, to be tried again */
        for (int i = i0; i <= i1; i++) {
            size_t c = (size_t)i + (size_t)nx * j;
            if (s->region[c] == 3) {
                s->region[c] = added ? 1 : 0;
                if (!added)
                    s->bed[c] = s->column_scratch[c];
            }
        }
    for (size_t k = first; k < s->el.n; k++) {
        s->vol[k] = volume / (double)added;
        s->m[k] = s->vol[k] * s->p.bulk_density;
    }
    return TS_OK;
}

/* Mark the columns within `radius` of (ci, cj) that are not yet in the region. */
static int mark_around(ts_sand *s, int ci, int cj, int radius, int box[4])
{
    int marked = 0;
    for (int j = cj - radius; j <= cj + radius; j++)
        for (int i = ci - radius; i <= ci + radius; i++) {
            if (i < 0 || j < 0 || i >= s->cols.nx || j >= s->cols.ny)
                continue;
            size_t c = (size_t)i + (size_t)s->cols.nx * j;
            if (s->region[c])
                continue;
            s->region[c] = 2;
            marked = 1;
            if (i < box[0]) box[0] = i;
            if (j < box[1]) box[1] = j;
            if (i > box[2]) box[2] = i;
            if (j > box[3]) box[3] = j;
        }
    return marked;
}

/* The automatic DEM depth's cap: the deepest layer the contacts can carry.
 * A bottom DE holds the weight of the layers above it on its four lower
 * contacts at 45 degrees, each squeezed by load / k; past a fraction of a
 * radius the layer sags and never comes to rest (docs/sand.md, Limits). For
 * two equal DEs k / m = (pi^2 + ln^2 e_n) / (2 t_c^2) (eqs ), so the
 * DE mass drops out. Layers are stacked sqrt(2) r apart; two at least. */
static double carried_depth(const ts_sand *s)
{
    const double g = gravity_magnitude(s);
    const double r = s->p.element_radius, spacing = sqrt(2.0) * r;
    if (g <= 0.0)
        return HUGE_VAL;
    double k_per_mass, c_per_mass;
    ts_contact_coefficients(&s->law, 0.5, &k_per_mass, &c_per_mass); /* m = 1, so m_eff = 1/2 */
    const double layers = CARRIED_SQUEEZE * r * 4.0 * sqrt(0.5) * k_per_mass / g;
    return fmax(layers, 2.0) * spacing;
}

/* §4.1: an object whose underside reaches the sand outside the region gets
 * a region over its footprint (plus a margin) - the first contact places the
 * DEs, later contacts (a dragged object) extend them. */
static ts_status place_under_objects(ts_sand *s, ts_error *err)
{
    for (size_t k = 0; k < s->n_objects; k++) {
        object *ob = &s->objects[k];
        const ts_hsmap *m = &ob->map;
        int box[4] = {s->cols.nx, s->cols.ny, -1, -1}, touching = 0;
        for (int b = 0; b < m->ny && !touching; b++)
            for (int a = 0; a < m->nx && !touching; a++) {
                int count, i = m->i0 + a, j = m->j0 + b;
                const ts_span *sp = ts_hsmap_column(m, i, j, &count);
                size_t c = (size_t)i + (size_t)s->cols.nx * j;
                touching = count > 0 && !s->region[c] && sp[0].bottom < s->bed[c] + s->p.element_radius;
            }
        if (!touching)
            continue;
        if (s->depth <= 0.0)
            s->depth = s->p.dem_depth > 0.0 ? s->p.dem_depth : fmin(0.5 * ob->height, carried_depth(s));
        for (int b = 0; b < m->ny; b++)
            for (int a = 0; a < m->nx; a++) {
                int count;
                ts_hsmap_column(m, m->i0 + a, m->j0 + b, &count);
                if (count > 0) /* the footprint itself, not its bounding box's edge columns */
                    mark_around(s, m->i0 + a, m->j0 + b, FOOTPRINT_MARGIN, box);
            }
        if (box[2] >= 0) {
            ts_status st = convert_marked_columns(s, box[0], box[1], box[2], box[3], err);
            if (st != TS_OK)
                return st;
        }
    }
    return TS_OK;
}

static int near_region_edge(const ts_sand *s, size_t c)
{
    const int nx = s->cols.nx, ny = s->cols.ny, i = (int)(c % (size_t)nx), j = (int)(c / (size_t)nx);
    for (int b = -1; b <= 1; b++)
        for (int a = -1; a <= 1; a++) {
            int u = i + a, v = j + b;
            if (u >= 0 && v >= 0 && u < nx && v < ny && !s->region[(size_t)u + (size_t)nx * v])
                return 1;
        }
    return 0;
}

/* §4.2: grow the region where a DE at its edge pushes the bed beside it
 * sideways harder than grow_force x its weight, or has left the region.
 * (The sideways push of a moving DE rather than the paper's total force:
 * DEs settling along the edge feel impacts of many weights and the bed's
 * pressure waves reach far, which would grow the region over the whole bed
 * where no sand flows.) */
static ts_status grow_region(ts_sand *s, ts_error *err)
{
    const double g = gravity_magnitude(s);
    int box[4] = {s->cols.nx, s->cols.ny, -1, -1};
    size_t n = s->el.n;
    for (size_t i = 0; i < n; i++) {
        if (s->flags[i] & FLAG_AIRBORNE)
            continue;
        int inside;
        size_t c = column_of(s, s->x[i], s->y[i], &inside);
        if (!inside)
            continue;
        const double *wall = s->reaction + (i * (s->n_objects + 1) + s->n_objects) * 6;
        double push = sqrt(wall[0] * wall[0] + wall[1] * wall[1]); /* sideways on the bed around the region */
        double v2 = s->vx[i] * s->vx[i] + s->vy[i] * s->vy[i] + s->vz[i] * s->vz[i];
        int pushed = push > s->p.grow_force * s->m[i] * (g > 0 ? g : 1.0) &&
                     v2 > 100.0 * s->p.rest_speed * s->p.rest_speed && near_region_edge(s, c);
        if (pushed || !s->region[c])
            mark_around(s, (int)(c % (size_t)s->cols.nx), (int)(c / (size_t)s->cols.nx), GROW_RADIUS, box);
    }
    return box[2] >= 0 ? convert_marked_columns(s, box[0], box[1], box[2], box[3], err) : TS_OK;
}

/* ------------------------------------------------------------- contacts */

/* Spans of a source over column (i, j): an object's span map, or the bed,
 * which is one span from far below to its height. */
typedef struct span_source {
    const ts_hsmap *map;         /* NULL: the bed */
    const double *bed;
    const ts_columns *cols;
} span_source;

static int source_spans(const span_source *src, int i, int j, ts_span *bed_span, const ts_span **out)
{
    int outside = i < 0 || j < 0 || i >= src->cols->nx || j >= src->cols->ny;
    if (outside && src->map)
        return 0;
    if (outside) { /* the bed ends in walls: sand does not pour off its edges */
        bed_span->bottom = -INFINITY;
        bed_span->top = INFINITY;
        bed_span->n_top = ts_v3(0, 0, 1);
        bed_span->n_bottom = ts_v3(0, 0, -1);
        *out = bed_span;
        return 1;
    }
    if (src->map) {
        int count;
        *out = ts_hsmap_column(src->map, i, j, &count);
        return count;
    }
    bed_span->bottom = -INFINITY;
    bed_span->top = src->bed[(size_t)i + (size_t)src->cols->nx * j];
    bed_span->n_top = ts_v3(0, 0, 1);
    bed_span->n_bottom = ts_v3(0, 0, -1);
    *out = bed_span;
    return 1;
}

/* Overlap with a span's top or bottom face of a sphere whose lowest/highest
 * point over that column is z -/+ reach (fig. 3 (a) and (c)). */
static int face_contact(const ts_span *sp, double z, double reach, double *d, ts_vec3 *n)
{
    double mid = sp->bottom == -INFINITY ? -INFINITY : 0.5 * (sp->bottom + sp->top);
    if (z >= mid) {
        if (z - reach >= sp->top)
            return 0;
        *d = sp->top - (z - reach), *n = sp->n_top;
    } else {
        if (z + reach <= sp->bottom)
            return 0;
        *d = z + reach - sp->bottom, *n = sp->n_bottom;
    }
    return 1;
}

static int column_holds(const span_source *src, int i, int j, double z)
{
    ts_span bed_span;
    const ts_span *sp;
    int count = source_spans(src, i, j, &bed_span, &sp);
    for (int k = 0; k < count; k++)
        if (z > sp[k].bottom && z < sp[k].top)
            return 1;
    return 0;
}

/* A DE whose centre is inside a span of its own column - it came in from
 * the side, or the span appeared around it as the object moved a cell -
 * is pushed out of the column box by the shortest way: up, down, or through
 * a side whose neighbour is open at its height. (Pushing it to the far
 * top or bottom face, as fig. 3 (a) would, throws it out at any speed.) */
static void inside_span(const span_source *src, int ci, int cj, const ts_span *sp, ts_vec3 p, double r, double *d,
                        ts_vec3 *n)
{
    const ts_columns *g = src->cols;
    *d = sp->top - p.z + r, *n = sp->n_top;
    if (p.z - sp->bottom + r < *d)
        *d = p.z - sp->bottom + r, *n = sp->n_bottom;
    static const int step[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    for (int e = 0; e < 4; e++) {
        double face = step[e][0] ? g->x0 + (ci + (step[e][0] > 0)) * g->cell : g->y0 + (cj + (step[e][1] > 0)) * g->cell;
        double through = fabs(face - (step[e][0] ? p.x : p.y)) + r;
        if (through < *d && !column_holds(src, ci + step[e][0], cj + step[e][1], p.z))
            *d = through, *n = ts_v3(step[e][0], step[e][1], 0);
    }
}

/* DE at p with radius r against a source, §4.3.1 and fig. 3: the spans of
 * its own column (a), the sides of the neighbours' spans that its centre
 * height falls within (b), and otherwise their top and bottom faces (c);
 * overlaps and normals of all contacts found are averaged, each weighted by
 * its own overlap. (The paper's plain average jumps when a contact appears:
 * a DE on the floor that drifts a hair over a column edge halves its
 * overlap at once, and the spring's energy changes without work done - the
 * bottom layer rattled at up to 1.6 m/s under the paper's soft contacts.
 * Weighted, a contact enters and leaves at zero weight.) Returns 0 when
 * there is no contact. */
static int span_contact(const span_source *src, ts_vec3 p, double r, double *d_n, ts_vec3 *u_n)
{
    const ts_columns *g = src->cols;
    int ci, cj;
    ts_columns_index(g, p.x, p.y, &ci, &cj);
    double d_sum = 0.0, d2_sum = 0.0;
    ts_vec3 n_sum = ts_v3(0, 0, 0);
    int hits = 0, count;
    ts_span bed_span;
    const ts_span *sp;
    count = source_spans(src, ci, cj, &bed_span, &sp);
    for (int k = 0; k < count; k++) {
        double d;
        ts_vec3 n;
        if (p.z > sp[k].bottom && p.z < sp[k].top)
            inside_span(src, ci, cj, &sp[k], p, r, &d, &n);
        else if (!face_contact(&sp[k], p.z, r, &d, &n))
            continue;
        d_sum += d, d2_sum += d * d, n_sum = ts_v3_add(n_sum, ts_v3_scale(n, d)), hits++;
    }
    /* the eight neighbours: the paper's four sides, and the corners, without
     * which a DE rolls out diagonally between two side walls */
    static const int step[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    for (int e = 0; e < 8 && hits < MAX_SPAN_HITS; e++) {
        int i = ci + step[e][0], j = cj + step[e][1];
        /* nearest point of the neighbour column's footprint to the centre, horizontally */
        double qx = step[e][0] ? g->x0 + (ci + (step[e][0] > 0)) * g->cell : p.x;
        double qy = step[e][1] ? g->y0 + (cj + (step[e][1] > 0)) * g->cell : p.y;
        double ex = p.x - qx, ey = p.y - qy, dist = sqrt(ex * ex + ey * ey);
        if (dist >= r)
            continue;
        if (dist < 1e-9 * g->cell) { /* on the face or corner itself: the way out is straight back */
            ex = -step[e][0], ey = -step[e][1];
            double len = sqrt(ex * ex + ey * ey);
            ex /= len, ey /= len, dist = 0.0;
        } else {
            ex /= dist, ey /= dist;
        }
        count = source_spans(src, i, j, &bed_span, &sp);
        for (int k = 0; k < count; k++) {
            double d;
            ts_vec3 n;
            if (p.z > sp[k].bottom && p.z < sp[k].top) {            /* (b): the column's side */
                d = r - dist, n = ts_v3(ex, ey, 0);
            } else if (!face_contact(&sp[k], p.z, sqrt(r * r - dist * dist), &d, &n)) {
                continue;                                          /* (c) */
            }
            d_sum += d, d2_sum += d * d, n_sum = ts_v3_add(n_sum, ts_v3_scale(n, d)), hits++;
        }
    }
    double len = ts_v3_length(n_sum);
    if (d_sum <= 0.0 || len == 0.0)
        return 0;
    *d_n = d2_sum / d_sum;
    *u_n = ts_v3_scale(n_sum, -1.0 / len); /* from the DE into the source, as u_n of eq. 2 */
    return 1;
}

/* Velocity of an object's material at a world point now. */
static ts_vec3 object_velocity(const ts_sand *s, const object *ob, ts_vec3 point)
{
    return ts_rigid_object_point_velocity(&ob->body, s->now.frame_dt, s->now.s_begin, point); /* during the force pass */
}

/* The tangential history of DE i's contact with a source, zero if new. */
static ts_vec3 source_history(const contacts *old, size_t i, int source)
{
    ts_vec3 d_t = ts_v3(0, 0, 0);
    for (int k = 0; k < SOURCE_SLOTS; k++)
        if (old->source[i * SOURCE_SLOTS + k] == source)
            memcpy(&d_t, old->source_d_t + (i * SOURCE_SLOTS + k) * 3, sizeof d_t);
    return d_t;
}

typedef struct element_force {
    ts_vec3 F, T;
} element_force;

/* The contact histories one DE builds in a force pass, before they replace
 * its slots (which the pass reads for the old histories). */
typedef struct staged_contacts {
    int count, sources;
    uint32_t partner[MAX_CONTACTS];
    ts_vec3 d_t[MAX_CONTACTS];
    int16_t source[SOURCE_SLOTS];
    ts_vec3 source_d_t[SOURCE_SLOTS];
} staged_contacts;

/* Can a DE at p of radius r touch an object's span map at all? span_contact
 * looks at the DE's column and the eight around it, and every span lies
 * above the object's lowest point. */
static int object_within_reach(const object *ob, const ts_columns *cols, ts_vec3 p, double r)
{
    const ts_hsmap *m = &ob->map;
    int ci, cj;
    ts_columns_index(cols, p.x, p.y, &ci, &cj);
    return p.z + r > ob->lowest && ci + 1 >= m->i0 && ci - 1 < m->i0 + m->nx && cj + 1 >= m->j0 &&
           cj - 1 < m->j0 + m->ny;
}

/* Can a DE at p of radius r touch the bed? Only below the top of its column
 * or of one around it (the bed's outer edges are walls). */
static int bed_within_reach(const ts_sand *s, ts_vec3 p, double r)
{
    int ci, cj;
    ts_columns_index(&s->cols, p.x, p.y, &ci, &cj);
    for (int j = cj - 1; j <= cj + 1; j++)
        for (int i = ci - 1; i <= ci + 1; i++) {
            if (i < 0 || j < 0 || i >= s->cols.nx || j >= s->cols.ny ||
                p.z - r < s->bed[(size_t)i + (size_t)s->cols.nx * j])
                return 1;
        }
    return 0;
}

/* Contact of DE i with one source (object k, or the bed when k = n_objects). */
static void source_force(ts_sand *s, size_t i, int k, const span_source *src, double dt, staged_contacts *next,
                         element_force *ef)
{
    ts_vec3 p = ts_v3(s->x[i], s->y[i], s->z[i]);
    double d_n, r = s->r[i];
    ts_vec3 u_n;
    const object *ob = k < (int)s->n_objects ? &s->objects[k] : NULL;
    /* a keyframed object is not pushed back: its reactions are never read, so not written */
    double *reaction = ob && ob->body.keyframed ? NULL : s->reaction + (i * (s->n_objects + 1) + (size_t)k) * 6;
    if (reaction)
        memset(reaction, 0, 6 * sizeof *reaction);
    if ((ob ? !object_within_reach(ob, &s->cols, p, r) : !bed_within_reach(s, p, r)) ||
        !span_contact(src, p, r, &d_n, &u_n))
        return;
    ts_vec3 point = ts_v3_add(p, ts_v3_scale(u_n, r - 0.5 * d_n));
    ts_vec3 v_obj = ob ? object_velocity(s, ob, point) : ts_v3(0, 0, 0);
    ts_vec3 v_i = ts_v3(s->vx[i], s->vy[i], s->vz[i]), w_i = ts_v3(s->wx[i], s->wy[i], s->wz[i]);
    ts_vec3 v_c = ts_contact_velocity(v_i, w_i, r, v_obj, ts_v3(0, 0, 0), 0.0, u_n);
    double inv_obj = ob && !ob->body.keyframed ? ob->body.rb.inv_mass : 0.0;
    double m_eff = ts_effective_mass(s->inv_m[i], inv_obj);
    ts_vec3 d_t = source_history(&s->c, i, k);
    ts_contact_result res = ts_contact_force(&s->law, s->K0 * m_eff, s->C0 * m_eff, d_n, u_n, v_c, dt, &d_t);
    ef->F = ts_v3_add(ef->F, res.force);
    ef->T = ts_v3_add(ef->T, ts_v3_scale(ts_v3_cross(u_n, res.tangential), r));
    if (next->sources < SOURCE_SLOTS) {
        next->source[next->sources] = (int16_t)k;
        next->source_d_t[next->sources++] = d_t;
    }
    if (reaction) {
        reaction[0] = -res.force.x, reaction[1] = -res.force.y, reaction[2] = -res.force.z;
        reaction[3] = point.x, reaction[4] = point.y, reaction[5] = point.z;
    }
}

/* DE-DE contacts of ground DE i (eqs 1, 2, A-1 to A-11), in gather form. */
static void element_forces(ts_sand *s, size_t i, double dt, staged_contacts *next, element_force *ef)
{
    const contacts *old = &s->c;
    const double xi = s->x[i], yi = s->y[i], zi = s->z[i], ri = s->r[i];
    const ts_vec3 v_i = ts_v3(s->vx[i], s->vy[i], s->vz[i]), w_i = ts_v3(s->wx[i], s->wy[i], s->wz[i]);
    const uint32_t *old_partner = old->partner + i * MAX_CONTACTS, id_i = s->id[i];
    const int old_count = old->count[i];
    int supported = 0, hint = 0;
    /* candidates from the cell-ordered float copies, in contiguous runs; the
     * few within reach are tested again in double below (the margin covers
     * the rounding of coordinates to float) */
    const double margin = 1e-4 * (ri + s->r_max) + 8.0 * FLT_EPSILON * (fabs(xi) + fabs(yi) + fabs(zi));
    const float reach = (float)(ri + s->r_max + margin), reach2 = reach * reach;
    const float fx = (float)xi, fy = (float)yi, fz = (float)zi;
    ts_neighbor_ranges nr;
    ts_grid_neighbor_ranges(&s->grid, fx, fy, fz, &nr);
    for (int q = 0; q < nr.n; q++)
        for (uint32_t k = nr.begin[q]; k < nr.end[q]; k++) {
            float ex = s->cx[k] - fx, ey = s->cy[k] - fy, ez = s->cz[k] - fz;
            if (ex * ex + ey * ey + ez * ez >= reach2)
                continue;
            const partner_state *pj = &s->cell_state[k];
            if (pj->id == id_i || pj->airborne)
                continue;
            double dx = pj->x - xi, dy = pj->y - yi, dz = pj->z - zi, rr = ri + pj->r;
            double dist2 = dx * dx + dy * dy + dz * dz;
            if (dist2 >= rr * rr || dist2 == 0.0)
                continue;
            double dist = sqrt(dist2), d_n = rr - dist, inv_dist = 1.0 / dist; /* eq. 1 */
            ts_vec3 u_n = ts_v3(dx * inv_dist, dy * inv_dist, dz * inv_dist);  /* eq. 2 */
            ts_vec3 v_c = ts_contact_velocity(v_i, w_i, ri, ts_v3(pj->vx, pj->vy, pj->vz),
                                              ts_v3(pj->wx, pj->wy, pj->wz), pj->r, u_n); /* eq. A-1 */
            ts_vec3 d_t = ts_v3(0, 0, 0);
            /* the contacts come in nearly the same order each step: look where the last one was found */
            for (int tried = 0, h = hint; tried < old_count; tried++, h = h + 1 < old_count ? h + 1 : 0)
                if (old_partner[h] == pj->id) {
                    d_t = history_at(old, i, h);
                    hint = h + 1 < old_count ? h + 1 : 0;
                    break;
                }
            double m_eff = ts_effective_mass(s->inv_m[i], pj->inv_m);         /* eq. A-11 */
            ts_contact_result res = ts_contact_force(&s->law, s->K0 * m_eff, s->C0 * m_eff, d_n, u_n, v_c, dt, &d_t);
            ef->F = ts_v3_add(ef->F, res.force);
            ef->T = ts_v3_add(ef->T, ts_v3_scale(ts_v3_cross(u_n, res.tangential), ri));
            supported |= u_n.z < -0.5; /* a DE below holds it */
            if (next->count < MAX_CONTACTS) {
                next->partner[next->count] = pj->id;
                next->d_t[next->count++] = d_t;
            }
        }
    s->supported[i] = (uint8_t)supported;
}

/* Replace DE i's slots by what the pass built. */
static void store_contacts(contacts *c, size_t i, const staged_contacts *st)
{
    c->count[i] = (uint8_t)st->count;
    memcpy(c->partner + i * MAX_CONTACTS, st->partner, (size_t)st->count * sizeof *st->partner);
    for (int k = 0; k < st->count; k++)
        put_history(c, i, k, st->d_t[k]);
    for (int k = 0; k < SOURCE_SLOTS; k++) {
        double *d_t = c->source_d_t + (i * SOURCE_SLOTS + (size_t)k) * 3;
        c->source[i * SOURCE_SLOTS + k] = k < st->sources ? st->source[k] : NO_SOURCE;
        if (k < st->sources)
            memcpy(d_t, &st->source_d_t[k], sizeof st->source_d_t[k]);
        else
            d_t[0] = d_t[1] = d_t[2] = 0.0;
    }
}

static void compute_forces(ts_sand *s, double dt)
{
    const ts_vec3 g = ts_v3(s->p.gravity[0], s->p.gravity[1], s->p.gravity[2]);
    span_source bed = {NULL, s->bed, &s->cols};
    #pragma omp parallel for schedule(dynamic, 256)
    for (size_t i = 0; i < s->el.n; i++) {
        element_force ef = {ts_v3_scale(g, s->m[i]), ts_v3(0, 0, 0)};
        staged_contacts next;
        next.count = next.sources = 0;
        if (!(s->flags[i] & FLAG_AIRBORNE))
            element_forces(s, i, dt, &next, &ef);
        for (size_t k = 0; k < s->n_objects; k++) {
            span_source src = {&s->objects[k].map, NULL, &s->cols};
            source_force(s, i, (int)k, &src, dt, &next, &ef);
        }
        if (!(s->flags[i] & FLAG_AIRBORNE)) /* airborne grains landing on the bed are deposited instead */
            source_force(s, i, (int)s->n_objects, &bed, dt, &next, &ef);
        else
            memset(s->reaction + (i * (s->n_objects + 1) + s->n_objects) * 6, 0, 6 * sizeof(double));
        store_contacts(&s->c, i, &next);
        s->fx[i] = ef.F.x, s->fy[i] = ef.F.y, s->fz[i] = ef.F.z;
        s->tx[i] = ef.T.x, s->ty[i] = ef.T.y, s->tz[i] = ef.T.z;
    }
}

/* ------------------------------------------------------------ integration */

static void integrate_elements(ts_sand *s, double dt)
{
    const double g = gravity_magnitude(s);
    const double rest_force = s->p.rest_force * (g > 0 ? g : 1.0), rest_speed2 = s->p.rest_speed * s->p.rest_speed;
    #pragma omp parallel for schedule(static) if (s->el.n >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < s->el.n; i++) {
        double F2 = s->fx[i] * s->fx[i] + s->fy[i] * s->fy[i] + s->fz[i] * s->fz[i];
        double v2 = s->vx[i] * s->vx[i] + s->vy[i] * s->vy[i] + s->vz[i] * s->vz[i];
        double inv_m = 1.0 / s->m[i];
        if (!(s->flags[i] & FLAG_AIRBORNE) && F2 < rest_force * rest_force * s->m[i] * s->m[i] && v2 < rest_speed2) {
            s->vx[i] = s->vy[i] = s->vz[i] = 0.0; /* §4.3.3 step 2: a DE at rest is not updated */
            s->wx[i] = s->wy[i] = s->wz[i] = 0.0;
            continue;
        }
        s->vx[i] += s->fx[i] * inv_m * dt, s->vy[i] += s->fy[i] * inv_m * dt, s->vz[i] += s->fz[i] * inv_m * dt;
        s->x[i] += s->vx[i] * dt, s->y[i] += s->vy[i] * dt, s->z[i] += s->vz[i] * dt;
        double inv_I = 1.0 / (0.4 * s->m[i] * s->r[i] * s->r[i]); /* solid sphere */
        s->wx[i] += s->tx[i] * inv_I * dt, s->wy[i] += s->ty[i] * inv_I * dt, s->wz[i] += s->tz[i] * inv_I * dt;
    }
}

/* The reactions of the DEs on each simulated object, summed in DE order. */
static void integrate_objects(ts_sand *s, double dt)
{
    const ts_vec3 g = ts_v3(s->p.gravity[0], s->p.gravity[1], s->p.gravity[2]);
    for (size_t k = 0; k < s->n_objects; k++) {
        object *ob = &s->objects[k];
        if (ob->body.keyframed)
            continue;
        ts_rigid_clear_forces(&ob->body.rb);
        ts_rigid_add_force_at(&ob->body.rb, ts_v3_scale(g, ob->body.rb.mass), ob->body.rb.x);
        for (size_t i = 0; i < s->el.n; i++) {
            const double *r = s->reaction + (i * (s->n_objects + 1) + k) * 6;
            if (r[0] != 0.0 || r[1] != 0.0 || r[2] != 0.0)
                ts_rigid_add_force_at(&ob->body.rb, ts_v3(r[0], r[1], r[2]), ts_v3(r[3], r[4], r[5]));
        }
        ts_rigid_integrate(&ob->body.rb, dt);
    }
}

/* An object must not sink through the bed where no DEs are (below the
 * region's floor, or before the region exists within a step). */
static void objects_on_bed(ts_sand *s)
{
    for (size_t k = 0; k < s->n_objects; k++) {
        object *ob = &s->objects[k];
        if (ob->body.keyframed)
            continue;
        const ts_hsmap *m = &ob->map;
        double deepest = 0.0;
        ts_vec3 at = ob->body.rb.x;
        for (int b = 0; b < m->ny; b++)
            for (int a = 0; a < m->nx; a++) {
                int count, i = m->i0 + a, j = m->j0 + b;
                const ts_span *sp = ts_hsmap_column(m, i, j, &count);
                double d = count ? s->bed[(size_t)i + (size_t)s->cols.nx * j] - sp[0].bottom : 0.0;
                if (d > deepest) {
                    deepest = d;
                    at = ts_v3(s->cols.x0 + (i + 0.5) * s->cols.cell, s->cols.y0 + (j + 0.5) * s->cols.cell,
                               sp[0].bottom);
                }
            }
        if (deepest > 0.0)
            ts_rigid_resolve_contact(&ob->body.rb, at, ts_v3(0, 0, 1), deepest, ts_v3(0, 0, 0), s->p.restitution,
                                     s->p.friction);
    }
}

/* The objects' span maps with keyframed objects where they are at s of the frame. */
static ts_status update_span_maps(ts_sand *s, double at, ts_error *err)
{
    for (size_t k = 0; k < s->n_objects; k++) {
        object *ob = &s->objects[k];
        ts_rigid_object_follow(&ob->body, at);
        ts_transform t = {ob->body.rb.x, ob->body.rb.q};
        ob->lowest = HUGE_VAL;
        for (size_t v = 0; v < ob->vertex_count; v++) {
            ts_vec3 w = ts_transform_apply(t, ts_v3(ob->rest[3 * v], ob->rest[3 * v + 1], ob->rest[3 * v + 2]));
            ob->world[3 * v] = w.x, ob->world[3 * v + 1] = w.y, ob->world[3 * v + 2] = w.z;
            ob->lowest = fmin(ob->lowest, w.z);
        }
        ts_status st = ts_hsmap_build(&ob->map, &s->cols, ob->world, ob->vertex_count, ob->triangles,
                                      ob->triangle_count, err);
        if (st != TS_OK)
            return st;
    }
    return TS_OK;
}

/* ------------------------------------------------- airborne grains (§4.4) */

static int resting_on_object(const ts_sand *s, size_t i)
{
    for (size_t k = 0; k < s->n_objects; k++) {
        int ci, cj, count;
        ts_columns_index(&s->cols, s->x[i], s->y[i], &ci, &cj);
        const ts_span *sp = ts_hsmap_column(&s->objects[k].map, ci, cj, &count);
        for (int q = 0; q < count; q++)
            if (sp[q].top <= s->z[i] && s->z[i] - s->r[i] - sp[q].top < s->p.resting_gap * s->p.element_radius)
                return 1;
    }
    return 0;
}

/* Split DE i into grain-size airborne DEs (§4.4 1(a)iv): velocities within
 * a cone about its own, positions spread inside the DE along them. */
static ts_status split_airborne(ts_sand *s, size_t i, ts_error *err)
{
    double grain_volume = s->element_volume0 / s->p.grains_per_element;
    long k = lround(s->vol[i] / grain_volume);
    if (k < 1) k = 1;
    if (k > 4L * s->p.grains_per_element) k = 4L * s->p.grains_per_element;
    ts_status st = grow_elements(s, s->el.n + (size_t)k - 1, err);
    if (st != TS_OK)
        return st;
    ts_vec3 p = ts_v3(s->x[i], s->y[i], s->z[i]), v = ts_v3(s->vx[i], s->vy[i], s->vz[i]);
    double speed = ts_v3_length(v), vol = s->vol[i] / (double)k;
    double rg = s->p.element_radius * cbrt(vol / s->element_volume0);
    ts_vec3 axis = ts_v3_scale(v, 1.0 / speed);
    ts_vec3 side = fabs(axis.x) < 0.9 ? ts_v3(1, 0, 0) : ts_v3(0, 1, 0);
    ts_vec3 e1 = ts_v3_cross(axis, side);
    e1 = ts_v3_scale(e1, 1.0 / ts_v3_length(e1));
    ts_vec3 e2 = ts_v3_cross(axis, e1);
    uint32_t parent = s->id[i];
    for (long g = 0; g < k; g++) {
        double u1 = ts_rng_hash_uniform(s->p.seed, parent, 2 * (uint64_t)g);
        double u2 = ts_rng_hash_uniform(s->p.seed, parent, 2 * (uint64_t)g + 1);
        double cos_a = 1.0 - u1 * (1.0 - cos(s->p.cone_angle)), sin_a = sqrt(fmax(0.0, 1.0 - cos_a * cos_a));
        double phi = 2.0 * M_PI * u2;
        ts_vec3 dir = ts_v3_add(ts_v3_scale(axis, cos_a),
                                ts_v3_add(ts_v3_scale(e1, sin_a * cos(phi)), ts_v3_scale(e2, sin_a * sin(phi))));
        /* within the parent's sphere, a little ahead along the grain's own
         * direction: grains do not collide with each other in flight, so they
         * need not be strung out as the paper does (which, for 30 grains,
         * reaches many element sizes away - into objects) */
        double u3 = ts_rng_hash_uniform(s->p.seed ^ 0x9e3779b97f4a7c15ull, parent, (uint64_t)g);
        ts_vec3 pos = ts_v3_add(p, ts_v3_scale(dir, (s->r[i] - rg) * cbrt(u3)));
        if (g > 0) {
            add_element(s, pos, ts_v3_scale(dir, speed), rg, vol, FLAG_AIRBORNE);
        } else { /* the DE itself becomes the first grain */
            s->vx[i] = dir.x * speed, s->vy[i] = dir.y * speed, s->vz[i] = dir.z * speed;
            s->r[i] = rg, s->vol[i] = vol, s->m[i] = vol * s->p.bulk_density;
            s->flags[i] |= FLAG_AIRBORNE;
            s->c.count[i] = 0;
        }
    }
    return TS_OK;
}

/* §4.4 step 1 (iv): a ground DE thrown off the surface - nothing below it
 * (no DE under it, neither the bed nor an object) - and rising faster than
 * split_speed spatters into grains. (The paper compares the DE with the top
 * of its column's stack; with columns one DE wide, a DE held up by DEs in
 * the next columns looks detached there, and sand squeezed up around a
 * pressing object would spatter from inside the bed.) */
static ts_status detect_spatter(ts_sand *s, ts_error *err)
{
    const contacts *c = &s->c; /* the contacts of the last force pass */
    size_t n = s->el.n;
    for (size_t i = 0; i < n; i++) {
        if ((s->flags[i] & FLAG_AIRBORNE) || s->supported[i] || s->vz[i] <= s->p.split_speed)
            continue;
        int touching = 0;
        for (int k = 0; k < SOURCE_SLOTS; k++)
            touching |= c->source[i * SOURCE_SLOTS + k] != NO_SOURCE;
        if (!touching)
            s->flags[i] |= FLAG_SPLIT;
    }
    for (size_t i = 0; i < n; i++) /* after the scan: splitting appends DEs and may move the arrays */
        if (s->flags[i] & FLAG_SPLIT) {
            s->flags[i] &= (uint8_t)~FLAG_SPLIT;
            ts_status st = split_airborne(s, i, err);
            if (st != TS_OK)
                return st;
        }
    return TS_OK;
}

/* Merge airborne grain a into ground DE g (§4.3.3 step 5): momentum and
 * volume kept; a DE grown past twice a lattice DE's volume is split into
 * two touching DEs of equal volume, the new one on the side the grain came
 * from (free space - stacking it straight up inside a packed bed would
 * overlap its neighbours and throw them out). */
static ts_status merge_into(ts_sand *s, size_t a, size_t g, ts_error *err)
{
    double m = s->m[g] + s->m[a], vol = s->vol[g] + s->vol[a];
    ts_vec3 from = ts_v3(s->x[a] - s->x[g], s->y[a] - s->y[g], s->z[a] - s->z[g]);
    s->vx[g] = (s->m[g] * s->vx[g] + s->m[a] * s->vx[a]) / m;
    s->vy[g] = (s->m[g] * s->vy[g] + s->m[a] * s->vy[a]) / m;
    s->vz[g] = (s->m[g] * s->vz[g] + s->m[a] * s->vz[a]) / m;
    s->r[g] *= cbrt(vol / s->vol[g]);
    s->vol[g] = vol, s->m[g] = m;
    s->vol[a] = 0.0; /* removed by the compaction */
    if (vol <= 2.0 * s->element_volume0)
        return TS_OK;
    ts_status st = grow_elements(s, s->el.n + 1, err);
    if (st != TS_OK)
        return st;
    double r = s->r[g] / cbrt(2.0), len = ts_v3_length(from);
    ts_vec3 dir = len > 0.0 ? ts_v3_scale(from, 1.0 / len) : ts_v3(0, 0, 1);
    s->vol[g] = 0.5 * vol, s->m[g] = 0.5 * m, s->r[g] = r;
    ts_vec3 p = ts_v3(s->x[g] + 2.0 * r * dir.x, s->y[g] + 2.0 * r * dir.y, s->z[g] + 2.0 * r * dir.z);
    add_element(s, p, ts_v3(s->vx[g], s->vy[g], s->vz[g]), r, 0.5 * vol, 0);
    return TS_OK;
}

/* Airborne grains that touch a ground DE merge into it, those that reach the
 * bed add their volume to it (§4.3.3 steps 5-6); anything leaving the bed's
 * sides is removed and counted. */
static ts_status land_and_remove(ts_sand *s, ts_error *err)
{
    const double area = s->p.cell_size * s->p.cell_size;
    /* a falling grain lands within half an element radius of a ground DE:
     * touching alone would let grains sift down through the pores of the DEs */
    const double reach = 0.5 * s->p.element_radius;
    size_t n = s->el.n;
    for (size_t a = 0; a < n; a++) {
        int inside;
        size_t c = column_of(s, s->x[a], s->y[a], &inside);
        if (!inside) {
            s->volume_lost += s->vol[a];
            s->vol[a] = 0.0;
            continue;
        }
        if (!(s->flags[a] & FLAG_AIRBORNE) || s->vol[a] == 0.0)
            continue;
        const double need = s->vz[a] > 0.0 ? 0.0 : reach; /* rising grains merge only into DEs they hit */
        ts_neighbor_ranges nr; /* a grain is no larger than r_max, reach half r_max at most: 2 cells */
        ts_grid_ranges_within(&s->grid, (float)s->x[a], (float)s->y[a], (float)s->z[a],
                              (float)(s->r[a] + s->r_max + reach), &nr);
        size_t best = SIZE_MAX;
        double best_gap = 0.0;
        for (int q = 0; q < nr.n; q++)
            for (uint32_t k = nr.begin[q]; k < nr.end[q]; k++) {
                uint32_t g = s->grid.sorted[k];
                if (g >= n || (s->flags[g] & FLAG_AIRBORNE) || s->vol[g] == 0.0)
                    continue;
                double dx = s->x[g] - s->x[a], dy = s->y[g] - s->y[a], dz = s->z[g] - s->z[a];
                double gap = sqrt(dx * dx + dy * dy + dz * dz) - s->r[g] - s->r[a];
                if (gap < need && (best == SIZE_MAX || gap < best_gap))
                    best = g, best_gap = gap;
            }
        if (best != SIZE_MAX) {
            ts_status st = merge_into(s, a, best, err);
            if (st != TS_OK)
                return st;
        } else if (s->vz[a] <= 0.0 && s->z[a] - s->r[a] <= s->bed[c]) {
            s->bed[c] += s->vol[a] / area;
            s->vol[a] = 0.0;
        }
    }
    size_t emptied = 0;
    for (size_t i = 0; i < s->el.n; i++) {
        s->keep[i] = s->vol[i] > 0.0;
        emptied += !s->keep[i];
    }
    if (emptied)
        ts_particles_compact(&s->el, s->keep);
    return TS_OK;
}

/* ------------------------------------------------------------- frame loop */

static ts_status sand_begin_frame(void *state, const ts_step_context *now, ts_error *err)
{
    ts_sand *s = state;
    s->now = *now;
    s->sort_pending = 1;
    for (size_t k = 0; k < s->n_objects; k++)
        ts_rigid_object_begin_frame(&s->objects[k].body, now->frame - s->p.frame_start);
    return update_span_maps(s, 0.0, err);
}

static ts_status sand_stable_dt(void *state, double *dt, ts_error *err)
{
    (void)err;
    ts_sand *s = state;
    *dt = s->p.contact_time / s->p.steps_per_contact;
    return TS_OK;
}

static ts_status build_grid(ts_sand *s, ts_error *err)
{
    double r_max = s->p.element_radius;
    for (size_t i = 0; i < s->el.n; i++) {
        s->gx[i] = (float)s->x[i], s->gy[i] = (float)s->y[i], s->gz[i] = (float)s->z[i];
        s->inv_m[i] = 1.0 / s->m[i];
        if (s->r[i] > r_max)
            r_max = s->r[i];
    }
    /* cells of a contact distance, r_max + r_max: contacts are in the 27 cells
     * around, landing grains (reaching 2.5 r_max) within two cells */
    s->r_max = r_max;
    ts_status st = ts_grid_build(&s->grid, s->gx, s->gy, s->gz, s->el.n, (float)(2.0 * r_max), NULL, err);
    if (st != TS_OK)
        return st;
    ts_grid_permute_f32(&s->grid, s->gx, s->cx);
    ts_grid_permute_f32(&s->grid, s->gy, s->cy);
    ts_grid_permute_f32(&s->grid, s->gz, s->cz);
    #pragma omp parallel for schedule(static) if (s->el.n >= TS_PARALLEL_MIN)
    for (size_t k = 0; k < s->el.n; k++) {
        uint32_t j = s->grid.sorted[k];
        s->cell_state[k] = (partner_state){s->x[j], s->y[j], s->z[j], s->vx[j], s->vy[j], s->vz[j], s->wx[j],
                                           s->wy[j], s->wz[j], s->r[j], s->inv_m[j], s->id[j],
                                           (s->flags[j] & FLAG_AIRBORNE) != 0};
    }
    return TS_OK;
}

/* Put the DEs, with their contact histories, in the order of the grid's
 * cells, so that the partners of a DE lie near it in memory: the force pass
 * then reads a few cache lines per partner instead of missing on every
 * array. Done at the first step of each frame (a function of the state the
 * checkpoint holds, so a resumed bake stays exact); the grid is rebuilt. */
static ts_status sort_into_cells(ts_sand *s, ts_error *err)
{
    ts_status st = ts_particles_permute(&s->el, s->grid.sorted, err);
    return st == TS_OK ? build_grid(s, err) : st;
}

static ts_status check_finite(const ts_sand *s, ts_error *err)
{
    for (size_t i = 0; i < s->el.n; i++)
        if (!isfinite(s->x[i] + s->y[i] + s->z[i] + s->vx[i] + s->vy[i] + s->vz[i]))
            return ts_fail(err, TS_ERR_UNSTABLE, "element %u is not finite; raise Steps per Contact or the "
                           "Contact Time", s->id[i]);
    for (size_t k = 0; k < s->n_objects; k++)
        if (!isfinite(s->objects[k].body.rb.x.x + s->objects[k].body.rb.x.y + s->objects[k].body.rb.x.z))
            return ts_fail(err, TS_ERR_UNSTABLE, "object '%s' is not finite", s->objects[k].body.name);
    return TS_OK;
}

static ts_status sand_step(void *state, const ts_step_context *now, ts_error *err)
{
    ts_sand *s = state; /* the span maps are current: begin_frame and the last step's end built them */
    const double dt = now->dt;
    s->now = *now;
    ts_status st = place_under_objects(s, err);
    if (st == TS_OK)
        st = build_grid(s, err);
    if (st == TS_OK && s->sort_pending) {
        st = sort_into_cells(s, err);
        s->sort_pending = 0;
    }
    if (st != TS_OK)
        return st;
    compute_forces(s, dt);
    integrate_elements(s, dt);
    integrate_objects(s, dt);
    if ((st = update_span_maps(s, now->s_end, err)) == TS_OK)
        objects_on_bed(s);
    if (st == TS_OK) st = land_and_remove(s, err);
    if (st == TS_OK) st = grow_region(s, err);
    if (st == TS_OK) st = detect_spatter(s, err);
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

static ts_status sand_write_frame(void *state, ts_frame_output *out, ts_error *err)
{
    ts_sand *s = state;
    rebuild_display(s);
    ts_frame f;
    ts_frame_init(&f, out->frame, out->time, s->n_columns);
    ts_status st = ts_frame_add(&f, "height", TS_ATTR_F32, 1, s->display_f, err);
    if (st == TS_OK)
        st = ts_output_particles(out, "ground", &f, err);
    size_t m = 0;
    for (size_t i = 0; i < s->el.n; i++)
        m += (s->flags[i] & FLAG_AIRBORNE) || resting_on_object(s, i);
    float *pos = malloc((3 * m + 1) * sizeof *pos), *vel = malloc((3 * m + 1) * sizeof *vel);
    float *rad = malloc((m + 1) * sizeof *rad);
    uint8_t *air = malloc(m + 1);
    uint32_t *ids = malloc((m + 1) * sizeof *ids);
    if (st == TS_OK && (!pos || !vel || !rad || !air || !ids))
        st = ts_fail(err, TS_ERR_NOMEM, "sand: out of memory writing frame %d", out->frame);
    for (size_t i = 0, k = 0; st == TS_OK && i < s->el.n; i++) {
        if (!(s->flags[i] & FLAG_AIRBORNE) && !resting_on_object(s, i))
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
    float *d_t = ts_checkpoint_scratch(cp, n_contacts * 3 * sizeof *d_t, err);
    if (!source || !partner || !d_t)
        return TS_ERR_NOMEM;
    for (size_t k = 0; k < n * SOURCE_SLOTS; k++)
        source[k] = c->source[k];
    for (size_t i = 0, at = 0; i < n; i++)
        for (int k = 0; k < c->count[i]; k++, at++) {
            partner[at] = c->partner[i * MAX_CONTACTS + (size_t)k];
            memcpy(d_t + 3 * at, c->d_t + (i * MAX_CONTACTS + (size_t)k) * 3, 3 * sizeof *d_t);
        }
    const ts_column source_column = {"object", TS_ATTR_I32, SOURCE_SLOTS, source};
    const ts_column contact_columns[] = {{"partner", TS_ATTR_U32, 1, partner}, {"d_t", TS_ATTR_F32, 3, d_t}};
    ts_status st = ts_checkpoint_put(cp, "sources", n, &source_column, 1, err);
    return st == TS_OK ? ts_checkpoint_put(cp, "contacts", n_contacts, contact_columns, 2, err) : st;
}

static ts_status sand_save_state(void *state, ts_checkpoint *cp, ts_error *err)
{
    ts_sand *s = state;
    ts_column bed[2];
    bed_columns(s, bed);
    const ts_value counters[] = {{"next_id", s->next_id}, {"steps", (double)s->steps}, {"depth", s->depth},
                                 {"volume_lost", s->volume_lost}, {"peak_airborne", s->peak_airborne},
                                 {"max_seen", (double)s->max_seen}};
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
    float *d_t = malloc(((size_t)n_contacts * 3 + 1) * sizeof *d_t);
    const ts_column source_column = {"object", TS_ATTR_I32, SOURCE_SLOTS, source};
    const ts_column contact_columns[] = {{"partner", TS_ATTR_U32, 1, partner}, {"d_t", TS_ATTR_F32, 3, d_t}};
    st = source && partner && d_t ? TS_OK : ts_fail(err, TS_ERR_NOMEM, "sand: out of memory restoring the checkpoint");
    if (st == TS_OK) st = ts_checkpoint_get(cp, "sources", n, &source_column, 1, err);
    if (st == TS_OK) st = ts_checkpoint_get(cp, "contacts", n_contacts, contact_columns, 2, err);
    size_t at = 0;
    for (size_t i = 0; st == TS_OK && i < n; i++) {
        if (c->count[i] > MAX_CONTACTS || at + c->count[i] > n_contacts)
            st = ts_fail(err, TS_ERR_CORRUPT, "%s: the contacts do not match the elements; bake again from the start",
                         cp->source);
        for (int k = 0; st == TS_OK && k < c->count[i]; k++, at++) {
            c->partner[i * MAX_CONTACTS + (size_t)k] = partner[at];
            memcpy(c->d_t + (i * MAX_CONTACTS + (size_t)k) * 3, d_t + 3 * at, 3 * sizeof *d_t);
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
    return st;
}

ts_status ts_sand_restore(ts_sand *s, const ts_checkpoint *cp, ts_error *err)
{
    ts_column bed[2];
    bed_columns(s, bed);
    ts_value counters[] = {{"next_id", 0}, {"steps", 0}, {"depth", 0}, {"volume_lost", 0}, {"peak_airborne", 0},
                           {"max_seen", 0}};
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
            st->on_objects += (size_t)resting_on_object(s, i);
        }
    }
    st->volume_lost = s->volume_lost;
    st->peak_airborne_volume = s->peak_airborne;
    st->max_elements_seen = s->max_seen;
    st->steps = s->steps;
    st->dem_depth = s->depth;
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
        {"max_speed", s.max_speed, 0}, {"dem_depth", s.dem_depth, 0}, {"steps", (double)s.steps, 1},
    };
    return ts_stats_copy(out, all, sizeof all / sizeof *all);
}

const ts_solver_ops ts_sand_ops = {
    "sand", &ts_sand_param_table, sizeof(ts_sand_object), 1000, sand_create, sand_restore, sand_destroy, sand_stats,
    sand_begin_frame, sand_stable_dt, sand_step, sand_write_frame, sand_save_state,
};
