/* mesh.h - checks on triangle meshes handed to the core.
 *
 * Solvers that fill, weigh or collide with a mesh need it closed (every
 * edge shared by exactly two triangles, wound oppositely) so that "inside"
 * means something. The check names the object and says how to mend it.
 */
#ifndef TSUBU_MESH_H
#define TSUBU_MESH_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* TS_OK if the mesh is non-empty, its indices valid, its vertices finite
 * and every edge is shared by exactly two consistently wound triangles. */
ts_status ts_mesh_check_closed(const float *vertices, size_t vertex_count, const int32_t *triangles,
                               size_t triangle_count, const char *what, ts_error *err);

/* Axis-aligned bounds (min xyz, max xyz) of the vertices. */
void ts_mesh_bounds(const float *vertices, size_t vertex_count, float bounds[6]);

#endif
