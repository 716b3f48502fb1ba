/* fragments.c - Voronoi cells of elements cut to the object (see fragments.h). */
#include "fragments.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vecmath.h"

/* A triangle soup being cut: corners as doubles so that two triangles
 * sharing an edge compute bit-identical cut points (see cut_point). */
typedef struct soup {
    size_t count, cap;
    double *pos;       /* 9 per triangle */
    float *uv;         /* 6 per triangle */
    uint8_t *material;
} soup;

typedef struct segment { double a[3], b[3]; } segment;

typedef struct cutter {
    soup in, out;
    segment *seg;
    size_t seg_count, seg_cap;
    double *loop;      /* 3 per loop point */
    int *index;
    size_t loop_cap;
} cutter;

static int soup_reserve(soup *s, size_t need)
{
    if (need <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < need)
        cap *= 2;
    double *pos = realloc(s->pos, cap * 9 * sizeof *pos);
    if (pos) s->pos = pos;
    float *uv = realloc(s->uv, cap * 6 * sizeof *uv);
    if (uv) s->uv = uv;
    uint8_t *mat = realloc(s->material, cap);
    if (mat) s->material = mat;
    if (!pos || !uv || !mat)
        return -1;
    s->cap = cap;
    return 0;
}

static int soup_add(soup *s, const double p[9], const float uv[6], uint8_t material)
{
    if (soup_reserve(s, s->count + 1) < 0)
        return -1;
    memcpy(s->pos + 9 * s->count, p, 9 * sizeof *p);
    memcpy(s->uv + 6 * s->count, uv, 6 * sizeof *uv);
    s->material[s->count++] = material;
    return 0;
}

static int add_segment(cutter *c, const double *a, const double *b)
{
    if (c->seg_count == c->seg_cap) {
        size_t cap = c->seg_cap ? 2 * c->seg_cap : 64;
        segment *grown = realloc(c->seg, cap * sizeof *grown);
        if (!grown)
            return -1;
        c->seg = grown, c->seg_cap = cap;
    }
    memcpy(c->seg[c->seg_count].a, a, sizeof c->seg->a);
    memcpy(c->seg[c->seg_count].b, b, sizeof c->seg->b);
    c->seg_count++;
    return 0;
}

static int lex_less(const double *p, const double *q)
{
    for (int a = 0; a < 3; a++)
        if (p[a] != q[a])
            return p[a] < q[a];
    return 0;
}

/* Where edge p-q crosses the plane, computed from the lexically smaller end
 * so both triangles of an edge get the same bits and the caps close exactly. */
static void cut_point(const double *p, const float *uvp, double sp, const double *q, const float *uvq, double sq,
                      double *out, float *uv_out)
{
    if (lex_less(q, p)) {
        const double *t = p; p = q; q = t;
        const float *tu = uvp; uvp = uvq; uvq = tu;
        double ts = sp; sp = sq; sq = ts;
    }
    double t = sp / (sp - sq);
    for (int a = 0; a < 3; a++)
        out[a] = p[a] + t * (q[a] - p[a]);
    for (int a = 0; a < 2; a++)
        uv_out[a] = (float)(uvp[a] + t * (uvq[a] - uvp[a]));
}

/* Keep the part of triangle t on the side n.p <= d; its edges lying in the plane become cap segments (reversed). */
static int cut_triangle(cutter *c, size_t t, ts_vec3 n, double d, double eps)
{
    const double *p = c->in.pos + 9 * t;
    const float *uv = c->in.uv + 6 * t;
    double s[3];
    int inside = 0, outside = 0;
    for (int k = 0; k < 3; k++) {
        s[k] = n.x * p[3 * k] + n.y * p[3 * k + 1] + n.z * p[3 * k + 2] - d;
        if (fabs(s[k]) <= eps)
            s[k] = 0.0;
        inside += s[k] < 0, outside += s[k] > 0;
    }
    if (outside == 3 || (outside > 0 && inside == 0))
        return 0;
    double poly[4][3];
    float puv[4][2];
    int on[4], m = 0;
    for (int k = 0; k < 3; k++) {   /* Sutherland-Hodgman against one plane */
        int j = (k + 1) % 3;
        if (s[k] <= 0) {
            memcpy(poly[m], p + 3 * k, sizeof poly[m]);
            memcpy(puv[m], uv + 2 * k, sizeof puv[m]);
            on[m++] = s[k] == 0;
        }
        if ((s[k] < 0 && s[j] > 0) || (s[k] > 0 && s[j] < 0)) {
            cut_point(p + 3 * k, uv + 2 * k, s[k], p + 3 * j, uv + 2 * j, s[j], poly[m], puv[m]);
            on[m++] = 1;
        }
    }
    for (int k = 1; k + 1 < m; k++) {
        double tri[9];
        float tuv[6];
        memcpy(tri, poly[0], 24), memcpy(tri + 3, poly[k], 24), memcpy(tri + 6, poly[k + 1], 24);
        memcpy(tuv, puv[0], 8), memcpy(tuv + 2, puv[k], 8), memcpy(tuv + 4, puv[k + 1], 8);
        if (soup_add(&c->out, tri, tuv, c->in.material[t]) < 0)
            return -1;
    }
    for (int k = 0; k < m; k++) {
        int j = (k + 1) % m;
        if (on[k] && on[j] && add_segment(c, poly[j], poly[k]) < 0)
            return -1;
    }
    return 0;
}

