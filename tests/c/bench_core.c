/* bench_core.c - throughput of the shared core pieces every solver leans on.
 *
 * Prints, for the thread count given by OMP_NUM_THREADS:
 *   neighbour grid rebuild (ns/particle) and an SPH density sum over the grid
 *   (in-radius pair evaluations per second) for 100k and 1M particles at
 *   ~35 neighbours; cache frame write/read MB/s for 1M particles (position,
 *   velocity, id); particles -> level set particles/s; the anisotropic surface
 *   on a shallow pool of 200k particles, per CPU second; and the elastoplastic
 *   solver's substep stepped directly (no frame loop, output or thread tuner:
 *   what `bench elastoplastic`'s bake adds around it), its benchmark's cube
 *   of 17,576 masters falling and landing, the landing also at the paper's step.
 * Not a test: nothing here asserts. Figures go to docs/performance.md. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/cache.h"
#include "core/elastoplastic.h"
#include "core/grid.h"
#include "core/kernels.h"
#include "core/rng.h"
#include "core/surface.h"
#include "fixtures.h"
#include "vdb/tsubu_vdb.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Jittered lattice of n particles at spacing s: with h = 2 s about 33 neighbours. */
static void make_block(size_t n, float s, float *x, float *y, float *z)
{
    size_t side = (size_t)ceil(cbrt((double)n));
    ts_rng rng;
    ts_rng_seed(&rng, 1, 0);
    for (size_t i = 0; i < n; i++) {
        x[i] = s * ((float)(i % side) + 0.2f * (float)ts_rng_uniform(&rng));
        y[i] = s * ((float)((i / side) % side) + 0.2f * (float)ts_rng_uniform(&rng));
        z[i] = s * ((float)(i / side / side) + 0.2f * (float)ts_rng_uniform(&rng));
    }
}

/* Gather-form density sum in cell order: the SPH inner loop. */
static size_t density_sum(const ts_grid *g, const float *x, const float *y, const float *z, float h, float *rho)
{
    ts_kernels k;
    ts_kernels_init(&k, h);
    const float h2 = h * h, poly6 = (float)k.poly6;
    size_t pairs = 0;
#pragma omp parallel for schedule(static) reduction(+ : pairs)
    for (size_t i = 0; i < g->count; i++) {
        ts_neighbor_ranges r;
        ts_grid_neighbor_ranges(g, x[i], y[i], z[i], &r);
        float sum = 0.0f;
        for (int q = 0; q < r.n; q++)
            for (uint32_t j = r.begin[q]; j < r.end[q]; j++) {
                float dx = x[i] - x[j], dy = y[i] - y[j], dz = z[i] - z[j];
                float r2 = dx * dx + dy * dy + dz * dz;
                if (r2 < h2) {
                    float d = h2 - r2;
                    sum += d * d * d;
                    pairs++;
                }
            }
        rho[i] = poly6 * sum;
    }
    return pairs;
}

static void bench_grid(size_t n)
{
    const float s = 0.01f, h = 2.0f * s;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
    float *sx = malloc(n * sizeof *x), *sy = malloc(n * sizeof *y), *sz = malloc(n * sizeof *z), *rho = malloc(n * 4);
    make_block(n, s, x, y, z);
    ts_grid g;
    ts_grid_init(&g);
    ts_error err;
    ts_grid_build(&g, x, y, z, n, h, NULL, &err); /* warm-up: allocation happens here only */
    ts_grid_permute_f32(&g, x, sx);
    ts_grid_permute_f32(&g, y, sy);
    ts_grid_permute_f32(&g, z, sz);
    const int reps = n > 500000 ? 5 : 20;
    double t0 = now();
    for (int r = 0; r < reps; r++)
        ts_grid_build(&g, sx, sy, sz, n, h, NULL, &err);
    double build = (now() - t0) / reps;
    t0 = now();
    size_t pairs = 0;
    for (int r = 0; r < reps; r++)
        pairs += density_sum(&g, sx, sy, sz, h, rho);
    double sum_time = now() - t0;
    printf("grid  n=%-8zu threads=%d  rebuild %6.1f ns/particle   density sum %6.1f M pairs/s  (%.1f neighbours)\n", n,
           omp_get_max_threads(), 1e9 * build / n, pairs / sum_time / 1e6, (double)pairs / reps / n);
    ts_grid_free(&g);
    free(x); free(y); free(z); free(sx); free(sy); free(sz); free(rho);
}

