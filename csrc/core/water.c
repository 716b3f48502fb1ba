/* water.c - SPH water with two-way rigid bodies (see water.h).
 *
 * One substep (step()):
 *   1. the fluid is sorted into grid-cell order (a cell range of the grid is
 *      then an index range of the arrays); inflow objects top up their volume;
 *   2. density of every fluid particle, eq. 3.5, with the wall weight of
 *      colliders, domain sides and rigid bodies (each body's own, from its
 *      shape: wall_field.h); pressure from the equation of state; the
 *      neighbours found are kept for step 3 (this search and step 3's pair
 *      loop are in sph_loops.c, in an AVX2 and a portable form);
 *   3. acceleration of every fluid particle: pressure (eq. 3.16, or the
 *      symmetric WCSPH form), viscosity (eq. 3.19 and artificial viscosity),
 *      surface tension (eqs. 3.20-3.23), walls, gravity; a body's surface
 *      pushes with the particle's own pressure (mirrored, as eq. 3.35);
 *   4. the reaction on each body, particle by particle in a fixed order, plus
 *      the film's pressure where it is closer to a wall than a particle fits
 *      (film.h), into force and torque;
 *   5. leap-frog (eqs. 3.42-3.43: velocities live at half steps), walls
 *      projected, bodies integrated (rigid.h) and their contacts resolved.
 * Every loop over particles is in gather form, so the results are the same
 * bytes whatever the number of threads.
 */
#include "water.h"

#include <math.h>
#include <stddef.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "collider.h"
#include "film.h"
#include "grid.h"
#include "kernels.h"
#include "mesh.h"
#include "particles.h"
#include "rigid.h"
#include "sph.h"
#include "sph_model.h"
#include "sph_sources.h"
#include "surface.h"

#define CONTACT_ITERATIONS 4


typedef struct body {
    char name[64];
    ts_rigid_body rb;
    size_t first, count;        /* its particles in the rigid arrays */
    ts_vec3 origin_offset;      /* object origin - centroid, body frame */
    ts_quat rotation0;          /* object rotation at rest */
    double radius;              /* of its sample points around the centroid */
    ts_vec3 centroid0;          /* centre of mass at rest (the collider's frame) */
    ts_collider shape;          /* signed distance at rest: keeps liquid out of the body */
    ts_wall_field field;        /* its wall weight, in the shape's frame */
    ts_surface_samples surface; /* for the film between it and a wall (film.h) */
    size_t boundary;            /* its surface among the fluid's boundaries */
    ts_vec3 fluid_force, fluid_torque; /* the liquid's, this step (the film's included) */
} body;

struct ts_water {
    ts_water_params p;
    ts_sph_model sph;            /* the fluid and its boundaries (bodies' surfaces among them) */
    ts_particles samples;        /* points filling each body's outer layer, for its contacts: */
    float *rlx, *rly, *rlz;      /* in their body's frame */
    uint32_t *rbody;
    body *bodies;
    size_t n_bodies;
    ts_moving_collider *colliders;
    size_t n_colliders;
    ts_sph_inflow *inflows;
    size_t n_inflows;
    ts_film film;                /* work space of the bodies' films */
    uint32_t next_id;
    size_t removed;
    int hold_bodies;             /* ts_water_hold_bodies */
    ts_step_context now;         /* where the frame loop is */
    long steps;
};

/* ------------------------------------------------------------------ set-up */

#define P ts_water_params
static const ts_param_def PARAMS[] = {
    TS_ENUM(P, solver, TS_WATER_WCSPH, "wcsph", "muller"),
    TS_REAL(P, particle_radius, 0.001, 1.0, 0.02),
    TS_REAL(P, rest_density, 1.0, 30000.0, 1000.0),
    TS_REAL(P, speed_of_sound, 1.0, 1000.0, 30.0),
    TS_REAL(P, gas_stiffness, 0.01, 1e6, 200.0),
    TS_REAL(P, viscosity, 0.0, 1000.0, 0.001),
    TS_REAL(P, artificial_viscosity, 0.0, 1.0, 0.08),
    TS_REAL(P, surface_tension, 0.0, 100.0, 0.0728),
    TS_REAL(P, wall_friction, 0.0, 1.0, 0.1),
    TS_REAL(P, particle_shifting, 0.0, 0.2, 0.01),
    TS_VEC3(P, gravity, -1000.0, 1000.0, 0.0, 0.0, -9.81),
    TS_BOOL(P, wall_left, 1),
    TS_BOOL(P, wall_right, 1),
    TS_BOOL(P, wall_front, 1),
    TS_BOOL(P, wall_back, 1),
    TS_BOOL(P, wall_bottom, 1),
    TS_BOOL(P, wall_top, 0),
    TS_REAL(P, cfl_number, 0.01, 1.0, 0.4),
    TS_LONG(P, max_particles, 1, 200e6, 4e6),
    TS_BOOL(P, write_surface, 1),
    TS_ENUM(P, surface_method, TS_SURFACE_ANISOTROPIC, "anisotropic", "spheres"),
    TS_REAL(P, surface_voxel_ratio, 0.1, 4.0, 0.5),
    TS_REAL(P, surface_radius_scale, 0.5, 4.0, 2.0),
    TS_INT(P, surface_smoothing, 0, 20, 4),
    TS_SCENE_VEC3(P, domain_min, -1e6, 1e6, 0.0, 0.0, 0.0),
    TS_SCENE_VEC3(P, domain_max, -1e6, 1e6, 1.0, 1.0, 1.0),
    TS_SCENE_INT(P, frame_start, -1e6, 1e6, 1),
    TS_SCENE_REAL(P, fps, 1e-3, 1e4, 24.0),
    TS_SCENE_SEED(P, seed),
};
#undef P
const ts_param_table ts_water_param_table = TS_PARAM_TABLE("water", ts_water_params, PARAMS);

