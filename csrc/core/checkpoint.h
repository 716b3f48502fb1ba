/* checkpoint.h - a solver's full state as named sections, each with its own
 * row count (particles, contacts, bed columns, bodies, counters, ...).
 *
 * A particle frame (ts_frame) has one row count for all its columns, so a
 * state made of several kinds of rows once had to be packed into tagged rows
 * by each solver. Here each kind is a section - an ordinary particle frame -
 * and the container file only names them (Blender's point cache does the
 * same with its "extra" data blocks). Layout: docs/cache-format.md.
 *
 * Saving: a solver adds sections whose columns point into its own arrays
 * (ts_checkpoint_put); the frame loop encodes the checkpoint as soon as
 * save_state returns, so nothing is copied. Values assembled only for the
 * checkpoint go in its scratch memory (ts_checkpoint_scratch, _put_values).
 * Restoring: ts_checkpoint_rows says how many rows a section has, the solver
 * makes room, and ts_checkpoint_get copies the columns back; every mismatch
 * of name, type or width is refused with a message naming the section.
 */
#ifndef TSUBU_CHECKPOINT_H
#define TSUBU_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "status.h"

#define TS_CHECKPOINT_VERSION 1
#define TS_CHECKPOINT_MAX_SECTIONS 16

typedef struct ts_checkpoint_section {
    char name[TS_CACHE_NAME_SIZE];
    ts_frame rows;
} ts_checkpoint_section;

typedef struct ts_checkpoint {
    int32_t frame;
    double time;
    int section_count;
    ts_checkpoint_section sections[TS_CHECKPOINT_MAX_SECTIONS];
    char source[256];             /* the file it was read from, for messages */
    struct ts_scratch *scratch;   /* memory freed with the checkpoint */
} ts_checkpoint;

/* One column of a section: what ts_checkpoint_put saves from `data` and
 * ts_checkpoint_get copies back into it (rows * components values). */
typedef struct ts_column {
    const char *name;
    ts_attr_type type;
    int components;
    void *data;
} ts_column;

/* A named number (counters, clocks): saved as a float64 column of one row. */
typedef struct ts_value {
    const char *name;
    double value;
} ts_value;

void ts_checkpoint_init(ts_checkpoint *cp, int32_t frame, double time);
/* Free the scratch memory and columns a decode allocated. */
void ts_checkpoint_free(ts_checkpoint *cp);

/* Add a section of `rows` rows; the columns' data must live until encoded. */
ts_status ts_checkpoint_put(ts_checkpoint *cp, const char *section, uint64_t rows, const ts_column *columns,
                            size_t n, ts_error *err);
/* Memory that lives as long as the checkpoint (zeroed). */
void *ts_checkpoint_scratch(ts_checkpoint *cp, size_t bytes, ts_error *err);
/* A section of one row holding the values (copied). */
ts_status ts_checkpoint_put_values(ts_checkpoint *cp, const char *section, const ts_value *values, size_t n,
                                   ts_error *err);

/* How many rows a section has; refused if it is missing. */
ts_status ts_checkpoint_rows(const ts_checkpoint *cp, const char *section, uint64_t *rows, ts_error *err);
/* Copy the columns of a section of exactly `rows` rows into columns[i].data. */
ts_status ts_checkpoint_get(const ts_checkpoint *cp, const char *section, uint64_t rows, const ts_column *columns,
                            size_t n, ts_error *err);
/* Fill values[i].value from a section written by ts_checkpoint_put_values. */
ts_status ts_checkpoint_get_values(const ts_checkpoint *cp, const char *section, ts_value *values, size_t n,
                                   ts_error *err);

/* The container file: stored sections (zlib level 0 - the state's doubles
 * hardly compress, and compressing them took a core from the solver). */
ts_status ts_checkpoint_encode(const ts_checkpoint *cp, uint8_t **out, size_t *out_size, ts_error *err);
ts_status ts_checkpoint_decode(const uint8_t *buf, size_t size, const char *source, ts_checkpoint *out,
                               ts_error *err);
ts_status ts_checkpoint_read(const char *path, ts_checkpoint *out, ts_error *err);

#endif
