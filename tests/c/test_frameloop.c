/* test_frameloop.c - the shared frame loop with a toy solver (a ballistic
 * point): frames end exactly on their times, substeps obey the solver's
 * stable step and the user's maximum, cancelling leaves whole frames and a
 * checkpoint, resuming from that checkpoint gives the same bytes as an
 * uninterrupted bake, a checkpoint interval leaves the state of the
 * first and last frames only, and fixed_threads keeps the tuner off. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "core/frameloop.h"

typedef struct ballistic {
    float z[2], vz[2];
    double t;
    double dt_max;
    int steps, cancel_after, substeps_seen;
} ballistic;

static ts_status b_stable_dt(void *s, double *dt, ts_error *err)
{
    (void)err;
    *dt = ((ballistic *)s)->dt_max;
    return TS_OK;
}

static ts_status b_step(void *s, const ts_step_context *now, ts_error *err)
{
    ballistic *b = s;
    const double dt = now->dt;
    CHECK(now->s_end > now->s_begin && now->s_end <= 1.0);
    CHECK(fabs((now->s_end - now->s_begin) * now->frame_dt - dt) < 1e-12);
    for (int i = 0; i < 2; i++) {
        b->vz[i] -= (float)(9.81 * dt);
        b->z[i] += (float)(b->vz[i] * dt);
    }
    b->t += dt;
    b->steps++;
    return isfinite(b->z[0]) ? TS_OK : ts_fail(err, TS_ERR_UNSTABLE, "toy solver blew up");
}

static ts_status b_write(void *s, ts_frame_output *out, ts_error *err)
{
    ballistic *b = s;
    ts_frame f;
    ts_frame_init(&f, out->frame, out->time, 2);
    ts_status st = ts_frame_add(&f, "z", TS_ATTR_F32, 1, b->z, err);
    return st == TS_OK ? ts_output_particles(out, "points", &f, err) : st;
}

static void b_columns(ballistic *b, ts_column c[2])
{
    c[0] = (ts_column){"z", TS_ATTR_F32, 1, b->z};
    c[1] = (ts_column){"vz", TS_ATTR_F32, 1, b->vz};
}

static ts_status b_save(void *s, ts_checkpoint *cp, ts_error *err)
{
    ts_column c[2];
    b_columns(s, c);
    return ts_checkpoint_put(cp, "points", 2, c, 2, err);
}

static const ts_solver_ops BALLISTIC = {
    .effect = "ballistic", .stable_dt = b_stable_dt, .step = b_step, .write_frame = b_write, .save_state = b_save};

static int count_substeps(void *user, const ts_progress *p)
{
    ballistic *b = user;
    b->substeps_seen++;
    CHECK(p->fraction >= 0.0 && p->fraction <= 1.0 + 1e-12);
    return b->cancel_after > 0 && b->substeps_seen >= b->cancel_after;
}

static ts_frame_loop make_loop(const char *dir, ballistic *b)
{
    ts_frame_loop loop = {1, 11, 24.0, 1000, dir, 3, count_substeps, b, 0.0, 0, 0};
    return loop;
}

static void read_z(const char *dir, int frame, float z[2])
{
    char path[256];
    ts_frame f;
    ts_error err;
    snprintf(path, sizeof path, "%s/points/points_%06d.tspf", dir, frame);
    z[0] = z[1] = NAN;
    if (ts_frame_read(path, &f, &err) != TS_OK)
        return;
    memcpy(z, ts_frame_find(&f, "z")->data, 2 * sizeof(float));
    ts_frame_free(&f);
}

static void test_exact_frame_times(void)
{
    char dir[] = "/tmp/tsubu-loop-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    ballistic b = {{10, 20}, {0, 1}, 0, 0.007, 0, 0, 0};
    ts_frame_loop loop = make_loop(dir, &b);
    ts_error err;
    CHECK(ts_run_frames(&loop, &BALLISTIC, &b, 1, &err) == TS_OK);
    CHECK_NEAR(b.t, 10.0 / 24.0, 1e-12);
    CHECK(b.steps == 10 * 6); /* ceil((1/24) / 0.007) = 6 substeps per frame */
    for (int frame = 1; frame <= 11; frame++) {
        float z[2];
        read_z(dir, frame, z);
        CHECK(isfinite(z[0]));
    }
    /* the user's maximum wins over the stable step */
    ballistic c = {{10, 20}, {0, 1}, 0, 1e-6, 0, 0, 0};
    loop.max_substeps = 3;
    CHECK(ts_run_frames(&loop, &BALLISTIC, &c, 1, &err) == TS_OK);
    CHECK(c.steps == 30);
    CHECK_NEAR(c.t, 10.0 / 24.0, 1e-12);
    CHECK(remove_dir(dir));
}

