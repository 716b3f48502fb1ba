/* erosion.c - SPH water carving a voxel terrain (see erosion.h).
 *
 * One substep (erosion_step), over the shared SPH model:
 *   1. inflows top up and rain drops fall (sec. 5.1: drops of several
 *      particles); the fluid is sorted and its lists rebuilt when stale;
 *   2. density with the terrain's wall weights (sec. 3.2);
 *   3. every erosion_interval steps (the paper: 50), erosion per grid point
 *      (sec. 4.1) and settling of sediment; the terrain's distance field is
 *      rebuilt where the density changed;
 *   4. forces - pressure, viscosity, the terrain's attraction blend
 *      (sec. 4.3) and wall friction - and integration; the terrain and
 *      obstacles keep the water out;
 *   5. water in sinks or outside the domain is removed, with its sediment.
 * Every loop over particles or nodes is in gather form, and the few that
 * scatter (sediment to the ground) run in a fixed order, so the bake is the
 * same bytes on any number of threads.
 */
#include "erosion.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collider.h"
#include "mesh.h"
#include "parallel.h"
#include "particles.h"
#include "rng.h"
#include "sph_model.h"
#include "sph_sources.h"
#include "surface.h"
#include "terrain.h"

/* Erosion sums over at most this many grid points' worth of transfer: the
 * paper's accumulation/transfer rectification (sec. 4.1, source 9) moves
 * material in quanta so the ground changes in steps a byte grid can hold and
 * a still flow below the threshold leaves it exactly as it was. */
#define TRANSFER_QUANTUM (1.0f / 256.0f)
/* the rectified distance of sec. 4.1 is at least this share of h */
#define R_BASE 0.4f

typedef struct rain {
    char name[64];
    float *tri;                 /* 9 floats per face */
    double *cumulative;         /* area up to and including each face */
    size_t faces;
    double area;                /* horizontal, m^2 */
    int start, end;
    double owed;                /* m^3 of water not yet emitted */
} rain;

struct ts_erosion {
    ts_erosion_params p;
    ts_sph_model sph;
    float *sediment;            /* m^3 of ground each particle carries (a state column of the fluid) */
    ts_terrain terrain;
    float *pending;             /* per node: erosion accumulated below a transfer quantum */
    float *removed_at;          /* per node: volume fraction removed by this erosion update (work) */
    float *shear_sum;           /* per node: sum of the excess shear of its particles (work) */
    double *slab_sums;          /* per z slab of nodes (work) */
    ts_moving_collider *colliders;
    size_t n_colliders;
    ts_collider *sinks;
    size_t n_sinks;
    ts_sph_inflow *inflows;
    size_t n_inflows;
    rain *rains;
    size_t n_rains;
    uint32_t next_id;
    size_t removed, drops, erosion_updates;
    double eroded, deposited, drained, discarded, terrain_volume0;
    double since_erosion;       /* seconds since the last erosion update */
    long steps;
    ts_step_context now;
};

/* ------------------------------------------------------------------ set-up */

#define P ts_erosion_params
static const ts_param_def PARAMS[] = {
    TS_REAL(P, particle_radius, 0.001, 1.0, 0.02),
    TS_REAL(P, rest_density, 1.0, 30000.0, 1000.0),
    TS_REAL(P, speed_of_sound, 1.0, 1000.0, 30.0),
    TS_REAL(P, viscosity, 0.0, 1000.0, 0.001),
    TS_REAL(P, artificial_viscosity, 0.0, 1.0, 0.08),
    TS_REAL(P, surface_tension, 0.0, 100.0, 0.0728),
    TS_REAL(P, wall_friction, 0.0, 1.0, 0.1),
    TS_REAL(P, wall_attraction, 0.0, 1.0, 0.5),
    TS_VEC3(P, gravity, -1000.0, 1000.0, 0.0, 0.0, -9.81),
    TS_REAL(P, cfl_number, 0.01, 1.0, 0.4),
    TS_LONG(P, max_particles, 1, 200e6, 4e6),
    TS_REAL(P, voxel_size, 0.001, 10.0, 0.04),
    TS_REAL(P, erosion_strength, 0.0, 1000.0, 0.05),
    TS_REAL(P, critical_shear, 0.0, 1000.0, 6.0),
    TS_REAL(P, shear_exponent, 0.1, 2.0, 0.5),
    TS_INT(P, erosion_interval, 1, 10000, 50),
    TS_REAL(P, erosion_floor, -1e6, 1e6, -1e6),
    TS_BOOL(P, keep_sediment, 1),
    TS_REAL(P, settling_speed, 0.0, 100.0, 0.1),
    TS_REAL(P, settling_rate, 0.0, 1000.0, 1.0),
    TS_REAL(P, rain_rate, 0.0, 1e7, 20000.0),
    TS_INT(P, rain_drop_particles, 1, 27, 5),
    TS_REAL(P, rain_speed, 0.0, 100.0, 4.0),
    TS_BOOL(P, write_surface, 0),
    TS_ENUM(P, surface_method, TS_SURFACE_ANISOTROPIC, "anisotropic", "spheres"),
    TS_REAL(P, surface_voxel_ratio, 0.1, 4.0, 0.5),
    TS_REAL(P, surface_radius_scale, 0.5, 4.0, 2.0),
    TS_INT(P, surface_smoothing, 0, 20, 4),
    TS_SCENE_VEC3(P, domain_min, -1e6, 1e6, 0.0, 0.0, 0.0),
    TS_SCENE_VEC3(P, domain_max, -1e6, 1e6, 1.0, 1.0, 1.0),
    TS_SCENE_INT(P, frame_start, -1e6, 1e6, 1),
    TS_SCENE_REAL(P, fps, 1e-3, 1e4, 24.0),
    TS_SCENE_SEED(P, seed),
};
#undef P
const ts_param_table ts_erosion_param_table = TS_PARAM_TABLE("erosion", ts_erosion_params, PARAMS);

ts_erosion_params ts_erosion_params_default(void)
{
    ts_erosion_params p;
    ts_params_default(&ts_erosion_param_table, &p);
    return p;
}

