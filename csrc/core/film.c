/* film.c - the liquid film between a rigid body and a wall (see film.h). */
#include "film.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "kernels.h"

void ts_surface_samples_free(ts_surface_samples *s)
{
    float **cols[7] = {&s->x, &s->y, &s->z, &s->nx, &s->ny, &s->nz, &s->area};
    for (int c = 0; c < 7; c++)
        free(*cols[c]), *cols[c] = NULL;
    s->n = 0;
}

static size_t pieces_of(double longest_edge, double size)
{
    double k = ceil(longest_edge / size);
    return k < 1.0 ? 1 : (size_t)k;
}

/* Each triangle cut into k x k similar triangles (k from its longest edge),
 * one sample at each one's centroid. */
ts_status ts_surface_samples_from_mesh(ts_surface_samples *s, const ts_mesh_ref *mesh, ts_vec3 centre, double size,
                                       ts_error *err)
{
    memset(s, 0, sizeof *s);
    const float *v = mesh->vertices;
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t n = 0;
        for (size_t t = 0; t < mesh->triangle_count; t++) {
            const int32_t *tri = mesh->triangles + 3 * t;
            ts_vec3 a = ts_v3(v[3 * tri[0]], v[3 * tri[0] + 1], v[3 * tri[0] + 2]);
            ts_vec3 ab = ts_v3_sub(ts_v3(v[3 * tri[1]], v[3 * tri[1] + 1], v[3 * tri[1] + 2]), a);
            ts_vec3 ac = ts_v3_sub(ts_v3(v[3 * tri[2]], v[3 * tri[2] + 1], v[3 * tri[2] + 2]), a);
            ts_vec3 normal = ts_v3_cross(ab, ac);
            double twice_area = ts_v3_length(normal);
            if (!(twice_area > 0.0))
                continue;
            size_t k = pieces_of(fmax(fmax(ts_v3_length(ab), ts_v3_length(ac)), ts_v3_length(ts_v3_sub(ac, ab))), size);
            if (pass == 0) {
                n += k * k;
                continue;
            }
            normal = ts_v3_scale(normal, 1.0 / twice_area);
            const float piece_area = (float)(0.5 * twice_area / (double)(k * k));
            for (size_t i = 0; i < k; i++)
                for (size_t j = 0; i + j < k; j++)
                    for (int up = 0; up < 2; up++) {
                        if (up == 1 && i + j + 1 >= k)
                            continue;   /* the inverted triangle between upright ones */
                        double u = (3.0 * (double)i + 1.0 + up) / (3.0 * (double)k);
                        double w = (3.0 * (double)j + 1.0 + up) / (3.0 * (double)k);
                        ts_vec3 p = ts_v3_sub(ts_v3_add(a, ts_v3_add(ts_v3_scale(ab, u), ts_v3_scale(ac, w))), centre);
                        s->x[n] = (float)p.x, s->y[n] = (float)p.y, s->z[n] = (float)p.z;
                        s->nx[n] = (float)normal.x, s->ny[n] = (float)normal.y, s->nz[n] = (float)normal.z;
                        s->area[n] = piece_area;
                        n++;
                    }
        }
        if (pass == 0) {
            total = n;
            float **cols[7] = {&s->x, &s->y, &s->z, &s->nx, &s->ny, &s->nz, &s->area};
            for (int c = 0; c < 7; c++)
                if (!(*cols[c] = malloc((total ? total : 1) * sizeof(float)))) {
                    ts_surface_samples_free(s);
                    return ts_fail(err, TS_ERR_NOMEM, "out of memory for the surface of '%s' (%zu pieces)",
                                   mesh->name, total);
                }
        }
    }
    s->n = total;
    for (size_t e = 0; e < total; e++)
        s->radius = fmax(s->radius, sqrt((double)s->x[e] * s->x[e] + (double)s->y[e] * s->y[e] + (double)s->z[e] * s->z[e]));
    return TS_OK;
}

void ts_film_free(ts_film *f)
{
    free(f->pieces), free(f->rim), free(f->share), free(f->posed), free(f->near);
    memset(f, 0, sizeof *f);
}

static int compare_index(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The push on a wall, per unit area, of liquid at rest at pressure p in front of it, over p: the layers at
 * spacing/2, 3 spacing/2, ... each pushing with the wall's gradient table (sph_model's wall force). Near 1;
 * what turns the liquid's SPH pressure into the force a layer of it would give. */
static double wall_push_per_pressure(const ts_sph_model *m)
{
    const double rho0 = m->set.rest_density, s = m->spacing;
    double sum = 0.0;
    for (double phi = 0.5 * s; phi < m->h; phi += s)
        sum += ts_sph_wall_table(&m->wall, m->wall.gradient, phi);
    return (m->set.muller ? 1.0 : 2.0) * m->mass / (rho0 * rho0 * s * s) * sum;
}

