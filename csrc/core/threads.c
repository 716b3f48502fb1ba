/* threads.c - the thread-count tuner (see threads.h). */
#include "threads.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <time.h>

#define BLOCK_STEPS 8        /* substeps timed together: one timing spans several barriers */
#define PROBE_COST 0.01      /* a probe of the slower count costs at most this share of the time */
#define FIRST_GAP 64         /* blocks before the first probe: a short bake on an idle machine never probes */
#define MIN_GAP 4            /* blocks between probes, at least ... */
#define MAX_GAP 512          /* ... and at most (4096 substeps: a load that goes away is noticed soon) */

void ts_thread_tuner_init(ts_thread_tuner *t, int most)
{
    int start = omp_get_max_threads() == 1 && most > 1;
    *t = (ts_thread_tuner){{most, 1}, {0.0, 0.0}, start, start, 0, 0.0, FIRST_GAP, most > 1};
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
    if (++t->steps < BLOCK_STEPS)
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
    if (--t->blocks_to_probe <= 0)
        t->current = other;
}

void ts_thread_tuner_finish(ts_thread_tuner *t)
{
    if (t->enabled)
        omp_set_num_threads(t->choices[0]);
}

/* Idle and total jiffies of all CPUs; 0 when /proc/stat cannot be read. */
static int cpu_times(double *idle, double *total, int *cpus)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return 0;
    char line[512];
    int ok = 0;
    *cpus = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long v[8] = {0};
        if (line[0] != 'c' || line[1] != 'p' || line[2] != 'u')
            break;
        if (line[3] != ' ') {
            (*cpus)++;
            continue;
        }
        if (sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7]) >= 4) {
            *idle = (double)(v[3] + v[4]);
            *total = 0.0;
            for (int k = 0; k < 8; k++)
                *total += (double)v[k];
            ok = 1;
        }
    }
    fclose(f);
    return ok && *cpus > 0;
}

int ts_threads_use_idle_cores(double seconds)
{
    int before = omp_get_max_threads(), cpus;
    double idle0, total0, idle1, total1;
    if (before <= 1 || !cpu_times(&idle0, &total0, &cpus))
        return before;
    struct timespec pause = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&pause, NULL);
    if (!cpu_times(&idle1, &total1, &cpus) || total1 <= total0)
        return before;
    double free_cores = cpus * (idle1 - idle0) / (total1 - total0);
    /* A team slowed alike everywhere (every core busy) loses little; a team on a machine partly busy has
     * a thread descheduled now and then while the others wait for it at each barrier: there, as many
     * threads as cores are idle (three quarters of a core counts). */
    int use = free_cores <= 0.25 || free_cores >= before - 0.25 ? before : (int)floor(free_cores + 0.25);
    omp_set_num_threads(use < 1 ? 1 : use > before ? before : use);
    return before;
}
