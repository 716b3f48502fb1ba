/* binding.h - what the pieces of the tsubu._core binding share: turning a
 * core ts_error into the right Python exception, and taking NumPy arrays
 * of an exact shape and type from Python arguments. The binding is thin on
 * purpose: convert, validate, release the GIL, call the core, map errors. */
#ifndef TSUBU_BINDING_H
#define TSUBU_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#ifndef TSUBU_BINDING_MAIN
#define NO_IMPORT_ARRAY
#endif
#define PY_ARRAY_UNIQUE_SYMBOL tsubu_core_ARRAY_API
#include <numpy/arrayobject.h>

#include "core/status.h"

/* Exception classes made by the module (tsubu._core.CorruptFileError, ...). */
extern PyObject *tsubu_CorruptFileError, *tsubu_CancelledError, *tsubu_UnstableError;

/* Raise the Python exception for err->code with err->message; returns NULL. */
PyObject *tsubu_raise(const ts_error *err);

/* A C-contiguous array of `type` with `ndim` dimensions from obj; a
 * dimension given as -1 may have any length. `what` names the argument in
 * the TypeError/ValueError. Returns a new reference or NULL. */
PyArrayObject *tsubu_array(PyObject *obj, int type, int ndim, const npy_intp *dims, const char *what);

/* Method tables of the binding's parts, joined by module.c. */
extern PyMethodDef tsubu_cache_methods[];
extern PyMethodDef tsubu_vdb_methods[];
extern PyMethodDef tsubu_mesh_methods[];
extern PyMethodDef tsubu_image_methods[];
extern PyMethodDef tsubu_water_methods[];
int tsubu_vdb_add_types(PyObject *module);

#endif
