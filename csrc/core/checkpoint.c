/* checkpoint.c - sectioned solver state and its container file (see checkpoint.h). */
#include "checkpoint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"

static const uint8_t MAGIC[8] = {0x89, 'T', 'S', 'C', 'K', 'P', '\r', '\n'};
enum { HEADER_SIZE = 32, ENTRY_SIZE = TS_CACHE_NAME_SIZE + 8 };

typedef struct ts_scratch {
    struct ts_scratch *next;
    max_align_t data[];
} ts_scratch;

void ts_checkpoint_init(ts_checkpoint *cp, int32_t frame, double time)
{
    memset(cp, 0, sizeof *cp);
    cp->frame = frame;
    cp->time = time;
    snprintf(cp->source, sizeof cp->source, "checkpoint");
}

void ts_checkpoint_free(ts_checkpoint *cp)
{
    for (int s = 0; s < cp->section_count; s++)
        ts_frame_free(&cp->sections[s].rows);
    cp->section_count = 0;
    while (cp->scratch) {
        ts_scratch *next = cp->scratch->next;
        free(cp->scratch);
        cp->scratch = next;
    }
}

void *ts_checkpoint_scratch(ts_checkpoint *cp, size_t bytes, ts_error *err)
{
    ts_scratch *block = calloc(1, sizeof *block + (bytes ? bytes : 1));
    if (!block) {
        ts_fail(err, TS_ERR_NOMEM, "out of memory for the checkpoint (%zu bytes)", bytes);
        return NULL;
    }
    block->next = cp->scratch;
    cp->scratch = block;
    return block->data;
}

static const ts_checkpoint_section *find_section(const ts_checkpoint *cp, const char *name)
{
    for (int s = 0; s < cp->section_count; s++)
        if (strcmp(cp->sections[s].name, name) == 0)
            return &cp->sections[s];
    return NULL;
}

ts_status ts_checkpoint_put(ts_checkpoint *cp, const char *section, uint64_t rows, const ts_column *columns,
                            size_t n, ts_error *err)
{
    if (cp->section_count == TS_CHECKPOINT_MAX_SECTIONS || strlen(section) >= TS_CACHE_NAME_SIZE ||
        find_section(cp, section))
        return ts_fail(err, TS_ERR_INTERNAL, "checkpoint section '%s': too many sections, a long name or twice",
                       section);
    ts_checkpoint_section *s = &cp->sections[cp->section_count];
    snprintf(s->name, sizeof s->name, "%s", section);
    ts_frame_init(&s->rows, cp->frame, cp->time, rows);
    for (size_t c = 0; c < n; c++) {
        ts_status st = ts_frame_add(&s->rows, columns[c].name, columns[c].type, columns[c].components,
                                    columns[c].data, err);
        if (st != TS_OK)
            return st;
    }
    cp->section_count++;
    return TS_OK;
}

ts_status ts_checkpoint_put_values(ts_checkpoint *cp, const char *section, const ts_value *values, size_t n,
                                   ts_error *err)
{
    double *copy = ts_checkpoint_scratch(cp, n * sizeof *copy, err);
    ts_column columns[TS_CACHE_MAX_ATTRIBUTES];
    if (!copy)
        return TS_ERR_NOMEM;
    if (n > TS_CACHE_MAX_ATTRIBUTES)
        return ts_fail(err, TS_ERR_INTERNAL, "checkpoint section '%s': more than %d values", section,
                       TS_CACHE_MAX_ATTRIBUTES);
    for (size_t k = 0; k < n; k++) {
        copy[k] = values[k].value;
        columns[k] = (ts_column){values[k].name, TS_ATTR_F64, 1, copy + k};
    }
    return ts_checkpoint_put(cp, section, 1, columns, n, err);
}

