/* sph_model.c - the shared SPH fluid (see sph_model.h): the water paper's
 * chapter 3 (eqs. 3.5, 3.14-3.23, 3.30-3.35, 3.42-3.43) with WCSPH's Tait
 * pressure and Harada's wall weights. */
#include "sph_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "buffer.h"
#include "sph_loops.h"

#define NEIGHBOUR_LIST 64
#define NEIGHBOUR_STRIDE (NEIGHBOUR_LIST + TS_SPH_LIST_SLACK)
#define NEIGHBOUR_OVERFLOW 255
/* Verlet lists hold the fluid within h + skin and serve until some particle
 * has moved half the skin. The skin is chosen at each build for the lists to
 * last about VERLET_STEPS steps at the fastest particle's speed, within
 * [SKIN_MIN, SKIN_MAX] h: a calm liquid keeps short lists (h/10: a third more
 * entries than the neighbours), a fast one longer lists rebuilt less often. */
#define VERLET_STEPS 4.0
#define SKIN_MIN 0.1f
#define SKIN_MAX 0.25f

/* The erosion paper's F_attract (sec. 4.3, fig. 10 b): the wall force on a
 * lone particle, whose density is its own share rho_B and the wall's Z(l),
 * under the Tait equation without its clamp at zero - negative pressure,
 * so it pulls towards the wall. Its shape is the paper's; its size is not:
 * through B = rho0 c^2 / 7 it reaches thousands of m/s^2, which glues any
 * drop to a cave's roof and changes with the resolution. Scaled so that its
 * peak is |g|, wall_attraction is the share of gravity a thin flow clings
 * with, at any scale: below 1 a drop under a roof still falls. */
static void init_attraction(ts_sph_model *m)
{
    const double rho0 = m->set.rest_density, h2 = (double)m->h * m->h;
    const double rho_b = m->mass * m->k.poly6 * h2 * h2 * h2;        /* m W_poly6(0) */
    const double c = m->set.speed_of_sound, B = rho0 * c * c / 7.0;
    const double *g = m->set.gravity, g_len = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    m->rho_1 = (float)(rho0 + rho_b);
    double peak = 0.0, curve[TS_SPH_WALL_SAMPLES];
    for (int i = 0; i < TS_SPH_WALL_SAMPLES; i++) {
        double rho = rho_b + m->wall.density[i], ratio = rho / rho0;
        double p = B * (pow(ratio, 7.0) - 1.0);
        curve[i] = p < 0.0 ? 2.0 * -p / (rho * rho) * m->wall.gradient[i] : 0.0;
        peak = curve[i] > peak ? curve[i] : peak;
    }
    for (int i = 0; i < TS_SPH_WALL_SAMPLES; i++)
        m->attraction[i] = peak > 0.0 ? (float)(curve[i] / peak * g_len) : 0.0f;
}

ts_status ts_sph_init(ts_sph_model *m, const ts_sph_settings *set, ts_error *err)
{
    memset(m, 0, sizeof *m);
    m->set = *set;
    m->spacing = (float)(2.0 * set->particle_radius);
    m->h = 2.0f * m->spacing;          /* about 33 neighbours in radius */
    m->skin = SKIN_MIN * m->h;
    m->lists_stale = 1;
    m->r_contact = 0.5f * m->spacing;  /* how close a particle may come to a wall */
    /* and to a body: closer, so that the body's wall pressure, not this catch, holds the liquid's first layer
     * (the catch's push is not given to the body: a 14 cm box held under the liquid felt 97.6 % of
     * Archimedes' force with the catch at a quarter spacing, 99.2 % here) */
    m->r_body_contact = 0.15f * m->spacing;
    ts_kernels_init(&m->k, m->h);
    m->eos = (ts_sph_eos_params){set->muller ? TS_SPH_IDEAL : TS_SPH_TAIT, set->rest_density, set->speed_of_sound,
                                 set->gas_stiffness};
    m->mass = (float)ts_sph_lattice_mass(m->h, m->spacing, set->rest_density);
    ts_sph_wall_init(&m->wall, &m->k, m->spacing, m->mass);
    init_attraction(m);
    for (int a = 0; a < 3; a++) {
        m->domain[a] = (float)set->domain_min[a];
        m->domain[a + 3] = (float)set->domain_max[a];
    }
    ts_grid_init(&m->grid);
    const size_t f = sizeof(float);
    const ts_particle_column fluid_columns[] = {
        TS_STATE_COLUMN("x", &m->x, TS_ATTR_F32, 1), TS_STATE_COLUMN("y", &m->y, TS_ATTR_F32, 1),
        TS_STATE_COLUMN("z", &m->z, TS_ATTR_F32, 1), TS_STATE_COLUMN("vx", &m->vx, TS_ATTR_F32, 1),
        TS_STATE_COLUMN("vy", &m->vy, TS_ATTR_F32, 1), TS_STATE_COLUMN("vz", &m->vz, TS_ATTR_F32, 1),
        TS_STATE_COLUMN("id", &m->id, TS_ATTR_U32, 1),
        TS_WORK_COLUMN("ax", &m->ax, f), TS_WORK_COLUMN("ay", &m->ay, f), TS_WORK_COLUMN("az", &m->az, f),
        TS_WORK_COLUMN("sx", &m->sx, f), TS_WORK_COLUMN("sy", &m->sy, f), TS_WORK_COLUMN("sz", &m->sz, f),
        TS_WORK_COLUMN("rho", &m->rho, f), TS_WORK_COLUMN("pr", &m->pr, f), TS_WORK_COLUMN("wgx", &m->wgx, f),
        TS_WORK_COLUMN("wgy", &m->wgy, f), TS_WORK_COLUMN("wgz", &m->wgz, f), TS_WORK_COLUMN("wi", &m->wi, f), TS_WORK_COLUMN("P", &m->P, f),
        TS_WORK_COLUMN("inv_rho", &m->inv_rho, f), TS_WORK_COLUMN("x0", &m->x0, f),
        TS_WORK_COLUMN("y0", &m->y0, f), TS_WORK_COLUMN("z0", &m->z0, f),
        TS_WORK_COLUMN("pos4", &m->pos4, 4 * f), TS_WORK_COLUMN("vel4", &m->vel4, 4 * f),
        TS_WORK_COLUMN("nbr", &m->nbr, NEIGHBOUR_STRIDE * sizeof *m->nbr),
        TS_WORK_COLUMN("nbr_n", &m->nbr_n, 1), TS_WORK_COLUMN("vstart", &m->vstart, sizeof *m->vstart),
        TS_WORK_COLUMN("keep", &m->keep, 1), TS_WORK_COLUMN("tl", &m->tl, f), TS_WORK_COLUMN("tnx", &m->tnx, f),
        TS_WORK_COLUMN("tny", &m->tny, f), TS_WORK_COLUMN("tnz", &m->tnz, f),
    };
    ts_particles_init(&m->fluid, "fluid", 0); /* the solver names itself in its own checks */
    ts_status st = ts_particles_register(&m->fluid, fluid_columns, sizeof fluid_columns / sizeof *fluid_columns, err);
    return st;
}