static ts_status check_params(const ts_erosion_params *p, ts_error *err)
{
    ts_status st = ts_params_check(&ts_erosion_param_table, p, err);
    for (int a = 0; st == TS_OK && a < 3; a++)
        if (!(p->domain_max[a] > p->domain_min[a]))
            return ts_fail(err, TS_ERR_INVALID, "erosion: the domain is empty along %c; give the Terrain a size",
                           "xyz"[a]);
    if (st == TS_OK && p->voxel_size > 4.0 * p->particle_radius)
        return ts_fail(err, TS_ERR_INVALID, "erosion: voxel_size %g m is coarser than the water's kernel (%g m); "
                       "the ground would be blind to it - use at most 4 x particle_radius", p->voxel_size,
                       4.0 * p->particle_radius);
    return st;
}

static ts_mesh_ref mesh_of(const ts_erosion_object *o)
{
    ts_mesh_ref r = {o->name, o->vertices, o->vertex_count, o->triangles, o->triangle_count};
    return r;
}

static ts_status add_terrain(ts_erosion *e, const ts_erosion_object *o, ts_error *err)
{
    ts_error scratch;
    if (ts_mesh_check_closed(o->vertices, o->vertex_count, o->triangles, o->triangle_count, o->name, &scratch) == TS_OK)
        return ts_terrain_add_solid(&e->terrain, o->name, o->vertices, o->vertex_count, o->triangles,
                                    o->triangle_count, err);
    return ts_terrain_add_below(&e->terrain, o->name, o->vertices, o->vertex_count, o->triangles, o->triangle_count,
                                err);
}

static ts_status add_rain(ts_erosion *e, const ts_erosion_object *o, ts_error *err)
{
    rain *r = &e->rains[e->n_rains++];
    snprintf(r->name, sizeof r->name, "%s", o->name);
    r->start = o->emit_start, r->end = o->emit_end;
    r->tri = malloc((9 * o->triangle_count + 1) * sizeof *r->tri);
    r->cumulative = malloc((o->triangle_count + 1) * sizeof *r->cumulative);
    if (!r->tri || !r->cumulative)
        return ts_fail(err, TS_ERR_NOMEM, "rain '%s': out of memory", o->name);
    for (size_t f = 0; f < o->triangle_count; f++) {
        const float *v[3];
        for (int c = 0; c < 3; c++) {
            int32_t vi = o->triangles[3 * f + c];
            if (vi < 0 || (size_t)vi >= o->vertex_count)
                return ts_fail(err, TS_ERR_INVALID, "rain '%s': face %zu names vertex %d of %zu", o->name, f, (int)vi,
                               o->vertex_count);
            v[c] = o->vertices + 3 * vi;
            for (int a = 0; a < 3; a++) {
                if (!isfinite(v[c][a]))
                    return ts_fail(err, TS_ERR_INVALID, "rain '%s': vertex %d is not finite", o->name, (int)vi);
                r->tri[9 * f + 3 * c + a] = v[c][a];
            }
        }
        double area = 0.5 * fabs((double)(v[1][0] - v[0][0]) * (v[2][1] - v[0][1]) -
                                 (double)(v[2][0] - v[0][0]) * (v[1][1] - v[0][1]));   /* seen from above */
        r->area += area;
        r->cumulative[r->faces++] = r->area;
    }
    if (!(r->area > 1e-12))
        return ts_fail(err, TS_ERR_INVALID, "rain '%s' has no area seen from above; use a horizontal plane or a "
                       "mesh whose faces face up", o->name);
    return TS_OK;
}

static ts_status add_collider(ts_erosion *e, const ts_erosion_object *o, ts_error *err)
{
    ts_moving_collider *c = &e->colliders[e->n_colliders];
    ts_status st = ts_collider_from_mesh(&c->c, o->name, o->vertices, o->vertex_count, o->triangles,
                                         o->triangle_count, 0.5 * e->sph.spacing,
                                         2.0 + e->sph.h / (0.5 * e->sph.spacing), err);
    if (st != TS_OK)
        return st;
    c->m.rows = o->motion;
    c->m.frames = o->motion_frames;
    e->n_colliders++;
    return TS_OK;
}

static ts_status add_sink(ts_erosion *e, const ts_erosion_object *o, ts_error *err)
{
    ts_status st = ts_collider_from_mesh(&e->sinks[e->n_sinks], o->name, o->vertices, o->vertex_count, o->triangles,
                                         o->triangle_count, 0.5 * e->sph.spacing, 2.0, err);
    e->n_sinks += st == TS_OK;
    return st;
}

typedef struct lake_fill {
    const ts_erosion *e;
    ts_point_list *pts;
} lake_fill;

/* Water starts only in the open: not in the ground, an obstacle or outside the domain (a lattice point
 * half a spacing from a wall is where the wall keeps water, so it stays). */
static int keep_lake_point(void *user, float x, float y, float z, float phi)
{
    lake_fill *f = user;
    const ts_sph_model *m = &f->e->sph;
    const float clear = 0.9f * m->r_contact;
    if (x < m->domain[0] || x > m->domain[3] || y < m->domain[1] || y > m->domain[4] || z < m->domain[2] ||
        z > m->domain[5])
        return 1;
    ts_collider_hit hit;
    if (ts_collider_query(&f->e->terrain.field, 0.0, ts_v3(x, y, z), &hit) && hit.distance < clear)
        return 1;
    for (size_t c = 0; c < f->e->n_colliders; c++)
        if (ts_collider_query(&f->e->colliders[c].c, 0.0, ts_v3(x, y, z), &hit) && hit.distance < clear)
            return 1;
    return ts_point_list_add(f->pts, x, y, z, phi);
}

static double rain_budget(const ts_erosion *e, const rain *r)
{
    int frames = r->end - r->start + 1;
    if (frames <= 0)
        return 0.0;
    double volume = e->p.rain_rate / 3.6e6 * r->area * frames / e->p.fps;   /* mm/h -> m/s */
    double particle = (double)e->sph.spacing * e->sph.spacing * e->sph.spacing;
    return 1.2 * volume / particle + e->p.rain_drop_particles;
}

