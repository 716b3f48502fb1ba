/* frameloop.c - frames, substeps, outputs, checkpoints, progress (see frameloop.h). */
#include "frameloop.h"

#include "threads.h"

#include <omp.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define WRITER_QUEUE_DEPTH 2

ts_status ts_output_path(char *buf, size_t size, const char *cache_dir, const char *stream, int frame,
                         const char *ext, ts_error *err)
{
    int n = snprintf(buf, size, "%s/%s/%s_%06d.%s", cache_dir, stream, stream, frame, ext);
    if (n < 0 || (size_t)n >= size)
        return ts_fail(err, TS_ERR_IO, "%s: cache path too long", cache_dir);
    return TS_OK;
}

ts_status ts_checkpoint_path(char *buf, size_t size, const char *cache_dir, ts_error *err)
{
    int n = snprintf(buf, size, "%s/state/checkpoint.tsck", cache_dir);
    if (n < 0 || (size_t)n >= size)
        return ts_fail(err, TS_ERR_IO, "%s: cache path too long", cache_dir);
    return TS_OK;
}

static ts_status make_dir(const char *path, ts_error *err)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return TS_OK;
    return ts_fail(err, TS_ERR_IO, "%s: cannot create folder (%s)", path, strerror(errno));
}

ts_status ts_output_make_dir(const char *cache_dir, const char *stream, ts_error *err)
{
    char path[4096];
    ts_status st = make_dir(cache_dir, err);
    if (st != TS_OK)
        return st;
    if (snprintf(path, sizeof path, "%s/%s", cache_dir, stream) >= (int)sizeof path)
        return ts_fail(err, TS_ERR_IO, "%s: cache path too long", cache_dir);
    return make_dir(path, err);
}

ts_status ts_output_file(ts_frame_output *out, const char *stream, const char *ext, char *path, size_t size,
                         ts_error *err)
{
    ts_status st = ts_output_make_dir(out->cache_dir, stream, err);
    return st == TS_OK ? ts_output_path(path, size, out->cache_dir, stream, out->frame, ext, err) : st;
}

ts_status ts_output_particles(ts_frame_output *out, const char *stream, ts_frame *f, ts_error *err)
{
    char path[4096];
    ts_status st = ts_output_file(out, stream, "tspf", path, sizeof path, err);
    if (st != TS_OK)
        return st;
    f->frame = out->frame;
    f->time = out->time;
    return ts_cache_writer_submit(out->writer, path, f, err);
}

ts_status ts_output_transforms(ts_frame_output *out, const char *stream, size_t n, ts_pose_fn pose,
                               const void *solver, ts_error *err)
{
    float *pos = malloc((3 * n + 1) * sizeof *pos), *rot = malloc((4 * n + 1) * sizeof *rot);
    uint32_t *id = malloc((n + 1) * sizeof *id);
    ts_status st = pos && rot && id ? TS_OK : ts_fail(err, TS_ERR_NOMEM, "out of memory writing '%s' of frame %d",
                                                    stream, out->frame);
    for (size_t b = 0; st == TS_OK && b < n; b++) {
        ts_vec3 position;
        ts_quat rotation;
        pose(solver, b, &position, &rotation);
        pos[3 * b] = (float)position.x, pos[3 * b + 1] = (float)position.y, pos[3 * b + 2] = (float)position.z;
        rot[4 * b] = (float)rotation.w, rot[4 * b + 1] = (float)rotation.x;
        rot[4 * b + 2] = (float)rotation.y, rot[4 * b + 3] = (float)rotation.z;
        id[b] = (uint32_t)b;
    }
    ts_frame t;
    ts_frame_init(&t, out->frame, out->time, n);
    if (st == TS_OK) st = ts_frame_add(&t, "position", TS_ATTR_F32, 3, pos, err);
    if (st == TS_OK) st = ts_frame_add(&t, "rotation", TS_ATTR_F32, 4, rot, err);
    if (st == TS_OK) st = ts_frame_add(&t, "id", TS_ATTR_U32, 1, id, err);
    if (st == TS_OK) st = ts_output_particles(out, stream, &t, err); /* the writer copies the columns */
    free(pos);
    free(rot);
    free(id);
    return st;
}