ts_status ts_sph_alloc(ts_sph_model *m, size_t max_fluid, ts_error *err)
{
    m->fluid.max = max_fluid;
    return ts_particles_reserve(&m->fluid, max_fluid, err);
}

void ts_sph_free(ts_sph_model *m)
{
    ts_particles_free(&m->fluid);
    for (int b = 0; b < m->n_blocks; b++)
        free(m->blocks[b].entries);
    free(m->blocks);
    for (int t = 0; t < m->n_share_lists; t++)
        free(m->shares[t].items);
    free(m->shares);
    free(m->vlist);
    free(m->boundaries);
    ts_grid_free(&m->grid);
    memset(m, 0, sizeof *m);
}

ts_status ts_sph_add_boundary(ts_sph_model *m, ts_sph_boundary b, ts_error *err)
{
    if (ts_grow((void **)&m->boundaries, &m->boundary_cap, m->n_boundaries + 1, sizeof b) != 0)
        return ts_fail(err, TS_ERR_NOMEM, "out of memory for the fluid's boundaries");
    m->boundaries[m->n_boundaries++] = b;
    m->has_terrain |= b.kind == TS_SPH_TERRAIN;
    return TS_OK;
}

/* The domain box's wall sides (0 without a box). */
static unsigned box_sides(const ts_sph_model *m)
{
    unsigned sides = 0;
    for (size_t k = 0; k < m->n_boundaries; k++)
        if (m->boundaries[k].kind == TS_SPH_BOX)
            sides |= m->boundaries[k].sides;
    return sides;
}

/* ------------------------------------------------------------------- walls */

/* The walls near a point, combined as overlapping half-spaces: each wall a
 * holds a share f_a = Z_a / rho0 of the kernel's mass, and the share outside
 * every wall at once is 1 - prod_a (1 - f_a) (exact for a separable kernel),
 * so corners and edges are not counted twice. The gradient follows by the
 * product rule. */
typedef struct wall_sum {
    float inside;        /* prod_a (1 - f_a) */
    float g[3];          /* sum_a G_a n_a prod_{b != a} (1 - f_b) */
} wall_sum;

/* A wall's density share z and gradient sum g (a vector, into the fluid). */
static void add_wall_share(const ts_sph_model *m, float z, float gx, float gy, float gz, wall_sum *s)
{
    float f = z / (float)m->set.rest_density;
    if (f > 1.0f)
        f = 1.0f;
    s->g[0] = s->g[0] * (1.0f - f) + gx * s->inside;
    s->g[1] = s->g[1] * (1.0f - f) + gy * s->inside;
    s->g[2] = s->g[2] * (1.0f - f) + gz * s->inside;
    s->inside *= 1.0f - f;
}

/* A flat wall at distance phi with normal n: the tables. */
static void add_wall(const ts_sph_model *m, float phi, float nx, float ny, float nz, wall_sum *s)
{
    float z, g;
    ts_sph_wall_eval(&m->wall, phi, &z, &g);
    add_wall_share(m, z, g * nx, g * ny, g * nz, s);
}

/* The wall sides of the domain box near a point. */
static void box_walls(const ts_sph_model *m, unsigned sides, float x, float y, float z, wall_sum *s)
{
    const float p[3] = {x, y, z};
    for (int a = 0; a < 3; a++) {
        float n[3] = {0, 0, 0};
        n[a] = 1.0f;
        if ((sides >> (2 * a) & 1u) && p[a] - m->domain[a] < m->h)
            add_wall(m, p[a] - m->domain[a], n[0], n[1], n[2], s);
        n[a] = -1.0f;
        if ((sides >> (2 * a + 1) & 1u) && m->domain[a + 3] - p[a] < m->h)
            add_wall(m, m->domain[a + 3] - p[a], n[0], n[1], n[2], s);
    }
}

static ts_vec3 body_point_velocity(const ts_sph_boundary *bd, ts_vec3 p);

/* A rigid body's surface within h of a point: its distance and world normal
 * (from the body's rest-pose field) and the surface's velocity there; its wall
 * weight z and gradient sum g (world) if asked. */
static int body_wall(const ts_sph_model *m, const ts_sph_boundary *bd, float x, float y, float z, ts_collider_hit *hit,
                     float *wall_z, ts_vec3 *wall_g)
{
    const ts_rigid_body *rb = bd->body;
    ts_vec3 rel = ts_v3_sub(ts_v3(x, y, z), rb->x);
    if (ts_v3_length(rel) > bd->radius + m->spacing + m->h)   /* radius: of its samples, inside the surface */
        return 0;
    const ts_vec3 local = ts_v3_add(bd->centroid0, ts_m3_mul_v3(bd->to_body, rel));
    if (!ts_collider_query(bd->shape, 0.0, local, hit) || hit->distance >= m->h)
        return 0;
    hit->normal = ts_m3_mul_v3(bd->to_world, hit->normal);
    hit->velocity = body_point_velocity(bd, ts_v3_sub(ts_v3(x, y, z), ts_v3_scale(hit->normal, hit->distance)));
    if (wall_z) {
        if (!ts_wall_field_eval(bd->field, &m->wall, local, hit->distance, wall_z, wall_g))
            *wall_z = 0.0f, *wall_g = ts_v3(0, 0, 0);
        *wall_g = ts_m3_mul_v3(bd->to_world, *wall_g);
    }
    return 1;
}

/* ts_rigid_point_velocity from the step's pose */
static ts_vec3 body_point_velocity(const ts_sph_boundary *bd, ts_vec3 p)
{
    return ts_v3_add(bd->velocity, ts_v3_cross(bd->angular_velocity, ts_v3_sub(p, bd->body->x)));
}

static void take_body_poses(ts_sph_model *m)
{
    for (size_t k = 0; k < m->n_boundaries; k++) {
        ts_sph_boundary *bd = &m->boundaries[k];
        if (bd->kind != TS_SPH_BODY)
            continue;
        bd->to_world = ts_quat_to_mat3(bd->body->q);
        bd->to_body = ts_quat_to_mat3(ts_quat_conjugate(bd->body->q));
        bd->velocity = ts_rigid_velocity(bd->body);
        bd->angular_velocity = ts_rigid_angular_velocity(bd->body);
    }
}

/* Wall weight sums of every boundary at a point, rigid bodies' surfaces
 * included; the nearest terrain's distance and normal to terrain[0..3]. */
