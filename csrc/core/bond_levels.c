/* bond_levels.c - hierarchical spring levels and eq. 1 (see bond_levels.h). */
#include "bond_levels.h"

#include <math.h>
#include <stdlib.h>

#define NO_MATE UINT32_MAX

uint32_t ts_find_root(uint32_t *parent, uint32_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

typedef struct by_length { double length; size_t index; } by_length;

static int compare_length(const void *pa, const void *pb)
{
    const by_length *a = pa, *b = pb;
    if (a->length != b->length)
        return a->length < b->length ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* One level h over the springs still without one: pair clusters greedily,
 * shortest spring first, then join the pairs. Roots do not change during
 * the pass (the joining comes after), so "cluster" means "of lower levels".
 * Returns how many springs got a level. */
static size_t assign_level(int h, const ts_edge *springs, const by_length *order, size_t m, int *level,
                           uint32_t *parent, uint32_t *mate, uint32_t *paired)
{
    size_t assigned = 0, n_paired = 0;
    for (size_t k = 0; k < m; k++) {
        size_t i = order[k].index;
        if (level[i] >= 0)
            continue;
        uint32_t A = ts_find_root(parent, springs[i].a), B = ts_find_root(parent, springs[i].b);
        if (A == B) {               /* its ends were joined below: it belongs where they were joined */
            level[i] = h > 0 ? h - 1 : 0;
            assigned++;
        } else if (mate[A] == B) {  /* fig. 2 d, e: another spring between the same two clusters */
            level[i] = h;
            assigned++;
        } else if (mate[A] == NO_MATE && mate[B] == NO_MATE) {
            mate[A] = B, mate[B] = A;
            paired[n_paired++] = A;
            level[i] = h;
            assigned++;
        }
    }
    for (size_t k = 0; k < n_paired; k++) {
        uint32_t A = paired[k], B = mate[A];
        mate[A] = mate[B] = NO_MATE;
        parent[A] = B;
    }
    return assigned;
}

ts_status ts_bond_levels(size_t element_count, const ts_edge *springs, const double *length, const uint8_t *hard,
                         size_t spring_count, int *level, int *max_level, ts_error *err)
{
    *max_level = 0;
    uint32_t *parent = malloc((element_count + 1) * sizeof *parent);
    uint32_t *mate = malloc((element_count + 1) * sizeof *mate);
    uint32_t *paired = malloc((element_count + 1) * sizeof *paired);
    by_length *order = malloc((spring_count + 1) * sizeof *order);
    if (!parent || !mate || !paired || !order) {
        free(parent), free(mate), free(paired), free(order);
        return ts_fail(err, TS_ERR_NOMEM, "spring levels: out of memory for %zu springs", spring_count);
    }
    for (size_t e = 0; e < element_count; e++)
        parent[e] = (uint32_t)e, mate[e] = NO_MATE;
    size_t left = spring_count;
    int h = 0, any_hard = 0;
    for (size_t i = 0; i < spring_count; i++) {
        order[i] = (by_length){length[i], i};
        level[i] = -1;
        if (hard && hard[i]) {      /* fig. 4 b: the hard region is the lowest, strongest level */
            level[i] = 0, left--, any_hard = 1;
            uint32_t A = ts_find_root(parent, springs[i].a), B = ts_find_root(parent, springs[i].b);
            if (A != B)
                parent[A] = B;
        }
    }
    qsort(order, spring_count, sizeof *order, compare_length);
    h = any_hard;
    while (left > 0) {              /* fig. 2 b-e, fig. 4 c-f */
        left -= assign_level(h, springs, order, spring_count, level, parent, mate, paired);
        h++;
    }
    for (size_t i = 0; i < spring_count; i++)
        if (level[i] > *max_level)
            *max_level = level[i];
    free(parent), free(mate), free(paired), free(order);
    return TS_OK;
}

double ts_bond_strength(int h, int H, double p0, double pH, double n)
{
    if (H <= 0)
        return p0;
    return p0 + (pH - p0) * pow((double)h / H, n);    /* eq. 1 */
}
