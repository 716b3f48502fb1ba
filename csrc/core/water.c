/* water.c - SPH water with two-way rigid bodies (see water.h).
 *
 * One substep (step()):
 *   1. the fluid is sorted into grid-cell order (a cell range of the grid is
 *      then an index range of the arrays); rigid particles take their body's
 *      pose and get a grid of their own; inflow objects top up their volume;
 *   2. density of every fluid particle, eq. 3.5, with the wall weight of
 *      colliders and domain sides; pressure from the equation of state; the
 *      neighbours found are kept for step 3 (this search and step 3's pair
 *      loop are in sph_loops.c, in an AVX2 and a portable form);
 *   3. acceleration of every fluid particle: pressure (eq. 3.16, or the
 *      symmetric WCSPH form), viscosity (eq. 3.19 and artificial viscosity),
 *      surface tension (eqs. 3.20-3.23), walls, gravity; rigid particles act
 *      with mirrored pressure (p_b = p_i, rho_b = rho_i; eq. 3.35 clamps
 *      pressure on rigid bodies at zero in Mueller's form);
 *   4. the reaction on each rigid particle (the same pair terms, negated),
 *      summed per body in a fixed order into force and torque;
 *   5. leap-frog (eqs. 3.42-3.43: velocities live at half steps), walls
 *      projected, bodies integrated (rigid.h) and their contacts resolved.
 * Every loop over particles is in gather form, so the results are the same
 * bytes whatever the number of threads.
 */
#include "water.h"

#include <math.h>
#include <stddef.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "collider.h"
#include "grid.h"
#include "kernels.h"
#include "mesh.h"
#include "particles.h"
#include "rigid.h"
#include "sph.h"
#include "sph_loops.h"
#include "../vdb/tsubu_vdb.h"

#define NEIGHBOUR_LIST 64
#define NEIGHBOUR_STRIDE (NEIGHBOUR_LIST + TS_SPH_LIST_SLACK)
#define NEIGHBOUR_OVERFLOW 255
/* Verlet lists hold the fluid within h + skin and serve until some particle
 * has moved half the skin. The skin is chosen at each build for the lists to
 * last about VERLET_STEPS steps at the fastest particle's speed, within
 * [SKIN_MIN, SKIN_MAX] h: a calm liquid keeps short lists (h/10: a third more
 * entries than the neighbours), a fast one longer lists rebuilt less often. */
#define VERLET_STEPS 4.0
#define SKIN_MIN 0.1f
#define SKIN_MAX 0.25f
#define BODY_RESTITUTION 0.1
#define BODY_FRICTION 0.4
#define CONTACT_ITERATIONS 4


typedef struct body {
    char name[64];
    ts_rigid_body rb;
    size_t first, count;        /* its particles in the rigid arrays */
    ts_vec3 origin_offset;      /* object origin - centroid, body frame */
    ts_quat rotation0;          /* object rotation at rest */
    double radius;              /* of its particles around the centroid */
    ts_vec3 centroid0;          /* centre of mass at rest (the collider's frame) */
    ts_collider shape;          /* signed distance at rest: keeps liquid out of the body */
} body;

typedef struct inflow {
    char name[64];
    float *sx, *sy, *sz;        /* emission sites, rest pose */
    size_t n;
    ts_motion m;
    float v[3];
    int start, end;
} inflow;

/* One thread's share of a Verlet list build: the lists of its block of
 * particles, gathered here in one pass, then copied into place. */
typedef struct list_block {
    uint32_t *entries;
    size_t cap, used, offset;
} list_block;

typedef struct collider_entry {
    ts_collider c;
    ts_motion m;
} collider_entry;

struct ts_water {
    ts_water_params p;
    ts_kernels k;
    ts_sph_eos_params eos;
    ts_sph_wall wall;
    float h, spacing, mass, r_contact;
    float domain[6];

    /* fluid particles, re-sorted into grid-cell order whenever the Verlet
     * lists are rebuilt, so that neighbours sit close in memory */
    ts_particles fluid;          /* fluid.n particles of fluid.cap (the inflows' whole budget) */
    float *x, *y, *z, *vx, *vy, *vz;
    float *ax, *ay, *az, *rho, *pr, *wgx, *wgy, *wgz;
    float *P, *inv_rho;          /* p / rho^2 and 1 / rho, per step */
    float *pos4, *vel4;          /* (x, y, z, rho) and (vx, vy, vz, P) packed: what the AVX2 loops read (sph_loops.h) */
    uint32_t *vlist;             /* Verlet lists: the fluid within h + skin at the last build, ... */
    uint32_t *vstart;            /* ... particle i's from vlist[vstart[i]] to vlist[vstart[i + 1]] */
    size_t vlist_cap;
    list_block *blocks;          /* one per thread (build_lists) */
    int n_blocks;
    float *x0, *y0, *z0;         /* positions at the last build */
    float skin;
    int lists_stale;             /* rebuild before the next density pass */
    uint32_t *nbr;               /* fluid neighbours found by the density pass, NEIGHBOUR_STRIDE apart */
    uint8_t *nbr_n;              /* how many (NEIGHBOUR_OVERFLOW: too many, search again) */
    uint32_t *id;
    uint8_t *keep;               /* still inside the domain (remove_escaped) */

    /* rigid particles, in body blocks (not re-sorted; their own grid) */
    ts_particles rigid;
    float *rx, *ry, *rz, *rvx, *rvy, *rvz;  /* world, this step */
    float *rlx, *rly, *rlz;      /* body frame */
    float *rfx, *rfy, *rfz;      /* reaction force on each */
    uint32_t *rbody;
    ts_grid rgrid;
    float rbox[6];               /* their bounds, grown by h: fluid outside needs no rigid search */
    body *bodies;
    size_t n_bodies;

    collider_entry *colliders;
    size_t n_colliders;
    inflow *inflows;
    size_t n_inflows;

    ts_grid grid;
    uint32_t next_id;
    size_t removed;
    int frame;                   /* the frame interval being computed starts here */
    double frame_dt, s;          /* s: position within the frame interval, 0..1 */
    double v_max, a_max;
    long steps;
};

/* ------------------------------------------------------------------ set-up */

#define P ts_water_params
static const ts_param_def PARAMS[] = {
    TS_ENUM(P, solver, TS_WATER_WCSPH, "wcsph", "muller"),
    TS_REAL(P, particle_radius, 0.001, 1.0, 0.02),
    TS_REAL(P, rest_density, 1.0, 30000.0, 1000.0),
    TS_REAL(P, speed_of_sound, 1.0, 1000.0, 30.0),
    TS_REAL(P, gas_stiffness, 0.01, 1e6, 200.0),
    TS_REAL(P, viscosity, 0.0, 1000.0, 0.001),
    TS_REAL(P, artificial_viscosity, 0.0, 1.0, 0.08),
    TS_REAL(P, surface_tension, 0.0, 100.0, 0.0728),
    TS_REAL(P, wall_friction, 0.0, 1.0, 0.1),
    TS_VEC3(P, gravity, -1000.0, 1000.0, 0.0, 0.0, -9.81),
    TS_BOOL(P, domain_walls, 0),
    TS_REAL(P, cfl_number, 0.01, 1.0, 0.4),
    TS_LONG(P, max_particles, 1, 200e6, 4e6),
    TS_BOOL(P, write_surface, 1),
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
const ts_param_table ts_water_param_table = TS_PARAM_TABLE("water", ts_water_params, PARAMS);

ts_water_params ts_water_params_default(void)
{
    ts_water_params p;
    ts_params_default(&ts_water_param_table, &p);
    return p;
}

static ts_status check_params(const ts_water_params *p, ts_error *err)
{
    ts_status st = ts_params_check(&ts_water_param_table, p, err);
    for (int a = 0; st == TS_OK && a < 3; a++)
        if (!(p->domain_max[a] > p->domain_min[a]))
            return ts_fail(err, TS_ERR_INVALID, "water: the domain box is empty; give the Domain object a size");
    return st;
}

/* Mueller's ideal-gas pressure (eq. 3.17) rather than the weakly compressible form. */
static inline int uses_muller(const ts_water *w) { return w->p.solver == TS_WATER_MULLER; }

/* Lattice points of spacing d inside a closed mesh (distance below `inside`),
 * the lattice anchored at the mesh's bounding-box corner plus d/2 so that a
 * box is filled exactly. Calls keep(point) for each; returns via callback. */
typedef int (*lattice_fn)(void *user, float x, float y, float z, float phi);

static ts_status fill_lattice(const ts_water_object *o, double spacing, double voxel, lattice_fn keep, void *user,
                              ts_error *err)
{
    ts_collider sdf;
    ts_status st = ts_collider_from_mesh(&sdf, o->name, o->vertices, o->vertex_count, o->triangles,
                                         o->triangle_count, voxel, 2.0, err);
    if (st != TS_OK)
        return st;
    float b[6];
    ts_mesh_bounds(o->vertices, o->vertex_count, b);
    int n[3];
    for (int a = 0; a < 3; a++)
        n[a] = (int)floor((b[a + 3] - b[a]) / spacing + 1e-6);
    for (int k = 0; k < n[2] && st == TS_OK; k++)
        for (int j = 0; j < n[1] && st == TS_OK; j++)
            for (int i = 0; i < n[0]; i++) {
                float px = b[0] + (float)((i + 0.5) * spacing), py = b[1] + (float)((j + 0.5) * spacing);
                float pz = b[2] + (float)((k + 0.5) * spacing);
                ts_collider_hit hit;
                if (ts_collider_query(&sdf, 0.0, ts_v3(px, py, pz), &hit) && hit.distance < 0.0f &&
                    !keep(user, px, py, pz, hit.distance)) {
                    st = ts_fail(err, TS_ERR_NOMEM, "water: out of memory filling '%s'", o->name);
                    break;
                }
            }
    ts_collider_free(&sdf);
    return st;
}

/* Points with a velocity each, grown as they are found (set-up only). */
typedef struct point_list {
    float *c[6];        /* x, y, z, vx, vy, vz */
    size_t n, cap;
    double max_depth;   /* keep points no deeper than this (rigid shells); <= 0: all */
    float velocity[3];  /* given to points added from now on */
} point_list;

static int point_list_add(void *user, float x, float y, float z, float phi)
{
    point_list *l = user;
    if (l->max_depth > 0.0 && phi < -l->max_depth)
        return 1;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        for (int a = 0; a < 6; a++) {
            float *grown = realloc(l->c[a], cap * sizeof *grown);
            if (!grown)
                return 0;
            l->c[a] = grown;
        }
        l->cap = cap;
    }
    const float values[6] = {x, y, z, l->velocity[0], l->velocity[1], l->velocity[2]};
    for (int a = 0; a < 6; a++)
        l->c[a][l->n] = values[a];
    l->n++;
    return 1;
}

