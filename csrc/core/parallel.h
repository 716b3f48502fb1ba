/* parallel.h - how the core spreads loops over threads and stays deterministic.
 *
 * Every solver result must be the same bits whatever the number of threads.
 * Per-particle loops in gather form are (each iteration writes only its own
 * particle); max and or reductions are (the order does not matter). Sums are
 * not: OpenMP's reduction(+) adds the threads' partial sums in an order that
 * depends on how many there are. ts_sum_blocks cuts [0, n) into blocks whose
 * bounds depend on n alone, sums each block in index order (any thread may
 * take any block), then adds the block sums in block order - so the CG dot
 * products of the elastoplastic solver, energy sums and the like come out the
 * same on 1 or 64 threads. No allocation: the block sums live on the stack.
 */
#ifndef TSUBU_PARALLEL_H
#define TSUBU_PARALLEL_H

#include <stddef.h>

/* Below this many particles a solver's light loops run on one thread. A
 * parallel region right after another costs 1-2 microseconds on 2 virtual
 * cores (the second thread is still spinning; tens of microseconds once it
 * has gone to sleep), and even the lightest loop, one multiply-add per
 * element, gained from two threads from about 8k elements on (measured:
 * 3.0 against 3.4 us at 8k, 7.7 against 12.7 at 32k). 64k left a 40k-DE
 * sand bed's per-DE loops on one thread. */
#define TS_PARALLEL_MIN 8192

/* At most this many blocks; blocks hold at least TS_SUM_BLOCK_MIN terms. */
#define TS_SUM_MAX_BLOCKS 256
#define TS_SUM_BLOCK_MIN 4096

/* The sum over [lo, hi) of one block, in index order. */
typedef double (*ts_block_sum_fn)(const void *user, size_t lo, size_t hi);

/* sum_{i<n} term(i), the same bits for any thread count. */
double ts_sum_blocks(size_t n, ts_block_sum_fn block_sum, const void *user);

/* The common cases over arrays, through ts_sum_blocks. */
double ts_sum_f64(const double *a, size_t n);
double ts_dot_f64(const double *a, const double *b, size_t n);
double ts_sum_f32(const float *a, size_t n);
/* float arrays, each product and the sum taken in double */
double ts_dot_f32(const float *a, const float *b, size_t n);

#endif
