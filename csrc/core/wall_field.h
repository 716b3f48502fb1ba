/* wall_field.h - the wall weight of a solid of any shape.
 *
 * The wall weight tables (sph.h) are the sums over virtual particles filling
 * a half-space behind a flat wall. Near a curved solid they are wrong: within
 * a kernel radius of a ball 6 spacings across, the half-space holds far more
 * virtual particles than the ball does, so the liquid around it reads as
 * compressed, its pressure rises and a floating ball was pushed up 13 % more
 * than Archimedes says. A rigid body does not deform, so its own wall weight
 * is computed once, in its own frame: the virtual particles' density share
 * Z(x) and pressure-gradient sum G(x) (a vector) as integrals of the poly6
 * and spiky kernels over the solid's inside, on a grid of half a spacing,
 * each kept as its ratio to the same integrals over a half-space at the same
 * distance; a query multiplies the tables at its distance by the ratios - so
 * a flat face gives exactly the domain walls' numbers and a curved face,
 * edge or corner its own.
 */
#ifndef TSUBU_WALL_FIELD_H
#define TSUBU_WALL_FIELD_H

#include "collider.h"
#include "kernels.h"
#include "sph.h"
#include "status.h"
#include "vecmath.h"

typedef struct ts_wall_field {
    float origin[3];
    float voxel, inv_voxel;
    int dims[3];
    /* 4 per node, x fastest: Z and G (a vector pointing out of the solid) over a flat wall's at the node's
     * distance - 1 and the normal on a flat face; smooth where Z and G themselves change fast */
    float *values;
} ts_wall_field;

/* The field of the solid inside `shape` (a collider at rest: its frame is the
 * field's) for a fluid lattice of `spacing` and particle `mass`, kernels k,
 * half-space tables `wall`. */
ts_status ts_wall_field_build(ts_wall_field *f, const ts_collider *shape, const ts_kernels *k,
                              const ts_sph_wall *wall, double spacing, double mass, ts_error *err);
void ts_wall_field_free(ts_wall_field *f);

/* Z and G at a point of the field's frame at distance phi from the surface: the flat wall's tables at phi
 * times the field's ratios there (trilinear); 0 outside the grid. */
int ts_wall_field_eval(const ts_wall_field *f, const ts_sph_wall *wall, ts_vec3 p, double phi, float *z, ts_vec3 *g);

#endif
