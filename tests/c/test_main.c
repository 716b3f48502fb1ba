/* test_main.c - runs the C core tests and prints each one's time and the closing line.
 *
 *   test_core [--skip-long] [name part]   every test, or those whose name holds the part; --skip-long leaves out
 *                                         the long physical runs (the suites marked long_runs below) */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "check.h"

int check_failures;

extern const test_case vecmath_tests[], grid_tests[], kernel_tests[], rigid_tests[], mesh_tests[],
    collider_tests[], cache_tests[], checkpoint_tests[], particles_tests[], span_contact_tests[], frameloop_tests[], vdb_tests[], rng_tests[], sph_loops_tests[], parallel_tests[], threads_tests[], water_tests[], sand_tests[], fracture_tests[], erosion_tests[], elastoplastic_tests[], wall_field_tests[], surface_tests[], skin_pairs_tests[],
    colour_blocks_tests[], object_contact_tests[],
    elastoplastic_long_tests[], water_long_tests[];

int main(int argc, char **argv)
{
    const struct {
        const test_case *tests;
        int long_runs;   /* seconds of simulated time: --skip-long leaves them out */
    } suites[] = {
        {vecmath_tests, 0}, {rng_tests, 0}, {grid_tests, 0}, {skin_pairs_tests, 0}, {colour_blocks_tests, 0}, {kernel_tests, 0},
        {rigid_tests, 0}, {object_contact_tests, 0}, {mesh_tests, 0}, {collider_tests, 0}, {cache_tests, 0}, {checkpoint_tests, 0},
        {particles_tests, 0}, {span_contact_tests, 0}, {frameloop_tests, 0}, {vdb_tests, 0}, {parallel_tests, 0},
        {threads_tests, 0}, {sph_loops_tests, 0}, {water_tests, 0}, {sand_tests, 0}, {fracture_tests, 0},
        {erosion_tests, 0}, {elastoplastic_tests, 0}, {wall_field_tests, 0}, {surface_tests, 0},
        {elastoplastic_long_tests, 1}, {water_long_tests, 1},
    };
    int passed = 0, failed = 0, skipped = 0, skip_long = 0;
    const char *filter = NULL;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--skip-long"))
            skip_long = 1;
        else
            filter = argv[a];
    }
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) {
        for (const test_case *t = suites[s].tests; t->name; t++) {
            if (filter && !strstr(t->name, filter))
                continue;
            if (skip_long && suites[s].long_runs) {
                skipped++;
                continue;
            }
            check_failures = 0;
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            t->run();
            clock_gettime(CLOCK_MONOTONIC, &t1);
            const double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
            if (check_failures) {
                failed++;
                printf("FAIL %s (%.1f s)\n", t->name, seconds);
            } else {
                passed++;
                printf("ok   %s (%.1f s)\n", t->name, seconds);
            }
        }
    }
    printf("core: %d passed, %d failed, %d long runs left out\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
