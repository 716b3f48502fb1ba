/* sand_bed.c - the sand bed's heights and the DEM region over them (sand paper §4.1, §4.2, §4.4's rebuild). */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sand_internal.h"
#include "mesh.h"
#include "parallel.h"
#include "rng.h"

/* ------------------------------------------------------------ the heights */

/* keep[i] = 1 for the DEs that are not part of the ground: airborne, or resting on an object */
static void mark_grains(ts_sand *s)
{
    #pragma omp parallel for schedule(static) if (s->el.n >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < s->el.n; i++)
        s->keep[i] = (s->flags[i] & FLAG_AIRBORNE) || sand_resting_on_object(s, i);
}

/* §4.4 rebuild, volume-exact: each column shows the bed plus the volume of
 * the ground DEs over it (spread over the 2 x 2 nearest column centres),
 * then smoothing within the region. Airborne grains and DEs resting on
 * objects are not part of the ground. */
void sand_rebuild_display(ts_sand *s)
{
    const double area = s->p.cell_size * s->p.cell_size;
    const int nx = s->cols.nx, ny = s->cols.ny;
    memcpy(s->display, s->bed, s->n_columns * sizeof *s->display);
    mark_grains(s);
    for (size_t i = 0; i < s->el.n; i++) {
        if (s->keep[i])
            continue;
        double fx = (s->x[i] - s->cols.x0) / s->cols.cell - 0.5, fy = (s->y[i] - s->cols.y0) / s->cols.cell - 0.5;
        int i0 = (int)floor(fx), j0 = (int)floor(fy);
        double ax = fx - i0, ay = fy - j0, h = s->vol[i] / area;
        int inside;
        size_t own = column_of(s, s->x[i], s->y[i], &inside);
        for (int b = 0; b < 2; b++)
            for (int a = 0; a < 2; a++) {
                int ci = i0 + a < 0 ? 0 : (i0 + a >= nx ? nx - 1 : i0 + a);
                int cj = j0 + b < 0 ? 0 : (j0 + b >= ny ? ny - 1 : j0 + b);
                size_t c = (size_t)ci + (size_t)nx * cj;
                double w = (a ? ax : 1.0 - ax) * (b ? ay : 1.0 - ay);
                s->display[s->region[c] ? c : own] += w * h; /* sand stays within the region's columns */
            }
    }
    sand_smooth_heights(s->display, s->column_scratch, s->region, nx, ny, s->p.smoothing);
    for (size_t c = 0; c < s->n_columns; c++)
        s->display_f[c] = (float)s->display[c];
}

const float *ts_sand_heights(ts_sand *s)
{
    sand_rebuild_display(s);
    return s->display_f;
}

/* -------------------------------------------------------- the DEM region */

/* Would a DE at offset (dx, dy) in column (i, j) reach into a neighbour
 * column that stays bed (not in the region, nor being converted), or past
 * the bed's edge? The bed's side there is a wall: a DE placed through it
 * would be thrown out. The diagonal neighbours count too: a site on a
 * column's corner inside a region's inner corner sits on the corner edge of
 * the bed column across it, whose span contact threw it out at a few cells
 * per second as the region was laid (every region around a round footprint
 * has such corners). */
static int touches_static_side(const ts_sand *s, int i, int j, double dx, double dy, double r)
{
    const double cell = s->p.cell_size, reach = r * (1.0 - 1e-9); /* just touching (to rounding) is fine */
    for (int b = -1; b <= 1; b++)
        for (int a = -1; a <= 1; a++) {
            int u = i + a, v = j + b, outside = u < 0 || v < 0 || u >= s->cols.nx || v >= s->cols.ny;
            if ((!a && !b) || (!outside && s->region[(size_t)u + (size_t)s->cols.nx * v]))
                continue; /* the bed ends in walls (hsmap.c): outside it counts as bed */
            /* from the site to the nearest point of that column's footprint, horizontally */
            double ex = a < 0 ? dx : (a > 0 ? cell - dx : 0.0), ey = b < 0 ? dy : (b > 0 ? cell - dy : 0.0);
            if (ex * ex + ey * ey < reach * reach)
                return 1;
        }
    return 0;
}

