/* run_binding.h - running a core solver through the shared frame loop from
 * Python: the GIL is released for the bake and taken back only to call the
 * progress callback, which may cancel (return True) and where Ctrl-C is
 * noticed. Every solver binding uses this; none has its own loop. */
#ifndef TSUBU_RUN_BINDING_H
#define TSUBU_RUN_BINDING_H

#include "binding.h"
#include "core/cache.h"
#include "core/frameloop.h"

typedef struct tsubu_run_args {
    PyObject *cache_dir;       /* bytes (PyUnicode_FSConverter) */
    int frame_start, frame_end, first_frame, max_substeps, compression;
    double fps;
    PyObject *progress;        /* callable or None */
} tsubu_run_args;

/* Run ops on state; returns 0 on success, -1 with a Python exception set. */
int tsubu_run_solver(const ts_solver_ops *ops, void *state, const tsubu_run_args *a);

/* Helpers to read a solver's settings from a dict; each sets a clear
 * exception naming the key and returns -1 on failure. */
int tsubu_dict_double(PyObject *d, const char *key, double *out);
int tsubu_dict_int(PyObject *d, const char *key, int *out);
int tsubu_dict_vec(PyObject *d, const char *key, double *out, int n);

/* An object's mesh and motion from its dict: "vertices" (N,3) float32,
 * "triangles" (M,3) int32, optional "motion" (F,7) float64 or None. The
 * arrays are appended to `keep`, which holds them alive for the bake. */
typedef struct tsubu_mesh_arrays {
    const char *name;
    const float *vertices;
    size_t vertex_count;
    const int32_t *triangles;
    size_t triangle_count;
    const double *motion;
    int motion_frames;
} tsubu_mesh_arrays;
int tsubu_read_mesh(PyObject *d, PyObject *keep, tsubu_mesh_arrays *out);

/* Replace a solver's state by DIR/state/checkpoint.tspf, which must be of first_frame. */
typedef ts_status (*tsubu_restore_fn)(void *state, const ts_frame *checkpoint, ts_error *err);
ts_status tsubu_restore_checkpoint(tsubu_restore_fn restore, void *state, const char *cache_dir, int first_frame,
                                   ts_error *err);

#endif
