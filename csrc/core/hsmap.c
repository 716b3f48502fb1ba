/* hsmap.c - height span maps by rasterising triangles onto column centres (see hsmap.h). */
#include "hsmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

/* Ray positions sit a hair off the cell centres so that a ray never runs
 * exactly along a mesh edge of a grid-aligned mesh (which would hit both
 * triangles or neither). */
#define RAY_OFFSET_X 0.0001234
#define RAY_OFFSET_Y 0.0002345

void ts_hsmap_init(ts_hsmap *m)
{
    memset(m, 0, sizeof *m);
}

void ts_hsmap_free(ts_hsmap *m)
{
    free(m->start);
    free(m->spans);
    free(m->hits);
    ts_hsmap_init(m);
}

typedef struct tri_xyz {
    ts_vec3 a, b, c;
} tri_xyz;

/* Hits of the vertical rays of columns [i0,i0+nx) x [j0,j0+ny) through one
 * triangle, appended to *hits; column indices are local to that window. */
static int rasterise(const ts_columns *g, int i0, int j0, int nx, int ny, tri_xyz t, ts_hit **hits, size_t *count,
                     size_t *capacity)
{
    ts_vec3 n = ts_v3_cross(ts_v3_sub(t.b, t.a), ts_v3_sub(t.c, t.a));
    double area2 = n.z; /* twice the signed area of the xy projection */
    double len = ts_v3_length(n);
    if (area2 == 0.0 || len == 0.0)
        return 1; /* vertical or degenerate: no vertical ray crosses it */
    n = ts_v3_scale(n, 1.0 / len);
    double xmin = fmin(t.a.x, fmin(t.b.x, t.c.x)), xmax = fmax(t.a.x, fmax(t.b.x, t.c.x));
    double ymin = fmin(t.a.y, fmin(t.b.y, t.c.y)), ymax = fmax(t.a.y, fmax(t.b.y, t.c.y));
    int ia = (int)ceil((xmin - g->x0) / g->cell - 0.5 - RAY_OFFSET_X), ib = (int)floor((xmax - g->x0) / g->cell - 0.5 - RAY_OFFSET_X);
    int ja = (int)ceil((ymin - g->y0) / g->cell - 0.5 - RAY_OFFSET_Y), jb = (int)floor((ymax - g->y0) / g->cell - 0.5 - RAY_OFFSET_Y);
    if (ia < i0) ia = i0;
    if (ja < j0) ja = j0;
    if (ib > i0 + nx - 1) ib = i0 + nx - 1;
    if (jb > j0 + ny - 1) jb = j0 + ny - 1;
    for (int j = ja; j <= jb; j++)
        for (int i = ia; i <= ib; i++) {
            double px = g->x0 + (i + 0.5 + RAY_OFFSET_X) * g->cell, py = g->y0 + (j + 0.5 + RAY_OFFSET_Y) * g->cell;
            /* barycentric weights from the edge functions of the projection */
            double wa = (t.b.x - px) * (t.c.y - py) - (t.c.x - px) * (t.b.y - py);
            double wb = (t.c.x - px) * (t.a.y - py) - (t.a.x - px) * (t.c.y - py);
            double wc = area2 - wa - wb;
            if (area2 > 0 ? (wa < 0 || wb < 0 || wc < 0) : (wa > 0 || wb > 0 || wc > 0))
                continue;
            if (ts_grow((void **)hits, capacity, *count + 1, sizeof **hits) < 0)
                return 0;
            ts_hit *h = &(*hits)[(*count)++];
            h->column = (uint32_t)(i - i0) + (uint32_t)nx * (uint32_t)(j - j0);
            h->z = (wa * t.a.z + wb * t.b.z + wc * t.c.z) / area2;
            h->normal = n;
        }
    return 1;
}

