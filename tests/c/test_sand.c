/* test_sand.c - the sand effect's parts in C alone (and so under ASan/UBSan):
 * the contact law rebounds with its restitution, caps friction and acts
 * equally and oppositely; span maps of a box and of a box with a hole are
 * the right spans; a small drop bakes through the frame loop conserving
 * sand volume exactly, an automatic DEM layer of soft contacts comes to
 * rest, and bad input is refused with the object named. The DE pairs,
 * each computed once from a kept list, give every DE the force and torque
 * of its contacts computed one by one. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/contact.h"
#include "core/hsmap.h"
#include "core/parallel.h"
#include "core/sand.h"
#include "core/rng.h"
#include "core/sand_internal.h"
#include "fixtures.h"

/* Two equal spheres meeting head-on: the rebound speed over the approach speed is e_n. */
static void contact_rebound_has_its_restitution(void)
{
    const double e_n[] = {0.2, 0.5, 0.9};
    for (int k = 0; k < 3; k++) {
        ts_contact_law law = {0.01, e_n[k], 0.5};
        double m = 0.1, kk, c, x1 = 0.0, x2 = 0.02 + 1e-9, v1 = 1.0, v2 = -1.0, r = 0.01, dt = 1e-5;
        ts_contact_coefficients(&law, ts_effective_mass(1 / m, 1 / m), &kk, &c);
        ts_vec3 d_t = ts_v3(0, 0, 0);
        for (int step = 0; step < 100000 && !(x2 - x1 > 2 * r && v2 - v1 > 0); step++) {
            double d_n = 2 * r - (x2 - x1);
            double f1 = 0.0;
            if (d_n > 0) {
                ts_contact_result res = ts_contact_force(&law, kk, c, d_n, ts_v3(1, 0, 0), ts_v3(v2 - v1, 0, 0), dt, &d_t);
                f1 = res.force.x;
            }
            v1 += f1 / m * dt, v2 -= f1 / m * dt;
            x1 += v1 * dt, x2 += v2 * dt;
        }
        CHECK_NEAR((v2 - v1) / 2.0, e_n[k], 0.02 * e_n[k] + 0.005);
    }
}

/* A mass set on a hysteretic spring (no dashpot) under gravity: the plain spring rings on at the amplitude it started
 * with (m g / k), the hysteretic one (unloading 5x stiffer, the sand's memory of 2 contact times) loses most of it within
 * a few periods and rests where the plain spring would (settling over unloading x the memory: the plastic overlap
 * and the overlap follow each other); a head-on collision keeps most of its rebound (the memory
 * builds up over longer than the collision lasts). */
static void hysteresis_damps_a_load_and_rests_as_the_plain_spring(void)
{
    const double t_c = 0.01, m = 0.05, g = 9.81, steps = 10.0, dt = t_c / steps, fade = 1.0 / (2.0 * steps);
    ts_contact_law law = {t_c, 1.0, 0.5};
    double k, c;
    ts_contact_coefficients(&law, m, &k, &c);
    double swing[2];
    for (int hysteresis = 0; hysteresis < 2; hysteresis++) {
        double d = 0.0, v = 0.0, plastic = 0.0, lo = 1e9, hi = -1e9;
        for (int step = 0; step < 80 * steps; step++) {
            double d_e = ts_hysteretic_overlap(d, hysteresis ? 5.0 : 1.0, fade, &plastic);
            v += (g - k * (d > 0.0 ? d_e : 0.0) / m) * dt, d += v * dt;
            if (step >= 70 * steps) /* the last ten contact times */
                lo = d < lo ? d : lo, hi = d > hi ? d : hi;
        }
        swing[hysteresis] = hi - lo;
        if (hysteresis)
            CHECK_NEAR(0.5 * (lo + hi), m * g / k, 0.01 * m * g / k);
    }
    CHECK(swing[0] > 1.8 * m * g / k);          /* undamped: from 0 to 2 m g / k and back */
    CHECK(swing[1] < 0.05 * swing[0]);
    double plastic = 0.0;
    CHECK(ts_hysteretic_overlap(1e-3, 1.0, fade, &plastic) == 1e-3 && plastic == 0.0); /* off: the plain spring */
    for (int step = 0; step < 1000; step++)
        ts_hysteretic_overlap(1e-3, 5.0, fade, &plastic);
    CHECK_NEAR(ts_hysteretic_overlap(1e-3, 5.0, fade, &plastic), 1e-3, 1e-12); /* at rest: the plain spring */

    ts_contact_law collide = {t_c, 0.5, 0.5};
    double kk, cc, x1 = 0.0, x2 = 0.02 + 1e-9, v1 = 1.0, v2 = -1.0, r = 0.01, h = t_c / 100;
    ts_contact_coefficients(&collide, ts_effective_mass(1 / m, 1 / m), &kk, &cc);
    ts_vec3 d_t = ts_v3(0, 0, 0);
    plastic = 0.0;
    for (int step = 0; step < 100000 && !(x2 - x1 > 2 * r && v2 - v1 > 0); step++) {
        double d_n = 2 * r - (x2 - x1), f1 = 0.0;
        if (d_n > 0) {
            double d_e = ts_hysteretic_overlap(d_n, 5.0, h / (2.0 * t_c), &plastic);
            f1 = ts_contact_force(&collide, kk, cc, d_e, ts_v3(1, 0, 0), ts_v3(v2 - v1, 0, 0), h, &d_t).force.x;
        }
        v1 += f1 / m * h, v2 -= f1 / m * h;
        x1 += v1 * h, x2 += v2 * h;
    }
    CHECK((v2 - v1) / 2.0 > 0.9 * 0.5 && (v2 - v1) / 2.0 < 0.5); /* 0.473 */
}

