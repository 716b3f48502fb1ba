/* test_threads.c - the thread-count tuner on made-up timings: it keeps the
 * faster count, probes the slower one for at most a few per cent of the
 * steps, follows a load that comes and goes, and puts OpenMP back. */
#include <omp.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "core/threads.h"

/* Run n substeps whose cost depends on the thread count the tuner chose; returns the 1-thread steps. */
static int run(ts_thread_tuner *t, int n, double cost_most, double cost_one)
{
    int ones = 0;
    for (int k = 0; k < n; k++) {
        ts_thread_tuner_before(t);
        int one = omp_get_max_threads() == 1;
        ones += one;
        ts_thread_tuner_after(t, one ? cost_one : cost_most);
    }
    return ones;
}

static void test_keeps_the_faster_and_follows_the_load(void)
{
    int saved = omp_get_max_threads();
    omp_set_num_threads(2);
    ts_thread_tuner t;
    ts_thread_tuner_init(&t, 2);
    CHECK(t.enabled && t.choices[t.current] == 2);
    /* an idle machine: 2 threads twice as fast; 1 thread only in the rare probe */
    int ones = run(&t, 20000, 1.0, 2.0);
    CHECK(ones > 0 && ones < 20000 / 50);
    /* a busy one: 2 threads three times slower; found within the longest gap, then kept */
    run(&t, 512 * 8 + 64, 3.0, 1.0);
    int twos = 20000 - run(&t, 20000, 3.0, 1.0);
    CHECK(twos > 0 && twos < 20000 / 50);
    ts_thread_tuner_finish(&t);
    CHECK(omp_get_max_threads() == 2);
    /* a start on one thread (the set-up found no idle core) stays there while it is the faster, 2 threads
     * tried after the first block */
    omp_set_num_threads(1);
    ts_thread_tuner_init(&t, 2);
    CHECK(t.choices[t.current] == 1);
    CHECK(16 - run(&t, 16, 3.0, 1.0) == 3); /* the probe ends after 3 steps: 3 x 3.0 > a block of 8 x 1.0 */
    CHECK(run(&t, 400, 3.0, 1.0) == 400);
    ts_thread_tuner_finish(&t);
    /* ... and goes to 2 threads where they are the faster */
    omp_set_num_threads(1);
    ts_thread_tuner_init(&t, 2);
    CHECK(400 - run(&t, 400, 1.0, 1.5) > 300);
    ts_thread_tuner_finish(&t);
    CHECK(omp_get_max_threads() == 2);
    /* a load that comes: 2 threads were twice as fast, now thirty times slower; 1 thread is tried after
     * the first costly block, not when the probe would next be due (a hundred blocks later) */
    omp_set_num_threads(2);
    ts_thread_tuner_init(&t, 2);
    run(&t, 20000, 1.0, 2.0);
    CHECK(t.choices[t.best] == 2);
    int costly = 400 - run(&t, 400, 30.0, 1.0);
    CHECK(costly >= 1 && costly <= 2 * 8);
    ts_thread_tuner_finish(&t);
    /* a probe that has lost is cut short: with 2 threads fifty times slower, one step per probe */
    omp_set_num_threads(1);
    ts_thread_tuner_init(&t, 2);
    int probed = 4000 - run(&t, 4000, 50.0, 1.0);
    CHECK(probed == 1); /* the next comes the later, the more it lost: 512 blocks on */
    ts_thread_tuner_finish(&t);
    /* one thread allowed: the tuner does nothing */
    omp_set_num_threads(1);
    ts_thread_tuner_init(&t, 1);
    CHECK(!t.enabled && run(&t, 100, 1.0, 1.0) == 100);
    omp_set_num_threads(saved);
}

/* With a busy process per core beside it, the set-up takes 1 thread; OpenMP's count is given back after. */
static void test_set_up_on_a_busy_machine_takes_one_thread(void)
{
    int saved = omp_get_max_threads();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1 || cpus > 64 || access("/proc/loadavg", R_OK) != 0)
        return; /* not Linux, or too many cores to fill */
    pid_t busy[64];
    int started = 0;
    for (long k = 0; k < cpus; k++) {
        pid_t p = fork();
        if (p == 0)
            for (volatile unsigned long spin = 0;; spin++) {
            }
        if (p > 0)
            busy[started++] = p;
    }
    struct timespec settle = {0, 50000000L};
    nanosleep(&settle, NULL);
    omp_set_num_threads(2);
    int before = ts_threads_use_idle_cores(0.01);
    int chosen = omp_get_max_threads();
    for (int k = 0; k < started; k++) {
        kill(busy[k], SIGKILL);
        waitpid(busy[k], NULL, 0);
    }
    CHECK(started == cpus);
    CHECK(before == 2);
    CHECK(chosen == 1);
    omp_set_num_threads(saved);
}

const test_case threads_tests[] = {
    {"threads/keeps_the_faster_and_follows_the_load", test_keeps_the_faster_and_follows_the_load},
    {"threads/set_up_on_a_busy_machine_takes_one_thread", test_set_up_on_a_busy_machine_takes_one_thread},
    {NULL, NULL},
};