/* Is a new DE at p clear of the objects and of the DEs already there (the grid is current)? */
static int site_is_free(const ts_sand *s, ts_vec3 p, double r)
{
    int ci, cj;
    ts_columns_index(&s->cols, p.x, p.y, &ci, &cj);
    for (size_t k = 0; k < s->n_objects; k++) {
        int count;
        const ts_span *sp = ts_hsmap_column(&s->objects[k].map, ci, cj, &count);
        for (int q = 0; q < count; q++)
            if (p.z + r > sp[q].bottom && p.z - r < sp[q].top)
                return 0;
    }
    ts_neighbor_ranges nr;
    ts_grid_neighbor_ranges(&s->grid, (float)p.x, (float)p.y, (float)p.z, &nr);
    for (int q = 0; q < nr.n; q++)
        for (uint32_t k = nr.begin[q]; k < nr.end[q]; k++) {
            uint32_t j = s->grid.sorted[k];
            double dx = s->x[j] - p.x, dy = s->y[j] - p.y, dz = s->z[j] - p.z, rr = 0.95 * (r + s->r[j]);
            if (dx * dx + dy * dy + dz * dz < rr * rr)
                return 0;
        }
    return 1;
}


/* The height between two layers whose DEs (touching at 2r, a square layer's
 * diagonal sqrt 2 r apart across) overlap by `overlap`. */
static double layer_height(double r, double overlap)
{
    double d = fmax(2.0 * r - overlap, 1.5 * r);
    return sqrt(d * d - 2.0 * r * r);
}

/* §4.2: turn the columns marked 2 in s->region into DEs, the sand between
 * each column's surface and the floor `depth` below shared equally among
 * the new DEs (volume exact); marks become 1. The DEs sit in an FCC lattice
 * seen along a cube axis turned by 45 degrees: square layers of touching
 * spheres (spacing 2r, aligned with the bed's cells) stacked sqrt(2) r
 * apart, each layer in the hollows of the one below. Aligned so, the lower
 * layers reach the region's edges and the upper ones rest on four DEs even
 * there, so a fresh region does not crumble at its sides. Each column's
 * layers hang from its surface, and no DE is placed into one already there. */
