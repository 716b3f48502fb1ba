/* sand_contacts.c - the forces on DEs from each other, the objects and the bed (sand paper §4.3),
 * the integration of DEs and objects, and the contact grid. */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sand_internal.h"
#include "mesh.h"
#include "parallel.h"
#include "rng.h"

/* ------------------------------------------------------------- contacts */

/* Velocity of an object's material at a world point now. */
static ts_vec3 object_velocity(const ts_sand *s, const object *ob, ts_vec3 point)
{
    return ts_rigid_object_point_velocity(&ob->body, s->now.frame_dt, s->now.s_begin, point); /* during the force pass */
}

/* The history of DE i's contact with a source, zero if new. */
static contact_history source_history(const contacts *old, size_t i, int source)
{
    contact_history h = {ts_v3(0, 0, 0), ts_v3(0, 0, 0)};
    for (int k = 0; k < SOURCE_SLOTS; k++)
        if (old->source[i * SOURCE_SLOTS + k] == source) {
            const double *d = old->source_d_t + (i * SOURCE_SLOTS + (size_t)k) * 3;
            h.d_t = ts_v3(d[0], d[1], d[2]);
            if (old->source_m_r) {
                const double *m = old->source_m_r + (i * SOURCE_SLOTS + (size_t)k) * 3;
                h.m_r = ts_v3(m[0], m[1], m[2]);
            }
        }
    return h;
}

/* The rolling resistance of a contact of stiffness k (ts_rolling_torque: k_r = k_t R_eff^2); called only when
 * rolling friction is on, the only time the histories m_r are kept. */
static ts_vec3 rolling(const ts_sand *s, double k, double r_eff, double F_n, ts_vec3 u_n, ts_vec3 w_rel, double dt,
                       ts_vec3 *m_r)
{
    return ts_rolling_torque(k * r_eff * r_eff, s->p.rolling_friction * r_eff * fabs(F_n), u_n, w_rel, dt, m_r);
}

typedef struct element_force {
    ts_vec3 F, T;
} element_force;

/* The contact histories one DE builds in a force pass, before they replace
 * its slots (which the pass reads for the old histories). */
typedef struct staged_contacts {
    int count, sources;
    uint32_t partner[MAX_CONTACTS];
    ts_vec3 d_t[MAX_CONTACTS], m_r[MAX_CONTACTS]; /* m_r only with rolling friction */
    int16_t source[SOURCE_SLOTS];
    contact_history source_history[SOURCE_SLOTS];
} staged_contacts;

/* Can a DE at p of radius r touch an object's span map at all? ts_span_contact
 * looks at the DE's column and the eight around it, and every span lies
 * above the object's lowest point. */
static int object_within_reach(const object *ob, const ts_columns *cols, ts_vec3 p, double r)
{
    const ts_hsmap *m = &ob->map;
    int ci, cj;
    ts_columns_index(cols, p.x, p.y, &ci, &cj);
    return p.z + r > ob->lowest && ci + 1 >= m->i0 && ci - 1 < m->i0 + m->nx && cj + 1 >= m->j0 &&
           cj - 1 < m->j0 + m->ny;
}

/* Can a DE at p of radius r touch the bed? Only below the top of its column
 * or of one around it (the bed's outer edges are walls). */
static int bed_within_reach(const ts_sand *s, ts_vec3 p, double r)
{
    int ci, cj;
    ts_columns_index(&s->cols, p.x, p.y, &ci, &cj);
    for (int j = cj - 1; j <= cj + 1; j++)
        for (int i = ci - 1; i <= ci + 1; i++) {
            if (i < 0 || j < 0 || i >= s->cols.nx || j >= s->cols.ny ||
                p.z - r < s->bed[(size_t)i + (size_t)s->cols.nx * j])
                return 1;
        }
    return 0;
}

