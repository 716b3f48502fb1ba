/* sph_model.h - the SPH fluid every SPH solver shares: particles, Verlet
 * lists, the density and force passes over sph_loops, the boundaries, and
 * the integration.
 *
 * A solver (water, erosion) is a short recipe over it (SPlisHSPlasH's
 * TimeStep classes over its FluidModel are the same idea):
 *
 *   ts_sph_build(m)          lists when stale
 *   ts_sph_density(m)        eq. 3.5 with the walls' share (rigid bodies' surfaces too)
 *   ts_sph_forces(m)         pressure, viscosity, surface tension, gravity; particle shifting
 *   ts_sph_body_forces(m)    the liquid's force on every rigid body (two-way bodies), from the
 *                            shares the force pass left
 *   ts_sph_integrate(m, dt)  eqs. 3.42-3.43 and the shift, then every boundary keeps the fluid out
 *
 * Boundaries are a list, walked in order: animated colliders and the domain
 * box give wall weights (Harada 2007) and keep particles out with friction;
 * a rigid body's shape (its rest-pose distance field, in its moving frame) is
 * a wall of the same kind - its wall weight in the density, its pressure
 * and friction on the liquid, their exact reaction on the body - and keeps
 * the liquid out; a voxel terrain (terrain.h) is a wall whose distance field changes between
 * steps, with the erosion paper's attraction and wall friction.
 */
#ifndef TSUBU_SPH_MODEL_H
#define TSUBU_SPH_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "collider.h"
#include "grid.h"
#include "kernels.h"
#include "particles.h"
#include "rigid.h"
#include "sph.h"
#include "wall_field.h"
#include "status.h"

/* What the model takes of a solver's parameters. */
typedef struct ts_sph_settings {
    double particle_radius;       /* spacing is twice it, h twice the spacing */
    double rest_density, speed_of_sound, gas_stiffness;
    double viscosity, artificial_viscosity, surface_tension, wall_friction, cfl_number;
    double gravity[3];
    int muller;                   /* Mueller 2003's pressure (ideal gas, eq. 3.16), else WCSPH (Tait) */
    double domain_min[3], domain_max[3];
    /* Terrain walls only: the erosion paper's sec. 4.3 - below rho_1 = rho0 +
     * rho_B (rho_B = m W(0): one particle's own share) the wall's pressure
     * force is blended towards attraction, so that a thin flow follows the
     * ground into hollows rather than leaping off it; the attraction's peak
     * as a share of gravity (0 off; see init_attraction). */
    double wall_attraction;
    /* Particle shifting (ts_sph_forces): D of delta r = -D h^2 (grad C - g / c^2) per step, a share of h^2;
     * 0 off. Weakly compressible only. */
    double particle_shifting;
} ts_sph_settings;

typedef enum ts_sph_boundary_kind {
    TS_SPH_COLLIDER,   /* an animated mesh collider, queried where it is at the step's end */
    TS_SPH_BODY,       /* a rigid body's shape, in the body's frame: keeps the fluid out */
    TS_SPH_BOX,        /* the inside of the domain box */
    TS_SPH_TERRAIN     /* a voxel terrain's distance field (terrain.h): a static wall that changes between
                          steps, with the sec. 4.3 attraction and the wall friction F_vis(p) of sec. 3.2 */
} ts_sph_boundary_kind;

typedef struct ts_sph_boundary {
    ts_sph_boundary_kind kind;
    const ts_collider *shape;      /* COLLIDER, BODY (at rest) */
    const ts_rigid_body *body;     /* BODY: its pose and velocity */
    const ts_wall_field *field;    /* BODY: its wall weight, in the shape's frame (wall_field.h) */
    ts_vec3 centroid0;             /* BODY: its centre of mass at rest, in the shape's frame */
    double radius;                 /* BODY: no point farther than this from its centre */
    unsigned sides;                /* BOX: the sides that are walls, bit 2a the low side of axis a, bit 2a+1
                                      the high one (TS_SPH_ALL_SIDES); particles leave through the others */
    /* BODY: its pose and motion for this step (the body moves only after the fluid), taken by
     * ts_sph_density: millions of queries need not turn a quaternion into a matrix each */
    ts_mat3 to_world, to_body;
    ts_vec3 velocity, angular_velocity;
    ts_vec3 force, torque;         /* BODY: the liquid's on it this step, about its centre of mass (ts_sph_body_forces) */
} ts_sph_boundary;

#define TS_SPH_ALL_SIDES 0x3Fu

/* One thread's share of a Verlet list build. */
typedef struct ts_sph_list_block {
    uint32_t *entries;
    size_t cap, used, offset;
} ts_sph_list_block;

/* What one fluid particle does to one rigid body in a step: the force pass leaves one per particle and body
 * within h in a list of its thread's; ts_sph_body_forces sums them in the fluid's order. */
typedef struct ts_sph_body_share {
    uint32_t i, k;                /* the fluid particle and the body's boundary */
    float force[3];
    double at[3];                 /* where it pushes: the particle's nearest point on the body */
} ts_sph_body_share;

typedef struct ts_sph_share_list {
    ts_sph_body_share *items;
    size_t n, cap, read;          /* read: where ts_sph_body_forces' merge is */
} ts_sph_share_list;