static void contact_friction_is_capped_and_opposite(void)
{
    ts_contact_law law = {0.01, 0.5, 0.3};
    double k, c;
    ts_contact_coefficients(&law, 0.05, &k, &c);
    ts_vec3 a = ts_v3(0, 0, 0), b = ts_v3(0, 0, 0);
    ts_vec3 u = ts_v3(0, 0, 1), v = ts_v3(2.0, 0.5, -0.1);
    for (int i = 0; i < 50; i++) {
        ts_contact_result r1 = ts_contact_force(&law, k, c, 1e-3, u, v, 1e-4, &a);
        ts_contact_result r2 = ts_contact_force(&law, k, c, 1e-3, ts_v3_scale(u, -1), ts_v3_scale(v, -1), 1e-4, &b);
        double F_n = -ts_v3_dot(r1.force, u);
        CHECK(F_n > 0.0); /* approaching: pushed apart */
        CHECK(ts_v3_length(r1.tangential) <= law.friction * F_n * (1 + 1e-12));
        CHECK(r1.force.x == -r2.force.x && r1.force.y == -r2.force.y && r1.force.z == -r2.force.z);
    }
}

/* The rolling spring (ts_rolling_torque): it ignores twisting, grows with the rolled angle (k_r x angle),
 * holds at most its limit, is opposite on the two sides of a contact, and stops a ball rolling on a floor
 * in the distance its speed and mu_r give: with mu_r = 0 the ball rolls on without losing speed. */
static void rolling_torque_resists_rolling_and_is_capped(void)
{
    const ts_vec3 up = ts_v3(0, 0, 1);
    ts_vec3 m = ts_v3(0, 0, 0), m2 = ts_v3(0, 0, 0);
    CHECK(ts_v3_length(ts_rolling_torque(5.0, 1.0, up, ts_v3(0, 0, 3.0), 1e-3, &m)) == 0.0); /* a twist */
    for (int i = 0; i < 10; i++) {  /* rolled 10 x 2 rad/s x 1 ms = 0.02 rad about y */
        ts_vec3 t1 = ts_rolling_torque(5.0, 1.0, up, ts_v3(0, 2.0, 0), 1e-3, &m);
        ts_vec3 t2 = ts_rolling_torque(5.0, 1.0, ts_v3_scale(up, -1), ts_v3(0, -2.0, 0), 1e-3, &m2);
        CHECK(t1.x == -t2.x && t1.y == -t2.y && t1.z == -t2.z);
    }
    CHECK_NEAR(m.y, 5.0 * 0.02, 1e-12);
    for (int i = 0; i < 1000; i++)
        ts_rolling_torque(5.0, 1.0, up, ts_v3(0, 2.0, 0), 1e-3, &m);
    CHECK_NEAR(ts_v3_length(m), 1.0, 1e-12);

    /* a ball (r 1 cm, 10 g) on a floor, rolling at 0.5 m/s: contact law and rolling torque, symplectic Euler */
    const double r = 0.01, mass = 0.01, inertia = 0.4 * mass * r * r, g = 9.81, dt = 2e-5;
    for (int with = 0; with <= 1; with++) {
        ts_contact_law law = {0.004, 0.3, 0.5};
        double k, c;
        ts_contact_coefficients(&law, mass, &k, &c);
        double mu_r = with ? 0.2 : 0.0;
        ts_vec3 x = ts_v3(0, 0, r - mass * g / k), v = ts_v3(0.5, 0, 0), w = ts_v3(0, 0.5 / r, 0);
        ts_vec3 d_t = ts_v3(0, 0, 0), m_r = ts_v3(0, 0, 0);
        for (int step = 0; step < 50000; step++) { /* 1 s */
            ts_vec3 u_n = ts_v3(0, 0, -1);     /* from the ball to the floor */
            ts_vec3 v_c = ts_contact_velocity(v, w, r, ts_v3(0, 0, 0), ts_v3(0, 0, 0), 0.0, u_n);
            ts_contact_result res = ts_contact_force(&law, k, c, r - x.z, u_n, v_c, dt, &d_t);
            ts_vec3 torque = ts_v3_add(ts_v3_scale(ts_v3_cross(u_n, res.tangential), r),
                                       ts_rolling_torque(k * r * r, mu_r * r * fabs(res.normal), u_n, w, dt, &m_r));
            v = ts_v3_add(v, ts_v3_scale(ts_v3_add(res.force, ts_v3(0, 0, -mass * g)), dt / mass));
            w = ts_v3_add(w, ts_v3_scale(torque, dt / inertia));
            x = ts_v3_add(x, ts_v3_scale(v, dt));
        }
        if (with) { /* the torque mu_r r m g decelerates it at mu_r g / 1.4: it stops after v^2 1.4 / (2 mu_r g) */
            CHECK(fabs(v.x) < 1e-3);
            CHECK_NEAR(x.x, 0.25 * 1.4 / (2.0 * mu_r * g), 0.003);
        }
        else
            CHECK(v.x > 0.49 && x.x > 0.49);
    }
}

