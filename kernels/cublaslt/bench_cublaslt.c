/* bench_cublaslt.c: the figures of the cublaslt backend on its GPU (not a test).
 *
 * For fp8_tensor, fp8_rowwise and fp8_block at M x N x K (default 4096 x 7168 x 7168: tokens,
 * output channels, depth), times the matmul the adapter issues (lt_gemm.h: the same descriptors,
 * scale modes, heuristic and workspace) with CUDA events around each of --iters launches after
 * --warmup, and prints the median, the minimum and TFLOP/s (2 M N K / median). Then one whole
 * gemm slot call per kind (host operands in, padding, transfers, host result out), and a spot
 * check of that call's result against a double-precision dot on 64 elements.
 *
 *   bench_cublaslt [--m M] [--n N] [--k K] [--iters I] [--warmup W] [--out bf16|f16|f32]
 *                  [--device D] [--kinds tensor,rowwise,block]
 *
 * Lines starting "RESULT" are for kernels/cublaslt/run-on-gpu.sh:
 *   RESULT cublaslt <kind> <M> <N> <K> <out> <median ms> <TFLOP/s>
 * Exit 0, or 1 when the GPU or cuBLASLt cannot be had (the reason printed) or the spot check fails. */
#define _GNU_SOURCE /* clock_gettime */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lt_gemm.h"
#include "qcheck/qcheck.h"

