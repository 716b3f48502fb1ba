/* particles.h - a particle set: per-particle arrays registered once, grown,
 * compacted, put in cell order and checkpointed together.
 *
 * Each solver keeps its arrays as plain pointers in its own struct (the hot
 * loops read s->x[i], structure of arrays); it registers the address of each
 * pointer once, with the bytes per particle and what the array is:
 *
 *   TS_STATE   the particle's own state: moves with it when the set is
 *              compacted or sorted, and is saved in checkpoints under its name;
 *   TS_CARRIED moves with the particle, but the solver saves it itself (or it
 *              is recomputed before it is read);
 *   TS_WORK    per-step results (forces, densities, neighbour lists): only
 *              sized with the set.
 *
 * Every array has cap + 1 rows (a list's end offset fits), new rows zeroed.
 * (SPlisHSPlasH registers its fields the same way, with addField.)
 */
#ifndef TSUBU_PARTICLES_H
#define TSUBU_PARTICLES_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "checkpoint.h"
#include "status.h"

#define TS_PARTICLES_MAX_COLUMNS 48

typedef enum ts_column_role { TS_WORK = 0, TS_CARRIED = 1, TS_STATE = 2 } ts_column_role;

typedef struct ts_particle_column {
    const char *name;       /* in checkpoints (TS_STATE) and messages */
    void *field;            /* the address of the solver's pointer (T **) */
    ts_column_role role;
    ts_attr_type type;      /* TS_STATE: as saved; rows are components values of it */
    int components;
    size_t width;           /* bytes per particle (from type and components for TS_STATE) */
} ts_particle_column;

/* Shorthands for a registration list. */
#define TS_STATE_COLUMN(name, field, type, components) {(name), (field), TS_STATE, (type), (components), 0}
#define TS_CARRIED_COLUMN(name, field, width) {(name), (field), TS_CARRIED, 0, 0, (width)}
#define TS_WORK_COLUMN(name, field, width) {(name), (field), TS_WORK, 0, 0, (width)}

typedef struct ts_particles {
    const char *what;       /* "water", "sand elements": messages */
    size_t n, cap, max;
    int count;
    ts_particle_column columns[TS_PARTICLES_MAX_COLUMNS];
    char *scratch;          /* for permuting wide rows: SORT_CHUNK bytes per particle */
    size_t scratch_rows;
    void *spare[4];         /* for permuting rows of 1, 2, 4, 8 bytes: cap + 1 rows each */
} ts_particles;

/* An empty set of at most `max` particles. */
void ts_particles_init(ts_particles *ps, const char *what, size_t max);
/* Register arrays (their pointers must be NULL); they are allocated at the
 * current capacity. */
ts_status ts_particles_register(ts_particles *ps, const ts_particle_column *columns, size_t n, ts_error *err);
/* Room for `need` particles (doubling; at most max). The arrays may move:
 * pointers into them taken before are stale. */
ts_status ts_particles_reserve(ts_particles *ps, size_t need, ts_error *err);
/* Free every array and set the solver's pointers to NULL. */
void ts_particles_free(ts_particles *ps);

/* Copy particle `from` over `to` (carried and state arrays). */
void ts_particles_copy(ts_particles *ps, size_t to, size_t from);
/* Keep the particles whose keep[i] is nonzero, in order (so a bake stays
 * deterministic); returns how many were removed. */
size_t ts_particles_compact(ts_particles *ps, const uint8_t *keep);
/* Reorder: particle k becomes the old particle order[k] (a permutation of
 * 0..n-1, e.g. a grid's cell order), for every carried and state array. */
ts_status ts_particles_permute(ts_particles *ps, const uint32_t *order, ts_error *err);

/* The state arrays as a checkpoint section of n rows, and back (the set
 * grows to the section's rows; refused beyond max). */
ts_status ts_particles_save(const ts_particles *ps, ts_checkpoint *cp, const char *section, ts_error *err);
ts_status ts_particles_restore(ts_particles *ps, const ts_checkpoint *cp, const char *section, ts_error *err);

#endif
