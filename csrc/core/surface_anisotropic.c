/* surface_anisotropic.c - the liquid surface from anisotropic kernels (Yu & Turk 2013).
 *
 * A sum of round kernels is as bumpy as the particles under it: a still
 * pool reads as a heap of spheres. Yu & Turk give every particle a kernel
 * shaped by its neighbourhood instead:
 *
 *   1. smoothed centres: x_i' = x_i + lambda (xw_i - x_i), xw_i the weighted
 *      mean of the neighbours within R (weights w = 1 - (|x_ij| / R)^3),
 *      then Taubin's second pass x_i'' = x_i' + mu (xw_i' - x_i'), mu < -lambda;
 *   2. the weighted covariance C_i of the neighbours around xw_i, and its
 *      eigen-decomposition C = Q diag(sigma) Q^T;
 *   3. the kernel's axes along Q (the covariance's eigenvectors), their
 *      lengths h s_k in proportion to the variances sigma_k (clamped to at
 *      least sigma_max / 2), scaled so that s_1 s_2 s_3 = 1 and det G =
 *      1 / h^3: stretching moves no liquid. G = Q diag(1 / (h s_k)) Q^T;
 *   4. particles with fewer than N_eps neighbours (spray) get a round kernel
 *      of one spacing, a drop of about the particle's size;
 *   5. the volume fraction phi(x) = sum_j V W(G_j (x - x_j')) (W the poly6
 *      profile, V = (2 r)^3), whose level 1/2 is the surface: on a full,
 *      flat half-space of particles it lies half a spacing above the top
 *      layer's centres, where the liquid's volume ends.
 *
 * Where this differs from the paper: kernels keep their volume (step 3)
 * instead of the paper's k_s scaling, so a surface particle's kernel holds
 * as much liquid as an inner one's; axes follow the variances, not their
 * square roots, because at a flat surface the one-sided neighbourhood's
 * variances differ by only about 2:1 and the square root left the kernels
 * nearly round (measured: no smoother than spheres); the paper's smoothing
 * alone pulls the top layer down by lambda x its one-sided mean, and the
 * liquid's surface with it (0.39 spacings at the paper's lambda 0.9, 0.19 at
 * 1/2, where a 2 x 1 m pool of 2 cm particles lost 5 % of its meshed volume
 * and a gap opened along the tank's walls), so a second, outward pass (Taubin 1995, lambda 1/2, mu -0.53) takes the
 * shrinking back: a flat top within 0.02 spacings of where the liquid ends.
 * The paper caps the stretch at 4:1; at 4:1 the outer layers' kernels are
 * too thin across to meet the layer under them where two faces of the liquid
 * meet, and every corner of a tank's fill held a pocket of phi under 1/2 (a
 * bubble meshed inside the water, test_surface.c), a sheet one particle thick
 * kept 76 % of its volume and one two deep 89 %. At 2:1 there is none, and
 * they keep 97 % and 94 % (three layers 103 %, deeper ones 100-101 %), and a
 * still block's top is as flat (test_surface.c's bounds).
 *
 * The field is evaluated only in the 8^3 leaves near particles whose
 * neighbourhood is cut by the surface, as (1/2 - phi) / |grad phi| with a
 * flat surface's gradient (phi is smooth, so Volume to Mesh and the band
 * need no more than a distance near the surface), and OpenVDB fills the
 * space between leaves inside or outside. The leaves are summed in blocks of
 * 2 x 2 x 2, a kernel adding itself a row of 16 voxels at a time over
 * its box (sum_block). Each voxel sums
 * its kernels in the neighbour grid's order, one sum per row axis, the three
 * then added in a fixed order, so the grid has the same bits for any number
 * of threads.
 */
#include "surface.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../vdb/tsubu_vdb.h"
#include "grid.h"
#include "vecmath.h"
#include "wide.h"

/* In particle spacings d = 2 r. */
#define NEIGHBOURHOOD 2.0   /* R: the neighbourhood whose spread shapes a kernel */
#define SUPPORT 2.0         /* h: a kernel's support before stretching */
#define SPRAY_SUPPORT 1.0   /* a spray particle's round kernel: a drop of radius 1.14 r */
#define SMOOTHING 0.5       /* lambda */
#define UNSHRINKING -0.53   /* mu: Taubin's second pass, which takes the shrinking back */
#define MAX_AXIS_RATIO 2.0  /* the longest axis of a kernel at most 2 x its shortest (above: not the paper's 4) */
#define SPRAY_NEIGHBOURS 6  /* N_eps */
#define LEVEL 0.5           /* the volume fraction at the surface */
#define BAND 3.0            /* voxels kept active on each side of the surface, in voxels */

#define LEAF 8

/* Per particle, in the order of the grid over the smoothed centres. */
typedef struct kernels {
    float *cx, *cy, *cz;  /* smoothed centre */
    float *a;             /* A = G^T G, 6 per particle: xx yy zz xy xz yz; the support is x^T A x < 1 (1/m^2,
                           * in the sorted kernels 1/voxel^2) */
    float *frac;          /* sorted kernels: the centre in voxels from its box's low corner, 3 per particle */
    float *ex, *ey, *ez;  /* half extents of the support's bounding box (m) */
    float *scale;         /* V x poly6 normalisation x det G */
    unsigned char *cut;   /* the neighbourhood is cut by the surface */
    int32_t *box;         /* the voxels the support's bounding box covers, 6 per particle: lo xyz, hi xyz */
} kernels;

static void kernels_free(kernels *k)
{
    free(k->cx), free(k->cy), free(k->cz), free(k->a), free(k->ex), free(k->ey), free(k->ez), free(k->scale);
    free(k->cut), free(k->box), free(k->frac);
    memset(k, 0, sizeof *k);
}