ts_water_params ts_water_params_default(void)
{
    ts_water_params p;
    ts_params_default(&ts_water_param_table, &p);
    return p;
}

static ts_status check_params(const ts_water_params *p, ts_error *err)
{
    ts_status st = ts_params_check(&ts_water_param_table, p, err);
    for (int a = 0; st == TS_OK && a < 3; a++)
        if (!(p->domain_max[a] > p->domain_min[a]))
            return ts_fail(err, TS_ERR_INVALID, "water: the domain box is empty; give the Domain object a size");
    return st;
}

/* Mueller's ideal-gas pressure (eq. 3.17) rather than the weakly compressible form. */
static inline int uses_muller(const ts_water *w) { return w->p.solver == TS_WATER_MULLER; }

static ts_mesh_ref mesh_of(const ts_water_object *o)
{
    ts_mesh_ref r = {o->name, o->vertices, o->vertex_count, o->triangles, o->triangle_count};
    return r;
}

/* Is a point inside (or against) an obstacle or a rigid body at rest? Fluid
 * must not start there. rigid: the bodies' sample points in world space with
 * a grid over them. */
static int inside_solid(const ts_water *w, float x, float y, float z, const ts_point_list *rigid,
                        const ts_grid *rigid_grid)
{
    ts_collider_hit hit;
    for (size_t c = 0; c < w->n_colliders; c++)
        if (ts_collider_query(&w->colliders[c].c, 0.0, ts_v3(x, y, z), &hit) && hit.distance < w->sph.r_contact)
            return 1;
    /* the whole inside of every body, not only the band its particles cover: liquid left inside a
     * thick body bursts out at the first step and throws it (bodies are at rest: their shape's frame) */
    for (size_t b = 0; b < w->n_bodies; b++)
        if (ts_collider_query(&w->bodies[b].shape, 0.0, ts_v3(x, y, z), &hit) && hit.distance < w->sph.r_contact)
            return 1;
    if (rigid->n == 0)
        return 0;
    const float min2 = 0.81f * w->sph.spacing * w->sph.spacing;
    ts_neighbor_ranges r;
    ts_grid_neighbor_ranges(rigid_grid, x, y, z, &r);
    for (int q = 0; q < r.n; q++)
        for (uint32_t k = r.begin[q]; k < r.end[q]; k++) {
            uint32_t j = rigid_grid->sorted[k];
            float dx = x - rigid->c[0][j], dy = y - rigid->c[1][j], dz = z - rigid->c[2][j];
            if (dx * dx + dy * dy + dz * dz < min2)
                return 1;
        }
    return 0;
}

static ts_status add_collider(ts_water *w, const ts_water_object *o, ts_error *err)
{
    ts_moving_collider *e = &w->colliders[w->n_colliders];
    ts_status st = ts_collider_from_mesh(&e->c, o->name, o->vertices, o->vertex_count, o->triangles,
                                         o->triangle_count, 0.5 * w->sph.spacing, 2.0 + w->sph.h / (0.5 * w->sph.spacing),
                                         err);
    if (st != TS_OK)
        return st;
    e->m.rows = o->motion;
    e->m.frames = o->motion_frames;
    w->n_colliders++;
    return TS_OK;
}

