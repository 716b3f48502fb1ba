/* sand_airborne.c - airborne grains (sand paper §4.4): spatter from the surface, landing, merging. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sand_internal.h"
#include "mesh.h"
#include "parallel.h"
#include "rng.h"

/* ------------------------------------------------- airborne grains (§4.4) */

int sand_resting_on_object(const ts_sand *s, size_t i)
{
    for (size_t k = 0; k < s->n_objects; k++) {
        int ci, cj, count;
        ts_columns_index(&s->cols, s->x[i], s->y[i], &ci, &cj);
        const ts_span *sp = ts_hsmap_column(&s->objects[k].map, ci, cj, &count);
        for (int q = 0; q < count; q++)
            if (sp[q].top <= s->z[i] && s->z[i] - s->r[i] - sp[q].top < s->p.resting_gap * s->p.element_radius)
                return 1;
    }
    return 0;
}

/* Split DE i into grain-size airborne DEs (§4.4 1(a)iv): velocities within
 * a cone about its own, positions spread inside the DE along them. */
static ts_status split_airborne(ts_sand *s, size_t i, ts_error *err)
{
    double grain_volume = s->element_volume0 / s->p.grains_per_element;
    long k = lround(s->vol[i] / grain_volume);
    if (k < 1) k = 1;
    if (k > 4L * s->p.grains_per_element) k = 4L * s->p.grains_per_element;
    ts_status st = sand_grow_elements(s, s->el.n + (size_t)k - 1, err);
    if (st != TS_OK)
        return st;
    ts_vec3 p = ts_v3(s->x[i], s->y[i], s->z[i]), v = ts_v3(s->vx[i], s->vy[i], s->vz[i]);
    double speed = ts_v3_length(v), vol = s->vol[i] / (double)k;
    double rg = s->p.element_radius * cbrt(vol / s->element_volume0);
    ts_vec3 axis = ts_v3_scale(v, 1.0 / speed);
    ts_vec3 side = fabs(axis.x) < 0.9 ? ts_v3(1, 0, 0) : ts_v3(0, 1, 0);
    ts_vec3 e1 = ts_v3_cross(axis, side);
    e1 = ts_v3_scale(e1, 1.0 / ts_v3_length(e1));
    ts_vec3 e2 = ts_v3_cross(axis, e1);
    uint32_t parent = s->id[i];
    for (long g = 0; g < k; g++) {
        double u1 = ts_rng_hash_uniform(s->p.seed, parent, 2 * (uint64_t)g);
        double u2 = ts_rng_hash_uniform(s->p.seed, parent, 2 * (uint64_t)g + 1);
        double cos_a = 1.0 - u1 * (1.0 - cos(s->p.cone_angle)), sin_a = sqrt(fmax(0.0, 1.0 - cos_a * cos_a));
        double phi = 2.0 * M_PI * u2;
        ts_vec3 dir = ts_v3_add(ts_v3_scale(axis, cos_a),
                                ts_v3_add(ts_v3_scale(e1, sin_a * cos(phi)), ts_v3_scale(e2, sin_a * sin(phi))));
        /* within the parent's sphere, a little ahead along the grain's own
         * direction: grains do not collide with each other in flight, so they
         * need not be strung out as the paper does (which, for 30 grains,
         * reaches many element sizes away - into objects) */
        double u3 = ts_rng_hash_uniform(s->p.seed ^ 0x9e3779b97f4a7c15ull, parent, (uint64_t)g);
        ts_vec3 pos = ts_v3_add(p, ts_v3_scale(dir, (s->r[i] - rg) * cbrt(u3)));
        if (g > 0) {
            sand_add_element(s, pos, ts_v3_scale(dir, speed), rg, vol, FLAG_AIRBORNE);
        } else { /* the DE itself becomes the first grain */
            s->vx[i] = dir.x * speed, s->vy[i] = dir.y * speed, s->vz[i] = dir.z * speed;
            s->r[i] = rg, s->vol[i] = vol, s->m[i] = vol * s->p.bulk_density;
            s->flags[i] |= FLAG_AIRBORNE;
            s->c.count[i] = 0;
        }
    }
    return TS_OK;
}

/* §4.4 step 1 (iv): a ground DE thrown off the surface - nothing below it
 * (no DE under it, neither the bed nor an object) - and rising faster than
 * split_speed spatters into grains. (The paper compares the DE with the top
 * of its column's stack; with columns one DE wide, a DE held up by DEs in
 * the next columns looks detached there, and sand squeezed up around a
 * pressing object would spatter from inside the bed.) */
ts_status sand_detect_spatter(ts_sand *s, ts_error *err)
{
    const contacts *c = &s->c; /* the contacts of the last force pass */
    size_t n = s->el.n;
    int any = 0;
    #pragma omp parallel for schedule(static) reduction(| : any) if (n >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) {
        if ((s->flags[i] & FLAG_AIRBORNE) || s->supported[i] || s->vz[i] <= s->p.split_speed)
            continue;
        int touching = 0;
        for (int k = 0; k < SOURCE_SLOTS; k++)
            touching |= c->source[i * SOURCE_SLOTS + k] != NO_SOURCE;
        if (!touching)
            s->flags[i] |= FLAG_SPLIT, any = 1;
    }
    for (size_t i = 0; any && i < n; i++) /* after the scan: splitting appends DEs and may move the arrays */
        if (s->flags[i] & FLAG_SPLIT) {
            sand_pairs_release(s); /* a grain in flight is in no pair */
            s->flags[i] &= (uint8_t)~FLAG_SPLIT;
            ts_status st = split_airborne(s, i, err);
            if (st != TS_OK)
                return st;
        }
    return TS_OK;
}