static void wall_terms(const ts_sph_model *m, float x, float y, float z, wall_sum *s, float terrain[4])
{
    s->inside = 1.0f;
    s->g[0] = s->g[1] = s->g[2] = 0.0f;
    terrain[0] = m->h, terrain[1] = terrain[2] = terrain[3] = 0.0f;
    for (size_t k = 0; k < m->n_boundaries; k++) {
        const ts_sph_boundary *b = &m->boundaries[k];
        ts_collider_hit hit;
        if (b->kind == TS_SPH_COLLIDER || b->kind == TS_SPH_TERRAIN) {
            if (ts_collider_query(b->shape, m->s, ts_v3(x, y, z), &hit) && hit.distance < m->h) {
                add_wall(m, hit.distance, (float)hit.normal.x, (float)hit.normal.y, (float)hit.normal.z, s);
                if (b->kind == TS_SPH_TERRAIN && hit.distance < terrain[0]) {
                    terrain[0] = hit.distance;
                    terrain[1] = (float)hit.normal.x, terrain[2] = (float)hit.normal.y;
                    terrain[3] = (float)hit.normal.z;
                }
            }
        } else if (b->kind == TS_SPH_BOX) {
            box_walls(m, b->sides, x, y, z, s);
        } else if (b->kind == TS_SPH_BODY) {
            float wz;
            ts_vec3 wg;
            if (body_wall(m, b, x, y, z, &hit, &wz, &wg))
                add_wall_share(m, wz, (float)wg.x, (float)wg.y, (float)wg.z, s);
        }
    }
}

/* The nearest wall side of the domain box to p, closer than *distance (which it lowers). */
static int box_nearest(const ts_sph_model *m, unsigned sides, ts_vec3 p, float *distance, ts_vec3 *normal)
{
    const double c[3] = {p.x, p.y, p.z};
    int found = 0;
    for (int side = 0; side < 6; side++) {
        int a = side / 2;
        float phi = (float)(side % 2 ? m->domain[a + 3] - c[a] : c[a] - m->domain[a]);
        if ((sides >> side & 1u) && phi < *distance) {
            double n[3] = {0, 0, 0};
            n[a] = side % 2 ? -1.0 : 1.0;
            *distance = phi, *normal = ts_v3(n[0], n[1], n[2]), found = 1;
        }
    }
    return found;
}

int ts_sph_wall_may_be_near(const ts_sph_model *m, size_t k, ts_vec3 centre, double radius)
{
    const ts_sph_boundary *b = &m->boundaries[k];
    if (b->kind == TS_SPH_COLLIDER || b->kind == TS_SPH_TERRAIN) {   /* the box of its stored field */
        const ts_collider *c = b->shape;
        ts_transform t = c->interval > 0.0 ? ts_transform_lerp(c->from, c->to, m->s) : c->from;
        ts_vec3 rest = ts_quat_rotate(ts_quat_conjugate(t.rotation), ts_v3_sub(centre, t.translation));
        const double p[3] = {rest.x, rest.y, rest.z};
        double outside2 = 0.0;
        for (int a = 0; a < 3; a++) {
            double lo = c->origin[a], hi = c->origin[a] + (c->dims[a] - 1) * c->voxel_size;
            double d = p[a] < lo ? lo - p[a] : p[a] > hi ? p[a] - hi : 0.0;
            outside2 += d * d;
        }
        return outside2 < radius * radius;
    }
    if (b->kind == TS_SPH_BOX) {
        float distance = (float)radius;
        ts_vec3 normal;
        return box_nearest(m, b->sides, centre, &distance, &normal);
    }
    return 0;
}

int ts_sph_wall_distance(const ts_sph_model *m, size_t k, ts_vec3 p, float *distance, ts_vec3 *normal)
{
    const ts_sph_boundary *b = &m->boundaries[k];
    ts_collider_hit hit;
    if (b->kind == TS_SPH_COLLIDER || b->kind == TS_SPH_TERRAIN) {
        if (ts_collider_query(b->shape, m->s, p, &hit) && hit.distance < *distance) {
            *distance = hit.distance, *normal = hit.normal;
            return 1;
        }
        return 0;
    }
    return b->kind == TS_SPH_BOX && box_nearest(m, b->sides, p, distance, normal);
}

int ts_sph_nearest_wall(const ts_sph_model *m, ts_vec3 p, float reach, float *distance, ts_vec3 *normal)
{
    int found = 0;
    *distance = reach;
    for (size_t k = 0; k < m->n_boundaries; k++)
        found |= ts_sph_wall_distance(m, k, p, distance, normal);
    return found;
}

int ts_sph_site_is_free(const ts_sph_model *m, float x, float y, float z)
{
    const float min2 = 0.81f * m->spacing * m->spacing;
    ts_neighbor_ranges r;
    ts_grid_ranges_within(&m->grid, x, y, z, m->h + m->skin, &r); /* the grid is as old as the lists */
    for (int q = 0; q < r.n; q++)
        for (uint32_t j = r.begin[q]; j < r.end[q]; j++) {
            float dx = x - m->x[j], dy = y - m->y[j], dz = z - m->z[j];
            if (dx * dx + dy * dy + dz * dz < min2)
                return 0;
        }
    return 1;
}


/* An array of one zeroed item per thread, grown to `threads` items; 0 when out of memory. */
static int reserve_per_thread(void **array, int *count, int threads, size_t item)
{
    if (threads <= *count)
        return 1;
    char *grown = realloc(*array, (size_t)threads * item);
    if (!grown)
        return 0;
    memset(grown + (size_t)*count * item, 0, (size_t)(threads - *count) * item);
    *array = grown, *count = threads;
    return 1;
}

static ts_status reserve_blocks(ts_sph_model *m, int threads, ts_error *err)
{
    if (!reserve_per_thread((void **)&m->blocks, &m->n_blocks, threads, sizeof *m->blocks))
        return ts_fail(err, TS_ERR_NOMEM, "water: out of memory for the Verlet list build");
    return TS_OK;
}

/* The Verlet lists of particles [lo, hi) - the fluid within h + skin of
 * each, itself too, in grid order - appended to block b, their lengths to
 * vstart[i + 1]; the positions they were built at kept. 0 when out of memory. */
static int fill_list_block(ts_sph_model *m, const ts_sph_loops *loops, size_t lo, size_t hi, ts_sph_list_block *b)
{
    const float reach = m->h + m->skin;
    b->used = 0;
    for (size_t i = lo; i < hi; i++) {
        const float xi = m->x[i], yi = m->y[i], zi = m->z[i];
        ts_neighbor_ranges r;
        ts_grid_ranges_within(&m->grid, xi, yi, zi, reach, &r);
        size_t most = b->used + TS_SPH_LIST_SLACK;
        for (int q = 0; q < r.n; q++)
            most += r.end[q] - r.begin[q];
        if (most > b->cap && ts_grow((void **)&b->entries, &b->cap, most, sizeof *b->entries) != 0)
            return 0;
        uint32_t count = loops->within_ranges(m->x, m->y, m->z, &r, xi, yi, zi, reach * reach, b->entries + b->used);
        m->vstart[i + 1] = count;
        b->used += count;
        m->x0[i] = xi, m->y0[i] = yi, m->z0[i] = zi;
    }
    return 1;
}

