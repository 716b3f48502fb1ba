/* test_erosion.c - the voxel terrain and the erosion solver in C alone (and
 * so under ASan/UBSan): the terrain's volume and distances are exact for a
 * plane, a heightfield and a box; a lake behind a ridge drains through a
 * tunnel (what a heightfield cannot hold) while the floor erodes, an
 * overhang out of the flow's reach keeps every voxel, no particle ever gets
 * half a voxel into the ground, and the ground taken equals the sediment
 * carried, laid and drained at every frame; one and two threads give the
 * same bytes, a checkpoint restores exactly, bad input is named. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/cache.h"
#include "core/erosion.h"
#include "core/terrain.h"
#include "fixtures.h"

/* ------------------------------------------------------------- the terrain */

static void test_terrain_plane_volume_and_distance(void)
{
    /* a tilted plane as a heightfield: z = 0.3 + 0.2 x over [0, 1]^2 */
    const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    ts_terrain t;
    ts_error err;
    CHECK(ts_terrain_init(&t, lo, hi, 0.05, 0.2, &err) == TS_OK);
    const float v[12] = {-0.1f, -0.1f, 0.28f, 1.1f, -0.1f, 0.52f, 1.1f, 1.1f, 0.52f, -0.1f, 1.1f, 0.28f};
    const int32_t tri[6] = {0, 1, 2, 0, 2, 3};
    CHECK(ts_terrain_add_below(&t, "Slope", v, 4, tri, 2, &err) == TS_OK);
    ts_terrain_refresh(&t, NULL, NULL);
    /* volume under the plane over the nodes' cells: 0.4 m^3 (+ half-voxel rims of the node lattice) */
    /* each node holds the voxel around it, so the nodes at z = 0 add half a voxel below the domain */
    double cells = ts_terrain_volume(&t) / (1.05 * 1.05);
    CHECK_NEAR(cells, 0.4 + 0.025, 0.0005);
    const double n = 1.0 / sqrt(1.04); /* the plane's normal (-0.2, 0, 1)/|.| */
    double worst = 0.0;
    for (float x = 0.2f; x < 0.8f; x += 0.037f)
        for (float z = 0.2f; z < 0.6f; z += 0.023f) {
            ts_collider_hit hit;
            ts_collider_query(&t.field, 0.0, ts_v3(x, 0.5, z), &hit);
            double exact = (z - 0.3 - 0.2 * x) * n;
            if (fabs(exact) < 0.15)
                worst = fmax(worst, fabs(hit.distance - exact));
        }
    CHECK(worst < 0.1 * 0.05); /* a tenth of a voxel */
    ts_terrain_free(&t);
}

static void test_terrain_box_and_refresh_where_changed(void)
{
    const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    ts_terrain t;
    ts_error err;
    CHECK(ts_terrain_init(&t, lo, hi, 0.05, 0.2, &err) == TS_OK);
    const float bl[3] = {0.2f, 0.2f, 0.2f}, bh[3] = {0.6f, 0.7f, 0.5f};
    box_mesh b = make_box(bl, bh);
    CHECK(ts_terrain_add_solid(&t, "Block", b.vertices, 8, b.triangles, 12, &err) == TS_OK);
    ts_terrain_refresh(&t, NULL, NULL);
    /* within a twentieth: a node on an edge counts half its voxel, a quarter is inside */
    CHECK_NEAR(ts_terrain_volume(&t), 0.4 * 0.5 * 0.3, 0.0035);
    ts_collider_hit hit;
    ts_collider_query(&t.field, 0.0, ts_v3(0.4, 0.45, 0.57), &hit);
    CHECK_NEAR(hit.distance, 0.07, 0.005);
    CHECK(hit.normal.z > 0.99);
    /* dig a hole and refresh only around it: the same field as a full rebuild, to a hundredth of a voxel */
    for (int k = 8; k <= 10; k++)
        for (int j = 8; j <= 10; j++)
            t.density[ts_terrain_index(&t, 8, j, k)] = 0.0f;
    const int dl[3] = {8, 8, 8}, dh[3] = {8, 10, 10};
    ts_terrain_refresh(&t, dl, dh);
    float *partial = malloc(t.nodes * sizeof *partial);
    memcpy(partial, t.field.phi, t.nodes * sizeof *partial);
    ts_terrain_refresh(&t, NULL, NULL);
    double worst = 0.0;
    for (size_t i = 0; i < t.nodes; i++)
        worst = fmax(worst, fabs(partial[i] - t.field.phi[i]));
    CHECK(worst < 0.01 * 0.05);
    free(partial);
    ts_terrain_free(&t);
}

