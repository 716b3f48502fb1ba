/* cache.c - particle cache frame encoding, decoding, atomic files and the
 * background writer (see cache.h and docs/cache-format.md). */
#include "cache.h"

#include "bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static const uint8_t MAGIC[8] = {0x89, 'T', 'S', 'U', 'B', 'U', '\r', '\n'};
enum { HEADER_SIZE = 60, ENTRY_SIZE = 64 };
enum { ENCODING_ZLIB = 0, ENCODING_SHUFFLE_ZLIB = 1 };
/* zlib cannot expand data by more than about 1032:1; a larger claim is a lie */
#define MAX_INFLATE_RATIO 1100u

size_t ts_attr_type_size(ts_attr_type type)
{
    switch (type) {
    case TS_ATTR_F32: case TS_ATTR_I32: case TS_ATTR_U32: return 4;
    case TS_ATTR_F64: return 8;
    case TS_ATTR_U8: return 1;
    }
    return 0;
}

const char *ts_attr_type_name(ts_attr_type type)
{
    switch (type) {
    case TS_ATTR_F32: return "float32";
    case TS_ATTR_I32: return "int32";
    case TS_ATTR_U32: return "uint32";
    case TS_ATTR_F64: return "float64";
    case TS_ATTR_U8: return "uint8";
    }
    return "unknown";
}


/* ---- frames in memory ---- */

void ts_frame_init(ts_frame *f, int32_t frame, double time, uint64_t count)
{
    memset(f, 0, sizeof *f);
    f->frame = frame;
    f->time = time;
    f->count = count;
}

static int valid_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= TS_CACHE_NAME_SIZE)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

ts_status ts_frame_add(ts_frame *f, const char *name, ts_attr_type type, int components, const void *data,
                       ts_error *err)
{
    if (!valid_name(name))
        return ts_fail(err, TS_ERR_INVALID, "cache attribute name '%s' must be 1-31 letters, digits or '_'", name);
    if (ts_frame_find(f, name))
        return ts_fail(err, TS_ERR_INVALID, "cache attribute '%s' is given twice", name);
    if (f->attribute_count >= TS_CACHE_MAX_ATTRIBUTES)
        return ts_fail(err, TS_ERR_INVALID, "a cache frame holds at most %d attributes", TS_CACHE_MAX_ATTRIBUTES);
    if (ts_attr_type_size(type) == 0)
        return ts_fail(err, TS_ERR_INVALID, "cache attribute '%s' has an unknown type %d", name, (int)type);
    if (components < 1 || components > TS_CACHE_MAX_COMPONENTS)
        return ts_fail(err, TS_ERR_INVALID, "cache attribute '%s' has %d components (1-%d allowed)", name,
                       components, TS_CACHE_MAX_COMPONENTS);
    if (!data && f->count > 0)
        return ts_fail(err, TS_ERR_INVALID, "cache attribute '%s' has no data", name);
    ts_attribute *a = &f->attributes[f->attribute_count++];
    snprintf(a->name, sizeof a->name, "%s", name);
    a->type = type;
    a->components = components;
    a->data = (void *)data;
    return TS_OK;
}

const ts_attribute *ts_frame_find(const ts_frame *f, const char *name)
{
    for (int i = 0; i < f->attribute_count; i++)
        if (strcmp(f->attributes[i].name, name) == 0)
            return &f->attributes[i];
    return NULL;
}

void ts_frame_free(ts_frame *f)
{
    if (f->owns_data)
        for (int i = 0; i < f->attribute_count; i++)
            free(f->attributes[i].data);
    f->attribute_count = 0;
    f->owns_data = 0;
}

static size_t column_bytes(const ts_attribute *a, uint64_t count)
{
    return (size_t)count * (size_t)a->components * ts_attr_type_size(a->type);
}

/* Byte shuffle: all first bytes, then all second bytes, ... Floats of
 * neighbouring particles share exponents and high mantissa bytes, which
 * zlib then sees as long runs. */
static void shuffle(const uint8_t *in, uint8_t *out, size_t elements, size_t width)
{
    for (size_t b = 0; b < width; b++)
        for (size_t i = 0; i < elements; i++)
            out[b * elements + i] = in[i * width + b];
}

static void unshuffle(const uint8_t *in, uint8_t *out, size_t elements, size_t width)
{
    for (size_t b = 0; b < width; b++)
        for (size_t i = 0; i < elements; i++)
            out[i * width + b] = in[b * elements + i];
}

