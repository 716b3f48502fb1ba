/* terrain.c - the voxel terrain (see terrain.h). */
#include "terrain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh.h"
#include "parallel.h"
#include "../vdb/tsubu_vdb.h"

#define NO_POINT 1e30f

ts_status ts_terrain_init(ts_terrain *t, const double lo[3], const double hi[3], double voxel, double reach,
                          ts_error *err)
{
    memset(t, 0, sizeof *t);
    if (!(voxel > 0.0) || !isfinite(voxel))
        return ts_fail(err, TS_ERR_INVALID, "terrain: voxel_size must be above 0 m (got %g)", voxel);
    size_t nodes = 1;
    for (int a = 0; a < 3; a++) {
        double cells = ceil((hi[a] - lo[a]) / voxel - 1e-9);
        if (!(cells >= 1.0) || cells > 4096.0)
            return ts_fail(err, TS_ERR_INVALID, "terrain: the domain is %g m along %c, %.0f voxels of %g m; it "
                           "needs 1 to 4096 - change voxel_size or the domain", hi[a] - lo[a], "xyz"[a], cells, voxel);
        t->origin[a] = (float)lo[a];
        t->dims[a] = (int)cells + 1;
        nodes *= (size_t)t->dims[a];
    }
    if (nodes > (size_t)1 << 28)
        return ts_fail(err, TS_ERR_NOMEM, "terrain: %dx%dx%d voxels are too many; raise voxel_size", t->dims[0],
                       t->dims[1], t->dims[2]);
    t->voxel = (float)voxel;
    t->nodes = nodes;
    t->band = (int)ceil(reach / voxel) + 1;
    t->density = calloc(nodes, sizeof *t->density);
    t->closest = malloc(3 * nodes * sizeof *t->closest);
    t->field.phi = malloc(nodes * sizeof *t->field.phi);
    if (!t->density || !t->closest || !t->field.phi) {
        ts_terrain_free(t);
        return ts_fail(err, TS_ERR_NOMEM, "terrain: out of memory for %zu voxels", nodes);
    }
    ts_collider *f = &t->field;
    snprintf(f->name, sizeof f->name, "terrain");
    memcpy(f->origin, t->origin, sizeof f->origin);
    memcpy(f->dims, t->dims, sizeof f->dims);
    f->voxel_size = t->voxel;
    f->inv_voxel = 1.0f / t->voxel;
    f->far_distance = (float)t->band * t->voxel;
    f->from = f->to = ts_transform_identity();
    for (size_t n = 0; n < nodes; n++)
        f->phi[n] = f->far_distance;
    return TS_OK;
}

void ts_terrain_free(ts_terrain *t)
{
    free(t->density);
    free(t->closest);
    free(t->field.phi);
    memset(t, 0, sizeof *t);
}

static void node_position(const ts_terrain *t, int i, int j, int k, float p[3])
{
    p[0] = t->origin[0] + t->voxel * (float)i;
    p[1] = t->origin[1] + t->voxel * (float)j;
    p[2] = t->origin[2] + t->voxel * (float)k;
}

/* Density from a signed distance: the share of a voxel-thick slab below the
 * surface, so that a plane's nodes sum to the volume under it. */
static float fraction_below(float distance_outside, float voxel)
{
    float d = 0.5f - distance_outside / voxel;
    return d < 0.0f ? 0.0f : (d > 1.0f ? 1.0f : d);
}

ts_status ts_terrain_add_solid(ts_terrain *t, const char *name, const float *vertices, size_t vertex_count,
                               const int32_t *triangles, size_t triangle_count, ts_error *err)
{
    ts_status st = ts_mesh_check_closed(vertices, vertex_count, triangles, triangle_count, name, err);
    if (st != TS_OK)
        return st;
    ts_collider sdf;
    if ((st = ts_collider_from_mesh(&sdf, name, vertices, vertex_count, triangles, triangle_count, t->voxel, 2.0,
                                    err)) != TS_OK)
        return st;
    #pragma omp parallel for schedule(static)
    for (int k = 0; k < t->dims[2]; k++)
        for (int j = 0; j < t->dims[1]; j++)
            for (int i = 0; i < t->dims[0]; i++) {
                float p[3];
                node_position(t, i, j, k, p);
                ts_collider_hit hit;
                if (!ts_collider_query(&sdf, 0.0, ts_v3(p[0], p[1], p[2]), &hit))
                    continue;
                float d = fraction_below(hit.distance, t->voxel);
                float *node = &t->density[ts_terrain_index(t, i, j, k)];
                if (d > *node)
                    *node = d;
            }
    ts_collider_free(&sdf);
    return TS_OK;
}