static int hit_order(const void *pa, const void *pb)
{
    const ts_hit *a = pa, *b = pb;
    if (a->column != b->column)
        return a->column < b->column ? -1 : 1;
    if (a->z != b->z)
        return a->z < b->z ? -1 : 1;
    return (a->normal.z > b->normal.z) - (a->normal.z < b->normal.z); /* leave (up) after enter (down) at a tie */
}

ts_status ts_hsmap_build(ts_hsmap *m, const ts_columns *g, const double *v, size_t vertex_count,
                         const int32_t *tri, size_t triangle_count, ts_error *err)
{
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (size_t k = 0; k < vertex_count; k++)
        for (int a = 0; a < 2; a++)
            lo[a] = fmin(lo[a], v[3 * k + a]), hi[a] = fmax(hi[a], v[3 * k + a]);
    int i0, j0, i1, j1;
    ts_columns_index(g, lo[0], lo[1], &i0, &j0);
    ts_columns_index(g, hi[0], hi[1], &i1, &j1);
    m->i0 = i0, m->j0 = j0, m->nx = i1 - i0 + 1, m->ny = j1 - j0 + 1;
    size_t columns = (size_t)m->nx * (size_t)m->ny, count = 0;
    for (size_t t = 0; t < triangle_count; t++) {
        tri_xyz x;
        const double *p[3] = {v + 3 * (size_t)tri[3 * t], v + 3 * (size_t)tri[3 * t + 1], v + 3 * (size_t)tri[3 * t + 2]};
        x.a = ts_v3(p[0][0], p[0][1], p[0][2]), x.b = ts_v3(p[1][0], p[1][1], p[1][2]), x.c = ts_v3(p[2][0], p[2][1], p[2][2]);
        if (!rasterise(g, i0, j0, m->nx, m->ny, x, &m->hits, &count, &m->hit_capacity))
            return ts_fail(err, TS_ERR_NOMEM, "height span map: out of memory");
    }
    qsort(m->hits, count, sizeof *m->hits, hit_order);
    if (ts_grow((void **)&m->start, &m->start_capacity, columns + 1, sizeof *m->start) < 0 ||
        ts_grow((void **)&m->spans, &m->span_capacity, count / 2 + 1, sizeof *m->spans) < 0)
        return ts_fail(err, TS_ERR_NOMEM, "height span map: out of memory");
    /* Pair the hits of each column into spans: a ray going up enters the
     * solid through a downward face and leaves through an upward one. */
    size_t spans = 0, k = 0;
    for (size_t c = 0; c < columns; c++) {
        m->start[c] = (uint32_t)spans;
        int depth = 0;
        for (; k < count && m->hits[k].column == c; k++) {
            const ts_hit *h = &m->hits[k];
            if (h->normal.z < 0) {
                if (depth++ == 0)
                    m->spans[spans].bottom = h->z, m->spans[spans].n_bottom = h->normal;
            } else if (depth > 0 && --depth == 0) {
                m->spans[spans].top = h->z, m->spans[spans].n_top = h->normal;
                spans++;
            }
        }
    }
    m->start[columns] = (uint32_t)spans;
    return TS_OK;
}