static void span_map_of_a_box_and_a_ring(void)
{
    ts_columns g = {0.0, 0.0, 0.1, 20, 20};
    float lo[3] = {0.3, 0.3, 0.5}, hi[3] = {0.7, 0.9, 0.8};
    box_mesh b = make_box(lo, hi);
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = b.vertices[i];
    ts_hsmap m;
    ts_hsmap_init(&m);
    ts_error err;
    CHECK(ts_hsmap_build(&m, &g, v, 8, b.triangles, 12, &err) == TS_OK);
    int inside = 0, count;
    for (int j = 0; j < 20; j++)
        for (int i = 0; i < 20; i++) {
            const ts_span *sp = ts_hsmap_column(&m, i, j, &count);
            double x = (i + 0.5) * 0.1, y = (j + 0.5) * 0.1;
            int expect = x > 0.3 && x < 0.7 && y > 0.3 && y < 0.9;
            CHECK(count == expect);
            if (count == 1) {
                inside++;
                CHECK_NEAR(sp[0].bottom, 0.5, 1e-6);
                CHECK_NEAR(sp[0].top, 0.8, 1e-6);
                CHECK(sp[0].n_bottom.z < -0.99 && sp[0].n_top.z > 0.99);
            }
        }
    CHECK(inside == 4 * 6);
    /* two boxes stacked with a gap: two spans per column */
    float lo2[3] = {0.3, 0.3, 1.0}, hi2[3] = {0.7, 0.9, 1.2};
    box_mesh b2 = make_box(lo2, hi2);
    double v2[48];
    int32_t t2[72];
    for (int i = 0; i < 24; i++)
        v2[i] = v[i], v2[24 + i] = b2.vertices[i];
    for (int i = 0; i < 36; i++)
        t2[i] = b.triangles[i], t2[36 + i] = b2.triangles[i] + 8;
    CHECK(ts_hsmap_build(&m, &g, v2, 16, t2, 24, &err) == TS_OK);
    const ts_span *sp = ts_hsmap_column(&m, 5, 5, &count);
    CHECK(count == 2);
    if (count == 2) {
        CHECK_NEAR(sp[0].top, 0.8, 1e-6);
        CHECK_NEAR(sp[1].bottom, 1.0, 1e-6);
    }
    ts_hsmap_free(&m);
}

static ts_sand_params drop_params(void)
{
    ts_sand_params p = ts_sand_params_default();
    p.cell_size = 1.0, p.nx = 24, p.ny = 24;
    p.element_radius = 0.5, p.bulk_density = 0.0707, p.grains_per_element = 10;
    p.friction = 0.3, p.restitution = 0.3, p.contact_time = 0.1, p.steps_per_contact = 10;
    p.gravity[2] = -9.81, p.dem_depth = 3.0, p.split_speed = 2.0, p.resting_gap = 0.5;
    p.cone_angle = 0.3, p.grow_force = 10.0, p.rest_force = 0.05, p.rest_speed = 0.05;
    p.smoothing = 1, p.max_elements = 200000, p.frame_start = 1, p.fps = 24.0, p.seed = 3;
    return p;
}

/* Bakes a box crate (lo..hi, its origin at the centre) dropped at speed vz
 * onto the 24 x 24 bed of drop_params for `frames` frames; returns the final
 * stats and, when `heights` is given, the displayed heights (24 * 24). */
