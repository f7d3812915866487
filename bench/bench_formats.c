/* bench_formats.c: encode throughput of the scalar reference (libqcref) on one core.
 *
 *   bench_formats [--n LOG2] [--runs R]
 *
 * For each case (format, profile) and each input distribution it encodes an array of 2^24 fp32
 * values through the public qcref_encode (and, for the minifloats, through
 * qcref_minifloat_encode directly, without the format dispatch), R = 5 times, and prints the
 * best run in millions of values per second. Distributions:
 *   normal  N(0, 1) scaled to the format: sigma = max/4 for the minifloats (a few values overflow),
 *           2^(40 N(0,1)) for e8m0 (scales spread over its exponent range);
 *   bits    uniform random 32-bit patterns (NaN, Inf, subnormals, mostly out of range).
 * Target: >= 200 M values/s for fp32 -> e4m3fn through qcref_encode on the normal inputs (the
 * random bit patterns are mostly NaN/Inf/out of range and are shown for information). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"
#include "formats/formats.h"
#include "profiles.h"

#define TARGET_MVALS 200.0

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A standard normal deviate (Box-Muller on two uniforms in (0, 1]). */
static double normal(uint64_t *s)
{
    double u1 = ((double)(splitmix64(s) >> 11) + 1.0) * 0x1p-53;
    double u2 = (double)(splitmix64(s) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

typedef struct bench_case {
    qc_format f;
    const char *profile;
    double max; /* largest finite value, for the normal distribution's scale */
} bench_case;

static const bench_case cases[] = {
    {QC_E4M3FN, "ptx", 448.0},   {QC_E4M3FN, "torch", 448.0}, {QC_E5M2, "torch", 57344.0},
    {QC_E8M0, "ptx", 0.0},       {QC_E2M1, "ptx", 6.0},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

static volatile uint32_t sink;

/* Best of `runs` timings of one encode loop over n values; returns M values/s. */
static double time_public(qc_format f, const qc_cast_policy *p, const float *x, uint8_t *out, size_t n, int runs)
{
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        double t = bench_wall_s();
        for (size_t i = 0; i < n; i++)
            out[i] = (uint8_t)qcref_encode(f, x[i], p);
        t = bench_wall_s() - t;
        if (t < best)
            best = t;
        sink += out[n / 2 + (size_t)r];
    }
    return (double)n / best * 1e-6;
}

static double time_direct(qc_format f, const qc_cast_policy *p, const float *x, uint8_t *out, size_t n, int runs)
{
    qc_minifloat m = qcref_minifloat(f);
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        double t = bench_wall_s();
        for (size_t i = 0; i < n; i++)
            out[i] = (uint8_t)qcref_minifloat_encode(m, x[i], p);
        t = bench_wall_s() - t;
        if (t < best)
            best = t;
        sink += out[n / 2 + (size_t)r];
    }
    return (double)n / best * 1e-6;
}

int main(int argc, char **argv)
{
    int log2n = 24, runs = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            log2n = atoi(argv[++i]);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_formats [--n LOG2 (24)] [--runs R (5)]\n");
            return 2;
        }
    }
    if (log2n < 10 || log2n > 28 || runs < 1) {
        fprintf(stderr, "bench_formats: --n must be in [10, 28], --runs >= 1\n");
        return 2;
    }
    size_t n = (size_t)1 << log2n;
    float *x = malloc(n * sizeof *x);
    uint8_t *out = malloc(n);
    if (!x || !out) {
        fprintf(stderr, "bench_formats: out of memory\n");
        return 2;
    }

    printf("qcref scalar encode throughput, one thread, 2^%d values, best of %d runs (M values/s)\n", log2n, runs);
    printf("%-10s %-8s %-7s %12s %12s\n", "format", "profile", "input", "qcref_encode", "direct");
    int missed = 0;
    for (int c = 0; c < N_CASES; c++) {
        const bench_case *bc = &cases[c];
        qc_cast_policy p = qc_cast_profile_policy(qc_cast_profile_find(bc->profile), bc->f);
        for (int d = 0; d < 2; d++) {
            uint64_t s = 0xB5EEDull + (uint64_t)d;
            for (size_t i = 0; i < n; i++) {
                if (d == 1) {
                    uint32_t b = (uint32_t)splitmix64(&s);
                    memcpy(&x[i], &b, sizeof b);
                } else if (bc->f == QC_E8M0) {
                    x[i] = (float)exp2(40.0 * normal(&s));
                } else {
                    x[i] = (float)(normal(&s) * bc->max / 4.0);
                }
            }
            double pub = time_public(bc->f, &p, x, out, n, runs);
            char direct[32] = "-";
            if (qcref_is_minifloat(bc->f))
                snprintf(direct, sizeof direct, "%.1f", time_direct(bc->f, &p, x, out, n, runs));
            printf("%-10s %-8s %-7s %12.1f %12s\n", qc_format_name(bc->f), bc->profile, d ? "bits" : "normal", pub,
                   direct);
            if (bc->f == QC_E4M3FN && d == 0 && pub < TARGET_MVALS)
                missed = 1;
            fflush(stdout);
        }
    }
    printf("target: >= %.0f M values/s for fp32 -> e4m3fn (normal inputs) through qcref_encode: %s\n", TARGET_MVALS,
           missed ? "MISSED" : "met");
    free(x);
    free(out);
    return 0;
}
