/* fuzz_png.c - libFuzzer target for the PNG reader: any byte string must decode
 * or be refused with a status, never crash, read out of bounds or leak (ASan,
 * UBSan). Half of the inputs get every chunk's CRC repaired first, so that the
 * fuzzer reaches the header checks, the zlib stream, the filters and Adam7. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/png.h"

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

static void repair_crcs(uint8_t *buf, size_t size)
{
    for (size_t pos = 8; size - pos >= 12 && pos < size;) {
        uint32_t len = be32(buf + pos);
        if (len > size - pos - 12)
            return;
        uint32_t crc = (uint32_t)crc32(0, buf + pos + 4, len + 4);
        for (int i = 0; i < 4; i++)
            buf[pos + 8 + len + i] = (uint8_t)(crc >> (24 - 8 * i));
        pos += 12 + (size_t)len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    if (size > 0 && (data[size - 1] & 1))
        repair_crcs(copy, size);
    float *pixels;
    uint32_t width, height;
    ts_error err;
    if (ts_png_decode(copy, size, "fuzz", &pixels, &width, &height, &err) == TS_OK) {
        for (size_t i = 0; i < (size_t)width * height; i++)
            if (!(pixels[i] >= 0.0f && pixels[i] <= 1.0f))
                abort();
        free(pixels);
    }
    free(copy);
    return 0;
}
