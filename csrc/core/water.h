/* water.h - the water effect: SPH liquid with two-way rigid bodies.
 *
 * After Amada 2005 (../shared/papers/sph-water-rigid-coupling-amada.txt):
 * SPH of Mueller et al. 2003 (eqs 3.5-3.23) or, by default, the weakly
 * compressible form of Becker & Teschner 2007 (Tait equation, artificial
 * viscosity) that holds volume; rigid bodies sampled as particles that take
 * part in density and pressure (eqs 3.33-3.35) but moved by full rigid-body
 * dynamics (rigid.h) rather than the paper's simplified eqs 3.36-3.47;
 * obstacles and animated containers as signed distance fields with wall
 * weight functions (sph.h); inflow objects; a domain box.
 *
 * The solver plugs into the shared frame loop (frameloop.h) through
 * ts_water_ops. Outputs per frame: stream "fluid" (position, velocity, id,
 * density), stream "surface" (.vdb level set 'surface', if asked), stream
 * "rigid" (position and rotation of each rigid object's origin).
 */
#ifndef TSUBU_WATER_H
#define TSUBU_WATER_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "frameloop.h"
#include "params.h"
#include "status.h"

typedef enum ts_water_role {
    TS_WATER_FLUID = 0,     /* filled with liquid at the start */
    TS_WATER_INFLOW = 1,    /* kept full of liquid over a frame range */
    TS_WATER_RIGID = 2,     /* two-way rigid body */
    TS_WATER_OBSTACLE = 3   /* static or animated collider */
} ts_water_role;

typedef struct ts_water_object {
    const char *name;
    ts_water_role role;
    const float *vertices;       /* world space at frame_start, xyz interleaved */
    size_t vertex_count;
    const int32_t *triangles;
    size_t triangle_count;
    /* Rigid motion relative to the frame_start pose, one row per frame from
     * frame_start: tx ty tz qw qx qy qz. NULL when the object does not move. */
    const double *motion;
    int motion_frames;
    double velocity[3];          /* fluid, rigid: initial; inflow: emission velocity */
    double angular_velocity[3];  /* rigid */
    double density;              /* rigid, kg/m^3 */
    int emit_start, emit_end;    /* inflow frames */
    double origin[3];            /* rigid: world position of the object's origin at frame_start */
    double rotation[4];          /* rigid: its world rotation at frame_start, w x y z */
} ts_water_object;

typedef enum ts_water_solver {
    TS_WATER_WCSPH = 0,          /* weakly compressible: Tait equation, artificial viscosity */
    TS_WATER_MULLER = 1          /* Mueller's ideal-gas pressure, eq. 3.17 */
} ts_water_solver;

typedef struct ts_water_params {
    int solver;                  /* TS_WATER_WCSPH or TS_WATER_MULLER */
    double particle_radius, rest_density, speed_of_sound, gas_stiffness;
    double viscosity, artificial_viscosity, surface_tension, wall_friction;
    double particle_shifting;    /* ts_sph_settings.particle_shifting */
    double gravity[3];
    double cfl_number;
    long max_particles;
    int write_surface;
    int surface_method;          /* ts_surface_method */
    double surface_voxel_ratio, surface_radius_scale;
    int surface_smoothing;       /* Gaussian passes over the surface level set */
    double domain_min[3], domain_max[3];
    /* the domain's sides that are walls (-x, +x, -y, +y, -z, +z); liquid leaving through the others is removed */
    int wall_left, wall_right, wall_front, wall_back, wall_bottom, wall_top;
    int frame_start;
    double fps;
    uint64_t seed;
} ts_water_params;

/* The parameters' names, ranges and defaults (params.h). */
extern const ts_param_table ts_water_param_table;
ts_water_params ts_water_params_default(void);

typedef struct ts_water ts_water;

/* Check everything and build the initial state; messages name the object or
 * parameter. Nothing is allocated beyond the budget max_particles. */
ts_status ts_water_create(ts_water **out, const ts_water_params *p, const ts_water_object *objects,
                          size_t object_count, ts_error *err);
/* Replace the state by a checkpoint written by this solver (resume). */
ts_status ts_water_restore(ts_water *w, const ts_checkpoint *checkpoint, ts_error *err);
void ts_water_destroy(ts_water *w);

typedef struct ts_water_stats {
    size_t fluid_particles, rigid_particles, removed, capacity;
    double kinetic_energy, potential_energy; /* fluid + bodies, J; potential relative to z = 0 */
    double max_speed;
    double mean_density;                     /* of the fluid at the last step, kg/m^3 */
} ts_water_stats;

void ts_water_get_stats(const ts_water *w, ts_water_stats *s);

/* A measurement, not a scene setting: every rigid body held still where it is (its step skipped, its momentum
 * zeroed), so that the liquid's force on a body at a chosen pose can be read - a held body answers in a
 * second of settling what a floating one shows only once it has come to rest. */
void ts_water_hold_bodies(ts_water *w, int hold);
/* The liquid's force on body b in the last step (the film's included), N; zero for a body out of range. */
void ts_water_body_fluid_force(const ts_water *w, size_t b, double force[3]);

extern const ts_solver_ops ts_water_ops;

#endif
