/* bond_levels.h - the hierarchical grouping of pore springs and their
 * strengths (Imagire, Johan & Nishita, §3.2 and §4, figs 2 and 4).
 *
 * Springs are taken shortest first. At level h, the elements already
 * joined by springs of the levels below count as one cluster; a spring
 * joins level h when neither of its two clusters has been joined to another
 * cluster at level h yet, and every other spring between the same two
 * clusters joins with it (fig. 2 d, e). Repeating this until no spring is
 * left pairs clusters level by level, so each level roughly halves the
 * number of pieces: the lowest level binds close pairs, the highest the
 * few seams between the largest pieces.
 *
 * With a brittleness map, the springs whose midpoint lies in the hard
 * (dark) region form level 0 first (fig. 4 b), and the rest are grouped as
 * above from level 1 on. Strength p_i follows eq. 1.
 */
#ifndef TSUBU_BOND_LEVELS_H
#define TSUBU_BOND_LEVELS_H

#include <stddef.h>
#include <stdint.h>

#include "delaunay.h"
#include "status.h"

/* level[i] for each of the spring_count springs between element_count
 * elements; length[i] orders them (ties by index), hard[i] != 0 puts a
 * spring in the hard level 0 (hard may be NULL). *max_level is H. */
ts_status ts_bond_levels(size_t element_count, const ts_edge *springs, const double *length, const uint8_t *hard,
                         size_t spring_count, int *level, int *max_level, ts_error *err);

/* Union-find root of i (with path halving): clusters here, pieces in the solver. */
uint32_t ts_find_root(uint32_t *parent, uint32_t i);

/* Eq. 1: p = p0 + (pH - p0) (h / H)^n; p0 when H is 0. */
double ts_bond_strength(int h, int H, double p0, double pH, double n);

#endif
