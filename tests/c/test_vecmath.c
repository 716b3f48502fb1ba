/* test_vecmath.c - SVD, polar decomposition and quaternions. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "core/vecmath.h"

static double max_abs_diff(ts_mat3 a, ts_mat3 b)
{
    double m = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            m = fmax(m, fabs(a.m[i][j] - b.m[i][j]));
    return m;
}

static double max_abs(ts_mat3 a)
{
    double m = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            m = fmax(m, fabs(a.m[i][j]));
    return m;
}

static int is_rotation(ts_mat3 r, double tol)
{
    ts_mat3 rtr = ts_m3_mul(ts_m3_transpose(r), r);
    return max_abs_diff(rtr, ts_m3_identity()) < tol && fabs(ts_m3_det(r) - 1.0) < tol;
}

static ts_mat3 random_rotation(ts_rng *rng)
{
    ts_quat q = {ts_rng_normal(rng), ts_rng_normal(rng), ts_rng_normal(rng), ts_rng_normal(rng)};
    return ts_quat_to_mat3(ts_quat_normalize(q));
}

static ts_mat3 compose(ts_mat3 u, const double s[3], ts_mat3 v)
{
    ts_mat3 us = u;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            us.m[i][j] *= s[j];
    return ts_m3_mul(us, ts_m3_transpose(v));
}

/* A = U S V^T with U, V rotations, |s| sorted, only s[2] negative iff det < 0. */
static void check_svd(ts_mat3 a, double rel_tol)
{
    ts_mat3 u, v;
    double s[3];
    ts_svd3(a, &u, s, &v);
    double scale = fmax(max_abs(a), 1e-300);
    CHECK(is_rotation(u, 1e-12));
    CHECK(is_rotation(v, 1e-12));
    CHECK(max_abs_diff(compose(u, s, v), a) <= rel_tol * scale);
    CHECK(s[0] >= s[1] && s[1] >= fabs(s[2]) - 1e-15 * scale);
    CHECK(s[0] >= 0 && s[1] >= 0);
    double det = ts_m3_det(a);
    if (fabs(det) > 1e-9 * scale * scale * scale)
        CHECK((s[2] < 0) == (det < 0));
}

static void test_svd_random(void)
{
    ts_rng rng;
    ts_rng_seed(&rng, 1, 1);
    for (int k = 0; k < 2000; k++) {
        ts_mat3 a;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                a.m[i][j] = ts_rng_normal(&rng);
        check_svd(a, 1e-13);
    }
}

static void test_svd_rotations_and_reflections(void)
{
    ts_rng rng;
    ts_rng_seed(&rng, 2, 1);
    for (int k = 0; k < 200; k++) {
        ts_mat3 r = random_rotation(&rng);
        ts_mat3 u, v;
        double s[3];
        ts_svd3(r, &u, s, &v);
        CHECK_NEAR(s[0], 1.0, 1e-12);
        CHECK_NEAR(s[1], 1.0, 1e-12);
        CHECK_NEAR(s[2], 1.0, 1e-12);
        check_svd(r, 1e-13);
        ts_mat3 refl = r; /* a reflection: flip one column */
        for (int i = 0; i < 3; i++)
            refl.m[i][1] = -refl.m[i][1];
        ts_svd3(refl, &u, s, &v);
        CHECK_NEAR(s[2], -1.0, 1e-12);
        check_svd(refl, 1e-13);
    }
}

