/* cache_binding.c - particle cache frames from Python:
 *   write_frame(path, frame, time, attributes, level=6)
 *   read_frame(path) -> (frame, time, count, {name: ndarray})
 * attributes is a sequence of (name, array) pairs; arrays of shape (N,) or
 * (N, C) of float32, float64, int32, uint32 or uint8. Reading returns arrays
 * that own the decoded columns (no copy). The GIL is released for the I/O. */
#include "binding.h"

#include "core/cache.h"

static int attr_type_of(int npy_type, ts_attr_type *out)
{
    switch (npy_type) {
    case NPY_FLOAT32: *out = TS_ATTR_F32; return 1;
    case NPY_FLOAT64: *out = TS_ATTR_F64; return 1;
    case NPY_INT32: *out = TS_ATTR_I32; return 1;
    case NPY_UINT32: *out = TS_ATTR_U32; return 1;
    case NPY_UINT8: *out = TS_ATTR_U8; return 1;
    }
    return 0;
}

static int npy_type_of(ts_attr_type t)
{
    switch (t) {
    case TS_ATTR_F32: return NPY_FLOAT32;
    case TS_ATTR_F64: return NPY_FLOAT64;
    case TS_ATTR_I32: return NPY_INT32;
    case TS_ATTR_U32: return NPY_UINT32;
    case TS_ATTR_U8: return NPY_UINT8;
    }
    return NPY_NOTYPE;
}

/* Add one (name, array) pair to the frame; the array is kept in `keep`. */
static int add_attribute(ts_frame *f, PyObject *pair, PyObject *keep, npy_intp *count)
{
    const char *name;
    PyObject *obj;
    if (!PyArg_ParseTuple(pair, "sO;each attribute must be a (name, array) pair", &name, &obj))
        return -1;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, NPY_NOTYPE, 1, 2, NPY_ARRAY_IN_ARRAY);
    ts_attr_type type;
    if (!a || !attr_type_of(PyArray_TYPE(a), &type)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "cache attribute '%s' must be a 1- or 2-dimensional array of float32, float64, int32, "
                     "uint32 or uint8", name);
        Py_XDECREF(a);
        return -1;
    }
    int rc = PyList_Append(keep, (PyObject *)a);
    Py_DECREF(a);
    if (rc < 0)
        return -1;
    npy_intp n = PyArray_DIM(a, 0);
    if (*count >= 0 && n != *count) {
        PyErr_Format(PyExc_ValueError, "cache attribute '%s' has %zd rows but an earlier one has %zd", name,
                     (Py_ssize_t)n, (Py_ssize_t)*count);
        return -1;
    }
    *count = n;
    f->count = (uint64_t)n;
    int components = PyArray_NDIM(a) == 2 ? (int)PyArray_DIM(a, 1) : 1;
    ts_error err;
    if (ts_frame_add(f, name, type, components, PyArray_DATA(a), &err) != TS_OK) {
        tsubu_raise(&err);
        return -1;
    }
    return 0;
}

static PyObject *write_frame(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"path", "frame", "time", "attributes", "level", NULL};
    PyObject *path_obj, *attrs;
    int frame, level = 6;
    double time;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&idO|i", names, PyUnicode_FSConverter, &path_obj, &frame, &time,
                                     &attrs, &level))
        return NULL;
    PyObject *seq = PySequence_Fast(attrs, "attributes must be a sequence of (name, array) pairs");
    PyObject *keep = PyList_New(0);
    PyObject *result = NULL;
    if (!seq || !keep)
        goto done;
    ts_frame f;
    ts_frame_init(&f, frame, time, 0);
    npy_intp count = -1;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++)
        if (add_attribute(&f, PySequence_Fast_GET_ITEM(seq, i), keep, &count) < 0)
            goto done;
    ts_error err;
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ts_frame_write(PyBytes_AS_STRING(path_obj), &f, level, &err);
    Py_END_ALLOW_THREADS
    if (st != TS_OK)
        tsubu_raise(&err);
    else
        result = Py_NewRef(Py_None);
done:
    Py_XDECREF(seq);
    Py_XDECREF(keep);
    Py_DECREF(path_obj);
    return result;
}

static void free_capsule(PyObject *capsule) { free(PyCapsule_GetPointer(capsule, NULL)); }

/* An ndarray that takes ownership of a malloc'ed column. */
static PyObject *adopt_column(ts_attribute *a, uint64_t count)
{
    npy_intp dims[2] = {(npy_intp)count, a->components};
    int ndim = a->components == 1 ? 1 : 2;
    PyObject *arr = PyArray_SimpleNewFromData(ndim, dims, npy_type_of(a->type), a->data);
    if (!arr)
        return NULL;
    PyObject *owner = PyCapsule_New(a->data, NULL, free_capsule);
    if (!owner || PyArray_SetBaseObject((PyArrayObject *)arr, owner) < 0) {
        Py_XDECREF(owner);
        Py_DECREF(arr);
        return NULL;
    }
    a->data = NULL; /* the array owns it now */
    return arr;
}

static PyObject *read_frame(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path_obj;
    if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_obj))
        return NULL;
    ts_frame f;
    ts_error err;
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ts_frame_read(PyBytes_AS_STRING(path_obj), &f, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (st != TS_OK)
        return tsubu_raise(&err);
    PyObject *columns = PyDict_New();
    for (int i = 0; columns && i < f.attribute_count; i++) {
        PyObject *arr = adopt_column(&f.attributes[i], f.count);
        if (!arr || PyDict_SetItemString(columns, f.attributes[i].name, arr) < 0)
            Py_CLEAR(columns);
        Py_XDECREF(arr);
    }
    ts_frame_free(&f); /* frees only what no array adopted */
    if (!columns)
        return NULL;
    return Py_BuildValue("idKN", (int)f.frame, f.time, (unsigned long long)f.count, columns);
}

PyMethodDef tsubu_cache_methods[] = {
    {"write_frame", (PyCFunction)(void (*)(void))write_frame, METH_VARARGS | METH_KEYWORDS,
     "write_frame(path, frame, time, attributes, level=6)\n\nWrite one particle cache frame atomically. attributes "
     "is a sequence of (name, array) pairs, arrays of shape (N,) or (N, C)."},
    {"read_frame", read_frame, METH_VARARGS,
     "read_frame(path) -> (frame, time, count, {name: array})\n\nRead and check one particle cache frame; a "
     "damaged file raises CorruptFileError naming it."},
    {NULL, NULL, 0, NULL},
};