static void bench_cache(size_t n)
{
    float *pos = malloc(3 * n * sizeof(float)), *vel = malloc(3 * n * sizeof(float));
    uint32_t *id = malloc(n * sizeof *id);
    float *x = malloc(n * 4), *y = malloc(n * 4), *z = malloc(n * 4);
    make_block(n, 0.01f, x, y, z);
    for (size_t i = 0; i < n; i++) {
        pos[3 * i] = x[i], pos[3 * i + 1] = y[i], pos[3 * i + 2] = z[i];
        vel[3 * i] = 0.1f * y[i], vel[3 * i + 1] = -0.1f * x[i], vel[3 * i + 2] = -1.0f;
        id[i] = (uint32_t)i;
    }
    ts_frame f, back;
    ts_error err;
    ts_frame_init(&f, 1, 0.0, n);
    ts_frame_add(&f, "position", TS_ATTR_F32, 3, pos, &err);
    ts_frame_add(&f, "velocity", TS_ATTR_F32, 3, vel, &err);
    ts_frame_add(&f, "id", TS_ATTR_U32, 1, id, &err);
    char path[64];
    snprintf(path, sizeof path, "/tmp/tsubu-bench-%ld.tspf", (long)getpid());
    double mb = n * 28.0 / 1e6;
    double t0 = now();
    ts_status st = ts_frame_write(path, &f, 1, &err);
    double write = now() - t0;
    t0 = now();
    st |= ts_frame_read(path, &back, &err);
    double read = now() - t0;
    FILE *fp = fopen(path, "rb");
    fseek(fp, 0, SEEK_END);
    long bytes = ftell(fp);
    fclose(fp);
    printf("cache n=%-8zu write %6.1f MB/s  read %6.1f MB/s  (%.1f MB raw -> %.1f MB on disk)%s\n", n, mb / write,
           mb / read, mb, bytes / 1e6, st ? "  FAILED" : "");
    ts_frame_free(&back);
    unlink(path);
    free(pos); free(vel); free(id); free(x); free(y); free(z);
}

