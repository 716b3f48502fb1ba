/* test_checkpoint.c - sectioned checkpoints: a round trip keeps every bit of
 * every section (each with its own row count), the rigid-body section restores
 * bodies exactly, and a damaged, truncated, foreign or mismatched checkpoint is
 * refused with a message naming the file and the section. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/checkpoint.h"
#include "core/rigid.h"

typedef struct record {
    int tag;
    ts_rigid_body rb;
} record;

static ts_checkpoint saved, loaded;

/* Two sections of different lengths, values, bodies; encoded into *buf. */
static void make(float *x, uint32_t *id, double *h, record *r, uint8_t **buf, size_t *size)
{
    ts_error err;
    for (int i = 0; i < 5; i++)
        x[i] = 0.1f * (float)i - 3.0f, id[i] = 100u + (uint32_t)i;
    for (int i = 0; i < 3; i++)
        h[i] = 1.0 / (i + 3);
    for (int k = 0; k < 2; k++) {
        memset(&r[k], 0, sizeof r[k]);
        r[k].rb.x = ts_v3(k, 2.5, -1.0 / 3.0), r[k].rb.q = (ts_quat){0.6, 0.0, 0.8, 0.0};
        r[k].rb.P = ts_v3(1e-300, -0.0, 7), r[k].rb.L = ts_v3(M_PI, k, 1e300);
    }
    ts_checkpoint_init(&saved, 17, 0.7);
    const ts_column particles[] = {{"x", TS_ATTR_F32, 1, x}, {"id", TS_ATTR_U32, 1, id}};
    const ts_column bed[] = {{"height", TS_ATTR_F64, 1, h}};
    const ts_value counters[] = {{"next_id", 105}, {"steps", 123456789.0}};
    CHECK(ts_checkpoint_put(&saved, "particles", 5, particles, 2, &err) == TS_OK);
    CHECK(ts_checkpoint_put(&saved, "bed", 3, bed, 1, &err) == TS_OK);
    CHECK(ts_checkpoint_put(&saved, "empty", 0, particles, 2, &err) == TS_OK);
    CHECK(ts_rigid_save(&saved, "bodies", r, offsetof(record, rb), sizeof *r, 2, &err) == TS_OK);
    CHECK(ts_checkpoint_put_values(&saved, "counters", counters, 2, &err) == TS_OK);
    /* a section name used twice is a programming error, refused */
    CHECK(ts_checkpoint_put(&saved, "bed", 3, bed, 1, &err) == TS_ERR_INTERNAL);
    CHECK(ts_checkpoint_encode(&saved, buf, size, &err) == TS_OK);
    ts_checkpoint_free(&saved);
}

static void test_round_trip_exact(void)
{
    float x[5], x2[5];
    uint32_t id[5], id2[5];
    double h[3], h2[3];
    record r[2], r2[2];
    uint8_t *buf;
    size_t size;
    ts_error err;
    make(x, id, h, r, &buf, &size);
    CHECK(ts_checkpoint_decode(buf, size, "cp.tsck", &loaded, &err) == TS_OK);
    CHECK(loaded.frame == 17 && loaded.time == 0.7 && loaded.section_count == 5);
    uint64_t rows = 0;
    CHECK(ts_checkpoint_rows(&loaded, "particles", &rows, &err) == TS_OK && rows == 5);
    CHECK(ts_checkpoint_rows(&loaded, "empty", &rows, &err) == TS_OK && rows == 0);
    const ts_column particles[] = {{"x", TS_ATTR_F32, 1, x2}, {"id", TS_ATTR_U32, 1, id2}};
    const ts_column bed[] = {{"height", TS_ATTR_F64, 1, h2}};
    CHECK(ts_checkpoint_get(&loaded, "particles", 5, particles, 2, &err) == TS_OK);
    CHECK(ts_checkpoint_get(&loaded, "bed", 3, bed, 1, &err) == TS_OK);
    CHECK(memcmp(x, x2, sizeof x) == 0 && memcmp(id, id2, sizeof id) == 0 && memcmp(h, h2, sizeof h) == 0);
    memset(r2, 0, sizeof r2);
    r2[0].tag = r2[1].tag = 42;
    CHECK(ts_rigid_restore(&loaded, "bodies", r2, offsetof(record, rb), sizeof *r2, 2, &err) == TS_OK);
    for (int k = 0; k < 2; k++) {
        CHECK(memcmp(&r[k].rb.x, &r2[k].rb.x, sizeof r[k].rb.x) == 0 && memcmp(&r[k].rb.q, &r2[k].rb.q, sizeof r[k].rb.q) == 0);
        CHECK(memcmp(&r[k].rb.P, &r2[k].rb.P, sizeof r[k].rb.P) == 0 && memcmp(&r[k].rb.L, &r2[k].rb.L, sizeof r[k].rb.L) == 0);
        CHECK(r2[k].tag == 42); /* only the body of each record is written */
    }
    ts_value counters[] = {{"steps", 0}, {"next_id", 0}};
    CHECK(ts_checkpoint_get_values(&loaded, "counters", counters, 2, &err) == TS_OK);
    CHECK(counters[0].value == 123456789.0 && counters[1].value == 105);

    /* what the scene does not match is named: the section, the column, the rows */
    CHECK(ts_rigid_restore(&loaded, "bodies", r2, offsetof(record, rb), sizeof *r2, 1, &err) == TS_ERR_CORRUPT &&
          strstr(err.message, "cp.tsck") && strstr(err.message, "'bodies'") && strstr(err.message, "2 rows"));
    CHECK(ts_checkpoint_get(&loaded, "water", 5, particles, 2, &err) == TS_ERR_CORRUPT &&
          strstr(err.message, "'water' is missing"));
    const ts_column wrong_type[] = {{"x", TS_ATTR_F64, 1, h2}};
    CHECK(ts_checkpoint_get(&loaded, "particles", 5, wrong_type, 1, &err) == TS_ERR_CORRUPT &&
          strstr(err.message, "column 'x'"));
    ts_checkpoint_free(&loaded);
    free(buf);
}

static void test_damage_refused(void)
{
    float x[5];
    uint32_t id[5];
    double h[3];
    record r[2];
    uint8_t *buf;
    size_t size;
    ts_error err;
    make(x, id, h, r, &buf, &size);
    /* every single flipped byte and every truncation is refused, never misread */
    for (size_t at = 0; at < size; at++) {
        buf[at] ^= 0x5a;
        CHECK(ts_checkpoint_decode(buf, size, "cp.tsck", &loaded, &err) == TS_ERR_CORRUPT);
        CHECK(strstr(err.message, "cp.tsck") != NULL);
        buf[at] ^= 0x5a;
    }
    for (size_t cut = 0; cut < size; cut++)
        CHECK(ts_checkpoint_decode(buf, cut, "cp.tsck", &loaded, &err) == TS_ERR_CORRUPT);
    /* a particle frame (an old Tsubu's checkpoint.tspf) is not a checkpoint */
    static const uint8_t tspf[8] = {0x89, 'T', 'S', 'U', 'B', 'U', '\r', '\n'};
    memcpy(buf, tspf, 8);
    CHECK(ts_checkpoint_decode(buf, size, "cp.tsck", &loaded, &err) == TS_ERR_CORRUPT &&
          strstr(err.message, "not a Tsubu checkpoint"));
    free(buf);
}

const test_case checkpoint_tests[] = {
    {"checkpoint/round_trip_exact", test_round_trip_exact},
    {"checkpoint/damage_refused", test_damage_refused},
    {NULL, NULL},
};
