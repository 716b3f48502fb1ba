/* run_binding.h - running a core solver through the shared frame loop from
 * Python: the GIL is released for the bake and taken back only to call the
 * progress callback, which may cancel (return True) and where Ctrl-C is
 * noticed. Every solver binding uses this; none has its own loop. */
#ifndef TSUBU_RUN_BINDING_H
#define TSUBU_RUN_BINDING_H

#include "binding.h"
#include "core/cache.h"
#include "core/frameloop.h"
#include "core/params.h"
#include "core/rigid_object.h"
#include "core/threads.h"

typedef struct tsubu_run_args {
    PyObject *cache_dir;       /* bytes (PyUnicode_FSConverter) */
    int frame_start, frame_end, first_frame, max_substeps, compression;
    double fps;
    PyObject *progress;        /* callable or None */
    double checkpoint_seconds; /* see ts_frame_loop */
    int max_threads;           /* see ts_frame_loop */
    int fixed_threads;         /* see ts_frame_loop; also no set-up on the idle cores alone */
} tsubu_run_args;

/* Run ops on state; returns 0 on success, -1 with a Python exception set. */
int tsubu_run_solver(const ts_solver_ops *ops, void *state, const tsubu_run_args *a);

/* Helpers to read a solver's settings from a dict; each sets a clear
 * exception naming the key and returns -1 on failure. */
int tsubu_dict_double(PyObject *d, const char *key, double *out);
int tsubu_dict_int(PyObject *d, const char *key, int *out);
int tsubu_dict_vec(PyObject *d, const char *key, double *out, int n);
int tsubu_dict_vec_value(PyObject *v, const char *key, double *out, int n);

/* A solver's params struct from a dict through its table: defaults first,
 * then every key of the dict, which must name a row (a typo is an error). */
int tsubu_read_params(const ts_param_table *t, PyObject *d, void *params);
/* The table as a list of dicts (name, type, min, max, default, items, from_scene). */
PyObject *tsubu_param_table_list(const ts_param_table *t);

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

/* The mesh and motion (as above) and "density", "velocity", "angular_velocity",
 * "origin", "rotation" of a sand object or a fracture projectile. */
int tsubu_read_object_input(PyObject *d, PyObject *keep, ts_object_input *in);

/* Replace a solver's state by DIR/state/checkpoint.tsck, which must be of first_frame. */
typedef ts_status (*tsubu_restore_fn)(void *state, const ts_checkpoint *checkpoint, ts_error *err);
ts_status tsubu_restore_checkpoint(tsubu_restore_fn restore, void *state, const char *cache_dir, int first_frame,
                                   ts_error *err);

/* What a solver's binding adds to its core table: how to read one object. */
typedef struct tsubu_solver_binding {
    const ts_solver_ops *ops;
    int (*read_object)(PyObject *d, void *object, PyObject *keep);
} tsubu_solver_binding;

/* The body of every <effect>_bake(settings, objects, cache_dir, frame_start, frame_end, fps,
 * first_frame=frame_start, max_substeps=..., progress=None, compression=1, checkpoint_seconds=30,
 * ready=None, fixed_threads=False) -> stats:
 * read the settings through the solver's parameter table and the objects, create the
 * solver (restoring the checkpoint when first_frame is after frame_start) without the
 * GIL, run the frame loop, return the stats dict. */
PyObject *tsubu_bake(const tsubu_solver_binding *b, PyObject *args, PyObject *kw);

/* Add <effect>_bake (tsubu_bake) and <effect>_params() (the parameter table,
 * tsubu_param_table_list) for a solver to the module. */
int tsubu_add_solver(PyObject *module, const tsubu_solver_binding *b);

extern const tsubu_solver_binding tsubu_water_binding, tsubu_sand_binding, tsubu_fracture_binding,
    tsubu_erosion_binding, tsubu_elastoplastic_binding;

#endif
