/* sph_loops.c - the neighbour search, the density sum and the pair-force
 * loop of SPH, in a portable form and an AVX2 form that give the same bits
 * (see sph_loops.h).
 *
 * Why two forms: the loops read their neighbours through an index list,
 * and a scalar loop spends most of its instructions fetching them one float
 * at a time. The AVX2 form reads each neighbour's packed record with one
 * load and turns eight records into vectors with a transpose; AVX2's gather
 * instructions were measured slower than that on AMD Zen 3. It is compiled
 * for AVX2 alone (no FMA), and every expression keeps the portable form's
 * order, because the forms must round alike; the sums run in eight lanes
 * in both, added up the same way. The density sum is taken during the
 * search itself: keeping the distances for a second loop made that loop
 * wait on its own stores.
 */
#include "sph_loops.h"

#include <pthread.h>
#include <stdatomic.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define TS_HAVE_AVX2_FORM 1
#include <immintrin.h>
#endif

#define LANES 8

void ts_sph_pair_consts_init(ts_sph_pair_consts *c, float h, float mass, double spiky_grad, double visc_lap,
                             double poly6_grad, double viscosity, double alpha_c_h, double surface_tension,
                             int muller)
{
    c->h = h;
    c->h2 = h * h;
    c->mass = mass;
    c->spiky_grad = (float)spiky_grad;
    c->press_muller = -mass * 0.5f;
    c->press_wcsph = -mass;
    c->art_visc = 2.0f * (float)alpha_c_h * mass;
    c->art_eps2 = 0.01f * c->h2;
    c->visc = (float)viscosity * mass * (float)visc_lap;
    c->poly6_grad = (float)poly6_grad;
    c->three_h2 = 3.0f * c->h2;
    c->sigma = (float)surface_tension;
    c->muller = muller;
}

