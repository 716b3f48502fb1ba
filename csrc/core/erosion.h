/* erosion.h - the erosion effect: SPH water carving a voxel terrain.
 *
 * After Otsubo & Kusama (../shared/papers/sph-voxel-erosion-otsubo-kusama.txt):
 * a density-grid terrain (terrain.h; overhangs and caves allowed), WCSPH
 * water from the shared SPH model (sph_model.h) with the terrain as a wall
 * (Harada's wall weights, the sec. 4.3 attraction, wall friction), and
 * erosion per grid point from the shear rate of the particles near it
 * (sec. 4.1) every N steps. Unlike the paper, the eroded material is not
 * lost: the particles carry it as sediment and drop it where the flow slows.
 *
 * Outputs per frame: stream "fluid" (position, velocity, id, sediment),
 * "terrain" (.vdb, grid 'density', iso 0.5), "surface" (.vdb level set, if
 * asked) and "budget" (one row: the volumes eroded, deposited, suspended,
 * drained and discarded so far, and the terrain's volume).
 */
#ifndef TSUBU_EROSION_H
#define TSUBU_EROSION_H

#include <stddef.h>
#include <stdint.h>

#include "frameloop.h"
#include "params.h"
#include "status.h"

typedef enum ts_erosion_role {
    TS_EROSION_TERRAIN = 0,   /* ground: a closed mesh's inside, or below an open mesh (a heightfield) */
    TS_EROSION_FLUID = 1,     /* filled with water at the start (a lake) */
    TS_EROSION_INFLOW = 2,    /* kept full of water over a frame range (a river's source) */
    TS_EROSION_RAIN = 3,      /* drops fall from its faces over a frame range */
    TS_EROSION_SINK = 4,      /* water inside it is removed (counted) */
    TS_EROSION_OBSTACLE = 5   /* a static or animated collider that does not erode */
} ts_erosion_role;

typedef struct ts_erosion_object {
    const char *name;
    ts_erosion_role role;
    const float *vertices;       /* world space at frame_start */
    size_t vertex_count;
    const int32_t *triangles;
    size_t triangle_count;
    const double *motion;        /* obstacle, inflow: rows tx ty tz qw qx qy qz per frame, or NULL */
    int motion_frames;
    double velocity[3];          /* fluid: initial; inflow: emission velocity */
    int emit_start, emit_end;    /* inflow, rain */
} ts_erosion_object;

typedef struct ts_erosion_params {
    double particle_radius, rest_density, speed_of_sound, viscosity, artificial_viscosity;
    double surface_tension, wall_friction, wall_attraction;
    double gravity[3];
    double cfl_number;
    long max_particles;
    double voxel_size;
    double erosion_strength;     /* K_epsilon: voxel fraction per second per particle and unit of excess shear */
    double critical_shear;       /* tau_c, s^-1/2 (tau = K theta^n with K = 1) */
    double shear_exponent;       /* n */
    int erosion_interval;        /* SPH steps between erosion updates */
    double erosion_floor;        /* m: no erosion below this height */
    int keep_sediment;           /* 1: particles carry what erodes and deposit it; 0: it vanishes (the paper) */
    double settling_speed;       /* m/s: sediment settles from water slower than this */
    double settling_rate;        /* 1/s: share of the sediment that settles per second in still water */
    double rain_rate;            /* mm/h of water over the rain objects' horizontal area */
    int rain_drop_particles;     /* particles per drop (the paper: 5) */
    double rain_speed;           /* m/s: falling speed of new drops */
    int write_surface;
    int surface_method;          /* ts_surface_method */
    double surface_voxel_ratio, surface_radius_scale;
    int surface_smoothing;
    double domain_min[3], domain_max[3];
    int frame_start;
    double fps;
    uint64_t seed;
} ts_erosion_params;

extern const ts_param_table ts_erosion_param_table;
ts_erosion_params ts_erosion_params_default(void);

typedef struct ts_erosion ts_erosion;

ts_status ts_erosion_create(ts_erosion **out, const ts_erosion_params *p, const ts_erosion_object *objects,
                            size_t object_count, ts_error *err);
ts_status ts_erosion_restore(ts_erosion *e, const ts_checkpoint *checkpoint, ts_error *err);
void ts_erosion_destroy(ts_erosion *e);

typedef struct ts_erosion_stats {
    size_t particles, removed, capacity, erosion_updates;
    double eroded, deposited, suspended, drained, discarded;   /* m^3 of ground, so far */
    double terrain_volume, terrain_volume0;                    /* m^3 now and at the start */
    double max_speed;
} ts_erosion_stats;

void ts_erosion_get_stats(const ts_erosion *e, ts_erosion_stats *s);

/* The terrain's density grid (for tests): dims and values, x fastest. */
const float *ts_erosion_terrain(const ts_erosion *e, int dims[3], float origin[3], float *voxel);
/* The water (for tests): positions and count. */
size_t ts_erosion_particles(const ts_erosion *e, const float **x, const float **y, const float **z);
/* Signed distance to the ground at a point (negative inside). */
float ts_erosion_ground_distance(const ts_erosion *e, float x, float y, float z);

extern const ts_solver_ops ts_erosion_ops;

#endif
