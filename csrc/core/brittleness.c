/* brittleness.c - looking up the brittleness map (see brittleness.h). */
#include "brittleness.h"

#include <math.h>

ts_status ts_brittleness_init(ts_brittleness_map *m, const char *object, size_t vertex_count, ts_error *err)
{
    if (!m->pixels || m->width < 1 || m->height < 1)
        return ts_fail(err, TS_ERR_INVALID, "breakable '%s': its brittleness image is empty; pick an image "
                       "(black = hard, white = brittle) or remove the map", object);
    for (size_t k = 0; k < (size_t)m->width * m->height; k++)
        if (!isfinite(m->pixels[k]))
            return ts_fail(err, TS_ERR_INVALID, "breakable '%s': its brittleness image has a non-finite pixel "
                           "(%zu)", object, k);
    if (m->projection == TS_MAP_UV && (!m->corner_uv || m->triangle_count == 0))
        return ts_fail(err, TS_ERR_INVALID, "breakable '%s': the brittleness map is mapped by UV but the object "
                       "has no UV map; add one (UV > Unwrap) or use a planar projection", object);
    if (m->projection > TS_MAP_PLANAR_Z)
        return ts_fail(err, TS_ERR_INVALID, "breakable '%s': unknown brittleness projection %d", object,
                       (int)m->projection);
    for (int a = 0; a < 3; a++)
        m->bounds[a] = INFINITY, m->bounds[3 + a] = -INFINITY;
    for (size_t k = 0; k < vertex_count; k++)
        for (int a = 0; a < 3; a++) {
            m->bounds[a] = fmin(m->bounds[a], m->vertices[3 * k + a]);
            m->bounds[3 + a] = fmax(m->bounds[3 + a], m->vertices[3 * k + a]);
        }
    return TS_OK;
}

void ts_closest_on_triangle(ts_vec3 p, ts_vec3 a, ts_vec3 b, ts_vec3 c, double w[3])
{
    ts_vec3 ab = ts_v3_sub(b, a), ac = ts_v3_sub(c, a), ap = ts_v3_sub(p, a);
    double d1 = ts_v3_dot(ab, ap), d2 = ts_v3_dot(ac, ap);
    if (d1 <= 0 && d2 <= 0) { w[0] = 1, w[1] = w[2] = 0; return; }
    ts_vec3 bp = ts_v3_sub(p, b);
    double d3 = ts_v3_dot(ab, bp), d4 = ts_v3_dot(ac, bp);
    if (d3 >= 0 && d4 <= d3) { w[1] = 1, w[0] = w[2] = 0; return; }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) { double v = d1 / (d1 - d3); w[0] = 1 - v, w[1] = v, w[2] = 0; return; }
    ts_vec3 cp = ts_v3_sub(p, c);
    double d5 = ts_v3_dot(ab, cp), d6 = ts_v3_dot(ac, cp);
    if (d6 >= 0 && d5 <= d6) { w[2] = 1, w[0] = w[1] = 0; return; }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) { double t = d2 / (d2 - d6); w[0] = 1 - t, w[2] = t, w[1] = 0; return; }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        double t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        w[1] = 1 - t, w[2] = t, w[0] = 0;
        return;
    }
    double denom = 1.0 / (va + vb + vc);
    w[1] = vb * denom, w[2] = vc * denom, w[0] = 1 - w[1] - w[2];
}

static ts_vec3 vertex(const ts_brittleness_map *m, int32_t k)
{
    return ts_v3(m->vertices[3 * k], m->vertices[3 * k + 1], m->vertices[3 * k + 2]);
}

/* UV of the surface point nearest p (brute force over the triangles: done once per spring at set-up). */
static void uv_at(const ts_brittleness_map *m, ts_vec3 p, double *u, double *v)
{
    double best = INFINITY;
    for (size_t t = 0; t < m->triangle_count; t++) {
        const int32_t *tri = m->triangles + 3 * t;
        double w[3];
        ts_vec3 a = vertex(m, tri[0]), b = vertex(m, tri[1]), c = vertex(m, tri[2]);
        ts_closest_on_triangle(p, a, b, c, w);
        ts_vec3 q = ts_v3_add(ts_v3_add(ts_v3_scale(a, w[0]), ts_v3_scale(b, w[1])), ts_v3_scale(c, w[2]));
        ts_vec3 d = ts_v3_sub(q, p);
        double d2 = ts_v3_dot(d, d);
        if (d2 < best) {
            best = d2;
            const float *uv = m->corner_uv + 6 * t;
            *u = w[0] * uv[0] + w[1] * uv[2] + w[2] * uv[4];
            *v = w[0] * uv[1] + w[1] * uv[3] + w[2] * uv[5];
        }
    }
}

static double planar(const ts_brittleness_map *m, ts_vec3 p, int axis)
{
    double c[3] = {p.x, p.y, p.z}, extent = m->bounds[3 + axis] - m->bounds[axis];
    return extent > 0 ? (c[axis] - m->bounds[axis]) / extent : 0.5;
}

/* Clamped at the edges, so a planar map stretched exactly over the object keeps its border colours. */
static double pixel(const ts_brittleness_map *m, int x, int y)
{
    x = x < 0 ? 0 : x >= m->width ? m->width - 1 : x;
    y = y < 0 ? 0 : y >= m->height ? m->height - 1 : y;
    return m->pixels[(size_t)y * m->width + x];
}

double ts_brittleness_at(const ts_brittleness_map *m, ts_vec3 p)
{
    double u = 0.5, v = 0.5;
    switch (m->projection) {
    case TS_MAP_UV: uv_at(m, p, &u, &v), u -= floor(u), v -= floor(v); break; /* UVs repeat */
    case TS_MAP_PLANAR_X: u = planar(m, p, 1), v = planar(m, p, 2); break;
    case TS_MAP_PLANAR_Y: u = planar(m, p, 0), v = planar(m, p, 2); break;
    case TS_MAP_PLANAR_Z: u = planar(m, p, 0), v = planar(m, p, 1); break;
    }
    double fx = u * m->width - 0.5, fy = v * m->height - 0.5;   /* pixel centres at half-integers */
    double x0 = floor(fx), y0 = floor(fy), tx = fx - x0, ty = fy - y0;
    int ix = (int)x0, iy = (int)y0;
    return (1 - ty) * ((1 - tx) * pixel(m, ix, iy) + tx * pixel(m, ix + 1, iy)) +
           ty * ((1 - tx) * pixel(m, ix, iy + 1) + tx * pixel(m, ix + 1, iy + 1));
}
