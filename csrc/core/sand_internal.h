/* sand_internal.h - what the sand effect's stage files share: its state
 * and the functions one stage calls in another. Not part of the core's API.
 *
 *   sand.c           parameters, set-up, the step (the recipe), outputs, checkpoint
 *   sand_bed.c       the heights, their display rebuild, and the DEM region (§4.1-4.2)
 *   sand_contacts.c  DE contacts with DEs (as pairs), objects and the bed (§4.3),
 *                    integration, the contact grid; span contacts are hsmap.h's
 *   sand_airborne.c  airborne grains: spatter, landing and merging (§4.4)
 */
#ifndef TSUBU_SAND_INTERNAL_H
#define TSUBU_SAND_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "contact.h"
#include "grid.h"
#include "hsmap.h"
#include "object_contacts.h"
#include "particles.h"
#include "rigid_object.h"
#include "sand.h"
#include "skin_pairs.h"
#include "vecmath.h"

#define MAX_CONTACTS 16      /* DE-DE contact histories kept per DE (FCC has 12 touching neighbours) */
#define SOURCE_SLOTS 3       /* objects or the bed a DE touches at once, with history */
#define NO_SOURCE (-1)
#define GROW_RADIUS 2        /* columns added around a DE that pushes the region's edge */
#define FOOTPRINT_MARGIN 2   /* columns around an object's footprint when a region is placed */
#define HEAVY_WEIGHTS 10.0   /* an object pressing each DE under it with more DE weights than this is heavy */
#define CARRIED_SQUEEZE 0.25 /* automatic DEM depth: bottom contacts squeezed by at most this x radius */
#define PAIR_SKIN 0.5        /* DE pairs kept while no DE moved more than a quarter of this x r_max */
#define MAX_PAIR_BLOCKS 64   /* the pair pass's blocks, one per thread, at most */
#define SORT_EVERY_FRAMES 4  /* the DEs put in cell order at every 4th frame's first step (and the pairs found again) */
#define FLAG_AIRBORNE 1u
#define FLAG_SPLIT 2u       /* chosen to spatter in this step's scan */

typedef struct object {
    ts_rigid_object body;        /* simulated or keyframed */
    double *rest;                /* vertices, body frame (about the centre of mass at rest) */
    size_t vertex_count;
    int32_t *triangles;
    size_t triangle_count;
    double *world;               /* vertices now */
    double height;               /* vertical size at rest, m */
    double lowest;               /* lowest world z of its vertices now: no span reaches below */
    ts_transform mapped;         /* where the span map, world and lowest were last made, if `has_map` */
    int has_map;
    double areal_mass;           /* simulated: its mass over its mean horizontal section (volume / height), kg/m^2 */
    ts_hsmap map;
    ts_vec3 reaction_force, reaction_torque; /* from the DEs this step */
} object;

/* A DE's force and torque as the pair pass sums them. */
typedef struct element_force {
    ts_vec3 F, T;
} element_force;

/* What the pair pass reads of a DE, packed (the DEs are in the grid's cell
 * order, so partners lie near): a cache line and a half per partner instead
 * of a line from each of a dozen arrays. */
typedef struct element_state {
    double x, y, z, vx, vy, vz, wx, wy, wz, r, inv_m;
} element_state;

/* The DE-DE contacts as pairs, each computed once (LIGGGHTS' half neighbour
 * list): the candidates b < a within a contact distance plus a skin, kept
 * over many steps (skin_pairs.h), with each pair's history beside it. The
 * pass writes each touching pair's force and torque parts; each DE then
 * gathers its own, as `a` in ascending b and as `b` in ascending a (by_b),
 * so the sums do not depend on the threads or on when the list was found.
 * The histories are the slots' (`contacts`, which the checkpoint and the
 * renumbering of DEs carry): loaded when a list is found, put back before
 * the DEs are renumbered or saved (sand_pairs_to_slots). */
typedef struct element_pairs {
    ts_skin_pairs list;
    uint32_t *bstart, *owner, *at; /* by b: b's pairs at[bstart[b] .. bstart[b + 1]), their a in owner */
    uint32_t *b_order;           /* per candidate: where it is in that order */
    float *d_t, *m_r;            /* per candidate: a's side of the history (HISTORY floats: d_t, then the plastic
                                  * overlap of ts_hysteretic_overlap), zero while apart; m_r with rolling */
    uint8_t *touch;              /* per candidate: TOUCH while in contact */
    /* what b gets, in b's order (each DE reads its own run in sequence; the pass writes them scattered, which
     * costs less than scattered reads): force on a (3), u_n x F_t (3), rolling torque on a (3); TOUCH_* */
    double *out;
    uint8_t *touch_b;
    size_t cap, n_cap;
    int newer;                   /* the histories here are newer than the slots' */
} element_pairs;

