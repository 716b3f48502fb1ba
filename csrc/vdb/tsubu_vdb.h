/* tsubu_vdb.h - the C face of the OpenVDB layer, the project's only C++.
 *
 * Solvers and the Python binding see OpenVDB only through these functions:
 * mesh -> signed distance (sparse grid or dense array for colliders),
 * particles -> level-set surface, dense voxels -> fog density grid,
 * grid -> triangle mesh, and .vdb files with named grids. No C++ exception
 * crosses this header: every failure becomes a ts_status and a message.
 */
#ifndef TSUBU_VDB_H
#define TSUBU_VDB_H

#include <stddef.h>
#include <stdint.h>

#include "../core/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A dense float volume, x fastest: values[i + dims[0] * (j + dims[1] * k)]
 * is the value at origin + voxel_size * (i, j, k). */
typedef struct tsvdb_dense {
    float origin[3];
    float voxel_size;
    int dims[3];
    float *values;
} tsvdb_dense;

void tsvdb_dense_free(tsvdb_dense *d);

/* An OpenVDB float grid with a name, owned by the caller. */
typedef struct tsvdb_grid tsvdb_grid;

void tsvdb_grid_free(tsvdb_grid *g);
const char *tsvdb_grid_name(const tsvdb_grid *g);
ts_status tsvdb_grid_set_name(tsvdb_grid *g, const char *name, ts_error *err);
int tsvdb_grid_is_level_set(const tsvdb_grid *g);
double tsvdb_grid_voxel_size(const tsvdb_grid *g);
uint64_t tsvdb_grid_active_voxels(const tsvdb_grid *g);
float tsvdb_grid_background(const tsvdb_grid *g);
/* Value at a world-space point (trilinear). */
float tsvdb_grid_sample(const tsvdb_grid *g, double x, double y, double z);

/* Signed distance level set of a closed triangle mesh (vertices xyz
 * interleaved, world space); half_width in voxels on each side. */
ts_status tsvdb_mesh_to_level_set(const float *vertices, size_t vertex_count, const int32_t *triangles,
                                  size_t triangle_count, double voxel_size, double half_width, tsvdb_grid **out,
                                  ts_error *err);

/* Dense signed distance of a closed mesh for collision queries: exact near
 * the surface, filled throughout the interior, exterior_band voxels outside
 * (beyond that the value is the band's distance: "far outside"). */
ts_status tsvdb_mesh_to_dense_sdf(const float *vertices, size_t vertex_count, const int32_t *triangles,
                                  size_t triangle_count, double voxel_size, double exterior_band,
                                  tsvdb_dense *out, ts_error *err);

/* Level set of the union of spheres (x, y, z SoA; radius per particle or,
 * if radius is NULL, the constant radius_all). Spheres smaller than a voxel
 * are still rasterised. */
ts_status tsvdb_particles_to_level_set(const float *x, const float *y, const float *z, const float *radius,
                                       float radius_all, size_t count, double voxel_size, double half_width,
                                       tsvdb_grid **out, ts_error *err);

/* A leaf of 8^3 voxels filled elsewhere (the anisotropic surface) for tsvdb_level_set_from_leaves:
 * its origin a multiple of 8 in index space, its 512 values in OpenVDB's order (index (x & 7) << 6 |
 * (y & 7) << 3 | (z & 7)) and its active voxels as 8 words of bits (voxel b is bit b % 64 of word
 * b / 64), both written in place. tsvdb_leaf_new returns NULL when out of memory; it may be called
 * from several threads at once. */
typedef struct tsvdb_leaf tsvdb_leaf;
tsvdb_leaf *tsvdb_leaf_new(const int32_t origin[3]);
float *tsvdb_leaf_values(tsvdb_leaf *leaf);
uint64_t *tsvdb_leaf_active(tsvdb_leaf *leaf);
void tsvdb_leaf_free(tsvdb_leaf *leaf);

/* A level set from such leaves, which it takes, whatever it returns. Every voxel of a leaf must hold
 * its value, inactive ones +-half_width voxels with their sign (they are kept as they are). Space outside
 * the leaves is filled inside or outside from the leaves' signs, so the leaves must enclose every zero
 * crossing. */
ts_status tsvdb_level_set_from_leaves(double voxel_size, double half_width, size_t count, tsvdb_leaf **leaves,
                                      tsvdb_grid **out, ts_error *err);

/* Smooth a level set: `iterations` passes of a Gaussian filter (width 1
 * voxel) over the band, then rebuilt as a distance field whose zero is the
 * filtered field's `offset` (positive erodes: the surface moves inwards).
 * Turns a union of particle spheres into a liquid-looking surface. */
ts_status tsvdb_level_set_smooth(tsvdb_grid *g, int iterations, double offset, ts_error *err);

/* Fog volume (e.g. `density`) from a dense array; values with |v| <= tolerance become inactive. */
ts_status tsvdb_dense_to_grid(const tsvdb_dense *d, float tolerance, tsvdb_grid **out, ts_error *err);

/* Dense copy of a grid's active bounding box. */
ts_status tsvdb_grid_to_dense(const tsvdb_grid *g, tsvdb_dense *out, ts_error *err);

/* Polygonise the isosurface (quads split to triangles). Arrays are malloc'ed. */
ts_status tsvdb_grid_to_mesh(const tsvdb_grid *g, double isovalue, double adaptivity, float **vertices,
                             size_t *vertex_count, int32_t **triangles, size_t *triangle_count, ts_error *err);

/* Write grids (with their names) to a .vdb file atomically. */
ts_status tsvdb_write(const char *path, tsvdb_grid *const *grids, size_t count, ts_error *err);
/* Read every float grid of a .vdb file; *grids is a malloc'ed array. */
ts_status tsvdb_read(const char *path, tsvdb_grid ***grids, size_t *count, ts_error *err);

#ifdef __cplusplus
}
#endif

#endif