/* --------------------------------------------------------------- the bake */

#define N_BOXES 9
typedef struct scene {
    box_mesh boxes[N_BOXES];
    ts_erosion_object objects[N_BOXES];
    size_t count;
} scene;

/* A channel 1.2 m long: a lake held by a ridge with a tunnel at its foot
 * (terrain made of boxes), an open end downstream, and a ledge overhanging
 * the channel beyond the ridge, well above the water. tunnel = 0 closes it. */
static void make_scene(scene *s, int tunnel)
{
    static const float b[N_BOXES][6] = {
        {0.0f, 0.0f, 0.0f, 1.2f, 0.32f, 0.12f},    /* floor */
        {0.0f, 0.0f, 0.0f, 1.2f, 0.08f, 0.6f},     /* bank */
        {0.0f, 0.24f, 0.0f, 1.2f, 0.32f, 0.6f},    /* bank */
        {0.0f, 0.0f, 0.0f, 0.08f, 0.32f, 0.6f},    /* upstream end */
        {0.5f, 0.0f, 0.24f, 0.7f, 0.32f, 0.56f},   /* ridge above the tunnel */
        {0.85f, 0.0f, 0.4f, 1.1f, 0.18f, 0.48f},   /* ledge over the channel */
        {0.1f, 0.1f, 0.14f, 0.48f, 0.22f, 0.5f},   /* the lake (fluid) */
        {0.5f, 0.0f, 0.12f, 0.7f, 0.32f, 0.24f},   /* the tunnel's plug when closed */
    };
    static const char *names[N_BOXES] = {"Floor", "BankL", "BankR", "End", "Ridge", "Ledge", "Lake", "Plug"};
    memset(s, 0, sizeof *s);
    s->count = tunnel ? 7 : 8;
    for (size_t i = 0; i < s->count; i++) {
        s->boxes[i] = make_box(b[i], b[i] + 3);
        ts_erosion_object *o = &s->objects[i];
        o->name = names[i];
        o->role = i == 6 ? TS_EROSION_FLUID : TS_EROSION_TERRAIN;
        o->vertices = s->boxes[i].vertices;
        o->vertex_count = 8;
        o->triangles = s->boxes[i].triangles;
        o->triangle_count = 12;
    }
}

static ts_erosion_params channel_params(void)
{
    ts_erosion_params p = ts_erosion_params_default();
    p.particle_radius = 0.02;
    p.voxel_size = 0.04;
    p.critical_shear = 3.0;
    p.erosion_strength = 0.05;
    p.erosion_interval = 10;
    p.max_particles = 100000;
    const double lo[3] = {-0.04, -0.04, -0.12}, hi[3] = {1.24, 0.36, 0.64};
    memcpy(p.domain_min, lo, sizeof lo);
    memcpy(p.domain_max, hi, sizeof hi);
    return p;
}

typedef struct watch {
    ts_erosion *e;
    float deepest;   /* the most negative ground distance of any particle after any step */
} watch;

static int after_step(void *user, const ts_progress *pr)
{
    (void)pr;
    watch *w = user;
    const float *x, *y, *z;
    size_t n = ts_erosion_particles(w->e, &x, &y, &z);
    for (size_t i = 0; i < n; i++) {
        float d = ts_erosion_ground_distance(w->e, x[i], y[i], z[i]);
        if (d < w->deepest)
            w->deepest = d;
    }
    return 0;
}

