/* sand_contacts.c - the forces on DEs from each other, the objects and the bed (sand paper §4.3),
 * the integration of DEs and objects, and the contact grid. */
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sand_internal.h"
#include "buffer.h"
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
    contact_history h = {ts_v3(0, 0, 0), ts_v3(0, 0, 0), 0.0};
    for (int k = 0; k < SOURCE_SLOTS; k++)
        if (old->source[i * SOURCE_SLOTS + k] == source) {
            const double *d = old->source_d_t + (i * SOURCE_SLOTS + (size_t)k) * HISTORY;
            h.d_t = ts_v3(d[0], d[1], d[2]);
            h.plastic = d[3];
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

/* The source histories one DE builds in a force pass, before they replace
 * its slots (which the pass reads for the old histories). */
typedef struct staged_contacts {
    int sources;
    int16_t source[SOURCE_SLOTS];
    contact_history source_history[SOURCE_SLOTS];
} staged_contacts;

/* Can a DE of radius r at height z over column (ci, cj) touch an object's span map at all? ts_span_contact looks
 * at the DE's column and the eight around it, and every span lies above the object's lowest point. */
static int object_within_reach(const object *ob, int ci, int cj, double z, double r)
{
    const ts_hsmap *m = &ob->map;
    return z + r > ob->lowest && ci + 1 >= m->i0 && ci - 1 < m->i0 + m->nx && cj + 1 >= m->j0 &&
           cj - 1 < m->j0 + m->ny;
}

/* Can a DE of radius r at height z over column (ci, cj) touch the bed? Only below the top of its column or of one
 * around it (the bed's outer edges are walls). */
static int bed_within_reach(const ts_sand *s, int ci, int cj, double z, double r)
{
    for (int j = cj - 1; j <= cj + 1; j++)
        for (int i = ci - 1; i <= ci + 1; i++) {
            if (i < 0 || j < 0 || i >= s->cols.nx || j >= s->cols.ny ||
                z - r < s->bed[(size_t)i + (size_t)s->cols.nx * j])
                return 1;
        }
    return 0;
}

/* Contact of DE i with one source within its reach (object k, or the bed when k = n_objects); `reaction` is where
 * an object that is pushed back reads it, zeroed, or NULL. */
static void source_force(ts_sand *s, size_t i, int k, const ts_span_source *src, double dt, staged_contacts *next,
                         element_force *ef, double *reaction)
{
    ts_vec3 p = ts_v3(s->x[i], s->y[i], s->z[i]);
    double d_n, r = s->r[i];
    ts_vec3 u_n;
    const object *ob = k < (int)s->n_objects ? &s->objects[k] : NULL;
    const int rolling_on = s->p.rolling_friction > 0.0;
    if (!ts_span_contact(src, p, r, &d_n, &u_n))
        return;
    ts_vec3 point = ts_v3_add(p, ts_v3_scale(u_n, r - 0.5 * d_n));
    ts_vec3 v_obj = ob ? object_velocity(s, ob, point) : ts_v3(0, 0, 0);
    ts_vec3 v_i = ts_v3(s->vx[i], s->vy[i], s->vz[i]), w_i = ts_v3(s->wx[i], s->wy[i], s->wz[i]);
    ts_vec3 v_c = ts_contact_velocity(v_i, w_i, r, v_obj, ts_v3(0, 0, 0), 0.0, u_n);
    double inv_obj = ob && !ob->body.keyframed ? ob->body.rb.inv_mass : 0.0;
    double m_eff = ts_effective_mass(s->inv_m[i], inv_obj);
    contact_history h = source_history(&s->c, i, k);
    const double d_e = ts_hysteretic_overlap(d_n, s->p.unloading_stiffness, sand_hysteresis_fade(s, dt), &h.plastic);
    ts_contact_result res = ts_contact_force(&s->law, s->K0 * m_eff, s->C0 * m_eff, d_e, u_n, v_c, dt, &h.d_t);
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

/* ------------------------------------------------------------ DE-DE pairs */

/* Output doubles per pair: force on a (3), u_n x F_t (3), and with rolling friction the rolling torque on a (3). */
static int pair_stride(const ts_sand *s) { return s->p.rolling_friction > 0.0 ? 9 : 6; }

/* Room for `count` candidates' histories and outputs; the by-b index for nb DEs. */
static ts_status reserve_pairs(ts_sand *s, size_t count, size_t nb, ts_error *err)
{
    element_pairs *pp = &s->pairs;
    const int rolling_on = s->p.rolling_friction > 0.0;
    if (count + 1 > pp->cap) {
        size_t cap = ts_grown_capacity(pp->cap, count + 1, 1024);
        if (ts_resize((void **)&pp->owner, cap, sizeof *pp->owner) || ts_resize((void **)&pp->at, cap, sizeof *pp->at) ||
            ts_resize((void **)&pp->b_order, cap, sizeof *pp->b_order) ||
            ts_resize((void **)&pp->touch_b, cap, sizeof *pp->touch_b) ||
            ts_resize((void **)&pp->d_t, HISTORY * cap, sizeof *pp->d_t) ||
            (rolling_on && ts_resize((void **)&pp->m_r, 3 * cap, sizeof *pp->m_r)) ||
            ts_resize((void **)&pp->out, (size_t)pair_stride(s) * cap, sizeof *pp->out) ||
            ts_resize((void **)&pp->touch, cap, sizeof *pp->touch))
            return ts_fail(err, TS_ERR_NOMEM, "sand: out of memory for %zu element pairs", count);
        pp->cap = cap;
    }
    if (nb + 1 > pp->n_cap) {
        size_t cap = ts_grown_capacity(pp->n_cap, nb + 1, 1024);
        if (ts_resize((void **)&pp->bstart, cap, sizeof *pp->bstart))
            return ts_fail(err, TS_ERR_NOMEM, "sand: out of memory for %zu elements' pairs", nb);
        pp->n_cap = cap;
    }
    return TS_OK;
}

void sand_pairs_free(element_pairs *pp)
{
    ts_skin_pairs_free(&pp->list);
    void *all[] = {pp->bstart, pp->owner, pp->at, pp->b_order, pp->d_t, pp->m_r, pp->out, pp->touch, pp->touch_b};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++)
        free(all[k]);
    memset(pp, 0, sizeof *pp);
}

/* DE i's slot for the DE of id `partner`, or -1; `hint` is where to look first (the slots come in nearly the
 * order the pairs do). */
static int slot_of(const contacts *c, size_t i, uint32_t partner, int *hint)
{
    const uint32_t *ids = c->partner + i * MAX_CONTACTS;
    const int count = c->count[i];
    for (int tried = 0, k = *hint < count ? *hint : 0; tried < count; tried++, k = k + 1 < count ? k + 1 : 0)
        if (ids[k] == partner) {
            *hint = k + 1;
            return k;
        }
    return -1;
}

/* The pairs' histories into the slots, both sides (b's the negation of a's: the contact law is antisymmetric to
 * the bit), at most MAX_CONTACTS per DE as the slots always held. */
void sand_pairs_to_slots(ts_sand *s)
{
    element_pairs *pp = &s->pairs;
    if (!pp->newer)
        return;
    const ts_skin_pairs *l = &pp->list;
    contacts *c = &s->c;
    #pragma omp parallel for schedule(static) if (l->na >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < l->na; i++) {
        int count = 0;
        for (int side = 0; side < 2; side++) {
            const uint32_t lo = side ? pp->bstart[i] : l->start[i], hi = side ? pp->bstart[i + 1] : l->start[i + 1];
            const float sign = side ? -1.0f : 1.0f;
            for (uint32_t q = lo; q < hi && count < MAX_CONTACTS; q++) {
                const uint32_t k = side ? pp->at[q] : q;
                if (!(pp->touch[k] & TOUCH))
                    continue;
                const size_t slot = i * MAX_CONTACTS + (size_t)count++;
                c->partner[slot] = s->id[side ? pp->owner[q] : l->other[q]];
                for (int d = 0; d < 3; d++) {
                    c->d_t[HISTORY * slot + d] = sign * pp->d_t[HISTORY * k + d];
                    if (c->m_r)
                        c->m_r[3 * slot + d] = sign * pp->m_r[3 * k + d];
                }
                c->d_t[HISTORY * slot + 3] = pp->d_t[HISTORY * k + 3];
            }
        }
        c->count[i] = (uint8_t)count;
    }
    pp->newer = 0;
}

