/* surface.c - particles to a level set by either method, written per frame (see surface.h). */
#include "surface.h"

#include "../vdb/tsubu_vdb.h"

ts_status ts_surface_level_set(const ts_surface_settings *s, const float *x, const float *y, const float *z, size_t n,
                               tsvdb_grid **out, ts_error *err)
{
    if (s->method == TS_SURFACE_ANISOTROPIC)
        return ts_surface_anisotropic(s, x, y, z, n, out, err);
    tsvdb_grid *g = NULL;
    const double r = s->particle_radius, radius = r * s->radius_scale;
    ts_status st = tsvdb_particles_to_level_set(x, y, z, NULL, (float)radius, n, r * s->voxel_ratio, 3.0, &g, err);
    /* spheres of radius k r overlap into a blobby union: smooth it, then erode
     * back by most of the extra radius so the liquid keeps its volume */
    if (st == TS_OK && s->smoothing > 0)
        st = tsvdb_level_set_smooth(g, s->smoothing, 0.5 * (radius - r), err);
    if (st == TS_OK)
        st = tsvdb_grid_set_name(g, "surface", err);
    if (st != TS_OK) {
        tsvdb_grid_free(g);
        g = NULL;
    }
    *out = g;
    return st;
}

ts_status ts_output_surface(ts_frame_output *out, const char *stream, const ts_surface_settings *s, const float *x,
                            const float *y, const float *z, size_t n, ts_error *err)
{
    char path[4096];
    ts_status st = ts_output_file(out, stream, "vdb", path, sizeof path, err);
    tsvdb_grid *g = NULL;
    if (st == TS_OK)
        st = ts_surface_level_set(s, x, y, z, n, &g, err);
    if (st == TS_OK)
        st = tsvdb_write(path, &g, 1, err);
    tsvdb_grid_free(g);
    return st;
}