/* Sort the fluid into cell order, grid it with cells of (h + skin) / 2 and
 * build every particle's Verlet list: each thread lists its block of
 * particles into a buffer of its own in one pass; the blocks are then copied
 * end to end (the lists do not depend on the number of threads). */
static ts_status build_lists(ts_sph_model *m, ts_error *err)
{
    /* the distance of VERLET_STEPS steps of the CFL limit at the top speed, twice (the lists serve
     * until a particle has moved half the skin); from v_max alone, which a restore recomputes, so a
     * resumed bake builds the same lists */
    double c = ts_sph_sound_speed(&m->eos), step = m->set.cfl_number * m->h / (c + m->v_max + 1e-9);
    double skin = 2.0 * VERLET_STEPS * m->v_max * step / m->h;
    m->skin = m->h * (float)(skin < SKIN_MIN ? SKIN_MIN : (skin > SKIN_MAX ? SKIN_MAX : skin));
    const int threads = omp_get_max_threads();
    ts_status st = reserve_blocks(m, threads, err);
    if (st == TS_OK)
        st = ts_grid_build(&m->grid, m->x, m->y, m->z, m->fluid.n, 0.5f * (m->h + m->skin), m->domain, err);
    if (st != TS_OK)
        return st;
    if ((st = ts_particles_permute(&m->fluid, m->grid.sorted, err)) != TS_OK)
        return st;
    /* from here on the grid's cell ranges are index ranges of the sorted arrays */
    const ts_sph_loops *loops = ts_sph_loops_select();
    int out_of_memory = 0;
    size_t total = 0;
    m->vstart[0] = 0;
    #pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), team = omp_get_num_threads();
        const size_t lo = m->fluid.n * (size_t)t / (size_t)team, hi = m->fluid.n * (size_t)(t + 1) / (size_t)team;
        ts_sph_list_block *b = &m->blocks[t];
        if (!fill_list_block(m, loops, lo, hi, b)) {
            #pragma omp atomic write
            out_of_memory = 1;
        }
        #pragma omp barrier
        #pragma omp single
        {
            for (int k = 0; k < team; k++) {
                m->blocks[k].offset = total;
                total += m->blocks[k].used;
            }
            if (total > UINT32_MAX || ts_grow((void **)&m->vlist, &m->vlist_cap, total, sizeof *m->vlist) != 0)
                out_of_memory = 1;
        }
        if (!out_of_memory) {
            memcpy(m->vlist + b->offset, b->entries, b->used * sizeof *b->entries);
            size_t end = b->offset;
            for (size_t i = lo; i < hi; i++) {
                end += m->vstart[i + 1];
                m->vstart[i + 1] = (uint32_t)end;
            }
        }
    }
    if (total > UINT32_MAX)
        return ts_fail(err, TS_ERR_NOMEM, "water: %zu particles need more than 4G Verlet list entries; "
                       "use a larger particle radius", m->fluid.n);
    if (out_of_memory)
        return ts_fail(err, TS_ERR_NOMEM, "water: out of memory for the Verlet lists of %zu particles", m->fluid.n);
    m->lists_stale = 0;
    return TS_OK;
}

ts_status ts_sph_build(ts_sph_model *m, ts_error *err)
{
    return m->lists_stale ? build_lists(m, err) : TS_OK;
}

/* --------------------------------------------------------------- density */

static ts_sph_fluid fluid_arrays(const ts_sph_model *m)
{
    ts_sph_fluid f = {m->x, m->y, m->z, m->vx, m->vy, m->vz, m->rho, m->pr, m->P, m->inv_rho, m->pos4, m->vel4};
    return f;
}

/* The packed records (sph_loops.h): positions before the density pass, the
 * rest after it. */
static void pack_positions(ts_sph_model *m)
{
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < m->fluid.n; i++)
        m->pos4[4 * i] = m->x[i], m->pos4[4 * i + 1] = m->y[i], m->pos4[4 * i + 2] = m->z[i];
}

static void pack_density_and_velocity(ts_sph_model *m)
{
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < m->fluid.n; i++) {
        m->pos4[4 * i + 3] = m->rho[i];
        m->vel4[4 * i] = m->vx[i], m->vel4[4 * i + 1] = m->vy[i], m->vel4[4 * i + 2] = m->vz[i];
        m->vel4[4 * i + 3] = m->P[i];
    }
}

/* Density by eq. 3.5; the fluid neighbours found here (r < h) are kept for
 * the force pass, which then skips the search (up to NEIGHBOUR_LIST each;
 * a particle with more has its whole Verlet list walked there). */
void ts_sph_density(ts_sph_model *m)
{
    const float h2 = m->h * m->h, m_poly6 = (float)(m->mass * m->k.poly6), rho0 = (float)m->set.rest_density;
    const ts_sph_fluid fluid = fluid_arrays(m);
    const ts_sph_loops *loops = ts_sph_loops_select();
    take_body_poses(m);
    pack_positions(m);
    #pragma omp parallel for schedule(dynamic, 256) /* as in compute_forces */
    for (size_t i = 0; i < m->fluid.n; i++) {
        const float xi = m->x[i], yi = m->y[i], zi = m->z[i];
        int count;
        float sum = loops->density_sum(&fluid, m->vlist + m->vstart[i], m->vstart[i + 1] - m->vstart[i], xi, yi, zi,
                                       h2, m->nbr + i * NEIGHBOUR_STRIDE, NEIGHBOUR_LIST, &count);
        m->nbr_n[i] = count > NEIGHBOUR_LIST ? NEIGHBOUR_OVERFLOW : (uint8_t)count;
        wall_sum ws;
        float terrain[4];
        wall_terms(m, xi, yi, zi, &ws, terrain);
        if (m->has_terrain)
            m->tl[i] = terrain[0], m->tnx[i] = terrain[1], m->tny[i] = terrain[2], m->tnz[i] = terrain[3];
        float rho = m_poly6 * sum + rho0 * (1.0f - ws.inside);          /* eq. 3.5 plus the walls */
        float p = ts_sph_pressure(&m->eos, rho);
        m->rho[i] = rho;
        m->pr[i] = p;
        m->inv_rho[i] = 1.0f / rho;
        m->P[i] = p / (rho * rho);
        m->wgx[i] = ws.g[0], m->wgy[i] = ws.g[1], m->wgz[i] = ws.g[2], m->wi[i] = ws.inside;
    }
    pack_density_and_velocity(m);
}

/* ------------------------------------------------------------------ forces */

static ts_sph_pair_consts make_pair_consts(const ts_sph_model *m)
{
    ts_sph_pair_consts c;
    double alpha_c_h = m->set.muller ? 0.0 : m->set.artificial_viscosity * ts_sph_sound_speed(&m->eos) * m->h;
    ts_sph_pair_consts_init(&c, m->h, m->mass, m->k.spiky_grad, m->k.visc_lap, ts_poly6_grad_coeff(&m->k),
                            m->set.viscosity, alpha_c_h, m->set.surface_tension, m->set.muller);
    return c;
}

