/* particles.c - registered per-particle arrays (see particles.h). */
#include "particles.h"

#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "parallel.h"

/* Rows of 1, 2, 4 or 8 bytes are gathered into a spare array of their width,
 * which then takes the old one's place (one pass, as a solver's own sort
 * would); wider rows (contact histories) move through a scratch SORT_CHUNK
 * bytes at a time (a cache line: 64 bytes per particle, not a copy of each). */
#define SORT_CHUNK 64

static void **field_of(const ts_particle_column *c) { return (void **)c->field; }

void ts_particles_init(ts_particles *ps, const char *what, size_t max)
{
    memset(ps, 0, sizeof *ps);
    ps->what = what;
    ps->max = max;
}

static void free_spares(ts_particles *ps)
{
    for (int w = 0; w < 4; w++) {
        free(ps->spare[w]);
        ps->spare[w] = NULL;
    }
}

/* Make one array hold cap + 1 rows, the rows from `old_rows` on zeroed. */
static int resize_column(const ts_particle_column *c, size_t old_rows, size_t cap)
{
    void **p = field_of(c);
    if (ts_resize(p, cap + 1, c->width) < 0)
        return -1;
    if (cap + 1 > old_rows)
        memset((char *)*p + old_rows * c->width, 0, (cap + 1 - old_rows) * c->width);
    return 0;
}

ts_status ts_particles_register(ts_particles *ps, const ts_particle_column *columns, size_t n, ts_error *err)
{
    for (size_t k = 0; k < n; k++) {
        if (ps->count == TS_PARTICLES_MAX_COLUMNS)
            return ts_fail(err, TS_ERR_INTERNAL, "%s: more than %d particle arrays", ps->what,
                           TS_PARTICLES_MAX_COLUMNS);
        ts_particle_column c = columns[k];
        if (c.role == TS_STATE)
            c.width = ts_attr_type_size(c.type) * (size_t)c.components;
        if (c.width == 0 || *field_of(&c) != NULL)
            return ts_fail(err, TS_ERR_INTERNAL, "%s: particle array '%s' has no width or is registered twice",
                           ps->what, c.name);
        if (resize_column(&c, 0, ps->cap) < 0)
            return ts_fail(err, TS_ERR_NOMEM, "%s: out of memory for %zu particles", ps->what, ps->cap);
        ps->columns[ps->count++] = c;
    }
    return TS_OK;
}

ts_status ts_particles_reserve(ts_particles *ps, size_t need, ts_error *err)
{
    if (need <= ps->cap)
        return TS_OK;
    if (need > ps->max)
        return ts_fail(err, TS_ERR_NOMEM, "%s: %zu particles are needed, more than the most allowed (%zu)", ps->what,
                       need, ps->max);
    size_t cap = ts_grown_capacity(ps->cap, need, 4096);
    if (cap > ps->max)
        cap = ps->max;
    for (int k = 0; k < ps->count; k++)
        if (resize_column(&ps->columns[k], ps->cap + 1, cap) < 0)
            return ts_fail(err, TS_ERR_NOMEM, "%s: out of memory for %zu particles", ps->what, cap);
    ps->cap = cap;
    free_spares(ps); /* made again at the new size when next needed */
    return TS_OK;
}

void ts_particles_free(ts_particles *ps)
{
    for (int k = 0; k < ps->count; k++) {
        void **p = field_of(&ps->columns[k]);
        free(*p);
        *p = NULL;
    }
    free(ps->scratch);
    ps->scratch = NULL;
    free_spares(ps);
    ps->count = 0;
    ps->n = ps->cap = ps->scratch_rows = 0;
}

void ts_particles_copy(ts_particles *ps, size_t to, size_t from)
{
    for (int k = 0; k < ps->count; k++) {
        const ts_particle_column *c = &ps->columns[k];
        if (c->role == TS_WORK)
            continue;
        char *base = *field_of(c);
        memcpy(base + to * c->width, base + from * c->width, c->width);
    }
}

/* One array compacted in place, rows from `first` (the first removed) on. */
#define COMPACT(type)                                                                                           \
    do {                                                                                                        \
        type *a_ = base;                                                                                        \
        for (size_t i = first; i < n; i++)                                                                      \
            if (keep[i])                                                                                        \
                a_[kept++] = a_[i];                                                                             \
    } while (0)

size_t ts_particles_compact(ts_particles *ps, const uint8_t *keep)
{
    const size_t n = ps->n;
    size_t first = 0;
    while (first < n && keep[first])
        first++;
    size_t kept = first;
    int moved = 0;
    for (int k = 0; k < ps->count; k++) { /* array by array: each is read once, in order */
        const ts_particle_column *c = &ps->columns[k];
        if (c->role == TS_WORK)
            continue;
        void *base = *field_of(c);
        kept = first, moved = 1;
        switch (c->width) {
        case 1: COMPACT(uint8_t); break;
        case 2: COMPACT(uint16_t); break;
        case 4: COMPACT(uint32_t); break;
        case 8: COMPACT(uint64_t); break;
        default:
            for (size_t i = first; i < n; i++)
                if (keep[i])
                    memcpy((char *)base + kept++ * c->width, (char *)base + i * c->width, c->width);
        }
    }
    if (!moved)
        for (size_t i = first; i < n; i++)
            kept += keep[i] != 0;
    ps->n = kept;
    return n - kept;
}

