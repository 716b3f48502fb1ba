/* terrain.h - a voxel terrain that changes during a bake (the erosion
 * paper's sec. 3).
 *
 * The terrain is a density grid: at each node the fraction of the
 * surrounding voxel that is solid, 0 (air or water) to 1 (ground); the
 * ground's surface is the iso value TS_TERRAIN_ISO of the trilinear density,
 * which is what Blender's Volume to Mesh draws from the cached 'density'
 * grid. Because the density is a volume fraction, the ground's volume is
 * sum(density) x voxel^3, and what erosion takes from it is exactly what the
 * water carries.
 *
 * The fluid does not read the density directly: the paper's distance
 * l_B = (d - ISO) / |grad d| (sec. 3.1) is exact only inside a one-voxel
 * ramp, while wall weights need the distance out to the kernel radius. So
 * the terrain keeps a signed distance field beside it (positive in the
 * open, negative in the ground), rebuilt from the density's iso crossings
 * by dead reckoning (Grevera 2004) - only in the box where the density
 * changed. The field is a ts_collider, so the SPH model queries a terrain as
 * it queries any collider.
 */
#ifndef TSUBU_TERRAIN_H
#define TSUBU_TERRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "collider.h"
#include "status.h"

#define TS_TERRAIN_ISO 0.5f

typedef struct ts_terrain {
    float origin[3];
    float voxel;
    int dims[3];
    size_t nodes;
    float *density;        /* solid fraction per node, x fastest */
    ts_collider field;     /* signed distance to the iso surface, same nodes */
    int band;              /* voxels each side where the distance is exact */
    float *closest;        /* work: a closest surface point per node (3 floats) */
} ts_terrain;

/* Nodes covering the box [lo, hi] at the voxel size, all empty; distances
 * exact to at least `reach` (m) from the surface. */
ts_status ts_terrain_init(ts_terrain *t, const double lo[3], const double hi[3], double voxel, double reach,
                          ts_error *err);
void ts_terrain_free(ts_terrain *t);

/* Add ground: the inside of a closed mesh (through the VDB layer), or
 * everything below an open mesh seen from above - a heightfield or a
 * displaced plane, whose faces all face up (vertical skirts allowed). The
 * union with what is there. Messages name the object. */
ts_status ts_terrain_add_solid(ts_terrain *t, const char *name, const float *vertices, size_t vertex_count,
                               const int32_t *triangles, size_t triangle_count, ts_error *err);
ts_status ts_terrain_add_below(ts_terrain *t, const char *name, const float *vertices, size_t vertex_count,
                               const int32_t *triangles, size_t triangle_count, ts_error *err);

/* Rebuild the distance field where the density changed: the node box
 * [lo, hi] (inclusive), or everything when lo is NULL. */
void ts_terrain_refresh(ts_terrain *t, const int *lo, const int *hi);

/* Node index and position. */
static inline size_t ts_terrain_index(const ts_terrain *t, int i, int j, int k)
{
    return (size_t)i + (size_t)t->dims[0] * ((size_t)j + (size_t)t->dims[1] * (size_t)k);
}

/* Solid volume, m^3: sum of the densities x voxel^3 (in a fixed order). */
double ts_terrain_volume(const ts_terrain *t);

/* Write the grid 'density' to a .vdb file. */
ts_status ts_terrain_write(const ts_terrain *t, const char *path, ts_error *err);

#endif