static void point_list_free(point_list *l)
{
    for (int a = 0; a < 6; a++)
        free(l->c[a]);
}

/* Is a point inside (or against) an obstacle or a rigid body at rest? Fluid
 * must not start there. rigid: the bodies' sample points in world space with
 * a grid over them. */
static int inside_solid(const ts_water *w, float x, float y, float z, const point_list *rigid,
                        const ts_grid *rigid_grid)
{
    ts_collider_hit hit;
    for (size_t c = 0; c < w->n_colliders; c++)
        if (ts_collider_query(&w->colliders[c].c, 0.0, ts_v3(x, y, z), &hit) && hit.distance < w->r_contact)
            return 1;
    if (rigid->n == 0)
        return 0;
    const float min2 = 0.81f * w->spacing * w->spacing;
    ts_neighbor_ranges r;
    ts_grid_neighbor_ranges(rigid_grid, x, y, z, &r);
    for (int q = 0; q < r.n; q++)
        for (uint32_t k = r.begin[q]; k < r.end[q]; k++) {
            uint32_t j = rigid_grid->sorted[k];
            float dx = x - rigid->c[0][j], dy = y - rigid->c[1][j], dz = z - rigid->c[2][j];
            if (dx * dx + dy * dy + dz * dz < min2)
                return 1;
        }
    return 0;
}

static ts_status alloc_particles(ts_water *w, size_t fluid, size_t rigid, ts_error *err)
{
    const size_t f = sizeof(float);
    const ts_particle_column fluid_columns[] = {
        TS_STATE_COLUMN("x", &w->x, TS_ATTR_F32, 1), TS_STATE_COLUMN("y", &w->y, TS_ATTR_F32, 1),
        TS_STATE_COLUMN("z", &w->z, TS_ATTR_F32, 1), TS_STATE_COLUMN("vx", &w->vx, TS_ATTR_F32, 1),
        TS_STATE_COLUMN("vy", &w->vy, TS_ATTR_F32, 1), TS_STATE_COLUMN("vz", &w->vz, TS_ATTR_F32, 1),
        TS_STATE_COLUMN("id", &w->id, TS_ATTR_U32, 1),
        TS_WORK_COLUMN("ax", &w->ax, f), TS_WORK_COLUMN("ay", &w->ay, f), TS_WORK_COLUMN("az", &w->az, f),
        TS_WORK_COLUMN("rho", &w->rho, f), TS_WORK_COLUMN("pr", &w->pr, f), TS_WORK_COLUMN("wgx", &w->wgx, f),
        TS_WORK_COLUMN("wgy", &w->wgy, f), TS_WORK_COLUMN("wgz", &w->wgz, f), TS_WORK_COLUMN("P", &w->P, f),
        TS_WORK_COLUMN("inv_rho", &w->inv_rho, f), TS_WORK_COLUMN("x0", &w->x0, f),
        TS_WORK_COLUMN("y0", &w->y0, f), TS_WORK_COLUMN("z0", &w->z0, f),
        TS_WORK_COLUMN("pos4", &w->pos4, 4 * f), TS_WORK_COLUMN("vel4", &w->vel4, 4 * f),
        TS_WORK_COLUMN("nbr", &w->nbr, NEIGHBOUR_STRIDE * sizeof *w->nbr),
        TS_WORK_COLUMN("nbr_n", &w->nbr_n, 1), TS_WORK_COLUMN("vstart", &w->vstart, sizeof *w->vstart),
        TS_WORK_COLUMN("keep", &w->keep, 1),
    };
    const ts_particle_column rigid_columns[] = {
        TS_WORK_COLUMN("rx", &w->rx, f), TS_WORK_COLUMN("ry", &w->ry, f), TS_WORK_COLUMN("rz", &w->rz, f),
        TS_WORK_COLUMN("rvx", &w->rvx, f), TS_WORK_COLUMN("rvy", &w->rvy, f), TS_WORK_COLUMN("rvz", &w->rvz, f),
        TS_WORK_COLUMN("rlx", &w->rlx, f), TS_WORK_COLUMN("rly", &w->rly, f), TS_WORK_COLUMN("rlz", &w->rlz, f),
        TS_WORK_COLUMN("rfx", &w->rfx, f), TS_WORK_COLUMN("rfy", &w->rfy, f), TS_WORK_COLUMN("rfz", &w->rfz, f),
        TS_WORK_COLUMN("rbody", &w->rbody, sizeof *w->rbody),
    };
    ts_particles_init(&w->fluid, "water", fluid);
    ts_particles_init(&w->rigid, "water's body particles", rigid);
    ts_status st = ts_particles_register(&w->fluid, fluid_columns, sizeof fluid_columns / sizeof *fluid_columns, err);
    if (st == TS_OK)
        st = ts_particles_register(&w->rigid, rigid_columns, sizeof rigid_columns / sizeof *rigid_columns, err);
    if (st == TS_OK)
        st = ts_particles_reserve(&w->fluid, fluid, err);
    if (st == TS_OK)
        st = ts_particles_reserve(&w->rigid, rigid, err);
    w->rigid.n = st == TS_OK ? rigid : 0;
    return st;
}

static ts_status add_collider(ts_water *w, const ts_water_object *o, ts_error *err)
{
    collider_entry *e = &w->colliders[w->n_colliders];
    ts_status st = ts_collider_from_mesh(&e->c, o->name, o->vertices, o->vertex_count, o->triangles,
                                         o->triangle_count, 0.5 * w->spacing, 2.0 + w->h / (0.5 * w->spacing),
                                         err);
    if (st != TS_OK)
        return st;
    e->m.rows = o->motion;
    e->m.frames = o->motion_frames;
    w->n_colliders++;
    return TS_OK;
}

static ts_status add_body(ts_water *w, const ts_water_object *o, point_list *pts, ts_error *err)
{
    body *b = &w->bodies[w->n_bodies];
    snprintf(b->name, sizeof b->name, "%s", o->name);
    if (!(o->density > 0.0) || !isfinite(o->density))
        return ts_fail(err, TS_ERR_INVALID, "rigid body '%s': density must be above 0 kg/m³ (got %g)", o->name,
                       o->density);
    ts_mass_properties mp;
    ts_status st = ts_mesh_mass_properties(o->vertices, o->vertex_count, o->triangles, o->triangle_count, o->name,
                                           &mp, err);
    if (st == TS_OK)
        st = ts_rigid_init(&b->rb, &mp, o->density, o->name, err);
    if (st == TS_OK)
        st = ts_collider_from_mesh(&b->shape, o->name, o->vertices, o->vertex_count, o->triangles, o->triangle_count,
                                   0.25 * w->spacing, 2.0 + w->r_contact / (0.25 * w->spacing), err);
    b->centroid0 = mp.centroid;
    if (st != TS_OK)
        return st;
    ts_rigid_set_velocity(&b->rb, ts_v3(o->velocity[0], o->velocity[1], o->velocity[2]),
                          ts_v3(o->angular_velocity[0], o->angular_velocity[1], o->angular_velocity[2]));
    size_t before = pts->n;
    pts->max_depth = w->h;
    if ((st = fill_lattice(o, w->spacing, 0.5 * w->spacing, point_list_add, pts, err)) != TS_OK)
        return st;
    if (pts->n == before && !point_list_add(pts, (float)mp.centroid.x, (float)mp.centroid.y, (float)mp.centroid.z,
                                            0.0f))
        return ts_fail(err, TS_ERR_NOMEM, "water: out of memory sampling '%s'", o->name);
    b->first = before;
    b->count = pts->n - before;
    b->origin_offset = ts_v3_sub(ts_v3(o->origin[0], o->origin[1], o->origin[2]), mp.centroid);
    b->rotation0 = ts_quat_normalize((ts_quat){o->rotation[0], o->rotation[1], o->rotation[2], o->rotation[3]});
    b->radius = 0.0;
    for (size_t i = before; i < pts->n; i++) {
        double r = ts_v3_length(ts_v3_sub(ts_v3(pts->c[0][i], pts->c[1][i], pts->c[2][i]), mp.centroid));
        if (r > b->radius)
            b->radius = r;
    }
    w->n_bodies++;
    return TS_OK;
}

