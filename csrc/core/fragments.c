/* fragments.c - Voronoi cells of elements cut to the object (see fragments.h). */
#include "fragments.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "vecmath.h"

/* The piece being cut, as convex polygons (a convex polygon cut by a plane
 * stays one convex polygon, so faces do not multiply). Corners are doubles
 * so that two faces sharing an edge compute bit-identical cut points (see
 * cut_point) and the caps close exactly. */
typedef struct soup {
    size_t faces, face_cap, corners, corner_cap;
    uint32_t *start, *count;     /* per face: its corners */
    uint8_t *material;
    double *pos;                 /* 3 per corner */
    float *uv;                   /* 2 per corner */
} soup;

typedef struct segment { double a[3], b[3]; } segment;

typedef struct cutter {
    soup in, out;
    segment *seg;
    size_t seg_count, seg_cap;
    double *loop;                /* loop points: 3D, then 2D */
    float *loop_uv;
    int *index;
    size_t loop_cap;
    double *poly;                /* one face being cut */
    float *poly_uv;
    int *on;
    size_t poly_cap;
    struct neighbour { double d2; uint32_t j; } *order;  /* one cell's neighbours, nearest first */
    size_t order_cap;
} cutter;

static int soup_reserve(soup *s, size_t faces, size_t corners)
{
    if (faces > s->face_cap) {
        size_t c = ts_grown_capacity(s->face_cap, faces, 64);
        if (ts_resize((void **)&s->start, c, sizeof *s->start) < 0 ||
            ts_resize((void **)&s->count, c, sizeof *s->count) < 0 || ts_resize((void **)&s->material, c, 1) < 0)
            return -1;
        s->face_cap = c;
    }
    if (corners > s->corner_cap) {
        size_t c = ts_grown_capacity(s->corner_cap, corners, 256);
        if (ts_resize((void **)&s->pos, c, 3 * sizeof *s->pos) < 0 ||
            ts_resize((void **)&s->uv, c, 2 * sizeof *s->uv) < 0)
            return -1;
        s->corner_cap = c;
    }
    return 0;
}

static int soup_add(soup *s, int n, const double *pos, const float *uv, uint8_t material)
{
    if (soup_reserve(s, s->faces + 1, s->corners + (size_t)n) < 0)
        return -1;
    memcpy(s->pos + 3 * s->corners, pos, (size_t)n * 3 * sizeof *pos);
    memcpy(s->uv + 2 * s->corners, uv, (size_t)n * 2 * sizeof *uv);
    s->start[s->faces] = (uint32_t)s->corners;
    s->count[s->faces] = (uint32_t)n;
    s->material[s->faces++] = material;
    s->corners += (size_t)n;
    return 0;
}

