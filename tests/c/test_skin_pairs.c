/* test_skin_pairs.c - the kept candidates hold every pair within the radius, in ascending order, after any
 * motion; they are searched again only when a pair could have come within reach, and not for a set moving
 * as a whole, nor for the flight of particles left out of the pairs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/skin_pairs.h"

#define NA 600
#define NB 700

typedef struct cloud {
    float x[NB], y[NB], z[NB];
} cloud;

static float uniform(uint64_t *state) { return (float)((*state = *state * 6364136223846793005ull + 1442695040888963407ull) >> 40) / (float)(1 << 24); }

/* n points in a 30 cm box: about 50 within the radius of each */
static void scatter(cloud *c, size_t n, uint64_t *state)
{
    for (size_t i = 0; i < n; i++)
        c->x[i] = 0.3f * uniform(state), c->y[i] = 0.3f * uniform(state), c->z[i] = 0.3f * uniform(state);
}

/* every pair closer than the radius is a candidate, each a's candidates ascend, and (self) only b < a */
static int holds_every_pair(const ts_skin_pairs *p, const cloud *a, size_t na, const cloud *b, size_t nb, int self)
{
    const float r2 = (float)(p->radius * p->radius);
    int ok = 1;
    for (size_t i = 0; i < na; i++) {
        for (uint32_t k = p->start[i] + 1; k < p->start[i + 1]; k++)
            ok &= p->other[k - 1] < p->other[k];
        size_t within = 0, listed = 0;
        for (size_t j = 0; j < (self ? i : nb); j++) {
            float dx = b->x[j] - a->x[i], dy = b->y[j] - a->y[i], dz = b->z[j] - a->z[i];
            if (dx * dx + dy * dy + dz * dz >= r2)
                continue;
            within++;
            for (uint32_t k = p->start[i]; k < p->start[i + 1]; k++)
                listed += p->other[k] == j;
        }
        ok &= within == listed;
    }
    return ok;
}

static void test_candidates_hold_every_pair_through_motion(void)
{
    static cloud a, b;
    uint64_t state = 7;
    scatter(&a, NA, &state);
    scatter(&b, NB, &state);
    ts_skin_pairs p;
    ts_skin_pairs_init(&p, 0.08, 0.02);
    ts_error err;
    int searched, searches = 0;
    for (int step = 0; step < 60; step++) {
        CHECK(ts_skin_pairs_update(&p, a.x, a.y, a.z, NA, b.x, b.y, b.z, NB, &searched, &err) == TS_OK);
        searches += searched;
        CHECK(holds_every_pair(&p, &a, NA, &b, NB, 0));
        for (size_t i = 0; i < NB; i++) { /* a jitter of up to 5 mm a step, and a drift of 1 cm */
            if (i < NA)
                a.x[i] += 0.01f * (uniform(&state) - 0.5f), a.z[i] += 0.01f;
            b.y[i] += 0.01f * (uniform(&state) - 0.5f), b.z[i] += 0.01f;
        }
    }
    CHECK(searches > 1 && searches < 30); /* searched again as the jitter used up the skin, not every step */
    /* the same list by b: each b's a's ascending, every candidate once */
    uint32_t *bstart = malloc((NB + 1) * sizeof *bstart), *owner = malloc((p.count + 1) * sizeof *owner);
    uint32_t *pair = malloc((p.count + 1) * sizeof *pair);
    ts_skin_pairs_by_b(&p, bstart, owner, pair);
    CHECK(bstart[0] == 0 && bstart[NB] == p.count);
    size_t mismatched = 0;
    for (size_t j = 0; j < NB; j++)
        for (uint32_t c = bstart[j]; c < bstart[j + 1]; c++) {
            uint32_t i = owner[c], found = 0;
            mismatched += c > bstart[j] && owner[c - 1] >= i;
            mismatched += pair[c] < p.start[i] || pair[c] >= p.start[i + 1] || p.other[pair[c]] != j;
            for (uint32_t k = p.start[i]; k < p.start[i + 1]; k++)
                found += p.other[k] == j;
            mismatched += found != 1;
        }
    CHECK(mismatched == 0);
    free(bstart);
    free(owner);
    free(pair);
    ts_skin_pairs_free(&p);
}

