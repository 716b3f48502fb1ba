/* run_binding.h - running a core solver through the shared frame loop from
 * Python: the GIL is released for the bake and taken back only to call the
 * progress callback, which may cancel (return True) and where Ctrl-C is
 * noticed. Every solver binding uses this; none has its own loop. */
#ifndef TSUBU_RUN_BINDING_H
#define TSUBU_RUN_BINDING_H

#include "binding.h"
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

#endif
