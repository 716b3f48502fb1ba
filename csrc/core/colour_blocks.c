/* colour_blocks.c - particles in blocks of eight colours (see colour_blocks.h). */
#include "colour_blocks.h"

#include <omp.h>
#include <stdlib.h>

#include "buffer.h"

void ts_colour_blocks_init(ts_colour_blocks *b)
{
    *b = (ts_colour_blocks){0};
    ts_grid_init(&b->grid);
}

void ts_colour_blocks_free(ts_colour_blocks *b)
{
    ts_grid_free(&b->grid);
    free(b->order);
    free(b->block_start);
    ts_colour_blocks_init(b);
}

/* The parities of a cell's coordinates (the grid's cells are x-fastest). */
static int cell_colour(const ts_grid *g, size_t c)
{
    const size_t dx = (size_t)g->dims[0], dy = (size_t)g->dims[1];
    return (int)((c % dx) & 1) | (int)(((c / dx) % dy) & 1) << 1 | (int)((c / (dx * dy)) & 1) << 2;
}

ts_status ts_colour_blocks_build(ts_colour_blocks *b, const float *x, const float *y, const float *z, size_t n,
                                 double reach, ts_error *err)
{
    /* a tenth over 2 reach: float rounding of a cell's coordinates cannot bring two blocks of a colour within it */
    ts_status st = ts_grid_build(&b->grid, x, y, z, n, (float)(2.1 * reach), NULL, err);
    if (st != TS_OK)
        return st;
    const ts_grid *g = &b->grid;
    /* blocks and positions counted by colour, then the cells placed in cell order within their colour */
    size_t blocks_of[TS_COLOURS] = {0}, particles_of[TS_COLOURS] = {0};
    for (size_t c = 0; c < g->ncells; c++) {
        const uint32_t count = g->cell_start[c + 1] - g->cell_start[c];
        const int colour = cell_colour(g, c);
        blocks_of[colour] += count > 0;
        particles_of[colour] += count;
    }
    size_t blocks = 0;
    for (int colour = 0; colour < TS_COLOURS; colour++)
        blocks += blocks_of[colour];
    if (ts_grow((void **)&b->order, &b->order_cap, n + 1, sizeof *b->order) ||
        ts_grow((void **)&b->block_start, &b->block_cap, blocks + 1, sizeof *b->block_start))
        return ts_fail(err, TS_ERR_NOMEM, "colour blocks: out of memory for %zu particles", n);
    size_t next_block[TS_COLOURS], next_at[TS_COLOURS], block = 0, at = 0;
    for (int colour = 0; colour < TS_COLOURS; colour++) {
        b->colour_start[colour] = (uint32_t)block;
        next_block[colour] = block, next_at[colour] = at;
        block += blocks_of[colour], at += particles_of[colour];
    }
    for (size_t c = 0; c < g->ncells; c++) {
        const uint32_t first = g->cell_start[c], end = g->cell_start[c + 1];
        if (first == end)
            continue;
        const int colour = cell_colour(g, c);
        b->block_start[next_block[colour]++] = (uint32_t)next_at[colour];
        for (uint32_t k = first; k < end; k++)
            b->order[next_at[colour]++] = g->sorted[k]; /* ascending: the grid's sort is stable */
    }
    b->colour_start[TS_COLOURS] = (uint32_t)block;
    b->block_start[block] = (uint32_t)at;
    b->blocks = block;
    b->n = n;
    return TS_OK;
}

void ts_colour_blocks_run(const ts_colour_blocks *b, ts_colour_block_fn fn, void *user)
{
    #pragma omp parallel
    {
        /* each thread takes the blocks whose middle lies in its share of the colour's particles: balanced to half
         * a block, and the same blocks on every pass, whose particles and neighbours are still in its core's cache
         * from the pass before (blocks dealt out dynamically came to a thread cold: a CG ran 35 ms a step against
         * 27). By where blocks start, the first thread took every block across the split: 7-9 % more work */
        const size_t threads = (size_t)omp_get_num_threads(), t = (size_t)omp_get_thread_num();
        for (int colour = 0; colour < TS_COLOURS; colour++) {
            const size_t first = b->colour_start[colour], end = b->colour_start[colour + 1];
            const size_t p0 = b->block_start[first], count = b->block_start[end] - p0;
            const size_t lo = p0 + count * t / threads, hi = p0 + count * (t + 1) / threads;
            for (size_t k = first; k < end; k++) {
                const size_t twice_middle = (size_t)b->block_start[k] + b->block_start[k + 1];
                if (twice_middle >= 2 * lo && twice_middle < 2 * hi)
                    fn(user, b->block_start[k], b->block_start[k + 1]);
            }
            #pragma omp barrier
        }
    }
}
