/* skin_pairs.c - pairs kept while they hold (see skin_pairs.h). */
#include "skin_pairs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "parallel.h"

/* A search is due a little before the skin is used up: positions are floats, and the search's own test
 * rounds too. */
#define SKIN_USED 0.99

void ts_skin_pairs_init(ts_skin_pairs *p, double radius, double skin)
{
    memset(p, 0, sizeof *p);
    p->radius = radius;
    p->skin = skin;
    p->stale = 1;
    ts_grid_init(&p->grid);
}

void ts_skin_pairs_free(ts_skin_pairs *p)
{
    free(p->start);
    free(p->other);
    free(p->ref);
    for (size_t k = 0; k < p->blocks; k++)
        free(p->found[k].candidates);
    free(p->found);
    ts_grid_free(&p->grid);
    memset(p, 0, sizeof *p);
}

void ts_skin_pairs_invalidate(ts_skin_pairs *p) { p->stale = 1; }

static int left_out(const ts_skin_pairs *p, size_t i) { return p->skip && (p->skip[i] & p->skip_bits); }

typedef struct moved {
    const ts_skin_pairs *p;
    const float *now, *ref;
} moved;

static double sum_moved(const void *user, size_t lo, size_t hi)
{
    const moved *m = user;
    double s = 0.0;
    for (size_t i = lo; i < hi; i++)
        if (!left_out(m->p, i))
            s += (double)m->now[i] - (double)m->ref[i];
    return s;
}

static double count_in(const void *user, size_t lo, size_t hi)
{
    const ts_skin_pairs *p = user;
    double n = 0.0;
    for (size_t i = lo; i < hi; i++)
        n += !left_out(p, i);
    return n;
}

/* The largest |x - ref - c| over n points (those in the pairs). */
static double farthest(const ts_skin_pairs *p, const float *x, const float *y, const float *z, const float *ref,
                       size_t n, const double c[3])
{
    const float *rx = ref, *ry = ref + n, *rz = ref + 2 * n;
    double most = 0.0;
    #pragma omp parallel for schedule(static) reduction(max : most) if (n >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) {
        if (left_out(p, i))
            continue;
        double dx = (double)x[i] - rx[i] - c[0], dy = (double)y[i] - ry[i] - c[1], dz = (double)z[i] - rz[i] - c[2];
        double d2 = dx * dx + dy * dy + dz * dz;
        most = d2 > most ? d2 : most;
    }
    return sqrt(most);
}

int ts_skin_pairs_due(const ts_skin_pairs *p, const float *ax, const float *ay, const float *az, size_t na,
                      const float *bx, const float *by, const float *bz, size_t nb)
{
    if (p->stale || na != p->na || nb != p->nb)
        return 1;
    if (na == 0 || nb == 0)
        return 0;
    const float *now[3] = {ax, ay, az};
    const double in = p->skip ? ts_sum_blocks(na, count_in, p) : (double)na;
    double c[3] = {0.0, 0.0, 0.0};
    for (int k = 0; k < 3 && in > 0.0; k++) {
        moved m = {p, now[k], p->ref + k * na};
        c[k] = ts_sum_blocks(na, sum_moved, &m) / in;
    }
    double da = farthest(p, ax, ay, az, p->ref, na, c), db = farthest(p, bx, by, bz, p->ref + 3 * na, nb, c);
    return da + db > SKIN_USED * p->skin;
}

/* a's per block of the search: the blocks' bounds depend on na alone */
#define SEARCH_BLOCK 1024

/* The candidates of a within reach, appended to *found from `used` (grown as needed), in ascending b; their
 * count, or -1 out of memory. */
static long candidates_of(const ts_skin_pairs *p, float x, float y, float z, size_t a, int self, const float *bx,
                          const float *by, const float *bz, uint32_t **found, size_t *cap, size_t used)
{
    const float reach = (float)(p->radius + p->skin), reach2 = reach * reach;
    if (self && left_out(p, a))
        return 0;
    ts_neighbor_ranges r;
    ts_grid_ranges_within(&p->grid, x, y, z, reach, &r);
    size_t count = 0;
    for (int q = 0; q < r.n; q++) {
        if (ts_grow((void **)found, cap, used + count + (r.end[q] - r.begin[q]), sizeof **found))
            return -1; /* room for the whole range: no test per candidate */
        uint32_t *at = *found + used;
        for (uint32_t c = r.begin[q]; c < r.end[q]; c++) {
            uint32_t b = p->grid.sorted[c];
            if (self && (b >= a || left_out(p, b)))
                continue;
            float dx = bx[b] - x, dy = by[b] - y, dz = bz[b] - z;
            if (dx * dx + dy * dy + dz * dz >= reach2)
                continue;
            at[count++] = b;
        }
    }
    uint32_t *v = *found + used; /* insertion sort: a few dozen, nearly in order (the grid's rows run along x) */
    for (size_t i = 1; i < count; i++) {
        uint32_t b = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > b; j--)
            v[j] = v[j - 1];
        v[j] = b;
    }
    return (long)count;
}