ts_status ts_frame_loop_validate(const ts_frame_loop *loop, ts_error *err)
{
    if (!(loop->fps > 0.0) || !isfinite(loop->fps) || loop->fps > 10000.0)
        return ts_fail(err, TS_ERR_INVALID, "fps must be between 0 and 10000 frames per second (got %g)", loop->fps);
    if (loop->frame_end < loop->frame_start)
        return ts_fail(err, TS_ERR_INVALID, "frame_end (%d) is before frame_start (%d)", loop->frame_end,
                       loop->frame_start);
    if (loop->max_substeps < 1 || loop->max_substeps > 100000)
        return ts_fail(err, TS_ERR_INVALID, "max_substeps must be 1-100000 (got %d)", loop->max_substeps);
    if (loop->compression_level < 0 || loop->compression_level > 9)
        return ts_fail(err, TS_ERR_INVALID, "compression_level must be 0-9 (got %d)", loop->compression_level);
    if (!loop->cache_dir || !loop->cache_dir[0])
        return ts_fail(err, TS_ERR_INVALID, "no cache folder given");
    if (!(loop->checkpoint_seconds >= 0.0) || !isfinite(loop->checkpoint_seconds))
        return ts_fail(err, TS_ERR_INVALID, "checkpoint_seconds must be a finite number >= 0 (got %g)",
                       loop->checkpoint_seconds);
    return TS_OK;
}

static double wall_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Outputs first, then the checkpoint if one is due: the writer keeps queue order. */
static ts_status emit_frame(const ts_frame_loop *loop, const ts_solver_ops *ops, void *state,
                            ts_cache_writer *writer, int frame, double *last_checkpoint, ts_error *err)
{
    ts_frame_output out = {loop->cache_dir, writer, frame, (frame - loop->frame_start) / loop->fps};
    ts_status st = ops->write_frame(state, &out, err);
    if (st != TS_OK)
        return st;
    double now = wall_seconds();
    int due = frame == loop->frame_start || frame == loop->frame_end ||
              now - *last_checkpoint >= loop->checkpoint_seconds;
    if (!due)
        return TS_OK;
    *last_checkpoint = now;
    ts_checkpoint *checkpoint = malloc(sizeof *checkpoint);
    if (!checkpoint)
        return ts_fail(err, TS_ERR_NOMEM, "out of memory for the checkpoint");
    ts_checkpoint_init(checkpoint, frame, out.time);
    uint8_t *bytes = NULL;
    size_t size = 0;
    char path[4096];
    st = ops->save_state(state, checkpoint, err);
    if (st == TS_OK) /* now: the sections point into the state, which the next step changes */
        st = ts_checkpoint_encode(checkpoint, &bytes, &size, err);
    ts_checkpoint_free(checkpoint);
    free(checkpoint);
    if (st == TS_OK && (st = ts_output_make_dir(loop->cache_dir, "state", err)) == TS_OK)
        st = ts_checkpoint_path(path, sizeof path, loop->cache_dir, err);
    if (st != TS_OK) {
        free(bytes);
        return st;
    }
    return ts_cache_writer_submit_bytes(writer, path, bytes, size, err);
}