static ts_status convert_marked_columns(ts_sand *s, int i0, int j0, int i1, int j1, ts_error *err)
{
    const double r = s->p.element_radius, cell = s->p.cell_size;
    const int nx = s->cols.nx;
    /* Each layer is laid squeezed by the weight it carries, so a fresh region starts at rest instead of sagging
     * and ringing as it loads its contacts. A DE of the k-th layer from the top passes the weight of k DEs down
     * through four contacts at about 45 degrees, each pressed k m g / (2 sqrt 2) with k_n = K0 m / 2 (eq. A-9,
     * m_eff = m / 2): an overlap of k g / (sqrt 2 K0), the DE mass dropping out. A bottom DE of n layers rests
     * on the floor alone, k_n = K0 m: n g / K0. */
    const double g = gravity_magnitude(s);
    const double squeeze_pair = g / (M_SQRT2 * s->K0), squeeze_floor = g / s->K0;
    ts_status st = sand_build_grid(s, err);
    if (st != TS_OK)
        return st;
    double volume = 0.0;
    size_t first = s->el.n;
    for (int j = j0; j <= j1; j++)
        for (int i = i0; i <= i1; i++) {
            size_t c = (size_t)i + (size_t)nx * j;
            if (s->region[c] != 2)
                continue;
            double top = s->bed[c], floor_z = top - s->depth;
            double xa = s->cols.x0 + i * cell, ya = s->cols.y0 + j * cell;
            /* the layers hang from the surface: the top layer's DEs reach it, so an object finds the sand where
             * the bed beside shows it; the floor goes under the lowest layer, within a layer of `depth` */
            long layers = 0;
            double z = top - r;
            while (z - r >= floor_z - 1e-9 * cell) {
                layers++;
                z -= layer_height(r, (double)layers * squeeze_pair);
            }
            if (layers > 0) {
                z += layer_height(r, (double)layers * squeeze_pair); /* the lowest layer's centres */
                floor_z = z - r + (double)layers * squeeze_floor;
            }
            for (long k = 0; k < layers; k++) {
                double shift = (k & 1) ? r : 0.0;
                if (k > 0)
                    z += layer_height(r, (double)(layers - k) * squeeze_pair);
                /* lattice indices from the column's corner; eps keeps a site on a
                 * column's edge in exactly one column despite rounding */
                const double eps = 1e-9 * cell;
                long la = (long)ceil((xa - eps - s->cols.x0 - r - shift) / (2 * r));
                long ma = (long)ceil((ya - eps - s->cols.y0 - r - shift) / (2 * r));
                for (long m = ma;; m++) {
                    double y = s->cols.y0 + r + shift + 2 * r * m;
                    if (y >= ya + cell - eps)
                        break;
                    for (long l = la;; l++) {
                        double x = s->cols.x0 + r + shift + 2 * r * l;
                        if (x >= xa + cell - eps)
                            break;
                        ts_vec3 site = ts_v3(x, y, z);
                        if (x < xa - eps || y < ya - eps || touches_static_side(s, i, j, x - xa, y - ya, r) ||
                            !site_is_free(s, site, r))
                            continue;
                        if ((st = sand_grow_elements(s, s->el.n + 1, err)) != TS_OK)
                            return st;
                        sand_add_element(s, site, ts_v3(0, 0, 0), r, 0.0, 0);
                    }
                }
            }
            s->region[c] = 3; /* converted in this call */
            s->column_scratch[c] = top;
            volume += (top - floor_z) * cell * cell; /* the column's sand now lives in the new DEs */
            s->bed[c] = floor_z;
        }
    size_t added = s->el.n - first;
    for (int j = j0; j <= j1; j++) /* no room for any DE: the columns stay bed, to be tried again */
        for (int i = i0; i <= i1; i++) {
            size_t c = (size_t)i + (size_t)nx * j;
            if (s->region[c] == 3) {
                s->region[c] = added ? 1 : 0;
                if (!added)
                    s->bed[c] = s->column_scratch[c];
            }
        }
    for (size_t k = first; k < s->el.n; k++) {
        s->vol[k] = volume / (double)added;
        s->m[k] = s->vol[k] * s->p.bulk_density;
    }
    return TS_OK;
}

/* Grow a box of columns (i0, j0, i1, j1; empty while i0 > i1, as {nx, ny, -1, -1} or {INT_MAX, INT_MAX, -1, -1}) to hold
 * columns i0..i1 x j0..j1. */
static void box_add(int box[4], int i0, int j0, int i1, int j1)
{
    box[0] = i0 < box[0] ? i0 : box[0], box[1] = j0 < box[1] ? j0 : box[1];
    box[2] = i1 > box[2] ? i1 : box[2], box[3] = j1 > box[3] ? j1 : box[3];
}

/* Mark the columns within `radius` of (ci, cj) that are not yet in the region. */
static int mark_around(ts_sand *s, int ci, int cj, int radius, int box[4])
{
    int marked = 0;
    for (int j = cj - radius; j <= cj + radius; j++)
        for (int i = ci - radius; i <= ci + radius; i++) {
            if (i < 0 || j < 0 || i >= s->cols.nx || j >= s->cols.ny)
                continue;
            size_t c = (size_t)i + (size_t)s->cols.nx * j;
            if (s->region[c])
                continue;
            s->region[c] = 2;
            marked = 1;
            box_add(box, i, j, i, j);
        }
    return marked;
}

/* The automatic DEM depth's cap: the deepest layer the contacts can carry.
 * A bottom DE holds the weight of the layers above it on its four lower
 * contacts at 45 degrees, each squeezed by load / k; past a fraction of a
 * radius the layer sags and never comes to rest (docs/sand.md, Limits). For
 * two equal DEs k / m = (pi^2 + ln^2 e_n) / (2 t_c^2) (eqs ), so the
 * DE mass drops out. Layers are stacked sqrt(2) r apart; two at least. */
