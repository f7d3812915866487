/* bench_cpu.c: figures of the cpu-avx512 kernels (kernels/cpu/), never pass/fail.
 *
 *   bench_cpu [--threads T] [--skip-exhaustive] [--exhaustive-e8m0] [--mib M] [--no-stream]
 *
 * (a) The exhaustive check: all 2^32 fp32 bit patterns -> e4m3fn under the ptx profile
 *     (cvt.rn.satfinite), the AVX-512 cast against the reference qcref_encode, both computed for
 *     every input, on T threads (default 2). Prints the mismatches (must be 0) and the seconds;
 *     target <= 10 s on 2 cores. The scalar reference is the bottleneck. --exhaustive-e8m0 adds
 *     the same for fp32 -> e8m0 under the log2-ceil rule (the kernel's log2f threshold table,
 *     encode_avx512.h, against qcref_e8m0_encode's ceilf(log2f(.)) on all 2^32 inputs).
 * (b) Memory bandwidth measured in this run: a streaming read (sum) and a streaming copy of
 *     M MiB (default 1024) on T threads, bytes moved per second. Then each quantize kernel on an
 *     fp32 tensor of M/4 MiB: GB/s counted as bytes read (fp32 input) + bytes written (one code
 *     per byte, the scales), and its percentage of each bandwidth figure (the kernels' traffic is
 *     4/5 reads, so the read stream is the closer ceiling; the copy is the higher figure; the
 *     outputs are 64-byte aligned, as torch's CPU allocator gives, so that calls this large stream
 *     their codes: docs/DECISIONS.md "Streamed codes"); target
 *     >= 50%. Best of 5 runs each; the two bandwidths are measured again after the kernels and the
 *     higher (best) figure of the two measurements is the denominator, so that a burst of other
 *     load during the first measurement cannot inflate the percentages. On a shared machine the
 *     figures move with the other load. */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_clock.h"
#include "cpu_avx512.h"
#include "profiles.h"

static int nthreads = 2;

typedef struct job {
    int id;
    void (*fn)(struct job *);
    /* exhaustive */
    uint64_t lo, hi, mismatches;
    /* streams and kernels */
    const float *src;
    float *dst;
    size_t n;
    double sum;
    const qc_recipe_profile *prof;
    qc_recipe_policy pol;
    size_t rows, cols;
    qc_quantized out;
    float gscale;
} job;

static void *trampoline(void *a)
{
    job *j = a;
    j->fn(j);
    return NULL;
}

