/* vdb_binding.c - OpenVDB volumes from Python, through csrc/vdb only.
 *
 *   Grid                         a named float grid (level set or fog)
 *   particles_to_level_set(positions, radius, voxel_size, half_width=3.0)
 *   mesh_to_level_set(vertices, triangles, voxel_size, half_width=3.0)
 *   dense_to_grid(values[z, y, x], origin, voxel_size, tolerance=0.0)
 *   write_vdb(path, grids)   read_vdb(path) -> [Grid]
 *   Grid.to_mesh(isovalue=0.0, adaptivity=0.0) -> (vertices, triangles)
 *   Grid.to_dense() -> (values[z, y, x], origin, voxel_size)
 */
#include "binding.h"

#include <stdlib.h>
#include <string.h>

#include "core/surface.h"
#include "vdb/tsubu_vdb.h"

typedef struct {
    PyObject_HEAD
    tsvdb_grid *grid;
} GridObject;

static PyTypeObject GridType;

static PyObject *wrap_grid(tsvdb_grid *g)
{
    GridObject *o = PyObject_New(GridObject, &GridType);
    if (!o) {
        tsvdb_grid_free(g);
        return NULL;
    }
    o->grid = g;
    return (PyObject *)o;
}

static void grid_dealloc(GridObject *self)
{
    tsvdb_grid_free(self->grid);
    PyObject_Free(self);
}

static PyObject *grid_get_name(GridObject *self, void *c)
{
    (void)c;
    return PyUnicode_FromString(tsvdb_grid_name(self->grid));
}

static int grid_set_name(GridObject *self, PyObject *value, void *c)
{
    (void)c;
    const char *name = value ? PyUnicode_AsUTF8(value) : NULL;
    if (!name) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a grid name must be a string");
        return -1;
    }
    ts_error err;
    if (tsvdb_grid_set_name(self->grid, name, &err) != TS_OK) {
        tsubu_raise(&err);
        return -1;
    }
    return 0;
}

static PyObject *grid_get_is_level_set(GridObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(tsvdb_grid_is_level_set(self->grid));
}

static PyObject *grid_get_voxel_size(GridObject *self, void *c)
{
    (void)c;
    return PyFloat_FromDouble(tsvdb_grid_voxel_size(self->grid));
}

static PyObject *grid_get_active_voxels(GridObject *self, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLongLong(tsvdb_grid_active_voxels(self->grid));
}

static PyObject *grid_sample(GridObject *self, PyObject *args)
{
    double x, y, z;
    if (!PyArg_ParseTuple(args, "(ddd)", &x, &y, &z))
        return NULL;
    return PyFloat_FromDouble(tsvdb_grid_sample(self->grid, x, y, z));
}

static PyObject *grid_to_mesh(GridObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"isovalue", "adaptivity", NULL};
    double iso = 0.0, adaptivity = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|dd", names, &iso, &adaptivity))
        return NULL;
    float *v;
    int32_t *t;
    size_t nv, nt;
    ts_error err;
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tsvdb_grid_to_mesh(self->grid, iso, adaptivity, &v, &nv, &t, &nt, &err);
    Py_END_ALLOW_THREADS
    if (st != TS_OK)
        return tsubu_raise(&err);
    npy_intp vd[2] = {(npy_intp)nv, 3}, td[2] = {(npy_intp)nt, 3};
    PyObject *va = PyArray_SimpleNew(2, vd, NPY_FLOAT32), *ta = PyArray_SimpleNew(2, td, NPY_INT32);
    if (va && ta) {
        memcpy(PyArray_DATA((PyArrayObject *)va), v, nv * 3 * sizeof(float));
        memcpy(PyArray_DATA((PyArrayObject *)ta), t, nt * 3 * sizeof(int32_t));
    }
    free(v);
    free(t);
    if (!va || !ta) {
        Py_XDECREF(va);
        Py_XDECREF(ta);
        return NULL;
    }
    return Py_BuildValue("NN", va, ta);
}

static PyObject *dense_to_python(tsvdb_dense *d)
{
    npy_intp dims[3] = {d->dims[2], d->dims[1], d->dims[0]};
    PyObject *a = PyArray_SimpleNew(3, dims, NPY_FLOAT32);
    if (a)
        memcpy(PyArray_DATA((PyArrayObject *)a), d->values, (size_t)dims[0] * dims[1] * dims[2] * sizeof(float));
    PyObject *r = a ? Py_BuildValue("N(ddd)d", a, (double)d->origin[0], (double)d->origin[1], (double)d->origin[2],
                                    (double)d->voxel_size)
                    : NULL;
    tsvdb_dense_free(d);
    return r;
}

