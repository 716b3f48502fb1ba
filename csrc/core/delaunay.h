/* delaunay.h - the edges of the 3D Delaunay triangulation of a point set.
 *
 * The fracture solver puts its pore springs on these edges, and the Voronoi
 * cells of its fragments are bounded by the bisectors of the same pairs
 * (Voronoi neighbours are exactly Delaunay neighbours). Computed by Qhull
 * (libqhull_r, the reentrant library, so bakes may run side by side).
 */
#ifndef TSUBU_DELAUNAY_H
#define TSUBU_DELAUNAY_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct ts_edge { uint32_t a, b; } ts_edge; /* a < b */

/* All Delaunay edges of n points (xyz interleaved, n >= 5, not all
 * coplanar), sorted by (a, b) and unique. *edges is malloc'd. */
ts_status ts_delaunay_edges(const double *points, size_t n, ts_edge **edges, size_t *count, ts_error *err);

/* For each of n points the indices of the edges touching it, in edge order:
 * incident[start[i] .. start[i + 1]). Both arrays are malloc'd (freed by the
 * caller also on failure); 0, or -1 when out of memory. */
int ts_edge_incidence(size_t n, const ts_edge *edges, size_t m, uint32_t **start, uint32_t **incident);

#endif
