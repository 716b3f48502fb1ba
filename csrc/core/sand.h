/* sand.h - the sand effect: objects dent, plough and spatter a sand bed.
 *
 * After Onoue & Nishita (../shared/papers/sand-dem-spattering-onoue-nishita.txt):
 * the bed is a heightfield (§3.1); objects are seen through height span maps
 * (hsmap.h, §3.2); where an object touches the bed, the sand of a DEM region
 * under it becomes distinct elements (DEs, spheres standing for ~30 grains)
 * in a face-centred cubic lattice (§4.2), and the region grows where its
 * boundary elements are pushed hard. DEs interact by the Cundall-Strack
 * contact law (contact.h, appendix A), with objects through their span maps
 * (fig. 3) and with the bed below the region the same way. A DE flying up
 * off its column is split into grain-size airborne DEs in a cone (§4.4); an
 * airborne grain landing on a DE merges into it (§4.3.3 step 5), landing on
 * the bed outside the region adds its volume to the heightfield (step 6).
 * Objects are rigid bodies pushed by the DEs or keyframed (infinite mass).
 *
 * Sand volume is conserved: static heightfield + DEs + airborne grains
 * (+ what left the bed's edges, counted) stays what it was at the start.
 *
 * Outputs per frame: stream "ground" (one row per heightfield cell, x
 * fastest: float "height"), stream "grains" (airborne grains and DEs resting
 * on objects: position, velocity, radius, airborne, id), stream "rigid"
 * (each object's origin: position, rotation).
 */
#ifndef TSUBU_SAND_H
#define TSUBU_SAND_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "frameloop.h"
#include "params.h"
#include "rigid_object.h"
#include "status.h"

typedef enum ts_sand_role {
    TS_SAND_GROUND = 0,   /* the sand bed: its top surface gives the initial heights */
    TS_SAND_OBJECT = 1    /* a rigid object: simulated, or keyframed when it has motion */
} ts_sand_role;

typedef struct ts_sand_object {
    ts_sand_role role;
    ts_object_input in;          /* the bed uses only its mesh */
} ts_sand_object;

typedef struct ts_sand_params {
    /* the bed's grid: cell (i, j) covers x0 + [i, i+1) cell_size, y0 + [j, j+1) cell_size */
    double x0, y0, cell_size;
    int nx, ny;
    double noise;                /* amplitude of random initial heights, m (paper §3.1) */
    double angle_of_repose;      /* the steepest slope the bed outside the DEM region holds, radians; 90 deg: any */
    double element_radius;       /* DE radius when placed, m */
    double bulk_density;         /* kg/m^3 of the bed; sets DE masses */
    int grains_per_element;      /* airborne grains one DE splits into (the paper: 30) */
    double friction, restitution, contact_time;
    double rolling_friction;     /* mu_r of the rolling resistance (ts_rolling_torque), 0: none */
    double unloading_stiffness;  /* contacts unload this many times stiffer than they load (ts_hysteretic_overlap);
                                    1: the paper's linear spring */
    double steps_per_contact;    /* substeps per contact time: the stable step is t_c / this */
    double gravity[3];
    double dem_depth;            /* depth of the DEM region below the surface, m; 0: half the object's height, a heavy
                                    one's at least its width (object_dem_depth), at most what the contacts carry
                                    (sand_bed.c, carried_depth) */
    double split_speed;          /* upward speed above which a DE touching nothing flies apart, m/s */
    double resting_gap;          /* a DE this close above an object (element radii) rests on it */
    double cone_angle;           /* half-angle of the airborne grains' velocity jitter, radians */
    double grow_force;           /* region grows where a boundary DE feels more than this x its weight */
    double rest_force;           /* DEs under this x their weight in net force ... */
    double rest_speed;           /* ... and slower than this (m/s) are not updated (§4.3.3 step 2) */
    int smoothing;               /* smoothing passes of the rebuilt heights in the region (§4.4) */
    long max_elements;           /* memory budget */
    int frame_start;
    double fps;
    uint64_t seed;
} ts_sand_params;

/* The parameters' names, ranges and defaults (params.h). */
extern const ts_param_table ts_sand_param_table;
ts_sand_params ts_sand_params_default(void);

typedef struct ts_sand ts_sand;

/* Check everything and build the initial state; messages name the object or parameter. */
ts_status ts_sand_create(ts_sand **out, const ts_sand_params *p, const ts_sand_object *objects, size_t object_count,
                         ts_error *err);
ts_status ts_sand_restore(ts_sand *s, const ts_checkpoint *checkpoint, ts_error *err);
void ts_sand_destroy(ts_sand *s);

typedef struct ts_sand_stats {
    size_t elements, airborne, on_objects, region_columns, max_elements_seen;
    double volume_bed, volume_elements, volume_airborne, volume_lost; /* m^3; bed relative to z = 0 */
    double peak_airborne_volume;
    double max_speed;            /* of the DEs, m/s */
    double dem_depth;            /* the DEM region's depth, m: as set, or chosen at the first contact (0 before) */
    double contact_time;         /* t_c in use, s: as set, or the automatic one */
    long steps;
} ts_sand_stats;
void ts_sand_get_stats(const ts_sand *s, ts_sand_stats *st);

/* The displayed heights (nx * ny), as written to the "ground" stream. */
const float *ts_sand_heights(ts_sand *s);

extern const ts_solver_ops ts_sand_ops;

#endif
