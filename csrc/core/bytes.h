/* bytes.h - little-endian fields and CRC32, for the file formats (cache.c, checkpoint.c). */
#ifndef TSUBU_BYTES_H
#define TSUBU_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

static inline void ts_put_u32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline void ts_put_u64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static inline uint32_t ts_get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint64_t ts_get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline void ts_put_f64(uint8_t *p, double d) { uint64_t v; memcpy(&v, &d, 8); ts_put_u64(p, v); }
static inline double ts_get_f64(const uint8_t *p) { uint64_t v = ts_get_u64(p); double d; memcpy(&d, &v, 8); return d; }

/* CRC32 continuing from `crc` (0 to start); zlib takes uInt lengths. */
static inline uint32_t ts_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    uLong c = crc;
    while (n > 0) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        c = crc32(c, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return (uint32_t)c;
}

#endif
