/* surface.h - a liquid surface from particles, as a level-set volume frame.
 *
 * Two methods, shared by every particle effect with a surface (water,
 * erosion, elastoplastic); Blender meshes the grid 'surface' with Volume to
 * Mesh.
 *
 * Anisotropic (the default; Yu & Turk 2013, "Reconstructing surfaces of
 * particle-based fluids using anisotropic kernels"): each particle's kernel
 * is stretched along its neighbourhood's spread, flat where the liquid is
 * flat, so still water is glass-smooth and a sheet stays one spacing thin;
 * see surface_anisotropic.c.
 *
 * Spheres (the coarse preview): spheres of radius_scale x the particle
 * radius are rasterised into a narrow-band level set, smoothed by Gaussian
 * passes and eroded back by most of the extra radius.
 */
#ifndef TSUBU_SURFACE_H
#define TSUBU_SURFACE_H

#include <stddef.h>

#include "frameloop.h"
#include "status.h"

/* In the order of the schema's `surface_method` items. */
typedef enum ts_surface_method { TS_SURFACE_ANISOTROPIC = 0, TS_SURFACE_SPHERES = 1 } ts_surface_method;

typedef struct ts_surface_settings {
    int method;               /* ts_surface_method */
    double particle_radius;   /* m; the particles' rest spacing is twice it */
    double radius_scale;      /* spheres: sphere radius / particle radius, >= 1 */
    double voxel_ratio;       /* voxel size / particle radius */
    int smoothing;            /* spheres: Gaussian passes; 0 keeps the union of spheres */
} ts_surface_settings;

/* The settings from an effect's parameters, which name them alike (water, erosion, elastoplastic). */
#define TS_SURFACE_SETTINGS(p)                                                                             \
    ((ts_surface_settings){(p).surface_method, (p).particle_radius, (p).surface_radius_scale,              \
                           (p).surface_voxel_ratio, (p).surface_smoothing})

/* The level set 'surface' of n particles (the caller frees *out with tsvdb_grid_free). Also what
 * Rebuild Surface runs on a cache's particles, so a rebuilt frame is the bake's own, byte for byte. */
struct tsvdb_grid;
ts_status ts_surface_level_set(const ts_surface_settings *s, const float *x, const float *y, const float *z, size_t n,
                               struct tsvdb_grid **out, ts_error *err);

/* The anisotropic method (surface_anisotropic.c). */
ts_status ts_surface_anisotropic(const ts_surface_settings *s, const float *x, const float *y, const float *z,
                                 size_t n, struct tsvdb_grid **out, ts_error *err);

/* The same with `plain` 1: each kernel summed over every voxel of its bounding box by the formula
 * alone, the reference the tests hold the row-wise sums to. */
ts_status ts_surface_anisotropic_form(const ts_surface_settings *s, const float *x, const float *y,
                                      const float *z, size_t n, int plain, struct tsvdb_grid **out, ts_error *err);

/* Write DIR/<stream>/<stream>_<frame>.vdb with the grid 'surface'. */
ts_status ts_output_surface(ts_frame_output *out, const char *stream, const ts_surface_settings *s, const float *x,
                            const float *y, const float *z, size_t n, ts_error *err);

#endif
