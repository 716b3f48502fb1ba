/* fracture.c - the extended DEM fracture solver (see fracture.h).
 *
 * Per step: the pore springs (each once, in parallel: force, torques, and
 * whether it breaks), then each element gathers its springs' forces and
 * its contacts (elements through the neighbour grid, projectiles,
 * colliders), then everything moves. Gathering per element keeps the sums
 * in a fixed order, so a bake is the same on any number of threads.
 */
#include "fracture.h"

#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bond_levels.h"
#include "buffer.h"
#include "collider.h"
#include "contact.h"
#include "delaunay.h"
#include "fragments.h"
#include "grid.h"
#include "mesh.h"
#include "object_contacts.h"
#include "particles.h"
#include "motion.h"
#include "rigid.h"
#include "rigid_object.h"
#include "rng.h"
#include "threads.h"

#define MAX_DEBRIS_PER_BREAK 8
#define DEBRIS_EVERY 16       /* substeps between debris moves (a power of two) */
#define PACKING 0.45          /* volume fraction of elements when r comes from the count */
#define RELAX_ITERATIONS 400

typedef struct spring {
    uint32_t a, b;
    ts_vec3 rest;      /* x_b - x_a at rest: in both elements' body frames, which start as the world's */
    ts_vec3 perp;      /* a unit vector across it, for the twist angle */
    double length0, p;
    double stretch_max, cos_bend, cos_twist;  /* appendix A's limits x p, set once */
    int level;
    uint8_t broken;
} spring;

typedef struct projectile {
    ts_rigid_object body;
    double radius;     /* the large element: a sphere about the centre of mass */
    int launch_frame, active;
    double k, c;       /* contact with one element */
} projectile;

typedef struct obstacle {
    ts_collider c;
    ts_motion m;
} obstacle;

struct ts_fracture {
    ts_fracture_params p;
    ts_contact_law law;
    char name[64];
    ts_particles el;               /* el.n elements, fixed; the arrays below are registered in it */
    double r, M, I, k, c, k_p, c_p, k_wall, c_wall;
    double dt_bonds;               /* stable step of the stiffest element's springs */
    double *x, *y, *z, *vx, *vy, *vz, *wx, *wy, *wz;
    ts_quat *q;
    uint8_t *fixed;                /* anchored elements do not move */
    double *R;                     /* 9 per element: q as a matrix, row-major, refreshed as q moves */
    double *force, *torque;        /* 3 per element */
    double *rest;                  /* 3 per element: centre at frame_start */
    float *gx, *gy, *gz;
    ts_grid grid;
    /* contact candidates (Verlet list): pairs within 2r + skin when built, rebuilt once any element has
     * moved half the skin; each element lists all of its own, in grid order */
    uint32_t *near_start, *near;
    size_t near_cap;
    double *x_built;               /* 3 per element: centres when the list was built */
    double skin;
    int near_stale;                /* 1: build before the next step (new or restored state) */
    spring *springs;
    size_t n_springs, broken;
    uint32_t *adj_start, *adj;     /* springs of each element, as spring << 1 | 1 where the element is its b */
    double *spring_force, *spring_torque;  /* 3 (on a) and 6 (a, b) per spring */
    double *break_energy;          /* this step, per spring */
    int levels;
    projectile *proj;
    size_t n_proj;
    ts_object_contacts projectile_contacts; /* the projectiles against each other, when there are two */
    double *proj_load;             /* 6 per element and projectile: force and torque on the projectile */
    obstacle *obs;
    size_t n_obs;
    /* debris */
    ts_particles debris;           /* debris.n of at most max_debris */
    double *dx, *dy, *dz, *dvx, *dvy, *dvz, *dr;
    uint32_t *did;
    uint8_t *drest;
    double debris_dt;              /* time since the debris last moved */
    uint32_t next_debris;
    uint32_t *piece, *parent;
    ts_fragments frags;
    ts_fracture_stats timing;
    ts_step_context now;           /* where the frame loop is */
    long steps;
    int settling;                  /* 1 while settle_under_own_weight runs: nothing breaks */
    long settle_steps;
    double settle_sag;             /* the largest distance an element moved while settling, metres */
};

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* -------------------------------------------------------------- parameters */

#define P ts_fracture_params
static const ts_param_def PARAMS[] = {
    TS_INT(P, element_count, 5, 2e6, 2048),
    TS_REAL(P, element_radius, 0.0, 100.0, 0.0),
    TS_REAL(P, density, 1e-6, 1e6, 2400.0),
    TS_REAL(P, p0, 1e-6, 1e6, 1.0),
    TS_REAL(P, pH, 1e-6, 1e6, 0.001),
    TS_REAL(P, n, 0.0, 1000.0, 30.0),
    TS_REAL(P, strain_limit, 1e-6, 10.0, 0.02),
    TS_REAL(P, bend_limit, 0.001 * TS_RADIANS_PER_DEGREE, 180.0 * TS_RADIANS_PER_DEGREE, 10.0 * TS_RADIANS_PER_DEGREE),
    TS_REAL(P, twist_limit, 0.001 * TS_RADIANS_PER_DEGREE, 180.0 * TS_RADIANS_PER_DEGREE, 20.0 * TS_RADIANS_PER_DEGREE),
    TS_REAL(P, bond_stiffness, 0.001, 1000.0, 1.0),
    TS_REAL(P, hard_threshold, 0.0, 1.0, 0.5),
    TS_REAL(P, max_spring_length, 1.0, 10.0, 1.6),
    TS_REAL(P, contact_time, 0.0, 10.0, 0.0),
    TS_REAL(P, restitution, 0.01, 1.0, 0.3),
    TS_REAL(P, friction, 0.0, 10.0, 0.5),
    TS_REAL(P, debris_energy, 0.0, 1e9, 0.005),
    TS_REAL(P, debris_size, 1e-6, 10.0, 0.004),
    TS_REAL(P, debris_spread, 0.1, 20.0, 1.5),
    TS_LONG(P, max_debris, 0, 100e6, 200000),
    TS_BOOL(P, anchored, 0),
    TS_VEC3(P, gravity, -1000.0, 1000.0, 0.0, 0.0, -9.81),
    TS_REAL(P, steps_per_contact, 2.0, 1000.0, 15.0),
    TS_SCENE_INT(P, frame_start, -1e6, 1e6, 1),
    TS_SCENE_REAL(P, fps, 1e-3, 1e4, 24.0),
    TS_SCENE_SEED(P, seed),
};
#undef P
const ts_param_table ts_fracture_param_table = TS_PARAM_TABLE("fracture", ts_fracture_params, PARAMS);

ts_fracture_params ts_fracture_params_default(void)
{
    ts_fracture_params p;
    ts_params_default(&ts_fracture_param_table, &p);
    return p;
}

/* ------------------------------------------------------------------ memory */

static void set_rotation(ts_fracture *f, size_t i, ts_quat q)
{
    f->q[i] = q;
    ts_mat3 m = ts_quat_to_mat3(q);
    memcpy(f->R + 9 * i, &m, sizeof m);
}

/* Element i's rotation applied to v (the hot loops' one rotation: a stored matrix, not a quaternion). */
static inline ts_vec3 rotate(const ts_fracture *f, size_t i, ts_vec3 v)
{
    const double *R = f->R + 9 * i;
    return ts_v3(R[0] * v.x + R[1] * v.y + R[2] * v.z, R[3] * v.x + R[4] * v.y + R[5] * v.z,
                 R[6] * v.x + R[7] * v.y + R[8] * v.z);
}

