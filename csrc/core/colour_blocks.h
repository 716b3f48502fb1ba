/* colour_blocks.h - particles in blocks of eight colours, for sums scattered to neighbours in parallel with the
 * same bits on any number of threads.
 *
 * A pass in which each particle adds to the sums of particles within `reach` of it (a master's share to its
 * slaves) cannot run two such particles at once when they share a neighbour: their additions would race, and
 * their order would depend on the threads. Here the particles are sorted into cubic blocks of at least
 * 2 reach (the shared grid's cells), each block coloured by the parity of its three cell coordinates. Two
 * blocks of one colour lie at least one block apart on some axis, so no neighbour lies within reach of both:
 * the blocks of a colour run in parallel, each block in ascending particle order, the colours one after the
 * other. Every sum then receives its additions in one order - by colour, then within the one block of that
 * colour that reaches it, by particle - whichever thread ran which block. (The graph colouring of a grid that
 * MPM codes use for their particle-to-grid transfers, with the slaves in the grid's place.)
 */
#ifndef TSUBU_COLOUR_BLOCKS_H
#define TSUBU_COLOUR_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "status.h"

#define TS_COLOURS 8

typedef struct ts_colour_blocks {
    ts_grid grid;               /* cells of at least 2 reach */
    uint32_t *order;            /* n: the particles, by colour, block and index: position p holds order[p] */
    uint32_t *block_start;      /* blocks + 1: block b is positions [block_start[b], block_start[b + 1]) */
    uint32_t colour_start[TS_COLOURS + 1]; /* colour c is blocks [colour_start[c], colour_start[c + 1]) */
    size_t n, blocks, order_cap, block_cap;
} ts_colour_blocks;

void ts_colour_blocks_init(ts_colour_blocks *b);
void ts_colour_blocks_free(ts_colour_blocks *b);

/* Sort n particles into coloured blocks for neighbours closer than reach. */
ts_status ts_colour_blocks_build(ts_colour_blocks *b, const float *x, const float *y, const float *z, size_t n,
                                 double reach, ts_error *err);

/* The positions [first, end) of one block, its particles order[first .. end). */
typedef void (*ts_colour_block_fn)(void *user, size_t first, size_t end);

/* Every block through fn: the blocks of a colour in parallel (called from outside a parallel region). */
void ts_colour_blocks_run(const ts_colour_blocks *b, ts_colour_block_fn fn, void *user);

#endif
