/* run_binding.c - the frame loop from Python with progress and cancel (see run_binding.h). */
#include "run_binding.h"

#include <limits.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

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
                          a->compression, call_progress, &ctx, a->checkpoint_seconds, a->max_threads,
                          a->fixed_threads};
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
    return v ? tsubu_dict_vec_value(v, key, out, n) : -1;
}

int tsubu_dict_vec_value(PyObject *v, const char *key, double *out, int n)
{
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

static int read_param(const ts_param_table *t, const ts_param_def *def, PyObject *v, void *params)
{
    void *f = ts_param_field(def, params);
    switch (def->type) {
    case TS_PARAM_REAL: {
        double x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred())
            break;
        *(double *)f = x;
        return 0;
    }
    case TS_PARAM_INT:
    case TS_PARAM_LONG:
    case TS_PARAM_BOOL: {
        if (!PyLong_Check(v)) /* bool is an int; a float is refused rather than truncated */
            break;
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred()) || x < INT_MIN || x > INT_MAX) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: setting '%s' is out of range", t->effect, def->name);
            return -1;
        }
        if (def->type == TS_PARAM_LONG)
            *(long *)f = (long)x;
        else
            *(int *)f = (int)x;
        return 0;
    }
    case TS_PARAM_ENUM: {
        const char *item = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
        int i = item ? ts_param_enum_index(def, item) : -1;
        if (i < 0) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: setting '%s' must be one of its choices (got %R)", t->effect,
                         def->name, v);
            return -1;
        }
        *(int *)f = i;
        return 0;
    }
    case TS_PARAM_VEC3:
        return tsubu_dict_vec_value(v, def->name, f, 3);
    case TS_PARAM_SEED: {
        unsigned long long x = PyLong_Check(v) ? PyLong_AsUnsignedLongLong(v) : (unsigned long long)-1;
        if (!PyLong_Check(v) || (x == (unsigned long long)-1 && PyErr_Occurred())) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: the seed must be a whole number 0 to 2^64 - 1 (got %R)", t->effect, v);
            return -1;
        }
        *(uint64_t *)f = x;
        return 0;
    }
    }
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: setting '%s' must be %s (got %R)", t->effect, def->name,
                 def->type == TS_PARAM_REAL ? "a number" : "a whole number", v);
    return -1;
}

int tsubu_read_params(const ts_param_table *t, PyObject *d, void *params)
{
    ts_params_default(t, params);
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &key, &value)) {
        const char *name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        const ts_param_def *def = name ? ts_param_find(t, name) : NULL;
        if (!def) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: unknown setting %R", t->effect, key);
            return -1;
        }
        if (read_param(t, def, value, params) < 0)
            return -1;
    }
    return 0;
}

PyObject *tsubu_param_table_list(const ts_param_table *t)
{
    static const char *types[] = {"real", "int", "long", "bool", "enum", "vec3", "seed"};
    PyObject *out = PyList_New(0);
    for (size_t k = 0; out && k < t->count; k++) {
        const ts_param_def *d = &t->defs[k];
        PyObject *items = PyTuple_New(0);
        for (int i = 0; items && i < TS_PARAM_MAX_ITEMS && d->items[i]; i++) {
            PyObject *s = PyUnicode_FromString(d->items[i]);
            if (!s || _PyTuple_Resize(&items, i + 1) < 0) {
                Py_XDECREF(s);
                Py_CLEAR(items);
                break;
            }
            PyTuple_SET_ITEM(items, i, s);
        }
        PyObject *row = items ? Py_BuildValue("{s:s,s:s,s:d,s:d,s:(ddd),s:N,s:O}", "name", d->name, "type",
                                              types[d->type], "min", d->min, "max", d->max, "default",
                                              d->fallback[0], d->fallback[1], d->fallback[2], "items", items,
                                              "from_scene", d->source == TS_FROM_SCENE ? Py_True : Py_False)
                              : NULL;
        if (!row || PyList_Append(out, row) < 0)
            Py_CLEAR(out);
        Py_XDECREF(row);
    }
    return out;
}

