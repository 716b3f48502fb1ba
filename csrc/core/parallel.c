/* parallel.c - deterministic parallel sums (see parallel.h). */
#include "parallel.h"

double ts_sum_blocks(size_t n, ts_block_sum_fn block_sum, const void *user)
{
    if (n == 0)
        return 0.0;
    size_t size = (n + TS_SUM_MAX_BLOCKS - 1) / TS_SUM_MAX_BLOCKS;
    if (size < TS_SUM_BLOCK_MIN)
        size = TS_SUM_BLOCK_MIN;
    long blocks = (long)((n + size - 1) / size);
    double partial[TS_SUM_MAX_BLOCKS];
    #pragma omp parallel for schedule(static) if (n >= TS_PARALLEL_MIN)
    for (long b = 0; b < blocks; b++) {
        size_t lo = (size_t)b * size, hi = lo + size < n ? lo + size : n;
        partial[b] = block_sum(user, lo, hi);
    }
    double sum = 0.0;
    for (long b = 0; b < blocks; b++)
        sum += partial[b];
    return sum;
}

typedef struct arrays {
    const void *a, *b;
} arrays;

static double block_sum_f64(const void *user, size_t lo, size_t hi)
{
    const double *a = ((const arrays *)user)->a;
    double s = 0.0;
    for (size_t i = lo; i < hi; i++)
        s += a[i];
    return s;
}

static double block_dot_f64(const void *user, size_t lo, size_t hi)
{
    const double *a = ((const arrays *)user)->a, *b = ((const arrays *)user)->b;
    double s = 0.0;
    for (size_t i = lo; i < hi; i++)
        s += a[i] * b[i];
    return s;
}

static double block_dot_f32(const void *user, size_t lo, size_t hi)
{
    const float *a = ((const arrays *)user)->a, *b = ((const arrays *)user)->b;
    double s = 0.0;
    for (size_t i = lo; i < hi; i++)
        s += (double)a[i] * b[i];
    return s;
}

static double block_sum_f32(const void *user, size_t lo, size_t hi)
{
    const float *a = ((const arrays *)user)->a;
    double s = 0.0;
    for (size_t i = lo; i < hi; i++)
        s += a[i];
    return s;
}

double ts_sum_f32(const float *a, size_t n)
{
    arrays u = {a, NULL};
    return ts_sum_blocks(n, block_sum_f32, &u);
}

double ts_sum_f64(const double *a, size_t n)
{
    arrays u = {a, NULL};
    return ts_sum_blocks(n, block_sum_f64, &u);
}

double ts_dot_f64(const double *a, const double *b, size_t n)
{
    arrays u = {a, b};
    return ts_sum_blocks(n, block_dot_f64, &u);
}

double ts_dot_f32(const float *a, const float *b, size_t n)
{
    arrays u = {a, b};
    return ts_sum_blocks(n, block_dot_f32, &u);
}
