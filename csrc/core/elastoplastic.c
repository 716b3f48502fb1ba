/* elastoplastic.c - master and slave particles (see elastoplastic.h).
 *
 * One substep (elastoplastic_step), the paper's fig. 3:
 *   0. master-slave pairs within the kernel's support 2h (filtered from
 *      candidates kept for many steps: skin_pairs.h), with the
 *      weights normalised over each master's slaves (N_ms, sum 1) and each
 *      master's moment matrix D_m = sum N d d^T (d = x_s - x_m about the
 *      slaves' weighted centre);
 *   1. slave mass and velocity from the masters (eqs. 1-2);
 *   3. forces on the slaves from the masters' stress (eq. 11);
 *   4. the semi-implicit slave velocity (eqs. 14-17) by conjugate gradients,
 *      warm-started from the slave's last correction;
 *   5. slave collisions (velocity only);
 *   6. the masters' deformation gradients (eqs. 6-7) and plasticity (18-21);
 *   7. master velocities (eqs. 8-9); 8-9. master collisions and positions;
 *  10. slave advection (eq. 22); 11. slaves added where masters part and
 *      removed where they crowd (sec. 4.2, 4.3).
 *
 * Where this differs from the paper, and why:
 * - eq. 7 as printed, sum (v_m - v_s)(x_m - x_s)^T w, has units of 1/(m s)
 *   (w is per m^3): the normalisation it leaves out matters at any scale but
 *   the paper's. The velocity gradient here is its moving-least-squares form
 *   sum N v_s d^T D^-1 (d about the slaves' weighted centre: the linear
 *   least-squares fit), exact for any linear velocity field, and
 *   eq. 11's kernel gradient is the same MLS gradient N D^-1 d - so the
 *   forces are exactly minus the gradient of the energy (eq. 17) and the CG
 *   system of eq. 15 is symmetric (this pairing is MLS-MPM's, Hu et al. 2018,
 *   with the slaves in the grid's place).
 * - eq. 8 blends in the master's *old* velocity, which lets only alpha of
 *   every acceleration through (a falling body falls at 0.9 g). The old
 *   velocity is taken with its FLIP update, v^n + sum N (v_s^{n+1} - v_s^n):
 *   alpha still blends a smooth (PIC) and a lively (FLIP) velocity.
 * - eqs. 4-5 estimate the master's rest volume from the slaves' density,
 *   which is low at the surface: here it is the lattice's own volume
 *   spacing^3, exact for a filled body.
 * The sums at the slaves (eqs. 1, 2, 11, 22 and the CG's operator) are
 * scattered from the masters, each master adding its share to its slaves
 * while its pairs are in the cache, in blocks of eight colours
 * (colour_blocks.h): every slave receives its shares in one order whatever
 * thread ran which block. The sums at the masters are gathers, and every sum
 * over all particles goes through ts_dot_f64 (parallel.h): the same bytes on
 * any number of threads.
 */
#include "elastoplastic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "collider.h"
#include "colour_blocks.h"
#include "grid.h"
#include "kernels.h"
#include "mesh.h"
#include "parallel.h"
#include "particles.h"
#include "skin_pairs.h"
#include "sph_sources.h"
#include "surface.h"
#include "vecmath.h"
#include "wide.h"

#define ADJACENT 6              /* former neighbours remembered per master (sec. 4.2: within 2.5 r) */
#define NONE UINT32_MAX
#define ADD_AT 0.5              /* a new slave sits this share of a spacing from its master */
#define REMOVE_WITHIN 0.15      /* sec. 4.3: slaves closer than 0.15 h merge */
#define WAVE_SPACINGS 8.0       /* implicit steps: spacings an elastic wave may cross per step */
#define SKIN_MASTERS 8          /* masters a skin vertex follows */
#define VELOCITY_ROUNDING 1e-6 /* velocities are stored as floats, to 1.2e-7 of their size: a master whose velocities
                                 * strain it by less than this share of its speed x dt / spacing in a step (or 1e-12)
                                 * moves rigidly - the CG's first residual leaves it out, and its F_E stays */
#define PAIR_SKIN 0.15          /* candidate pairs are kept within the support + this share of a spacing */

/* a slave's row of ts_elastoplastic.acc: vectors of 4 */
enum { ACC_MASS = 0, ACC_MOMENTUM = 1, ACC_FORCE = 4, ACC_DIAGONAL = 8, ACC_WIDTH = 12 };

struct ts_elastoplastic {
    ts_elastoplastic_params p;
    double spacing, h, support, mu0, lambda0, wave_speed, rest_slave_density;
    ts_kernels kernel;          /* the cubic spline, radius = support */
    ts_step_context now;

    ts_particles masters;
    float *x, *y, *z, *vx, *vy, *vz, *mass, *V0;
    double *FE, *FP;            /* 9 each, row major */
    double *FE_U, *FE_V, *FE_sigma; /* F_E = U diag(sigma) V^T (9, 9, 3), kept from the step that made F_E: one SVD
                                       per master and step serves the plastic clamp and the next polar decomposition */
    uint32_t *id, *adj;         /* adj: ADJACENT former neighbours (master indices; masters never move in the arrays) */
    float *rest;                /* 3: where each master started (the skin's reference) */
    double *G;                  /* work, 12: V0 P(F_E) F_E^T, the stress term of eq. 11, by columns of 4 */
    double *harden;             /* work: the hardening factor on the Lame parameters (update_step_limits) */
    uint8_t *parted;            /* work: a former neighbour is farther than 2h (remesh_slaves) */
    double *centre;             /* work, 3: the slaves' weighted centre relative to the master */
    double *grad;               /* work, 9: the velocity gradient of the step */
    uint32_t *mpairs;           /* work, 2: the pairs of the master at position p of `blocks` are [mpairs[2 p], mpairs[2 p + 1]) */
    struct operator_lanes *lanes; /* work: what the CG's operator needs of the masters, by blocks' positions */
    size_t lane_groups;

    ts_particles slaves;
    float *sx, *sy, *sz;
    double *sm, *sv, *sv0, *rhs, *cg_r, *cg_p, *cg_q, *cg_z;   /* work: mass; velocity (3); ... (3 each) */
    double *diagonal;           /* work, 3: the CG's preconditioner, eq. 15's diagonal (as if F were I) */
    double *acc;                /* work, 12: the sums of the masters' shares of the first pass, by vectors of 4:
                                   mass and momentum (eqs. 1-2), the force of eq. 11, eq. 15's diagonal less the mass */
    double *share;              /* work, 4: the sum of one later pass's shares: the CG operator's force variation
                                   (3), eq. 22's momentum (3) */
    double *snormal;            /* work, 3: the wall a slave is held against in the solve (or zero) */
    double *scorrection;        /* state, 3: what the last solve added to v0 + dt g (the next one starts from it) */
    double *scorrection_before; /* state, 3: what the solve before it added */
    double *swall;              /* work, 4: that wall's velocity, and its push on the slave in the solve (momentum) */
    uint8_t *skeep;

    /* master-slave candidates (near) and slaves' pairs closer than sec. 4.3's 0.15 h (crowd), kept for
     * many steps; the masters in coloured blocks (in whose order the passes that scatter to the slaves run);
     * this step's pairs, master-major in that order: */
    ts_skin_pairs near, crowd;
    ts_colour_blocks blocks;
    uint32_t *pair_slave;
    float *pair_gN;             /* 4 per pair: D_m^-1 d N, the MLS kernel gradient (3), what every pass multiplies,
                                   and N, the normalised weight: one vector load (floats: the CG streams through them,
                                   and half the bytes is what it waits for) */
    size_t pair_cap;
    ts_grid sgrid, mgrid;

    ts_moving_collider *colliders;
    size_t n_colliders;
    /* the bodies' own meshes carried by the masters (the "skin" stream) */
    float *skin_rest;           /* 3 per vertex: world at frame_start */
    uint32_t *skin_master;      /* SKIN_MASTERS per vertex (NONE: unused) */
    float *skin_weight;
    size_t skin_vertices;
    size_t added, removed;
    long steps, cg_iterations_total;
    int cg_iterations;
    double cg_residual, v_max;
    double stiffening;          /* the stiffest master's hardening factor (step rule): 1 until plastic */
};

static void update_step_limits(ts_elastoplastic *e);

/* ------------------------------------------------------------------ set-up */

#define P ts_elastoplastic_params
static const ts_param_def PARAMS[] = {
    TS_REAL(P, particle_radius, 0.0005, 1.0, 0.005),
    TS_REAL(P, density, 1.0, 30000.0, 1000.0),
    TS_REAL(P, youngs_modulus, 10.0, 1e11, 1e6),
    TS_REAL(P, poisson_ratio, 0.0, 0.49, 0.4),
    TS_BOOL(P, plastic, 0),
    TS_REAL(P, yield_compression, 0.0, 1.0, 0.025),
    TS_REAL(P, yield_stretch, 0.0, 10.0, 0.0075),
    TS_BOOL(P, keep_volume, 1),
    TS_REAL(P, hardening, 0.0, 50.0, 10.0),
    TS_REAL(P, beta, 0.0, 1.0, 1.0),
    TS_REAL(P, alpha, 0.0, 1.0, 0.9),
    TS_REAL(P, friction, 0.0, 10.0, 0.5),
    TS_BOOL(P, ground, 1),
    TS_REAL(P, ground_height, -1e6, 1e6, 0.0),
    TS_VEC3(P, gravity, -1000.0, 1000.0, 0.0, 0.0, -9.81),
    TS_REAL(P, cfl_number, 0.01, 1.0, 0.4),
    TS_INT(P, cg_iterations, 1, 1000, 50),
    TS_REAL(P, cg_tolerance, 1e-10, 0.1, 1e-4),
    TS_BOOL(P, slave_particles, 1),
    TS_LONG(P, max_particles, 1, 200e6, 4e6),
    TS_BOOL(P, write_surface, 1),
    TS_BOOL(P, write_skin, 0),
    TS_ENUM(P, surface_method, TS_SURFACE_ANISOTROPIC, "anisotropic", "spheres"),
    TS_REAL(P, surface_voxel_ratio, 0.1, 4.0, 0.5),
    TS_REAL(P, surface_radius_scale, 0.5, 4.0, 2.0),
    TS_INT(P, surface_smoothing, 0, 20, 4),
    TS_SCENE_INT(P, frame_start, -1e6, 1e6, 1),
    TS_SCENE_REAL(P, fps, 1e-3, 1e4, 24.0),
    TS_SCENE_SEED(P, seed),
};
#undef P
const ts_param_table ts_elastoplastic_param_table = TS_PARAM_TABLE("elastoplastic", ts_elastoplastic_params, PARAMS);

ts_elastoplastic_params ts_elastoplastic_params_default(void)
{
    ts_elastoplastic_params p;
    ts_params_default(&ts_elastoplastic_param_table, &p);
    return p;
}

/* The kernel of eq. 3: the cubic spline of support 2h (kernels.h's, whose radius is the support; eq. 3's
 * constant differs, which the normalised weights and the density ratios of sec. 4.2 do not see). */
static inline double kernel(const ts_elastoplastic *e, double r)
{
    return ts_w_cubic(&e->kernel, r);
}

static void mat_set(double *dst, ts_mat3 m) { memcpy(dst, m.m, 9 * sizeof *dst); }

static ts_mat3 mat_get(const double *src)
{
    ts_mat3 m;
    memcpy(m.m, src, 9 * sizeof *src);
    return m;
}

/* m's columns, each padded to 4 doubles: what a slave's gather multiplies a kernel gradient by, a vector at a
 * time (gather_stress) */
static void store_columns(double *dst, ts_mat3 m)
{
    for (int b = 0; b < 3; b++) {
        for (int a = 0; a < 3; a++)
            dst[4 * b + a] = m.m[a][b];
        dst[4 * b + 3] = 0.0;
    }
}

/* Four masters' part in the CG's operator, lane l of group g the master at position 4 g + l of the coloured blocks:
 * material() writes it, and the operator takes four masters at once (stress_variation_Ft). Aligned for the AVX2
 * clone's loads whatever the baseline compiler gives a vector of 4 doubles. */
typedef struct __attribute__((aligned(32))) operator_lanes {
    ts_d4 F[3][3], R[3][3], Ainv[3][3], B[3][3]; /* F_E, R of F_E = R S, (tr(S) I - S)^-1, F_E F_E^T */
    ts_d4 mu, lambda, J, V0;                     /* the Lame parameters with hardening, det F_E, the rest volume */
} operator_lanes;

/* Lattice points of the masters: inside a closed mesh, or one layer along an open one (a sheet). */
typedef struct lattice_list {
    int32_t *ijk;
    size_t n, cap;
} lattice_list;

static int lattice_add(lattice_list *l, int32_t i, int32_t j, int32_t k)
{
    if (ts_grow((void **)&l->ijk, &l->cap, 3 * (l->n + 1), sizeof *l->ijk) != 0)
        return 0;
    l->ijk[3 * l->n] = i, l->ijk[3 * l->n + 1] = j, l->ijk[3 * l->n + 2] = k;
    l->n++;
    return 1;
}

static int compare_ijk(const void *a, const void *b)
{
    const int32_t *p = a, *q = b;
    for (int c = 2; c >= 0; c--)
        if (p[c] != q[c])
            return p[c] < q[c] ? -1 : 1;
    return 0;
}

/* Every face sampled finely, each sample snapped to the lattice (of spacing d anchored at o): one layer of
 * points for a sheet aligned with it. Sorted and unique. */
