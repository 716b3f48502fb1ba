/* frameloop.h - the frame loop every solver runs in.
 *
 * A solver provides a small table of operations (ts_solver_ops); the loop
 * owns time: it advances frame by frame at the scene's frame rate, splits
 * each frame into substeps no longer than the solver's stable step (and no
 * more than the user's maximum), so every frame ends exactly on its time.
 * After each frame it queues the solver's outputs and a checkpoint of the
 * full state on the background cache writer, in that order, so that a
 * checkpoint on disk always means "every output up to this frame is whole":
 * a bake resumes from it. Progress is reported after every substep and the
 * callback may cancel; cancelling or failing leaves all written frames intact.
 *
 * Cache folder layout (see docs/cache-format.md):
 *   DIR/<stream>/<stream>_<frame, 6 digits>.tspf   particle frames
 *   DIR/state/checkpoint.tsck                        full state at a recent whole frame (sections)
 */
#ifndef TSUBU_FRAMELOOP_H
#define TSUBU_FRAMELOOP_H

#include <stddef.h>

#include "cache.h"
#include "checkpoint.h"
#include "params.h"
#include "status.h"
#include "vecmath.h"

typedef struct ts_progress {
    int frame;          /* the frame being computed */
    int frame_start, frame_end;
    int substep;        /* substeps done in this frame */
    double dt;          /* the last substep's length, seconds */
    double fraction;    /* of the whole bake, 0..1 */
} ts_progress;

/* Return nonzero to cancel the bake (checked between substeps). */
typedef int (*ts_progress_fn)(void *user, const ts_progress *p);

/* Where the loop is, passed to begin_frame (s_begin = s_end = 0, dt = 0)
 * and to every step. Solvers keep it as it is (their `now`), not their own
 * frame counters. */
typedef struct ts_step_context {
    int frame;          /* the interval [frame, frame + 1] is being computed */
    double frame_dt;    /* its length, seconds */
    double s_begin;     /* where the step starts within it, 0..1: the last step's s_end */
    double s_end;       /* where it ends, in (0, 1]; the frame's last step ends at exactly 1 */
    double dt;          /* the step's length, seconds */
} ts_step_context;

typedef struct ts_frame_output {
    const char *cache_dir;
    ts_cache_writer *writer;
    int frame;
    double time;
} ts_frame_output;

/* One figure of a solver's end-of-bake statistics. */
typedef struct ts_stat {
    const char *name;
    double value;
    int whole;          /* a count: shown as an integer */
} ts_stat;
#define TS_MAX_STATS 24

/* Copy a solver's figures into the loop's array (at most TS_MAX_STATS); returns how many. */
size_t ts_stats_copy(ts_stat *out, const ts_stat *all, size_t n);

/* A solver, as the frame loop and the bindings see it (Blender's point cache
 * has the same: one callback table per physics type). The bindings need
 * nothing else to run it: the parameter table reads its settings, create
 * builds it from params and an array of object_size objects, restore puts a
 * checkpoint back, stats says how it went. */
typedef struct ts_solver_ops {
    const char *effect;
    const ts_param_table *params;
    size_t object_size;
    int default_max_substeps;
    ts_status (*create)(void **state, const void *params, const void *objects, size_t count, ts_error *err);
    /* Replace the state by a checkpoint written by save_state (resume). */
    ts_status (*restore)(void *state, const ts_checkpoint *checkpoint, ts_error *err);
    void (*destroy)(void *state);
    /* Fill out (at most TS_MAX_STATS) and return how many. */
    size_t (*stats)(const void *state, ts_stat *out);
    /* Prepare the interval [now->frame, now->frame + 1]: animated objects' motion. */
    ts_status (*begin_frame)(void *state, const ts_step_context *now, ts_error *err);
    /* Largest stable time step now (seconds, > 0). */
    ts_status (*stable_dt)(void *state, double *dt, ts_error *err);
    /* Advance by now->dt, from now->s_begin to now->s_end of the frame. */
    ts_status (*step)(void *state, const ts_step_context *now, ts_error *err);
    /* Queue this frame's outputs (ts_output_particles, ...). */
    ts_status (*write_frame)(void *state, ts_frame_output *out, ts_error *err);
    /* Describe the full state as sections whose columns point into the state
     * (or into the checkpoint's scratch memory). */
    ts_status (*save_state)(void *state, ts_checkpoint *checkpoint, ts_error *err);
} ts_solver_ops;

typedef struct ts_frame_loop {
    int frame_start, frame_end;  /* inclusive; frame_start is the initial state */
    double fps;
    int max_substeps;            /* per frame */
    const char *cache_dir;
    int compression_level;       /* zlib 0..9 */
    ts_progress_fn progress;
    void *progress_user;
    /* Wall-clock seconds between checkpoints (0: after every frame). The
     * first and the last frame always get one. A resume starts from the
     * checkpoint and bakes the frames after it again - the same bytes, since
     * bakes are deterministic - so a longer interval costs only time on
     * resume, while writing the full state of a large scene every frame can
     * take as long as simulating it. */
    double checkpoint_seconds;
    /* Threads: the loop times blocks of substeps with this many and with 1 and
     * keeps the faster (threads.h), starting with OpenMP's current count.
     * 0: OpenMP's current count is the most. */
    int max_threads;
    /* Nonzero: every substep on OpenMP's current count, no tuner (a benchmark measuring that count). */
    int fixed_threads;
} ts_frame_loop;

/* What the bindings use: a checkpoint about every half minute. */
#define TS_CHECKPOINT_SECONDS 30.0

/* Check the loop's settings; messages name the setting. */
ts_status ts_frame_loop_validate(const ts_frame_loop *loop, ts_error *err);

/* Run from `first_frame` (the frame whose state `state` holds: frame_start
 * for a new bake, the checkpoint's frame when resuming) to frame_end. The
 * outputs of first_frame are written only when it is frame_start. */
ts_status ts_run_frames(const ts_frame_loop *loop, const ts_solver_ops *ops, void *state, int first_frame,
                        ts_error *err);

/* DIR/<stream>/<stream>_<frame>.<ext>; fails if it does not fit. */
ts_status ts_output_path(char *buf, size_t size, const char *cache_dir, const char *stream, int frame,
                         const char *ext, ts_error *err);
ts_status ts_checkpoint_path(char *buf, size_t size, const char *cache_dir, ts_error *err);
/* Create DIR/<stream> if missing. */
ts_status ts_output_make_dir(const char *cache_dir, const char *stream, ts_error *err);
/* The path of this frame's file of a stream (its folder made): DIR/<stream>/<stream>_<frame>.<ext>. */
ts_status ts_output_file(ts_frame_output *out, const char *stream, const char *ext, char *path, size_t size,
                         ts_error *err);
/* The world pose of object k's origin, as its solver keeps it. */
typedef void (*ts_pose_fn)(const void *solver, size_t k, ts_vec3 *position, ts_quat *rotation);

/* Queue the poses of n objects (stream rows: position, rotation w x y z, id)
 * - how every solver writes the "rigid" stream that becomes keyframes. */
ts_status ts_output_transforms(ts_frame_output *out, const char *stream, size_t n, ts_pose_fn pose,
                               const void *solver, ts_error *err);

/* Queue one particle frame of a stream for writing. */
ts_status ts_output_particles(ts_frame_output *out, const char *stream, ts_frame *f, ts_error *err);

#endif
