/* rigid.h - rigid bodies: mass properties of closed triangle meshes and
 * integration of position and orientation.
 *
 * A body's frame is the world frame at rest, moved to the centre of mass,
 * so the inertia tensor is the mesh's own about its centroid. The state is
 * position x, orientation q, linear momentum P and angular momentum L
 * (Baraff's formulation): without torque L is conserved exactly, and the
 * rotation is advanced by exact quaternion exponentials at a midpoint
 * angular velocity, so orientation neither drifts from unit length nor
 * gains energy the way the water paper's omega-integration (eqs 3.45-3.47) does.
 */
#ifndef TSUBU_RIGID_H
#define TSUBU_RIGID_H

#include <stddef.h>
#include <stdint.h>

#include "checkpoint.h"
#include "status.h"
#include "vecmath.h"

typedef struct ts_mass_properties {
    double volume;        /* m^3 */
    ts_vec3 centroid;     /* m */
    ts_mat3 inertia;      /* about the centroid, for density 1 (kg m^2 per kg/m^3) */
} ts_mass_properties;

/* Volume, centroid and inertia of the solid bounded by a closed, outward
 * oriented triangle mesh (divergence theorem, Eberly's polyhedral mass
 * properties). Fails with a message naming `what` if the volume is not
 * positive (an open, inverted or flat mesh). */
ts_status ts_mesh_mass_properties(const float *vertices, size_t vertex_count, const int32_t *triangles,
                                  size_t triangle_count, const char *what, ts_mass_properties *out,
                                  ts_error *err);

typedef struct ts_rigid_body {
    double mass, inv_mass;
    ts_mat3 inertia_body, inv_inertia_body;
    ts_vec3 x;      /* centre of mass, world */
    ts_quat q;      /* rotation from body to world */
    ts_vec3 P, L;   /* linear and angular momentum, world */
    ts_vec3 force, torque; /* accumulated for the current step */
    int kinematic;  /* 1: moved by animation, infinite mass */
} ts_rigid_body;

/* A dynamic body of uniform density filling the given mass properties. */
ts_status ts_rigid_init(ts_rigid_body *b, const ts_mass_properties *mp, double density, const char *what,
                        ts_error *err);

ts_vec3 ts_rigid_velocity(const ts_rigid_body *b);
ts_vec3 ts_rigid_angular_velocity(const ts_rigid_body *b);
ts_vec3 ts_rigid_point_velocity(const ts_rigid_body *b, ts_vec3 world_point);
void ts_rigid_set_velocity(ts_rigid_body *b, ts_vec3 v, ts_vec3 omega);
void ts_rigid_clear_forces(ts_rigid_body *b);
void ts_rigid_add_force_at(ts_rigid_body *b, ts_vec3 force, ts_vec3 world_point);
/* Advance by dt with the accumulated force and torque (symplectic Euler on
 * momenta, midpoint exponential map on orientation). */
void ts_rigid_integrate(ts_rigid_body *b, double dt);
/* World pose of an object's origin carried by the body: origin_offset is
 * the origin in the body frame, rotation0 the object's rotation at rest. */
void ts_rigid_origin_pose(const ts_rigid_body *b, ts_vec3 origin_offset, ts_quat rotation0, ts_vec3 *position,
                          ts_quat *rotation);

double ts_rigid_kinetic_energy(const ts_rigid_body *b);

/* Apply an impulse J (N s) at a world point: P += J, L += r x J. */
void ts_rigid_apply_impulse(ts_rigid_body *b, ts_vec3 J, ts_vec3 world_point);

/* Restitution and friction of rigid bodies against each other and against
 * walls (water's bodies, sand's objects). */
#define TS_BODY_RESTITUTION 0.1
#define TS_BODY_FRICTION 0.4

/* Resolve one contact of the body against something with infinite mass
 * (a wall moving at wall_velocity): push it out by `depth` along the unit
 * normal n, then cancel the approaching normal velocity at the point with
 * restitution e and limit the tangential impulse by Coulomb friction mu.
 * Used by every solver whose bodies touch colliders. */
void ts_rigid_resolve_contact(ts_rigid_body *b, ts_vec3 point, ts_vec3 n, double depth, ts_vec3 wall_velocity,
                              double e, double mu);

/* The same between two simulated bodies overlapping by `depth` at a world
 * point, n the unit normal from b toward a: the overlap is undone in shares
 * of their inverse masses, and one impulse, +J on a and -J on b at the
 * point, cancels the approach (restitution e) and limits the sliding
 * (Coulomb, mu), so momentum is conserved and a collision gains no energy.
 * (A body against a keyframed one is ts_rigid_resolve_contact with the
 * keyframed body's velocity at the point.) */
void ts_rigid_resolve_pair_contact(ts_rigid_body *a, ts_rigid_body *b, ts_vec3 point, ts_vec3 n, double depth,
                                   double e, double mu);

/* The bodies' state (x, q, P, L) as a checkpoint section, and back. The
 * bodies sit inside the solvers' object records: n records of `stride`
 * bytes, each with its body at `offset` (offsetof). Restoring refuses
 * another number of bodies. */
ts_status ts_rigid_save(ts_checkpoint *cp, const char *section, const void *records, size_t offset, size_t stride,
                        size_t n, ts_error *err);
ts_status ts_rigid_restore(const ts_checkpoint *cp, const char *section, void *records, size_t offset,
                           size_t stride, size_t n, ts_error *err);

#endif