static ts_status add_body(ts_water *w, const ts_water_object *o, ts_point_list *pts, ts_error *err)
{
    body *b = &w->bodies[w->n_bodies];
    snprintf(b->name, sizeof b->name, "%s", o->name);
    if (!(o->density > 0.0) || !isfinite(o->density))
        return ts_fail(err, TS_ERR_INVALID, "rigid body '%s': density must be above 0 kg/m³ (got %g)", o->name,
                       o->density);
    ts_mass_properties mp;
    ts_status st = ts_mesh_mass_properties(o->vertices, o->vertex_count, o->triangles, o->triangle_count, o->name,
                                           &mp, err);
    if (st == TS_OK)
        st = ts_rigid_init(&b->rb, &mp, o->density, o->name, err);
    if (st == TS_OK)
        st = ts_collider_from_mesh(&b->shape, o->name, o->vertices, o->vertex_count, o->triangles, o->triangle_count,
                                   0.25 * w->sph.spacing, 2.0 + (w->sph.h + w->sph.spacing) / (0.25 * w->sph.spacing), err);   /* distances out to h: its wall weight */
    b->centroid0 = mp.centroid;
    const ts_mesh_ref mesh = mesh_of(o);
    if (st == TS_OK)
        st = ts_wall_field_build(&b->field, &b->shape, &w->sph.k, &w->sph.wall, w->sph.spacing, w->sph.mass, err);
    if (st == TS_OK)
        st = ts_surface_samples_from_mesh(&b->surface, &mesh, mp.centroid, 0.5 * w->sph.spacing, err);
    if (st != TS_OK)
        return st;
    ts_rigid_set_velocity(&b->rb, ts_v3(o->velocity[0], o->velocity[1], o->velocity[2]),
                          ts_v3(o->angular_velocity[0], o->angular_velocity[1], o->angular_velocity[2]));
    size_t before = pts->n;
    pts->max_depth = w->sph.h;
    if ((st = ts_lattice_fill(&mesh, w->sph.spacing, 0.5 * w->sph.spacing, ts_point_list_add, pts, err)) != TS_OK)
        return st;
    if (pts->n == before && !ts_point_list_add(pts, (float)mp.centroid.x, (float)mp.centroid.y, (float)mp.centroid.z,
                                            0.0f))
        return ts_fail(err, TS_ERR_NOMEM, "water: out of memory sampling '%s'", o->name);
    b->first = before;
    b->count = pts->n - before;
    b->origin_offset = ts_v3_sub(ts_v3(o->origin[0], o->origin[1], o->origin[2]), mp.centroid);
    b->rotation0 = ts_quat_normalize((ts_quat){o->rotation[0], o->rotation[1], o->rotation[2], o->rotation[3]});
    b->radius = 0.0;
    for (size_t i = before; i < pts->n; i++) {
        double r = ts_v3_length(ts_v3_sub(ts_v3(pts->c[0][i], pts->c[1][i], pts->c[2][i]), mp.centroid));
        if (r > b->radius)
            b->radius = r;
    }
    w->n_bodies++;
    return TS_OK;
}

static ts_status add_inflow(ts_water *w, const ts_water_object *o, ts_error *err)
{
    const ts_mesh_ref mesh = mesh_of(o);
    ts_status st = ts_sph_inflow_init(&w->inflows[w->n_inflows], &mesh, o->motion, o->motion_frames, o->velocity,
                                      o->emit_start, o->emit_end, w->sph.spacing, err);
    w->n_inflows++; /* freed with the rest either way */
    return st;
}

typedef struct fluid_fill {
    const ts_water *w;
    ts_point_list *pts;
    const ts_point_list *rigid;
    ts_grid rigid_grid;
} fluid_fill;

static int keep_fluid_point(void *user, float x, float y, float z, float phi)
{
    fluid_fill *f = user;
    const float *d = f->w->sph.domain;
    if (x < d[0] || x > d[3] || y < d[1] || y > d[4] || z < d[2] || z > d[5])
        return 1; /* outside the domain: it would be removed at once */
    if (inside_solid(f->w, x, y, z, f->rigid, &f->rigid_grid))
        return 1;
    return ts_point_list_add(f->pts, x, y, z, phi);
}

static ts_status count_roles(const ts_water_object *objects, size_t n, size_t counts[4], ts_error *err)
{
    counts[0] = counts[1] = counts[2] = counts[3] = 0;
    for (size_t i = 0; i < n; i++) {
        const ts_water_object *o = &objects[i];
        if (o->role < TS_WATER_FLUID || o->role > TS_WATER_OBSTACLE)
            return ts_fail(err, TS_ERR_INVALID, "object '%s' has an unknown water role %d", o->name, (int)o->role);
        ts_status st = ts_mesh_check_closed(o->vertices, o->vertex_count, o->triangles, o->triangle_count, o->name,
                                            err);
        if (st != TS_OK)
            return st;
        if (o->motion && o->motion_frames < 1)
            return ts_fail(err, TS_ERR_INVALID, "object '%s': motion has no frames", o->name);
        counts[o->role]++;
    }
    return TS_OK;
}

/* The domain sides that are walls, as the box boundary's mask (sph_model.h). */
static unsigned wall_sides(const ts_water_params *p)
{
    const int walls[6] = {p->wall_left, p->wall_right, p->wall_front, p->wall_back, p->wall_bottom, p->wall_top};
    unsigned sides = 0;
    for (int k = 0; k < 6; k++)
        sides |= walls[k] ? 1u << k : 0u;
    return sides;
}

/* Fluid objects filled on the lattice, leaving out what is inside solids;
 * each particle starts with its object's initial velocity. */