int tsubu_read_mesh(PyObject *d, PyObject *keep, tsubu_mesh_arrays *out)
{
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "each object must be a dict");
        return -1;
    }
    PyObject *name = PyDict_GetItemString(d, "name");
    out->name = name ? PyUnicode_AsUTF8(name) : NULL;
    if (!out->name) {
        PyErr_SetString(PyExc_KeyError, "an object lacks its 'name'");
        return -1;
    }
    const npy_intp d3[2] = {-1, 3}, d7[2] = {-1, 7};
    PyArrayObject *v = tsubu_array(PyDict_GetItemString(d, "vertices"), NPY_FLOAT32, 2, d3, "vertices");
    PyArrayObject *t = v ? tsubu_array(PyDict_GetItemString(d, "triangles"), NPY_INT32, 2, d3, "triangles") : NULL;
    PyObject *motion_obj = PyDict_GetItemString(d, "motion");
    int moving = motion_obj && motion_obj != Py_None;
    PyArrayObject *m = t && moving ? tsubu_array(motion_obj, NPY_FLOAT64, 2, d7, "motion") : NULL;
    int ok = v && t && (!moving || m);
    PyArrayObject *all[3] = {v, t, m};
    for (int i = 0; i < 3; i++)
        if (all[i]) {
            if (ok && PyList_Append(keep, (PyObject *)all[i]) < 0)
                ok = 0;
            Py_DECREF(all[i]);
        }
    if (!ok)
        return -1;
    out->vertices = PyArray_DATA(v);
    out->vertex_count = (size_t)PyArray_DIM(v, 0);
    out->triangles = PyArray_DATA(t);
    out->triangle_count = (size_t)PyArray_DIM(t, 0);
    out->motion = m ? PyArray_DATA(m) : NULL;
    out->motion_frames = m ? (int)PyArray_DIM(m, 0) : 0;
    return 0;
}

int tsubu_read_object_input(PyObject *d, PyObject *keep, ts_object_input *in)
{
    tsubu_mesh_arrays mesh;
    if (tsubu_read_mesh(d, keep, &mesh) < 0 || tsubu_dict_double(d, "density", &in->density) ||
        tsubu_dict_vec(d, "velocity", in->velocity, 3) ||
        tsubu_dict_vec(d, "angular_velocity", in->angular_velocity, 3) ||
        tsubu_dict_vec(d, "origin", in->origin, 3) || tsubu_dict_vec(d, "rotation", in->rotation, 4))
        return -1;
    in->name = mesh.name;
    in->vertices = mesh.vertices, in->vertex_count = mesh.vertex_count;
    in->triangles = mesh.triangles, in->triangle_count = mesh.triangle_count;
    in->motion = mesh.motion, in->motion_frames = mesh.motion_frames;
    return 0;
}

ts_status tsubu_restore_checkpoint(tsubu_restore_fn restore, void *state, const char *cache_dir, int first_frame,
                                   ts_error *err)
{
    char path[4096];
    ts_status st = ts_checkpoint_path(path, sizeof path, cache_dir, err);
    if (st != TS_OK)
        return st;
    ts_checkpoint *cp = malloc(sizeof *cp);
    if (!cp)
        return ts_fail(err, TS_ERR_NOMEM, "out of memory reading %s", path);
    st = ts_checkpoint_read(path, cp, err);
    if (st == TS_OK && cp->frame != first_frame)
        st = ts_fail(err, TS_ERR_CORRUPT, "%s: checkpoint of frame %d, expected %d; bake again from the start", path,
                     (int)cp->frame, first_frame);
    if (st == TS_OK)
        st = restore(state, cp, err);
    ts_checkpoint_free(cp);
    free(cp);
    return st;
}