/* The pair law between fluid particle i and a rigid particle, added to a. */
static inline void pair_acceleration(const ts_sph_pair_consts *c, float dx, float dy, float dz, float r2, float dvx,
                                     float dvy, float dvz, ts_sph_side si, ts_sph_side sj, float a[3])
{
    ts_sph_pair_terms t = ts_sph_pair_law(c, c->muller, r2, dvx * dx + dvy * dy + dvz * dz, si, sj);
    a[0] += t.s * dx - t.visc * dvx;
    a[1] += t.s * dy - t.visc * dvy;
    a[2] += t.s * dz - t.visc * dvz;
}

#define CROWD_BATCH 128

/* All fluid neighbours of particle i in its Verlet list (a crowd beyond the
 * neighbour list), in batches. */
static void verlet_neighbour_forces(const ts_sph_model *m, const ts_sph_loops *loops, const ts_sph_pair_consts *c,
                                    const ts_sph_fluid *fluid, size_t i, ts_sph_pair_sums *sums)
{
    const float xi = m->x[i], yi = m->y[i], zi = m->z[i], h2 = c->h2;
    uint32_t batch[CROWD_BATCH];
    int count = 0;
    for (uint32_t k = m->vstart[i]; k < m->vstart[i + 1]; k++) {
        uint32_t j = m->vlist[k];
        float dx = xi - m->x[j], dy = yi - m->y[j], dz = zi - m->z[j];
        float r2 = dx * dx + dy * dy + dz * dz;
        if (r2 < h2 && r2 > TS_SPH_SAME_POINT) {
            batch[count++] = j;
            if (count == CROWD_BATCH) {
                loops->pair_forces(c, fluid, i, batch, count, sums);
                count = 0;
            }
        }
    }
    loops->pair_forces(c, fluid, i, batch, count, sums);
}

/* What a terrain wall adds to the walls' mirrored pressure pw G n: the
 * sec. 4.3 blend F = (rho/rho_1) F_repul + (1 - rho/rho_1) F_attract below
 * rho_1, written as F_repul - (1 - rho/rho_1)(F_repul - F_attract), and the
 * wall friction a = -mu_w nu F_vis(l) v_t (sec. 3.2; the terrain is at rest).
 * Taken whole (mu_w = 1), the artificial viscosity against wall particles at
 * rest is a no-slip wall that brakes a flow one kernel deep at hundreds of
 * 1/s - the paper, too, had to set this friction's coefficient (sec. 4.2);
 * mu_w is the wall_friction setting. */
static void terrain_wall_terms(const ts_sph_model *m, size_t i, float pw, float nu_wall, float a[3])
{
    const float l = m->tl[i], n[3] = {m->tnx[i], m->tny[i], m->tnz[i]};
    const float rho = m->rho[i];
    if (m->set.wall_attraction > 0.0 && rho < m->rho_1) {
        float blend = 1.0f - rho / m->rho_1;
        float repulse = pw * ts_sph_wall_table(&m->wall, m->wall.gradient, l);
        float attract = (float)m->set.wall_attraction * ts_sph_wall_table(&m->wall, m->attraction, l);
        float f = -blend * (repulse + attract);
        a[0] += f * n[0], a[1] += f * n[1], a[2] += f * n[2];
    }
    const float v[3] = {m->vx[i], m->vy[i], m->vz[i]};
    const float vn = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
    const float k = (float)m->set.wall_friction * nu_wall * ts_sph_wall_table(&m->wall, m->wall.friction, l);
    for (int q = 0; q < 3; q++)
        a[q] -= k * (v[q] - vn * n[q]);
}

/* A body's surface drags the liquid along as the terrain does (its wall friction, relative to the surface's
 * velocity there). */
static void body_friction(const ts_sph_model *m, size_t i, const ts_collider_hit *hit, float nu_wall, float a[3])
{
    const float n[3] = {(float)hit->normal.x, (float)hit->normal.y, (float)hit->normal.z};
    const float v[3] = {m->vx[i] - (float)hit->velocity.x, m->vy[i] - (float)hit->velocity.y,
                        m->vz[i] - (float)hit->velocity.z};
    const float vn = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
    const float k = (float)m->set.wall_friction * nu_wall * ts_sph_wall_table(&m->wall, m->wall.friction, hit->distance);
    for (int q = 0; q < 3; q++)
        a[q] -= k * (v[q] - vn * n[q]);
}

static float wall_friction_nu(const ts_sph_model *m)
{
    return (float)(m->set.artificial_viscosity * ts_sph_sound_speed(&m->eos) * m->h / m->set.rest_density);
}

/* What fluid particle i does to a body whose surface hit is within h (wall weight z, gradient sum g): minus
 * what the body's wall did to it - the pressure share of the combined walls (wall_sum: this wall's gradient
 * times what the other walls leave), its friction and its hydrostatic part, the last two of which it gives
 * in `wall_accel` (the mirrored push is already in the particle's wall gradient) - at the particle's nearest
 * surface point. */
static void body_share(const ts_sph_model *m, size_t i, const ts_collider_hit *hit, float z, ts_vec3 g,
                       float nu_wall, float wall_accel[3], ts_sph_body_share *share)
{
    float own = z / (float)m->set.rest_density;   /* what the other walls leave: all of them but this one */
    float others = own < 0.99f ? m->wi[i] / (1.0f - own) : 0.0f;
    float push = (m->set.muller ? 1.0f : 2.0f) * m->P[i] * others;
    wall_accel[0] = wall_accel[1] = wall_accel[2] = 0.0f;
    body_friction(m, i, hit, nu_wall, wall_accel);
    /* The body's virtual particles carry the hydrostatic pressure of where they are, p_w = p_i + rho0 g . (x_w -
     * x_i) (Adami et al. 2012), not the particle's own: with p_w = p_i a body in a pressure gradient is pushed
     * up by an extra rho0 g x (about half a spacing) x its horizontal faces' area (a held 14 cm box: 7 %). The
     * difference adds -(rho0 / rho_i^2) T g, T the wall's moment (sph.h), scaled as the body's field scales G. */
    const float flat = ts_sph_wall_table(&m->wall, m->wall.gradient, hit->distance);
    const float scale = flat > 0.0f ? (float)ts_v3_length(g) / flat : 0.0f;
    const float tn = scale * ts_sph_wall_table(&m->wall, m->wall.moment_n, hit->distance);
    const float tt = scale * ts_sph_wall_table(&m->wall, m->wall.moment_t, hit->distance);
    const float n[3] = {(float)hit->normal.x, (float)hit->normal.y, (float)hit->normal.z};
    const float grav[3] = {(float)m->set.gravity[0], (float)m->set.gravity[1], (float)m->set.gravity[2]};
    const float gn = grav[0] * n[0] + grav[1] * n[1] + grav[2] * n[2];
    const float c = -(float)m->set.rest_density * m->inv_rho[i] * m->inv_rho[i] * others;
    for (int q = 0; q < 3; q++)
        wall_accel[q] += c * (tn * gn * n[q] + tt * (grav[q] - gn * n[q]));
    share->force[0] = -m->mass * (push * (float)g.x + wall_accel[0]);
    share->force[1] = -m->mass * (push * (float)g.y + wall_accel[1]);
    share->force[2] = -m->mass * (push * (float)g.z + wall_accel[2]);
    share->at[0] = m->x[i] - hit->normal.x * hit->distance;
    share->at[1] = m->y[i] - hit->normal.y * hit->distance;
    share->at[2] = m->z[i] - hit->normal.z * hit->distance;
}

