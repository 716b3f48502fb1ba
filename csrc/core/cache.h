/* cache.h - particle cache frames: Tsubu's own small binary format.
 *
 * One file holds one frame of one particle stream: a header, an attribute
 * table, and one zlib-compressed column per attribute, each protected by a
 * CRC32. The byte layout is specified in docs/cache-format.md; this file is
 * its reference implementation. Frames are written atomically (temporary
 * file, fsync, rename) so a crash never leaves a half-written frame under the
 * final name. The reader trusts nothing: a truncated, damaged or foreign file
 * is reported as TS_ERR_CORRUPT with a message naming the file.
 *
 * ts_cache_writer compresses and writes frames on its own thread so that
 * file I/O overlaps the simulation.
 */
#ifndef TSUBU_CACHE_H
#define TSUBU_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define TS_CACHE_VERSION 1
#define TS_CACHE_NAME_SIZE 32     /* attribute names, NUL included */
#define TS_CACHE_MAX_ATTRIBUTES 64
#define TS_CACHE_MAX_COMPONENTS 16

typedef enum ts_attr_type {
    TS_ATTR_F32 = 1,
    TS_ATTR_I32 = 2,
    TS_ATTR_U32 = 3,
    TS_ATTR_F64 = 4,
    TS_ATTR_U8 = 5
} ts_attr_type;

typedef struct ts_attribute {
    char name[TS_CACHE_NAME_SIZE];
    ts_attr_type type;
    int components;   /* 1 for scalars, 3 for vectors, 4 for quaternions */
    void *data;       /* count * components values, interleaved per particle */
} ts_attribute;

typedef struct ts_frame {
    int32_t frame;
    double time;      /* seconds since the start of the bake */
    uint64_t count;   /* particles */
    int attribute_count;
    ts_attribute attributes[TS_CACHE_MAX_ATTRIBUTES];
    int owns_data;    /* 1 when the reader allocated the columns */
} ts_frame;

size_t ts_attr_type_size(ts_attr_type type);
const char *ts_attr_type_name(ts_attr_type type);

/* Start an empty frame (no attributes, owns nothing). */
void ts_frame_init(ts_frame *f, int32_t frame, double time, uint64_t count);
/* Append an attribute whose data the caller keeps alive until written. */
ts_status ts_frame_add(ts_frame *f, const char *name, ts_attr_type type, int components, const void *data,
                       ts_error *err);
const ts_attribute *ts_frame_find(const ts_frame *f, const char *name);
/* Free columns allocated by the reader (no-op for caller-owned data). */
void ts_frame_free(ts_frame *f);

/* Encode a frame into a newly allocated buffer (*out, *out_size). */
ts_status ts_frame_encode(const ts_frame *f, int level, uint8_t **out, size_t *out_size, ts_error *err);
/* Decode a buffer; `source` names it in error messages (usually the path). */
ts_status ts_frame_decode(const uint8_t *buf, size_t size, const char *source, ts_frame *out, ts_error *err);

/* Write a file atomically: `path`.tmp-<pid>, fsync, rename. */
ts_status ts_write_file_atomic(const char *path, const void *data, size_t size, ts_error *err);
ts_status ts_frame_write(const char *path, const ts_frame *f, int level, ts_error *err);
ts_status ts_frame_read(const char *path, ts_frame *out, ts_error *err);
/* The whole file in a newly allocated buffer (*out, *out_size). */
ts_status ts_read_file(const char *path, uint8_t **out, size_t *out_size, ts_error *err);

/* ---- asynchronous writer ---- */
typedef struct ts_cache_writer ts_cache_writer;

/* queue_depth frames may wait (each a copy); level is zlib's 0..9. */
ts_status ts_cache_writer_open(ts_cache_writer **w, int queue_depth, int level, ts_error *err);
/* Copy the frame and queue it for `path`; blocks while the queue is full.
 * Reports the first failure of an earlier write, if any. */
ts_status ts_cache_writer_submit(ts_cache_writer *w, const char *path, const ts_frame *f, ts_error *err);
/* Queue a file already encoded (a checkpoint); the writer takes `bytes`
 * (malloc'd) and frees it, also when this fails. */
ts_status ts_cache_writer_submit_bytes(ts_cache_writer *w, const char *path, uint8_t *bytes, size_t size,
                                       ts_error *err);
/* Wait until everything queued is on disk; report the first failure. */
ts_status ts_cache_writer_flush(ts_cache_writer *w, ts_error *err);
/* Flush, stop the thread and free; reports the first failure. */
ts_status ts_cache_writer_close(ts_cache_writer *w, ts_error *err);

#endif