static void test_cancel_and_resume(void)
{
    char whole[] = "/tmp/tsubu-loop-XXXXXX", part[] = "/tmp/tsubu-loop-XXXXXX";
    CHECK(mkdtemp(whole) && mkdtemp(part));
    ts_error err;
    ballistic ref = {{10, 20}, {0, 1}, 0, 0.01, 0, 0, 0};
    ts_frame_loop loop = make_loop(whole, &ref);
    CHECK(ts_run_frames(&loop, &BALLISTIC, &ref, 1, &err) == TS_OK);

    ballistic b = {{10, 20}, {0, 1}, 0, 0.01, 0, 14, 0}; /* 5 substeps per frame: cancel inside frame 4 */
    loop = make_loop(part, &b);
    CHECK(ts_run_frames(&loop, &BALLISTIC, &b, 1, &err) == TS_ERR_CANCELLED);
    CHECK(strstr(err.message, "cancelled") != NULL);
    char path[256];
    static ts_checkpoint cp;
    CHECK(ts_checkpoint_path(path, sizeof path, part, &err) == TS_OK);
    CHECK(ts_checkpoint_read(path, &cp, &err) == TS_OK);
    CHECK(cp.frame == 3); /* frames 1-3 whole, frame 4 never written */
    float z[2];
    read_z(part, 4, z);
    CHECK(isnan(z[0]));
    /* resume: the state comes back from the checkpoint */
    ballistic r = {{0, 0}, {0, 0}, cp.time, 0.01, 0, 0, 0};
    ts_column c[2];
    b_columns(&r, c);
    CHECK(ts_checkpoint_get(&cp, "points", 2, c, 2, &err) == TS_OK);
    loop = make_loop(part, &r);
    CHECK(ts_run_frames(&loop, &BALLISTIC, &r, cp.frame, &err) == TS_OK);
    ts_checkpoint_free(&cp);
    for (int frame = 1; frame <= 11; frame++) {
        float a[2], c[2];
        read_z(whole, frame, a);
        read_z(part, frame, c);
        CHECK(memcmp(a, c, sizeof a) == 0);
    }
    CHECK(remove_dir(whole));
    CHECK(remove_dir(part));
}

static int checkpoint_frame(const char *dir)
{
    char path[256];
    static ts_checkpoint cp;
    ts_error err;
    CHECK(ts_checkpoint_path(path, sizeof path, dir, &err) == TS_OK);
    CHECK(ts_checkpoint_read(path, &cp, &err) == TS_OK);
    int frame = (int)cp.frame;
    ts_checkpoint_free(&cp);
    return frame;
}

/* With a long interval only the first and the last frame get a checkpoint. */
static void test_checkpoint_interval(void)
{
    char dir[] = "/tmp/tsubu-loop-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    ts_error err;
    ballistic b = {{10, 20}, {0, 1}, 0, 0.01, 0, 14, 0}; /* cancelled inside frame 4 */
    ts_frame_loop loop = make_loop(dir, &b);
    loop.checkpoint_seconds = 1e9;
    CHECK(ts_run_frames(&loop, &BALLISTIC, &b, 1, &err) == TS_ERR_CANCELLED);
    float z[2];
    read_z(dir, 3, z);
    CHECK(!isnan(z[0]));               /* frames 1-3 are written ... */
    CHECK(checkpoint_frame(dir) == 1); /* ... the state only at the first */
    ballistic whole = {{10, 20}, {0, 1}, 0, 0.01, 0, 0, 0};
    loop = make_loop(dir, &whole);
    loop.checkpoint_seconds = 1e9;
    CHECK(ts_run_frames(&loop, &BALLISTIC, &whole, 1, &err) == TS_OK);
    CHECK(checkpoint_frame(dir) == 11);
    CHECK(remove_dir(dir));
}