static ts_status run_frame(const ts_frame_loop *loop, const ts_solver_ops *ops, void *state, int frame,
                           ts_thread_tuner *threads, ts_error *err)
{
    const double frame_dt = 1.0 / loop->fps;
    ts_step_context now = {frame, frame_dt, 0.0, 0.0, 0.0};
    ts_status st = ops->begin_frame ? ops->begin_frame(state, &now, err) : TS_OK;
    double remaining = frame_dt;
    int substep = 0;
    while (st == TS_OK && remaining > 0.0) {
        double dt_max;
        if ((st = ops->stable_dt(state, &dt_max, err)) != TS_OK)
            break;
        if (!(dt_max > 0.0) || isnan(dt_max)) {
            st = ts_fail(err, TS_ERR_UNSTABLE, "the stable time step is %g s (the simulation has blown up)", dt_max);
            break;
        }
        int left = loop->max_substeps - substep;
        double wanted = ceil(remaining / dt_max * (1.0 - 1e-12));
        int n = wanted < 1.0 ? 1 : (wanted > (double)left ? left : (int)wanted);
        double dt = n == 1 ? remaining : remaining / n; /* the last substep lands exactly on the frame */
        remaining = n == 1 ? 0.0 : remaining - dt;
        substep++;
        now.s_begin = now.s_end;
        now.s_end = 1.0 - remaining / frame_dt;
        now.dt = dt;
        ts_thread_tuner_before(threads);
        double started = wall_seconds();
        if ((st = ops->step(state, &now, err)) != TS_OK)
            break;
        ts_thread_tuner_after(threads, wall_seconds() - started);
        if (loop->progress) {
            int frames = loop->frame_end - loop->frame_start;
            double done = (frame - loop->frame_start) + (1.0 - remaining / frame_dt);
            ts_progress p = {frame + 1, loop->frame_start, loop->frame_end, substep, dt, frames ? done / frames : 1.0};
            if (loop->progress(loop->progress_user, &p))
                st = ts_fail(err, TS_ERR_CANCELLED, "cancelled during frame %d", frame + 1);
        }
    }
    return st;
}

/* Name the frame a solver failed in; solvers say only what went wrong. */
static ts_status name_frame(const ts_solver_ops *ops, ts_status st, int frame, ts_error *err)
{
    if (st == TS_OK || st == TS_ERR_CANCELLED || !err)
        return st;
    char inner[TS_ERROR_MESSAGE_SIZE];
    snprintf(inner, sizeof inner, "%s", err->message);
    if (st == TS_ERR_UNSTABLE)
        return ts_fail(err, st, "%s became unstable at frame %d: %s", ops->effect, frame, inner);
    return ts_fail(err, st, "frame %d: %s", frame, inner);
}

ts_status ts_run_frames(const ts_frame_loop *loop, const ts_solver_ops *ops, void *state, int first_frame,
                        ts_error *err)
{
    ts_status st = ts_frame_loop_validate(loop, err);
    if (st != TS_OK)
        return st;
    if (first_frame < loop->frame_start || first_frame > loop->frame_end)
        return ts_fail(err, TS_ERR_INVALID, "the state is at frame %d, outside the bake's frames %d-%d", first_frame,
                       loop->frame_start, loop->frame_end);
    ts_cache_writer *writer;
    if ((st = ts_cache_writer_open(&writer, WRITER_QUEUE_DEPTH, loop->compression_level, err)) != TS_OK)
        return st;
    double last_checkpoint = wall_seconds(); /* a new bake writes one at frame_start; a resumed one has it */
    if (first_frame == loop->frame_start)
        st = name_frame(ops, emit_frame(loop, ops, state, writer, first_frame, &last_checkpoint, err), first_frame,
                        err);
    ts_thread_tuner threads;
    ts_thread_tuner_init(&threads, loop->max_threads > 0 ? loop->max_threads : omp_get_max_threads());
    threads.enabled &= !loop->fixed_threads;
    for (int frame = first_frame; st == TS_OK && frame < loop->frame_end; frame++) {
        st = name_frame(ops, run_frame(loop, ops, state, frame, &threads, err), frame + 1, err);
        if (st == TS_OK)
            st = name_frame(ops, emit_frame(loop, ops, state, writer, frame + 1, &last_checkpoint, err), frame + 1,
                            err);
    }
    ts_thread_tuner_finish(&threads);
    /* whatever happened, everything queued so far is finished writing */
    ts_error close_err;
    ts_error_clear(&close_err);
    ts_status closed = ts_cache_writer_close(writer, &close_err);
    if (st == TS_OK && closed != TS_OK) {
        if (err)
            *err = close_err;
        st = closed;
    }
    return st;
}

size_t ts_stats_copy(ts_stat *out, const ts_stat *all, size_t n)
{
    if (n > TS_MAX_STATS)
        n = TS_MAX_STATS;
    memcpy(out, all, n * sizeof *all);
    return n;
}