/* Before DEs are renumbered or leave the pairs (grains in flight): the histories to the slots, and the list
 * found again at the next step. */
void sand_pairs_release(ts_sand *s)
{
    sand_pairs_to_slots(s);
    ts_skin_pairs_invalidate(&s->pairs.list);
}

/* The DE-DE candidates for this step: kept from earlier steps while no pair can have come into contact unseen,
 * else found again, with their histories from the slots. Grains in flight touch no DE and are left out. */
ts_status sand_find_pairs(ts_sand *s, ts_error *err)
{
    element_pairs *pp = &s->pairs;
    ts_skin_pairs *l = &pp->list;
    /* a contact is closer than r_a + r_b <= 2 r_max; the float positions round by a few ulps of the coordinates */
    double far = 0.0;
    #pragma omp parallel for schedule(static) reduction(max : far) if (s->el.n >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < s->el.n; i++) {
        const double reach = fabs(s->gx[i]) + fabs(s->gy[i]) + fabs(s->gz[i]);
        far = reach > far ? reach : far;
    }
    const double radius = 2.0 * s->r_max * (1.0 + 1e-4) + 16.0 * FLT_EPSILON * far;
    if (radius > l->radius || l->skin == 0.0) {
        l->radius = 1.01 * radius; /* not again at the next step for a DE moved a little farther out */
        l->skin = PAIR_SKIN * s->r_max;
        ts_skin_pairs_invalidate(l);
    }
    l->skip = s->flags;
    l->skip_bits = FLAG_AIRBORNE;
    const size_t n = s->el.n;
    if (!ts_skin_pairs_due(l, s->gx, s->gy, s->gz, n, s->gx, s->gy, s->gz, n))
        return TS_OK;
    sand_pairs_to_slots(s); /* before the list they belong to is replaced */
    ts_status st = ts_skin_pairs_search(l, s->gx, s->gy, s->gz, n, s->gx, s->gy, s->gz, n, err);
    if (st == TS_OK)
        st = reserve_pairs(s, l->count, l->nb, err);
    if (st != TS_OK)
        return st;
    ts_skin_pairs_by_b(l, pp->bstart, pp->owner, pp->at);
    #pragma omp parallel for schedule(static) if (l->count >= TS_PARALLEL_MIN)
    for (size_t q = 0; q < l->count; q++)
        pp->b_order[pp->at[q]] = (uint32_t)q;
    const contacts *c = &s->c;
    #pragma omp parallel for schedule(static) if (l->na >= TS_PARALLEL_MIN)
    for (size_t a = 0; a < l->na; a++) {
        int hint = 0;
        for (uint32_t k = l->start[a]; k < l->start[a + 1]; k++) {
            const int slot = slot_of(c, a, s->id[l->other[k]], &hint);
            for (int d = 0; d < HISTORY; d++)
                pp->d_t[HISTORY * k + d] = slot < 0 ? 0.0f : c->d_t[(a * MAX_CONTACTS + (size_t)slot) * HISTORY + d];
            for (int d = 0; d < 3; d++) {
                if (pp->m_r)
                    pp->m_r[3 * k + d] = slot < 0 || !c->m_r ? 0.0f : c->m_r[(a * MAX_CONTACTS + (size_t)slot) * 3 + d];
            }
            pp->touch[k] = 0;
        }
    }
    return TS_OK;
}

