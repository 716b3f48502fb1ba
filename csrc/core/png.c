/* png.c - a PNG reader for grey maps (see png.h). Follows the PNG
 * specification (ISO/IEC 15948): chunks with their CRCs, one zlib stream over
 * the IDAT chunks, per-row filters, Adam7 passes. */
#include "png.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

typedef struct png_header {
    uint32_t width, height;
    int depth, colour, interlaced, channels;
} png_header;

/* Adam7: where each pass starts and how far apart its pixels are (the
 * non-interlaced image is the one pass 0, 0, 1, 1). */
static const int ADAM7[7][4] = {{0, 0, 8, 8}, {0, 4, 8, 8}, {4, 0, 8, 4}, {0, 2, 4, 4},
                                {2, 0, 4, 2}, {0, 1, 2, 2}, {1, 0, 2, 1}};
static const int WHOLE[1][4] = {{0, 0, 1, 1}};

static uint32_t pass_size(uint32_t n, int start, int step)
{
    return n > (uint32_t)start ? (n - (uint32_t)start + (uint32_t)step - 1) / (uint32_t)step : 0;
}

static uint64_t row_bytes(const png_header *h, uint32_t width)
{
    return ((uint64_t)width * (uint64_t)(h->channels * h->depth) + 7) / 8;
}