static ts_status add_inflow(ts_water *w, const ts_water_object *o, ts_error *err)
{
    inflow *f = &w->inflows[w->n_inflows];
    snprintf(f->name, sizeof f->name, "%s", o->name);
    point_list pts = {0};
    ts_status st = fill_lattice(o, w->spacing, 0.5 * w->spacing, point_list_add, &pts, err);
    if (st != TS_OK) {
        point_list_free(&pts);
        return st;
    }
    f->sx = pts.c[0];
    f->sy = pts.c[1];
    f->sz = pts.c[2];
    for (int a = 3; a < 6; a++)
        free(pts.c[a]);
    f->n = pts.n;
    f->m.rows = o->motion;
    f->m.frames = o->motion_frames;
    for (int a = 0; a < 3; a++)
        f->v[a] = (float)o->velocity[a];
    f->start = o->emit_start;
    f->end = o->emit_end;
    w->n_inflows++;
    if (f->n == 0)
        return ts_fail(err, TS_ERR_INVALID, "inflow '%s' is thinner than the particle spacing (%g m); make it "
                       "larger or the particles smaller", o->name, w->spacing);
    return TS_OK;
}

/* Upper bound of the particles an inflow can emit over its frames. */
static double inflow_budget(const ts_water *w, const inflow *f)
{
    double speed = sqrt(f->v[0] * f->v[0] + f->v[1] * f->v[1] + f->v[2] * f->v[2]);
    int frames = f->end - f->start + 1;
    if (frames <= 0)
        return 0.0;
    double layers = speed * frames * w->frame_dt / w->spacing + 1.0;
    return (double)f->n * layers * 1.2; /* 20% slack for refilling behind moving particles */
}

typedef struct fluid_fill {
    const ts_water *w;
    point_list *pts;
    const point_list *rigid;
    ts_grid rigid_grid;
} fluid_fill;

static int keep_fluid_point(void *user, float x, float y, float z, float phi)
{
    fluid_fill *f = user;
    const float *d = f->w->domain;
    if (x < d[0] || x > d[3] || y < d[1] || y > d[4] || z < d[2] || z > d[5])
        return 1; /* outside the domain: it would be removed at once */
    if (inside_solid(f->w, x, y, z, f->rigid, &f->rigid_grid))
        return 1;
    return point_list_add(f->pts, x, y, z, phi);
}

static ts_status count_roles(const ts_water_object *objects, size_t n, size_t counts[4], ts_error *err)
{
    counts[0] = counts[1] = counts[2] = counts[3] = 0;
    for (size_t i = 0; i < n; i++) {
        const ts_water_object *o = &objects[i];
        if (o->role < TS_WATER_FLUID || o->role > TS_WATER_OBSTACLE)
            return ts_fail(err, TS_ERR_INVALID, "object '%s' has an unknown water role %d", o->name, (int)o->role);
        ts_status st = ts_mesh_check_closed(o->vertices, o->vertex_count, o->triangles, o->triangle_count, o->name,
                                            err);
        if (st != TS_OK)
            return st;
        if (o->motion && o->motion_frames < 1)
            return ts_fail(err, TS_ERR_INVALID, "object '%s': motion has no frames", o->name);
        counts[o->role]++;
    }
    return TS_OK;
}

/* Fluid objects filled on the lattice, leaving out what is inside solids;
 * each particle starts with its object's initial velocity. */
static ts_status place_fluid(const ts_water *w, const ts_water_object *objects, size_t count, point_list *fluid,
                             const point_list *rigid, ts_error *err)
{
    fluid_fill ff;
    ff.w = w, ff.pts = fluid, ff.rigid = rigid;
    ts_grid_init(&ff.rigid_grid);
    ts_status st = TS_OK;
    if (rigid->n > 0)
        st = ts_grid_build(&ff.rigid_grid, rigid->c[0], rigid->c[1], rigid->c[2], rigid->n, w->spacing, NULL, err);
    for (size_t i = 0; i < count && st == TS_OK; i++) {
        if (objects[i].role != TS_WATER_FLUID)
            continue;
        for (int a = 0; a < 3; a++)
            fluid->velocity[a] = (float)objects[i].velocity[a];
        st = fill_lattice(&objects[i], w->spacing, 0.5 * w->spacing, keep_fluid_point, &ff, err);
    }
    ts_grid_free(&ff.rigid_grid);
    return st;
}

ts_status ts_water_create(ts_water **out, const ts_water_params *p, const ts_water_object *objects,
                          size_t object_count, ts_error *err)
{
    *out = NULL;
    ts_status st = check_params(p, err);
    size_t counts[4];
    if (st == TS_OK)
        st = count_roles(objects, object_count, counts, err);
    if (st != TS_OK)
        return st;
    ts_water *w = calloc(1, sizeof *w);
    if (!w)
        return ts_fail(err, TS_ERR_NOMEM, "water: out of memory");
    w->p = *p;
    w->spacing = (float)(2.0 * p->particle_radius);
    w->h = 2.0f * w->spacing;          /* about 33 neighbours in radius */
    w->skin = SKIN_MIN * w->h;
    w->lists_stale = 1;
    w->r_contact = 0.5f * w->spacing;  /* how close a particle may come to a wall */
    ts_kernels_init(&w->k, w->h);
    w->eos = (ts_sph_eos_params){p->solver == TS_WATER_MULLER ? TS_SPH_IDEAL : TS_SPH_TAIT, p->rest_density,
                                 p->speed_of_sound, p->gas_stiffness};
    w->mass = (float)ts_sph_lattice_mass(w->h, w->spacing, p->rest_density);
    ts_sph_wall_init(&w->wall, &w->k, w->spacing, w->mass);
    for (int a = 0; a < 3; a++) {
        w->domain[a] = (float)p->domain_min[a];
        w->domain[a + 3] = (float)p->domain_max[a];
    }
    w->frame = p->frame_start;
    w->frame_dt = 1.0 / p->fps;
    ts_grid_init(&w->grid);
    ts_grid_init(&w->rgrid);
    w->colliders = calloc(counts[TS_WATER_OBSTACLE] + 1, sizeof *w->colliders);
    w->bodies = calloc(counts[TS_WATER_RIGID] + 1, sizeof *w->bodies);
    w->inflows = calloc(counts[TS_WATER_INFLOW] + 1, sizeof *w->inflows);
    point_list fluid = {0}, rigid = {0};
    if (!w->colliders || !w->bodies || !w->inflows)
        st = ts_fail(err, TS_ERR_NOMEM, "water: out of memory");
    for (size_t i = 0; i < object_count && st == TS_OK; i++) {
        const ts_water_object *o = &objects[i];
        if (o->role == TS_WATER_OBSTACLE)
            st = add_collider(w, o, err);
        else if (o->role == TS_WATER_RIGID)
            st = add_body(w, o, &rigid, err);
        else if (o->role == TS_WATER_INFLOW)
            st = add_inflow(w, o, err);
    }
    if (st == TS_OK)
        st = place_fluid(w, objects, object_count, &fluid, &rigid, err);
    double budget = (double)fluid.n;
    for (size_t i = 0; i < w->n_inflows; i++)
        budget += inflow_budget(w, &w->inflows[i]);
    if (st == TS_OK && budget + rigid.n > (double)p->max_particles)
        st = ts_fail(err, TS_ERR_NOMEM, "water: this scene needs up to %.0f particles, above max_particles = %ld; "
                     "raise max_particles or the particle radius", budget + rigid.n, p->max_particles);
    if (st == TS_OK && budget == 0.0)
        st = ts_fail(err, TS_ERR_INVALID, "water: no liquid inside the domain: give a closed mesh inside the "
                     "Domain the Fluid or Inflow role (liquid inside obstacles or bodies is left out)");
    if (st == TS_OK) {
        st = alloc_particles(w, (size_t)budget, rigid.n, err);
    }
    if (st == TS_OK) {
        float *dst[6] = {w->x, w->y, w->z, w->vx, w->vy, w->vz};
        for (int a = 0; a < 6; a++)
            memcpy(dst[a], fluid.c[a], fluid.n * sizeof(float));
        for (w->fluid.n = 0; w->fluid.n < fluid.n; w->fluid.n++)
            w->id[w->fluid.n] = w->next_id++;
        for (size_t b = 0; b < w->n_bodies; b++) {
            const body *bd = &w->bodies[b];
            for (size_t i = bd->first; i < bd->first + bd->count; i++) {
                /* body frame = world frame at rest, origin at the centroid */
                w->rlx[i] = (float)(rigid.c[0][i] - bd->rb.x.x);
                w->rly[i] = (float)(rigid.c[1][i] - bd->rb.x.y);
                w->rlz[i] = (float)(rigid.c[2][i] - bd->rb.x.z);
                w->rbody[i] = (uint32_t)b;
            }
        }
    }
    point_list_free(&fluid);
    point_list_free(&rigid);
    if (st != TS_OK) {
        ts_water_destroy(w);
        return st;
    }
    *out = w;
    return TS_OK;
}