/* ---- encoding ---- */

typedef struct encoded_column {
    uint8_t *bytes;
    size_t size;
    uint32_t crc;
    int encoding;
} encoded_column;

static ts_status encode_column(const ts_attribute *a, uint64_t count, int level, encoded_column *out, ts_error *err)
{
    size_t raw = column_bytes(a, count), width = ts_attr_type_size(a->type);
    const uint8_t *src = a->data;
    uint8_t *shuffled = NULL;
    out->crc = ts_crc32(0, src, raw);
    out->encoding = width > 1 ? ENCODING_SHUFFLE_ZLIB : ENCODING_ZLIB;
    if (out->encoding == ENCODING_SHUFFLE_ZLIB && raw > 0) {
        shuffled = malloc(raw);
        if (!shuffled)
            return ts_fail(err, TS_ERR_NOMEM, "cache: out of memory encoding '%s'", a->name);
        shuffle(src, shuffled, raw / width, width);
        src = shuffled;
    }
    uLongf bound = compressBound((uLong)raw);
    out->bytes = malloc(bound ? bound : 1);
    if (!out->bytes) {
        free(shuffled);
        return ts_fail(err, TS_ERR_NOMEM, "cache: out of memory encoding '%s'", a->name);
    }
    int rc = compress2(out->bytes, &bound, src, (uLong)raw, level);
    free(shuffled);
    if (rc != Z_OK) {
        free(out->bytes);
        out->bytes = NULL;
        return ts_fail(err, TS_ERR_INTERNAL, "cache: zlib failed (%d) compressing '%s'", rc, a->name);
    }
    out->size = bound;
    return TS_OK;
}

ts_status ts_frame_encode(const ts_frame *f, int level, uint8_t **out, size_t *out_size, ts_error *err)
{
    if (level < 0 || level > 9)
        return ts_fail(err, TS_ERR_INVALID, "cache: compression level must be 0-9 (got %d)", level);
    encoded_column cols[TS_CACHE_MAX_ATTRIBUTES];
    int n = f->attribute_count;
    ts_status st = TS_OK;
    int done = 0;
    for (; done < n; done++)
        if ((st = encode_column(&f->attributes[done], f->count, level, &cols[done], err)) != TS_OK)
            break;
    size_t table_end = HEADER_SIZE + (size_t)n * ENTRY_SIZE;
    size_t data_size = 0;
    for (int i = 0; i < done; i++)
        data_size += cols[i].size;
    size_t total = table_end + 4 + data_size + 4;
    uint8_t *buf = st == TS_OK ? calloc(total, 1) : NULL;
    if (st == TS_OK && !buf)
        st = ts_fail(err, TS_ERR_NOMEM, "cache: out of memory for a %zu-byte frame", total);
    if (st == TS_OK) {
        memcpy(buf, MAGIC, 8);
        ts_put_u32(buf + 8, TS_CACHE_VERSION);
        ts_put_u32(buf + 12, (uint32_t)n);
        ts_put_u64(buf + 16, f->count);
        ts_put_u32(buf + 24, (uint32_t)f->frame);
        ts_put_u32(buf + 28, 0); /* flags */
        ts_put_f64(buf + 32, f->time);
        ts_put_u64(buf + 40, data_size);
        size_t offset = 0;
        for (int i = 0; i < n; i++) {
            const ts_attribute *a = &f->attributes[i];
            uint8_t *e = buf + HEADER_SIZE + (size_t)i * ENTRY_SIZE;
            memcpy(e, a->name, strlen(a->name));
            e[32] = (uint8_t)a->type;
            e[33] = (uint8_t)a->components;
            e[34] = (uint8_t)cols[i].encoding;
            ts_put_u32(e + 36, cols[i].crc);
            ts_put_u64(e + 40, offset);
            ts_put_u64(e + 48, cols[i].size);
            memcpy(buf + table_end + 4 + offset, cols[i].bytes, cols[i].size);
            offset += cols[i].size;
        }
        ts_put_u32(buf + table_end, ts_crc32(0, buf, table_end));
        ts_put_u32(buf + table_end + 4 + data_size, ts_crc32(0, buf + table_end + 4, data_size));
        *out = buf;
        *out_size = total;
    }
    for (int i = 0; i < done; i++)
        free(cols[i].bytes);
    return st;
}

/* ---- decoding: check everything before trusting it ---- */