/* The walls that may come within a gap of the body, into f->near; how many. */
static size_t walls_near(const ts_sph_model *m, const ts_surface_samples *s, const ts_rigid_body *rb, float gap,
                         ts_film *f)
{
    size_t n = 0;
    for (size_t w = 0; w < m->n_boundaries; w++)
        if (ts_sph_wall_may_be_near(m, w, rb->x, s->radius + gap))
            f->near[n++] = w;
    return n;
}

/* Each piece where the body is (f->posed), and the pieces facing a wall closer than a particle fits
 * (f->pieces); how many of those. */
static size_t film_pieces(const ts_sph_model *m, const ts_surface_samples *s, const ts_rigid_body *rb, float gap,
                          size_t n_near, ts_film *f)
{
    const ts_mat3 R = ts_quat_to_mat3(rb->q);
    float *const P = f->posed;
    size_t n = 0;
    for (size_t e = 0; e < s->n; e++) {
        ts_vec3 p = ts_v3_add(rb->x, ts_m3_mul_v3(R, ts_v3(s->x[e], s->y[e], s->z[e])));
        ts_vec3 normal = ts_m3_mul_v3(R, ts_v3(s->nx[e], s->ny[e], s->nz[e]));
        P[6 * e] = (float)p.x, P[6 * e + 1] = (float)p.y, P[6 * e + 2] = (float)p.z;
        P[6 * e + 3] = (float)normal.x, P[6 * e + 4] = (float)normal.y, P[6 * e + 5] = (float)normal.z;
        float distance = gap;
        ts_vec3 wall_normal;
        int found = 0;
        for (size_t w = 0; w < n_near; w++)
            found |= ts_sph_wall_distance(m, f->near[w], p, &distance, &wall_normal);
        if (found && ts_v3_dot(normal, wall_normal) < 0.0)
            f->pieces[n++] = (uint32_t)e;
    }
    return n;
}

/* The liquid within h of the film's pieces - its rim - into f->rim, each once, in index order; how many. */
static ts_status film_rim(const ts_sph_model *m, size_t n_pieces, ts_film *f, size_t *n_rim, ts_error *err)
{
    const float h2 = m->h * m->h;
    size_t n = 0;
    for (size_t q = 0; q < n_pieces; q++) {
        const float *p = f->posed + 6 * f->pieces[q];
        ts_neighbor_ranges r;
        ts_grid_ranges_within(&m->grid, p[0], p[1], p[2], m->h + m->skin, &r);
        for (int c = 0; c < r.n; c++)
            for (uint32_t j = r.begin[c]; j < r.end[c]; j++) {
                float dx = m->x[j] - p[0], dy = m->y[j] - p[1], dz = m->z[j] - p[2];
                if (dx * dx + dy * dy + dz * dz >= h2)
                    continue;
                if (ts_grow((void **)&f->rim, &f->rim_cap, n + 1, sizeof *f->rim) != 0)
                    return ts_fail(err, TS_ERR_NOMEM, "out of memory for a body's film");
                f->rim[n++] = j;
            }
    }
    if (n > 0) {
        qsort(f->rim, n, sizeof *f->rim, compare_index);
        size_t unique = 1;
        for (size_t q = 1; q < n; q++)
            if (f->rim[q] != f->rim[unique - 1])
                f->rim[unique++] = f->rim[q];
        n = unique;
    }
    *n_rim = n;
    return TS_OK;
}

/* Near an edge, the liquid beside a film also presses into it: a rim particle whose push lands on a wetted
 * face (not in the film) but slants, pushes partly on the face in the film. Its push F is shared over the
 * surface pieces around it - piece e takes A_e W(x_e - x_j) (-n_e . lambda) along -n_e, with lambda such
 * that the shares add up to F (sum_e A_e W n_e n_e^T lambda = F, made regular by a little of its trace).
 * A push that lands in the film - the film's own edge on a curved body - is part of what the film stands
 * for: lambda 0. Into f->share, 3 per rim particle. */