static void bake_crate(const ts_sand_params *p, const float lo[3], const float hi[3], double density, double vz,
                       int frames, ts_sand_stats *st, float *heights)
{
    float bed_v[12] = {0, 0, 0, 24, 0, 0, 24, 24, 0, 0, 24, 0};
    int32_t bed_t[6] = {0, 1, 2, 0, 2, 3};
    box_mesh b = make_box(lo, hi);
    ts_sand_object objects[2];
    memset(objects, 0, sizeof objects);
    objects[0] = (ts_sand_object){TS_SAND_GROUND, {.name = "Bed", .vertices = bed_v, .vertex_count = 4,
                                                   .triangles = bed_t, .triangle_count = 2}};
    objects[1] = (ts_sand_object){TS_SAND_OBJECT, {.name = "Crate", .vertices = b.vertices, .vertex_count = 8,
                                                   .triangles = b.triangles, .triangle_count = 12, .density = density,
                                                   .velocity = {0, 0, vz},
                                                   .origin = {0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]),
                                                              0.5 * (lo[2] + hi[2])},
                                                   .rotation = {1, 0, 0, 0}}};
    ts_sand *s = NULL;
    ts_error err;
    memset(st, 0, sizeof *st);
    CHECK(ts_sand_create(&s, p, objects, 2, &err) == TS_OK);
    if (!s)
        return;
    char dir[] = "/tmp/tsubu-sand-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    ts_frame_loop loop = {1, frames, 24.0, 100, dir, 1, NULL, NULL, 0.0, 0, 0};
    if (ts_run_frames(&loop, &ts_sand_ops, s, 1, &err) != TS_OK) {
        fprintf(stderr, "  %s\n", err.message);
        CHECK(0);
    }
    ts_sand_get_stats(s, st);
    if (heights)
        memcpy(heights, ts_sand_heights(s), 24 * 24 * sizeof *heights);
    ts_sand_destroy(s);
    CHECK(remove_dir(dir));
}

static void small_drop_conserves_volume(void)
{
    float lo[3] = {9, 9, 0.5}, hi[3] = {15, 15, 4.5}, h[24 * 24];
    ts_sand_params p = drop_params();
    ts_sand_stats st;
    bake_crate(&p, lo, hi, 0.1, -8.0, 12, &st, h);
    CHECK(st.elements > 200);
    double total = st.volume_bed + st.volume_elements + st.volume_airborne + st.volume_lost;
    CHECK_NEAR(total, 0.0, 1e-6 * st.volume_elements);
    double under = 0.0; /* mean height under the crate */
    for (int j = 9; j < 15; j++)
        for (int i = 9; i < 15; i++)
            under += h[i + 24 * j] / 36.0;
    CHECK(under < -0.1); /* a dent: -0.16 (-0.2 and more while fresh regions sagged under their own weight) */
}

/* With the paper's soft contacts (t_c = 0.2 s: k = 7 N/m for its DEs) the
 * automatic DEM depth is what the bottom contacts carry, not half the
 * object; stiffer contacts carry half the object's height. The layer then
 * comes to rest under a light crate - with the paper's plain average of
 * span contacts its bottom DEs rattled at 1.6 m/s, and a 15-cell layer
 * never settles at all. */
static void automatic_depth_layer_comes_to_rest(void)
{
    float lo[3] = {9, 9, 0.3}, hi[3] = {15, 15, 10.3};
    ts_sand_params p = drop_params();
    p.dem_depth = 0.0, p.contact_time = 0.2, p.friction = 0.1;
    ts_sand_stats st;
    bake_crate(&p, lo, hi, 0.005, -0.5, 72, &st, NULL);
    /* bottom DE: 4 contacts at 45 degrees carry `layers` weights, each squeezed
     * at most a quarter radius; k / m = (pi^2 + ln^2 e) / (2 t_c^2) */
    double k_per_mass = (M_PI * M_PI + log(0.3) * log(0.3)) / (2.0 * 0.2 * 0.2);
    double layers = 0.25 * 0.5 * 4.0 * sqrt(0.5) * k_per_mass / 9.81;
    CHECK_NEAR(st.dem_depth, layers * sqrt(2.0) * 0.5, 1e-9);
    CHECK(st.dem_depth < 5.0 && st.elements > 200);
    CHECK(st.max_speed < 0.25 * p.split_speed);
    p.contact_time = 0.05; /* 16 x stiffer: half the crate's height */
    bake_crate(&p, lo, hi, 0.005, -0.5, 2, &st, NULL);
    CHECK_NEAR(st.dem_depth, 5.0, 1e-6);
}

/* A deep DEM layer (14 layers, bottom contacts squeezed by a sixth of a radius: a 20 cm layer of 2 cm sand at the
 * automatic contact time, in the paper's units) under a light crate comes to rest within five seconds. With the
 * tangential spring and dashpot as stiff as the normal ones (eqs) the explicit step amplified each DE's
 * spin and the layer crept down under its own weight (DEs still at 0.75 cells/s); laid touching instead of
 * squeezed by the weight each layer carries it sagged and shook as it was placed (0.47). */
static void deep_layer_stays_at_rest(void)
{
    float lo[3] = {9, 9, 0.3f}, hi[3] = {15, 15, 6.3f};
    ts_sand_params p = drop_params();
    p.dem_depth = 10.0, p.friction = 0.5;
    ts_sand_stats st;
    bake_crate(&p, lo, hi, 0.005, -0.5, 120, &st, NULL);
    CHECK(st.elements > 1000);
    CHECK(st.max_speed < 0.05 * p.split_speed);
    CHECK(st.region_columns == 100); /* the footprint and its margin: nothing pushed the bed aside */
    CHECK(st.airborne == 0);
}

