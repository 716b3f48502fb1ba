/* grid.h - the neighbour grid every solver shares.
 *
 * A uniform grid of cubic cells no smaller than the search radius h.
 * Particles are counting-sorted by cell (stable, so the order is
 * deterministic); solvers then permute their own arrays into that order
 * (ts_grid_permute) so that neighbours sit close together in memory.
 * Because cells are ordered x-fastest, the three cells along x around a
 * point are one contiguous index range: a neighbour query is 9 ranges.
 *
 * Cell coordinates are clamped into the grid. Clamping moves two particles
 * at most as far apart in cell units as they were, so particles within h
 * of each other always land in the same or adjacent cells: strays outside
 * the bounds are still found, just less efficiently.
 */
#ifndef TSUBU_GRID_H
#define TSUBU_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct ts_grid {
    float cell_size;
    float inv_cell;
    float origin[3];
    int dims[3];
    size_t ncells;
    size_t count;           /* particles in the last build */
    uint32_t *cell_start;   /* ncells + 1 offsets into `sorted` */
    uint32_t *sorted;       /* particle indices in cell order */
    uint32_t *cell_of;      /* cell of each particle, input order */
    size_t cell_capacity;
    size_t particle_capacity;
} ts_grid;

/* Rows of cells (y, z fixed) a query can touch: 3 x 3 for cells of the
 * search radius, 5 x 5 for cells of half of it (ts_grid_ranges_within). */
#define TS_GRID_MAX_RANGES 25

typedef struct ts_neighbor_ranges {
    int n;                                 /* number of non-empty ranges */
    uint32_t begin[TS_GRID_MAX_RANGES];    /* positions in sorted order */
    uint32_t end[TS_GRID_MAX_RANGES];
} ts_neighbor_ranges;

void ts_grid_init(ts_grid *g);
void ts_grid_free(ts_grid *g);

/* Sort n particles (SoA coordinates x, y, z) into cells of size >= h.
 * bounds (xmin, ymin, zmin, xmax, ymax, zmax) fixes the grid to a domain;
 * NULL fits it to the particles. The cell count is capped near a few per
 * particle (cells grow instead), so a far outlier cannot exhaust memory.
 * Buffers are reused between builds: no allocation once capacity suffices. */
ts_status ts_grid_build(ts_grid *g, const float *x, const float *y, const float *z, size_t n,
                        float h, const float *bounds, ts_error *err);

/* The cell of a point (clamped into the grid). */
static inline void ts_grid_cell_coords(const ts_grid *g, float px, float py, float pz, int c[3])
{
    const float p[3] = {px, py, pz};
    for (int a = 0; a < 3; a++) {
        float f = (p[a] - g->origin[a]) * g->inv_cell;
        int i = f >= (float)g->dims[a] ? g->dims[a] - 1 : (f > 0.0f ? (int)f : 0);
        c[a] = i; /* NaN compares false everywhere and lands in cell 0 */
    }
}

/* Ranges of sorted positions holding every particle within h of a point. */
void ts_grid_neighbor_ranges(const ts_grid *g, float px, float py, float pz, ts_neighbor_ranges *r);

/* The same for a radius of up to two cells (a grid built with cells of
 * radius / 2): each row of cells is cut to the cells the sphere of the
 * radius reaches and rows it misses are left out, so the ranges hold about
 * 40 % fewer particles than the 27 cells of size radius would. */
void ts_grid_ranges_within(const ts_grid *g, float px, float py, float pz, float radius, ts_neighbor_ranges *r);

/* out[k] = in[sorted[k]]: put a per-particle float array into cell order. */
void ts_grid_permute_f32(const ts_grid *g, const float *in, float *out);
void ts_grid_permute_u32(const ts_grid *g, const uint32_t *in, uint32_t *out);

#endif
