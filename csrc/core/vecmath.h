/* vecmath.h - small 3D linear algebra in double precision: vectors, 3x3
 * matrices, quaternions, a robust 3x3 SVD and the polar decomposition.
 *
 * Particle state is stored as float arrays (structure of arrays); this file
 * is for the per-body and per-particle algebra where precision matters
 * (rigid bodies, deformation gradients, inertia tensors).
 */
#ifndef TSUBU_VECMATH_H
#define TSUBU_VECMATH_H

#include <math.h>
#include <stddef.h>

typedef struct ts_vec3 { double x, y, z; } ts_vec3;
typedef struct ts_mat3 { double m[3][3]; } ts_mat3; /* m[row][col] */
typedef struct ts_quat { double w, x, y, z; } ts_quat;

static inline ts_vec3 ts_v3(double x, double y, double z) { ts_vec3 v = {x, y, z}; return v; }
static inline ts_vec3 ts_v3_add(ts_vec3 a, ts_vec3 b) { return ts_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline ts_vec3 ts_v3_sub(ts_vec3 a, ts_vec3 b) { return ts_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline ts_vec3 ts_v3_scale(ts_vec3 a, double s) { return ts_v3(a.x * s, a.y * s, a.z * s); }
static inline double ts_v3_dot(ts_vec3 a, ts_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline double ts_v3_length(ts_vec3 a) { return sqrt(ts_v3_dot(a, a)); }
static inline ts_vec3 ts_v3_cross(ts_vec3 a, ts_vec3 b)
{
    return ts_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

ts_mat3 ts_m3_identity(void);
static inline ts_mat3 ts_m3_mul(ts_mat3 a, ts_mat3 b)
{
    ts_mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
    return r;
}
static inline ts_mat3 ts_m3_transpose(ts_mat3 a)
{
    ts_mat3 r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            r.m[i][j] = a.m[j][i];
    return r;
}
static inline ts_vec3 ts_m3_mul_v3(ts_mat3 a, ts_vec3 v)
{
    return ts_v3(a.m[0][0] * v.x + a.m[0][1] * v.y + a.m[0][2] * v.z,
                 a.m[1][0] * v.x + a.m[1][1] * v.y + a.m[1][2] * v.z,
                 a.m[2][0] * v.x + a.m[2][1] * v.y + a.m[2][2] * v.z);
}
static inline double ts_m3_det(ts_mat3 a)
{
    return a.m[0][0] * (a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1]) -
           a.m[0][1] * (a.m[1][0] * a.m[2][2] - a.m[1][2] * a.m[2][0]) +
           a.m[0][2] * (a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0]);
}
/* Inverse of a; returns 0 (and leaves *out untouched) if a is singular. */
int ts_m3_inverse(ts_mat3 a, ts_mat3 *out);
static inline ts_mat3 ts_m3_from_columns(ts_vec3 c0, ts_vec3 c1, ts_vec3 c2)
{
    ts_mat3 r = {{{c0.x, c1.x, c2.x}, {c0.y, c1.y, c2.y}, {c0.z, c1.z, c2.z}}};
    return r;
}
static inline ts_vec3 ts_m3_column(ts_mat3 a, int j)
{
    return ts_v3(a.m[0][j], a.m[1][j], a.m[2][j]);
}

ts_quat ts_quat_identity(void);
ts_quat ts_quat_mul(ts_quat a, ts_quat b);
ts_quat ts_quat_normalize(ts_quat q);
ts_quat ts_quat_conjugate(ts_quat q);
/* Rotation by angle |w|*dt about w/|w|, built exactly (no small-angle drift). */
ts_quat ts_quat_from_rotation_vector(ts_vec3 w_dt);
ts_mat3 ts_quat_to_mat3(ts_quat q);
ts_quat ts_quat_from_mat3(ts_mat3 r);
ts_vec3 ts_quat_rotate(ts_quat q, ts_vec3 v);
/* Shortest-arc spherical interpolation, t in [0,1]. */
ts_quat ts_quat_slerp(ts_quat a, ts_quat b, double t);

/* Singular value decomposition A = U diag(sigma) V^T with U and V proper
 * rotations (det = +1). sigma is sorted by decreasing magnitude; only
 * sigma[2] may be negative, which happens exactly when det(A) < 0 (a
 * reflection). This "rotation-variant" form is what elastoplastic solvers
 * need. One-sided Jacobi on A itself, so small singular values keep full
 * relative accuracy (no squaring of the condition number). */
void ts_svd3(ts_mat3 a, ts_mat3 *u, double sigma[3], ts_mat3 *v);
/* The same from a guess of V (a rotation near it, e.g. the last step's): the sweeps start from A V_near,
 * whose columns are then nearly orthogonal (measured on F_E-like matrices: 250-290 ns against 390-570 from
 * V = I). Any guess gives a valid SVD; a degenerate one falls back to ts_svd3. */
void ts_svd3_near(ts_mat3 a, ts_mat3 v_near, ts_mat3 *u, double sigma[3], ts_mat3 *v);
/* ts_svd3_near of `lanes` (1-4) matrices at once: the same bits as one at a time, faster. */
void ts_svd3_near4(const ts_mat3 a[4], const ts_mat3 v_near[4], size_t lanes, ts_mat3 u[4], double sigma[4][3],
                   ts_mat3 v[4]);

/* Polar decomposition A = R S with R a rotation (det = +1) and S symmetric.
 * S is positive semi-definite unless det(A) < 0. */
void ts_polar3(ts_mat3 a, ts_mat3 *r, ts_mat3 *s);

/* Symmetric eigen-decomposition A = Q diag(lambda) Q^T by cyclic Jacobi. */
void ts_sym_eigen3(ts_mat3 a, ts_mat3 *q, double lambda[3]);

/* The same in closed form (vecmath.c): faster, accurate to about 1e-7 of the eigenvalues' spread; the
 * anisotropic surface's neighbourhoods. */
void ts_sym_eigen3_direct(ts_mat3 a, ts_mat3 *q, double lambda[3]);

#endif