static double bench_level_set(size_t n)
{
    float *x = malloc(n * 4), *y = malloc(n * 4), *z = malloc(n * 4);
    make_block(n, 0.01f, x, y, z);
    tsvdb_grid *g = NULL;
    ts_error err;
    double t0 = now();
    ts_status st = tsvdb_particles_to_level_set(x, y, z, NULL, 0.01f, n, 0.005, 3.0, &g, &err);
    double t = now() - t0;
    printf("vdb   n=%-8zu particles -> level set %8.0f particles/s%s\n", n, n / t, st ? "  FAILED" : "");
    tsvdb_grid_free(g);
    free(x); free(y); free(z);
    return n / t;
}

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* The anisotropic surface (issue 19's "0.3 M particles/s per core") on tsubu.benchmarks._surface_particles'
 * shallow pool: n particles of 1 cm on a lattice four deep, jittered by up to 0.4 r, every one of them near the
 * surface. Per core is per CPU second of the process (all its threads; with two, OpenMP's threads spinning at
 * a barrier count too), the best of `runs`: on a shared machine the quietest run is the closest to what the
 * code costs. */
static void bench_surface_pool(size_t n, int runs)
{
    const float r = 0.01f;
    const size_t side = (size_t)ceil(sqrt(n / 4.0));
    float *x = malloc(n * 4), *y = malloc(n * 4), *z = malloc(n * 4);
    ts_rng rng;
    ts_rng_seed(&rng, 1, 0);
    for (size_t i = 0; i < n; i++) {
        x[i] = 2 * r * (float)(i % side) + 0.4f * r * (float)ts_rng_uniform(&rng);
        y[i] = 2 * r * (float)((i / side) % side) + 0.4f * r * (float)ts_rng_uniform(&rng);
        z[i] = 2 * r * (float)(i / side / side) + 0.4f * r * (float)ts_rng_uniform(&rng);
    }
    const ts_surface_settings s = {TS_SURFACE_ANISOTROPIC, r, 2.0, 0.5, 4};
    double best_cpu = 1e30, best_wall = 1e30;
    for (int k = 0; k < runs; k++) {
        tsvdb_grid *g = NULL;
        ts_error err;
        const double c0 = cpu_seconds(), w0 = now();
        const ts_status st = ts_surface_level_set(&s, x, y, z, n, &g, &err);
        const double c = cpu_seconds() - c0, w = now() - w0;
        tsvdb_grid_free(g);
        if (st != TS_OK) {
            printf("surface: %s\n", err.message);
            break;
        }
        best_cpu = fmin(best_cpu, c), best_wall = fmin(best_wall, w);
    }
    printf("surface anisotropic pool n=%zu threads=%d: %.3f s, %.3f CPU s (best of %d): %.3f M particles/s per core\n",
           n, omp_get_max_threads(), best_wall, best_cpu, runs, 1e-6 * n / best_cpu);
    free(x), free(y), free(z);
}

/* tsubu.benchmarks._elastoplastic_cube's scene (the paper's fig. 7 material, 5 mm particles, 26^3 masters at
 * 1 m/s towards the ground) stepped at dt: ms per substep over `steps` after the first two, and the CG's
 * iterations at the last. */
static void bench_elastoplastic(int landing, int steps, double dt)
{
    const float r = 0.005f, side = 26 * 2 * r, bottom = landing ? 1.2f * r : 0.05f;
    const float lo[3] = {-side / 2, -side / 2, bottom}, hi[3] = {side / 2, side / 2, bottom + side};
    const box_mesh box = make_box(lo, hi);
    ts_elastoplastic_object body = {"Cube", TS_ELASTOPLASTIC_BODY, box.vertices, 8, box.triangles, 12, NULL, 0,
                                    {0.0, 0.0, -1.0}, 0};
    ts_elastoplastic_params p = ts_elastoplastic_params_default();
    p.particle_radius = r, p.poisson_ratio = 0.35, p.youngs_modulus = 1.2e6, p.plastic = 1;
    p.yield_stretch = 0.1, p.yield_compression = 0.8, p.write_surface = 0, p.max_particles = 1000000;
    void *e = NULL;
    ts_error err;
    if (ts_elastoplastic_ops.create(&e, &p, &body, 1, &err) != TS_OK) {
        printf("elastoplastic: %s\n", err.message);
        return;
    }
    ts_step_context c = {1, 2e-3, 0.0, 0.5, dt};
    ts_elastoplastic_ops.begin_frame(e, &c, &err);
    double sum = 0.0;
    long iterations = 0;
    ts_elastoplastic_stats st;
    for (int k = 0; k < steps; k++) {
        double t0 = now();
        if (ts_elastoplastic_ops.step(e, &c, &err) != TS_OK) {
            printf("elastoplastic: %s\n", err.message);
            break;
        }
        sum += k >= 2 ? now() - t0 : 0.0;
        ts_elastoplastic_get_stats(e, &st);
        iterations += st.cg_iterations;
    }
    printf("elastoplastic cube %s at %.1f ms substeps, masters=%zu: %6.2f ms per substep, %d CG iterations at the "
           "last, %ld in all\n", landing ? "landing" : "falling", 1e3 * dt, st.masters, 1e3 * sum / (steps - 2),
           st.cg_iterations, iterations);
    ts_elastoplastic_ops.destroy(e);
}

/* `bench_core [part]`: every part, or only `grid`, `cache`, `surface` or `elastoplastic` */
int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
#define PART(name) (!only || !strcmp(only, name))
    if (PART("grid"))
        bench_grid(100000), bench_grid(1000000);
    if (PART("cache"))
        bench_cache(1000000);
    if (PART("surface")) {
        const double ls = bench_level_set(200000);
        bench_surface_pool(200000, 8);
        printf("core: %.0f particles/s (level set, %d threads)\n", ls, omp_get_max_threads());
    }
    if (PART("elastoplastic")) {
        bench_elastoplastic(0, 40, 1e-3);
        bench_elastoplastic(1, 22, 1e-3);
        bench_elastoplastic(1, 44, 5e-4);   /* the same impact at the paper's step */
    }
#undef PART
    return 0;
}