/* Runs fn on every job, one thread each; returns the wall seconds. */
static double run_parallel(job *jobs, void (*fn)(job *))
{
    pthread_t t[64];
    double t0 = bench_wall_s();
    for (int i = 0; i < nthreads; i++) {
        jobs[i].fn = fn;
        pthread_create(&t[i], NULL, trampoline, &jobs[i]);
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    return bench_wall_s() - t0;
}

/* ---- (a) exhaustive fp32 -> e4m3fn ---- */

/* The reference side is the reference's own inline encoder (reference/formats/minifloat_impl.h,
 * which formats.c's qcref_encode inlines too), called here with a compile-time constant format and
 * policy so that the compiler folds the policy's branches: the same source and the same integer
 * arithmetic, computed for every input. bench_exhaustive first checks that it agrees with the
 * public qcref_encode and that the constant policy is the ptx profile's. */
#include "formats/minifloat_impl.h"

#define CHUNK 65536u

static qc_cast_policy ptx_e4m3;

static const qc_cast_policy ptx_e4m3_const = {QC_OVERFLOW_SATFINITE, QC_NAN_CANONICAL, QC_NANCODE_ONES, QC_TIES_EVEN,
                                              QC_NONAN_POSMAX, QC_ZERO_KEEP, QC_E8M0_CEIL, 0, 3, QC_E8M0_DEC_TORCH};

static inline uint8_t ref_e4m3(float x)
{
    const qc_minifloat m = {8, 4, 3, 7, QC_SPECIALS_FN}; /* docs/spec/formats.md §1.1; checked against qcref_minifloat */
    return (uint8_t)minifloat_encode(m, x, &ptx_e4m3_const);
}

static void exhaustive(job *j)
{
    float *x = malloc(CHUNK * sizeof *x);
    uint8_t *got = malloc(CHUNK);
    for (uint64_t b = j->lo; b < j->hi; b += CHUNK) {
        for (uint32_t i = 0; i < CHUNK; i++)
            x[i] = qc_f32_from_bits((uint32_t)(b + i));
        qc_avx512_cast(QC_E4M3FN, &ptx_e4m3, x, CHUNK, got);
        uint64_t bad = 0;
        for (uint32_t i = 0; i < CHUNK; i++)
            bad += got[i] != ref_e4m3(x[i]);
        j->mismatches += bad;
    }
    free(x), free(got);
}

static void exhaustive_e8m0(job *j)
{
    float *x = malloc(CHUNK * sizeof *x);
    uint8_t *got = malloc(CHUNK);
    qc_cast_policy p = qcref_default_policy();
    p.e8m0 = QC_E8M0_LOG2_CEIL;
    for (uint64_t b = j->lo; b < j->hi; b += CHUNK) {
        for (uint32_t i = 0; i < CHUNK; i++)
            x[i] = qc_f32_from_bits((uint32_t)(b + i));
        qc_avx512_cast(QC_E8M0, &p, x, CHUNK, got);
        uint64_t bad = 0;
        for (uint32_t i = 0; i < CHUNK; i++)
            bad += got[i] != qcref_e8m0_encode(x[i], &p);
        j->mismatches += bad;
    }
    free(x), free(got);
}

static void bench_exhaustive_e8m0(void)
{
    job jobs[64] = {{0}};
    uint64_t total = 1ull << 32, per = total / (uint64_t)nthreads / CHUNK * CHUNK;
    for (int i = 0; i < nthreads; i++) {
        jobs[i].lo = per * (uint64_t)i;
        jobs[i].hi = i == nthreads - 1 ? total : per * (uint64_t)(i + 1);
    }
    double s = run_parallel(jobs, exhaustive_e8m0);
    uint64_t bad = 0;
    for (int i = 0; i < nthreads; i++)
        bad += jobs[i].mismatches;
    printf("exhaustive fp32 -> e8m0 log2-ceil, AVX-512 vs reference (libm log2f), all 2^32 inputs, %d threads: "
           "mismatches %llu, %.2f s\n", nthreads, (unsigned long long)bad, s);
}

static void bench_exhaustive(void)
{
    job jobs[64] = {{0}};
    ptx_e4m3 = qc_cast_profile_policy(qc_cast_profile_find("ptx"), QC_E4M3FN);
    qc_minifloat m = qcref_minifloat(QC_E4M3FN);
    if (memcmp(&ptx_e4m3, &ptx_e4m3_const, sizeof ptx_e4m3) || m.bits != 8 || m.ebits != 4 || m.mbits != 3 ||
        m.bias != 7 || m.specials != QC_SPECIALS_FN) {
        printf("exhaustive: the ptx e4m3fn policy or descriptor changed; update ref_e4m3\n");
        return;
    }
    for (uint32_t b = 0; b < 1u << 22; b++) { /* the specialized call is qcref_encode */
        float v = qc_f32_from_bits(b * 1021u);
        if (ref_e4m3(v) != qcref_encode(QC_E4M3FN, v, &ptx_e4m3)) {
            printf("exhaustive: the specialized reference differs from qcref_encode at 0x%08X\n", b * 1021u);
            return;
        }
    }
    uint64_t total = 1ull << 32, per = total / (uint64_t)nthreads / CHUNK * CHUNK;
    for (int i = 0; i < nthreads; i++) {
        jobs[i].lo = per * (uint64_t)i;
        jobs[i].hi = i == nthreads - 1 ? total : per * (uint64_t)(i + 1);
    }
    double c0 = bench_cpu_s(), s = run_parallel(jobs, exhaustive), c = bench_cpu_s() - c0;
    uint64_t bad = 0;
    for (int i = 0; i < nthreads; i++)
        bad += jobs[i].mismatches;
    printf("exhaustive fp32 -> e4m3fn (ptx, satfinite), AVX-512 vs reference, all 2^32 inputs, %d threads: "
           "mismatches %llu, %.2f s (target <= 10 s; CPU time %.2f s: on a shared machine wall > CPU / threads)\n",
           nthreads, (unsigned long long)bad, s, c);
}

/* ---- (b) bandwidth ---- */

/* Only these two functions use AVX-512 directly (target attribute): main runs on any CPU and
 * says SKIPPED there. */
__attribute__((target("avx512f"))) static void stream_read(job *j)
{
    __m512 acc = _mm512_setzero_ps();
    for (size_t i = 0; i < j->n; i += 16)
        acc = _mm512_add_ps(acc, _mm512_load_ps(j->src + i));
    j->sum = _mm512_reduce_add_ps(acc);
}

__attribute__((target("avx512f"))) static void stream_copy(job *j)
{
    for (size_t i = 0; i < j->n; i += 16)
        _mm512_stream_ps(j->dst + i, _mm512_load_ps(j->src + i));
    _mm_sfence();
}

static double best_of(job *jobs, void (*fn)(job *), int runs)
{
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        double s = run_parallel(jobs, fn);
        best = s < best ? s : best;
    }
    return best;
}

