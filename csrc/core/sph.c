/* sph.c - equations of state, lattice mass and wall weight tables (see sph.h). */
#include "sph.h"

#include <math.h>

double ts_sph_sound_speed(const ts_sph_eos_params *e)
{
    return e->eos == TS_SPH_IDEAL ? sqrt(e->k) : e->c;
}

double ts_sph_lattice_mass(double h, double spacing, double rho0)
{
    ts_kernels k;
    ts_kernels_init(&k, h);
    int n = (int)ceil(h / spacing);
    double sum = 0.0;
    for (int i = -n; i <= n; i++)
        for (int j = -n; j <= n; j++)
            for (int l = -n; l <= n; l++) {
                double r2 = spacing * spacing * (i * i + j * j + l * l);
                sum += ts_w_poly6(&k, r2);
            }
    return rho0 / sum; /* eq. 3.5 at a lattice site: rho0 = m sum_j W */
}

/* Sum over the wall lattice for a point at height phi above the surface. The
 * wall lattice continues the fluid's (no lateral offset), so a fluid lattice
 * filling a box starts exactly at the rest density, without a spurious push. */
static void wall_sums(const ts_kernels *k, double spacing, double mass, double phi, double *z, double *g,
                      double *f, double *tn, double *tt)
{
    const int offsets = 1, n = (int)ceil(k->h / spacing) + 1;
    double sz = 0.0, sg = 0.0, sf = 0.0, stn = 0.0, stt = 0.0;
    for (int oa = 0; oa < offsets; oa++)
        for (int ob = 0; ob < offsets; ob++) {
            double ox = 0.0, oy = 0.0;
            for (int layer = 0; layer <= n; layer++) {
                double dz = phi + spacing * (0.5 + layer); /* height above this wall layer */
                if (dz >= k->h)
                    break;
                for (int i = -n; i <= n; i++)
                    for (int j = -n; j <= n; j++) {
                        double dx = i * spacing + ox, dy = j * spacing + oy;
                        double r2 = dx * dx + dy * dy + dz * dz, r = sqrt(r2);
                        sz += mass * ts_w_poly6(k, r2);
                        if (r > 1e-12) {
                            sg -= mass * ts_dw_spiky(k, r) * dz / r; /* normal component, pointing away from the wall */
                            stn -= mass * ts_dw_spiky(k, r) * dz * dz / r;
                            stt -= mass * ts_dw_spiky(k, r) * dx * dx / r;
                        }
                        if (r > 1e-12 && dx > 0.0) /* artificial viscosity acts on the wall particles ahead */
                            sf -= mass * ts_dw_spiky(k, r) * dx * dx / (r * (r2 + 0.01 * k->h2));
                    }
            }
        }
    *z = sz / (offsets * offsets);
    *g = sg / (offsets * offsets);
    *f = sf / (offsets * offsets);
    *tn = stn / (offsets * offsets);
    *tt = stt / (offsets * offsets);
}

void ts_sph_wall_init(ts_sph_wall *w, const ts_kernels *k, double spacing, double mass)
{
    w->phi_min = -0.5 * spacing;
    w->phi_max = k->h;
    w->inv_step = (TS_SPH_WALL_SAMPLES - 1) / (w->phi_max - w->phi_min);
    for (int i = 0; i < TS_SPH_WALL_SAMPLES; i++) {
        double phi = w->phi_min + i / w->inv_step, z, g, f, tn, tt;
        wall_sums(k, spacing, mass, phi, &z, &g, &f, &tn, &tt);
        w->moment_n[i] = (float)tn;
        w->moment_t[i] = (float)tt;
        w->density[i] = (float)z;
        w->gradient[i] = (float)g;
        w->friction[i] = (float)f;
    }
}