#define TOUCH 1u                 /* the pair is in contact this step */
#define TOUCH_A_BELOW 2u         /* and a is under b (b rests on it) */

/* One DE's contact histories with other DEs and with sources (objects, the bed). */
typedef struct contacts {
    uint8_t *count;              /* DE-DE slots used */
    uint32_t *partner;           /* MAX_CONTACTS per DE: partner ids */
    float *d_t;                  /* MAX_CONTACTS x HISTORY per DE (float: half the bytes the force pass moves) */
    float *m_r;                  /* MAX_CONTACTS x 3 per DE: kept only with rolling friction (else NULL) */
    int16_t *source;             /* SOURCE_SLOTS per DE: object index, n_objects for the bed, NO_SOURCE */
    double *source_d_t;          /* SOURCE_SLOTS x HISTORY per DE (d_t, the plastic overlap) */
    double *source_m_r;          /* SOURCE_SLOTS x 3 per DE, as m_r */
} contacts;

/* What a contact remembers from step to step. */
typedef struct contact_history {
    ts_vec3 d_t;                 /* tangential displacement (eq. A-4) */
    ts_vec3 m_r;                 /* rolling torque (ts_rolling_torque) */
    double plastic;              /* plastic overlap (ts_hysteretic_overlap) */
} contact_history;

/* Numbers in a contact's history, DE-DE and DE-source alike: d_t (3; between DEs antisymmetric, b's side is its
 * negation), the plastic overlap (ts_hysteretic_overlap; the same on both sides). */
#define HISTORY 4

struct ts_sand {
    ts_sand_params p;
    ts_columns cols;
    double *bed;                 /* static heights; the floor under the region */
    uint8_t *region;             /* column is in the DEM region */
    int unsettled[4];            /* i0, j0, i1, j1: the columns the next avalanche pass looks at (none: i0 > i1) */
    double *display;             /* rebuilt heights (double), then float for output */
    float *display_f;
    double *column_scratch;
    size_t n_columns;

    /* DEs */
    ts_particles el;             /* el.n DEs; the arrays below are registered in it (register_elements) */
    double *x, *y, *z, *vx, *vy, *vz, *wx, *wy, *wz, *r, *vol, *m;
    double *fx, *fy, *fz, *tx, *ty, *tz;
    double *inv_m;               /* 1 / m, refreshed with the grid each step */
    uint32_t *id;
    uint8_t *flags;
    uint8_t *supported;          /* the last force pass found a DE under this one */
    contacts c;                  /* each DE's slots: its source histories (the force pass rebuilds them in place)
                                    and its DE histories while no pair list holds them (sand_pairs_to_slots) */
    double *reaction;            /* per DE and source: force xyz, point xyz (serial sum after the pass);
                                    simulated objects and the bed only */
    float *gx, *gy, *gz;         /* float positions for the grids */
    element_state *state;        /* packed for the pair pass, each step */
    element_force *acc;          /* the pair pass's sums: a DE's own pairs, then shares from its block */
    element_pairs pairs;
    uint8_t *keep;               /* still holds sand (the compaction after merges) */
    uint8_t *may_grow;           /* sand_grow_region's candidates */
    int sort_pending;            /* put the DEs in cell order at the next step (the first of a frame) */
    ts_grid grid;                /* cells of 2 r_max over the DEs as they were before this step's force pass */
    int grid_pending;            /* the grid is due but not built: only landing grains need it (sand_current_grid) */
    double r_max;                /* largest DE radius at the last grid build */
    /* the pair pass's blocks (sand_compute_forces): where they split the candidates, as shares of them, and how long
     * each took; only the speed depends on them, never the bits */
    double pair_split[MAX_PAIR_BLOCKS + 1], pair_seconds[MAX_PAIR_BLOCKS];
    size_t pair_blocks;

    object *objects;
    size_t n_objects;
    ts_object_contacts object_contacts; /* the objects against each other, when two can meet */

    double K0, C0;               /* k / m_eff and c / m_eff of the contact law */
    ts_contact_law law;
    double element_volume0;      /* volume of a lattice DE, for grain sizes */
    double depth;                /* DEM region depth, fixed at the first contact */
    double volume_lost, peak_airborne;
    uint32_t next_id;
    ts_step_context now;         /* where the frame loop is */
    long steps;
    size_t max_seen;
};

static inline double gravity_magnitude(const ts_sand *s)
{
    return ts_v3_length(ts_v3(s->p.gravity[0], s->p.gravity[1], s->p.gravity[2]));
}

/* How many DE weights a simulated object's weight adds to each DE of a layer under it (0 for a keyframed one): its
 * mass over its mean horizontal section (areal_mass) against a layer's, rho_b sqrt 2 r (a layer's height, and a DE's
 * share of its area). */
