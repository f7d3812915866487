/* bench_amx.c: figures for the cpu-amx kernels (kernels/cpu/amx_gemm.c); never pass/fail.
 *   (a) the AMX-BF16 peak: TDPBF16PS on register-resident tiles of random bf16 (4 independent
 *       accumulators), on one core and on T threads (one per core);
 *   (b) the bf16 GEMM kernel on M x N x K (default 2048^3) and its fraction of that peak; on one
 *       thread also rounds of peak, kernel, peak, each run against its neighbouring peaks
 *       (rounds_vs_peak: the lent machine's AMX state flips within seconds);
 *   (c) the fp8 block W8A16 and int8 W8A8 kernels on M x N x K (default 1024 x 4096 x 7168) against
 *       OpenBLAS cblas_sgemm on the same-shape fp32 (dequantized) problem, same thread count;
 *   (d) fused MoE experts with fp8 block weights (qc_amx_moe_expert, threads taking experts in
 *       turn) against sgemm on the dequantized experts.
 * Threads split M x N into a grid of row and column ranges (multiples of 32), one kernel call each.
 * usage: bench_amx [--sweep] [threads [M N K [M2 N2 K2]]]   (threads default: the online CPUs, at
 * most 16; --sweep first tries the blockings of the kernels and keeps the fastest for bf16) */
#define _GNU_SOURCE /* pthread_setaffinity_np */
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "amx_gemm.h"
#include "amx_moe.h"
#include "bench_clock.h"
#if defined(QC_BENCH_CBLAS)
#include <cblas.h>
void openblas_set_num_threads(int n);
#endif

/* Thread i runs on CPU (first_cpu + i) mod the online CPUs. On the lent machine an unpinned
 * thread's AMX peak moved between about 1000 and 2300 GFLOP/s; pinned to one quiet CPU it held
 * within 5%, while some CPUs stayed at half speed (a busy sibling on the host, we assume), so the
 * one-thread runs use the CPU with the best short peak (choose_cpu). */
static int first_cpu;

