/* fixtures.h - meshes and checks shared by the C tests. */
#ifndef TSUBU_TEST_FIXTURES_H
#define TSUBU_TEST_FIXTURES_H

#include <stdint.h>

/* An axis-aligned box [lo, hi], 8 vertices and 12 outward triangles. */
typedef struct box_mesh { float vertices[24]; int32_t triangles[36]; } box_mesh;
box_mesh make_box(const float lo[3], const float hi[3]);

/* A UV sphere of radius r about c, 24 rings and 48 segments: 1,106 vertices and 2,208 outward triangles; its
 * polyhedron's volume to *volume (0.7 % under the ball's). */
enum { SPHERE_RINGS = 24, SPHERE_SEGMENTS = 48, SPHERE_VERTICES = 2 + (SPHERE_RINGS - 1) * SPHERE_SEGMENTS,
       SPHERE_TRIANGLES = 2 * SPHERE_SEGMENTS * (SPHERE_RINGS - 1) };
typedef struct sphere_mesh { float vertices[3 * SPHERE_VERTICES]; int32_t triangles[3 * SPHERE_TRIANGLES]; } sphere_mesh;
void make_sphere(sphere_mesh *m, const float c[3], float r, double *volume);

/* Whether two files hold the same bytes (both must exist): bakes compared across thread counts and resumes. */
int same_file(const char *a, const char *b);

/* Remove a test's cache folder and all it holds; nonzero if it went. */
int remove_dir(const char *dir);

#endif