static ts_status sheet_lattice(const ts_elastoplastic_object *o, double d, const double o3[3], lattice_list *l,
                               ts_error *err)
{
    for (size_t f = 0; f < o->triangle_count; f++) {
        const float *a = o->vertices + 3 * o->triangles[3 * f], *b = o->vertices + 3 * o->triangles[3 * f + 1],
                    *c = o->vertices + 3 * o->triangles[3 * f + 2];
        double e1 = 0, e2 = 0;
        for (int q = 0; q < 3; q++)
            e1 += (double)(b[q] - a[q]) * (b[q] - a[q]), e2 += (double)(c[q] - a[q]) * (c[q] - a[q]);
        int n = (int)ceil(2.0 * sqrt(e1 > e2 ? e1 : e2) / d) + 1;
        for (int u = 0; u <= n; u++)
            for (int v = 0; u + v <= n; v++) {
                double s = (double)u / n, t = (double)v / n;
                int32_t ijk[3];
                for (int q = 0; q < 3; q++)
                    ijk[q] = (int32_t)lround((a[q] + s * (b[q] - a[q]) + t * (c[q] - a[q]) - o3[q]) / d);
                if (!lattice_add(l, ijk[0], ijk[1], ijk[2]))
                    return ts_fail(err, TS_ERR_NOMEM, "elastoplastic: out of memory sampling '%s'", o->name);
            }
    }
    qsort(l->ijk, l->n, 3 * sizeof *l->ijk, compare_ijk);
    size_t w = 0;
    for (size_t i = 0; i < l->n; i++)
        if (w == 0 || compare_ijk(l->ijk + 3 * i, l->ijk + 3 * (w - 1)) != 0) {
            memmove(l->ijk + 3 * w, l->ijk + 3 * i, 3 * sizeof *l->ijk);
            w++;
        }
    l->n = w;
    return TS_OK;
}

typedef struct body_fill {
    ts_elastoplastic *e;
    const ts_elastoplastic_object *o;
    int failed;
} body_fill;

static int add_master(ts_elastoplastic *e, const ts_elastoplastic_object *o, float x, float y, float z)
{
    ts_particles *ms = &e->masters;
    if (ms->n == ms->cap) {
        ts_error scratch;
        if (ts_particles_reserve(ms, ms->cap ? 2 * ms->cap : 4096, &scratch) != TS_OK)
            return 0;
    }
    size_t i = ms->n++;
    e->x[i] = x, e->y[i] = y, e->z[i] = z;
    e->vx[i] = (float)o->velocity[0], e->vy[i] = (float)o->velocity[1], e->vz[i] = (float)o->velocity[2];
    const double d3 = e->spacing * e->spacing * e->spacing;
    e->V0[i] = (float)d3;
    e->mass[i] = (float)(e->p.density * d3);
    mat_set(e->FE + 9 * i, ts_m3_identity());
    mat_set(e->FP + 9 * i, ts_m3_identity());
    mat_set(e->FE_U + 9 * i, ts_m3_identity());
    mat_set(e->FE_V + 9 * i, ts_m3_identity());
    e->FE_sigma[3 * i] = e->FE_sigma[3 * i + 1] = e->FE_sigma[3 * i + 2] = 1.0;
    e->id[i] = (uint32_t)i;
    e->rest[3 * i] = x, e->rest[3 * i + 1] = y, e->rest[3 * i + 2] = z;
    for (int a = 0; a < ADJACENT; a++)
        e->adj[ADJACENT * i + a] = NONE;
    return 1;
}

static int fill_point(void *user, float x, float y, float z, float phi)
{
    (void)phi;
    body_fill *f = user;
    return add_master(f->e, f->o, x, y, z);
}

static ts_status add_body(ts_elastoplastic *e, const ts_elastoplastic_object *o, ts_error *err)
{
    ts_error scratch;
    size_t before = e->masters.n;
    if (ts_mesh_check_closed(o->vertices, o->vertex_count, o->triangles, o->triangle_count, o->name, &scratch) ==
        TS_OK) {
        const ts_mesh_ref mesh = {o->name, o->vertices, o->vertex_count, o->triangles, o->triangle_count};
        body_fill f = {e, o, 0};
        ts_status st = ts_lattice_fill(&mesh, e->spacing, 0.5 * e->spacing, fill_point, &f, err);
        if (st != TS_OK)
            return st;
    } else {
        /* an open mesh: a sheet one master thick (fig. 12), when asked for */
        if (!o->sheet) {
            ts_mesh_check_closed(o->vertices, o->vertex_count, o->triangles, o->triangle_count, o->name, &scratch);
            return ts_fail(err, TS_ERR_INVALID, "%s (or tick Sheet for a sheet one particle thick along an open "
                           "mesh)", scratch.message);
        }
        if (o->vertex_count == 0 || o->triangle_count == 0)
            return ts_fail(err, TS_ERR_INVALID, "body '%s' has no faces; give it a mesh", o->name);
        for (size_t i = 0; i < 3 * o->vertex_count; i++)
            if (!isfinite(o->vertices[i]))
                return ts_fail(err, TS_ERR_INVALID, "body '%s': vertex %zu is not finite", o->name, i / 3);
        for (size_t i = 0; i < 3 * o->triangle_count; i++)
            if (o->triangles[i] < 0 || (size_t)o->triangles[i] >= o->vertex_count)
                return ts_fail(err, TS_ERR_INVALID, "body '%s': triangle %zu names vertex %d of %zu", o->name,
                               i / 3, (int)o->triangles[i], o->vertex_count);
        float b[6];
        ts_mesh_bounds(o->vertices, o->vertex_count, b);
        const double o3[3] = {b[0], b[1], b[2]};
        lattice_list l = {0};
        ts_status st = sheet_lattice(o, e->spacing, o3, &l, err);
        for (size_t i = 0; i < l.n && st == TS_OK; i++)
            if (!add_master(e, o, (float)(o3[0] + l.ijk[3 * i] * e->spacing), (float)(o3[1] + l.ijk[3 * i + 1] * e->spacing),
                            (float)(o3[2] + l.ijk[3 * i + 2] * e->spacing)))
                st = ts_fail(err, TS_ERR_NOMEM, "elastoplastic: out of memory filling '%s'", o->name);
        free(l.ijk);
        if (st != TS_OK)
            return st;
    }
    if (e->masters.n == before)
        return ts_fail(err, TS_ERR_INVALID, "body '%s' is thinner than the particle spacing (%g m); make it larger "
                       "or the particles smaller", o->name, e->spacing);
    return TS_OK;
}

/* The masters within 2.5 r of each at rest are its neighbours: sec. 4.2 adds slaves where they part. */
static ts_status remember_neighbours(ts_elastoplastic *e, ts_error *err)
{
    const size_t n = e->masters.n;
    ts_status st = ts_grid_build(&e->mgrid, e->x, e->y, e->z, n, (float)e->support, NULL, err);
    if (st != TS_OK)
        return st;
    const float reach2 = (float)(1.25 * e->spacing * 1.25 * e->spacing); /* 2.5 r, r = spacing / 2 */
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
        ts_neighbor_ranges r;
        ts_grid_neighbor_ranges(&e->mgrid, e->x[i], e->y[i], e->z[i], &r);
        int k = 0;
        for (int q = 0; q < r.n; q++)
            for (uint32_t c = r.begin[q]; c < r.end[q] && k < ADJACENT; c++) {
                uint32_t j = e->mgrid.sorted[c];
                float dx = e->x[j] - e->x[i], dy = e->y[j] - e->y[i], dz = e->z[j] - e->z[i];
                if (j != i && dx * dx + dy * dy + dz * dz < reach2)
                    e->adj[ADJACENT * i + k++] = j;
            }
    }
    return TS_OK;
}

/* Every vertex of the bodies' meshes follows its nearest masters (up to SKIN_MASTERS within the kernel's
 * support, weighted by it; the nearest one alone when none is that close): so the mesh, its UVs and
 * materials deform with the material (the "skin" stream). */
static ts_status bind_skin(ts_elastoplastic *e, const ts_elastoplastic_object *objects, size_t count, ts_error *err)
{
    size_t nv = 0;
    for (size_t o = 0; o < count; o++)
        nv += objects[o].role == TS_ELASTOPLASTIC_BODY ? objects[o].vertex_count : 0;
    e->skin_rest = malloc((3 * nv + 1) * sizeof *e->skin_rest);
    e->skin_master = malloc((SKIN_MASTERS * nv + 1) * sizeof *e->skin_master);
    e->skin_weight = malloc((SKIN_MASTERS * nv + 1) * sizeof *e->skin_weight);
    if (!e->skin_rest || !e->skin_master || !e->skin_weight)
        return ts_fail(err, TS_ERR_NOMEM, "elastoplastic: out of memory for the skin of %zu vertices", nv);
    for (size_t o = 0, v = 0; o < count; o++)
        if (objects[o].role == TS_ELASTOPLASTIC_BODY)
            for (size_t k = 0; k < objects[o].vertex_count; k++, v++)
                memcpy(e->skin_rest + 3 * v, objects[o].vertices + 3 * k, 3 * sizeof(float));
    e->skin_vertices = nv;
    const double reach2 = e->support * e->support;
    #pragma omp parallel for schedule(static)
    for (size_t v = 0; v < nv; v++) {
        const float *p = e->skin_rest + 3 * v;
        uint32_t best[SKIN_MASTERS];
        double d2s[SKIN_MASTERS], nearest2 = 1e300;
        uint32_t nearest = NONE;
        int found = 0;
        ts_neighbor_ranges r;
        ts_grid_neighbor_ranges(&e->mgrid, p[0], p[1], p[2], &r);
        for (int q = 0; q < r.n; q++)
            for (uint32_t c = r.begin[q]; c < r.end[q]; c++) {
                uint32_t m = e->mgrid.sorted[c];
                double dx = p[0] - e->x[m], dy = p[1] - e->y[m], dz = p[2] - e->z[m];
                double d2 = dx * dx + dy * dy + dz * dz;
                if (d2 < nearest2 || (d2 == nearest2 && m < nearest))
                    nearest2 = d2, nearest = m;
                if (d2 >= reach2)
                    continue;
                int at; /* keep the closest, in order, ties by index */
                if (found < SKIN_MASTERS)
                    at = found++;
                else if (d2 < d2s[SKIN_MASTERS - 1] || (d2 == d2s[SKIN_MASTERS - 1] && m < best[SKIN_MASTERS - 1]))
                    at = SKIN_MASTERS - 1;
                else
                    continue;
                while (at > 0 && (d2s[at - 1] > d2 || (d2s[at - 1] == d2 && best[at - 1] > m))) {
                    d2s[at] = d2s[at - 1], best[at] = best[at - 1];
                    at--;
                }
                d2s[at] = d2, best[at] = m;
            }
        double sum = 0.0, w[SKIN_MASTERS];
        for (int k = 0; k < found; k++)
            sum += w[k] = kernel(e, sqrt(d2s[k]));
        for (int k = 0; k < SKIN_MASTERS; k++) {
            e->skin_master[SKIN_MASTERS * v + k] = k < found && sum > 0.0 ? best[k] : NONE;
            e->skin_weight[SKIN_MASTERS * v + k] = k < found && sum > 0.0 ? (float)(w[k] / sum) : 0.0f;
        }
        if (!(sum > 0.0) && nearest != NONE)
            e->skin_master[SKIN_MASTERS * v] = nearest, e->skin_weight[SKIN_MASTERS * v] = 1.0f;
    }
    return TS_OK;
}

static int add_slave(ts_elastoplastic *e, float x, float y, float z)
{
    ts_particles *ss = &e->slaves;
    if (ss->n == ss->cap) {
        ts_error scratch;
        if (ss->cap >= ss->max || ts_particles_reserve(ss, ss->cap ? 2 * ss->cap : 4096, &scratch) != TS_OK)
            return 0;
    }
    size_t i = ss->n++;
    e->sx[i] = x, e->sy[i] = y, e->sz[i] = z;
    /* no solve's correction yet: the row may hold a removed slave's (compaction leaves the rows past the end as they
     * were), which a bake resumed from a checkpoint (zeros there) would not have */
    memset(e->scorrection + 3 * i, 0, 3 * sizeof *e->scorrection);
    memset(e->scorrection_before + 3 * i, 0, 3 * sizeof *e->scorrection_before);
    return 1;
}

/* Slaves on the lattice shifted by half a spacing, wherever a master is within one spacing: around every
 * master uniformly, outside the shape too (sec. 4). */
static ts_status place_slaves(ts_elastoplastic *e, ts_error *err)
{
    const size_t n = e->masters.n;
    float lo[3] = {e->x[0], e->y[0], e->z[0]}, hi[3] = {e->x[0], e->y[0], e->z[0]};
    for (size_t i = 1; i < n; i++) {
        const float p[3] = {e->x[i], e->y[i], e->z[i]};
        for (int a = 0; a < 3; a++)
            lo[a] = p[a] < lo[a] ? p[a] : lo[a], hi[a] = p[a] > hi[a] ? p[a] : hi[a];
    }
    const double d = e->spacing;
    long cells[3];
    for (int a = 0; a < 3; a++)
        cells[a] = (long)ceil((hi[a] - lo[a]) / d) + 2;
    if ((double)cells[0] * cells[1] * cells[2] > 4e9)
        return ts_fail(err, TS_ERR_NOMEM, "elastoplastic: the bodies span %ld x %ld x %ld spacings; raise "
                       "particle_radius", cells[0], cells[1], cells[2]);
    const float reach2 = (float)(d * d) * 1.0001f;
    for (long k = 0; k < cells[2]; k++)
        for (long j = 0; j < cells[1]; j++)
            for (long i = 0; i < cells[0]; i++) {
                float p[3] = {(float)(lo[0] + (i - 0.5) * d), (float)(lo[1] + (j - 0.5) * d),
                              (float)(lo[2] + (k - 0.5) * d)};
                ts_neighbor_ranges r;
                ts_grid_neighbor_ranges(&e->mgrid, p[0], p[1], p[2], &r);
                int near = 0;
                for (int q = 0; q < r.n && !near; q++)
                    for (uint32_t c = r.begin[q]; c < r.end[q] && !near; c++) {
                        uint32_t m = e->mgrid.sorted[c];
                        float dx = p[0] - e->x[m], dy = p[1] - e->y[m], dz = p[2] - e->z[m];
                        near = dx * dx + dy * dy + dz * dz <= reach2;
                    }
                if (near && !add_slave(e, p[0], p[1], p[2]))
                    return ts_fail(err, TS_ERR_NOMEM, "elastoplastic: more than max_particles = %ld particles; "
                                   "raise it or the particle radius", e->p.max_particles);
            }
    return TS_OK;
}