/* The eight lane sums added up in one fixed order, the same in both forms. */
static float sum_lanes(const float l[LANES])
{
    return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

/* ------------------------------------------------------------ portable form */

/* The indices of a group: list[k..k+8) itself, or for a last group of fewer
 * the ones there are, padded with the first (its lanes are masked out). */
static inline const uint32_t *group_indices(const uint32_t *list, uint32_t k, uint32_t n, uint32_t pad[LANES])
{
    if (n - k >= LANES)
        return list + k;
    for (uint32_t l = 0; l < LANES; l++)
        pad[l] = list[k + (k + l < n ? l : 0)];
    return pad;
}

/* The portable form works in groups of eight too, each step over the group a
 * loop of eight the compiler turns into vector code (SSE: two halves). */

static float density_sum_portable(const ts_sph_fluid *f, const uint32_t *list, uint32_t n, float xi, float yi,
                                  float zi, float h2, uint32_t *near, int cap, int *near_count)
{
    float lane[LANES] = {0};
    int count = 0;
    for (uint32_t k = 0; k < n; k += LANES) {
        uint32_t pad[LANES];
        const uint32_t *j = group_indices(list, k, n, pad);
        float r2[LANES];
        int inside[LANES];
        for (int l = 0; l < LANES; l++) {
            float dx = xi - f->x[j[l]], dy = yi - f->y[j[l]], dz = zi - f->z[j[l]];
            r2[l] = dx * dx + dy * dy + dz * dz;
            inside[l] = k + (uint32_t)l < n && r2[l] < h2;
        }
        for (int l = 0; l < LANES; l++) {
            float d = h2 - r2[l];
            lane[l] += inside[l] ? d * d * d : 0.0f;
        }
        for (int l = 0; l < LANES; l++)
            if (inside[l] && r2[l] > TS_SPH_SAME_POINT) {
                if (count < cap)
                    near[count] = j[l];
                count++;
            }
    }
    *near_count = count;
    return sum_lanes(lane);
}

static uint32_t within_ranges_portable(const float *x, const float *y, const float *z, const ts_neighbor_ranges *r,
                                       float xi, float yi, float zi, float reach2, uint32_t *out)
{
    uint32_t count = 0;
    for (int q = 0; q < r->n; q++)
        for (uint32_t j = r->begin[q]; j < r->end[q]; j++) {
            float dx = xi - x[j], dy = yi - y[j], dz = zi - z[j];
            if (dx * dx + dy * dy + dz * dz < reach2) {
                if (out)
                    out[count] = j;
                count++;
            }
        }
    return count;
}

/* What neighbour j adds to particle i's sums. */
typedef struct pair_parts {
    float ax, ay, az, nx, ny, nz, lap, cx, cy, cz;
} pair_parts;

static inline pair_parts pair_contribution(const ts_sph_pair_consts *c, int muller, float dx, float dy, float dz,
                                           float dvx, float dvy, float dvz, ts_sph_side si, ts_sph_side sj)
{
    float r2 = dx * dx + dy * dy + dz * dz;
    ts_sph_pair_terms t = ts_sph_pair_law(c, muller, r2, dvx * dx + dvy * dy + dvz * dz, si, sj);
    float d = c->h2 - r2;
    float gw_d = c->mass * sj.inv_rho * c->poly6_grad * d;             /* m_j / rho_j grad W_poly6 / (d r) */
    float gw = gw_d * d;                                                /* colour field gradient, eq. 3.21 */
    pair_parts p = {t.s * dx - t.visc * dvx, t.s * dy - t.visc * dvy, t.s * dz - t.visc * dvz,
                    gw * dx, gw * dy, gw * dz,
                    gw_d * (c->three_h2 - 7.0f * r2),                   /* its Laplacian, eq. 3.22 */
                    0.0f, 0.0f, 0.0f};
    if (!muller) {                                                      /* grad W_spiky, for grad C */
        float r = sqrtf(r2), q = c->h - r, grad = c->spiky_grad * q * q / r;
        p.cx = grad * dx, p.cy = grad * dy, p.cz = grad * dz;
    }
    return p;
}

static inline __attribute__((always_inline)) void pair_forces_portable_form(
    const ts_sph_pair_consts *c, int muller, const ts_sph_fluid *f, size_t i, const uint32_t *list, int count,
    ts_sph_pair_sums *sums)
{
    const ts_sph_side si = {f->rho[i], f->p[i], f->P[i], f->inv_rho[i]};
    float ax[LANES] = {0}, ay[LANES] = {0}, az[LANES] = {0}, nx[LANES] = {0}, ny[LANES] = {0}, nz[LANES] = {0};
    float lap[LANES] = {0}, cx[LANES] = {0}, cy[LANES] = {0}, cz[LANES] = {0};
    float rho_min = sums->rho_min;
    for (int k = 0; k < count; k += LANES) {
        uint32_t pad[LANES];
        const uint32_t *j = group_indices(list, (uint32_t)k, (uint32_t)count, pad);
        float dx[LANES], dy[LANES], dz[LANES], dvx[LANES], dvy[LANES], dvz[LANES];
        float rho[LANES], p[LANES], P[LANES], inv_rho[LANES];
        for (int l = 0; l < LANES; l++) {
            dx[l] = f->x[i] - f->x[j[l]], dy[l] = f->y[i] - f->y[j[l]], dz[l] = f->z[i] - f->z[j[l]];
            dvx[l] = f->vx[i] - f->vx[j[l]], dvy[l] = f->vy[i] - f->vy[j[l]], dvz[l] = f->vz[i] - f->vz[j[l]];
            rho[l] = f->rho[j[l]], p[l] = muller ? f->p[j[l]] : 0.0f, P[l] = f->P[j[l]], inv_rho[l] = f->inv_rho[j[l]];
        }
        /* the lanes in use only (the AVX2 form's unused lanes add exactly zero) */
        int used = count - k < LANES ? count - k : LANES;
        #pragma omp simd
        for (int l = 0; l < used; l++) {
            const ts_sph_side sj = {rho[l], p[l], P[l], inv_rho[l]};
            pair_parts q = pair_contribution(c, muller, dx[l], dy[l], dz[l], dvx[l], dvy[l], dvz[l], si, sj);
            ax[l] += q.ax, ay[l] += q.ay, az[l] += q.az, nx[l] += q.nx, ny[l] += q.ny, nz[l] += q.nz;
            lap[l] += q.lap, cx[l] += q.cx, cy[l] += q.cy, cz[l] += q.cz;
        }
        for (int l = 0; l < used && !muller; l++)
            rho_min = rho[l] < rho_min ? rho[l] : rho_min;
    }
    sums->a[0] += sum_lanes(ax), sums->a[1] += sum_lanes(ay), sums->a[2] += sum_lanes(az);
    sums->n[0] += sum_lanes(nx), sums->n[1] += sum_lanes(ny), sums->n[2] += sum_lanes(nz);
    sums->lap += sum_lanes(lap);
    sums->c[0] += sum_lanes(cx), sums->c[1] += sum_lanes(cy), sums->c[2] += sum_lanes(cz);
    sums->rho_min = rho_min;
}

static void pair_forces_portable(const ts_sph_pair_consts *c, const ts_sph_fluid *f, size_t i, const uint32_t *list,
                                 int count, ts_sph_pair_sums *sums)
{
    if (c->muller)
        pair_forces_portable_form(c, 1, f, i, list, count, sums);
    else
        pair_forces_portable_form(c, 0, f, i, list, count, sums);
}

/* ---------------------------------------------------------------- AVX2 form */

#ifdef TS_HAVE_AVX2_FORM
#define AVX2 __attribute__((target("avx2")))

/* Lanes k < left of a group of eight are in use. */
AVX2 static inline __m256i lanes_in_use(uint32_t left)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(left < LANES ? (int)left : LANES), lane);
}

