/* test_grid.c - the neighbour grid finds exactly the brute-force pairs,
 * on random, clustered and degenerate inputs, and is thread-independent. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/grid.h"
#include "core/kernels.h"
#include "core/rng.h"

typedef struct cloud { size_t n; float *x, *y, *z; } cloud;

static cloud cloud_alloc(size_t n)
{
    cloud c = {n, malloc((n + 1) * sizeof(float)), malloc((n + 1) * sizeof(float)), malloc((n + 1) * sizeof(float))};
    return c;
}

static void cloud_free(cloud *c) { free(c->x); free(c->y); free(c->z); }

/* Particles within sqrt(h2) of particle i among the ranges; *candidates
 * grows by how many the ranges hold. */
static size_t count_in_ranges(const ts_grid *g, const cloud *c, size_t i, float h2, const ts_neighbor_ranges *r,
                              size_t *candidates)
{
    size_t found = 0;
    for (int q = 0; q < r->n; q++)
        for (uint32_t k = r->begin[q]; k < r->end[q]; k++) {
            uint32_t j = g->sorted[k];
            float dx = c->x[i] - c->x[j], dy = c->y[i] - c->y[j], dz = c->z[i] - c->z[j];
            found += dx * dx + dy * dy + dz * dz < h2;
        }
    for (int q = 0; q < r->n; q++)
        *candidates += r->end[q] - r->begin[q];
    return found;
}

static int build_checked(ts_grid *g, const cloud *c, float cell, const float *bounds)
{
    ts_grid_init(g);
    ts_error err;
    int ok = ts_grid_build(g, c->x, c->y, c->z, c->n, cell, bounds, &err) == TS_OK;
    CHECK(ok && g->cell_size >= cell);
    /* every particle appears once in sorted order */
    char *seen = calloc(c->n + 1, 1);
    for (size_t k = 0; ok && k < c->n; k++) {
        CHECK(g->sorted[k] < c->n && !seen[g->sorted[k]]);
        seen[g->sorted[k]] = 1;
    }
    free(seen);
    return ok;
}

/* Count, per particle, neighbours within h by brute force, through the 27
 * cells of a grid of cells h (ts_grid_neighbor_ranges) and through the cut
 * rows of a grid of cells h/2 (ts_grid_ranges_within): all three must agree.
 * Returns candidates of the second per candidate of the first. */
static double check_against_brute_force(const cloud *c, float h, const float *bounds)
{
    ts_grid g, half;
    if (!build_checked(&g, c, h, bounds) || !build_checked(&half, c, 0.5f * h, bounds))
        return 0.0;
    float h2 = h * h;
    size_t mismatches = 0, candidates = 0, half_candidates = 0;
    for (size_t i = 0; i < c->n; i++) {
        size_t brute = 0;
        for (size_t j = 0; j < c->n; j++) {
            float dx = c->x[i] - c->x[j], dy = c->y[i] - c->y[j], dz = c->z[i] - c->z[j];
            brute += dx * dx + dy * dy + dz * dz < h2;
        }
        ts_neighbor_ranges r;
        ts_grid_neighbor_ranges(&g, c->x[i], c->y[i], c->z[i], &r);
        mismatches += brute != count_in_ranges(&g, c, i, h2, &r, &candidates);
        ts_grid_ranges_within(&half, c->x[i], c->y[i], c->z[i], h, &r);
        mismatches += brute != count_in_ranges(&half, c, i, h2, &r, &half_candidates);
    }
    CHECK(mismatches == 0);
    ts_grid_free(&g);
    ts_grid_free(&half);
    return (double)half_candidates / (double)(candidates ? candidates : 1);
}