static ts_status place_fluid(const ts_water *w, const ts_water_object *objects, size_t count, ts_point_list *fluid,
                             const ts_point_list *rigid, ts_error *err)
{
    fluid_fill ff;
    ff.w = w, ff.pts = fluid, ff.rigid = rigid;
    ts_grid_init(&ff.rigid_grid);
    ts_status st = TS_OK;
    if (rigid->n > 0)
        st = ts_grid_build(&ff.rigid_grid, rigid->c[0], rigid->c[1], rigid->c[2], rigid->n, w->sph.spacing, NULL, err);
    for (size_t i = 0; i < count && st == TS_OK; i++) {
        if (objects[i].role != TS_WATER_FLUID)
            continue;
        for (int a = 0; a < 3; a++)
            fluid->velocity[a] = (float)objects[i].velocity[a];
        const ts_mesh_ref mesh = mesh_of(&objects[i]);
        st = ts_lattice_fill(&mesh, w->sph.spacing, 0.5 * w->sph.spacing, keep_fluid_point, &ff, err);
    }
    ts_grid_free(&ff.rigid_grid);
    return st;
}

ts_status ts_water_create(ts_water **out, const ts_water_params *p, const ts_water_object *objects,
                          size_t object_count, ts_error *err)
{
    *out = NULL;
    ts_status st = check_params(p, err);
    size_t counts[4];
    if (st == TS_OK)
        st = count_roles(objects, object_count, counts, err);
    if (st != TS_OK)
        return st;
    ts_water *w = calloc(1, sizeof *w);
    if (!w)
        return ts_fail(err, TS_ERR_NOMEM, "water: out of memory");
    w->p = *p;
    const ts_sph_settings set = {
        p->particle_radius, p->rest_density, p->speed_of_sound, p->gas_stiffness, p->viscosity,
        p->artificial_viscosity, p->surface_tension, p->wall_friction, p->cfl_number,
        {p->gravity[0], p->gravity[1], p->gravity[2]}, p->solver == TS_WATER_MULLER,
        {p->domain_min[0], p->domain_min[1], p->domain_min[2]}, {p->domain_max[0], p->domain_max[1], p->domain_max[2]},
        0.0, /* no terrain: no attraction */
        p->particle_shifting,
    };
    const ts_particle_column body_frame[] = {
        TS_WORK_COLUMN("rlx", &w->rlx, sizeof(float)), TS_WORK_COLUMN("rly", &w->rly, sizeof(float)),
        TS_WORK_COLUMN("rlz", &w->rlz, sizeof(float)), TS_WORK_COLUMN("rbody", &w->rbody, sizeof(uint32_t)),
    };
    ts_particles_init(&w->samples, "body samples", 0);
    st = ts_sph_init(&w->sph, &set, err);
    if (st == TS_OK)
        st = ts_particles_register(&w->samples, body_frame, 4, err);
    w->now = (ts_step_context){p->frame_start, 1.0 / p->fps, 0.0, 0.0, 0.0};
    w->colliders = calloc(counts[TS_WATER_OBSTACLE] + 1, sizeof *w->colliders);
    w->bodies = calloc(counts[TS_WATER_RIGID] + 1, sizeof *w->bodies);
    w->inflows = calloc(counts[TS_WATER_INFLOW] + 1, sizeof *w->inflows);
    ts_point_list fluid = {0}, rigid = {0};
    if (st == TS_OK && (!w->colliders || !w->bodies || !w->inflows))
        st = ts_fail(err, TS_ERR_NOMEM, "water: out of memory");
    for (size_t i = 0; i < object_count && st == TS_OK; i++) {
        const ts_water_object *o = &objects[i];
        if (o->role == TS_WATER_OBSTACLE)
            st = add_collider(w, o, err);
        else if (o->role == TS_WATER_RIGID)
            st = add_body(w, o, &rigid, err);
        else if (o->role == TS_WATER_INFLOW)
            st = add_inflow(w, o, err);
    }
    if (st == TS_OK)
        st = place_fluid(w, objects, object_count, &fluid, &rigid, err);
    /* the fluid's boundaries, in the order walls are summed and applied: colliders, bodies, the box */
    for (size_t c = 0; c < w->n_colliders && st == TS_OK; c++)
        st = ts_sph_add_boundary(&w->sph, (ts_sph_boundary){.kind = TS_SPH_COLLIDER, .shape = &w->colliders[c].c}, err);
    for (size_t b = 0; b < w->n_bodies && st == TS_OK; b++) {
        body *bd = &w->bodies[b];
        bd->boundary = w->sph.n_boundaries;
        st = ts_sph_add_boundary(&w->sph, (ts_sph_boundary){.kind = TS_SPH_BODY, .shape = &bd->shape, .body = &bd->rb, .field = &bd->field,
                                                           .centroid0 = bd->centroid0, .radius = bd->radius}, err);
    }
    if (st == TS_OK && wall_sides(p))
        st = ts_sph_add_boundary(&w->sph, (ts_sph_boundary){.kind = TS_SPH_BOX, .sides = wall_sides(p)}, err);
    double budget = (double)fluid.n;
    for (size_t i = 0; i < w->n_inflows; i++)
        budget += ts_sph_inflow_budget(&w->inflows[i], w->now.frame_dt, w->sph.spacing);
    if (st == TS_OK && budget + rigid.n > (double)p->max_particles)
        st = ts_fail(err, TS_ERR_NOMEM, "water: this scene needs up to %.0f particles, above max_particles = %ld; "
                     "raise max_particles or the particle radius", budget + rigid.n, p->max_particles);
    if (st == TS_OK && budget == 0.0)
        st = ts_fail(err, TS_ERR_INVALID, "water: no liquid inside the domain: give a closed mesh inside the "
                     "Domain the Fluid or Inflow role (liquid inside obstacles or bodies is left out)");
    if (st == TS_OK) {
        st = ts_sph_alloc(&w->sph, (size_t)budget, err);
        w->samples.max = rigid.n;
        if (st == TS_OK && (st = ts_particles_reserve(&w->samples, rigid.n, err)) == TS_OK)
            w->samples.n = rigid.n;
    }
    if (st == TS_OK) {
        float *dst[6] = {w->sph.x, w->sph.y, w->sph.z, w->sph.vx, w->sph.vy, w->sph.vz};
        for (int a = 0; a < 6; a++)
            memcpy(dst[a], fluid.c[a], fluid.n * sizeof(float));
        for (w->sph.fluid.n = 0; w->sph.fluid.n < fluid.n; w->sph.fluid.n++)
            w->sph.id[w->sph.fluid.n] = w->next_id++;
        for (size_t b = 0; b < w->n_bodies; b++) {
            const body *bd = &w->bodies[b];
            for (size_t i = bd->first; i < bd->first + bd->count; i++) {
                /* body frame = world frame at rest, origin at the centroid */
                w->rlx[i] = (float)(rigid.c[0][i] - bd->rb.x.x);
                w->rly[i] = (float)(rigid.c[1][i] - bd->rb.x.y);
                w->rlz[i] = (float)(rigid.c[2][i] - bd->rb.x.z);
                w->rbody[i] = (uint32_t)b;
            }
        }
    }
    ts_point_list_free(&fluid);
    ts_point_list_free(&rigid);
    if (st != TS_OK) {
        ts_water_destroy(w);
        return st;
    }
    *out = w;
    return TS_OK;
}

