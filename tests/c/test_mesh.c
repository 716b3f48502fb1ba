/* test_mesh.c - closed meshes pass, open, inconsistent and empty ones fail
 * with the object's name in the message. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "core/mesh.h"
#include "fixtures.h"

static void test_closed_and_open(void)
{
    const float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    box_mesh b = make_box(lo, hi);
    ts_error err;
    CHECK(ts_mesh_check_closed(b.vertices, 8, b.triangles, 12, "Cube", &err) == TS_OK);
    /* drop the last face: open */
    CHECK(ts_mesh_check_closed(b.vertices, 8, b.triangles, 11, "Cube", &err) == TS_ERR_INVALID);
    CHECK(strstr(err.message, "Cube") && strstr(err.message, "open"));
    /* flip one face: inconsistent winding */
    box_mesh f = b;
    int32_t s = f.triangles[1];
    f.triangles[1] = f.triangles[2];
    f.triangles[2] = s;
    CHECK(ts_mesh_check_closed(f.vertices, 8, f.triangles, 12, "Cube", &err) == TS_ERR_INVALID);
    CHECK(ts_mesh_check_closed(b.vertices, 0, b.triangles, 0, "Empty", &err) == TS_ERR_INVALID);
    CHECK(strstr(err.message, "Empty") && strstr(err.message, "empty"));
    b.vertices[4] = NAN;
    CHECK(ts_mesh_check_closed(b.vertices, 8, b.triangles, 12, "Cube", &err) == TS_ERR_INVALID);
    float bounds[6];
    box_mesh c = make_box(lo, hi);
    ts_mesh_bounds(c.vertices, 8, bounds);
    CHECK(bounds[0] == 0 && bounds[5] == 1);
}

const test_case mesh_tests[] = {
    {"mesh/closed_open_inconsistent_empty", test_closed_and_open},
    {0, 0},
};