ts_status ts_columns_top_surface(const ts_columns *g, const float *vertices, size_t vertex_count,
                                 const int32_t *triangles, size_t triangle_count, const char *what,
                                 double *heights, ts_error *err)
{
    size_t columns = (size_t)g->nx * (size_t)g->ny, count = 0, capacity = 0;
    ts_hit *hits = NULL;
    for (size_t c = 0; c < columns; c++)
        heights[c] = -INFINITY;
    for (size_t t = 0; t < triangle_count; t++) {
        tri_xyz x;
        ts_vec3 *corner[3] = {&x.a, &x.b, &x.c};
        for (int k = 0; k < 3; k++) {
            size_t q = (size_t)triangles[3 * t + k];
            if (triangles[3 * t + k] < 0 || q >= vertex_count) {
                free(hits);
                return ts_fail(err, TS_ERR_INVALID, "%s: triangle %zu uses vertex %d, which does not exist", what, t,
                               (int)triangles[3 * t + k]);
            }
            *corner[k] = ts_v3(vertices[3 * q], vertices[3 * q + 1], vertices[3 * q + 2]);
        }
        count = 0;
        if (!rasterise(g, 0, 0, g->nx, g->ny, x, &hits, &count, &capacity)) {
            free(hits);
            return ts_fail(err, TS_ERR_NOMEM, "%s: out of memory", what);
        }
        for (size_t k = 0; k < count; k++)
            if (hits[k].z > heights[hits[k].column])
                heights[hits[k].column] = hits[k].z;
    }
    free(hits);
    for (size_t c = 0; c < columns; c++)
        if (!isfinite(heights[c]))
            return ts_fail(err, TS_ERR_INVALID, "%s: no surface above cell (%zu, %zu) of the %d x %d ground grid; "
                           "the sand bed must cover its whole bounding box seen from above", what, c % (size_t)g->nx,
                           c / (size_t)g->nx, g->nx, g->ny);
    return TS_OK;
}

/* ------------------------------------------------- span contacts (§4.3.1) */

#define MAX_SPAN_HITS 32     /* span contacts averaged per sphere and source */

/* Spans of a source over column (i, j): an object's span map, or the bed,
 * which is one span from far below to its height. */
static int source_spans(const ts_span_source *src, int i, int j, ts_span *bed_span, const ts_span **out)
{
    int outside = i < 0 || j < 0 || i >= src->cols->nx || j >= src->cols->ny;
    if (outside && src->map)
        return 0;
    if (outside) { /* the bed ends in walls: sand does not pour off its edges */
        bed_span->bottom = -INFINITY;
        bed_span->top = INFINITY;
        bed_span->n_top = ts_v3(0, 0, 1);
        bed_span->n_bottom = ts_v3(0, 0, -1);
        *out = bed_span;
        return 1;
    }
    if (src->map) {
        int count;
        *out = ts_hsmap_column(src->map, i, j, &count);
        return count;
    }
    bed_span->bottom = -INFINITY;
    bed_span->top = src->bed[(size_t)i + (size_t)src->cols->nx * j];
    bed_span->n_top = ts_v3(0, 0, 1);
    bed_span->n_bottom = ts_v3(0, 0, -1);
    *out = bed_span;
    return 1;
}

/* Overlap with a span's top or bottom face of a sphere whose lowest/highest
 * point over that column is z -/+ reach (fig. 3 (a) and (c)). */
static int face_contact(const ts_span *sp, double z, double reach, double *d, ts_vec3 *n)
{
    double mid = sp->bottom == -INFINITY ? -INFINITY : 0.5 * (sp->bottom + sp->top);
    if (z >= mid) {
        if (z - reach >= sp->top)
            return 0;
        *d = sp->top - (z - reach), *n = sp->n_top;
    } else {
        if (z + reach <= sp->bottom)
            return 0;
        *d = z + reach - sp->bottom, *n = sp->n_bottom;
    }
    return 1;
}

static int column_holds(const ts_span_source *src, int i, int j, double z)
{
    ts_span bed_span;
    const ts_span *sp;
    int count = source_spans(src, i, j, &bed_span, &sp);
    for (int k = 0; k < count; k++)
        if (z > sp[k].bottom && z < sp[k].top)
            return 1;
    return 0;
}

/* A DE whose centre is inside a span of its own column - it came in from
 * the side, or the span appeared around it as the object moved a cell -
 * is pushed out of the column box by the shortest way: up, down, or through
 * a side whose neighbour is open at its height. (Pushing it to the far
 * top or bottom face, as fig. 3 (a) would, throws it out at any speed.) */