/* Merge airborne grain a into ground DE g (§4.3.3 step 5): momentum and
 * volume kept; a DE grown past twice a lattice DE's volume is split into
 * two touching DEs of equal volume, the new one on the side the grain came
 * from (free space - stacking it straight up inside a packed bed would
 * overlap its neighbours and throw them out). */
static ts_status merge_into(ts_sand *s, size_t a, size_t g, ts_error *err)
{
    double m = s->m[g] + s->m[a], vol = s->vol[g] + s->vol[a];
    ts_vec3 from = ts_v3(s->x[a] - s->x[g], s->y[a] - s->y[g], s->z[a] - s->z[g]);
    s->vx[g] = (s->m[g] * s->vx[g] + s->m[a] * s->vx[a]) / m;
    s->vy[g] = (s->m[g] * s->vy[g] + s->m[a] * s->vy[a]) / m;
    s->vz[g] = (s->m[g] * s->vz[g] + s->m[a] * s->vz[a]) / m;
    s->r[g] *= cbrt(vol / s->vol[g]);
    s->vol[g] = vol, s->m[g] = m;
    s->vol[a] = 0.0; /* removed by the compaction */
    if (vol <= 2.0 * s->element_volume0)
        return TS_OK;
    ts_status st = sand_grow_elements(s, s->el.n + 1, err);
    if (st != TS_OK)
        return st;
    double r = s->r[g] / cbrt(2.0), len = ts_v3_length(from);
    ts_vec3 dir = len > 0.0 ? ts_v3_scale(from, 1.0 / len) : ts_v3(0, 0, 1);
    s->vol[g] = 0.5 * vol, s->m[g] = 0.5 * m, s->r[g] = r;
    ts_vec3 p = ts_v3(s->x[g] + 2.0 * r * dir.x, s->y[g] + 2.0 * r * dir.y, s->z[g] + 2.0 * r * dir.z);
    sand_add_element(s, p, ts_v3(s->vx[g], s->vy[g], s->vz[g]), r, 0.5 * vol, 0);
    return TS_OK;
}

/* Airborne grains that touch a ground DE merge into it, those that reach the
 * bed add their volume to it (§4.3.3 steps 5-6); anything leaving the bed's
 * sides is removed and counted. */
ts_status sand_land_and_remove(ts_sand *s, ts_error *err)
{
    const double area = s->p.cell_size * s->p.cell_size;
    /* a falling grain lands within half an element radius of a ground DE:
     * touching alone would let grains sift down through the pores of the DEs */
    const double reach = 0.5 * s->p.element_radius;
    size_t n = s->el.n;
    /* the few DEs this concerns, found in parallel (keep is free until the compaction below), then taken in
     * order: merges change only ground DEs and ones added past n */
    int any = 0;
    #pragma omp parallel for schedule(static) reduction(| : any) if (n >= TS_PARALLEL_MIN)
    for (size_t a = 0; a < n; a++) {
        int inside;
        column_of(s, s->x[a], s->y[a], &inside);
        s->keep[a] = !inside || ((s->flags[a] & FLAG_AIRBORNE) && s->vol[a] != 0.0);
        any |= s->keep[a];
    }
    if (any) {
        ts_status st = sand_current_grid(s, err); /* before a split adds DEs */
        if (st != TS_OK)
            return st;
    }
    for (size_t a = 0; a < n; a++) {
        if (!s->keep[a])
            continue;
        int inside;
        size_t c = column_of(s, s->x[a], s->y[a], &inside);
        if (!inside) {
            s->volume_lost += s->vol[a];
            s->vol[a] = 0.0;
            continue;
        }
        if (!(s->flags[a] & FLAG_AIRBORNE) || s->vol[a] == 0.0)
            continue;
        const double need = s->vz[a] > 0.0 ? 0.0 : reach; /* rising grains merge only into DEs they hit */
        ts_neighbor_ranges nr; /* a grain is no larger than r_max, reach half r_max at most: 2 cells */
        ts_grid_ranges_within(&s->grid, (float)s->x[a], (float)s->y[a], (float)s->z[a],
                              (float)(s->r[a] + s->r_max + reach), &nr);
        size_t best = SIZE_MAX;
        double best_gap = 0.0;
        for (int q = 0; q < nr.n; q++)
            for (uint32_t k = nr.begin[q]; k < nr.end[q]; k++) {
                uint32_t g = s->grid.sorted[k];
                if (g >= n || (s->flags[g] & FLAG_AIRBORNE) || s->vol[g] == 0.0)
                    continue;
                double dx = s->x[g] - s->x[a], dy = s->y[g] - s->y[a], dz = s->z[g] - s->z[a];
                double gap = sqrt(dx * dx + dy * dy + dz * dz) - s->r[g] - s->r[a];
                if (gap < need && (best == SIZE_MAX || gap < best_gap))
                    best = g, best_gap = gap;
            }
        if (best != SIZE_MAX) {
            ts_status st = merge_into(s, a, best, err);
            if (st != TS_OK)
                return st;
        } else if (s->vz[a] <= 0.0 && s->z[a] - s->r[a] <= s->bed[c]) {
            s->bed[c] += s->vol[a] / area;
            s->vol[a] = 0.0;
            const int i = (int)(c % (size_t)s->cols.nx), j = (int)(c / (size_t)s->cols.nx);
            sand_unsettle(s, i, j, i, j);
        }
    }
    size_t emptied = 0;
    #pragma omp parallel for schedule(static) reduction(+ : emptied) if (s->el.n >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < s->el.n; i++) {
        s->keep[i] = s->vol[i] > 0.0;
        emptied += !s->keep[i];
    }
    if (emptied) {
        sand_pairs_release(s);
        ts_particles_compact(&s->el, s->keep);
    }
    return TS_OK;
}

