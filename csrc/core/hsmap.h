/* hsmap.h - height span maps: a mesh seen as vertical spans over ground cells.
 *
 * The sand paper's HS map (§3.2, fig. 1): for each cell of the ground's grid,
 * the list of height spans where a solid lies - bottom and top heights with
 * the mesh's outward normals there. It is built by casting a vertical ray
 * through each cell centre; rather than testing every ray against every
 * triangle we rasterise each triangle onto the cell centres it covers, so a
 * rebuild costs the triangles plus the hits and can run every step as an
 * object moves and turns. The same rasterisation gives the top surface of an
 * open ground mesh (ts_columns_top_surface).
 */
#ifndef TSUBU_HSMAP_H
#define TSUBU_HSMAP_H

#include <stddef.h>
#include <math.h>
#include <stdint.h>

#include "status.h"
#include "vecmath.h"

/* The ground's grid of columns: cell (i, j) spans x0 + [i, i+1) cell, y0 + [j, j+1) cell. */
typedef struct ts_columns {
    double x0, y0, cell;
    int nx, ny;
} ts_columns;

/* Column of a point; returns 0 (and clamps) when it lies outside the grid.
 * Inline: the sand force pass asks it several times per DE and step. */
static inline int ts_columns_index(const ts_columns *g, double x, double y, int *i, int *j)
{
    double fx = floor((x - g->x0) / g->cell), fy = floor((y - g->y0) / g->cell);
    int inside = fx >= 0 && fy >= 0 && fx < g->nx && fy < g->ny;
    *i = fx < 0 ? 0 : (fx >= g->nx ? g->nx - 1 : (int)fx);
    *j = fy < 0 ? 0 : (fy >= g->ny ? g->ny - 1 : (int)fy);
    return inside; /* NaN compares false: column (0, 0), outside */
}

typedef struct ts_span {
    double bottom, top;
    ts_vec3 n_bottom, n_top;  /* outward unit normals of the mesh where the ray enters and leaves */
} ts_span;

typedef struct ts_hit {
    uint32_t column;          /* i + nx * j */
    double z;
    ts_vec3 normal;
} ts_hit;

typedef struct ts_hsmap {
    int i0, j0, nx, ny;       /* the covered columns: [i0, i0 + nx) x [j0, j0 + ny) of the ground grid */
    uint32_t *start;          /* nx * ny + 1 offsets into spans */
    ts_span *spans;
    size_t span_capacity, start_capacity;
    ts_hit *hits;             /* scratch of the rasterisation */
    size_t hit_capacity;
} ts_hsmap;

void ts_hsmap_init(ts_hsmap *m);
void ts_hsmap_free(ts_hsmap *m);

/* Spans of the closed mesh (world vertices xyz, triangles) over the grid.
 * Buffers are reused between builds. */
ts_status ts_hsmap_build(ts_hsmap *m, const ts_columns *g, const double *vertices, size_t vertex_count,
                         const int32_t *triangles, size_t triangle_count, ts_error *err);

/* Spans over ground column (i, j), lowest first; *count = 0 outside the map. */
static inline const ts_span *ts_hsmap_column(const ts_hsmap *m, int i, int j, int *count)
{
    int a = i - m->i0, b = j - m->j0;
    if (a < 0 || b < 0 || a >= m->nx || b >= m->ny || !m->start) {
        *count = 0;
        return NULL;
    }
    size_t c = (size_t)a + (size_t)m->nx * (size_t)b;
    *count = (int)(m->start[c + 1] - m->start[c]);
    return m->spans + m->start[c];
}

/* Highest point of the surface (vertices xyz as float, world) over every
 * column centre of g, into heights (nx * ny, x fastest). Fails naming `what`
 * if a column centre is not covered. */
ts_status ts_columns_top_surface(const ts_columns *g, const float *vertices, size_t vertex_count,
                                 const int32_t *triangles, size_t triangle_count, const char *what,
                                 double *heights, ts_error *err);

/* What a sphere of sand meets: an object's span map, or the bed of heights
 * (one span from far below to its height over each column, and walls beyond
 * its edges: sand does not pour off them). */
typedef struct ts_span_source {
    const ts_hsmap *map;         /* NULL: the bed */
    const double *bed;           /* the bed: a height per column, x fastest */
    const ts_columns *cols;
} ts_span_source;

/* A sphere at p of radius r against a source, the sand paper's §4.3.1 and
 * fig. 3: the spans of its own column (a) - a centre inside a span is pushed
 * out of the column box the shortest way, up, down, or through an open side
 * -, the sides of the eight neighbours' spans that its centre height falls
 * within (b), and otherwise their top and bottom faces (c). The overlaps and
 * normals of all contacts found are averaged, each weighted by its own
 * overlap: *d_n the overlap, *u_n the unit normal from the sphere into the
 * source. Returns 0 when there is no contact. */
int ts_span_contact(const ts_span_source *src, ts_vec3 p, double r, double *d_n, ts_vec3 *u_n);

#endif