/* Contact of DE i with one source (object k, or the bed when k = n_objects). */
static void source_force(ts_sand *s, size_t i, int k, const ts_span_source *src, double dt, staged_contacts *next,
                         element_force *ef)
{
    ts_vec3 p = ts_v3(s->x[i], s->y[i], s->z[i]);
    double d_n, r = s->r[i];
    ts_vec3 u_n;
    const object *ob = k < (int)s->n_objects ? &s->objects[k] : NULL;
    /* a keyframed object is not pushed back: its reactions are never read, so not written */
    double *reaction = ob && ob->body.keyframed ? NULL : s->reaction + (i * (s->n_objects + 1) + (size_t)k) * 6;
    const int rolling_on = s->p.rolling_friction > 0.0;
    if (reaction)
        memset(reaction, 0, 6 * sizeof *reaction);
    if ((ob ? !object_within_reach(ob, &s->cols, p, r) : !bed_within_reach(s, p, r)) ||
        !ts_span_contact(src, p, r, &d_n, &u_n))
        return;
    ts_vec3 point = ts_v3_add(p, ts_v3_scale(u_n, r - 0.5 * d_n));
    ts_vec3 v_obj = ob ? object_velocity(s, ob, point) : ts_v3(0, 0, 0);
    ts_vec3 v_i = ts_v3(s->vx[i], s->vy[i], s->vz[i]), w_i = ts_v3(s->wx[i], s->wy[i], s->wz[i]);
    ts_vec3 v_c = ts_contact_velocity(v_i, w_i, r, v_obj, ts_v3(0, 0, 0), 0.0, u_n);
    double inv_obj = ob && !ob->body.keyframed ? ob->body.rb.inv_mass : 0.0;
    double m_eff = ts_effective_mass(s->inv_m[i], inv_obj);
    contact_history h = source_history(&s->c, i, k);
    ts_contact_result res = ts_contact_force(&s->law, s->K0 * m_eff, s->C0 * m_eff, d_n, u_n, v_c, dt, &h.d_t);
    ef->F = ts_v3_add(ef->F, res.force);
    ef->T = ts_v3_add(ef->T, ts_v3_scale(ts_v3_cross(u_n, res.tangential), r));
    /* against a wall R_eff is the DE's radius; a keyframed object's turning is not followed (it is never
     * pushed back, and turns slowly beside a DE's spin) */
    if (rolling_on) {
        ts_vec3 w_obj = ob && !ob->body.keyframed ? ts_rigid_angular_velocity(&ob->body.rb) : ts_v3(0, 0, 0);
        ef->T = ts_v3_add(ef->T, rolling(s, s->K0 * m_eff, r, res.normal, u_n, ts_v3_sub(w_i, w_obj), dt, &h.m_r));
    }
    if (next->sources < SOURCE_SLOTS) {
        next->source[next->sources] = (int16_t)k;
        next->source_history[next->sources++] = h;
    }
    if (reaction) {
        reaction[0] = -res.force.x, reaction[1] = -res.force.y, reaction[2] = -res.force.z;
        reaction[3] = point.x, reaction[4] = point.y, reaction[5] = point.z;
    }
}

