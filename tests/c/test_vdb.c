/* test_vdb.c - the OpenVDB layer: mesh and particle level sets have the
 * right inside/outside and volume, fog grids round-trip their values, and
 * .vdb files keep grid names; bad input fails with a message. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "core/threads.h"
#include "vdb/tsubu_vdb.h"

/* Volume enclosed by a closed triangle mesh (divergence theorem). */
static double mesh_volume(const float *v, const int32_t *t, size_t nt)
{
    double vol = 0;
    for (size_t i = 0; i < nt; i++) {
        const float *a = v + 3 * t[3 * i], *b = v + 3 * t[3 * i + 1], *c = v + 3 * t[3 * i + 2];
        vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
    }
    return vol;
}

static void test_mesh_level_set(void)
{
    const float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    box_mesh b = make_box(lo, hi);
    tsvdb_grid *g;
    ts_error err;
    CHECK(tsvdb_mesh_to_level_set(b.vertices, 8, b.triangles, 12, 0.05, 3.0, &g, &err) == TS_OK);
    CHECK(tsvdb_grid_is_level_set(g));
    CHECK_NEAR(tsvdb_grid_sample(g, 0.5, 0.5, 0.95), -0.05, 0.01);
    CHECK_NEAR(tsvdb_grid_sample(g, 0.5, 0.5, 1.05), 0.05, 0.01);
    CHECK(tsvdb_grid_sample(g, 0.5, 0.5, 0.5) < 0); /* deep inside: -background */
    float *mv;
    int32_t *mt;
    size_t nv, nt;
    CHECK(tsvdb_grid_to_mesh(g, 0.0, 0.0, &mv, &nv, &mt, &nt, &err) == TS_OK);
    CHECK(nt > 12);
    CHECK_NEAR(mesh_volume(mv, mt, nt), 1.0, 0.02);
    free(mv);
    free(mt);
    tsvdb_grid_free(g);
    CHECK(tsvdb_mesh_to_level_set(b.vertices, 8, b.triangles, 12, 0.0, 3.0, &g, &err) == TS_ERR_INVALID);
    b.triangles[5] = 99; /* index out of range */
    CHECK(tsvdb_mesh_to_level_set(b.vertices, 8, b.triangles, 12, 0.05, 3.0, &g, &err) == TS_ERR_INVALID);
}

static void test_particle_surface_volume(void)
{
    /* one big sphere: the meshed surface encloses 4/3 pi r^3 */
    float x = 0.1f, y = -0.2f, z = 0.3f;
    tsvdb_grid *g;
    ts_error err;
    CHECK(tsvdb_particles_to_level_set(&x, &y, &z, NULL, 0.5f, 1, 0.02, 3.0, &g, &err) == TS_OK);
    CHECK_NEAR(tsvdb_grid_sample(g, 0.1, -0.2, 0.8), 0.0, 0.01);
    float *mv;
    int32_t *mt;
    size_t nv, nt;
    CHECK(tsvdb_grid_to_mesh(g, 0.0, 0.0, &mv, &nv, &mt, &nt, &err) == TS_OK);
    CHECK_NEAR(mesh_volume(mv, mt, nt), 4.0 / 3.0 * M_PI * 0.125, 0.01);
    free(mv);
    free(mt);
    tsvdb_grid_free(g);
}