static ts_status decode_column(const uint8_t *entry, const uint8_t *data, size_t data_size, uint64_t count,
                               const char *source, ts_attribute *a, ts_error *err)
{
    memcpy(a->name, entry, TS_CACHE_NAME_SIZE);
    if (a->name[TS_CACHE_NAME_SIZE - 1] != '\0' || !valid_name(a->name))
        return ts_fail(err, TS_ERR_CORRUPT, "%s: an attribute name is malformed (damaged file)", source);
    for (size_t k = strlen(a->name); k < TS_CACHE_NAME_SIZE; k++)
        if (entry[k] != 0)
            return ts_fail(err, TS_ERR_CORRUPT, "%s: attribute '%s' has a malformed name field", source, a->name);
    a->type = (ts_attr_type)entry[32];
    a->components = entry[33];
    int encoding = entry[34];
    size_t width = ts_attr_type_size(a->type);
    if (width == 0 || a->components < 1 || a->components > TS_CACHE_MAX_COMPONENTS ||
        (encoding != ENCODING_ZLIB && encoding != ENCODING_SHUFFLE_ZLIB) || entry[35] != 0)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: attribute '%s' has an unknown type or encoding", source, a->name);
    uint32_t crc = ts_get_u32(entry + 36);
    uint64_t offset = ts_get_u64(entry + 40), size = ts_get_u64(entry + 48);
    if (offset > data_size || size > data_size - offset)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: attribute '%s' points outside the file", source, a->name);
    uint64_t raw = count * (uint64_t)a->components * width;
    if (raw / width / (uint64_t)a->components != count || raw > (uint64_t)MAX_INFLATE_RATIO * size + 64)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: attribute '%s' claims more data than the file can hold", source,
                       a->name);
    uint8_t *column = malloc(raw ? (size_t)raw : 1);
    uint8_t *scratch = (encoding == ENCODING_SHUFFLE_ZLIB && raw) ? malloc((size_t)raw) : NULL;
    if (!column || (encoding == ENCODING_SHUFFLE_ZLIB && raw && !scratch)) {
        free(column);
        free(scratch);
        return ts_fail(err, TS_ERR_NOMEM, "%s: out of memory reading '%s' (%llu bytes)", source, a->name,
                       (unsigned long long)raw);
    }
    uLongf got = (uLongf)raw;
    int rc = uncompress(scratch ? scratch : column, &got, data + offset, (uLong)size);
    if (rc != Z_OK || got != raw) {
        free(column);
        free(scratch);
        return ts_fail(err, TS_ERR_CORRUPT, "%s: attribute '%s' does not decompress (damaged file)", source, a->name);
    }
    if (scratch) {
        unshuffle(scratch, column, (size_t)raw / width, width);
        free(scratch);
    }
    if (ts_crc32(0, column, (size_t)raw) != crc) {
        free(column);
        return ts_fail(err, TS_ERR_CORRUPT, "%s: attribute '%s' fails its checksum (damaged file)", source, a->name);
    }
    a->data = column;
    return TS_OK;
}

ts_status ts_frame_decode(const uint8_t *buf, size_t size, const char *source, ts_frame *out, ts_error *err)
{
    ts_frame_init(out, 0, 0.0, 0);
    if (size == 0)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the file is empty", source);
    if (size < 8 || memcmp(buf, MAGIC, 8) != 0)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: not a Tsubu particle cache file (wrong magic)", source);
    if (size < HEADER_SIZE + 8)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the file is truncated (%zu bytes)", source, size);
    uint32_t version = ts_get_u32(buf + 8);
    if (version != TS_CACHE_VERSION)
        return ts_fail(err, TS_ERR_CORRUPT,
                       "%s: cache format version %u; this Tsubu reads version %d (bake again or update Tsubu)",
                       source, version, TS_CACHE_VERSION);
    uint32_t n = ts_get_u32(buf + 12);
    if (n > TS_CACHE_MAX_ATTRIBUTES)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the header claims %u attributes (damaged file)", source, n);
    size_t table_end = HEADER_SIZE + (size_t)n * ENTRY_SIZE;
    if (size < table_end + 8)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the file is truncated (%zu bytes)", source, size);
    if (ts_crc32(0, buf, table_end) != ts_get_u32(buf + table_end))
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the header fails its checksum (damaged file)", source);
    uint64_t data_size = ts_get_u64(buf + 40);
    if (data_size != size - table_end - 8)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the file is truncated or has trailing bytes (%zu bytes, expected %llu)",
                       source, size, (unsigned long long)(table_end + 8 + data_size));
    const uint8_t *data = buf + table_end + 4;
    if (ts_crc32(0, data, (size_t)data_size) != ts_get_u32(data + data_size))
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the particle data fails its checksum (damaged file)", source);
    out->count = ts_get_u64(buf + 16);
    out->frame = (int32_t)ts_get_u32(buf + 24);
    out->time = ts_get_f64(buf + 32);
    out->owns_data = 1;
    for (uint32_t i = 0; i < n; i++) {
        ts_attribute *a = &out->attributes[i];
        ts_status st = decode_column(buf + HEADER_SIZE + (size_t)i * ENTRY_SIZE, data, (size_t)data_size, out->count,
                                     source, a, err);
        if (st != TS_OK) {
            ts_frame_free(out);
            return st;
        }
        out->attribute_count = (int)i + 1;
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(out->attributes[j].name, a->name) == 0) {
                ts_frame_free(out);
                return ts_fail(err, TS_ERR_CORRUPT, "%s: attribute '%s' appears twice", source, a->name);
            }
    }
    return TS_OK;
}

