/* wall_field.c - the wall weight of a solid of any shape (see wall_field.h). */
#include "wall_field.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ts_wall_field_free(ts_wall_field *f)
{
    free(f->values);
    memset(f, 0, sizeof *f);
}

/* The share of a voxel of size v inside the solid, from the signed distance at its centre. */
static float inside_share(float phi, float v)
{
    float s = 0.5f - phi / v;
    return s < 0.0f ? 0.0f : s > 1.0f ? 1.0f : s;
}

/* The kernels' taps over a cube of +-n voxels: Z's and G's per unit of inside share. */
typedef struct taps {
    int n;
    double *z, *g;   /* g: 3 per tap, m grad W_spiky towards the voxel: summed, it points out of the solid */
} taps;

static int make_taps(taps *t, const ts_kernels *k, double voxel, double density_of_virtual_mass)
{
    t->n = (int)ceil(k->h / voxel);
    size_t count = (size_t)(2 * t->n + 1) * (2 * t->n + 1) * (2 * t->n + 1);
    t->z = malloc(count * sizeof *t->z), t->g = malloc(3 * count * sizeof *t->g);
    if (!t->z || !t->g)
        return 0;
    const double cell = density_of_virtual_mass * voxel * voxel * voxel;   /* virtual mass in one voxel */
    size_t q = 0;
    for (int c = -t->n; c <= t->n; c++)
        for (int b = -t->n; b <= t->n; b++)
            for (int a = -t->n; a <= t->n; a++, q++) {
                double d[3] = {a * voxel, b * voxel, c * voxel}, r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                double r = sqrt(r2);
                t->z[q] = cell * ts_w_poly6(k, r2);
                for (int e = 0; e < 3; e++)   /* the node at x, the voxel at x + d */
                    t->g[3 * q + e] = r > 0.0 ? cell * ts_dw_spiky(k, r) * d[e] / r : 0.0;
            }
    return 1;
}

/* Z and the normal part of G a flat wall gives at height phi, by the same sums as the field: what scales
 * the field to the tables. */
static void plane_sums(const taps *t, double voxel, double phi, double *z, double *g)
{
    *z = *g = 0.0;
    size_t q = 0;
    for (int c = -t->n; c <= t->n; c++) {
        double share = inside_share((float)(phi + c * voxel), (float)voxel);  /* the layer c voxels up */
        for (int b = -t->n; b <= t->n; b++)
            for (int a = -t->n; a <= t->n; a++, q++)
                *z += share * t->z[q], *g += share * t->g[3 * q + 2];
    }
}

