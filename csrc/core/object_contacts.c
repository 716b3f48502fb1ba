/* object_contacts.c - a solver's rigid objects against each other (see object_contacts.h). */
#include "object_contacts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"

#define PASSES 3            /* over all pairs per call: enough for a stack of a few objects to settle */
#define MAX_POINTS 65536    /* per object; the spacing widens until they fit */
#define MAX_VOXELS 128.0    /* along an object's longest side */

static ts_vec3 point_at(const float *p, int32_t k) { return ts_v3(p[3 * k], p[3 * k + 1], p[3 * k + 2]); }

/* Points on the surface: the vertices once, then per triangle a lattice of k x k cells over it (k from its longest
 * edge), its corners left out. Counts only when `out` is NULL. */
static size_t surface_points(const float *rest, size_t vertex_count, const int32_t *tri, size_t triangle_count,
                             double spacing, float *out)
{
    size_t n = 0;
    if (out)
        memcpy(out, rest, 3 * vertex_count * sizeof *out);
    n += vertex_count;
    for (size_t t = 0; t < triangle_count; t++) {
        const ts_vec3 a = point_at(rest, tri[3 * t]), b = point_at(rest, tri[3 * t + 1]);
        const ts_vec3 c = point_at(rest, tri[3 * t + 2]);
        const ts_vec3 ab = ts_v3_sub(b, a), ac = ts_v3_sub(c, a);
        const double longest = fmax(fmax(ts_v3_length(ab), ts_v3_length(ac)), ts_v3_length(ts_v3_sub(c, b)));
        const int k = (int)fmin(ceil(longest / spacing), 4096.0);
        for (int i = 0; i <= k; i++)
            for (int j = 0; i + j <= k; j++) {
                if ((i == 0 && j == 0) || i == k || j == k)
                    continue; /* a corner: a vertex */
                if (out) {
                    const ts_vec3 q =
                        ts_v3_add(a, ts_v3_add(ts_v3_scale(ab, (double)i / k), ts_v3_scale(ac, (double)j / k)));
                    out[3 * n] = (float)q.x, out[3 * n + 1] = (float)q.y, out[3 * n + 2] = (float)q.z;
                }
                n++;
            }
    }
    return n;
}

ts_status ts_object_contacts_add(ts_object_contacts *c, ts_rigid_object *object, const ts_object_input *in,
                                 double spacing, ts_error *err)
{
    if ((c->n & (c->n - 1)) == 0) { /* grow at powers of two */
        size_t cap = c->n ? 2 * c->n : 1;
        if (ts_resize((void **)&c->objects, cap, sizeof *c->objects) ||
            ts_resize((void **)&c->shapes, cap, sizeof *c->shapes) ||
            ts_resize((void **)&c->left_out, cap, sizeof *c->left_out))
            return ts_fail(err, TS_ERR_NOMEM, "out of memory for the contacts of object '%s'", object->name);
    }
    ts_object_shape *sh = &c->shapes[c->n];
    memset(sh, 0, sizeof *sh);
    c->left_out[c->n] = 0;
    const size_t nv = in->vertex_count, nt = in->triangle_count;
    float *rest = malloc(3 * nv * sizeof *rest); /* the body frame: about the centre of mass at frame_start */
    if (!rest)
        return ts_fail(err, TS_ERR_NOMEM, "out of memory for the contacts of object '%s'", object->name);
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    const double centre[3] = {object->centroid0.x, object->centroid0.y, object->centroid0.z};
    for (size_t v = 0; v < nv; v++) {
        for (int d = 0; d < 3; d++) {
            rest[3 * v + d] = (float)(in->vertices[3 * v + d] - centre[d]);
            lo[d] = fmin(lo[d], rest[3 * v + d]), hi[d] = fmax(hi[d], rest[3 * v + d]);
        }
        sh->reach = fmax(sh->reach, ts_v3_length(point_at(rest, (int32_t)v)));
    }
    /* an object thinner than 8 spacings is sampled finer, so its distance has a few voxels across it; a large one
     * coarser, at most MAX_VOXELS along its longest side (a 3 m rock among 5 mm DEs: 2.3 cm, 8 MB) */
    const double longest = fmax(fmax(hi[0] - lo[0], hi[1] - lo[1]), hi[2] - lo[2]);
    const double thinnest = fmin(fmin(hi[0] - lo[0], hi[1] - lo[1]), hi[2] - lo[2]);
    const double step = fmax(fmin(spacing, thinnest / 8.0), longest / MAX_VOXELS);
    ts_status st = ts_collider_from_mesh(&sh->distance, object->name, rest, nv, in->triangles, nt, step, 2.0, err);
    double every = step;
    while (st == TS_OK && (sh->point_count = surface_points(rest, nv, in->triangles, nt, every, NULL)) > MAX_POINTS &&
           every < 1e30)
        every *= 1.5;
    if (st == TS_OK && !(sh->points = malloc(3 * sh->point_count * sizeof *sh->points))) {
        ts_collider_free(&sh->distance);
        st = ts_fail(err, TS_ERR_NOMEM, "out of memory for the contacts of object '%s'", object->name);
    }
    if (st == TS_OK) {
        surface_points(rest, nv, in->triangles, nt, every, sh->points);
        c->objects[c->n++] = object;
    }
    free(rest);
    return st;
}