/* The slaves' number density at a point: what sec. 4.2 caps additions by. */
static double slave_density_at(const ts_elastoplastic *e, float x, float y, float z)
{
    ts_neighbor_ranges r;
    ts_grid_neighbor_ranges(&e->sgrid, x, y, z, &r);
    double sum = 0.0;
    for (int q = 0; q < r.n; q++)
        for (uint32_t c = r.begin[q]; c < r.end[q]; c++) {
            uint32_t s = e->sgrid.sorted[c];
            if (s >= e->slaves.n)
                continue;
            double dx = x - e->sx[s], dy = y - e->sy[s], dz = z - e->sz[s];
            sum += kernel(e, sqrt(dx * dx + dy * dy + dz * dz));
        }
    return sum;
}

static ts_status check_params(const ts_elastoplastic_params *p, ts_error *err)
{
    ts_status st = ts_params_check(&ts_elastoplastic_param_table, p, err);
    if (st == TS_OK && p->plastic && (p->yield_compression <= 0.0 || p->yield_stretch <= 0.0))
        return ts_fail(err, TS_ERR_INVALID, "elastoplastic: a plastic material needs yield_compression and "
                       "yield_stretch above 0 (or plastic off)");
    if (st == TS_OK && p->plastic && p->yield_compression >= 1.0)
        return ts_fail(err, TS_ERR_INVALID, "elastoplastic: yield_compression must be below 1 (got %g)",
                       p->yield_compression);
    return st;
}

ts_status ts_elastoplastic_create(ts_elastoplastic **out, const ts_elastoplastic_params *p,
                                  const ts_elastoplastic_object *objects, size_t object_count, ts_error *err)
{
    *out = NULL;
    ts_status st = check_params(p, err);
    size_t bodies = 0, obstacles = 0;
    for (size_t i = 0; st == TS_OK && i < object_count; i++) {
        const ts_elastoplastic_object *o = &objects[i];
        if (o->role == TS_ELASTOPLASTIC_BODY)
            bodies++;
        else if (o->role == TS_ELASTOPLASTIC_OBSTACLE)
            obstacles++, st = ts_mesh_check_closed(o->vertices, o->vertex_count, o->triangles, o->triangle_count,
                                                   o->name, err);
        else
            st = ts_fail(err, TS_ERR_INVALID, "object '%s' has an unknown elastoplastic role %d", o->name,
                         (int)o->role);
        if (st == TS_OK && o->motion && o->motion_frames < 1)
            st = ts_fail(err, TS_ERR_INVALID, "object '%s': motion has no frames", o->name);
        for (int a = 0; st == TS_OK && a < 3; a++)
            if (!isfinite(o->velocity[a]))
                st = ts_fail(err, TS_ERR_INVALID, "object '%s': its velocity is not finite", o->name);
    }
    if (st == TS_OK && bodies == 0)
        st = ts_fail(err, TS_ERR_INVALID, "elastoplastic: no object has the Body role; give a mesh that role");
    if (st != TS_OK)
        return st;
    ts_elastoplastic *e = calloc(1, sizeof *e);
    if (!e)
        return ts_fail(err, TS_ERR_NOMEM, "elastoplastic: out of memory");
    e->p = *p;
    e->now = (ts_step_context){p->frame_start, 1.0 / p->fps, 0.0, 0.0, 0.0};
    e->spacing = 2.0 * p->particle_radius;
    e->h = e->spacing;                      /* the kernel reaches 2h: about 33 neighbours of each kind */
    e->support = 2.0 * e->h;
    ts_kernels_init(&e->kernel, e->support);
    const double E = p->youngs_modulus, nu = p->poisson_ratio;
    e->mu0 = E / (2.0 * (1.0 + nu));
    e->lambda0 = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    e->wave_speed = sqrt((e->lambda0 + 2.0 * e->mu0) / p->density);
    ts_grid_init(&e->sgrid);
    ts_grid_init(&e->mgrid);
    ts_skin_pairs_init(&e->near, e->support, PAIR_SKIN * e->spacing);
    ts_skin_pairs_init(&e->crowd, REMOVE_WITHIN * e->h, PAIR_SKIN * e->spacing);
    ts_colour_blocks_init(&e->blocks);
    const size_t d = sizeof(double), u = sizeof(uint32_t);
    const ts_particle_column masters[] = {
        TS_STATE_COLUMN("x", &e->x, TS_ATTR_F32, 1), TS_STATE_COLUMN("y", &e->y, TS_ATTR_F32, 1),
        TS_STATE_COLUMN("z", &e->z, TS_ATTR_F32, 1), TS_STATE_COLUMN("vx", &e->vx, TS_ATTR_F32, 1),
        TS_STATE_COLUMN("vy", &e->vy, TS_ATTR_F32, 1), TS_STATE_COLUMN("vz", &e->vz, TS_ATTR_F32, 1),
        TS_STATE_COLUMN("mass", &e->mass, TS_ATTR_F32, 1), TS_STATE_COLUMN("V0", &e->V0, TS_ATTR_F32, 1),
        TS_STATE_COLUMN("FE", &e->FE, TS_ATTR_F64, 9), TS_STATE_COLUMN("FP", &e->FP, TS_ATTR_F64, 9),
        TS_STATE_COLUMN("FE_U", &e->FE_U, TS_ATTR_F64, 9), TS_STATE_COLUMN("FE_V", &e->FE_V, TS_ATTR_F64, 9),
        TS_STATE_COLUMN("FE_sigma", &e->FE_sigma, TS_ATTR_F64, 3),
        TS_STATE_COLUMN("id", &e->id, TS_ATTR_U32, 1), TS_STATE_COLUMN("adjacent", &e->adj, TS_ATTR_U32, ADJACENT),
        TS_STATE_COLUMN("rest", &e->rest, TS_ATTR_F32, 3),
        TS_WORK_COLUMN("G", &e->G, 12 * d), TS_WORK_COLUMN("harden", &e->harden, d),
        TS_WORK_COLUMN("centre", &e->centre, 3 * d),
        TS_WORK_COLUMN("grad", &e->grad, 9 * d), TS_WORK_COLUMN("pairs", &e->mpairs, 2 * u),
        TS_WORK_COLUMN("parted", &e->parted, sizeof *e->parted),
    };
    const ts_particle_column slaves[] = {
        TS_STATE_COLUMN("x", &e->sx, TS_ATTR_F32, 1), TS_STATE_COLUMN("y", &e->sy, TS_ATTR_F32, 1),
        TS_STATE_COLUMN("z", &e->sz, TS_ATTR_F32, 1), TS_STATE_COLUMN("correction", &e->scorrection, TS_ATTR_F64, 3),
        TS_STATE_COLUMN("correction_before", &e->scorrection_before, TS_ATTR_F64, 3),
        TS_WORK_COLUMN("mass", &e->sm, d), TS_WORK_COLUMN("v", &e->sv, 3 * d), TS_WORK_COLUMN("v0", &e->sv0, 3 * d),
        TS_WORK_COLUMN("rhs", &e->rhs, 3 * d), TS_WORK_COLUMN("r", &e->cg_r, 3 * d),
        TS_WORK_COLUMN("p", &e->cg_p, 3 * d), TS_WORK_COLUMN("q", &e->cg_q, 3 * d),
        TS_WORK_COLUMN("z", &e->cg_z, 3 * d), TS_WORK_COLUMN("diagonal", &e->diagonal, 3 * d),
        TS_WORK_COLUMN("acc", &e->acc, ACC_WIDTH * d), TS_WORK_COLUMN("share", &e->share, 4 * d),
        TS_WORK_COLUMN("normal", &e->snormal, 3 * d), TS_WORK_COLUMN("wall", &e->swall, 4 * d),
        TS_WORK_COLUMN("keep", &e->skeep, 1),
    };
    ts_particles_init(&e->masters, "masters", (size_t)p->max_particles);
    ts_particles_init(&e->slaves, "slaves", (size_t)p->max_particles);
    st = ts_particles_register(&e->masters, masters, sizeof masters / sizeof *masters, err);
    if (st == TS_OK)
        st = ts_particles_register(&e->slaves, slaves, sizeof slaves / sizeof *slaves, err);
    e->colliders = calloc(obstacles + 1, sizeof *e->colliders);
    if (st == TS_OK && !e->colliders)
        st = ts_fail(err, TS_ERR_NOMEM, "elastoplastic: out of memory");
    for (size_t i = 0; i < object_count && st == TS_OK; i++) {
        const ts_elastoplastic_object *o = &objects[i];
        if (o->role == TS_ELASTOPLASTIC_BODY) {
            st = add_body(e, o, err);
        } else {
            ts_moving_collider *c = &e->colliders[e->n_colliders];
            st = ts_collider_from_mesh(&c->c, o->name, o->vertices, o->vertex_count, o->triangles, o->triangle_count,
                                       0.5 * e->spacing, 2.0 + 2.0 * e->spacing / (0.5 * e->spacing), err);
            if (st == TS_OK) {
                c->m.rows = o->motion;
                c->m.frames = o->motion_frames;
                e->n_colliders++;
            }
        }
        if (st == TS_OK && e->masters.n > (size_t)p->max_particles)
            st = ts_fail(err, TS_ERR_NOMEM, "elastoplastic: the bodies need more than max_particles = %ld "
                         "particles; raise it or the particle radius", p->max_particles);
    }
    /* the masters in the order of their coloured blocks, where the passes over them run: a body that does not
     * tear apart then reads its masters' state in sequence */
    if (st == TS_OK)
        st = ts_colour_blocks_build(&e->blocks, e->x, e->y, e->z, e->masters.n, e->support, err);
    if (st == TS_OK)
        st = ts_particles_permute(&e->masters, e->blocks.order, err);
    if (st == TS_OK)
        st = remember_neighbours(e, err);
    if (st == TS_OK)
        st = bind_skin(e, objects, object_count, err);
    if (st == TS_OK && p->slave_particles) {
        e->slaves.max = (size_t)p->max_particles - e->masters.n;
        st = place_slaves(e, err);
        /* the slaves in cells of the masters' blocks' size: a block's slaves are then a few runs in memory, and
         * blocks that run at once rarely write into one cache line */
        if (st == TS_OK)
            st = ts_grid_build(&e->sgrid, e->sx, e->sy, e->sz, e->slaves.n, (float)(2.1 * e->support), NULL, err);
        if (st == TS_OK)
            st = ts_particles_permute(&e->slaves, e->sgrid.sorted, err);
        if (st == TS_OK)
            st = ts_grid_build(&e->sgrid, e->sx, e->sy, e->sz, e->slaves.n, (float)e->support, NULL, err);
        for (size_t s = 0; st == TS_OK && s < e->slaves.n; s++) {
            double rho = slave_density_at(e, e->sx[s], e->sy[s], e->sz[s]);
            e->rest_slave_density = rho > e->rest_slave_density ? rho : e->rest_slave_density;
        }
    }
    if (st != TS_OK) {
        ts_elastoplastic_destroy(e);
        return st;
    }
    update_step_limits(e); /* the first step keeps to the CFL condition at the bodies' initial velocity */
    *out = e;
    return TS_OK;
}

void ts_elastoplastic_destroy(ts_elastoplastic *e)
{
    if (!e)
        return;
    ts_particles_free(&e->masters);
    ts_particles_free(&e->slaves);
    free(e->pair_slave);
    free(e->pair_gN);
    free(e->lanes);
    free(e->skin_rest);
    free(e->skin_master);
    free(e->skin_weight);
    ts_grid_free(&e->sgrid);
    ts_grid_free(&e->mgrid);
    ts_skin_pairs_free(&e->near);
    ts_skin_pairs_free(&e->crowd);
    ts_colour_blocks_free(&e->blocks);
    for (size_t c = 0; c < e->n_colliders; c++)
        ts_collider_free(&e->colliders[c].c);
    free(e->colliders);
    free(e);
}

/* --------------------------------------------------------------- the pairs */

/* Without slave particles (the paper's fig. 7 left) the stress points are the masters themselves. */
static ts_status masters_as_slaves(ts_elastoplastic *e, ts_error *err)
{
    ts_status st = ts_particles_reserve(&e->slaves, e->masters.n, err);
    if (st != TS_OK)
        return st;
    e->slaves.n = e->masters.n;
    memcpy(e->sx, e->x, e->masters.n * sizeof *e->sx);
    memcpy(e->sy, e->y, e->masters.n * sizeof *e->sy);
    memcpy(e->sz, e->z, e->masters.n * sizeof *e->sz);
    return TS_OK;
}

/* Eight of master i's candidates, from k on: the slaves, their offsets d = x_s - x_m, d's length squared, and which
 * are pairs (within the support; lanes at or past `end` never are, and repeat the last candidate) */
typedef struct candidates8 {
    ts_i8 slave;
    ts_f8 dx, dy, dz, r2;
    ts_i8 pair;
} candidates8;

TS_WIDE_INLINE void gather_candidates8(const ts_elastoplastic *e, size_t i, uint32_t k, uint32_t end, candidates8 *c)
{
    const float xi = e->x[i], yi = e->y[i], zi = e->z[i], reach2 = (float)(e->support * e->support);
    ts_f8 dx = {0.0f}, dy = dx, dz = dx;
    ts_i8 slave = {0};
    for (int l = 0; l < 8; l++) {
        const uint32_t s = e->near.other[k + l < end ? k + l : end - 1];
        slave[l] = (int32_t)s;
        dx[l] = e->sx[s] - xi, dy[l] = e->sy[s] - yi, dz[l] = e->sz[s] - zi;
    }
    const ts_i8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
    c->slave = slave, c->dx = dx, c->dy = dy, c->dz = dz;
    c->r2 = dx * dx + dy * dy + dz * dz;
    c->pair = (c->r2 < reach2) & (lane < (int32_t)(end - k));
}

