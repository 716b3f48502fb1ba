/* brittleness.h - the brittleness map: an image painted black where an
 * object must hold and white where it may break (Imagire et al. §4, fig. 1),
 * looked up at points inside the object.
 *
 * The paper lays the image on a thin wall, i.e. projects it through the
 * object along one axis; we offer that (planar X/Y/Z, the image stretched
 * over the object's bounds) and the object's own UV map, read at the
 * nearest point of its surface, so any painted texture works.
 */
#ifndef TSUBU_BRITTLENESS_H
#define TSUBU_BRITTLENESS_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "vecmath.h"

typedef enum ts_map_projection {
    TS_MAP_UV = 0,        /* the object's UV map at the nearest surface point */
    TS_MAP_PLANAR_X = 1,  /* along x: u from y, v from z */
    TS_MAP_PLANAR_Y = 2,  /* along y: u from x, v from z (the paper's wall) */
    TS_MAP_PLANAR_Z = 3   /* along z: u from x, v from y */
} ts_map_projection;

typedef struct ts_brittleness_map {
    const float *pixels;        /* grey 0 (hard) .. 1 (brittle), width * height, bottom row first (Blender's order) */
    int width, height;
    ts_map_projection projection;
    /* the object, world space: bounds for planar, triangles and corner UVs (3 x uv per triangle) for UV */
    const float *vertices;
    const int32_t *triangles;
    size_t triangle_count;
    const float *corner_uv;
    double bounds[6];
} ts_brittleness_map;

/* Check the map (names `object` in messages) and fill its bounds. */
ts_status ts_brittleness_init(ts_brittleness_map *m, const char *object, size_t vertex_count, ts_error *err);

/* Grey value at a world point: bilinear; UVs repeat the image, the edge pixels extend. */
double ts_brittleness_at(const ts_brittleness_map *m, ts_vec3 p);

/* Closest point of triangle (a, b, c) to p, as barycentric weights (Ericson, Real-Time Collision Detection 5.1.5). */
void ts_closest_on_triangle(ts_vec3 p, ts_vec3 a, ts_vec3 b, ts_vec3 c, double w[3]);

#endif