/* DE-DE contacts of ground DE i (eqs 1, 2, A-1 to A-11), in gather form. */
static void element_forces(ts_sand *s, size_t i, double dt, staged_contacts *next, element_force *ef)
{
    const contacts *old = &s->c;
    const int rolling_on = s->p.rolling_friction > 0.0;
    const double xi = s->x[i], yi = s->y[i], zi = s->z[i], ri = s->r[i];
    const ts_vec3 v_i = ts_v3(s->vx[i], s->vy[i], s->vz[i]), w_i = ts_v3(s->wx[i], s->wy[i], s->wz[i]);
    const uint32_t *old_partner = old->partner + i * MAX_CONTACTS, id_i = s->id[i];
    const int old_count = old->count[i];
    int supported = 0, hint = 0;
    /* candidates from the cell-ordered float copies, in contiguous runs; the
     * few within reach are tested again in double below (the margin covers
     * the rounding of coordinates to float) */
    const double margin = 1e-4 * (ri + s->r_max) + 8.0 * FLT_EPSILON * (fabs(xi) + fabs(yi) + fabs(zi));
    const float reach = (float)(ri + s->r_max + margin), reach2 = reach * reach;
    const float fx = (float)xi, fy = (float)yi, fz = (float)zi;
    ts_neighbor_ranges nr;
    ts_grid_neighbor_ranges(&s->grid, fx, fy, fz, &nr);
    for (int q = 0; q < nr.n; q++)
        for (uint32_t k = nr.begin[q]; k < nr.end[q]; k++) {
            float ex = s->cx[k] - fx, ey = s->cy[k] - fy, ez = s->cz[k] - fz;
            if (ex * ex + ey * ey + ez * ez >= reach2)
                continue;
            const partner_state *pj = &s->cell_state[k];
            if (pj->id == id_i || pj->airborne)
                continue;
            double dx = pj->x - xi, dy = pj->y - yi, dz = pj->z - zi, rr = ri + pj->r;
            double dist2 = dx * dx + dy * dy + dz * dz;
            if (dist2 >= rr * rr || dist2 == 0.0)
                continue;
            double dist = sqrt(dist2), d_n = rr - dist, inv_dist = 1.0 / dist; /* eq. 1 */
            ts_vec3 u_n = ts_v3(dx * inv_dist, dy * inv_dist, dz * inv_dist);  /* eq. 2 */
            ts_vec3 v_c = ts_contact_velocity(v_i, w_i, ri, ts_v3(pj->vx, pj->vy, pj->vz),
                                              ts_v3(pj->wx, pj->wy, pj->wz), pj->r, u_n); /* eq. A-1 */
            contact_history h = {ts_v3(0, 0, 0), ts_v3(0, 0, 0)};
            /* the contacts come in nearly the same order each step: look where the last one was found */
            for (int tried = 0, slot = hint; tried < old_count; tried++, slot = slot + 1 < old_count ? slot + 1 : 0)
                if (old_partner[slot] == pj->id) {
                    h = history_at(old, i, slot);
                    hint = slot + 1 < old_count ? slot + 1 : 0;
                    break;
                }
            double m_eff = ts_effective_mass(s->inv_m[i], pj->inv_m);         /* eq. A-11 */
            double k = s->K0 * m_eff;
            ts_contact_result res = ts_contact_force(&s->law, k, s->C0 * m_eff, d_n, u_n, v_c, dt, &h.d_t);
            ef->F = ts_v3_add(ef->F, res.force);
            ef->T = ts_v3_add(ef->T, ts_v3_scale(ts_v3_cross(u_n, res.tangential), ri));
            if (rolling_on)
                ef->T = ts_v3_add(ef->T, rolling(s, k, ri * pj->r / (ri + pj->r), res.normal, u_n,
                                                 ts_v3_sub(w_i, ts_v3(pj->wx, pj->wy, pj->wz)), dt, &h.m_r));
            supported |= u_n.z < -0.5; /* a DE below holds it */
            if (next->count < MAX_CONTACTS) {
                next->partner[next->count] = pj->id;
                next->d_t[next->count] = h.d_t;
                if (rolling_on)
                    next->m_r[next->count] = h.m_r;
                next->count++;
            }
        }
    s->supported[i] = (uint8_t)supported;
}

/* Replace DE i's slots by what the pass built. */
static void store_contacts(contacts *c, size_t i, const staged_contacts *st)
{
    const int rolling_on = c->m_r != NULL;
    c->count[i] = (uint8_t)st->count;
    memcpy(c->partner + i * MAX_CONTACTS, st->partner, (size_t)st->count * sizeof *st->partner);
    for (int k = 0; k < st->count; k++)
        put_history(c, i, k, (contact_history){st->d_t[k], rolling_on ? st->m_r[k] : ts_v3(0, 0, 0)});
    for (int k = 0; k < SOURCE_SLOTS; k++) {
        double *d = c->source_d_t + (i * SOURCE_SLOTS + (size_t)k) * 3;
        double *m = rolling_on ? c->source_m_r + (i * SOURCE_SLOTS + (size_t)k) * 3 : NULL;
        c->source[i * SOURCE_SLOTS + k] = k < st->sources ? st->source[k] : NO_SOURCE;
        contact_history h = k < st->sources ? st->source_history[k] : (contact_history){{0, 0, 0}, {0, 0, 0}};
        d[0] = h.d_t.x, d[1] = h.d_t.y, d[2] = h.d_t.z;
        if (rolling_on)
            m[0] = h.m_r.x, m[1] = h.m_r.y, m[2] = h.m_r.z;
    }
}

