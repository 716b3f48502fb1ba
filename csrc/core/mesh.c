/* mesh.c - closedness and bounds of triangle meshes (see mesh.h). */
#include "mesh.h"

#include <math.h>
#include <stdlib.h>

typedef struct half_edge { int32_t a, b; } half_edge; /* directed a -> b */

static int compare_undirected(const void *pa, const void *pb)
{
    const half_edge *x = pa, *y = pb;
    int32_t x0 = x->a < x->b ? x->a : x->b, x1 = x->a < x->b ? x->b : x->a;
    int32_t y0 = y->a < y->b ? y->a : y->b, y1 = y->a < y->b ? y->b : y->a;
    if (x0 != y0)
        return x0 < y0 ? -1 : 1;
    if (x1 != y1)
        return x1 < y1 ? -1 : 1;
    return (x->a > y->a) - (x->a < y->a);
}

ts_status ts_mesh_check_closed(const float *v, size_t vertex_count, const int32_t *t, size_t triangle_count,
                               const char *what, ts_error *err)
{
    if (vertex_count == 0 || triangle_count == 0)
        return ts_fail(err, TS_ERR_INVALID, "%s: the mesh is empty; give it a closed surface", what);
    for (size_t i = 0; i < 3 * vertex_count; i++)
        if (!isfinite(v[i]))
            return ts_fail(err, TS_ERR_INVALID, "%s: vertex %zu is not a finite number", what, i / 3);
    for (size_t i = 0; i < 3 * triangle_count; i++)
        if (t[i] < 0 || (size_t)t[i] >= vertex_count)
            return ts_fail(err, TS_ERR_INVALID, "%s: triangle %zu refers to vertex %d, which does not exist", what,
                           i / 3, (int)t[i]);
    size_t n = 3 * triangle_count;
    half_edge *edges = malloc(n * sizeof *edges);
    if (!edges)
        return ts_fail(err, TS_ERR_NOMEM, "%s: out of memory checking the mesh", what);
    for (size_t i = 0; i < triangle_count; i++)
        for (int k = 0; k < 3; k++) {
            edges[3 * i + k].a = t[3 * i + k];
            edges[3 * i + k].b = t[3 * i + (k + 1) % 3];
        }
    qsort(edges, n, sizeof *edges, compare_undirected);
    ts_status st = TS_OK;
    for (size_t i = 0; i < n && st == TS_OK;) {
        /* group all half-edges over the same undirected edge */
        int32_t lo = edges[i].a < edges[i].b ? edges[i].a : edges[i].b;
        int32_t hi = edges[i].a < edges[i].b ? edges[i].b : edges[i].a;
        size_t j = i;
        int forward = 0, backward = 0;
        while (j < n) {
            int32_t l = edges[j].a < edges[j].b ? edges[j].a : edges[j].b;
            int32_t h = edges[j].a < edges[j].b ? edges[j].b : edges[j].a;
            if (l != lo || h != hi)
                break;
            if (edges[j].a == lo) forward++; else backward++;
            j++;
        }
        if (lo == hi)
            st = ts_fail(err, TS_ERR_INVALID, "%s: a triangle uses vertex %d twice (degenerate face)", what, (int)lo);
        else if (forward + backward == 1)
            st = ts_fail(err, TS_ERR_INVALID,
                         "%s: the mesh is open (edge %d-%d borders one face); close the holes so it has an inside",
                         what, (int)lo, (int)hi);
        else if (forward != 1 || backward != 1)
            st = ts_fail(err, TS_ERR_INVALID,
                         "%s: edge %d-%d is shared by %d faces or its faces are wound inconsistently; the mesh must "
                         "be a closed manifold with consistent normals (Recalculate Outside)",
                         what, (int)lo, (int)hi, forward + backward);
        i = j;
    }
    free(edges);
    return st;
}

void ts_mesh_bounds(const float *v, size_t vertex_count, float bounds[6])
{
    for (int a = 0; a < 3; a++) {
        bounds[a] = vertex_count ? v[a] : 0.0f;
        bounds[a + 3] = vertex_count ? v[a] : 0.0f;
    }
    for (size_t i = 1; i < vertex_count; i++)
        for (int a = 0; a < 3; a++) {
            float x = v[3 * i + a];
            if (x < bounds[a]) bounds[a] = x;
            if (x > bounds[a + 3]) bounds[a + 3] = x;
        }
}
