/* test_fracture.c - the fracture effect's parts in C alone (and so under
 * ASan/UBSan): the spring levels of figs 2 and 4 on hand-made examples and
 * eq. 1; Delaunay edges of a known point set; Voronoi pieces of a convex and
 * a non-convex object that add up to it; the brittleness map lookup; a wall
 * that stands under gravity and one that a projectile breaks; bad input
 * refused with the object or parameter named. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/bond_levels.h"
#include "core/brittleness.h"
#include "core/delaunay.h"
#include "core/fracture.h"
#include "core/fragments.h"
#include "core/rigid.h"
#include "fixtures.h"

/* A chain 0-1-2-3 with lengths 1, 3, 2: the two short springs pair the
 * elements at level 0, the long one joins the pairs at level 1 (fig. 2);
 * with the long one hard it is level 0 and the others climb (fig. 4). */
static void levels_pair_clusters_shortest_first(void)
{
    ts_edge e[] = {{0, 1}, {1, 2}, {2, 3}};
    double len[] = {1, 3, 2};
    int level[3], H;
    ts_error err;
    CHECK(ts_bond_levels(4, e, len, NULL, 3, level, &H, &err) == TS_OK);
    CHECK(level[0] == 0 && level[2] == 0 && level[1] == 1 && H == 1);
    uint8_t hard[] = {0, 1, 0};
    CHECK(ts_bond_levels(4, e, len, hard, 3, level, &H, &err) == TS_OK);
    CHECK(level[1] == 0 && level[0] == 1 && level[2] == 2 && H == 2);
    /* a square: two pairs, then both springs between the pairs share level 1 (fig. 2 d, e) */
    ts_edge sq[] = {{0, 1}, {2, 3}, {0, 2}, {1, 3}};
    double sl[] = {1, 1.1, 2, 2.1};
    int sq_level[4];
    CHECK(ts_bond_levels(4, sq, sl, NULL, 4, sq_level, &H, &err) == TS_OK);
    CHECK(sq_level[0] == 0 && sq_level[1] == 0 && sq_level[2] == 1 && sq_level[3] == 1 && H == 1);
    /* eq. 1 */
    CHECK_NEAR(ts_bond_strength(0, 4, 1.0, 0.001, 30), 1.0, 1e-15);
    CHECK_NEAR(ts_bond_strength(4, 4, 1.0, 0.001, 30), 0.001, 1e-15);
    CHECK_NEAR(ts_bond_strength(2, 4, 1.0, 0.001, 2), 1.0 - 0.999 * 0.25, 1e-15);
    CHECK_NEAR(ts_bond_strength(3, 0, 0.7, 0.001, 2), 0.7, 1e-15);
}

/* Four corners of a tetrahedron and a point inside: 6 + 4 edges. */
static void delaunay_of_a_tetrahedron_and_its_centre(void)
{
    double p[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0.2, 0.25, 0.22};
    ts_edge *e = NULL;
    size_t m = 0;
    ts_error err;
    CHECK(ts_delaunay_edges(p, 5, &e, &m, &err) == TS_OK);
    CHECK(m == 10);
    for (size_t k = 0; k < m; k++)
        CHECK(e[k].a < e[k].b && e[k].b < 5);
    free(e);
    double flat[15] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0.5, 0.5, 0};
    CHECK(ts_delaunay_edges(flat, 5, &e, &m, &err) != TS_OK && strstr(err.message, "plane"));
    free(e);
}

static double fragments_volume(const ts_fragments *f, const double *centres, size_t n, double *per_cell)
{
    double total = 0;
    memset(per_cell, 0, n * sizeof *per_cell);
    for (size_t t = 0; t < f->triangle_count; t++) {
        const float *p = f->position + 9 * t;
        const double *c = centres + 3 * f->element[t];
        double a[3], b[3], d[3];
        for (int k = 0; k < 3; k++)
            a[k] = p[k] + c[k], b[k] = p[3 + k] + c[k], d[k] = p[6 + k] + c[k];
        double v = (a[0] * (b[1] * d[2] - b[2] * d[1]) - a[1] * (b[0] * d[2] - b[2] * d[0]) +
                    a[2] * (b[0] * d[1] - b[1] * d[0])) / 6.0;
        per_cell[f->element[t]] += v;
        total += v;
    }
    return total;
}