void ts_water_destroy(ts_water *w)
{
    if (!w)
        return;
    ts_particles_free(&w->fluid);
    ts_particles_free(&w->rigid);
    for (int b = 0; b < w->n_blocks; b++)
        free(w->blocks[b].entries);
    free(w->blocks);
    free(w->vlist);
    for (size_t c = 0; c < w->n_colliders; c++)
        ts_collider_free(&w->colliders[c].c);
    for (size_t b = 0; b < w->n_bodies; b++)
        ts_collider_free(&w->bodies[b].shape);
    for (size_t i = 0; i < w->n_inflows; i++) {
        free(w->inflows[i].sx);
        free(w->inflows[i].sy);
        free(w->inflows[i].sz);
    }
    free(w->colliders);
    free(w->bodies);
    free(w->inflows);
    ts_grid_free(&w->grid);
    ts_grid_free(&w->rgrid);
    free(w);
}

/* ------------------------------------------------------------------- walls */

/* The walls near a point, combined as overlapping half-spaces: each wall a
 * holds a share f_a = Z_a / rho0 of the kernel's mass, and the share outside
 * every wall at once is 1 - prod_a (1 - f_a) (exact for a separable kernel),
 * so corners and edges are not counted twice. The gradient follows by the
 * product rule. */
typedef struct wall_sum {
    float inside;        /* prod_a (1 - f_a) */
    float g[3];          /* sum_a G_a n_a prod_{b != a} (1 - f_b) */
} wall_sum;

static void add_wall(const ts_water *w, float phi, float nx, float ny, float nz, wall_sum *s)
{
    float z, g;
    ts_sph_wall_eval(&w->wall, phi, &z, &g);
    float f = z / (float)w->p.rest_density;
    if (f > 1.0f)
        f = 1.0f;
    s->g[0] = s->g[0] * (1.0f - f) + g * nx * s->inside;
    s->g[1] = s->g[1] * (1.0f - f) + g * ny * s->inside;
    s->g[2] = s->g[2] * (1.0f - f) + g * nz * s->inside;
    s->inside *= 1.0f - f;
}

/* Wall weight sums of all colliders and the domain sides at a point. */
static void wall_terms(const ts_water *w, float x, float y, float z, wall_sum *s)
{
    s->inside = 1.0f;
    s->g[0] = s->g[1] = s->g[2] = 0.0f;
    for (size_t c = 0; c < w->n_colliders; c++) {
        ts_collider_hit hit;
        if (ts_collider_query(&w->colliders[c].c, w->s, ts_v3(x, y, z), &hit) && hit.distance < w->h)
            add_wall(w, hit.distance, (float)hit.normal.x, (float)hit.normal.y, (float)hit.normal.z, s);
    }
    if (w->p.domain_walls) {
        const float p[3] = {x, y, z};
        for (int a = 0; a < 3; a++) {
            float n[3] = {0, 0, 0};
            n[a] = 1.0f;
            if (p[a] - w->domain[a] < w->h)
                add_wall(w, p[a] - w->domain[a], n[0], n[1], n[2], s);
            n[a] = -1.0f;
            if (w->domain[a + 3] - p[a] < w->h)
                add_wall(w, w->domain[a + 3] - p[a], n[0], n[1], n[2], s);
        }
    }
}

/* ------------------------------------------------------------------ inflow */

static int site_is_free(const ts_water *w, float x, float y, float z)
{
    const float min2 = 0.81f * w->spacing * w->spacing;
    ts_neighbor_ranges r;
    ts_grid_ranges_within(&w->grid, x, y, z, w->h + w->skin, &r); /* the grid is as old as the lists */
    for (int q = 0; q < r.n; q++)
        for (uint32_t j = r.begin[q]; j < r.end[q]; j++) {
            float dx = x - w->x[j], dy = y - w->y[j], dz = z - w->z[j];
            if (dx * dx + dy * dy + dz * dz < min2)
                return 0;
        }
    return 1;
}

/* Fill every free emission site of the inflows active in this frame (sites
 * are a lattice, so new particles never crowd each other). Returns how many. */
static size_t emit(ts_water *w)
{
    size_t before = w->fluid.n;
    int next = w->frame + 1;
    for (size_t f = 0; f < w->n_inflows; f++) {
        const inflow *in = &w->inflows[f];
        if (next < in->start || next > in->end)
            continue;
        ts_transform t0 = ts_motion_at(&in->m, w->frame - w->p.frame_start);
        ts_transform t1 = ts_motion_at(&in->m, next - w->p.frame_start);
        ts_transform t = {ts_v3_add(ts_v3_scale(t0.translation, 1.0 - w->s), ts_v3_scale(t1.translation, w->s)),
                          ts_quat_slerp(t0.rotation, t1.rotation, w->s)};
        ts_vec3 v = ts_quat_rotate(t.rotation, ts_v3(in->v[0], in->v[1], in->v[2]));
        for (size_t i = 0; i < in->n && w->fluid.n < w->fluid.cap; i++) {
            ts_vec3 p = ts_transform_apply(t, ts_v3(in->sx[i], in->sy[i], in->sz[i]));
            if (!site_is_free(w, (float)p.x, (float)p.y, (float)p.z))
                continue;
            size_t k = w->fluid.n++;
            w->x[k] = (float)p.x, w->y[k] = (float)p.y, w->z[k] = (float)p.z;
            w->vx[k] = (float)v.x, w->vy[k] = (float)v.y, w->vz[k] = (float)v.z;
            w->id[k] = w->next_id++;
        }
    }
    return w->fluid.n - before;
}

/* --------------------------------------------------------------- the grid */

/* Rigid particles take their body's pose. */
static void place_rigid_particles(ts_water *w)
{
    for (size_t b = 0; b < w->n_bodies; b++) {
        const body *bd = &w->bodies[b];
        ts_mat3 R = ts_quat_to_mat3(bd->rb.q);
        ts_vec3 v = ts_rigid_velocity(&bd->rb), omega = ts_rigid_angular_velocity(&bd->rb);
        for (size_t i = bd->first; i < bd->first + bd->count; i++) {
            ts_vec3 r = ts_m3_mul_v3(R, ts_v3(w->rlx[i], w->rly[i], w->rlz[i]));
            ts_vec3 u = ts_v3_add(v, ts_v3_cross(omega, r));
            w->rx[i] = (float)(bd->rb.x.x + r.x), w->ry[i] = (float)(bd->rb.x.y + r.y), w->rz[i] = (float)(bd->rb.x.z + r.z);
            w->rvx[i] = (float)u.x, w->rvy[i] = (float)u.y, w->rvz[i] = (float)u.z;
        }
    }
}

static ts_status reserve_blocks(ts_water *w, int threads, ts_error *err)
{
    if (threads <= w->n_blocks)
        return TS_OK;
    list_block *b = realloc(w->blocks, (size_t)threads * sizeof *b);
    if (!b)
        return ts_fail(err, TS_ERR_NOMEM, "water: out of memory for the Verlet list build");
    memset(b + w->n_blocks, 0, (size_t)(threads - w->n_blocks) * sizeof *b);
    w->blocks = b;
    w->n_blocks = threads;
    return TS_OK;
}

/* The Verlet lists of particles [lo, hi) - the fluid within h + skin of
 * each, itself too, in grid order - appended to block b, their lengths to
 * vstart[i + 1]; the positions they were built at kept. 0 when out of memory. */
static int fill_list_block(ts_water *w, const ts_sph_loops *loops, size_t lo, size_t hi, list_block *b)
{
    const float reach = w->h + w->skin;
    b->used = 0;
    for (size_t i = lo; i < hi; i++) {
        const float xi = w->x[i], yi = w->y[i], zi = w->z[i];
        ts_neighbor_ranges r;
        ts_grid_ranges_within(&w->grid, xi, yi, zi, reach, &r);
        size_t most = b->used + TS_SPH_LIST_SLACK;
        for (int q = 0; q < r.n; q++)
            most += r.end[q] - r.begin[q];
        if (most > b->cap && ts_grow((void **)&b->entries, &b->cap, most, sizeof *b->entries) != 0)
            return 0;
        uint32_t count = loops->within_ranges(w->x, w->y, w->z, &r, xi, yi, zi, reach * reach, b->entries + b->used);
        w->vstart[i + 1] = count;
        b->used += count;
        w->x0[i] = xi, w->y0[i] = yi, w->z0[i] = zi;
    }
    return 1;
}

/* Sort the fluid into cell order, grid it with cells of (h + skin) / 2 and
 * build every particle's Verlet list: each thread lists its block of
 * particles into a buffer of its own in one pass; the blocks are then copied
 * end to end (the lists do not depend on the number of threads). */