/* The float4 records of particles j[0..8) turned into four vectors, one per
 * component, lane l holding particle j[l]: two loads per pair of records and
 * a 4x4 transpose in each half, far cheaper than gathers on current CPUs. */
AVX2 static inline void load_records(const float *records, const uint32_t j[LANES], __m256 out[4])
{
    __m256 a = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(records + 4 * (size_t)j[0])),
                                    _mm_loadu_ps(records + 4 * (size_t)j[4]), 1);
    __m256 b = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(records + 4 * (size_t)j[1])),
                                    _mm_loadu_ps(records + 4 * (size_t)j[5]), 1);
    __m256 c = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(records + 4 * (size_t)j[2])),
                                    _mm_loadu_ps(records + 4 * (size_t)j[6]), 1);
    __m256 d = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(records + 4 * (size_t)j[3])),
                                    _mm_loadu_ps(records + 4 * (size_t)j[7]), 1);
    __m256 ab_lo = _mm256_unpacklo_ps(a, b), ab_hi = _mm256_unpackhi_ps(a, b);
    __m256 cd_lo = _mm256_unpacklo_ps(c, d), cd_hi = _mm256_unpackhi_ps(c, d);
    out[0] = _mm256_shuffle_ps(ab_lo, cd_lo, 0x44);
    out[1] = _mm256_shuffle_ps(ab_lo, cd_lo, 0xEE);
    out[2] = _mm256_shuffle_ps(ab_hi, cd_hi, 0x44);
    out[3] = _mm256_shuffle_ps(ab_hi, cd_hi, 0xEE);
}

/* For each 8-bit mask of lanes, the permutation that moves those lanes to
 * the front in order: the hits of a group are stored with two stores. */
static uint32_t compaction[256][LANES];
static pthread_once_t compaction_once = PTHREAD_ONCE_INIT;

static void build_compaction(void)
{
    for (unsigned m = 0; m < 256; m++) {
        int k = 0;
        for (unsigned l = 0; l < LANES; l++)
            if (m & (1u << l))
                compaction[m][k++] = l;
        while (k < LANES)
            compaction[m][k++] = 0;
    }
}