static ts_status check_objects(const ts_erosion_object *objects, size_t n, size_t counts[6], ts_error *err)
{
    memset(counts, 0, 6 * sizeof *counts);
    for (size_t i = 0; i < n; i++) {
        const ts_erosion_object *o = &objects[i];
        if (o->role < TS_EROSION_TERRAIN || o->role > TS_EROSION_OBSTACLE)
            return ts_fail(err, TS_ERR_INVALID, "object '%s' has an unknown erosion role %d", o->name, (int)o->role);
        if (o->role == TS_EROSION_FLUID || o->role == TS_EROSION_INFLOW || o->role == TS_EROSION_SINK ||
            o->role == TS_EROSION_OBSTACLE) {
            ts_status st = ts_mesh_check_closed(o->vertices, o->vertex_count, o->triangles, o->triangle_count,
                                                o->name, err);
            if (st != TS_OK)
                return st;
        }
        if (o->motion && o->motion_frames < 1)
            return ts_fail(err, TS_ERR_INVALID, "object '%s': motion has no frames", o->name);
        counts[o->role]++;
    }
    if (counts[TS_EROSION_TERRAIN] == 0)
        return ts_fail(err, TS_ERR_INVALID, "erosion: no object has the Terrain role; give the ground mesh that role");
    return TS_OK;
}

ts_status ts_erosion_create(ts_erosion **out, const ts_erosion_params *p, const ts_erosion_object *objects,
                            size_t object_count, ts_error *err)
{
    *out = NULL;
    size_t counts[6];
    ts_status st = check_params(p, err);
    if (st == TS_OK)
        st = check_objects(objects, object_count, counts, err);
    if (st != TS_OK)
        return st;
    ts_erosion *e = calloc(1, sizeof *e);
    if (!e)
        return ts_fail(err, TS_ERR_NOMEM, "erosion: out of memory");
    e->p = *p;
    e->now = (ts_step_context){p->frame_start, 1.0 / p->fps, 0.0, 0.0, 0.0};
    const ts_sph_settings set = {
        p->particle_radius, p->rest_density, p->speed_of_sound, 0.0, p->viscosity, p->artificial_viscosity,
        p->surface_tension, p->wall_friction, p->cfl_number, {p->gravity[0], p->gravity[1], p->gravity[2]}, 0,
        {p->domain_min[0], p->domain_min[1], p->domain_min[2]}, {p->domain_max[0], p->domain_max[1], p->domain_max[2]},
        p->wall_attraction,
        0.0, /* no particle shifting: the paper's flow down a terrain, as its tests measure it */
    };
    const ts_particle_column carried[] = {TS_STATE_COLUMN("sediment", &e->sediment, TS_ATTR_F32, 1)};
    st = ts_sph_init(&e->sph, &set, err);
    if (st == TS_OK)
        st = ts_particles_register(&e->sph.fluid, carried, 1, err);
    const double h = e->sph.h, spacing = e->sph.spacing;
    if (st == TS_OK)
        st = ts_terrain_init(&e->terrain, p->domain_min, p->domain_max, p->voxel_size, 1.25 * h + p->voxel_size, err);
    if (st == TS_OK) {
        e->pending = calloc(e->terrain.nodes, sizeof *e->pending);
        e->removed_at = calloc(e->terrain.nodes, sizeof *e->removed_at);
        e->shear_sum = calloc(e->terrain.nodes, sizeof *e->shear_sum);
        e->slab_sums = calloc((size_t)e->terrain.dims[2], sizeof *e->slab_sums);
        e->colliders = calloc(counts[TS_EROSION_OBSTACLE] + 1, sizeof *e->colliders);
        e->sinks = calloc(counts[TS_EROSION_SINK] + 1, sizeof *e->sinks);
        e->inflows = calloc(counts[TS_EROSION_INFLOW] + 1, sizeof *e->inflows);
        e->rains = calloc(counts[TS_EROSION_RAIN] + 1, sizeof *e->rains);
        if (!e->pending || !e->removed_at || !e->shear_sum || !e->slab_sums || !e->colliders || !e->sinks ||
            !e->inflows || !e->rains)
            st = ts_fail(err, TS_ERR_NOMEM, "erosion: out of memory");
    }
    for (size_t i = 0; i < object_count && st == TS_OK; i++) {
        const ts_erosion_object *o = &objects[i];
        const ts_mesh_ref mesh = mesh_of(o);
        switch (o->role) {
        case TS_EROSION_TERRAIN: st = add_terrain(e, o, err); break;
        case TS_EROSION_RAIN: st = add_rain(e, o, err); break;
        case TS_EROSION_OBSTACLE: st = add_collider(e, o, err); break;
        case TS_EROSION_SINK: st = add_sink(e, o, err); break;
        case TS_EROSION_INFLOW:
            st = ts_sph_inflow_init(&e->inflows[e->n_inflows++], &mesh, o->motion, o->motion_frames, o->velocity,
                                    o->emit_start, o->emit_end, spacing, err);
            break;
        case TS_EROSION_FLUID: break;
        }
    }
    if (st == TS_OK) {
        ts_terrain_refresh(&e->terrain, NULL, NULL);
        e->terrain_volume0 = ts_terrain_volume(&e->terrain);
        if (!(e->terrain_volume0 > 0.0))
            st = ts_fail(err, TS_ERR_INVALID, "erosion: the Terrain holds no ground inside the domain; move it into "
                         "the domain or make voxel_size smaller");
    }
    /* the boundaries, in the order walls are summed and applied: the ground, obstacles */
    if (st == TS_OK)
        st = ts_sph_add_boundary(&e->sph, (ts_sph_boundary){.kind = TS_SPH_TERRAIN, .shape = &e->terrain.field}, err);
    for (size_t c = 0; c < e->n_colliders && st == TS_OK; c++)
        st = ts_sph_add_boundary(&e->sph, (ts_sph_boundary){.kind = TS_SPH_COLLIDER, .shape = &e->colliders[c].c},
                                 err);
    ts_point_list lake = {0};
    for (size_t i = 0; i < object_count && st == TS_OK; i++) {
        if (objects[i].role != TS_EROSION_FLUID)
            continue;
        for (int a = 0; a < 3; a++)
            lake.velocity[a] = (float)objects[i].velocity[a];
        const ts_mesh_ref mesh = mesh_of(&objects[i]);
        lake_fill fill = {e, &lake};
        st = ts_lattice_fill(&mesh, spacing, 0.5 * spacing, keep_lake_point, &fill, err);
    }
    double budget = (double)lake.n;
    for (size_t i = 0; i < e->n_inflows; i++)
        budget += ts_sph_inflow_budget(&e->inflows[i], e->now.frame_dt, spacing);
    for (size_t i = 0; i < e->n_rains; i++)
        budget += rain_budget(e, &e->rains[i]);
    if (st == TS_OK && budget == 0.0)
        st = ts_fail(err, TS_ERR_INVALID, "erosion: no water - give a mesh the Rain, Inflow or Fluid role (with "
                     "rain_rate above 0 for rain)");
    if (st == TS_OK && (double)lake.n > (double)p->max_particles)
        st = ts_fail(err, TS_ERR_NOMEM, "erosion: the Fluid objects need %zu particles, above max_particles = %ld; "
                     "raise max_particles or the particle radius", lake.n, p->max_particles);
    /* rain and inflows beyond the budget stop emitting until water drains away */
    if (st == TS_OK)
        st = ts_sph_alloc(&e->sph, (size_t)fmin(budget, (double)p->max_particles), err);
    if (st == TS_OK) {
        float *dst[6] = {e->sph.x, e->sph.y, e->sph.z, e->sph.vx, e->sph.vy, e->sph.vz};
        for (int a = 0; a < 6; a++)
            memcpy(dst[a], lake.c[a], lake.n * sizeof(float));
        for (e->sph.fluid.n = 0; e->sph.fluid.n < lake.n; e->sph.fluid.n++)
            e->sph.id[e->sph.fluid.n] = e->next_id++;
    }
    ts_point_list_free(&lake);
    if (st != TS_OK) {
        ts_erosion_destroy(e);
        return st;
    }
    *out = e;
    return TS_OK;
}

