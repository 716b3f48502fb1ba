/* kernels.h - SPH smoothing kernels, all with compact support radius h.
 *
 * poly6, spiky and viscosity after Mueller, Charypar & Gross 2003 (the
 * water paper's eqs 3.9, 3.14, 3.17); the cubic spline (M4) of Monaghan 1992
 * with support h. Each W integrates to 1 over its support (tested).
 * Functions take r^2 or r as they are naturally evaluated so the hot loops
 * avoid square roots where the kernel does not need them.
 */
#ifndef TSUBU_KERNELS_H
#define TSUBU_KERNELS_H

#include <math.h>

#include "wide.h"

#define TS_PI 3.14159265358979323846

/* Constants depending only on h, computed once per step. */
typedef struct ts_kernels {
    double h, h2;
    double poly6;        /* 315 / (64 pi h^9) */
    double spiky_grad;   /* -45 / (pi h^6) */
    double visc_lap;     /* 45 / (pi h^6) */
    double spiky;        /* 15 / (pi h^6) */
    double visc;         /* 15 / (2 pi h^3) */
    double cubic;        /* 8 / (pi h^3) */
} ts_kernels;

void ts_kernels_init(ts_kernels *k, double h);

/* W_poly6(r) = 315/(64 pi h^9) (h^2 - r^2)^3, given r^2 */
static inline double ts_w_poly6(const ts_kernels *k, double r2)
{
    if (r2 >= k->h2)
        return 0.0;
    double d = k->h2 - r2;
    return k->poly6 * d * d * d;
}

/* W_spiky(r) = 15/(pi h^6) (h - r)^3 */
static inline double ts_w_spiky(const ts_kernels *k, double r)
{
    if (r >= k->h)
        return 0.0;
    double d = k->h - r;
    return k->spiky * d * d * d;
}

/* dW_spiky/dr = -45/(pi h^6) (h - r)^2; the gradient is this times r_vec/r */
static inline double ts_dw_spiky(const ts_kernels *k, double r)
{
    if (r >= k->h)
        return 0.0;
    double d = k->h - r;
    return k->spiky_grad * d * d;
}

/* W_visc(r) = 15/(2 pi h^3) (-r^3/(2h^3) + r^2/h^2 + h/(2r) - 1) */
static inline double ts_w_viscosity(const ts_kernels *k, double r)
{
    if (r >= k->h || r <= 0.0)
        return 0.0;
    double q = r / k->h;
    return k->visc * (-0.5 * q * q * q + q * q + 0.5 / q - 1.0);
}

/* Laplacian of W_visc = 45/(pi h^6) (h - r) */
static inline double ts_lap_viscosity(const ts_kernels *k, double r)
{
    if (r >= k->h)
        return 0.0;
    return k->visc_lap * (k->h - r);
}

/* Cubic spline M4 with support h (q = r/h):
 * 8/(pi h^3) * (6q^3 - 6q^2 + 1) for q <= 1/2, 2(1-q)^3 for 1/2 < q <= 1.
 * Both pieces are computed and one selected, without a branch: neighbours alternate between them, and a
 * mispredicted branch per pair cost more than the other piece (the elastoplastic pairs). */
static inline double ts_w_cubic(const ts_kernels *k, double r)
{
    const double q = r / k->h, d = q < 1.0 ? 1.0 - q : 0.0;
    const double inner = k->cubic * (6.0 * q * q * q - 6.0 * q * q + 1.0), outer = k->cubic * 2.0 * d * d * d;
    return q <= 0.5 ? inner : outer;
}

/* The same spline for 8 values of q = r / h at once, without its constant 8 / (pi h^3) (for weights normalised
 * afterwards, which divide it out): 6q^3 - 6q^2 + 1 up to 1/2, 2 (1 - q)^3 up to 1, 0 beyond. In a vector clone's
 * code (wide.h); both pieces computed and one selected, as above. */
TS_WIDE_INLINE ts_f8 ts_w_cubic_shape8(ts_f8 q)
{
    const ts_f8 d = (ts_f8)((ts_i8)(1.0f - q) & (q < 1.0f));
    const ts_f8 inner = (6.0f * q - 6.0f) * q * q + 1.0f, outer = 2.0f * d * d * d;
    return (ts_f8)(((ts_i8)inner & (q <= 0.5f)) | ((ts_i8)outer & (q > 0.5f)));
}

/* dW_cubic/dr */
static inline double ts_dw_cubic(const ts_kernels *k, double r)
{
    double q = r / k->h;
    if (q >= 1.0)
        return 0.0;
    if (q <= 0.5)
        return k->cubic * (18.0 * q * q - 12.0 * q) / k->h;
    double d = 1.0 - q;
    return -k->cubic * 6.0 * d * d / k->h;
}

#endif