static void test_grid_random(void)
{
    ts_rng rng;
    ts_rng_seed(&rng, 11, 0);
    cloud c = cloud_alloc(3000);
    for (size_t i = 0; i < c.n; i++) {
        c.x[i] = (float)ts_rng_uniform(&rng);
        c.y[i] = (float)ts_rng_uniform(&rng) * 2.0f - 1.0f;
        c.z[i] = (float)ts_rng_uniform(&rng) * 0.5f;
    }
    check_against_brute_force(&c, 0.07f, NULL);
    const float bounds[6] = {0, -1, 0, 1, 1, 0.5f};
    CHECK(check_against_brute_force(&c, 0.07f, bounds) < 0.7); /* the cut rows hold fewer candidates */
    const float small_bounds[6] = {0.4f, 0.4f, 0.1f, 0.6f, 0.6f, 0.2f}; /* most particles are strays */
    check_against_brute_force(&c, 0.07f, small_bounds);
    cloud_free(&c);
}

static void test_grid_clustered(void)
{
    ts_rng rng;
    ts_rng_seed(&rng, 12, 0);
    cloud c = cloud_alloc(3000);
    for (size_t i = 0; i < c.n; i++) { /* three tight gaussian blobs */
        float cx = (float)(i % 3) * 2.0f;
        c.x[i] = cx + 0.02f * (float)ts_rng_normal(&rng);
        c.y[i] = 0.02f * (float)ts_rng_normal(&rng);
        c.z[i] = 0.02f * (float)ts_rng_normal(&rng);
    }
    check_against_brute_force(&c, 0.01f, NULL);
    cloud_free(&c);
}

static void test_grid_degenerate(void)
{
    cloud c = cloud_alloc(500);
    for (size_t i = 0; i < c.n; i++)
        c.x[i] = c.y[i] = c.z[i] = 1.5f; /* all in one point */
    check_against_brute_force(&c, 0.1f, NULL);
    /* far outliers: must neither exhaust memory nor miss pairs */
    ts_rng rng;
    ts_rng_seed(&rng, 13, 0);
    for (size_t i = 0; i < c.n; i++) {
        c.x[i] = (float)ts_rng_uniform(&rng);
        c.y[i] = (float)ts_rng_uniform(&rng);
        c.z[i] = (float)ts_rng_uniform(&rng);
    }
    c.x[0] = 1e30f;
    c.y[1] = -1e25f;
    c.z[2] = 3e7f;
    c.x[3] = 3e7f + 0.01f; /* a pair far away, within h of each other */
    c.y[3] = c.y[2]; c.z[3] = c.z[2]; c.x[2] = 3e7f;
    check_against_brute_force(&c, 0.1f, NULL);
    /* empty input */
    cloud e = cloud_alloc(0);
    ts_grid g;
    ts_grid_init(&g);
    ts_error err;
    CHECK(ts_grid_build(&g, e.x, e.y, e.z, 0, 0.1f, NULL, &err) == TS_OK);
    ts_neighbor_ranges r;
    ts_grid_neighbor_ranges(&g, 0, 0, 0, &r);
    CHECK(r.n == 0);
    /* invalid radius is an error, not a crash */
    CHECK(ts_grid_build(&g, e.x, e.y, e.z, 0, 0.0f, NULL, &err) == TS_ERR_INVALID);
    CHECK(ts_grid_build(&g, e.x, e.y, e.z, 0, NAN, NULL, &err) == TS_ERR_INVALID);
    ts_grid_free(&g);
    cloud_free(&e);
    cloud_free(&c);
}