/* For each mask of 8 lanes, the lanes it holds in order, a nibble each (the k-th at bits 4k; the rest 0): what
 * moves a group's pairs to its front. Made by: for m in range(256): sum(l << 4 k for k, l in enumerate(lanes of m)) */
static const uint32_t COMPACT8[256] = {
    0x00000000, 0x00000000, 0x00000001, 0x00000010, 0x00000002, 0x00000020, 0x00000021, 0x00000210,
    0x00000003, 0x00000030, 0x00000031, 0x00000310, 0x00000032, 0x00000320, 0x00000321, 0x00003210,
    0x00000004, 0x00000040, 0x00000041, 0x00000410, 0x00000042, 0x00000420, 0x00000421, 0x00004210,
    0x00000043, 0x00000430, 0x00000431, 0x00004310, 0x00000432, 0x00004320, 0x00004321, 0x00043210,
    0x00000005, 0x00000050, 0x00000051, 0x00000510, 0x00000052, 0x00000520, 0x00000521, 0x00005210,
    0x00000053, 0x00000530, 0x00000531, 0x00005310, 0x00000532, 0x00005320, 0x00005321, 0x00053210,
    0x00000054, 0x00000540, 0x00000541, 0x00005410, 0x00000542, 0x00005420, 0x00005421, 0x00054210,
    0x00000543, 0x00005430, 0x00005431, 0x00054310, 0x00005432, 0x00054320, 0x00054321, 0x00543210,
    0x00000006, 0x00000060, 0x00000061, 0x00000610, 0x00000062, 0x00000620, 0x00000621, 0x00006210,
    0x00000063, 0x00000630, 0x00000631, 0x00006310, 0x00000632, 0x00006320, 0x00006321, 0x00063210,
    0x00000064, 0x00000640, 0x00000641, 0x00006410, 0x00000642, 0x00006420, 0x00006421, 0x00064210,
    0x00000643, 0x00006430, 0x00006431, 0x00064310, 0x00006432, 0x00064320, 0x00064321, 0x00643210,
    0x00000065, 0x00000650, 0x00000651, 0x00006510, 0x00000652, 0x00006520, 0x00006521, 0x00065210,
    0x00000653, 0x00006530, 0x00006531, 0x00065310, 0x00006532, 0x00065320, 0x00065321, 0x00653210,
    0x00000654, 0x00006540, 0x00006541, 0x00065410, 0x00006542, 0x00065420, 0x00065421, 0x00654210,
    0x00006543, 0x00065430, 0x00065431, 0x00654310, 0x00065432, 0x00654320, 0x00654321, 0x06543210,
    0x00000007, 0x00000070, 0x00000071, 0x00000710, 0x00000072, 0x00000720, 0x00000721, 0x00007210,
    0x00000073, 0x00000730, 0x00000731, 0x00007310, 0x00000732, 0x00007320, 0x00007321, 0x00073210,
    0x00000074, 0x00000740, 0x00000741, 0x00007410, 0x00000742, 0x00007420, 0x00007421, 0x00074210,
    0x00000743, 0x00007430, 0x00007431, 0x00074310, 0x00007432, 0x00074320, 0x00074321, 0x00743210,
    0x00000075, 0x00000750, 0x00000751, 0x00007510, 0x00000752, 0x00007520, 0x00007521, 0x00075210,
    0x00000753, 0x00007530, 0x00007531, 0x00075310, 0x00007532, 0x00075320, 0x00075321, 0x00753210,
    0x00000754, 0x00007540, 0x00007541, 0x00075410, 0x00007542, 0x00075420, 0x00075421, 0x00754210,
    0x00007543, 0x00075430, 0x00075431, 0x00754310, 0x00075432, 0x00754320, 0x00754321, 0x07543210,
    0x00000076, 0x00000760, 0x00000761, 0x00007610, 0x00000762, 0x00007620, 0x00007621, 0x00076210,
    0x00000763, 0x00007630, 0x00007631, 0x00076310, 0x00007632, 0x00076320, 0x00076321, 0x00763210,
    0x00000764, 0x00007640, 0x00007641, 0x00076410, 0x00007642, 0x00076420, 0x00076421, 0x00764210,
    0x00007643, 0x00076430, 0x00076431, 0x00764310, 0x00076432, 0x00764320, 0x00764321, 0x07643210,
    0x00000765, 0x00007650, 0x00007651, 0x00076510, 0x00007652, 0x00076520, 0x00076521, 0x00765210,
    0x00007653, 0x00076530, 0x00076531, 0x00765310, 0x00076532, 0x00765320, 0x00765321, 0x07653210,
    0x00007654, 0x00076540, 0x00076541, 0x00765410, 0x00076542, 0x00765420, 0x00765421, 0x07654210,
    0x00076543, 0x00765430, 0x00765431, 0x07654310, 0x00765432, 0x07654320, 0x07654321, 0x76543210,
};

/* Master i's pairs (at position p, from mpairs[2 p] on), in slave order: the weights normalised over them (sum_s
 * N_ms = 1), their weighted centre, the moment matrix D = sum N d d^T of d about it, and the kernel gradients. A
 * master whose slaves lie in a plane or a line (which the slaves around it prevent) gets a small isotropic term
 * so that D stays invertible. The candidates are filtered eight at a time into the pairs (a group's pairs moved
 * to its front, all eight lanes stored after the last pair, the next group overwriting those that are not); the
 * sums then run over the pairs alone, four at a time: candidates depend on when they were searched, and a
 * resumed bake has to sum the same numbers in the same order. */
TS_WIDE_CLONES static void master_pairs(ts_elastoplastic *e, size_t i, size_t p)
{
    const uint32_t first = e->mpairs[2 * p], candidates_end = e->near.start[i + 1];
    const uint32_t room = candidates_end - e->near.start[i] + 8;
    float dx[room], dy[room], dz[room], w[room];
    uint32_t slave[room], n = 0;
    const float inv_support = (float)(1.0 / e->support);
    for (uint32_t k = e->near.start[i]; k < candidates_end; k += 8) {
        candidates8 c;
        gather_candidates8(e, i, k, candidates_end, &c);
        ts_f8 q = {0.0f};
        for (int l = 0; l < 8; l++)
            q[l] = __builtin_sqrtf(c.r2[l]) * inv_support;
        const ts_f8 weight = ts_w_cubic_shape8(q); /* eq. 3, its constant divided out by N */
        const unsigned mask = ts_i8_bits(&c.pair);
        const ts_i8 shifts = {0, 4, 8, 12, 16, 20, 24, 28};
        const ts_i8 front = ((int32_t)COMPACT8[mask] >> shifts) & 7;
        const ts_i8 slaves = __builtin_shuffle(c.slave, front);
        const ts_f8 x = __builtin_shuffle(c.dx, front), y = __builtin_shuffle(c.dy, front),
                    z = __builtin_shuffle(c.dz, front), wf = __builtin_shuffle(weight, front);
        memcpy(slave + n, &slaves, sizeof slaves);
        memcpy(dx + n, &x, sizeof x), memcpy(dy + n, &y, sizeof y), memcpy(dz + n, &z, sizeof z);
        memcpy(w + n, &wf, sizeof wf);
        n += (uint32_t)__builtin_popcount(mask);
    }
    const uint32_t count = n;
    e->mpairs[2 * p + 1] = first + count;
    for (uint32_t j = count; j < count + 4; j++)
        dx[j] = dy[j] = dz[j] = w[j] = 0.0f;
    /* the weights' moments about the master: sum w, sum w d, sum w d d^T */
    const ts_d4 zero = {0.0, 0.0, 0.0, 0.0};
    ts_d4 sw = zero, mx = zero, my = zero, mz = zero, xx = zero, xy = zero, xz = zero, yy = zero, yz = zero,
          zz = zero;
    for (uint32_t j = 0; j < count; j += 4) {
        const ts_d4 x = ts_d4_from_floats(dx + j), y = ts_d4_from_floats(dy + j), z = ts_d4_from_floats(dz + j);
        const ts_d4 wj = ts_d4_from_floats(w + j), wx = wj * x, wy = wj * y, wz = wj * z;
        sw += wj, mx += wx, my += wy, mz += wz;
        xx += wx * x, xy += wx * y, xz += wx * z, yy += wy * y, yz += wy * z, zz += wz * z;
    }
#define SUM4(v) (((v)[0] + (v)[1]) + ((v)[2] + (v)[3]))
    const double sum = SUM4(sw), scale = sum > 0.0 ? 1.0 / sum : 1.0;
    /* d about the slaves' weighted centre: the least-squares fit of a linear field then has no constant
     * part, so moving every slave alike deforms nothing, at a surface too */
    const ts_d4 mean = {scale * SUM4(mx), scale * SUM4(my), scale * SUM4(mz), 0.0};
    for (int a = 0; a < 3; a++)
        e->centre[3 * i + a] = mean[a];
    /* D = sum N (d - mean) (d - mean)^T = sum N d d^T - mean mean^T */
    const double floor = 1e-3 * e->spacing * e->spacing;
    const double Dxy = scale * SUM4(xy) - mean[0] * mean[1], Dxz = scale * SUM4(xz) - mean[0] * mean[2],
                 Dyz = scale * SUM4(yz) - mean[1] * mean[2];
    const ts_mat3 D = {{{scale * SUM4(xx) - mean[0] * mean[0] + floor, Dxy, Dxz},
                        {Dxy, scale * SUM4(yy) - mean[1] * mean[1] + floor, Dyz},
                        {Dxz, Dyz, scale * SUM4(zz) - mean[2] * mean[2] + floor}}};
#undef SUM4
    ts_mat3 inv;
    if (!ts_m3_inverse(D, &inv))
        inv = ts_m3_identity();
    /* g = N D^-1 d, with N in the fourth lane: one store of 4 floats */
    const ts_d4 col0 = {inv.m[0][0], inv.m[1][0], inv.m[2][0], 0.0}, col1 = {inv.m[0][1], inv.m[1][1], inv.m[2][1], 0.0},
                col2 = {inv.m[0][2], inv.m[1][2], inv.m[2][2], 0.0};
    for (uint32_t j = 0; j < count; j++) {
        const double N = (float)((double)w[j] * scale);
        const ts_d4 d = {dx[j] - mean[0], dy[j] - mean[1], dz[j] - mean[2], 0.0};
        ts_d4 g = N * (col0 * d[0] + col1 * d[1] + col2 * d[2]);
        g[3] = N;
        const ts_f4 gf = __builtin_convertvector(g, ts_f4);
        memcpy(e->pair_gN + 4 * (size_t)(first + j), &gf, sizeof gf);
        e->pair_slave[first + j] = slave[j];
    }
}

/* Step 0: the candidates searched again if they may no longer hold every pair, the masters into coloured
 * blocks, and room for this step's pairs in the blocks' order: each block as many as its masters have
 * candidates, its masters' pairs compacted at its start by the first pass (which computes them where they are
 * first used, one thread per block), the rest of it unused - no pass to count them first. */
static ts_status prepare_pairs(ts_elastoplastic *e, ts_error *err)
{
    const size_t n = e->masters.n;
    int searched;
    ts_status st = ts_skin_pairs_update(&e->near, e->x, e->y, e->z, n, e->sx, e->sy, e->sz, e->slaves.n, &searched,
                                        err);
    if (st == TS_OK)
        st = ts_colour_blocks_build(&e->blocks, e->x, e->y, e->z, n, e->support, err);
    if (st != TS_OK)
        return st;
    const uint32_t *order = e->blocks.order;
    size_t need = 0;
    for (size_t b = 0; b < e->blocks.blocks; b++) {
        e->mpairs[2 * (size_t)e->blocks.block_start[b]] = (uint32_t)need;
        for (size_t p = e->blocks.block_start[b]; p < e->blocks.block_start[b + 1]; p++)
            need += e->near.start[order[p] + 1] - e->near.start[order[p]];
    }
    if (need > e->pair_cap) {
        size_t cap = ts_grown_capacity(e->pair_cap, need, 1 << 16);
        if (ts_resize((void **)&e->pair_slave, cap, sizeof *e->pair_slave) ||
            ts_resize((void **)&e->pair_gN, 4 * cap, sizeof *e->pair_gN))
            return ts_fail(err, TS_ERR_NOMEM, "elastoplastic: out of memory for %zu particle pairs", need);
        e->pair_cap = cap;
    }
    const size_t groups = (n + 3) / 4;
    if (groups > e->lane_groups) {
        /* zeroed: the lanes past the last master are computed with the rest, and must be numbers */
        free(e->lanes);
        e->lanes = aligned_alloc(_Alignof(operator_lanes), groups * sizeof *e->lanes);
        if (!e->lanes) {
            e->lane_groups = 0;
            return ts_fail(err, TS_ERR_NOMEM, "elastoplastic: out of memory for %zu masters", n);
        }
        memset(e->lanes, 0, groups * sizeof *e->lanes);
        e->lane_groups = groups;
    }
    return TS_OK;
}

/* ----------------------------------------------------------- the material */

/* Stomakhin 2013's hardening exp(xi (1 - J_P)) at master i, capped: the factor on its Lame parameters */
static double hardening_factor(const ts_elastoplastic *e, size_t i)
{
    const double harden = exp(e->p.hardening * (1.0 - ts_m3_det(mat_get(e->FP + 9 * i))));
    return harden > 1e3 ? 1e3 : harden;
}

/* Fixed-corotated with hardening (Stomakhin 2013): P = 2 mu (F - R) + lambda (J - 1) cof F, with mu and
 * lambda scaled by exp(xi (1 - J_P)). Keeps G = V0 P F^T, what eq. 11 multiplies by the kernel gradient, and
 * writes what the CG's variations need (R, (tr(S) I - S)^-1, F F^T, the Lame parameters) into the master's lane
 * of operator_lanes (at position p). */