/* The highest point of the triangles above each node column; -inf where none. */
static void column_heights(const ts_terrain *t, const float *v, const int32_t *tri, size_t triangle_count, float *top)
{
    const int nx = t->dims[0], ny = t->dims[1];
    for (size_t c = 0; c < (size_t)nx * ny; c++)
        top[c] = -INFINITY;
    for (size_t f = 0; f < triangle_count; f++) {
        const float *a = v + 3 * tri[3 * f], *b = v + 3 * tri[3 * f + 1], *c = v + 3 * tri[3 * f + 2];
        double det = (double)(b[0] - a[0]) * (c[1] - a[1]) - (double)(c[0] - a[0]) * (b[1] - a[1]);
        if (fabs(det) < 1e-20)
            continue; /* seen edge-on from above */
        float lo[2], hi[2];
        for (int q = 0; q < 2; q++) {
            lo[q] = fminf(a[q], fminf(b[q], c[q]));
            hi[q] = fmaxf(a[q], fmaxf(b[q], c[q]));
        }
        int i0 = (int)ceil((lo[0] - t->origin[0]) / t->voxel), i1 = (int)floor((hi[0] - t->origin[0]) / t->voxel);
        int j0 = (int)ceil((lo[1] - t->origin[1]) / t->voxel), j1 = (int)floor((hi[1] - t->origin[1]) / t->voxel);
        i0--, j0--, i1++, j1++; /* a column on the boundary, whatever the rounding: the test below decides */
        i0 = i0 < 0 ? 0 : i0, j0 = j0 < 0 ? 0 : j0;
        i1 = i1 >= nx ? nx - 1 : i1, j1 = j1 >= ny ? ny - 1 : j1;
        for (int j = j0; j <= j1; j++)
            for (int i = i0; i <= i1; i++) {
                double px = t->origin[0] + t->voxel * i, py = t->origin[1] + t->voxel * j;
                double u = ((px - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (py - a[1])) / det;
                double w = ((b[0] - a[0]) * (py - a[1]) - (px - a[0]) * (b[1] - a[1])) / det;
                if (u < -1e-6 || w < -1e-6 || u + w > 1.0 + 1e-6) /* a node on a shared edge belongs to both */
                    continue;
                float z = (float)(a[2] + u * (b[2] - a[2]) + w * (c[2] - a[2]));
                float *h = &top[(size_t)i + (size_t)nx * j];
                if (z > *h)
                    *h = z;
            }
    }
}

ts_status ts_terrain_add_below(ts_terrain *t, const char *name, const float *vertices, size_t vertex_count,
                               const int32_t *triangles, size_t triangle_count, ts_error *err)
{
    if (vertex_count == 0 || triangle_count == 0)
        return ts_fail(err, TS_ERR_INVALID, "terrain '%s' has no faces; give it a mesh", name);
    for (size_t i = 0; i < 3 * vertex_count; i++)
        if (!isfinite(vertices[i]))
            return ts_fail(err, TS_ERR_INVALID, "terrain '%s': vertex %zu is not finite", name, i / 3);
    for (size_t i = 0; i < 3 * triangle_count; i++)
        if (triangles[i] < 0 || (size_t)triangles[i] >= vertex_count)
            return ts_fail(err, TS_ERR_INVALID, "terrain '%s': triangle %zu names vertex %d of %zu", name, i / 3,
                           (int)triangles[i], vertex_count);
    size_t up = 0, down = 0;
    for (size_t f = 0; f < triangle_count; f++) {
        const float *a = vertices + 3 * triangles[3 * f], *b = vertices + 3 * triangles[3 * f + 1],
                    *c = vertices + 3 * triangles[3 * f + 2];
        double nz = (double)(b[0] - a[0]) * (c[1] - a[1]) - (double)(c[0] - a[0]) * (b[1] - a[1]);
        up += nz > 0.0, down += nz < 0.0;
    }
    if (down > 0)
        return ts_fail(err, TS_ERR_INVALID, "terrain '%s' is an open mesh but not a heightfield (%zu of its faces "
                       "point down): close it to keep caves and overhangs, or use a plane or grid facing up "
                       "(flip its normals if it faces down)", name, down);
    const size_t columns = (size_t)t->dims[0] * t->dims[1];
    float *top = malloc(columns * sizeof *top);
    if (!top)
        return ts_fail(err, TS_ERR_NOMEM, "terrain '%s': out of memory", name);
    column_heights(t, vertices, triangles, triangle_count, top);
    size_t covered = 0;
    for (size_t c = 0; c < columns; c++)
        covered += top[c] > -INFINITY;
    if (covered == 0) {
        free(top);
        return ts_fail(err, TS_ERR_INVALID, "terrain '%s' covers no voxel column of the domain seen from above; "
                       "move it into the domain or make the voxels smaller", name);
    }
    #pragma omp parallel for schedule(static)
    for (int k = 0; k < t->dims[2]; k++)
        for (int j = 0; j < t->dims[1]; j++)
            for (int i = 0; i < t->dims[0]; i++) {
                float h = top[(size_t)i + (size_t)t->dims[0] * j];
                if (h == -INFINITY)
                    continue;
                float z = t->origin[2] + t->voxel * (float)k;
                float d = fraction_below(z - h, t->voxel);
                float *node = &t->density[ts_terrain_index(t, i, j, k)];
                if (d > *node)
                    *node = d;
            }
    free(top);
    return TS_OK;
}

/* ----------------------------------------------------- the distance field */

static inline int solid(float d) { return d >= TS_TERRAIN_ISO; }

/* A node beside the iso surface: where it crosses the node's axis edges,
 * the plane through those crossings (exact for a plane), its distance and
 * closest point. 0 when no edge of the node crosses. */
static int seed_node(const ts_terrain *t, int i, int j, int k, float *phi, float cp[3])
{
    const int at[3] = {i, j, k};
    const float d = t->density[ts_terrain_index(t, i, j, k)];
    float inv2 = 0.0f, normal[3] = {0, 0, 0};
    for (int a = 0; a < 3; a++) {
        float best = 2.0f, dir = 0.0f;
        for (int s = -1; s <= 1; s += 2) {
            int n[3] = {at[0], at[1], at[2]};
            n[a] += s;
            if (n[a] < 0 || n[a] >= t->dims[a])
                continue;
            float e = t->density[ts_terrain_index(t, n[0], n[1], n[2])];
            if (solid(e) == solid(d))
                continue;
            float cross = (TS_TERRAIN_ISO - d) / (e - d); /* 0..1 along the edge */
            if (cross < best)
                best = cross, dir = (float)s;
        }
        if (dir != 0.0f) {
            float tt = best < 1e-4f ? 1e-4f : best;
            inv2 += 1.0f / (tt * tt);
            normal[a] = dir / tt;
        }
    }
    if (inv2 == 0.0f)
        return 0;
    float dist = 1.0f / sqrtf(inv2);                 /* in voxels */
    float len = sqrtf(normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]);
    float p[3];
    node_position(t, i, j, k, p);
    for (int a = 0; a < 3; a++)
        cp[a] = p[a] + t->voxel * dist * normal[a] / len;
    *phi = dist * t->voxel;
    return 1;
}