/* A light crate's region reaches two columns past its footprint; a heavy one's as many as the layer is deep, plus
 * two, up to the footprint's width (sand_bed.c's footprint_margin): under a heavy object the layer spreads its
 * weight out through its depth, and at two columns it gave way along the bed beside the region. The crate presses
 * each DE under it with 80 x its density DE weights (4 cells high, a layer 0.05 per DE): 8 and 16. */
static void heavy_objects_get_a_wider_region(void)
{
    float lo[3] = {9, 9, 0.45f}, hi[3] = {15, 15, 4.45f};
    ts_sand_params p = drop_params();
    ts_sand_stats st;
    bake_crate(&p, lo, hi, 0.1, 0.0, 3, &st, NULL);
    CHECK(st.region_columns == (6 + 2 * 2) * (6 + 2 * 2));
    bake_crate(&p, lo, hi, 0.2, 0.0, 3, &st, NULL);
    CHECK(st.region_columns == (6 + 2 * 5) * (6 + 2 * 5)); /* DEM depth 3 cells: 3 + 2 columns */
    p.dem_depth = 8.0;
    bake_crate(&p, lo, hi, 0.2, 0.0, 3, &st, NULL);
    /* 8 + 2, but no more than the crate's span map is wide: 7 columns (its box takes the one its edge ends on) */
    CHECK(st.region_columns == (6 + 2 * 7) * (6 + 2 * 7));
}

/* Sand with rolling friction over a flat square bed of the given side, with room for `room` DEs; NULL (checked)
 * if it cannot be made. */
static ts_sand *rolling_sand_on_square(float side, size_t room)
{
    float bed_v[12] = {0, 0, 0, side, 0, 0, side, side, 0, 0, side, 0};
    int32_t bed_t[6] = {0, 1, 2, 0, 2, 3};
    ts_sand_object bed = {TS_SAND_GROUND, {.name = "Bed", .vertices = bed_v, .vertex_count = 4, .triangles = bed_t,
                                           .triangle_count = 2}};
    ts_sand_params p = drop_params();
    p.rolling_friction = 0.3;
    ts_sand *s = NULL;
    ts_error err;
    CHECK(ts_sand_create(&s, &p, &bed, 1, &err) == TS_OK && sand_grow_elements(s, room, &err) == TS_OK);
    return s;
}

/* The pair pass (each contact computed once, from candidates kept over steps, the partner's share gathered
 * later) against each DE's contacts computed one by one from its own side, with their histories, over steps
 * where the DEs move, contacts open and close, and the list is kept, found again, or the slots reloaded. */
