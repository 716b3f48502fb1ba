/* test_surface.c - the liquid surface from particles (csrc/core/surface*.c):
 * a still block of liquid gives a flat top where its volume ends, a sheet one
 * particle thick stays a thin sheet, a lone particle stays a drop of its own
 * size, the volume of a ball of liquid is kept, a block of liquid has no
 * bubble inside, and the grid has the same bits for 1 and 2 threads. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "core/surface.h"
#include "vdb/tsubu_vdb.h"

#define R 0.01 /* particle radius; spacing D = 2 R */
#define D (2.0 * R)

static ts_surface_settings settings(int method)
{
    ts_surface_settings s = {method, R, 2.0, 0.5, 4};
    return s;
}

typedef struct cloud {
    float *x, *y, *z;
    size_t n;
} cloud;

/* nx x ny x nz particles on a lattice of spacing D, centres from D/2 (the liquid fills [0, n D]),
 * each moved by up to +/- jitter D on each axis. */
static cloud lattice(int nx, int ny, int nz, double jitter)
{
    cloud c = {NULL, NULL, NULL, (size_t)nx * ny * nz};
    c.x = malloc(c.n * sizeof(float)), c.y = malloc(c.n * sizeof(float)), c.z = malloc(c.n * sizeof(float));
    uint64_t state = 12345;
    size_t p = 0;
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < ny; j++)
            for (int k = 0; k < nz; k++, p++) {
                state = state * 6364136223846793005ull + 1442695040888963407ull;
                const double u = (double)(state >> 11) / 9007199254740992.0;
                state = state * 6364136223846793005ull + 1442695040888963407ull;
                const double v = (double)(state >> 11) / 9007199254740992.0;
                state = state * 6364136223846793005ull + 1442695040888963407ull;
                const double w = (double)(state >> 11) / 9007199254740992.0;
                c.x[p] = (float)((i + 0.5 + jitter * (2 * u - 1)) * D);
                c.y[p] = (float)((j + 0.5 + jitter * (2 * v - 1)) * D);
                c.z[p] = (float)((k + 0.5 + jitter * (2 * w - 1)) * D);
            }
    return c;
}

static void cloud_free(cloud *c) { free(c->x), free(c->y), free(c->z); }

/* Keeps the particles within `radius` of (centre, centre, centre), first; returns how many. */
static size_t keep_ball(cloud *c, double centre, double radius)
{
    size_t m = 0;
    for (size_t p = 0; p < c->n; p++) {
        const double dx = c->x[p] - centre, dy = c->y[p] - centre, dz = c->z[p] - centre;
        if (dx * dx + dy * dy + dz * dz < radius * radius)
            c->x[m] = c->x[p], c->y[m] = c->y[p], c->z[m] = c->z[p], m++;
    }
    return m;
}

/* Where the level set crosses zero going up (or down) the line through (x, y) from z0 to z1. */
static double crossing(const tsvdb_grid *g, double x, double y, double z0, double z1)
{
    const int inside0 = tsvdb_grid_sample(g, x, y, z0) < 0.0f;
    for (int i = 0; i < 50; i++) {
        const double mid = 0.5 * (z0 + z1);
        if ((tsvdb_grid_sample(g, x, y, mid) < 0.0f) == inside0)
            z0 = mid;
        else
            z1 = mid;
    }
    return 0.5 * (z0 + z1);
}

/* Mean and spread of the top over the middle of a 30 x 30 x 8 block. */
static void block_top(int method, double *mean, double *spread)
{
    cloud c = lattice(30, 30, 8, 0.0);
    const ts_surface_settings s = settings(method);
    tsvdb_grid *g = NULL;
    ts_error err;
    CHECK(ts_surface_level_set(&s, c.x, c.y, c.z, c.n, &g, &err) == TS_OK);
    double sum = 0.0, lo = 1e9, hi = -1e9;
    int count = 0;
    for (double x = 10 * D; x <= 20 * D; x += 0.37 * D)
        for (double y = 10 * D; y <= 20 * D; y += 0.41 * D) {
            const double top = crossing(g, x, y, 6.0 * D, 10.0 * D);
            sum += top, count++;
            lo = fmin(lo, top), hi = fmax(hi, top);
        }
    *mean = sum / count, *spread = hi - lo;
    tsvdb_grid_free(g);
    cloud_free(&c);
}