void ts_erosion_destroy(ts_erosion *e)
{
    if (!e)
        return;
    ts_sph_free(&e->sph);
    ts_terrain_free(&e->terrain);
    free(e->pending);
    free(e->removed_at);
    free(e->shear_sum);
    free(e->slab_sums);
    for (size_t c = 0; c < e->n_colliders; c++)
        ts_collider_free(&e->colliders[c].c);
    for (size_t s = 0; s < e->n_sinks; s++)
        ts_collider_free(&e->sinks[s]);
    for (size_t i = 0; i < e->n_inflows; i++)
        ts_sph_inflow_free(&e->inflows[i]);
    for (size_t r = 0; r < e->n_rains; r++) {
        free(e->rains[r].tri);
        free(e->rains[r].cumulative);
    }
    free(e->colliders);
    free(e->sinks);
    free(e->inflows);
    free(e->rains);
    free(e);
}

/* ---------------------------------------------------------------- sources */

/* A point on the rain's faces, uniform by horizontal area, from two hashes. */
static ts_vec3 rain_point(const rain *r, uint64_t seed, uint64_t drop)
{
    double u = ts_rng_hash_uniform(seed, drop, 0) * r->area;
    size_t lo = 0, hi = r->faces - 1;
    while (lo < hi) { /* the first face whose cumulative area passes u */
        size_t mid = (lo + hi) / 2;
        if (r->cumulative[mid] <= u)
            lo = mid + 1;
        else
            hi = mid;
    }
    double a = ts_rng_hash_uniform(seed, drop, 1), b = ts_rng_hash_uniform(seed, drop, 2);
    if (a + b > 1.0)
        a = 1.0 - a, b = 1.0 - b;
    const float *t = r->tri + 9 * lo;
    return ts_v3(t[0] + a * (t[3] - t[0]) + b * (t[6] - t[0]), t[1] + a * (t[4] - t[1]) + b * (t[7] - t[1]),
                 t[2] + a * (t[5] - t[2]) + b * (t[8] - t[2]));
}

/* Drops of rain_drop_particles particles (sec. 5.1: five) packed around a
 * point on the rain's faces, as many as the rain owes for this step. */
static size_t fall_rain(ts_erosion *e, const ts_step_context *now)
{
    static const float offsets[27][3] = {
        {0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}, {1, 1, 0}, {-1, -1, 0},
        {1, -1, 0}, {-1, 1, 0}, {1, 0, 1}, {-1, 0, 1}, {0, 1, 1}, {0, -1, 1}, {1, 0, -1}, {-1, 0, -1}, {0, 1, -1},
        {0, -1, -1}, {1, 1, 1}, {-1, -1, 1}, {1, -1, 1}, {-1, 1, 1}, {1, 1, -1}, {-1, -1, -1}, {1, -1, -1},
        {-1, 1, -1},
    };
    ts_sph_model *m = &e->sph;
    const int per_drop = e->p.rain_drop_particles;
    const double particle = (double)m->spacing * m->spacing * m->spacing, drop = per_drop * particle;
    size_t before = m->fluid.n;
    for (size_t k = 0; k < e->n_rains; k++) {
        rain *r = &e->rains[k];
        int next = now->frame + 1;
        if (next < r->start || next > r->end)
            continue;
        r->owed += e->p.rain_rate / 3.6e6 * r->area * now->dt;
        while (r->owed >= drop) {
            r->owed -= drop;
            ts_vec3 c = rain_point(r, e->p.seed ^ (0x9e3779b97f4a7c15ull * (k + 1)), e->drops++);
            for (int q = 0; q < per_drop && m->fluid.n < m->fluid.cap; q++) {
                float x = (float)c.x + m->spacing * offsets[q][0], y = (float)c.y + m->spacing * offsets[q][1];
                float z = (float)c.z + m->spacing * offsets[q][2];
                if (x < m->domain[0] || x > m->domain[3] || y < m->domain[1] || y > m->domain[4] ||
                    z < m->domain[2] || z > m->domain[5] || !ts_sph_site_is_free(m, x, y, z))
                    continue;
                size_t i = m->fluid.n++;
                m->x[i] = x, m->y[i] = y, m->z[i] = z;
                m->vx[i] = m->vy[i] = 0.0f, m->vz[i] = (float)-e->p.rain_speed;
                m->id[i] = e->next_id++;
            }
        }
    }
    return m->fluid.n - before;
}