/* Narrow rows: gather into `spare`, which becomes the array; the old array is the new spare. */
#define GATHER(type)                                                                                            \
    do {                                                                                                        \
        const type *in_ = in;                                                                                   \
        type *out_ = out;                                                                                       \
        _Pragma("omp parallel for schedule(static) if (n >= TS_PARALLEL_MIN)")                                  \
        for (size_t k = 0; k < n; k++)                                                                          \
            out_[k] = in_[order[k]];                                                                            \
    } while (0)

static void gather_swap(const ts_particle_column *c, const uint32_t *order, size_t n, void **spare)
{
    void **p = field_of(c);
    const void *in = *p;
    void *out = *spare;
    switch (c->width) { /* typed copies: a memcpy call per row would cost more than the copy */
    case 1: GATHER(uint8_t); break;
    case 2: GATHER(uint16_t); break;
    case 4: GATHER(uint32_t); break;
    default: GATHER(uint64_t); break;
    }
    *spare = *p;
    *p = out;
}

/* Wide rows: SORT_CHUNK bytes of every row at a time through the scratch. */
static void gather_chunks(const ts_particle_column *c, const uint32_t *order, size_t n, char *scratch)
{
    char *base = *field_of(c);
    const size_t width = c->width;
    for (size_t at = 0; at < width; at += SORT_CHUNK) {
        size_t part = width - at < SORT_CHUNK ? width - at : SORT_CHUNK;
        #pragma omp parallel for schedule(static) if (n >= TS_PARALLEL_MIN)
        for (size_t k = 0; k < n; k++)
            memcpy(scratch + k * part, base + (size_t)order[k] * width + at, part);
        #pragma omp parallel for schedule(static) if (n >= TS_PARALLEL_MIN)
        for (size_t k = 0; k < n; k++)
            memcpy(base + k * width + at, scratch + k * part, part);
    }
}

ts_status ts_particles_permute(ts_particles *ps, const uint32_t *order, ts_error *err)
{
    for (int k = 0; k < ps->count; k++) {
        const ts_particle_column *c = &ps->columns[k];
        if (c->role == TS_WORK)
            continue;
        int w = c->width == 1 ? 0 : c->width == 2 ? 1 : c->width == 4 ? 2 : c->width == 8 ? 3 : -1;
        if (w >= 0 && !ps->spare[w] && !(ps->spare[w] = calloc(ps->cap + 1, c->width)))
            return ts_fail(err, TS_ERR_NOMEM, "%s: out of memory sorting %zu particles", ps->what, ps->n);
        if (w < 0 && ps->scratch_rows < ps->cap + 1) {
            char *grown = realloc(ps->scratch, (ps->cap + 1) * SORT_CHUNK);
            if (!grown)
                return ts_fail(err, TS_ERR_NOMEM, "%s: out of memory sorting %zu particles", ps->what, ps->n);
            ps->scratch = grown;
            ps->scratch_rows = ps->cap + 1;
        }
        if (w >= 0)
            gather_swap(c, order, ps->n, &ps->spare[w]);
        else
            gather_chunks(c, order, ps->n, ps->scratch);
    }
    return TS_OK;
}

static size_t state_columns(const ts_particles *ps, ts_column *out)
{
    size_t n = 0;
    for (int k = 0; k < ps->count; k++) {
        const ts_particle_column *c = &ps->columns[k];
        if (c->role == TS_STATE)
            out[n++] = (ts_column){c->name, c->type, c->components, *field_of(c)};
    }
    return n;
}

ts_status ts_particles_save(const ts_particles *ps, ts_checkpoint *cp, const char *section, ts_error *err)
{
    ts_column columns[TS_PARTICLES_MAX_COLUMNS];
    size_t n = state_columns(ps, columns);
    return ts_checkpoint_put(cp, section, ps->n, columns, n, err);
}

ts_status ts_particles_restore(ts_particles *ps, const ts_checkpoint *cp, const char *section, ts_error *err)
{
    uint64_t rows;
    ts_status st = ts_checkpoint_rows(cp, section, &rows, err);
    if (st == TS_OK && rows > ps->max)
        st = ts_fail(err, TS_ERR_CORRUPT, "%s: the section '%s' holds %llu particles, more than this scene can have "
                     "(%zu); bake again from the start", cp->source, section, (unsigned long long)rows, ps->max);
    if (st == TS_OK)
        st = ts_particles_reserve(ps, (size_t)rows, err);
    if (st != TS_OK)
        return st;
    ts_column columns[TS_PARTICLES_MAX_COLUMNS];
    size_t n = state_columns(ps, columns); /* after reserving: the arrays may have moved */
    st = ts_checkpoint_get(cp, section, rows, columns, n, err);
    ps->n = st == TS_OK ? (size_t)rows : 0;
    return st;
}
