/* surface.h - a liquid surface from particles, as a level-set volume frame.
 *
 * Spheres of radius_scale x the particle radius around every particle are
 * rasterised into a narrow-band level set (voxels of voxel_ratio x the
 * radius), smoothed by Gaussian passes and eroded back by most of the extra
 * radius, so the surface is smooth and the liquid keeps its volume. Blender
 * meshes the grid 'surface' with Volume to Mesh. Used by every particle
 * effect with a surface (water, erosion, elastoplastic).
 */
#ifndef TSUBU_SURFACE_H
#define TSUBU_SURFACE_H

#include <stddef.h>

#include "frameloop.h"
#include "status.h"

typedef struct ts_surface_settings {
    double particle_radius;   /* m */
    double radius_scale;      /* sphere radius / particle radius, >= 1 */
    double voxel_ratio;       /* voxel size / particle radius */
    int smoothing;            /* Gaussian passes; 0 keeps the union of spheres */
} ts_surface_settings;

/* The level set 'surface' of n particles (the caller frees *out with tsvdb_grid_free). Also what
 * Rebuild Surface runs on a cache's particles, so a rebuilt frame is the bake's own, byte for byte. */
struct tsvdb_grid;
ts_status ts_surface_level_set(const ts_surface_settings *s, const float *x, const float *y, const float *z, size_t n,
                               struct tsvdb_grid **out, ts_error *err);

/* Write DIR/<stream>/<stream>_<frame>.vdb with the grid 'surface'. */
ts_status ts_output_surface(ts_frame_output *out, const char *stream, const ts_surface_settings *s, const float *x,
                            const float *y, const float *z, size_t n, ts_error *err);

#endif