void sand_compute_forces(ts_sand *s, double dt)
{
    const ts_vec3 g = ts_v3(s->p.gravity[0], s->p.gravity[1], s->p.gravity[2]);
    ts_span_source bed = {NULL, s->bed, &s->cols};
    #pragma omp parallel for schedule(dynamic, 256)
    for (size_t i = 0; i < s->el.n; i++) {
        element_force ef = {ts_v3_scale(g, s->m[i]), ts_v3(0, 0, 0)};
        staged_contacts next;
        next.count = next.sources = 0;
        if (!(s->flags[i] & FLAG_AIRBORNE))
            element_forces(s, i, dt, &next, &ef);
        for (size_t k = 0; k < s->n_objects; k++) {
            ts_span_source src = {&s->objects[k].map, NULL, &s->cols};
            source_force(s, i, (int)k, &src, dt, &next, &ef);
        }
        if (!(s->flags[i] & FLAG_AIRBORNE)) /* airborne grains landing on the bed are deposited instead */
            source_force(s, i, (int)s->n_objects, &bed, dt, &next, &ef);
        else
            memset(s->reaction + (i * (s->n_objects + 1) + s->n_objects) * 6, 0, 6 * sizeof(double));
        store_contacts(&s->c, i, &next);
        s->fx[i] = ef.F.x, s->fy[i] = ef.F.y, s->fz[i] = ef.F.z;
        s->tx[i] = ef.T.x, s->ty[i] = ef.T.y, s->tz[i] = ef.T.z;
    }
}

/* ------------------------------------------------------------ integration */

void sand_integrate_elements(ts_sand *s, double dt)
{
    const double g = gravity_magnitude(s);
    const double rest_force = s->p.rest_force * (g > 0 ? g : 1.0), rest_speed2 = s->p.rest_speed * s->p.rest_speed;
    #pragma omp parallel for schedule(static) if (s->el.n >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < s->el.n; i++) {
        double F2 = s->fx[i] * s->fx[i] + s->fy[i] * s->fy[i] + s->fz[i] * s->fz[i];
        double v2 = s->vx[i] * s->vx[i] + s->vy[i] * s->vy[i] + s->vz[i] * s->vz[i];
        double inv_m = 1.0 / s->m[i];
        if (!(s->flags[i] & FLAG_AIRBORNE) && F2 < rest_force * rest_force * s->m[i] * s->m[i] && v2 < rest_speed2) {
            s->vx[i] = s->vy[i] = s->vz[i] = 0.0; /* §4.3.3 step 2: a DE at rest is not updated */
            s->wx[i] = s->wy[i] = s->wz[i] = 0.0;
            continue;
        }
        s->vx[i] += s->fx[i] * inv_m * dt, s->vy[i] += s->fy[i] * inv_m * dt, s->vz[i] += s->fz[i] * inv_m * dt;
        s->x[i] += s->vx[i] * dt, s->y[i] += s->vy[i] * dt, s->z[i] += s->vz[i] * dt;
        double inv_I = 1.0 / (0.4 * s->m[i] * s->r[i] * s->r[i]); /* solid sphere */
        s->wx[i] += s->tx[i] * inv_I * dt, s->wy[i] += s->ty[i] * inv_I * dt, s->wz[i] += s->tz[i] * inv_I * dt;
    }
}

/* The reactions of the DEs on each simulated object, summed in DE order. */
void sand_integrate_objects(ts_sand *s, double dt)
{
    const ts_vec3 g = ts_v3(s->p.gravity[0], s->p.gravity[1], s->p.gravity[2]);
    for (size_t k = 0; k < s->n_objects; k++) {
        object *ob = &s->objects[k];
        if (ob->body.keyframed)
            continue;
        ts_rigid_clear_forces(&ob->body.rb);
        ts_rigid_add_force_at(&ob->body.rb, ts_v3_scale(g, ob->body.rb.mass), ob->body.rb.x);
        for (size_t i = 0; i < s->el.n; i++) {
            const double *r = s->reaction + (i * (s->n_objects + 1) + k) * 6;
            if (r[0] != 0.0 || r[1] != 0.0 || r[2] != 0.0)
                ts_rigid_add_force_at(&ob->body.rb, ts_v3(r[0], r[1], r[2]), ts_v3(r[3], r[4], r[5]));
        }
        ts_rigid_integrate(&ob->body.rb, dt);
    }
}

/* An object must not sink through the bed where no DEs are (below the
 * region's floor, or before the region exists within a step). */
