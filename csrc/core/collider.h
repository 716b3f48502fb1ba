/* collider.h - static and moving colliders as signed distance fields.
 *
 * A collider is the dense signed distance of a closed mesh (built through
 * the VDB layer), negative inside, in the mesh's rest pose; an animated
 * collider moves rigidly by a transform interpolated between the
 * per-frame transforms of its object (translation linearly, rotation by
 * slerp), which also gives the wall velocity that pushes and carries
 * particles. Queries are trilinear in the distance and its gradient.
 */
#ifndef TSUBU_COLLIDER_H
#define TSUBU_COLLIDER_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "motion.h"
#include "vecmath.h"


typedef struct ts_collider {
    char name[64];
    float origin[3];
    float voxel_size, inv_voxel;
    int dims[3];
    float *phi;              /* signed distance, x fastest */
    float far_distance;      /* value outside the stored field */
    /* rest pose -> world at the start and end of the current frame interval */
    ts_transform from, to;
    double interval;         /* seconds between `from` and `to` (0 for static) */
} ts_collider;

/* A collider with its object's animation, as every solver's begin_frame follows it (ts_collider_follow). */
typedef struct ts_moving_collider {
    ts_collider c;
    ts_motion m;
} ts_moving_collider;

typedef struct ts_collider_hit {
    float distance;          /* signed, negative inside */
    ts_vec3 normal;          /* unit outward normal, world */
    ts_vec3 velocity;        /* wall velocity at the query point, world */
} ts_collider_hit;


/* Build from a closed mesh (world coordinates at rest). `name` appears in
 * error messages. voxel_size sets the resolution; band_voxels how far
 * outside the surface distances are exact. */
ts_status ts_collider_from_mesh(ts_collider *c, const char *name, const float *vertices, size_t vertex_count,
                                const int32_t *triangles, size_t triangle_count, double voxel_size,
                                double band_voxels, ts_error *err);
void ts_collider_free(ts_collider *c);

/* Set the motion for the next frame interval (a static collider keeps
 * the identity in both). */
void ts_collider_set_motion(ts_collider *c, ts_transform from, ts_transform to, double interval);
/* The same for frame row `index` to `index + 1` of an animation, frame_dt
 * seconds apart (a static collider, without rows, stays still). What every
 * solver's begin_frame does for its animated colliders. */
void ts_collider_follow(ts_collider *c, const ts_motion *m, int index, double frame_dt);

/* Query at a world point, s in [0,1] along the current interval. Returns 1
 * when the point is within the stored field, 0 when far outside (hit->distance
 * is then far_distance and normal/velocity are zero). */
int ts_collider_query(const ts_collider *c, double s, ts_vec3 p, ts_collider_hit *hit);

#endif