static double carried_depth(const ts_sand *s)
{
    const double g = gravity_magnitude(s);
    const double r = s->p.element_radius, spacing = sqrt(2.0) * r;
    if (g <= 0.0)
        return HUGE_VAL;
    double k_per_mass, c_per_mass;
    ts_contact_coefficients(&s->law, 0.5, &k_per_mass, &c_per_mass); /* m = 1, so m_eff = 1/2 */
    const double layers = CARRIED_SQUEEZE * r * 4.0 * sqrt(0.5) * k_per_mass / g;
    return fmax(layers, 2.0) * spacing;
}

/* How many columns around an object's footprint its region takes: FOOTPRINT_MARGIN, and for a heavy object as many
 * as the layer is deep plus that, up to its footprint's width. The bed beside a region is a wall the DEs lean on,
 * and under a heavy object the layer spreads its weight outwards through the depth (the FCC layers' contacts lie at
 * 45 degrees): at two columns the DEs at the region's edge were squeezed up along that wall and the object sank
 * through the layer, the deeper the layer the further (a 10 cm cube of 3000 kg/m^3 on Fine Dust, 2 cm cells: 23,
 * 36 and 43 mm through layers of 5, 10 and 15 cm; with the wider region 10, 7 and 10 mm - docs/sand.md, Bearing). */
static int footprint_margin(const ts_sand *s, const object *ob)
{
    if (object_weights(s, ob) <= HEAVY_WEIGHTS)
        return FOOTPRINT_MARGIN;
    const int width = ob->map.nx < ob->map.ny ? ob->map.nx : ob->map.ny;
    const double margin = fmin(width, ceil(s->depth / s->p.cell_size) + FOOTPRINT_MARGIN);
    return margin > FOOTPRINT_MARGIN ? (int)margin : FOOTPRINT_MARGIN;
}

/* §4.1: an object whose underside reaches the sand outside the region gets
 * a region over its footprint (plus a margin) - the first contact places the
 * DEs, later contacts (a dragged object) extend them. */
ts_status sand_place_under_objects(ts_sand *s, ts_error *err)
{
    for (size_t k = 0; k < s->n_objects; k++) {
        object *ob = &s->objects[k];
        const ts_hsmap *m = &ob->map;
        int box[4] = {s->cols.nx, s->cols.ny, -1, -1}, touching = 0;
        for (int b = 0; b < m->ny && !touching; b++)
            for (int a = 0; a < m->nx && !touching; a++) {
                int count, i = m->i0 + a, j = m->j0 + b;
                const ts_span *sp = ts_hsmap_column(m, i, j, &count);
                size_t c = (size_t)i + (size_t)s->cols.nx * j;
                touching = count > 0 && !s->region[c] && sp[0].bottom < s->bed[c] + s->p.element_radius;
            }
        if (!touching)
            continue;
        if (s->depth <= 0.0)
            s->depth = s->p.dem_depth > 0.0 ? s->p.dem_depth : fmin(object_dem_depth(s, ob), carried_depth(s));
        const int margin = footprint_margin(s, ob);
        for (int b = 0; b < m->ny; b++)
            for (int a = 0; a < m->nx; a++) {
                int count;
                ts_hsmap_column(m, m->i0 + a, m->j0 + b, &count);
                if (count > 0) /* the footprint itself, not its bounding box's edge columns */
                    mark_around(s, m->i0 + a, m->j0 + b, margin, box);
            }
        if (box[2] >= 0) {
            ts_status st = convert_marked_columns(s, box[0], box[1], box[2], box[3], err);
            if (st != TS_OK)
                return st;
        }
    }
    return TS_OK;
}

/* The highest bed column beside column c outside the region, or -HUGE_VAL when c is not at the region's edge. */
static double edge_bed_top(const ts_sand *s, size_t c)
{
    const int nx = s->cols.nx, ny = s->cols.ny, i = (int)(c % (size_t)nx), j = (int)(c / (size_t)nx);
    double top = -HUGE_VAL;
    for (int b = -1; b <= 1; b++)
        for (int a = -1; a <= 1; a++) {
            int u = i + a, v = j + b;
            size_t e = (size_t)u + (size_t)nx * v;
            if (u >= 0 && v >= 0 && u < nx && v < ny && !s->region[e] && s->bed[e] > top)
                top = s->bed[e];
        }
    return top;
}