void ts_water_destroy(ts_water *w)
{
    if (!w)
        return;
    ts_sph_free(&w->sph);
    ts_particles_free(&w->samples);
    for (size_t c = 0; c < w->n_colliders; c++)
        ts_collider_free(&w->colliders[c].c);
    for (size_t b = 0; w->bodies && b <= w->n_bodies; b++)   /* and the one a failed add_body left */
        ts_collider_free(&w->bodies[b].shape), ts_surface_samples_free(&w->bodies[b].surface),
            ts_wall_field_free(&w->bodies[b].field);
    ts_film_free(&w->film);
    for (size_t i = 0; i < w->n_inflows; i++)
        ts_sph_inflow_free(&w->inflows[i]);
    free(w->colliders);
    free(w->bodies);
    free(w->inflows);
    free(w);
}

/* ------------------------------------------------------------------ inflow */

/* Top up the inflows active in this frame; returns how many particles. */
static size_t emit(ts_water *w)
{
    size_t n = 0;
    for (size_t f = 0; f < w->n_inflows; f++)
        n += ts_sph_inflow_emit(&w->inflows[f], &w->sph, &w->now, w->p.frame_start, &w->next_id);
    return n;
}

/* ----------------------------------------------------------------- bodies */

/* Contacts of a body against colliders and the domain sides: the deepest
 * penetrating particle per wall, resolved by an impulse (rigid.h). */
static void body_wall_contacts(ts_water *w, body *bd)
{
    ts_mat3 R = ts_quat_to_mat3(bd->rb.q);
    const float rc = w->sph.r_contact;
    for (size_t c = 0; c <= w->n_colliders; c++) {
        for (int side = 0; side < (c == w->n_colliders ? 6 : 1); side++) {
            if (c == w->n_colliders && !(wall_sides(&w->p) >> side & 1u))
                continue;
            double deepest = 0.0;
            ts_vec3 point = ts_v3(0, 0, 0), normal = ts_v3(0, 0, 0), wall_v = ts_v3(0, 0, 0);
            for (size_t i = bd->first; i < bd->first + bd->count; i++) {
                ts_vec3 p = ts_v3_add(bd->rb.x, ts_m3_mul_v3(R, ts_v3(w->rlx[i], w->rly[i], w->rlz[i])));
                double depth;
                ts_vec3 n, v = ts_v3(0, 0, 0);
                if (c < w->n_colliders) {
                    ts_collider_hit hit;
                    if (!ts_collider_query(&w->colliders[c].c, w->sph.s, p, &hit))
                        continue;
                    depth = rc - hit.distance, n = hit.normal, v = hit.velocity;
                } else {
                    int a = side / 2;
                    double coord = a == 0 ? p.x : a == 1 ? p.y : p.z;
                    double sign = side % 2 ? -1.0 : 1.0;
                    double phi = side % 2 ? w->sph.domain[a + 3] - coord : coord - w->sph.domain[a];
                    depth = rc - phi;
                    n = ts_v3(a == 0 ? sign : 0, a == 1 ? sign : 0, a == 2 ? sign : 0);
                }
                if (depth > deepest) {
                    deepest = depth, point = p, normal = n, wall_v = v;
                }
            }
            if (deepest > 0.0)
                ts_rigid_resolve_contact(&bd->rb, point, normal, deepest, wall_v, TS_BODY_RESTITUTION,
                                         TS_BODY_FRICTION);
        }
    }
}

