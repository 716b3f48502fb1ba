/* test_wall_field.c - a rigid body's own wall weight: a flat face gives the
 * domain walls' tables; beyond a convex edge, less than a flat wall at the
 * same distance, pushing along the bisector. */
#include <math.h>

#include "check.h"
#include "core/collider.h"
#include "core/kernels.h"
#include "core/sph.h"
#include "core/wall_field.h"
#include "fixtures.h"

typedef struct lattice_wall {
    ts_kernels k;
    ts_sph_wall wall;
    double spacing, mass;
} lattice_wall;

static lattice_wall make_lattice(double spacing)
{
    lattice_wall l;
    l.spacing = spacing;
    ts_kernels_init(&l.k, 2.0 * spacing);
    l.mass = ts_sph_lattice_mass(2.0 * spacing, spacing, 1000.0);
    ts_sph_wall_init(&l.wall, &l.k, spacing, l.mass);
    return l;
}

static void test_flat_face_gives_the_tables(void)
{
    const double s = 0.025;
    lattice_wall l = make_lattice(s);
    const float lo[3] = {0.013f, -0.02f, 0.007f}, hi[3] = {0.413f, 0.38f, 0.407f};   /* off the node grid */
    box_mesh b = make_box(lo, hi);
    ts_collider c;
    ts_wall_field f;
    ts_error err;
    CHECK(ts_collider_from_mesh(&c, "Box", b.vertices, 8, b.triangles, 12, 0.25 * s, 2.0 + 3.0 * s / (0.25 * s), &err) == TS_OK);
    CHECK(ts_wall_field_build(&f, &c, &l.k, &l.wall, s, l.mass, &err) == TS_OK);
    for (double d = -0.4 * s; d < 1.9 * s; d += 0.13 * s) {
        float z, tz, tg;
        ts_vec3 g;
        CHECK(ts_wall_field_eval(&f, &l.wall, ts_v3(0.21, 0.18, 0.407 + d), d, &z, &g));
        ts_sph_wall_eval(&l.wall, d, &tz, &tg);
        CHECK_NEAR(z, tz, 0.01 * l.wall.density[0]);
        CHECK_NEAR(g.z, tg, 0.01 * l.wall.gradient[0]);
        CHECK_NEAR(g.x, 0.0, 0.01 * l.wall.gradient[0]);
        CHECK_NEAR(g.y, 0.0, 0.01 * l.wall.gradient[0]);
    }
    /* beyond an edge the solid is a quarter-space: less than a flat wall at the same distance, pushing
     * out along the edge's bisector */
    const double d = 0.5 * s;
    float z, tz, tg;
    ts_vec3 g;
    CHECK(ts_wall_field_eval(&f, &l.wall, ts_v3(0.413 + d / sqrt(2.0), 0.18, 0.407 + d / sqrt(2.0)), d, &z, &g));
    ts_sph_wall_eval(&l.wall, d, &tz, &tg);
    CHECK(z < 0.75 * tz);
    CHECK(z > 0.25 * tz);
    CHECK_NEAR(g.x, g.z, 0.02 * tg);
    CHECK_NEAR(g.y, 0.0, 0.01 * tg);
    CHECK(g.x > 0.0);
    ts_wall_field_free(&f);
    ts_collider_free(&c);
}

/* The moments behind a body's hydrostatic wall pressure (sph.h): at a fluid particle phi above a flat wall, the
 * wall lattice's sum_w m |W'(r)| (x - x_w)(x - x_w)^T / r, summed here point by point with the wall particles
 * placed as the tables place them, along the normal (T_n) and across it (T_t); zero from one kernel radius. */
static void test_hydrostatic_moments_match_the_lattice_sums(void)
{
    const double s = 0.02;
    lattice_wall l = make_lattice(s);
    for (double phi = 0.1 * s; phi < 1.9 * s; phi += 0.3 * s) {
        double tn = 0.0, tt = 0.0;
        for (int layer = 0; layer < 6; layer++)
            for (int i = -6; i <= 6; i++)
                for (int j = -6; j <= 6; j++) {
                    const double dx = i * s, dy = j * s, dz = phi + (layer + 0.5) * s;
                    const double r = sqrt(dx * dx + dy * dy + dz * dz);
                    if (r < l.k.h) {
                        tn -= l.mass * ts_dw_spiky(&l.k, r) * dz * dz / r;
                        tt -= l.mass * ts_dw_spiky(&l.k, r) * dy * dy / r;
                    }
                }
        const double t = (phi - l.wall.phi_min) * l.wall.inv_step;
        const int at = (int)t;
        const double f = t - at;
        CHECK_NEAR((1 - f) * l.wall.moment_n[at] + f * l.wall.moment_n[at + 1], tn, 0.01 * l.wall.moment_n[0]);
        CHECK_NEAR((1 - f) * l.wall.moment_t[at] + f * l.wall.moment_t[at + 1], tt, 0.01 * l.wall.moment_n[0]);
        CHECK(tt >= 0.0 && (phi < 1.5 * s ? tn > 0.0 : tn == 0.0)); /* the first wall layer is 0.5 s behind */
    }
    CHECK(ts_sph_wall_table(&l.wall, l.wall.moment_n, l.k.h) == 0.0f);
}

const test_case wall_field_tests[] = {
    {"wall_field/hydrostatic_moments_match_the_lattice_sums", test_hydrostatic_moments_match_the_lattice_sums},
    {"wall_field/flat_face_gives_the_tables_an_edge_less", test_flat_face_gives_the_tables},
    {0, 0},
};
