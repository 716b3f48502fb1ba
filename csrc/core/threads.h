/* threads.h - how many threads a bake uses, chosen by measuring.
 *
 * On a busy machine (an artist's Blender drawing, a render, another bake) a
 * team of two threads whose partner is descheduled waits at every barrier:
 * the many short parallel regions of a step then run slower than one thread
 * alone. Every loop of the solvers gives the same bits for any number of
 * threads, so the count may change between steps freely: the tuner times
 * blocks of substeps with each count and keeps the faster, probing the other
 * now and then - rarely when it was much slower, so a probe costs at most a
 * few per cent - and so follows the machine's load as it comes and goes.
 */
#ifndef TSUBU_THREADS_H
#define TSUBU_THREADS_H

typedef struct ts_thread_tuner {
    int choices[2];       /* 1 and the most allowed (OpenMP's max threads at the start) */
    double cost[2];       /* seconds per substep, smoothed; 0: not measured yet */
    int current;          /* index into choices for this block */
    int best;             /* index of the cheaper */
    int steps;            /* substeps timed in this block */
    double elapsed;       /* their seconds */
    long blocks_to_probe; /* blocks of the best until the other is tried again */
    int enabled;
} ts_thread_tuner;

/* Choose between `most` threads and 1, starting with OpenMP's current count
 * (ts_threads_use_idle_cores' choice); disabled when most is 1. */
void ts_thread_tuner_init(ts_thread_tuner *t, int most);
/* Before a substep: set OpenMP's thread count for it. */
void ts_thread_tuner_before(ts_thread_tuner *t);
/* After it: its wall-clock seconds. */
void ts_thread_tuner_after(ts_thread_tuner *t, double seconds);
/* Put OpenMP's thread count back to `most`. */
void ts_thread_tuner_finish(ts_thread_tuner *t);

/* Before work that cannot be timed step by step (a solver's set-up): on a
 * busy machine, as many threads as cores are idle now (sampled over
 * `seconds` from /proc/loadavg), at least 1; on an idle one, OpenMP's max.
 * Returns the count it replaced, to give back to omp_set_num_threads after.
 * Where /proc/loadavg cannot be read, all. */
int ts_threads_use_idle_cores(double seconds);

/* The threads a bake may use at most (OpenMP's count when the last bake's set-up began, before
 * ts_threads_use_idle_cores lowered it; OpenMP's current count before any bake). Work that balances
 * itself (OpenVDB's TBB tasks steal from a descheduled thread, with no barriers to wait at) takes all
 * of them even on a busy machine. */
int ts_threads_allowed(void);

#endif