static int same_point(const double *p, const double *q)
{
    return p[0] == q[0] && p[1] == q[1] && p[2] == q[2];
}

/* Two kept triangles meeting along an edge in the plane give that edge both ways: no cap there. */
static void cancel_opposite_segments(cutter *c)
{
    for (size_t i = 0; i < c->seg_count; i++)
        for (size_t j = i + 1; j < c->seg_count; j++)
            if (same_point(c->seg[i].a, c->seg[j].b) && same_point(c->seg[i].b, c->seg[j].a)) {
                c->seg[j] = c->seg[--c->seg_count];
                c->seg[i] = c->seg[--c->seg_count];
                i--;
                break;
            }
}

static double cross2(const double *o, const double *a, const double *b)
{
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

static int in_triangle(const double *p, const double *a, const double *b, const double *c)
{
    return cross2(a, b, p) >= 0 && cross2(b, c, p) >= 0 && cross2(c, a, p) >= 0;
}

/* Ear clipping of one counter-clockwise loop (2D coordinates in xy, 3D in
 * loop3), emitting cap triangles facing n. */
static int cap_loop(cutter *c, const double *xy, const double *loop3, int count, ts_vec3 u, ts_vec3 v)
{
    int *idx = c->index;
    for (int k = 0; k < count; k++)
        idx[k] = k;
    int left = count, guard = 0;
    while (left >= 3 && guard < 4 * count) {
        int found = 0;
        for (int k = 0; k < left && left > 3; k++) {
            int a = idx[(k + left - 1) % left], b = idx[k], e = idx[(k + 1) % left];
            if (cross2(xy + 2 * a, xy + 2 * b, xy + 2 * e) <= 0)
                continue;
            int blocked = 0;
            for (int q = 0; q < left && !blocked; q++) {
                int o = idx[q];
                blocked = o != a && o != b && o != e && in_triangle(xy + 2 * o, xy + 2 * a, xy + 2 * b, xy + 2 * e);
            }
            if (blocked)
                continue;
            double tri[9];
            float tuv[6];
            int corner[3] = {a, b, e};
            for (int r = 0; r < 3; r++) {
                memcpy(tri + 3 * r, loop3 + 3 * corner[r], 24);
                ts_vec3 P = ts_v3(tri[3 * r], tri[3 * r + 1], tri[3 * r + 2]);
                tuv[2 * r] = (float)ts_v3_dot(P, u), tuv[2 * r + 1] = (float)ts_v3_dot(P, v);
            }
            if (soup_add(&c->out, tri, tuv, 1) < 0)
                return -1;
            memmove(idx + k, idx + k + 1, (size_t)(left - k - 1) * sizeof *idx);
            left--, found = 1;
            break;
        }
        if (left == 3 || !found) {      /* last triangle, or a degenerate rest: fan it */
            for (int k = 1; k + 1 < left; k++) {
                double tri[9];
                float tuv[6];
                int corner[3] = {idx[0], idx[k], idx[k + 1]};
                for (int r = 0; r < 3; r++) {
                    memcpy(tri + 3 * r, loop3 + 3 * corner[r], 24);
                    ts_vec3 P = ts_v3(tri[3 * r], tri[3 * r + 1], tri[3 * r + 2]);
                    tuv[2 * r] = (float)ts_v3_dot(P, u), tuv[2 * r + 1] = (float)ts_v3_dot(P, v);
                }
                if (soup_add(&c->out, tri, tuv, 1) < 0)
                    return -1;
            }
            break;
        }
        guard++;
    }
    return 0;
}

/* Chain the segments into closed loops and cap each (holes are skipped, see fragments.h). */
static int cap_cut(cutter *c, ts_vec3 n)
{
    cancel_opposite_segments(c);
    ts_vec3 u = fabs(n.x) < 0.9 ? ts_v3_cross(n, ts_v3(1, 0, 0)) : ts_v3_cross(n, ts_v3(0, 1, 0));
    u = ts_v3_scale(u, 1.0 / ts_v3_length(u));
    ts_vec3 v = ts_v3_cross(n, u);
    if (c->seg_count + 1 > c->loop_cap) {
        size_t cap = 2 * (c->seg_count + 1);
        double *loop = realloc(c->loop, cap * 5 * sizeof *loop);
        if (loop) c->loop = loop;
        int *index = realloc(c->index, cap * sizeof *index);
        if (index) c->index = index;
        if (!loop || !index)
            return -1;
        c->loop_cap = cap;
    }
    while (c->seg_count > 0) {
        double *loop3 = c->loop, *xy = c->loop + 3 * c->loop_cap;
        int count = 0;
        segment first = c->seg[--c->seg_count];
        memcpy(loop3, first.a, 24), count = 1;
        double end[3];
        memcpy(end, first.b, 24);
        while (!same_point(end, first.a)) {
            size_t k = 0;
            while (k < c->seg_count && !same_point(c->seg[k].a, end))
                k++;
            if (k == c->seg_count)
                break;      /* an open chain (a mesh not quite closed): leave it */
            memcpy(loop3 + 3 * count++, end, 24);
            memcpy(end, c->seg[k].b, 24);
            c->seg[k] = c->seg[--c->seg_count];
        }
        if (!same_point(end, first.a) || count < 3)
            continue;
        double area = 0;
        for (int k = 0; k < count; k++) {
            ts_vec3 P = ts_v3(loop3[3 * k], loop3[3 * k + 1], loop3[3 * k + 2]);
            xy[2 * k] = ts_v3_dot(P, u), xy[2 * k + 1] = ts_v3_dot(P, v);
        }
        for (int k = 0; k < count; k++)
            area += xy[2 * k] * xy[2 * ((k + 1) % count) + 1] - xy[2 * ((k + 1) % count)] * xy[2 * k + 1];
        if (area > 0 && cap_loop(c, xy, loop3, count, u, v) < 0)
            return -1;
    }
    return 0;
}

static int cut_by_plane(cutter *c, ts_vec3 n, double d, double eps)
{
    c->out.count = 0;
    c->seg_count = 0;
    for (size_t t = 0; t < c->in.count; t++)
        if (cut_triangle(c, t, n, d, eps) < 0)
            return -1;
    if (cap_cut(c, n) < 0)
        return -1;
    soup swap = c->in;      /* the result is the next cut's input */
    c->in = c->out;
    c->out = swap;
    return 0;
}

static void cutter_free(cutter *c)
{
    free(c->in.pos), free(c->in.uv), free(c->in.material);
    free(c->out.pos), free(c->out.uv), free(c->out.material);
    free(c->seg), free(c->loop), free(c->index);
}

/* Neighbours of every element from the edge list (both directions). */
static int build_adjacency(size_t n, const ts_edge *edges, size_t m, uint32_t **start, uint32_t **list)
{
    *start = calloc(n + 1, sizeof **start);
    *list = malloc((2 * m + 1) * sizeof **list);
    if (!*start || !*list)
        return -1;
    for (size_t e = 0; e < m; e++)
        (*start)[edges[e].a + 1]++, (*start)[edges[e].b + 1]++;
    for (size_t i = 0; i < n; i++)
        (*start)[i + 1] += (*start)[i];
    uint32_t *fill = malloc((n + 1) * sizeof *fill);
    if (!fill)
        return -1;
    memcpy(fill, *start, n * sizeof *fill);
    for (size_t e = 0; e < m; e++)
        (*list)[fill[edges[e].a]++] = edges[e].b, (*list)[fill[edges[e].b]++] = edges[e].a;
    free(fill);
    return 0;
}

/* One element's piece: the mesh cut by its bisectors with every neighbour. */
static int build_cell(cutter *c, const soup *object, const double *centres, uint32_t i, const uint32_t *nb,
                      uint32_t nb_count, double eps)
{
    c->in.count = 0;
    if (soup_reserve(&c->in, object->count) < 0)
        return -1;
    memcpy(c->in.pos, object->pos, object->count * 9 * sizeof *object->pos);
    memcpy(c->in.uv, object->uv, object->count * 6 * sizeof *object->uv);
    memcpy(c->in.material, object->material, object->count);
    c->in.count = object->count;
    const double *xi = centres + 3 * (size_t)i;
    for (uint32_t k = 0; k < nb_count && c->in.count > 0; k++) {
        const double *xj = centres + 3 * (size_t)nb[k];
        ts_vec3 n = ts_v3(xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]);
        double len = ts_v3_length(n);
        if (len == 0)
            continue;
        n = ts_v3_scale(n, 1.0 / len);
        double d = ts_v3_dot(n, ts_v3(0.5 * (xi[0] + xj[0]), 0.5 * (xi[1] + xj[1]), 0.5 * (xi[2] + xj[2])));
        if (cut_by_plane(c, n, d, eps) < 0)
            return -1;
    }
    return 0;
}