static void test_dense_grid_and_files(void)
{
    tsvdb_dense d = {{-1.0f, 0.0f, 2.0f}, 0.1f, {8, 6, 4}, NULL};
    d.values = calloc(8 * 6 * 4, sizeof(float));
    for (int i = 0; i < 8 * 6 * 4; i++)
        d.values[i] = (i % 3) ? 0.25f * (float)(i % 5) : 0.0f;
    tsvdb_grid *fog, *surface;
    ts_error err;
    CHECK(tsvdb_dense_to_grid(&d, 0.0f, &fog, &err) == TS_OK);
    CHECK(tsvdb_grid_set_name(fog, "density", &err) == TS_OK);
    CHECK(!tsvdb_grid_is_level_set(fog));
    CHECK_NEAR(tsvdb_grid_sample(fog, -1.0 + 0.1 * 2, 0.1 * 1, 2.0), d.values[2 + 8 * 1], 1e-6);
    float x = 0, y = 0, z = 0;
    CHECK(tsvdb_particles_to_level_set(&x, &y, &z, NULL, 0.2f, 1, 0.05, 3.0, &surface, &err) == TS_OK);
    CHECK(tsvdb_grid_set_name(surface, "surface", &err) == TS_OK);
    char path[] = "/tmp/tsubu-vdb-XXXXXX.vdb";
    int fd = mkstemps(path, 4);
    CHECK(fd >= 0);
    close(fd);
    tsvdb_grid *grids[2] = {surface, fog};
    CHECK(tsvdb_write(path, grids, 2, &err) == TS_OK);
    tsvdb_grid **back;
    size_t count;
    CHECK(tsvdb_read(path, &back, &count, &err) == TS_OK);
    CHECK(count == 2);
    int found = 0;
    for (size_t i = 0; i < count; i++) {
        if (strcmp(tsvdb_grid_name(back[i]), "surface") == 0 && tsvdb_grid_is_level_set(back[i]))
            found++;
        if (strcmp(tsvdb_grid_name(back[i]), "density") == 0) {
            tsvdb_dense out;
            CHECK(tsvdb_grid_to_dense(back[i], &out, &err) == TS_OK);
            double sum_in = 0, sum_out = 0;
            for (int k = 0; k < 8 * 6 * 4; k++)
                sum_in += d.values[k];
            for (int k = 0; k < out.dims[0] * out.dims[1] * out.dims[2]; k++)
                sum_out += out.values[k];
            CHECK_NEAR(sum_out, sum_in, 1e-4);
            tsvdb_dense_free(&out);
            found++;
        }
        tsvdb_grid_free(back[i]);
    }
    free(back);
    CHECK(found == 2);
    /* a damaged file is an error naming it */
    FILE *fp = fopen(path, "wb");
    fputs("not a vdb", fp);
    fclose(fp);
    CHECK(tsvdb_read(path, &back, &count, &err) != TS_OK && strstr(err.message, path));
    unlink(path);
    tsvdb_grid_free(fog);
    tsvdb_grid_free(surface);
    free(d.values);
}

static double clock_seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* OpenVDB's tools run on TBB, which would use every core: a bake given one thread (a farm job's
 * OMP_NUM_THREADS=1) must do its volume work on one core too. The process' CPU time can then not exceed
 * the wall time; on 2 idle cores TBB alone made it 1.5-1.9 times. */
static void test_volume_work_keeps_to_the_thread_count(void)
{
    const float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    box_mesh b = make_box(lo, hi);
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    ts_threads_use_idle_cores(0.0); /* as a bake's set-up does */
    tsvdb_grid *g;
    ts_error err;
    double wall = clock_seconds(CLOCK_MONOTONIC), cpu = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
    for (int k = 0; k < 2; k++) {
        CHECK(tsvdb_mesh_to_level_set(b.vertices, 8, b.triangles, 12, 0.006, 3.0, &g, &err) == TS_OK);
        tsvdb_grid_free(g);
    }
    wall = clock_seconds(CLOCK_MONOTONIC) - wall, cpu = clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
    omp_set_num_threads(saved);
    ts_threads_use_idle_cores(0.0);
    omp_set_num_threads(saved);
    printf("    mesh to level set on 1 thread: %.3f s CPU in %.3f s\n", cpu, wall);
    CHECK(cpu < 1.15 * wall + 0.01);
}

const test_case vdb_tests[] = {
    {"vdb/volume_work_keeps_to_the_thread_count", test_volume_work_keeps_to_the_thread_count},
    {"vdb/mesh_level_set_and_meshing_volume", test_mesh_level_set},
    {"vdb/particle_surface_volume", test_particle_surface_volume},
    {"vdb/dense_fog_and_named_files", test_dense_grid_and_files},
    {0, 0},
};