/* Does DE i, in column c, push the bed beside the region hard enough to move it, and move? Harder than
 * grow_force x its weight, as §4.2 asks - plus, below the surface, what the bed there holds: a DE deep in a
 * packed layer leans on it with the weight of the sand above (such a layer pushes sideways about as hard as
 * down), and sand gives way only past Rankine's passive pressure K_p rho g depth, over the DE's share of the
 * wall (vol / cell). Without that share an edge DE's push at rest, about a weight more per cell of depth, passed
 * the test below a few layers as soon as the DE moved, and a deep region grew at each stir until it covered the
 * bed, each new block settling and stirring again. */
static int pushes_bed_over(const ts_sand *s, size_t i, size_t c, double g, double passive)
{
    const double v2_min = 100.0 * s->p.rest_speed * s->p.rest_speed;
    const double *wall = s->reaction + (i * (s->n_objects + 1) + s->n_objects) * 6;
    double push = sqrt(wall[0] * wall[0] + wall[1] * wall[1]); /* sideways on the bed around the region */
    double v2 = s->vx[i] * s->vx[i] + s->vy[i] * s->vy[i] + s->vz[i] * s->vz[i];
    const double weight = s->m[i] * (g > 0 ? g : 1.0);
    if (v2 <= v2_min || push <= s->p.grow_force * weight)
        return 0;
    double top = edge_bed_top(s, c), depth = top > s->z[i] ? top - s->z[i] : 0.0;
    return top > -HUGE_VAL && push > weight * (s->p.grow_force + passive * depth / s->p.cell_size);
}

/* §4.2: grow the region where a moving DE at its edge pushes the bed beside
 * it over (pushes_bed_over), or where a DE has left the region.
 * (The sideways push of a moving DE rather than the paper's total force:
 * DEs settling along the edge feel impacts of many weights and the bed's
 * pressure waves reach far, which would grow the region over the whole bed
 * where no sand flows.) */
ts_status sand_grow_region(ts_sand *s, ts_error *err)
{
    const double g = gravity_magnitude(s);
    const double sin_phi = sin(s->p.angle_of_repose), passive = (1.0 + sin_phi) / (1.0 - sin_phi);
    int box[4] = {s->cols.nx, s->cols.ny, -1, -1};
    const size_t n = s->el.n;
    /* Marking only ever adds region columns, so a DE that marks in the ordered pass below also passes this
     * test against the region as it was: the tests run in parallel and the pass, in DE order, looks again
     * at the few that passed - the same columns as one ordered pass over all DEs, which was serial.
     * may_grow: 0 no, 1 a candidate, 2 a candidate pushing hard and moving. */
    #pragma omp parallel for schedule(static) if (n >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) {
        s->may_grow[i] = 0;
        if (s->flags[i] & FLAG_AIRBORNE)
            continue;
        int inside;
        size_t c = column_of(s, s->x[i], s->y[i], &inside);
        if (!inside)
            continue;
        int hard = pushes_bed_over(s, i, c, g, passive);
        if (hard || !s->region[c])
            s->may_grow[i] = (uint8_t)(1 + hard);
    }
    for (size_t i = 0; i < n; i++) {
        if (!s->may_grow[i])
            continue;
        int inside;
        size_t c = column_of(s, s->x[i], s->y[i], &inside);
        if ((s->may_grow[i] == 2 && pushes_bed_over(s, i, c, g, passive)) || !s->region[c])
            mark_around(s, (int)(c % (size_t)s->cols.nx), (int)(c / (size_t)s->cols.nx), GROW_RADIUS, box);
    }
    return box[2] >= 0 ? convert_marked_columns(s, box[0], box[1], box[2], box[3], err) : TS_OK;
}

/* ------------------------------------------------------------ avalanches */

/* How fast a slope steeper than the angle of repose runs down: the share of its excess moved per step is
 * dt x AVALANCHE_RATE x sqrt(g / cell) (at most all, split among eight neighbours). At the automatic contact
 * time's step that is nearly all, at any cell size (the step grows as sqrt(cell) too); so a column 16 cells
 * high (32 cm of 2 cm cells) spreads into its cone within half a second - about 3 sqrt(H / g), as dry sand
 * released from a tube does - and the pace does not change with Contact Steps. */
#define AVALANCHE_RATE 30.0

