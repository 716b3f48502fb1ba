/* elastoplastic.h - the elastoplastic effect: jelly, rubber, clay and dough
 * with master and slave particles.
 *
 * After Saida, Fujisawa & Mikawa 2017
 * (../shared/papers/elastoplastic-slave-particles-saida-fujisawa-mikawa.txt):
 * master particles carry the material (mass, velocity, the elastic and
 * plastic deformation gradients F_E, F_P); slave particles are the stress
 * points, placed around every master (outside the shape too) and advected
 * with them, added where masters part and removed where they crowd. The
 * fixed-corotated energy with hardening of Stomakhin 2013; a semi-implicit
 * slave velocity update by conjugate gradients (eq. 15); plasticity by the
 * SVD clamp (eqs. 18-21).
 *
 * Outputs per frame: stream "masters" (position, velocity, id, J, plastic
 * strain), "surface" (.vdb level set, if asked) and "skin" (the positions
 * of the bodies' own mesh vertices, carried by the masters, if asked).
 */
#ifndef TSUBU_ELASTOPLASTIC_H
#define TSUBU_ELASTOPLASTIC_H

#include <stddef.h>
#include <stdint.h>

#include "frameloop.h"
#include "params.h"
#include "status.h"

typedef enum ts_elastoplastic_role {
    TS_ELASTOPLASTIC_BODY = 0,      /* a closed mesh filled with masters, or an open one: a one-layer sheet */
    TS_ELASTOPLASTIC_OBSTACLE = 1   /* a closed mesh collider, static or animated */
} ts_elastoplastic_role;

typedef struct ts_elastoplastic_object {
    const char *name;
    ts_elastoplastic_role role;
    const float *vertices;          /* world space at frame_start */
    size_t vertex_count;
    const int32_t *triangles;
    size_t triangle_count;
    const double *motion;           /* obstacle: rows tx ty tz qw qx qy qz per frame, or NULL */
    int motion_frames;
    double velocity[3];             /* body: initial */
    int sheet;                      /* body: an open mesh is meant (one layer of masters along it) */
} ts_elastoplastic_object;

typedef struct ts_elastoplastic_params {
    double particle_radius;         /* masters sit on a lattice of twice this */
    double density;                 /* kg/m^3 */
    double youngs_modulus;          /* E, Pa */
    double poisson_ratio;           /* nu, below 0.5 */
    int plastic;                    /* 0: elastic (no yield) */
    double yield_compression;       /* theta_c of eq. 19 */
    double yield_stretch;           /* theta_s */
    int keep_volume;                /* plastic flow without change of volume (clay); 0: it may compact (snow) */
    double hardening;               /* xi: mu, lambda scale by exp(xi (1 - J_P)) (Stomakhin 2013) */
    double beta;                    /* eq. 15: 0 explicit, 1 implicit */
    double alpha;                   /* eq. 8: master velocity blend */
    double friction;                /* Coulomb, at the ground and obstacles */
    int ground;                     /* a ground plane at ground_height */
    double ground_height;
    double gravity[3];
    double cfl_number;
    int cg_iterations;              /* at most, per step */
    double cg_tolerance;            /* relative residual */
    int slave_particles;            /* 0: stress at the masters (the paper's fig. 7 left; for tests) */
    long max_particles;             /* masters + slaves */
    int write_surface;
    int write_skin;                 /* the bodies' meshes carried by the masters: stream "skin" */
    int surface_method;          /* ts_surface_method */
    double surface_voxel_ratio, surface_radius_scale;
    int surface_smoothing;
    int frame_start;
    double fps;
    uint64_t seed;
} ts_elastoplastic_params;

extern const ts_param_table ts_elastoplastic_param_table;
ts_elastoplastic_params ts_elastoplastic_params_default(void);

typedef struct ts_elastoplastic ts_elastoplastic;

ts_status ts_elastoplastic_create(ts_elastoplastic **out, const ts_elastoplastic_params *p,
                                  const ts_elastoplastic_object *objects, size_t object_count, ts_error *err);
ts_status ts_elastoplastic_restore(ts_elastoplastic *e, const ts_checkpoint *checkpoint, ts_error *err);
void ts_elastoplastic_destroy(ts_elastoplastic *e);

typedef struct ts_elastoplastic_stats {
    size_t masters, slaves, slaves_added, slaves_removed;
    int cg_iterations;              /* of the last step */
    long cg_iterations_total;       /* over every step so far (with steps: the mean per step) */
    double cg_residual;             /* relative, of the last step */
    double kinetic_energy, max_speed;
    double volume, rest_volume;     /* sum of J V0 and of V0, m^3 */
    double max_plastic_strain;
    long steps, pair_searches;      /* substeps so far; how many of them searched for neighbour pairs again */
    double momentum[3];
} ts_elastoplastic_stats;

void ts_elastoplastic_get_stats(const ts_elastoplastic *e, ts_elastoplastic_stats *s);

/* Master positions (for tests). */
size_t ts_elastoplastic_masters(const ts_elastoplastic *e, const float **x, const float **y, const float **z);

extern const ts_solver_ops ts_elastoplastic_ops;

#endif
