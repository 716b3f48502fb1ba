/* skin_pairs.h - pairs of particles closer than a radius, found once and kept for many steps.
 *
 * A neighbour search each step costs more than most of the work it serves: a
 * grid built again and ~200 candidates tried per particle for the ~30 within
 * the radius. Here the search keeps the candidates within radius + skin (a
 * Verlet list) and the solver filters them by the radius each step; the list
 * is searched again only when a pair could have come within the radius
 * unseen. That is when the largest displacement of an `a` particle plus the
 * largest of a `b` particle since the search, both measured from the `a`
 * particles' mean displacement, pass the skin: a pair's distance shrinks by at
 * most |da - db| = |(da - c) - (db - c)| for any c, and taking c as the mean
 * leaves a body that moves as a whole (falling, thrown) on one list.
 *
 * Each `a` particle's candidates are in ascending `b` order, whenever they
 * were found: a solver that sums over them in that order gets the same bits
 * as from a fresh search every step, so a resumed bake (which searches at its
 * first step) matches an uninterrupted one. A list of one set with itself
 * (the same arrays as a and b) keeps each pair once, under the later particle.
 * A list of one set with itself may leave particles out (`skip`): they are in
 * no pair and their motion does not count (grains in flight, which touch
 * nothing); the caller invalidates the list when it marks or unmarks one.
 */
#ifndef TSUBU_SKIN_PAIRS_H
#define TSUBU_SKIN_PAIRS_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "status.h"

typedef struct ts_skin_pairs {
    double radius, skin;
    size_t na, nb;              /* the sets' sizes at the search */
    uint32_t *start;            /* na + 1: a's candidates are other[start[a] .. start[a + 1]) */
    uint32_t *other;            /* their b, ascending */
    size_t count, cap, start_cap;
    float *ref;                 /* positions at the search: x, y, z of the a's, then of the b's */
    size_t ref_cap;
    int stale;                  /* the sets changed in ways sizes do not show (renumbered) */
    const uint8_t *skip;        /* self lists: particle i is left out when skip[i] & skip_bits (NULL: none) */
    uint8_t skip_bits;
    long searches;
    ts_grid grid;
    struct ts_search_block {    /* the search's scratch, kept between searches: each block of a's candidates */
        uint32_t *candidates;
        size_t cap;
    } *found;
    size_t blocks;
} ts_skin_pairs;

void ts_skin_pairs_init(ts_skin_pairs *p, double radius, double skin);
void ts_skin_pairs_free(ts_skin_pairs *p);

/* The next update searches again (a set was renumbered, a state restored). */
void ts_skin_pairs_invalidate(ts_skin_pairs *p);

/* Make the candidates hold every pair now closer than the radius: keeps them if they do (*searched 0),
 * else searches (*searched 1). Passing the same arrays for a and b lists one set with itself. */
ts_status ts_skin_pairs_update(ts_skin_pairs *p, const float *ax, const float *ay, const float *az, size_t na,
                               const float *bx, const float *by, const float *bz, size_t nb, int *searched,
                               ts_error *err);

/* The two halves of an update, for a caller with work to do before the candidates are replaced: is a search
 * due (1), and the search itself. */
int ts_skin_pairs_due(const ts_skin_pairs *p, const float *ax, const float *ay, const float *az, size_t na,
                      const float *bx, const float *by, const float *bz, size_t nb);
ts_status ts_skin_pairs_search(ts_skin_pairs *p, const float *ax, const float *ay, const float *az, size_t na,
                               const float *bx, const float *by, const float *bz, size_t nb, ts_error *err);

/* The same candidates by b: b's a's are owner[bstart[b] .. bstart[b + 1]), ascending, and pair[...] their
 * indices into p->other (pair may be NULL). bstart holds nb + 1, owner and pair p->count. */
void ts_skin_pairs_by_b(const ts_skin_pairs *p, uint32_t *bstart, uint32_t *owner, uint32_t *pair);

#endif
