/* water_binding.c - the water solver from Python:
 *
 *   water_bake(settings, objects, cache_dir, frame_start, frame_end, fps, first_frame=frame_start,
 *              max_substeps=400, progress=None, compression=1,
 *             checkpoint_seconds=30) -> stats
 *
 * settings: dict with the fields of ts_water_params; objects: list of dicts
 * (name, role 0-3, vertices (N,3) float32 world at frame_start, triangles
 * (M,3) int32, motion (F,7) float64 or None, velocity, angular_velocity,
 * density, emit_start, emit_end, origin, rotation). When first_frame is
 * after frame_start the state is restored from DIR/state/checkpoint.tspf.
 * tsubu/effects/water.py builds these from a scene description. */
#include "run_binding.h"

#include "core/cache.h"
#include "core/sph_loops.h"
#include "core/water.h"

static int read_params(PyObject *d, ts_water_params *p)
{
    double max_particles, seed;
    if (tsubu_dict_int(d, "muller", &p->muller) || tsubu_dict_double(d, "particle_radius", &p->particle_radius) ||
        tsubu_dict_double(d, "rest_density", &p->rest_density) ||
        tsubu_dict_double(d, "speed_of_sound", &p->speed_of_sound) ||
        tsubu_dict_double(d, "gas_stiffness", &p->gas_stiffness) ||
        tsubu_dict_double(d, "viscosity", &p->viscosity) ||
        tsubu_dict_double(d, "artificial_viscosity", &p->artificial_viscosity) ||
        tsubu_dict_double(d, "surface_tension", &p->surface_tension) ||
        tsubu_dict_double(d, "wall_friction", &p->wall_friction) || tsubu_dict_vec(d, "gravity", p->gravity, 3) ||
        tsubu_dict_double(d, "cfl_number", &p->cfl_number) ||
        tsubu_dict_double(d, "max_particles", &max_particles) ||
        tsubu_dict_int(d, "write_surface", &p->write_surface) ||
        tsubu_dict_double(d, "surface_voxel_ratio", &p->surface_voxel_ratio) ||
        tsubu_dict_double(d, "surface_radius_scale", &p->surface_radius_scale) ||
        tsubu_dict_int(d, "surface_smoothing", &p->surface_smoothing) ||
        tsubu_dict_vec(d, "domain_min", p->domain_min, 3) || tsubu_dict_vec(d, "domain_max", p->domain_max, 3) ||
        tsubu_dict_int(d, "domain_walls", &p->domain_walls) || tsubu_dict_double(d, "seed", &seed))
        return -1;
    p->max_particles = (long)max_particles;
    p->seed = (uint64_t)seed;
    return 0;
}


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

static int read_params_at(PyObject *settings, void *params, int frame_start, double fps)
{
    ts_water_params *p = params;
    if (read_params(settings, p) < 0)
        return -1;
    p->frame_start = frame_start;
    p->fps = fps;
    return 0;
}

static ts_status restore_water(void *state, const ts_frame *cp, ts_error *err)
{
    return ts_water_restore(state, cp, err);
}

static PyObject *stats_dict(const void *state)
{
    const ts_water *w = state;
    ts_water_stats s;
    ts_water_get_stats(w, &s);
    return Py_BuildValue("{s:n,s:n,s:n,s:n,s:d,s:d,s:d}", "fluid_particles", (Py_ssize_t)s.fluid_particles,
                         "rigid_particles", (Py_ssize_t)s.rigid_particles, "removed", (Py_ssize_t)s.removed,
                         "capacity", (Py_ssize_t)s.capacity, "kinetic_energy", s.kinetic_energy,
                         "potential_energy", s.potential_energy, "max_speed", s.max_speed);
}

static ts_status create_water(void **state, const void *params, const void *objects, size_t count, ts_error *err)
{
    return ts_water_create((ts_water **)state, params, objects, count, err);
}

static void destroy_water(void *state)
{
    ts_water_destroy(state);
}

static const tsubu_solver_binding WATER = {
    &ts_water_ops, sizeof(ts_water_params), sizeof(ts_water_object), 400, read_params_at, read_object,
    create_water, restore_water, destroy_water, stats_dict,
};

static PyObject *water_bake(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return tsubu_bake(&WATER, args, kw);
}

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
    {"water_bake", (PyCFunction)(void (*)(void))water_bake, METH_VARARGS | METH_KEYWORDS,
     "water_bake(settings, objects, cache_dir, frame_start, frame_end, fps, first_frame=frame_start, "
     "max_substeps=400, progress=None, compression=1, checkpoint_seconds=30) -> stats dict\n\nBake the water effect (see "
     "tsubu/effects/water.py, which builds the arguments from a scene description)."},
    {NULL, NULL, 0, NULL},
};