typedef struct ts_sph_model {
    ts_sph_settings set;
    ts_kernels k;
    ts_sph_eos_params eos;
    ts_sph_wall wall;
    float h, spacing, mass, r_contact, r_body_contact;
    float domain[6];

    /* the fluid, re-sorted into grid-cell order whenever the Verlet lists
     * are rebuilt, so that neighbours sit close in memory */
    ts_particles fluid;
    float *x, *y, *z, *vx, *vy, *vz;
    uint32_t *id;
    float *ax, *ay, *az, *rho, *pr, *wgx, *wgy, *wgz;
    float *sx, *sy, *sz;         /* particle shifting: this step's shift, from the force pass */
    float *wi;                   /* the share of the kernel inside no wall (wall_sum), from the density pass */
    float *P, *inv_rho;          /* p / rho^2 and 1 / rho, per step */
    float *tl, *tnx, *tny, *tnz; /* distance to the nearest terrain and its normal (tl >= h: none near) */
    float *pos4, *vel4;          /* (x, y, z, rho) and (vx, vy, vz, P) packed: what the AVX2 loops read */
    uint32_t *vlist;             /* Verlet lists: the fluid within h + skin at the last build, ... */
    uint32_t *vstart;            /* ... particle i's from vlist[vstart[i]] to vlist[vstart[i + 1]] */
    size_t vlist_cap;
    ts_sph_list_block *blocks;   /* one per thread */
    int n_blocks;
    float *x0, *y0, *z0;         /* positions at the last build */
    float skin;
    int lists_stale;             /* rebuild before the next density pass */
    uint32_t *nbr;               /* fluid neighbours found by the density pass */
    uint8_t *nbr_n;              /* how many (or: too many, search again) */
    uint8_t *keep;               /* still inside the domain */
    ts_sph_share_list *shares;   /* one per thread: what the force pass found the liquid does to the bodies */
    int n_share_lists, shares_lost;
    ts_grid grid;

    ts_sph_boundary *boundaries;
    size_t n_boundaries, boundary_cap;
    int has_terrain;
    float rho_1;                          /* rho0 + rho_B: below it terrain walls attract (sec. 4.3) */
    float attraction[TS_SPH_WALL_SAMPLES]; /* F_attract(l): the paper's curve, peak |g| */

    double s;                    /* where the step ends within the frame: colliders are queried there */
    double v_max, a_max;
} ts_sph_model;

/* Set up: spacing, h, kernels, equation of state, walls; the particle
 * arrays registered (a solver may register more in m->fluid). */
ts_status ts_sph_init(ts_sph_model *m, const ts_sph_settings *set, ts_error *err);
/* Room for at most max_fluid fluid particles. */
ts_status ts_sph_alloc(ts_sph_model *m, size_t max_fluid, ts_error *err);
void ts_sph_free(ts_sph_model *m);
/* Append a boundary; the order is the order walls are summed and applied. */
ts_status ts_sph_add_boundary(ts_sph_model *m, ts_sph_boundary b, ts_error *err);

/* Largest stable step: CFL, viscous diffusion, force. */
double ts_sph_stable_dt(const ts_sph_model *m);
ts_status ts_sph_build(ts_sph_model *m, ts_error *err);
void ts_sph_density(ts_sph_model *m);
void ts_sph_forces(ts_sph_model *m);
/* What fluid particle i does to the body of boundary k, and where (0: nothing). */
int ts_sph_body_push(const ts_sph_model *m, size_t k, size_t i, ts_vec3 *force, ts_vec3 *at);
/* The liquid's force and torque on every body, into its boundary's force and torque, from the last force
 * pass's shares summed in the fluid's order: the same bits for any thread count. */
ts_status ts_sph_body_forces(ts_sph_model *m, ts_error *err);
void ts_sph_integrate(ts_sph_model *m, double dt);
/* Whether fluid particle i is inside the domain's bounds. */
static inline int ts_sph_in_domain(const ts_sph_model *m, size_t i)
{
    return m->x[i] >= m->domain[0] && m->x[i] <= m->domain[3] && m->y[i] >= m->domain[1] && m->y[i] <= m->domain[4] &&
           m->z[i] >= m->domain[2] && m->z[i] <= m->domain[5];
}

/* Remove what left the domain (through sides that are no walls); returns how many. */
size_t ts_sph_remove_escaped(ts_sph_model *m);
/* Walls: the domain box's wall sides, colliders where they are at m->s, terrains (not bodies). The nearest
 * to p within `reach`: its distance (signed, negative inside it) and unit normal into the fluid's side; 0 if
 * none. */
int ts_sph_nearest_wall(const ts_sph_model *m, ts_vec3 p, float reach, float *distance, ts_vec3 *normal);
/* The same for boundary k alone, if closer than *distance (which it lowers). */
int ts_sph_wall_distance(const ts_sph_model *m, size_t k, ts_vec3 p, float *distance, ts_vec3 *normal);
/* Whether wall k may be closer than `radius` to `centre` (0: surely not). */
int ts_sph_wall_may_be_near(const ts_sph_model *m, size_t k, ts_vec3 centre, double radius);
/* No fluid particle closer than 0.9 spacing to (x, y, z) (the grid is as old as the lists). */
int ts_sph_site_is_free(const ts_sph_model *m, float x, float y, float z);
int ts_sph_all_finite(const ts_sph_model *m);

#endif