static int add_segment(cutter *c, const double *a, const double *b)
{
    if (ts_grow((void **)&c->seg, &c->seg_cap, c->seg_count + 1, sizeof *c->seg) < 0)
        return -1;
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
 * so both faces of an edge get the same bits and the caps close exactly. */
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

/* Keep the part of face f on the side n.p <= d (Sutherland-Hodgman); its
 * edges lying in the plane become cap segments, reversed. */
static int cut_face(cutter *c, size_t f, ts_vec3 n, double d, double eps)
{
    const double *p = c->in.pos + 3 * c->in.start[f];
    const float *uv = c->in.uv + 2 * c->in.start[f];
    int k_count = (int)c->in.count[f], inside = 0, outside = 0;
    size_t need = 2 * (size_t)k_count + 2;
    if (need > c->poly_cap) {
        size_t cap = ts_grown_capacity(c->poly_cap, need, 64);
        if (ts_resize((void **)&c->poly, cap, 3 * sizeof *c->poly) < 0 ||
            ts_resize((void **)&c->poly_uv, cap, 2 * sizeof *c->poly_uv) < 0 ||
            ts_resize((void **)&c->on, cap, sizeof *c->on) < 0)
            return -1;
        c->poly_cap = cap;
    }
    double s_stack[64], *s = k_count <= 64 ? s_stack : malloc((size_t)k_count * sizeof *s);
    if (!s)
        return -1;
    for (int k = 0; k < k_count; k++) {
        s[k] = n.x * p[3 * k] + n.y * p[3 * k + 1] + n.z * p[3 * k + 2] - d;
        if (fabs(s[k]) <= eps)
            s[k] = 0.0;
        inside += s[k] < 0, outside += s[k] > 0;
    }
    int m = 0, rc = 0;
    if (outside == 0) {             /* whole: copy it */
        for (int k = 0; k < k_count; k++) {
            memcpy(c->poly + 3 * m, p + 3 * k, 3 * sizeof *p);
            memcpy(c->poly_uv + 2 * m, uv + 2 * k, 2 * sizeof *uv);
            c->on[m++] = s[k] == 0;
        }
    } else if (inside > 0) {
        for (int k = 0; k < k_count; k++) {
            int j = (k + 1) % k_count;
            if (s[k] <= 0) {
                memcpy(c->poly + 3 * m, p + 3 * k, 3 * sizeof *p);
                memcpy(c->poly_uv + 2 * m, uv + 2 * k, 2 * sizeof *uv);
                c->on[m++] = s[k] == 0;
            }
            if ((s[k] < 0 && s[j] > 0) || (s[k] > 0 && s[j] < 0)) {
                cut_point(p + 3 * k, uv + 2 * k, s[k], p + 3 * j, uv + 2 * j, s[j], c->poly + 3 * m,
                          c->poly_uv + 2 * m);
                c->on[m++] = 1;
            }
        }
    }
    if (s != s_stack)
        free(s);
    if (m >= 3)
        rc = soup_add(&c->out, m, c->poly, c->poly_uv, c->in.material[f]);
    for (int k = 0; rc == 0 && m >= 3 && k < m; k++) {
        int j = (k + 1) % m;
        if (c->on[k] && c->on[j])
            rc = add_segment(c, c->poly + 3 * j, c->poly + 3 * k);
    }
    return rc;
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

/* A cap polygon's UVs: its corners projected on the plane's axes (metres). */
static void plane_uv(const double *pos, int n, ts_vec3 u, ts_vec3 v, float *uv)
{
    for (int k = 0; k < n; k++) {
        ts_vec3 P = ts_v3(pos[3 * k], pos[3 * k + 1], pos[3 * k + 2]);
        uv[2 * k] = (float)ts_v3_dot(P, u), uv[2 * k + 1] = (float)ts_v3_dot(P, v);
    }
}

static int add_cap_triangle(cutter *c, const double *loop3, int a, int b, int e, ts_vec3 u, ts_vec3 v)
{
    double tri[9];
    float tuv[6];
    memcpy(tri, loop3 + 3 * a, 24), memcpy(tri + 3, loop3 + 3 * b, 24), memcpy(tri + 6, loop3 + 3 * e, 24);
    plane_uv(tri, 3, u, v, tuv);
    return soup_add(&c->out, 3, tri, tuv, 1);
}

/* One counter-clockwise loop (2D in xy, 3D in loop3) as cap faces facing n:
 * itself when convex (the usual case), else ear-clipped into triangles. */
static int cap_loop(cutter *c, const double *xy, const double *loop3, int count, ts_vec3 u, ts_vec3 v)
{
    int convex = 1;
    for (int k = 0; k < count && convex; k++)
        convex = cross2(xy + 2 * k, xy + 2 * ((k + 1) % count), xy + 2 * ((k + 2) % count)) >= 0;
    if (convex) {
        plane_uv(loop3, count, u, v, c->loop_uv);
        return soup_add(&c->out, count, loop3, c->loop_uv, 1);
    }
    int *idx = c->index, left = count;
    for (int k = 0; k < count; k++)
        idx[k] = k;
    while (left > 3) {
        int found = 0;
        for (int k = 0; k < left && !found; k++) {
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
            if (add_cap_triangle(c, loop3, a, b, e, u, v) < 0)
                return -1;
            memmove(idx + k, idx + k + 1, (size_t)(left - k - 1) * sizeof *idx);
            left--, found = 1;
        }
        if (!found)
            break;      /* degenerate rest: fanned below */
    }
    for (int k = 1; k + 1 < left; k++)
        if (add_cap_triangle(c, loop3, idx[0], idx[k], idx[k + 1], u, v) < 0)
            return -1;
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
        size_t cap = ts_grown_capacity(c->loop_cap, c->seg_count + 1, 64);
        if (ts_resize((void **)&c->loop, cap, 5 * sizeof *c->loop) < 0 ||
            ts_resize((void **)&c->loop_uv, cap, 2 * sizeof *c->loop_uv) < 0 ||
            ts_resize((void **)&c->index, cap, sizeof *c->index) < 0)
            return -1;
        c->loop_cap = cap;
    }
    while (c->seg_count > 0) {
        double *loop3 = c->loop, *xy = c->loop + 3 * c->loop_cap;
        segment first = c->seg[--c->seg_count];
        int count = 1;
        memcpy(loop3, first.a, 24);
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
    c->out.faces = c->out.corners = 0;
    c->seg_count = 0;
    for (size_t f = 0; f < c->in.faces; f++)
        if (cut_face(c, f, n, d, eps) < 0)
            return -1;
    if (cap_cut(c, n) < 0)
        return -1;
    soup swap = c->in;      /* the result is the next cut's input */
    c->in = c->out;
    c->out = swap;
    return 0;
}

static void soup_free(soup *s)
{
    free(s->start), free(s->count), free(s->material), free(s->pos), free(s->uv);
    memset(s, 0, sizeof *s);
}

static int soup_copy(soup *to, const soup *from)
{
    to->faces = to->corners = 0;
    if (soup_reserve(to, from->faces, from->corners) < 0)
        return -1;
    memcpy(to->start, from->start, from->faces * sizeof *from->start);
    memcpy(to->count, from->count, from->faces * sizeof *from->count);
    memcpy(to->material, from->material, from->faces);
    memcpy(to->pos, from->pos, from->corners * 3 * sizeof *from->pos);
    memcpy(to->uv, from->uv, from->corners * 2 * sizeof *from->uv);
    to->faces = from->faces, to->corners = from->corners;
    return 0;
}

static void cutter_free(cutter *c)
{
    soup_free(&c->in), soup_free(&c->out);
    free(c->seg), free(c->loop), free(c->loop_uv), free(c->index), free(c->poly), free(c->poly_uv), free(c->on);
    free(c->order);
}

/* Does the plane n.p = d leave any corner of the piece outside (n.p > d)? */
static int plane_cuts(const soup *s, ts_vec3 n, double d, double eps)
{
    for (size_t k = 0; k < s->corners; k++)
        if (n.x * s->pos[3 * k] + n.y * s->pos[3 * k + 1] + n.z * s->pos[3 * k + 2] - d > eps)
            return 1;
    return 0;
}

/* One element's piece: the mesh cut by its bisectors with every neighbour,
 * nearest first (the piece shrinks fastest), skipping planes that miss it. */
static int build_cell(cutter *c, const soup *object, const double *centres, uint32_t i, const ts_edge *edges,
                      const uint32_t *incident, uint32_t nb_count, double eps)
{
    if (soup_copy(&c->in, object) < 0)
        return -1;
    if (nb_count > c->order_cap) {
        size_t cap = ts_grown_capacity(c->order_cap, nb_count, 64);
        if (ts_resize((void **)&c->order, cap, sizeof *c->order) < 0)
            return -1;
        c->order_cap = cap;
    }
    const double *xi = centres + 3 * (size_t)i;
    for (uint32_t k = 0; k < nb_count; k++) {   /* insertion sort by distance, ties by index */
        const ts_edge *e = &edges[incident[k]];
        uint32_t j = e->a == i ? e->b : e->a;
        const double *xj = centres + 3 * (size_t)j;
        double d2 = (xj[0] - xi[0]) * (xj[0] - xi[0]) + (xj[1] - xi[1]) * (xj[1] - xi[1]) +
                    (xj[2] - xi[2]) * (xj[2] - xi[2]);
        uint32_t q = k;
        while (q > 0 && (c->order[q - 1].d2 > d2 || (c->order[q - 1].d2 == d2 && c->order[q - 1].j > j)))
            c->order[q] = c->order[q - 1], q--;
        c->order[q].d2 = d2, c->order[q].j = j;
    }
    for (uint32_t k = 0; k < nb_count && c->in.faces > 0; k++) {
        const double *xj = centres + 3 * (size_t)c->order[k].j;
        ts_vec3 n = ts_v3(xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]);
        double len = ts_v3_length(n);
        if (len == 0)
            continue;
        n = ts_v3_scale(n, 1.0 / len);
        double d = ts_v3_dot(n, ts_v3(0.5 * (xi[0] + xj[0]), 0.5 * (xi[1] + xj[1]), 0.5 * (xi[2] + xj[2])));
        if (plane_cuts(&c->in, n, d, eps) && cut_by_plane(c, n, d, eps) < 0)
            return -1;
    }
    return 0;
}

/* The corners of face f that make its outline: repeated points and points in
 * line with their neighbours (left by cuts through a vertex or an edge) are
 * dropped, so no zero-area triangles come out. Returns how many (into keep). */
static int outline(const soup *s, size_t f, uint32_t *keep)
{
    const double *p = s->pos + 3 * s->start[f];
    int n = (int)s->count[f], m = 0;
    for (int k = 0; k < n; k++) {
        const double *a = p + 3 * ((k + n - 1) % n), *b = p + 3 * k, *c = p + 3 * ((k + 1) % n);
        ts_vec3 ab = ts_v3(b[0] - a[0], b[1] - a[1], b[2] - a[2]), bc = ts_v3(c[0] - b[0], c[1] - b[1], c[2] - b[2]);
        double cross = ts_v3_length(ts_v3_cross(ab, bc));
        if (cross > 1e-9 * ts_v3_length(ab) * ts_v3_length(bc))
            keep[m++] = (uint32_t)k;
    }
    return m;
}

static size_t triangles_of(const soup *s, uint32_t *keep)
{
    size_t t = 0;
    for (size_t f = 0; f < s->faces; f++) {
        int m = outline(s, f, keep);
        t += m >= 3 ? (size_t)m - 2 : 0;
    }
    return t;
}

/* Fan each (convex) face of element i's piece into triangles relative to its centre. */
static void write_triangles(const soup *s, uint32_t i, const double *centre, uint32_t *keep, ts_fragments *out,
                            size_t *t)
{
    for (size_t f = 0; f < s->faces; f++) {
        const double *p = s->pos + 3 * s->start[f];
        const float *uv = s->uv + 2 * s->start[f];
        int m = outline(s, f, keep);
        for (int k = 1; k + 1 < m; k++, (*t)++) {
            uint32_t corner[3] = {keep[0], keep[k], keep[k + 1]};
            for (int r = 0; r < 3; r++) {
                for (int a = 0; a < 3; a++)
                    out->position[9 * *t + 3 * r + a] = (float)(p[3 * corner[r] + a] - centre[a]);
                out->uv[6 * *t + 2 * r] = uv[2 * corner[r]], out->uv[6 * *t + 2 * r + 1] = uv[2 * corner[r] + 1];
            }
            out->element[*t] = i;
            out->material[*t] = s->material[f];
        }
    }
}

ts_status ts_fragments_build(const float *vertices, const int32_t *triangles, size_t triangle_count,
                             const float *corner_uv, const double *centres, size_t n, const ts_edge *edges,
                             size_t edge_count, ts_fragments *out, ts_error *err)
{
    memset(out, 0, sizeof *out);
    soup object = {0};
    uint32_t *start = NULL, *list = NULL;
    soup *cells = calloc(n + 1, sizeof *cells);
    int failed = !cells || soup_reserve(&object, triangle_count, 3 * triangle_count) < 0 ||
                 ts_edge_incidence(n, edges, edge_count, &start, &list) < 0;
    double size = 0;
    for (size_t t = 0; !failed && t < triangle_count; t++) {
        double pos[9];
        float uv[6];
        for (int k = 0; k < 3; k++)
            for (int a = 0; a < 3; a++) {
                pos[3 * k + a] = vertices[3 * triangles[3 * t + k] + a];
                size = fmax(size, fabs(pos[3 * k + a]));
            }
        for (int k = 0; k < 6; k++)
            uv[k] = corner_uv ? corner_uv[6 * t + k] : 0.0f;
        failed = soup_add(&object, 3, pos, uv, 0) < 0;
    }
    double eps = 1e-12 * (size + 1.0);
    #pragma omp parallel if (n > 64)
    {
        cutter c = {0};
        #pragma omp for schedule(dynamic, 16)
        for (size_t i = 0; i < n; i++) {
            int ok = !failed && build_cell(&c, &object, centres, (uint32_t)i, edges, list + start[i],
                                           start[i + 1] - start[i], eps) == 0 && soup_copy(&cells[i], &c.in) == 0;
            if (!ok) {
                #pragma omp atomic write
                failed = 1;
            }
        }
        cutter_free(&c);
    }
    size_t total = 0, longest = 3;
    for (size_t i = 0; !failed && i < n; i++)
        for (size_t f = 0; f < cells[i].faces; f++)
            longest = cells[i].count[f] > longest ? cells[i].count[f] : longest;
    uint32_t *keep = malloc(longest * sizeof *keep);
    failed = failed || !keep;
    for (size_t i = 0; !failed && i < n; i++)
        total += triangles_of(&cells[i], keep);
    if (!failed) {
        out->position = malloc((9 * total + 1) * sizeof *out->position);
        out->uv = malloc((6 * total + 1) * sizeof *out->uv);
        out->element = malloc((total + 1) * sizeof *out->element);
        out->material = malloc(total + 1);
        failed = !out->position || !out->uv || !out->element || !out->material;
    }
    size_t t = 0;
    for (size_t i = 0; !failed && i < n; i++)
        write_triangles(&cells[i], (uint32_t)i, centres + 3 * i, keep, out, &t);
    out->triangle_count = failed ? 0 : total;
    for (size_t i = 0; cells && i < n; i++)
        soup_free(&cells[i]);
    free(cells), free(start), free(list), free(keep);
    soup_free(&object);
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
