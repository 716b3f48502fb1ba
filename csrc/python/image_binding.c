/* image_binding.c - image files read by the core, for maps given as a path:
 *   read_png(path) -> float32 array (height, width), grey in [0, 1], bottom row first */
#include "binding.h"

#include <stdlib.h>
#include <string.h>

#include "core/png.h"

static PyObject *read_png(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path_obj;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_obj))
        return NULL;
    float *pixels = NULL;
    uint32_t width = 0, height = 0;
    ts_error err;
    ts_error_clear(&err);
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ts_png_read(PyBytes_AS_STRING(path_obj), &pixels, &width, &height, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (st != TS_OK)
        return tsubu_raise(&err);
    const npy_intp dims[2] = {(npy_intp)height, (npy_intp)width};
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_FLOAT32);
    if (out)
        memcpy(PyArray_DATA(out), pixels, (size_t)width * height * sizeof(float));
    free(pixels);
    return (PyObject *)out;
}

PyMethodDef tsubu_image_methods[] = {
    {"read_png", read_png, METH_VARARGS,
     "read_png(path) -> float32 (height, width): a PNG's grey (Rec. 709 luminance) in [0, 1], bottom row first"},
    {NULL, NULL, 0, NULL},
};