/* `boxes`: also the voxel boxes and centres, which only the sorted kernels the evaluation reads need */
static ts_status kernels_alloc(kernels *k, size_t n, int boxes, ts_error *err)
{
    memset(k, 0, sizeof *k);
    const size_t m = n ? n : 1;
    k->cx = malloc(m * sizeof(float)), k->cy = malloc(m * sizeof(float)), k->cz = malloc(m * sizeof(float));
    k->a = malloc(6 * m * sizeof(float));
    k->ex = malloc(m * sizeof(float)), k->ey = malloc(m * sizeof(float)), k->ez = malloc(m * sizeof(float));
    k->scale = malloc(m * sizeof(float));
    k->cut = malloc(m);
    k->box = boxes ? malloc(6 * m * sizeof(int32_t)) : NULL;
    k->frac = boxes ? malloc(3 * m * sizeof(float)) : NULL;
    if (!k->cx || !k->cy || !k->cz || !k->a || !k->ex || !k->ey || !k->ez || !k->scale || !k->cut ||
        (boxes && (!k->box || !k->frac))) {
        kernels_free(k);
        return ts_fail(err, TS_ERR_NOMEM, "surface: out of memory for %zu particles' kernels", n);
    }
    return TS_OK;
}

/* Points sorted into the cells of a grid (of R / 2): candidates in a row of cells are adjacent. */
typedef struct sorted_points {
    ts_grid grid;
    float *x, *y, *z;   /* in the grid's order */
} sorted_points;

static void sorted_points_free(sorted_points *p)
{
    ts_grid_free(&p->grid);
    free(p->x), free(p->y), free(p->z);
    p->x = p->y = p->z = NULL;
}

static ts_status sorted_points_build(sorted_points *p, const float *x, const float *y, const float *z, size_t n,
                                     double cell, ts_error *err)
{
    ts_status st = ts_grid_build(&p->grid, x, y, z, n, (float)cell, NULL, err);
    if (st != TS_OK)
        return st;
    free(p->x), free(p->y), free(p->z);
    /* 8 more: a range's last vector reads past its end (those lanes are left out) */
    p->x = calloc(n + 8, sizeof(float)), p->y = calloc(n + 8, sizeof(float)), p->z = calloc(n + 8, sizeof(float));
    if (!p->x || !p->y || !p->z)
        return ts_fail(err, TS_ERR_NOMEM, "surface: out of memory for %zu particles' neighbourhoods", n);
    ts_grid_permute_f32(&p->grid, x, p->x), ts_grid_permute_f32(&p->grid, y, p->y);
    ts_grid_permute_f32(&p->grid, z, p->z);
    return TS_OK;
}

/* The neighbourhood within R of the point at p's sorted position `at` (itself one of them): the weight,
 * the weighted mean offset m and, if s is given, the weighted second moments of the offsets. Returns the
 * neighbours' count, the point left out. A range of candidates (a row of cells, three to five particles)
 * is weighed eight at a time straight from the sorted points, the lanes past its end left out; gathering
 * the candidates into one list first, as before, cost a branch per candidate that mispredicted at every
 * range's end. Each lane's sums are added in lane order. */
TS_WIDE_CLONES static int neighbourhood(const sorted_points *p, size_t at, double R, double *wsum, double m[3],
                                        double s[6])
{
    const float xi = p->x[at], yi = p->y[at], zi = p->z[at];
    ts_neighbor_ranges nr;
    ts_grid_ranges_within(&p->grid, xi, yi, zi, (float)R, &nr);
    const float R2 = (float)(R * R), inv_R3 = (float)(1.0 / (R * R * R));
    const ts_i8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
    ts_f8 sum[10] = {{0.0f}};   /* w, w d (3), w d d^T (6: xx yy zz xy xz yz) */
    ts_i8 within = {0};
    for (int r = 0; r < nr.n; r++)
        for (uint32_t q = nr.begin[r]; q < nr.end[r]; q += 8) {
            ts_f8 x, y, z;
            memcpy(&x, p->x + q, sizeof x), memcpy(&y, p->y + q, sizeof y), memcpy(&z, p->z + q, sizeof z);
            x -= xi, y -= yi, z -= zi;
            const ts_f8 d2 = x * x + y * y + z * z;
            ts_f8 root;
            for (int k = 0; k < 8; k++)
                root[k] = __builtin_sqrtf(d2[k]);
            const ts_i8 in = (d2 < R2) & (lane < (int)(nr.end[r] - q));
            const ts_f8 w = (ts_f8)((ts_i8)(1.0f - d2 * root * inv_R3) & in);   /* 1 - (|d| / R)^3 */
            within -= in;
            sum[0] += w, sum[1] += w * x, sum[2] += w * y, sum[3] += w * z;
            if (s) {
                sum[4] += w * x * x, sum[5] += w * y * y, sum[6] += w * z * z;
                sum[7] += w * x * y, sum[8] += w * x * z, sum[9] += w * y * z;
            }
        }
    double total[10] = {0.0};
    int count = 0;
    for (int k = 0; k < 8; k++) {
        for (int c = 0; c < 10; c++)
            total[c] += sum[c][k];
        count += within[k];
    }
    *wsum = total[0];  /* >= 1: the particle itself */
    for (int a = 0; a < 3; a++)
        m[a] = total[1 + a] / total[0];
    if (s)
        memcpy(s, total + 4, 6 * sizeof *s);
    return count - 1;
}