static ts_status build_lists(ts_water *w, ts_error *err)
{
    /* the distance of VERLET_STEPS steps of the CFL limit at the top speed, twice (the lists serve
     * until a particle has moved half the skin); from v_max alone, which a restore recomputes, so a
     * resumed bake builds the same lists */
    double c = ts_sph_sound_speed(&w->eos), step = w->p.cfl_number * w->h / (c + w->v_max + 1e-9);
    double skin = 2.0 * VERLET_STEPS * w->v_max * step / w->h;
    w->skin = w->h * (float)(skin < SKIN_MIN ? SKIN_MIN : (skin > SKIN_MAX ? SKIN_MAX : skin));
    const int threads = omp_get_max_threads();
    ts_status st = reserve_blocks(w, threads, err);
    if (st == TS_OK)
        st = ts_grid_build(&w->grid, w->x, w->y, w->z, w->fluid.n, 0.5f * (w->h + w->skin), w->domain, err);
    if (st != TS_OK)
        return st;
    if ((st = ts_particles_permute(&w->fluid, w->grid.sorted, err)) != TS_OK)
        return st;
    /* from here on the grid's cell ranges are index ranges of the sorted arrays */
    const ts_sph_loops *loops = ts_sph_loops_select();
    int out_of_memory = 0;
    size_t total = 0;
    w->vstart[0] = 0;
    #pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), team = omp_get_num_threads();
        const size_t lo = w->fluid.n * (size_t)t / (size_t)team, hi = w->fluid.n * (size_t)(t + 1) / (size_t)team;
        list_block *b = &w->blocks[t];
        if (!fill_list_block(w, loops, lo, hi, b)) {
            #pragma omp atomic write
            out_of_memory = 1;
        }
        #pragma omp barrier
        #pragma omp single
        {
            for (int k = 0; k < team; k++) {
                w->blocks[k].offset = total;
                total += w->blocks[k].used;
            }
            if (total > UINT32_MAX || ts_grow((void **)&w->vlist, &w->vlist_cap, total, sizeof *w->vlist) != 0)
                out_of_memory = 1;
        }
        if (!out_of_memory) {
            memcpy(w->vlist + b->offset, b->entries, b->used * sizeof *b->entries);
            size_t end = b->offset;
            for (size_t i = lo; i < hi; i++) {
                end += w->vstart[i + 1];
                w->vstart[i + 1] = (uint32_t)end;
            }
        }
    }
    if (total > UINT32_MAX)
        return ts_fail(err, TS_ERR_NOMEM, "water: %zu particles need more than 4G Verlet list entries; "
                       "use a larger particle radius", w->fluid.n);
    if (out_of_memory)
        return ts_fail(err, TS_ERR_NOMEM, "water: out of memory for the Verlet lists of %zu particles", w->fluid.n);
    w->lists_stale = 0;
    return TS_OK;
}

/* The Verlet lists when stale, and the rigid particles posed and gridded. */
static ts_status build_grids(ts_water *w, ts_error *err)
{
    ts_status st = w->lists_stale ? build_lists(w, err) : TS_OK;
    if (st != TS_OK || w->rigid.n == 0)
        return st;
    place_rigid_particles(w);
    st = ts_grid_build(&w->rgrid, w->rx, w->ry, w->rz, w->rigid.n, w->h, NULL, err);
    float lo[3] = {w->rx[0], w->ry[0], w->rz[0]}, hi[3] = {w->rx[0], w->ry[0], w->rz[0]};
    for (size_t i = 1; i < w->rigid.n; i++) {
        const float p[3] = {w->rx[i], w->ry[i], w->rz[i]};
        for (int a = 0; a < 3; a++) {
            if (p[a] < lo[a]) lo[a] = p[a];
            if (p[a] > hi[a]) hi[a] = p[a];
        }
    }
    for (int a = 0; a < 3; a++)
        w->rbox[a] = lo[a] - w->h, w->rbox[a + 3] = hi[a] + w->h;
    return st;
}

static inline int near_rigid(const ts_water *w, float x, float y, float z)
{
    return w->rigid.n > 0 && x >= w->rbox[0] && x <= w->rbox[3] && y >= w->rbox[1] && y <= w->rbox[4] &&
           z >= w->rbox[2] && z <= w->rbox[5];
}

/* --------------------------------------------------------------- density */

static ts_sph_fluid fluid_arrays(const ts_water *w)
{
    ts_sph_fluid f = {w->x, w->y, w->z, w->vx, w->vy, w->vz, w->rho, w->pr, w->P, w->inv_rho, w->pos4, w->vel4};
    return f;
}

/* The packed records (sph_loops.h): positions before the density pass, the
 * rest after it. */
static void pack_positions(ts_water *w)
{
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < w->fluid.n; i++)
        w->pos4[4 * i] = w->x[i], w->pos4[4 * i + 1] = w->y[i], w->pos4[4 * i + 2] = w->z[i];
}

static void pack_density_and_velocity(ts_water *w)
{
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < w->fluid.n; i++) {
        w->pos4[4 * i + 3] = w->rho[i];
        w->vel4[4 * i] = w->vx[i], w->vel4[4 * i + 1] = w->vy[i], w->vel4[4 * i + 2] = w->vz[i];
        w->vel4[4 * i + 3] = w->P[i];
    }
}

/* Density by eq. 3.5; the fluid neighbours found here (r < h) are kept for
 * the force pass, which then skips the search (up to NEIGHBOUR_LIST each;
 * a particle with more has its whole Verlet list walked there). */
static void compute_density(ts_water *w)
{
    const float h2 = w->h * w->h, m_poly6 = (float)(w->mass * w->k.poly6), rho0 = (float)w->p.rest_density;
    const ts_grid *rg = &w->rgrid;
    const ts_sph_fluid fluid = fluid_arrays(w);
    const ts_sph_loops *loops = ts_sph_loops_select();
    pack_positions(w);
    #pragma omp parallel for schedule(dynamic, 256) /* as in compute_forces */
    for (size_t i = 0; i < w->fluid.n; i++) {
        const float xi = w->x[i], yi = w->y[i], zi = w->z[i];
        int count;
        float sum = loops->density_sum(&fluid, w->vlist + w->vstart[i], w->vstart[i + 1] - w->vstart[i], xi, yi, zi,
                                       h2, w->nbr + i * NEIGHBOUR_STRIDE, NEIGHBOUR_LIST, &count);
        w->nbr_n[i] = count > NEIGHBOUR_LIST ? NEIGHBOUR_OVERFLOW : (uint8_t)count;
        if (near_rigid(w, xi, yi, zi)) { /* rigid particles count as liquid of the same mass, eq. 3.33 */
            ts_neighbor_ranges r;
            ts_grid_neighbor_ranges(rg, xi, yi, zi, &r);
            for (int q = 0; q < r.n; q++)
                for (uint32_t k = r.begin[q]; k < r.end[q]; k++) {
                    uint32_t j = rg->sorted[k];
                    float dx = xi - w->rx[j], dy = yi - w->ry[j], dz = zi - w->rz[j];
                    float d = h2 - (dx * dx + dy * dy + dz * dz);
                    if (d > 0.0f)
                        sum += d * d * d;
                }
        }
        wall_sum ws;
        wall_terms(w, xi, yi, zi, &ws);
        float rho = m_poly6 * sum + rho0 * (1.0f - ws.inside);          /* eq. 3.5 plus the walls */
        float p = ts_sph_pressure(&w->eos, rho);
        w->rho[i] = rho;
        w->pr[i] = p;
        w->inv_rho[i] = 1.0f / rho;
        w->P[i] = p / (rho * rho);
        w->wgx[i] = ws.g[0], w->wgy[i] = ws.g[1], w->wgz[i] = ws.g[2];
    }
    pack_density_and_velocity(w);
}

/* ------------------------------------------------------------------ forces */

static ts_sph_pair_consts make_pair_consts(const ts_water *w)
{
    ts_sph_pair_consts c;
    double alpha_c_h = uses_muller(w) ? 0.0 : w->p.artificial_viscosity * ts_sph_sound_speed(&w->eos) * w->h;
    ts_sph_pair_consts_init(&c, w->h, w->mass, w->k.spiky_grad, w->k.visc_lap, ts_poly6_grad_coeff(&w->k),
                            w->p.viscosity, alpha_c_h, w->p.surface_tension, uses_muller(w));
    return c;
}

/* The pair law between fluid particle i and a rigid particle, added to a. */
static inline void pair_acceleration(const ts_sph_pair_consts *c, float dx, float dy, float dz, float r2, float dvx,
                                     float dvy, float dvz, ts_sph_side si, ts_sph_side sj, float a[3])
{
    ts_sph_pair_terms t = ts_sph_pair_law(c, c->muller, r2, dvx * dx + dvy * dy + dvz * dz, si, sj);
    a[0] += t.s * dx - t.visc * dvx;
    a[1] += t.s * dy - t.visc * dvy;
    a[2] += t.s * dz - t.visc * dvz;
}

#define CROWD_BATCH 128

/* All fluid neighbours of particle i in its Verlet list (a crowd beyond the
 * neighbour list), in batches. */
static void verlet_neighbour_forces(const ts_water *w, const ts_sph_loops *loops, const ts_sph_pair_consts *c,
                                    const ts_sph_fluid *fluid, size_t i, ts_sph_pair_sums *sums)
{
    const float xi = w->x[i], yi = w->y[i], zi = w->z[i], h2 = c->h2;
    uint32_t batch[CROWD_BATCH];
    int count = 0;
    for (uint32_t k = w->vstart[i]; k < w->vstart[i + 1]; k++) {
        uint32_t j = w->vlist[k];
        float dx = xi - w->x[j], dy = yi - w->y[j], dz = zi - w->z[j];
        float r2 = dx * dx + dy * dy + dz * dz;
        if (r2 < h2 && r2 > TS_SPH_SAME_POINT) {
            batch[count++] = j;
            if (count == CROWD_BATCH) {
                loops->pair_forces(c, fluid, i, batch, count, sums);
                count = 0;
            }
        }
    }
    loops->pair_forces(c, fluid, i, batch, count, sums);
}