/* DE a's pairs (eqs 1, 2, A-1 to A-11), each computed once: the force and torque on a summed into ef. What b gets
 * goes straight into b's sums when b is in a's block (b < a: its own row is done, and the shares reach it in
 * ascending a, as they would on one thread), else into the pair's output for b to gather (pair_shares). */
static void pair_forces(ts_sand *s, size_t a, size_t block_first, double dt, element_force *ef)
{
    element_pairs *pp = &s->pairs;
    const ts_skin_pairs *l = &pp->list;
    const int rolling_on = s->p.rolling_friction > 0.0, stride = pair_stride(s);
    const element_state A = s->state[a];
    const ts_vec3 v_a = ts_v3(A.vx, A.vy, A.vz), w_a = ts_v3(A.wx, A.wy, A.wz);
    const double fade = sand_hysteresis_fade(s, dt);
    int supported = 0;
    for (uint32_t k = l->start[a]; k < l->start[a + 1]; k++) {
        const uint32_t b = l->other[k];
        const int in_block = b >= block_first;
        const element_state *B = &s->state[b];
        float *hd = pp->d_t + HISTORY * (size_t)k;
        double dx = B->x - A.x, dy = B->y - A.y, dz = B->z - A.z, rr = A.r + B->r;
        double dist2 = dx * dx + dy * dy + dz * dz;
        if (dist2 >= rr * rr || dist2 == 0.0) { /* apart: a contact made again starts afresh */
            pp->touch[k] = 0;
            if (!in_block)
                pp->touch_b[pp->b_order[k]] = 0;
            hd[0] = hd[1] = hd[2] = hd[3] = 0.0f;
            if (rolling_on)
                pp->m_r[3 * k] = pp->m_r[3 * k + 1] = pp->m_r[3 * k + 2] = 0.0f;
            continue;
        }
        double dist = sqrt(dist2), d_n = rr - dist, inv_dist = 1.0 / dist;          /* eq. 1 */
        ts_vec3 u_n = ts_v3(dx * inv_dist, dy * inv_dist, dz * inv_dist);           /* eq. 2 */
        ts_vec3 w_b = ts_v3(B->wx, B->wy, B->wz);
        ts_vec3 v_c = ts_contact_velocity(v_a, w_a, A.r, ts_v3(B->vx, B->vy, B->vz), w_b, B->r, u_n); /* eq. A-1 */
        double m_eff = ts_effective_mass(A.inv_m, B->inv_m);                        /* eq. A-11 */
        double k_n = s->K0 * m_eff;
        ts_vec3 d_t = ts_v3(hd[0], hd[1], hd[2]);
        double plastic = hd[3];
        const double d_e = ts_hysteretic_overlap(d_n, s->p.unloading_stiffness, fade, &plastic);
        ts_contact_result res = ts_contact_force(&s->law, k_n, s->C0 * m_eff, d_e, u_n, v_c, dt, &d_t);
        hd[0] = (float)d_t.x, hd[1] = (float)d_t.y, hd[2] = (float)d_t.z, hd[3] = (float)plastic;
        ts_vec3 turn = ts_v3_cross(u_n, res.tangential), roll = ts_v3(0, 0, 0);
        ef->F = ts_v3_add(ef->F, res.force);
        ef->T = ts_v3_add(ef->T, ts_v3_scale(turn, A.r));
        if (rolling_on) {
            float *hm = pp->m_r + 3 * (size_t)k;
            ts_vec3 m_r = ts_v3(hm[0], hm[1], hm[2]);
            roll = rolling(s, k_n, A.r * B->r / (A.r + B->r), res.normal, u_n, ts_v3_sub(w_a, w_b), dt, &m_r);
            hm[0] = (float)m_r.x, hm[1] = (float)m_r.y, hm[2] = (float)m_r.z;
            ef->T = ts_v3_add(ef->T, roll);
        }
        const uint8_t touch = (uint8_t)(TOUCH | (u_n.z > 0.5 ? TOUCH_A_BELOW : 0u));
        pp->touch[k] = touch;
        if (in_block) { /* b's share: the opposite force, its own lever on u_n x F_t, the opposite rolling torque */
            element_force *fb = &s->acc[b];
            fb->F = ts_v3_sub(fb->F, res.force);
            fb->T = ts_v3_add(fb->T, ts_v3_scale(turn, B->r));
            if (rolling_on)
                fb->T = ts_v3_sub(fb->T, roll);
            s->supported[b] |= (uint8_t)(u_n.z > 0.5);
        } else {
            const uint32_t q = pp->b_order[k];
            double *o = pp->out + (size_t)stride * q;
            o[0] = res.force.x, o[1] = res.force.y, o[2] = res.force.z;
            o[3] = turn.x, o[4] = turn.y, o[5] = turn.z;
            if (rolling_on)
                o[6] = roll.x, o[7] = roll.y, o[8] = roll.z;
            pp->touch_b[q] = touch;
        }
        supported |= u_n.z < -0.5; /* a DE below holds it */
    }
    s->supported[a] = (uint8_t)supported;
}