AVX2 static float density_sum_avx2(const ts_sph_fluid *f, const uint32_t *list, uint32_t n, float xi, float yi,
                                   float zi, float h2, uint32_t *near, int cap, int *near_count)
{
    const __m256 vxi = _mm256_set1_ps(xi), vyi = _mm256_set1_ps(yi), vzi = _mm256_set1_ps(zi);
    const __m256 vh2 = _mm256_set1_ps(h2), same_point = _mm256_set1_ps(TS_SPH_SAME_POINT);
    __m256 sum = _mm256_setzero_ps();
    int count = 0;
    for (uint32_t k = 0; k < n; k += LANES) {
        uint32_t pad[LANES];
        const uint32_t *j = group_indices(list, k, n, pad);
        __m256 pos[4];
        load_records(f->pos4, j, pos);
        __m256 dx = _mm256_sub_ps(vxi, pos[0]), dy = _mm256_sub_ps(vyi, pos[1]), dz = _mm256_sub_ps(vzi, pos[2]);
        __m256 r2 = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)), _mm256_mul_ps(dz, dz));
        __m256 inside = _mm256_and_ps(_mm256_cmp_ps(r2, vh2, _CMP_LT_OQ), _mm256_castsi256_ps(lanes_in_use(n - k)));
        __m256 d = _mm256_sub_ps(vh2, r2);
        sum = _mm256_add_ps(sum, _mm256_and_ps(_mm256_mul_ps(_mm256_mul_ps(d, d), d), inside));
        unsigned hits = (unsigned)_mm256_movemask_ps(_mm256_and_ps(inside, _mm256_cmp_ps(r2, same_point, _CMP_GT_OQ)));
        if (hits == 0)
            continue;
        if (count < cap) {
            __m256i order = _mm256_loadu_si256((const __m256i *)compaction[hits]);
            _mm256_storeu_si256((__m256i *)(near + count),
                                _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)j), order));
        }
        count += __builtin_popcount(hits);
    }
    float lanes[LANES];
    _mm256_storeu_ps(lanes, sum);
    *near_count = count;
    return sum_lanes(lanes);
}

AVX2 static uint32_t within_ranges_avx2(const float *x, const float *y, const float *z, const ts_neighbor_ranges *r,
                                        float xi, float yi, float zi, float reach2, uint32_t *out)
{
    const __m256 vxi = _mm256_set1_ps(xi), vyi = _mm256_set1_ps(yi), vzi = _mm256_set1_ps(zi);
    const __m256 vreach2 = _mm256_set1_ps(reach2);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    uint32_t count = 0;
    for (int q = 0; q < r->n; q++)
        for (uint32_t j = r->begin[q]; j < r->end[q]; j += LANES) {
            __m256i use = lanes_in_use(r->end[q] - j);      /* masked loads: never past the arrays' end */
            __m256 dx = _mm256_sub_ps(vxi, _mm256_maskload_ps(x + j, use));
            __m256 dy = _mm256_sub_ps(vyi, _mm256_maskload_ps(y + j, use));
            __m256 dz = _mm256_sub_ps(vzi, _mm256_maskload_ps(z + j, use));
            __m256 r2 = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)),
                                      _mm256_mul_ps(dz, dz));
            unsigned hits = (unsigned)_mm256_movemask_ps(
                _mm256_and_ps(_mm256_cmp_ps(r2, vreach2, _CMP_LT_OQ), _mm256_castsi256_ps(use)));
            int found = __builtin_popcount(hits);
            if (out && found) {
                __m256i order = _mm256_loadu_si256((const __m256i *)compaction[hits]);
                __m256i js = _mm256_add_epi32(_mm256_set1_epi32((int)j), _mm256_permutevar8x32_epi32(lane, order));
                _mm256_storeu_si256((__m256i *)(out + count), js);
            }
            count += (uint32_t)found;
        }
    return count;
}

/* Mueller's form needs p_j itself, which the records do not carry. */
AVX2 static inline __m256 pressures(const float *p, const uint32_t j[LANES])
{
    return _mm256_setr_ps(p[j[0]], p[j[1]], p[j[2]], p[j[3]], p[j[4]], p[j[5]], p[j[6]], p[j[7]]);
}

AVX2 static inline void add_lanes(__m256 sum, float *total)
{
    float l[LANES];
    _mm256_storeu_ps(l, sum);
    *total += sum_lanes(l);
}

/* The pair law of ts_sph_pair_law and the terms of pair_contribution, eight
 * pairs at once, operation for operation. */
