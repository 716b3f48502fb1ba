/* test_particles.c - the particle set: growth keeps rows and zeroes new ones,
 * compaction keeps order, a permutation moves every carried row (narrow and
 * wide) and leaves work arrays alone, and state arrays come back from a
 * checkpoint bit for bit; more than the set may hold is refused by name. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/particles.h"

typedef struct things {
    ts_particles set;
    double *x;
    uint32_t *id;
    uint8_t *flag;
    float *history;   /* 20 floats per particle: wider than a cache line's chunk */
    double *force;
} things;

enum { WIDE = 20 };

static void make(things *t, size_t max)
{
    memset(t, 0, sizeof *t);
    const ts_particle_column columns[] = {
        TS_STATE_COLUMN("x", &t->x, TS_ATTR_F64, 1), TS_STATE_COLUMN("id", &t->id, TS_ATTR_U32, 1),
        TS_STATE_COLUMN("flag", &t->flag, TS_ATTR_U8, 1),
        TS_CARRIED_COLUMN("history", &t->history, WIDE * sizeof(float)),
        TS_WORK_COLUMN("force", &t->force, sizeof(double)),
    };
    ts_error err;
    ts_particles_init(&t->set, "things", max);
    CHECK(ts_particles_register(&t->set, columns, 5, &err) == TS_OK);
}

static void fill(things *t, size_t n)
{
    ts_error err;
    CHECK(ts_particles_reserve(&t->set, n, &err) == TS_OK);
    for (size_t i = 0; i < n; i++) {
        t->x[i] = 0.5 * (double)i, t->id[i] = (uint32_t)(1000 + i), t->flag[i] = (uint8_t)(i % 3);
        for (int k = 0; k < WIDE; k++)
            t->history[i * WIDE + k] = (float)(i * 100 + (size_t)k);
        t->force[i] = -1.0;
    }
    t->set.n = n;
}

static void test_grow_compact_permute(void)
{
    things t;
    ts_error err;
    make(&t, 100000);
    fill(&t, 5000);
    CHECK(t.set.cap >= 5000 && t.x[4999] == 0.5 * 4999);
    CHECK(ts_particles_reserve(&t.set, 20000, &err) == TS_OK);
    CHECK(t.x[4999] == 0.5 * 4999 && t.history[4999 * WIDE + 7] == 499907.0f); /* kept */
    CHECK(t.x[12345] == 0.0 && t.id[19999] == 0 && t.history[19999 * WIDE] == 0.0f); /* new rows zeroed */
    CHECK(ts_particles_reserve(&t.set, 100001, &err) == TS_ERR_NOMEM && strstr(err.message, "things"));

    uint8_t *keep = malloc(5000);
    for (size_t i = 0; i < 5000; i++)
        keep[i] = i % 4 != 1;
    CHECK(ts_particles_compact(&t.set, keep) == 1250 && t.set.n == 3750);
    for (size_t k = 0; k < t.set.n; k++) { /* order kept: particle k is the old (k / 3) * 4 + {0, 2, 3} */
        size_t old = k / 3 * 4 + (k % 3 == 0 ? 0 : k % 3 + 1);
        CHECK(t.id[k] == 1000 + old && t.x[k] == 0.5 * (double)old && t.history[k * WIDE + 19] == (float)(old * 100 + 19));
    }
    free(keep);

    uint32_t *order = malloc(t.set.n * sizeof *order);
    uint32_t *before = malloc(t.set.n * sizeof *before);
    memcpy(before, t.id, t.set.n * sizeof *before);
    for (size_t k = 0; k < t.set.n; k++)
        order[k] = (uint32_t)((k * 7919) % t.set.n); /* 7919 is prime to 3750: a permutation */
    t.force[0] = 42.0;
    CHECK(ts_particles_permute(&t.set, order, &err) == TS_OK);
    for (size_t k = 0; k < t.set.n; k++) {
        uint32_t old = before[order[k]] - 1000;
        CHECK(t.id[k] == old + 1000 && t.x[k] == 0.5 * old && t.flag[k] == old % 3);
        CHECK(t.history[k * WIDE] == (float)(old * 100) && t.history[k * WIDE + 19] == (float)(old * 100 + 19));
    }
    CHECK(t.force[0] == 42.0); /* work arrays are not moved */
    CHECK(ts_particles_permute(&t.set, order, &err) == TS_OK); /* twice: the spares swap back and forth */
    CHECK(t.id[0] == before[order[order[0]]]);
    free(order);
    free(before);
    ts_particles_free(&t.set);
    CHECK(t.x == NULL && t.history == NULL && t.force == NULL);
}

static void test_checkpoint_round_trip(void)
{
    things a, b;
    ts_error err;
    static ts_checkpoint cp, back;
    make(&a, 1000);
    fill(&a, 300);
    ts_checkpoint_init(&cp, 3, 0.1);
    CHECK(ts_particles_save(&a.set, &cp, "things", &err) == TS_OK);
    uint8_t *buf;
    size_t size;
    CHECK(ts_checkpoint_encode(&cp, &buf, &size, &err) == TS_OK);
    CHECK(ts_checkpoint_decode(buf, size, "t.tsck", &back, &err) == TS_OK);
    make(&b, 1000);
    CHECK(ts_particles_restore(&b.set, &back, "things", &err) == TS_OK && b.set.n == 300);
    CHECK(memcmp(a.x, b.x, 300 * sizeof *a.x) == 0 && memcmp(a.id, b.id, 300 * sizeof *a.id) == 0 &&
          memcmp(a.flag, b.flag, 300) == 0);
    ts_particles_free(&b.set);
    make(&b, 299); /* a set that may hold fewer refuses it, naming the section */
    CHECK(ts_particles_restore(&b.set, &back, "things", &err) == TS_ERR_CORRUPT && strstr(err.message, "'things'"));
    ts_particles_free(&b.set);
    ts_checkpoint_free(&back);
    ts_checkpoint_free(&cp);
    free(buf);
    ts_particles_free(&a.set);
}

const test_case particles_tests[] = {
    {"particles/grow_compact_permute", test_grow_compact_permute},
    {"particles/checkpoint_round_trip", test_checkpoint_round_trip},
    {NULL, NULL},
};
