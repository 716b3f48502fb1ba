/* rigid.c - mesh mass properties and rigid-body integration (see rigid.h). */
#include "rigid.h"

#include <math.h>
#include <stdlib.h>

/* Eberly, "Polyhedral Mass Properties (Revisited)", 2002: per-triangle
 * subexpressions of the integrals of 1, x, y, z, x^2, y^2, z^2, xy, yz, zx. */
static void subexpressions(double w0, double w1, double w2, double *f1, double *f2, double *f3,
                           double *g0, double *g1, double *g2)
{
    double temp0 = w0 + w1;
    double temp1 = w0 * w0;
    double temp2 = temp1 + w1 * temp0;
    *f1 = temp0 + w2;
    *f2 = temp2 + w2 * *f1;
    *f3 = w0 * temp1 + w1 * temp2 + w2 * *f2;
    *g0 = *f2 + w0 * (*f1 + w0);
    *g1 = *f2 + w1 * (*f1 + w1);
    *g2 = *f2 + w2 * (*f1 + w2);
}

ts_status ts_mesh_mass_properties(const float *v, size_t vertex_count, const int32_t *tri,
                                  size_t triangle_count, const char *what, ts_mass_properties *out,
                                  ts_error *err)
{
    double integral[10] = {0};
    for (size_t t = 0; t < triangle_count; t++) {
        int32_t i0 = tri[3 * t], i1 = tri[3 * t + 1], i2 = tri[3 * t + 2];
        if (i0 < 0 || i1 < 0 || i2 < 0 || (size_t)i0 >= vertex_count || (size_t)i1 >= vertex_count ||
            (size_t)i2 >= vertex_count)
            return ts_fail(err, TS_ERR_INVALID, "%s: triangle %zu refers to a vertex that does not exist", what, t);
        double x0 = v[3 * i0], y0 = v[3 * i0 + 1], z0 = v[3 * i0 + 2];
        double x1 = v[3 * i1], y1 = v[3 * i1 + 1], z1 = v[3 * i1 + 2];
        double x2 = v[3 * i2], y2 = v[3 * i2 + 1], z2 = v[3 * i2 + 2];
        double a1 = x1 - x0, b1 = y1 - y0, c1 = z1 - z0;
        double a2 = x2 - x0, b2 = y2 - y0, c2 = z2 - z0;
        double d0 = b1 * c2 - b2 * c1, d1 = a2 * c1 - a1 * c2, d2 = a1 * b2 - a2 * b1;
        double f1x, f2x, f3x, g0x, g1x, g2x, f1y, f2y, f3y, g0y, g1y, g2y, f1z, f2z, f3z, g0z, g1z, g2z;
        subexpressions(x0, x1, x2, &f1x, &f2x, &f3x, &g0x, &g1x, &g2x);
        subexpressions(y0, y1, y2, &f1y, &f2y, &f3y, &g0y, &g1y, &g2y);
        subexpressions(z0, z1, z2, &f1z, &f2z, &f3z, &g0z, &g1z, &g2z);
        integral[0] += d0 * f1x;
        integral[1] += d0 * f2x;
        integral[2] += d1 * f2y;
        integral[3] += d2 * f2z;
        integral[4] += d0 * f3x;
        integral[5] += d1 * f3y;
        integral[6] += d2 * f3z;
        integral[7] += d0 * (y0 * g0x + y1 * g1x + y2 * g2x);
        integral[8] += d1 * (z0 * g0y + z1 * g1y + z2 * g2y);
        integral[9] += d2 * (x0 * g0z + x1 * g1z + x2 * g2z);
    }
    static const double scale[10] = {1.0 / 6, 1.0 / 24, 1.0 / 24, 1.0 / 24, 1.0 / 60,
                                      1.0 / 60, 1.0 / 60, 1.0 / 120, 1.0 / 120, 1.0 / 120};
    for (int k = 0; k < 10; k++)
        integral[k] *= scale[k];
    double volume = integral[0];
    if (!(volume > 0.0) || !isfinite(volume))
        return ts_fail(err, TS_ERR_INVALID,
                       "%s: the mesh encloses no positive volume (%g m^3); it must be closed with normals "
                       "pointing outward (Recalculate Outside in Edit Mode)",
                       what, volume);
    ts_vec3 c = ts_v3(integral[1] / volume, integral[2] / volume, integral[3] / volume);
    ts_mat3 inertia;
    inertia.m[0][0] = integral[5] + integral[6] - volume * (c.y * c.y + c.z * c.z);
    inertia.m[1][1] = integral[4] + integral[6] - volume * (c.z * c.z + c.x * c.x);
    inertia.m[2][2] = integral[4] + integral[5] - volume * (c.x * c.x + c.y * c.y);
    inertia.m[0][1] = inertia.m[1][0] = -(integral[7] - volume * c.x * c.y);
    inertia.m[1][2] = inertia.m[2][1] = -(integral[8] - volume * c.y * c.z);
    inertia.m[0][2] = inertia.m[2][0] = -(integral[9] - volume * c.z * c.x);
    out->volume = volume;
    out->centroid = c;
    out->inertia = inertia;
    return TS_OK;
}