AVX2 static inline __attribute__((always_inline)) void pair_forces_avx2_form(
    const ts_sph_pair_consts *c, int muller, const ts_sph_fluid *f, size_t i, const uint32_t *list, int count,
    ts_sph_pair_sums *sums)
{
    const __m256 xi = _mm256_set1_ps(f->x[i]), yi = _mm256_set1_ps(f->y[i]), zi = _mm256_set1_ps(f->z[i]);
    const __m256 vxi = _mm256_set1_ps(f->vx[i]), vyi = _mm256_set1_ps(f->vy[i]), vzi = _mm256_set1_ps(f->vz[i]);
    const __m256 rho_i = _mm256_set1_ps(f->rho[i]), p_i = _mm256_set1_ps(f->p[i]);
    const __m256 P_i = _mm256_set1_ps(f->P[i]), inv_rho_i = _mm256_set1_ps(f->inv_rho[i]);
    const __m256 h = _mm256_set1_ps(c->h), h2 = _mm256_set1_ps(c->h2), zero = _mm256_setzero_ps();
    const __m256 spiky_grad = _mm256_set1_ps(c->spiky_grad), press_muller = _mm256_set1_ps(c->press_muller);
    const __m256 press_wcsph = _mm256_set1_ps(c->press_wcsph), art_visc = _mm256_set1_ps(c->art_visc);
    const __m256 art_eps2 = _mm256_set1_ps(c->art_eps2), visc_k = _mm256_set1_ps(c->visc);
    const __m256 mass = _mm256_set1_ps(c->mass), poly6_grad = _mm256_set1_ps(c->poly6_grad);
    const __m256 three_h2 = _mm256_set1_ps(c->three_h2), seven = _mm256_set1_ps(7.0f), one = _mm256_set1_ps(1.0f);
    __m256 ax = zero, ay = zero, az = zero, nx = zero, ny = zero, nz = zero, lap = zero, cx = zero, cy = zero,
           cz = zero, rho_min = _mm256_set1_ps(sums->rho_min);
    for (int k = 0; k < count; k += LANES) {
        uint32_t pad[LANES];
        const uint32_t *j = group_indices(list, (uint32_t)k, (uint32_t)count, pad);
        __m256 in_use = _mm256_castsi256_ps(lanes_in_use((uint32_t)(count - k)));
        __m256 pos[4], vel[4];
        load_records(f->pos4, j, pos);
        load_records(f->vel4, j, vel);
        __m256 dx = _mm256_sub_ps(xi, pos[0]), dy = _mm256_sub_ps(yi, pos[1]), dz = _mm256_sub_ps(zi, pos[2]);
        __m256 dvx = _mm256_sub_ps(vxi, vel[0]), dvy = _mm256_sub_ps(vyi, vel[1]), dvz = _mm256_sub_ps(vzi, vel[2]);
        __m256 rho_j = pos[3], P_j = vel[3], inv_rho_j = _mm256_div_ps(one, rho_j); /* as the density pass forms it */
        __m256 r2 = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)), _mm256_mul_ps(dz, dz));
        __m256 vdotx = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(dvx, dx), _mm256_mul_ps(dvy, dy)),
                                     _mm256_mul_ps(dvz, dz));
        /* ts_sph_pair_law */
        __m256 r = _mm256_sqrt_ps(r2), q = _mm256_sub_ps(h, r);
        __m256 grad = _mm256_div_ps(_mm256_mul_ps(_mm256_mul_ps(spiky_grad, q), q), r);
        __m256 press;
        if (muller)
            press = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(press_muller, _mm256_add_ps(p_i, pressures(f->p, j))),
                                                inv_rho_i), inv_rho_j);
        else
            press = _mm256_mul_ps(press_wcsph, _mm256_add_ps(P_i, P_j));
        __m256 approach = _mm256_min_ps(vdotx, zero);                  /* vdotx < 0 ? vdotx : 0 */
        press = _mm256_add_ps(press, _mm256_div_ps(_mm256_mul_ps(art_visc, approach),
                                                   _mm256_mul_ps(_mm256_add_ps(r2, art_eps2),
                                                                 _mm256_add_ps(rho_i, rho_j))));
        __m256 s = _mm256_mul_ps(press, grad);
        __m256 visc = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(visc_k, q), inv_rho_i), inv_rho_j);
        /* pair_contribution; lanes not in use add exactly zero */
        s = _mm256_and_ps(s, in_use);
        visc = _mm256_and_ps(visc, in_use);
        ax = _mm256_add_ps(ax, _mm256_sub_ps(_mm256_mul_ps(s, dx), _mm256_mul_ps(visc, dvx)));
        ay = _mm256_add_ps(ay, _mm256_sub_ps(_mm256_mul_ps(s, dy), _mm256_mul_ps(visc, dvy)));
        az = _mm256_add_ps(az, _mm256_sub_ps(_mm256_mul_ps(s, dz), _mm256_mul_ps(visc, dvz)));
        __m256 d = _mm256_sub_ps(h2, r2);
        __m256 gw_d = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(mass, inv_rho_j), poly6_grad), d);
        gw_d = _mm256_and_ps(gw_d, in_use);
        __m256 gw = _mm256_mul_ps(gw_d, d);
        nx = _mm256_add_ps(nx, _mm256_mul_ps(gw, dx));
        ny = _mm256_add_ps(ny, _mm256_mul_ps(gw, dy));
        nz = _mm256_add_ps(nz, _mm256_mul_ps(gw, dz));
        lap = _mm256_add_ps(lap, _mm256_mul_ps(gw_d, _mm256_sub_ps(three_h2, _mm256_mul_ps(seven, r2))));
        if (!muller) {
            __m256 g = _mm256_and_ps(grad, in_use);
            cx = _mm256_add_ps(cx, _mm256_mul_ps(g, dx));
            cy = _mm256_add_ps(cy, _mm256_mul_ps(g, dy));
            cz = _mm256_add_ps(cz, _mm256_mul_ps(g, dz));
            rho_min = _mm256_min_ps(rho_min, _mm256_blendv_ps(rho_min, rho_j, in_use));
        }
    }
    add_lanes(ax, &sums->a[0]), add_lanes(ay, &sums->a[1]), add_lanes(az, &sums->a[2]);
    add_lanes(nx, &sums->n[0]), add_lanes(ny, &sums->n[1]), add_lanes(nz, &sums->n[2]);
    add_lanes(lap, &sums->lap);
    add_lanes(cx, &sums->c[0]), add_lanes(cy, &sums->c[1]), add_lanes(cz, &sums->c[2]);
    float least[LANES];
    _mm256_storeu_ps(least, rho_min);
    for (int l = 0; l < LANES; l++)
        sums->rho_min = least[l] < sums->rho_min ? least[l] : sums->rho_min;
}

