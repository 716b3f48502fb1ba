/* vecmath.c - 3x3 matrices, quaternions, SVD and polar decomposition. */
#include "vecmath.h"

#include <float.h>

#include "wide.h"

ts_mat3 ts_m3_identity(void)
{
    ts_mat3 r = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    return r;
}

int ts_m3_inverse(ts_mat3 a, ts_mat3 *out)
{
    double det = ts_m3_det(a);
    if (det == 0.0 || !isfinite(det))
        return 0;
    double inv = 1.0 / det;
    ts_mat3 r;
    r.m[0][0] = (a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1]) * inv;
    r.m[0][1] = (a.m[0][2] * a.m[2][1] - a.m[0][1] * a.m[2][2]) * inv;
    r.m[0][2] = (a.m[0][1] * a.m[1][2] - a.m[0][2] * a.m[1][1]) * inv;
    r.m[1][0] = (a.m[1][2] * a.m[2][0] - a.m[1][0] * a.m[2][2]) * inv;
    r.m[1][1] = (a.m[0][0] * a.m[2][2] - a.m[0][2] * a.m[2][0]) * inv;
    r.m[1][2] = (a.m[0][2] * a.m[1][0] - a.m[0][0] * a.m[1][2]) * inv;
    r.m[2][0] = (a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0]) * inv;
    r.m[2][1] = (a.m[0][1] * a.m[2][0] - a.m[0][0] * a.m[2][1]) * inv;
    r.m[2][2] = (a.m[0][0] * a.m[1][1] - a.m[0][1] * a.m[1][0]) * inv;
    *out = r;
    return 1;
}

/* ---- quaternions (w + xi + yj + zk, unit for rotations) ---- */

ts_quat ts_quat_identity(void)
{
    ts_quat q = {1, 0, 0, 0};
    return q;
}

