/* fracture.h - the fracture effect: an object shatters under impacts, and a
 * painted brittleness map decides which part stays whole.
 *
 * After Imagire, Johan & Nishita
 * (../shared/papers/edem-fracture-brittleness-map-imagire-johan-nishita.txt):
 * the extended DEM (appendix A). Equal spheres ("elements") are placed at
 * random inside the closed mesh and pushed apart until no two are closer
 * than 2r; pore springs join the elements along the edges of their 3D
 * Delaunay triangulation (delaunay.h) and break for good when their length,
 * bend or twist exceeds a threshold x the spring's strength p_i. The
 * strengths come from the hierarchical grouping of §3.2 with the hard level
 * of §4 (bond_levels.h, brittleness.h). Elements touch by a normal
 * spring-dashpot and a tangential dashpot (eqs 4-6, contact.h); projectiles
 * are single large elements (rigid bodies of the projectile's mesh);
 * obstacles and the ground are colliders (collider.h). Where springs break
 * with energy above a threshold, debris particles fly off with Rosin-Rammler
 * sizes (the paper's future work). Each element is drawn as its Voronoi cell
 * cut to the object (fragments.h).
 *
 * Outputs: stream "fragments" once at frame_start (the pieces' triangles
 * relative to their element's rest centre), per frame "elements" (position,
 * rotation w x y z, piece: the smallest element index joined to it by
 * unbroken springs, id), "debris" (position, velocity, radius, id) and
 * "rigid" (projectiles' origins) when there are projectiles.
 */
#ifndef TSUBU_FRACTURE_H
#define TSUBU_FRACTURE_H

#include <stddef.h>
#include <stdint.h>

#include "brittleness.h"
#include "frameloop.h"
#include "params.h"
#include "rigid_object.h"
#include "status.h"

typedef enum ts_fracture_role {
    TS_FRACTURE_BREAKABLE = 0,   /* the object that shatters (one) */
    TS_FRACTURE_PROJECTILE = 1,  /* a rigid body fired at it, or keyframed */
    TS_FRACTURE_OBSTACLE = 2     /* ground, walls: static or keyframed colliders */
} ts_fracture_role;

typedef struct ts_fracture_object {
    ts_fracture_role role;
    ts_object_input in;          /* mesh for all; motion for keyframed ones; density, velocities for projectiles */
    int launch_frame;            /* projectile: held still and apart until this frame */
    const float *corner_uv;      /* breakable: 6 per triangle, or NULL */
    const float *brittleness;    /* breakable: grey image (0 hard .. 1 brittle), or NULL for none */
    int map_width, map_height;
    int projection;              /* ts_map_projection */
} ts_fracture_object;

typedef struct ts_fracture_params {
    int element_count;           /* elements placed in the breakable */
    double element_radius;       /* r, m; 0: from the count and the volume */
    double density;              /* of the breakable, kg/m^3 */
    double contact_time, restitution, friction;  /* contact law (contact.h) */
    double bond_stiffness;       /* pore spring k_p / contact k */
    double strain_limit;         /* length change / rest length at which a p = 1 spring breaks */
    double bend_limit, twist_limit;  /* radians, for p = 1 */
    double p0, pH, n;            /* eq. 1 */
    double hard_threshold;       /* springs whose map value is below this form the hard level */
    double max_spring_length;    /* springs longer than this x the median Delaunay edge are dropped */
    double debris_energy;        /* J released per debris particle; 0: no debris */
    double debris_size;          /* Rosin-Rammler characteristic diameter, m */
    double debris_spread;        /* Rosin-Rammler exponent (larger: more uniform sizes) */
    long max_debris;
    int anchored;                /* elements touching an obstacle at the start are held fixed */
    double gravity[3];
    double steps_per_contact;
    int frame_start;
    double fps;
    uint64_t seed;
} ts_fracture_params;

/* The parameters' names, ranges and defaults (params.h). */
extern const ts_param_table ts_fracture_param_table;
ts_fracture_params ts_fracture_params_default(void);

typedef struct ts_fracture ts_fracture;

ts_status ts_fracture_create(ts_fracture **out, const ts_fracture_params *p, const ts_fracture_object *objects,
                             size_t object_count, ts_error *err);
ts_status ts_fracture_restore(ts_fracture *f, const ts_checkpoint *checkpoint, ts_error *err);
void ts_fracture_destroy(ts_fracture *f);

typedef struct ts_fracture_stats {
    size_t elements, springs, broken, pieces, largest_piece, debris;
    int levels;                  /* H + 1 */
    double element_radius, mass; /* kg, all elements */
    double max_speed;
    double seconds_placement, seconds_delaunay, seconds_levels, seconds_fragments;
    size_t fragment_triangles;
    long steps;
    long settle_steps;           /* relaxation steps under its own weight before the first frame */
    double settle_sag;           /* the largest distance an element moved then, metres */
} ts_fracture_stats;
void ts_fracture_get_stats(const ts_fracture *f, ts_fracture_stats *st);

extern const ts_solver_ops ts_fracture_ops;

#endif