static void inside_span(const ts_span_source *src, int ci, int cj, const ts_span *sp, ts_vec3 p, double r, double *d,
                        ts_vec3 *n)
{
    const ts_columns *g = src->cols;
    *d = sp->top - p.z + r, *n = sp->n_top;
    if (p.z - sp->bottom + r < *d)
        *d = p.z - sp->bottom + r, *n = sp->n_bottom;
    static const int step[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    for (int e = 0; e < 4; e++) {
        double face = step[e][0] ? g->x0 + (ci + (step[e][0] > 0)) * g->cell : g->y0 + (cj + (step[e][1] > 0)) * g->cell;
        double through = fabs(face - (step[e][0] ? p.x : p.y)) + r;
        if (through < *d && !column_holds(src, ci + step[e][0], cj + step[e][1], p.z))
            *d = through, *n = ts_v3(step[e][0], step[e][1], 0);
    }
}

/* (See hsmap.h.) The paper's plain average of the contacts jumps when a
 * contact appears: a DE on the floor that drifts a hair over a column edge
 * halves its overlap at once, and the spring's energy changes without work
 * done - the bottom layer rattled at up to 1.6 m/s under the paper's soft
 * contacts. Weighted by overlap, a contact enters and leaves at zero weight. */
int ts_span_contact(const ts_span_source *src, ts_vec3 p, double r, double *d_n, ts_vec3 *u_n)
{
    const ts_columns *g = src->cols;
    int ci, cj;
    ts_columns_index(g, p.x, p.y, &ci, &cj);
    double d_sum = 0.0, d2_sum = 0.0;
    ts_vec3 n_sum = ts_v3(0, 0, 0);
    int hits = 0, count;
    ts_span bed_span;
    const ts_span *sp;
    count = source_spans(src, ci, cj, &bed_span, &sp);
    for (int k = 0; k < count; k++) {
        double d;
        ts_vec3 n;
        if (p.z > sp[k].bottom && p.z < sp[k].top)
            inside_span(src, ci, cj, &sp[k], p, r, &d, &n);
        else if (!face_contact(&sp[k], p.z, r, &d, &n))
            continue;
        d_sum += d, d2_sum += d * d, n_sum = ts_v3_add(n_sum, ts_v3_scale(n, d)), hits++;
    }
    /* the eight neighbours: the paper's four sides, and the corners, without
     * which a DE rolls out diagonally between two side walls */
    static const int step[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    for (int e = 0; e < 8 && hits < MAX_SPAN_HITS; e++) {
        int i = ci + step[e][0], j = cj + step[e][1];
        /* nearest point of the neighbour column's footprint to the centre, horizontally */
        double qx = step[e][0] ? g->x0 + (ci + (step[e][0] > 0)) * g->cell : p.x;
        double qy = step[e][1] ? g->y0 + (cj + (step[e][1] > 0)) * g->cell : p.y;
        double ex = p.x - qx, ey = p.y - qy, dist = sqrt(ex * ex + ey * ey);
        if (dist >= r)
            continue;
        if (dist < 1e-9 * g->cell) { /* on the face or corner itself: the way out is straight back */
            ex = -step[e][0], ey = -step[e][1];
            double len = sqrt(ex * ex + ey * ey);
            ex /= len, ey /= len, dist = 0.0;
        } else {
            ex /= dist, ey /= dist;
        }
        count = source_spans(src, i, j, &bed_span, &sp);
        for (int k = 0; k < count; k++) {
            double d;
            ts_vec3 n;
            if (p.z > sp[k].bottom && p.z < sp[k].top) {            /* (b): the column's side */
                d = r - dist, n = ts_v3(ex, ey, 0);
            } else if (!face_contact(&sp[k], p.z, sqrt(r * r - dist * dist), &d, &n)) {
                continue;                                          /* (c) */
            }
            d_sum += d, d2_sum += d * d, n_sum = ts_v3_add(n_sum, ts_v3_scale(n, d)), hits++;
        }
    }
    double len = ts_v3_length(n_sum);
    if (d_sum <= 0.0 || len == 0.0)
        return 0;
    *d_n = d2_sum / d_sum;
    *u_n = ts_v3_scale(n_sum, -1.0 / len); /* from the DE into the source, as u_n of eq. 2 */
    return 1;
}