static void quant_rows(job *j)
{
    qc_avx512_quant(j->prof->recipe, &j->pol, j->src, j->rows, j->cols, NULL,
                    j->prof->recipe == QC_RECIPE_NVFP4 ? &j->gscale : NULL, &j->out);
}

typedef struct kernel_case {
    const char *recipe, *profile;
    int ue8m0;
} kernel_case;

static const kernel_case kernels[] = {
    {"token_group", "sgl-kernel", 0},   {"token_group", "triton-row", 0},  {"token_group", "sgl-kernel", 1},
    {"mxfp8", "torchao-floor", 0},      {"mxfp8", "torchao-rceil", 0},     {"mxfp8", "flashinfer-cutedsl", 0},
    {"mxfp4", "torchao-floor", 0},      {"mxfp4", "flashinfer-fast", 0},   {"nvfp4", "flashinfer-te", 0},
    {"nvfp4", "flashinfer-fast", 0},
};

/* bw: the read and the copy bandwidth of this run. */
static void bench_quant(const float *x, size_t rows, size_t cols, const double bw[2], double gbs_out[])
{
    job jobs[64];
    for (size_t k = 0; k < sizeof kernels / sizeof kernels[0]; k++) {
        const qc_recipe_profile *pr = qc_recipe_profile_find(kernels[k].profile, qc_recipe_from_name(kernels[k].recipe));
        qc_recipe_policy p = qc_recipe_profile_policy(pr, -1, kernels[k].ue8m0);
        size_t per = rows / (size_t)nthreads, bytes_out = 0;
        for (int i = 0; i < nthreads; i++) {
            job *j = &jobs[i];
            memset(j, 0, sizeof *j);
            j->prof = pr, j->pol = p, j->cols = cols, j->gscale = 2688.0f / 20.0f;
            j->rows = i == nthreads - 1 ? rows - per * (size_t)i : per;
            j->src = x + per * (size_t)i * cols;
            size_t ns = qcref_recipe_nscales(pr->recipe, &p, j->rows, cols);
            j->out.rows = j->rows, j->out.cols = cols, j->out.nscales = ns;
            j->out.q = aligned_alloc(64, (j->rows * cols + 63) / 64 * 64); /* as torch's CPU allocator aligns */
            j->out.scale_f32 = malloc(4 * ns + 4), j->out.scale_u8 = malloc(ns + 1);
            memset(j->out.q, 0, j->rows * cols);
            bytes_out += j->rows * cols + (pr->recipe >= QC_RECIPE_MXFP8 ? ns : 4 * ns);
        }
        double s = best_of(jobs, quant_rows, 5);
        double gbs = (double)(rows * cols * 4 + bytes_out) / s / 1e9;
        gbs_out[k] = gbs;
        printf("quant %-11s %-18s ue8m0=%d: %6.2f GB/s (%zu MiB read + %zu MiB written in %.1f ms) = %5.1f%% of the "
               "copy, %5.1f%% of the read bandwidth (target >= 50%%)\n", kernels[k].recipe, kernels[k].profile,
               kernels[k].ue8m0, gbs, rows * cols * 4 >> 20, bytes_out >> 20, s * 1e3, 100.0 * gbs / bw[1],
               100.0 * gbs / bw[0]);
        for (int i = 0; i < nthreads; i++)
            free(jobs[i].out.q), free(jobs[i].out.scale_f32), free(jobs[i].out.scale_u8);
    }
}