static void test_bad_settings_named(void)
{
    ballistic b = {{0, 0}, {0, 0}, 0, 0.01, 0, 0, 0};
    ts_frame_loop loop = make_loop("/tmp", &b);
    ts_error err;
    loop.fps = NAN;
    CHECK(ts_run_frames(&loop, &BALLISTIC, &b, 1, &err) == TS_ERR_INVALID && strstr(err.message, "fps"));
    loop = make_loop("/tmp", &b);
    loop.frame_end = 0;
    CHECK(ts_run_frames(&loop, &BALLISTIC, &b, 1, &err) == TS_ERR_INVALID && strstr(err.message, "frame_end"));
    loop = make_loop("/tmp", &b);
    loop.max_substeps = 0;
    CHECK(ts_run_frames(&loop, &BALLISTIC, &b, 1, &err) == TS_ERR_INVALID && strstr(err.message, "max_substeps"));
    loop = make_loop("/tmp", &b);
    loop.checkpoint_seconds = -1.0;
    CHECK(ts_run_frames(&loop, &BALLISTIC, &b, 1, &err) == TS_ERR_INVALID &&
          strstr(err.message, "checkpoint_seconds"));
    CHECK(b.steps == 0);
}

static ts_status unstable_dt(void *s, double *dt, ts_error *err)
{
    (void)s;
    (void)err;
    *dt = NAN;
    return TS_OK;
}

static void test_blow_up_names_frame(void)
{
    char dir[] = "/tmp/tsubu-loop-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    ballistic b = {{0, 0}, {0, 0}, 0, 0.01, 0, 0, 0};
    ts_solver_ops ops = BALLISTIC;
    ops.stable_dt = unstable_dt;
    ts_frame_loop loop = make_loop(dir, &b);
    ts_error err;
    CHECK(ts_run_frames(&loop, &ops, &b, 1, &err) == TS_ERR_UNSTABLE);
    /* the loop alone words it, once */
    CHECK(strstr(err.message, "ballistic became unstable at frame 2: ") == err.message);
    CHECK(strstr(err.message + 1, "frame 2") == strstr(err.message, "frame 2"));
    float z[2];
    read_z(dir, 1, z); /* the initial frame stays written */
    CHECK(z[0] == 0.0f);
    CHECK(remove_dir(dir));
}

static int one_thread_steps;

static ts_status counting_step(void *s, const ts_step_context *now, ts_error *err)
{
    one_thread_steps += omp_get_max_threads() == 1;
    return b_step(s, now, err);
}

/* The tuner tries one thread after 64 blocks of 8 substeps (threads.c) whatever the timings; with
 * fixed_threads every substep runs on OpenMP's count (what the benchmarks report). */
static void test_fixed_threads_keeps_the_count(void)
{
    int saved = omp_get_max_threads();
    ts_solver_ops ops = BALLISTIC;
    ops.step = counting_step;
    for (int fixed = 0; fixed < 2; fixed++) {
        char dir[] = "/tmp/tsubu-fl-XXXXXX";
        CHECK(mkdtemp(dir) != NULL);
        ballistic b = {{0.0f, 1.0f}, {0.0f, 0.0f}, 0.0, 1.0 / 24.0 / 400.0, 0, 0, 0};
        ts_frame_loop loop = {1, 3, 24.0, 1000, dir, 1, NULL, NULL, 1e9, 0, fixed};
        omp_set_num_threads(2);
        one_thread_steps = 0;
        ts_error err;
        CHECK(ts_run_frames(&loop, &ops, &b, 1, &err) == TS_OK);
        CHECK(b.steps == 800);
        CHECK(fixed ? one_thread_steps == 0 : one_thread_steps > 0);
        CHECK(omp_get_max_threads() == 2);
        CHECK(remove_dir(dir));
    }
    omp_set_num_threads(saved);
}

const test_case frameloop_tests[] = {
    {"frameloop/fixed_threads_keeps_the_count", test_fixed_threads_keeps_the_count},
    {"frameloop/exact_frame_times_and_substeps", test_exact_frame_times},
    {"frameloop/cancel_then_resume_identical", test_cancel_and_resume},
    {"frameloop/checkpoint_interval", test_checkpoint_interval},
    {"frameloop/bad_settings_named", test_bad_settings_named},
    {"frameloop/blow_up_names_frame", test_blow_up_names_frame},
    {0, 0},
};
