/* water_binding.c - the water solver from Python:
 *
 *   water_bake(settings, objects, cache_dir, frame_start, frame_end, fps, first_frame=frame_start,
 *              max_substeps=400, progress=None, compression=1,
 *             checkpoint_seconds=30) -> stats
 *
 * settings: dict of the rows of ts_water_param_table (others take their defaults); objects: list of dicts
 * (name, role 0-3, vertices (N,3) float32 world at frame_start, triangles
 * (M,3) int32, motion (F,7) float64 or None, velocity, angular_velocity,
 * density, emit_start, emit_end, origin, rotation). When first_frame is
 * after frame_start the state is restored from DIR/state/checkpoint.tsck.
 * tsubu/effects/water.py builds these from a scene description. */
#include "run_binding.h"

#include "core/cache.h"
#include "core/sph_loops.h"
#include "core/water.h"

static int read_object(PyObject *d, void *object, PyObject *keep)
{
    ts_water_object *o = object;
    tsubu_mesh_arrays mesh;
    int role;
    if (tsubu_read_mesh(d, keep, &mesh) < 0 || tsubu_dict_int(d, "role", &role) ||
        tsubu_dict_vec(d, "velocity", o->velocity, 3) || tsubu_dict_vec(d, "angular_velocity", o->angular_velocity, 3) ||
        tsubu_dict_double(d, "density", &o->density) || tsubu_dict_int(d, "emit_start", &o->emit_start) ||
        tsubu_dict_int(d, "emit_end", &o->emit_end) || tsubu_dict_vec(d, "origin", o->origin, 3) ||
        tsubu_dict_vec(d, "rotation", o->rotation, 4))
        return -1;
    o->role = (ts_water_role)role;
    o->name = mesh.name;
    o->vertices = mesh.vertices, o->vertex_count = mesh.vertex_count;
    o->triangles = mesh.triangles, o->triangle_count = mesh.triangle_count;
    o->motion = mesh.motion, o->motion_frames = mesh.motion_frames;
    return 0;
}

const tsubu_solver_binding tsubu_water_binding = {&ts_water_ops, read_object};

static PyObject *sph_simd(PyObject *self, PyObject *args)
{
    (void)self;
    int allow = -1;
    if (!PyArg_ParseTuple(args, "|p", &allow))
        return NULL;
    if (allow >= 0)
        ts_sph_allow_simd(allow);
    return PyUnicode_FromString(ts_sph_loops_select()->name);
}

PyMethodDef tsubu_water_methods[] = {
    {"sph_simd", sph_simd, METH_VARARGS,
     "sph_simd([allow]) -> 'avx2' or 'portable': the form of the SPH inner loops in use; sph_simd(False) "
     "turns AVX2 off (both forms give the same bits; the tests compare them)."},
    {NULL, NULL, 0, NULL},
};