static void compute_forces(ts_water *w)
{
    const ts_sph_pair_consts c = make_pair_consts(w);
    const ts_sph_fluid fluid = fluid_arrays(w);
    const ts_sph_loops *loops = ts_sph_loops_select();
    const ts_grid *rg = &w->rgrid;
    const float gx = (float)w->p.gravity[0], gy = (float)w->p.gravity[1], gz = (float)w->p.gravity[2];
    const float normal_threshold = 0.1f / c.h;
    const int muller = uses_muller(w);
    const float wall_scale = muller ? 1.0f : 2.0f;
    double a2_max = 0.0;
    /* dynamic: the work per particle varies (neighbour count, bodies, walls); each particle's sums are its own */
    #pragma omp parallel for schedule(dynamic, 256) reduction(max : a2_max)
    for (size_t i = 0; i < w->fluid.n; i++) {
        const float xi = w->x[i], yi = w->y[i], zi = w->z[i];
        const float rho_i = w->rho[i], p_i = w->pr[i];
        ts_sph_pair_sums sums = {{0, 0, 0}, {0, 0, 0}, 0.0f};
        if (w->nbr_n[i] != NEIGHBOUR_OVERFLOW)
            loops->pair_forces(&c, &fluid, i, w->nbr + i * NEIGHBOUR_STRIDE, w->nbr_n[i], &sums);
        else /* a crowd beyond the list: the whole Verlet list */
            verlet_neighbour_forces(w, loops, &c, &fluid, i, &sums);
        float *a = sums.a, *n = sums.n, lap = sums.lap;
        ts_neighbor_ranges r;
        if (near_rigid(w, xi, yi, zi)) { /* mirrored pressure, p_b = p_i, rho_b = rho_i; eq. 3.35 */
            const ts_sph_side mirror = ts_sph_side_of(rho_i, muller && p_i < 0.0f ? 0.0f : p_i);
            ts_grid_neighbor_ranges(rg, xi, yi, zi, &r);
            for (int q = 0; q < r.n; q++)
                for (uint32_t k = r.begin[q]; k < r.end[q]; k++) {
                    uint32_t j = rg->sorted[k];
                    float dx = xi - w->rx[j], dy = yi - w->ry[j], dz = zi - w->rz[j];
                    float r2 = dx * dx + dy * dy + dz * dz;
                    if (r2 >= c.h2 || r2 <= TS_SPH_SAME_POINT)
                        continue;
                    pair_acceleration(&c, dx, dy, dz, r2, w->vx[i] - w->rvx[j], w->vy[i] - w->rvy[j],
                                      w->vz[i] - w->rvz[j], mirror, mirror, a);
                }
        }
        float pw = wall_scale * w->P[i];                                /* walls: mirrored pressure */
        a[0] += pw * w->wgx[i], a[1] += pw * w->wgy[i], a[2] += pw * w->wgz[i];
        float n_len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (c.sigma > 0.0f && n_len > normal_threshold) {               /* eq. 3.23 */
            float f = -c.sigma * lap / (n_len * rho_i);
            a[0] += f * n[0], a[1] += f * n[1], a[2] += f * n[2];
        }
        a[0] += gx, a[1] += gy, a[2] += gz;
        w->ax[i] = a[0], w->ay[i] = a[1], w->az[i] = a[2];
        double a2 = (double)a[0] * a[0] + (double)a[1] * a[1] + (double)a[2] * a[2];
        if (a2 > a2_max)
            a2_max = a2;
    }
    w->a_max = sqrt(a2_max);
}

/* Reaction on each rigid particle: minus the mass-weighted acceleration its
 * fluid neighbours got from it, computed by the same pair function. */
static void compute_rigid_reactions(ts_water *w)
{
    const ts_sph_pair_consts c = make_pair_consts(w);
    const ts_grid *g = &w->grid;
    #pragma omp parallel for schedule(static)
    for (size_t b = 0; b < w->rigid.n; b++) {
        const float xb = w->rx[b], yb = w->ry[b], zb = w->rz[b];
        float f[3] = {0, 0, 0};
        ts_neighbor_ranges r;
        ts_grid_ranges_within(g, xb, yb, zb, c.h + w->skin, &r); /* the grid is as old as the lists */
        for (int q = 0; q < r.n; q++)
            for (uint32_t j = r.begin[q]; j < r.end[q]; j++) {
                float dx = w->x[j] - xb, dy = w->y[j] - yb, dz = w->z[j] - zb;
                float r2 = dx * dx + dy * dy + dz * dz;
                if (r2 >= c.h2 || r2 <= TS_SPH_SAME_POINT)
                    continue;
                ts_sph_side mirror = ts_sph_side_of(w->rho[j], uses_muller(w) && w->pr[j] < 0.0f ? 0.0f : w->pr[j]);
                float a[3] = {0, 0, 0};
                pair_acceleration(&c, dx, dy, dz, r2, w->vx[j] - w->rvx[b], w->vy[j] - w->rvy[b],
                                  w->vz[j] - w->rvz[b], mirror, mirror, a);
                f[0] -= c.mass * a[0], f[1] -= c.mass * a[1], f[2] -= c.mass * a[2]; /* action = -reaction */
            }
        w->rfx[b] = f[0], w->rfy[b] = f[1], w->rfz[b] = f[2];
    }
}

/* -------------------------------------------------------------- integration */

/* Keep a fluid particle out of a rigid body (the pressure of the body's
 * particles does this almost always; this catches particles squeezed through
 * the gaps of its sampling): distance from the body's rest-pose field. The
 * small momentum of this correction is not given back to the body. */
static void project_out_of_body(const ts_water *w, const body *bd, size_t i)
{
    ts_vec3 p = ts_v3(w->x[i], w->y[i], w->z[i]);
    ts_vec3 rel = ts_v3_sub(p, bd->rb.x);
    if (ts_v3_length(rel) > bd->radius + w->spacing)
        return;
    ts_quat inv = ts_quat_conjugate(bd->rb.q);
    ts_collider_hit hit;
    if (!ts_collider_query(&bd->shape, 0.0, ts_v3_add(bd->centroid0, ts_quat_rotate(inv, rel)), &hit) ||
        hit.distance >= w->r_contact)
        return;
    ts_vec3 n = ts_quat_rotate(bd->rb.q, hit.normal);
    double push = w->r_contact - hit.distance;
    w->x[i] += (float)(push * n.x), w->y[i] += (float)(push * n.y), w->z[i] += (float)(push * n.z);
    ts_vec3 u = ts_rigid_point_velocity(&bd->rb, p);
    ts_vec3 v = ts_v3(w->vx[i], w->vy[i], w->vz[i]);
    double vn = ts_v3_dot(ts_v3_sub(v, u), n);
    if (vn < 0.0) {
        v = ts_v3_sub(v, ts_v3_scale(n, vn));
        w->vx[i] = (float)v.x, w->vy[i] = (float)v.y, w->vz[i] = (float)v.z;
    }
}

/* Keep a fluid particle out of every wall: push it back to r_contact and
 * take away its approaching velocity relative to the wall, and a share of
 * its sliding velocity (wall_friction). */
static void project_out_of_walls(const ts_water *w, size_t i)
{
    const float rc = w->r_contact, keep = 1.0f - (float)w->p.wall_friction;
    for (size_t c = 0; c < w->n_colliders; c++) {
        ts_collider_hit hit;
        ts_vec3 p = ts_v3(w->x[i], w->y[i], w->z[i]);
        if (!ts_collider_query(&w->colliders[c].c, w->s, p, &hit) || hit.distance >= rc)
            continue;
        float push = rc - hit.distance;
        w->x[i] += push * (float)hit.normal.x, w->y[i] += push * (float)hit.normal.y, w->z[i] += push * (float)hit.normal.z;
        float rvx = w->vx[i] - (float)hit.velocity.x, rvy = w->vy[i] - (float)hit.velocity.y,
              rvz = w->vz[i] - (float)hit.velocity.z;
        float vn = rvx * (float)hit.normal.x + rvy * (float)hit.normal.y + rvz * (float)hit.normal.z;
        float tx = rvx - vn * (float)hit.normal.x, ty = rvy - vn * (float)hit.normal.y, tz = rvz - vn * (float)hit.normal.z;
        float away = vn > 0.0f ? vn : 0.0f; /* an approaching normal speed is taken away, a leaving one kept */
        w->vx[i] = (float)hit.velocity.x + keep * tx + away * (float)hit.normal.x;
        w->vy[i] = (float)hit.velocity.y + keep * ty + away * (float)hit.normal.y;
        w->vz[i] = (float)hit.velocity.z + keep * tz + away * (float)hit.normal.z;
    }
    for (size_t b = 0; b < w->n_bodies; b++)
        project_out_of_body(w, &w->bodies[b], i);
    if (!w->p.domain_walls)
        return;
    float *p[3] = {&w->x[i], &w->y[i], &w->z[i]}, *v[3] = {&w->vx[i], &w->vy[i], &w->vz[i]};
    for (int a = 0; a < 3; a++) {
        int hit = 0;
        if (*p[a] < w->domain[a] + rc) {
            *p[a] = w->domain[a] + rc;
            if (*v[a] < 0.0f) *v[a] = 0.0f;
            hit = 1;
        } else if (*p[a] > w->domain[a + 3] - rc) {
            *p[a] = w->domain[a + 3] - rc;
            if (*v[a] > 0.0f) *v[a] = 0.0f;
            hit = 1;
        }
        if (hit)
            for (int t = 0; t < 3; t++)
                if (t != a)
                    *v[t] *= keep;
    }
}

