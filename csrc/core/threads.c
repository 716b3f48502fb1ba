/* threads.c - the thread-count tuner (see threads.h). */
#include "threads.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define BLOCK_STEPS 8        /* substeps timed together: one timing spans several barriers */
#define PROBE_COST 0.01      /* a probe of the slower count costs at most this share of the time */
#define FIRST_GAP 64         /* blocks before the first probe: a short bake on an idle machine never probes */
#define MIN_GAP 4            /* blocks between probes, at least ... */
#define MAX_GAP 512          /* ... and at most (4096 substeps: a load that goes away is noticed soon) */

void ts_thread_tuner_init(ts_thread_tuner *t, int most)
{
    /* starting on 1 thread means the set-up found the machine busy: there the other count is tried after
     * the first block, as a load may leave room for both threads (a probe that loses costs about a block) */
    int start = omp_get_max_threads() == 1 && most > 1;
    *t = (ts_thread_tuner){{most, 1}, {0.0, 0.0}, start, start, 0, 0.0, start ? 1 : FIRST_GAP, most > 1};
}

void ts_thread_tuner_before(ts_thread_tuner *t)
{
    if (t->enabled && t->steps == 0)
        omp_set_num_threads(t->choices[t->current]);
}

void ts_thread_tuner_after(ts_thread_tuner *t, double seconds)
{
    if (!t->enabled)
        return;
    t->elapsed += seconds;
    /* a probe that has already cost a whole block of the best has lost: ended at once, so a probe on a
     * loaded machine (where two threads can take ten times as long) costs little more than one block */
    int probe_lost = t->current != t->best && t->elapsed > BLOCK_STEPS * t->cost[t->best];
    if (++t->steps < BLOCK_STEPS && !probe_lost)
        return;
    double per_step = t->elapsed / t->steps;
    double *c = &t->cost[t->current];
    *c = *c > 0.0 ? 0.5 * (*c + per_step) : per_step;
    t->steps = 0, t->elapsed = 0.0;
    int other = 1 - t->best;
    if (t->current == other) { /* a probe just ended: keep the cheaper; the costlier, the rarer the next */
        if (t->cost[other] < t->cost[t->best])
            t->best = other;
        double ratio = t->cost[1 - t->best] / t->cost[t->best];
        double gap = (ratio - 1.0) / PROBE_COST;
        t->blocks_to_probe = gap < MIN_GAP ? MIN_GAP : gap > MAX_GAP ? MAX_GAP : (long)gap;
        t->current = t->best;
        return;
    }
    /* due, or the best has grown costlier than the other was when last tried (a load that came) */
    if (--t->blocks_to_probe <= 0 || (t->cost[other] > 0.0 && *c > t->cost[other]))
        t->current = other;
}

void ts_thread_tuner_finish(ts_thread_tuner *t)
{
    if (t->enabled)
        omp_set_num_threads(t->choices[0]);
}

/* Tasks running or waiting for a core now, on all CPUs, this one included (the 4th field of
 * /proc/loadavg); -1 when it cannot be read. */
static int tasks_running(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return -1;
    int n = -1;
    if (fscanf(f, "%*f %*f %*f %d/", &n) != 1)
        n = -1;
    fclose(f);
    return n;
}

static _Atomic int allowed_threads; /* the count the last bake was given; 0: none yet */

int ts_threads_allowed(void)
{
    int n = allowed_threads;
    return n > 0 ? n : omp_get_max_threads();
}

int ts_threads_use_idle_cores(double seconds)
{
    int before = omp_get_max_threads();
    allowed_threads = before;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (before <= 1 || cpus < 1)
        return before;
    /* The count of running tasks is a snapshot: averaged over samples a millisecond apart, a
     * process that runs a third of the time counts a third. (Idle time from /proc/stat needs
     * tens of milliseconds to resolve: its clock ticks at 100 Hz.) */
    int samples = seconds > 0.001 ? (int)(seconds / 0.001) : 1;
    double others = 0.0;
    for (int k = 0; k < samples; k++) {
        int n = tasks_running();
        if (n < 1)
            return before;
        others += (double)(n - 1) / samples;
        if (k + 1 < samples)
            nanosleep(&(struct timespec){0, 1000000L}, NULL);
    }
    double free_cores = (double)cpus - others;
    /* On a busy machine a team has a thread descheduled now and then while the others wait for it at
     * each barrier: a set-up of many short parallel regions (a placement's relaxation sweeps) ran ten
     * times slower on 2 threads than on 1 beside two busy processes on 2 cores. So as many threads as
     * cores are idle (three quarters of a core counts), at least 1; every thread on an idle machine. */
    int use = free_cores >= before - 0.25 ? before : (int)floor(free_cores + 0.25);
    omp_set_num_threads(use < 1 ? 1 : use > before ? before : use);
    return before;
}
