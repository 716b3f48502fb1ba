/* motion.h - rigid motion of animated objects.
 *
 * An animated object arrives as one row per frame (tx ty tz qw qx qy qz):
 * its rigid motion relative to its pose at frame_start. Within a frame the
 * motion is interpolated (translation linearly, rotation by slerp), which
 * also gives the velocity of any point it carries. Colliders, the water's
 * containers and the sand's keyframed objects all move by this.
 */
#ifndef TSUBU_MOTION_H
#define TSUBU_MOTION_H

#include "vecmath.h"

typedef struct ts_transform {
    ts_vec3 translation;
    ts_quat rotation;
} ts_transform;

ts_transform ts_transform_identity(void);
ts_vec3 ts_transform_apply(ts_transform t, ts_vec3 p);
/* From a at s = 0 to b at s = 1. */
ts_transform ts_transform_lerp(ts_transform a, ts_transform b, double s);

typedef struct ts_motion {
    const double *rows; /* per frame: tx ty tz qw qx qy qz; NULL: does not move */
    int frames;
} ts_motion;

/* The transform of frame row `index`, clamped to the rows (identity without rows). */
ts_transform ts_motion_at(const ts_motion *m, int index);

/* Velocity of the point that is at rest position `rest` (frame_start pose),
 * at s in [0, 1] of an interval of `seconds` from `from` to `to`. */
ts_vec3 ts_motion_point_velocity(ts_transform from, ts_transform to, double seconds, double s, ts_vec3 rest);

#endif