static void share_rim_pushes(const ts_sph_model *m, size_t k, const ts_surface_samples *s, float gap, size_t n_rim,
                             ts_film *f)
{
    const float h2 = m->h * m->h;
    for (size_t q = 0; q < n_rim; q++) {
        const uint32_t j = f->rim[q];
        ts_vec3 push, at, lambda = ts_v3(0, 0, 0), wall_normal;
        float distance;
        if (ts_sph_body_push(m, k, j, &push, &at) &&
            !(ts_sph_nearest_wall(m, at, gap, &distance, &wall_normal) &&
              ts_v3_dot(ts_v3_sub(ts_v3(m->x[j], m->y[j], m->z[j]), at), wall_normal) < 0.0)) {
            ts_mat3 M = {{{0}}}, inverse;
            for (size_t e = 0; e < s->n; e++) {
                const float *pe = f->posed + 6 * e;
                float dx = pe[0] - m->x[j], dy = pe[1] - m->y[j], dz = pe[2] - m->z[j];
                float r2 = dx * dx + dy * dy + dz * dz;
                if (r2 >= h2)
                    continue;
                const double w = s->area[e] * ts_w_poly6(&m->k, r2);
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++)
                        M.m[a][b] += w * pe[3 + a] * pe[3 + b];
            }
            const double regular = 0.05 * (M.m[0][0] + M.m[1][1] + M.m[2][2]);
            for (int a = 0; a < 3; a++)
                M.m[a][a] += regular;
            if (regular > 0.0 && ts_m3_inverse(M, &inverse))
                lambda = ts_m3_mul_v3(inverse, push);
        }
        f->share[3 * q] = lambda.x, f->share[3 * q + 1] = lambda.y, f->share[3 * q + 2] = lambda.z;
    }
}

ts_status ts_film_push(const ts_sph_model *m, size_t k, const ts_surface_samples *s, const ts_rigid_body *rb,
                       ts_film *f, ts_vec3 *force, ts_vec3 *torque, ts_error *err)
{
    const float gap = m->spacing; /* a particle fits where the gap is 2 r_contact */
    if (ts_grow((void **)&f->near, &f->near_cap, m->n_boundaries, sizeof *f->near) != 0 ||
        ts_grow((void **)&f->pieces, &f->pieces_cap, s->n, sizeof *f->pieces) != 0 ||
        ts_grow((void **)&f->posed, &f->posed_cap, 6 * s->n, sizeof *f->posed) != 0)
        return ts_fail(err, TS_ERR_NOMEM, "out of memory for a body's film");
    const size_t n_near = walls_near(m, s, rb, gap, f);
    const size_t n_pieces = n_near ? film_pieces(m, s, rb, gap, n_near, f) : 0;
    size_t n_rim = 0;
    ts_status st = n_pieces ? film_rim(m, n_pieces, f, &n_rim, err) : TS_OK;
    if (st != TS_OK || n_rim == 0)
        return st;   /* no film, or a dry one: no liquid to carry pressure in */
    if (ts_grow((void **)&f->share, &f->share_cap, 3 * n_rim, sizeof *f->share) != 0)
        return ts_fail(err, TS_ERR_NOMEM, "out of memory for a body's film");
    share_rim_pushes(m, k, s, gap, n_rim, f);
    const double rho0 = m->set.rest_density, soft2 = 0.25 * (double)m->spacing * m->spacing, h2 = m->h * m->h;
    const ts_vec3 g = ts_v3(m->set.gravity[0], m->set.gravity[1], m->set.gravity[2]);
    const double kappa = wall_push_per_pressure(m);
    for (size_t q = 0; q < n_pieces; q++) {   /* each piece topped up to the film's pressure there */
        const uint32_t e = f->pieces[q];
        const float *P = f->posed + 6 * e;
        const ts_vec3 p = ts_v3(P[0], P[1], P[2]), n = ts_v3(P[3], P[4], P[5]);
        double sum = 0.0, weights = 0.0, covered = 0.0;
        for (size_t c = 0; c < n_rim; c++) {
            const uint32_t j = f->rim[c];
            ts_vec3 d = ts_v3_sub(p, ts_v3(m->x[j], m->y[j], m->z[j]));
            double r2 = ts_v3_dot(d, d), w = 1.0 / (r2 + soft2);
            sum += w * (kappa * fmax(m->pr[j], 0.0) + rho0 * ts_v3_dot(g, d));   /* hydrostatic: deeper, more */
            weights += w;
            if (r2 < h2)
                covered += fmax(-ts_v3_dot(ts_v3(f->share[3 * c], f->share[3 * c + 1], f->share[3 * c + 2]), n), 0.0) *
                           s->area[e] * ts_w_poly6(&m->k, r2);
        }
        double missing = sum / weights * s->area[e] - covered;
        if (!(missing > 0.0))
            continue;
        const ts_vec3 push = ts_v3_scale(n, -missing);
        *force = ts_v3_add(*force, push);
        *torque = ts_v3_add(*torque, ts_v3_cross(ts_v3_sub(p, rb->x), push));
    }
    return TS_OK;
}