/* One share list per thread of the coming parallel pass, emptied; 0 when out of memory. */
static int empty_share_lists(ts_sph_model *m, int threads)
{
    if (!reserve_per_thread((void **)&m->shares, &m->n_share_lists, threads, sizeof *m->shares))
        return 0;
    for (int t = 0; t < m->n_share_lists; t++)
        m->shares[t].n = 0;
    return 1;
}

/* Particle i's share on the body of boundary k into its thread's list (grown by that thread alone). */
static void add_share(ts_sph_model *m, ts_sph_body_share share)
{
    const int t = omp_get_thread_num();
    ts_sph_share_list *list = t < m->n_share_lists ? &m->shares[t] : NULL;   /* none: the lists could not be made */
    if (!list || (list->n == list->cap && ts_grow((void **)&list->items, &list->cap, list->n + 1, sizeof share) != 0)) {
        #pragma omp atomic write
        m->shares_lost = 1;
        return;
    }
    list->items[list->n++] = share;
}

/* ------------------------------------------------------- particle shifting
 *
 * Why. At rest, weakly compressible SPH keeps the lattice it started from (the liquid stays in layers a
 * spacing apart), and a lattice is a weak solid: a small distortion of it - a non-zero grad C, the
 * "zero-order" error of the symmetric pressure force - carries a pressure difference that a liquid could
 * not. Under a floating body the liquid held about 90 Pa more than at the same depth beside it (1 cm
 * particles), and bodies through the surface floated 1-3 % of their volume high. Each step every particle
 * moves a little down the gradient of the particle concentration C (Lind et al. 2012; Sun et al. 2017's
 * delta+-SPH: D of order CFL x Mach x h^2 per step), which removes the distortion and the false support:
 *
 *   delta r_i = -D h^2 (grad C_i - g / c^2),   grad C_i = sum_j V grad W_spiky(x_i - x_j) + the walls' share
 *
 * with V = m / rho0 and the pressure force's kernel, so that the walls' share is their gradient table (wg).
 * g / c^2 is the concentration gradient of the liquid's own compression under its weight (p = c^2 (rho -
 * rho0), grad p = rho g): without it every particle would be lifted a little each step, and shifting would
 * carry part of the weight that pressure should.
 *
 * Not near the free surface: there grad C is the kernel's missing half, and shifting along it throws the top
 * layers up (tried: they thinned, and a floating ball of ice sank 1.7 % of its volume too deep; shifted
 * only along the surface, it floated 1.8 % too high, with twice the jitter below). A particle whose own or
 * any neighbour's density is short of rho0 (SURFACE_DENSITY) has the surface within its kernel and is not
 * shifted.
 *
 * The price: particles at rest jitter, as shifting and pressure settle on packings a little apart (1 cm
 * particles at rest: 4 cm/s mean speed at D = 0.01 against 1.5 cm/s without; no flow at the scale of
 * the kernel). The shift is computed in the force pass, from the step's start, and added by the
 * integration; each particle's sums are its own: the same bits for any thread count. */

/* Below this share of rho0 a density is cut by the free surface (a resting liquid's top layer reads
 * 0.98-0.995 rho0, the rest rho0 or more by its compression). */
#define SURFACE_DENSITY 0.99f
/* No longer shift in a step than this share of the spacing: a guard for violent steps (shifts in a
 * resting or flowing liquid are 1e-4 - 1e-3 spacings). */
#define MAX_SHIFT 0.05f

static int shifting_on(const ts_sph_model *m)
{
    return !m->set.muller && m->set.particle_shifting > 0.0;
}

static void particle_shift(const ts_sph_model *m, size_t i, const ts_sph_pair_sums *sums, float d_h2,
                           const float hydrostatic[3])
{
    m->sx[i] = m->sy[i] = m->sz[i] = 0.0f;
    if (sums->rho_min < SURFACE_DENSITY * (float)m->set.rest_density)
        return;
    const float volume = m->mass / (float)m->set.rest_density;
    const float wall[3] = {m->wgx[i], m->wgy[i], m->wgz[i]};   /* -sum_walls m grad W: into the fluid */
    float s[3];
    for (int q = 0; q < 3; q++)
        s[q] = -d_h2 * (volume * sums->c[q] - wall[q] / (float)m->set.rest_density - hydrostatic[q]);
    const float length = sqrtf(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]), limit = MAX_SHIFT * m->spacing;
    const float cut = length > limit ? limit / length : 1.0f;
    m->sx[i] = cut * s[0], m->sy[i] = cut * s[1], m->sz[i] = cut * s[2];
}

