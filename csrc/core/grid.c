/* grid.c - uniform neighbour grid with counting sort (see grid.h). */
#include "grid.h"
#include "parallel.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/* Cells per particle beyond which the grid coarsens instead of growing. */
#define MAX_CELLS_PER_PARTICLE 8
#define MIN_CELL_BUDGET 4096

void ts_grid_init(ts_grid *g)
{
    g->cell_size = g->inv_cell = 0.0f;
    g->origin[0] = g->origin[1] = g->origin[2] = 0.0f;
    g->dims[0] = g->dims[1] = g->dims[2] = 1;
    g->ncells = g->count = 0;
    g->cell_start = g->sorted = g->cell_of = NULL;
    g->cell_capacity = g->particle_capacity = 0;
}

void ts_grid_free(ts_grid *g)
{
    free(g->cell_start);
    free(g->sorted);
    free(g->cell_of);
    ts_grid_init(g);
}

static int reserve_u32(uint32_t **buf, size_t *capacity, size_t needed)
{
    if (needed <= *capacity)
        return 1;
    size_t grown = needed + needed / 4;
    uint32_t *p = realloc(*buf, grown * sizeof **buf);
    if (!p)
        return 0;
    *buf = p;
    *capacity = grown;
    return 1;
}

/* sorted and cell_of always share one capacity */
static int reserve_particles(ts_grid *g, size_t n)
{
    if (n <= g->particle_capacity)
        return 1;
    size_t grown = n + n / 4 + 1;
    uint32_t *sorted = realloc(g->sorted, grown * sizeof *sorted);
    if (!sorted)
        return 0;
    g->sorted = sorted;
    uint32_t *cell_of = realloc(g->cell_of, grown * sizeof *cell_of);
    if (!cell_of)
        return 0;
    g->cell_of = cell_of;
    g->particle_capacity = grown;
    return 1;
}

static void particle_bounds(const float *x, const float *y, const float *z, size_t n, float lo[3], float hi[3])
{
    lo[0] = lo[1] = lo[2] = FLT_MAX;
    hi[0] = hi[1] = hi[2] = -FLT_MAX;
    for (size_t i = 0; i < n; i++) {
        const float p[3] = {x[i], y[i], z[i]};
        for (int a = 0; a < 3; a++) {
            if (!isfinite(p[a]))
                continue; /* NaN/inf are clamped into a cell, not allowed to size the grid */
            if (p[a] < lo[a]) lo[a] = p[a];
            if (p[a] > hi[a]) hi[a] = p[a];
        }
    }
    for (int a = 0; a < 3; a++)
        if (lo[a] > hi[a])
            lo[a] = hi[a] = 0.0f;
}

/* Choose cell size >= h and dims so that the cell count stays within budget. */
static void fit_dims(ts_grid *g, const float lo[3], const float hi[3], float h, size_t budget)
{
    double cell = h;
    for (;;) {
        double total = 1.0;
        for (int a = 0; a < 3; a++) {
            double d = floor(((double)hi[a] - lo[a]) / cell) + 1.0;
            g->dims[a] = d > 1e6 ? 1000000 : (int)d;
            total *= g->dims[a];
        }
        if (total <= (double)budget)
            break;
        cell *= 1.25;
    }
    g->cell_size = (float)cell;
    g->inv_cell = (float)(1.0 / cell);
    for (int a = 0; a < 3; a++)
        g->origin[a] = lo[a];
    g->ncells = (size_t)g->dims[0] * g->dims[1] * g->dims[2];
}

ts_status ts_grid_build(ts_grid *g, const float *x, const float *y, const float *z, size_t n,
                        float h, const float *bounds, ts_error *err)
{
    if (!(h > 0.0f) || !isfinite(h))
        return ts_fail(err, TS_ERR_INVALID, "neighbour grid: search radius h must be positive and finite (got %g)", (double)h);
    if (n >= UINT32_MAX)
        return ts_fail(err, TS_ERR_INVALID, "neighbour grid: %zu particles is more than the grid can index", n);
    float lo[3], hi[3];
    if (bounds) {
        for (int a = 0; a < 3; a++) {
            lo[a] = bounds[a];
            hi[a] = bounds[a + 3];
            if (!isfinite(lo[a]) || !isfinite(hi[a]) || hi[a] < lo[a])
                return ts_fail(err, TS_ERR_INVALID, "neighbour grid: bounds are empty or not finite on axis %d", a);
        }
    } else {
        particle_bounds(x, y, z, n, lo, hi);
    }
    size_t budget = n * MAX_CELLS_PER_PARTICLE;
    if (budget < MIN_CELL_BUDGET)
        budget = MIN_CELL_BUDGET;
    fit_dims(g, lo, hi, h, budget);

    if (!reserve_u32(&g->cell_start, &g->cell_capacity, g->ncells + 1) || !reserve_particles(g, n))
        return ts_fail(err, TS_ERR_NOMEM, "neighbour grid: out of memory for %zu particles", n);
    g->count = n;

    const int dx = g->dims[0], dxy = g->dims[0] * g->dims[1];
    #pragma omp parallel for schedule(static) if (n >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) {
        int c[3];
        ts_grid_cell_coords(g, x[i], y[i], z[i], c);
        g->cell_of[i] = (uint32_t)(c[0] + c[1] * dx + c[2] * dxy);
    }
    /* counting sort: histogram, exclusive prefix sum, stable scatter */
    uint32_t *start = g->cell_start;
    for (size_t c = 0; c <= g->ncells; c++)
        start[c] = 0;
    for (size_t i = 0; i < n; i++)
        start[g->cell_of[i] + 1]++;
    for (size_t c = 0; c < g->ncells; c++)
        start[c + 1] += start[c];
    /* scatter using cell_start as the running cursor, then shift back */
    for (size_t i = 0; i < n; i++)
        g->sorted[start[g->cell_of[i]]++] = (uint32_t)i;
    for (size_t c = g->ncells; c > 0; c--)
        start[c] = start[c - 1];
    start[0] = 0;
    return TS_OK;
}