/* One raster sweep of dead reckoning over the box [lo, hi]: each node takes
 * the closest surface point of its already-swept neighbours when nearer.
 * Neighbours outside the box lend the points they hold. */
static void sweep(ts_terrain *t, const int lo[3], const int hi[3], int dir)
{
    const float far = t->field.far_distance;
    int k = dir > 0 ? lo[2] : hi[2];
    for (int kk = lo[2]; kk <= hi[2]; kk++, k += dir)
        for (int j = dir > 0 ? lo[1] : hi[1]; dir > 0 ? j <= hi[1] : j >= lo[1]; j += dir)
            for (int i = dir > 0 ? lo[0] : hi[0]; dir > 0 ? i <= hi[0] : i >= lo[0]; i += dir) {
                size_t n = ts_terrain_index(t, i, j, k);
                float p[3], best = fabsf(t->field.phi[n]);
                node_position(t, i, j, k, p);
                float *cp = &t->closest[3 * n];
                for (int dk = -1; dk <= 0; dk++)
                    for (int dj = -1; dj <= 1; dj++)
                        for (int di = -1; di <= 1; di++) {
                            if (dk == 0 && (dj > 0 || (dj == 0 && di >= 0)))
                                continue; /* the 13 neighbours swept before this node */
                            int a = i + dir * di, b = j + dir * dj, c = k + dir * dk;
                            if (a < 0 || a >= t->dims[0] || b < 0 || b >= t->dims[1] || c < 0 || c >= t->dims[2])
                                continue;
                            const float *q = &t->closest[3 * ts_terrain_index(t, a, b, c)];
                            if (q[0] == NO_POINT)
                                continue;
                            float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
                            float r = sqrtf(dx * dx + dy * dy + dz * dz);
                            if (r < best && r < far) {
                                best = r;
                                cp[0] = q[0], cp[1] = q[1], cp[2] = q[2];
                            }
                        }
                t->field.phi[n] = solid(t->density[n]) ? -best : best;
            }
}

