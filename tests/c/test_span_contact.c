/* test_span_contact.c - a sphere against HS-map spans (ts_span_contact), the
 * sand paper's fig. 3 cases, on a bed of 3 x 3 unit columns and on an
 * object's span map: overlaps and normals exact, no contact where none. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "core/hsmap.h"
#include "fixtures.h"

static const ts_columns GRID = {0.0, 0.0, 1.0, 3, 3};

/* The contact of a sphere with a bed whose column (i, j) is raised to `high`. */
static int bed_contact(int i, int j, double high, ts_vec3 p, double r, double *d, ts_vec3 *n)
{
    double heights[9] = {0};
    if (i >= 0)
        heights[i + 3 * j] = high;
    ts_span_source bed = {NULL, heights, &GRID};
    return ts_span_contact(&bed, p, r, d, n);
}

#define CHECK_V3(v, X, Y, Z) CHECK(fabs((v).x - (X)) < 1e-12 && fabs((v).y - (Y)) < 1e-12 && fabs((v).z - (Z)) < 1e-12)

static void test_bed_cases(void)
{
    double d;
    ts_vec3 n;
    /* (a) resting on its own column's top; the neighbours' faces are exactly r away: not touched */
    CHECK(bed_contact(-1, 0, 0, ts_v3(1.5, 1.5, 0.4), 0.5, &d, &n) && fabs(d - 0.1) < 1e-12);
    CHECK_V3(n, 0, 0, -1);
    /* above it, no contact */
    CHECK(!bed_contact(-1, 0, 0, ts_v3(1.5, 1.5, 0.6), 0.5, &d, &n));
    /* (a) a centre inside the span goes out the shortest way: up, by the depth plus r */
    CHECK(bed_contact(-1, 0, 0, ts_v3(1.5, 1.5, -0.3), 0.5, &d, &n) && fabs(d - 0.8) < 1e-12);
    CHECK_V3(n, 0, 0, -1);
    /* ... or through a side whose neighbour is open at its height */
    CHECK(bed_contact(1, 1, 1.0, ts_v3(1.9, 1.5, 0.5), 0.2, &d, &n) && fabs(d - 0.3) < 1e-12);
    CHECK_V3(n, -1, 0, 0);
    /* (b) beside a raised neighbour, at a height within its span: the side, horizontally */
    CHECK(bed_contact(2, 1, 5.0, ts_v3(1.8, 1.5, 2.0), 0.5, &d, &n) && fabs(d - 0.3) < 1e-12);
    CHECK_V3(n, 1, 0, 0);
    /* (c) over a raised corner neighbour: its top face, where the sphere's section reaches down */
    CHECK(bed_contact(2, 2, 1.0, ts_v3(1.9, 1.9, 1.3), 0.5, &d, &n));
    CHECK(fabs(d - (1.0 - (1.3 - sqrt(0.25 - 0.02)))) < 1e-12);
    CHECK_V3(n, 0, 0, -1);
    /* the bed ends in walls: a sphere at its edge meets one */
    CHECK(bed_contact(-1, 0, 0, ts_v3(2.9, 1.5, 0.3), 0.2, &d, &n) && fabs(d - 0.1) < 1e-12);
    CHECK_V3(n, 1, 0, 0);
    /* two contacts are averaged weighted by overlap: floor 0.1 and wall 0.15 */
    CHECK(bed_contact(-1, 0, 0, ts_v3(2.95, 1.5, 0.1), 0.2, &d, &n));
    CHECK(fabs(d - (0.1 * 0.1 + 0.15 * 0.15) / 0.25) < 1e-12);
    double len = sqrt(0.15 * 0.15 + 0.1 * 0.1);
    CHECK_V3(n, 0.15 / len, 0, -0.1 / len);
}

static void test_object_spans(void)
{
    /* a box over columns 0-2, from z = 1 to 2: a sphere below it touches its bottom face */
    const float lo[3] = {0.0f, 0.0f, 1.0f}, hi[3] = {3.0f, 3.0f, 2.0f};
    box_mesh b = make_box(lo, hi);
    double v[24];
    for (int k = 0; k < 24; k++)
        v[k] = b.vertices[k];
    ts_hsmap map;
    ts_error err;
    ts_hsmap_init(&map);
    CHECK(ts_hsmap_build(&map, &GRID, v, 8, b.triangles, 12, &err) == TS_OK);
    ts_span_source src = {&map, NULL, &GRID};
    double d;
    ts_vec3 n;
    CHECK(ts_span_contact(&src, ts_v3(1.5, 1.5, 0.7), 0.5, &d, &n) && fabs(d - 0.2) < 1e-9);
    CHECK_V3(n, 0, 0, 1); /* from the sphere up into the box */
    CHECK(ts_span_contact(&src, ts_v3(1.5, 1.5, 2.3), 0.5, &d, &n) && fabs(d - 0.2) < 1e-9);
    CHECK_V3(n, 0, 0, -1);
    CHECK(!ts_span_contact(&src, ts_v3(1.5, 1.5, 0.4), 0.5, &d, &n));
    /* above its corner column: the top face only */
    CHECK(ts_span_contact(&src, ts_v3(0.5, 0.5, 2.4), 0.5, &d, &n) && fabs(d - 0.1) < 1e-9);
    CHECK_V3(n, 0, 0, -1);
    ts_hsmap_free(&map);
}

const test_case span_contact_tests[] = {
    {"span_contact/bed_cases", test_bed_cases},
    {"span_contact/object_spans", test_object_spans},
    {NULL, NULL},
};
