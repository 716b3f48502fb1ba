/* test_cache.c - particle cache frames: exact round trips, compression of
 * shuffled floats, and a reader that reports every truncation, bit flip,
 * empty or foreign file as corrupt with the file named; the background
 * writer writes every queued frame and reports failures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/cache.h"

enum { N = 1000 };

typedef struct sample_columns {
    float position[3 * N];
    uint32_t id[N];
    double mass[N];
} sample_columns;

static void fill_sample(sample_columns *s, ts_frame *f)
{
    for (int i = 0; i < N; i++) {
        s->position[3 * i + 0] = 0.01f * (float)(i % 10);
        s->position[3 * i + 1] = 0.01f * (float)((i / 10) % 10);
        s->position[3 * i + 2] = 0.01f * (float)(i / 100) + 1.0f;
        s->id[i] = (uint32_t)(7 * i + 3);
        s->mass[i] = 1.0 / (i + 1);
    }
    ts_frame_init(f, 12, 0.5, N);
    ts_error err;
    CHECK(ts_frame_add(f, "position", TS_ATTR_F32, 3, s->position, &err) == TS_OK);
    CHECK(ts_frame_add(f, "id", TS_ATTR_U32, 1, s->id, &err) == TS_OK);
    CHECK(ts_frame_add(f, "mass", TS_ATTR_F64, 1, s->mass, &err) == TS_OK);
}

static void test_round_trip(void)
{
    static sample_columns s;
    ts_frame f, g;
    ts_error err;
    fill_sample(&s, &f);
    uint8_t *buf;
    size_t size;
    CHECK(ts_frame_encode(&f, 6, &buf, &size, &err) == TS_OK);
    CHECK(ts_frame_decode(buf, size, "mem", &g, &err) == TS_OK);
    CHECK(g.frame == 12 && g.time == 0.5 && g.count == N && g.attribute_count == 3);
    const ts_attribute *p = ts_frame_find(&g, "position"), *id = ts_frame_find(&g, "id"), *m = ts_frame_find(&g, "mass");
    CHECK(p && p->type == TS_ATTR_F32 && p->components == 3 && memcmp(p->data, s.position, sizeof s.position) == 0);
    CHECK(id && id->type == TS_ATTR_U32 && memcmp(id->data, s.id, sizeof s.id) == 0);
    CHECK(m && m->type == TS_ATTR_F64 && memcmp(m->data, s.mass, sizeof s.mass) == 0);
    /* a lattice of floats compresses well once byte-shuffled */
    CHECK(size < (sizeof s.position + sizeof s.id) / 2 + sizeof s.mass);
    ts_frame_free(&g);
    free(buf);
}

static void test_empty_frame(void)
{
    ts_frame f, g;
    ts_error err;
    ts_frame_init(&f, 0, 0.0, 0);
    CHECK(ts_frame_add(&f, "position", TS_ATTR_F32, 3, NULL, &err) == TS_OK);
    uint8_t *buf;
    size_t size;
    CHECK(ts_frame_encode(&f, 1, &buf, &size, &err) == TS_OK);
    CHECK(ts_frame_decode(buf, size, "mem", &g, &err) == TS_OK);
    CHECK(g.count == 0 && g.attribute_count == 1);
    ts_frame_free(&g);
    free(buf);
}

static void test_bad_attributes_rejected(void)
{
    float x[3] = {0};
    ts_frame f;
    ts_error err;
    ts_frame_init(&f, 0, 0.0, 1);
    CHECK(ts_frame_add(&f, "bad name", TS_ATTR_F32, 1, x, &err) == TS_ERR_INVALID);
    CHECK(ts_frame_add(&f, "x", TS_ATTR_F32, 0, x, &err) == TS_ERR_INVALID);
    CHECK(ts_frame_add(&f, "x", (ts_attr_type)99, 1, x, &err) == TS_ERR_INVALID);
    CHECK(ts_frame_add(&f, "x", TS_ATTR_F32, 1, x, &err) == TS_OK);
    CHECK(ts_frame_add(&f, "x", TS_ATTR_F32, 1, x, &err) == TS_ERR_INVALID);
    CHECK(strstr(err.message, "twice") != NULL);
}