static int count_in(ts_erosion *e, float x_lo, float x_hi)
{
    const float *x, *y, *z;
    size_t n = ts_erosion_particles(e, &x, &y, &z);
    int c = 0;
    for (size_t i = 0; i < n; i++)
        c += x[i] >= x_lo && x[i] < x_hi;
    return c;
}

static double ledge_density(ts_erosion *e)
{
    int dims[3];
    float origin[3], voxel;
    const float *d = ts_erosion_terrain(e, dims, origin, &voxel);
    double sum = 0.0;
    for (int k = 0; k < dims[2]; k++)
        for (int j = 0; j < dims[1]; j++)
            for (int i = 0; i < dims[0]; i++) {
                float x = origin[0] + voxel * i, y = origin[1] + voxel * j, z = origin[2] + voxel * k;
                if (x > 0.8f && x < 1.15f && y > 0.04f && y < 0.22f && z > 0.36f && z < 0.52f)
                    sum += d[(size_t)i + (size_t)dims[0] * ((size_t)j + (size_t)dims[1] * k)];
            }
    return sum;
}

static ts_erosion *bake(const char *dir, int threads, int tunnel, int frames, watch *w, ts_error *err,
                        ts_status *st)
{
    scene s;
    make_scene(&s, tunnel);
    ts_erosion_params p = channel_params();
    ts_erosion *e = NULL;
    omp_set_num_threads(threads);
    *st = ts_erosion_create(&e, &p, s.objects, s.count, err);
    if (*st != TS_OK)
        return NULL;
    w->e = e;
    w->deepest = 1.0f;
    ts_frame_loop loop = {1, frames, 24.0, 400, dir, 1, after_step, w, 0.0, 0, 0};
    *st = ts_run_frames(&loop, &ts_erosion_ops, e, 1, err);
    omp_set_num_threads(2);
    return e;
}

static void test_tunnel_drains_the_lake_and_the_ground_holds(void)
{
    char d1[] = "/tmp/tsubu-erosion-XXXXXX", d2[] = "/tmp/tsubu-erosion-XXXXXX";
    CHECK(mkdtemp(d1) && mkdtemp(d2));
    ts_error err;
    ts_status st;
    watch w;
    ts_erosion *closed = bake(d2, 2, 0, 24, &w, &err, &st);
    CHECK(st == TS_OK && closed);
    if (!closed) {
        fprintf(stderr, "  %s\n", err.message);
        return;
    }
    int held = count_in(closed, 0.0f, 0.5f), passed_closed = count_in(closed, 0.7f, 2.0f);
    ts_erosion_destroy(closed);
    ts_erosion *e = bake(d1, 2, 1, 24, &w, &err, &st);
    CHECK(st == TS_OK && e);
    if (!e)
        return;
    ts_erosion_stats s;
    ts_erosion_get_stats(e, &s);
    /* the tunnel drains the lake; with it plugged the lake stays */
    CHECK(passed_closed == 0);
    CHECK(count_in(e, 0.0f, 0.5f) < held / 2);
    CHECK(s.removed > 0 || count_in(e, 0.7f, 2.0f) > 0);
    /* the flow eroded the ground, water never got half a voxel into it, the ledge kept every voxel */
    CHECK(s.eroded > 0.0);
    CHECK(w.deepest > -0.5f * 0.04f);
    scene sc;
    make_scene(&sc, 1);
    ts_erosion *fresh = NULL;
    ts_erosion_params p = channel_params();
    CHECK(ts_erosion_create(&fresh, &p, sc.objects, sc.count, &err) == TS_OK);
    CHECK(ledge_density(e) == ledge_density(fresh));
    ts_erosion_destroy(fresh);
    /* ground taken = sediment suspended + laid + drained */
    CHECK_NEAR(s.terrain_volume0 - s.terrain_volume, s.suspended + s.drained, 0.01 * s.eroded);
    CHECK_NEAR(s.eroded, s.suspended + s.deposited + s.drained, 0.01 * s.eroded);
    ts_erosion_destroy(e);
    CHECK(remove_dir(d1) && remove_dir(d2));
}

