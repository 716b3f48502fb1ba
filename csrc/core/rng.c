/* rng.c - PCG32 (O'Neill 2014, XSH-RR variant) and SplitMix64 hashing. */
#include "rng.h"

#include <math.h>

void ts_rng_seed(ts_rng *rng, uint64_t seed, uint64_t stream)
{
    rng->state = 0u;
    rng->inc = (stream << 1u) | 1u;
    ts_rng_u32(rng);
    rng->state += seed;
    ts_rng_u32(rng);
}

uint32_t ts_rng_u32(ts_rng *rng)
{
    uint64_t old = rng->state;
    rng->state = old * 6364136223846793005ULL + rng->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

double ts_rng_uniform(ts_rng *rng)
{
    uint64_t hi = ts_rng_u32(rng), lo = ts_rng_u32(rng);
    return (double)(((hi << 32) | lo) >> 11) * 0x1.0p-53;
}

double ts_rng_normal(ts_rng *rng)
{
    double u1 = ts_rng_uniform(rng), u2 = ts_rng_uniform(rng);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

uint64_t ts_rng_hash64(uint64_t seed, uint64_t a, uint64_t b)
{
    return splitmix64(splitmix64(splitmix64(seed) ^ a) ^ b);
}

double ts_rng_hash_uniform(uint64_t seed, uint64_t a, uint64_t b)
{
    return (double)(ts_rng_hash64(seed, a, b) >> 11) * 0x1.0p-53;
}