ts_status ts_rigid_init(ts_rigid_body *b, const ts_mass_properties *mp, double density, const char *what,
                        ts_error *err)
{
    if (!(density > 0.0) || !isfinite(density))
        return ts_fail(err, TS_ERR_INVALID, "%s: density must be a positive number of kg/m^3 (got %g)", what, density);
    b->mass = density * mp->volume;
    b->inv_mass = 1.0 / b->mass;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            b->inertia_body.m[i][j] = density * mp->inertia.m[i][j];
    if (!ts_m3_inverse(b->inertia_body, &b->inv_inertia_body))
        return ts_fail(err, TS_ERR_INVALID, "%s: the inertia tensor is singular (a flat or degenerate mesh)", what);
    b->x = mp->centroid;
    b->q = ts_quat_identity();
    b->P = b->L = b->force = b->torque = ts_v3(0, 0, 0);
    b->kinematic = 0;
    return TS_OK;
}

/* I^-1 in world coordinates: R I_body^-1 R^T */
static ts_mat3 world_inverse_inertia(const ts_rigid_body *b, ts_quat q)
{
    ts_mat3 r = ts_quat_to_mat3(q);
    return ts_m3_mul(ts_m3_mul(r, b->inv_inertia_body), ts_m3_transpose(r));
}

ts_vec3 ts_rigid_velocity(const ts_rigid_body *b)
{
    return ts_v3_scale(b->P, b->inv_mass);
}

ts_vec3 ts_rigid_angular_velocity(const ts_rigid_body *b)
{
    return ts_m3_mul_v3(world_inverse_inertia(b, b->q), b->L);
}

ts_vec3 ts_rigid_point_velocity(const ts_rigid_body *b, ts_vec3 p)
{
    return ts_v3_add(ts_rigid_velocity(b), ts_v3_cross(ts_rigid_angular_velocity(b), ts_v3_sub(p, b->x)));
}

void ts_rigid_set_velocity(ts_rigid_body *b, ts_vec3 v, ts_vec3 omega)
{
    ts_mat3 r = ts_quat_to_mat3(b->q);
    ts_mat3 inertia_world = ts_m3_mul(ts_m3_mul(r, b->inertia_body), ts_m3_transpose(r));
    b->P = ts_v3_scale(v, b->mass);
    b->L = ts_m3_mul_v3(inertia_world, omega);
}

void ts_rigid_clear_forces(ts_rigid_body *b)
{
    b->force = b->torque = ts_v3(0, 0, 0);
}

void ts_rigid_add_force_at(ts_rigid_body *b, ts_vec3 f, ts_vec3 p)
{
    b->force = ts_v3_add(b->force, f);
    b->torque = ts_v3_add(b->torque, ts_v3_cross(ts_v3_sub(p, b->x), f));
}