void ts_terrain_refresh(ts_terrain *t, const int *box_lo, const int *box_hi)
{
    /* nodes within the band of a changed node may change; nodes farther out
     * keep their closest points, and lend them to the sweeps */
    int lo[3], hi[3];
    for (int a = 0; a < 3; a++) {
        lo[a] = box_lo ? box_lo[a] - t->band - 1 : 0;
        hi[a] = box_hi ? box_hi[a] + t->band + 1 : t->dims[a] - 1;
        lo[a] = lo[a] < 0 ? 0 : lo[a];
        hi[a] = hi[a] >= t->dims[a] ? t->dims[a] - 1 : hi[a];
    }
    const float far = t->field.far_distance;
    #pragma omp parallel for schedule(static)
    for (int k = lo[2]; k <= hi[2]; k++)
        for (int j = lo[1]; j <= hi[1]; j++)
            for (int i = lo[0]; i <= hi[0]; i++) {
                size_t n = ts_terrain_index(t, i, j, k);
                float phi, cp[3];
                if (seed_node(t, i, j, k, &phi, cp)) {
                    memcpy(&t->closest[3 * n], cp, sizeof cp);
                } else {
                    phi = far;
                    t->closest[3 * n] = t->closest[3 * n + 1] = t->closest[3 * n + 2] = NO_POINT;
                }
                t->field.phi[n] = solid(t->density[n]) ? -phi : phi;
            }
    sweep(t, lo, hi, +1);
    sweep(t, lo, hi, -1);
}

double ts_terrain_volume(const ts_terrain *t)
{
    double v = ts_sum_f32(t->density, t->nodes);
    return v * (double)t->voxel * t->voxel * t->voxel;
}

ts_status ts_terrain_write(const ts_terrain *t, const char *path, ts_error *err)
{
    tsvdb_dense dense = {{t->origin[0], t->origin[1], t->origin[2]}, t->voxel,
                         {t->dims[0], t->dims[1], t->dims[2]}, t->density};
    tsvdb_grid *g = NULL;
    ts_status st = tsvdb_dense_to_grid(&dense, 0.0f, &g, err);
    if (st == TS_OK)
        st = tsvdb_write(path, &g, 1, err);
    tsvdb_grid_free(g);
    return st;
}