static PyObject *stats_dict(const ts_solver_ops *ops, const void *state)
{
    ts_stat stats[TS_MAX_STATS];
    size_t n = ops->stats(state, stats);
    PyObject *d = PyDict_New();
    for (size_t k = 0; d && k < n; k++) {
        PyObject *v = stats[k].whole ? PyLong_FromDouble(stats[k].value) : PyFloat_FromDouble(stats[k].value);
        if (!v || PyDict_SetItemString(d, stats[k].name, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}


PyObject *tsubu_bake(const tsubu_solver_binding *b, PyObject *args, PyObject *kw)
{
    static char *names[] = {"settings", "objects", "cache_dir", "frame_start", "frame_end", "fps", "first_frame",
                            "max_substeps", "progress", "compression", "checkpoint_seconds", "ready",
                            "fixed_threads", NULL};
    PyObject *settings, *objects, *ready = Py_None;
    const ts_solver_ops *ops = b->ops;
    tsubu_run_args a = {NULL, 0, 0, -1, ops->default_max_substeps, 1, 24.0, Py_None, TS_CHECKPOINT_SECONDS, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O!O&iid|iiOidOp", names, &PyDict_Type, &settings, &PyList_Type,
                                     &objects, PyUnicode_FSConverter, &a.cache_dir, &a.frame_start, &a.frame_end,
                                     &a.fps, &a.first_frame, &a.max_substeps, &a.progress, &a.compression,
                                     &a.checkpoint_seconds, &ready, &a.fixed_threads))
        return NULL;
    if (a.first_frame < 0)
        a.first_frame = a.frame_start;
    Py_ssize_t n = PyList_GET_SIZE(objects);
    char *objs = calloc((size_t)n + 1, ops->object_size);
    void *params = calloc(1, ops->params->size), *state = NULL;
    PyObject *keep = PyList_New(0), *result = NULL;
    if (!objs || !params || !keep) {
        PyErr_NoMemory();
        goto done;
    }
    if (tsubu_read_params(ops->params, settings, params) < 0)
        goto done;
    /* every table has these rows (tsubu_add_solver checked) */
    *(int *)ts_param_field(ts_param_find(ops->params, "frame_start"), params) = a.frame_start;
    *(double *)ts_param_field(ts_param_find(ops->params, "fps"), params) = a.fps;
    for (Py_ssize_t i = 0; i < n; i++)
        if (b->read_object(PyList_GET_ITEM(objects, i), objs + (size_t)i * ops->object_size, keep) < 0)
            goto done;
    ts_error err;
    ts_frame_loop settings_only = {a.frame_start, a.frame_end, a.fps, a.max_substeps, PyBytes_AS_STRING(a.cache_dir),
                                   a.compression, NULL, NULL, a.checkpoint_seconds, 0, 0};
    ts_status st = ts_frame_loop_validate(&settings_only, &err);
    if (st != TS_OK) {
        tsubu_raise(&err);
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    /* the set-up on the cores that are free; the frame loop starts there, then measures */
    a.max_threads = a.fixed_threads ? omp_get_max_threads() : ts_threads_use_idle_cores(0.01);
    st = ops->create(&state, params, objs, (size_t)n, &err);
    if (st == TS_OK && a.first_frame != a.frame_start)
        st = tsubu_restore_checkpoint(ops->restore, state, PyBytes_AS_STRING(a.cache_dir), a.first_frame, &err);
    Py_END_ALLOW_THREADS
    if (st != TS_OK) {
        tsubu_raise(&err);
        goto done;
    }
    /* everything that can be checked before baking is checked: now the cache folder may be prepared */
    if (ready != Py_None) {
        PyObject *r = PyObject_CallNoArgs(ready);
        if (!r)
            goto done;
        Py_DECREF(r);
    }
    if (tsubu_run_solver(ops, state, &a) == 0)
        result = stats_dict(ops, state);
done:
    if (state)
        ops->destroy(state);
    if (a.max_threads > 0)
        omp_set_num_threads(a.max_threads);
    free(objs);
    free(params);
    Py_XDECREF(keep);
    Py_DECREF(a.cache_dir);
    return result;
}

static const tsubu_solver_binding *binding_of(PyObject *self)
{
    return PyCapsule_GetPointer(self, "tsubu.solver");
}

static PyObject *bake_method(PyObject *self, PyObject *args, PyObject *kw)
{
    const tsubu_solver_binding *b = binding_of(self);
    return b ? tsubu_bake(b, args, kw) : NULL;
}

static PyObject *params_method(PyObject *self, PyObject *unused)
{
    (void)unused;
    const tsubu_solver_binding *b = binding_of(self);
    return b ? tsubu_param_table_list(b->ops->params) : NULL;
}

/* A function of the module bound to the solver's binding; its definition lives as long as the module. */
static int add_bound(PyObject *module, PyObject *capsule, const char *name, PyCFunction f, int flags, const char *doc)
{
    PyMethodDef *def = PyMem_Calloc(1, sizeof *def);
    char *name_copy = PyMem_Malloc(strlen(name) + 1), *doc_copy = PyMem_Malloc(strlen(doc) + 1);
    if (!def || !name_copy || !doc_copy) {
        PyMem_Free(def), PyMem_Free(name_copy), PyMem_Free(doc_copy);
        PyErr_NoMemory();
        return -1;
    }
    *def = (PyMethodDef){strcpy(name_copy, name), f, flags, strcpy(doc_copy, doc)};
    PyObject *fn = PyCFunction_NewEx(def, capsule, PyModule_GetNameObject(module));
    if (!fn || PyModule_AddObject(module, name, fn) < 0) {
        Py_XDECREF(fn);
        return -1;
    }
    return 0;
}

/* The rows the bake call fills in: a table without them is a programming error, caught at import. */
static int has_row(const ts_param_table *t, const char *name, ts_param_type type)
{
    const ts_param_def *d = ts_param_find(t, name);
    if (d && d->type == type && d->source == TS_FROM_SCENE)
        return 1;
    PyErr_Format(PyExc_SystemError, "the %s solver's parameter table lacks the scene row '%s'", t->effect, name);
    return 0;
}

int tsubu_add_solver(PyObject *module, const tsubu_solver_binding *b)
{
    const char *e = b->ops->effect;
    if (!has_row(b->ops->params, "frame_start", TS_PARAM_INT) || !has_row(b->ops->params, "fps", TS_PARAM_REAL) ||
        !has_row(b->ops->params, "seed", TS_PARAM_SEED))
        return -1;
    PyObject *capsule = PyCapsule_New((void *)b, "tsubu.solver", NULL);
    if (!capsule)
        return -1;
    char name[64], doc[1536];
    snprintf(name, sizeof name, "%s_bake", e);
    snprintf(doc, sizeof doc,
             "%s_bake(settings, objects, cache_dir, frame_start, frame_end, fps, first_frame=frame_start, "
             "max_substeps=%d, progress=None, compression=1, checkpoint_seconds=30, ready=None, "
             "fixed_threads=False) -> stats dict\n\nBake the %s effect: settings are rows of %s_params() (the others "
             "keep their defaults); tsubu/effects/%s.py builds the arguments from a scene description. ready() is "
             "called once the solver is set up and every check passed, before the first frame is written: a scene "
             "refused leaves the cache folder untouched. fixed_threads: every step on OpenMP's thread count, not the "
             "count the bake measures faster (benchmarks).",
             e, b->ops->default_max_substeps, e, e, e);
    int rc = add_bound(module, capsule, name, (PyCFunction)(void (*)(void))bake_method, METH_VARARGS | METH_KEYWORDS,
                       doc);
    snprintf(name, sizeof name, "%s_params", e);
    snprintf(doc, sizeof doc, "%s_params() -> the %s solver's parameter table: dicts of name, type, min, max, "
             "default, items, from_scene", e, e);
    if (rc == 0)
        rc = add_bound(module, capsule, name, params_method, METH_NOARGS, doc);
    Py_DECREF(capsule);
    return rc;
}