static void random_centres_in(double *c, size_t n, const float lo[3], const float hi[3], int (*inside)(const double *))
{
    unsigned s = 12345;
    for (size_t i = 0; i < n;) {
        for (int a = 0; a < 3; a++) {
            s = s * 1103515245u + 12345u;
            c[3 * i + a] = lo[a] + (hi[a] - lo[a]) * ((s >> 8) & 0xffff) / 65536.0;
        }
        if (!inside || inside(c + 3 * i))
            i++;
    }
}

/* The pieces of a box add up to the box, each has volume, and fracture faces exist. */
static void voronoi_pieces_rebuild_a_box(void)
{
    float lo[3] = {0, 0, 0}, hi[3] = {1, 0.5, 0.25};
    box_mesh b = make_box(lo, hi);
    enum { N = 40 };
    double c[3 * N], per[N];
    random_centres_in(c, N, lo, hi, NULL);
    ts_edge *e = NULL;
    size_t m = 0;
    ts_error err;
    CHECK(ts_delaunay_edges(c, N, &e, &m, &err) == TS_OK);
    ts_fragments f;
    CHECK(ts_fragments_build(b.vertices, b.triangles, 12, NULL, c, N, e, m, &f, &err) == TS_OK);
    CHECK_NEAR(fragments_volume(&f, c, N, per), 0.125, 1e-6);
    size_t inner = 0;
    for (size_t t = 0; t < f.triangle_count; t++)
        inner += f.material[t] == 1;
    CHECK(inner > 0 && inner < f.triangle_count);
    for (int i = 0; i < N; i++)
        CHECK(per[i] > 0);
    ts_fragments_free(&f);
    free(e);
}

static int in_l_shape(const double *p) { return !(p[0] > 0.5 && p[2] > 0.5); }

/* An L-shaped (non-convex) solid: two boxes' faces joined into one closed mesh. */
static void voronoi_pieces_rebuild_an_l_shape(void)
{
    /* the L in the xz plane: [0,1]x[0,1]x[0,0.5] plus [0,0.5]x[0,1]x[0.5,1], extruded along y */
    float v[] = {0, 0, 0, 1, 0, 0, 1, 0, 0.5, 0.5, 0, 0.5, 0.5, 0, 1, 0, 0, 1,
                 0, 1, 0, 1, 1, 0, 1, 1, 0.5, 0.5, 1, 0.5, 0.5, 1, 1, 0, 1, 1};
    /* front (y=0, normal -y) and back (y=1) L faces, then the six side quads */
    int32_t t[] = {0, 1, 2, 0, 2, 3, 0, 3, 4, 0, 4, 5,
                   6, 8, 7, 6, 9, 8, 6, 10, 9, 6, 11, 10,
                   0, 6, 7, 0, 7, 1, 1, 7, 8, 1, 8, 2, 2, 8, 9, 2, 9, 3,
                   3, 9, 10, 3, 10, 4, 4, 10, 11, 4, 11, 5, 5, 11, 6, 5, 6, 0};
    ts_mass_properties mp;
    ts_error err;
    CHECK(ts_mesh_mass_properties(v, 12, t, 20, "L", &mp, &err) == TS_OK);
    CHECK_NEAR(mp.volume, 0.75, 1e-6);
    enum { N = 30 };
    double c[3 * N], per[N];
    float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    random_centres_in(c, N, lo, hi, in_l_shape);
    ts_edge *e = NULL;
    size_t m = 0;
    CHECK(ts_delaunay_edges(c, N, &e, &m, &err) == TS_OK);
    ts_fragments f;
    CHECK(ts_fragments_build(v, t, 20, NULL, c, N, e, m, &f, &err) == TS_OK);
    CHECK_NEAR(fragments_volume(&f, c, N, per), 0.75, 1e-5);
    ts_fragments_free(&f);
    free(e);
}