static PyObject *grid_to_dense(GridObject *self, PyObject *unused)
{
    (void)unused;
    tsvdb_dense d;
    ts_error err;
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tsvdb_grid_to_dense(self->grid, &d, &err);
    Py_END_ALLOW_THREADS
    return st == TS_OK ? dense_to_python(&d) : tsubu_raise(&err);
}

static PyObject *grid_smooth(GridObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"iterations", "offset", NULL};
    int iterations = 4;
    double offset = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|id", names, &iterations, &offset))
        return NULL;
    ts_error err;
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tsvdb_level_set_smooth(self->grid, iterations, offset, &err);
    Py_END_ALLOW_THREADS
    return st == TS_OK ? Py_NewRef(Py_None) : tsubu_raise(&err);
}

static PyObject *grid_repr(GridObject *self)
{
    return PyUnicode_FromFormat("<tsubu Grid '%s' %s, %llu active voxels>", tsvdb_grid_name(self->grid),
                                tsvdb_grid_is_level_set(self->grid) ? "level set" : "fog volume",
                                (unsigned long long)tsvdb_grid_active_voxels(self->grid));
}

static PyGetSetDef grid_getset[] = {
    {"name", (getter)grid_get_name, (setter)grid_set_name, "grid name as stored in the .vdb file", NULL},
    {"is_level_set", (getter)grid_get_is_level_set, NULL, "True for a signed distance level set", NULL},
    {"voxel_size", (getter)grid_get_voxel_size, NULL, "voxel edge length in metres", NULL},
    {"active_voxels", (getter)grid_get_active_voxels, NULL, "number of active voxels", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef grid_methods[] = {
    {"sample", (PyCFunction)grid_sample, METH_VARARGS, "sample((x, y, z)) -> trilinear value at a world point"},
    {"to_mesh", (PyCFunction)(void (*)(void))grid_to_mesh, METH_VARARGS | METH_KEYWORDS,
     "to_mesh(isovalue=0.0, adaptivity=0.0) -> (vertices (N,3) float32, triangles (M,3) int32), outward wound"},
    {"smooth", (PyCFunction)(void (*)(void))grid_smooth, METH_VARARGS | METH_KEYWORDS,
     "smooth(iterations=4, offset=0.0): Gaussian passes over a level set, rebuilt at the offset (erodes if > 0)"},
    {"to_dense", (PyCFunction)grid_to_dense, METH_NOARGS,
     "to_dense() -> (values[z, y, x] float32, origin, voxel_size) over the active bounding box"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject GridType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tsubu._core.Grid",
    .tp_basicsize = sizeof(GridObject),
    .tp_dealloc = (destructor)grid_dealloc,
    .tp_repr = (reprfunc)grid_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An OpenVDB float grid (level set or fog volume); made by the functions of tsubu._core.",
    .tp_methods = grid_methods,
    .tp_getset = grid_getset,
};

/* An (N, 3) positions argument as float32 x, y, z columns (malloc'ed, 3N floats) and N; NULL with
 * the Python error set when it is no such array or memory runs out. */
static float *positions_xyz(PyObject *obj, size_t *n)
{
    const npy_intp pd[2] = {-1, 3};
    PyArrayObject *p = tsubu_array(obj, NPY_FLOAT32, 2, pd, "positions");
    if (!p)
        return NULL;
    *n = (size_t)PyArray_DIM(p, 0);
    float *xyz = malloc((*n ? *n : 1) * 3 * sizeof(float));
    const float *src = PyArray_DATA(p);
    for (size_t i = 0; xyz && i < *n; i++)
        for (int a = 0; a < 3; a++)
            xyz[a * *n + i] = src[3 * i + a];
    Py_DECREF(p);
    if (!xyz)
        PyErr_NoMemory();
    return xyz;
}

static PyObject *particles_to_level_set(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"positions", "radius", "voxel_size", "half_width", NULL};
    PyObject *pos_obj, *rad_obj;
    double voxel, half_width = 3.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOd|d", names, &pos_obj, &rad_obj, &voxel, &half_width))
        return NULL;
    size_t n = 0;
    float *xyz = positions_xyz(pos_obj, &n);
    if (!xyz)
        return NULL;
    PyArrayObject *rad = NULL;
    float radius_all = 0.0f;
    if (PyFloat_Check(rad_obj) || PyLong_Check(rad_obj)) {
        radius_all = (float)PyFloat_AsDouble(rad_obj);
    } else {
        const npy_intp rd[1] = {(npy_intp)n};
        if (!(rad = tsubu_array(rad_obj, NPY_FLOAT32, 1, rd, "radius"))) {
            free(xyz);
            return NULL;
        }
    }
    tsvdb_grid *g = NULL;
    ts_error err;
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tsvdb_particles_to_level_set(xyz, xyz + n, xyz + 2 * n, rad ? PyArray_DATA(rad) : NULL, radius_all, n, voxel,
                                      half_width, &g, &err);
    Py_END_ALLOW_THREADS
    free(xyz);
    Py_XDECREF(rad);
    return st == TS_OK ? wrap_grid(g) : tsubu_raise(&err);
}

static PyObject *surface_level_set(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"positions", "particle_radius", "radius_scale", "voxel_ratio", "smoothing", "method",
                            NULL};
    PyObject *pos_obj;
    const char *method = "spheres";
    ts_surface_settings s;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "Odddi|s", names, &pos_obj, &s.particle_radius, &s.radius_scale,
                                     &s.voxel_ratio, &s.smoothing, &method))
        return NULL;
    if (strcmp(method, "anisotropic") == 0)
        s.method = TS_SURFACE_ANISOTROPIC;
    else if (strcmp(method, "spheres") == 0)
        s.method = TS_SURFACE_SPHERES;
    else {
        PyErr_Format(PyExc_ValueError, "surface_level_set: method must be 'anisotropic' or 'spheres' (got '%.40s')",
                     method);
        return NULL;
    }
    if (!(s.particle_radius > 0) || !(s.radius_scale >= 0.5) || !(s.voxel_ratio >= 0.05) || s.smoothing < 0) {
        PyErr_SetString(PyExc_ValueError, "surface_level_set: particle_radius > 0, radius_scale >= 0.5, "
                                          "voxel_ratio >= 0.05 and smoothing >= 0 expected");
        return NULL;
    }
    size_t n = 0;
    float *xyz = positions_xyz(pos_obj, &n);
    if (!xyz)
        return NULL;
    tsvdb_grid *g = NULL;
    ts_error err;
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ts_surface_level_set(&s, xyz, xyz + n, xyz + 2 * n, n, &g, &err);
    Py_END_ALLOW_THREADS
    free(xyz);
    return st == TS_OK ? wrap_grid(g) : tsubu_raise(&err);
}

