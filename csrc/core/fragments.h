/* fragments.h - the pieces a breakable object is drawn with: each
 * element's Voronoi cell cut to the object's surface (Imagire et al. §3.1:
 * "the Voronoi diagram, dual of the Delaunay triangulation, is rendered so
 * that the broken object looks solid").
 *
 * A cell is the set of points nearer its element than any other, bounded by
 * the bisector planes of its Delaunay neighbours. Rather than build the cell
 * and intersect it with the mesh, we cut the closed mesh itself by those
 * planes one after another, closing each cut with a cap: the result is the
 * cell's share of the object, closed, for convex and non-convex objects
 * alike, and all cells together rebuild the object. Outer faces keep the
 * object's UVs (material 0); caps are the fracture faces (material 1) with
 * UVs projected on their plane.
 *
 * Limit: a cut whose section of the object has a hole (a ring cut across)
 * is capped without the hole; tests check volumes against the object.
 */
#ifndef TSUBU_FRAGMENTS_H
#define TSUBU_FRAGMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "delaunay.h"
#include "status.h"

typedef struct ts_fragments {
    size_t triangle_count;
    float *position;        /* 9 per triangle: corners relative to the triangle's element centre */
    float *uv;              /* 6 per triangle */
    uint32_t *element;      /* per triangle */
    uint8_t *material;      /* per triangle: 0 the object's surface, 1 a fracture face */
} ts_fragments;

/* Cut the closed mesh (vertices, triangles, corner_uv 6 per triangle or
 * NULL) into the Voronoi cells of n centres (xyz interleaved) whose
 * Delaunay edges are given. Triangles come out grouped by element, in
 * element order, whatever the thread count. */
ts_status ts_fragments_build(const float *vertices, const int32_t *triangles, size_t triangle_count,
                             const float *corner_uv, const double *centres, size_t n, const ts_edge *edges,
                             size_t edge_count, ts_fragments *out, ts_error *err);
void ts_fragments_free(ts_fragments *f);

#endif
