/* test_object_contacts.c - rigid objects against each other (object_contacts.h), without a solver around them. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "fixtures.h"
#include "core/object_contacts.h"

/* A box object of half-size h about `centre`, simulated (density > 0, velocity v) or keyframed still (density 0),
 * added to the contacts c. */
static void make_object(ts_object_contacts *c, ts_rigid_object *ob, box_mesh *mesh, const char *name, ts_vec3 centre,
                        double h, double density, ts_vec3 v)
{
    const float lo[3] = {(float)(centre.x - h), (float)(centre.y - h), (float)(centre.z - h)};
    const float hi[3] = {(float)(centre.x + h), (float)(centre.y + h), (float)(centre.z + h)};
    *mesh = make_box(lo, hi);
    static const double still[7] = {0, 0, 0, 1, 0, 0, 0}; /* two frames of no motion */
    double motion[14];
    memcpy(motion, still, sizeof still), memcpy(motion + 7, still, sizeof still);
    ts_object_input in = {.name = name, .vertices = mesh->vertices, .vertex_count = 8, .triangles = mesh->triangles,
                          .triangle_count = 12, .motion = density > 0.0 ? NULL : motion, .motion_frames = 2,
                          .density = density, .velocity = {v.x, v.y, v.z},
                          .origin = {centre.x, centre.y, centre.z}, .rotation = {1, 0, 0, 0}};
    ts_mass_properties mp;
    ts_error err;
    CHECK(ts_rigid_object_init(ob, &in, "object", &mp, &err) == TS_OK);
    ts_rigid_object_begin_frame(ob, 0);
    CHECK(ts_object_contacts_add(c, ob, &in, 0.01, &err) == TS_OK);
}

/* Two 10 cm cubes thrown at each other off-centre, in free flight: they never pass into each other, momentum is
 * kept, and they leave with less energy than they came (before, sand's objects went through each other). */
static void test_two_cubes_collide(void)
{
    ts_rigid_object a, b;
    box_mesh ma, mb;
    ts_object_contacts c;
    memset(&c, 0, sizeof c);
    make_object(&c, &a, &ma, "A", ts_v3(0, 0, 0), 0.05, 2000, ts_v3(1.0, 0, 0));
    make_object(&c, &b, &mb, "B", ts_v3(0.3, 0.03, 0), 0.05, 500, ts_v3(-1.0, 0, 0));
    const ts_vec3 P0 = ts_v3_add(a.rb.P, b.rb.P);
    const double e0 = ts_rigid_kinetic_energy(&a.rb) + ts_rigid_kinetic_energy(&b.rb);
    double closest = 1.0;
    const double dt = 1e-3;
    for (int step = 0; step < 300; step++) {
        ts_rigid_integrate(&a.rb, dt), ts_rigid_integrate(&b.rb, dt);
        ts_object_contacts_resolve(&c, 1.0 / 24.0, 0.0);
        closest = fmin(closest, b.rb.x.x - a.rb.x.x);
    }
    const ts_vec3 P1 = ts_v3_add(a.rb.P, b.rb.P);
    CHECK(c.found > 0);
    CHECK(closest > 0.1 - 0.004);                      /* at most a few mm into each other, at 2 m/s */
    CHECK(b.rb.x.x - a.rb.x.x > 0.12);                 /* and apart again: 0.2 s at a tenth of 2 m/s */
    CHECK(ts_v3_length(ts_v3_sub(P1, P0)) < 1e-9 * ts_v3_length(a.rb.P));
    CHECK(ts_rigid_kinetic_energy(&a.rb) + ts_rigid_kinetic_energy(&b.rb) < 0.5 * e0); /* restitution 0.1 */
    CHECK(ts_rigid_velocity(&b.rb).x > ts_rigid_velocity(&a.rb).x);
    ts_object_contacts_free(&c);
}

/* A cube dropped on a keyframed one comes to rest on top of it, its face on the other's. */
static void test_cube_rests_on_a_keyframed_one(void)
{
    ts_rigid_object floor, top;
    box_mesh mf, mt;
    ts_object_contacts c;
    memset(&c, 0, sizeof c);
    make_object(&c, &floor, &mf, "Floor", ts_v3(0, 0, 0), 0.2, 0.0, ts_v3(0, 0, 0));
    make_object(&c, &top, &mt, "Top", ts_v3(0.05, 0, 0.4), 0.05, 800, ts_v3(0, 0, 0));
    const double dt = 1e-3;
    for (int step = 0; step < 1500; step++) {
        ts_rigid_clear_forces(&top.rb);
        ts_rigid_add_force_at(&top.rb, ts_v3(0, 0, -9.81 * top.rb.mass), top.rb.x);
        ts_rigid_integrate(&top.rb, dt);
        ts_object_contacts_resolve(&c, 1.0 / 24.0, 0.0);
    }
    CHECK_NEAR(top.rb.x.z, 0.25, 0.003);
    CHECK(ts_v3_length(ts_rigid_velocity(&top.rb)) < 0.02);
    CHECK_NEAR(floor.rb.x.z, 0.0, 1e-15); /* a keyframed object is never pushed */
    ts_object_contacts_free(&c);
}

const test_case object_contact_tests[] = {
    {"object_contacts/two_cubes_collide", test_two_cubes_collide},
    {"object_contacts/cube_rests_on_a_keyframed_one", test_cube_rests_on_a_keyframed_one},
    {0, 0},
};