static void test_still_block_is_flat(void)
{
    double mean, spread, sphere_mean, sphere_spread;
    block_top(TS_SURFACE_ANISOTROPIC, &mean, &spread);
    block_top(TS_SURFACE_SPHERES, &sphere_mean, &sphere_spread);
    /* the liquid ends at 8 D: the smoothing of the centres must not pull the top down (surface_anisotropic.c) */
    CHECK_NEAR(mean, 8.0 * D, 0.03 * D);
    CHECK(spread < 0.01 * D);
    CHECK(spread < 0.3 * sphere_spread); /* the spheres' top is bumpy over every particle */
}

static void test_sheet_stays_thin_and_a_drop_keeps_its_size(void)
{
    const ts_surface_settings s = settings(TS_SURFACE_ANISOTROPIC);
    ts_error err;
    tsvdb_grid *g = NULL;
    cloud sheet = lattice(20, 20, 1, 0.0);
    CHECK(ts_surface_level_set(&s, sheet.x, sheet.y, sheet.z, sheet.n, &g, &err) == TS_OK);
    const double bottom = crossing(g, 10 * D, 10 * D, 0.5 * D, -2.0 * D), top = crossing(g, 10 * D, 10 * D, 0.5 * D, 2.0 * D);
    CHECK(top - bottom > 0.9 * D);  /* whole: the liquid it holds is one spacing thick (0.78 at a 4:1 cap) */
    CHECK(top - bottom < 1.1 * D);  /* and thin */
    CHECK(tsvdb_grid_sample(g, 10 * D, 10 * D, 0.5 * D) < 0.0f);
    tsvdb_grid_free(g);
    cloud_free(&sheet);

    float x = 0.1f, y = 0.2f, z = 0.3f;
    CHECK(ts_surface_level_set(&s, &x, &y, &z, 1, &g, &err) == TS_OK);
    const double right = crossing(g, 0.1, 0.2, 0.3, 0.3 + 3 * R) - 0.3;
    CHECK(right > 0.9 * R);
    CHECK(right < 1.4 * R);
    tsvdb_grid_free(g);
}

static double mesh_volume(const float *v, const int32_t *t, size_t nt)
{
    double vol = 0.0;
    for (size_t i = 0; i < nt; i++) {
        const float *a = v + 3 * t[3 * i], *b = v + 3 * t[3 * i + 1], *c = v + 3 * t[3 * i + 2];
        vol += (a[0] * ((double)b[1] * c[2] - (double)b[2] * c[1]) - a[1] * ((double)b[0] * c[2] - (double)b[2] * c[0]) +
                a[2] * ((double)b[0] * c[1] - (double)b[1] * c[0])) / 6.0;
    }
    return vol;
}

static void test_ball_keeps_its_volume_and_bits(void)
{
    /* a ball of radius 8 spacings cut from a jittered lattice */
    cloud c = lattice(20, 20, 20, 0.1);
    const size_t m = keep_ball(&c, 10 * D, 8 * D);
    const ts_surface_settings s = settings(TS_SURFACE_ANISOTROPIC);
    ts_error err;
    tsvdb_grid *one = NULL, *two = NULL;
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    CHECK(ts_surface_level_set(&s, c.x, c.y, c.z, m, &one, &err) == TS_OK);
    omp_set_num_threads(2);
    CHECK(ts_surface_level_set(&s, c.x, c.y, c.z, m, &two, &err) == TS_OK);
    omp_set_num_threads(threads);
    tsvdb_dense a, b;
    CHECK(tsvdb_grid_to_dense(one, &a, &err) == TS_OK);
    CHECK(tsvdb_grid_to_dense(two, &b, &err) == TS_OK);
    const size_t cells = (size_t)a.dims[0] * a.dims[1] * a.dims[2];
    CHECK(memcmp(a.dims, b.dims, sizeof a.dims) == 0);
    CHECK(memcmp(a.values, b.values, cells * sizeof(float)) == 0);
    tsvdb_dense_free(&a), tsvdb_dense_free(&b);
    float *mv;
    int32_t *mt;
    size_t nv, nt;
    CHECK(tsvdb_grid_to_mesh(one, 0.0, 0.0, &mv, &nv, &mt, &nt, &err) == TS_OK);
    /* each particle is D^3 of liquid */
    CHECK_NEAR(mesh_volume(mv, mt, nt) / (m * D * D * D), 1.0, 0.05);
    free(mv), free(mt);
    tsvdb_grid_free(one), tsvdb_grid_free(two);
    cloud_free(&c);
}

