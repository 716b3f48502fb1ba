/* test_kernels.c - each SPH kernel integrates to one over its support, and
 * the gradient and Laplacian forms match the kernels they come from. */
#include <math.h>

#include "check.h"
#include "core/kernels.h"

/* integral over the ball of radius h of f(r) dV = 4 pi r^2 f(r) dr (Simpson) */
static double radial_integral(const ts_kernels *k, double (*f)(const ts_kernels *, double))
{
    const int n = 200000;
    double hstep = k->h / n, sum = 0;
    for (int i = 0; i <= n; i++) {
        double r = i * hstep;
        double w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
        sum += w * 4.0 * TS_PI * r * r * f(k, r);
    }
    return sum * hstep / 3.0;
}

static double poly6_r(const ts_kernels *k, double r) { return ts_w_poly6(k, r * r); }
static double spiky_r(const ts_kernels *k, double r) { return ts_w_spiky(k, r); }
static double visc_r(const ts_kernels *k, double r) { return ts_w_viscosity(k, r); }
static double cubic_r(const ts_kernels *k, double r) { return ts_w_cubic(k, r); }

static void test_kernel_normalisation(void)
{
    const double hs[] = {0.01, 0.1, 1.0, 2.5};
    for (int t = 0; t < 4; t++) {
        ts_kernels k;
        ts_kernels_init(&k, hs[t]);
        CHECK_NEAR(radial_integral(&k, poly6_r), 1.0, 1e-6);
        CHECK_NEAR(radial_integral(&k, spiky_r), 1.0, 1e-6);
        CHECK_NEAR(radial_integral(&k, visc_r), 1.0, 1e-4);
        CHECK_NEAR(radial_integral(&k, cubic_r), 1.0, 1e-6);
        CHECK(ts_w_poly6(&k, k.h2 * 1.0001) == 0.0);
        CHECK(ts_w_cubic(&k, k.h) == 0.0);
    }
}

static void test_kernel_derivatives(void)
{
    ts_kernels k;
    ts_kernels_init(&k, 0.3);
    for (int i = 1; i < 30; i++) {
        double r = k.h * i / 30.0, e = 1e-7;
        double fd_spiky = (ts_w_spiky(&k, r + e) - ts_w_spiky(&k, r - e)) / (2 * e);
        CHECK_NEAR(ts_dw_spiky(&k, r) / fd_spiky, 1.0, 1e-5);
        double fd_cubic = (ts_w_cubic(&k, r + e) - ts_w_cubic(&k, r - e)) / (2 * e);
        if (fabs(fd_cubic) > 1e-6)
            CHECK_NEAR(ts_dw_cubic(&k, r) / fd_cubic, 1.0, 1e-4);
        /* Laplacian of a radial function: f'' + 2 f'/r */
        double e2 = 1e-5;
        double f0 = ts_w_viscosity(&k, r), fp = ts_w_viscosity(&k, r + e2), fm = ts_w_viscosity(&k, r - e2);
        double lap = (fp - 2 * f0 + fm) / (e2 * e2) + 2.0 / r * (fp - fm) / (2 * e2);
        CHECK_NEAR(ts_lap_viscosity(&k, r) / lap, 1.0, 1e-3);
        CHECK(ts_lap_viscosity(&k, r) > 0); /* positive: viscosity only damps */
    }
}

const test_case kernel_tests[] = {
    {"kernels/normalisation", test_kernel_normalisation},
    {"kernels/derivatives", test_kernel_derivatives},
    {0, 0},
};
