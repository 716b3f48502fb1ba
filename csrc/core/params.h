/* params.h - each solver's parameters declared once, as a table.
 *
 * A row names a field of the solver's params struct, its type, its range
 * and its default. From the table come: the defaults (ts_params_default,
 * behind every ts_<solver>_params_default), the range checks with messages
 * that name the parameter (ts_params_check), the binding's reader, which
 * fills the struct from a dict without a line per parameter, and a test
 * that holds the table against the Python schema (names, ranges, defaults,
 * enum items). A solver keeps only its cross checks (one parameter against
 * another) in code.
 *
 * Units are the solver's (SI, radians): a schema parameter shown in degrees
 * converts on its way in (tsubu/schema.py, Param.solver_value).
 */
#ifndef TSUBU_PARAMS_H
#define TSUBU_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef enum ts_param_type {
    TS_PARAM_REAL,   /* double */
    TS_PARAM_INT,    /* int */
    TS_PARAM_LONG,   /* long: counts and budgets */
    TS_PARAM_BOOL,   /* int 0 or 1 */
    TS_PARAM_ENUM,   /* int: the index of one of `items` */
    TS_PARAM_VEC3,   /* double[3], each component in [min, max] */
    TS_PARAM_SEED    /* uint64_t, any value */
} ts_param_type;

/* Where a value comes from: the effect's schema (what a user sets), or the
 * scene and the bake call (frame range, fps, seed, the domain box). */
typedef enum ts_param_source { TS_FROM_SCHEMA = 0, TS_FROM_SCENE = 1 } ts_param_source;

/* math.radians's factor, so a default in degrees converts to the bits Python sends */
#define TS_RADIANS_PER_DEGREE (3.14159265358979323846 / 180.0)

#define TS_PARAM_MAX_ITEMS 8

typedef struct ts_param_def {
    const char *name;
    ts_param_type type;
    size_t offset;
    double min, max;                 /* inclusive; ignored for BOOL, ENUM and SEED */
    double fallback[3];              /* the default (VEC3: all three; others: [0]) */
    ts_param_source source;
    const char *items[TS_PARAM_MAX_ITEMS]; /* ENUM: identifiers, NULL after the last */
} ts_param_def;

typedef struct ts_param_table {
    const char *effect;
    const ts_param_def *defs;
    size_t count;
    size_t size;                     /* sizeof the params struct */
} ts_param_table;

/* Rows, e.g. TS_REAL(ts_water_params, rest_density, 1.0, 30000.0, 1000.0). */
#define TS_ROW(S, f, type, lo, hi, x, y, z, source, ...) \
    {#f, type, offsetof(S, f), lo, hi, {x, y, z}, source, {__VA_ARGS__}}
#define TS_REAL(S, f, lo, hi, def) TS_ROW(S, f, TS_PARAM_REAL, lo, hi, def, 0, 0, TS_FROM_SCHEMA, NULL)
#define TS_INT(S, f, lo, hi, def) TS_ROW(S, f, TS_PARAM_INT, lo, hi, def, 0, 0, TS_FROM_SCHEMA, NULL)
#define TS_LONG(S, f, lo, hi, def) TS_ROW(S, f, TS_PARAM_LONG, lo, hi, def, 0, 0, TS_FROM_SCHEMA, NULL)
#define TS_BOOL(S, f, def) TS_ROW(S, f, TS_PARAM_BOOL, 0, 1, def, 0, 0, TS_FROM_SCHEMA, NULL)
#define TS_VEC3(S, f, lo, hi, x, y, z) TS_ROW(S, f, TS_PARAM_VEC3, lo, hi, x, y, z, TS_FROM_SCHEMA, NULL)
#define TS_ENUM(S, f, def, ...) TS_ROW(S, f, TS_PARAM_ENUM, 0, 0, def, 0, 0, TS_FROM_SCHEMA, __VA_ARGS__, NULL)
/* the same, given by the scene rather than the schema */
#define TS_SCENE_REAL(S, f, lo, hi, def) TS_ROW(S, f, TS_PARAM_REAL, lo, hi, def, 0, 0, TS_FROM_SCENE, NULL)
#define TS_SCENE_INT(S, f, lo, hi, def) TS_ROW(S, f, TS_PARAM_INT, lo, hi, def, 0, 0, TS_FROM_SCENE, NULL)
#define TS_SCENE_VEC3(S, f, lo, hi, x, y, z) TS_ROW(S, f, TS_PARAM_VEC3, lo, hi, x, y, z, TS_FROM_SCENE, NULL)
#define TS_SCENE_SEED(S, f) TS_ROW(S, f, TS_PARAM_SEED, 0, 0, 0, 0, 0, TS_FROM_SCENE, NULL)

#define TS_PARAM_TABLE(effect, S, rows) {effect, rows, sizeof rows / sizeof rows[0], sizeof(S)}

/* Every field in the table set to its default; fields outside the table zeroed. */
void ts_params_default(const ts_param_table *t, void *params);

/* Every field within its range (finite, for reals), an enum one of its
 * items; the message names the effect, the parameter, the range and the value. */
ts_status ts_params_check(const ts_param_table *t, const void *params, ts_error *err);

const ts_param_def *ts_param_find(const ts_param_table *t, const char *name);

/* Address of a row's field in a params struct. */
static inline void *ts_param_field(const ts_param_def *d, void *params) { return (char *)params + d->offset; }
static inline const void *ts_param_field_const(const ts_param_def *d, const void *params)
{
    return (const char *)params + d->offset;
}

/* The index of `item` among an enum row's items, or -1. */
int ts_param_enum_index(const ts_param_def *d, const char *item);

#endif