static void integrate_fluid(ts_water *w, double dt)
{
    const float fdt = (float)dt;
    double v_max = 0.0, moved_max = 0.0;
    #pragma omp parallel for schedule(static) reduction(max : v_max, moved_max)
    for (size_t i = 0; i < w->fluid.n; i++) {
        w->vx[i] += fdt * w->ax[i], w->vy[i] += fdt * w->ay[i], w->vz[i] += fdt * w->az[i]; /* eq. 3.43 */
        w->x[i] += fdt * w->vx[i], w->y[i] += fdt * w->vy[i], w->z[i] += fdt * w->vz[i];   /* eq. 3.42 */
        project_out_of_walls(w, i);
        double v2 = (double)w->vx[i] * w->vx[i] + (double)w->vy[i] * w->vy[i] + (double)w->vz[i] * w->vz[i];
        if (v2 > v_max)
            v_max = v2;
        double mx = w->x[i] - w->x0[i], my = w->y[i] - w->y0[i], mz = w->z[i] - w->z0[i];
        double moved2 = mx * mx + my * my + mz * mz;
        if (moved2 > moved_max)
            moved_max = moved2;
    }
    w->v_max = sqrt(v_max);
    /* two particles each moved half the skin towards each other: the lists may miss a pair */
    if (2.0 * sqrt(moved_max) >= w->skin)
        w->lists_stale = 1;
}

/* Contacts of a body against colliders and the domain sides: the deepest
 * penetrating particle per wall, resolved by an impulse (rigid.h). */
static void body_wall_contacts(ts_water *w, body *bd)
{
    ts_mat3 R = ts_quat_to_mat3(bd->rb.q);
    const float rc = w->r_contact;
    for (size_t c = 0; c <= w->n_colliders; c++) {
        for (int side = 0; side < (c == w->n_colliders ? 6 : 1); side++) {
            if (c == w->n_colliders && !w->p.domain_walls)
                break;
            double deepest = 0.0;
            ts_vec3 point = ts_v3(0, 0, 0), normal = ts_v3(0, 0, 0), wall_v = ts_v3(0, 0, 0);
            for (size_t i = bd->first; i < bd->first + bd->count; i++) {
                ts_vec3 p = ts_v3_add(bd->rb.x, ts_m3_mul_v3(R, ts_v3(w->rlx[i], w->rly[i], w->rlz[i])));
                double depth;
                ts_vec3 n, v = ts_v3(0, 0, 0);
                if (c < w->n_colliders) {
                    ts_collider_hit hit;
                    if (!ts_collider_query(&w->colliders[c].c, w->s, p, &hit))
                        continue;
                    depth = rc - hit.distance, n = hit.normal, v = hit.velocity;
                } else {
                    int a = side / 2;
                    double coord = a == 0 ? p.x : a == 1 ? p.y : p.z;
                    double sign = side % 2 ? -1.0 : 1.0;
                    double phi = side % 2 ? w->domain[a + 3] - coord : coord - w->domain[a];
                    depth = rc - phi;
                    n = ts_v3(a == 0 ? sign : 0, a == 1 ? sign : 0, a == 2 ? sign : 0);
                }
                if (depth > deepest) {
                    deepest = depth, point = p, normal = n, wall_v = v;
                }
            }
            if (deepest > 0.0)
                ts_rigid_resolve_contact(&bd->rb, point, normal, deepest, wall_v, BODY_RESTITUTION, BODY_FRICTION);
        }
    }
}

/* Body against body: the closest pair of their particles closer than the
 * spacing, resolved as a wall contact for each (the other as the wall). */
static void body_body_contact(ts_water *w, body *a, body *b)
{
    double reach = a->radius + b->radius + w->spacing;
    if (ts_v3_length(ts_v3_sub(a->rb.x, b->rb.x)) > reach)
        return;
    ts_mat3 Ra = ts_quat_to_mat3(a->rb.q), Rb = ts_quat_to_mat3(b->rb.q);
    double best = w->spacing;
    ts_vec3 pa = ts_v3(0, 0, 0), pb = ts_v3(0, 0, 0);
    for (size_t i = a->first; i < a->first + a->count; i++) {
        ts_vec3 p = ts_v3_add(a->rb.x, ts_m3_mul_v3(Ra, ts_v3(w->rlx[i], w->rly[i], w->rlz[i])));
        if (ts_v3_length(ts_v3_sub(p, b->rb.x)) > b->radius + w->spacing)
            continue;
        for (size_t j = b->first; j < b->first + b->count; j++) {
            ts_vec3 q = ts_v3_add(b->rb.x, ts_m3_mul_v3(Rb, ts_v3(w->rlx[j], w->rly[j], w->rlz[j])));
            double d = ts_v3_length(ts_v3_sub(p, q));
            if (d < best)
                best = d, pa = p, pb = q;
        }
    }
    if (best >= w->spacing || best <= 0.0)
        return;
    ts_vec3 n = ts_v3_scale(ts_v3_sub(pa, pb), 1.0 / best); /* from b to a */
    double depth = 0.5 * (w->spacing - best);
    ts_vec3 va = ts_rigid_point_velocity(&a->rb, pa), vb = ts_rigid_point_velocity(&b->rb, pb);
    double wa = a->rb.inv_mass, wb = b->rb.inv_mass;
    if (wa + wb <= 0.0)
        return;
    /* each body sees the other as a wall moving at its contact velocity, weighted by mass */
    ts_rigid_resolve_contact(&a->rb, pa, n, depth * 2.0 * wa / (wa + wb), vb, BODY_RESTITUTION, BODY_FRICTION);
    ts_rigid_resolve_contact(&b->rb, pb, ts_v3_scale(n, -1.0), depth * 2.0 * wb / (wa + wb), va, BODY_RESTITUTION,
                             BODY_FRICTION);
}

static void integrate_bodies(ts_water *w, double dt)
{
    for (size_t b = 0; b < w->n_bodies; b++) {
        body *bd = &w->bodies[b];
        ts_rigid_clear_forces(&bd->rb);
        ts_vec3 g = ts_v3(w->p.gravity[0], w->p.gravity[1], w->p.gravity[2]);
        ts_rigid_add_force_at(&bd->rb, ts_v3_scale(g, bd->rb.mass), bd->rb.x);
        for (size_t i = bd->first; i < bd->first + bd->count; i++)  /* fixed order: deterministic */
            ts_rigid_add_force_at(&bd->rb, ts_v3(w->rfx[i], w->rfy[i], w->rfz[i]), ts_v3(w->rx[i], w->ry[i], w->rz[i]));
        ts_rigid_integrate(&bd->rb, dt);
    }
    for (int it = 0; it < CONTACT_ITERATIONS; it++) {
        for (size_t b = 0; b < w->n_bodies; b++)
            body_wall_contacts(w, &w->bodies[b]);
        for (size_t a = 0; a < w->n_bodies; a++)
            for (size_t b = a + 1; b < w->n_bodies; b++)
                body_body_contact(w, &w->bodies[a], &w->bodies[b]);
    }
    for (size_t b = 0; b < w->n_bodies; b++) {
        const body *bd = &w->bodies[b];
        double speed = ts_v3_length(ts_rigid_velocity(&bd->rb)) +
                       ts_v3_length(ts_rigid_angular_velocity(&bd->rb)) * bd->radius;
        if (speed > w->v_max)
            w->v_max = speed;
    }
}

/* Remove fluid that left the domain (stable compaction: order and ids kept). */
static void remove_escaped(ts_water *w)
{
    if (w->p.domain_walls)
        return;
    size_t out = 0;
    for (size_t i = 0; i < w->fluid.n; i++) {
        w->keep[i] = w->x[i] >= w->domain[0] && w->x[i] <= w->domain[3] && w->y[i] >= w->domain[1] &&
                     w->y[i] <= w->domain[4] && w->z[i] >= w->domain[2] && w->z[i] <= w->domain[5];
        out += !w->keep[i];
    }
    if (out == 0)
        return;
    w->removed += ts_particles_compact(&w->fluid, w->keep);
    w->lists_stale = 1;
}

static ts_status check_finite(const ts_water *w, ts_error *err)
{
    int bad = 0;
    #pragma omp parallel for schedule(static) reduction(| : bad)
    for (size_t i = 0; i < w->fluid.n; i++)
        bad |= !isfinite(w->x[i] + w->y[i] + w->z[i] + w->vx[i] + w->vy[i] + w->vz[i]);
    for (size_t b = 0; b < w->n_bodies; b++)
        bad |= !isfinite(w->bodies[b].rb.x.x + w->bodies[b].rb.x.y + w->bodies[b].rb.x.z + w->bodies[b].rb.L.x);
    if (bad)
        return ts_fail(err, TS_ERR_UNSTABLE, "particles reached NaN or infinite speed; lower cfl_number, "
                       "raise speed_of_sound or check the scene scale");
    return TS_OK;
}

/* --------------------------------------------------------- solver ops */

static ts_status water_begin_frame(void *state, int frame, double frame_dt, ts_error *err)
{
    (void)err;
    ts_water *w = state;
    w->frame = frame;
    w->frame_dt = frame_dt;
    w->s = 0.0;
    w->lists_stale = 1; /* each frame starts from fresh lists, so a resumed bake runs the same steps */
    int i = frame - w->p.frame_start;
    for (size_t c = 0; c < w->n_colliders; c++) {
        collider_entry *e = &w->colliders[c];
        ts_collider_set_motion(&e->c, ts_motion_at(&e->m, i), ts_motion_at(&e->m, i + 1), e->m.rows ? frame_dt : 0.0);
    }
    return TS_OK;
}