static void test_svd_near_singular_and_degenerate(void)
{
    ts_rng rng;
    ts_rng_seed(&rng, 3, 1);
    const double tiny[] = {1e-3, 1e-8, 1e-12, 1e-15, 0.0};
    for (size_t t = 0; t < sizeof tiny / sizeof tiny[0]; t++) {
        for (int k = 0; k < 100; k++) {
            double s_true[3] = {2.0, 0.5, tiny[t]};
            ts_mat3 a = compose(random_rotation(&rng), s_true, random_rotation(&rng));
            ts_mat3 u, v;
            double s[3];
            ts_svd3(a, &u, s, &v);
            check_svd(a, 1e-13);
            CHECK_NEAR(s[0], 2.0, 1e-12);
            CHECK_NEAR(s[1], 0.5, 1e-12);
            CHECK_NEAR(fabs(s[2]), tiny[t], 1e-14);
        }
    }
    /* rank one, rank zero, and a matrix with two equal singular values */
    ts_mat3 rank1 = {{{1, 2, 3}, {2, 4, 6}, {-1, -2, -3}}};
    check_svd(rank1, 1e-13);
    ts_mat3 zero = {{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}};
    ts_mat3 u, v;
    double s[3];
    ts_svd3(zero, &u, s, &v);
    CHECK(s[0] == 0 && s[1] == 0 && s[2] == 0);
    CHECK(is_rotation(u, 1e-12) && is_rotation(v, 1e-12));
    ts_mat3 diag = {{{3, 0, 0}, {0, 3, 0}, {0, 0, -1e-20}}};
    check_svd(diag, 1e-13);
}

/* From a guess of V - the SVD of a nearby matrix, a far rotation, a guess not quite a rotation, a
 * degenerate one - the same singular values as from scratch, and a valid SVD. */