void ts_rigid_integrate(ts_rigid_body *b, double dt)
{
    if (b->kinematic)
        return;
    b->P = ts_v3_add(b->P, ts_v3_scale(b->force, dt));
    b->L = ts_v3_add(b->L, ts_v3_scale(b->torque, dt));
    b->x = ts_v3_add(b->x, ts_v3_scale(b->P, b->inv_mass * dt));
    /* midpoint rule on SO(3): omega evaluated at the half-step orientation */
    ts_vec3 omega0 = ts_m3_mul_v3(world_inverse_inertia(b, b->q), b->L);
    ts_quat q_half = ts_quat_mul(ts_quat_from_rotation_vector(ts_v3_scale(omega0, 0.5 * dt)), b->q);
    ts_vec3 omega_half = ts_m3_mul_v3(world_inverse_inertia(b, q_half), b->L);
    b->q = ts_quat_normalize(ts_quat_mul(ts_quat_from_rotation_vector(ts_v3_scale(omega_half, dt)), b->q));
}

double ts_rigid_kinetic_energy(const ts_rigid_body *b)
{
    ts_vec3 omega = ts_rigid_angular_velocity(b);
    return 0.5 * ts_v3_dot(b->P, b->P) * b->inv_mass + 0.5 * ts_v3_dot(omega, b->L);
}

void ts_rigid_apply_impulse(ts_rigid_body *b, ts_vec3 J, ts_vec3 p)
{
    if (b->kinematic)
        return;
    b->P = ts_v3_add(b->P, J);
    b->L = ts_v3_add(b->L, ts_v3_cross(ts_v3_sub(p, b->x), J));
}

/* Effective inverse mass of the body along direction d at offset r from its centre. */
static double inverse_mass_along(const ts_rigid_body *b, ts_vec3 r, ts_vec3 d)
{
    ts_vec3 rxd = ts_v3_cross(r, d);
    ts_vec3 w = ts_m3_mul_v3(world_inverse_inertia(b, b->q), rxd);
    return b->inv_mass + ts_v3_dot(ts_v3_cross(w, r), d);
}

/* The impulse at a contact point that cancels the approach v_rel . n < 0 of a against b (NULL: a wall of
 * infinite mass) with restitution e, its sliding part at most mu times its normal part: +J on a, -J on b. */
static void contact_impulse(ts_rigid_body *a, ts_rigid_body *b, ts_vec3 point, ts_vec3 n, ts_vec3 v_rel, double e,
                            double mu)
{
    double vn = ts_v3_dot(v_rel, n);
    if (vn >= 0.0)
        return;
    ts_vec3 ra = ts_v3_sub(point, a->x), rb = b ? ts_v3_sub(point, b->x) : ts_v3(0, 0, 0);
    double jn = -(1.0 + e) * vn / (inverse_mass_along(a, ra, n) + (b ? inverse_mass_along(b, rb, n) : 0.0));
    ts_vec3 J = ts_v3_scale(n, jn);
    ts_vec3 vt = ts_v3_sub(v_rel, ts_v3_scale(n, vn));
    double vt_len = ts_v3_length(vt);
    if (vt_len > 1e-12 && mu > 0.0) {
        ts_vec3 t = ts_v3_scale(vt, 1.0 / vt_len);
        double jt = vt_len / (inverse_mass_along(a, ra, t) + (b ? inverse_mass_along(b, rb, t) : 0.0));
        if (jt > mu * jn)
            jt = mu * jn; /* Coulomb: |J_t| <= mu J_n */
        J = ts_v3_sub(J, ts_v3_scale(t, jt));
    }
    ts_rigid_apply_impulse(a, J, point);
    if (b)
        ts_rigid_apply_impulse(b, ts_v3_scale(J, -1.0), point);
}

void ts_rigid_resolve_contact(ts_rigid_body *b, ts_vec3 point, ts_vec3 n, double depth, ts_vec3 wall_velocity,
                              double e, double mu)
{
    if (b->kinematic)
        return;
    if (depth > 0.0) {
        b->x = ts_v3_add(b->x, ts_v3_scale(n, depth));
        point = ts_v3_add(point, ts_v3_scale(n, depth));
    }
    contact_impulse(b, NULL, point, n, ts_v3_sub(ts_rigid_point_velocity(b, point), wall_velocity), e, mu);
}