/* Outside voxels the outside cannot reach: bubbles, each meshed as a small closed surface inside the liquid
 * (they show through glass and water). A flood fill over the dense grid from its border. */
static size_t bubble_voxels(const tsvdb_grid *g)
{
    tsvdb_dense d;
    ts_error err;
    if (tsvdb_grid_to_dense(g, &d, &err) != TS_OK)
        return SIZE_MAX;   /* fails the caller's check */
    const long nx = d.dims[0], ny = d.dims[1], nz = d.dims[2], cells = nx * ny * nz;
    unsigned char *reached = calloc((size_t)cells, 1);
    long *queue = malloc((size_t)cells * sizeof *queue), head = 0, tail = 0;
    if (!reached || !queue) {
        free(reached), free(queue);
        tsvdb_dense_free(&d);
        return SIZE_MAX;
    }
    for (long i = 0; i < cells; i++) {
        const long x = i % nx, y = i / nx % ny, z = i / (nx * ny);
        const int border = x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1;
        if (border && d.values[i] > 0.0f)
            reached[i] = 1, queue[tail++] = i;
    }
    const long step[6] = {1, -1, nx, -nx, nx * ny, -nx * ny};
    while (head < tail) {
        const long i = queue[head++], x = i % nx, y = i / nx % ny, z = i / (nx * ny);
        const int open[6] = {x < nx - 1, x > 0, y < ny - 1, y > 0, z < nz - 1, z > 0};
        for (int k = 0; k < 6; k++) {
            const long j = i + step[k];
            if (open[k] && !reached[j] && d.values[j] > 0.0f)
                reached[j] = 1, queue[tail++] = j;
        }
    }
    size_t bubbles = 0;
    for (long i = 0; i < cells; i++)
        bubbles += d.values[i] > 0.0f && !reached[i];
    free(reached), free(queue);
    tsvdb_dense_free(&d);
    return bubbles;
}

/* A tank's fill, a block of particles on a lattice: at its corners and edges the kernels of the outer layers
 * flatten and stretch along the faces, and at a 4:1 cap on their axes they left a pocket of phi under 1/2
 * just inside every corner (56 voxels in this block, 250 in a tank after a second of sloshing). */
static void test_a_block_of_liquid_has_no_bubbles(void)
{
    const ts_surface_settings s = settings(TS_SURFACE_ANISOTROPIC);
    const double jitters[2] = {0.0, 0.1};
    for (int k = 0; k < 2; k++) {
        cloud c = lattice(20, 15, 6, jitters[k]);
        tsvdb_grid *g = NULL;
        ts_error err;
        CHECK(ts_surface_level_set(&s, c.x, c.y, c.z, c.n, &g, &err) == TS_OK);
        CHECK(bubble_voxels(g) == 0);
        tsvdb_grid_free(g);
        cloud_free(&c);
    }
}

/* A pool eight spacings deep (32 voxels): its middle layers of leaves lie wholly inside, beyond the band,
 * and are left out of the grid (surface_anisotropic.c); OpenVDB's flood fill must still make the space they
 * leave inside - a wrong sign there meshes a second, inner surface and the volume doubles or vanishes. */
static void test_pool_is_liquid_through(void)
{
    cloud c = lattice(40, 40, 8, 0.1);
    const ts_surface_settings s = settings(TS_SURFACE_ANISOTROPIC);
    ts_error err;
    tsvdb_grid *g = NULL;
    CHECK(ts_surface_level_set(&s, c.x, c.y, c.z, c.n, &g, &err) == TS_OK);
    int outside = 0;
    for (double x = 5 * D; x <= 35 * D; x += 0.37 * D)
        for (double y = 5 * D; y <= 35 * D; y += 0.41 * D)
            for (double z = 0.5 * D; z <= 7.5 * D; z += 0.5 * D)
                outside += tsvdb_grid_sample(g, x, y, z) >= 0.0f;
    CHECK(outside == 0);
    float *mv;
    int32_t *mt;
    size_t nv, nt;
    CHECK(tsvdb_grid_to_mesh(g, 0.0, 0.0, &mv, &nv, &mt, &nt, &err) == TS_OK);
    CHECK_NEAR(mesh_volume(mv, mt, nt) / (c.n * D * D * D), 1.0, 0.05);
    free(mv), free(mt);
    tsvdb_grid_free(g);
    cloud_free(&c);
}