void ts_object_contacts_free(ts_object_contacts *c)
{
    for (size_t k = 0; k < c->n; k++)
        ts_collider_free(&c->shapes[k].distance), free(c->shapes[k].points);
    free(c->objects);
    free(c->shapes);
    free(c->left_out);
    memset(c, 0, sizeof *c);
}

void ts_object_contacts_leave_out(ts_object_contacts *c, size_t k, int out)
{
    if (k < c->n)
        c->left_out[k] = (uint8_t)(out != 0);
}

/* The deepest of a's points inside b: how deep (0 if none), where (world), and b's outward normal there (world). */
static double deepest_inside(const ts_object_shape *sa, const ts_rigid_body *A, const ts_object_shape *sb,
                             const ts_rigid_body *B, ts_vec3 *point, ts_vec3 *normal)
{
    const ts_mat3 Ra = ts_quat_to_mat3(A->q), Rb = ts_quat_to_mat3(B->q);
    const ts_mat3 to_b = ts_m3_mul(ts_m3_transpose(Rb), Ra); /* a's body frame to b's */
    const ts_vec3 shift = ts_m3_mul_v3(ts_m3_transpose(Rb), ts_v3_sub(A->x, B->x));
    const double reach2 = sb->reach * sb->reach;
    double deepest = 0.0;
    for (size_t i = 0; i < sa->point_count; i++) {
        const float *q = sa->points + 3 * i;
        ts_vec3 p = ts_v3_add(ts_m3_mul_v3(to_b, ts_v3(q[0], q[1], q[2])), shift);
        ts_collider_hit hit;
        if (ts_v3_dot(p, p) > reach2 || !ts_collider_query(&sb->distance, 0.0, p, &hit) || !(-hit.distance > deepest))
            continue;
        deepest = -hit.distance;
        *point = ts_v3_add(B->x, ts_m3_mul_v3(Rb, p));
        *normal = ts_m3_mul_v3(Rb, hit.normal);
    }
    return deepest;
}

/* Objects i and j: the deeper of i's points in j and j's in i, resolved. */
static void pair_contact(ts_object_contacts *c, size_t i, size_t j, double frame_dt, double s)
{
    ts_rigid_object *oi = c->objects[i], *oj = c->objects[j];
    if ((oi->keyframed && oj->keyframed) || c->left_out[i] || c->left_out[j])
        return;
    const double reach = c->shapes[i].reach + c->shapes[j].reach;
    const ts_vec3 apart = ts_v3_sub(oi->rb.x, oj->rb.x);
    if (ts_v3_dot(apart, apart) > reach * reach)
        return;
    ts_vec3 p_ij, n_ij, p_ji, n_ji;
    double d_ij = deepest_inside(&c->shapes[i], &oi->rb, &c->shapes[j], &oj->rb, &p_ij, &n_ij);
    double d_ji = deepest_inside(&c->shapes[j], &oj->rb, &c->shapes[i], &oi->rb, &p_ji, &n_ji);
    if (d_ij <= 0.0 && d_ji <= 0.0)
        return;
    /* a: the object whose point is inside b; n: b's outward normal there, from b toward a */
    ts_rigid_object *a = d_ij >= d_ji ? oi : oj, *b = d_ij >= d_ji ? oj : oi;
    const ts_vec3 point = d_ij >= d_ji ? p_ij : p_ji, n = d_ij >= d_ji ? n_ij : n_ji;
    const double depth = fmax(d_ij, d_ji);
    if (b->keyframed)
        ts_rigid_resolve_contact(&a->rb, point, n, depth, ts_rigid_object_point_velocity(b, frame_dt, s, point),
                                 TS_BODY_RESTITUTION, TS_BODY_FRICTION);
    else if (a->keyframed)
        ts_rigid_resolve_contact(&b->rb, point, ts_v3_scale(n, -1.0), depth,
                                 ts_rigid_object_point_velocity(a, frame_dt, s, point), TS_BODY_RESTITUTION,
                                 TS_BODY_FRICTION);
    else
        ts_rigid_resolve_pair_contact(&a->rb, &b->rb, point, n, depth, TS_BODY_RESTITUTION, TS_BODY_FRICTION);
    c->found++;
}

void ts_object_contacts_resolve(ts_object_contacts *c, double frame_dt, double s)
{
    for (int pass = 0; pass < PASSES; pass++) {
        const size_t before = c->found;
        for (size_t i = 0; i < c->n; i++)
            for (size_t j = i + 1; j < c->n; j++)
                pair_contact(c, i, j, frame_dt, s);
        if (c->found == before)
            break; /* nothing moved: the next pass would find nothing either */
    }
}