/* ---- files ---- */

ts_status ts_write_file_atomic(const char *path, const void *data, size_t size, ts_error *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return ts_fail(err, TS_ERR_IO, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return ts_fail(err, TS_ERR_IO, "%s: cannot create (%s)", tmp, strerror(errno));
    const uint8_t *p = data;
    size_t left = size;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            return ts_fail(err, TS_ERR_IO, "%s: write failed (%s)", path, strerror(e));
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        return ts_fail(err, TS_ERR_IO, "%s: could not flush to disk (%s)", path, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return ts_fail(err, TS_ERR_IO, "%s: could not rename into place (%s)", path, strerror(e));
    }
    return TS_OK;
}

ts_status ts_frame_write(const char *path, const ts_frame *f, int level, ts_error *err)
{
    uint8_t *buf = NULL;
    size_t size = 0;
    ts_status st = ts_frame_encode(f, level, &buf, &size, err);
    if (st == TS_OK)
        st = ts_write_file_atomic(path, buf, size, err);
    free(buf);
    return st;
}

ts_status ts_read_file(const char *path, uint8_t **out, size_t *out_size, ts_error *err)
{
    *out = NULL;
    *out_size = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return ts_fail(err, TS_ERR_IO, "%s: cannot open (%s)", path, strerror(errno));
    uint8_t *buf = NULL;
    size_t size = 0, cap = 0;
    ts_status st = TS_OK;
    for (;;) {
        if (size == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            uint8_t *grown = realloc(buf, cap);
            if (!grown) {
                st = ts_fail(err, TS_ERR_NOMEM, "%s: out of memory reading the file", path);
                break;
            }
            buf = grown;
        }
        size_t got = fread(buf + size, 1, cap - size, fp);
        size += got;
        if (got == 0) {
            if (ferror(fp))
                st = ts_fail(err, TS_ERR_IO, "%s: read failed", path);
            break;
        }
    }
    fclose(fp);
    if (st != TS_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    *out_size = size;
    return TS_OK;
}

ts_status ts_frame_read(const char *path, ts_frame *out, ts_error *err)
{
    ts_frame_init(out, 0, 0.0, 0);
    uint8_t *buf;
    size_t size;
    ts_status st = ts_read_file(path, &buf, &size, err);
    if (st == TS_OK)
        st = ts_frame_decode(buf, size, path, out, err);
    free(buf);
    return st;
}

/* ---- background writer ---- */

typedef struct write_job {
    char *path;
    ts_frame frame; /* owns copies of the columns */
    int level;
    uint8_t *bytes; /* or, when not NULL, a file already encoded (owned) */
    size_t size;
} write_job;

struct ts_cache_writer {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    write_job *queue;
    int depth, head, queued, busy, stopping, level;
    ts_error first_error;
};

static void job_free(write_job *job)
{
    free(job->path);
    job->path = NULL;
    free(job->bytes);
    job->bytes = NULL;
    ts_frame_free(&job->frame);
}

static void *writer_main(void *arg)
{
    ts_cache_writer *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (w->queued == 0 && !w->stopping)
            pthread_cond_wait(&w->changed, &w->lock);
        if (w->queued == 0 && w->stopping)
            break;
        write_job job = w->queue[w->head];
        w->busy = 1;
        pthread_mutex_unlock(&w->lock);

        ts_error err;
        ts_error_clear(&err);
        ts_status st = job.bytes ? ts_write_file_atomic(job.path, job.bytes, job.size, &err)
                                 : ts_frame_write(job.path, &job.frame, job.level, &err);
        job_free(&job);

        pthread_mutex_lock(&w->lock);
        if (st != TS_OK && w->first_error.code == TS_OK)
            w->first_error = err;
        w->head = (w->head + 1) % w->depth;
        w->queued--;
        w->busy = 0;
        pthread_cond_broadcast(&w->changed);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

ts_status ts_cache_writer_open(ts_cache_writer **out, int queue_depth, int level, ts_error *err)
{
    if (queue_depth < 1 || level < 0 || level > 9)
        return ts_fail(err, TS_ERR_INVALID, "cache writer: queue depth must be >= 1 and level 0-9");
    ts_cache_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->queue = calloc((size_t)queue_depth, sizeof *w->queue))) {
        free(w);
        return ts_fail(err, TS_ERR_NOMEM, "cache writer: out of memory");
    }
    w->depth = queue_depth;
    w->level = level;
    ts_error_clear(&w->first_error);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->changed, NULL);
    if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->changed);
        free(w->queue);
        free(w);
        return ts_fail(err, TS_ERR_INTERNAL, "cache writer: cannot start a thread");
    }
    *out = w;
    return TS_OK;
}

