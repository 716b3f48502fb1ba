/* collider.c - signed distance colliders (see collider.h). */
#include "collider.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../vdb/tsubu_vdb.h"

ts_status ts_collider_from_mesh(ts_collider *c, const char *name, const float *vertices, size_t vertex_count,
                                const int32_t *triangles, size_t triangle_count, double voxel_size,
                                double band_voxels, ts_error *err)
{
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    if (!(band_voxels >= 1.0))
        return ts_fail(err, TS_ERR_INVALID, "collider '%s': band must be at least one voxel (got %g)", name, band_voxels);
    tsvdb_dense dense;
    ts_status st = tsvdb_mesh_to_dense_sdf(vertices, vertex_count, triangles, triangle_count, voxel_size,
                                           band_voxels, &dense, err);
    if (st != TS_OK) {
        char inner[TS_ERROR_MESSAGE_SIZE];
        snprintf(inner, sizeof inner, "%s", err ? err->message : "");
        return ts_fail(err, st, "collider '%s': %s", name, inner);
    }
    memcpy(c->origin, dense.origin, sizeof c->origin);
    memcpy(c->dims, dense.dims, sizeof c->dims);
    c->voxel_size = dense.voxel_size;
    c->inv_voxel = 1.0f / dense.voxel_size;
    c->phi = dense.values;
    c->far_distance = (float)(band_voxels * voxel_size);
    c->from = c->to = ts_transform_identity();
    c->interval = 0.0;
    return TS_OK;
}

void ts_collider_free(ts_collider *c)
{
    free(c->phi);
    c->phi = NULL;
}

void ts_collider_set_motion(ts_collider *c, ts_transform from, ts_transform to, double interval)
{
    c->from = from;
    c->to = to;
    c->interval = interval;
}

static float phi_at(const ts_collider *c, int i, int j, int k)
{
    return c->phi[(size_t)i + (size_t)c->dims[0] * ((size_t)j + (size_t)c->dims[1] * (size_t)k)];
}

/* Trilinear distance and its analytic gradient at a rest-pose point. */
static int sample(const ts_collider *c, ts_vec3 p, float *distance, ts_vec3 *gradient)
{
    double g[3] = {(p.x - c->origin[0]) * c->inv_voxel, (p.y - c->origin[1]) * c->inv_voxel,
                   (p.z - c->origin[2]) * c->inv_voxel};
    int i0[3];
    double f[3];
    for (int a = 0; a < 3; a++) {
        if (!(g[a] >= 0.0) || g[a] > (double)(c->dims[a] - 1))
            return 0;
        i0[a] = (int)g[a];
        if (i0[a] > c->dims[a] - 2)
            i0[a] = c->dims[a] - 2 < 0 ? 0 : c->dims[a] - 2;
        f[a] = g[a] - i0[a];
    }
    double v[2][2][2];
    for (int dz = 0; dz < 2; dz++)
        for (int dy = 0; dy < 2; dy++)
            for (int dx = 0; dx < 2; dx++)
                v[dz][dy][dx] = phi_at(c, i0[0] + dx, i0[1] + dy, i0[2] + dz);
    double fx = f[0], fy = f[1], fz = f[2];
    double c00 = v[0][0][0] * (1 - fx) + v[0][0][1] * fx, c10 = v[0][1][0] * (1 - fx) + v[0][1][1] * fx;
    double c01 = v[1][0][0] * (1 - fx) + v[1][0][1] * fx, c11 = v[1][1][0] * (1 - fx) + v[1][1][1] * fx;
    double c0 = c00 * (1 - fy) + c10 * fy, c1 = c01 * (1 - fy) + c11 * fy;
    *distance = (float)(c0 * (1 - fz) + c1 * fz);
    double dx0 = (v[0][0][1] - v[0][0][0]) * (1 - fy) + (v[0][1][1] - v[0][1][0]) * fy;
    double dx1 = (v[1][0][1] - v[1][0][0]) * (1 - fy) + (v[1][1][1] - v[1][1][0]) * fy;
    double dy0 = (v[0][1][0] - v[0][0][0]) * (1 - fx) + (v[0][1][1] - v[0][0][1]) * fx;
    double dy1 = (v[1][1][0] - v[1][0][0]) * (1 - fx) + (v[1][1][1] - v[1][0][1]) * fx;
    gradient->x = (dx0 * (1 - fz) + dx1 * fz) * c->inv_voxel;
    gradient->y = (dy0 * (1 - fz) + dy1 * fz) * c->inv_voxel;
    gradient->z = (c1 - c0) * c->inv_voxel;
    return 1;
}

static int at_rest_in_place(const ts_collider *c)
{
    return c->interval == 0.0 && c->from.rotation.w == 1.0 && c->from.rotation.x == 0.0 &&
           c->from.rotation.y == 0.0 && c->from.rotation.z == 0.0 && c->from.translation.x == 0.0 &&
           c->from.translation.y == 0.0 && c->from.translation.z == 0.0;
}

int ts_collider_query(const ts_collider *c, double s, ts_vec3 p, ts_collider_hit *hit)
{
    if (at_rest_in_place(c)) { /* most colliders, and every terrain: the same numbers without the transforms */
        ts_vec3 grad;
        float d;
        hit->velocity = hit->normal = ts_v3(0, 0, 0);
        if (!sample(c, p, &d, &grad)) {
            hit->distance = c->far_distance;
            return 0;
        }
        hit->distance = d;
        double len = ts_v3_length(grad);
        if (len > 0)
            hit->normal = ts_v3_scale(grad, 1.0 / len);
        return 1;
    }
    ts_transform t = c->interval > 0.0 ? ts_transform_lerp(c->from, c->to, s) : c->from;  /* static: no slerp */
    ts_quat inv = ts_quat_conjugate(t.rotation);
    ts_vec3 rest = ts_quat_rotate(inv, ts_v3_sub(p, t.translation));
    ts_vec3 grad;
    float d;
    hit->velocity = hit->normal = ts_v3(0, 0, 0);
    if (!sample(c, rest, &d, &grad)) {
        hit->distance = c->far_distance;
        return 0;
    }
    hit->distance = d;
    double len = ts_v3_length(grad);
    if (len > 0)
        hit->normal = ts_quat_rotate(t.rotation, ts_v3_scale(grad, 1.0 / len));
    hit->velocity = ts_motion_point_velocity(c->from, c->to, c->interval, s, rest);
    return 1;
}

void ts_collider_follow(ts_collider *c, const ts_motion *m, int index, double frame_dt)
{
    ts_collider_set_motion(c, ts_motion_at(m, index), ts_motion_at(m, index + 1), m->rows ? frame_dt : 0.0);
}