/* Body against body: the closest pair of their particles closer than the
 * spacing, resolved by one impulse on both (rigid.h). */
static void body_body_contact(ts_water *w, body *a, body *b)
{
    double reach = a->radius + b->radius + w->sph.spacing;
    if (ts_v3_length(ts_v3_sub(a->rb.x, b->rb.x)) > reach)
        return;
    ts_mat3 Ra = ts_quat_to_mat3(a->rb.q), Rb = ts_quat_to_mat3(b->rb.q);
    double best = w->sph.spacing;
    ts_vec3 pa = ts_v3(0, 0, 0), pb = ts_v3(0, 0, 0);
    for (size_t i = a->first; i < a->first + a->count; i++) {
        ts_vec3 p = ts_v3_add(a->rb.x, ts_m3_mul_v3(Ra, ts_v3(w->rlx[i], w->rly[i], w->rlz[i])));
        if (ts_v3_length(ts_v3_sub(p, b->rb.x)) > b->radius + w->sph.spacing)
            continue;
        for (size_t j = b->first; j < b->first + b->count; j++) {
            ts_vec3 q = ts_v3_add(b->rb.x, ts_m3_mul_v3(Rb, ts_v3(w->rlx[j], w->rly[j], w->rlz[j])));
            double d = ts_v3_length(ts_v3_sub(p, q));
            if (d < best)
                best = d, pa = p, pb = q;
        }
    }
    if (best >= w->sph.spacing || best <= 0.0)
        return;
    ts_vec3 n = ts_v3_scale(ts_v3_sub(pa, pb), 1.0 / best); /* from b to a */
    /* the two particles a spacing apart once resolved; the point halfway between them */
    ts_rigid_resolve_pair_contact(&a->rb, &b->rb, ts_v3_scale(ts_v3_add(pa, pb), 0.5), n, w->sph.spacing - best,
                                  TS_BODY_RESTITUTION, TS_BODY_FRICTION);
}

static void stop_bodies(ts_water *w)
{
    for (size_t b = 0; b < w->n_bodies; b++)
        ts_rigid_set_velocity(&w->bodies[b].rb, ts_v3(0, 0, 0), ts_v3(0, 0, 0));
}

static void integrate_bodies(ts_water *w, double dt)
{
    if (w->hold_bodies) {
        stop_bodies(w);
        return;
    }
    for (size_t b = 0; b < w->n_bodies; b++) {
        body *bd = &w->bodies[b];
        ts_rigid_clear_forces(&bd->rb);
        ts_vec3 g = ts_v3(w->p.gravity[0], w->p.gravity[1], w->p.gravity[2]);
        ts_rigid_add_force_at(&bd->rb, ts_v3_scale(g, bd->rb.mass), bd->rb.x);
        bd->rb.force = ts_v3_add(bd->rb.force, bd->fluid_force);
        bd->rb.torque = ts_v3_add(bd->rb.torque, bd->fluid_torque);
        ts_rigid_integrate(&bd->rb, dt);
    }
    for (int it = 0; it < CONTACT_ITERATIONS; it++) {
        for (size_t b = 0; b < w->n_bodies; b++)
            body_wall_contacts(w, &w->bodies[b]);
        for (size_t a = 0; a < w->n_bodies; a++)
            for (size_t b = a + 1; b < w->n_bodies; b++)
                body_body_contact(w, &w->bodies[a], &w->bodies[b]);
    }
    for (size_t b = 0; b < w->n_bodies; b++) {
        const body *bd = &w->bodies[b];
        double speed = ts_v3_length(ts_rigid_velocity(&bd->rb)) +
                       ts_v3_length(ts_rigid_angular_velocity(&bd->rb)) * bd->radius;
        if (speed > w->sph.v_max)
            w->sph.v_max = speed;
    }
}

/* --------------------------------------------------------- solver ops */

static ts_status water_begin_frame(void *state, const ts_step_context *now, ts_error *err)
{
    (void)err;
    ts_water *w = state;
    w->now = *now;
    w->sph.s = 0.0;
    w->sph.lists_stale = 1; /* each frame starts from fresh lists, so a resumed bake runs the same steps */
    for (size_t c = 0; c < w->n_colliders; c++)
        ts_collider_follow(&w->colliders[c].c, &w->colliders[c].m, now->frame - w->p.frame_start, now->frame_dt);
    return TS_OK;
}