ts_quat ts_quat_mul(ts_quat a, ts_quat b)
{
    ts_quat r = {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                 a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                 a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                 a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
    return r;
}

ts_quat ts_quat_normalize(ts_quat q)
{
    double n = sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
    if (n == 0.0)
        return ts_quat_identity();
    ts_quat r = {q.w / n, q.x / n, q.y / n, q.z / n};
    return r;
}

ts_quat ts_quat_conjugate(ts_quat q)
{
    ts_quat r = {q.w, -q.x, -q.y, -q.z};
    return r;
}

ts_quat ts_quat_from_rotation_vector(ts_vec3 w_dt)
{
    double angle = ts_v3_length(w_dt);
    if (angle < 1e-12) { /* second-order Taylor keeps unit length to rounding */
        ts_quat q = {1.0 - angle * angle / 8.0, 0.5 * w_dt.x, 0.5 * w_dt.y, 0.5 * w_dt.z};
        return ts_quat_normalize(q);
    }
    double s = sin(0.5 * angle) / angle;
    ts_quat q = {cos(0.5 * angle), w_dt.x * s, w_dt.y * s, w_dt.z * s};
    return q;
}

ts_mat3 ts_quat_to_mat3(ts_quat q)
{
    double w = q.w, x = q.x, y = q.y, z = q.z;
    ts_mat3 r = {{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                  {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                  {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
    return r;
}

ts_quat ts_quat_from_mat3(ts_mat3 r)
{
    /* Shepperd's method: pick the largest of w,x,y,z to divide by. */
    double tr = r.m[0][0] + r.m[1][1] + r.m[2][2];
    ts_quat q;
    if (tr > r.m[0][0] && tr > r.m[1][1] && tr > r.m[2][2]) {
        double s = 2.0 * sqrt(1.0 + tr);
        q.w = 0.25 * s;
        q.x = (r.m[2][1] - r.m[1][2]) / s;
        q.y = (r.m[0][2] - r.m[2][0]) / s;
        q.z = (r.m[1][0] - r.m[0][1]) / s;
    } else if (r.m[0][0] > r.m[1][1] && r.m[0][0] > r.m[2][2]) {
        double s = 2.0 * sqrt(fmax(1e-300, 1.0 + r.m[0][0] - r.m[1][1] - r.m[2][2]));
        q.w = (r.m[2][1] - r.m[1][2]) / s;
        q.x = 0.25 * s;
        q.y = (r.m[0][1] + r.m[1][0]) / s;
        q.z = (r.m[0][2] + r.m[2][0]) / s;
    } else if (r.m[1][1] > r.m[2][2]) {
        double s = 2.0 * sqrt(fmax(1e-300, 1.0 + r.m[1][1] - r.m[0][0] - r.m[2][2]));
        q.w = (r.m[0][2] - r.m[2][0]) / s;
        q.x = (r.m[0][1] + r.m[1][0]) / s;
        q.y = 0.25 * s;
        q.z = (r.m[1][2] + r.m[2][1]) / s;
    } else {
        double s = 2.0 * sqrt(fmax(1e-300, 1.0 + r.m[2][2] - r.m[0][0] - r.m[1][1]));
        q.w = (r.m[1][0] - r.m[0][1]) / s;
        q.x = (r.m[0][2] + r.m[2][0]) / s;
        q.y = (r.m[1][2] + r.m[2][1]) / s;
        q.z = 0.25 * s;
    }
    return ts_quat_normalize(q);
}

ts_vec3 ts_quat_rotate(ts_quat q, ts_vec3 v)
{
    return ts_m3_mul_v3(ts_quat_to_mat3(q), v);
}

ts_quat ts_quat_slerp(ts_quat a, ts_quat b, double t)
{
    double d = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z;
    if (d < 0) { /* take the short way round */
        b.w = -b.w; b.x = -b.x; b.y = -b.y; b.z = -b.z;
        d = -d;
    }
    double wa, wb;
    if (d > 0.9995) { /* nearly parallel: linear blend is exact enough */
        wa = 1.0 - t;
        wb = t;
    } else {
        double theta = acos(d), s = sin(theta);
        wa = sin((1.0 - t) * theta) / s;
        wb = sin(t * theta) / s;
    }
    ts_quat r = {wa * a.w + wb * b.w, wa * a.x + wb * b.x, wa * a.y + wb * b.y, wa * a.z + wb * b.z};
    return ts_quat_normalize(r);
}

/* ---- symmetric eigen-decomposition (cyclic Jacobi) ---- */

void ts_sym_eigen3(ts_mat3 a, ts_mat3 *q_out, double lambda[3])
{
    ts_mat3 q = ts_m3_identity();
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = a.m[0][1] * a.m[0][1] + a.m[0][2] * a.m[0][2] + a.m[1][2] * a.m[1][2];
        double diag = a.m[0][0] * a.m[0][0] + a.m[1][1] * a.m[1][1] + a.m[2][2] * a.m[2][2];
        if (off <= DBL_EPSILON * DBL_EPSILON * diag || off == 0.0)
            break;
        for (int p = 0; p < 2; p++) {
            for (int r = p + 1; r < 3; r++) {
                if (a.m[p][r] == 0.0)
                    continue;
                double theta = (a.m[r][r] - a.m[p][p]) / (2.0 * a.m[p][r]);
                double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                /* a <- J^T a J, q <- q J with J the rotation in plane (p, r) */
                for (int k = 0; k < 3; k++) {
                    double akp = a.m[k][p], akr = a.m[k][r];
                    a.m[k][p] = c * akp - s * akr;
                    a.m[k][r] = s * akp + c * akr;
                }
                for (int k = 0; k < 3; k++) {
                    double apk = a.m[p][k], ark = a.m[r][k];
                    a.m[p][k] = c * apk - s * ark;
                    a.m[r][k] = s * apk + c * ark;
                }
                for (int k = 0; k < 3; k++) {
                    double qkp = q.m[k][p], qkr = q.m[k][r];
                    q.m[k][p] = c * qkp - s * qkr;
                    q.m[k][r] = s * qkp + c * qkr;
                }
            }
        }
    }
    lambda[0] = a.m[0][0];
    lambda[1] = a.m[1][1];
    lambda[2] = a.m[2][2];
    *q_out = q;
}

/* A unit vector orthogonal to the unit vector a. */
static ts_vec3 any_orthogonal(ts_vec3 a)
{
    ts_vec3 axis = fabs(a.x) < 0.57 ? ts_v3(1, 0, 0) : (fabs(a.y) < 0.57 ? ts_v3(0, 1, 0) : ts_v3(0, 0, 1));
    ts_vec3 c = ts_v3_cross(a, axis);
    return ts_v3_scale(c, 1.0 / ts_v3_length(c));
}

/* The direct form: the eigenvalues from the characteristic cubic (Smith 1961), then the eigenvector of
 * the one farthest from the other two - from the largest cross product of two rows of A - lambda I, whose
 * rank is 2 - and the other two by the exact rotation that diagonalises A in the plane across it, so that a
 * pair of equal or nearly equal eigenvalues (a flat neighbourhood) still gets orthonormal vectors. A few
 * hundred operations against Jacobi's sweeps; agrees with it to about 1e-7 of the spread (tests). */
void ts_sym_eigen3_direct(ts_mat3 a, ts_mat3 *q_out, double lambda[3])
{
    const double p1 = a.m[0][1] * a.m[0][1] + a.m[0][2] * a.m[0][2] + a.m[1][2] * a.m[1][2];
    const double mean = (a.m[0][0] + a.m[1][1] + a.m[2][2]) / 3.0;
    const double d0 = a.m[0][0] - mean, d1 = a.m[1][1] - mean, d2 = a.m[2][2] - mean;
    const double p = sqrt((d0 * d0 + d1 * d1 + d2 * d2 + 2.0 * p1) / 6.0);
    if (!(p > 1e-150 * (fabs(mean) + 1e-300))) { /* a multiple of I: any axes */
        *q_out = ts_m3_identity();
        lambda[0] = a.m[0][0], lambda[1] = a.m[1][1], lambda[2] = a.m[2][2];
        return;
    }
    ts_mat3 b = a;
    for (int i = 0; i < 3; i++)
        b.m[i][i] -= mean;
    const double r = fmax(-1.0, fmin(1.0, ts_m3_det(b) / (2.0 * p * p * p)));
    const double phi = acos(r) / 3.0;
    const double top = mean + 2.0 * p * cos(phi), bottom = mean + 2.0 * p * cos(phi + 2.0 * M_PI / 3.0);
    const double middle = 3.0 * mean - top - bottom;
    const double apart = top - middle >= middle - bottom ? top : bottom;
    /* the eigenvector of `apart`: across two rows of A - apart I */
    ts_vec3 row[3];
    for (int i = 0; i < 3; i++)
        row[i] = ts_v3(a.m[i][0] - (i == 0) * apart, a.m[i][1] - (i == 1) * apart, a.m[i][2] - (i == 2) * apart);
    ts_vec3 best = ts_v3_cross(row[0], row[1]);
    const ts_vec3 c02 = ts_v3_cross(row[0], row[2]), c12 = ts_v3_cross(row[1], row[2]);
    if (ts_v3_dot(c02, c02) > ts_v3_dot(best, best))
        best = c02;
    if (ts_v3_dot(c12, c12) > ts_v3_dot(best, best))
        best = c12;
    const ts_vec3 v = ts_v3_scale(best, 1.0 / ts_v3_length(best));
    /* the other two: a Jacobi rotation of A restricted to the plane across v */
    const ts_vec3 u = any_orthogonal(v), w = ts_v3_cross(v, u);
    const ts_vec3 au = ts_m3_mul_v3(a, u), aw = ts_m3_mul_v3(a, w);
    const double muu = ts_v3_dot(u, au), mww = ts_v3_dot(w, aw), muw = ts_v3_dot(u, aw);
    /* the Jacobi rotation that zeroes muw, by its tangent (t = tan theta, |theta| <= pi / 4): no trigonometry */
    double c = 1.0, s = 0.0;
    if (muw != 0.0) {
        const double zeta = (muu - mww) / (2.0 * muw);   /* cot 2 theta */
        const double t = (zeta >= 0.0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
        c = 1.0 / sqrt(1.0 + t * t), s = t * c;
    }
    const ts_vec3 e1 = ts_v3_add(ts_v3_scale(u, c), ts_v3_scale(w, s));
    const ts_vec3 e2 = ts_v3_sub(ts_v3_scale(w, c), ts_v3_scale(u, s));
    const ts_vec3 col[3] = {v, e1, e2};
    for (int j = 0; j < 3; j++) {
        q_out->m[0][j] = col[j].x, q_out->m[1][j] = col[j].y, q_out->m[2][j] = col[j].z;
        lambda[j] = ts_v3_dot(col[j], ts_m3_mul_v3(a, col[j])); /* Rayleigh quotients */
    }
}

/* ---- SVD by one-sided Jacobi (Hestenes) ---- */

static void swap_columns(ts_mat3 *a, int i, int j)
{
    for (int k = 0; k < 3; k++) {
        double t = a->m[k][i];
        a->m[k][i] = a->m[k][j];
        a->m[k][j] = t;
    }
}

/* One-sided Jacobi from V = v0 (a rotation): W = A V's columns are rotated until mutually orthogonal. The
 * sweeps converge quadratically, so once a sweep's largest cosine between two columns was below
 * SVD_LAST_SWEEP, what it left is below rounding: the sweep that would only confirm it is skipped (one sweep
 * of every call; from the elastoplastic solver's guesses about half the calls then take one sweep, the rest
 * three). */
#define SVD_LAST_SWEEP 1e-9

/* The sweeps on w = A V (v updated alongside). */
static void svd3_sweeps(ts_mat3 *w_io, ts_mat3 *v_io)
{
    ts_mat3 w = *w_io, v = *v_io;
    for (int sweep = 0; sweep < 60; sweep++) {
        int far = 0; /* a rotation above SVD_LAST_SWEEP in this sweep */
        for (int p = 0; p < 2; p++) {
            for (int r = p + 1; r < 3; r++) {
                double alpha = 0, beta = 0, gamma = 0;
                for (int k = 0; k < 3; k++) {
                    alpha += w.m[k][p] * w.m[k][p];
                    beta += w.m[k][r] * w.m[k][r];
                    gamma += w.m[k][p] * w.m[k][r];
                }
                const double scale = sqrt(alpha * beta);
                if (gamma == 0.0 || fabs(gamma) <= DBL_EPSILON * scale)
                    continue;
                far |= fabs(gamma) > SVD_LAST_SWEEP * scale;
                double zeta = (beta - alpha) / (2.0 * gamma);
                double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
                double c = 1.0 / sqrt(1.0 + t * t), s = c * t;
                for (int k = 0; k < 3; k++) {
                    double wp = w.m[k][p], wr = w.m[k][r];
                    w.m[k][p] = c * wp - s * wr;
                    w.m[k][r] = s * wp + c * wr;
                    double vp = v.m[k][p], vr = v.m[k][r];
                    v.m[k][p] = c * vp - s * vr;
                    v.m[k][r] = s * vp + c * vr;
                }
            }
        }
        if (!far)
            break;
    }
    *w_io = w, *v_io = v;
}

/* U, sigma and V from the swept w = A V. */
static void svd3_finish(ts_mat3 w, ts_mat3 v, ts_mat3 *u_out, double sigma[3], ts_mat3 *v_out)
{
    /* sort columns by decreasing norm; each swap flips det(V), fixed below */
    double norm[3];
    for (int j = 0; j < 3; j++)
        norm[j] = ts_v3_length(ts_m3_column(w, j));
    for (int i = 0; i < 2; i++) {
        int best = i;
        for (int j = i + 1; j < 3; j++)
            if (norm[j] > norm[best])
                best = j;
        if (best != i) {
            double t = norm[i]; norm[i] = norm[best]; norm[best] = t;
            swap_columns(&w, i, best);
            swap_columns(&v, i, best);
        }
    }
    if (ts_m3_det(v) < 0) { /* keep V a rotation: flip its last column (and W's) */
        for (int k = 0; k < 3; k++) {
            v.m[k][2] = -v.m[k][2];
            w.m[k][2] = -w.m[k][2];
        }
    }
    /* U's columns are W's normalised; complete the basis where sigma vanishes */
    double tiny = (norm[0] > 0 ? norm[0] : 1.0) * 1e-14;
    ts_vec3 u0 = norm[0] > tiny ? ts_v3_scale(ts_m3_column(w, 0), 1.0 / norm[0]) : ts_v3(1, 0, 0);
    ts_vec3 u1;
    if (norm[1] > tiny) {
        u1 = ts_v3_scale(ts_m3_column(w, 1), 1.0 / norm[1]);
        u1 = ts_v3_sub(u1, ts_v3_scale(u0, ts_v3_dot(u0, u1))); /* re-orthogonalise */
        u1 = ts_v3_scale(u1, 1.0 / ts_v3_length(u1));
    } else {
        u1 = any_orthogonal(u0);
    }
    ts_vec3 u2 = ts_v3_cross(u0, u1); /* det(U) = +1 by construction */
    sigma[0] = norm[0];
    sigma[1] = norm[1];
    sigma[2] = ts_v3_dot(u2, ts_m3_column(w, 2)); /* negative iff det(A) < 0 */
    *u_out = ts_m3_from_columns(u0, u1, u2);
    *v_out = v;
}

static void svd3_from(ts_mat3 a, ts_mat3 v0, ts_mat3 *u_out, double sigma[3], ts_mat3 *v_out)
{
    ts_mat3 w = ts_m3_mul(a, v0), v = v0;
    svd3_sweeps(&w, &v);
    svd3_finish(w, v, u_out, sigma, v_out);
}

void ts_svd3(ts_mat3 a, ts_mat3 *u, double sigma[3], ts_mat3 *v) { svd3_from(a, ts_m3_identity(), u, sigma, v); }

/* The guess made an exact rotation (Gram-Schmidt), so rounding cannot build up over a bake's steps; the
 * identity when it is no use. */
static ts_mat3 rotation_near(ts_mat3 v_near)
{
    ts_vec3 c0 = ts_m3_column(v_near, 0), c1 = ts_m3_column(v_near, 1);
    double l0 = ts_v3_length(c0);
    c0 = ts_v3_scale(c0, 1.0 / l0);
    c1 = ts_v3_sub(c1, ts_v3_scale(c0, ts_v3_dot(c0, c1)));
    double l1 = ts_v3_length(c1);
    c1 = ts_v3_scale(c1, 1.0 / l1);
    if (!(l0 > 1e-3 && l1 > 1e-3 && isfinite(c0.x + c0.y + c0.z + c1.x + c1.y + c1.z)))
        return ts_m3_identity(); /* no usable guess: as ts_svd3 */
    return ts_m3_from_columns(c0, c1, ts_v3_cross(c0, c1));
}

void ts_svd3_near(ts_mat3 a, ts_mat3 v_near, ts_mat3 *u, double sigma[3], ts_mat3 *v)
{
    svd3_from(a, rotation_near(v_near), u, sigma, v);
}

/* Four matrices' sweeps at once, each lane doing exactly what svd3_sweeps does (a lane whose sweep is done, or
 * whose rotation svd3_sweeps would skip, keeps its columns): the same bits, without the sweeps' dependent square
 * roots and divisions one matrix at a time, nor their branches. */
TS_WIDE_CLONES static void svd3_sweeps4(ts_mat3 w_io[4], ts_mat3 v_io[4], size_t lanes)
{
    ts_d4 w[3][3], v[3][3];
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3; j++) {
            w[k][j] = (ts_d4){w_io[0].m[k][j], w_io[1].m[k][j], w_io[2].m[k][j], w_io[3].m[k][j]};
            v[k][j] = (ts_d4){v_io[0].m[k][j], v_io[1].m[k][j], v_io[2].m[k][j], v_io[3].m[k][j]};
        }
    ts_l4 active = {lanes > 0 ? -1 : 0, lanes > 1 ? -1 : 0, lanes > 2 ? -1 : 0, lanes > 3 ? -1 : 0};
    const ts_d4 zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
    for (int sweep = 0; sweep < 60 && (active[0] | active[1] | active[2] | active[3]); sweep++) {
        ts_l4 far = {0, 0, 0, 0};
        for (int p = 0; p < 2; p++) {
            for (int r = p + 1; r < 3; r++) {
                ts_d4 alpha = zero, beta = zero, gamma = zero;
                for (int k = 0; k < 3; k++) {
                    alpha += w[k][p] * w[k][p];
                    beta += w[k][r] * w[k][r];
                    gamma += w[k][p] * w[k][r];
                }
                const ts_d4 product = alpha * beta, scale = ts_d4_sqrt(&product), size = TS_D4_ABS(gamma);
                const ts_l4 turn = active & (gamma != zero) & (size > DBL_EPSILON * scale);
                far |= turn & (size > SVD_LAST_SWEEP * scale);
                const ts_d4 zeta = (beta - alpha) / (2.0 * gamma);
                const ts_d4 square = one + zeta * zeta, root = ts_d4_sqrt(&square);
                const ts_d4 t = TS_D4_SELECT(zeta >= zero, one, -one) / (TS_D4_ABS(zeta) + root);
                const ts_d4 tt = one + t * t, c = one / ts_d4_sqrt(&tt), s = c * t;
                for (int k = 0; k < 3; k++) {
                    const ts_d4 wp = w[k][p], wr = w[k][r], vp = v[k][p], vr = v[k][r];
                    w[k][p] = TS_D4_SELECT(turn, c * wp - s * wr, wp);
                    w[k][r] = TS_D4_SELECT(turn, s * wp + c * wr, wr);
                    v[k][p] = TS_D4_SELECT(turn, c * vp - s * vr, vp);
                    v[k][r] = TS_D4_SELECT(turn, s * vp + c * vr, vr);
                }
            }
        }
        active &= far;
    }
    for (size_t l = 0; l < lanes; l++)
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < 3; j++)
                w_io[l].m[k][j] = w[k][j][l], v_io[l].m[k][j] = v[k][j][l];
}

void ts_svd3_near4(const ts_mat3 a[4], const ts_mat3 v_near[4], size_t lanes, ts_mat3 u[4], double sigma[4][3],
                   ts_mat3 v[4])
{
    ts_mat3 w[4] = {{{{0}}}}, v0[4] = {{{{0}}}};
    for (size_t l = 0; l < lanes; l++)
        v0[l] = rotation_near(v_near[l]), w[l] = ts_m3_mul(a[l], v0[l]);
    svd3_sweeps4(w, v0, lanes);
    for (size_t l = 0; l < lanes; l++)
        svd3_finish(w[l], v0[l], &u[l], sigma[l], &v[l]);
}

void ts_polar3(ts_mat3 a, ts_mat3 *r, ts_mat3 *s)
{
    ts_mat3 u, v;
    double sigma[3];
    ts_svd3(a, &u, sigma, &v);
    *r = ts_m3_mul(u, ts_m3_transpose(v));
    ts_mat3 vs = v;
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3; j++)
            vs.m[k][j] *= sigma[j];
    *s = ts_m3_mul(vs, ts_m3_transpose(v)); /* S = V diag(sigma) V^T */
}
