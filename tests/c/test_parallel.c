/* test_parallel.c - the deterministic sum gives the same bits on any number
 * of threads and is a sum (checked against a compensated one). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/parallel.h"
#include "core/rng.h"

static double kahan(const double *a, const double *b, size_t n)
{
    double s = 0.0, c = 0.0;
    for (size_t i = 0; i < n; i++) {
        double y = a[i] * b[i] - c, t = s + y;
        c = (t - s) - y;
        s = t;
    }
    return s;
}

static void test_sum_same_bits_for_any_thread_count(void)
{
    const size_t sizes[] = {0, 1, 4095, 4097, 65536, 300001, 2000003};
    size_t most = 2000003;
    double *a = malloc(most * sizeof *a), *b = malloc(most * sizeof *b);
    float *af = malloc(most * sizeof *af), *bf = malloc(most * sizeof *bf);
    ts_rng r;
    ts_rng_seed(&r, 5, 0);
    for (size_t i = 0; i < most; i++) {
        /* terms of mixed sign and size, so the order of additions shows in the bits */
        a[i] = (ts_rng_uniform(&r) - 0.5) * pow(10.0, 6.0 * ts_rng_uniform(&r));
        b[i] = ts_rng_uniform(&r) - 0.3;
        af[i] = (float)a[i], bf[i] = (float)b[i];
    }
    int saved = omp_get_max_threads();
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        double dot[3], dotf[3], sum[3];
        const int threads[3] = {1, 2, 7};
        for (int t = 0; t < 3; t++) {
            omp_set_num_threads(threads[t]);
            dot[t] = ts_dot_f64(a, b, n);
            dotf[t] = ts_dot_f32(af, bf, n);
            sum[t] = ts_sum_f64(a, n);
        }
        for (int t = 1; t < 3; t++) {
            CHECK(memcmp(&dot[0], &dot[t], sizeof(double)) == 0);
            CHECK(memcmp(&dotf[0], &dotf[t], sizeof(double)) == 0);
            CHECK(memcmp(&sum[0], &sum[t], sizeof(double)) == 0);
        }
        double exact = kahan(a, b, n), scale = 1e-12 * (1.0 + (double)n) * 1e6;
        CHECK_NEAR(dot[0], exact, scale);
        CHECK(n > 0 || (dot[0] == 0.0 && sum[0] == 0.0));
    }
    omp_set_num_threads(saved);
    free(a), free(b), free(af), free(bf);
}

const test_case parallel_tests[] = {
    {"parallel/sum_same_bits_for_any_thread_count", test_sum_same_bits_for_any_thread_count},
    {NULL, NULL},
};
