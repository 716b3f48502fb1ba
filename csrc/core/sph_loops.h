/* sph_loops.h - the two inner loops that take most of an SPH step: finding
 * the neighbours within h among a particle's Verlet list, and summing the
 * pair forces over them.
 *
 * Each loop has a portable form and an AVX2 form (x86-64 CPUs since 2013),
 * chosen at run time. The AVX2 form gathers eight neighbours at a time
 * straight from the particle arrays; the portable form does the same float
 * operations in the same order and sums in the same eight lanes, so both
 * give the same bits: a bake is the same on every machine, and the tests
 * compare the two forms exactly.
 *
 * A third loop builds Verlet lists from a grid's cell rows; there the
 * neighbours are contiguous and the AVX2 form loads eight at once.
 *
 * The pair law is here too, as an inline function, because the rigid-body
 * coupling uses it one pair at a time.
 */
#ifndef TSUBU_SPH_LOOPS_H
#define TSUBU_SPH_LOOPS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "grid.h"

/* Constants of the pair law, each product formed once so that every form of
 * the loop multiplies the same numbers. */
typedef struct ts_sph_pair_consts {
    float h, h2, mass;
    float spiky_grad;          /* of grad W_spiky, eq. 3.30 */
    float press_muller;        /* -m / 2: eq. 3.16 */
    float press_wcsph;         /* -m: the symmetric WCSPH form */
    float art_visc;            /* 2 alpha c h m: Monaghan's artificial viscosity */
    float art_eps2;            /* 0.01 h^2, keeps it finite at r -> 0 */
    float visc;                /* mu m lap W_visc coefficient: eqs. 3.19, 3.32 */
    float poly6_grad;          /* colour field, eqs. 3.21-3.22 */
    float three_h2;
    float sigma;               /* surface tension, eq. 3.23 */
    int muller;                /* pressure force: Mueller's (eq. 3.16) or WCSPH's */
} ts_sph_pair_consts;

void ts_sph_pair_consts_init(ts_sph_pair_consts *c, float h, float mass, double spiky_grad, double visc_lap,
                             double poly6_grad, double viscosity, double alpha_c_h, double surface_tension,
                             int muller);

/* What a pair term needs of one particle: density, pressure, p / rho^2, 1 / rho. */
typedef struct ts_sph_side {
    float rho, p, P, inv_rho;
} ts_sph_side;

static inline ts_sph_side ts_sph_side_of(float rho, float p)
{
    ts_sph_side s = {rho, p, p / (rho * rho), 1.0f / rho};
    return s;
}

typedef struct ts_sph_pair_terms {
    float s, visc;
} ts_sph_pair_terms;

/* Acceleration of particle i from neighbour j at squared distance r2 < h^2
 * is s (x_i - x_j) - visc (v_i - v_j), from pressure (eq. 3.16 divided by
 * rho_i as in eq. 3.14 for Mueller, else the symmetric WCSPH form),
 * Monaghan's artificial viscosity, and viscosity (eq. 3.19 with the
 * Laplacian of eq. 3.32). vdotx = (v_i - v_j) . (x_i - x_j). */
static inline ts_sph_pair_terms ts_sph_pair_law(const ts_sph_pair_consts *c, int muller, float r2, float vdotx,
                                                ts_sph_side si, ts_sph_side sj)
{
    float r = sqrtf(r2), q = c->h - r;
    float grad = c->spiky_grad * q * q / r;                              /* grad W_spiky / |x_ij|, eq. 3.30 */
    float press = muller ? c->press_muller * (si.p + sj.p) * si.inv_rho * sj.inv_rho /* eq. 3.16 / rho_i */
                         : c->press_wcsph * (si.P + sj.P);                          /* symmetric WCSPH form */
    float approach = vdotx < 0.0f ? vdotx : 0.0f;                        /* closing pairs only */
    press += c->art_visc * approach / ((r2 + c->art_eps2) * (si.rho + sj.rho));
    ts_sph_pair_terms t = {press * grad, c->visc * q * si.inv_rho * sj.inv_rho};
    return t;
}

/* The fluid's arrays the loops read, indexed by j: the portable form reads
 * the structure of arrays; the AVX2 form the same values packed in two
 * records per particle, pos4 = (x, y, z, rho) and vel4 = (vx, vy, vz, P),
 * so that one load brings what a scalar loop loads four times. */
typedef struct ts_sph_fluid {
    const float *x, *y, *z, *vx, *vy, *vz;
    const float *rho, *p, *P, *inv_rho;
    const float *pos4, *vel4;
} ts_sph_fluid;

/* The sums of the force loop for one particle. */
typedef struct ts_sph_pair_sums {
    float a[3];     /* acceleration from pressure and viscosity */
    float n[3];     /* colour field gradient, eq. 3.21 */
    float lap;      /* its Laplacian, eq. 3.22 */
    /* weakly compressible only (particle shifting): */
    float c[3];     /* sum_j grad W_spiky(x_i - x_j): grad C without the volume */
    float rho_min;  /* the least density among the neighbours (start it at i's own) */
} ts_sph_pair_sums;

/* Room a neighbour list needs beyond its capacity: the AVX2 form writes
 * eight entries at once. */
#define TS_SPH_LIST_SLACK 8

/* Closer than this (squared) is the particle itself: no pair force. */
#define TS_SPH_SAME_POINT 1e-12f

typedef struct ts_sph_loops {
    const char *name;   /* "avx2" or "portable" */

    /* Over the entries j of list[0..n) within h of (xi, yi, zi) (h2 = h^2):
     * returns the sum of (h^2 - r^2)^3, eq. 3.5 without m and the kernel's
     * constant, the particle itself included; and writes the entries other
     * than the particle itself to near, in list order, their number to
     * *near_count. A count above cap means near (cap + TS_SPH_LIST_SLACK
     * long) holds no usable list; the sum is whole either way. */
    float (*density_sum)(const ts_sph_fluid *f, const uint32_t *list, uint32_t n, float xi, float yi, float zi,
                         float h2, uint32_t *near, int cap, int *near_count);

    /* Adds to sums the pair law and the colour field over the neighbours
     * list[0..count) of particle i (each within h of it, none i itself). */
    void (*pair_forces)(const ts_sph_pair_consts *c, const ts_sph_fluid *f, size_t i, const uint32_t *list,
                        int count, ts_sph_pair_sums *sums);

    /* The particles j in the ranges r (contiguous in the arrays: a sorted
     * grid's cell rows) with |x_j - (xi, yi, zi)|^2 < reach2, in range
     * order: how many, and written to out unless NULL (out needs
     * TS_SPH_LIST_SLACK room beyond them). Builds Verlet lists. */
    uint32_t (*within_ranges)(const float *x, const float *y, const float *z, const ts_neighbor_ranges *r,
                              float xi, float yi, float zi, float reach2, uint32_t *out);
} ts_sph_loops;

/* The AVX2 form where the CPU has it and it is allowed, else the portable one. */
const ts_sph_loops *ts_sph_loops_select(void);

/* Whether AVX2 may be used (default yes); the tests switch it off to compare
 * the two forms. Takes effect at the next ts_sph_loops_select. */
void ts_sph_allow_simd(int allow);

#endif