static void material(ts_elastoplastic *e, size_t i, size_t p)
{
    /* F's SVD U diag(sigma) V^T (kept by deform) gives both the polar decomposition (R = U V^T, S = V
     * diag(sigma) V^T) and the eigenvectors of tr(S) I - S below (V's columns, with sigma_j + sigma_k) */
    const ts_mat3 F = mat_get(e->FE + 9 * i), U = mat_get(e->FE_U + 9 * i), V = mat_get(e->FE_V + 9 * i);
    const double *sigma = e->FE_sigma + 3 * i;
    const ts_mat3 R = ts_m3_mul(U, ts_m3_transpose(V));
    const double J = ts_m3_det(F), harden = e->harden[i];
    const double mu = e->mu0 * harden, lambda = e->lambda0 * harden;
    const ts_vec3 c0 = ts_m3_column(F, 0), c1 = ts_m3_column(F, 1), c2 = ts_m3_column(F, 2);
    const ts_mat3 cof = ts_m3_from_columns(ts_v3_cross(c1, c2), ts_v3_cross(c2, c0), ts_v3_cross(c0, c1));
    ts_mat3 Pk;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            Pk.m[a][b] = 2.0 * mu * (F.m[a][b] - R.m[a][b]) + lambda * (J - 1.0) * cof.m[a][b];
    ts_mat3 G = ts_m3_mul(Pk, ts_m3_transpose(F));
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            G.m[a][b] *= e->V0[i];
    store_columns(e->G + 12 * i, G);
    /* (tr(S) I - S)^-1, the polar decomposition's derivative (stress_variation_Ft), with the eigenvalues
     * sigma_j + sigma_k of tr(S) I - S held at 2 or more: below that (compression) the twist modes of
     * 2 mu (F - R) have negative stiffness and the system of eq. 15 is indefinite - conjugate gradients
     * then converge to velocities that blow the body up (a jelly hitting an edge did, at frame 15). The
     * held form is stiffer there: the step stays semi-implicit and stable (the force itself is exact). */
    const double tr = sigma[0] + sigma[1] + sigma[2];
    double held[3];
    for (int k = 0; k < 3; k++)
        held[k] = 1.0 / (tr - sigma[k] > 2.0 ? tr - sigma[k] : 2.0);
    ts_mat3 Ainv;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            Ainv.m[a][b] = V.m[a][0] * V.m[b][0] * held[0] + V.m[a][1] * V.m[b][1] * held[1] +
                           V.m[a][2] * V.m[b][2] * held[2];
    const ts_mat3 B = ts_m3_mul(F, ts_m3_transpose(F));
    operator_lanes *lanes = e->lanes + p / 4;
    const int l = (int)(p % 4);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            lanes->F[a][b][l] = F.m[a][b], lanes->R[a][b][l] = R.m[a][b];
            lanes->Ainv[a][b][l] = Ainv.m[a][b], lanes->B[a][b][l] = B.m[a][b];
        }
    lanes->mu[l] = mu, lanes->lambda[l] = lambda, lanes->J[l] = J, lanes->V0[l] = e->V0[i];
}

/* The variation of P at F_E for a variation dF = grad F_E, times F_E^T (what the slaves' forces need):
 * dP = 2 mu (dF - dR) + lambda (cof F : dF) cof F + lambda (J - 1) d(cof F), with dR = R X, X skew from
 * (tr(S) I - S) x = the axial vector of R^T dF - dF^T R (the polar decomposition's derivative) - made positive
 * definite as in material(). Times F^T the cofactor terms are closed forms (cof F F^T = J I, so cof F : dF =
 * J tr(grad) and d(cof F) F^T = J (tr(grad) I - grad^T)): a third fewer operations than forming dP. Four masters
 * at once, lane by lane the scalar arithmetic. */
TS_WIDE_INLINE void stress_variation_Ft(const operator_lanes *L, const ts_d4 grad[3][3], ts_d4 dPFt[3][3])
{
    ts_d4 dF[3][3];
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++)
            dF[a][c] = grad[a][0] * L->F[0][c] + grad[a][1] * L->F[1][c] + grad[a][2] * L->F[2][c];
    ts_d4 M[3][3]; /* R^T dF off the diagonal: its skew part is all dR needs */
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++)
            if (a != c)
                M[a][c] = L->R[0][a] * dF[0][c] + L->R[1][a] * dF[1][c] + L->R[2][a] * dF[2][c];
    const ts_d4 b[3] = {M[2][1] - M[1][2], M[0][2] - M[2][0], M[1][0] - M[0][1]};
    ts_d4 x[3];
    for (int a = 0; a < 3; a++)
        x[a] = L->Ainv[a][0] * b[0] + L->Ainv[a][1] * b[1] + L->Ainv[a][2] * b[2];
    ts_d4 XFt[3][3]; /* X F^T: its column c is x cross F's row c */
    for (int c = 0; c < 3; c++) {
        const ts_d4 *f = L->F[c];
        XFt[0][c] = x[1] * f[2] - x[2] * f[1];
        XFt[1][c] = x[2] * f[0] - x[0] * f[2];
        XFt[2][c] = x[0] * f[1] - x[1] * f[0];
    }
    const ts_d4 tr = grad[0][0] + grad[1][1] + grad[2][2], zero = {0.0, 0.0, 0.0, 0.0};
    const ts_d4 swell = TS_D4_SELECT(L->J > 1.0, L->J - 1.0, zero); /* (J - 1) d(cof F) is indefinite once
                                                                         compressed: left out */
    const ts_d4 two_mu = 2.0 * L->mu, shear = L->lambda * swell * L->J, volume = L->lambda * L->J * (L->J + swell) * tr;
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) {
            const ts_d4 dRFt = L->R[a][0] * XFt[0][c] + L->R[a][1] * XFt[1][c] + L->R[a][2] * XFt[2][c];
            const ts_d4 dFFt = grad[a][0] * L->B[0][c] + grad[a][1] * L->B[1][c] + grad[a][2] * L->B[2][c];
            dPFt[a][c] = two_mu * (dFFt - dRFt) - shear * grad[c][a];
            if (a == c)
                dPFt[a][c] += volume;
        }
}

/* ------------------------------------------------------------ steps 1-5 */

/* Master i's shares to its slaves (at position p): eqs. 1-2's mass and momentum, eq. 11's force (G D^-1 d N,
 * G by columns) and eq. 15's diagonal without the mass - m + beta dt^2 sum_m V0 (mu |g|^2 + (mu + lambda) g_a^2)
 * per axis a, exact at rest (F = I). Dividing the CG's residual by it (Jacobi) evens out what makes the CG slow:
 * slaves at the surface have a fraction of an inner slave's mass and most of its stiffness. */
TS_WIDE_CLONES static void scatter_to_slaves(ts_elastoplastic *e, size_t i, size_t p)
{
    const operator_lanes *lanes = e->lanes + p / 4;
    const double m = e->mass[i], mu = lanes->mu[p % 4], lambda = lanes->lambda[p % 4], V0 = e->V0[i];
    const ts_d4 momentum = {m, m * e->vx[i], m * e->vy[i], m * e->vz[i]};
    const double *G = e->G + 12 * i;
    const ts_d4 G0 = ts_d4_load(G), G1 = ts_d4_load(G + 4), G2 = ts_d4_load(G + 8);
    for (uint32_t k = e->mpairs[2 * p]; k < e->mpairs[2 * p + 1]; k++) {
        double *acc = e->acc + ACC_WIDTH * (size_t)e->pair_slave[k];
        const ts_d4 g = ts_d4_from_floats(e->pair_gN + 4 * (size_t)k);
        const double g2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
        TS_D4_ADD(acc + ACC_MASS, g[3] * momentum);                     /* eqs. 1-2 */
        TS_D4_ADD(acc + ACC_FORCE, G0 * g[0] + G1 * g[1] + G2 * g[2]);  /* eq. 11 */
        TS_D4_ADD(acc + ACC_DIAGONAL, V0 * (mu * g2 + (mu + lambda) * g * g));
    }
}

/* A slave field's value at the first slave of the master at position p (zero for a master without slaves): what
 * the velocity gradients are taken relative to */
static const double *at_first_slave(const ts_elastoplastic *e, const double *v, size_t p)
{
    static const double none[3] = {0.0, 0.0, 0.0};
    const uint32_t first = e->mpairs[2 * p];
    return first < e->mpairs[2 * p + 1] ? v + 3 * (size_t)e->pair_slave[first] : none;
}

/* sum over master i's slaves (at position p) of (v_s - v_first) (D^-1 d N)^T, v a slave field and v_first its value
 * at the master's first slave: the CG's variation of the velocity gradient of eq. 7 in its MLS form (rows of 4: the
 * fourth lane is left unused). The gradients sum to zero, so v_first changes nothing but the rounding: stored as
 * floats they sum to about 1e-7 of one, which made a body falling at 1 m/s strain by 1e-8 a step; less v_first a
 * uniform field's gradient is the doubles' rounding alone (1e-16 of its speed), which moves_rigidly tells from a
 * strain. Summed as sum v_s g^T - v_first sum g^T: one subtraction per master instead of three per pair. */
TS_WIDE_CLONES static void gather_gradient(const ts_elastoplastic *e, const double *v, size_t p, double A[3][4],
                                           double *speed)
{
    ts_d4 row0 = {0.0, 0.0, 0.0, 0.0}, row1 = row0, row2 = row0, sum = row0;
    const uint32_t first = e->mpairs[2 * p], end = e->mpairs[2 * p + 1];
    const double *ref = at_first_slave(e, v, p);
    *speed = sqrt(ref[0] * ref[0] + ref[1] * ref[1] + ref[2] * ref[2]);
    for (uint32_t k = first; k < end; k++) {
        const double *vs = v + 3 * (size_t)e->pair_slave[k];
        const ts_d4 g = ts_d4_from_floats(e->pair_gN + 4 * (size_t)k);
        row0 += vs[0] * g, row1 += vs[1] * g, row2 += vs[2] * g;
        sum += g;
    }
    row0 -= ref[0] * sum, row1 -= ref[1] * sum, row2 -= ref[2] * sum; /* sum (v_s - v_first) g^T */
    for (int b = 0; b < 4; b++)
        A[0][b] = row0[b], A[1][b] = row1[b], A[2][b] = row2[b];
}

/* dG D^-1 d N scattered from master i (at position p) to its slaves' shares, dG by columns: gather_gradient's
 * transpose, its first slave's value taken off included, so that the CG's operator stays symmetric */
TS_WIDE_CLONES static void scatter_variation(ts_elastoplastic *e, const double *dG, size_t p)
{
    const ts_d4 G0 = ts_d4_load(dG), G1 = ts_d4_load(dG + 4), G2 = ts_d4_load(dG + 8);
    const uint32_t first = e->mpairs[2 * p], end = e->mpairs[2 * p + 1];
    ts_d4 sum = {0.0, 0.0, 0.0, 0.0};
    for (uint32_t k = first; k < end; k++) {
        const ts_d4 g = ts_d4_from_floats(e->pair_gN + 4 * (size_t)k);
        TS_D4_ADD(e->share + 4 * (size_t)e->pair_slave[k], G0 * g[0] + G1 * g[1] + G2 * g[2]);
        sum += g;
    }
    if (first < end)
        TS_D4_ADD(e->share + 4 * (size_t)e->pair_slave[first], -(G0 * sum[0] + G1 * sum[1] + G2 * sum[2]));
}

/* Steps 0-3 at the masters of one block: the material, the pairs, the shares to the slaves. */
static void shares_block(void *user, size_t first, size_t end)
{
    ts_elastoplastic *e = user;
    for (size_t p = first; p < end; p++) {
        const size_t i = e->blocks.order[p];
        if (p > first)
            e->mpairs[2 * p] = e->mpairs[2 * p - 1];
        material(e, i, p);
        master_pairs(e, i, p);
        scatter_to_slaves(e, i, p);
    }
}

/* Whether a velocity gradient V (rows of 4: gather_motion's, gather_gradient's) strains a master moving at `speed`
 * by no more than its velocities' rounding in dt: it then keeps its F_E, F_P and their SVD as they are (a falling
 * body's masters all do). A uniform motion gave strains of 1e-11 to 1e-8 a step, as the masters' float velocities
 * differ in their last bits. */
static int moves_rigidly(const ts_elastoplastic *e, double V[3][4], double speed, double dt)
{
    const double floor = 1e-12 + VELOCITY_ROUNDING * speed * dt / e->spacing;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            if (!(fabs(dt * V[a][b]) <= floor))
                return 0;
    return 1;
}

typedef struct operator_pass {
    ts_elastoplastic *e;
    const double *u;
    double dt;
    int velocities; /* u is the velocities themselves (the first residual), not a CG direction */
} operator_pass;

/* H(u) at the masters of one block: each gathers dF from u, and scatters its dG. Four at a time, by the groups of
 * operator_lanes: a group that straddles the block's ends computes its other lanes with no gradient, unused. */