ts_status ts_checkpoint_rows(const ts_checkpoint *cp, const char *section, uint64_t *rows, ts_error *err)
{
    const ts_checkpoint_section *s = find_section(cp, section);
    if (!s)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the section '%s' is missing; bake again from the start", cp->source,
                       section);
    *rows = s->rows.count;
    return TS_OK;
}

ts_status ts_checkpoint_get(const ts_checkpoint *cp, const char *section, uint64_t rows, const ts_column *columns,
                            size_t n, ts_error *err)
{
    uint64_t have;
    ts_status st = ts_checkpoint_rows(cp, section, &have, err);
    if (st != TS_OK)
        return st;
    if (have != rows)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the section '%s' has %llu rows, this scene needs %llu; bake again "
                       "from the start", cp->source, section, (unsigned long long)have, (unsigned long long)rows);
    const ts_frame *f = &find_section(cp, section)->rows;
    for (size_t c = 0; c < n; c++) {
        const ts_attribute *a = ts_frame_find(f, columns[c].name);
        if (!a || a->type != columns[c].type || a->components != columns[c].components)
            return ts_fail(err, TS_ERR_CORRUPT, "%s: the section '%s' has no column '%s' of %d %s; bake again from "
                           "the start", cp->source, section, columns[c].name, columns[c].components,
                           ts_attr_type_name(columns[c].type));
        size_t bytes = (size_t)rows * (size_t)a->components * ts_attr_type_size(a->type);
        if (bytes)
            memcpy(columns[c].data, a->data, bytes);
    }
    return TS_OK;
}

ts_status ts_checkpoint_get_values(const ts_checkpoint *cp, const char *section, ts_value *values, size_t n,
                                   ts_error *err)
{
    for (size_t k = 0; k < n; k++) {
        ts_column c = {values[k].name, TS_ATTR_F64, 1, &values[k].value};
        ts_status st = ts_checkpoint_get(cp, section, 1, &c, 1, err);
        if (st != TS_OK)
            return st;
        if (!isfinite(values[k].value))
            return ts_fail(err, TS_ERR_CORRUPT, "%s: '%s' of section '%s' is not a number; bake again from the start",
                           cp->source, values[k].name, section);
    }
    return TS_OK;
}

/* ---- container file ---- */

static uint32_t entries_crc(const uint8_t *header, const uint8_t *const *entries, int count)
{
    uint32_t crc = ts_crc32(0, header, 28);
    for (int s = 0; s < count; s++)
        crc = ts_crc32(crc, entries[s], ENTRY_SIZE);
    return crc;
}

ts_status ts_checkpoint_encode(const ts_checkpoint *cp, uint8_t **out, size_t *out_size, ts_error *err)
{
    uint8_t *encoded[TS_CHECKPOINT_MAX_SECTIONS] = {0};
    size_t sizes[TS_CHECKPOINT_MAX_SECTIONS], total = HEADER_SIZE;
    ts_status st = TS_OK;
    for (int s = 0; st == TS_OK && s < cp->section_count; s++) {
        st = ts_frame_encode(&cp->sections[s].rows, 0, &encoded[s], &sizes[s], err);
        total += ENTRY_SIZE + sizes[s];
    }
    uint8_t *buf = st == TS_OK ? malloc(total) : NULL;
    if (st == TS_OK && !buf)
        st = ts_fail(err, TS_ERR_NOMEM, "out of memory for the checkpoint (%zu bytes)", total);
    if (st == TS_OK) {
        const uint8_t *entries[TS_CHECKPOINT_MAX_SECTIONS];
        memcpy(buf, MAGIC, 8);
        ts_put_u32(buf + 8, TS_CHECKPOINT_VERSION);
        ts_put_u32(buf + 12, (uint32_t)cp->frame);
        ts_put_f64(buf + 16, cp->time);
        ts_put_u32(buf + 24, (uint32_t)cp->section_count);
        uint8_t *p = buf + HEADER_SIZE;
        for (int s = 0; s < cp->section_count; s++) {
            memset(p, 0, TS_CACHE_NAME_SIZE);
            memcpy(p, cp->sections[s].name, strlen(cp->sections[s].name));
            ts_put_u64(p + TS_CACHE_NAME_SIZE, sizes[s]);
            entries[s] = p;
            memcpy(p + ENTRY_SIZE, encoded[s], sizes[s]);
            p += ENTRY_SIZE + sizes[s];
        }
        ts_put_u32(buf + 28, entries_crc(buf, entries, cp->section_count));
        *out = buf;
        *out_size = total;
    }
    for (int s = 0; s < cp->section_count; s++)
        free(encoded[s]);
    return st;
}