void ts_rigid_resolve_pair_contact(ts_rigid_body *a, ts_rigid_body *b, ts_vec3 point, ts_vec3 n, double depth,
                                   double e, double mu)
{
    double inv = a->inv_mass + b->inv_mass;
    if (a->kinematic || b->kinematic || !(inv > 0.0))
        return;
    if (depth > 0.0) {
        double share_a = a->inv_mass / inv; /* a's surface point and b's meet here once apart */
        a->x = ts_v3_add(a->x, ts_v3_scale(n, depth * share_a));
        b->x = ts_v3_sub(b->x, ts_v3_scale(n, depth * (1.0 - share_a)));
        point = ts_v3_add(point, ts_v3_scale(n, depth * share_a));
    }
    ts_vec3 v_rel = ts_v3_sub(ts_rigid_point_velocity(a, point), ts_rigid_point_velocity(b, point));
    contact_impulse(a, b, point, n, v_rel, e, mu);
}

void ts_rigid_origin_pose(const ts_rigid_body *b, ts_vec3 origin_offset, ts_quat rotation0, ts_vec3 *position,
                          ts_quat *rotation)
{
    *position = ts_v3_add(b->x, ts_quat_rotate(b->q, origin_offset));
    *rotation = ts_quat_normalize(ts_quat_mul(b->q, rotation0));
}

/* The columns of a bodies section, over n rows of 13 doubles (x3 q4 P3 L3). */
static void body_columns(ts_column c[4], double *rows, size_t n)
{
    c[0] = (ts_column){"x", TS_ATTR_F64, 3, rows};
    c[1] = (ts_column){"q", TS_ATTR_F64, 4, rows + 3 * n};
    c[2] = (ts_column){"P", TS_ATTR_F64, 3, rows + 7 * n};
    c[3] = (ts_column){"L", TS_ATTR_F64, 3, rows + 10 * n};
}

ts_status ts_rigid_save(ts_checkpoint *cp, const char *section, const void *records, size_t offset, size_t stride,
                        size_t n, ts_error *err)
{
    double *rows = ts_checkpoint_scratch(cp, 13 * n * sizeof *rows, err);
    if (!rows)
        return TS_ERR_NOMEM;
    ts_column c[4];
    body_columns(c, rows, n);
    double *x = c[0].data, *q = c[1].data, *P = c[2].data, *L = c[3].data;
    for (size_t k = 0; k < n; k++) {
        const ts_rigid_body *b = (const ts_rigid_body *)((const char *)records + k * stride + offset);
        x[3 * k] = b->x.x, x[3 * k + 1] = b->x.y, x[3 * k + 2] = b->x.z;
        q[4 * k] = b->q.w, q[4 * k + 1] = b->q.x, q[4 * k + 2] = b->q.y, q[4 * k + 3] = b->q.z;
        P[3 * k] = b->P.x, P[3 * k + 1] = b->P.y, P[3 * k + 2] = b->P.z;
        L[3 * k] = b->L.x, L[3 * k + 1] = b->L.y, L[3 * k + 2] = b->L.z;
    }
    return ts_checkpoint_put(cp, section, n, c, 4, err);
}

ts_status ts_rigid_restore(const ts_checkpoint *cp, const char *section, void *records, size_t offset,
                           size_t stride, size_t n, ts_error *err)
{
    double *rows = malloc((13 * n + 1) * sizeof *rows);
    if (!rows)
        return ts_fail(err, TS_ERR_NOMEM, "out of memory restoring '%s'", section);
    ts_column c[4];
    body_columns(c, rows, n);
    ts_status st = ts_checkpoint_get(cp, section, n, c, 4, err);
    const double *x = c[0].data, *q = c[1].data, *P = c[2].data, *L = c[3].data;
    for (size_t k = 0; st == TS_OK && k < n; k++) {
        ts_rigid_body *b = (ts_rigid_body *)((char *)records + k * stride + offset);
        b->x = ts_v3(x[3 * k], x[3 * k + 1], x[3 * k + 2]);
        b->q = (ts_quat){q[4 * k], q[4 * k + 1], q[4 * k + 2], q[4 * k + 3]};
        b->P = ts_v3(P[3 * k], P[3 * k + 1], P[3 * k + 2]);
        b->L = ts_v3(L[3 * k], L[3 * k + 1], L[3 * k + 2]);
    }
    free(rows);
    return st;
}