/* What DE b gets from the pairs it is the `b` of whose `a` lies past b's block (`block_end`) - the others put
 * theirs straight in - added as pair_forces would: in ascending a, all after those from b's own block. */
static void pair_shares(ts_sand *s, size_t b, size_t block_end, element_force *ef)
{
    const element_pairs *pp = &s->pairs;
    const int rolling_on = s->p.rolling_friction > 0.0, stride = pair_stride(s);
    const double r = s->r[b];
    int supported = s->supported[b];
    uint32_t q = pp->bstart[b + 1]; /* the a's ascend: those past the block are the last few, or none */
    while (q > pp->bstart[b] && pp->owner[q - 1] >= block_end)
        q--;
    for (; q < pp->bstart[b + 1]; q++) {
        if (!(pp->touch_b[q] & TOUCH))
            continue;
        const double *o = pp->out + (size_t)stride * q;
        ef->F = ts_v3_sub(ef->F, ts_v3(o[0], o[1], o[2]));
        ef->T = ts_v3_add(ef->T, ts_v3_scale(ts_v3(o[3], o[4], o[5]), r));
        if (rolling_on)
            ef->T = ts_v3_sub(ef->T, ts_v3(o[6], o[7], o[8]));
        supported |= (pp->touch_b[q] & TOUCH_A_BELOW) != 0;
    }
    s->supported[b] = (uint8_t)supported;
}

