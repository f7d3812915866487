/* bench_mma: the speed of the tensor-core model on the CPU: its own k-step per output
 * (reference/arith/mma_sm90.h qcref_sm90_mma_dot) and the GEMM path of model sm90-wgmma
 * (reference/ops/gemm_sm90.c qcref_gemm_sm90, rows taken apart once), against the fp64 GEMM path
 * (OpenBLAS cblas_dgemm on the decoded values, one thread) in the same run. Figures, not a test;
 * issue 21 asks >= 100 M multiply-adds per second per core.
 *
 *   bench_mma [M N K [PROMOTE]]        defaults 128 128 4096 4 (cuBLASLt's schedule)
 *
 * Prints each path's multiply-adds per second (best of 3, process CPU time) and their ratio. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "arith/mma_sm90.h"
#include "ops/gemm.h"
#include "bench_clock.h"
#ifdef QC_BENCH_CBLAS
#include <cblas.h>
void openblas_set_num_threads(int n);
#endif

static double e4m3_value(uint8_t c)
{
    int e = (c >> 3) & 15, m = c & 7;
    double v = e ? (8 + m) / 8.0 : m / 8.0;
    for (int i = e ? e : 1; i < 7; i++) v /= 2;
    for (int i = 7; i < e; i++) v *= 2;
    return c & 0x80 ? -v : v;
}

int main(int argc, char **argv)
{
    long m = argc > 3 ? atol(argv[1]) : 128, n = argc > 3 ? atol(argv[2]) : 128, k = argc > 3 ? atol(argv[3]) : 4096;
    int promote = argc > 4 ? atoi(argv[4]) : 4;
    if (m < 1 || n < 1 || k < 32 || k % 32 || m * n > (1L << 24) || k > (1L << 20) || promote < 0) {
        fprintf(stderr, "bench_mma: M N K [PROMOTE]: M, N >= 1 (M N <= 2^24), K a multiple of 32 up to 2^20\n");
        return 2;
    }
    uint8_t *a = malloc((size_t)(m * k)), *b = malloc((size_t)(n * k));
    float *d = malloc(sizeof(float) * (size_t)(m * n));
    double *ad = malloc(sizeof(double) * (size_t)(m * k)), *bd = malloc(sizeof(double) * (size_t)(n * k)),
           *cd = malloc(sizeof(double) * (size_t)(m * n));
    if (!a || !b || !d || !ad || !bd || !cd) return 1;
    uint32_t s = 1;
    for (long i = 0; i < m * k; i++) s = s * 1664525u + 1013904223u, a[i] = (uint8_t)(0x20 + (s >> 24) % 48) | (s & 0x80);
    for (long i = 0; i < n * k; i++) s = s * 1664525u + 1013904223u, b[i] = (uint8_t)(0x20 + (s >> 24) % 48) | (s & 0x80);
    for (long i = 0; i < m * k; i++) ad[i] = e4m3_value(a[i]);
    for (long i = 0; i < n * k; i++) bd[i] = e4m3_value(b[i]);
    double macs = (double)m * (double)n * (double)k, best_model = 1e30, best_blas = 1e30, check = 0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = bench_cpu_s();
        for (long i = 0; i < m; i++)
            for (long j = 0; j < n; j++)
                d[i * n + j] = qcref_sm90_mma_dot(a + i * k, 0, b + j * k, 0, (int)k, 0.0f, promote);
        double t = bench_cpu_s() - t0;
        best_model = t < best_model ? t : best_model;
    }
    float *g = malloc(sizeof(float) * (size_t)(m * n)), one = 1.0f;
    double best_gemm = 1e30;
    for (int rep = 0; g && rep < 3; rep++) {
        double t0 = bench_cpu_s();
        if (qcref_gemm_sm90(a, 0, b, 0, (size_t)m, (size_t)n, (size_t)k, &one, 0, &one, 0, NULL, promote, g)) return 1;
        double t = bench_cpu_s() - t0;
        best_gemm = t < best_gemm ? t : best_gemm;
    }
    long same = 0;
    for (long i = 0; g && i < m * n; i++) check += d[i], same += qc_f32_bits(d[i]) == qc_f32_bits(g[i]);
    printf("bench_mma %ldx%ldx%ld e4m3, promote %d (checksum %.6g; the two model paths agree on %ld of %ld)\n", m, n,
           k, promote, check, same, m * n);
    printf("  model's own k-step (qcref_sm90_mma_dot), 1 thread:  %8.1f M multiply-adds/s\n", macs / best_model / 1e6);
    printf("  model sm90-wgmma's GEMM (qcref_gemm_sm90), 1 thread: %8.1f M multiply-adds/s\n", macs / best_gemm / 1e6);
    free(g);
#ifdef QC_BENCH_CBLAS
    openblas_set_num_threads(1);
    for (int rep = 0; rep < 3; rep++) {
        double t0 = bench_cpu_s();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0, ad, (int)k, bd, (int)k, 0.0, cd,
                    (int)n);
        double t = bench_cpu_s() - t0;
        best_blas = t < best_blas ? t : best_blas;
    }
    printf("  OpenBLAS cblas_dgemm (fp64), 1 thread:                %8.1f M multiply-adds/s\n", macs / best_blas / 1e6);
    printf("  GEMM path / fp64 path: %.3f; GEMM path / own k-step: %.2f\n", best_blas / best_gemm, best_model / best_gemm);
#else
    printf("  OpenBLAS: not found at configure time (libopenblas-dev); no fp64 figure\n");
#endif
    free(a), free(b), free(d), free(ad), free(bd), free(cd);
    return 0;
}