TS_WIDE_CLONES static void operator_block(void *user, size_t first, size_t end)
{
    const operator_pass *o = user;
    ts_elastoplastic *e = o->e;
    for (size_t group = first / 4; 4 * group < end; group++) {
        const size_t lo = 4 * group > first ? 4 * group : first, hi = 4 * group + 4 < end ? 4 * group + 4 : end;
        const ts_d4 zero = {0.0, 0.0, 0.0, 0.0};
        ts_d4 grad[3][3] = {{zero, zero, zero}, {zero, zero, zero}, {zero, zero, zero}};
        int strained[4] = {0, 0, 0, 0}, any = 0;
        for (size_t p = lo; p < hi; p++) {
            double A[3][4], speed; /* sum N u_s (D^-1 d)^T */
            gather_gradient(e, o->u, p, A, &speed);
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    grad[a][b][p % 4] = o->dt * A[a][b];
            strained[p % 4] = !o->velocities || !moves_rigidly(e, A, speed, o->dt);
            any |= strained[p % 4];
        }
        if (!any)
            continue; /* moving rigidly: nothing to scatter (a falling body's whole first residual) */
        const operator_lanes *lanes = e->lanes + group;
        ts_d4 dG[3][3];
        stress_variation_Ft(lanes, grad, dG);
        for (size_t p = lo; p < hi; p++) {
            if (!strained[p % 4])
                continue;
            ts_mat3 lane;
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    lane.m[a][b] = dG[a][b][p % 4] * lanes->V0[p % 4];
            double columns[12];
            store_columns(columns, lane);
            scatter_variation(e, columns, p);
        }
    }
}

/* The linear operator of eq. 15 times the slave masses: A u = M u + beta dt H(u), H(u) the force variation
 * of the displacement dt u (matrix-free: the masters gather dF and scatter dG). */
static void apply_operator(ts_elastoplastic *e, const double *u, double *out, double dt, int velocities)
{
    const size_t ns = e->slaves.n;
    operator_pass o = {e, u, dt, velocities};
    ts_colour_blocks_run(&e->blocks, operator_block, &o); /* into e->share, zero on entry */
    const double scale = e->p.beta * dt;
    #pragma omp parallel for schedule(static)
    for (size_t s = 0; s < ns; s++) {
        double *share = e->share + 4 * s;
        for (int a = 0; a < 3; a++)
            out[3 * s + a] = e->sm[s] > 0.0 ? e->sm[s] * u[3 * s + a] + scale * share[a] : u[3 * s + a];
        memset(share, 0, 4 * sizeof *share); /* for the next: a pass of its own cost more than the sums */
    }
}

/* v on a wall of normal n moving at u: its normal part relative to the wall dropped, and its sliding slowed by
 * at most `slow` (Coulomb: friction x the normal impulse per mass) */
static void slide(double v[3], const double n[3], const double u[3], double slow)
{
    const double rel[3] = {v[0] - u[0], v[1] - u[1], v[2] - u[2]};
    const double vn = rel[0] * n[0] + rel[1] * n[1] + rel[2] * n[2];
    const double t[3] = {rel[0] - vn * n[0], rel[1] - vn * n[1], rel[2] - vn * n[2]};
    const double tl = sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    double keep = tl > 0.0 ? 1.0 - slow / tl : 0.0;
    keep = keep > 0.0 ? keep : 0.0;
    for (int a = 0; a < 3; a++)
        v[a] = u[a] + keep * t[a];
}

/* Slaves and masters touch a wall within a quarter spacing of it (half a radius). */
#define WALL_REACH 0.25

/* The wall a slave is against (within WALL_REACH spacings of the ground or an obstacle, moving into it):
 * its normal to n (zero when free), its velocity to wall, and v's normal part set to the wall's. */
static void slave_constraint(const ts_elastoplastic *e, size_t s, double v[3], double n[3], double wall[4])
{
    const double reach = WALL_REACH * e->spacing;
    double depth = -1e300, u[3] = {0, 0, 0};
    n[0] = n[1] = n[2] = 0.0;
    wall[3] = 0.0;
    if (!(e->sm[s] > 0.0))
        return;
    if (e->p.ground && e->sz[s] - e->p.ground_height < reach) {
        depth = reach - (e->sz[s] - e->p.ground_height);
        n[2] = 1.0;
    }
    for (size_t c = 0; c < e->n_colliders; c++) {
        ts_collider_hit hit;
        if (!ts_collider_query(&e->colliders[c].c, e->now.s_end, ts_v3(e->sx[s], e->sy[s], e->sz[s]), &hit) ||
            hit.distance >= reach || reach - hit.distance <= depth)
            continue;
        depth = reach - hit.distance;
        n[0] = hit.normal.x, n[1] = hit.normal.y, n[2] = hit.normal.z;
        u[0] = hit.velocity.x, u[1] = hit.velocity.y, u[2] = hit.velocity.z;
    }
    const double vn = (v[0] - u[0]) * n[0] + (v[1] - u[1]) * n[1] + (v[2] - u[2]) * n[2];
    if (depth == -1e300 || vn >= 0.0) {
        n[0] = n[1] = n[2] = 0.0; /* free, or leaving the wall */
        return;
    }
    for (int a = 0; a < 3; a++)
        v[a] -= vn * n[a], wall[a] = u[a];
}

/* Step 5's Coulomb friction at a slave the solve held against a wall: its sliding is slowed by friction x the
 * wall's push in the solve per mass (without it a clay lump at rest on the ground slid on at the speed it
 * landed with: the solve had already taken away the approach that collide() reads friction from). */
static void slave_friction(const ts_elastoplastic *e, size_t s, double v[3])
{
    const double *wall = e->swall + 4 * s;
    if (wall[3] > 0.0 && e->sm[s] > 0.0)
        slide(v, e->snormal + 3 * s, wall, e->p.friction * wall[3] / e->sm[s]);
}

/* Remove the constrained normal parts from a CG vector x; with push, add push_scale x what was removed to the
 * walls' pushes (x a residual change, -push_scale its step: the pushes are what the residual b - A v keeps
 * at the walls, Baraff & Witkin's constraint forces). */
static void filter(const ts_elastoplastic *e, double *x, int push, double push_scale)
{
    #pragma omp parallel for schedule(static)
    for (size_t s = 0; s < e->slaves.n; s++) {
        const double *n = e->snormal + 3 * s, *xs = x + 3 * s;
        double xn = xs[0] * n[0] + xs[1] * n[1] + xs[2] * n[2];
        for (int a = 0; a < 3; a++)
            x[3 * s + a] -= xn * n[a];
        if (push)
            e->swall[4 * s + 3] += push_scale * xn;
    }
}

/* z = r / the diagonal, without the constrained normal parts */
static void precondition(ts_elastoplastic *e, const double *r, double *z)
{
    #pragma omp parallel for schedule(static)
    for (size_t k = 0; k < 3 * e->slaves.n; k++)
        z[k] = r[k] / e->diagonal[k];
    filter(e, z, 0, 0.0);
}

/* Eqs. 14-17 by preconditioned conjugate gradients on (M + beta dt^2 K) v = M v*. */
static void solve_velocities(ts_elastoplastic *e, double dt)
{
    const size_t ns = e->slaves.n, len = 3 * ns;
    const double g[3] = {e->p.gravity[0], e->p.gravity[1], e->p.gravity[2]};
    const int implicit = e->p.beta > 0.0;
    /* a slave touching the ground or an obstacle and moving into it keeps the wall's normal velocity
     * through the solve (Baraff & Witkin's filtered CG): projecting it only after the solve would let
     * the implicit coupling pass its push on to free slaves, which a body at rest then holds as a
     * compression growing with the step. The CG starts from v0 + dt g + what the solve adds there, carried on
     * in a straight line from the last two solves (2 c - c_before), not from v*: the explicit elastic increment
     * in v* is what the solve corrects (at eight spacings a step it overshoots), the operator does not see a
     * uniform velocity, and from one step to the next the correction changes little and smoothly - a body in
     * free fall needs no iteration, a jelly at rest 3 instead of 50, an impact a tenth fewer than from c alone */
    #pragma omp parallel for schedule(static)
    for (size_t s = 0; s < ns; s++) {
        const double *acc = e->acc + ACC_WIDTH * s, m = acc[ACC_MASS];
        double *x = e->sv + 3 * s;
        e->sm[s] = m;                                                                              /* eq. 1 */
        for (int a = 0; a < 3; a++) {
            e->sv0[3 * s + a] = m > 0.0 ? acc[ACC_MOMENTUM + a] / m : 0.0;                         /* eq. 2 */
            double vstar = m > 0.0 ? e->sv0[3 * s + a] + dt * (-acc[ACC_FORCE + a] / m + g[a]) : 0.0; /* eq. 14 */
            e->rhs[3 * s + a] = m > 0.0 ? m * vstar : 0.0;
            x[a] = vstar;
            e->diagonal[3 * s + a] = m > 0.0 ? m + e->p.beta * dt * dt * acc[ACC_DIAGONAL + a] : 1.0;
        }
        if (!implicit)
            continue; /* explicit: v = v* */
        memset(e->share + 4 * s, 0, 4 * sizeof *e->share); /* the operator's sums */
        slave_constraint(e, s, x, e->snormal + 3 * s, e->swall + 4 * s); /* which walls: from v* */
        if (!(m > 0.0))
            continue;
        const double *n = e->snormal + 3 * s, *u = e->swall + 4 * s;
        for (int a = 0; a < 3; a++)
            x[a] = e->sv0[3 * s + a] + dt * g[a] + (2.0 * e->scorrection[3 * s + a] - e->scorrection_before[3 * s + a]);
        const double xn = (x[0] - u[0]) * n[0] + (x[1] - u[1]) * n[1] + (x[2] - u[2]) * n[2];
        for (int a = 0; a < 3; a++)
            x[a] -= xn * n[a];
    }
    e->cg_iterations = 0;
    e->cg_residual = 0.0;
    if (!implicit)
        return;
    apply_operator(e, e->sv, e->cg_q, dt, 1);
    #pragma omp parallel for schedule(static)
    for (size_t k = 0; k < len; k++)
        e->cg_r[k] = e->rhs[k] - e->cg_q[k];
    filter(e, e->cg_r, 1, -1.0);
    precondition(e, e->cg_r, e->cg_z);
    memcpy(e->cg_p, e->cg_z, len * sizeof *e->cg_p);
    const double b2 = ts_dot_f64(e->rhs, e->rhs, len);
    double rr = ts_dot_f64(e->cg_r, e->cg_r, len), rz = ts_dot_f64(e->cg_r, e->cg_z, len);
    const double goal = e->p.cg_tolerance * e->p.cg_tolerance * (b2 > 0.0 ? b2 : 1.0);
    int it = 0;
    while (it < e->p.cg_iterations && rr > goal) {
        apply_operator(e, e->cg_p, e->cg_q, dt, 0);
        double pq = ts_dot_f64(e->cg_p, e->cg_q, len); /* p has no constrained parts: q's make no difference */
        if (!(pq > 0.0))
            break; /* not positive along p: keep what converged so far */
        double a = rz / pq;
        filter(e, e->cg_q, 1, a);
        #pragma omp parallel for schedule(static)
        for (size_t k = 0; k < len; k++)
            e->sv[k] += a * e->cg_p[k], e->cg_r[k] -= a * e->cg_q[k];
        precondition(e, e->cg_r, e->cg_z);
        rr = ts_dot_f64(e->cg_r, e->cg_r, len);
        double rz_next = ts_dot_f64(e->cg_r, e->cg_z, len), beta = rz_next / rz;
        rz = rz_next;
        #pragma omp parallel for schedule(static)
        for (size_t k = 0; k < len; k++)
            e->cg_p[k] = e->cg_z[k] + beta * e->cg_p[k];
        it++;
    }
    e->cg_iterations = it;
    e->cg_iterations_total += it;
    e->cg_residual = b2 > 0.0 ? sqrt(rr / b2) : 0.0;
    #pragma omp parallel for schedule(static)
    for (size_t s = 0; s < ns; s++)
        for (int a = 0; a < 3; a++) {
            e->scorrection_before[3 * s + a] = e->scorrection[3 * s + a];
            e->scorrection[3 * s + a] = e->sm[s] > 0.0 ? e->sv[3 * s + a] - (e->sv0[3 * s + a] + dt * g[a]) : 0.0;
        }
}

/* Coulomb friction at a contact of normal n moving at u: a velocity v leaves with its approach taken away
 * and its sliding slowed by friction x the approach. */
static void contact_velocity(double v[3], const double n[3], const double u[3], double friction)
{
    const double vn = (v[0] - u[0]) * n[0] + (v[1] - u[1]) * n[1] + (v[2] - u[2]) * n[2];
    if (vn < 0.0)
        slide(v, n, u, -friction * vn);
}

/* The ground and every obstacle at a point within `reach` of it: velocity projected (and, when push is
 * given, the point pushed out to `reach`). */
static void collide(const ts_elastoplastic *e, float p[3], double v[3], double reach, int push)
{
    if (e->p.ground && p[2] - e->p.ground_height < reach) {
        const double n[3] = {0, 0, 1}, u[3] = {0, 0, 0};
        contact_velocity(v, n, u, e->p.friction);
        if (push)
            p[2] = (float)(e->p.ground_height + reach);
    }
    for (size_t c = 0; c < e->n_colliders; c++) {
        ts_collider_hit hit;
        if (!ts_collider_query(&e->colliders[c].c, e->now.s_end, ts_v3(p[0], p[1], p[2]), &hit) ||
            hit.distance >= reach)
            continue;
        const double n[3] = {hit.normal.x, hit.normal.y, hit.normal.z};
        const double u[3] = {hit.velocity.x, hit.velocity.y, hit.velocity.z};
        contact_velocity(v, n, u, e->p.friction);
        if (push) {
            double out = reach - hit.distance;
            for (int a = 0; a < 3; a++)
                p[a] += (float)(out * n[a]);
        }
    }
}

/* ------------------------------------------------------------ steps 6-9 */

/* What steps 6-9 need of master i's slaves (at position p), in one pass: V[a] = sum v_s[a] (D^-1 d N, N) - the
 * velocity gradient of eq. 7 in its MLS form, and in the fourth lane sum N v_s (eq. 9's PIC velocity) - and V0
 * the same of v0 (the FLIP update's change is their difference). As in gather_gradient, the gradients are of v_s less
 * its value at the first slave, so that a body moving uniformly has no gradient but the doubles' rounding: with the
 * gradients' float rounding it strained by 1e-8 a step for each m/s of its speed */