/* The kernels are summed a row of 16 voxels at a time, along the axis each crosses a block of 2 x 2 x 2
 * leaves farthest (half a row where the box stays in one half), its quadratic form stepped by differences
 * along each row's neighbours (surface_anisotropic.c); the plain form sums every voxel of every kernel's box
 * from the formula. A ball (kernels tilted every way), a sheet tilted about two axes (flat kernels, no axis of theirs
 * along the grid) and a few drops must give the same field. */
static void test_rows_sum_what_the_formula_says(void)
{
    cloud c = lattice(16, 16, 16, 0.1);
    size_t m = keep_ball(&c, 8 * D, 6 * D);
    cloud sheet = lattice(14, 14, 1, 0.05);
    const double ca = cos(0.5), sa = sin(0.5), cb = cos(0.3), sb = sin(0.3);
    for (size_t p = 0; p < sheet.n && m < c.n; p++, m++) {
        const double u = sheet.x[p], v = sheet.y[p], w = sheet.z[p];
        const double y1 = ca * v - sa * w, z1 = sa * v + ca * w;      /* about x */
        c.x[m] = (float)(cb * u + sb * z1 + 20 * D), c.y[m] = (float)y1, c.z[m] = (float)(-sb * u + cb * z1);
    }
    for (int i = 0; i < 3 && m < c.n; i++, m++)
        c.x[m] = (float)((-6 - 3 * i) * D), c.y[m] = (float)(0.37 * i * D), c.z[m] = (float)(0.71 * i * D);
    const ts_surface_settings s = settings(TS_SURFACE_ANISOTROPIC);
    ts_error err;
    tsvdb_grid *rows = NULL, *plain = NULL;
    CHECK(ts_surface_anisotropic_form(&s, c.x, c.y, c.z, m, 0, &rows, &err) == TS_OK);
    CHECK(ts_surface_anisotropic_form(&s, c.x, c.y, c.z, m, 1, &plain, &err) == TS_OK);
    tsvdb_dense a, b;
    CHECK(tsvdb_grid_to_dense(rows, &a, &err) == TS_OK);
    CHECK(tsvdb_grid_to_dense(plain, &b, &err) == TS_OK);
    CHECK(memcmp(a.dims, b.dims, sizeof a.dims) == 0);
    const size_t cells = (size_t)a.dims[0] * a.dims[1] * a.dims[2];
    double worst = 0.0;
    size_t inside = 0;
    for (size_t i = 0; i < cells; i++) {
        worst = fmax(worst, fabs((double)a.values[i] - b.values[i]));
        inside += a.values[i] < 0.0f;
    }
    CHECK(inside > 1000);
    CHECK(worst < 1e-3 * s.voxel_ratio * R); /* a thousandth of a voxel: rounding, never a missed row */
    tsvdb_dense_free(&a), tsvdb_dense_free(&b);
    tsvdb_grid_free(rows), tsvdb_grid_free(plain);
    cloud_free(&sheet);
    cloud_free(&c);
}

const test_case surface_tests[] = {
    {"surface/rows_sum_what_the_formula_says", test_rows_sum_what_the_formula_says},
    {"surface/still_block_is_flat", test_still_block_is_flat},
    {"surface/sheet_stays_thin_and_a_drop_keeps_its_size", test_sheet_stays_thin_and_a_drop_keeps_its_size},
    {"surface/ball_keeps_its_volume_and_bits", test_ball_keeps_its_volume_and_bits},
    {"surface/pool_is_liquid_through", test_pool_is_liquid_through},
    {"surface/a_block_of_liquid_has_no_bubbles", test_a_block_of_liquid_has_no_bubbles},
    {0, 0},
};