static void pin(int i)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((first_cpu + i) % (int)sysconf(_SC_NPROCESSORS_ONLN), &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

typedef struct peak_job {
    int cpu;
    float sink;
} peak_job;

/* ---- (a) peak ---- */
static long peak_iters = 2000000L;

static void *peak_thread(void *arg)
{
    peak_job *job = arg;
    pin(job->cpu);
    /* random bf16 operands of magnitude [1, 2), not zeros: a unit may run faster on zeros
     * (METHOD.md) */
    uint16_t src[512] __attribute__((aligned(64)));
    uint32_t x = 2463534242u;
    for (int i = 0; i < 512; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        src[i] = (uint16_t)(0x3F80 | (x & 0x807F));
    }
    const void *ops = src;
    qc_amx_tiles_configure();
    _tile_loadd(4, ops, 64);
    _tile_loadd(5, ops, 64);
    _tile_loadd(6, ops, 64);
    _tile_loadd(7, ops, 64);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (long i = 0; i < peak_iters; i++) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    float out[256] __attribute__((aligned(64)));
    _tile_stored(0, out, 64);
    _tile_release();
    job->sink = out[0];
    return NULL;
}

/* GFLOP/s of T threads each running peak_iters x 4 TDPBF16PS (16 x 16 x 32 MACs, 2 flops each). */
static double peak_once(int threads)
{
    pthread_t th[64];
    peak_job jobs[64];
    double t0 = bench_wall_s();
    for (int i = 0; i < threads; i++) {
        jobs[i].cpu = i;
        pthread_create(&th[i], NULL, peak_thread, &jobs[i]);
    }
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    return (double)threads * peak_iters * 4 * 16 * 16 * 32 * 2 / (bench_wall_s() - t0) / 1e9;
}

/* Sets first_cpu to the CPU whose short one-thread peak is the best, and says what the others gave. */
static void choose_cpu(void)
{
    int n = (int)sysconf(_SC_NPROCESSORS_ONLN), best = 0;
    double gbest = 0, gworst = 1e30;
    peak_iters /= 8;
    for (int c = 0; c < n && c < 64; c++) {
        first_cpu = c;
        double g = peak_once(1);
        gworst = g < gworst ? g : gworst;
        if (g > gbest)
            gbest = g, best = c;
    }
    peak_iters *= 8;
    first_cpu = best;
    printf("one-thread runs on CPU %d: short peaks over the %d CPUs %.1f .. %.1f "
           "GFLOP/s\n",
           best, n, gworst, gbest);
}

/* The lent machine's peak moved by 2x within one run, even pinned (see pin): the best of five is
 * the peak the kernels are measured against, so that "% of peak" is not flattered. */
static double peak(int threads)
{
    double best = 0, worst = 1e30;
    for (int i = 0; i < 5; i++) {
        double p = peak_once(threads);
        best = p > best ? p : best, worst = p < worst ? p : worst;
    }
    printf("    peak, %d thread(s), 5 runs: %.1f .. %.1f GFLOP/s\n", threads, worst, best);
    return best;
}

/* ---- (b), (c): the kernels on a grid of row and column ranges ---- */
typedef struct job {
    qc_amx_act a; /* a view of the job's rows */
    const qc_amx_weights *w;
    const float *as, *bs;
    void *c; /* bf16 output, at the job's first row */
    int64_t n0, n1;
    int cpu;
} job;

static void *gemm_thread(void *arg)
{
    job *j = arg;
    pin(j->cpu);
    if (j->w->type == QC_AMX_W_S8)
        qc_amx_gemm_s8(&j->a, j->as, j->w, j->bs, NULL, 0, j->c, j->n0, j->n1);
    else if (j->w->type == QC_AMX_W_FP8)
        qc_amx_gemm_fp8(&j->a, j->w, NULL, 0, j->c, j->n0, j->n1);
    else
        qc_amx_gemm_bf16(&j->a, j->w, NULL, 0, j->c, j->n0, j->n1);
    return NULL;
}

static int64_t ceil32(int64_t x, int64_t parts) { return ((x + parts - 1) / parts + 31) / 32 * 32; }

/* T threads as a tm x tn grid (tm the largest divisor of T with tm^2 <= T): each thread reads only
 * its share of A and of B, instead of all of A as with columns alone. Best of reps runs, seconds. */
static double run_kernel(int threads, const qc_amx_act *a, const qc_amx_weights *w, const float *as, const float *bs,
                         uint16_t *c, int reps)
{
    int tm = 1;
    for (int d = 1; d * d <= threads; d++)
        tm = threads % d ? tm : d;
    int64_t rows = ceil32(a->m, tm), cols = ceil32(w->n, threads / tm);
    double best = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        pthread_t th[64];
        job jobs[64];
        int nt = 0;
        double t0 = bench_wall_s();
        for (int64_t r0 = 0; r0 < a->m; r0 += rows)
            for (int64_t n0 = 0; n0 < w->n && nt < 64; n0 += cols, nt++) {
                int64_t r1 = r0 + rows < a->m ? r0 + rows : a->m, n1 = n0 + cols < w->n ? n0 + cols : w->n;
                jobs[nt] = (job){qc_amx_act_rows(a, r0, r1), w, as ? as + r0 : NULL, bs, c + r0 * w->n, n0, n1, nt};
                pthread_create(&th[nt], NULL, gemm_thread, &jobs[nt]);
            }
        for (int i = 0; i < nt; i++)
            pthread_join(th[i], NULL);
        double t = bench_wall_s() - t0;
        best = t < best ? t : best;
    }
    return best;
}

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)rng;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* One thread, `rounds` times: a short peak, one kernel run, a short peak. The lent machine flips
 * between a fast and a slow AMX state within seconds (docs/notes/amx/experiments.md), so a
 * kernel time and a peak taken seconds apart can come from different states; here each run is
 * divided by the better of its two neighbouring peaks, and only rounds whose two peaks are both
 * within 25% of the best short peak of these rounds are counted (the fast state, when the machine
 * reached it at all: the best short peak is printed). Prints the ratios. */