void ts_grid_neighbor_ranges(const ts_grid *g, float px, float py, float pz, ts_neighbor_ranges *r)
{
    int c[3];
    ts_grid_cell_coords(g, px, py, pz, c);
    int x0 = c[0] > 0 ? c[0] - 1 : 0;
    int x1 = c[0] + 1 < g->dims[0] ? c[0] + 1 : g->dims[0] - 1;
    const size_t dx = (size_t)g->dims[0], dxy = dx * (size_t)g->dims[1];
    r->n = 0;
    for (int k = c[2] - 1; k <= c[2] + 1; k++) {
        if (k < 0 || k >= g->dims[2])
            continue;
        for (int j = c[1] - 1; j <= c[1] + 1; j++) {
            if (j < 0 || j >= g->dims[1])
                continue;
            size_t row = (size_t)j * dx + (size_t)k * dxy;
            uint32_t b = g->cell_start[row + (size_t)x0];
            uint32_t e = g->cell_start[row + (size_t)x1 + 1];
            if (b < e) {
                r->begin[r->n] = b;
                r->end[r->n] = e;
                r->n++;
            }
        }
    }
}

/* Rows of cells within two cells of p's cell on one axis, with the gap
 * from p to each (0 for p's own). Gaps never go below 0, and the outermost
 * cells reach to infinity (points beyond the grid are clamped into them),
 * which the gap from the inside side already honours. */
static int rows_near(const ts_grid *g, int axis, float p, int c, int row[5], float gap[5])
{
    const float low = g->origin[axis] + (float)c * g->cell_size;
    int n = 0;
    for (int o = -2; o <= 2; o++) {
        int k = c + o;
        if (k < 0 || k >= g->dims[axis])
            continue;
        float d = o < 0 ? p - (low + (float)(o + 1) * g->cell_size) : (o > 0 ? low + (float)o * g->cell_size - p : 0.0f);
        row[n] = k;
        gap[n] = d > 0.0f ? d : 0.0f;
        n++;
    }
    return n;
}

static inline int clamp_cell(float f, int n)
{
    return f >= (float)n ? n - 1 : (f > 0.0f ? (int)f : 0);
}

void ts_grid_ranges_within(const ts_grid *g, float px, float py, float pz, float radius, ts_neighbor_ranges *r)
{
    int c[3], ys[5], zs[5];
    float gy[5], gz[5];
    ts_grid_cell_coords(g, px, py, pz, c);
    const int ny = rows_near(g, 1, py, c[1], ys, gy), nz = rows_near(g, 2, pz, c[2], zs, gz);
    const float r2 = radius * radius, fx = (px - g->origin[0]) * g->inv_cell;
    const size_t dx = (size_t)g->dims[0], dxy = dx * (size_t)g->dims[1];
    r->n = 0;
    for (int b = 0; b < nz; b++)
        for (int a = 0; a < ny; a++) {
            float d2 = gy[a] * gy[a] + gz[b] * gz[b];
            if (d2 > r2)
                continue; /* the sphere misses this row */
            float half = sqrtf(r2 - d2) * g->inv_cell;
            size_t row = (size_t)ys[a] * dx + (size_t)zs[b] * dxy;
            uint32_t first = g->cell_start[row + (size_t)clamp_cell(fx - half, g->dims[0])];
            uint32_t end = g->cell_start[row + (size_t)clamp_cell(fx + half, g->dims[0]) + 1];
            if (first < end) {
                r->begin[r->n] = first;
                r->end[r->n] = end;
                r->n++;
            }
        }
}

void ts_grid_permute_f32(const ts_grid *g, const float *in, float *out)
{
    #pragma omp parallel for schedule(static) if (g->count >= TS_PARALLEL_MIN)
    for (size_t k = 0; k < g->count; k++)
        out[k] = in[g->sorted[k]];
}

void ts_grid_permute_u32(const ts_grid *g, const uint32_t *in, uint32_t *out)
{
    #pragma omp parallel for schedule(static) if (g->count >= TS_PARALLEL_MIN)
    for (size_t k = 0; k < g->count; k++)
        out[k] = in[g->sorted[k]];
}
