/* fuzz_cache.c - libFuzzer target for the particle cache and checkpoint readers: any byte
 * string must decode cleanly or be refused with a status, never crash,
 * read out of bounds or leak (run under ASan and UBSan by `make test-c`).
 *
 * Random bytes almost never carry valid CRC32s, so half of the inputs get
 * their header and data checksums repaired first (using the layout in
 * docs/cache-format.md): that lets the fuzzer reach the attribute table,
 * the decompression and the column checks behind them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/cache.h"
#include "core/checkpoint.h"

enum { HEADER_SIZE = 60, ENTRY_SIZE = 64 };

static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static void put32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }

/* Rewrite both CRCs so they match the (fuzzed) contents. */
static void repair_checksums(uint8_t *buf, size_t size)
{
    if (size < HEADER_SIZE + 8)
        return;
    uint32_t n = le32(buf + 12);
    if (n > TS_CACHE_MAX_ATTRIBUTES)
        return;
    size_t table_end = HEADER_SIZE + (size_t)n * ENTRY_SIZE;
    if (size < table_end + 8)
        return;
    size_t data_size = size - table_end - 8;
    memset(buf + 40, 0, 8);
    put32(buf + 40, (uint32_t)data_size);
    put32(buf + table_end, (uint32_t)crc32(0, buf, (uInt)table_end));
    put32(buf + table_end + 4 + data_size, (uint32_t)crc32(0, buf + table_end + 4, (uInt)data_size));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    if (size > 0 && (data[size - 1] & 1))
        repair_checksums(copy, size);
    ts_frame f;
    ts_error err;
    if (ts_frame_decode(copy, size, "fuzz", &f, &err) == TS_OK) {
        for (int i = 0; i < f.attribute_count; i++)
            if (f.count > 0 && !f.attributes[i].data)
                abort();
        ts_frame_free(&f);
    }
    /* the same bytes as a checkpoint container (its sections are particle frames) */
    static ts_checkpoint cp;
    if (ts_checkpoint_decode(copy, size, "fuzz", &cp, &err) == TS_OK)
        ts_checkpoint_free(&cp);
    free(copy);
    return 0;
}