static void test_a_set_moving_whole_keeps_its_list(void)
{
    static cloud a;
    uint64_t state = 11;
    scatter(&a, NB, &state);
    ts_skin_pairs p;
    ts_skin_pairs_init(&p, 0.05, 0.01);
    ts_error err;
    int searched, searches = 0;
    for (int step = 0; step < 40; step++) { /* falling and thrown sideways, metres in all: one search */
        CHECK(ts_skin_pairs_update(&p, a.x, a.y, a.z, NB, a.x, a.y, a.z, NB, &searched, &err) == TS_OK);
        searches += searched;
        CHECK(holds_every_pair(&p, &a, NB, &a, NB, 1));
        for (size_t i = 0; i < NB; i++)
            a.x[i] += 0.05f, a.z[i] -= 0.01f * step;
    }
    CHECK(searches == 1);
    /* a renumbered set searches again, though its size is the same */
    ts_skin_pairs_invalidate(&p);
    CHECK(ts_skin_pairs_update(&p, a.x, a.y, a.z, NB, a.x, a.y, a.z, NB, &searched, &err) == TS_OK && searched);
    /* two points closing in by more than the skin: searched again, and the new pair found */
    a.x[0] = a.x[1] + 0.04f, a.y[0] = a.y[1], a.z[0] = a.z[1];
    CHECK(ts_skin_pairs_update(&p, a.x, a.y, a.z, NB, a.x, a.y, a.z, NB, &searched, &err) == TS_OK && searched);
    CHECK(holds_every_pair(&p, &a, NB, &a, NB, 1));
    ts_skin_pairs_free(&p);
}

/* A self list leaving marked particles out (grains in flight): they are in no pair, and their flight does
 * not make the list be searched again. */
static void test_marked_particles_are_left_out(void)
{
    static cloud a;
    static uint8_t flags[NB];
    uint64_t state = 13;
    scatter(&a, NB, &state);
    for (size_t i = 0; i < NB; i++)
        flags[i] = i % 5 == 0 ? 4 : 1; /* bit 4 marks; bit 1 is some other flag */
    ts_skin_pairs p;
    ts_skin_pairs_init(&p, 0.05, 0.01);
    p.skip = flags, p.skip_bits = 4;
    ts_error err;
    int searched, searches = 0;
    for (int step = 0; step < 20; step++) {
        CHECK(ts_skin_pairs_update(&p, a.x, a.y, a.z, NB, a.x, a.y, a.z, NB, &searched, &err) == TS_OK);
        searches += searched;
        size_t wrong = 0, kept = 0;
        for (size_t i = 0; i < NB; i++)
            for (uint32_t k = p.start[i]; k < p.start[i + 1]; k++)
                wrong += flags[i] == 4 || flags[p.other[k]] == 4, kept++;
        CHECK(wrong == 0 && kept > NB);
        for (size_t i = 0; i < NB; i += 5) /* the marked ones fly off, a metre a step */
            a.z[i] += 1.0f;
    }
    CHECK(searches == 1);
    /* unmarked ones within reach of each other are all listed: compare with the list of the unmarked alone */
    ts_skin_pairs_invalidate(&p);
    CHECK(ts_skin_pairs_update(&p, a.x, a.y, a.z, NB, a.x, a.y, a.z, NB, &searched, &err) == TS_OK);
    for (size_t i = 0; i < NB; i += 5)
        a.z[i] = 1e3f + (float)i; /* far from everything */
    CHECK(holds_every_pair(&p, &a, NB, &a, NB, 1));
    ts_skin_pairs_free(&p);
}

const test_case skin_pairs_tests[] = {
    {"skin_pairs/candidates_hold_every_pair_through_motion", test_candidates_hold_every_pair_through_motion},
    {"skin_pairs/a_set_moving_whole_keeps_its_list", test_a_set_moving_whole_keeps_its_list},
    {"skin_pairs/marked_particles_are_left_out", test_marked_particles_are_left_out},
    {NULL, NULL},
};