static size_t emit(ts_erosion *e, const ts_step_context *now)
{
    size_t before = e->sph.fluid.n;
    for (size_t f = 0; f < e->n_inflows; f++)
        ts_sph_inflow_emit(&e->inflows[f], &e->sph, now, e->p.frame_start, &e->next_id);
    fall_rain(e, now);
    for (size_t i = before; i < e->sph.fluid.n; i++)
        e->sediment[i] = 0.0f;
    return e->sph.fluid.n - before;
}

/* ---------------------------------------------------------------- erosion */

typedef struct node_box {
    int lo[3], hi[3];
} node_box;

static void node_position(const ts_terrain *t, int i, int j, int k, float p[3])
{
    p[0] = t->origin[0] + t->voxel * (float)i;
    p[1] = t->origin[1] + t->voxel * (float)j;
    p[2] = t->origin[2] + t->voxel * (float)k;
}

/* The excess shear of particle j at a grid point p (sec. 4.1, source 9):
 * the speed across the line to the point over the distance, that distance
 * less the particle's own distance to the ground (at most R_BASE h) and at
 * least R_BASE h; raised to n, less tau_c, at least 0. -1 beyond h. */
static inline float excess_shear(const ts_erosion *e, const float p[3], size_t j)
{
    const ts_sph_model *m = &e->sph;
    float dx = p[0] - m->x[j], dy = p[1] - m->y[j], dz = p[2] - m->z[j];
    float r2 = dx * dx + dy * dy + dz * dz;
    if (r2 >= m->h * m->h)
        return -1.0f;
    float r = sqrtf(r2), base = R_BASE * m->h;
    float v = sqrtf(m->vx[j] * m->vx[j] + m->vy[j] * m->vy[j] + m->vz[j] * m->vz[j]);
    float along = r > 0.0f ? fabsf(m->vx[j] * dx + m->vy[j] * dy + m->vz[j] * dz) / r : 0.0f;
    float l = r - fminf(m->tl[j], base);                        /* rectified distance */
    float theta = (v - along) / fmaxf(l, base);                  /* shear rate, 1/s */
    float tau = powf(theta, (float)e->p.shear_exponent);         /* tau = K theta^n, K = 1 */
    return fmaxf(tau - (float)e->p.critical_shear, 0.0f);
}

/* A node the water can erode: ground at the surface, above the floor. */
static inline int erodible(const ts_erosion *e, size_t n, int k)
{
    const ts_terrain *t = &e->terrain;
    return t->density[n] > 0.0f && t->field.phi[n] > -1.5f * t->voxel &&
           t->origin[2] + t->voxel * (float)k >= (float)e->p.erosion_floor;
}

static void grow_box(node_box *b, int i, int j, int k)
{
    const int at[3] = {i, j, k};
    for (int a = 0; a < 3; a++) {
        if (at[a] < b->lo[a]) b->lo[a] = at[a];
        if (at[a] > b->hi[a]) b->hi[a] = at[a];
    }
}

/* dM/dt = -K_eps sum_j (theta_j^n - tau_c) (sec. 4.1) at every node at the
 * surface, over the particles within h of it (their count within h does
 * not change with the resolution: h is two spacings), over the time since
 * the last update; accumulated below a transfer quantum. Marks
 * removed_at and shear_sum; returns the changed nodes' box (hi < lo: none). */
static node_box erode_nodes(ts_erosion *e, double seconds, double *eroded)
{
    ts_terrain *t = &e->terrain;
    const ts_sph_model *m = &e->sph;
    const float rate = (float)(e->p.erosion_strength * seconds);
    node_box box = {{t->dims[0], t->dims[1], t->dims[2]}, {-1, -1, -1}};
    double *slab = e->slab_sums;   /* what each z slab lost, added in slab order: any thread count */
    #pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < t->dims[2]; k++) {
        node_box mine = {{t->dims[0], t->dims[1], t->dims[2]}, {-1, -1, -1}};
        double lost = 0.0;
        for (int j = 0; j < t->dims[1]; j++)
            for (int i = 0; i < t->dims[0]; i++) {
                size_t n = ts_terrain_index(t, i, j, k);
                e->removed_at[n] = 0.0f;
                if (!erodible(e, n, k))
                    continue;
                float p[3];
                node_position(t, i, j, k, p);
                ts_neighbor_ranges r;
                ts_grid_ranges_within(&m->grid, p[0], p[1], p[2], m->h + m->skin, &r);
                float sum = 0.0f;
                for (int q = 0; q < r.n; q++)
                    for (uint32_t jj = r.begin[q]; jj < r.end[q]; jj++) {
                        float s = excess_shear(e, p, jj);
                        if (s > 0.0f)
                            sum += s;
                    }
                e->shear_sum[n] = sum;
                if (sum == 0.0f)
                    continue;
                float acc = e->pending[n] + rate * sum;
                float transfer = floorf(acc / TRANSFER_QUANTUM) * TRANSFER_QUANTUM;
                if (transfer <= 0.0f) {
                    e->pending[n] = acc;
                    continue;
                }
                float taken = fminf(transfer, t->density[n]);
                t->density[n] -= taken;
                e->pending[n] = t->density[n] > 0.0f ? acc - transfer : 0.0f;
                e->removed_at[n] = taken;
                lost += taken;
                grow_box(&mine, i, j, k);
            }
        slab[k] = lost;
        #pragma omp critical(erosion_box)
        if (mine.hi[0] >= 0) {
            grow_box(&box, mine.lo[0], mine.lo[1], mine.lo[2]);
            grow_box(&box, mine.hi[0], mine.hi[1], mine.hi[2]);
        }
    }
    double sum = 0.0;
    for (int k = 0; k < t->dims[2]; k++)
        sum += slab[k];
    *eroded = sum * (double)t->voxel * t->voxel * t->voxel;
    return box;
}

/* Each particle takes the share of every eroded node's volume its excess
 * shear gave (gather: it visits the nodes within h of it). Returns the
 * volume taken up, which equals the volume eroded to rounding. */