void ts_sph_forces(ts_sph_model *m)
{
    const ts_sph_pair_consts c = make_pair_consts(m);
    const ts_sph_fluid fluid = fluid_arrays(m);
    const ts_sph_loops *loops = ts_sph_loops_select();
    const float gx = (float)m->set.gravity[0], gy = (float)m->set.gravity[1], gz = (float)m->set.gravity[2];
    const float normal_threshold = 0.1f / c.h;
    const int muller = m->set.muller;
    const float wall_scale = muller ? 1.0f : 2.0f;
    const float nu_wall = wall_friction_nu(m);   /* alpha h c / rho0 */
    double a2_max = 0.0;
    const int shifting = shifting_on(m);
    const double sound = ts_sph_sound_speed(&m->eos);
    const float d_h2 = (float)m->set.particle_shifting * c.h2, c2 = (float)(sound * sound);
    const float hydrostatic[3] = {gx / c2, gy / c2, gz / c2};
    const int threads = omp_get_max_threads();
    m->shares_lost = !empty_share_lists(m, threads);
    /* dynamic: the work per particle varies (neighbour count, bodies, walls); each particle's sums are its own */
    #pragma omp parallel for num_threads(threads) schedule(dynamic, 256) reduction(max : a2_max)
    for (size_t i = 0; i < m->fluid.n; i++) {
        const float xi = m->x[i], yi = m->y[i], zi = m->z[i];
        const float rho_i = m->rho[i];
        ts_sph_pair_sums sums = {{0, 0, 0}, {0, 0, 0}, 0.0f, {0, 0, 0}, rho_i};
        if (m->nbr_n[i] != NEIGHBOUR_OVERFLOW)
            loops->pair_forces(&c, &fluid, i, m->nbr + i * NEIGHBOUR_STRIDE, m->nbr_n[i], &sums);
        else /* a crowd beyond the list: the whole Verlet list */
            verlet_neighbour_forces(m, loops, &c, &fluid, i, &sums);
        if (shifting)
            particle_shift(m, i, &sums, d_h2, hydrostatic);
        float *a = sums.a, *n = sums.n, lap = sums.lap;
        float pw = wall_scale * m->P[i];                                /* walls: mirrored pressure */
        a[0] += pw * m->wgx[i], a[1] += pw * m->wgy[i], a[2] += pw * m->wgz[i];
        if (m->has_terrain && m->tl[i] < c.h)
            terrain_wall_terms(m, i, pw, nu_wall, a);
        for (size_t k = 0; k < m->n_boundaries; k++) {   /* bodies' mirrored push is in wg; the rest: */
            ts_collider_hit hit;
            float z, wall_accel[3];
            ts_vec3 g;
            if (m->boundaries[k].kind != TS_SPH_BODY || !body_wall(m, &m->boundaries[k], xi, yi, zi, &hit, &z, &g))
                continue;
            ts_sph_body_share share = {(uint32_t)i, (uint32_t)k, {0, 0, 0}, {0, 0, 0}};
            body_share(m, i, &hit, z, g, nu_wall, wall_accel, &share);
            a[0] += wall_accel[0], a[1] += wall_accel[1], a[2] += wall_accel[2];
            add_share(m, share);
        }
        float n_len = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (c.sigma > 0.0f && n_len > normal_threshold) {               /* eq. 3.23 */
            float f = -c.sigma * lap / (n_len * rho_i);
            a[0] += f * n[0], a[1] += f * n[1], a[2] += f * n[2];
        }
        a[0] += gx, a[1] += gy, a[2] += gz;
        m->ax[i] = a[0], m->ay[i] = a[1], m->az[i] = a[2];
        double a2 = (double)a[0] * a[0] + (double)a[1] * a[1] + (double)a[2] * a[2];
        if (a2 > a2_max)
            a2_max = a2;
    }
    m->a_max = sqrt(a2_max);
}

int ts_sph_body_push(const ts_sph_model *m, size_t k, size_t i, ts_vec3 *force, ts_vec3 *at)
{
    ts_collider_hit hit;
    float z, wall_accel[3];
    ts_vec3 g;
    if (!body_wall(m, &m->boundaries[k], m->x[i], m->y[i], m->z[i], &hit, &z, &g))
        return 0;
    ts_sph_body_share share;
    body_share(m, i, &hit, z, g, wall_friction_nu(m), wall_accel, &share);
    *force = ts_v3(share.force[0], share.force[1], share.force[2]);
    *at = ts_v3(share.at[0], share.at[1], share.at[2]);
    return 1;
}

static int share_order(const void *a, const void *b)
{
    const ts_sph_body_share *p = a, *q = b;
    if (p->i != q->i)
        return p->i < q->i ? -1 : 1;
    return (p->k > q->k) - (p->k < q->k);
}

/* Each thread's list holds its chunks of the fluid in the order it took them - rising, so the lists need no
 * sort, but nothing in OpenMP promises it: a list out of order is sorted first. Then the lists are merged,
 * and every share is summed in the order of (particle, boundary), whichever thread found it. */
ts_status ts_sph_body_forces(ts_sph_model *m, ts_error *err)
{
    for (size_t k = 0; k < m->n_boundaries; k++)
        m->boundaries[k].force = m->boundaries[k].torque = ts_v3(0, 0, 0);
    if (m->shares_lost)
        return ts_fail(err, TS_ERR_NOMEM, "water: out of memory for the liquid's pushes on the bodies");
    const int lists = m->n_share_lists;
    for (int t = 0; t < lists; t++) {
        ts_sph_share_list *list = &m->shares[t];
        list->read = 0;
        for (size_t q = 1; q < list->n; q++)
            if (share_order(&list->items[q - 1], &list->items[q]) > 0) {
                qsort(list->items, list->n, sizeof *list->items, share_order);
                break;
            }
    }
    for (;;) {
        int first = -1;
        for (int t = 0; t < lists; t++)
            if (m->shares[t].read < m->shares[t].n &&
                (first < 0 || share_order(&m->shares[t].items[m->shares[t].read],
                                          &m->shares[first].items[m->shares[first].read]) < 0))
                first = t;
        if (first < 0)
            return TS_OK;
        const ts_sph_body_share *s = &m->shares[first].items[m->shares[first].read++];
        const ts_vec3 f = ts_v3(s->force[0], s->force[1], s->force[2]), at = ts_v3(s->at[0], s->at[1], s->at[2]);
        ts_sph_boundary *bd = &m->boundaries[s->k];
        bd->force = ts_v3_add(bd->force, f);
        bd->torque = ts_v3_add(bd->torque, ts_v3_cross(ts_v3_sub(at, bd->body->x), f));
    }
}

/* -------------------------------------------------------------- integration */

/* Keep a fluid particle out of a rigid body (the body's wall pressure does
 * this almost always; this catches a particle driven through it in one step):
 * distance from the body's rest-pose field, within r_body_contact. The
 * momentum of this correction is not given back to the body, so it must stay
 * a rare catch: at a radius (as for the walls) the liquid's first layer rested
 * on it and the body missed part of its buoyancy (see ts_sph_init). */
static void keep_out_of_body(const ts_sph_model *m, const ts_sph_boundary *bd, size_t i)
{
    const ts_rigid_body *rb = bd->body;
    ts_vec3 p = ts_v3(m->x[i], m->y[i], m->z[i]);
    ts_vec3 rel = ts_v3_sub(p, rb->x);
    if (ts_v3_length(rel) > bd->radius + m->spacing)
        return;
    ts_collider_hit hit;
    if (!ts_collider_query(bd->shape, 0.0, ts_v3_add(bd->centroid0, ts_m3_mul_v3(bd->to_body, rel)), &hit) ||
        hit.distance >= m->r_body_contact)
        return;
    ts_vec3 n = ts_m3_mul_v3(bd->to_world, hit.normal);
    double push = m->r_body_contact - hit.distance;
    m->x[i] += (float)(push * n.x), m->y[i] += (float)(push * n.y), m->z[i] += (float)(push * n.z);
    ts_vec3 u = body_point_velocity(bd, p);
    ts_vec3 v = ts_v3(m->vx[i], m->vy[i], m->vz[i]);
    double vn = ts_v3_dot(ts_v3_sub(v, u), n);
    if (vn < 0.0) {
        v = ts_v3_sub(v, ts_v3_scale(n, vn));
        m->vx[i] = (float)v.x, m->vy[i] = (float)v.y, m->vz[i] = (float)v.z;
    }
}

/* Keep a fluid particle out of a collider: push it back to r_contact and
 * take away its approaching velocity relative to the wall, and a share
 * `friction` of its sliding velocity. */