static void test_grid_permute(void)
{
    ts_rng rng;
    ts_rng_seed(&rng, 14, 0);
    cloud c = cloud_alloc(1000);
    for (size_t i = 0; i < c.n; i++) {
        c.x[i] = (float)ts_rng_uniform(&rng);
        c.y[i] = (float)ts_rng_uniform(&rng);
        c.z[i] = (float)ts_rng_uniform(&rng);
    }
    ts_grid g;
    ts_grid_init(&g);
    ts_error err;
    CHECK(ts_grid_build(&g, c.x, c.y, c.z, c.n, 0.1f, NULL, &err) == TS_OK);
    cloud s = cloud_alloc(c.n);
    ts_grid_permute_f32(&g, c.x, s.x);
    ts_grid_permute_f32(&g, c.y, s.y);
    ts_grid_permute_f32(&g, c.z, s.z);
    /* after permuting, a rebuild finds the particles already in cell order */
    ts_grid g2;
    ts_grid_init(&g2);
    CHECK(ts_grid_build(&g2, s.x, s.y, s.z, s.n, 0.1f, NULL, &err) == TS_OK);
    int identity = 1;
    for (size_t k = 0; k < s.n; k++)
        identity &= g2.sorted[k] == k;
    CHECK(identity);
    ts_grid_free(&g);
    ts_grid_free(&g2);
    cloud_free(&s);
    cloud_free(&c);
}

/* SPH density by gather: each particle sums its own neighbours. */
static void density_sum(const ts_grid *g, const cloud *c, float h, float *rho)
{
    ts_kernels k;
    ts_kernels_init(&k, h);
    #pragma omp parallel for schedule(dynamic, 64)
    for (size_t i = 0; i < c->n; i++) {
        ts_neighbor_ranges r;
        ts_grid_neighbor_ranges(g, c->x[i], c->y[i], c->z[i], &r);
        double sum = 0;
        for (int q = 0; q < r.n; q++)
            for (uint32_t j = r.begin[q]; j < r.end[q]; j++) {
                float dx = c->x[i] - c->x[j], dy = c->y[i] - c->y[j], dz = c->z[i] - c->z[j];
                sum += ts_w_poly6(&k, dx * dx + dy * dy + dz * dz);
            }
        rho[i] = (float)sum;
    }
}

static void test_grid_thread_independent(void)
{
    ts_rng rng;
    ts_rng_seed(&rng, 15, 0);
    cloud c = cloud_alloc(20000), s = cloud_alloc(20000);
    for (size_t i = 0; i < c.n; i++) {
        c.x[i] = (float)ts_rng_uniform(&rng);
        c.y[i] = (float)ts_rng_uniform(&rng);
        c.z[i] = (float)ts_rng_uniform(&rng) * 0.3f;
    }
    float *rho[2];
    uint32_t *order[2];
    int threads[2] = {1, 2};
    for (int t = 0; t < 2; t++) {
        omp_set_num_threads(threads[t]);
        ts_grid g;
        ts_grid_init(&g);
        ts_error err;
        CHECK(ts_grid_build(&g, c.x, c.y, c.z, c.n, 0.05f, NULL, &err) == TS_OK);
        ts_grid_permute_f32(&g, c.x, s.x);
        ts_grid_permute_f32(&g, c.y, s.y);
        ts_grid_permute_f32(&g, c.z, s.z);
        ts_grid_build(&g, s.x, s.y, s.z, s.n, 0.05f, NULL, &err);
        rho[t] = malloc(c.n * sizeof(float));
        order[t] = malloc(c.n * sizeof(uint32_t));
        memcpy(order[t], g.sorted, c.n * sizeof(uint32_t));
        density_sum(&g, &s, 0.05f, rho[t]);
        ts_grid_free(&g);
    }
    omp_set_num_threads(2);
    CHECK(memcmp(rho[0], rho[1], c.n * sizeof(float)) == 0);
    CHECK(memcmp(order[0], order[1], c.n * sizeof(uint32_t)) == 0);
    for (int t = 0; t < 2; t++) {
        free(rho[t]);
        free(order[t]);
    }
    cloud_free(&c);
    cloud_free(&s);
}

const test_case grid_tests[] = {
    {"grid/random_vs_brute_force", test_grid_random},
    {"grid/clustered_vs_brute_force", test_grid_clustered},
    {"grid/degenerate_outliers_empty", test_grid_degenerate},
    {"grid/permute_into_cell_order", test_grid_permute},
    {"grid/one_vs_two_threads_identical", test_grid_thread_independent},
    {0, 0},
};