static void brittleness_map_lookup(void)
{
    float lo[3] = {0, 0, 0}, hi[3] = {2, 0.1, 1};
    box_mesh b = make_box(lo, hi);
    float pixels[] = {0, 0, 1, 1};   /* 2 x 2, bottom row black */
    ts_brittleness_map m = {pixels, 2, 2, TS_MAP_PLANAR_Y, b.vertices, b.triangles, 12, NULL, {0}};
    ts_error err;
    CHECK(ts_brittleness_init(&m, "Wall", 8, &err) == TS_OK);
    CHECK_NEAR(ts_brittleness_at(&m, ts_v3(1.0, 0.05, 0.1)), 0.0, 1e-12);
    CHECK_NEAR(ts_brittleness_at(&m, ts_v3(0.3, 0.05, 0.9)), 1.0, 1e-12);
    CHECK_NEAR(ts_brittleness_at(&m, ts_v3(0.3, 0.05, 0.5)), 0.5, 1e-12);
    m.projection = TS_MAP_UV;
    CHECK(ts_brittleness_init(&m, "Wall", 8, &err) != TS_OK && strstr(err.message, "Wall") &&
          strstr(err.message, "UV"));
}

static ts_fracture_params wall_params(void)
{
    ts_fracture_params p = ts_fracture_params_default();
    p.element_count = 300, p.density = 2400, p.contact_time = 0.004, p.restitution = 0.3, p.friction = 0.5;
    p.bond_stiffness = 1, p.strain_limit = 0.02, p.bend_limit = 0.1, p.twist_limit = 0.2;
    p.p0 = 1, p.pH = 1, p.n = 1, p.hard_threshold = 0.5, p.max_spring_length = 1.6;
    p.anchored = 1, p.debris_energy = 0, p.debris_size = 0.005, p.debris_spread = 2, p.max_debris = 1000;
    p.gravity[2] = -9.81, p.steps_per_contact = 15, p.frame_start = 1, p.fps = 24, p.seed = 3;
    return p;
}

/* A wall on a ground slab: with strong springs it stands whole; a fast
 * ball through weak springs breaks it into pieces, without NaN. */
