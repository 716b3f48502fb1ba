/* rigid_object.h - a scene's rigid object as the granular solvers see it:
 * a closed mesh that is either simulated (a rigid body of its density,
 * with initial velocities) or keyframed (moved by its animation, infinite
 * mass). Sand's objects and fracture's projectiles are both this; the
 * checks, the mass properties, the pose and the velocity of a point are
 * written once, here.
 */
#ifndef TSUBU_RIGID_OBJECT_H
#define TSUBU_RIGID_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "motion.h"
#include "rigid.h"
#include "status.h"

/* What a scene hands a solver for one object. */
typedef struct ts_object_input {
    const char *name;
    const float *vertices;       /* world space at frame_start, xyz interleaved */
    size_t vertex_count;
    const int32_t *triangles;
    size_t triangle_count;
    const double *motion;        /* keyframed: rows tx ty tz qw qx qy qz per frame from frame_start; else NULL */
    int motion_frames;
    double density;              /* simulated objects, kg/m^3 */
    double velocity[3], angular_velocity[3]; /* simulated objects, initial */
    double origin[3];            /* world position of the object's origin at frame_start */
    double rotation[4];          /* its world rotation at frame_start, w x y z */
} ts_object_input;

typedef struct ts_rigid_object {
    char name[64];
    int keyframed;
    ts_rigid_body rb;            /* kinematic when keyframed (then kept at its animated pose) */
    ts_motion motion;
    ts_transform from, to;       /* keyframed: motion over the current frame interval */
    ts_vec3 centroid0;           /* centre of mass at frame_start, world */
    ts_vec3 origin_offset;       /* object origin - centroid, body frame */
    ts_quat rotation0;           /* object rotation at frame_start */
    ts_vec3 velocity0, angular_velocity0;  /* simulated: as given */
} ts_rigid_object;

/* Check the mesh (closed), the density (simulated) or the motion (keyframed)
 * and set the body up at rest; `kind` ("object", "projectile") names it in
 * messages. The initial velocities are set (ts_rigid_object_launch sets them again). */
ts_status ts_rigid_object_init(ts_rigid_object *ob, const ts_object_input *in, const char *kind,
                               ts_mass_properties *mp, ts_error *err);

/* Give a simulated object its initial velocities. */
void ts_rigid_object_launch(ts_rigid_object *ob);

/* Keyframed objects: take the motion of frame row `index` to `index + 1`. */
void ts_rigid_object_begin_frame(ts_rigid_object *ob, int index);

/* Keyframed objects: move the body to its animated pose at s in [0, 1] of the frame. */
void ts_rigid_object_follow(ts_rigid_object *ob, double s);

/* Velocity of the object's material at a world point, at s of a frame of frame_dt seconds. */
ts_vec3 ts_rigid_object_point_velocity(const ts_rigid_object *ob, double frame_dt, double s, ts_vec3 point);

/* World pose of the object's origin (for the "rigid" stream). */
void ts_rigid_object_origin_pose(const ts_rigid_object *ob, ts_vec3 *position, ts_quat *rotation);

#endif