AVX2 static void pair_forces_avx2(const ts_sph_pair_consts *c, const ts_sph_fluid *f, size_t i, const uint32_t *list,
                                  int count, ts_sph_pair_sums *sums)
{
    if (c->muller)
        pair_forces_avx2_form(c, 1, f, i, list, count, sums);
    else
        pair_forces_avx2_form(c, 0, f, i, list, count, sums);
}
#endif

/* ----------------------------------------------------------------- dispatch */

static const ts_sph_loops portable_loops = {"portable", density_sum_portable, pair_forces_portable,
                                            within_ranges_portable};
#ifdef TS_HAVE_AVX2_FORM
static const ts_sph_loops avx2_loops = {"avx2", density_sum_avx2, pair_forces_avx2, within_ranges_avx2};
#endif
static atomic_int simd_allowed = 1;

void ts_sph_allow_simd(int allow)
{
    atomic_store(&simd_allowed, allow != 0);
}

const ts_sph_loops *ts_sph_loops_select(void)
{
#ifdef TS_HAVE_AVX2_FORM
    __builtin_cpu_init();
    if (atomic_load(&simd_allowed) && __builtin_cpu_supports("avx2")) {
        pthread_once(&compaction_once, build_compaction);
        return &avx2_loops;
    }
#endif
    return &portable_loops;
}
