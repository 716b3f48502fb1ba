/* fixtures.h - meshes and checks shared by the C tests. */
#ifndef TSUBU_TEST_FIXTURES_H
#define TSUBU_TEST_FIXTURES_H

#include <stdint.h>

/* An axis-aligned box [lo, hi], 8 vertices and 12 outward triangles. */
typedef struct box_mesh { float vertices[24]; int32_t triangles[36]; } box_mesh;
box_mesh make_box(const float lo[3], const float hi[3]);

/* Whether two files hold the same bytes (both must exist): bakes compared across thread counts and resumes. */
int same_file(const char *a, const char *b);

/* Remove a test's cache folder and all it holds; nonzero if it went. */
int remove_dir(const char *dir);

#endif