/* Replace DE i's source slots by what the pass built (its DE-DE slots are the pairs' until sand_pairs_to_slots). */
static void store_sources(contacts *c, size_t i, const staged_contacts *st)
{
    if (st->sources == 0 && c->source[i * SOURCE_SLOTS] == NO_SOURCE)
        return; /* none held before or now (empty slots are kept zeroed): most DEs, most steps */
    const int rolling_on = c->m_r != NULL;
    for (int k = 0; k < SOURCE_SLOTS; k++) {
        double *d = c->source_d_t + (i * SOURCE_SLOTS + (size_t)k) * HISTORY;
        double *m = rolling_on ? c->source_m_r + (i * SOURCE_SLOTS + (size_t)k) * 3 : NULL;
        c->source[i * SOURCE_SLOTS + k] = k < st->sources ? st->source[k] : NO_SOURCE;
        contact_history h = k < st->sources ? st->source_history[k] : (contact_history){{0, 0, 0}, {0, 0, 0}, 0.0};
        d[0] = h.d_t.x, d[1] = h.d_t.y, d[2] = h.d_t.z, d[3] = h.plastic;
        if (rolling_on)
            m[0] = h.m_r.x, m[1] = h.m_r.y, m[2] = h.m_r.z;
    }
}

/* The pair pass's blocks: contiguous runs of DEs, one per thread, each run in ascending order by that thread (its
 * DEs' data stay in its cache). They split the candidates where the last pass says the work is shared out evenly:
 * a candidate's cost differs along the DEs (the touching ones, those near an object), by a fifth between two
 * halves of a bed under a ball. */
#define SPLIT_DAMPING 0.5 /* how far a split moves toward the even one per pass: timings are noisy */