static void carry_eroded(ts_erosion *e, const node_box *box)
{
    ts_sph_model *m = &e->sph;
    const ts_terrain *t = &e->terrain;
    const float voxel3 = t->voxel * t->voxel * t->voxel;
    #pragma omp parallel for schedule(dynamic, 256)
    for (size_t j = 0; j < m->fluid.n; j++) {
        int lo[3], hi[3];
        const float x[3] = {m->x[j], m->y[j], m->z[j]};
        for (int a = 0; a < 3; a++) {
            lo[a] = (int)ceilf((x[a] - m->h - t->origin[a]) / t->voxel);
            hi[a] = (int)floorf((x[a] + m->h - t->origin[a]) / t->voxel);
            lo[a] = lo[a] < box->lo[a] ? box->lo[a] : lo[a];
            hi[a] = hi[a] > box->hi[a] ? box->hi[a] : hi[a];
        }
        double taken = 0.0;
        for (int k = lo[2]; k <= hi[2]; k++)
            for (int jj = lo[1]; jj <= hi[1]; jj++)
                for (int i = lo[0]; i <= hi[0]; i++) {
                    size_t n = ts_terrain_index(t, i, jj, k);
                    if (e->removed_at[n] == 0.0f)
                        continue;
                    float p[3];
                    node_position(t, i, jj, k, p);
                    float s = excess_shear(e, p, j);
                    if (s > 0.0f)
                        taken += (double)e->removed_at[n] * voxel3 * (s / e->shear_sum[n]);
                }
        e->sediment[j] += (float)taken;
    }
}

/* Sediment settles from slow water near the ground: a share
 * settling_rate (1 - |v| / settling_speed) per second - Stokes settling
 * wins where the flow's turbulence no longer holds grains up (Kristof et
 * al. 2009 carry sediment the same way, by a capacity that grows with the
 * speed). It joins the ground at the open node just above the point of the
 * surface nearest the particle, overflowing up the column. In particle
 * order: the same bytes on any number of threads. */
static void settle(ts_erosion *e, double seconds, node_box *box)
{
    ts_sph_model *m = &e->sph;
    ts_terrain *t = &e->terrain;
    const float voxel3 = t->voxel * t->voxel * t->voxel, vs = (float)e->p.settling_speed;
    for (size_t j = 0; j < m->fluid.n; j++) {
        if (e->sediment[j] <= 0.0f || m->tl[j] >= m->h || vs <= 0.0f)
            continue;
        float v = sqrtf(m->vx[j] * m->vx[j] + m->vy[j] * m->vy[j] + m->vz[j] * m->vz[j]);
        float share = (float)(e->p.settling_rate * seconds) * (1.0f - v / vs);
        if (share <= 0.0f)
            continue;
        float amount = e->sediment[j] * fminf(share, 1.0f);
        const float n[3] = {m->tnx[j], m->tny[j], m->tnz[j]};
        const float x[3] = {m->x[j], m->y[j], m->z[j]};
        int at[3];
        for (int a = 0; a < 3; a++) {   /* the surface point, then half a voxel out */
            float foot = x[a] - (m->tl[j] - 0.5f * t->voxel) * n[a];
            at[a] = (int)lrintf((foot - t->origin[a]) / t->voxel);
            at[a] = at[a] < 0 ? 0 : (at[a] >= t->dims[a] ? t->dims[a] - 1 : at[a]);
        }
        float left = amount / voxel3;   /* in voxel fractions */
        for (int k = at[2]; k < t->dims[2] && left > 0.0f; k++) {
            size_t node = ts_terrain_index(t, at[0], at[1], k);
            float room = 1.0f - t->density[node];
            float put = fminf(room, left);
            if (put <= 0.0f)
                continue;
            t->density[node] += put;
            left -= put;
            grow_box(box, at[0], at[1], k);
        }
        float laid = amount - left * voxel3;   /* a full column to the top keeps the rest suspended */
        e->sediment[j] -= laid;
        e->deposited += laid;
    }
}

static void erosion_update(ts_erosion *e)
{
    const double seconds = e->since_erosion;
    e->since_erosion = 0.0;
    e->erosion_updates++;
    double eroded;
    node_box box = erode_nodes(e, seconds, &eroded);
    if (box.hi[0] >= 0) {
        e->eroded += eroded;
        if (e->p.keep_sediment)
            carry_eroded(e, &box);
        else
            e->discarded += eroded;
    } else {
        box = (node_box){{e->terrain.dims[0], e->terrain.dims[1], e->terrain.dims[2]}, {-1, -1, -1}};
    }
    if (e->p.keep_sediment)
        settle(e, seconds, &box);
    if (box.hi[0] >= 0)
        ts_terrain_refresh(&e->terrain, box.lo, box.hi);
}

/* ------------------------------------------------------------ the step */

/* Water in a sink or out of the domain leaves, with its sediment. */
static void remove_drained(ts_erosion *e)
{
    ts_sph_model *m = &e->sph;
    size_t out = 0;
    double lost = 0.0;
    for (size_t i = 0; i < m->fluid.n; i++) {
        int keep = ts_sph_in_domain(m, i);
        ts_collider_hit hit;
        for (size_t s = 0; s < e->n_sinks && keep; s++)
            keep = !(ts_collider_query(&e->sinks[s], 0.0, ts_v3(m->x[i], m->y[i], m->z[i]), &hit) &&
                     hit.distance < 0.0f);
        m->keep[i] = (uint8_t)keep;
        if (!keep)
            out++, lost += e->sediment[i];
    }
    if (out == 0)
        return;
    e->drained += lost;
    e->removed += out;
    m->lists_stale = 1;
    ts_particles_compact(&m->fluid, m->keep);
}

static ts_status erosion_begin_frame(void *state, const ts_step_context *now, ts_error *err)
{
    (void)err;
    ts_erosion *e = state;
    e->now = *now;
    e->sph.s = 0.0;
    e->sph.lists_stale = 1; /* each frame starts from fresh lists, so a resumed bake runs the same steps */
    for (size_t c = 0; c < e->n_colliders; c++)
        ts_collider_follow(&e->colliders[c].c, &e->colliders[c].m, now->frame - e->p.frame_start, now->frame_dt);
    return TS_OK;
}

static ts_status erosion_stable_dt(void *state, double *dt, ts_error *err)
{
    (void)err;
    *dt = ts_sph_stable_dt(&((const ts_erosion *)state)->sph);
    return TS_OK;
}

