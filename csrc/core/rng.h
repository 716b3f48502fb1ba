/* rng.h - deterministic random numbers.
 *
 * Two forms: a sequential PCG32 stream (placement, sampling) and a
 * counter-based hash (ts_rng_hash_*) that gives the random number of
 * "particle i, event k" directly, so parallel loops draw the same numbers
 * whatever the thread count or order.
 */
#ifndef TSUBU_RNG_H
#define TSUBU_RNG_H

#include <stdint.h>

typedef struct ts_rng { uint64_t state, inc; } ts_rng;

void ts_rng_seed(ts_rng *rng, uint64_t seed, uint64_t stream);
uint32_t ts_rng_u32(ts_rng *rng);
/* Uniform in [0, 1). */
double ts_rng_uniform(ts_rng *rng);
/* Standard normal (Box-Muller). */
double ts_rng_normal(ts_rng *rng);

/* A well-mixed 64-bit hash of (seed, a, b): SplitMix64 finaliser chain. */
uint64_t ts_rng_hash64(uint64_t seed, uint64_t a, uint64_t b);
/* Uniform in [0, 1) from the hash of (seed, a, b). */
double ts_rng_hash_uniform(uint64_t seed, uint64_t a, uint64_t b);

#endif
