/* object_contacts.h - a solver's rigid objects against each other.
 *
 * Each object's rest mesh is kept twice in its body frame (about the centre
 * of mass at rest): as a signed distance, negative inside (the shared
 * collider), and as points on its surface - its corners and a lattice over
 * each face, edges included, no farther apart than a spacing, so a corner,
 * an edge or a face pressed into another object is found. Two objects whose
 * bounding spheres meet are tested both ways (each one's points in the
 * other's distance); the deepest point found is pushed out and its approach
 * cancelled by one impulse on both (ts_rigid_resolve_pair_contact; a
 * keyframed object is a wall moving with its animation). A few passes over
 * the pairs in a fixed order let stacked objects settle, and the result
 * depends on nothing but the objects' order.
 *
 * Used for ts_rigid_object: sand's objects, and fracture's projectiles
 * among themselves. The water's bodies, sampled by particles, find their
 * pairs from those particles and resolve them by the same impulse.
 */
#ifndef TSUBU_OBJECT_CONTACTS_H
#define TSUBU_OBJECT_CONTACTS_H

#include <stddef.h>
#include <stdint.h>

#include "collider.h"
#include "rigid_object.h"
#include "status.h"

typedef struct ts_object_shape {
    ts_collider distance;    /* the rest mesh, body frame */
    float *points;           /* on its surface, body frame, xyz */
    size_t point_count;
    double reach;            /* the farthest point from the centre of mass */
} ts_object_shape;

typedef struct ts_object_contacts {
    size_t n;
    ts_rigid_object **objects;   /* the solver's, in its order */
    ts_object_shape *shapes;
    uint8_t *left_out;           /* 1: not met now (fracture's projectile before its launch frame) */
    size_t found;                /* contacts resolved so far (a pass that adds none is the last) */
} ts_object_contacts;

/* Add an object with the mesh it was made from (world space at frame_start), points and distance at
 * `spacing` (finer for an object thinner than 8 spacings, coarser for one longer than 128). The object must
 * stay where it is while the set lives. */
ts_status ts_object_contacts_add(ts_object_contacts *c, ts_rigid_object *object, const ts_object_input *in,
                                 double spacing, ts_error *err);
void ts_object_contacts_free(ts_object_contacts *c);

/* Leave object k (in the order added) out of the contacts, or take it back. */
void ts_object_contacts_leave_out(ts_object_contacts *c, size_t k, int out);

/* Resolve the contacts among the objects at their poses now, s of the way
 * through a frame of frame_dt seconds (for keyframed objects' velocities). */
void ts_object_contacts_resolve(ts_object_contacts *c, double frame_dt, double s);

#endif