/* Steps 1 (its first half) to 4 for the particle at p's sorted position `at`, written at its slot. */
static void shape_kernel(const sorted_points *p, size_t at, double d, const kernels *k)
{
    const double R = NEIGHBOURHOOD * d, h = SUPPORT * d;
    double wsum, m[3], s[6];
    const int neighbours = neighbourhood(p, at, R, &wsum, m, s);
    const size_t i = p->grid.sorted[at];
    k->cx[i] = (float)(p->x[at] + SMOOTHING * m[0]);
    k->cy[i] = (float)(p->y[at] + SMOOTHING * m[1]);
    k->cz[i] = (float)(p->z[at] + SMOOTHING * m[2]);
    /* A full neighbourhood of spacing d weighs (2 pi / 3) (R / d)^3 and is centred on the particle. */
    const double full = 2.0 * M_PI / 3.0 * pow(NEIGHBOURHOOD, 3.0);
    const double offset = sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
    k->cut[i] = wsum < 0.8 * full || offset > 0.1 * d;

    float *am6 = k->a + 6 * i;
    double support = h, axis[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, stretch[3] = {1.0, 1.0, 1.0};
    if (neighbours < SPRAY_NEIGHBOURS) {
        support = SPRAY_SUPPORT * d;
    } else {
        ts_mat3 c = {{{s[0] / wsum - m[0] * m[0], s[3] / wsum - m[0] * m[1], s[4] / wsum - m[0] * m[2]},
                      {0.0, s[1] / wsum - m[1] * m[1], s[5] / wsum - m[1] * m[2]},
                      {0.0, 0.0, s[2] / wsum - m[2] * m[2]}}};
        c.m[1][0] = c.m[0][1], c.m[2][0] = c.m[0][2], c.m[2][1] = c.m[1][2];
        ts_mat3 q;
        double sigma[3];
        ts_sym_eigen3_direct(c, &q, sigma);
        const double top = fmax(sigma[0], fmax(sigma[1], sigma[2]));
        if (top > 1e-12 * d * d) {
            double product = 1.0;
            for (int a = 0; a < 3; a++) {
                stretch[a] = fmax(fmax(sigma[a], 0.0) / top, 1.0 / MAX_AXIS_RATIO);
                product *= stretch[a];
            }
            const double mean = cbrt(product);
            for (int a = 0; a < 3; a++) {
                stretch[a] /= mean;
                for (int b = 0; b < 3; b++)
                    axis[b][a] = q.m[b][a]; /* column a: the eigenvector of sigma[a] */
            }
        }
    }
    /* A = G^T G = Q diag(1 / (support s_a)^2) Q^T; the bounding box of {x^T A x <= 1} has half extents
     * support sqrt(sum_a Q_ba^2 s_a^2) */
    double am[3][3], ext[3];
    for (int b = 0; b < 3; b++) {
        double e2 = 0.0;
        for (int a = 0; a < 3; a++)
            e2 += axis[b][a] * axis[b][a] * stretch[a] * stretch[a];
        ext[b] = support * sqrt(e2);
        for (int c2 = 0; c2 < 3; c2++) {
            double v = 0.0;
            for (int a = 0; a < 3; a++)
                v += axis[b][a] * axis[c2][a] / (support * stretch[a] * support * stretch[a]);
            am[b][c2] = v;
        }
    }
    am6[0] = (float)am[0][0], am6[1] = (float)am[1][1], am6[2] = (float)am[2][2];
    am6[3] = (float)am[0][1], am6[4] = (float)am[0][2], am6[5] = (float)am[1][2];
    k->ex[i] = (float)ext[0], k->ey[i] = (float)ext[1], k->ez[i] = (float)ext[2];
    const double volume = d * d * d;
    k->scale[i] = (float)(volume * 315.0 / (64.0 * M_PI * support * support * support));
}

/* Leaves as keys: three 21-bit fields of leaf coordinates offset by 2^20. */
#define KEY_BITS 21
#define KEY_HALF (1 << (KEY_BITS - 1))

static uint64_t leaf_key(int64_t a, int64_t b, int64_t c)
{
    return ((uint64_t)(a + KEY_HALF) << (2 * KEY_BITS)) | ((uint64_t)(b + KEY_HALF) << KEY_BITS) |
           (uint64_t)(c + KEY_HALF);
}

static void key_leaf(uint64_t key, int32_t origin[3])
{
    const uint64_t mask = ((uint64_t)1 << KEY_BITS) - 1;
    origin[0] = (int32_t)((int64_t)((key >> (2 * KEY_BITS)) & mask) - KEY_HALF) * LEAF;
    origin[1] = (int32_t)((int64_t)((key >> KEY_BITS) & mask) - KEY_HALF) * LEAF;
    origin[2] = (int32_t)((int64_t)(key & mask) - KEY_HALF) * LEAF;
}

/* The slot of a key in a table of `capacity` (a power of two) slots: the top bits of a Fibonacci hash, which
 * depend on every field of the key (the low bits of the product do not see the leaf's x at all, and a pool's
 * keys then collided by the hundred). */
static size_t key_slot(uint64_t key, size_t capacity)
{
    return capacity > 1 ? (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - __builtin_ctzll(capacity))) : 0;
}

/* An open-addressing set of keys (key 0 cannot occur: coordinates are offset). */
typedef struct key_set {
    uint64_t *slot;
    size_t capacity, count;
} key_set;

static ts_status key_set_add(key_set *s, uint64_t key, ts_error *err)
{
    if (2 * (s->count + 1) > s->capacity) {
        const size_t capacity = s->capacity ? 2 * s->capacity : 4096;
        uint64_t *slot = calloc(capacity, sizeof *slot);
        if (!slot)
            return ts_fail(err, TS_ERR_NOMEM, "surface: out of memory for %zu leaves", s->count);
        for (size_t i = 0; i < s->capacity; i++)
            if (s->slot[i]) {
                size_t at = key_slot(s->slot[i], capacity);
                while (slot[at])
                    at = (at + 1) & (capacity - 1);
                slot[at] = s->slot[i];
            }
        free(s->slot);
        s->slot = slot, s->capacity = capacity;
    }
    size_t at = key_slot(key, s->capacity);
    while (s->slot[at] && s->slot[at] != key)
        at = (at + 1) & (s->capacity - 1);
    if (!s->slot[at])
        s->slot[at] = key, s->count++;
    return TS_OK;
}

