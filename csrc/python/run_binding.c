/* run_binding.c - the frame loop from Python with progress and cancel (see run_binding.h). */
#include "run_binding.h"

typedef struct progress_ctx {
    PyObject *callable;
    int failed;            /* the callback raised: its exception is kept for after the loop */
    PyObject *type, *value, *traceback;
} progress_ctx;

static int call_progress(void *user, const ts_progress *p)
{
    progress_ctx *ctx = user;
    PyGILState_STATE gil = PyGILState_Ensure();
    int cancel = 0;
    if (PyErr_CheckSignals() < 0) { /* Ctrl-C */
        cancel = ctx->failed = 1;
    } else if (ctx->callable != Py_None) {
        PyObject *r = PyObject_CallFunction(ctx->callable, "iiid", p->frame, p->frame_start, p->frame_end,
                                            p->fraction);
        if (!r) {
            cancel = ctx->failed = 1;
        } else {
            cancel = PyObject_IsTrue(r) == 1;
            Py_DECREF(r);
        }
    }
    if (ctx->failed && !ctx->type)
        PyErr_Fetch(&ctx->type, &ctx->value, &ctx->traceback);
    PyGILState_Release(gil);
    return cancel;
}

int tsubu_run_solver(const ts_solver_ops *ops, void *state, const tsubu_run_args *a)
{
    progress_ctx ctx = {a->progress ? a->progress : Py_None, 0, NULL, NULL, NULL};
    ts_frame_loop loop = {a->frame_start, a->frame_end, a->fps, a->max_substeps, PyBytes_AS_STRING(a->cache_dir),
                          a->compression, call_progress, &ctx};
    ts_error err;
    ts_error_clear(&err);
    ts_status st;
    Py_BEGIN_ALLOW_THREADS
    st = ts_run_frames(&loop, ops, state, a->first_frame, &err);
    Py_END_ALLOW_THREADS
    if (ctx.failed) { /* the callback's own exception (KeyboardInterrupt, ...) wins */
        PyErr_Restore(ctx.type, ctx.value, ctx.traceback);
        return -1;
    }
    if (st != TS_OK) {
        tsubu_raise(&err);
        return -1;
    }
    return 0;
}

static PyObject *dict_item(PyObject *d, const char *key)
{
    PyObject *v = PyDict_GetItemString(d, key);
    if (!v)
        PyErr_Format(PyExc_KeyError, "solver settings lack '%s'", key);
    return v;
}

int tsubu_dict_double(PyObject *d, const char *key, double *out)
{
    PyObject *v = dict_item(d, key);
    if (!v)
        return -1;
    *out = PyFloat_AsDouble(v);
    if (*out == -1.0 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "setting '%s' must be a number", key);
        return -1;
    }
    return 0;
}

int tsubu_dict_int(PyObject *d, const char *key, int *out)
{
    PyObject *v = dict_item(d, key);
    if (!v)
        return -1;
    long l = PyLong_AsLong(v);
    if (l == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "setting '%s' must be a whole number", key);
        return -1;
    }
    *out = (int)l;
    return 0;
}

int tsubu_dict_vec(PyObject *d, const char *key, double *out, int n)
{
    PyObject *v = dict_item(d, key);
    if (!v)
        return -1;
    PyObject *seq = PySequence_Fast(v, "");
    if (!seq || PySequence_Fast_GET_SIZE(seq) != n) {
        Py_XDECREF(seq);
        PyErr_Format(PyExc_TypeError, "setting '%s' must be %d numbers", key, n);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        out[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (out[i] == -1.0 && PyErr_Occurred()) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_TypeError, "setting '%s' must be %d numbers", key, n);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}