/* The first DE of each block, and n after the last; the number of blocks. */
static size_t pair_blocks(ts_sand *s, size_t bound[MAX_PAIR_BLOCKS + 1])
{
    const size_t n = s->el.n, threads = (size_t)omp_get_max_threads();
    const uint32_t *start = s->pairs.list.start; /* n + 1 entries: the pairs are found before each pass */
    size_t blocks = n >= TS_PARALLEL_MIN && start && s->pairs.list.na == n ? threads : 1;
    blocks = blocks < MAX_PAIR_BLOCKS ? blocks : MAX_PAIR_BLOCKS;
    double *split = s->pair_split;
    if (blocks != s->pair_blocks) { /* even shares to begin with */
        for (size_t k = 0; k <= blocks; k++)
            split[k] = (double)k / (double)blocks;
        memset(s->pair_seconds, 0, sizeof s->pair_seconds);
        s->pair_blocks = blocks;
    } else {
        /* the cost as a function of the share of candidates, piecewise linear through the last pass's blocks */
        double total = 0.0, cost[MAX_PAIR_BLOCKS + 1] = {0.0}, even[MAX_PAIR_BLOCKS + 1];
        for (size_t k = 0; k < blocks; k++)
            cost[k + 1] = total += s->pair_seconds[k];
        even[0] = 0.0, even[blocks] = 1.0;
        for (size_t k = 1, q = 0; k < blocks; k++) {
            const double want = total * (double)k / (double)blocks;
            while (q + 1 < blocks && cost[q + 1] < want)
                q++;
            const double span = cost[q + 1] - cost[q];
            even[k] = split[q] + (span > 0.0 ? (want - cost[q]) / span : 0.5) * (split[q + 1] - split[q]);
        }
        for (size_t k = 1; k < blocks; k++)
            if (total > 0.0)
                split[k] += SPLIT_DAMPING * (even[k] - split[k]);
    }
    bound[0] = 0, bound[blocks] = n;
    for (size_t k = 1; k < blocks; k++) {
        const uint64_t want = (uint64_t)(split[k] * (double)start[n]);
        size_t lo = bound[k - 1], hi = n; /* the first a whose candidates start at or past `want` */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (start[mid] < want)
                lo = mid + 1;
            else
                hi = mid;
        }
        bound[k] = lo;
    }
    return blocks;
}

/* Where DE i's block ends. */
static size_t block_end(const size_t *bound, size_t blocks, size_t i)
{
    size_t k = 1;
    while (k < blocks && bound[k] <= i)
        k++;
    return bound[k];
}

/* Two passes: each block's DEs' pairs as a (gravity first), then each DE's shares from other blocks and its
 * sources. A DE's sum runs in the same order whatever the threads and blocks: its pairs in ascending b, its
 * shares in ascending a. */