static void keep_out_of_collider(const ts_sph_model *m, const ts_collider *c, float friction, size_t i)
{
    const float rc = m->r_contact, keep = 1.0f - friction;
    ts_collider_hit hit;
    ts_vec3 p = ts_v3(m->x[i], m->y[i], m->z[i]);
    if (!ts_collider_query(c, m->s, p, &hit) || hit.distance >= rc)
        return;
    float push = rc - hit.distance;
    m->x[i] += push * (float)hit.normal.x, m->y[i] += push * (float)hit.normal.y, m->z[i] += push * (float)hit.normal.z;
    float rvx = m->vx[i] - (float)hit.velocity.x, rvy = m->vy[i] - (float)hit.velocity.y,
          rvz = m->vz[i] - (float)hit.velocity.z;
    float vn = rvx * (float)hit.normal.x + rvy * (float)hit.normal.y + rvz * (float)hit.normal.z;
    float tx = rvx - vn * (float)hit.normal.x, ty = rvy - vn * (float)hit.normal.y, tz = rvz - vn * (float)hit.normal.z;
    float away = vn > 0.0f ? vn : 0.0f; /* an approaching normal speed is taken away, a leaving one kept */
    m->vx[i] = (float)hit.velocity.x + keep * tx + away * (float)hit.normal.x;
    m->vy[i] = (float)hit.velocity.y + keep * ty + away * (float)hit.normal.y;
    m->vz[i] = (float)hit.velocity.z + keep * tz + away * (float)hit.normal.z;
}

/* The same inside the domain box, side by side, at its wall sides. */
static void keep_in_box(const ts_sph_model *m, unsigned sides, size_t i)
{
    const float rc = m->r_contact, keep = 1.0f - (float)m->set.wall_friction;
    float *p[3] = {&m->x[i], &m->y[i], &m->z[i]}, *v[3] = {&m->vx[i], &m->vy[i], &m->vz[i]};
    for (int a = 0; a < 3; a++) {
        int hit = 0;
        if ((sides >> (2 * a) & 1u) && *p[a] < m->domain[a] + rc) {
            *p[a] = m->domain[a] + rc;
            if (*v[a] < 0.0f) *v[a] = 0.0f;
            hit = 1;
        } else if ((sides >> (2 * a + 1) & 1u) && *p[a] > m->domain[a + 3] - rc) {
            *p[a] = m->domain[a + 3] - rc;
            if (*v[a] > 0.0f) *v[a] = 0.0f;
            hit = 1;
        }
        if (hit)
            for (int t = 0; t < 3; t++)
                if (t != a)
                    *v[t] *= keep;
    }
}

/* Every boundary in the list's order keeps particle i out; `moved` is how
 * far it went this step. */
static void keep_out(const ts_sph_model *m, size_t i, float moved)
{
    for (size_t k = 0; k < m->n_boundaries; k++) {
        const ts_sph_boundary *b = &m->boundaries[k];
        /* the ground was this far at the step's start (a voxel of margin for what settled since) */
        if (b->kind == TS_SPH_TERRAIN && m->tl[i] - moved > m->r_contact + b->shape->voxel_size)
            continue;
        switch (b->kind) {
        case TS_SPH_COLLIDER: keep_out_of_collider(m, b->shape, (float)m->set.wall_friction, i); break;
        /* the ground's friction is its wall term (terrain_wall_terms): a contact only stops the approach */
        case TS_SPH_TERRAIN: keep_out_of_collider(m, b->shape, 0.0f, i); break;
        case TS_SPH_BODY: keep_out_of_body(m, b, i); break;
        case TS_SPH_BOX: keep_in_box(m, b->sides, i); break;
        }
    }
}

void ts_sph_integrate(ts_sph_model *m, double dt)
{
    const float fdt = (float)dt;
    const int shifting = shifting_on(m);
    double v_max = 0.0, moved_max = 0.0;
    #pragma omp parallel for schedule(static) reduction(max : v_max, moved_max)
    for (size_t i = 0; i < m->fluid.n; i++) {
        m->vx[i] += fdt * m->ax[i], m->vy[i] += fdt * m->ay[i], m->vz[i] += fdt * m->az[i]; /* eq. 3.43 */
        float dx = fdt * m->vx[i], dy = fdt * m->vy[i], dz = fdt * m->vz[i];                 /* eq. 3.42 */
        if (shifting)
            dx += m->sx[i], dy += m->sy[i], dz += m->sz[i];
        m->x[i] += dx, m->y[i] += dy, m->z[i] += dz;
        keep_out(m, i, sqrtf(dx * dx + dy * dy + dz * dz));
        double v2 = (double)m->vx[i] * m->vx[i] + (double)m->vy[i] * m->vy[i] + (double)m->vz[i] * m->vz[i];
        if (v2 > v_max)
            v_max = v2;
        double mx = m->x[i] - m->x0[i], my = m->y[i] - m->y0[i], mz = m->z[i] - m->z0[i];
        double moved2 = mx * mx + my * my + mz * mz;
        if (moved2 > moved_max)
            moved_max = moved2;
    }
    m->v_max = sqrt(v_max);
    /* two particles each moved half the skin towards each other: the lists may miss a pair */
    if (2.0 * sqrt(moved_max) >= m->skin)
        m->lists_stale = 1;
}


/* Stable compaction: order and ids kept. */
size_t ts_sph_remove_escaped(ts_sph_model *m)
{
    if (box_sides(m) == TS_SPH_ALL_SIDES)
        return 0;
    size_t out = 0;
    for (size_t i = 0; i < m->fluid.n; i++) {
        m->keep[i] = (uint8_t)ts_sph_in_domain(m, i);
        out += !m->keep[i];
    }
    if (out == 0)
        return 0;
    m->lists_stale = 1;
    return ts_particles_compact(&m->fluid, m->keep);
}

int ts_sph_all_finite(const ts_sph_model *m)
{
    int bad = 0;
    #pragma omp parallel for schedule(static) reduction(| : bad)
    for (size_t i = 0; i < m->fluid.n; i++)
        bad |= !isfinite(m->x[i] + m->y[i] + m->z[i] + m->vx[i] + m->vy[i] + m->vz[i]);
    return !bad;
}

double ts_sph_stable_dt(const ts_sph_model *m)
{
    double c = ts_sph_sound_speed(&m->eos);
    double limit = m->set.cfl_number * m->h / (c + m->v_max);                       /* CFL */
    if (m->set.viscosity > 0.0) {
        double nu = m->set.viscosity / m->set.rest_density;
        double visc = 0.125 * m->h * m->h / nu;                                  /* viscous diffusion */
        if (visc < limit)
            limit = visc;
    }
    if (m->a_max > 0.0) {
        double force = 0.25 * sqrt(m->h / m->a_max);                             /* force */
        if (force < limit)
            limit = force;
    }
    return limit;
}

