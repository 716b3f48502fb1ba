/* elastoplastic_binding.c - the elastoplastic solver from Python:
 *
 *   elastoplastic_bake(settings, objects, cache_dir, frame_start, frame_end, fps, ...) -> stats
 *
 * objects: dicts (name, role 0 body / 1 obstacle, vertices, triangles, motion or None, velocity, sheet);
 * tsubu/effects/elastoplastic.py builds them from a scene description. */
#include "run_binding.h"

#include "core/elastoplastic.h"

static int read_object(PyObject *d, void *object, PyObject *keep)
{
    ts_elastoplastic_object *o = object;
    tsubu_mesh_arrays mesh;
    int role;
    if (tsubu_read_mesh(d, keep, &mesh) < 0 || tsubu_dict_int(d, "role", &role) ||
        tsubu_dict_vec(d, "velocity", o->velocity, 3) || tsubu_dict_int(d, "sheet", &o->sheet))
        return -1;
    o->role = (ts_elastoplastic_role)role;
    o->name = mesh.name;
    o->vertices = mesh.vertices, o->vertex_count = mesh.vertex_count;
    o->triangles = mesh.triangles, o->triangle_count = mesh.triangle_count;
    o->motion = mesh.motion, o->motion_frames = mesh.motion_frames;
    return 0;
}

const tsubu_solver_binding tsubu_elastoplastic_binding = {&ts_elastoplastic_ops, read_object};