ts_status ts_wall_field_build(ts_wall_field *f, const ts_collider *shape, const ts_kernels *k,
                              const ts_sph_wall *wall, double spacing, double mass, ts_error *err)
{
    memset(f, 0, sizeof *f);
    const double voxel = 0.5 * spacing, reach = k->h + voxel;
    f->voxel = (float)voxel, f->inv_voxel = (float)(1.0 / voxel);
    for (int a = 0; a < 3; a++) {
        double lo = shape->origin[a] - reach, hi = shape->origin[a] + (shape->dims[a] - 1) * shape->voxel_size + reach;
        f->origin[a] = (float)lo;
        f->dims[a] = (int)ceil((hi - lo) / voxel) + 1;
    }
    const size_t nodes = (size_t)f->dims[0] * f->dims[1] * f->dims[2];
    float *share = malloc(nodes * sizeof *share);
    float *phi = malloc(nodes * sizeof *phi);
    f->values = calloc(4 * nodes, sizeof *f->values);
    taps t = {0};
    int ok = share && phi && f->values && make_taps(&t, k, voxel, mass / (spacing * spacing * spacing));
    for (size_t i = 0; ok && i < nodes; i++) {
        size_t a = i % (size_t)f->dims[0], b = i / (size_t)f->dims[0] % (size_t)f->dims[1],
               c = i / ((size_t)f->dims[0] * f->dims[1]);
        ts_collider_hit hit;
        ts_collider_query(shape, 0.0, ts_v3(f->origin[0] + a * voxel, f->origin[1] + b * voxel, f->origin[2] + c * voxel),
                          &hit);
        phi[i] = hit.distance;
        share[i] = inside_share(hit.distance, (float)voxel);
    }
    /* the same sums for a flat wall, by distance: what the field is measured against */
    enum { PLANE_SAMPLES = 256 };
    const double plane_lo = wall->phi_min - voxel, plane_step = (reach - plane_lo) / (PLANE_SAMPLES - 1);
    double plane_z[PLANE_SAMPLES], plane_g[PLANE_SAMPLES];
    for (int j = 0; ok && j < PLANE_SAMPLES; j++)
        plane_sums(&t, voxel, plane_lo + j * plane_step, &plane_z[j], &plane_g[j]);
    const double negligible = 1e-3 * plane_z[0];
    if (ok) {
        const int n = t.n, nx = f->dims[0], ny = f->dims[1], nz = f->dims[2];
        #pragma omp parallel for schedule(dynamic, 1)
        for (int c = 0; c < nz; c++)
            for (int b = 0; b < ny; b++)
                for (int a = 0; a < nx; a++) {
                    size_t i = ((size_t)c * ny + b) * nx + a;
                    if (phi[i] >= reach || phi[i] < plane_lo)
                        continue;   /* only where the liquid can be */
                    double z = 0.0, g[3] = {0, 0, 0};
                    size_t q = 0;
                    for (int dc = -n; dc <= n; dc++)
                        for (int db = -n; db <= n; db++)
                            for (int da = -n; da <= n; da++, q++) {
                                int x = a + da, y = b + db, w = c + dc;
                                if (x < 0 || y < 0 || w < 0 || x >= nx || y >= ny || w >= nz)
                                    continue;
                                float s = share[((size_t)w * ny + y) * nx + x];
                                if (s == 0.0f)
                                    continue;
                                z += s * t.z[q];
                                g[0] += s * t.g[3 * q], g[1] += s * t.g[3 * q + 1], g[2] += s * t.g[3 * q + 2];
                            }
                    double u = (phi[i] - plane_lo) / plane_step;
                    int j = (int)u < PLANE_SAMPLES - 1 ? (int)u : PLANE_SAMPLES - 2;
                    double frac = u - j;
                    double pz = plane_z[j] + frac * (plane_z[j + 1] - plane_z[j]);
                    double pg = plane_g[j] + frac * (plane_g[j + 1] - plane_g[j]);
                    if (pz < negligible) {   /* at the kernel's edge: a flat wall's, along the pull */
                        double len = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
                        f->values[4 * i] = 1.0f;
                        for (int e = 0; e < 3; e++)
                            f->values[4 * i + 1 + e] = len > 0.0 ? (float)(g[e] / len) : 0.0f;
                        continue;
                    }
                    f->values[4 * i] = (float)(z / pz);
                    for (int e = 0; e < 3; e++)
                        f->values[4 * i + 1 + e] = (float)(g[e] / pg);
                }
    }
    free(share), free(phi), free(t.z), free(t.g);
    if (!ok) {
        ts_wall_field_free(f);
        return ts_fail(err, TS_ERR_NOMEM, "out of memory for the wall weight of '%s'", shape->name);
    }
    return TS_OK;
}

int ts_wall_field_eval(const ts_wall_field *f, const ts_sph_wall *wall, ts_vec3 p, double phi, float *z, ts_vec3 *g)
{
    double u[3] = {(p.x - f->origin[0]) * f->inv_voxel, (p.y - f->origin[1]) * f->inv_voxel,
                   (p.z - f->origin[2]) * f->inv_voxel};
    int i[3];
    double t[3];
    for (int a = 0; a < 3; a++) {
        if (!(u[a] >= 0.0) || u[a] >= f->dims[a] - 1)
            return 0;
        i[a] = (int)u[a], t[a] = u[a] - i[a];
    }
    double v[4] = {0, 0, 0, 0};
    for (int corner = 0; corner < 8; corner++) {
        int dx = corner & 1, dy = corner >> 1 & 1, dz = corner >> 2;
        double w = (dx ? t[0] : 1 - t[0]) * (dy ? t[1] : 1 - t[1]) * (dz ? t[2] : 1 - t[2]);
        const float *node = f->values + 4 * (((size_t)(i[2] + dz) * f->dims[1] + i[1] + dy) * f->dims[0] + i[0] + dx);
        for (int e = 0; e < 4; e++)
            v[e] += w * node[e];
    }
    float table_z, table_g;
    ts_sph_wall_eval(wall, phi, &table_z, &table_g);
    *z = (float)(v[0] * table_z);
    *g = ts_v3(v[1] * table_g, v[2] * table_g, v[3] * table_g);
    return 1;
}
