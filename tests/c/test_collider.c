/* test_collider.c - a box collider gives the right signed distance,
 * outward normal, and (when animated) wall velocity. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "core/collider.h"
#include "fixtures.h"

static void test_static_box(void)
{
    const float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    box_mesh b = make_box(lo, hi);
    ts_collider c;
    ts_error err;
    CHECK(ts_collider_from_mesh(&c, "Box", b.vertices, 8, b.triangles, 12, 0.05, 3.0, &err) == TS_OK);
    ts_collider_hit hit;
    CHECK(ts_collider_query(&c, 0.0, ts_v3(0.5, 0.5, 0.5), &hit) == 1);
    CHECK_NEAR(hit.distance, -0.5, 0.03);
    CHECK(ts_collider_query(&c, 0.0, ts_v3(0.5, 0.5, 0.9), &hit) == 1);
    CHECK_NEAR(hit.distance, -0.1, 0.02);
    CHECK_NEAR(hit.normal.z, 1.0, 0.05);
    CHECK(ts_collider_query(&c, 0.0, ts_v3(1.05, 0.5, 0.5), &hit) == 1);
    CHECK_NEAR(hit.distance, 0.05, 0.02);
    CHECK_NEAR(hit.normal.x, 1.0, 0.05);
    CHECK_NEAR(ts_v3_length(hit.velocity), 0.0, 1e-12);
    CHECK(ts_collider_query(&c, 0.0, ts_v3(5, 5, 5), &hit) == 0);
    CHECK(hit.distance == c.far_distance);
    ts_collider_free(&c);
}

static void test_moving_box(void)
{
    const float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    box_mesh b = make_box(lo, hi);
    ts_collider c;
    ts_error err;
    CHECK(ts_collider_from_mesh(&c, "Cup", b.vertices, 8, b.triangles, 12, 0.05, 3.0, &err) == TS_OK);
    ts_transform from = ts_transform_identity(), to = ts_transform_identity();
    to.translation = ts_v3(0.2, 0.0, 0.0);
    ts_collider_set_motion(&c, from, to, 0.1);
    ts_collider_hit hit;
    /* halfway, the box spans x in [0.1, 1.1]: x = 1.05 is 0.05 inside */
    CHECK(ts_collider_query(&c, 0.5, ts_v3(1.05, 0.5, 0.5), &hit) == 1);
    CHECK_NEAR(hit.distance, -0.05, 0.02);
    CHECK_NEAR(hit.velocity.x, 2.0, 1e-6);
    CHECK_NEAR(hit.velocity.y, 0.0, 1e-9);
    /* a quarter turn about z at the end of the interval moves the outward normal with it */
    to.translation = ts_v3(0, 0, 0);
    to.rotation = ts_quat_from_rotation_vector(ts_v3(0, 0, M_PI / 2));
    ts_collider_set_motion(&c, to, to, 0.1);
    CHECK(ts_collider_query(&c, 1.0, ts_v3(-0.5, 1.05, 0.5), &hit) == 1); /* the old +x face now faces +y */
    CHECK_NEAR(hit.normal.y, 1.0, 0.05);
    ts_collider_free(&c);
}

static void test_open_mesh_named(void)
{
    const float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    box_mesh b = make_box(lo, hi);
    ts_collider c;
    ts_error err;
    CHECK(ts_collider_from_mesh(&c, "Broken", b.vertices, 8, b.triangles, 0, 0.05, 3.0, &err) != TS_OK);
    CHECK(strstr(err.message, "Broken") != NULL);
    CHECK(ts_collider_from_mesh(&c, "Box", b.vertices, 8, b.triangles, 12, -1.0, 3.0, &err) == TS_ERR_INVALID);
}

const test_case collider_tests[] = {
    {"collider/static_box_distance_normal", test_static_box},
    {"collider/moving_box_velocity_rotation", test_moving_box},
    {"collider/bad_mesh_named", test_open_mesh_named},
    {0, 0},
};