void sand_objects_on_bed(ts_sand *s)
{
    for (size_t k = 0; k < s->n_objects; k++) {
        object *ob = &s->objects[k];
        if (ob->body.keyframed)
            continue;
        const ts_hsmap *m = &ob->map;
        double deepest = 0.0;
        ts_vec3 at = ob->body.rb.x;
        for (int b = 0; b < m->ny; b++)
            for (int a = 0; a < m->nx; a++) {
                int count, i = m->i0 + a, j = m->j0 + b;
                const ts_span *sp = ts_hsmap_column(m, i, j, &count);
                double d = count ? s->bed[(size_t)i + (size_t)s->cols.nx * j] - sp[0].bottom : 0.0;
                if (d > deepest) {
                    deepest = d;
                    at = ts_v3(s->cols.x0 + (i + 0.5) * s->cols.cell, s->cols.y0 + (j + 0.5) * s->cols.cell,
                               sp[0].bottom);
                }
            }
        if (deepest > 0.0)
            ts_rigid_resolve_contact(&ob->body.rb, at, ts_v3(0, 0, 1), deepest, ts_v3(0, 0, 0), s->p.restitution,
                                     s->p.friction);
    }
}

/* The objects' span maps with keyframed objects where they are at s of the frame. */
ts_status sand_update_span_maps(ts_sand *s, double at, ts_error *err)
{
    for (size_t k = 0; k < s->n_objects; k++) {
        object *ob = &s->objects[k];
        ts_rigid_object_follow(&ob->body, at);
        ts_transform t = {ob->body.rb.x, ob->body.rb.q};
        ob->lowest = HUGE_VAL;
        for (size_t v = 0; v < ob->vertex_count; v++) {
            ts_vec3 w = ts_transform_apply(t, ts_v3(ob->rest[3 * v], ob->rest[3 * v + 1], ob->rest[3 * v + 2]));
            ob->world[3 * v] = w.x, ob->world[3 * v + 1] = w.y, ob->world[3 * v + 2] = w.z;
            ob->lowest = fmin(ob->lowest, w.z);
        }
        ts_status st = ts_hsmap_build(&ob->map, &s->cols, ob->world, ob->vertex_count, ob->triangles,
                                      ob->triangle_count, err);
        if (st != TS_OK)
            return st;
    }
    return TS_OK;
}

/* ------------------------------------------------------- the contact grid */

ts_status sand_build_grid(ts_sand *s, ts_error *err)
{
    double r_max = s->p.element_radius;
    for (size_t i = 0; i < s->el.n; i++) {
        s->gx[i] = (float)s->x[i], s->gy[i] = (float)s->y[i], s->gz[i] = (float)s->z[i];
        s->inv_m[i] = 1.0 / s->m[i];
        if (s->r[i] > r_max)
            r_max = s->r[i];
    }
    /* cells of a contact distance, r_max + r_max: contacts are in the 27 cells
     * around, landing grains (reaching 2.5 r_max) within two cells */
    s->r_max = r_max;
    ts_status st = ts_grid_build(&s->grid, s->gx, s->gy, s->gz, s->el.n, (float)(2.0 * r_max), NULL, err);
    if (st != TS_OK)
        return st;
    ts_grid_permute_f32(&s->grid, s->gx, s->cx);
    ts_grid_permute_f32(&s->grid, s->gy, s->cy);
    ts_grid_permute_f32(&s->grid, s->gz, s->cz);
    #pragma omp parallel for schedule(static) if (s->el.n >= TS_PARALLEL_MIN)
    for (size_t k = 0; k < s->el.n; k++) {
        uint32_t j = s->grid.sorted[k];
        s->cell_state[k] = (partner_state){s->x[j], s->y[j], s->z[j], s->vx[j], s->vy[j], s->vz[j], s->wx[j],
                                           s->wy[j], s->wz[j], s->r[j], s->inv_m[j], s->id[j],
                                           (s->flags[j] & FLAG_AIRBORNE) != 0};
    }
    return TS_OK;
}

/* Put the DEs, with their contact histories, in the order of the grid's
 * cells, so that the partners of a DE lie near it in memory: the force pass
 * then reads a few cache lines per partner instead of missing on every
 * array. Done at the first step of each frame (a function of the state the
 * checkpoint holds, so a resumed bake stays exact); the grid is rebuilt. */
ts_status sand_sort_into_cells(ts_sand *s, ts_error *err)
{
    ts_status st = ts_particles_permute(&s->el, s->grid.sorted, err);
    return st == TS_OK ? sand_build_grid(s, err) : st;
}