extern const qcheck_backend qc_backend_cublaslt;

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t next_u32(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* Codes of moderate magnitude (|v| <= 2^4 or so), never NaN. */
static uint8_t random_code(void)
{
    uint8_t c = (uint8_t)next_u32();
    return (uint8_t)((c & 0x80) | ((c & 0x7F) % 0x58));
}

static double e4m3(uint8_t c)
{
    int e = c >> 3 & 15, m = c & 7;
    double v = e ? ldexp(1.0 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);
    return c & 0x80 ? -v : v;
}

static int cmp_float(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double bf16_or_f16(qc_format f, uint16_t h)
{
    if (f == QC_BF16) {
        uint32_t u = (uint32_t)h << 16;
        float v;
        memcpy(&v, &u, 4);
        return v;
    }
    int e = h >> 10 & 31, m = h & 1023;
    double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return h & 0x8000 ? -v : v;
}

typedef struct problem {
    qc_gemm_kind kind;
    const char *name;
    int64_t m, n, k;
    qc_format out;
    uint8_t *a, *b;  /* codes [m, k], [n, k] */
    float *sa, *sb;  /* canonical scales */
    size_t nsa, nsb; /* their counts */
} problem;

static double scale_of(const problem *p, char side, int64_t row, int64_t col)
{
    int64_t kg = (p->k + 127) / 128;
    const float *s = side == 'a' ? p->sa : p->sb;
    switch (p->kind) {
    case QC_GEMM_FP8_ROWWISE: return s[row];
    case QC_GEMM_FP8_BLOCK: return side == 'a' ? s[row * kg + col / 128] : s[(row / 128) * kg + col / 128];
    default: return s[0];
    }
}

/* The matmul alone, timed with CUDA events: 0, or 1 with the reason printed. */
static int time_matmul(qc_lt_ctx *c, const problem *p, int warmup, int iters)
{
    char why[1600];
    qc_lt_shape s;
    qc_lt_shape_of(p->kind, p->m, p->n, p->k, &s);
    size_t des = p->out == QC_F32 ? 4 : 2;
    void *dA = qc_lt_buffer(c, QC_LT_BUF_A, (size_t)(s.Np * s.Kp), why, sizeof why);
    void *dB = dA ? qc_lt_buffer(c, QC_LT_BUF_B, (size_t)(s.Mp * s.Kp), why, sizeof why) : NULL;
    void *dD = dB ? qc_lt_buffer(c, QC_LT_BUF_D, (size_t)(s.Mp * s.Np) * des, why, sizeof why) : NULL;
    float *dsa = dD ? qc_lt_buffer(c, QC_LT_BUF_SA, (size_t)s.nsa * 4, why, sizeof why) : NULL;
    float *dsb = dsa ? qc_lt_buffer(c, QC_LT_BUF_SB, (size_t)s.nsb * 4, why, sizeof why) : NULL;
    float *hsa = malloc((size_t)s.nsa * 4), *hsb = malloc((size_t)s.nsb * 4), *ms = malloc((size_t)iters * 4);
    uint8_t *pa = malloc((size_t)(s.Mp * s.Kp)), *pb = malloc((size_t)(s.Np * s.Kp));
    cudaEvent_t e0 = NULL, e1 = NULL;
    qc_lt_plan *plan = NULL;
    int rc = 1;
    if (!dsb || !hsa || !hsb || !ms || !pa || !pb) {
        printf("%s: %s\n", p->name, dsb ? "out of host memory" : why);
        goto out;
    }
    qc_lt_pack_weight_scales(&s, p->sb, hsa);
    qc_lt_pack_act_scales(&s, p->sa, hsb);
    qc_lt_pad_codes(p->b, p->n, p->k, s.Np, s.Kp, pb);
    qc_lt_pad_codes(p->a, p->m, p->k, s.Mp, s.Kp, pa);
    if (cudaMemcpy(dA, pb, (size_t)(s.Np * s.Kp), cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(dB, pa, (size_t)(s.Mp * s.Kp), cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(dsa, hsa, (size_t)s.nsa * 4, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(dsb, hsb, (size_t)s.nsb * 4, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) {
        printf("%s: CUDA: %s\n", p->name, cudaGetErrorString(cudaGetLastError()));
        goto out;
    }
    int prc = qc_lt_plan_get(c, &s, p->out, dsa, dsb, &plan, why, sizeof why);
    if (prc) {
        printf("%s: %s\n", p->name, why);
        goto out;
    }
    for (int i = 0; i < warmup + iters; i++) {
        cudaEventRecord(e0, c->stream);
        if (qc_lt_matmul(c, plan, dA, dB, dsa, dsb, dD, why, sizeof why)) {
            printf("%s: %s\n", p->name, why);
            goto out;
        }
        cudaEventRecord(e1, c->stream);
        cudaError_t e = cudaEventSynchronize(e1);
        if (e != cudaSuccess) {
            printf("%s: %s\n", p->name, cudaGetErrorString(e));
            goto out;
        }
        if (i >= warmup)
            cudaEventElapsedTime(&ms[i - warmup], e0, e1);
    }
    qsort(ms, (size_t)iters, sizeof *ms, cmp_float);
    double med = iters % 2 ? ms[iters / 2] : 0.5 * (ms[iters / 2 - 1] + ms[iters / 2]);
    double tflops = 2.0 * (double)p->m * (double)p->n * (double)p->k / (med * 1e-3) / 1e12;
    printf("cublaslt %-11s M=%lld N=%lld K=%lld out=%s: median %.4f ms, min %.4f ms over %d (after %d warm-up), "
           "%.1f TFLOP/s  [heuristic #1: waves %.2f, workspace %zu B of %u]\n",
           p->name, (long long)p->m, (long long)p->n, (long long)p->k, qc_format_name(p->out), med, ms[0], iters,
           warmup, tflops, plan->waves, plan->ws_bytes, QC_LT_WORKSPACE);
    printf("RESULT cublaslt %s %lld %lld %lld %s %.5f %.2f\n", p->name, (long long)p->m, (long long)p->n,
           (long long)p->k, qc_format_name(p->out), med, tflops);
    rc = 0;
out:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    free(hsa), free(hsb), free(ms), free(pa), free(pb);
    return rc;
}

/* One call of the backend's gemm slot on host tensors, timed on the wall clock, and a spot check
 * of its result: 0, or 1 with the reason printed. */
static int adapter_call(const problem *p, int calls)
{
    qcheck_quant_spec ja, jb;
    memset(&ja, 0, sizeof ja), memset(&jb, 0, sizeof jb);
    ja.recipe = p->kind == QC_GEMM_FP8_TENSOR ? QC_RECIPE_TENSOR : p->kind == QC_GEMM_FP8_ROWWISE ? QC_RECIPE_TOKEN
                                                                                                  : QC_RECIPE_TOKEN_GROUP;
    jb.recipe = p->kind == QC_GEMM_FP8_BLOCK ? QC_RECIPE_BLOCK : ja.recipe;
    ja.policy.elem = jb.policy.elem = QC_E4M3FN;
    ja.policy.group = 128, jb.policy.block_r = jb.policy.block_c = 128;
    ja.layout = jb.layout = QC_SL_ROW;
    ja.rows = (size_t)p->m, jb.rows = (size_t)p->n, ja.cols = jb.cols = (size_t)p->k;
    size_t es = p->out == QC_F32 ? 4 : 2;
    void *c = malloc((size_t)(p->m * p->n) * es);
    qcheck_gemm_args g;
    memset(&g, 0, sizeof g);
    g.kind = p->kind, g.model = "exact", g.m = p->m, g.n = p->n, g.k = p->k, g.out = p->out;
    g.a = (qcheck_gemm_operand){.form = QCHECK_FORM_QUANTIZED, .spec = &ja};
    g.b = (qcheck_gemm_operand){.form = QCHECK_FORM_QUANTIZED, .spec = &jb};
    g.a.codes = (qcheck_tensor){.storage = QCHECK_U8, .dtype = "e4m3fn", .data = p->a, .nbytes = (size_t)(p->m * p->k)};
    g.b.codes = (qcheck_tensor){.storage = QCHECK_U8, .dtype = "e4m3fn", .data = p->b, .nbytes = (size_t)(p->n * p->k)};
    g.a.scale = (qcheck_tensor){.storage = QCHECK_U8, .dtype = "u8", .data = p->sa, .nbytes = p->nsa * 4};
    g.b.scale = (qcheck_tensor){.storage = QCHECK_U8, .dtype = "u8", .data = p->sb, .nbytes = p->nsb * 4};
    g.c = (qcheck_tensor){.storage = es == 4 ? QCHECK_F32 : QCHECK_U16, .dtype = qc_format_name(p->out), .data = c,
                          .nbytes = (size_t)(p->m * p->n) * es};
    char msg[1024] = "";
    qcheck_ctx ctx = {msg, sizeof msg, 0};
    double best = 1e30;
    for (int i = 0; i < calls; i++) {
        double t0 = now_ms();
        qcheck_status st = qc_backend_cublaslt.gemm(&g, &ctx);
        double t = now_ms() - t0;
        if (st != QCHECK_OK) {
            printf("%s: the gemm slot returned %d: %s\n", p->name, (int)st, msg);
            free(c);
            return 1;
        }
        best = t < best ? t : best;
    }
    /* spot check: 64 elements against a double dot of the dequantized operands */
    double worst = 0;
    for (int t = 0; t < 64; t++) {
        int64_t i = (int64_t)(next_u32() % (uint32_t)p->m), j = (int64_t)(next_u32() % (uint32_t)p->n);
        double want = 0, mag = 0;
        for (int64_t kk = 0; kk < p->k; kk++) {
            double v = e4m3(p->a[i * p->k + kk]) * e4m3(p->b[j * p->k + kk]) * scale_of(p, 'a', i, kk) *
                       scale_of(p, 'b', j, kk);
            want += v, mag += fabs(v);
        }
        double got = es == 4 ? ((float *)c)[i * p->n + j] : bf16_or_f16(p->out, ((uint16_t *)c)[i * p->n + j]);
        double err = fabs(got - want) / (mag > 0 ? mag : 1);
        worst = err > worst ? err : worst;
    }
    double tol = p->out == QC_F32 ? 1e-5 : p->out == QC_F16 ? 2e-3 : 1e-2; /* relative to sum |terms| */
    printf("cublaslt %-11s whole gemm slot call (host in, pad, H2D, matmul, D2H, crop): best %.2f ms of %d; "
           "spot check of 64 elements: max |err| / sum|terms| = %.2e (%s)\n",
           p->name, best, calls, worst, worst <= tol ? "ok" : "FAIL");
    free(c);
    return worst <= tol ? 0 : 1;
}

int main(int argc, char **argv)
{
    int64_t m = 4096, n = 7168, k = 7168;
    int iters = 50, warmup = 10, device = 0;
    qc_format out = QC_BF16;
    const char *kinds = "tensor,rowwise,block";
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *o = argv[i], *v = argv[i + 1];
        if (!strcmp(o, "--m"))
            m = atoll(v);
        else if (!strcmp(o, "--n"))
            n = atoll(v);
        else if (!strcmp(o, "--k"))
            k = atoll(v);
        else if (!strcmp(o, "--iters"))
            iters = atoi(v);
        else if (!strcmp(o, "--warmup"))
            warmup = atoi(v);
        else if (!strcmp(o, "--device"))
            device = atoi(v);
        else if (!strcmp(o, "--kinds"))
            kinds = v;
        else if (!strcmp(o, "--out"))
            out = !strcmp(v, "f32") ? QC_F32 : !strcmp(v, "f16") ? QC_F16 : QC_BF16;
        else {
            fprintf(stderr, "bench_cublaslt: unknown option %s (see the comment at the top of bench_cublaslt.c)\n", o);
            return 2;
        }
    }
    if (m < 1 || n < 1 || k < 1 || iters < 1 || warmup < 0) {
        fprintf(stderr, "bench_cublaslt: bad sizes\n");
        return 2;
    }
    static qc_lt_ctx c;
    char why[1600];
    if (qc_lt_open(&c, device, NULL, why, sizeof why)) {
        printf("bench_cublaslt: cannot run here: %s\n", why);
        return 1;
    }
    printf("bench_cublaslt: device %d %s (sm_%d%d), cuBLASLt %zu from %s\n", device, c.device_name, c.major, c.minor,
           c.lib.version, c.lib.path);
    problem p = {.m = m, .n = n, .k = k, .out = out};
    p.a = malloc((size_t)(m * k)), p.b = malloc((size_t)(n * k));
    int64_t kg = (k + 127) / 128;
    size_t most = (size_t)(m > n ? m : n) * (size_t)kg + 4;
    p.sa = malloc(most * 4), p.sb = malloc(most * 4);
    if (!p.a || !p.b || !p.sa || !p.sb) {
        printf("bench_cublaslt: out of host memory\n");
        return 1;
    }
    for (int64_t i = 0; i < m * k; i++)
        p.a[i] = random_code();
    for (int64_t i = 0; i < n * k; i++)
        p.b[i] = random_code();
    for (size_t i = 0; i < most; i++) /* powers of two around 2^-4 */
        p.sa[i] = ldexpf(1.0f, -(int)(next_u32() % 5) - 2), p.sb[i] = ldexpf(1.0f, -(int)(next_u32() % 5) - 2);
    static const struct {
        const char *word, *name;
        qc_gemm_kind kind;
    } all[] = {{"tensor", "fp8_tensor", QC_GEMM_FP8_TENSOR},
               {"rowwise", "fp8_rowwise", QC_GEMM_FP8_ROWWISE},
               {"block", "fp8_block", QC_GEMM_FP8_BLOCK}};
    int rc = 0;
    for (int q = 0; q < 3; q++) {
        if (!strstr(kinds, all[q].word))
            continue;
        p.kind = all[q].kind, p.name = all[q].name;
        p.nsa = q == 0 ? 1 : q == 1 ? (size_t)m : (size_t)(m * kg);
        p.nsb = q == 0 ? 1 : q == 1 ? (size_t)n : (size_t)(((n + 127) / 128) * kg);
        rc |= time_matmul(&c, &p, warmup, iters);
        rc |= adapter_call(&p, 3);
    }
    qc_lt_close(&c);
    return rc;
}