TS_WIDE_CLONES static void gather_motion(const ts_elastoplastic *e, size_t p, double V[3][4], double V0[3][4])
{
    const ts_d4 zero = {0.0, 0.0, 0.0, 0.0};
    ts_d4 v0 = zero, v1 = zero, v2 = zero, o0 = zero, o1 = zero, o2 = zero, sum = zero;
    const uint32_t first = e->mpairs[2 * p], end = e->mpairs[2 * p + 1];
    const double *ref = at_first_slave(e, e->sv, p), *ref0 = at_first_slave(e, e->sv0, p);
    for (uint32_t k = first; k < end; k++) {
        const size_t s = e->pair_slave[k];
        const ts_d4 gN = ts_d4_from_floats(e->pair_gN + 4 * (size_t)k);
        const double *v = e->sv + 3 * s, *old = e->sv0 + 3 * s;
        v0 += v[0] * gN, v1 += v[1] * gN, v2 += v[2] * gN;
        o0 += old[0] * gN, o1 += old[1] * gN, o2 += old[2] * gN;
        sum += gN;
    }
    sum[3] = 0.0; /* the gradients less v_first's share; the PIC velocities (lane 3) as they are */
    v0 -= ref[0] * sum, v1 -= ref[1] * sum, v2 -= ref[2] * sum;
    o0 -= ref0[0] * sum, o1 -= ref0[1] * sum, o2 -= ref0[2] * sum;
    memcpy(V[0], &v0, sizeof v0), memcpy(V[1], &v1, sizeof v1), memcpy(V[2], &v2, sizeof v2);
    memcpy(V0[0], &o0, sizeof o0), memcpy(V0[1], &o1, sizeof o1), memcpy(V0[2], &o2, sizeof o2);
}

/* Eqs. 6-7 and 18 at master i: the trial elastic F from the velocity gradient V, whose SVD (from the last step's V)
 * follows. */
static ts_mat3 trial_elastic_gradient(const ts_elastoplastic *e, size_t i, double V[3][4], double dt)
{
    ts_mat3 step = ts_m3_identity();
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            step.m[a][b] += dt * V[a][b];                                    /* eq. 7, MLS form */
    return ts_m3_mul(step, mat_get(e->FE + 9 * i));                          /* eq. 18 */
}

/* Eqs. 19-21 at master i from its trial F_E = U diag(sig) V^T: the singular values clamped to
 * [1 - theta_c, 1 + theta_s], the rest to F_P. */
static void deform(ts_elastoplastic *e, size_t i, ts_mat3 FE, ts_mat3 U, double sig[3], ts_mat3 V)
{
    mat_set(e->FE_U + 9 * i, U);
    mat_set(e->FE_V + 9 * i, V);
    if (e->p.plastic) {
        const double lo = 1.0 - e->p.yield_compression, hi = 1.0 + e->p.yield_stretch;
        double clamped[3];
        for (int a = 0; a < 3; a++)
            clamped[a] = sig[a] < lo ? lo : (sig[a] > hi ? hi : sig[a]);     /* eq. 19 */
        if (e->p.keep_volume) {
            /* the flow's change of volume (the product of sigma-hat / sigma) stays elastic: clay yields in shape,
             * not in volume. Eq. 19's clamp alone compacted a clay ball thrown at a wall to J_P 0.66, which the
             * hardening then made 30 times stiffer */
            const double flow = cbrt(sig[0] / clamped[0] * (sig[1] / clamped[1]) * (sig[2] / clamped[2]));
            for (int a = 0; a < 3; a++)
                clamped[a] *= flow;
        }
        /* eq. 21: V Sigma^-1 U^T F_E-hat = V diag(sigma-hat / sigma) V^T, F_E-hat being U diag(sigma-hat) V^T */
        ts_mat3 US, VS;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                US.m[a][b] = U.m[a][b] * clamped[b], VS.m[a][b] = V.m[a][b] * (sig[b] / clamped[b]);
        const ts_mat3 FEc = ts_m3_mul(US, ts_m3_transpose(V));              /* eq. 20 */
        const ts_mat3 FP = ts_m3_mul(ts_m3_mul(VS, ts_m3_transpose(V)), mat_get(e->FP + 9 * i)); /* eq. 21 */
        memcpy(sig, clamped, sizeof clamped);                                 /* F_E's SVD is now U, clamped, V */
        mat_set(e->FP + 9 * i, FP);
        FE = FEc;
    }
    mat_set(e->FE + 9 * i, FE);
    memcpy(e->FE_sigma + 3 * i, sig, 3 * sizeof *sig);
}

/* Eqs. 8-9 at master i, with the old velocity taken with its FLIP update (see the top), then its collisions and
 * eq. 10. */
static void move_master(ts_elastoplastic *e, size_t i, double V[3][4], double V0[3][4], double dt)
{
    double pic[3], change[3];
    const double *c = e->centre + 3 * i, *B = e->grad + 9 * i;
    for (int a = 0; a < 3; a++)
        pic[a] = V[a][3], change[a] = V[a][3] - V0[a][3];
    /* eq. 9 with the linear term: the least-squares fit sum N v_s + B (x - centre) at the master itself,
     * so that a master moves as the velocity field that deforms it says (at a surface, where the slaves'
     * centre is off the master, the mean alone would shear it against its F) */
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            pic[a] -= B[3 * a + b] * c[b];
            change[a] -= (B[3 * a + b] - V0[a][b]) * c[b];
        }
    const double al = e->p.alpha, old[3] = {e->vx[i], e->vy[i], e->vz[i]};
    double v[3];
    for (int a = 0; a < 3; a++)
        v[a] = al * pic[a] + (1.0 - al) * (old[a] + change[a]);              /* eq. 8 */
    float p[3] = {e->x[i], e->y[i], e->z[i]};
    /* as far from a wall as the solve holds the slaves (slave_constraint): held a radius off, as until
     * 2026-11-29, masters stopped where the slaves' velocity field still went on into the wall, and the field
     * carried the masters above down onto them - a 25 cm block of Soft Clay set on the ground ended as one
     * layer of masters, its J still 1 */
    collide(e, p, v, WALL_REACH * e->spacing, 0);                           /* step 8 */
    for (int a = 0; a < 3; a++)
        p[a] += (float)(dt * v[a]);                                          /* eq. 10 */
    collide(e, p, v, WALL_REACH * e->spacing, 1);
    e->x[i] = p[0], e->y[i] = p[1], e->z[i] = p[2];
    e->vx[i] = (float)v[0], e->vy[i] = (float)v[1], e->vz[i] = (float)v[2];
}

/* ----------------------------------------------------------- steps 10-11 */

/* Master i's new momentum m N v scattered to its slaves' shares (eq. 22, with the weights at the start of the step) */
static void scatter_momentum(ts_elastoplastic *e, size_t i, size_t p)
{
    const double m = e->mass[i], v[3] = {e->vx[i], e->vy[i], e->vz[i]};
    for (uint32_t k = e->mpairs[2 * p]; k < e->mpairs[2 * p + 1]; k++) {
        double *share = e->share + 4 * (size_t)e->pair_slave[k], w = m * (double)e->pair_gN[4 * k + 3];
        share[0] += w * v[0], share[1] += w * v[1], share[2] += w * v[2];
    }
}

typedef struct motion_pass {
    ts_elastoplastic *e;
    double dt;
} motion_pass;

/* Steps 6-9 at the masters of one block, each then scattering its new momentum to its slaves. */
static void motion_block(void *user, size_t first, size_t end)
{
    const motion_pass *o = user;
    ts_elastoplastic *e = o->e;
    for (size_t first4 = first; first4 < end; first4 += 4) { /* four masters' SVDs at once */
        const size_t lanes = end - first4 < 4 ? end - first4 : 4;
        ts_mat3 FE[4], guess[4], U[4], V[4];
        double sig[4][3], sums[4][3][4], sums0[4][3][4];
        size_t strained[4], count = 0; /* the lanes that deform, first in FE */
        for (size_t l = 0; l < lanes; l++) {
            const size_t i = e->blocks.order[first4 + l];
            gather_motion(e, first4 + l, sums[l], sums0[l]);
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    e->grad[9 * i + 3 * a + b] = sums[l][a][b];  /* for eq. 9 */
            const double speed = sqrt(sums[l][0][3] * sums[l][0][3] + sums[l][1][3] * sums[l][1][3] +
                                      sums[l][2][3] * sums[l][2][3]); /* eq. 9's PIC velocity */
            if (!moves_rigidly(e, sums[l], speed, o->dt)) {
                FE[count] = trial_elastic_gradient(e, i, sums[l], o->dt);
                guess[count] = mat_get(e->FE_V + 9 * i);          /* the last step's V */
                strained[count++] = l;
            }
        }
        if (count > 0)
            ts_svd3_near4(FE, guess, count, U, sig, V);
        for (size_t k = 0; k < count; k++)
            deform(e, e->blocks.order[first4 + strained[k]], FE[k], U[k], sig[k], V[k]); /* step 6 */
        for (size_t l = 0; l < lanes; l++) {
            const size_t p = first4 + l, i = e->blocks.order[p];
            move_master(e, i, sums[l], sums0[l], o->dt);          /* steps 7-9 */
            scatter_momentum(e, i, p);
        }
    }
}

/* Step 10: the slaves move by eq. 22's velocity. */
static void advect_slaves(ts_elastoplastic *e, double dt)
{
    #pragma omp parallel for schedule(static)
    for (size_t s = 0; s < e->slaves.n; s++) {
        if (!(e->sm[s] > 0.0))
            continue;
        const double *p = e->share + 4 * s;
        e->sx[s] += (float)(dt * p[0] / e->sm[s]);
        e->sy[s] += (float)(dt * p[1] / e->sm[s]);
        e->sz[s] += (float)(dt * p[2] / e->sm[s]);
    }
}

/* Sec. 4.3: of two slaves closer than 0.15 h the later goes; so does a slave no master reaches. Then
 * sec. 4.2: where a master's former neighbour is farther than 2h, a slave is added on its side facing
 * it, unless the slaves there are already as dense as anywhere at the start. In master order. */
static ts_status remesh_slaves(ts_elastoplastic *e, ts_error *err)
{
    const float close2 = (float)(REMOVE_WITHIN * e->h * REMOVE_WITHIN * e->h);
    size_t ns = e->slaves.n, gone = 0;
    int searched;
    ts_status st = ts_skin_pairs_update(&e->crowd, e->sx, e->sy, e->sz, ns, e->sx, e->sy, e->sz, ns, &searched, err);
    if (st != TS_OK)
        return st;
    #pragma omp parallel for schedule(static) reduction(+ : gone)
    for (size_t s = 0; s < ns; s++) {
        int keep = e->sm[s] > 0.0;
        for (uint32_t k = e->crowd.start[s]; k < e->crowd.start[s + 1] && keep; k++) { /* earlier slaves only */
            const uint32_t o = e->crowd.other[k];
            const float dx = e->sx[o] - e->sx[s], dy = e->sy[o] - e->sy[s], dz = e->sz[o] - e->sz[s];
            keep = !(dx * dx + dy * dy + dz * dz < close2);
        }
        e->skeep[s] = (uint8_t)keep;
        gone += !keep;
    }
    const double parted2 = e->support * e->support;
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < e->masters.n; i++) { /* found in parallel, added in master order */
        int any = 0;
        for (int a = 0; a < ADJACENT; a++) {
            const uint32_t j = e->adj[ADJACENT * i + a];
            if (j == NONE)
                continue;
            const double dx = e->x[j] - e->x[i], dy = e->y[j] - e->y[i], dz = e->z[j] - e->z[i];
            any |= dx * dx + dy * dy + dz * dz > parted2;
        }
        e->parted[i] = (uint8_t)any;
    }
    int grid_now = 0;
    for (size_t i = 0; i < e->masters.n; i++)
        for (int a = 0; a < ADJACENT && e->parted[i]; a++) {
            uint32_t j = e->adj[ADJACENT * i + a];
            if (j == NONE)
                continue;
            double dx = e->x[j] - e->x[i], dy = e->y[j] - e->y[i], dz = e->z[j] - e->z[i];
            double d2 = dx * dx + dy * dy + dz * dz;
            if (d2 <= parted2)
                continue;
            e->adj[ADJACENT * i + a] = NONE; /* parted: one slave, once */
            if (!grid_now) { /* the slaves where they are now, for their density */
                st = ts_grid_build(&e->sgrid, e->sx, e->sy, e->sz, ns, (float)e->support, NULL, err);
                if (st != TS_OK)
                    return st;
                grid_now = 1;
            }
            double f = ADD_AT * e->spacing / sqrt(d2);
            float p[3] = {(float)(e->x[i] + f * dx), (float)(e->y[i] + f * dy), (float)(e->z[i] + f * dz)};
            if (slave_density_at(e, p[0], p[1], p[2]) >= e->rest_slave_density)
                continue;
            size_t before = e->slaves.n;
            if (!add_slave(e, p[0], p[1], p[2]))
                return ts_fail(err, TS_ERR_NOMEM, "elastoplastic: more than max_particles = %ld particles as the "
                               "bodies split; raise it", e->p.max_particles);
            e->skeep[before] = 1;
            e->added++;
        }
    if (gone > 0) { /* renumbered: both lists search again (new slaves alone change the count, which they see) */
        e->removed += gone;
        ts_particles_compact(&e->slaves, e->skeep);
        ts_skin_pairs_invalidate(&e->near);
        ts_skin_pairs_invalidate(&e->crowd);
    }
    return TS_OK;
}

/* -------------------------------------------------------------- the step */

static ts_status elastoplastic_begin_frame(void *state, const ts_step_context *now, ts_error *err)
{
    (void)err;
    ts_elastoplastic *e = state;
    e->now = *now;
    for (size_t c = 0; c < e->n_colliders; c++)
        ts_collider_follow(&e->colliders[c].c, &e->colliders[c].m, now->frame - e->p.frame_start, now->frame_dt);
    return TS_OK;
}

