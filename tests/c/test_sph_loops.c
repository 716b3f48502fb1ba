/* test_sph_loops.c - the SPH inner loops (sph_loops.h): the AVX2 and the
 * portable form give the same bits on a random cloud, for every list length
 * (full groups of eight and every tail), with and without a full neighbour
 * list, in both pressure forms; both build the same Verlet lists, those of a
 * brute-force search; and the portable form agrees with the sums written out
 * plainly in double precision. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/sph_loops.h"

#define CLOUD 700
#define CAP 64

typedef struct cloud {
    float x[CLOUD], y[CLOUD], z[CLOUD], vx[CLOUD], vy[CLOUD], vz[CLOUD];
    float rho[CLOUD], p[CLOUD], P[CLOUD], inv_rho[CLOUD];
    float pos4[4 * CLOUD], vel4[4 * CLOUD];
    ts_sph_fluid f;
} cloud;

static float uniform(unsigned *state, float lo, float hi)
{
    *state = *state * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(*state >> 8) / 16777216.0f;
}

/* Particles in a 5h cube (about 35 within h of each), random velocities,
 * densities and pressures, the packed records formed as water.c forms them. */
static void make_cloud(cloud *c, float h)
{
    unsigned s = 12345;
    for (int i = 0; i < CLOUD; i++) {
        c->x[i] = uniform(&s, 0, 5 * h), c->y[i] = uniform(&s, 0, 5 * h), c->z[i] = uniform(&s, 0, 5 * h);
        c->vx[i] = uniform(&s, -1, 1), c->vy[i] = uniform(&s, -1, 1), c->vz[i] = uniform(&s, -1, 1);
        c->rho[i] = uniform(&s, 950, 1100);
        c->p[i] = uniform(&s, 0, 3e4f);
        c->P[i] = c->p[i] / (c->rho[i] * c->rho[i]);
        c->inv_rho[i] = 1.0f / c->rho[i];
        float pos[4] = {c->x[i], c->y[i], c->z[i], c->rho[i]}, vel[4] = {c->vx[i], c->vy[i], c->vz[i], c->P[i]};
        memcpy(c->pos4 + 4 * i, pos, sizeof pos);
        memcpy(c->vel4 + 4 * i, vel, sizeof vel);
    }
    ts_sph_fluid f = {c->x, c->y, c->z, c->vx, c->vy, c->vz, c->rho, c->p, c->P, c->inv_rho, c->pos4, c->vel4};
    c->f = f;
}

/* Particle i's "Verlet list": every particle within 1.3 h, i itself included. */
static uint32_t verlet_list(const cloud *c, int i, float h, uint32_t *list)
{
    uint32_t n = 0;
    for (int j = 0; j < CLOUD; j++) {
        float dx = c->x[i] - c->x[j], dy = c->y[i] - c->y[j], dz = c->z[i] - c->z[j];
        if (dx * dx + dy * dy + dz * dz < 1.69f * h * h)
            list[n++] = (uint32_t)j;
    }
    return n;
}

/* Both forms (the same one twice on a CPU without AVX2), AVX2 allowed again after. */
static void both_forms(const ts_sph_loops **portable, const ts_sph_loops **fast)
{
    ts_sph_allow_simd(0);
    *portable = ts_sph_loops_select();
    ts_sph_allow_simd(1);
    *fast = ts_sph_loops_select();
}