static void bench_bandwidth(size_t mib)
{
    size_t n = mib << 18; /* floats */
    float *a = aligned_alloc(64, n * 4), *b = aligned_alloc(64, n * 4);
    for (size_t i = 0; i < n; i++)
        a[i] = (float)(i & 1023) * 0.01f - 5.0f, b[i] = 0.0f;
    job jobs[64] = {{0}};
    size_t per = n / (size_t)nthreads / 16 * 16;
    for (int i = 0; i < nthreads; i++) {
        jobs[i].src = a + per * (size_t)i, jobs[i].dst = b + per * (size_t)i;
        jobs[i].n = i == nthreads - 1 ? n - per * (size_t)i : per;
    }
    double r = (double)(n * 4) / best_of(jobs, stream_read, 5) / 1e9;
    double c = (double)(n * 8) / best_of(jobs, stream_copy, 5) / 1e9;
    double bw[2] = {r, c};
    printf("memory bandwidth, %zu MiB, %d threads: read %.2f GB/s, copy %.2f GB/s (read + written, streaming "
           "stores)\n", mib, nthreads, r, c);
    /* the quantize input: a quarter of the buffer, normal-ish values with some zero groups */
    size_t cols = 7168, rows = (n / 4) / cols / (size_t)nthreads * (size_t)nthreads;
    for (size_t i = 0; i < rows * cols; i++)
        a[i] = (float)((int)((i * 2654435761u) >> 20 & 4095) - 2048) * 0.003f;
    size_t nk = sizeof kernels / sizeof kernels[0];
    double gbs[sizeof kernels / sizeof kernels[0]];
    bench_quant(a, rows, cols, bw, gbs);
    for (int i = 0; i < nthreads; i++) /* the streams again, on the same buffers */
        jobs[i].src = a + per * (size_t)i, jobs[i].dst = b + per * (size_t)i;
    double r2 = (double)(n * 4) / best_of(jobs, stream_read, 5) / 1e9;
    double c2 = (double)(n * 8) / best_of(jobs, stream_copy, 5) / 1e9;
    bw[0] = r2 > r ? r2 : r, bw[1] = c2 > c ? c2 : c;
    printf("memory bandwidth again after the kernels: read %.2f GB/s, copy %.2f GB/s; best of both: read %.2f, "
           "copy %.2f GB/s\n", r2, c2, bw[0], bw[1]);
    printf("summary (%% of the best copy bandwidth %.2f GB/s = memcpy read + write bytes/s; kernel bytes = fp32 read "
           "+ codes + scales written):\n", bw[1]);
    for (size_t k = 0; k < nk; k++)
        printf("  %-11s %-18s ue8m0=%d  %6.2f GB/s  %5.1f%% of copy  %5.1f%% of read\n", kernels[k].recipe,
               kernels[k].profile, kernels[k].ue8m0, gbs[k], 100.0 * gbs[k] / bw[1], 100.0 * gbs[k] / bw[0]);
    free(a), free(b);
}

int main(int argc, char **argv)
{
    int skip = 0, e8 = 0;
    size_t mib = 1024;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mib") && i + 1 < argc)
            mib = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--skip-exhaustive"))
            skip = 1;
        else if (!strcmp(argv[i], "--exhaustive-e8m0"))
            e8 = 1;
        else if (!strcmp(argv[i], "--no-stream")) /* codes through the cache whatever the size */
            qc_avx512_set_stream_min(SIZE_MAX);
        else {
            fprintf(stderr,
                    "usage: bench_cpu [--threads T] [--skip-exhaustive] [--exhaustive-e8m0] [--mib M] [--no-stream]\n");
            return 2;
        }
    }
    nthreads = nthreads < 1 ? 1 : nthreads > 64 ? 64 : nthreads;
    const char *why = qc_cpu_avx512_unavailable();
    if (why) {
        printf("bench_cpu: SKIPPED: %s\n", why);
        return 0;
    }
    if (!skip)
        bench_exhaustive();
    if (e8)
        bench_exhaustive_e8m0();
    bench_bandwidth(mib);
    return 0;
}