#define PAIR_TEST_N 90
static void pairs_give_each_element_its_contacts(void)
{
    ts_sand *s = rolling_sand_on_square(24, PAIR_TEST_N);
    ts_error err;
    if (!s)
        return;
    uint64_t seed = 5;
    for (int i = 0; i < PAIR_TEST_N; i++) { /* a jittered clump in the air, radii 0.4-0.6, moving and spinning */
        double u[9];
        for (int k = 0; k < 9; k++)
            u[k] = ts_rng_hash_uniform(seed, (uint64_t)i, (uint64_t)k) - 0.5;
        size_t e = sand_add_element(s, ts_v3(10 + (i % 5) * 0.9 + 0.1 * u[0], 10 + (i / 5 % 6) * 0.9 + 0.1 * u[1],
                                             8 + (i / 30) * 0.9 + 0.1 * u[2]),
                                    ts_v3(u[3], u[4], u[5]), 0.5 + 0.2 * u[6], 0.06 + 0.02 * u[7], 0);
        s->wx[e] = 3 * u[8], s->wy[e] = -2 * u[8], s->wz[e] = u[7];
    }
    const double dt = 0.002, g = -9.81;
    /* by the DEs' ids (the sort renumbers them): id a's side of its contact with id b */
    static float ref_d_t[PAIR_TEST_N][PAIR_TEST_N][HISTORY], ref_m_r[PAIR_TEST_N][PAIR_TEST_N][3];
    memset(ref_d_t, 0, sizeof ref_d_t), memset(ref_m_r, 0, sizeof ref_m_r);
    int worst_ok = 1, touching = 0, reloaded = 0;
    for (int step = 0; step < 40; step++) {
        CHECK(sand_build_grid(s, &err) == TS_OK);
        if (step % 7 == 3) { /* as a checkpoint would: histories to the slots and back */
            sand_pairs_release(s);
            reloaded++;
        } else if (step % 7 == 5) { /* the DEs renumbered into cell order: pairs turn round (a's side was b's) */
            CHECK(sand_sort_into_cells(s, &err) == TS_OK);
            reloaded++;
        }
        CHECK(sand_find_pairs(s, &err) == TS_OK);
        sand_compute_forces(s, dt);
        for (int i = 0; i < PAIR_TEST_N; i++) {
            ts_vec3 F = ts_v3(0, 0, g * s->m[i]), T = ts_v3(0, 0, 0);
            for (int j = 0; j < PAIR_TEST_N; j++) {
                float *hd = ref_d_t[s->id[i]][s->id[j]], *hm = ref_m_r[s->id[i]][s->id[j]];
                double dx = s->x[j] - s->x[i], dy = s->y[j] - s->y[i], dz = s->z[j] - s->z[i], rr = s->r[i] + s->r[j];
                double dist = sqrt(dx * dx + dy * dy + dz * dz);
                if (j == i || dist >= rr) {
                    memset(hd, 0, HISTORY * sizeof *hd), memset(hm, 0, 3 * sizeof *hm);
                    continue;
                }
                touching += i < j;
                ts_vec3 u_n = ts_v3(dx / dist, dy / dist, dz / dist), w_i = ts_v3(s->wx[i], s->wy[i], s->wz[i]);
                ts_vec3 w_j = ts_v3(s->wx[j], s->wy[j], s->wz[j]);
                ts_vec3 v_c = ts_contact_velocity(ts_v3(s->vx[i], s->vy[i], s->vz[i]), w_i, s->r[i],
                                                  ts_v3(s->vx[j], s->vy[j], s->vz[j]), w_j, s->r[j], u_n);
                double m_eff = 1.0 / (1.0 / s->m[i] + 1.0 / s->m[j]), k = s->K0 * m_eff;
                ts_vec3 d_t = ts_v3(hd[0], hd[1], hd[2]), m_r = ts_v3(hm[0], hm[1], hm[2]);
                double plastic = hd[3]; /* the hysteresis (on by default) and its history, carried like d_t */
                double d_e = ts_hysteretic_overlap(rr - dist, s->p.unloading_stiffness, sand_hysteresis_fade(s, dt), &plastic);
                ts_contact_result res = ts_contact_force(&s->law, k, s->C0 * m_eff, d_e, u_n, v_c, dt, &d_t);
                double r_eff = s->r[i] * s->r[j] / rr;
                ts_vec3 roll = ts_rolling_torque(k * r_eff * r_eff, s->p.rolling_friction * r_eff * fabs(res.normal), u_n,
                                                 ts_v3_sub(w_i, w_j), dt, &m_r);
                hd[0] = (float)d_t.x, hd[1] = (float)d_t.y, hd[2] = (float)d_t.z, hd[3] = (float)plastic;
                hm[0] = (float)m_r.x, hm[1] = (float)m_r.y, hm[2] = (float)m_r.z;
                F = ts_v3_add(F, res.force);
                T = ts_v3_add(T, ts_v3_add(ts_v3_scale(ts_v3_cross(u_n, res.tangential), s->r[i]), roll));
            }
            const double scale = 1e-9 * (1.0 + ts_v3_length(F)), tscale = 1e-9 * (1.0 + ts_v3_length(T));
            worst_ok &= fabs(s->fx[i] - F.x) < scale && fabs(s->fy[i] - F.y) < scale && fabs(s->fz[i] - F.z) < scale;
            worst_ok &= fabs(s->tx[i] - T.x) < tscale && fabs(s->ty[i] - T.y) < tscale && fabs(s->tz[i] - T.z) < tscale;
        }
        /* each side computed its own history; the law is antisymmetric, so they are each other's negation */
        for (int a = 0; a < PAIR_TEST_N; a++)
            for (int b = 0; b < a; b++)
                for (int d = 0; d < 3; d++)
                    worst_ok &= ref_d_t[b][a][d] == -ref_d_t[a][b][d] && ref_m_r[b][a][d] == -ref_m_r[a][b][d] &&
                                ref_d_t[b][a][3] == ref_d_t[a][b][3];
        for (int i = 0; i < PAIR_TEST_N; i++) { /* squeeze the clump together and shear it: contacts come and go */
            s->vx[i] += (s->x[i] < 12 ? 1.0 : -1.0) * 0.5 + 0.3 * (s->z[i] - 9);
            s->x[i] += s->vx[i] * dt * 10, s->y[i] += s->vy[i] * dt * 10, s->z[i] += s->vz[i] * dt * 10;
        }
    }
    CHECK(worst_ok);
    CHECK(touching > 200 && reloaded >= 5);
    CHECK(s->pairs.list.searches > reloaded && s->pairs.list.searches < 40); /* kept over some steps, not all */
    ts_sand_destroy(s);
}

/* The pair pass splits the DEs into one block per thread; a pair whose partner lies in an earlier block hands its
 * share over through the pair's output, the others add it straight in. A clump past TS_PARALLEL_MIN DEs, squeezed
 * so most of them touch, stepped on 1, 2 and 3 threads: the same bits of every force, torque and position. */