static void test_threads_and_checkpoint(void)
{
    char d1[] = "/tmp/tsubu-erosion-XXXXXX", d2[] = "/tmp/tsubu-erosion-XXXXXX";
    CHECK(mkdtemp(d1) && mkdtemp(d2));
    ts_error err;
    ts_status st;
    watch w;
    ts_erosion *a = bake(d1, 1, 1, 6, &w, &err, &st);
    CHECK(st == TS_OK);
    ts_erosion *b = bake(d2, 2, 1, 6, &w, &err, &st);
    CHECK(st == TS_OK && a && b);
    char pa[256], pb[256];
    const char *streams[3][2] = {{"fluid", "tspf"}, {"terrain", "vdb"}, {"budget", "tspf"}};
    for (int f = 1; f <= 6; f++)
        for (int k = 0; k < 3; k++) {
            snprintf(pa, sizeof pa, "%s/%s/%s_%06d.%s", d1, streams[k][0], streams[k][0], f, streams[k][1]);
            snprintf(pb, sizeof pb, "%s/%s/%s_%06d.%s", d2, streams[k][0], streams[k][0], f, streams[k][1]);
            CHECK(same_file(pa, pb));
        }
    /* the checkpoint restores the same water, ground and budget */
    static ts_checkpoint cp;
    CHECK(ts_checkpoint_path(pa, sizeof pa, d1, &err) == TS_OK);
    CHECK(ts_checkpoint_read(pa, &cp, &err) == TS_OK && cp.frame == 6);
    scene s;
    make_scene(&s, 1);
    ts_erosion_params p = channel_params();
    ts_erosion *r = NULL;
    CHECK(ts_erosion_create(&r, &p, s.objects, s.count, &err) == TS_OK);
    CHECK(r && ts_erosion_restore(r, &cp, &err) == TS_OK);
    if (a && r) {
        ts_erosion_stats sa, sr;
        ts_erosion_get_stats(a, &sa);
        ts_erosion_get_stats(r, &sr);
        CHECK(sa.particles == sr.particles && sa.eroded == sr.eroded && sa.suspended == sr.suspended);
        CHECK(sa.terrain_volume == sr.terrain_volume);
    }
    ts_checkpoint_free(&cp);
    ts_erosion_destroy(r);
    ts_erosion_destroy(a);
    ts_erosion_destroy(b);
    CHECK(remove_dir(d1) && remove_dir(d2));
}

/* Bake frames 1-3, then resume from that checkpoint to frame 8 in a fresh solver: every file the same as an
 * uninterrupted bake's (the ground's distance field is rebuilt from the closest points around each change,
 * so those must come back too). */
