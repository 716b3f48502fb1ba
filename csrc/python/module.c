/* module.c - the tsubu._core extension module: creates the exception
 * classes, joins the method tables of cache, VDB and mesh bindings, and
 * maps core statuses to Python exceptions. */
#define TSUBU_BINDING_MAIN
#include "binding.h"

#include "core/cache.h"
#include "run_binding.h"

PyObject *tsubu_CorruptFileError, *tsubu_CancelledError, *tsubu_UnstableError;

PyObject *tsubu_raise(const ts_error *err)
{
    PyObject *type;
    switch (err->code) {
    case TS_ERR_INVALID: type = PyExc_ValueError; break;
    case TS_ERR_NOMEM: type = PyExc_MemoryError; break;
    case TS_ERR_IO: type = PyExc_OSError; break;
    case TS_ERR_CORRUPT: type = tsubu_CorruptFileError; break;
    case TS_ERR_CANCELLED: type = tsubu_CancelledError; break;
    case TS_ERR_UNSTABLE: type = tsubu_UnstableError; break;
    default: type = PyExc_RuntimeError; break;
    }
    PyErr_SetString(type, err->message[0] ? err->message : ts_status_name(err->code));
    return NULL;
}

PyArrayObject *tsubu_array(PyObject *obj, int type, int ndim, const npy_intp *dims, const char *what)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, type, ndim, ndim, NPY_ARRAY_IN_ARRAY);
    if (!a) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a %d-dimensional array convertible to %s", what, ndim,
                     PyArray_DescrFromType(type)->typeobj->tp_name);
        return NULL;
    }
    for (int k = 0; k < ndim; k++)
        if (dims[k] >= 0 && PyArray_DIM(a, k) != dims[k]) {
            PyErr_Format(PyExc_ValueError, "%s has length %zd along axis %d, expected %zd", what,
                         (Py_ssize_t)PyArray_DIM(a, k), k, (Py_ssize_t)dims[k]);
            Py_DECREF(a);
            return NULL;
        }
    return a;
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "tsubu._core",
    "Tsubu's C core: particle cache files, OpenVDB volumes, mesh checks (and, as they arrive, the solvers).",
    -1, NULL, NULL, NULL, NULL, NULL};

static int add_methods(PyObject *m, PyMethodDef *defs)
{
    for (PyMethodDef *d = defs; d->ml_name; d++) {
        PyObject *f = PyCFunction_NewEx(d, NULL, PyModule_GetNameObject(m));
        if (!f || PyModule_AddObject(m, d->ml_name, f) < 0) {
            Py_XDECREF(f);
            return -1;
        }
    }
    return 0;
}

static PyObject *new_exception(PyObject *m, const char *name, PyObject *base, const char *doc)
{
    char full[64];
    snprintf(full, sizeof full, "tsubu._core.%s", name);
    PyObject *e = PyErr_NewExceptionWithDoc(full, doc, base, NULL);
    if (!e)
        return NULL;
    Py_INCREF(e);
    if (PyModule_AddObject(m, name, e) < 0) {
        Py_DECREF(e);
        Py_DECREF(e);
        return NULL;
    }
    return e;
}

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (!(tsubu_CorruptFileError = new_exception(m, "CorruptFileError", PyExc_ValueError,
                                                 "A cache, volume or preset file is truncated, damaged or foreign.")) ||
        !(tsubu_CancelledError = new_exception(m, "CancelledError", PyExc_Exception,
                                               "A bake was cancelled; every frame already written is intact.")) ||
        !(tsubu_UnstableError = new_exception(m, "UnstableError", PyExc_RuntimeError,
                                              "A simulation produced NaN or exploded; the message names the frame.")) ||
        add_methods(m, tsubu_cache_methods) < 0 || add_methods(m, tsubu_vdb_methods) < 0 ||
        add_methods(m, tsubu_mesh_methods) < 0 || add_methods(m, tsubu_image_methods) < 0 || add_methods(m, tsubu_water_methods) < 0 || tsubu_add_solver(m, &tsubu_water_binding) < 0 ||
        tsubu_add_solver(m, &tsubu_sand_binding) < 0 || tsubu_add_solver(m, &tsubu_fracture_binding) < 0 ||
        tsubu_add_solver(m, &tsubu_erosion_binding) < 0 || tsubu_add_solver(m, &tsubu_elastoplastic_binding) < 0 ||
        tsubu_vdb_add_types(m) < 0 ||
        PyModule_AddIntConstant(m, "CACHE_VERSION", TS_CACHE_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