#define BLOCK_TEST_SIDE 24 /* 24 x 24 x 24 DEs */
static void run_block_clump(int threads, double *out)
{
    const int n = BLOCK_TEST_SIDE * BLOCK_TEST_SIDE * BLOCK_TEST_SIDE;
    ts_error err;
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    ts_sand *s = rolling_sand_on_square(40, (size_t)n);
    if (s) {
        for (int i = 0; i < n; i++) { /* spacing 0.95 for radii about 0.5: each DE pressed by its neighbours */
            double u[7];
            for (int k = 0; k < 7; k++)
                u[k] = ts_rng_hash_uniform(11, (uint64_t)i, (uint64_t)k) - 0.5;
            int a = i % BLOCK_TEST_SIDE, b = i / BLOCK_TEST_SIDE % BLOCK_TEST_SIDE, c = i / (BLOCK_TEST_SIDE * BLOCK_TEST_SIDE);
            size_t e = sand_add_element(s, ts_v3(8 + 0.95 * a + 0.05 * u[0], 8 + 0.95 * b + 0.05 * u[1], 3 + 0.95 * c + 0.05 * u[2]),
                                        ts_v3(u[3], u[4], u[5]), 0.5 + 0.05 * u[6], 0.06, 0);
            s->wx[e] = 2 * u[3], s->wy[e] = -u[4], s->wz[e] = u[5];
        }
        for (int step = 0; step < 4; step++) {
            CHECK(sand_build_grid(s, &err) == TS_OK);
            CHECK(sand_find_pairs(s, &err) == TS_OK);
            sand_compute_forces(s, 0.002);
            sand_integrate_elements(s, 0.002);
        }
        for (int i = 0; i < n; i++) {
            double v[9] = {s->fx[i], s->fy[i], s->fz[i], s->tx[i], s->ty[i], s->tz[i], s->x[i], s->y[i], s->z[i]};
            memcpy(out + 9 * (size_t)i, v, sizeof v);
        }
        ts_sand_destroy(s);
    }
    omp_set_num_threads(before);
}

static void pair_blocks_give_the_same_bits_on_any_threads(void)
{
    const size_t n = BLOCK_TEST_SIDE * BLOCK_TEST_SIDE * BLOCK_TEST_SIDE, size = 9 * n * sizeof(double);
    double *one = calloc(9 * n, sizeof *one), *more = calloc(9 * n, sizeof *more);
    CHECK(n >= TS_PARALLEL_MIN && one && more);
    if (!one || !more) {
        free(one), free(more);
        return;
    }
    run_block_clump(1, one);
    double pressed = 0.0; /* the clump is squeezed: the test has forces to compare */
    for (size_t i = 0; i < n; i++)
        pressed = fmax(pressed, fabs(one[9 * i] + one[9 * i + 1]));
    CHECK(pressed > 1.0);
    for (int threads = 2; threads <= 3; threads++) {
        memset(more, 0, size);
        run_block_clump(threads, more);
        CHECK(memcmp(one, more, size) == 0);
    }
    free(one), free(more);
}

static void bad_sand_input_is_named(void)
{
    float bed_v[12] = {0, 0, 0, 24, 0, 0, 24, 24, 0, 0, 24, 0};
    int32_t bed_t[6] = {0, 1, 2, 0, 2, 3};
    float lo[3] = {9, 9, -1}, hi[3] = {15, 15, 4};
    box_mesh b = make_box(lo, hi);
    ts_sand_object objects[2] = {
        {TS_SAND_GROUND, {.name = "Bed", .vertices = bed_v, .vertex_count = 4, .triangles = bed_t,
                          .triangle_count = 2}},
        {TS_SAND_OBJECT, {.name = "Buried", .vertices = b.vertices, .vertex_count = 8, .triangles = b.triangles,
                          .triangle_count = 12, .density = 1.0, .rotation = {1, 0, 0, 0}}}};
    ts_sand_params p = drop_params();
    ts_sand *s = NULL;
    ts_error err;
    CHECK(ts_sand_create(&s, &p, objects, 2, &err) == TS_ERR_INVALID && strstr(err.message, "Buried"));
    ts_sand_destroy(s);
    p.contact_time = NAN;
    CHECK(ts_sand_create(&s, &p, objects, 1, &err) == TS_ERR_INVALID && strstr(err.message, "contact_time"));
    ts_sand_destroy(s);
}

/* A column of sand on a flat bed, with a block of DEM-region columns beside it behind a cliff: the bed's
 * avalanches keep its volume to rounding, leave the region alone, stop with no slope between neighbours steeper
 * than the angle of repose, and stop there - at a cone of that angle (its height from its volume), not flat.
 * The same bits for one and two threads; at 90 degrees nothing moves. */
