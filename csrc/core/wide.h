/* wide.h - arithmetic written once over short vectors (GCC's vector
 * extensions), for every instruction set.
 *
 * A function marked TS_WIDE_CLONES is compiled twice, for AVX2 and for the
 * baseline, and the CPU picks one when the library loads: the vectors below
 * become one AVX2 register or two SSE2 ones. Lane by lane every operation is
 * the scalar one (no fused multiply-add: the core builds with
 * -ffp-contract=off, and the clones do not enable FMA), so both clones give
 * the same bits, and the same bits as a scalar loop doing the same sums.
 * Helpers called from a clone are always inlined: a call would leave them
 * in the baseline's code.
 */
#ifndef TSUBU_WIDE_H
#define TSUBU_WIDE_H

#include <stdint.h>
#include <string.h>

/* The helpers pass vectors by value; always inlined, no call ever crosses the ABI GCC warns of. */
#pragma GCC diagnostic ignored "-Wpsabi"

#define TS_WIDE_CLONES __attribute__((target_clones("avx2", "default")))
#define TS_WIDE_INLINE static inline __attribute__((always_inline))

typedef double ts_d4 __attribute__((vector_size(32)));
typedef float ts_f4 __attribute__((vector_size(16)));
typedef float ts_f8 __attribute__((vector_size(32)));
typedef int32_t ts_i8 __attribute__((vector_size(32)));     /* a comparison's lanes of ts_f8 */
typedef int64_t ts_l4 __attribute__((vector_size(32)));     /* a comparison's lanes of ts_d4 */

/* Lane l of a comparison's result (all bits set or none) as bit l (by pointer: GCC notes an ABI change for a
 * vector passed by value). */
TS_WIDE_INLINE unsigned ts_i8_bits(const ts_i8 *m)
{
    const ts_i8 bit = *m & (ts_i8){1, 2, 4, 8, 16, 32, 64, 128};
    unsigned bits = 0;
    for (int l = 0; l < 8; l++)
        bits |= (unsigned)bit[l];
    return bits;
}

/* Four doubles from p (any alignment). */
TS_WIDE_INLINE ts_d4 ts_d4_load(const double *p)
{
    ts_d4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* p[0..3] += v (any alignment). A macro: GCC notes an ABI change for every function that takes a ts_d4 by value
 * and is compiled (the pragma above does not reach that note). */
#define TS_D4_ADD(p, v)                                                                                              \
    do {                                                                                                             \
        double *ts_at_ = (p);                                                                                        \
        const ts_d4 ts_sum_ = ts_d4_load(ts_at_) + (v);                                                              \
        memcpy(ts_at_, &ts_sum_, sizeof ts_sum_);                                                                    \
    } while (0)

/* The lanes of a where mask is set (a comparison's result), else of b. */
#define TS_D4_SELECT(mask, a, b) ((ts_d4)(((ts_l4)(a) & (mask)) | ((ts_l4)(b) & ~(mask))))

/* |v|, lane by lane (the sign bit cleared). */
#define TS_D4_ABS(v) ((ts_d4)((ts_l4)(v) & (ts_l4){INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX}))

/* The square roots of *v, lane by lane: correctly rounded, as sqrt (by pointer: see TS_D4_ADD). */
TS_WIDE_INLINE ts_d4 ts_d4_sqrt(const ts_d4 *v)
{
    ts_d4 r;
    for (int l = 0; l < 4; l++)
        r[l] = __builtin_sqrt((*v)[l]);
    return r;
}

/* Four floats from p (any alignment), widened to doubles. */
TS_WIDE_INLINE ts_d4 ts_d4_from_floats(const float *p)
{
    ts_f4 f;
    memcpy(&f, p, sizeof f);
    return __builtin_convertvector(f, ts_d4);
}

#endif
