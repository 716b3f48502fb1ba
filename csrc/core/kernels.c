/* kernels.c - normalisation constants of the SPH kernels (see kernels.h). */
#include "kernels.h"

void ts_kernels_init(ts_kernels *k, double h)
{
    double h3 = h * h * h, h6 = h3 * h3, h9 = h6 * h3;
    k->h = h;
    k->h2 = h * h;
    k->poly6 = 315.0 / (64.0 * TS_PI * h9);
    k->spiky = 15.0 / (TS_PI * h6);
    k->spiky_grad = -45.0 / (TS_PI * h6);
    k->visc = 15.0 / (2.0 * TS_PI * h3);
    k->visc_lap = 45.0 / (TS_PI * h6);
    k->cubic = 8.0 / (TS_PI * h3);
}