static ts_status report_first_error(ts_cache_writer *w, ts_error *err)
{
    if (w->first_error.code == TS_OK)
        return TS_OK;
    if (err)
        *err = w->first_error;
    return w->first_error.code;
}

static ts_status copy_frame(const ts_frame *f, ts_frame *copy, ts_error *err)
{
    *copy = *f;
    copy->owns_data = 1;
    for (int i = 0; i < f->attribute_count; i++) {
        size_t bytes = column_bytes(&f->attributes[i], f->count);
        void *data = malloc(bytes ? bytes : 1);
        if (!data) {
            copy->attribute_count = i;
            ts_frame_free(copy);
            return ts_fail(err, TS_ERR_NOMEM, "cache writer: out of memory copying frame %d", f->frame);
        }
        if (bytes)
            memcpy(data, f->attributes[i].data, bytes);
        copy->attributes[i].data = data;
    }
    return TS_OK;
}

static ts_status enqueue(ts_cache_writer *w, write_job job, ts_error *err)
{
    pthread_mutex_lock(&w->lock);
    while (w->queued == w->depth)
        pthread_cond_wait(&w->changed, &w->lock);
    ts_status st = report_first_error(w, err);
    if (st == TS_OK) {
        w->queue[(w->head + w->queued) % w->depth] = job;
        w->queued++;
        pthread_cond_broadcast(&w->changed);
    }
    pthread_mutex_unlock(&w->lock);
    if (st != TS_OK)
        job_free(&job);
    return st;
}

ts_status ts_cache_writer_submit(ts_cache_writer *w, const char *path, const ts_frame *f, ts_error *err)
{
    write_job job = {0};
    job.level = w->level;
    job.path = strdup(path);
    if (!job.path)
        return ts_fail(err, TS_ERR_NOMEM, "cache writer: out of memory");
    ts_status st = copy_frame(f, &job.frame, err);
    if (st != TS_OK) {
        free(job.path);
        return st;
    }
    return enqueue(w, job, err);
}

ts_status ts_cache_writer_submit_bytes(ts_cache_writer *w, const char *path, uint8_t *bytes, size_t size,
                                       ts_error *err)
{
    write_job job = {0};
    job.bytes = bytes, job.size = size;
    job.path = strdup(path);
    if (!job.path) {
        free(bytes);
        return ts_fail(err, TS_ERR_NOMEM, "cache writer: out of memory");
    }
    return enqueue(w, job, err);
}

ts_status ts_cache_writer_flush(ts_cache_writer *w, ts_error *err)
{
    pthread_mutex_lock(&w->lock);
    while (w->queued > 0)
        pthread_cond_wait(&w->changed, &w->lock);
    ts_status st = report_first_error(w, err);
    pthread_mutex_unlock(&w->lock);
    return st;
}

ts_status ts_cache_writer_close(ts_cache_writer *w, ts_error *err)
{
    if (!w)
        return TS_OK;
    ts_status st = ts_cache_writer_flush(w, err);
    pthread_mutex_lock(&w->lock);
    w->stopping = 1;
    pthread_cond_broadcast(&w->changed);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->changed);
    free(w->queue);
    free(w);
    return st;
}