static ts_status water_stable_dt(void *state, double *dt, ts_error *err)
{
    (void)err;
    const ts_water *w = state;
    double c = ts_sph_sound_speed(&w->eos);
    double limit = w->p.cfl_number * w->h / (c + w->v_max);                       /* CFL */
    if (w->p.viscosity > 0.0) {
        double nu = w->p.viscosity / w->p.rest_density;
        double visc = 0.125 * w->h * w->h / nu;                                  /* viscous diffusion */
        if (visc < limit)
            limit = visc;
    }
    if (w->a_max > 0.0) {
        double force = 0.25 * sqrt(w->h / w->a_max);                             /* force */
        if (force < limit)
            limit = force;
    }
    *dt = limit;
    return TS_OK;
}

static ts_status water_step(void *state, double dt, double s_end, ts_error *err)
{
    ts_water *w = state;
    ts_status st = build_grids(w, err);
    if (st == TS_OK && w->n_inflows > 0 && emit(w) > 0) {
        w->lists_stale = 1; /* the new particles take their place in cell order and in the lists */
        st = build_grids(w, err);
    }
    if (st != TS_OK)
        return st;
    compute_density(w);
    compute_forces(w);
    compute_rigid_reactions(w);
    w->s = s_end; /* walls where they are at the end of the step */
    integrate_fluid(w, dt);
    integrate_bodies(w, dt);
    remove_escaped(w);
    w->steps++;
    return check_finite(w, err);
}

static ts_status write_surface(ts_water *w, ts_frame_output *out, ts_error *err)
{
    char path[4096];
    ts_status st = ts_output_make_dir(out->cache_dir, "surface", err);
    if (st == TS_OK)
        st = ts_output_path(path, sizeof path, out->cache_dir, "surface", out->frame, "vdb", err);
    if (st != TS_OK)
        return st;
    tsvdb_grid *g = NULL;
    double r = w->p.particle_radius;
    double radius = r * w->p.surface_radius_scale;
    st = tsvdb_particles_to_level_set(w->x, w->y, w->z, NULL, (float)radius, w->fluid.n, r * w->p.surface_voxel_ratio,
                                      3.0, &g, err);
    /* spheres of radius k r overlap into a blobby union: smooth it, then erode
     * back by most of the extra radius so the liquid keeps its volume */
    if (st == TS_OK && w->p.surface_smoothing > 0)
        st = tsvdb_level_set_smooth(g, w->p.surface_smoothing, 0.5 * (radius - r), err);
    if (st == TS_OK)
        st = tsvdb_grid_set_name(g, "surface", err);
    if (st == TS_OK)
        st = tsvdb_write(path, &g, 1, err);
    tsvdb_grid_free(g);
    return st;
}

static ts_status water_write_frame(void *state, ts_frame_output *out, ts_error *err)
{
    ts_water *w = state;
    /* interleave the fluid columns for the cache (scratch space sized for the whole capacity) */
    size_t n = w->fluid.n;
    float *pos = malloc((3 * n + 1) * sizeof *pos), *vel = malloc((3 * n + 1) * sizeof *vel);
    if (!pos || !vel) {
        free(pos);
        free(vel);
        return ts_fail(err, TS_ERR_NOMEM, "water: out of memory writing frame %d", out->frame);
    }
    for (size_t i = 0; i < n; i++) {
        pos[3 * i] = w->x[i], pos[3 * i + 1] = w->y[i], pos[3 * i + 2] = w->z[i];
        vel[3 * i] = w->vx[i], vel[3 * i + 1] = w->vy[i], vel[3 * i + 2] = w->vz[i];
    }
    if (w->steps == 0) /* the first frame: densities for the output */
        for (size_t i = 0; i < n; i++)
            w->rho[i] = (float)w->p.rest_density;
    ts_frame f;
    ts_frame_init(&f, out->frame, out->time, n);
    ts_status st = ts_frame_add(&f, "position", TS_ATTR_F32, 3, pos, err);
    if (st == TS_OK) st = ts_frame_add(&f, "velocity", TS_ATTR_F32, 3, vel, err);
    if (st == TS_OK) st = ts_frame_add(&f, "id", TS_ATTR_U32, 1, w->id, err);
    if (st == TS_OK) st = ts_frame_add(&f, "density", TS_ATTR_F32, 1, w->rho, err);
    if (st == TS_OK) st = ts_output_particles(out, "fluid", &f, err); /* the writer copies the columns */
    free(pos);
    free(vel);
    if (st == TS_OK && w->n_bodies > 0) {
        ts_vec3 *origin = malloc(w->n_bodies * sizeof *origin);
        ts_quat *rotation = malloc(w->n_bodies * sizeof *rotation);
        if (!origin || !rotation)
            st = ts_fail(err, TS_ERR_NOMEM, "water: out of memory writing frame %d", out->frame);
        for (size_t b = 0; st == TS_OK && b < w->n_bodies; b++)
            ts_rigid_origin_pose(&w->bodies[b].rb, w->bodies[b].origin_offset, w->bodies[b].rotation0, &origin[b],
                                 &rotation[b]);
        if (st == TS_OK)
            st = ts_output_transforms(out, "rigid", w->n_bodies, origin, rotation, err);
        free(origin);
        free(rotation);
    }
    if (st == TS_OK && w->p.write_surface)
        st = write_surface(w, out, err);
    return st;
}

/* Checkpoint sections: "particles" (the fluid's state arrays, float32 as
 * the solver holds them, so restoring is exact), "bodies", "counters". */
static ts_status water_save_state(void *state, ts_checkpoint *cp, ts_error *err)
{
    ts_water *w = state;
    const ts_value counters[] = {{"next_id", w->next_id}, {"removed", (double)w->removed}, {"steps", (double)w->steps}};
    ts_status st = ts_particles_save(&w->fluid, cp, "particles", err);
    if (st == TS_OK)
        st = ts_rigid_save(cp, "bodies", w->bodies, offsetof(body, rb), sizeof *w->bodies, w->n_bodies, err);
    if (st == TS_OK)
        st = ts_checkpoint_put_values(cp, "counters", counters, 3, err);
    return st;
}

ts_status ts_water_restore(ts_water *w, const ts_checkpoint *cp, ts_error *err)
{
    ts_value counters[] = {{"next_id", 0}, {"removed", 0}, {"steps", 0}};
    ts_status st = ts_particles_restore(&w->fluid, cp, "particles", err);
    if (st == TS_OK)
        st = ts_rigid_restore(cp, "bodies", w->bodies, offsetof(body, rb), sizeof *w->bodies, w->n_bodies, err);
    if (st == TS_OK)
        st = ts_checkpoint_get_values(cp, "counters", counters, 3, err);
    if (st != TS_OK)
        return st;
    w->next_id = (uint32_t)counters[0].value;
    w->removed = (size_t)counters[1].value;
    w->steps = (long)counters[2].value;
    w->frame = cp->frame;
    w->v_max = w->a_max = 0.0;
    for (size_t i = 0; i < w->fluid.n; i++) {
        double v = sqrt((double)w->vx[i] * w->vx[i] + (double)w->vy[i] * w->vy[i] + (double)w->vz[i] * w->vz[i]);
        if (v > w->v_max)
            w->v_max = v;
    }
    return TS_OK;
}

void ts_water_get_stats(const ts_water *w, ts_water_stats *s)
{
    memset(s, 0, sizeof *s);
    s->fluid_particles = w->fluid.n;
    s->rigid_particles = w->rigid.n;
    s->removed = w->removed;
    s->capacity = w->fluid.cap;
    s->max_speed = w->v_max;
    const double *g = w->p.gravity;
    for (size_t i = 0; i < w->fluid.n; i++) {
        s->kinetic_energy += 0.5 * w->mass * ((double)w->vx[i] * w->vx[i] + (double)w->vy[i] * w->vy[i] +
                                              (double)w->vz[i] * w->vz[i]);
        s->potential_energy -= w->mass * (g[0] * w->x[i] + g[1] * w->y[i] + g[2] * w->z[i]);
        s->mean_density += w->rho[i];
    }
    if (w->fluid.n > 0)
        s->mean_density /= (double)w->fluid.n;
    for (size_t b = 0; b < w->n_bodies; b++) {
        const ts_rigid_body *rb = &w->bodies[b].rb;
        s->kinetic_energy += ts_rigid_kinetic_energy(rb);
        s->potential_energy -= rb->mass * (g[0] * rb->x.x + g[1] * rb->x.y + g[2] * rb->x.z);
    }
}

static ts_status water_create(void **state, const void *params, const void *objects, size_t count, ts_error *err)
{
    return ts_water_create((ts_water **)state, params, objects, count, err);
}

static ts_status water_restore(void *state, const ts_checkpoint *cp, ts_error *err) { return ts_water_restore(state, cp, err); }

static void water_destroy(void *state) { ts_water_destroy(state); }

static size_t water_stats(const void *state, ts_stat *out)
{
    ts_water_stats s;
    ts_water_get_stats(state, &s);
    const ts_stat all[] = {
        {"fluid_particles", (double)s.fluid_particles, 1}, {"rigid_particles", (double)s.rigid_particles, 1},
        {"removed", (double)s.removed, 1}, {"capacity", (double)s.capacity, 1},
        {"kinetic_energy", s.kinetic_energy, 0}, {"potential_energy", s.potential_energy, 0},
        {"max_speed", s.max_speed, 0},
    };
    return ts_stats_copy(out, all, sizeof all / sizeof *all);
}

const ts_solver_ops ts_water_ops = {
    "water", &ts_water_param_table, sizeof(ts_water_object), 400, water_create, water_restore, water_destroy,
    water_stats, water_begin_frame, water_stable_dt, water_step, water_write_frame, water_save_state,
};