void sand_compute_forces(ts_sand *s, double dt)
{
    const ts_vec3 g = ts_v3(s->p.gravity[0], s->p.gravity[1], s->p.gravity[2]);
    const size_t n = s->el.n;
    size_t bound[MAX_PAIR_BLOCKS + 1];
    const size_t blocks = pair_blocks(s, bound);
    #pragma omp parallel for schedule(static) if (n >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++)
        s->state[i] = (element_state){s->x[i], s->y[i], s->z[i], s->vx[i], s->vy[i], s->vz[i], s->wx[i], s->wy[i],
                                      s->wz[i], s->r[i], s->inv_m[i]};
    #pragma omp parallel for schedule(static, 1) if (blocks > 1)
    for (size_t k = 0; k < blocks; k++) {
        const double began = omp_get_wtime();
        for (size_t i = bound[k]; i < bound[k + 1]; i++) {
            element_force ef = {ts_v3_scale(g, s->m[i]), ts_v3(0, 0, 0)};
            if (!(s->flags[i] & FLAG_AIRBORNE))
                pair_forces(s, i, bound[k], dt, &ef);
            s->acc[i] = ef;
        }
        s->pair_seconds[k] = omp_get_wtime() - began;
    }
    s->pairs.newer = 1;
    #pragma omp parallel for schedule(dynamic, 256)
    for (size_t i = 0; i < n; i++) {
        element_force ef = s->acc[i];
        staged_contacts next;
        next.sources = 0;
        const int airborne = (s->flags[i] & FLAG_AIRBORNE) != 0;
        if (!airborne)
            pair_shares(s, i, block_end(bound, blocks, i), &ef);
        int ci, cj;
        ts_columns_index(&s->cols, s->x[i], s->y[i], &ci, &cj);
        double *reaction = s->reaction + i * (s->n_objects + 1) * 6;
        for (size_t k = 0; k <= s->n_objects; k++, reaction += 6) {
            const int is_bed = k == s->n_objects;
            const object *ob = is_bed ? NULL : &s->objects[k];
            /* a keyframed object is not pushed back: its reactions are never read, so not written */
            const int pushed = !ob || !ob->body.keyframed;
            if (pushed)
                memset(reaction, 0, 6 * sizeof *reaction);
            /* airborne grains landing on the bed are deposited instead */
            if (is_bed ? airborne || !bed_within_reach(s, ci, cj, s->z[i], s->r[i])
                       : !object_within_reach(ob, ci, cj, s->z[i], s->r[i]))
                continue;
            ts_span_source src = {is_bed ? NULL : &ob->map, is_bed ? s->bed : NULL, &s->cols};
            source_force(s, i, (int)k, &src, dt, &next, &ef, pushed ? reaction : NULL);
        }
        store_sources(&s->c, i, &next);
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
        /* the map is a function of the pose alone: an object that has not moved (a static obstacle, a keyframed
         * one between keys that hold) keeps it - a rebuild rasterises and sorts every column it covers */
        if (ob->has_map && !memcmp(&t, &ob->mapped, sizeof t))
            continue;
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
        ob->mapped = t, ob->has_map = 1;
    }
    return TS_OK;
}

/* ------------------------------------------------------- the contact grid */

/* What the force pass reads of the DEs as the step begins: float positions (for the pairs and the grid), 1/m,
 * r_max. The grid over them waits until something asks for it (sand_current_grid): most steps nothing does. */
void sand_prepare_elements(ts_sand *s)
{
    double r_max = s->p.element_radius;
    #pragma omp parallel for schedule(static) reduction(max : r_max) if (s->el.n >= TS_PARALLEL_MIN)
    for (size_t i = 0; i < s->el.n; i++) {
        s->gx[i] = (float)s->x[i], s->gy[i] = (float)s->y[i], s->gz[i] = (float)s->z[i];
        s->inv_m[i] = 1.0 / s->m[i];
        if (s->r[i] > r_max)
            r_max = s->r[i];
    }
    s->r_max = r_max;
    s->grid_pending = 1;
}

/* The grid over the DEs as sand_prepare_elements saw them, built now if it was not (nothing has added, moved in
 * gx or renumbered DEs since). */
ts_status sand_current_grid(ts_sand *s, ts_error *err)
{
    if (!s->grid_pending)
        return TS_OK;
    s->grid_pending = 0;
    /* cells of a contact distance, r_max + r_max: contacts are in the 27 cells
     * around, landing grains (reaching 2.5 r_max) within two cells */
    return ts_grid_build(&s->grid, s->gx, s->gy, s->gz, s->el.n, (float)(2.0 * s->r_max), NULL, err);
}

ts_status sand_build_grid(ts_sand *s, ts_error *err)
{
    sand_prepare_elements(s);
    return sand_current_grid(s, err);
}

/* Put the DEs, with their contact histories, in the order of the grid's
 * cells, so that the partners of a DE lie near it in memory: the pair pass
 * then reads a few cache lines per partner instead of missing on every
 * array. Done at the first step of every SORT_EVERY_FRAMES-th frame (a
 * function of the frame, so a resumed bake stays exact); the grid is
 * rebuilt, and the pairs, renumbered, are found again. */
ts_status sand_sort_into_cells(ts_sand *s, ts_error *err)
{
    sand_pairs_release(s);
    ts_status st = sand_current_grid(s, err);
    if (st == TS_OK)
        st = ts_particles_permute(&s->el, s->grid.sorted, err);
    if (st == TS_OK)
        sand_prepare_elements(s);
    return st;
}