static void test_resume_equals_an_uninterrupted_bake(void)
{
    char d1[] = "/tmp/tsubu-erosion-XXXXXX", d2[] = "/tmp/tsubu-erosion-XXXXXX";
    CHECK(mkdtemp(d1) && mkdtemp(d2));
    ts_error err;
    ts_status st;
    watch w;
    ts_erosion_destroy(bake(d1, 2, 1, 8, &w, &err, &st));
    CHECK(st == TS_OK);
    ts_erosion_destroy(bake(d2, 2, 1, 3, &w, &err, &st));
    CHECK(st == TS_OK);
    static ts_checkpoint cp;
    char pa[256], pb[256];
    CHECK(ts_checkpoint_path(pa, sizeof pa, d2, &err) == TS_OK);
    CHECK(ts_checkpoint_read(pa, &cp, &err) == TS_OK && cp.frame == 3);
    scene s;
    make_scene(&s, 1);
    ts_erosion_params p = channel_params();
    ts_erosion *r = NULL;
    CHECK(ts_erosion_create(&r, &p, s.objects, s.count, &err) == TS_OK);
    CHECK(r && ts_erosion_restore(r, &cp, &err) == TS_OK);
    ts_checkpoint_free(&cp);
    ts_frame_loop loop = {1, 8, 24.0, 400, d2, 1, NULL, NULL, 0.0, 0, 0};
    CHECK(r && ts_run_frames(&loop, &ts_erosion_ops, r, 3, &err) == TS_OK);
    ts_erosion_stats stats;
    ts_erosion_get_stats(r, &stats);
    CHECK(stats.eroded > 0.0);
    ts_erosion_destroy(r);
    const char *streams[3][2] = {{"fluid", "tspf"}, {"terrain", "vdb"}, {"budget", "tspf"}};
    for (int f = 4; f <= 8; f++)
        for (int k = 0; k < 3; k++) {
            snprintf(pa, sizeof pa, "%s/%s/%s_%06d.%s", d1, streams[k][0], streams[k][0], f, streams[k][1]);
            snprintf(pb, sizeof pb, "%s/%s/%s_%06d.%s", d2, streams[k][0], streams[k][0], f, streams[k][1]);
            CHECK(same_file(pa, pb));
        }
    CHECK(remove_dir(d1) && remove_dir(d2));
}

static void test_bad_input_named(void)
{
    scene s;
    ts_erosion *e = NULL;
    ts_error err;
    ts_erosion_params p = channel_params();
    make_scene(&s, 1);
    p.voxel_size = 0.0;
    CHECK(ts_erosion_create(&e, &p, s.objects, s.count, &err) == TS_ERR_INVALID && strstr(err.message, "voxel_size"));
    p = channel_params();
    p.critical_shear = NAN;
    CHECK(ts_erosion_create(&e, &p, s.objects, s.count, &err) == TS_ERR_INVALID &&
          strstr(err.message, "critical_shear"));
    p = channel_params();
    /* a box with its top face missing is open, and no heightfield: named */
    s.objects[4].triangle_count = 10;
    CHECK(ts_erosion_create(&e, &p, s.objects, s.count, &err) == TS_ERR_INVALID && strstr(err.message, "Ridge") &&
          strstr(err.message, "heightfield"));
    /* a rain region with no area from above */
    make_scene(&s, 1);
    const float v[9] = {0.2f, 0.1f, 0.5f, 0.3f, 0.1f, 0.5f, 0.3f, 0.1f, 0.6f};
    const int32_t t[3] = {0, 1, 2};
    ts_erosion_object *r = &s.objects[s.count++];
    *r = (ts_erosion_object){.name = "Cloud", .role = TS_EROSION_RAIN, .vertices = v, .vertex_count = 3,
                             .triangles = t, .triangle_count = 1, .emit_start = 1, .emit_end = 10};
    CHECK(ts_erosion_create(&e, &p, s.objects, s.count, &err) == TS_ERR_INVALID && strstr(err.message, "Cloud"));
    /* no terrain */
    make_scene(&s, 1);
    CHECK(ts_erosion_create(&e, &p, s.objects + 6, 1, &err) == TS_ERR_INVALID && strstr(err.message, "Terrain"));
    CHECK(e == NULL);
}

const test_case erosion_tests[] = {
    {"erosion/terrain_plane_volume_and_distance", test_terrain_plane_volume_and_distance},
    {"erosion/terrain_box_and_refresh_where_changed", test_terrain_box_and_refresh_where_changed},
    {"erosion/tunnel_drains_the_lake_and_the_ground_holds", test_tunnel_drains_the_lake_and_the_ground_holds},
    {"erosion/threads_and_checkpoint", test_threads_and_checkpoint},
    {"erosion/resume_equals_an_uninterrupted_bake", test_resume_equals_an_uninterrupted_bake},
    {"erosion/bad_input_is_named", test_bad_input_named},
    {NULL, NULL},
};
