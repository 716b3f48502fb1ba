/* fracture_binding.c - the fracture solver from Python:
 *
 *   fracture_bake(settings, objects, cache_dir, frame_start, frame_end, fps, first_frame=frame_start,
 *                 max_substeps=2000, progress=None, compression=1,
 *             checkpoint_seconds=30) -> stats
 *
 * settings: dict with the fields of ts_fracture_params; objects: list of
 * dicts (name, role 0 breakable / 1 projectile / 2 obstacle, vertices (N,3)
 * float32 world at frame_start, triangles (M,3) int32, motion (F,7) float64
 * or None, density, velocity, angular_velocity, launch_frame, origin,
 * rotation; a breakable may add corner_uv (M,3,2) float32, brittleness
 * (H,W) float32 and projection 0 UV / 1-3 planar x, y, z). When first_frame
 * is after frame_start the state is restored from DIR/state/checkpoint.tspf.
 * tsubu/effects/fracture.py builds these from a scene description. */
#include "run_binding.h"

#include "core/fracture.h"

static int read_params(PyObject *d, ts_fracture_params *p)
{
    double max_debris, seed;
    if (tsubu_dict_int(d, "element_count", &p->element_count) ||
        tsubu_dict_double(d, "element_radius", &p->element_radius) || tsubu_dict_double(d, "density", &p->density) ||
        tsubu_dict_double(d, "contact_time", &p->contact_time) ||
        tsubu_dict_double(d, "restitution", &p->restitution) || tsubu_dict_double(d, "friction", &p->friction) ||
        tsubu_dict_double(d, "bond_stiffness", &p->bond_stiffness) ||
        tsubu_dict_double(d, "strain_limit", &p->strain_limit) ||
        tsubu_dict_double(d, "bend_limit", &p->bend_limit) || tsubu_dict_double(d, "twist_limit", &p->twist_limit) ||
        tsubu_dict_double(d, "p0", &p->p0) || tsubu_dict_double(d, "pH", &p->pH) || tsubu_dict_double(d, "n", &p->n) ||
        tsubu_dict_double(d, "hard_threshold", &p->hard_threshold) ||
        tsubu_dict_double(d, "max_spring_length", &p->max_spring_length) ||
        tsubu_dict_double(d, "debris_energy", &p->debris_energy) ||
        tsubu_dict_double(d, "debris_size", &p->debris_size) ||
        tsubu_dict_double(d, "debris_spread", &p->debris_spread) ||
        tsubu_dict_double(d, "max_debris", &max_debris) || tsubu_dict_int(d, "anchored", &p->anchored) || tsubu_dict_vec(d, "gravity", p->gravity, 3) ||
        tsubu_dict_double(d, "steps_per_contact", &p->steps_per_contact) || tsubu_dict_double(d, "seed", &seed))
        return -1;
    p->max_debris = (long)max_debris;
    p->seed = (uint64_t)seed;
    return 0;
}

/* An optional array entry of an object: NULL data when absent or None. */
static int optional_array(PyObject *d, const char *key, int type, int ndim, const npy_intp *dims, PyObject *keep,
                          PyArrayObject **out)
{
    *out = NULL;
    PyObject *obj = PyDict_GetItemString(d, key);
    if (!obj || obj == Py_None)
        return 0;
    *out = tsubu_array(obj, type, ndim, dims, key);
    if (!*out)
        return -1;
    int rc = PyList_Append(keep, (PyObject *)*out);
    Py_DECREF(*out);
    return rc;
}

static int read_object(PyObject *d, void *object, PyObject *keep)
{
    ts_fracture_object *o = object;
    int role;
    if (tsubu_read_object_input(d, keep, &o->in) < 0 || tsubu_dict_int(d, "role", &role) ||
        tsubu_dict_int(d, "launch_frame", &o->launch_frame) || tsubu_dict_int(d, "projection", &o->projection))
        return -1;
    const npy_intp uv_dims[3] = {-1, 3, 2}, image_dims[2] = {-1, -1};
    PyArrayObject *uv, *image;
    if (optional_array(d, "corner_uv", NPY_FLOAT32, 3, uv_dims, keep, &uv) < 0 ||
        optional_array(d, "brittleness", NPY_FLOAT32, 2, image_dims, keep, &image) < 0)
        return -1;
    if (uv && (size_t)PyArray_DIM(uv, 0) != o->in.triangle_count) {
        PyErr_Format(PyExc_ValueError, "object '%s': corner_uv has %zd triangles, the mesh %zu", o->in.name,
                     (Py_ssize_t)PyArray_DIM(uv, 0), o->in.triangle_count);
        return -1;
    }
    o->role = (ts_fracture_role)role;
    o->corner_uv = uv ? PyArray_DATA(uv) : NULL;
    o->brittleness = image ? PyArray_DATA(image) : NULL;
    o->map_height = image ? (int)PyArray_DIM(image, 0) : 0;
    o->map_width = image ? (int)PyArray_DIM(image, 1) : 0;
    return 0;
}

static int read_params_at(PyObject *settings, void *params, int frame_start, double fps)
{
    ts_fracture_params *p = params;
    if (read_params(settings, p) < 0)
        return -1;
    p->frame_start = frame_start;
    p->fps = fps;
    return 0;
}

static ts_status restore_fracture(void *state, const ts_frame *cp, ts_error *err)
{
    return ts_fracture_restore(state, cp, err);
}

static PyObject *stats_dict(const void *state)
{
    ts_fracture_stats st;
    ts_fracture_get_stats(state, &st);
    return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n,s:n,s:i,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:n,s:l}", "elements",
                         (Py_ssize_t)st.elements, "springs", (Py_ssize_t)st.springs, "broken", (Py_ssize_t)st.broken,
                         "pieces", (Py_ssize_t)st.pieces, "largest_piece", (Py_ssize_t)st.largest_piece, "debris",
                         (Py_ssize_t)st.debris, "levels", st.levels, "element_radius", st.element_radius, "mass",
                         st.mass, "max_speed", st.max_speed, "seconds_placement", st.seconds_placement,
                         "seconds_delaunay", st.seconds_delaunay, "seconds_levels", st.seconds_levels,
                         "seconds_fragments", st.seconds_fragments, "fragment_triangles",
                         (Py_ssize_t)st.fragment_triangles, "steps", st.steps);
}

static ts_status create_fracture(void **state, const void *params, const void *objects, size_t count, ts_error *err)
{
    return ts_fracture_create((ts_fracture **)state, params, objects, count, err);
}

static void destroy_fracture(void *state)
{
    ts_fracture_destroy(state);
}

static const tsubu_solver_binding FRACTURE = {
    &ts_fracture_ops, sizeof(ts_fracture_params), sizeof(ts_fracture_object), 2000, read_params_at, read_object,
    create_fracture, restore_fracture, destroy_fracture, stats_dict,
};

static PyObject *fracture_bake(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    return tsubu_bake(&FRACTURE, args, kw);
}

PyMethodDef tsubu_fracture_methods[] = {
    {"fracture_bake", (PyCFunction)(void (*)(void))fracture_bake, METH_VARARGS | METH_KEYWORDS,
     "fracture_bake(settings, objects, cache_dir, frame_start, frame_end, fps, first_frame=frame_start, "
     "max_substeps=2000, progress=None, compression=1, checkpoint_seconds=30) -> stats dict\n\nBake the fracture effect (see "
     "tsubu/effects/fracture.py, which builds the arguments from a scene description)."},
    {NULL, NULL, 0, NULL},
};
