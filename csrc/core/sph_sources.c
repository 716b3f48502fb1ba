/* sph_sources.c - lattice fills and inflows (see sph_sources.h). */
#include "sph_sources.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collider.h"
#include "mesh.h"

ts_status ts_lattice_fill(const ts_mesh_ref *o, double spacing, double voxel, ts_lattice_fn keep, void *user,
                          ts_error *err)
{
    ts_collider sdf;
    ts_status st = ts_collider_from_mesh(&sdf, o->name, o->vertices, o->vertex_count, o->triangles,
                                         o->triangle_count, voxel, 2.0, err);
    if (st != TS_OK)
        return st;
    float b[6];
    ts_mesh_bounds(o->vertices, o->vertex_count, b);
    int n[3];
    for (int a = 0; a < 3; a++)
        n[a] = (int)floor((b[a + 3] - b[a]) / spacing + 1e-6);
    for (int k = 0; k < n[2] && st == TS_OK; k++)
        for (int j = 0; j < n[1] && st == TS_OK; j++)
            for (int i = 0; i < n[0]; i++) {
                float px = b[0] + (float)((i + 0.5) * spacing), py = b[1] + (float)((j + 0.5) * spacing);
                float pz = b[2] + (float)((k + 0.5) * spacing);
                ts_collider_hit hit;
                if (ts_collider_query(&sdf, 0.0, ts_v3(px, py, pz), &hit) && hit.distance < 0.0f &&
                    !keep(user, px, py, pz, hit.distance)) {
                    st = ts_fail(err, TS_ERR_NOMEM, "out of memory filling '%s'", o->name);
                    break;
                }
            }
    ts_collider_free(&sdf);
    return st;
}

int ts_point_list_add(void *user, float x, float y, float z, float phi)
{
    ts_point_list *l = user;
    if (l->max_depth > 0.0 && phi < -l->max_depth)
        return 1;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        for (int a = 0; a < 6; a++) {
            float *grown = realloc(l->c[a], cap * sizeof *grown);
            if (!grown)
                return 0;
            l->c[a] = grown;
        }
        l->cap = cap;
    }
    const float values[6] = {x, y, z, l->velocity[0], l->velocity[1], l->velocity[2]};
    for (int a = 0; a < 6; a++)
        l->c[a][l->n] = values[a];
    l->n++;
    return 1;
}

void ts_point_list_free(ts_point_list *l)
{
    for (int a = 0; a < 6; a++)
        free(l->c[a]);
    memset(l, 0, sizeof *l);
}

ts_status ts_sph_inflow_init(ts_sph_inflow *f, const ts_mesh_ref *mesh, const double *motion, int motion_frames,
                             const double velocity[3], int start, int end, double spacing, ts_error *err)
{
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", mesh->name);
    ts_point_list pts = {0};
    ts_status st = ts_lattice_fill(mesh, spacing, 0.5 * spacing, ts_point_list_add, &pts, err);
    if (st != TS_OK) {
        ts_point_list_free(&pts);
        return st;
    }
    f->sx = pts.c[0], f->sy = pts.c[1], f->sz = pts.c[2];
    for (int a = 3; a < 6; a++)
        free(pts.c[a]);
    f->n = pts.n;
    f->m.rows = motion;
    f->m.frames = motion_frames;
    for (int a = 0; a < 3; a++)
        f->v[a] = (float)velocity[a];
    f->start = start;
    f->end = end;
    if (f->n == 0)
        return ts_fail(err, TS_ERR_INVALID, "inflow '%s' is thinner than the particle spacing (%g m); make it "
                       "larger or the particles smaller", mesh->name, spacing);
    return TS_OK;
}

void ts_sph_inflow_free(ts_sph_inflow *f)
{
    free(f->sx);
    free(f->sy);
    free(f->sz);
    f->sx = f->sy = f->sz = NULL;
}

double ts_sph_inflow_budget(const ts_sph_inflow *f, double frame_dt, double spacing)
{
    double speed = sqrt(f->v[0] * f->v[0] + f->v[1] * f->v[1] + f->v[2] * f->v[2]);
    int frames = f->end - f->start + 1;
    if (frames <= 0)
        return 0.0;
    double layers = speed * frames * frame_dt / spacing + 1.0;
    return (double)f->n * layers * 1.2; /* 20% slack for refilling behind moving particles */
}

size_t ts_sph_inflow_emit(const ts_sph_inflow *in, ts_sph_model *m, const ts_step_context *now, int frame_start,
                          uint32_t *next_id)
{
    size_t before = m->fluid.n;
    int next = now->frame + 1;
    if (next < in->start || next > in->end)
        return 0;
    ts_transform t0 = ts_motion_at(&in->m, now->frame - frame_start);
    ts_transform t1 = ts_motion_at(&in->m, next - frame_start);
    ts_transform t = {ts_v3_add(ts_v3_scale(t0.translation, 1.0 - m->s), ts_v3_scale(t1.translation, m->s)),
                      ts_quat_slerp(t0.rotation, t1.rotation, m->s)};
    ts_vec3 v = ts_quat_rotate(t.rotation, ts_v3(in->v[0], in->v[1], in->v[2]));
    for (size_t i = 0; i < in->n && m->fluid.n < m->fluid.cap; i++) {
        ts_vec3 p = ts_transform_apply(t, ts_v3(in->sx[i], in->sy[i], in->sz[i]));
        if (!ts_sph_site_is_free(m, (float)p.x, (float)p.y, (float)p.z))
            continue;
        size_t k = m->fluid.n++;
        m->x[k] = (float)p.x, m->y[k] = (float)p.y, m->z[k] = (float)p.z;
        m->vx[k] = (float)v.x, m->vy[k] = (float)v.y, m->vz[k] = (float)v.z;
        m->id[k] = (*next_id)++;
    }
    return m->fluid.n - before;
}