/* What the step rule reads from the masters: the fastest one's speed, and the stiffest one's hardening (a clay
 * compacted to J_P 0.66 is 30 times stiffer at the default hardening: its waves 5.5 times faster) */
static void update_step_limits(ts_elastoplastic *e)
{
    double v2 = 0.0, stiffest = 1.0;
    #pragma omp parallel for schedule(static) reduction(max : v2, stiffest)
    for (size_t i = 0; i < e->masters.n; i++) {
        double s = (double)e->vx[i] * e->vx[i] + (double)e->vy[i] * e->vy[i] + (double)e->vz[i] * e->vz[i];
        v2 = s > v2 ? s : v2;
        const double harden = e->p.plastic ? hardening_factor(e, i) : 1.0; /* F_P stays I without plasticity */
        e->harden[i] = harden;
        stiffest = harden > stiffest ? harden : stiffest;
    }
    e->v_max = sqrt(v2);
    e->stiffening = stiffest;
}

/* The CFL condition on the fastest master, and on the elastic waves: explicitly (beta 0) a wave may cross
 * half a spacing per step, 1 / sqrt(1 - 2 beta) times more below beta = 1/2 (the semi-implicit scheme's
 * stability); from beta = 1/2 on it is stable at any step, and 8 spacings keep it accurate (a cube at rest
 * holds its shape to 0.1 % at 8, measured). */
static ts_status elastoplastic_stable_dt(void *state, double *dt, ts_error *err)
{
    (void)err;
    const ts_elastoplastic *e = state;
    const double v = e->v_max > 1e-6 ? e->v_max : 1e-6;
    double limit = e->p.cfl_number * e->spacing / v;
    double crossing = e->p.beta >= 0.5 ? WAVE_SPACINGS : 0.5 / sqrt(1.0 - 2.0 * e->p.beta);
    double waves = crossing * e->spacing / (e->wave_speed * sqrt(e->stiffening));
    *dt = limit < waves ? limit : waves;
    return TS_OK;
}

static ts_status elastoplastic_step(void *state, const ts_step_context *now, ts_error *err)
{
    ts_elastoplastic *e = state;
    e->now = *now;
    const double dt = now->dt;
    ts_status st = e->p.slave_particles ? TS_OK : masters_as_slaves(e, err);
    if (st == TS_OK)
        st = prepare_pairs(e, err);                               /* step 0 */
    if (st != TS_OK)
        return st;
    memset(e->acc, 0, ACC_WIDTH * e->slaves.n * sizeof *e->acc);
    ts_colour_blocks_run(&e->blocks, shares_block, e);            /* steps 0-3 at the masters */
    solve_velocities(e, dt);                                      /* steps 1-4 at the slaves */
    #pragma omp parallel for schedule(static)
    for (size_t s = 0; s < e->slaves.n; s++) {                    /* step 5 */
        float p[3] = {e->sx[s], e->sy[s], e->sz[s]};
        if (e->p.beta > 0.0)
            slave_friction(e, s, e->sv + 3 * s);
        if (e->sm[s] > 0.0)
            collide(e, p, e->sv + 3 * s, 0.0, 0);
    }
    memset(e->share, 0, 4 * e->slaves.n * sizeof *e->share);
    motion_pass motion = {e, dt};
    ts_colour_blocks_run(&e->blocks, motion_block, &motion);     /* steps 6-9 */
    if (e->p.slave_particles) {
        advect_slaves(e, dt);                                     /* step 10 */
        st = remesh_slaves(e, err);                               /* step 11 */
    }
    update_step_limits(e);
    e->steps++;
    if (st == TS_OK && !isfinite(e->v_max))
        st = ts_fail(err, TS_ERR_UNSTABLE, "particles reached NaN or infinite speed; lower cfl_number, raise beta "
                     "or check the scene scale");
    return st;
}

/* --------------------------------------------------------------- outputs */

/* The skin: each vertex where its masters' motion takes it, x = sum w (x_m + F_m (X - X_m)) with F = F_E F_P
 * (X, X_m at rest): a rigid motion moves it rigidly, a stretch stretches it. */
static ts_status write_skin(const ts_elastoplastic *e, ts_frame_output *out, ts_error *err)
{
    const size_t nv = e->skin_vertices;
    float *pos = malloc((3 * nv + 1) * sizeof *pos);
    if (!pos)
        return ts_fail(err, TS_ERR_NOMEM, "elastoplastic: out of memory writing the skin of frame %d", out->frame);
    #pragma omp parallel for schedule(static)
    for (size_t v = 0; v < nv; v++) {
        double p[3] = {0, 0, 0};
        const float *X = e->skin_rest + 3 * v;
        for (int k = 0; k < SKIN_MASTERS; k++) {
            uint32_t m = e->skin_master[SKIN_MASTERS * v + k];
            if (m == NONE)
                break;
            const ts_mat3 F = ts_m3_mul(mat_get(e->FE + 9 * m), mat_get(e->FP + 9 * m));
            const ts_vec3 d = ts_m3_mul_v3(F, ts_v3(X[0] - e->rest[3 * m], X[1] - e->rest[3 * m + 1],
                                                    X[2] - e->rest[3 * m + 2]));
            const double w = e->skin_weight[SKIN_MASTERS * v + k];
            p[0] += w * (e->x[m] + d.x), p[1] += w * (e->y[m] + d.y), p[2] += w * (e->z[m] + d.z);
        }
        for (int a = 0; a < 3; a++)
            pos[3 * v + a] = (float)p[a];
    }
    ts_frame f;
    ts_frame_init(&f, out->frame, out->time, nv);
    ts_status st = ts_frame_add(&f, "position", TS_ATTR_F32, 3, pos, err);
    if (st == TS_OK)
        st = ts_output_particles(out, "skin", &f, err);
    free(pos);
    return st;
}

static ts_status elastoplastic_write_frame(void *state, ts_frame_output *out, ts_error *err)
{
    ts_elastoplastic *e = state;
    const size_t n = e->masters.n;
    float *pos = malloc((3 * n + 1) * sizeof *pos), *vel = malloc((3 * n + 1) * sizeof *vel);
    float *J = malloc((n + 1) * sizeof *J), *plastic = malloc((n + 1) * sizeof *plastic);
    ts_status st = TS_OK;
    if (!pos || !vel || !J || !plastic)
        st = ts_fail(err, TS_ERR_NOMEM, "elastoplastic: out of memory writing frame %d", out->frame);
    /* in parallel: an SVD per master made a frame of 17,576 plastic masters cost as much as a substep */
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < (st == TS_OK ? n : 0); i++) {
        pos[3 * i] = e->x[i], pos[3 * i + 1] = e->y[i], pos[3 * i + 2] = e->z[i];
        vel[3 * i] = e->vx[i], vel[3 * i + 1] = e->vy[i], vel[3 * i + 2] = e->vz[i];
        const ts_mat3 FP = mat_get(e->FP + 9 * i);
        J[i] = (float)(ts_m3_det(mat_get(e->FE + 9 * i)) * ts_m3_det(FP));
        double eps = 0.0; /* the plastic strain: the size of log F_P (F_P stays I without plasticity) */
        if (e->p.plastic) {
            ts_mat3 U, V;
            double sig[3];
            ts_svd3(FP, &U, sig, &V);
            for (int a = 0; a < 3; a++)
                eps += log(fabs(sig[a]) + 1e-30) * log(fabs(sig[a]) + 1e-30);
        }
        plastic[i] = (float)sqrt(eps);
    }
    ts_frame f;
    ts_frame_init(&f, out->frame, out->time, n);
    if (st == TS_OK) st = ts_frame_add(&f, "position", TS_ATTR_F32, 3, pos, err);
    if (st == TS_OK) st = ts_frame_add(&f, "velocity", TS_ATTR_F32, 3, vel, err);
    if (st == TS_OK) st = ts_frame_add(&f, "id", TS_ATTR_U32, 1, e->id, err);
    if (st == TS_OK) st = ts_frame_add(&f, "J", TS_ATTR_F32, 1, J, err);
    if (st == TS_OK) st = ts_frame_add(&f, "plastic_strain", TS_ATTR_F32, 1, plastic, err);
    if (st == TS_OK) st = ts_output_particles(out, "masters", &f, err);
    free(pos);
    free(vel);
    free(J);
    free(plastic);
    if (st == TS_OK && e->p.write_surface) {
        const ts_surface_settings surface = TS_SURFACE_SETTINGS(e->p);
        st = ts_output_surface(out, "surface", &surface, e->x, e->y, e->z, n, err);
    }
    if (st == TS_OK && e->p.write_skin)
        st = write_skin(e, out, err);
    return st;
}

/* Checkpoint sections: "masters" (their whole state), "slaves" (positions), "counters". */
static ts_status elastoplastic_save_state(void *state, ts_checkpoint *cp, ts_error *err)
{
    ts_elastoplastic *e = state;
    const ts_value counters[] = {{"added", (double)e->added}, {"removed", (double)e->removed},
                                 {"steps", (double)e->steps}, {"cg_iterations", (double)e->cg_iterations_total}};
    ts_status st = ts_particles_save(&e->masters, cp, "masters", err);
    if (st == TS_OK)
        st = ts_particles_save(&e->slaves, cp, "slaves", err);
    if (st == TS_OK)
        st = ts_checkpoint_put_values(cp, "counters", counters, sizeof counters / sizeof *counters, err);
    return st;
}

ts_status ts_elastoplastic_restore(ts_elastoplastic *e, const ts_checkpoint *cp, ts_error *err)
{
    ts_value counters[] = {{"added", 0}, {"removed", 0}, {"steps", 0}, {"cg_iterations", 0}};
    ts_status st = ts_particles_restore(&e->masters, cp, "masters", err);
    if (st == TS_OK)
        st = ts_particles_restore(&e->slaves, cp, "slaves", err);
    if (st == TS_OK)
        st = ts_checkpoint_get_values(cp, "counters", counters, sizeof counters / sizeof *counters, err);
    if (st != TS_OK)
        return st;
    e->added = (size_t)counters[0].value;
    e->removed = (size_t)counters[1].value;
    e->steps = (long)counters[2].value;
    e->cg_iterations_total = (long)counters[3].value;
    update_step_limits(e); /* v_max and the stiffening, from the masters as the step that wrote it left them */
    e->now.frame = cp->frame;
    ts_skin_pairs_invalidate(&e->near);
    ts_skin_pairs_invalidate(&e->crowd);
    return TS_OK;
}

void ts_elastoplastic_get_stats(const ts_elastoplastic *e, ts_elastoplastic_stats *s)
{
    memset(s, 0, sizeof *s);
    s->masters = e->masters.n;
    s->slaves = e->slaves.n;
    s->slaves_added = e->added;
    s->slaves_removed = e->removed;
    s->cg_iterations = e->cg_iterations;
    s->cg_iterations_total = e->cg_iterations_total;
    s->cg_residual = e->cg_residual;
    s->steps = e->steps;
    s->pair_searches = e->near.searches;
    s->max_speed = e->v_max;
    for (size_t i = 0; i < e->masters.n; i++) { /* in index order: the same sums on any thread count */
        const double m = e->mass[i], v[3] = {e->vx[i], e->vy[i], e->vz[i]};
        s->kinetic_energy += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (int a = 0; a < 3; a++)
            s->momentum[a] += m * v[a];
        const double J = ts_m3_det(mat_get(e->FE + 9 * i)) * ts_m3_det(mat_get(e->FP + 9 * i));
        s->volume += J * e->V0[i];
        s->rest_volume += e->V0[i];
        ts_mat3 U, V;
        double sig[3];
        ts_svd3(mat_get(e->FP + 9 * i), &U, sig, &V);
        double eps = 0.0;
        for (int a = 0; a < 3; a++)
            eps += log(fabs(sig[a]) + 1e-30) * log(fabs(sig[a]) + 1e-30);
        s->max_plastic_strain = sqrt(eps) > s->max_plastic_strain ? sqrt(eps) : s->max_plastic_strain;
    }
}

size_t ts_elastoplastic_masters(const ts_elastoplastic *e, const float **x, const float **y, const float **z)
{
    *x = e->x, *y = e->y, *z = e->z;
    return e->masters.n;
}

static ts_status ep_create(void **state, const void *params, const void *objects, size_t count, ts_error *err)
{
    return ts_elastoplastic_create((ts_elastoplastic **)state, params, objects, count, err);
}

static ts_status ep_restore(void *state, const ts_checkpoint *cp, ts_error *err)
{
    return ts_elastoplastic_restore(state, cp, err);
}

static void ep_destroy(void *state) { ts_elastoplastic_destroy(state); }

static size_t ep_stats(const void *state, ts_stat *out)
{
    ts_elastoplastic_stats s;
    ts_elastoplastic_get_stats(state, &s);
    const ts_stat all[] = {
        {"masters", (double)s.masters, 1}, {"slaves", (double)s.slaves, 1},
        {"slaves_added", (double)s.slaves_added, 1}, {"slaves_removed", (double)s.slaves_removed, 1},
        {"cg_iterations", (double)s.cg_iterations, 1}, {"cg_residual", s.cg_residual, 0},
        {"cg_iterations_total", (double)s.cg_iterations_total, 1}, {"steps", (double)s.steps, 1},
        {"kinetic_energy", s.kinetic_energy, 0}, {"max_speed", s.max_speed, 0}, {"volume", s.volume, 0},
        {"rest_volume", s.rest_volume, 0}, {"max_plastic_strain", s.max_plastic_strain, 0},
    };
    return ts_stats_copy(out, all, sizeof all / sizeof *all);
}

const ts_solver_ops ts_elastoplastic_ops = {
    "elastoplastic", &ts_elastoplastic_param_table, sizeof(ts_elastoplastic_object), 2000, ep_create, ep_restore,
    ep_destroy, ep_stats, elastoplastic_begin_frame, elastoplastic_stable_dt, elastoplastic_step,
    elastoplastic_write_frame, elastoplastic_save_state,
};