/* Every prefix and every single-bit flip of a valid file is refused. */
static void test_truncated_and_flipped(void)
{
    float pos[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    ts_frame f, g;
    ts_error err;
    ts_frame_init(&f, 3, 0.1, 4);
    CHECK(ts_frame_add(&f, "position", TS_ATTR_F32, 3, pos, &err) == TS_OK);
    uint8_t *buf;
    size_t size;
    CHECK(ts_frame_encode(&f, 6, &buf, &size, &err) == TS_OK);
    int accepted = 0;
    for (size_t n = 0; n < size; n++) {
        if (ts_frame_decode(buf, n, "frame_000003.tspf", &g, &err) != TS_ERR_CORRUPT)
            accepted++;
        else if (!strstr(err.message, "frame_000003.tspf"))
            accepted++;
    }
    CHECK(accepted == 0);
    for (size_t byte = 0; byte < size; byte++)
        for (int bit = 0; bit < 8; bit++) {
            buf[byte] ^= (uint8_t)(1 << bit);
            ts_status st = ts_frame_decode(buf, size, "f", &g, &err);
            if (st == TS_OK) {
                accepted++;
                ts_frame_free(&g);
            }
            buf[byte] ^= (uint8_t)(1 << bit);
        }
    CHECK(accepted == 0);
    CHECK(ts_frame_decode(buf, 0, "empty.tspf", &g, &err) == TS_ERR_CORRUPT && strstr(err.message, "empty"));
    const uint8_t png[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    CHECK(ts_frame_decode(png, sizeof png, "x.png", &g, &err) == TS_ERR_CORRUPT && strstr(err.message, "not a Tsubu"));
    free(buf);
}

static void temp_dir(char *out, size_t size)
{
    snprintf(out, size, "/tmp/tsubu-ctest-XXXXXX");
    CHECK(mkdtemp(out) != NULL);
}

static void test_files_and_writer(void)
{
    static sample_columns s;
    char dir[64], path[128];
    temp_dir(dir, sizeof dir);
    ts_frame f, g;
    ts_error err;
    fill_sample(&s, &f);
    ts_cache_writer *w;
    CHECK(ts_cache_writer_open(&w, 2, 3, &err) == TS_OK);
    for (int k = 0; k < 8; k++) {
        snprintf(path, sizeof path, "%s/f%d.tspf", dir, k);
        f.frame = k;
        CHECK(ts_cache_writer_submit(w, path, &f, &err) == TS_OK);
        s.position[0] = (float)k; /* the writer copied the frame: changing it now is safe */
    }
    CHECK(ts_cache_writer_close(w, &err) == TS_OK);
    for (int k = 0; k < 8; k++) {
        snprintf(path, sizeof path, "%s/f%d.tspf", dir, k);
        CHECK(ts_frame_read(path, &g, &err) == TS_OK);
        CHECK(g.frame == k && ((const float *)ts_frame_find(&g, "position")->data)[0] == (k ? (float)(k - 1) : 0.0f));
        ts_frame_free(&g);
        unlink(path);
    }
    /* no temporary files are left behind */
    snprintf(path, sizeof path, "%s/f0.tspf.tmp-%ld", dir, (long)getpid());
    CHECK(access(path, F_OK) != 0);
    /* a missing file is an I/O error naming it */
    CHECK(ts_frame_read("/nonexistent/frame.tspf", &g, &err) == TS_ERR_IO && strstr(err.message, "/nonexistent/frame.tspf"));
    /* a failed write is reported by the writer at the latest on close */
    CHECK(ts_cache_writer_open(&w, 1, 1, &err) == TS_OK);
    ts_status st = ts_cache_writer_submit(w, "/nonexistent/dir/f.tspf", &f, &err);
    ts_status closed = ts_cache_writer_close(w, &err);
    CHECK(st == TS_ERR_IO || closed == TS_ERR_IO);
    CHECK(strstr(err.message, "/nonexistent/dir/f.tspf") != NULL);
    rmdir(dir);
}

const test_case cache_tests[] = {
    {"cache/round_trip_exact", test_round_trip},
    {"cache/empty_frame", test_empty_frame},
    {"cache/bad_attributes_rejected", test_bad_attributes_rejected},
    {"cache/truncated_flipped_empty_foreign", test_truncated_and_flipped},
    {"cache/files_and_background_writer", test_files_and_writer},
    {0, 0},
};
