/* bench_clock.h: the clocks of the benchmarks: wall seconds (monotonic) and the process's CPU
 * seconds (on a shared machine the work itself, whatever else runs). */
#ifndef QC_BENCH_CLOCK_H
#define QC_BENCH_CLOCK_H

#include <time.h>

static inline double bench_wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline double bench_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#endif