static void test_forms_give_the_same_bits(void)
{
    static cloud c;
    const float h = 0.04f;
    make_cloud(&c, h);
    const ts_sph_loops *portable, *fast;
    both_forms(&portable, &fast);
    CHECK(strcmp(portable->name, "portable") == 0);
    if (fast == portable)
        fprintf(stderr, "  (no AVX2 on this CPU: the portable form is compared with itself)\n");
    for (int muller = 0; muller <= 1; muller++) {
        ts_sph_pair_consts k;
        ts_sph_pair_consts_init(&k, h, 0.064f, -1e6, 4e5, -2e9, 0.01, muller ? 0.0 : 0.05, 0.07, muller);
        for (int i = 0; i < CLOUD; i += 7) {
            uint32_t list[CLOUD], near_a[CLOUD + TS_SPH_LIST_SLACK], near_b[CLOUD + TS_SPH_LIST_SLACK];
            uint32_t n = verlet_list(&c, i, h, list);
            for (int cap = 4; cap <= CAP; cap += CAP - 4) {  /* a list that overflows, and one that holds all */
                int count_a, count_b;
                float sum_a = portable->density_sum(&c.f, list, n, c.x[i], c.y[i], c.z[i], h * h, near_a, cap, &count_a);
                float sum_b = fast->density_sum(&c.f, list, n, c.x[i], c.y[i], c.z[i], h * h, near_b, cap, &count_b);
                CHECK(memcmp(&sum_a, &sum_b, sizeof sum_a) == 0);
                CHECK(count_a == count_b);
                if (count_a <= cap)
                    CHECK(memcmp(near_a, near_b, (size_t)count_a * sizeof *near_a) == 0);
                if (cap < CAP)
                    CHECK(count_a > cap);   /* the cloud is dense enough to overflow a short list */
            }
            int count;
            portable->density_sum(&c.f, list, n, c.x[i], c.y[i], c.z[i], h * h, near_a, CLOUD, &count);
            for (int m = 0; m <= count; m++) { /* every tail length */
                ts_sph_pair_sums a = {{0, 0, 0}, {0, 0, 0}, 0, {0, 0, 0}, c.rho[i]}, b = a;
                portable->pair_forces(&k, &c.f, (size_t)i, near_a, m, &a);
                fast->pair_forces(&k, &c.f, (size_t)i, near_a, m, &b);
                CHECK(memcmp(&a, &b, sizeof a) == 0);
            }
        }
    }
}

/* Verlet lists from a grid's cell rows: both forms list the same particles,
 * exactly those within reach (brute force), in the same order. */
static void test_forms_list_the_same_neighbours(void)
{
    static cloud c;
    const float h = 0.04f, reach = 1.25f * h;
    make_cloud(&c, h);
    ts_grid g;
    ts_grid_init(&g);
    ts_error err;
    CHECK(ts_grid_build(&g, c.x, c.y, c.z, CLOUD, 0.5f * reach, NULL, &err) == TS_OK);
    static float sx[CLOUD], sy[CLOUD], sz[CLOUD];   /* sorted into cell order: ranges are index ranges */
    for (int k = 0; k < CLOUD; k++)
        sx[k] = c.x[g.sorted[k]], sy[k] = c.y[g.sorted[k]], sz[k] = c.z[g.sorted[k]];
    const ts_sph_loops *portable, *fast;
    both_forms(&portable, &fast);
    for (int i = 0; i < CLOUD; i += 3) {
        ts_neighbor_ranges r;
        ts_grid_ranges_within(&g, sx[i], sy[i], sz[i], reach, &r);
        uint32_t a[CLOUD + TS_SPH_LIST_SLACK], b[CLOUD + TS_SPH_LIST_SLACK];
        uint32_t na = portable->within_ranges(sx, sy, sz, &r, sx[i], sy[i], sz[i], reach * reach, a);
        uint32_t nb = fast->within_ranges(sx, sy, sz, &r, sx[i], sy[i], sz[i], reach * reach, b);
        CHECK(na == nb && memcmp(a, b, na * sizeof *a) == 0);
        CHECK(fast->within_ranges(sx, sy, sz, &r, sx[i], sy[i], sz[i], reach * reach, NULL) == nb);
        uint32_t brute = 0;
        for (int j = 0; j < CLOUD; j++) {
            float dx = sx[i] - sx[j], dy = sy[i] - sy[j], dz = sz[i] - sz[j];
            brute += dx * dx + dy * dy + dz * dz < reach * reach;
        }
        CHECK(na == brute);
    }
    ts_grid_free(&g);
}

