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
 * is after frame_start the state is restored from DIR/state/checkpoint.tsck.
 * tsubu/effects/fracture.py builds these from a scene description. */
#include "run_binding.h"

#include "core/fracture.h"

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

const tsubu_solver_binding tsubu_fracture_binding = {&ts_fracture_ops, read_object};