void sand_unsettle(ts_sand *s, int i0, int j0, int i1, int j1)
{
    box_add(s->unsettled, i0, j0, i1, j1);
}

/* The height that runs from a column at `from` to one at `to` a slope `drop` allows between them (negative:
 * it runs back). Exactly antisymmetric - flux(a, b) is -flux(b, a) to the bit - so whatever runs out of one
 * column runs into the other, and the bed's volume is kept to rounding. */
static inline double avalanche_flux(double from, double to, double drop)
{
    const double d = from - to;
    return d > drop ? d - drop : (d < -drop ? d + drop : 0.0);
}

/* The bed outside the DEM region is loose sand: no slope in it stands steeper than the angle of repose
 * (Sumner et al. 1999's heightfield sand, and dry sand's avalanches). Where two neighbouring columns (of the
 * eight around each) differ by more than tan(angle) x their distance, a share of the excess runs down, all
 * columns from the step's heights at once (each column sums its own eight exchanges in a fixed order: the same
 * bits for any thread count). Columns in the region are left alone - their DEs hold their own slopes, and the
 * bed beside the region is the wall that holds the DEs. Only the box of columns that moved, or that sand
 * landed on, since the last pass is looked at: a bed at rest costs nothing. */
void sand_avalanche(ts_sand *s, double dt)
{
    int *u = s->unsettled;
    const double g = gravity_magnitude(s), cell = s->p.cell_size;
    if (u[0] > u[2] || g <= 0.0 || s->p.angle_of_repose >= 0.5 * M_PI * (1.0 - 1e-9)) {
        u[0] = u[1] = INT_MAX, u[2] = u[3] = -1;
        return;
    }
    const int nx = s->cols.nx, ny = s->cols.ny;
    const int i0 = u[0] > 0 ? u[0] - 1 : 0, j0 = u[1] > 0 ? u[1] - 1 : 0;
    const int i1 = u[2] + 1 < nx ? u[2] + 1 : nx - 1, j1 = u[3] + 1 < ny ? u[3] + 1 : ny - 1;
    const double slope = tan(s->p.angle_of_repose), drop[2] = {slope * cell, slope * cell * M_SQRT2};
    /* a sixteenth of the excess per exchange at most: a column losing to all eight keeps half its excess */
    const double share = fmin(1.0, dt * AVALANCHE_RATE * sqrt(g / cell)) / 16.0;
    static const int around[8][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0},
                                     {1, 1, 1}, {-1, 1, 1}, {1, -1, 1}, {-1, -1, 1}};
    const double *h = s->bed;
    double *change = s->column_scratch;
    int m0 = nx, m1 = ny, m2 = -1, m3 = -1;
    #pragma omp parallel for schedule(static) reduction(min : m0, m1) reduction(max : m2, m3) if (j1 - j0 > 32)
    for (int j = j0; j <= j1; j++)
        for (int i = i0; i <= i1; i++) {
            const size_t c = (size_t)i + (size_t)nx * j;
            double sum = 0.0;
            int moved = 0;
            if (!s->region[c])
                for (int q = 0; q < 8; q++) {
                    const int a = i + around[q][0], b = j + around[q][1];
                    if (a < 0 || b < 0 || a >= nx || b >= ny || s->region[(size_t)a + (size_t)nx * b])
                        continue;
                    const double f = avalanche_flux(h[c], h[(size_t)a + (size_t)nx * b], drop[around[q][2]]);
                    sum -= f;
                    moved |= f != 0.0;
                }
            change[c] = share * sum;
            if (moved) {
                m0 = i < m0 ? i : m0, m1 = j < m1 ? j : m1;
                m2 = i > m2 ? i : m2, m3 = j > m3 ? j : m3;
            }
        }
    for (int j = m1; j <= m3; j++)
        for (int i = m0; i <= m2; i++)
            s->bed[(size_t)i + (size_t)nx * j] += change[(size_t)i + (size_t)nx * j];
    /* what moved may have steepened its neighbours: the next pass looks one column around it */
    u[0] = m2 >= 0 ? m0 : INT_MAX, u[1] = m2 >= 0 ? m1 : INT_MAX, u[2] = m2, u[3] = m3;
}