static ts_status erosion_step(void *state, const ts_step_context *now, ts_error *err)
{
    ts_erosion *e = state;
    ts_sph_model *m = &e->sph;
    e->now = *now;
    ts_status st = ts_sph_build(m, err);
    if (st == TS_OK && emit(e, now) > 0) {
        m->lists_stale = 1; /* the new particles take their place in cell order and in the lists */
        st = ts_sph_build(m, err);
    }
    if (st != TS_OK)
        return st;
    ts_sph_density(m);
    e->since_erosion += now->dt;
    if (++e->steps % e->p.erosion_interval == 0 && m->fluid.n > 0)
        erosion_update(e);
    ts_sph_forces(m);
    m->s = now->s_end;
    ts_sph_integrate(m, now->dt);
    remove_drained(e);
    if (!ts_sph_all_finite(m))
        return ts_fail(err, TS_ERR_UNSTABLE, "particles reached NaN or infinite speed; lower cfl_number, raise "
                       "speed_of_sound or check the scene scale");
    return TS_OK;
}

/* ------------------------------------------------------------ outputs */

static double suspended(const ts_erosion *e)
{
    return ts_sum_f32(e->sediment, e->sph.fluid.n);
}

static ts_status erosion_write_frame(void *state, ts_frame_output *out, ts_error *err)
{
    ts_erosion *e = state;
    const ts_sph_model *m = &e->sph;
    size_t n = m->fluid.n;
    float *pos = malloc((3 * n + 1) * sizeof *pos), *vel = malloc((3 * n + 1) * sizeof *vel);
    if (!pos || !vel) {
        free(pos);
        free(vel);
        return ts_fail(err, TS_ERR_NOMEM, "erosion: out of memory writing frame %d", out->frame);
    }
    for (size_t i = 0; i < n; i++) {
        pos[3 * i] = m->x[i], pos[3 * i + 1] = m->y[i], pos[3 * i + 2] = m->z[i];
        vel[3 * i] = m->vx[i], vel[3 * i + 1] = m->vy[i], vel[3 * i + 2] = m->vz[i];
    }
    ts_frame f;
    ts_frame_init(&f, out->frame, out->time, n);
    ts_status st = ts_frame_add(&f, "position", TS_ATTR_F32, 3, pos, err);
    if (st == TS_OK) st = ts_frame_add(&f, "velocity", TS_ATTR_F32, 3, vel, err);
    if (st == TS_OK) st = ts_frame_add(&f, "id", TS_ATTR_U32, 1, m->id, err);
    if (st == TS_OK) st = ts_frame_add(&f, "sediment", TS_ATTR_F32, 1, e->sediment, err);
    if (st == TS_OK) st = ts_output_particles(out, "fluid", &f, err);
    free(pos);
    free(vel);
    char path[4096];
    if (st == TS_OK)
        st = ts_output_file(out, "terrain", "vdb", path, sizeof path, err);
    if (st == TS_OK)
        st = ts_terrain_write(&e->terrain, path, err);
    if (st == TS_OK) {
        ts_erosion_stats s;
        ts_erosion_get_stats(e, &s);
        const double row[6] = {s.eroded, s.deposited, s.suspended, s.drained, s.discarded, s.terrain_volume};
        const char *names[6] = {"eroded", "deposited", "suspended", "drained", "discarded", "terrain_volume"};
        ts_frame b;
        ts_frame_init(&b, out->frame, out->time, 1);
        for (int c = 0; c < 6 && st == TS_OK; c++)
            st = ts_frame_add(&b, names[c], TS_ATTR_F64, 1, &row[c], err);
        if (st == TS_OK)
            st = ts_output_particles(out, "budget", &b, err);
    }
    if (st == TS_OK && e->p.write_surface) {
        const ts_surface_settings surface = TS_SURFACE_SETTINGS(e->p);
        st = ts_output_surface(out, "surface", &surface, m->x, m->y, m->z, n, err);
    }
    return st;
}

/* Checkpoint sections: "particles" (the fluid's state, sediment included),
 * "terrain" (density, distance, closest surface point and pending erosion
 * per node: the distance is rebuilt only where the ground changed, from the
 * closest points around it, so both are saved rather than recomputed),
 * "rain" (what each rain owes), "counters". */
static ts_status erosion_save_state(void *state, ts_checkpoint *cp, ts_error *err)
{
    ts_erosion *e = state;
    const ts_value counters[] = {
        {"next_id", e->next_id}, {"removed", (double)e->removed}, {"steps", (double)e->steps},
        {"drops", (double)e->drops}, {"erosion_updates", (double)e->erosion_updates}, {"eroded", e->eroded},
        {"deposited", e->deposited}, {"drained", e->drained}, {"discarded", e->discarded},
        {"since_erosion", e->since_erosion},
    };
    const ts_column terrain[] = {
        {"density", TS_ATTR_F32, 1, e->terrain.density}, {"distance", TS_ATTR_F32, 1, e->terrain.field.phi},
        {"closest", TS_ATTR_F32, 3, e->terrain.closest}, {"pending", TS_ATTR_F32, 1, e->pending},
    };
    ts_status st = ts_particles_save(&e->sph.fluid, cp, "particles", err);
    if (st == TS_OK)
        st = ts_checkpoint_put(cp, "terrain", e->terrain.nodes, terrain, 4, err);
    if (st == TS_OK && e->n_rains > 0) {
        double *owed = ts_checkpoint_scratch(cp, e->n_rains * sizeof *owed, err);
        if (!owed)
            return TS_ERR_NOMEM;
        for (size_t r = 0; r < e->n_rains; r++)
            owed[r] = e->rains[r].owed;
        const ts_column column = {"owed", TS_ATTR_F64, 1, owed};
        st = ts_checkpoint_put(cp, "rain", e->n_rains, &column, 1, err);
    }
    if (st == TS_OK)
        st = ts_checkpoint_put_values(cp, "counters", counters, sizeof counters / sizeof *counters, err);
    return st;
}

