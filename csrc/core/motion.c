/* motion.c - keyframed rigid motion (see motion.h). */
#include "motion.h"

#include <stddef.h>

ts_transform ts_transform_identity(void)
{
    ts_transform t = {{0, 0, 0}, {1, 0, 0, 0}};
    return t;
}

ts_vec3 ts_transform_apply(ts_transform t, ts_vec3 p)
{
    return ts_v3_add(ts_quat_rotate(t.rotation, p), t.translation);
}

ts_transform ts_transform_lerp(ts_transform a, ts_transform b, double s)
{
    ts_transform t;
    t.translation = ts_v3_add(ts_v3_scale(a.translation, 1.0 - s), ts_v3_scale(b.translation, s));
    t.rotation = ts_quat_slerp(a.rotation, b.rotation, s);
    return t;
}

ts_transform ts_motion_at(const ts_motion *m, int index)
{
    if (!m->rows || m->frames < 1)
        return ts_transform_identity();
    if (index < 0)
        index = 0;
    if (index >= m->frames)
        index = m->frames - 1;
    const double *r = m->rows + 7 * (size_t)index;
    ts_transform t = {ts_v3(r[0], r[1], r[2]), ts_quat_normalize((ts_quat){r[3], r[4], r[5], r[6]})};
    return t;
}

ts_vec3 ts_motion_point_velocity(ts_transform from, ts_transform to, double seconds, double s, ts_vec3 rest)
{
    if (!(seconds > 0.0))
        return ts_v3(0, 0, 0);
    const double ds = 1e-3; /* central difference of the interpolated path */
    double s0 = s - ds < 0 ? 0 : s - ds, s1 = s + ds > 1 ? 1 : s + ds;
    ts_vec3 p0 = ts_transform_apply(ts_transform_lerp(from, to, s0), rest);
    ts_vec3 p1 = ts_transform_apply(ts_transform_lerp(from, to, s1), rest);
    return ts_v3_scale(ts_v3_sub(p1, p0), 1.0 / ((s1 - s0) * seconds));
}