static inline double object_weights(const ts_sand *s, const object *ob)
{
    return ob->areal_mass / (s->p.bulk_density * M_SQRT2 * s->p.element_radius);
}

/* The automatic DEM depth an object asks for, before the contacts' cap (sand_bed.c, carried_depth): half its
 * height, and for a heavy one at least its footprint's width (its mean section's side). A footing's load spreads
 * into the ground to about its width (Boussinesq's stress bulb); a thinner layer hands the rest to its floor, which
 * then decides how far the object goes: a 10 cm cube of 6000 kg/m^3 on Dry Sand (2 cm cells) sank 25 mm through 5 cm
 * set down and 26 mm dropped at 2 m/s - the floor's depth, not its momentum (docs/sand.md, Bearing). */
static inline double object_dem_depth(const ts_sand *s, const object *ob)
{
    const double half = 0.5 * ob->height;
    if (object_weights(s, ob) <= HEAVY_WEIGHTS) /* keyframed objects weigh nothing here */
        return half;
    return fmax(half, sqrt(ob->body.rb.mass / ob->areal_mass));
}

static inline size_t column_of(const ts_sand *s, double x, double y, int *inside)
{
    int i, j;
    *inside = ts_columns_index(&s->cols, x, y, &i, &j);
    return (size_t)i + (size_t)s->cols.nx * (size_t)j;
}

/* sand.c */
ts_status sand_grow_elements(ts_sand *s, size_t need, ts_error *err);
size_t sand_add_element(ts_sand *s, ts_vec3 p, ts_vec3 v, double radius, double volume, uint8_t flags);
void sand_smooth_heights(double *h, double *flux_sum, const uint8_t *mask, int nx, int ny, int passes);

/* sand_bed.c */
/* the heights shown (s->display, display_f); leaves keep[i] = 1 for the DEs not part of the ground (airborne, or
 * resting on an object: the grains written; keep is free between steps) */
void sand_rebuild_display(ts_sand *s);
ts_status sand_place_under_objects(ts_sand *s, ts_error *err);
ts_status sand_grow_region(ts_sand *s, ts_error *err);
void sand_unsettle(ts_sand *s, int i0, int j0, int i1, int j1);
void sand_avalanche(ts_sand *s, double dt);

/* sand_contacts.c */
ts_status sand_find_pairs(ts_sand *s, ts_error *err);
void sand_pairs_to_slots(ts_sand *s);
void sand_pairs_release(ts_sand *s);
void sand_pairs_free(element_pairs *pp);
void sand_compute_forces(ts_sand *s, double dt);
void sand_integrate_elements(ts_sand *s, double dt);
void sand_integrate_objects(ts_sand *s, double dt);
void sand_objects_on_bed(ts_sand *s);
ts_status sand_update_span_maps(ts_sand *s, double at, ts_error *err);
ts_status sand_build_grid(ts_sand *s, ts_error *err);
void sand_prepare_elements(ts_sand *s);
ts_status sand_current_grid(ts_sand *s, ts_error *err);
ts_status sand_sort_into_cells(ts_sand *s, ts_error *err);

/* sand_airborne.c */
int sand_resting_on_object(const ts_sand *s, size_t i);
ts_status sand_detect_spatter(ts_sand *s, ts_error *err);
ts_status sand_land_and_remove(ts_sand *s, ts_error *err);

/* The plastic overlap's memory, in contact times (ts_hysteretic_overlap, sand_hysteresis_fade), chosen with the
 * unloading at 5 (docs/sand.md, Bearing). A 20 cm stone set on Dry Sand (2 cm cells) bobbed by +-8 mm and still rang by +-2 mm at 2 s without it; at 2 its first swing is 3 mm and it is still from
 * 0.4 s on (at 1: still from 0.7 s). Longer memories let heavy or deep loads near the edge of what the contacts bear
 * down (at 3 a 3000 kg/m^3 cube 0.75 cells deep instead of 0.4, at 6 Fine Dust under a cube through 15 cm 1.5 cells).
 * A head-on collision keeps 0.95 of its restitution (test_sand.c). Built up and released at the same rate: faster
 * build-up damps the first bounce more, but a bed under a steady load then creeps (docs/sand.md, Bearing). */
#define HYSTERESIS_MEMORY 2.0

/* ts_hysteretic_overlap's fade over a step of dt: the frame loop's substeps are at most, not exactly, the stable
 * t_c / steps_per_contact */
static inline double sand_hysteresis_fade(const ts_sand *s, double dt)
{
    return dt / (HYSTERESIS_MEMORY * s->law.contact_time);
}

#endif