static ts_status alloc_elements(ts_fracture *f, size_t n, ts_error *err)
{
    const size_t d = sizeof(double), fl = sizeof(float);
    const ts_particle_column columns[] = {
        TS_STATE_COLUMN("x", &f->x, TS_ATTR_F64, 1), TS_STATE_COLUMN("y", &f->y, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("z", &f->z, TS_ATTR_F64, 1), TS_STATE_COLUMN("vx", &f->vx, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("vy", &f->vy, TS_ATTR_F64, 1), TS_STATE_COLUMN("vz", &f->vz, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("wx", &f->wx, TS_ATTR_F64, 1), TS_STATE_COLUMN("wy", &f->wy, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("wz", &f->wz, TS_ATTR_F64, 1), TS_STATE_COLUMN("q", &f->q, TS_ATTR_F64, 4), /* w x y z */
        TS_WORK_COLUMN("R", &f->R, 9 * d), TS_WORK_COLUMN("fixed", &f->fixed, 1),
        TS_WORK_COLUMN("force", &f->force, 3 * d), TS_WORK_COLUMN("torque", &f->torque, 3 * d),
        TS_WORK_COLUMN("rest", &f->rest, 3 * d), TS_WORK_COLUMN("gx", &f->gx, fl), TS_WORK_COLUMN("gy", &f->gy, fl),
        TS_WORK_COLUMN("gz", &f->gz, fl), TS_WORK_COLUMN("piece", &f->piece, sizeof *f->piece),
        TS_WORK_COLUMN("parent", &f->parent, sizeof *f->parent),
        TS_WORK_COLUMN("near_start", &f->near_start, sizeof *f->near_start),
        TS_WORK_COLUMN("x_built", &f->x_built, 3 * d),
    };
    const ts_particle_column debris_columns[] = {
        TS_STATE_COLUMN("x", &f->dx, TS_ATTR_F64, 1), TS_STATE_COLUMN("y", &f->dy, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("z", &f->dz, TS_ATTR_F64, 1), TS_STATE_COLUMN("vx", &f->dvx, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("vy", &f->dvy, TS_ATTR_F64, 1), TS_STATE_COLUMN("vz", &f->dvz, TS_ATTR_F64, 1),
        TS_STATE_COLUMN("r", &f->dr, TS_ATTR_F64, 1), TS_STATE_COLUMN("id", &f->did, TS_ATTR_U32, 1),
        TS_STATE_COLUMN("rest", &f->drest, TS_ATTR_U8, 1),
    };
    ts_particles_init(&f->el, "fracture", n);
    ts_particles_init(&f->debris, "fracture debris", (size_t)f->p.max_debris);
    ts_status st = ts_particles_register(&f->el, columns, sizeof columns / sizeof *columns, err);
    if (st == TS_OK) st = ts_particles_reserve(&f->el, n, err);
    if (st == TS_OK) st = ts_particles_register(&f->debris, debris_columns, 9, err);
    if (st != TS_OK)
        return st;
    f->el.n = n;
    for (size_t i = 0; i < n; i++)
        set_rotation(f, i, ts_quat_identity());
    return TS_OK;
}

/* --------------------------------------------------------------- placement */

static ts_vec3 element_pos(const ts_fracture *f, size_t i) { return ts_v3(f->x[i], f->y[i], f->z[i]); }

static ts_status build_grid(ts_fracture *f, double h, ts_error *err)
{
    for (size_t i = 0; i < f->el.n; i++)
        f->gx[i] = (float)f->x[i], f->gy[i] = (float)f->y[i], f->gz[i] = (float)f->z[i];
    return ts_grid_build(&f->grid, f->gx, f->gy, f->gz, f->el.n, (float)h, NULL, err);
}

/* Keep a centre inside the surface (anywhere inside, as the paper's wall of
 * 2048 needs), and a radius clear of the obstacles (a wall standing on the
 * ground starts resting on it, not pressed into it). */
static void keep_inside(const ts_fracture *f, const ts_collider *shape, double *x, double *y, double *z)
{
    ts_collider_hit hit;
    ts_vec3 p = ts_v3(*x, *y, *z);
    if (ts_collider_query(shape, 0.0, p, &hit) && hit.distance > 0)
        p = ts_v3_sub(p, ts_v3_scale(hit.normal, hit.distance));
    for (size_t k = 0; k < f->n_obs; k++)
        if (ts_collider_query(&f->obs[k].c, 0.0, p, &hit) && hit.distance < f->r)
            p = ts_v3_add(p, ts_v3_scale(hit.normal, f->r - hit.distance));
    *x = p.x, *y = p.y, *z = p.z;
}

/* Appendix A: random centres inside the mesh, pushed apart until no two
 * are closer than 2r. Each pass moves every element by half of each of its
 * overlaps (Jacobi: the same on any thread count), then back inside. */
static ts_status place_elements(ts_fracture *f, const ts_collider *shape, const float bounds[6], ts_error *err)
{
    ts_rng rng;
    ts_rng_seed(&rng, f->p.seed, 17);
    size_t placed = 0, tries = 0;
    while (placed < f->el.n) {
        if (++tries > 10000 * f->el.n + 100000)
            return ts_fail(err, TS_ERR_INVALID, "breakable '%s': no room inside it for elements of radius %g m; lower "
                           "Element Radius", f->name, f->r);
        double px = bounds[0] + (bounds[3] - bounds[0]) * ts_rng_uniform(&rng);
        double py = bounds[1] + (bounds[4] - bounds[1]) * ts_rng_uniform(&rng);
        double pz = bounds[2] + (bounds[5] - bounds[2]) * ts_rng_uniform(&rng);
        ts_collider_hit hit;
        if (ts_collider_query(shape, 0.0, ts_v3(px, py, pz), &hit) && hit.distance < 0)
            f->x[placed] = px, f->y[placed] = py, f->z[placed] = pz, placed++;
    }
    double two_r = 2.0 * f->r, worst = 0;
    for (int it = 0; it < RELAX_ITERATIONS; it++) {
        ts_status st = build_grid(f, two_r, err);
        if (st != TS_OK)
            return st;
        worst = 0;
        #pragma omp parallel for reduction(max : worst) schedule(static)
        for (size_t i = 0; i < f->el.n; i++) {
            ts_neighbor_ranges nr;
            ts_grid_neighbor_ranges(&f->grid, f->gx[i], f->gy[i], f->gz[i], &nr);
            ts_vec3 push = ts_v3(0, 0, 0), xi = element_pos(f, i);
            for (int k = 0; k < nr.n; k++)
                for (uint32_t s = nr.begin[k]; s < nr.end[k]; s++) {
                    uint32_t j = f->grid.sorted[s];
                    if (j == i)
                        continue;
                    ts_vec3 d = ts_v3_sub(xi, element_pos(f, j));
                    double len = ts_v3_length(d), overlap = two_r - len;
                    if (overlap <= 0)
                        continue;
                    if (len < 1e-12 * two_r)   /* coincident: part them along a fixed, index-dependent axis */
                        d = ts_v3(i < j ? 1 : -1, 0, 0), len = 1;
                    push = ts_v3_add(push, ts_v3_scale(d, 0.5 * overlap / len));
                    worst = fmax(worst, overlap);
                }
            f->vx[i] = push.x, f->vy[i] = push.y, f->vz[i] = push.z;  /* scratch */
        }
        #pragma omp parallel for schedule(static)
        for (size_t i = 0; i < f->el.n; i++) {
            f->x[i] += f->vx[i], f->y[i] += f->vy[i], f->z[i] += f->vz[i];
            keep_inside(f, shape, &f->x[i], &f->y[i], &f->z[i]);
            f->vx[i] = f->vy[i] = f->vz[i] = 0;
        }
        if (worst < 1e-3 * two_r)
            break;
    }
    if (worst > 0.05 * two_r)
        return ts_fail(err, TS_ERR_INVALID, "breakable '%s': %zu elements of radius %g m do not fit inside it without "
                       "overlapping (worst overlap %.0f%% of a diameter); lower Element Count or Element Radius",
                       f->name, f->el.n, f->r, 100 * worst / two_r);
    return TS_OK;
}

/* Put the elements in grid-cell order once, so neighbours are near in
 * memory; their rest centres (f->rest) are kept for Delaunay and the pieces. */
static ts_status sort_elements(ts_fracture *f, ts_error *err)
{
    ts_status st = build_grid(f, 2.0 * f->r, err);
    if (st != TS_OK)
        return st;
    for (size_t k = 0; k < f->el.n; k++) {
        uint32_t i = f->grid.sorted[k];
        f->rest[3 * k] = f->x[i], f->rest[3 * k + 1] = f->y[i], f->rest[3 * k + 2] = f->z[i];
    }
    for (size_t k = 0; k < f->el.n; k++)
        f->x[k] = f->rest[3 * k], f->y[k] = f->rest[3 * k + 1], f->z[k] = f->rest[3 * k + 2];
    return TS_OK;
}

/* A wall set in the ground: elements resting on an obstacle at the start are held there. */
static void anchor_elements(ts_fracture *f)
{
    for (size_t i = 0; i < f->el.n; i++)
        for (size_t k = 0; k < f->n_obs; k++) {
            ts_collider_hit hit;
            if (ts_collider_query(&f->obs[k].c, 0.0, element_pos(f, i), &hit) && hit.distance < 1.05 * f->r)
                f->fixed[i] = 1;
        }
}

/* ------------------------------------------------------------------ springs */

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static ts_vec3 across(ts_vec3 d)
{
    ts_vec3 axis = fabs(d.x) < 0.6 ? ts_v3(1, 0, 0) : ts_v3(0, 1, 0);
    ts_vec3 u = ts_v3_cross(d, axis);
    return ts_v3_scale(u, 1.0 / ts_v3_length(u));
}

typedef struct edge_length {
    double length;
    size_t edge;
} edge_length;

static int compare_edge_length(const void *a, const void *b)
{
    const edge_length *x = a, *y = b;
    return x->length < y->length ? -1 : x->length > y->length ? 1 : (x->edge > y->edge) - (x->edge < y->edge);
}

static void add_spring(ts_fracture *f, spring *s, ts_edge e, uint32_t *degree)
{
    ts_vec3 d = ts_v3_sub(element_pos(f, e.b), element_pos(f, e.a));
    memset(s, 0, sizeof *s);
    s->a = e.a, s->b = e.b;
    s->rest = d, s->length0 = ts_v3_length(d), s->perp = across(d);
    degree[e.a]++, degree[e.b]++;
}

/* Pore springs on the Delaunay edges that lie inside the object and are not
 * much longer than the typical spacing (a hull edge across a concavity or
 * along the surface would bridge what is not there). An element needs three
 * springs to be held in place - with one it hangs from it like a pendulum
 * (a corner element of a wall swung 2 cm down under its own weight), with
 * two it turns about them - so an element left with fewer gets its shortest
 * longer edges inside the object until it has three. */
#define MIN_SPRINGS 3
static ts_status make_springs(ts_fracture *f, const ts_edge *edges, size_t m, const ts_collider *shape, ts_error *err)
{
    double *len = malloc((m + 1) * sizeof *len), *sorted = malloc((m + 1) * sizeof *sorted);
    edge_length *longer = malloc((m + 1) * sizeof *longer);
    uint32_t *degree = calloc(f->el.n + 1, sizeof *degree);
    f->springs = malloc((m + 1) * sizeof *f->springs);
    if (!len || !sorted || !longer || !degree || !f->springs) {
        free(len), free(sorted), free(longer), free(degree);
        return ts_fail(err, TS_ERR_NOMEM, "fracture: out of memory for %zu springs", m);
    }
    for (size_t e = 0; e < m; e++)
        sorted[e] = len[e] = ts_v3_length(ts_v3_sub(element_pos(f, edges[e].b), element_pos(f, edges[e].a)));
    qsort(sorted, m, sizeof *sorted, compare_double);
    double limit = f->p.max_spring_length * sorted[m / 2];
    free(sorted);
    size_t count = 0, n_longer = 0;
    for (size_t e = 0; e < m; e++) {
        ts_vec3 a = element_pos(f, edges[e].a), b = element_pos(f, edges[e].b);
        ts_collider_hit hit;
        if (!ts_collider_query(shape, 0.0, ts_v3_scale(ts_v3_add(a, b), 0.5), &hit) || hit.distance > 0)
            continue;
        if (len[e] > limit) {
            longer[n_longer++].edge = e;
            continue;
        }
        add_spring(f, &f->springs[count++], edges[e], degree);
    }
    /* the longer edges, shortest first (by index on ties: the order is the same on every machine), to
     * elements still short of springs */
    for (size_t k = 0; k < n_longer; k++)
        longer[k].length = len[longer[k].edge];
    qsort(longer, n_longer, sizeof *longer, compare_edge_length);
    for (size_t k = 0; k < n_longer; k++) {
        const ts_edge e = edges[longer[k].edge];
        if (degree[e.a] < MIN_SPRINGS || degree[e.b] < MIN_SPRINGS)
            add_spring(f, &f->springs[count++], e, degree);
    }
    free(len), free(longer), free(degree);
    f->n_springs = count;
    if (count == 0)
        return ts_fail(err, TS_ERR_INVALID, "breakable '%s': no springs joined its elements; raise Element Count",
                       f->name);
    f->spring_force = calloc(3 * count, sizeof *f->spring_force);     /* each step's results, per spring */
    f->spring_torque = calloc(6 * count, sizeof *f->spring_torque);
    f->break_energy = calloc(count, sizeof *f->break_energy);
    if (!f->spring_force || !f->spring_torque || !f->break_energy)
        return ts_fail(err, TS_ERR_NOMEM, "fracture: out of memory for %zu springs", count);
    return TS_OK;
}

/* A spring's map value: the lightest of its midpoint (the paper's rule, §4) and its two elements. With the
 * midpoint alone, a white element next to the painted edge has dark-midpoint springs into the dark region
 * and joins the hard piece, which so comes out an element wider than the painting all round (measured:
 * IoU 0.75 against 0.89 with this rule, tests/python/test_fracture.py). */
static double spring_grey(const ts_brittleness_map *map, ts_vec3 a, ts_vec3 b)
{
    double g = ts_brittleness_at(map, ts_v3_scale(ts_v3_add(a, b), 0.5));
    g = fmax(g, fmax(ts_brittleness_at(map, a), ts_brittleness_at(map, b)));
    return fmin(fmax(g, 0.0), 1.0);
}

/* The break limits are the paper's, for its wall's stiffness: elements of 1.7 cm and t_c = 2 ms, the values
 * every preset and the paper-figure tests were set at. A blow (an impulse J) strains the model by about
 * J t_c / (M r): a stiffer model (a shorter t_c, automatic or given) strains less under the same blow. The
 * limits are scaled by (t_c / r) / (2 ms / 1.7 cm), so that the same blow breaks the same springs at any
 * stiffness and element count. Without it the automatic t_c (1 ms for the paper's wall) made every wall four
 * times as stiff and about twice as hard to break: the demo's first ball pushed the whole wall over instead
 * of breaking its brittle top. (The raise by the self-weight strain, after settling, comes on top.) */
#define LIMIT_CONTACT_TIME 0.002
#define LIMIT_RADIUS 0.017
static double impact_limit_scale(const ts_fracture *f)
{
    return (f->law.contact_time * LIMIT_RADIUS) / (f->r * LIMIT_CONTACT_TIME);
}

/* §3.2 and §4: levels (the hard level first when there is a map) and p_i by eq. 1. Grey values between the
 * hard threshold and white lift a spring's strength toward p0 in proportion to their darkness. */
static ts_status set_strengths(ts_fracture *f, const ts_brittleness_map *map, ts_error *err)
{
    size_t m = f->n_springs;
    double *length = malloc((m + 1) * sizeof *length), *grey = malloc((m + 1) * sizeof *grey);
    uint8_t *hard = calloc(m + 1, 1);
    int *level = malloc((m + 1) * sizeof *level);
    ts_edge *ends = malloc((m + 1) * sizeof *ends);
    ts_status st = TS_OK;
    if (!length || !grey || !hard || !level || !ends)
        st = ts_fail(err, TS_ERR_NOMEM, "fracture: out of memory for %zu springs", m);
    #pragma omp parallel for schedule(dynamic, 64) if (st == TS_OK)
    for (size_t i = 0; i < m; i++) {
        spring *s = &f->springs[i];
        length[i] = s->length0;
        ends[i] = (ts_edge){s->a, s->b};
        grey[i] = map ? spring_grey(map, element_pos(f, s->a), element_pos(f, s->b)) : 1.0;
        hard[i] = map && grey[i] < f->p.hard_threshold;
    }
    int H = 0;
    if (st == TS_OK)
        st = ts_bond_levels(f->el.n, ends, length, hard, m, level, &H, err);
    const double limit_scale = impact_limit_scale(f);
    for (size_t i = 0; st == TS_OK && i < m; i++) {
        spring *s = &f->springs[i];
        s->level = level[i];
        s->p = ts_bond_strength(level[i], H, f->p.p0, f->p.pH, f->p.n);          /* eq. 1 */
        if (!hard[i])
            s->p = grey[i] * s->p + (1.0 - grey[i]) * f->p.p0;
        const double p = s->p * limit_scale;
        s->stretch_max = f->p.strain_limit * p * s->length0;
        s->cos_bend = cos(fmin(f->p.bend_limit * p, M_PI));
        s->cos_twist = cos(fmin(f->p.twist_limit * p, M_PI));
    }
    f->levels = H + 1;
    free(length), free(grey), free(hard), free(level), free(ends);
    return st;
}

/* Each element's springs (indices), for gathering their forces. */
static ts_status build_adjacency(ts_fracture *f, ts_error *err)
{
    ts_edge *ends = malloc((f->n_springs + 1) * sizeof *ends);
    int failed = !ends;
    for (size_t k = 0; !failed && k < f->n_springs; k++)
        ends[k] = (ts_edge){f->springs[k].a, f->springs[k].b};
    failed = failed || ts_edge_incidence(f->el.n, ends, f->n_springs, &f->adj_start, &f->adj) < 0;
    free(ends);
    if (failed)
        return ts_fail(err, TS_ERR_NOMEM, "fracture: out of memory for %zu springs", f->n_springs);
    if (f->n_springs > UINT32_MAX / 2)
        return ts_fail(err, TS_ERR_INVALID, "fracture: %zu springs are more than it takes", f->n_springs);
    /* the side with the spring: the force pass then never reads the spring itself */
    for (size_t i = 0; i < f->el.n; i++)
        for (uint32_t k = f->adj_start[i]; k < f->adj_start[i + 1]; k++)
            f->adj[k] = f->adj[k] << 1 | (uint32_t)(f->springs[f->adj[k]].a != i);
    return TS_OK;
}

/* The springs' dashpot and their own stable step. An element's springs act
 * on its spin through levers of half a spring: an element's small inertia
 * (its piece's, about M s^2 / 6) makes that its fastest mode, of stiffness
 * a = sum k_p (L0/2)^2 / I. A dashpot tied to the contact's (whose damping
 * grows as sqrt(springs) relative to this mode) would overdamp it and force
 * tiny steps, so the springs' dashpot damps the stiffest element's mode at
 * 30% of critical instead; the step is half the explicit limit of that
 * damped oscillator. */
#define BOND_DAMPING_RATIO 0.3
static void bond_dashpot_and_step(ts_fracture *f)
{
    double per_unit = 0;    /* max over elements of sum (L0/2)^2 / I, or of springs / M */
    for (size_t i = 0; i < f->el.n; i++) {
        double rot = 0, trans = 0;
        for (uint32_t k = f->adj_start[i]; k < f->adj_start[i + 1]; k++) {
            double lever = 0.5 * f->springs[f->adj[k] >> 1].length0;
            rot += lever * lever / f->I, trans += 1.0 / f->M;
        }
        per_unit = fmax(per_unit, fmax(rot, trans));
    }
    per_unit = fmax(per_unit, 1.0 / f->M);
    double a = f->k_p * per_unit, b = 2.0 * BOND_DAMPING_RATIO * sqrt(a);
    f->c_p = b / per_unit;
    f->dt_bonds = 1.0 / (0.5 * b + sqrt(a + 0.25 * b * b));
}

/* ------------------------------------------------------------------ objects */

static ts_status add_projectile(ts_fracture *f, const ts_fracture_object *o, ts_error *err)
{
    projectile *pr = &f->proj[f->n_proj];
    memset(pr, 0, sizeof *pr);
    ts_mass_properties mp;
    ts_status st = ts_rigid_object_init(&pr->body, &o->in, "projectile", &mp, err);
    if (st != TS_OK)
        return st;
    pr->launch_frame = o->launch_frame;
    for (size_t k = 0; k < o->in.vertex_count; k++) {
        const float *v = o->in.vertices + 3 * k;
        pr->radius = fmax(pr->radius, ts_v3_length(ts_v3_sub(ts_v3(v[0], v[1], v[2]), mp.centroid)));
    }
    double inv = pr->body.keyframed ? 0.0 : pr->body.rb.inv_mass;
    ts_contact_coefficients(&f->law, ts_effective_mass(1.0 / f->M, inv), &pr->k, &pr->c);
    f->n_proj++;
    return TS_OK;
}

static ts_status add_obstacle(ts_fracture *f, const ts_fracture_object *o, ts_error *err)
{
    obstacle *ob = &f->obs[f->n_obs];
    float b[6];
    ts_mesh_bounds(o->in.vertices, o->in.vertex_count, b);
    double extent = fmax(fmax(b[3] - b[0], b[4] - b[1]), b[5] - b[2]);
    double voxel = fmax(0.5 * f->r, extent / 400.0);
    ts_status st = ts_collider_from_mesh(&ob->c, o->in.name, o->in.vertices, o->in.vertex_count, o->in.triangles,
                                         o->in.triangle_count, voxel, 2.0 + 2.0 * f->r / voxel, err);
    if (st != TS_OK)
        return st;
    ob->m.rows = o->in.motion, ob->m.frames = o->in.motion_frames;
    f->n_obs++;
    return TS_OK;
}

static const ts_fracture_object *find_breakable(const ts_fracture_object *objects, size_t count, ts_error *err)
{
    const ts_fracture_object *found = NULL;
    for (size_t k = 0; k < count; k++)
        if (objects[k].role == TS_FRACTURE_BREAKABLE) {
            if (found) {
                ts_fail(err, TS_ERR_INVALID, "fracture: '%s' and '%s' are both Breakable; one effect breaks one "
                        "object (give each its own effect)", found->in.name, objects[k].in.name);
                return NULL;
            }
            found = &objects[k];
        }
    if (!found)
        ts_fail(err, TS_ERR_INVALID, "fracture: the scene has no Breakable object");
    return found;
}

/* Element radius, mass and the contact and spring coefficients that follow from them. */
/* Contact Time 0 (the default): t_c from the element size and the object's size, so that what gravity does
 * to the model is the same at every scale and element count. The contact stiffness, and the springs' with
 * it, is k ~ M / t_c^2; with M ~ rho r^3 the model's Young's modulus is E ~ k / r ~ rho r^2 / t_c^2, and its
 * strain under its own weight over its size L is rho g L / E ~ g L t_c^2 / r^2. Holding that fixed gives
 * t_c ~ r / sqrt(g L). A fixed t_c made a finer object softer (E ~ N^(-2/3) for N elements): at 8,000
 * elements the paper's wall leant over under its own weight. A slender object also buckles under its
 * own weight unless E grows as (L / thickness)^2 (Euler), so below a thickness of SLENDER x L, t_c
 * shrinks in proportion: the paper's wall (1 m, 8 cm thick, elements of 1.7 cm, 9.81 m/s^2) gets 1 ms;
 * with 700 elements it stood at 1.5 ms and leant over and broke at 2 ms. */
#define CONTACT_TIME_REFERENCE 0.0015   /* s, for elements of 1.7 cm in a stocky object of 1 m under 9.81 m/s^2 */
#define SLENDER 0.12
static double automatic_contact_time(const ts_fracture *f, const ts_fracture_object *o)
{
    float b[6];
    ts_mesh_bounds(o->in.vertices, o->in.vertex_count, b);
    double size = fmax(b[3] - b[0], fmax(b[4] - b[1], b[5] - b[2]));
    double thickness = fmin(b[3] - b[0], fmin(b[4] - b[1], b[5] - b[2]));
    double g = fmax(sqrt(f->p.gravity[0] * f->p.gravity[0] + f->p.gravity[1] * f->p.gravity[1] +
                         f->p.gravity[2] * f->p.gravity[2]), 0.1 * 9.81);
    return CONTACT_TIME_REFERENCE * (f->r / 0.017) * sqrt(9.81 * 1.0 / (g * size)) *
           fmin(1.0, thickness / (SLENDER * size));
}

static ts_status size_elements(ts_fracture *f, const ts_fracture_object *o, ts_error *err)
{
    ts_mass_properties mp;
    ts_status st = ts_mesh_check_closed(o->in.vertices, o->in.vertex_count, o->in.triangles, o->in.triangle_count, o->in.name, err);
    if (st == TS_OK)
        st = ts_mesh_mass_properties(o->in.vertices, o->in.vertex_count, o->in.triangles, o->in.triangle_count,
                                     o->in.name, &mp, err);
    if (st != TS_OK)
        return st;
    const size_t n = (size_t)f->p.element_count;
    f->r = f->p.element_radius > 0 ? f->p.element_radius : cbrt(PACKING * mp.volume / (n * 4.0 / 3.0 * M_PI));
    f->M = f->p.density * mp.volume / n;     /* the elements share the object's mass */
    /* an element is drawn and tumbles as its Voronoi piece, not as the sphere inside it: the inertia of a
     * cube of the piece's volume (M s^2 / 6), about 1.7x the sphere's for the paper's wall */
    double s = cbrt(mp.volume / n);
    f->I = fmax(f->M * s * s / 6.0, 0.4 * f->M * f->r * f->r);
    if (f->p.contact_time == 0.0)
        f->law.contact_time = automatic_contact_time(f, o);
    ts_contact_coefficients(&f->law, 0.5 * f->M, &f->k, &f->c);
    ts_contact_coefficients(&f->law, f->M, &f->k_wall, &f->c_wall);
    f->k_p = f->p.bond_stiffness * f->k;
    f->skin = 0.4 * f->r;
    f->near_stale = 1;
    return alloc_elements(f, n, err);
}

/* The element set-up of appendix A and §3-4, timed for the benchmark. */
static ts_status build_breakable(ts_fracture *f, const ts_fracture_object *o, ts_error *err)
{
    ts_status st = TS_OK;
    ts_brittleness_map map = {o->brittleness, o->map_width, o->map_height, (ts_map_projection)o->projection,
                              o->in.vertices, o->in.triangles, o->in.triangle_count, o->corner_uv, {0}};
    if (o->brittleness && (st = ts_brittleness_init(&map, o->in.name, o->in.vertex_count, err)) != TS_OK)
        return st;
    double t0 = seconds_now();
    float bounds[6];
    ts_mesh_bounds(o->in.vertices, o->in.vertex_count, bounds);
    ts_collider shape;
    memset(&shape, 0, sizeof shape);
    st = ts_collider_from_mesh(&shape, o->in.name, o->in.vertices, o->in.vertex_count, o->in.triangles, o->in.triangle_count,
                               0.5 * f->r, 4.0, err);
    if (st == TS_OK)
        st = place_elements(f, &shape, bounds, err);
    if (st == TS_OK)
        st = sort_elements(f, err);
    if (st == TS_OK && f->p.anchored)
        anchor_elements(f);
    double t1 = seconds_now();
    ts_edge *edges = NULL;
    size_t m = 0;
    if (st == TS_OK)
        st = ts_delaunay_edges(f->rest, f->el.n, &edges, &m, err);
    if (st == TS_OK)
        st = make_springs(f, edges, m, &shape, err);
    double t2 = seconds_now();
    if (st == TS_OK)
        st = set_strengths(f, o->brittleness ? &map : NULL, err);
    if (st == TS_OK && (st = build_adjacency(f, err)) == TS_OK)
        bond_dashpot_and_step(f);
    double t3 = seconds_now();
    if (st == TS_OK)
        st = ts_fragments_build(o->in.vertices, o->in.triangles, o->in.triangle_count, o->corner_uv, f->rest, f->el.n, edges, m,
                                &f->frags, err);
    double t4 = seconds_now();
    f->timing.seconds_placement = t1 - t0, f->timing.seconds_delaunay = t2 - t1;
    f->timing.seconds_levels = t3 - t2, f->timing.seconds_fragments = t4 - t3;
    free(edges);
    ts_collider_free(&shape);
    return st;
}

static ts_status settle_under_own_weight(ts_fracture *f, ts_error *err);

ts_status ts_fracture_create(ts_fracture **out, const ts_fracture_params *p, const ts_fracture_object *objects,
                             size_t count, ts_error *err)
{
    *out = NULL;
    ts_status st = ts_params_check(&ts_fracture_param_table, p, err);
    if (st != TS_OK)
        return st;
    const ts_fracture_object *breakable = find_breakable(objects, count, err);
    if (!breakable)
        return TS_ERR_INVALID;
    ts_fracture *f = calloc(1, sizeof *f);
    if (!f)
        return ts_fail(err, TS_ERR_NOMEM, "fracture: out of memory");
    f->p = *p;
    f->law = (ts_contact_law){p->contact_time, p->restitution, p->friction};
    snprintf(f->name, sizeof f->name, "%s", breakable->in.name);
    ts_grid_init(&f->grid);
    f->proj = calloc(count + 1, sizeof *f->proj);
    f->obs = calloc(count + 1, sizeof *f->obs);
    if (!f->proj || !f->obs)
        st = ts_fail(err, TS_ERR_NOMEM, "fracture: out of memory");
    if (st == TS_OK)
        st = size_elements(f, breakable, err);
    for (size_t k = 0; st == TS_OK && k < count; k++) {   /* obstacles first: placement keeps clear of them */
        if (objects[k].role == TS_FRACTURE_OBSTACLE)
            st = add_obstacle(f, &objects[k], err);
        else if (objects[k].role > TS_FRACTURE_OBSTACLE)
            st = ts_fail(err, TS_ERR_INVALID, "object '%s': unknown fracture role %d", objects[k].in.name,
                         (int)objects[k].role);
    }
    if (st == TS_OK)
        st = build_breakable(f, breakable, err);
    for (size_t k = 0; st == TS_OK && k < count; k++)
        if (objects[k].role == TS_FRACTURE_PROJECTILE)
            st = add_projectile(f, &objects[k], err);
    for (size_t k = 0, p = 0; st == TS_OK && f->n_proj > 1 && k < count; k++)
        if (objects[k].role == TS_FRACTURE_PROJECTILE)
            st = ts_object_contacts_add(&f->projectile_contacts, &f->proj[p++].body, &objects[k].in, f->r, err);
    if (st == TS_OK) {
        const ts_particle_column load = TS_WORK_COLUMN("proj_load", &f->proj_load,
                                                       6 * (f->n_proj ? f->n_proj : 1) * sizeof *f->proj_load);
        st = ts_particles_register(&f->el, &load, 1, err);
    }
    if (st == TS_OK)
        st = settle_under_own_weight(f, err);
    if (st != TS_OK) {
        ts_fracture_destroy(f);
        return st;
    }
    *out = f;
    return TS_OK;
}

void ts_fracture_destroy(ts_fracture *f)
{
    if (!f)
        return;
    ts_particles_free(&f->el);
    ts_particles_free(&f->debris);
    free(f->spring_force), free(f->spring_torque), free(f->break_energy);
    free(f->springs), free(f->adj_start), free(f->adj), free(f->near);
    for (size_t k = 0; f->obs && k < f->n_obs; k++)
        ts_collider_free(&f->obs[k].c);
    free(f->obs), free(f->proj);
    ts_object_contacts_free(&f->projectile_contacts);
    ts_grid_free(&f->grid);
    ts_fragments_free(&f->frags);
    free(f);
}

/* ------------------------------------------------------------------ springs */

static ts_vec3 spin(const ts_fracture *f, size_t i) { return ts_v3(f->wx[i], f->wy[i], f->wz[i]); }
static ts_vec3 velocity(const ts_fracture *f, size_t i) { return ts_v3(f->vx[i], f->vy[i], f->vz[i]); }

/* Appendix A's three measures of how far a spring is from its rest: length change, bend (each element's
 * idea of the spring's direction against the real one; the larger of the two, as a cosine) and twist (the
 * two elements' turn about the spring, as a cosine). */
typedef struct spring_strain {
    double stretch, cos_bend, cos_twist;
} spring_strain;

static spring_strain strain_of(const ts_fracture *f, const spring *s, ts_vec3 d)
{
    spring_strain e;
    double L = ts_v3_length(d);
    e.stretch = fabs(L - s->length0);
    ts_vec3 dir = ts_v3_scale(d, 1.0 / L), rest_dir = ts_v3_scale(s->rest, 1.0 / s->length0);
    e.cos_bend = fmin(ts_v3_dot(rotate(f, s->a, rest_dir), dir), ts_v3_dot(rotate(f, s->b, rest_dir), dir));
    ts_vec3 ua = rotate(f, s->a, s->perp), ub = rotate(f, s->b, s->perp);
    ua = ts_v3_sub(ua, ts_v3_scale(dir, ts_v3_dot(ua, dir)));
    ub = ts_v3_sub(ub, ts_v3_scale(dir, ts_v3_dot(ub, dir)));
    e.cos_twist = ts_v3_dot(ua, ub) / sqrt(ts_v3_dot(ua, ua) * ts_v3_dot(ub, ub));
    return e;
}

/* Does the spring break? Each measure against its limit x p_i (set in set_strengths, raised by what the
 * object's own weight takes in settle_under_own_weight): strain_of's tests with its divisions multiplied out
 * (it runs for every spring at every step; the divisions were a third of its time). d = x_b - x_a; rest_a,
 * rest_b: the rest vector turned with each element. */
static int spring_breaks(const ts_fracture *f, const spring *s, ts_vec3 d, ts_vec3 rest_a, ts_vec3 rest_b)
{
    if (f->settling)
        return 0;
    const double L2 = ts_v3_dot(d, d), L = sqrt(L2);
    if (fabs(L - s->length0) > s->stretch_max)
        return 1;
    /* cos_bend = min(rest_a . d, rest_b . d) / (L0 L) */
    if (fmin(ts_v3_dot(rest_a, d), ts_v3_dot(rest_b, d)) < s->cos_bend * s->length0 * L)
        return 1;
    /* cos_twist = u_a . u_b / (|u_a| |u_b|), the turned perp vectors with their part along d taken out */
    ts_vec3 ua = rotate(f, s->a, s->perp), ub = rotate(f, s->b, s->perp);
    const double inv_L2 = 1.0 / L2;
    ua = ts_v3_sub(ua, ts_v3_scale(d, ts_v3_dot(ua, d) * inv_L2));
    ub = ts_v3_sub(ub, ts_v3_scale(d, ts_v3_dot(ub, d) * inv_L2));
    return ts_v3_dot(ua, ub) < s->cos_twist * sqrt(ts_v3_dot(ua, ua) * ts_v3_dot(ub, ub));
}

/* Eq. 7, F = -k_p dx, with dx measured between the points of the two
 * elements that were the spring's midpoint at rest, so the spring turns
 * with its elements (a rigid motion stretches nothing) and resists bending
 * through the torques. A dashpot on the same points damps the ringing. */
static size_t spring_pass(ts_fracture *f)
{
    size_t newly_broken = 0;
    #pragma omp parallel for schedule(static) reduction(+ : newly_broken)
    for (size_t k = 0; k < f->n_springs; k++) {
        spring *s = &f->springs[k];
        double *F = f->spring_force + 3 * k, *T = f->spring_torque + 6 * k;
        f->break_energy[k] = 0;
        if (s->broken) {
            memset(F, 0, 3 * sizeof *F), memset(T, 0, 6 * sizeof *T);
            continue;
        }
        ts_vec3 xa = element_pos(f, s->a), xb = element_pos(f, s->b);
        const ts_vec3 rest_a = rotate(f, s->a, s->rest), rest_b = rotate(f, s->b, s->rest);
        ts_vec3 ra = ts_v3_scale(rest_a, 0.5), rb = ts_v3_scale(rest_b, -0.5); /* halving is exact */
        ts_vec3 dx = ts_v3_sub(ts_v3_add(xb, rb), ts_v3_add(xa, ra));
        if (spring_breaks(f, s, ts_v3_sub(xb, xa), rest_a, rest_b)) {
            s->broken = 1;          /* for good: it never acts again */
            newly_broken++;
            f->break_energy[k] = 0.5 * f->k_p * ts_v3_dot(dx, dx);
            memset(F, 0, 3 * sizeof *F), memset(T, 0, 6 * sizeof *T);
            continue;
        }
        ts_vec3 va = ts_v3_add(velocity(f, s->a), ts_v3_cross(spin(f, s->a), ra));
        ts_vec3 vb = ts_v3_add(velocity(f, s->b), ts_v3_cross(spin(f, s->b), rb));
        ts_vec3 Fa = ts_v3_add(ts_v3_scale(dx, f->k_p), ts_v3_scale(ts_v3_sub(vb, va), f->c_p)); /* eq. 7 on a */
        ts_vec3 Ta = ts_v3_cross(ra, Fa), Tb = ts_v3_cross(rb, ts_v3_scale(Fa, -1.0));
        F[0] = Fa.x, F[1] = Fa.y, F[2] = Fa.z;
        T[0] = Ta.x, T[1] = Ta.y, T[2] = Ta.z, T[3] = Tb.x, T[4] = Tb.y, T[5] = Tb.z;
    }
    return newly_broken;
}

/* ----------------------------------------------------------------- contacts */

/* Element i's candidates within `reach`, written to out (or only counted when out is NULL). */
static uint32_t find_near(const ts_fracture *f, size_t i, double reach, uint32_t *out)
{
    ts_neighbor_ranges nr;
    ts_grid_neighbor_ranges(&f->grid, f->gx[i], f->gy[i], f->gz[i], &nr);
    ts_vec3 xi = element_pos(f, i);
    uint32_t count = 0;
    for (int k = 0; k < nr.n; k++)
        for (uint32_t s = nr.begin[k]; s < nr.end[k]; s++) {
            uint32_t j = f->grid.sorted[s];
            ts_vec3 d = ts_v3_sub(element_pos(f, j), xi);
            if (j != i && ts_v3_dot(d, d) < reach * reach) {
                if (out)
                    out[count] = j;
                count++;
            }
        }
    return count;
}

/* The contact candidates, built when an element may have come within 2r of one not listed. */
static ts_status update_near_lists(ts_fracture *f, ts_error *err)
{
    if (!f->near_stale) {
        double moved = 0;
        #pragma omp parallel for reduction(max : moved) schedule(static)
        for (size_t i = 0; i < f->el.n; i++) {
            double dx = f->x[i] - f->x_built[3 * i], dy = f->y[i] - f->x_built[3 * i + 1];
            double dz = f->z[i] - f->x_built[3 * i + 2];
            moved = fmax(moved, dx * dx + dy * dy + dz * dz);
        }
        if (moved < 0.25 * f->skin * f->skin)
            return TS_OK;
    }
    f->near_stale = 0;
    double reach = 2.0 * f->r + f->skin;
    ts_status st = build_grid(f, reach, err);
    if (st != TS_OK)
        return st;
    f->near_start[0] = 0;
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < f->el.n; i++)
        f->near_start[i + 1] = find_near(f, i, reach, NULL);
    for (size_t i = 0; i < f->el.n; i++)
        f->near_start[i + 1] += f->near_start[i];
    if (ts_grow((void **)&f->near, &f->near_cap, f->near_start[f->el.n] + 1, sizeof *f->near) < 0)
        return ts_fail(err, TS_ERR_NOMEM, "fracture: out of memory for contact lists");
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < f->el.n; i++) {
        uint32_t *list = f->near + f->near_start[i], count = f->near_start[i + 1] - f->near_start[i];
        find_near(f, i, reach, list);
        for (uint32_t a = 1; a < count; a++)    /* by index: the sums do not depend on when the list was built */
            for (uint32_t b = a; b > 0 && list[b - 1] > list[b]; b--) {
                uint32_t t = list[b];
                list[b] = list[b - 1], list[b - 1] = t;
            }
        f->x_built[3 * i] = f->x[i], f->x_built[3 * i + 1] = f->y[i], f->x_built[3 * i + 2] = f->z[i];
    }
    return TS_OK;
}

/* Eqs 2, 4-6 for element i: gravity, its springs, and its contacts. */
static void element_forces(ts_fracture *f, size_t i, double frame_s)
{
    ts_vec3 F = ts_v3_scale(ts_v3(f->p.gravity[0], f->p.gravity[1], f->p.gravity[2]), f->M), T = ts_v3(0, 0, 0);
    for (uint32_t k = f->adj_start[i]; k < f->adj_start[i + 1]; k++) {
        const uint32_t s = f->adj[k] >> 1;
        const double *Fs = f->spring_force + 3 * s, *Ts = f->spring_torque + 6 * s;
        const int is_a = !(f->adj[k] & 1);
        double sign = is_a ? 1.0 : -1.0;
        F = ts_v3_add(F, ts_v3(sign * Fs[0], sign * Fs[1], sign * Fs[2]));
        T = ts_v3_add(T, is_a ? ts_v3(Ts[0], Ts[1], Ts[2]) : ts_v3(Ts[3], Ts[4], Ts[5]));
    }
    ts_vec3 xi = element_pos(f, i), vi = velocity(f, i), wi = spin(f, i);
    double r = f->r, two_r = 2.0 * r;
    for (uint32_t k = f->near_start[i]; k < f->near_start[i + 1]; k++) {
        uint32_t j = f->near[k];
        ts_vec3 d = ts_v3_sub(element_pos(f, j), xi);
        double d2 = ts_v3_dot(d, d);
        if (d2 >= two_r * two_r || d2 == 0)
            continue;
        double len = sqrt(d2);
        ts_vec3 u_n = ts_v3_scale(d, 1.0 / len);                 /* eq. 2 */
        ts_vec3 v_c = ts_contact_velocity(vi, wi, r, velocity(f, j), spin(f, j), r, u_n);
        ts_contact_result c = ts_contact_force_dashpot(&f->law, f->k, f->c, two_r - len, u_n, v_c);
        F = ts_v3_add(F, c.force);
        T = ts_v3_add(T, ts_v3_scale(ts_v3_cross(u_n, c.tangential), r));
    }
    for (size_t k = 0; k < f->n_proj; k++) {
        projectile *pr = &f->proj[k];
        double *load = f->proj_load + 6 * (i * f->n_proj + k);
        memset(load, 0, 6 * sizeof *load);
        ts_vec3 d = ts_v3_sub(pr->body.rb.x, xi);
        double len = ts_v3_length(d);
        if (!pr->active || len >= r + pr->radius || len == 0)
            continue;
        ts_vec3 u_n = ts_v3_scale(d, 1.0 / len);
        ts_vec3 point = ts_v3_add(xi, ts_v3_scale(u_n, r));   /* where they touch, the body's own velocity there */
        ts_vec3 v_c = ts_contact_velocity(vi, wi, r, ts_rigid_object_point_velocity(&pr->body, f->now.frame_dt, frame_s,
                                                                                     point), ts_v3(0, 0, 0), 0.0, u_n);
        ts_contact_result c = ts_contact_force_dashpot(&f->law, pr->k, pr->c, r + pr->radius - len, u_n, v_c);
        F = ts_v3_add(F, c.force);
        T = ts_v3_add(T, ts_v3_scale(ts_v3_cross(u_n, c.tangential), r));
        ts_vec3 tau = ts_v3_scale(ts_v3_cross(u_n, c.force), pr->radius); /* (-R u_n) x (-force) */
        load[0] = -c.force.x, load[1] = -c.force.y, load[2] = -c.force.z;
        load[3] = tau.x, load[4] = tau.y, load[5] = tau.z;
    }
    for (size_t k = 0; k < f->n_obs; k++) {
        ts_collider_hit hit;
        if (!ts_collider_query(&f->obs[k].c, frame_s, xi, &hit) || hit.distance >= r)
            continue;
        ts_vec3 u_n = ts_v3_scale(hit.normal, -1.0);
        ts_vec3 v_c = ts_contact_velocity(vi, wi, r, hit.velocity, ts_v3(0, 0, 0), 0.0, u_n);
        ts_contact_result c = ts_contact_force_dashpot(&f->law, f->k_wall, f->c_wall, r - hit.distance, u_n, v_c);
        F = ts_v3_add(F, c.force);
        T = ts_v3_add(T, ts_v3_scale(ts_v3_cross(u_n, c.tangential), r));
    }
    f->force[3 * i] = F.x, f->force[3 * i + 1] = F.y, f->force[3 * i + 2] = F.z;
    f->torque[3 * i] = T.x, f->torque[3 * i + 1] = T.y, f->torque[3 * i + 2] = T.z;
}

/* Eq. 3 and its rotational twin: symplectic Euler, orientation by the exact exponential. */
static void integrate_elements(ts_fracture *f, double dt)
{
    double inv_M = 1.0 / f->M, inv_I = 1.0 / f->I;
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < f->el.n; i++) {
        if (f->fixed[i])
            continue;
        f->vx[i] += dt * inv_M * f->force[3 * i];
        f->vy[i] += dt * inv_M * f->force[3 * i + 1];
        f->vz[i] += dt * inv_M * f->force[3 * i + 2];
        f->x[i] += dt * f->vx[i], f->y[i] += dt * f->vy[i], f->z[i] += dt * f->vz[i];
        f->wx[i] += dt * inv_I * f->torque[3 * i];
        f->wy[i] += dt * inv_I * f->torque[3 * i + 1];
        f->wz[i] += dt * inv_I * f->torque[3 * i + 2];
        ts_quat dq = ts_quat_from_rotation_vector(ts_v3_scale(spin(f, i), dt));
        set_rotation(f, i, ts_quat_normalize(ts_quat_mul(dq, f->q[i])));
    }
}

/* ------------------------------------------------------ own weight, first */

/* The breakable under its own weight before the first frame. The pore springs are far softer than the
 * material they stand for (their stiffness is chosen for the time step: concrete would need steps 10^4
 * times shorter), so gravity strains the model about that much more than the real object; against the
 * weakest springs' limits (p_H x 2 % of a length) that alone broke springs of an untouched wall, and so did
 * the ringing of gravity switched on at once. So the object first comes to rest on its supports
 * (dynamic relaxation with kinetic damping: all velocities zeroed whenever the kinetic energy passes a
 * peak; nothing breaks), the bake starts from that rest, and each spring's limits are raised by the
 * strain its share of the weight gives it: impacts must add the paper's limits to it. A free piece
 * relaxes back to its rest lengths, which is within the raised limits too. An object nothing holds up
 * (it falls more than an element radius while settling) starts as it was placed, limits unchanged. */
#define SETTLE_MAX_STEPS 20000
#define SETTLE_INERTIA 8.0
#define SETTLE_BLOCK 1000
#define SETTLE_TOLERANCE 1e-3    /* of an element's weight: the largest force left on an element at rest */
static void stop_elements(ts_fracture *f)
{
    const size_t n = f->el.n;
    memset(f->vx, 0, n * sizeof *f->vx), memset(f->vy, 0, n * sizeof *f->vy), memset(f->vz, 0, n * sizeof *f->vz);
    memset(f->wx, 0, n * sizeof *f->wx), memset(f->wy, 0, n * sizeof *f->wy), memset(f->wz, 0, n * sizeof *f->wz);
}

/* How far the centre of the elements has moved from start (3 per element). */
static double centre_shift(const ts_fracture *f, const double *start)
{
    double shift[3] = {0, 0, 0};
    for (size_t i = 0; i < f->el.n; i++)
        shift[0] += f->x[i] - start[3 * i], shift[1] += f->y[i] - start[3 * i + 1], shift[2] += f->z[i] - start[3 * i + 2];
    return sqrt(shift[0] * shift[0] + shift[1] * shift[1] + shift[2] * shift[2]) / (double)f->el.n;
}

static ts_status settle_under_own_weight(ts_fracture *f, ts_error *err)
{
    const size_t n = f->el.n;
    double *start = malloc((3 * n + 1) * sizeof *start);
    ts_quat *q0 = malloc((n + 1) * sizeof *q0);
    if (!start || !q0) {
        free(start), free(q0);
        return ts_fail(err, TS_ERR_NOMEM, "fracture: out of memory");
    }
    for (size_t i = 0; i < n; i++)
        start[3 * i] = f->x[i], start[3 * i + 1] = f->y[i], start[3 * i + 2] = f->z[i], q0[i] = f->q[i];
    /* The rest does not depend on the inertia, so the spin, whose mode is the fastest, is made slower
     * (8x the inertia) and the step longer while settling: 2.5x fewer steps, measured. */
    const double I_real = f->I, c_p = f->c_p, dt_bonds = f->dt_bonds;
    f->I *= SETTLE_INERTIA;
    bond_dashpot_and_step(f);
    const double dt = fmin(f->law.contact_time / 4.0, 1.3 * f->dt_bonds);
    f->settling = 1;
    f->now = (ts_step_context){0};
    double last = 0, moved = 0, block_best = INFINITY, previous_best = INFINITY;
    const double weight = f->M * fmax(sqrt(f->p.gravity[0] * f->p.gravity[0] + f->p.gravity[1] * f->p.gravity[1] +
                                           f->p.gravity[2] * f->p.gravity[2]), 1e-9);
    ts_status st = TS_OK;
    /* thousands of short steps, as in the bake: the thread count chosen by timing them, as there (the
     * set-up's count, lowered on a busy machine, is the tuner's start) */
    const int setup_threads = omp_get_max_threads();
    ts_thread_tuner threads;
    ts_thread_tuner_init(&threads, ts_threads_allowed());
    long step;
    for (step = 0; step < SETTLE_MAX_STEPS && st == TS_OK; step++) {
        ts_thread_tuner_before(&threads);
        double started = seconds_now();
        if ((st = update_near_lists(f, err)) != TS_OK)
            break;
        spring_pass(f);
        #pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++)
            element_forces(f, i, 0.0);
        integrate_elements(f, dt);
        ts_thread_tuner_after(&threads, seconds_now() - started);
        /* at rest when no element is pushed by more than SETTLE_TOLERANCE of its weight, nor turned by
         * that much force at its radius (a slow lean has small speeds but not small forces) */
        double kinetic = 0, residual = 0;   /* in element order: the same on any thread count */
        for (size_t i = 0; i < n; i++) {
            kinetic += f->M * (f->vx[i] * f->vx[i] + f->vy[i] * f->vy[i] + f->vz[i] * f->vz[i]) +
                       f->I * (f->wx[i] * f->wx[i] + f->wy[i] * f->wy[i] + f->wz[i] * f->wz[i]);
            if (!f->fixed[i]) {
                const double *F = f->force + 3 * i, *T = f->torque + 3 * i;
                residual = fmax(residual, fmax(sqrt(F[0] * F[0] + F[1] * F[1] + F[2] * F[2]),
                                               sqrt(T[0] * T[0] + T[1] * T[1] + T[2] * T[2]) / f->r));
            }
        }
        if (residual < SETTLE_TOLERANCE * weight)
            break;
        /* or when it has stopped falling: an element sliding on the ground (contacts hold it by a dashpot,
         * not a static friction) keeps a few thousandths of its weight for good */
        block_best = fmin(block_best, residual);
        if (step % SETTLE_BLOCK == SETTLE_BLOCK - 1) {
            if (block_best > 0.9 * previous_best)
                break;
            previous_best = block_best, block_best = INFINITY;
        }
        if (kinetic < last) {            /* past a peak: stop everything where it is */
            stop_elements(f);
            kinetic = 0;
        }
        last = kinetic;
        if ((step & 63) == 63 && centre_shift(f, start) > f->r)   /* falling or sliding away: nothing holds it */
            break;
    }
    omp_set_num_threads(setup_threads);
    f->settling = 0;
    f->I = I_real, f->c_p = c_p, f->dt_bonds = dt_bonds;
    for (size_t i = 0; i < n; i++)
        moved = fmax(moved, sqrt(pow(f->x[i] - start[3 * i], 2) + pow(f->y[i] - start[3 * i + 1], 2) +
                                 pow(f->z[i] - start[3 * i + 2], 2)));
    if (st == TS_OK && centre_shift(f, start) > f->r) {   /* not held up (a loose element may fall alone): as placed */
        for (size_t i = 0; i < n; i++) {
            f->x[i] = start[3 * i], f->y[i] = start[3 * i + 1], f->z[i] = start[3 * i + 2];
            set_rotation(f, i, q0[i]);
        }
        moved = 0;
    } else if (st == TS_OK) {
        #pragma omp parallel for schedule(static)
        for (size_t k = 0; k < f->n_springs; k++) {
            spring *sp = &f->springs[k];
            spring_strain e = strain_of(f, sp, ts_v3_sub(element_pos(f, sp->b), element_pos(f, sp->a)));
            sp->stretch_max += e.stretch;
            sp->cos_bend = cos(fmin(acos(sp->cos_bend) + acos(fmax(fmin(e.cos_bend, 1.0), -1.0)), M_PI));
            sp->cos_twist = cos(fmin(acos(sp->cos_twist) + acos(fmax(fmin(e.cos_twist, 1.0), -1.0)), M_PI));
        }
    }
    stop_elements(f);
    f->near_stale = 1;
    f->settle_steps = step;
    f->settle_sag = moved;
    free(start), free(q0);
    return st;
}

/* Projectiles: the elements' reactions summed in element order, gravity, the colliders, each other. */
static void move_projectiles(ts_fracture *f, double dt, double s_end)
{
    ts_vec3 g = ts_v3(f->p.gravity[0], f->p.gravity[1], f->p.gravity[2]);
    for (size_t k = 0; k < f->n_proj; k++) {
        projectile *pr = &f->proj[k];
        if (!pr->active)
            continue;
        if (pr->body.keyframed) {
            ts_rigid_object_follow(&pr->body, s_end);
            continue;
        }
        ts_rigid_clear_forces(&pr->body.rb);
        ts_vec3 F = ts_v3_scale(g, pr->body.rb.mass), T = ts_v3(0, 0, 0);
        for (size_t i = 0; i < f->el.n; i++) {
            const double *load = f->proj_load + 6 * (i * f->n_proj + k);
            F = ts_v3_add(F, ts_v3(load[0], load[1], load[2]));
            T = ts_v3_add(T, ts_v3(load[3], load[4], load[5]));
        }
        pr->body.rb.force = F, pr->body.rb.torque = T;
        ts_rigid_integrate(&pr->body.rb, dt);
        for (size_t o = 0; o < f->n_obs; o++) {
            ts_collider_hit hit;
            if (ts_collider_query(&f->obs[o].c, s_end, pr->body.rb.x, &hit) && hit.distance < pr->radius) {
                ts_vec3 point = ts_v3_sub(pr->body.rb.x, ts_v3_scale(hit.normal, hit.distance));
                ts_rigid_resolve_contact(&pr->body.rb, point, hit.normal, pr->radius - hit.distance, hit.velocity,
                                         f->p.restitution, f->p.friction);
            }
        }
    }
    for (size_t k = 0; k < f->projectile_contacts.n; k++) /* one not yet launched is held apart */
        ts_object_contacts_leave_out(&f->projectile_contacts, k, !f->proj[k].active);
    ts_object_contacts_resolve(&f->projectile_contacts, f->now.frame_dt, s_end);
}

/* ------------------------------------------------------------------- debris */

/* Rosin-Rammler: P(size > d) = exp(-(d / d_bar)^k), sampled by inversion. */
static double debris_diameter(const ts_fracture *f, double u)
{
    double d = f->p.debris_size * pow(-log(1.0 - u), 1.0 / f->p.debris_spread);
    return fmin(fmax(d, 0.05 * f->p.debris_size), 2.0 * f->r);
}

/* Breaks that released more than debris_energy throw debris from the
 * spring's midpoint, in spring order (the same on any thread count). */
static ts_status emit_debris(ts_fracture *f, ts_error *err)
{
    if (f->p.debris_energy <= 0)
        return TS_OK;
    for (size_t k = 0; k < f->n_springs; k++) {
        double E = f->break_energy[k];
        if (E <= f->p.debris_energy)
            continue;
        int count = (int)fmin(E / f->p.debris_energy, MAX_DEBRIS_PER_BREAK);
        if (f->debris.n + (size_t)count > f->debris.max)
            return TS_OK;
        ts_status st = ts_particles_reserve(&f->debris, f->debris.n + (size_t)count, err);
        if (st != TS_OK)
            return st;
        const spring *s = &f->springs[k];
        ts_vec3 mid = ts_v3_scale(ts_v3_add(element_pos(f, s->a), element_pos(f, s->b)), 0.5);
        ts_vec3 v = ts_v3_scale(ts_v3_add(velocity(f, s->a), velocity(f, s->b)), 0.5);
        double speed = sqrt(2.0 * E / f->M);     /* what the released energy would give an element */
        for (int q = 0; q < count; q++) {
            uint32_t id = f->next_debris++;
            double u1 = ts_rng_hash_uniform(f->p.seed, id, 1), u2 = ts_rng_hash_uniform(f->p.seed, id, 2);
            double u3 = ts_rng_hash_uniform(f->p.seed, id, 3), u4 = ts_rng_hash_uniform(f->p.seed, id, 4);
            double cz = 2 * u1 - 1, phi = 2 * M_PI * u2, sz = sqrt(1 - cz * cz);
            ts_vec3 dir = ts_v3(sz * cos(phi), sz * sin(phi), cz);
            ts_vec3 vd = ts_v3_add(v, ts_v3_scale(dir, speed * (0.5 + u3)));
            size_t d = f->debris.n++;
            f->dx[d] = mid.x, f->dy[d] = mid.y, f->dz[d] = mid.z;
            f->dvx[d] = vd.x, f->dvy[d] = vd.y, f->dvz[d] = vd.z;
            f->dr[d] = 0.5 * debris_diameter(f, u4);
            f->did[d] = id, f->drest[d] = 0;
        }
    }
    return TS_OK;
}

/* Debris fly, bounce off the colliders and come to rest (they carry no mass of the object: see docs/fracture.md). */
static void move_debris(ts_fracture *f, double dt, double s_end)
{
    #pragma omp parallel for schedule(static) if (f->debris.n > 1024)
    for (size_t d = 0; d < f->debris.n; d++) {
        if (f->drest[d])
            continue;
        ts_vec3 v = ts_v3_add(ts_v3(f->dvx[d], f->dvy[d], f->dvz[d]),
                              ts_v3_scale(ts_v3(f->p.gravity[0], f->p.gravity[1], f->p.gravity[2]), dt));
        ts_vec3 x = ts_v3_add(ts_v3(f->dx[d], f->dy[d], f->dz[d]), ts_v3_scale(v, dt));
        for (size_t o = 0; o < f->n_obs; o++) {
            ts_collider_hit hit;
            if (!ts_collider_query(&f->obs[o].c, s_end, x, &hit) || hit.distance >= f->dr[d])
                continue;
            x = ts_v3_add(x, ts_v3_scale(hit.normal, f->dr[d] - hit.distance));
            ts_vec3 rel = ts_v3_sub(v, hit.velocity);
            double vn = ts_v3_dot(rel, hit.normal);
            if (vn < 0) {
                ts_vec3 vt = ts_v3_sub(rel, ts_v3_scale(hit.normal, vn));
                double vt_len = ts_v3_length(vt), slow = fmin(vt_len, -f->p.friction * (1 + f->p.restitution) * vn);
                vt = vt_len > 0 ? ts_v3_scale(vt, 1.0 - slow / vt_len) : vt;
                v = ts_v3_add(hit.velocity, ts_v3_add(vt, ts_v3_scale(hit.normal, -f->p.restitution * vn)));
            }
            if (ts_v3_length(ts_v3_sub(v, hit.velocity)) < 0.02 && ts_v3_length(hit.velocity) == 0)
                f->drest[d] = 1, v = ts_v3(0, 0, 0);
        }
        f->dx[d] = x.x, f->dy[d] = x.y, f->dz[d] = x.z;
        f->dvx[d] = v.x, f->dvy[d] = v.y, f->dvz[d] = v.z;
    }
}

/* ------------------------------------------------------------- frame loop */

static ts_status fracture_begin_frame(void *state, const ts_step_context *now, ts_error *err)
{
    (void)err;
    ts_fracture *f = state;
    f->now = *now;
    int i = now->frame - f->p.frame_start;
    for (size_t k = 0; k < f->n_obs; k++)
        ts_collider_follow(&f->obs[k].c, &f->obs[k].m, i, now->frame_dt);
    for (size_t k = 0; k < f->n_proj; k++) {
        projectile *pr = &f->proj[k];
        ts_rigid_object_begin_frame(&pr->body, i);
        if (!pr->active && now->frame >= pr->launch_frame) {   /* fired: from its start pose, at its velocity */
            pr->active = 1;
            ts_rigid_object_launch(&pr->body);
        }
    }
    return TS_OK;
}

static ts_status fracture_stable_dt(void *state, double *dt, ts_error *err)
{
    (void)err;
    ts_fracture *f = state;
    *dt = fmin(f->law.contact_time / f->p.steps_per_contact, f->dt_bonds);
    return TS_OK;
}

static ts_status check_finite(const ts_fracture *f, ts_error *err)
{
    for (size_t i = 0; i < f->el.n; i++)
        if (!isfinite(f->x[i] + f->y[i] + f->z[i] + f->vx[i] + f->vy[i] + f->vz[i] + f->wx[i] + f->wy[i] + f->wz[i]))
            return ts_fail(err, TS_ERR_UNSTABLE, "element %zu of breakable '%s' is not finite; raise Steps per "
                           "Contact or lower Bond Stiffness", i, f->name);
    for (size_t k = 0; k < f->n_proj; k++)
        if (!isfinite(f->proj[k].body.rb.x.x + f->proj[k].body.rb.x.y + f->proj[k].body.rb.x.z))
            return ts_fail(err, TS_ERR_UNSTABLE, "projectile '%s' is not finite", f->proj[k].body.name);
    return TS_OK;
}

static ts_status fracture_step(void *state, const ts_step_context *now, ts_error *err)
{
    ts_fracture *f = state;
    const double dt = now->dt, s_end = now->s_end;
    f->now = *now;
    ts_status st = update_near_lists(f, err);
    if (st != TS_OK)
        return st;
    size_t newly_broken = spring_pass(f);
    f->broken += newly_broken;
    double s_mid = 0.5 * (now->s_begin + s_end);
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < f->el.n; i++)
        element_forces(f, i, s_mid);
    integrate_elements(f, dt);
    move_projectiles(f, dt, s_end);
    if (newly_broken && (st = emit_debris(f, err)) != TS_OK)
        return st;
    f->debris_dt += dt;
    if ((f->steps & (DEBRIS_EVERY - 1)) == 0 || s_end >= 1.0) {  /* ballistic: a coarser step is plenty */
        move_debris(f, f->debris_dt, s_end);
        f->debris_dt = 0;
    }
    f->steps++;
    return (f->steps & 63) == 0 ? check_finite(f, err) : TS_OK;
}

/* ------------------------------------------------------------------ outputs */

/* Pieces: elements joined by unbroken springs; each labelled by its smallest element index. */
static void label_pieces(ts_fracture *f)
{
    for (size_t i = 0; i < f->el.n; i++)
        f->parent[i] = (uint32_t)i;
    for (size_t k = 0; k < f->n_springs; k++) {
        if (f->springs[k].broken)
            continue;
        uint32_t A = ts_find_root(f->parent, f->springs[k].a), B = ts_find_root(f->parent, f->springs[k].b);
        if (A != B)     /* the smaller index stays the root */
            f->parent[A > B ? A : B] = A < B ? A : B;
    }
    for (size_t i = 0; i < f->el.n; i++)
        f->piece[i] = ts_find_root(f->parent, (uint32_t)i);
}

static ts_status write_fragments(ts_fracture *f, ts_frame_output *out, ts_error *err)
{
    ts_frame g;
    ts_frame_init(&g, out->frame, out->time, f->frags.triangle_count);
    ts_status st = ts_frame_add(&g, "position", TS_ATTR_F32, 9, f->frags.position, err);
    if (st == TS_OK) st = ts_frame_add(&g, "uv", TS_ATTR_F32, 6, f->frags.uv, err);
    if (st == TS_OK) st = ts_frame_add(&g, "element", TS_ATTR_U32, 1, f->frags.element, err);
    if (st == TS_OK) st = ts_frame_add(&g, "material", TS_ATTR_U8, 1, f->frags.material, err);
    return st == TS_OK ? ts_output_particles(out, "fragments", &g, err) : st;
}

static ts_status write_elements(ts_fracture *f, ts_frame_output *out, ts_error *err)
{
    label_pieces(f);
    float *pos = malloc((3 * f->el.n + 1) * sizeof *pos), *rot = malloc((4 * f->el.n + 1) * sizeof *rot);
    uint32_t *ids = malloc((f->el.n + 1) * sizeof *ids);
    ts_status st = TS_OK;
    if (!pos || !rot || !ids)
        st = ts_fail(err, TS_ERR_NOMEM, "fracture: out of memory writing frame %d", out->frame);
    for (size_t i = 0; st == TS_OK && i < f->el.n; i++) {
        pos[3 * i] = (float)f->x[i], pos[3 * i + 1] = (float)f->y[i], pos[3 * i + 2] = (float)f->z[i];
        rot[4 * i] = (float)f->q[i].w, rot[4 * i + 1] = (float)f->q[i].x;
        rot[4 * i + 2] = (float)f->q[i].y, rot[4 * i + 3] = (float)f->q[i].z;
        ids[i] = (uint32_t)i;
    }
    ts_frame g;
    ts_frame_init(&g, out->frame, out->time, f->el.n);
    if (st == TS_OK) st = ts_frame_add(&g, "position", TS_ATTR_F32, 3, pos, err);
    if (st == TS_OK) st = ts_frame_add(&g, "rotation", TS_ATTR_F32, 4, rot, err);
    if (st == TS_OK) st = ts_frame_add(&g, "piece", TS_ATTR_U32, 1, f->piece, err);
    if (st == TS_OK) st = ts_frame_add(&g, "id", TS_ATTR_U32, 1, ids, err);
    if (st == TS_OK) st = ts_output_particles(out, "elements", &g, err);
    free(pos), free(rot), free(ids);
    return st;
}

static ts_status write_debris(ts_fracture *f, ts_frame_output *out, ts_error *err)
{
    size_t m = f->debris.n;
    float *pos = malloc((3 * m + 1) * sizeof *pos), *vel = malloc((3 * m + 1) * sizeof *vel);
    float *rad = malloc((m + 1) * sizeof *rad);
    ts_status st = TS_OK;
    if (!pos || !vel || !rad)
        st = ts_fail(err, TS_ERR_NOMEM, "fracture: out of memory writing frame %d", out->frame);
    for (size_t d = 0; st == TS_OK && d < m; d++) {
        pos[3 * d] = (float)f->dx[d], pos[3 * d + 1] = (float)f->dy[d], pos[3 * d + 2] = (float)f->dz[d];
        vel[3 * d] = (float)f->dvx[d], vel[3 * d + 1] = (float)f->dvy[d], vel[3 * d + 2] = (float)f->dvz[d];
        rad[d] = (float)f->dr[d];
    }
    ts_frame g;
    ts_frame_init(&g, out->frame, out->time, m);
    if (st == TS_OK) st = ts_frame_add(&g, "position", TS_ATTR_F32, 3, pos, err);
    if (st == TS_OK) st = ts_frame_add(&g, "velocity", TS_ATTR_F32, 3, vel, err);
    if (st == TS_OK) st = ts_frame_add(&g, "radius", TS_ATTR_F32, 1, rad, err);
    if (st == TS_OK) st = ts_frame_add(&g, "id", TS_ATTR_U32, 1, f->did, err);
    if (st == TS_OK) st = ts_output_particles(out, "debris", &g, err);
    free(pos), free(vel), free(rad);
    return st;
}

static void projectile_pose(const void *state, size_t k, ts_vec3 *position, ts_quat *rotation)
{
    ts_rigid_object_origin_pose(&((const ts_fracture *)state)->proj[k].body, position, rotation);
}

static ts_status fracture_write_frame(void *state, ts_frame_output *out, ts_error *err)
{
    ts_fracture *f = state;
    ts_status st = out->frame == f->p.frame_start ? write_fragments(f, out, err) : TS_OK;
    if (st == TS_OK)
        st = write_elements(f, out, err);
    if (st == TS_OK)
        st = write_debris(f, out, err);
    if (st == TS_OK && f->n_proj > 0)
        st = ts_output_transforms(out, "rigid", f->n_proj, projectile_pose, f, err);
    return st;
}

/* ------------------------------------------------------------- checkpoint */

/* Sections: "elements", "broken" (the indices of the broken springs: the
 * springs themselves are rebuilt the same from the scene, placement being
 * seeded), "debris", "projectiles" and "projectile_active", "counters". */
static ts_status fracture_save_state(void *state, ts_checkpoint *cp, ts_error *err)
{
    ts_fracture *f = state;
    uint32_t *broken = ts_checkpoint_scratch(cp, f->n_springs * sizeof *broken, err);
    int32_t *active = ts_checkpoint_scratch(cp, f->n_proj * sizeof *active, err);
    if (!broken || !active)
        return TS_ERR_NOMEM;
    size_t n_broken = 0;
    for (size_t k = 0; k < f->n_springs; k++)
        if (f->springs[k].broken)
            broken[n_broken++] = (uint32_t)k;
    for (size_t k = 0; k < f->n_proj; k++)
        active[k] = f->proj[k].active;
    const ts_column broken_column = {"spring", TS_ATTR_U32, 1, broken}, active_column = {"active", TS_ATTR_I32, 1, active};
    const ts_value counters[] = {{"springs", (double)f->n_springs}, {"next_debris", f->next_debris},
                                 {"steps", (double)f->steps}};
    ts_status st = ts_particles_save(&f->el, cp, "elements", err);
    if (st == TS_OK) st = ts_checkpoint_put(cp, "broken", n_broken, &broken_column, 1, err);
    if (st == TS_OK) st = ts_particles_save(&f->debris, cp, "debris", err);
    if (st == TS_OK)
        st = ts_rigid_save(cp, "projectiles", f->proj, offsetof(projectile, body.rb), sizeof *f->proj, f->n_proj, err);
    if (st == TS_OK) st = ts_checkpoint_put(cp, "projectile_active", f->n_proj, &active_column, 1, err);
    if (st == TS_OK) st = ts_checkpoint_put_values(cp, "counters", counters, 3, err);
    return st;
}

ts_status ts_fracture_restore(ts_fracture *f, const ts_checkpoint *cp, ts_error *err)
{
    const size_t n = f->el.n;
    uint64_t rows = 0, n_broken = 0;
    ts_value counters[] = {{"springs", 0}, {"next_debris", 0}, {"steps", 0}};
    ts_status st = ts_checkpoint_get_values(cp, "counters", counters, 3, err);
    if (st == TS_OK) st = ts_checkpoint_rows(cp, "elements", &rows, err);
    if (st == TS_OK && ((size_t)counters[0].value != f->n_springs || rows != n))
        st = ts_fail(err, TS_ERR_CORRUPT, "%s: it is of a different scene (%llu elements and %g springs, this one has "
                     "%zu and %zu); bake again from the start", cp->source, (unsigned long long)rows,
                     counters[0].value, n, f->n_springs);
    if (st == TS_OK) st = ts_particles_restore(&f->el, cp, "elements", err);
    if (st == TS_OK) st = ts_particles_restore(&f->debris, cp, "debris", err);
    if (st == TS_OK) st = ts_checkpoint_rows(cp, "broken", &n_broken, err);
    if (st != TS_OK)
        return st;
    uint32_t *broken = malloc(((size_t)n_broken + 1) * sizeof *broken);
    int32_t *active = malloc((f->n_proj + 1) * sizeof *active);
    const ts_column broken_column = {"spring", TS_ATTR_U32, 1, broken}, active_column = {"active", TS_ATTR_I32, 1, active};
    st = broken && active ? TS_OK : ts_fail(err, TS_ERR_NOMEM, "fracture: out of memory restoring the checkpoint");
    if (st == TS_OK) st = ts_checkpoint_get(cp, "broken", n_broken, &broken_column, 1, err);
    if (st == TS_OK)
        st = ts_rigid_restore(cp, "projectiles", f->proj, offsetof(projectile, body.rb), sizeof *f->proj, f->n_proj,
                              err);
    if (st == TS_OK) st = ts_checkpoint_get(cp, "projectile_active", f->n_proj, &active_column, 1, err);
    for (size_t k = 0; st == TS_OK && k < f->n_springs; k++)
        f->springs[k].broken = 0;
    for (size_t k = 0; st == TS_OK && k < n_broken; k++) {
        if (broken[k] >= f->n_springs)
            st = ts_fail(err, TS_ERR_CORRUPT, "%s: spring %u does not exist; bake again from the start", cp->source,
                         broken[k]);
        else
            f->springs[broken[k]].broken = 1;
    }
    for (size_t k = 0; st == TS_OK && k < f->n_proj; k++)
        f->proj[k].active = active[k];
    free(broken);
    free(active);
    if (st != TS_OK)
        return st;
    for (size_t i = 0; i < n; i++)
        set_rotation(f, i, f->q[i]);
    f->broken = (size_t)n_broken;
    f->next_debris = (uint32_t)counters[1].value, f->steps = (long)counters[2].value;
    f->near_stale = 1;
    return TS_OK;
}

void ts_fracture_get_stats(const ts_fracture *f, ts_fracture_stats *st)
{
    *st = f->timing;
    st->elements = f->el.n, st->springs = f->n_springs, st->broken = f->broken, st->debris = f->debris.n;
    st->levels = f->levels, st->element_radius = f->r, st->mass = f->M * f->el.n, st->steps = f->steps;
    st->settle_steps = f->settle_steps, st->settle_sag = f->settle_sag;
    st->fragment_triangles = f->frags.triangle_count;
    ts_fracture *mut = (ts_fracture *)f;   /* labels are scratch */
    label_pieces(mut);
    size_t *size = calloc(f->el.n + 1, sizeof *size);
    st->pieces = st->largest_piece = 0;
    for (size_t i = 0; size && i < f->el.n; i++) {
        st->pieces += f->piece[i] == i;
        if (++size[f->piece[i]] > st->largest_piece)
            st->largest_piece = size[f->piece[i]];
    }
    free(size);
    st->max_speed = 0;
    for (size_t i = 0; i < f->el.n; i++)
        st->max_speed = fmax(st->max_speed, ts_v3_length(velocity(f, i)));
}

static ts_status fracture_create(void **state, const void *params, const void *objects, size_t count,
                                 ts_error *err)
{
    return ts_fracture_create((ts_fracture **)state, params, objects, count, err);
}

static ts_status fracture_restore(void *state, const ts_checkpoint *cp, ts_error *err)
{
    return ts_fracture_restore(state, cp, err);
}

static void fracture_destroy(void *state) { ts_fracture_destroy(state); }

static size_t fracture_stats(const void *state, ts_stat *out)
{
    ts_fracture_stats s;
    ts_fracture_get_stats(state, &s);
    const ts_stat all[] = {
        {"elements", (double)s.elements, 1}, {"springs", (double)s.springs, 1}, {"broken", (double)s.broken, 1},
        {"pieces", (double)s.pieces, 1}, {"largest_piece", (double)s.largest_piece, 1},
        {"debris", (double)s.debris, 1}, {"levels", s.levels, 1}, {"element_radius", s.element_radius, 0},
        {"mass", s.mass, 0}, {"max_speed", s.max_speed, 0}, {"seconds_placement", s.seconds_placement, 0},
        {"seconds_delaunay", s.seconds_delaunay, 0}, {"seconds_levels", s.seconds_levels, 0},
        {"seconds_fragments", s.seconds_fragments, 0}, {"fragment_triangles", (double)s.fragment_triangles, 1},
        {"steps", (double)s.steps, 1}, {"settle_steps", (double)s.settle_steps, 1},
        {"settle_sag", s.settle_sag, 0},
    };
    return ts_stats_copy(out, all, sizeof all / sizeof *all);
}

const ts_solver_ops ts_fracture_ops = {
    "fracture", &ts_fracture_param_table, sizeof(ts_fracture_object), 2000, fracture_create, fracture_restore,
    fracture_destroy, fracture_stats, fracture_begin_frame, fracture_stable_dt, fracture_step, fracture_write_frame,
    fracture_save_state,
};
