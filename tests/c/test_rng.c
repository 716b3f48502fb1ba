/* test_rng.c - the random streams are reproducible and uniform. */
#include <math.h>

#include "check.h"
#include "core/rng.h"

static void test_rng_reproducible_and_uniform(void)
{
    ts_rng a, b, c;
    ts_rng_seed(&a, 42, 7);
    ts_rng_seed(&b, 42, 7);
    ts_rng_seed(&c, 43, 7);
    int same_c = 0;
    for (int i = 0; i < 1000; i++) {
        uint32_t x = ts_rng_u32(&a);
        CHECK(x == ts_rng_u32(&b));
        same_c += x == ts_rng_u32(&c);
    }
    CHECK(same_c < 5);
    /* mean and variance of U(0,1) and N(0,1) */
    double sum = 0, sum2 = 0, nsum = 0, nsum2 = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double u = ts_rng_uniform(&a), g = ts_rng_normal(&a);
        CHECK(u >= 0.0 && u < 1.0);
        sum += u; sum2 += u * u; nsum += g; nsum2 += g * g;
    }
    CHECK_NEAR(sum / n, 0.5, 0.005);
    CHECK_NEAR(sum2 / n - (sum / n) * (sum / n), 1.0 / 12.0, 0.002);
    CHECK_NEAR(nsum / n, 0.0, 0.01);
    CHECK_NEAR(nsum2 / n, 1.0, 0.02);
    /* the hash form depends on every input and is uniform */
    CHECK(ts_rng_hash64(1, 2, 3) == ts_rng_hash64(1, 2, 3));
    CHECK(ts_rng_hash64(1, 2, 3) != ts_rng_hash64(1, 3, 2));
    CHECK(ts_rng_hash64(1, 2, 3) != ts_rng_hash64(2, 2, 3));
    double hs = 0;
    for (int i = 0; i < n; i++)
        hs += ts_rng_hash_uniform(9, (uint64_t)i, 0);
    CHECK_NEAR(hs / n, 0.5, 0.005);
}

const test_case rng_tests[] = {
    {"rng/reproducible_uniform", test_rng_reproducible_and_uniform},
    {0, 0},
};