ts_status ts_fragments_build(const float *vertices, const int32_t *triangles, size_t triangle_count,
                             const float *corner_uv, const double *centres, size_t n, const ts_edge *edges,
                             size_t edge_count, ts_fragments *out, ts_error *err)
{
    memset(out, 0, sizeof *out);
    soup object = {0};
    uint32_t *start = NULL, *list = NULL;
    soup *cells = calloc(n + 1, sizeof *cells);
    int failed = !cells || soup_reserve(&object, triangle_count) < 0 ||
                 build_adjacency(n, edges, edge_count, &start, &list) < 0;
    double size = 0;
    for (size_t t = 0; !failed && t < triangle_count; t++) {
        for (int k = 0; k < 3; k++)
            for (int a = 0; a < 3; a++) {
                object.pos[9 * t + 3 * k + a] = vertices[3 * triangles[3 * t + k] + a];
                size = fmax(size, fabs(object.pos[9 * t + 3 * k + a]));
            }
        for (int k = 0; k < 6; k++)
            object.uv[6 * t + k] = corner_uv ? corner_uv[6 * t + k] : 0.0f;
        object.material[t] = 0;
    }
    object.count = triangle_count;
    double eps = 1e-12 * (size + 1.0);
    #pragma omp parallel if (n > 64)
    {
        cutter c = {0};
        #pragma omp for schedule(dynamic, 16)
        for (size_t i = 0; i < n; i++) {
            if (failed)
                continue;
            if (build_cell(&c, &object, centres, (uint32_t)i, list + start[i], start[i + 1] - start[i], eps) < 0) {
                #pragma omp atomic write
                failed = 1;
                continue;
            }
            soup *cell = &cells[i];
            if (soup_reserve(cell, c.in.count) < 0) {
                #pragma omp atomic write
                failed = 1;
                continue;
            }
            memcpy(cell->pos, c.in.pos, c.in.count * 9 * sizeof *cell->pos);
            memcpy(cell->uv, c.in.uv, c.in.count * 6 * sizeof *cell->uv);
            memcpy(cell->material, c.in.material, c.in.count);
            cell->count = c.in.count;
        }
        cutter_free(&c);
    }
    size_t total = 0;
    for (size_t i = 0; !failed && i < n; i++)
        total += cells[i].count;
    if (!failed) {
        out->position = malloc((9 * total + 1) * sizeof *out->position);
        out->uv = malloc((6 * total + 1) * sizeof *out->uv);
        out->element = malloc((total + 1) * sizeof *out->element);
        out->material = malloc(total + 1);
        failed = !out->position || !out->uv || !out->element || !out->material;
    }
    for (size_t i = 0, t = 0; !failed && i < n; i++)
        for (size_t k = 0; k < cells[i].count; k++, t++) {
            for (int q = 0; q < 9; q++)
                out->position[9 * t + q] = (float)(cells[i].pos[9 * k + q] - centres[3 * i + q % 3]);
            memcpy(out->uv + 6 * t, cells[i].uv + 6 * k, 6 * sizeof *out->uv);
            out->element[t] = (uint32_t)i;
            out->material[t] = cells[i].material[k];
        }
    out->triangle_count = failed ? 0 : total;
    for (size_t i = 0; cells && i < n; i++)
        free(cells[i].pos), free(cells[i].uv), free(cells[i].material);
    free(cells), free(start), free(list);
    free(object.pos), free(object.uv), free(object.material);
    if (failed) {
        ts_fragments_free(out);
        return ts_fail(err, TS_ERR_NOMEM, "fragments: out of memory cutting %zu pieces", n);
    }
    return TS_OK;
}

void ts_fragments_free(ts_fragments *f)
{
    free(f->position), free(f->uv), free(f->element), free(f->material);
    memset(f, 0, sizeof *f);
}