static PyObject *mesh_to_level_set(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"vertices", "triangles", "voxel_size", "half_width", NULL};
    PyObject *v_obj, *t_obj;
    double voxel, half_width = 3.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOd|d", names, &v_obj, &t_obj, &voxel, &half_width))
        return NULL;
    const npy_intp d3[2] = {-1, 3};
    PyArrayObject *v = tsubu_array(v_obj, NPY_FLOAT32, 2, d3, "vertices");
    PyArrayObject *t = v ? tsubu_array(t_obj, NPY_INT32, 2, d3, "triangles") : NULL;
    if (!t) {
        Py_XDECREF(v);
        return NULL;
    }
    tsvdb_grid *g = NULL;
    ts_error err;
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tsvdb_mesh_to_level_set(PyArray_DATA(v), (size_t)PyArray_DIM(v, 0), PyArray_DATA(t),
                                 (size_t)PyArray_DIM(t, 0), voxel, half_width, &g, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(v);
    Py_DECREF(t);
    return st == TS_OK ? wrap_grid(g) : tsubu_raise(&err);
}

static PyObject *dense_to_grid(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"values", "origin", "voxel_size", "tolerance", NULL};
    PyObject *v_obj;
    double ox, oy, oz, voxel, tolerance = 0.0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O(ddd)d|d", names, &v_obj, &ox, &oy, &oz, &voxel, &tolerance))
        return NULL;
    const npy_intp any[3] = {-1, -1, -1};
    PyArrayObject *v = tsubu_array(v_obj, NPY_FLOAT32, 3, any, "values");
    if (!v)
        return NULL;
    tsvdb_dense d = {{(float)ox, (float)oy, (float)oz}, (float)voxel,
                     {(int)PyArray_DIM(v, 2), (int)PyArray_DIM(v, 1), (int)PyArray_DIM(v, 0)}, PyArray_DATA(v)};
    tsvdb_grid *g = NULL;
    ts_error err;
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tsvdb_dense_to_grid(&d, (float)tolerance, &g, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(v);
    return st == TS_OK ? wrap_grid(g) : tsubu_raise(&err);
}

