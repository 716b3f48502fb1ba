/* test_threads.c - the thread-count tuner on made-up timings: it keeps the
 * faster count, probes the slower one for at most a few per cent of the
 * steps, follows a load that comes and goes, and puts OpenMP back. */
#include <omp.h>

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
    /* a start on one thread (the set-up found no idle core) stays there while it is the faster */
    omp_set_num_threads(1);
    ts_thread_tuner_init(&t, 2);
    CHECK(t.choices[t.current] == 1);
    CHECK(run(&t, 400, 3.0, 1.0) == 400); /* no probe in a short bake */
    ts_thread_tuner_finish(&t);
    CHECK(omp_get_max_threads() == 2);
    /* one thread allowed: the tuner does nothing */
    omp_set_num_threads(1);
    ts_thread_tuner_init(&t, 1);
    CHECK(!t.enabled && run(&t, 100, 1.0, 1.0) == 100);
    omp_set_num_threads(saved);
}

const test_case threads_tests[] = {
    {"threads/keeps_the_faster_and_follows_the_load", test_keeps_the_faster_and_follows_the_load},
    {NULL, NULL},
};