static void rounds_vs_peak(const char *what, const qc_amx_act *a, const qc_amx_weights *w, uint16_t *c, double flop,
                           int rounds)
{
    double r[64], gmin = 1e30, gmax = 0, pbest = 0, p0[64], p1[64], g[64];
    rounds = rounds > 64 ? 64 : rounds;
    peak_iters /= 8;
    for (int i = 0; i < rounds; i++) {
        p0[i] = peak_once(1), g[i] = flop / run_kernel(1, a, w, NULL, NULL, c, 1) / 1e9, p1[i] = peak_once(1);
        pbest = p0[i] > pbest ? p0[i] : pbest, pbest = p1[i] > pbest ? p1[i] : pbest;
        gmin = g[i] < gmin ? g[i] : gmin, gmax = g[i] > gmax ? g[i] : gmax;
    }
    peak_iters *= 8;
    int nf = 0;
    for (int i = 0; i < rounds; i++)
        if (p0[i] > 0.75 * pbest && p1[i] > 0.75 * pbest)
            r[nf++] = g[i] / (p0[i] > p1[i] ? p0[i] : p1[i]);
    qsort(r, (size_t)nf, sizeof *r, cmp_double);
    printf("  %-34s  1 thr  %d rounds of peak, kernel, peak: kernel %.1f .. %.1f GFLOP/s, best short peak %.1f; "
           "%d rounds with both peaks within 25%% of it: kernel / better neighbouring peak median %.2f, max %.2f\n",
           what, rounds, gmin, gmax, pbest, nf, nf ? r[nf / 2] : 0, nf ? r[nf - 1] : 0);
}

/* GFLOP/s, best of 5 runs; rounds > 0 (one thread) also prints rounds_vs_peak. */
static double bench_bf16(int threads, int64_t m, int64_t n, int64_t k, int rounds)
{
    uint16_t *a = malloc((size_t)(m * k) * 2), *b = malloc((size_t)(n * k) * 2), *c = malloc((size_t)(m * n) * 2);
    for (int64_t i = 0; i < m * k; i++)
        a[i] = (uint16_t)(0x3F00 | (rnd() & 0x80FF));
    for (int64_t i = 0; i < n * k; i++)
        b[i] = (uint16_t)(0x3E00 | (rnd() & 0x80FF));
    qc_amx_weights w;
    qc_amx_act x = {0};
    double t = -1;
    if (!qc_amx_pack_bf16(b, n, k, &w) && !qc_amx_act_bf16(a, m, k, &w, &x)) {
        t = run_kernel(threads, &x, &w, NULL, NULL, c, 5);
        if (rounds > 0) {
            char what[64];
            snprintf(what, sizeof what, "(b) bf16 %lld x %lld x %lld", (long long)m, (long long)n, (long long)k);
            rounds_vs_peak(what, &x, &w, c, 2.0 * (double)m * (double)n * (double)k, rounds);
        }
    }
    qc_amx_act_free(&x);
    qc_amx_weights_free(&w);
    free(a), free(b), free(c);
    return 2.0 * (double)m * (double)n * (double)k / t / 1e9;
}

static double bench_fp8(int threads, int64_t m, int64_t n, int64_t k)
{
    int64_t ns = (n + 127) / 128 * ((k + 127) / 128);
    uint16_t *a = malloc((size_t)(m * k) * 2), *c = malloc((size_t)(m * n) * 2);
    uint8_t *b = malloc((size_t)(n * k));
    float *s = malloc((size_t)ns * 4);
    for (int64_t i = 0; i < m * k; i++)
        a[i] = (uint16_t)(0x3F00 | (rnd() & 0x80FF));
    for (int64_t i = 0; i < n * k; i++)
        b[i] = (uint8_t)(rnd() % 0x7F) | (uint8_t)(rnd() & 0x80); /* no NaN code */
    for (int64_t i = 0; i < ns; i++)
        s[i] = 1.0f / (float)(1 + rnd() % 1000);
    qc_amx_weights w;
    qc_amx_act x = {0};
    double t = -1;
    if (!qc_amx_pack_fp8(b, s, n, k, &w) && !qc_amx_act_bf16(a, m, k, &w, &x))
        t = run_kernel(threads, &x, &w, NULL, NULL, c, 5);
    qc_amx_act_free(&x);
    qc_amx_weights_free(&w);
    free(a), free(b), free(c), free(s);
    return 2.0 * (double)m * (double)n * (double)k / t / 1e9;
}