#define AVALANCHE_N 48
static void run_avalanche(double angle_deg, int threads, double *heights)
{
    float bed_v[12] = {0, 0, 0, AVALANCHE_N, 0, 0, AVALANCHE_N, AVALANCHE_N, 0, 0, AVALANCHE_N, 0};
    int32_t bed_t[6] = {0, 1, 2, 0, 2, 3};
    ts_sand_object bed = {TS_SAND_GROUND, {.name = "Bed", .vertices = bed_v, .vertex_count = 4, .triangles = bed_t,
                                           .triangle_count = 2}};
    ts_sand_params p = drop_params();
    p.nx = p.ny = AVALANCHE_N, p.angle_of_repose = angle_deg * TS_RADIANS_PER_DEGREE;
    ts_sand *s = NULL;
    ts_error err;
    CHECK(ts_sand_create(&s, &p, &bed, 1, &err) == TS_OK);
    if (!s)
        return;
    for (int j = 0; j < AVALANCHE_N; j++)
        for (int i = 0; i < AVALANCHE_N; i++) {
            size_t c = (size_t)i + (size_t)AVALANCHE_N * j;
            s->bed[c] = abs(i - 24) <= 1 && abs(j - 24) <= 1 ? 20.0 : 0.0;
            s->region[c] = i < 6 && j < 6;                    /* a region whose floor is far under the bed */
            if (s->region[c])
                s->bed[c] = -10.0;
        }
    omp_set_num_threads(threads);
    for (int step = 0; step < 4000; step++)
        sand_avalanche(s, 0.01);
    omp_set_num_threads(2);
    memcpy(heights, s->bed, sizeof(double) * AVALANCHE_N * AVALANCHE_N);
    ts_sand_destroy(s);
}

static void avalanches_keep_volume_and_stop_at_the_angle(void)
{
    static double one[AVALANCHE_N * AVALANCHE_N], two[AVALANCHE_N * AVALANCHE_N];
    const double angle = 33.0, slope = tan(angle * TS_RADIANS_PER_DEGREE);
    run_avalanche(angle, 1, one);
    run_avalanche(angle, 2, two);
    CHECK(memcmp(one, two, sizeof one) == 0);
    double volume = 0.0, steepest = -1.0, peak = 0.0;
    int region_kept = 1;
    for (int j = 0; j < AVALANCHE_N; j++)
        for (int i = 0; i < AVALANCHE_N; i++) {
            const double h = one[i + AVALANCHE_N * j];
            if (i < 6 && j < 6) {
                region_kept &= h == -10.0;
                continue;
            }
            volume += h, peak = fmax(peak, h);
            for (int b = -1; b <= 1; b++)
                for (int a = -1; a <= 1; a++) {
                    int u = i + a, v = j + b;
                    if ((a || b) && u >= 0 && v >= 0 && u < AVALANCHE_N && v < AVALANCHE_N && !(u < 6 && v < 6))
                        steepest = fmax(steepest, (h - one[u + AVALANCHE_N * v]) / hypot(a, b) / slope);
                }
        }
    CHECK(region_kept);
    CHECK_NEAR(volume, 9 * 20.0, 1e-12 * 180.0);
    CHECK(steepest < 1.0 + 1e-6 && steepest > 0.9);
    const double cone = cbrt(3.0 * 180.0 * slope * slope / M_PI); /* V = pi/3 (H / tan)^2 H */
    CHECK_NEAR(peak, cone, 0.1 * cone);
    run_avalanche(90.0, 2, one);
    CHECK(one[24 + AVALANCHE_N * 24] == 20.0 && one[20 + AVALANCHE_N * 20] == 0.0);
}

const test_case sand_tests[] = {
    {"sand/contact_rebound_has_its_restitution", contact_rebound_has_its_restitution},
    {"sand/contact_friction_is_capped_and_opposite", contact_friction_is_capped_and_opposite},
    {"sand/hysteresis_damps_a_load_and_rests_as_the_plain_spring", hysteresis_damps_a_load_and_rests_as_the_plain_spring},
    {"sand/rolling_torque_resists_rolling_and_is_capped", rolling_torque_resists_rolling_and_is_capped},
    {"sand/span_map_of_a_box_and_two", span_map_of_a_box_and_a_ring},
    {"sand/small_drop_conserves_volume", small_drop_conserves_volume},
    {"sand/automatic_depth_layer_comes_to_rest", automatic_depth_layer_comes_to_rest},
    {"sand/deep_layer_stays_at_rest", deep_layer_stays_at_rest},
    {"sand/heavy_objects_get_a_wider_region", heavy_objects_get_a_wider_region},
    {"sand/pairs_give_each_element_its_contacts", pairs_give_each_element_its_contacts},
    {"sand/pair_blocks_give_the_same_bits_on_any_threads", pair_blocks_give_the_same_bits_on_any_threads},
    {"sand/avalanches_keep_volume_and_stop_at_the_angle", avalanches_keep_volume_and_stop_at_the_angle},
    {"sand/bad_input_is_named", bad_sand_input_is_named},
    {NULL, NULL},
};
