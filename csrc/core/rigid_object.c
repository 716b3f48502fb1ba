/* rigid_object.c - simulated or keyframed rigid objects (see rigid_object.h). */
#include "rigid_object.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "mesh.h"

ts_status ts_rigid_object_init(ts_rigid_object *ob, const ts_object_input *in, const char *kind,
                               ts_mass_properties *mp, ts_error *err)
{
    memset(ob, 0, sizeof *ob);
    snprintf(ob->name, sizeof ob->name, "%s", in->name);
    ts_status st = ts_mesh_check_closed(in->vertices, in->vertex_count, in->triangles, in->triangle_count, in->name,
                                        err);
    if (st == TS_OK)
        st = ts_mesh_mass_properties(in->vertices, in->vertex_count, in->triangles, in->triangle_count, in->name, mp,
                                     err);
    if (st != TS_OK)
        return st;
    ob->keyframed = in->motion != NULL;
    if (ob->keyframed) {
        if (in->motion_frames < 1)
            return ts_fail(err, TS_ERR_INVALID, "%s '%s': its animation has no frames", kind, in->name);
        ob->motion.rows = in->motion, ob->motion.frames = in->motion_frames;
        ob->rb.q = ts_quat_identity();
        ob->rb.kinematic = 1;
    } else {
        if (!(isfinite(in->density) && in->density > 0.0))
            return ts_fail(err, TS_ERR_INVALID, "%s '%s': density must be positive (got %g kg/m³)", kind, in->name,
                           in->density);
        for (int a = 0; a < 3; a++)
            if (!isfinite(in->velocity[a]) || !isfinite(in->angular_velocity[a]))
                return ts_fail(err, TS_ERR_INVALID, "%s '%s': its initial velocity is not finite", kind, in->name);
        if ((st = ts_rigid_init(&ob->rb, mp, in->density, in->name, err)) != TS_OK)
            return st;
        ob->velocity0 = ts_v3(in->velocity[0], in->velocity[1], in->velocity[2]);
        ob->angular_velocity0 = ts_v3(in->angular_velocity[0], in->angular_velocity[1], in->angular_velocity[2]);
        ts_rigid_object_launch(ob);
    }
    ob->rb.x = ob->centroid0 = mp->centroid;
    ob->origin_offset = ts_v3_sub(ts_v3(in->origin[0], in->origin[1], in->origin[2]), mp->centroid);
    ob->rotation0 = ts_quat_normalize((ts_quat){in->rotation[0], in->rotation[1], in->rotation[2], in->rotation[3]});
    return TS_OK;
}

void ts_rigid_object_launch(ts_rigid_object *ob)
{
    if (!ob->keyframed)
        ts_rigid_set_velocity(&ob->rb, ob->velocity0, ob->angular_velocity0);
}

void ts_rigid_object_begin_frame(ts_rigid_object *ob, int index)
{
    if (ob->keyframed)
        ob->from = ts_motion_at(&ob->motion, index), ob->to = ts_motion_at(&ob->motion, index + 1);
}

void ts_rigid_object_follow(ts_rigid_object *ob, double s)
{
    if (!ob->keyframed)
        return;
    /* the motion moves the frame_start pose: body frame = world at rest about the centroid */
    ts_transform t = ts_transform_lerp(ob->from, ob->to, s);
    ob->rb.x = ts_transform_apply(t, ob->centroid0);
    ob->rb.q = t.rotation;
}

ts_vec3 ts_rigid_object_point_velocity(const ts_rigid_object *ob, double frame_dt, double s, ts_vec3 point)
{
    if (!ob->keyframed)
        return ts_rigid_point_velocity(&ob->rb, point);
    ts_transform now = ts_transform_lerp(ob->from, ob->to, s);
    ts_vec3 rest = ts_quat_rotate(ts_quat_conjugate(now.rotation), ts_v3_sub(point, now.translation));
    return ts_motion_point_velocity(ob->from, ob->to, frame_dt, s, rest);
}

void ts_rigid_object_origin_pose(const ts_rigid_object *ob, ts_vec3 *position, ts_quat *rotation)
{
    ts_rigid_origin_pose(&ob->rb, ob->origin_offset, ob->rotation0, position, rotation);
}