static double bench_s8(int threads, int64_t m, int64_t n, int64_t k)
{
    int8_t *a = malloc((size_t)(m * k)), *b = malloc((size_t)(n * k));
    float *as = malloc((size_t)m * 4), *bs = malloc((size_t)n * 4);
    uint16_t *c = malloc((size_t)(m * n) * 2);
    for (int64_t i = 0; i < m * k; i++)
        a[i] = (int8_t)(rnd() % 255 - 127);
    for (int64_t i = 0; i < n * k; i++)
        b[i] = (int8_t)(rnd() % 255 - 127);
    for (int64_t i = 0; i < m; i++)
        as[i] = 0.01f;
    for (int64_t i = 0; i < n; i++)
        bs[i] = 0.02f;
    qc_amx_weights w;
    qc_amx_act x = {0};
    double t = -1;
    if (!qc_amx_pack_s8(b, n, k, &w) && !qc_amx_act_u8(a, m, k, &w, &x))
        t = run_kernel(threads, &x, &w, as, bs, c, 5);
    qc_amx_act_free(&x);
    qc_amx_weights_free(&w);
    free(a), free(b), free(c), free(as), free(bs);
    return 2.0 * (double)m * (double)n * (double)k / t / 1e9;
}

static double bench_sgemm(int threads, int64_t m, int64_t n, int64_t k)
{
#if defined(QC_BENCH_CBLAS)
    float *a = malloc((size_t)(m * k) * 4), *b = malloc((size_t)(n * k) * 4), *c = malloc((size_t)(m * n) * 4);
    for (int64_t i = 0; i < m * k; i++)
        a[i] = (float)(rnd() % 255) - 127;
    for (int64_t i = 0; i < n * k; i++)
        b[i] = (float)(rnd() % 255) - 127;
    openblas_set_num_threads(threads);
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = bench_wall_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0f, a, (int)k, b, (int)k, 0.0f,
                    c, (int)n);
        double t = bench_wall_s() - t0;
        best = t < best ? t : best;
    }
    free(a), free(b), free(c);
    return 2.0 * (double)m * (double)n * (double)k / best / 1e9;
#else
    (void)threads, (void)m, (void)n, (void)k;
    return 0;
#endif
}

/* ---- (d) fused MoE experts (amx_moe.h qc_amx_moe_expert: GEMM1, silu_and_mul, GEMM2) ---- */
typedef struct moe_job {
    const uint16_t *a;
    const qc_amx_weights *w13, *w2;
    int64_t cnt, hidden, inter;
    int first, step, experts;
} moe_job;

static void *moe_thread(void *arg)
{
    moe_job *j = arg;
    pin(j->first);
    uint16_t *ic0 = malloc((size_t)(j->cnt * 2 * j->inter) * 2 + 64),
             *ic1 = malloc((size_t)(j->cnt * j->inter) * 2 + 64);
    uint16_t *c = malloc((size_t)(j->cnt * j->hidden) * 2 + 64);
    for (int e = j->first; ic0 && ic1 && c && e < j->experts; e += j->step)
        qc_amx_moe_expert(j->a, j->cnt, j->hidden, j->inter, &j->w13[e], &j->w2[e], ic0, ic1, c);
    free(ic0), free(ic1), free(c);
    return NULL;
}

static void fill_fp8(uint8_t *b, float *s, int64_t n, int64_t k)
{
    for (int64_t i = 0; i < n * k; i++)
        b[i] = (uint8_t)(rnd() % 0x7F) | (uint8_t)(rnd() & 0x80); /* no NaN code */
    for (int64_t i = 0; i < (n + 127) / 128 * ((k + 127) / 128); i++)
        s[i] = 1.0f / (float)(1 + rnd() % 1000);
}

/* One expert each for `experts` experts with their own fp8 block weights (w13 [2 inter, hidden], w2
 * [hidden, inter]) and cnt token rows, on T threads taking experts in turn. Best of 3, GFLOP/s. */
