/* test_colour_blocks.c - coloured blocks: every particle once, ascending within its block, and no two blocks
 * of a colour within twice the reach of each other - so that no neighbour is within reach of both - for a
 * cloud, a flat sheet, a far outlier; and a pass scattered through them sums in the same order on any number
 * of threads. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/colour_blocks.h"

#define N 3000

static float uniform(uint64_t *state) { return (float)((*state = *state * 6364136223846793005ull + 1442695040888963407ull) >> 40) / (float)(1 << 24); }

/* order a permutation, ascending within each block, colours' blocks in range; blocks of one colour farther
 * apart than 2 reach (every pair of their particles) */
static int blocks_hold(const ts_colour_blocks *b, const float *x, const float *y, const float *z, size_t n,
                       double reach)
{
    int ok = b->n == n && b->block_start[0] == 0 && b->block_start[b->blocks] == n &&
             b->colour_start[0] == 0 && b->colour_start[TS_COLOURS] == b->blocks;
    uint8_t *seen = calloc(n, 1);
    size_t *block_of = malloc(n * sizeof *block_of);
    int *colour_of = malloc(n * sizeof *colour_of);
    for (int c = 0; c < TS_COLOURS && ok; c++)
        for (size_t k = b->colour_start[c]; k < b->colour_start[c + 1]; k++)
            for (size_t p = b->block_start[k]; p < b->block_start[k + 1]; p++) {
                const uint32_t i = b->order[p];
                ok &= i < n && !seen[i] && (p == b->block_start[k] || b->order[p - 1] < i);
                if (i < n)
                    seen[i] = 1, block_of[i] = k, colour_of[i] = c;
            }
    for (size_t i = 0; i < n && ok; i++)
        for (size_t j = i + 1; j < n; j++) {
            if (colour_of[i] != colour_of[j] || block_of[i] == block_of[j])
                continue;
            const double dx = x[i] - x[j], dy = y[i] - y[j], dz = z[i] - z[j];
            ok &= dx * dx + dy * dy + dz * dz > 4.0 * reach * reach;
        }
    free(seen);
    free(block_of);
    free(colour_of);
    return ok;
}

static void test_no_two_blocks_of_a_colour_share_a_neighbour(void)
{
    static float x[N], y[N], z[N];
    uint64_t state = 7;
    const double reach = 0.02;
    ts_colour_blocks b;
    ts_colour_blocks_init(&b);
    ts_error err;
    for (int shape = 0; shape < 3; shape++) {
        for (size_t i = 0; i < N; i++) { /* a 30 cm cloud; a 1 m sheet one grain thick; the cloud and an outlier */
            x[i] = (shape == 1 ? 1.0f : 0.3f) * uniform(&state);
            y[i] = (shape == 1 ? 1.0f : 0.3f) * uniform(&state);
            z[i] = shape == 1 ? 0.5f : 0.3f * uniform(&state);
        }
        if (shape == 2)
            x[N / 2] = 1e4f;
        CHECK(ts_colour_blocks_build(&b, x, y, z, N, reach, &err) == TS_OK);
        CHECK(shape == 2 || b.blocks > 16); /* an outlier far off grows the grid's cells: fewer, larger blocks */
        CHECK(blocks_hold(&b, x, y, z, N, reach));
    }
    ts_colour_blocks_free(&b);
}

typedef struct scatter_pass {
    const ts_colour_blocks *b;
    const float *x, *y, *z;
    double reach, *sum;
} scatter_pass;

/* each particle adds a value of its own to every particle within reach (the neighbours found by brute force) */
static void scatter_block(void *user, size_t first, size_t end)
{
    const scatter_pass *s = user;
    for (size_t p = first; p < end; p++) {
        const uint32_t i = s->b->order[p];
        for (size_t j = 0; j < N; j++) {
            const float dx = s->x[i] - s->x[j], dy = s->y[i] - s->y[j], dz = s->z[i] - s->z[j];
            if (dx * dx + dy * dy + dz * dz < (float)(s->reach * s->reach))
                s->sum[j] += 1.0 / (1.0 + 3.0 * i); /* inexact: the order of the additions shows in the bits */
        }
    }
}

static void test_a_scattered_sum_has_the_same_bits_on_any_threads(void)
{
    static float x[N], y[N], z[N];
    static double sums[3][N];
    uint64_t state = 11;
    for (size_t i = 0; i < N; i++)
        x[i] = 0.3f * uniform(&state), y[i] = 0.3f * uniform(&state), z[i] = 0.3f * uniform(&state);
    ts_colour_blocks b;
    ts_colour_blocks_init(&b);
    ts_error err;
    CHECK(ts_colour_blocks_build(&b, x, y, z, N, 0.03, &err) == TS_OK);
    for (int t = 0; t < 3; t++) {
        omp_set_num_threads(t + 1);
        scatter_pass s = {&b, x, y, z, 0.03, sums[t]};
        ts_colour_blocks_run(&b, scatter_block, &s);
    }
    omp_set_num_threads(2);
    CHECK(memcmp(sums[0], sums[1], sizeof sums[0]) == 0);
    CHECK(memcmp(sums[0], sums[2], sizeof sums[0]) == 0);
    int reached = 1; /* every particle at least by itself */
    for (size_t j = 0; j < N; j++)
        reached &= sums[0][j] >= 1.0 / (1.0 + 3.0 * j);
    CHECK(reached);
    ts_colour_blocks_free(&b);
}

const test_case colour_blocks_tests[] = {
    {"colour_blocks/no_two_blocks_of_a_colour_share_a_neighbour", test_no_two_blocks_of_a_colour_share_a_neighbour},
    {"colour_blocks/a_scattered_sum_has_the_same_bits_on_any_threads",
     test_a_scattered_sum_has_the_same_bits_on_any_threads},
    {NULL, NULL},
};