static PyObject *write_vdb(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path_obj, *grids_obj;
    if (!PyArg_ParseTuple(args, "O&O", PyUnicode_FSConverter, &path_obj, &grids_obj))
        return NULL;
    PyObject *seq = PySequence_Fast(grids_obj, "grids must be a sequence of Grid");
    if (!seq) {
        Py_DECREF(path_obj);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    tsvdb_grid **grids = malloc((n ? n : 1) * sizeof *grids);
    PyObject *result = NULL;
    if (!grids) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyObject_TypeCheck(o, &GridType)) {
            PyErr_Format(PyExc_TypeError, "grids[%zd] is a %s, not a tsubu Grid", i, Py_TYPE(o)->tp_name);
            goto done;
        }
        grids[i] = ((GridObject *)o)->grid;
    }
    ts_error err;
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tsvdb_write(PyBytes_AS_STRING(path_obj), grids, (size_t)n, &err);
    Py_END_ALLOW_THREADS
    result = st == TS_OK ? Py_NewRef(Py_None) : tsubu_raise(&err);
done:
    free(grids);
    Py_DECREF(seq);
    Py_DECREF(path_obj);
    return result;
}

static PyObject *read_vdb(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path_obj;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_obj))
        return NULL;
    tsvdb_grid **grids = NULL;
    size_t count = 0;
    ts_error err;
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = tsvdb_read(PyBytes_AS_STRING(path_obj), &grids, &count, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (st != TS_OK)
        return tsubu_raise(&err);
    PyObject *list = PyList_New((Py_ssize_t)count);
    for (size_t i = 0; i < count; i++) {
        PyObject *g = list ? wrap_grid(grids[i]) : NULL;
        if (!g) {
            if (!list)
                tsvdb_grid_free(grids[i]);
            Py_CLEAR(list);
            continue;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, g);
    }
    free(grids);
    return list;
}

PyMethodDef tsubu_vdb_methods[] = {
    {"particles_to_level_set", (PyCFunction)(void (*)(void))particles_to_level_set, METH_VARARGS | METH_KEYWORDS,
     "particles_to_level_set(positions (N,3), radius (float or (N,)), voxel_size, half_width=3.0) -> Grid 'surface'"},
    {"surface_level_set", (PyCFunction)(void (*)(void))surface_level_set, METH_VARARGS | METH_KEYWORDS,
     "surface_level_set(positions (N,3), particle_radius, radius_scale, voxel_ratio, smoothing, method='spheres') "
     "-> Grid 'surface':\n"
     "the liquid surface exactly as the bake writes it (used by Rebuild Surface)"},
    {"mesh_to_level_set", (PyCFunction)(void (*)(void))mesh_to_level_set, METH_VARARGS | METH_KEYWORDS,
     "mesh_to_level_set(vertices (N,3), triangles (M,3), voxel_size, half_width=3.0) -> Grid"},
    {"dense_to_grid", (PyCFunction)(void (*)(void))dense_to_grid, METH_VARARGS | METH_KEYWORDS,
     "dense_to_grid(values[z, y, x], origin, voxel_size, tolerance=0.0) -> fog Grid 'density'"},
    {"write_vdb", write_vdb, METH_VARARGS, "write_vdb(path, grids): write named grids to a .vdb file atomically"},
    {"read_vdb", read_vdb, METH_VARARGS, "read_vdb(path) -> [Grid]: every float grid of a .vdb file"},
    {NULL, NULL, 0, NULL},
};

int tsubu_vdb_add_types(PyObject *module)
{
    if (PyType_Ready(&GridType) < 0)
        return -1;
    Py_INCREF(&GridType);
    if (PyModule_AddObject(module, "Grid", (PyObject *)&GridType) < 0) {
        Py_DECREF(&GridType);
        return -1;
    }
    return 0;
}
