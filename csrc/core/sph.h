/* sph.h - the SPH pieces shared by the water and erosion solvers.
 *
 * Equations of state (Mueller 2003's ideal gas, the water paper's eq. 3.17;
 * Becker & Teschner 2007's Tait equation), the particle mass that makes a
 * resting lattice exactly the rest density, and boundary handling by wall
 * weight functions (Harada et al. 2007; the erosion paper's sec. 4.3): a
 * wall is a half-space of virtual particles continuing the fluid lattice,
 * whose density contribution Z(phi) and pressure-gradient weight G(phi)
 * depend only on the distance phi to the wall, so they are tabulated once
 * and any signed distance field (a collider, a domain side, a voxel
 * terrain) becomes a boundary with correct density near it.
 */
#ifndef TSUBU_SPH_H
#define TSUBU_SPH_H

#include "kernels.h"

typedef enum ts_sph_eos {
    TS_SPH_TAIT = 0,   /* p = B ((rho/rho0)^7 - 1), B = rho0 c^2 / 7, clamped at 0 (free surface) */
    TS_SPH_IDEAL = 1   /* p = k (rho - rho0), eq. 3.17 */
} ts_sph_eos;

typedef struct ts_sph_eos_params {
    ts_sph_eos eos;
    double rho0;
    double c;          /* Tait: speed of sound, m/s */
    double k;          /* ideal gas: stiffness, m^2/s^2 */
} ts_sph_eos_params;

/* Pressure at density rho. */
static inline float ts_sph_pressure(const ts_sph_eos_params *e, float rho)
{
    if (e->eos == TS_SPH_IDEAL)
        return (float)(e->k * (rho - e->rho0));                     /* eq. 3.17 */
    float ratio = (float)(rho / e->rho0);
    float r2 = ratio * ratio, r7 = r2 * r2 * r2 * ratio;
    float p = (float)(e->rho0 * e->c * e->c / 7.0) * (r7 - 1.0f);  /* Tait, gamma = 7 */
    return p > 0.0f ? p : 0.0f;
}

/* Speed at which pressure waves travel: bounds the time step. */
double ts_sph_sound_speed(const ts_sph_eos_params *e);

/* Mass per particle so that a cubic lattice of the given spacing has density
 * exactly rho0 with the poly6 kernel of radius h. */
double ts_sph_lattice_mass(double h, double spacing, double rho0);

#define TS_SPH_WALL_SAMPLES 128

/* Wall weight functions of distance phi in [phi_min, h]: wall particles sit at
 * depths spacing/2, 3 spacing/2, ... behind the surface, as the fluid's first
 * layer sits spacing/2 in front of it. */
typedef struct ts_sph_wall {
    double phi_min, phi_max, inv_step;
    float density[TS_SPH_WALL_SAMPLES];   /* Z(phi) = sum_w m W_poly6(|x - x_w|) */
    float gradient[TS_SPH_WALL_SAMPLES];  /* G(phi) = |sum_w m grad W_spiky(x - x_w)|, along the wall normal */
    /* F(phi): artificial viscosity against wall particles at rest, per unit
     * sliding speed and per nu = alpha h c / rho0 - the erosion paper's
     * F_vis(p) (sec. 3.2): a = -nu F(phi) v_t */
    float friction[TS_SPH_WALL_SAMPLES];
    /* T(phi) = sum_w m |W'(r)| (x - x_w)(x - x_w)^T / r, along the normal and across it: with a
     * hydrostatic wall pressure p_w = p_i + rho0 g . (x_w - x_i) the wall adds -(rho0 / rho^2) T g */
    float moment_n[TS_SPH_WALL_SAMPLES], moment_t[TS_SPH_WALL_SAMPLES];
} ts_sph_wall;

void ts_sph_wall_init(ts_sph_wall *w, const ts_kernels *k, double spacing, double mass);

/* Z and G at distance phi (0 beyond h; clamped below phi_min). */
static inline void ts_sph_wall_eval(const ts_sph_wall *w, double phi, float *density, float *gradient)
{
    if (phi >= w->phi_max) {
        *density = *gradient = 0.0f;
        return;
    }
    double t = (phi - w->phi_min) * w->inv_step;
    if (t < 0.0)
        t = 0.0;
    int i = (int)t;
    if (i >= TS_SPH_WALL_SAMPLES - 1)
        i = TS_SPH_WALL_SAMPLES - 2;
    float f = (float)(t - i);
    *density = w->density[i] + f * (w->density[i + 1] - w->density[i]);
    *gradient = w->gradient[i] + f * (w->gradient[i + 1] - w->gradient[i]);
}

/* A table of the wall at distance phi (0 beyond h; clamped below phi_min). */
static inline float ts_sph_wall_table(const ts_sph_wall *w, const float *table, double phi)
{
    if (phi >= w->phi_max)
        return 0.0f;
    double t = (phi - w->phi_min) * w->inv_step;
    if (t < 0.0)
        t = 0.0;
    int i = (int)t;
    if (i >= TS_SPH_WALL_SAMPLES - 1)
        i = TS_SPH_WALL_SAMPLES - 2;
    float f = (float)(t - i);
    return table[i] + f * (table[i + 1] - table[i]);
}

/* Gradient and Laplacian of poly6 (the colour field of eqs. 3.20-3.22):
 * grad W = -945/(32 pi h^9) (h^2 - r^2)^2 r_vec, lap W = -945/(32 pi h^9) (h^2 - r^2)(3h^2 - 7r^2). */
static inline double ts_poly6_grad_coeff(const ts_kernels *k) { return -945.0 / (32.0 * TS_PI * k->h2 * k->h2 * k->h2 * k->h2 * k->h); }

#endif