static void test_svd_near_a_guess(void)
{
    ts_rng rng;
    ts_rng_seed(&rng, 4, 1);
    for (int k = 0; k < 500; k++) {
        ts_mat3 a, nearby, u, v, u0, v0;
        double s[3], s0[3], sn[3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                a.m[i][j] = (i == j) + 0.3 * ts_rng_normal(&rng), nearby.m[i][j] = a.m[i][j] + 1e-3 * ts_rng_normal(&rng);
        ts_svd3(a, &u0, s0, &v0);
        ts_svd3(nearby, &u, sn, &v);
        ts_mat3 guesses[4] = {v, random_rotation(&rng), v, {{{0}}}};
        for (int i = 0; i < 3; i++)
            guesses[2].m[i][0] *= 1.001; /* not quite a rotation */
        for (int g = 0; g < 4; g++) {
            ts_svd3_near(a, guesses[g], &u, s, &v);
            CHECK(is_rotation(u, 1e-12) && is_rotation(v, 1e-12));
            CHECK(max_abs_diff(compose(u, s, v), a) <= 1e-13 * max_abs(a));
            for (int i = 0; i < 3; i++)
                CHECK_NEAR(s[i], s0[i], 1e-13 * s0[0]);
        }
    }
}

/* Four at a time, for 1 to 4 lanes: the same bits as one at a time, whatever the guesses (near, far, no
 * use at all) and matrices (near the identity, as F_E; with two singular values equal, which takes the most
 * sweeps; singular) sit in the other lanes. */
static void test_svd_four_at_once_is_bitwise_one_at_a_time(void)
{
    ts_rng rng;
    ts_rng_seed(&rng, 5, 1);
    for (int k = 0; k < 400; k++) {
        ts_mat3 a[4], guess[4], u[4], v[4];
        double s[4][3];
        const size_t lanes = 1 + (size_t)(k % 4);
        for (size_t l = 0; l < 4; l++) {
            const int kind = (k + (int)l) % 4;
            double sv[3] = {1.0 + 0.01 * ts_rng_normal(&rng), 1.0 + 0.01 * ts_rng_normal(&rng), 0.0};
            sv[2] = kind == 1 ? sv[1] : kind == 2 ? 0.0 : 1.0 + 0.01 * ts_rng_normal(&rng);
            const ts_mat3 v_true = random_rotation(&rng);
            a[l] = compose(random_rotation(&rng), sv, v_true);
            guess[l] = kind == 3 ? (ts_mat3){{{0}}} : kind == 2 ? random_rotation(&rng) : v_true;
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    guess[l].m[i][j] += kind == 0 ? 1e-3 * ts_rng_normal(&rng) : 0.0;
        }
        ts_svd3_near4(a, guess, lanes, u, s, v);
        for (size_t l = 0; l < lanes; l++) {
            ts_mat3 u1, v1;
            double s1[3];
            ts_svd3_near(a[l], guess[l], &u1, s1, &v1);
            CHECK(memcmp(&u1, &u[l], sizeof u1) == 0 && memcmp(&v1, &v[l], sizeof v1) == 0 &&
                  memcmp(s1, s[l], sizeof s1) == 0);
        }
    }
}

static void test_polar(void)
{
    ts_rng rng;
    ts_rng_seed(&rng, 4, 1);
    for (int k = 0; k < 500; k++) {
        ts_mat3 a;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                a.m[i][j] = ts_rng_normal(&rng);
        ts_mat3 r, s;
        ts_polar3(a, &r, &s);
        CHECK(is_rotation(r, 1e-12));
        CHECK(max_abs_diff(s, ts_m3_transpose(s)) < 1e-12);
        CHECK(max_abs_diff(ts_m3_mul(r, s), a) < 1e-12);
        if (ts_m3_det(a) > 0) { /* S positive definite */
            ts_mat3 q;
            double lambda[3];
            ts_sym_eigen3(s, &q, lambda);
            CHECK(lambda[0] > 0 && lambda[1] > 0 && lambda[2] > 0);
        }
    }
    /* the polar rotation of a rotation is itself, S = I */
    ts_mat3 rot = random_rotation(&rng), r, s;
    ts_polar3(rot, &r, &s);
    CHECK(max_abs_diff(r, rot) < 1e-12);
    CHECK(max_abs_diff(s, ts_m3_identity()) < 1e-12);
}

static void test_quaternions(void)
{
    ts_rng rng;
    ts_rng_seed(&rng, 5, 1);
    for (int k = 0; k < 500; k++) {
        ts_mat3 r = random_rotation(&rng);
        ts_quat q = ts_quat_from_mat3(r);
        CHECK(max_abs_diff(ts_quat_to_mat3(q), r) < 1e-12);
    }
    /* a quarter turn about z maps x to y */
    ts_quat q = ts_quat_from_rotation_vector(ts_v3(0, 0, 3.14159265358979323846 / 2));
    ts_vec3 y = ts_quat_rotate(q, ts_v3(1, 0, 0));
    CHECK_NEAR(y.x, 0.0, 1e-15);
    CHECK_NEAR(y.y, 1.0, 1e-15);
    /* composing a million small rotations keeps unit length and the total angle */
    ts_quat acc = ts_quat_identity();
    ts_quat step = ts_quat_from_rotation_vector(ts_v3(0, 0, 2 * 3.14159265358979323846 / 1e6));
    for (int k = 0; k < 1000000; k++)
        acc = ts_quat_normalize(ts_quat_mul(step, acc));
    CHECK_NEAR(fabs(acc.w), 1.0, 1e-8);
    /* slerp: endpoints exact, halfway is half the angle */
    ts_quat a = ts_quat_identity(), b = ts_quat_from_rotation_vector(ts_v3(1.2, 0, 0));
    ts_quat h = ts_quat_slerp(a, b, 0.5), h_expected = ts_quat_from_rotation_vector(ts_v3(0.6, 0, 0));
    CHECK_NEAR(h.w, h_expected.w, 1e-12);
    CHECK_NEAR(h.x, h_expected.x, 1e-12);
    ts_quat e = ts_quat_slerp(a, b, 1.0);
    CHECK_NEAR(e.x, b.x, 1e-12);
    ts_mat3 m = {{{2, 1, 0}, {1, 3, 1}, {0, 1, 4}}}, inv;
    CHECK(ts_m3_inverse(m, &inv));
    CHECK(max_abs_diff(ts_m3_mul(m, inv), ts_m3_identity()) < 1e-14);
    ts_mat3 singular = {{{1, 2, 3}, {2, 4, 6}, {0, 0, 1}}};
    CHECK(!ts_m3_inverse(singular, &inv));
}


/* The closed-form eigen-decomposition against Jacobi: random symmetric matrices, and the ones it must not
 * get wrong - two equal eigenvalues (a flat neighbourhood), two nearly equal, all three equal. */
static void test_sym_eigen3_direct(void)
{
    ts_rng rng;
    ts_rng_seed(&rng, 6, 1);
    const double spectra[][3] = {{1.0, 1.0, 0.5}, {1.0, 1.0 + 1e-9, 0.3}, {2.0, 2.0, 2.0}, {0.25, 1.0, 1.0},
                                 {1e-6, 3e-6, 2e-6}, {5.0, -1.0, 0.0}};
    const int fixed = (int)(sizeof spectra / sizeof spectra[0]);
    for (int k = 0; k < 500 + fixed; k++) {
        ts_mat3 a;
        double spread = 0.0;
        if (k < fixed) {
            ts_mat3 r = random_rotation(&rng), d = {{{spectra[k][0], 0, 0}, {0, spectra[k][1], 0}, {0, 0, spectra[k][2]}}};
            a = ts_m3_mul(ts_m3_mul(r, d), ts_m3_transpose(r));
        } else {
            for (int i = 0; i < 3; i++)
                for (int j = i; j < 3; j++)
                    a.m[i][j] = a.m[j][i] = ts_rng_normal(&rng);
        }
        ts_mat3 q, qj;
        double lambda[3], lj[3];
        ts_sym_eigen3_direct(a, &q, lambda);
        ts_sym_eigen3(a, &qj, lj);
        double sorted[3] = {lambda[0], lambda[1], lambda[2]}, sj[3] = {lj[0], lj[1], lj[2]};
        for (int i = 0; i < 3; i++)
            for (int j = i + 1; j < 3; j++) {
                if (sorted[j] < sorted[i]) { double t = sorted[i]; sorted[i] = sorted[j]; sorted[j] = t; }
                if (sj[j] < sj[i]) { double t = sj[i]; sj[i] = sj[j]; sj[j] = t; }
            }
        double scale = 0.0;
        for (int i = 0; i < 3; i++)
            scale = fmax(scale, fabs(sj[i]));
        spread = sj[2] - sj[0];
        for (int i = 0; i < 3; i++)
            CHECK(fabs(sorted[i] - sj[i]) <= 1e-9 * scale);
        /* orthonormal, and A q_j = lambda_j q_j to 1e-7 of the spread (or of the size, all equal) */
        CHECK(max_abs_diff(ts_m3_mul(ts_m3_transpose(q), q), ts_m3_identity()) < 1e-12);
        for (int j = 0; j < 3; j++) {
            const ts_vec3 v = ts_m3_column(q, j), av = ts_m3_mul_v3(a, v);
            CHECK(ts_v3_length(ts_v3_sub(av, ts_v3_scale(v, lambda[j]))) <= 1e-7 * fmax(spread, 1e-9 * scale) + 1e-15 * scale);
        }
    }
}

const test_case vecmath_tests[] = {
    {"vecmath/sym_eigen3_direct_agrees_with_jacobi", test_sym_eigen3_direct},
    {"vecmath/svd_random", test_svd_random},
    {"vecmath/svd_rotations_reflections", test_svd_rotations_and_reflections},
    {"vecmath/svd_near_singular_degenerate", test_svd_near_singular_and_degenerate},
    {"vecmath/svd_near_a_guess", test_svd_near_a_guess},
    {"vecmath/svd_four_at_once_is_bitwise_one_at_a_time", test_svd_four_at_once_is_bitwise_one_at_a_time},
    {"vecmath/polar", test_polar},
    {"vecmath/quaternions", test_quaternions},
    {0, 0},
};
