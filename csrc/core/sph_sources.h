/* sph_sources.h - where an SPH fluid's particles come from: closed meshes
 * filled on the particle lattice at the start, and inflow objects kept full
 * over a frame range. Shared by water and erosion.
 */
#ifndef TSUBU_SPH_SOURCES_H
#define TSUBU_SPH_SOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "frameloop.h"
#include "motion.h"
#include "sph_model.h"
#include "status.h"

/* A triangle mesh as objects give it (world space at frame_start). */
typedef struct ts_mesh_ref {
    const char *name;
    const float *vertices;
    size_t vertex_count;
    const int32_t *triangles;
    size_t triangle_count;
} ts_mesh_ref;

/* Called for each lattice point inside the mesh (phi: its signed distance,
 * negative). Return 0 to stop (out of memory). */
typedef int (*ts_lattice_fn)(void *user, float x, float y, float z, float phi);

/* Lattice points of spacing d inside a closed mesh, the lattice anchored at
 * the mesh's bounding-box corner plus d/2 so that a box is filled exactly;
 * the mesh's distance field of voxel `voxel`. */
ts_status ts_lattice_fill(const ts_mesh_ref *mesh, double spacing, double voxel, ts_lattice_fn keep, void *user,
                          ts_error *err);

/* Points with a velocity each, grown as they are found (set-up only). */
typedef struct ts_point_list {
    float *c[6];        /* x, y, z, vx, vy, vz */
    size_t n, cap;
    double max_depth;   /* keep points no deeper than this (rigid shells); <= 0: all */
    float velocity[3];  /* given to points added from now on */
} ts_point_list;

/* A ts_lattice_fn that appends to a ts_point_list. */
int ts_point_list_add(void *list, float x, float y, float z, float phi);
void ts_point_list_free(ts_point_list *l);

/* An inflow: its lattice sites at rest, moved by its animation. */
typedef struct ts_sph_inflow {
    char name[64];
    float *sx, *sy, *sz;
    size_t n;
    ts_motion m;
    float v[3];
    int start, end;     /* frames */
} ts_sph_inflow;

ts_status ts_sph_inflow_init(ts_sph_inflow *f, const ts_mesh_ref *mesh, const double *motion, int motion_frames,
                             const double velocity[3], int start, int end, double spacing, ts_error *err);
void ts_sph_inflow_free(ts_sph_inflow *f);
/* Upper bound of the particles it can emit over its frames. */
double ts_sph_inflow_budget(const ts_sph_inflow *f, double frame_dt, double spacing);
/* Fill every free site of the inflow if it is active in the interval being
 * computed (sites are a lattice, so new particles never crowd each other);
 * ids from *next_id. frame_start: the animation's first row. Returns how many. */
size_t ts_sph_inflow_emit(const ts_sph_inflow *f, ts_sph_model *m, const ts_step_context *now, int frame_start,
                          uint32_t *next_id);

#endif