static ts_status check_header(const uint8_t *d, uint32_t len, const char *name, png_header *h, ts_error *err)
{
    if (len != 13)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: damaged PNG header (IHDR of %u bytes)", name, len);
    h->width = be32(d);
    h->height = be32(d + 4);
    h->depth = d[8];
    h->colour = d[9];
    h->interlaced = d[12];
    static const int channels[7] = {1, 0, 3, 1, 2, 0, 4};
    static const int depths[7] = {1 | 2 | 4 | 8 | 16, 0, 8 | 16, 1 | 2 | 4 | 8, 8 | 16, 0, 8 | 16};
    if (h->width == 0 || h->height == 0 || h->width > 0x7fffffffu || h->height > 0x7fffffffu)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: PNG of %u x %u pixels", name, h->width, h->height);
    if (h->colour > 6 || !channels[h->colour] || !(depths[h->colour] & h->depth) || (h->depth & (h->depth - 1)))
        return ts_fail(err, TS_ERR_CORRUPT, "%s: PNG colour type %d with %d bits is not a valid combination", name,
                       h->colour, h->depth);
    if (d[10] != 0 || d[11] != 0 || h->interlaced > 1)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: unknown PNG compression, filter or interlace method", name);
    if ((uint64_t)h->width * h->height > TS_PNG_MAX_PIXELS)
        return ts_fail(err, TS_ERR_INVALID, "%s: %u x %u pixels is more than this reader takes (%llu); scale the "
                       "image down", name, h->width, h->height, (unsigned long long)TS_PNG_MAX_PIXELS);
    h->channels = channels[h->colour];
    return TS_OK;
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Undo the filter of one row in place; prior is the previous row of the same pass (NULL for its first). */
static int unfilter(uint8_t *row, const uint8_t *prior, size_t n, size_t bpp, int filter)
{
    switch (filter) {
    case 0:
        return 1;
    case 1:
        for (size_t i = bpp; i < n; i++)
            row[i] = (uint8_t)(row[i] + row[i - bpp]);
        return 1;
    case 2:
        if (prior)
            for (size_t i = 0; i < n; i++)
                row[i] = (uint8_t)(row[i] + prior[i]);
        return 1;
    case 3:
        for (size_t i = 0; i < n; i++) {
            int a = i >= bpp ? row[i - bpp] : 0, b = prior ? prior[i] : 0;
            row[i] = (uint8_t)(row[i] + ((a + b) >> 1));
        }
        return 1;
    case 4:
        for (size_t i = 0; i < n; i++) {
            int a = i >= bpp ? row[i - bpp] : 0, b = prior ? prior[i] : 0;
            int c = prior && i >= bpp ? prior[i - bpp] : 0;
            row[i] = (uint8_t)(row[i] + paeth(a, b, c));
        }
        return 1;
    default:
        return 0;
    }
}

static unsigned sample(const uint8_t *row, uint64_t index, int depth)
{
    if (depth == 16)
        return (unsigned)row[2 * index] << 8 | row[2 * index + 1];
    if (depth == 8)
        return row[index];
    uint64_t bit = index * (uint64_t)depth;
    return (unsigned)(row[bit / 8] >> (8 - depth - (int)(bit % 8))) & ((1u << depth) - 1);
}

static float luminance(float r, float g, float b)
{
    return 0.2126f * r + 0.7152f * g + 0.0722f * b;
}

typedef struct png_image {
    png_header h;
    float palette[256];
    int palette_size;
} png_image;

/* Unfilter every row of every pass in raw and write the grey values into out (bottom row first). */
static ts_status develop(const png_image *img, uint8_t *raw, float *out, const char *name, ts_error *err)
{
    const png_header *h = &img->h;
    const int (*passes)[4] = h->interlaced ? ADAM7 : WHOLE;
    const int pass_count = h->interlaced ? 7 : 1;
    const size_t bpp = (size_t)(h->channels * h->depth + 7) / 8;
    const float scale = 1.0f / (float)((1u << h->depth) - 1);
    uint8_t *at = raw;
    for (int p = 0; p < pass_count; p++) {
        const int row0 = passes[p][0], col0 = passes[p][1], row_step = passes[p][2], col_step = passes[p][3];
        const uint32_t pw = pass_size(h->width, col0, col_step), ph = pass_size(h->height, row0, row_step);
        if (pw == 0 || ph == 0)
            continue;
        const size_t n = (size_t)row_bytes(h, pw);
        const uint8_t *prior = NULL;
        for (uint32_t r = 0; r < ph; r++, at += n + 1) {
            uint8_t *row = at + 1;
            if (!unfilter(row, prior, n, bpp, at[0]))
                return ts_fail(err, TS_ERR_CORRUPT, "%s: damaged PNG (row filter %d)", name, at[0]);
            prior = row;
            const uint32_t y = (uint32_t)row0 + r * (uint32_t)row_step;
            float *dst = out + (size_t)(h->height - 1 - y) * h->width;
            for (uint32_t c = 0; c < pw; c++) {
                const uint64_t s = (uint64_t)c * (uint64_t)h->channels;
                float v;
                if (h->colour == 3) {
                    unsigned index = sample(row, s, h->depth);
                    if ((int)index >= img->palette_size)
                        return ts_fail(err, TS_ERR_CORRUPT, "%s: damaged PNG (colour %u outside its %d-colour "
                                       "palette)", name, index, img->palette_size);
                    v = img->palette[index];
                } else if (h->channels >= 3) {
                    v = luminance((float)sample(row, s, h->depth) * scale, (float)sample(row, s + 1, h->depth) * scale,
                                  (float)sample(row, s + 2, h->depth) * scale);
                } else {
                    v = (float)sample(row, s, h->depth) * scale;
                }
                dst[(uint32_t)col0 + c * (uint32_t)col_step] = v;
            }
        }
    }
    return TS_OK;
}

static uint64_t raw_size(const png_header *h)
{
    const int (*passes)[4] = h->interlaced ? ADAM7 : WHOLE;
    uint64_t total = 0;
    for (int p = 0; p < (h->interlaced ? 7 : 1); p++) {
        uint32_t pw = pass_size(h->width, passes[p][1], passes[p][3]);
        uint32_t ph = pass_size(h->height, passes[p][0], passes[p][2]);
        if (pw && ph)
            total += (uint64_t)ph * (row_bytes(h, pw) + 1);
    }
    return total;
}

ts_status ts_png_decode(const uint8_t *data, size_t size, const char *name, float **pixels, uint32_t *width,
                        uint32_t *height, ts_error *err)
{
    static const uint8_t SIGNATURE[8] = {137, 'P', 'N', 'G', '\r', '\n', 26, '\n'};
    *pixels = NULL;
    if (size < 8 || memcmp(data, SIGNATURE, 8) != 0)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: not a PNG file", name);
    png_image img = {.palette_size = 0};
    uint8_t *raw = NULL;
    uint64_t expected = 0, capacity = 0;
    z_stream z;
    memset(&z, 0, sizeof z);
    int inflating = 0, stream_ended = 0, seen_header = 0, seen_end = 0;
    ts_status st = TS_OK;
    size_t pos = 8;
    while (!seen_end) {
        if (size - pos < 12) {
            st = ts_fail(err, TS_ERR_CORRUPT, "%s: truncated PNG (no IEND chunk)", name);
            goto done;
        }
        const uint32_t len = be32(data + pos);
        const uint8_t *type = data + pos + 4, *body = data + pos + 8;
        if (len > 0x7fffffffu || len > size - pos - 12) {
            st = ts_fail(err, TS_ERR_CORRUPT, "%s: truncated PNG (a chunk runs past the end of the file)", name);
            goto done;
        }
        if ((uint32_t)crc32(0L, type, len + 4) != be32(body + len)) {
            st = ts_fail(err, TS_ERR_CORRUPT, "%s: damaged PNG (the CRC of its %.4s chunk does not match)", name,
                         (const char *)type);
            goto done;
        }
        if (!seen_header && memcmp(type, "IHDR", 4) != 0) {
            st = ts_fail(err, TS_ERR_CORRUPT, "%s: damaged PNG (it does not start with IHDR)", name);
            goto done;
        }
        if (memcmp(type, "IHDR", 4) == 0) {
            if (seen_header) {
                st = ts_fail(err, TS_ERR_CORRUPT, "%s: damaged PNG (two IHDR chunks)", name);
                goto done;
            }
            if ((st = check_header(body, len, name, &img.h, err)) != TS_OK)
                goto done;
            seen_header = 1;
        } else if (memcmp(type, "PLTE", 4) == 0) {
            if (len % 3 || len / 3 > 256 || len == 0) {
                st = ts_fail(err, TS_ERR_CORRUPT, "%s: damaged PNG palette (%u bytes)", name, len);
                goto done;
            }
            img.palette_size = (int)(len / 3);
            for (int i = 0; i < img.palette_size; i++)
                img.palette[i] = luminance(body[3 * i] / 255.0f, body[3 * i + 1] / 255.0f, body[3 * i + 2] / 255.0f);
        } else if (memcmp(type, "IDAT", 4) == 0) {
            if (!inflating) {
                if (img.h.colour == 3 && img.palette_size == 0) {
                    st = ts_fail(err, TS_ERR_CORRUPT, "%s: damaged PNG (palette image without a palette)", name);
                    goto done;
                }
                expected = raw_size(&img.h);
                if (inflateInit(&z) != Z_OK) {
                    st = ts_fail(err, TS_ERR_INTERNAL, "%s: zlib could not start", name);
                    goto done;
                }
                inflating = 1;
            }
            z.next_in = (uint8_t *)body;
            z.avail_in = len;
            while (z.avail_in > 0 && !stream_ended) {
                /* the buffer grows with the data actually there (at most double), not with what the header
                 * claims: a small damaged file cannot make the reader take gigabytes */
                if (z.total_out == capacity && capacity < expected) {
                    uint64_t grown = capacity ? 2 * capacity : 65536;
                    grown = grown < expected ? grown : expected;
                    uint8_t *bigger = grown <= SIZE_MAX ? realloc(raw, (size_t)grown) : NULL;
                    if (!bigger) {
                        st = ts_fail(err, TS_ERR_NOMEM, "%s: not enough memory to read a %u x %u PNG", name,
                                     img.h.width, img.h.height);
                        goto done;
                    }
                    raw = bigger;
                    capacity = grown;
                }
                uint64_t room = capacity - z.total_out;
                z.next_out = raw + z.total_out;
                z.avail_out = (uInt)(room > 0x40000000u ? 0x40000000u : room);
                int zs = inflate(&z, Z_NO_FLUSH);
                if (zs == Z_STREAM_END) {
                    stream_ended = 1;
                } else if (zs != Z_OK) {
                    st = ts_fail(err, TS_ERR_CORRUPT, "%s: damaged PNG image data (%s)", name,
                                 zs == Z_BUF_ERROR ? "more data than the image holds" : z.msg ? z.msg : "zlib error");
                    goto done;
                }
            }
        } else if (memcmp(type, "IEND", 4) == 0) {
            seen_end = 1;
        } else if (!(type[0] & 0x20)) {
            st = ts_fail(err, TS_ERR_CORRUPT, "%s: PNG with an unknown critical chunk %.4s", name, (const char *)type);
            goto done;
        }
        pos += 12 + (size_t)len;
    }
    if (!stream_ended || z.total_out != expected) {
        st = ts_fail(err, TS_ERR_CORRUPT, "%s: truncated PNG image data (%llu of %llu bytes)", name,
                     (unsigned long long)(inflating ? z.total_out : 0), (unsigned long long)expected);
        goto done;
    }
    float *out = malloc((size_t)img.h.width * img.h.height * sizeof(float));
    if (!out) {
        st = ts_fail(err, TS_ERR_NOMEM, "%s: not enough memory for a %u x %u map", name, img.h.width, img.h.height);
        goto done;
    }
    if ((st = develop(&img, raw, out, name, err)) != TS_OK) {
        free(out);
        goto done;
    }
    *pixels = out;
    *width = img.h.width;
    *height = img.h.height;
done:
    if (inflating)
        inflateEnd(&z);
    free(raw);
    return st;
}

ts_status ts_png_read(const char *path, float **pixels, uint32_t *width, uint32_t *height, ts_error *err)
{
    *pixels = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return ts_fail(err, TS_ERR_IO, "%s: cannot open the image file", path);
    uint8_t *data = NULL;
    ts_status st = TS_OK;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        st = ts_fail(err, TS_ERR_IO, "%s: cannot read the image file", path);
    } else if (!(data = malloc(size ? (size_t)size : 1))) {
        st = ts_fail(err, TS_ERR_NOMEM, "%s: not enough memory to read a %ld-byte image", path, size);
    } else if (fread(data, 1, (size_t)size, f) != (size_t)size) {
        st = ts_fail(err, TS_ERR_IO, "%s: cannot read the image file", path);
    } else {
        st = ts_png_decode(data, (size_t)size, path, pixels, width, height, err);
    }
    free(data);
    fclose(f);
    return st;
}