ts_status ts_erosion_restore(ts_erosion *e, const ts_checkpoint *cp, ts_error *err)
{
    ts_value counters[] = {
        {"next_id", 0}, {"removed", 0}, {"steps", 0}, {"drops", 0}, {"erosion_updates", 0}, {"eroded", 0},
        {"deposited", 0}, {"drained", 0}, {"discarded", 0}, {"since_erosion", 0},
    };
    const ts_column terrain[] = {
        {"density", TS_ATTR_F32, 1, e->terrain.density}, {"distance", TS_ATTR_F32, 1, e->terrain.field.phi},
        {"closest", TS_ATTR_F32, 3, e->terrain.closest}, {"pending", TS_ATTR_F32, 1, e->pending},
    };
    ts_status st = ts_particles_restore(&e->sph.fluid, cp, "particles", err);
    uint64_t rows = 0;
    if (st == TS_OK)
        st = ts_checkpoint_rows(cp, "terrain", &rows, err);
    if (st == TS_OK && rows != e->terrain.nodes)
        st = ts_fail(err, TS_ERR_CORRUPT, "the checkpoint's terrain has %llu voxels, this scene %zu: bake from the "
                     "start", (unsigned long long)rows, e->terrain.nodes);
    if (st == TS_OK)
        st = ts_checkpoint_get(cp, "terrain", rows, terrain, 4, err);
    if (st == TS_OK && e->n_rains > 0) {
        double *owed = calloc(e->n_rains, sizeof *owed);
        const ts_column column = {"owed", TS_ATTR_F64, 1, owed};
        st = owed ? ts_checkpoint_rows(cp, "rain", &rows, err) : ts_fail(err, TS_ERR_NOMEM, "out of memory");
        if (st == TS_OK && rows != e->n_rains)
            st = ts_fail(err, TS_ERR_CORRUPT, "the checkpoint has %llu rains, this scene %zu: bake from the start",
                         (unsigned long long)rows, e->n_rains);
        if (st == TS_OK)
            st = ts_checkpoint_get(cp, "rain", rows, &column, 1, err);
        for (size_t r = 0; st == TS_OK && r < e->n_rains; r++)
            e->rains[r].owed = owed[r];
        free(owed);
    }
    if (st == TS_OK)
        st = ts_checkpoint_get_values(cp, "counters", counters, sizeof counters / sizeof *counters, err);
    if (st != TS_OK)
        return st;
    e->next_id = (uint32_t)counters[0].value;
    e->removed = (size_t)counters[1].value;
    e->steps = (long)counters[2].value;
    e->drops = (size_t)counters[3].value;
    e->erosion_updates = (size_t)counters[4].value;
    e->eroded = counters[5].value, e->deposited = counters[6].value;
    e->drained = counters[7].value, e->discarded = counters[8].value;
    e->since_erosion = counters[9].value;
    e->now.frame = cp->frame;
    e->sph.v_max = e->sph.a_max = 0.0;
    for (size_t i = 0; i < e->sph.fluid.n; i++) {
        double v = sqrt((double)e->sph.vx[i] * e->sph.vx[i] + (double)e->sph.vy[i] * e->sph.vy[i] +
                        (double)e->sph.vz[i] * e->sph.vz[i]);
        if (v > e->sph.v_max)
            e->sph.v_max = v;
    }
    return TS_OK;
}

void ts_erosion_get_stats(const ts_erosion *e, ts_erosion_stats *s)
{
    memset(s, 0, sizeof *s);
    s->particles = e->sph.fluid.n;
    s->removed = e->removed;
    s->capacity = e->sph.fluid.cap;
    s->erosion_updates = e->erosion_updates;
    s->eroded = e->eroded;
    s->deposited = e->deposited;
    s->suspended = suspended(e);
    s->drained = e->drained;
    s->discarded = e->discarded;
    s->terrain_volume = ts_terrain_volume(&e->terrain);
    s->terrain_volume0 = e->terrain_volume0;
    s->max_speed = e->sph.v_max;
}

const float *ts_erosion_terrain(const ts_erosion *e, int dims[3], float origin[3], float *voxel)
{
    memcpy(dims, e->terrain.dims, 3 * sizeof *dims);
    memcpy(origin, e->terrain.origin, 3 * sizeof *origin);
    *voxel = e->terrain.voxel;
    return e->terrain.density;
}

size_t ts_erosion_particles(const ts_erosion *e, const float **x, const float **y, const float **z)
{
    *x = e->sph.x, *y = e->sph.y, *z = e->sph.z;
    return e->sph.fluid.n;
}

float ts_erosion_ground_distance(const ts_erosion *e, float x, float y, float z)
{
    ts_collider_hit hit;
    ts_collider_query(&e->terrain.field, 0.0, ts_v3(x, y, z), &hit);
    return hit.distance;
}

static ts_status erosion_create(void **state, const void *params, const void *objects, size_t count, ts_error *err)
{
    return ts_erosion_create((ts_erosion **)state, params, objects, count, err);
}

static ts_status erosion_restore(void *state, const ts_checkpoint *cp, ts_error *err)
{
    return ts_erosion_restore(state, cp, err);
}

static void erosion_destroy(void *state) { ts_erosion_destroy(state); }

static size_t erosion_stats(const void *state, ts_stat *out)
{
    ts_erosion_stats s;
    ts_erosion_get_stats(state, &s);
    const ts_stat all[] = {
        {"fluid_particles", (double)s.particles, 1}, {"removed", (double)s.removed, 1},
        {"capacity", (double)s.capacity, 1}, {"erosion_updates", (double)s.erosion_updates, 1},
        {"eroded", s.eroded, 0}, {"deposited", s.deposited, 0}, {"suspended", s.suspended, 0},
        {"drained", s.drained, 0}, {"discarded", s.discarded, 0}, {"terrain_volume", s.terrain_volume, 0},
        {"terrain_volume_start", s.terrain_volume0, 0}, {"max_speed", s.max_speed, 0},
    };
    return ts_stats_copy(out, all, sizeof all / sizeof *all);
}

const ts_solver_ops ts_erosion_ops = {
    "erosion", &ts_erosion_param_table, sizeof(ts_erosion_object), 400, erosion_create, erosion_restore,
    erosion_destroy, erosion_stats, erosion_begin_frame, erosion_stable_dt, erosion_step, erosion_write_frame,
    erosion_save_state,
};
