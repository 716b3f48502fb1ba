/* film.h - the liquid film between a rigid body and a wall.
 *
 * SPH has liquid only where a particle fits. Where a body comes closer to a
 * wall (the tank's floor or side, an obstacle, the ground) than one spacing,
 * no particle is between them, and the pressure the liquid there puts on the
 * body is missing: a light body resting on the floor feels the liquid's
 * weight on its top and nothing under it and stays down as if sucked on, and
 * a body against a tank side is pressed onto it by the liquid on its other
 * side. A real film, however thin, carries the pressure of the liquid around
 * it. So every piece of a body's surface that faces a wall closer than a
 * spacing gets the pressure of the liquid at the film's rim - each rim
 * particle's pressure carried hydrostatically to the piece's height,
 * p_j + rho0 g . (x - x_j), weighted by inverse squared distance - pushing
 * along its inward normal, less what the liquid beside the film already
 * presses into it across an edge. With no liquid at the rim (a dry floor)
 * there is no film force; once the gap is wide enough for particles, SPH
 * takes over.
 */
#ifndef TSUBU_FILM_H
#define TSUBU_FILM_H

#include <stddef.h>
#include <stdint.h>

#include "rigid.h"
#include "sph_model.h"
#include "sph_sources.h"
#include "status.h"

/* A closed mesh's surface cut into small pieces, in the body's frame. */
typedef struct ts_surface_samples {
    size_t n;
    float *x, *y, *z;       /* centre of each piece, from the body's centre of mass at rest */
    float *nx, *ny, *nz;    /* unit outward normal */
    float *area;            /* m^2 */
    double radius;          /* the farthest piece from the centre */
} ts_surface_samples;

/* Pieces no longer than `size` across; `centre` is subtracted from every position. */
ts_status ts_surface_samples_from_mesh(ts_surface_samples *s, const ts_mesh_ref *mesh, ts_vec3 centre, double size,
                                       ts_error *err);
void ts_surface_samples_free(ts_surface_samples *s);

/* Work space reused from step to step. */
typedef struct ts_film {
    size_t *near;           /* the walls near the body this step */
    size_t near_cap;
    float *posed;           /* the surface's pieces where the body is this step: 6 per piece */
    size_t posed_cap;
    uint32_t *pieces;       /* the samples in a film this step */
    size_t pieces_cap;
    uint32_t *rim;          /* the fluid particles at its rim */
    size_t rim_cap;
    double *share;          /* 3 per rim particle: how its push on the body is shared (film.c) */
    size_t share_cap;
} ts_film;

void ts_film_free(ts_film *f);

/* Add the film's pressure on body `rb` (boundary k of m; surface `s`, posed
 * by rb) to force and torque (about its centre of mass); m's walls where they
 * are at m->s, its fluid as it is. */
ts_status ts_film_push(const ts_sph_model *m, size_t k, const ts_surface_samples *s, const ts_rigid_body *rb,
                       ts_film *f, ts_vec3 *force, ts_vec3 *torque, ts_error *err);

#endif