static int compare_keys(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The leaves within `margin` of a particle whose neighbourhood the surface cuts, in key order. */
static ts_status surface_leaves(const kernels *k, size_t n, double voxel, double margin, uint64_t **keys,
                                size_t *count, ts_error *err)
{
    key_set set = {NULL, 0, 0};
    ts_status st = TS_OK;
    const double limit = (double)(KEY_HALF - 2) * LEAF;
    int64_t last_lo[3] = {1, 1, 1}, last_hi[3] = {0, 0, 0};
    for (size_t i = 0; i < n && st == TS_OK; i++) {
        if (!k->cut[i])
            continue;
        const double c[3] = {k->cx[i] / voxel, k->cy[i] / voxel, k->cz[i] / voxel}, e = margin / voxel;
        int64_t lo[3] = {0, 0, 0}, hi[3] = {-1, -1, -1};
        for (int a = 0; a < 3; a++) {
            if (!(fabs(c[a]) < limit)) {
                st = ts_fail(err, TS_ERR_INVALID, "surface: a particle at %g m is too far from the origin for "
                             "voxels of %g m; use a larger voxel ratio", c[a] * voxel, voxel);
                break;
            }
            lo[a] = (int64_t)floor(floor(c[a] - e) / LEAF);
            hi[a] = (int64_t)floor(ceil(c[a] + e) / LEAF);
        }
        /* neighbours in the grid's order mostly reach the same leaves: added once */
        if (!memcmp(lo, last_lo, sizeof lo) && !memcmp(hi, last_hi, sizeof hi))
            continue;
        memcpy(last_lo, lo, sizeof lo), memcpy(last_hi, hi, sizeof hi);
        for (int64_t a = lo[0]; st == TS_OK && a <= hi[0]; a++)
            for (int64_t b = lo[1]; b <= hi[1] && st == TS_OK; b++)
                for (int64_t c2 = lo[2]; c2 <= hi[2] && st == TS_OK; c2++)
                    st = key_set_add(&set, leaf_key(a, b, c2), err);
    }
    if (st != TS_OK) {
        free(set.slot);
        return st;
    }
    size_t m = 0;
    for (size_t i = 0; i < set.capacity; i++)
        if (set.slot[i])
            set.slot[m++] = set.slot[i];
    qsort(set.slot, m, sizeof *set.slot, compare_keys);
    *keys = set.slot, *count = m;
    return TS_OK;
}

/* Step 5 over a block of 2 x 2 x 2 leaves: phi at its 16^3 voxel centres, from every kernel that reaches
 * the block, then, for each of its leaves near the surface, the distance (1/2 - phi) / |grad phi| with the
 * gradient of a flat surface, clamped to the band.
 *
 * A kernel adds itself a row of 16 voxels at a time, the row along whichever axis its box crosses the
 * block farthest (a flat kernel under a level surface lies along x or y, not across z: rows along z left
 * 39 % of a pool's rows and 68 % of their lanes empty), over its whole box. Each row cut to the kernel's
 * shadow (the ellipse the ellipsoid casts across the rows: a square root and two roundings a row) takes
 * a 200k pool's 116M vectors down to 86M, but finding the cuts cost more than those vectors: 0.78 s with
 * them, 0.65-0.66 s without (2026-12-02). Blocks rather than leaves because a kernel's box is two to three
 * leaves wide: a kernel is gathered and set up once per block instead of once per leaf (a 200k-particle
 * pool's 54,000 leaves are 10,100 blocks; 1.25-1.33x faster than leaf by leaf). Each axis has its own
 * array, the row contiguous, summed into phi at the end. */
#define BLOCK_LEAF_BITS 1                 /* 2 leaves a side */
#define BLOCK_BITS (3 + BLOCK_LEAF_BITS)  /* leaves are 8 = 2^3 voxels a side */
#define BLOCK (1 << BLOCK_BITS)
#define BLOCK_VOXELS (BLOCK * BLOCK * BLOCK)
#define ROW_VECTORS (BLOCK / 8)
_Static_assert(ROW_VECTORS == 2, "add_kernel_rows sums a row's two vectors at once");

/* A row of 16 voxels is two vectors of 8: GCC split a vector of 16 badly (its comparisons lane by lane). */
typedef ts_f8 lane8;
typedef ts_i8 mask8;

/* The other two axes of lane axis `a`, (p, q): its array holds voxel (p, q, a) at (p * BLOCK + q) * BLOCK + a. */
static const int ROW_AXES[3][2] = {{1, 2}, {0, 2}, {0, 1}};

/* One kernel's rows over the block, in voxels: x^T A x < 1 with x = voxel - centre (`local`: the centre
 * from the block's first voxel), lanes along axis a. The rows run over the shorter of p and q outside
 * (o), the longer inside (n), each over the whole box: a lane outside the ellipsoid adds an exact zero. */
/* always inline: a call would leave it out of sum_block's AVX2 clone (measured 4x slower) */
TS_WIDE_INLINE void add_kernel_rows(float *phi, const float am6[6], float scale, const float local[3], const int i0[3],
                                    const int i1[3], int a)
{
    const float A[3][3] = {{am6[0], am6[3], am6[4]}, {am6[3], am6[1], am6[5]}, {am6[4], am6[5], am6[2]}};
    int o = ROW_AXES[a][0], n = ROW_AXES[a][1], shift_o = 2 * BLOCK_BITS, shift_n = BLOCK_BITS;
    if (i1[n] - i0[n] < i1[o] - i0[o])
        o = ROW_AXES[a][1], n = ROW_AXES[a][0], shift_o = BLOCK_BITS, shift_n = 2 * BLOCK_BITS;
    lane8 da[ROW_VECTORS];
    for (int i = 0; i < BLOCK; i++)
        da[i / 8][i % 8] = (float)i - local[a];
    lane8 qa[ROW_VECTORS], two_da[ROW_VECTORS];
    for (int h = 0; h < ROW_VECTORS; h++)
        qa[h] = A[a][a] * da[h] * da[h], two_da[h] = 2.0f * da[h];
    /* the row's vectors the box reaches: the others it leaves alone */
    const int h0 = i0[a] / 8, h1 = i1[a] / 8, n_lo = i0[n], n_hi = i1[n];
    const float x_n = (float)n_lo - local[n], ddq = 2.0f * A[n][n];
    const int stride = 1 << shift_n;
    for (int io = i0[o]; io <= i1[o]; io++) {
        const float d_o = (float)io - local[o];
        /* along the row's neighbours in n, x^T A x = c0 + c1 x_n + A_nn x_n^2: stepped by differences */
        lane8 q[ROW_VECTORS], dq[ROW_VECTORS];
        for (int h = h0; h <= h1; h++) {
            const lane8 c0 = qa[h] + (two_da[h] * A[a][o] + A[o][o] * d_o) * d_o;
            const lane8 c1 = two_da[h] * A[a][n] + 2.0f * A[o][n] * d_o;
            q[h] = c0 + (c1 + A[n][n] * x_n) * x_n, dq[h] = c1 + A[n][n] * (2.0f * x_n + 1.0f);
        }
        float *row = phi + (io << shift_o | n_lo << shift_n);
        if (h0 < h1) {   /* both of the row's vectors in one pass: two chains side by side */
            for (int in = n_lo; in <= n_hi; in++, row += stride) {
                lane8 t0 = 1.0f - q[0], t1 = 1.0f - q[1];
                t0 = (lane8)((mask8)t0 & (t0 > 0.0f)), t1 = (lane8)((mask8)t1 & (t1 > 0.0f));
                *(lane8 *)row += scale * (t0 * t0 * t0);
                *(lane8 *)(row + 8) += scale * (t1 * t1 * t1);
                q[0] += dq[0], dq[0] += ddq, q[1] += dq[1], dq[1] += ddq;
            }
        } else {
            row += h0 << 3;
            lane8 qh = q[h0], dqh = dq[h0];
            for (int in = n_lo; in <= n_hi; in++, row += stride) {
                lane8 t = 1.0f - qh;
                t = (lane8)((mask8)t & (t > 0.0f));
                *(lane8 *)row += scale * (t * t * t);
                qh += dqh, dqh += ddq;
            }
        }
    }
}

/* phi over the block at `origin` (voxels) into along[3] (one array per lane axis; `plain`: every voxel of
 * every kernel's box from the formula alone, into along[2], the reference the tests hold the rows to).
 * Written once over 8-float vectors; AVX2 where the CPU has it, pairs of SSE otherwise, same bits. */
TS_WIDE_CLONES static void
sum_block(const ts_grid *grid, const kernels *k, const int32_t origin[3], double voxel, double reach, int plain,
          float along[3][BLOCK_VOXELS])
{
    memset(along, 0, 3 * BLOCK_VOXELS * sizeof(float));
    int cell_lo[3], cell_hi[3];
    for (int a = 0; a < 3; a++) {
        const double lo = origin[a] * voxel, hi = (origin[a] + BLOCK - 1) * voxel;
        const double f0 = (lo - reach - grid->origin[a]) * grid->inv_cell;
        const double f1 = (hi + reach - grid->origin[a]) * grid->inv_cell;
        cell_lo[a] = f0 <= 0.0 ? 0 : (f0 >= grid->dims[a] - 1 ? grid->dims[a] - 1 : (int)f0);
        cell_hi[a] = f1 <= 0.0 ? 0 : (f1 >= grid->dims[a] - 1 ? grid->dims[a] - 1 : (int)f1);
    }
    for (int cz = cell_lo[2]; cz <= cell_hi[2]; cz++)
        for (int cy = cell_lo[1]; cy <= cell_hi[1]; cy++) {
            const size_t row = (size_t)grid->dims[0] * ((size_t)cy + (size_t)grid->dims[1] * (size_t)cz);
            const uint32_t begin = grid->cell_start[row + (size_t)cell_lo[0]];
            const uint32_t end = grid->cell_start[row + (size_t)cell_hi[0] + 1];
            for (uint32_t p = begin; p < end; p++) {
                /* most kernels gathered from the cells around do not reach the block: whole-voxel bounds first */
                const int32_t *b = k->box + 6 * (size_t)p;
                if (b[3] < origin[0] || b[0] > origin[0] + BLOCK - 1 || b[4] < origin[1] ||
                    b[1] > origin[1] + BLOCK - 1 || b[5] < origin[2] || b[2] > origin[2] + BLOCK - 1)
                    continue;
                int i0[3], i1[3];
                for (int a = 0; a < 3; a++) {
                    i0[a] = b[a] - origin[a] < 0 ? 0 : b[a] - origin[a];
                    i1[a] = b[3 + a] - origin[a] > BLOCK - 1 ? BLOCK - 1 : b[3 + a] - origin[a];
                }
                const float *am6 = k->a + 6 * (size_t)p, *frac = k->frac + 3 * (size_t)p;
                const float local[3] = {(float)(b[0] - origin[0]) + frac[0], (float)(b[1] - origin[1]) + frac[1],
                                        (float)(b[2] - origin[2]) + frac[2]};
                if (plain) {
                    for (int ix = i0[0]; ix <= i1[0]; ix++)
                        for (int iy = i0[1]; iy <= i1[1]; iy++)
                            for (int iz = i0[2]; iz <= i1[2]; iz++) {
                                const double d[3] = {ix - (double)local[0], iy - (double)local[1], iz - (double)local[2]};
                                const double q = am6[0] * d[0] * d[0] + am6[1] * d[1] * d[1] + am6[2] * d[2] * d[2] +
                                                 2.0 * (am6[3] * d[0] * d[1] + am6[4] * d[0] * d[2] + am6[5] * d[1] * d[2]);
                                if (q < 1.0)
                                    along[2][(ix << BLOCK_BITS | iy) << BLOCK_BITS | iz] +=
                                        (float)(k->scale[p] * pow(1.0 - q, 3.0));
                            }
                    continue;
                }
                /* lanes along the axis the box crosses farthest: the fewest rows (z on a tie) */
                int lane = 2;
                if (i1[0] - i0[0] > i1[lane] - i0[lane])
                    lane = 0;
                if (i1[1] - i0[1] > i1[lane] - i0[lane])
                    lane = 1;
                add_kernel_rows(along[lane], am6, k->scale[p], local, i0, i1, lane);
            }
        }
}

/* r[k][l] -> r[l][k] for 8 vectors of 8: pairs interleaved, then pairs of pairs, then halves swapped. */
TS_WIDE_INLINE void transpose8(lane8 r[8])
{
    lane8 t[8], u[8];
    for (int k = 0; k < 8; k += 2) {
        t[k] = __builtin_shuffle(r[k], r[k + 1], (mask8){0, 8, 1, 9, 4, 12, 5, 13});
        t[k + 1] = __builtin_shuffle(r[k], r[k + 1], (mask8){2, 10, 3, 11, 6, 14, 7, 15});
    }
    for (int k = 0; k < 8; k += 4)
        for (int j = 0; j < 2; j++) {
            u[k + 2 * j] = __builtin_shuffle(t[k + j], t[k + j + 2], (mask8){0, 1, 8, 9, 4, 5, 12, 13});
            u[k + 2 * j + 1] = __builtin_shuffle(t[k + j], t[k + j + 2], (mask8){2, 3, 10, 11, 6, 7, 14, 15});
        }
    for (int k = 0; k < 4; k++) {
        r[k] = __builtin_shuffle(u[k], u[k + 4], (mask8){0, 1, 2, 3, 8, 9, 10, 11});
        r[k + 4] = __builtin_shuffle(u[k], u[k + 4], (mask8){4, 5, 6, 7, 12, 13, 14, 15});
    }
}

/* The 8 x 8 voxels (p, q) of a leaf's rows along z, from the array of lane axis a whose rows at fixed p
 * run along q: out[q][z] (a transpose of the 8 rows z of 8 q each). */
TS_WIDE_INLINE void rows_along_z(const float *along, int p, int q0, int z0, lane8 out[8])
{
    for (int iz = 0; iz < 8; iz++)
        memcpy(&out[iz], along + ((p << BLOCK_BITS | (z0 + iz)) << BLOCK_BITS | q0), sizeof out[iz]);
    transpose8(out);
}

/* The leaf at `at` (voxels from the block's first) of a summed block: distances and active voxels. A row
 * of 8 voxels along z at a time: contiguous in the z array, a stride apart in the other two, which are
 * read 8 rows at a time and transposed. */
TS_WIDE_CLONES static void
finish_leaf(float along[3][BLOCK_VOXELS], const int at[3], double voxel, double flat_gradient, float *value,
            uint64_t *active)
{
    const float band = (float)(BAND * voxel), per_metre = (float)(1.0 / flat_gradient);
    const lane8 zero = {0.0f};
    /* Active: within the band, or beside a voxel of the other sign, so that OpenVDB's flood fill
     * (which gives inactive voxels the sign of the last active one on their row) keeps every sign. As
     * bits: word ix holds the 64 voxels iy << 3 | iz of one x, so a neighbour is a shift or the next word. */
    uint64_t negative[LEAF], in_band[LEAF];
    lane8 x_rows[LEAF][LEAF];   /* [iy][ix]: the x array's voxels, rows along z */
    for (int iy = 0; iy < LEAF; iy++)
        rows_along_z(along[0], at[1] + iy, at[0], at[2], x_rows[iy]);
    for (int ix = 0; ix < LEAF; ix++) {
        uint64_t below = 0, within = 0;
        const int bx = at[0] + ix;
        lane8 y_rows[LEAF];
        rows_along_z(along[1], bx, at[1], at[2], y_rows);
        for (int iy = 0; iy < LEAF; iy++) {
            const int by = at[1] + iy;
            const float *z_row = along[2] + ((bx << BLOCK_BITS | by) << BLOCK_BITS | at[2]);
            lane8 phi;
            memcpy(&phi, z_row, sizeof phi);
            const lane8 from_x = x_rows[iy][ix], from_y = y_rows[iy];
            phi = phi + from_x + from_y;
            const lane8 distance = ((float)LEVEL - phi) * per_metre;
            /* clamped to the band (a NaN stays one, in neither mask, as the scalar form did) */
            const mask8 above = distance > band, under = distance < -band, inside = ~(above | under);
            const lane8 v = (lane8)(((mask8)distance & inside) | ((mask8)(band + zero) & above) |
                                    ((mask8)(zero - band) & under));
            memcpy(value + (ix << 6 | iy << 3), &v, sizeof v);
            const mask8 is_negative = v < 0.0f, is_in_band = (distance < band) & (distance > -band);
            const unsigned neg = ts_i8_bits(&is_negative), inside_band = ts_i8_bits(&is_in_band);
            below |= (uint64_t)neg << (iy << 3), within |= (uint64_t)inside_band << (iy << 3);
        }
        negative[ix] = below, in_band[ix] = within;
    }
    const uint64_t not_z0 = 0xFEFEFEFEFEFEFEFEull, not_z7 = 0x7F7F7F7F7F7F7F7Full;
    for (int ix = 0; ix < LEAF; ix++) {
        const uint64_t s = negative[ix];
        uint64_t other = ((s ^ (s << 1)) & not_z0) | ((s ^ (s >> 1)) & not_z7) | ((s ^ (s << 8)) & ~0xFFull) |
                         ((s ^ (s >> 8)) & (~0ull >> 8));
        if (ix > 0)
            other |= s ^ negative[ix - 1];
        if (ix < LEAF - 1)
            other |= s ^ negative[ix + 1];
        active[ix] = in_band[ix] | other;
    }
}

/* A leaf of the surface in its block: the block's key is the leaf's with each field shifted down
 * (the fields' offset, 2^20, keeps the shift a floor division). */
typedef struct block_leaf {
    uint64_t block;
    size_t leaf;   /* the leaf's index in key order */
} block_leaf;

static int compare_block_leaves(const void *a, const void *b)
{
    const block_leaf *x = a, *y = b;
    if (x->block != y->block)
        return (x->block > y->block) - (x->block < y->block);
    return (x->leaf > y->leaf) - (x->leaf < y->leaf);
}

/* The surface's leaves (keys in order) grouped by block: block b holds members[first[b] .. first[b + 1]). */
static ts_status group_blocks(const uint64_t *keys, size_t leaves, block_leaf **members, size_t **first,
                              size_t *blocks, ts_error *err)
{
    const uint64_t mask = ((uint64_t)1 << KEY_BITS) - 1;
    const int k = BLOCK_LEAF_BITS;
    block_leaf *m = malloc((leaves ? leaves : 1) * sizeof *m);
    size_t *start = malloc((leaves + 1) * sizeof *start);
    if (!m || !start) {
        free(m), free(start);
        return ts_fail(err, TS_ERR_NOMEM, "surface: out of memory for %zu leaves of the surface", leaves);
    }
    for (size_t l = 0; l < leaves; l++) {
        const uint64_t fx = keys[l] >> (2 * KEY_BITS) & mask, fy = keys[l] >> KEY_BITS & mask, fz = keys[l] & mask;
        m[l] = (block_leaf){(fx >> k) << (2 * KEY_BITS) | (fy >> k) << KEY_BITS | fz >> k, l};
    }
    qsort(m, leaves, sizeof *m, compare_block_leaves);
    size_t b = 0;
    for (size_t l = 0; l < leaves; l++)
        if (l == 0 || m[l].block != m[l - 1].block)
            start[b++] = l;
    start[b] = leaves;
    *members = m, *first = start, *blocks = b;
    return TS_OK;
}

ts_status ts_surface_anisotropic_form(const ts_surface_settings *s, const float *x, const float *y,
                                      const float *z, size_t n, int plain, tsvdb_grid **out, ts_error *err)
{
    const double d = 2.0 * s->particle_radius, voxel = s->particle_radius * s->voxel_ratio;
    *out = NULL;
    if (n == 0)
        return tsvdb_level_set_from_leaves(voxel, BAND, 0, NULL, out, err);
    if (n > UINT32_MAX - 1)
        return ts_fail(err, TS_ERR_INVALID, "surface: %zu particles are more than the surface takes", n);
    sorted_points around = {0};
    ts_grid centres;
    ts_grid_init(&around.grid), ts_grid_init(&centres);
    kernels shaped = {0}, k = {0};
    uint64_t *keys = NULL;
    tsvdb_leaf **made = NULL;
    size_t leaves = 0;

    /* cells of R / 2: the sphere's own rows of cells hold about 40 % fewer candidates than 27 cells of R */
    const double R = NEIGHBOURHOOD * d;
    ts_status st = sorted_points_build(&around, x, y, z, n, R / 2.0, err);
    if (st == TS_OK)
        st = kernels_alloc(&shaped, n, 0, err);
    if (st == TS_OK) {
        #pragma omp parallel for schedule(static)
        for (size_t p = 0; p < n; p++)
            shape_kernel(&around, p, d, &shaped);
    }
    /* step 1's second half: the smoothing's other pass, outwards, so a flat surface stays where it was; its
     * neighbourhoods are those of the smoothed centres */
    if (st == TS_OK)
        st = sorted_points_build(&around, shaped.cx, shaped.cy, shaped.cz, n, R / 2.0, err);
    if (st == TS_OK) {
        #pragma omp parallel for schedule(static)
        for (size_t p = 0; p < n; p++) {
            double wsum, m[3];
            neighbourhood(&around, p, R, &wsum, m, NULL);
            const size_t i = around.grid.sorted[p];
            shaped.cx[i] = (float)(around.x[p] + UNSHRINKING * m[0]);
            shaped.cy[i] = (float)(around.y[p] + UNSHRINKING * m[1]);
            shaped.cz[i] = (float)(around.z[p] + UNSHRINKING * m[2]);
        }
    }
    /* The evaluation gathers kernels by cell of their smoothed centres: sort them so a cell's are adjacent. */
    float reach = 0.0f;
    for (size_t i = 0; st == TS_OK && i < n; i++)
        reach = fmaxf(reach, fmaxf(shaped.ex[i], fmaxf(shaped.ey[i], shaped.ez[i])));
    if (st == TS_OK)
        st = ts_grid_build(&centres, shaped.cx, shaped.cy, shaped.cz, n, reach, NULL, err);
    if (st == TS_OK)
        st = kernels_alloc(&k, n, 1, err);
    if (st == TS_OK) {
        ts_grid_permute_f32(&centres, shaped.cx, k.cx), ts_grid_permute_f32(&centres, shaped.cy, k.cy);
        ts_grid_permute_f32(&centres, shaped.cz, k.cz), ts_grid_permute_f32(&centres, shaped.ex, k.ex);
        ts_grid_permute_f32(&centres, shaped.ey, k.ey), ts_grid_permute_f32(&centres, shaped.ez, k.ez);
        ts_grid_permute_f32(&centres, shaped.scale, k.scale);
        const float v = (float)voxel, far = (float)(1 << 30);
        #pragma omp parallel for schedule(static)
        for (size_t p = 0; p < n; p++) {
            const uint32_t i = centres.sorted[p];
            for (int e = 0; e < 6; e++)
                k.a[6 * p + e] = (float)(shaped.a[6 * (size_t)i + e] * voxel * voxel);
            k.cut[p] = shaped.cut[i];
            const float c[3] = {k.cx[p], k.cy[p], k.cz[p]}, e[3] = {k.ex[p], k.ey[p], k.ez[p]};
            for (int a = 0; a < 3; a++) {   /* clamped: a stray particle's index stays an int */
                k.box[6 * p + a] = (int32_t)fmaxf(-far, fminf(far, ceilf((c[a] - e[a]) / v)));
                k.box[6 * p + 3 + a] = (int32_t)fmaxf(-far, fminf(far, floorf((c[a] + e[a]) / v)));
                k.frac[3 * p + a] = (float)((double)c[a] / voxel - k.box[6 * p + a]);
            }
        }
        /* the surface lies within half a spacing of a cut neighbourhood's smoothed centre; its band beyond */
        st = surface_leaves(&k, n, voxel, d + (BAND + 1.0) * voxel, &keys, &leaves, err);
    }
    if (st == TS_OK && leaves && !(made = calloc(leaves, sizeof *made)))
        st = ts_fail(err, TS_ERR_NOMEM, "surface: out of memory for %zu leaves of the surface", leaves);
    if (st == TS_OK) {
        /* across a flat surface phi falls from 1 to 0 over about two kernel half-widths along the normal */
        const double flat_gradient = 1.0 / (SUPPORT * d);
        int short_of_memory = 0;
        block_leaf *members = NULL;
        size_t *first = NULL, blocks = 0;
        st = group_blocks(keys, leaves, &members, &first, &blocks, err);
        #pragma omp parallel if (st == TS_OK)
        {
            float (*along)[BLOCK_VOXELS] = aligned_alloc(64, 3 * BLOCK_VOXELS * sizeof(float));
            if (!along) {
                #pragma omp atomic write
                short_of_memory = 1;
            }
            #pragma omp for schedule(dynamic, 2)
            for (size_t b = 0; b < blocks; b++) {
                if (!along)
                    continue;
                int32_t origin[3];
                key_leaf(keys[members[first[b]].leaf], origin);
                for (int a = 0; a < 3; a++)
                    origin[a] &= ~(BLOCK - 1); /* the block's first voxel, rounded down (two's complement) */
                sum_block(&centres, &k, origin, voxel, reach, plain, along);
                for (size_t m = first[b]; m < first[b + 1]; m++) {
                    const size_t l = members[m].leaf;
                    int32_t leaf_origin[3];
                    key_leaf(keys[l], leaf_origin);
                    if (!(made[l] = tsvdb_leaf_new(leaf_origin))) {
                        #pragma omp atomic write
                        short_of_memory = 1;
                        continue;
                    }
                    const int at[3] = {leaf_origin[0] - origin[0], leaf_origin[1] - origin[1],
                                       leaf_origin[2] - origin[2]};
                    finish_leaf(along, at, voxel, flat_gradient, tsvdb_leaf_values(made[l]),
                                tsvdb_leaf_active(made[l]));
                    /* a leaf with no active voxel lies wholly inside or outside, beyond the band (a deep pool's
                     * middle layers, the layer just above a pool's band): OpenVDB's flood fill gives the space it
                     * leaves the right sign, as the pruning after it would have made of the leaf */
                    const uint64_t *active = tsvdb_leaf_active(made[l]);
                    uint64_t any = 0;
                    for (int w = 0; w < LEAF; w++)
                        any |= active[w];
                    if (!any)
                        tsvdb_leaf_free(made[l]), made[l] = NULL;
                }
            }
            free(along);
        }
        free(members), free(first);
        if (st != TS_OK || short_of_memory) {
            for (size_t l = 0; l < leaves; l++)
                tsvdb_leaf_free(made[l]);
            st = ts_fail(err, TS_ERR_NOMEM, "surface: out of memory for %zu leaves of the surface", leaves);
        } else {
            size_t kept = 0;
            for (size_t l = 0; l < leaves; l++)
                if (made[l])
                    made[kept++] = made[l];
            st = tsvdb_level_set_from_leaves(voxel, BAND, kept, made, out, err);
        }
    }
    free(keys), free(made);
    kernels_free(&shaped), kernels_free(&k);
    sorted_points_free(&around), ts_grid_free(&centres);
    return st;
}

ts_status ts_surface_anisotropic(const ts_surface_settings *s, const float *x, const float *y, const float *z,
                                 size_t n, tsvdb_grid **out, ts_error *err)
{
    return ts_surface_anisotropic_form(s, x, y, z, n, 0, out, err);
}