static double bench_moe(int threads, int experts, int64_t cnt, int64_t hidden, int64_t inter)
{
    qc_amx_weights *w13 = calloc((size_t)experts, sizeof *w13), *w2 = calloc((size_t)experts, sizeof *w2);
    uint8_t *codes = malloc((size_t)(2 * inter * hidden));
    float *sc = malloc((size_t)((2 * inter + 127) / 128 * ((hidden + 127) / 128)) * 4 + 64);
    uint16_t *a = malloc((size_t)(cnt * hidden) * 2);
    int ok = w13 && w2 && codes && sc && a;
    for (int64_t i = 0; ok && i < cnt * hidden; i++)
        a[i] = (uint16_t)(0x3F00 | (rnd() & 0x80FF));
    for (int e = 0; ok && e < experts; e++) {
        fill_fp8(codes, sc, 2 * inter, hidden);
        ok = !qc_amx_pack_fp8(codes, sc, 2 * inter, hidden, &w13[e]);
        fill_fp8(codes, sc, hidden, inter);
        ok = ok && !qc_amx_pack_fp8(codes, sc, hidden, inter, &w2[e]);
    }
    double best = 1e30;
    for (int rep = 0; ok && rep < 3; rep++) {
        pthread_t th[64];
        moe_job jobs[64];
        double t0 = bench_wall_s();
        for (int i = 0; i < threads; i++) {
            jobs[i] = (moe_job){a, w13, w2, cnt, hidden, inter, i, threads, experts};
            pthread_create(&th[i], NULL, moe_thread, &jobs[i]);
        }
        for (int i = 0; i < threads; i++)
            pthread_join(th[i], NULL);
        double t = bench_wall_s() - t0;
        best = t < best ? t : best;
    }
    for (int e = 0; w13 && w2 && e < experts; e++)
        qc_amx_weights_free(&w13[e]), qc_amx_weights_free(&w2[e]);
    free(w13), free(w2), free(codes), free(sc), free(a);
    return ok ? 2.0 * experts * cnt * (3.0 * inter * hidden) / best / 1e9 : 0;
}

/* The same experts dequantized, as OpenBLAS sgemm: GEMM1 then GEMM2 of one expert (T threads),
 * repeated for each; GFLOP/s. */
static double bench_moe_sgemm(int threads, int64_t cnt, int64_t hidden, int64_t inter)
{
    double g1 = bench_sgemm(threads, cnt, 2 * inter, hidden), g2 = bench_sgemm(threads, cnt, hidden, inter);
    double f1 = 2.0 * cnt * 2 * inter * hidden, f2 = 2.0 * cnt * hidden * inter;
    return g1 > 0 && g2 > 0 ? (f1 + f2) / (f1 / g1 + f2 / g2) : 0;
}

static void row(const char *what, int threads, int64_t m, int64_t n, int64_t k, double g, double ref, const char *vs)
{
    printf("  %-34s %2d thr  %5lld x %5lld x %5lld  %9.1f GFLOP/s", what, threads, (long long)m, (long long)n,
           (long long)k, g);
    if (ref > 0)
        printf("  (%.2fx %s)", g / ref, vs);
    printf("\n");
}

/* --sweep: the bf16 kernel (2048^3) and the fp8 one (1024 x 4096 x 7168) on one thread over
 * blockings (amx_gemm.h qc_amx_blocking), each point with a peak measured just before it, to choose
 * the default; the best for bf16 is left set for the runs that follow. */