ts_status ts_skin_pairs_search(ts_skin_pairs *p, const float *ax, const float *ay, const float *az, size_t na,
                        const float *bx, const float *by, const float *bz, size_t nb, ts_error *err)
{
    const int self = ax == bx && ay == by && az == bz;
    const size_t blocks = (na + SEARCH_BLOCK - 1) / SEARCH_BLOCK;
    if (ts_grow((void **)&p->start, &p->start_cap, na + 1, sizeof *p->start) ||
        ts_grow((void **)&p->ref, &p->ref_cap, 3 * (na + nb), sizeof *p->ref))
        return ts_fail(err, TS_ERR_NOMEM, "neighbour pairs: out of memory for %zu particles", na + nb);
    if (blocks > p->blocks) {
        if (ts_resize((void **)&p->found, blocks, sizeof *p->found))
            return ts_fail(err, TS_ERR_NOMEM, "neighbour pairs: out of memory for %zu particles", na);
        memset(p->found + p->blocks, 0, (blocks - p->blocks) * sizeof *p->found);
        p->blocks = blocks;
    }
    /* cells of half the reach: the rows of cells the sphere misses are left out (grid.h) */
    ts_status st = ts_grid_build(&p->grid, bx, by, bz, nb, (float)(0.5 * (p->radius + p->skin)), NULL, err);
    if (st != TS_OK)
        return st;
    /* one pass: each block's candidates into its own scratch, its a's counts into start (shifted by one) */
    int failed = 0;
    #pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
    for (size_t k = 0; k < blocks; k++) {
        size_t used = 0, end = (k + 1) * SEARCH_BLOCK < na ? (k + 1) * SEARCH_BLOCK : na;
        for (size_t a = k * SEARCH_BLOCK; a < end && !failed; a++) {
            long n = candidates_of(p, ax[a], ay[a], az[a], a, self, bx, by, bz, &p->found[k].candidates,
                                   &p->found[k].cap, used);
            failed |= n < 0;
            p->start[a + 1] = n < 0 ? 0 : (uint32_t)n;
            used += n < 0 ? 0 : (size_t)n;
        }
    }
    if (failed)
        return ts_fail(err, TS_ERR_NOMEM, "neighbour pairs: out of memory searching %zu particles", na);
    p->start[0] = 0;
    for (size_t a = 0; a < na; a++) {
        if ((size_t)p->start[a] + p->start[a + 1] > UINT32_MAX)
            return ts_fail(err, TS_ERR_NOMEM, "neighbour pairs: more than 2^32 of them; raise the particle radius");
        p->start[a + 1] += p->start[a];
    }
    p->count = p->start[na];
    if (ts_grow((void **)&p->other, &p->cap, p->count + 1, sizeof *p->other))
        return ts_fail(err, TS_ERR_NOMEM, "neighbour pairs: out of memory for %zu pairs", p->count);
    #pragma omp parallel for schedule(static)
    for (size_t k = 0; k < blocks; k++) {
        size_t first = k * SEARCH_BLOCK, end = first + SEARCH_BLOCK < na ? first + SEARCH_BLOCK : na;
        memcpy(p->other + p->start[first], p->found[k].candidates,
               (p->start[end] - p->start[first]) * sizeof *p->other);
    }
    if (na) {
        memcpy(p->ref, ax, na * sizeof *ax);
        memcpy(p->ref + na, ay, na * sizeof *ay);
        memcpy(p->ref + 2 * na, az, na * sizeof *az);
    }
    if (nb) {
        memcpy(p->ref + 3 * na, bx, nb * sizeof *bx);
        memcpy(p->ref + 3 * na + nb, by, nb * sizeof *by);
        memcpy(p->ref + 3 * na + 2 * nb, bz, nb * sizeof *bz);
    }
    p->na = na, p->nb = nb;
    p->stale = 0;
    p->searches++;
    return TS_OK;
}

ts_status ts_skin_pairs_update(ts_skin_pairs *p, const float *ax, const float *ay, const float *az, size_t na,
                               const float *bx, const float *by, const float *bz, size_t nb, int *searched,
                               ts_error *err)
{
    *searched = ts_skin_pairs_due(p, ax, ay, az, na, bx, by, bz, nb);
    return *searched ? ts_skin_pairs_search(p, ax, ay, az, na, bx, by, bz, nb, err) : TS_OK;
}

void ts_skin_pairs_by_b(const ts_skin_pairs *p, uint32_t *bstart, uint32_t *owner, uint32_t *pair)
{
    memset(bstart, 0, (p->nb + 1) * sizeof *bstart);
    for (size_t k = 0; k < p->count; k++)
        bstart[p->other[k] + 1]++;
    for (size_t b = 0; b < p->nb; b++)
        bstart[b + 1] += bstart[b];
    /* a counting sort, stable: each b's entries in ascending a; bstart[b] runs ahead as b's cursor, and is
     * put back (to b - 1's end) afterwards */
    for (size_t a = 0; a < p->na; a++)
        for (uint32_t k = p->start[a]; k < p->start[a + 1]; k++) {
            uint32_t at = bstart[p->other[k]]++;
            owner[at] = (uint32_t)a;
            if (pair)
                pair[at] = k;
        }
    for (size_t b = p->nb; b > 0; b--)
        bstart[b] = bstart[b - 1];
    bstart[0] = 0;
}