/* The portable form against the sums written out in double precision. */
static void test_sums_match_the_plain_formulas(void)
{
    static cloud c;
    const float h = 0.04f;
    make_cloud(&c, h);
    const ts_sph_loops *loops, *fast;
    both_forms(&loops, &fast);
    ts_sph_pair_consts k;
    ts_sph_pair_consts_init(&k, h, 0.064f, -1e6, 4e5, -2e9, 0.01, 0.05, 0.07, 0);
    for (int i = 0; i < CLOUD; i += 11) {
        uint32_t list[CLOUD], near[CLOUD + TS_SPH_LIST_SLACK];
        uint32_t n = verlet_list(&c, i, h, list);
        int count;
        float sum = loops->density_sum(&c.f, list, n, c.x[i], c.y[i], c.z[i], h * h, near, CLOUD, &count);
        double expected = 0.0, a_expected[3] = {0, 0, 0}, c_expected[3] = {0, 0, 0};
        float rho_min = c.rho[i];
        int neighbours = 0;
        ts_sph_side si = {c.rho[i], c.p[i], c.P[i], c.inv_rho[i]};
        for (uint32_t q = 0; q < n; q++) {
            int j = (int)list[q];
            double dx = c.x[i] - c.x[j], dy = c.y[i] - c.y[j], dz = c.z[i] - c.z[j];
            double r2 = dx * dx + dy * dy + dz * dz, d = (double)h * h - r2;
            if (d <= 0.0)
                continue;
            expected += d * d * d;
            if (j == i)
                continue;
            neighbours++;
            ts_sph_side sj = {c.rho[j], c.p[j], c.P[j], c.inv_rho[j]};
            ts_sph_pair_terms t = ts_sph_pair_law(&k, 0, (float)r2,
                                                  (float)((c.vx[i] - c.vx[j]) * dx + (c.vy[i] - c.vy[j]) * dy +
                                                          (c.vz[i] - c.vz[j]) * dz), si, sj);
            a_expected[0] += t.s * dx - t.visc * (c.vx[i] - c.vx[j]);
            a_expected[1] += t.s * dy - t.visc * (c.vy[i] - c.vy[j]);
            a_expected[2] += t.s * dz - t.visc * (c.vz[i] - c.vz[j]);
            double r = sqrt(r2), grad = -1e6 * (h - r) * (h - r) / r;   /* grad W_spiky: particle shifting */
            c_expected[0] += grad * dx, c_expected[1] += grad * dy, c_expected[2] += grad * dz;
            rho_min = c.rho[j] < rho_min ? c.rho[j] : rho_min;
        }
        CHECK(count == neighbours);
        CHECK_NEAR(sum / expected, 1.0, 1e-5);
        ts_sph_pair_sums s = {{0, 0, 0}, {0, 0, 0}, 0, {0, 0, 0}, c.rho[i]};
        loops->pair_forces(&k, &c.f, (size_t)i, near, count, &s);
        double scale = fabs(a_expected[0]) + fabs(a_expected[1]) + fabs(a_expected[2]);
        double c_scale = fabs(c_expected[0]) + fabs(c_expected[1]) + fabs(c_expected[2]);
        for (int a = 0; a < 3; a++) {
            CHECK_NEAR(s.a[a], a_expected[a], 1e-4 * scale);
            CHECK_NEAR(s.c[a], c_expected[a], 1e-4 * c_scale);
        }
        CHECK(s.rho_min == rho_min);
    }
}

const test_case sph_loops_tests[] = {
    {"sph_loops/forms_give_the_same_bits", test_forms_give_the_same_bits},
    {"sph_loops/forms_list_the_same_neighbours", test_forms_list_the_same_neighbours},
    {"sph_loops/sums_match_the_plain_formulas", test_sums_match_the_plain_formulas},
    {0, 0},
};
