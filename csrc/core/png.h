/* png.h - PNG images read as grey maps (a brittleness map given as a file).
 *
 * Every PNG the standard allows is read: bit depths 1-16, grey, RGB, palette,
 * with or without alpha, Adam7-interlaced or not, any size that fits in
 * memory. Colour becomes its Rec. 709 luminance of the stored values (what
 * the add-on takes from a Blender image); alpha is ignored. Rows come out
 * bottom first, as Blender's image pixels: pixel (row r, column c) lies at
 * v = (r + 0.5) / height, u = (c + 0.5) / width. A damaged or foreign file is
 * refused naming the file and what is wrong (a bad CRC, a truncated stream).
 */
#ifndef TSUBU_PNG_H
#define TSUBU_PNG_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define TS_PNG_MAX_PIXELS ((uint64_t)1 << 30) /* 32768 x 32768: 4 GB of grey floats */

/* Decode the PNG in data[0, size) into *pixels (malloc'd, height rows of width
 * floats, bottom row first; free with free()). name is what messages call it. */
ts_status ts_png_decode(const uint8_t *data, size_t size, const char *name, float **pixels, uint32_t *width,
                        uint32_t *height, ts_error *err);

/* The same from a file. */
ts_status ts_png_read(const char *path, float **pixels, uint32_t *width, uint32_t *height, ts_error *err);

#endif