static ts_status water_stable_dt(void *state, double *dt, ts_error *err)
{
    (void)err;
    *dt = ts_sph_stable_dt(&((const ts_water *)state)->sph);
    return TS_OK;
}

static ts_status check_finite(const ts_water *w, ts_error *err)
{
    int bad = !ts_sph_all_finite(&w->sph);
    for (size_t b = 0; b < w->n_bodies; b++)
        bad |= !isfinite(w->bodies[b].rb.x.x + w->bodies[b].rb.x.y + w->bodies[b].rb.x.z + w->bodies[b].rb.L.x);
    if (bad)
        return ts_fail(err, TS_ERR_UNSTABLE, "particles reached NaN or infinite speed; lower cfl_number, "
                       "raise speed_of_sound or check the scene scale");
    return TS_OK;
}

/* The water paper's step over the shared SPH model (sph_model.h), with
 * inflows and two-way bodies. */
static ts_status water_step(void *state, const ts_step_context *now, ts_error *err)
{
    ts_water *w = state;
    ts_sph_model *m = &w->sph;
    w->now = *now;
    ts_status st = ts_sph_build(m, err);
    if (st == TS_OK && w->n_inflows > 0 && emit(w) > 0) {
        m->lists_stale = 1; /* the new particles take their place in cell order and in the lists */
        st = ts_sph_build(m, err);
    }
    if (st != TS_OK)
        return st;
    ts_sph_density(m);
    ts_sph_forces(m);
    if (w->n_bodies > 0) /* before the liquid moves: the reaction to its forces */
        st = ts_sph_body_forces(m, err);
    for (size_t b = 0; b < w->n_bodies && st == TS_OK; b++) {
        body *bd = &w->bodies[b];
        bd->fluid_force = m->boundaries[bd->boundary].force;
        bd->fluid_torque = m->boundaries[bd->boundary].torque;
        st = ts_film_push(m, bd->boundary, &bd->surface, &bd->rb, &w->film, &bd->fluid_force, &bd->fluid_torque, err);
    }
    if (st != TS_OK)
        return st;
    m->s = now->s_end; /* walls where they are at the end of the step */
    ts_sph_integrate(m, now->dt);
    integrate_bodies(w, now->dt);
    w->removed += ts_sph_remove_escaped(m);
    w->steps++;
    return check_finite(w, err);
}

static void body_pose(const void *state, size_t k, ts_vec3 *position, ts_quat *rotation)
{
    const body *bd = &((const ts_water *)state)->bodies[k];
    ts_rigid_origin_pose(&bd->rb, bd->origin_offset, bd->rotation0, position, rotation);
}

static ts_status water_write_frame(void *state, ts_frame_output *out, ts_error *err)
{
    ts_water *w = state;
    /* interleave the fluid columns for the cache (scratch space sized for the whole capacity) */
    size_t n = w->sph.fluid.n;
    float *pos = malloc((3 * n + 1) * sizeof *pos), *vel = malloc((3 * n + 1) * sizeof *vel);
    if (!pos || !vel) {
        free(pos);
        free(vel);
        return ts_fail(err, TS_ERR_NOMEM, "water: out of memory writing frame %d", out->frame);
    }
    for (size_t i = 0; i < n; i++) {
        pos[3 * i] = w->sph.x[i], pos[3 * i + 1] = w->sph.y[i], pos[3 * i + 2] = w->sph.z[i];
        vel[3 * i] = w->sph.vx[i], vel[3 * i + 1] = w->sph.vy[i], vel[3 * i + 2] = w->sph.vz[i];
    }
    if (w->steps == 0) /* the first frame: densities for the output */
        for (size_t i = 0; i < n; i++)
            w->sph.rho[i] = (float)w->p.rest_density;
    ts_frame f;
    ts_frame_init(&f, out->frame, out->time, n);
    ts_status st = ts_frame_add(&f, "position", TS_ATTR_F32, 3, pos, err);
    if (st == TS_OK) st = ts_frame_add(&f, "velocity", TS_ATTR_F32, 3, vel, err);
    if (st == TS_OK) st = ts_frame_add(&f, "id", TS_ATTR_U32, 1, w->sph.id, err);
    if (st == TS_OK) st = ts_frame_add(&f, "density", TS_ATTR_F32, 1, w->sph.rho, err);
    if (st == TS_OK) st = ts_output_particles(out, "fluid", &f, err); /* the writer copies the columns */
    free(pos);
    free(vel);
    if (st == TS_OK && w->n_bodies > 0)
        st = ts_output_transforms(out, "rigid", w->n_bodies, body_pose, w, err);
    if (st == TS_OK && w->p.write_surface) {
        const ts_surface_settings surface = TS_SURFACE_SETTINGS(w->p);
        st = ts_output_surface(out, "surface", &surface, w->sph.x, w->sph.y, w->sph.z, w->sph.fluid.n, err);
    }
    return st;
}

/* Checkpoint sections: "particles" (the fluid's state arrays, float32 as
 * the solver holds them, so restoring is exact), "bodies", "counters". */
