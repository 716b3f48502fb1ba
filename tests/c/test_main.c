/* test_main.c - runs every C core test and prints the closing line. */
#include <stdio.h>
#include <string.h>

#include "check.h"

int check_failures;

extern const test_case vecmath_tests[], grid_tests[], kernel_tests[], rigid_tests[], mesh_tests[],
    collider_tests[], cache_tests[], checkpoint_tests[], particles_tests[], span_contact_tests[], frameloop_tests[], vdb_tests[], rng_tests[], sph_loops_tests[], parallel_tests[], threads_tests[], water_tests[], sand_tests[], fracture_tests[], erosion_tests[], elastoplastic_tests[], wall_field_tests[], surface_tests[], skin_pairs_tests[];

int main(int argc, char **argv)
{
    const test_case *suites[] = {vecmath_tests, rng_tests, grid_tests, skin_pairs_tests, kernel_tests, rigid_tests, mesh_tests,
                                 collider_tests, cache_tests, checkpoint_tests, particles_tests, span_contact_tests, frameloop_tests, vdb_tests, parallel_tests, threads_tests, sph_loops_tests, water_tests, sand_tests, fracture_tests, erosion_tests, elastoplastic_tests, wall_field_tests, surface_tests};
    int passed = 0, failed = 0;
    for (size_t s = 0; s < sizeof suites / sizeof suites[0]; s++) {
        for (const test_case *t = suites[s]; t->name; t++) {
            if (argc > 1 && !strstr(t->name, argv[1]))
                continue;
            check_failures = 0;
            t->run();
            if (check_failures) {
                failed++;
                printf("FAIL %s\n", t->name);
            } else {
                passed++;
                printf("ok   %s\n", t->name);
            }
        }
    }
    printf("core: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