static void sweep(void)
{
    static const int64_t ncs[] = {128, 256, 512}, kcs[] = {512, 1024, 2048}, mcs[] = {32, 64, 128},
                         rows[] = {512, 2048};
    qc_amx_blocking best = qc_amx_get_blocking();
    double gbest = 0;
    choose_cpu();
    printf("sweep: bf16 2048^3 and fp8 1024 x 4096 x 7168, 1 thread\n");
    for (size_t i = 0; i < sizeof ncs / sizeof ncs[0]; i++)
        for (size_t j = 0; j < sizeof kcs / sizeof kcs[0]; j++)
            for (size_t l = 0; l < sizeof mcs / sizeof mcs[0]; l++)
                for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
                    qc_amx_blocking b = {ncs[i], kcs[j], mcs[l], rows[r]};
                    qc_amx_set_blocking(&b);
                    double p = peak_once(1), g = bench_bf16(1, 2048, 2048, 2048, 0), f = bench_fp8(1, 1024, 4096, 7168);
                    printf("  nc %4lld kc %4lld mc %3lld rows %4lld  peak %7.1f  bf16 %7.1f GFLOP/s %5.1f%% of peak  "
                           "fp8 %7.1f GFLOP/s\n",
                           (long long)b.nc, (long long)b.kc, (long long)b.mc, (long long)b.rows, p, g, 100 * g / p, f);
                    if (g > gbest)
                        gbest = g, best = b;
                }
    qc_amx_set_blocking(&best);
    printf("sweep best: nc %lld kc %lld mc %lld rows %lld %.1f GFLOP/s\n", (long long)best.nc, (long long)best.kc,
           (long long)best.mc, (long long)best.rows, gbest);
}

int main(int argc, char **argv)
{
    const char *why = qc_cpu_amx_unavailable();
    if (why) {
        printf("SKIPPED: %s\n", why);
        return 77;
    }
    if (argc > 1 && strcmp(argv[1], "--sweep") == 0) {
        sweep();
        argc--, argv++;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = argc > 1 ? atoi(argv[1]) : (int)(cpus < 16 ? cpus : 16);
    threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    int64_t bm = 2048, bn = 2048, bk = 2048, m = 1024, n = 4096, k = 7168;
    if (argc > 4)
        bm = atoll(argv[2]), bn = atoll(argv[3]), bk = atoll(argv[4]);
    if (argc > 7)
        m = atoll(argv[5]), n = atoll(argv[6]), k = atoll(argv[7]);
    int ts[2] = {1, threads};
    qc_amx_blocking bl = qc_amx_get_blocking();
    printf("bench_amx: %ld online CPUs; threads split M x N (pthreads); blocking "
           "nc %lld kc %lld mc %lld rows %lld\n",
           cpus, (long long)bl.nc, (long long)bl.kc, (long long)bl.mc, (long long)bl.rows);
    for (int i = 0; i < (threads > 1 ? 2 : 1); i++) {
        int t = ts[i];
        if (t == 1)
            choose_cpu();
        double p = peak(t);
        printf("(a) AMX-BF16 peak (TDPBF16PS, tiles in registers), %d thread(s): "
               "%.1f GFLOP/s\n",
               t, p);
        double g = bench_bf16(t, bm, bn, bk, t == 1 ? 12 : 0), g2 = bench_bf16(t, m, n, k, t == 1 ? 12 : 0), p2 = peak(t);
        p = p2 > p ? p2 : p; /* against the better of the peaks before and after */
        row("(b) bf16 GEMM (AMX kernel)", t, bm, bn, bk, g, p, "of peak");
        row("(b) bf16 GEMM (AMX kernel)", t, m, n, k, g2, p, "of peak");
        double s = bench_sgemm(t, m, n, k);
        row("(c) OpenBLAS cblas_sgemm (fp32)", t, m, n, k, s, 0, "");
        row("(c) fp8 block W8A16 (unpack + AMX)", t, m, n, k, bench_fp8(t, m, n, k), s, "sgemm");
        row("(c) int8 W8A8 (AMX-INT8, GOP/s)", t, m, n, k, bench_s8(t, m, n, k), s, "sgemm");
        /* DeepSeek-V3's routed expert (hidden 7168, moe_intermediate 2048), 128 tokens each (4096
         * tokens x top-8 / 256 experts); the flop count is the two GEMMs' */
        int e = t < 2 ? 2 : t;
        double ms = bench_moe_sgemm(t, 128, 7168, 2048);
        printf("  (d) MoE, %d experts x 128 tokens, hidden 7168, inter 2048:\n", e);
        row("(d) OpenBLAS sgemm (dequantized)", t, 128, 3 * 2048, 7168, ms, 0, "");
        row("(d) fp8 w8a16 experts (AMX)", t, 128, 3 * 2048, 7168, bench_moe(t, e, 128, 7168, 2048), ms, "sgemm");
    }
    return 0;
}