static ts_status water_save_state(void *state, ts_checkpoint *cp, ts_error *err)
{
    ts_water *w = state;
    const ts_value counters[] = {{"next_id", w->next_id}, {"removed", (double)w->removed}, {"steps", (double)w->steps}};
    ts_status st = ts_particles_save(&w->sph.fluid, cp, "particles", err);
    if (st == TS_OK)
        st = ts_rigid_save(cp, "bodies", w->bodies, offsetof(body, rb), sizeof *w->bodies, w->n_bodies, err);
    if (st == TS_OK)
        st = ts_checkpoint_put_values(cp, "counters", counters, 3, err);
    return st;
}

ts_status ts_water_restore(ts_water *w, const ts_checkpoint *cp, ts_error *err)
{
    ts_value counters[] = {{"next_id", 0}, {"removed", 0}, {"steps", 0}};
    ts_status st = ts_particles_restore(&w->sph.fluid, cp, "particles", err);
    if (st == TS_OK)
        st = ts_rigid_restore(cp, "bodies", w->bodies, offsetof(body, rb), sizeof *w->bodies, w->n_bodies, err);
    if (st == TS_OK)
        st = ts_checkpoint_get_values(cp, "counters", counters, 3, err);
    if (st != TS_OK)
        return st;
    w->next_id = (uint32_t)counters[0].value;
    w->removed = (size_t)counters[1].value;
    w->steps = (long)counters[2].value;
    w->now.frame = cp->frame;
    w->sph.v_max = w->sph.a_max = 0.0;
    for (size_t i = 0; i < w->sph.fluid.n; i++) {
        double v = sqrt((double)w->sph.vx[i] * w->sph.vx[i] + (double)w->sph.vy[i] * w->sph.vy[i] + (double)w->sph.vz[i] * w->sph.vz[i]);
        if (v > w->sph.v_max)
            w->sph.v_max = v;
    }
    return TS_OK;
}

void ts_water_get_stats(const ts_water *w, ts_water_stats *s)
{
    memset(s, 0, sizeof *s);
    s->fluid_particles = w->sph.fluid.n;
    s->rigid_particles = w->samples.n;
    s->removed = w->removed;
    s->capacity = w->sph.fluid.cap;
    s->max_speed = w->sph.v_max;
    const double *g = w->p.gravity;
    for (size_t i = 0; i < w->sph.fluid.n; i++) {
        s->kinetic_energy += 0.5 * w->sph.mass * ((double)w->sph.vx[i] * w->sph.vx[i] + (double)w->sph.vy[i] * w->sph.vy[i] +
                                              (double)w->sph.vz[i] * w->sph.vz[i]);
        s->potential_energy -= w->sph.mass * (g[0] * w->sph.x[i] + g[1] * w->sph.y[i] + g[2] * w->sph.z[i]);
        s->mean_density += w->sph.rho[i];
    }
    if (w->sph.fluid.n > 0)
        s->mean_density /= (double)w->sph.fluid.n;
    for (size_t b = 0; b < w->n_bodies; b++) {
        const ts_rigid_body *rb = &w->bodies[b].rb;
        s->kinetic_energy += ts_rigid_kinetic_energy(rb);
        s->potential_energy -= rb->mass * (g[0] * rb->x.x + g[1] * rb->x.y + g[2] * rb->x.z);
    }
}

void ts_water_hold_bodies(ts_water *w, int hold)
{
    w->hold_bodies = hold != 0;
    if (w->hold_bodies)
        stop_bodies(w);
}

void ts_water_body_fluid_force(const ts_water *w, size_t b, double force[3])
{
    const ts_vec3 f = b < w->n_bodies ? w->bodies[b].fluid_force : ts_v3(0, 0, 0);
    force[0] = f.x, force[1] = f.y, force[2] = f.z;
}

static ts_status water_create(void **state, const void *params, const void *objects, size_t count, ts_error *err)
{
    return ts_water_create((ts_water **)state, params, objects, count, err);
}

static ts_status water_restore(void *state, const ts_checkpoint *cp, ts_error *err) { return ts_water_restore(state, cp, err); }

static void water_destroy(void *state) { ts_water_destroy(state); }

static size_t water_stats(const void *state, ts_stat *out)
{
    ts_water_stats s;
    ts_water_get_stats(state, &s);
    const ts_stat all[] = {
        {"fluid_particles", (double)s.fluid_particles, 1}, {"rigid_particles", (double)s.rigid_particles, 1},
        {"removed", (double)s.removed, 1}, {"capacity", (double)s.capacity, 1},
        {"kinetic_energy", s.kinetic_energy, 0}, {"potential_energy", s.potential_energy, 0},
        {"max_speed", s.max_speed, 0},
    };
    return ts_stats_copy(out, all, sizeof all / sizeof *all);
}

const ts_solver_ops ts_water_ops = {
    "water", &ts_water_param_table, sizeof(ts_water_object), 400, water_create, water_restore, water_destroy,
    water_stats, water_begin_frame, water_stable_dt, water_step, water_write_frame, water_save_state,
};