ts_status ts_checkpoint_decode(const uint8_t *buf, size_t size, const char *source, ts_checkpoint *out,
                               ts_error *err)
{
    ts_checkpoint_init(out, 0, 0.0);
    snprintf(out->source, sizeof out->source, "%s", source);
    if (size < 8 || memcmp(buf, MAGIC, 8) != 0)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: not a Tsubu checkpoint (wrong magic); bake again from the start",
                       source);
    if (size < HEADER_SIZE)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the checkpoint is truncated; bake again from the start", source);
    uint32_t version = ts_get_u32(buf + 8), count = ts_get_u32(buf + 24);
    if (version != TS_CHECKPOINT_VERSION)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: checkpoint version %u; this Tsubu reads version %d (bake again "
                       "from the start)", source, version, TS_CHECKPOINT_VERSION);
    if (count > TS_CHECKPOINT_MAX_SECTIONS)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the checkpoint claims %u sections (damaged file)", source, count);
    const uint8_t *entries[TS_CHECKPOINT_MAX_SECTIONS];
    size_t at = HEADER_SIZE;
    for (uint32_t s = 0; s < count; s++) {
        if (size - at < ENTRY_SIZE)
            return ts_fail(err, TS_ERR_CORRUPT, "%s: the checkpoint is truncated; bake again from the start", source);
        entries[s] = buf + at;
        uint64_t length = ts_get_u64(buf + at + TS_CACHE_NAME_SIZE);
        if (length > size - at - ENTRY_SIZE)
            return ts_fail(err, TS_ERR_CORRUPT, "%s: the checkpoint is truncated; bake again from the start", source);
        at += ENTRY_SIZE + (size_t)length;
    }
    if (at != size)
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the checkpoint has trailing bytes (damaged file)", source);
    if (entries_crc(buf, entries, (int)count) != ts_get_u32(buf + 28))
        return ts_fail(err, TS_ERR_CORRUPT, "%s: the checkpoint's header fails its checksum (damaged file)", source);
    out->frame = (int32_t)ts_get_u32(buf + 12);
    out->time = ts_get_f64(buf + 16);
    for (uint32_t s = 0; s < count; s++) {
        ts_checkpoint_section *sec = &out->sections[s];
        memcpy(sec->name, entries[s], TS_CACHE_NAME_SIZE);
        sec->name[TS_CACHE_NAME_SIZE - 1] = '\0';
        char what[512];
        snprintf(what, sizeof what, "%s (section '%s')", source, sec->name);
        ts_status st = ts_frame_decode(entries[s] + ENTRY_SIZE, (size_t)ts_get_u64(entries[s] + TS_CACHE_NAME_SIZE),
                                       what, &sec->rows, err);
        if (st != TS_OK) {
            ts_checkpoint_free(out);
            return st;
        }
        out->section_count++;
    }
    return TS_OK;
}

ts_status ts_checkpoint_read(const char *path, ts_checkpoint *out, ts_error *err)
{
    ts_checkpoint_init(out, 0, 0.0);
    uint8_t *buf;
    size_t size;
    ts_status st = ts_read_file(path, &buf, &size, err);
    if (st == TS_OK)
        st = ts_checkpoint_decode(buf, size, path, out, err);
    free(buf);
    return st;
}