static void wall_stands_and_a_ball_breaks_it(void)
{
    float wlo[3] = {-0.5f, -0.04f, 0.0f}, whi[3] = {0.5f, 0.04f, 0.6f};
    float glo[3] = {-2, -2, -0.2f}, ghi[3] = {2, 2, 0};
    float blo[3] = {-0.1f, -0.5f, 0.3f}, bhi[3] = {0.1f, -0.3f, 0.5f};
    box_mesh wall = make_box(wlo, whi), ground = make_box(glo, ghi), ball = make_box(blo, bhi);
    ts_fracture_object o[3];
    memset(o, 0, sizeof o);
    o[0] = (ts_fracture_object){.role = TS_FRACTURE_BREAKABLE, .in = {.name = "Wall", .vertices = wall.vertices,
                                .vertex_count = 8, .triangles = wall.triangles, .triangle_count = 12}};
    o[1] = (ts_fracture_object){.role = TS_FRACTURE_OBSTACLE, .in = {.name = "Ground", .vertices = ground.vertices,
                                .vertex_count = 8, .triangles = ground.triangles, .triangle_count = 12}};
    o[2] = (ts_fracture_object){.role = TS_FRACTURE_PROJECTILE, .in = {.name = "Ball", .vertices = ball.vertices,
                                .vertex_count = 8, .triangles = ball.triangles, .triangle_count = 12,
                                .density = 8000, .velocity = {0, 12, 0}, .origin = {0, -0.4, 0.4},
                                .rotation = {1, 0, 0, 0}}, .launch_frame = 3};
    ts_fracture_params p = wall_params();
    ts_error err;
    char dir[] = "/tmp/tsubu-fracture-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    for (int shot = 0; shot < 2; shot++) {
        ts_fracture *f = NULL;
        if (shot)
            p.pH = 0.05, p.n = 1;
        CHECK(ts_fracture_create(&f, &p, o, shot ? 3 : 2, &err) == TS_OK);
        if (!f) {
            fprintf(stderr, "  %s\n", err.message);
            return;
        }
        ts_fracture_stats st;
        ts_fracture_get_stats(f, &st);
        CHECK_NEAR(st.mass, 2400 * 1.0 * 0.08 * 0.6, 1e-4);
        CHECK(st.springs > 3 * st.elements && st.pieces == 1);
        ts_frame_loop loop = {1, 10, 24.0, 2000, dir, 1, NULL, NULL, 0.0, 0, 0};
        CHECK(ts_run_frames(&loop, &ts_fracture_ops, f, 1, &err) == TS_OK);
        ts_fracture_get_stats(f, &st);
        if (shot == 0)
            CHECK(st.broken == 0 && st.pieces == 1 && st.max_speed < 0.05);
        else
            CHECK(st.broken > 10 && st.pieces > 3);
        ts_fracture_destroy(f);
    }
    CHECK(remove_dir(dir));
}

static void bad_fracture_input_is_named(void)
{
    float lo[3] = {0, 0, 0}, hi[3] = {1, 0.1f, 1};
    box_mesh wall = make_box(lo, hi);
    ts_fracture_object o = {.role = TS_FRACTURE_BREAKABLE, .in = {.name = "Wall", .vertices = wall.vertices, .vertex_count = 8,
                                                    .triangles = wall.triangles, .triangle_count = 11}};
    ts_fracture_params p = wall_params();
    ts_fracture *f = NULL;
    ts_error err;
    CHECK(ts_fracture_create(&f, &p, &o, 1, &err) != TS_OK && strstr(err.message, "Wall") && !f);
    o.in.triangle_count = 12;
    p.pH = 0;
    CHECK(ts_fracture_create(&f, &p, &o, 1, &err) != TS_OK && strstr(err.message, "pH"));
    p = wall_params();
    p.element_count = 0;
    CHECK(ts_fracture_create(&f, &p, &o, 1, &err) != TS_OK && strstr(err.message, "element_count"));
    p = wall_params();
    p.friction = NAN;
    CHECK(ts_fracture_create(&f, &p, &o, 1, &err) != TS_OK && strstr(err.message, "friction"));
    p = wall_params();
    p.element_radius = 0.2;
    CHECK(ts_fracture_create(&f, &p, &o, 1, &err) != TS_OK && strstr(err.message, "Wall"));
    p = wall_params();
    o.role = TS_FRACTURE_OBSTACLE;
    CHECK(ts_fracture_create(&f, &p, &o, 1, &err) != TS_OK && strstr(err.message, "Breakable"));
}

const test_case fracture_tests[] = {
    {"fracture/levels_pair_clusters_shortest_first", levels_pair_clusters_shortest_first},
    {"fracture/delaunay_of_a_tetrahedron_and_its_centre", delaunay_of_a_tetrahedron_and_its_centre},
    {"fracture/voronoi_pieces_rebuild_a_box", voronoi_pieces_rebuild_a_box},
    {"fracture/voronoi_pieces_rebuild_an_l_shape", voronoi_pieces_rebuild_an_l_shape},
    {"fracture/brittleness_map_lookup", brittleness_map_lookup},
    {"fracture/wall_stands_and_a_ball_breaks_it", wall_stands_and_a_ball_breaks_it},
    {"fracture/bad_input_is_named", bad_fracture_input_is_named},
    {NULL, NULL},
};
