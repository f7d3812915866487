/* test_gemm.c: the quantized GEMM reference (reference/ops/gemm.h, reference/exact) and the gemm op.
 *
 * 1. Hand-worked values: lsb exponents, the exactness grid, the single rounding of fp64 -> bf16
 *    (a value that double rounding through fp32 gets wrong), the bound formula at one point.
 * 2. Soundness: for every GEMM kind, MPFR correctly-rounded dots (an independent exact oracle)
 *    certify that the fp64 dgemm path is within gamma53(K+2) * s, far below the bound; and four
 *    fp32-accumulating kernels (sequential, per-group partials, pairwise, reversed fma) written
 *    here from the operands never leave the bound. Tightness: the median of bound / |error|.
 * 3. Exact by construction: integer fills with power-of-two scales give bound 0 everywhere and
 *    outputs equal to an int64 dot product of the integer inputs (independent of the quantizer).
 * 4. A wrong scale (one K block over) is outside the bound: the bound can fail.
 * 5. int8_rowwise (sgl-kernel W8A8): the op against a second implementation in fp64 / int64 with
 *    hand rounding, bit for bit, both tie rules; hand-worked ties, eps and the fused bias; K limit.
 * Seeds are fixed and printed with every failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "exact.h"
#include "generate.h"
#include "ops/gemm.h"
#include "registry.h"
#include "stages.h"

#include "check.h"
#include "gemm_inputs.h"

static void test_hand_values(void)
{
    CHECK(qcref_lsb_exponent(12.0) == 2, "lsb(12) = 2, got %d", qcref_lsb_exponent(12.0));
    CHECK(qcref_lsb_exponent(-0.375) == -3, "lsb(-0.375) = -3");
    CHECK(qcref_lsb_exponent(1.0) == 0 && qcref_lsb_exponent(0x1p-1074) == -1074, "lsb(1) = 0, lsb(min subnormal)");
    double row[4] = {0, 6, 0.5, -40};
    CHECK(qcref_row_lsb(row, 4) == -1, "row lsb skips zeros: -1");
    CHECK(qcref_gemm_exact_grid(0, 0x1p24 - 1, 5, QC_F32, 1) == 1, "s < 2^24 on grid 1 is exact");
    CHECK(qcref_gemm_exact_grid(0, 0x1p24, 5, QC_F32, 1) == 0, "s = 2^24 may round");
    CHECK(qcref_gemm_exact_grid(0, 100, 257, QC_BF16, 1) == 1,
          "257 is exact in fp32: a kernel's accumulator holds it, and its one rounding to bf16 is fixed");
    CHECK(qcref_gemm_exact_grid(0, 100, 256, QC_BF16, 0) == 0, "a non-power-of-two scale voids the proof");
    /* 1 + 2^-8 + 2^-40: RNE to bf16 is 0x3F81; through fp32 first it becomes the tie 1 + 2^-8 -> 0x3F80. */
    CHECK(qcref_gemm_round_out(1 + 0x1p-8 + 0x1p-40, QC_BF16) == 0x3F81, "fp64 -> bf16 rounds once: 0x%04X",
          qcref_gemm_round_out(1 + 0x1p-8 + 0x1p-40, QC_BF16));
    CHECK(qcref_gemm_round_out(1 + 0x1p-8, QC_BF16) == 0x3F80, "a bf16 tie goes to even");
    CHECK(qcref_gemm_round_out(1 + 0x1p-11 + 0x1p-45, QC_F16) == 0x3C01, "fp64 -> f16 rounds once");
    /* k = 1, s = 1, y = 1, f32: gamma(5) + 5*2^-149 + gamma53(3) + 2^-23 (1 + ...) + 2^-148 */
    double u = 0x1p-24, g5 = 5 * u / (1 - 5 * u), f = 3 * 0x1p-53 / (1 - 3 * 0x1p-53);
    double want = (g5 + 5 * 0x1p-149 + f + 2 * u * (1 + f + g5 + 5 * 0x1p-149) + 2 * 0x1p-149) * (1 + 0x1p-50);
    CHECK(qcref_gemm_bound(1, 1, 1, QC_F32, 0) == want, "bound(k=1) = %.17g, got %.17g", want,
          qcref_gemm_bound(1, 1, 1, QC_F32, 0));
    CHECK(qcref_gemm_bound(1, 1, 1, QC_F32, 1) == 0, "a proven-exact element has bound 0");
    double near = qcref_gemm_bound(65519, 65519, 1, QC_F16, 0), far = qcref_gemm_bound(65000, 65000, 1, QC_F16, 0);
    CHECK(isfinite(near) && qcref_gemm_may_overflow(65519, near, QC_F16),
          "next to the f16 overflow threshold 65520: a finite bound (%g) that reaches it", near);
    CHECK(isfinite(far) && !qcref_gemm_may_overflow(65000, far, QC_F16), "65000 cannot round to Inf in f16");
    CHECK(qcref_gemm_bound(INFINITY, INFINITY, 4, QC_F16, 0) == 0, "an Inf input: bound 0, the same Inf");
}

/* Runs the reference gemm op on generated inputs; out gets c, c.bound and the stage tensors. */
static int run_gemm(const char *kv, uint64_t seed, const char *dist, double scale_in, qc_tensor_set *in,
                    qc_tensor_set *out, const char *backend)
{
    qc_params p = {0};
    char err[512];
    if (qc_params_parse(&p, kv, err, sizeof err)) {
        printf("params %s: %s\n", kv, err);
        return 2;
    }
    qc_params_set(&p, "stages", "1");
    const char *fill[3] = {dist, dist, dist};
    const double scale[3] = {scale_in, strcmp(dist, "integers") ? scale_in / 4 : scale_in, scale_in};
    if (gemm_inputs(&p, seed, fill, scale, in, err, sizeof err)) {
        printf("%s\n", err);
        return 2;
    }
    qc_op_call c = {&p, in, out, err, sizeof err, 0};
    const qc_backend *b = NULL;
    for (int i = 0; backend && i < qc_backend_count(); i++)
        if (strcmp(qc_backend_at(i)->name, backend) == 0)
            b = qc_backend_at(i);
    int rc = b ? qc_backend_call(b, "gemm", &c) : qc_op_find("gemm")->reference(&c);
    if (rc)
        printf("gemm %s: %s\n", kv, err);
    return rc;
}

static double value_out(const qc_tensor *t, int64_t i, qc_format of)
{
    qc_cast_policy p = qcref_default_policy();
    uint32_t code = t->storage == QC_ST_U16 ? ((const uint16_t *)t->data)[i] : ((const uint32_t *)t->data)[i];
    return qcref_decode(of, code, &p);
}

static double out_of_float(float v, qc_format of)
{
    qc_cast_policy p = qcref_default_policy();
    return of == QC_F32 ? v : qcref_decode(of, qcref_encode(of, v, &p), &p);
}

/* Four fp32-accumulating kernels on the exact operands; each multiplies fp32 copies of the
 * operands (as a kernel that dequantizes to fp32 does), then alpha, then bias, then the output. */
static void kernels(const double *a, const double *b, size_t k, size_t group, float alpha, float bias, qc_format of,
                    double out[4])
{
    float acc = 0, tot = 0, part = 0, rev = 0;
    float *prod = malloc((k + 1) * sizeof *prod);
    for (size_t i = 0; i < k; i++) {
        prod[i] = (float)a[i] * (float)b[i];
        acc += prod[i];
        part += prod[i];
        if ((i + 1) % group == 0 || i + 1 == k)
            tot += part, part = 0;
    }
    for (size_t w = 1; w < k; w *= 2) /* pairwise tree */
        for (size_t i = 0; i + w < k; i += 2 * w)
            prod[i] += prod[i + w];
    float pair = k ? prod[0] : 0;
    for (size_t i = k; i-- > 0;)
        rev = fmaf((float)a[i], (float)b[i], rev);
    float v[4] = {acc, tot, pair, rev};
    for (int j = 0; j < 4; j++)
        out[j] = out_of_float(alpha * v[j] + bias, of);
    free(prod);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* s of qcx_gemm over the exact magnitude sum, on the soundness instances (how loose dgemm.c's
 * block bound is on quantized operands). */
static double sloose[50000];
static size_t n_sloose;

/* One instance: MPFR certificate of the fp64 path, the kernels inside the bound, tightness. */
static void soundness(const char *kv, const char *dist, double scale, size_t group, uint64_t seed, double *ratios,
                      size_t *nratios)
{
    qc_tensor_set in = {0}, out = {0};
    if (run_gemm(kv, seed, dist, scale, &in, &out, NULL)) {
        failures++;
        return;
    }
    qc_tensor *c = qc_set_find(&out, "c"), *bd = qc_set_find(&out, "c.bound");
    qc_tensor *ta = qc_set_find(&out, "stage.dequant.a"), *tb = qc_set_find(&out, "stage.dequant.b");
    float alpha = *(float *)qc_set_find(&out, "stage.dequant.alpha")->data;
    const float *bias = qc_set_find(&in, "bias")->data;
    int has_bias = strstr(kv, "bias=1") != NULL;
    qc_format of = (qc_format)qc_format_from_name(c->dtype);
    size_t m = (size_t)ta->shape[0], k = (size_t)ta->shape[1], n = (size_t)tb->shape[0];
    double *ar = malloc((k + 1) * sizeof *ar), *br = malloc((k + 1) * sizeof *br);
    double worst_fp64 = 0;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t l = 0; l < k; l++) {
                ar[l] = ((double *)ta->data)[i * k + l] * alpha; /* exact: alpha has 24 bits, operands <= 28 */
                br[l] = ((double *)tb->data)[j * k + l];
                s += fabs(ar[l] * br[l]);
            }
            ar[k] = has_bias ? bias[j] : 0, br[k] = 1;
            double exact = qcx_dot_mpfr(ar, br, k + 1);
            int64_t e = (int64_t)(i * n + j);
            double bound = ((double *)bd->data)[e], expected = value_out(c, e, of);
            double y64 = alpha * qcx_dot_mpfr(((double *)ta->data) + i * k, br, k); /* as qcx_gemm */
            (void)y64;
            /* the fp64 reference output is the correctly rounded exact value (or within one output rounding) */
            double ref_err = fabs(expected - exact);
            CHECK(ref_err <= bound || bound == 0, "%s seed %llu (%zu, %zu): reference off the exact value by %g > %g",
                  kv, (unsigned long long)seed, i, j, ref_err, bound);
            if (bound == 0) /* proven exact: the accumulator holds exact, and the output is it rounded once */
                CHECK((double)(float)exact == exact && expected == out_of_float((float)exact, of),
                      "%s (%zu, %zu): bound 0 but expected %.17g != RN(exact %.17g)", kv, i, j, expected, exact);
            double outs[4];
            for (size_t l = 0; l < k; l++)
                ar[l] = ((double *)ta->data)[i * k + l];
            kernels(ar, br, k, group, alpha, has_bias ? bias[j] : 0, of, outs);
            double maxerr = 0;
            int grouped = strstr(kv, "model=grouped") != NULL; /* only the per-group kernel claims it */
            for (int q = grouped; q < (grouped ? 2 : 4); q++) {
                double err = fabs(outs[q] - expected);
                CHECK(err <= bound, "%s seed %llu (%zu, %zu) kernel %d: |%.9g - %.9g| = %g > bound %g", kv,
                      (unsigned long long)seed, i, j, q, outs[q], expected, err, bound);
                maxerr = err > maxerr ? err : maxerr;
            }
            if (maxerr > 0 && *nratios < 200000)
                ratios[(*nratios)++] = bound / maxerr;
            (void)s;
        }
    /* fp64 path: dgemm against MPFR on every element of the fp64 values it returns */
    double *y = malloc((m * n + 1) * sizeof *y), *sm = malloc((m * n + 1) * sizeof *sm);
    qcx_gemm(m, n, k, ta->data, tb->data, 1.0, NULL, y, sm);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double ex = qcx_dot_mpfr((double *)ta->data + i * k, (double *)tb->data + j * k, k);
            double g53 = (double)(k + 2) * 0x1p-53 / (1 - (double)(k + 2) * 0x1p-53);
            double err = fabs(y[i * n + j] - ex), lim = g53 * sm[i * n + j];
            CHECK(err <= lim, "%s: dgemm (%zu, %zu) off MPFR by %g > gamma53 * s = %g", kv, i, j, err, lim);
            double sx = qcx_absdot_mpfr_up((double *)ta->data + i * k, (double *)tb->data + j * k, k);
            CHECK(sm[i * n + j] >= sx, "%s (%zu, %zu): magnitude bound %a below the exact sum %a", kv, i, j,
                  sm[i * n + j], sx);
            if (sx > 0 && n_sloose < sizeof sloose / sizeof sloose[0])
                sloose[n_sloose++] = sm[i * n + j] / sx;
            double b = ((double *)bd->data)[i * n + j];
            if (b > 0 && err / b > worst_fp64)
                worst_fp64 = err / b;
        }
    CHECK(worst_fp64 < 1e-6, "%s: the fp64 path's error reaches %g of the bound", kv, worst_fp64);
    printf("  %-78s fp64 error / bound <= %.2g\n", kv, worst_fp64);
    free(y), free(sm), free(ar), free(br);
    qc_set_free(&in);
    qc_set_free(&out);
}

typedef struct soundness_case {
    const char *kv, *dist;
    double scale;
    size_t group;
} soundness_case;

/* soundness() on each case (seeds seed0, seed0 + 1, ...), then the tightness over all of them:
 * the median and the least of bound / kernel error over the elements with a nonzero error, which
 * must be enough to judge (> 100). */
static void soundness_and_tightness(const char *what, const soundness_case *cs, size_t n, uint64_t seed0,
                                    double *ratios)
{
    size_t nr = 0;
    for (size_t i = 0; i < n; i++)
        soundness(cs[i].kv, cs[i].dist, cs[i].scale, cs[i].group, seed0 + i, ratios, &nr);
    qsort(ratios, nr, sizeof *ratios, cmp_double);
    printf("tightness (%s): median bound / max kernel error = %.3g over %zu elements (min %.3g)\n", what,
           nr ? ratios[nr / 2] : 0.0, nr, nr ? ratios[0] : 0.0);
    CHECK(nr > 100, "%s: enough elements with a nonzero kernel error to judge tightness (%zu)", what, nr);
}

static void test_soundness(void)
{
    static const soundness_case inst[] = {
        {"kind=fp8_tensor,m=6,n=9,k=512,out=f32,bias=1", "normal", 1, 512},
        {"kind=fp8_rowwise,m=6,n=9,k=1000,out=bf16,bias=1", "outliers", 1, 1000},
        {"kind=fp8_rowwise,m=5,n=7,k=64,out=f16,bias=0", "normal", 4, 64},
        {"kind=fp8_block,m=7,n=130,k=384,out=f32,bias=1", "normal", 1, 128},
        {"kind=fp8_block,m=3,n=20,k=2048,out=bf16,bias=0", "outliers", 1, 128},
        {"kind=mxfp8,m=6,n=9,k=320,out=f32,bias=0", "normal", 1, 32},
        {"kind=mxfp4_bf16,m=6,n=9,k=320,out=f32,bias=1", "uniform", 2, 32},
        {"kind=nvfp4,m=6,n=9,k=272,out=f32,bias=1", "normal", 1, 16},
        {"kind=nvfp4,m=4,n=11,k=1024,out=bf16,bias=0", "outliers", 1, 16},
    };
    static const soundness_case grouped[] = {
        {"kind=fp8_block,m=3,n=20,k=2048,out=f32,bias=0,model=grouped", "outliers", 1, 128},
        {"kind=fp8_block,m=5,n=40,k=7168,out=f32,bias=1,model=grouped", "normal", 1, 128},
        {"kind=nvfp4,m=4,n=11,k=1024,out=f32,bias=0,model=grouped", "normal", 1, 16},
        {"kind=mxfp8,m=6,n=9,k=320,out=f32,bias=1,model=grouped", "normal", 1, 32},
        {"kind=mxfp4_bf16,m=6,n=9,k=2048,out=f32,bias=0,model=grouped", "uniform", 2, 32},
    };
    double *ratios = malloc(200000 * sizeof *ratios);
    soundness_and_tightness("default model", inst, sizeof inst / sizeof inst[0], 1000, ratios);
    soundness_and_tightness("model=grouped, per-group kernel, f32 out", grouped, sizeof grouped / sizeof grouped[0],
                            2000, ratios);
    qsort(sloose, n_sloose, sizeof *sloose, cmp_double);
    printf("magnitude bound s / exact sum |a||b| (dgemm.c's K-block norms): median %.3g, max %.3g over %zu\n",
           n_sloose ? sloose[n_sloose / 2] : 0.0, n_sloose ? sloose[n_sloose - 1] : 0.0, n_sloose);
    free(ratios);
}

/* A random double of magnitude 2^[lo, hi) with a random 53-bit significand and sign. */
static double rand_mag(uint64_t *st, int lo, int hi)
{
    uint64_t r = qc_rng_next(st);
    double m = 1 + (double)(r >> 12) * 0x1p-52;
    return ldexp(r & 1 ? -m : m, lo + (int)(qc_rng_next(st) % (uint64_t)(hi - lo)));
}

/* The magnitude sum s of qcx_gemm (dgemm.c's block bound, or its exact fallback) is never below the
 * exact |alpha| sum |a||b| + |bias|, which MPFR gives rounded up (a double is above the exact sum iff
 * it is above that). Adversarial instances: the block bound's worst rounding (every square and
 * product of 1 + 2^-27 rounds down, so without its inflation s would be below the exact sum there;
 * scaled by 2^100 the norm products run in fp64, unscaled in fp32),
 * Cauchy-Schwarz and Hölder exactly tight, huge and tiny magnitudes on both sides of the block
 * range [2^-480, 2^480], products in the subnormal range and past DBL_MAX, a subnormal |alpha| s,
 * cancellation (y near 0, s large), magnitudes 2^800 apart in one block, supports that share no K
 * block, K not a multiple of 16. Also: y within gamma53(K) s of the MPFR dot, and s = 0 exactly for
 * an all-zero row. */
static void test_magnitude_bound(void)
{
    enum { WORST_ROUNDING, WORST_ROUNDING_F32, PROPORTIONAL, ONE_FLAT, NORMAL, HUGE_EDGE, HUGE_OVER, TINY_IN,
           TINY_UNDER,
           ALPHA_SUBNORMAL, CANCEL, SPREAD, DISJOINT, NKIND };
    static const char *names[NKIND] = {"worst rounding (fp64 norm products)", "worst rounding (fp32 norm products)",
                                       "a = b (Cauchy-Schwarz tight)", "b flat (Hölder tight)",
                                       "normal", "huge, around 2^480", "huge, products past DBL_MAX",
                                       "tiny, in range", "tiny, products subnormal", "alpha 2^-149, bias",
                                       "cancellation", "2^400 and 2^-400 in one block", "disjoint supports"};
    static const size_t ks[] = {64, 17, 1000, 1, 15, 33, 130};
    uint64_t st = 42;
    for (int kind = 0; kind < NKIND; kind++)
        for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
            size_t m = 3, n = 4, k = ks[ki];
            double *a = malloc(m * k * 8 + 8), *b = malloc(n * k * 8 + 8);
            double *y = malloc(m * n * 8), *s = malloc(m * n * 8);
            double *xa = malloc((k + 1) * 8), *xb = malloc((k + 1) * 8), bias[4] = {0, 0, 0, 0}, alpha = 1;
            for (size_t i = 0; i < m * k; i++) {
                size_t l = i % k;
                switch (kind) {
                case WORST_ROUNDING: a[i] = ldexp(1 + 0x1p-27, 100); break; /* > 2^45: fp64 products */
                case WORST_ROUNDING_F32: a[i] = 1 + 0x1p-27; break;
                case PROPORTIONAL: case ONE_FLAT: case NORMAL: case CANCEL: a[i] = rand_mag(&st, -3, 3); break;
                case HUGE_EDGE: a[i] = rand_mag(&st, 470, 490); break;
                case HUGE_OVER: a[i] = rand_mag(&st, 500, 520); break;
                case TINY_IN: a[i] = rand_mag(&st, -480, -470); break;
                case TINY_UNDER: a[i] = rand_mag(&st, -560, -520); break;
                case ALPHA_SUBNORMAL: a[i] = rand_mag(&st, -470, -460); break;
                case SPREAD: a[i] = l % 16 == 3 ? rand_mag(&st, 400, 401) : rand_mag(&st, -400, -399); break;
                default: a[i] = l % 2 ? 0 : rand_mag(&st, -2, 2); break; /* DISJOINT */
                }
            }
            for (size_t i = 0; i < n * k; i++) {
                size_t l = i % k;
                switch (kind) {
                case WORST_ROUNDING: b[i] = ldexp(1 + 0x1p-27, 100); break;
                case WORST_ROUNDING_F32: b[i] = 1 + 0x1p-27; break;
                case PROPORTIONAL: b[i] = (i / k % 2 ? -0.5 : 2) * a[(i / k % m) * k + l]; break;
                case ONE_FLAT: b[i] = i / k % 2 ? -0.75 : 3; break;
                case CANCEL: b[i] = l < k / 2 ? 1 : -1; break;
                case SPREAD: b[i] = l % 16 == 5 ? rand_mag(&st, 400, 401) : rand_mag(&st, -400, -399); break;
                case DISJOINT: b[i] = l % 2 ? rand_mag(&st, -2, 2) : 0; break;
                default: b[i] = kind == HUGE_EDGE || kind == HUGE_OVER ? rand_mag(&st, 460, 482)
                               : kind == TINY_IN || kind == TINY_UNDER || kind == ALPHA_SUBNORMAL
                                   ? rand_mag(&st, -480, -470)
                                   : rand_mag(&st, -3, 3);
                }
            }
            if (kind == CANCEL) /* row 0 of A: the second half repeats the first, so row 0 of y is 0 */
                for (size_t l = k / 2; l < k && k > 1; l++)
                    a[l] = a[l - k / 2];
            if (kind == ALPHA_SUBNORMAL)
                alpha = 0x1p-149, bias[1] = 0x1p-1074, bias[2] = 3;
            for (size_t l = 0; l < k; l++)
                a[(m - 1) * k + l] = kind == DISJOINT ? 0 : a[(m - 1) * k + l]; /* an all-zero row */
            if (qcx_gemm(m, n, k, a, b, alpha, kind == ALPHA_SUBNORMAL ? bias : NULL, y, s)) {
                CHECK(0, "qcx_gemm out of memory");
                break;
            }
            double worst = INFINITY;
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    for (size_t l = 0; l < k; l++)
                        xa[l] = alpha * a[i * k + l], xb[l] = b[j * k + l]; /* alpha a exact: a power of two */
                    xa[k] = bias[j], xb[k] = 1;
                    double ex = qcx_absdot_mpfr_up(xa, xb, k + 1), got = s[i * n + j];
                    CHECK(got >= ex, "%s, k=%zu (%zu, %zu): s = %a below the exact magnitude sum %a", names[kind], k, i,
                          j, got, ex);
                    if (ex > 0 && isfinite(ex))
                        worst = got / ex < worst ? got / ex : worst;
                    double dot = qcx_dot_mpfr(xa, xb, k + 1), g53 = (double)(k + 2) * 0x1p-53;
                    CHECK(!isfinite(got) || fabs(y[i * n + j] - dot) <= g53 / (1 - g53) * got + 0x1p-1070,
                          "%s, k=%zu (%zu, %zu): y = %a off the exact dot %a by more than gamma53 s", names[kind], k,
                          i, j, y[i * n + j], dot);
                    if (kind == DISJOINT && i == m - 1)
                        CHECK(got == 0, "disjoint, k=%zu: s of an all-zero row is %a, not 0", k, got);
                }
            /* sensitivity: s is within rounding of the exact sum here (fp64: the 2^-48 margin and phi;
             * fp32: also the norms rounded up to fp32 and gamma32(G)) */
            if (kind == WORST_ROUNDING && ki == 0)
                CHECK(worst < 1 + 0x1p-40, "worst rounding: s / exact = 1 + %a, expected within 2^-40", worst - 1);
            if (kind == WORST_ROUNDING_F32 && ki == 0)
                CHECK(worst < 1 + 0x1p-18, "worst rounding, fp32: s / exact = 1 + %a, expected within 2^-18",
                      worst - 1);
            if (ki == 0 && isfinite(worst))
                printf("  magnitude bound, %-38s k=%-5zu min s / exact = 1 + %.3g\n", names[kind], k, worst - 1);
            free(a), free(b), free(y), free(s), free(xa), free(xb);
        }
}

/* Cancellation the random instances do not reach: a[0] = 2^20, then K-2 terms 1 + 2^-7 that a
 * sequential fp32 sum rounds down by 2^-7 each (the ulp at 2^20 is 2^-3), then -2^20: the
 * accumulation error is K 2^-7 against |y| ~ K, so the bound's gamma(K) s term must cover it alone
 * (the output rounding term cannot). B = 1 exactly (MXFP4 code 1.0 under scale 2^-2). */
static void test_cancellation(void)
{
    enum { K = 1024 };
    qc_tensor_set in = {0}, out = {0};
    int64_t ak[2] = {1, K}, bk[2] = {1, K}, nb = 1;
    qc_tensor a, b, bias;
    qc_tensor_alloc(&a, "a", QC_ST_F32, "f32", 2, ak);
    qc_tensor_alloc(&b, "b", QC_ST_F32, "f32", 2, bk);
    qc_tensor_alloc(&bias, "bias", QC_ST_F32, "f32", 1, &nb);
    float *av = a.data, *bv = b.data;
    for (int i = 0; i < K; i++)
        av[i] = 1 + 0x1p-7f, bv[i] = 1;
    av[0] = 0x1p20f, av[K - 1] = -0x1p20f;
    qc_set_add(&in, &a), qc_set_add(&in, &b), qc_set_add(&in, &bias);
    qc_params p = {0};
    char err[256];
    qc_params_parse(&p, "kind=mxfp4_bf16,m=1,n=1,k=1024,out=f32,bias=0,stages=1", err, sizeof err);
    qc_op_call c = {&p, &in, &out, err, sizeof err, 0};
    if (qc_op_find("gemm")->reference(&c)) {
        CHECK(0, "cancellation instance refused: %s", err);
        return;
    }
    double *da = qc_set_find(&out, "stage.dequant.a")->data, *db = qc_set_find(&out, "stage.dequant.b")->data;
    double bound = *(double *)qc_set_find(&out, "c.bound")->data, expected = value_out(qc_set_find(&out, "c"), 0, QC_F32);
    double outs[4];
    kernels(da, db, K, 32, 1.0f, 0.0f, QC_F32, outs);
    double err0 = fabs(outs[0] - expected);
    CHECK(err0 > 1 && err0 <= bound, "sequential fp32 error %g must be large (> 1) and within the bound %g", err0, bound);
    printf("cancellation: sequential fp32 error %.4g, bound %.4g (ratio %.3g)\n", err0, bound, bound / err0);
    qc_set_free(&in), qc_set_free(&out);
}

/* Integer fills with power-of-two scales: bound 0, output = the int64 dot of the inputs. */
static void exact_case(const char *kv, double scale)
{
    qc_tensor_set in = {0}, out = {0};
    if (run_gemm(kv, 77, "integers", scale, &in, &out, NULL)) {
        failures++;
        return;
    }
    qc_tensor *c = qc_set_find(&out, "c"), *bd = qc_set_find(&out, "c.bound");
    const qc_tensor *a = qc_set_find(&in, "a"), *b = qc_set_find(&in, "b");
    qc_format of = (qc_format)qc_format_from_name(c->dtype);
    int64_t m = a->shape[0], k = a->shape[1], n = b->shape[0], zero = 0, bad = 0;
    const float *bias = qc_set_find(&in, "bias")->data;
    int has_bias = strstr(kv, "bias=1") != NULL;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t dot = has_bias ? (int64_t)bias[j] : 0;
            for (int64_t l = 0; l < k; l++)
                dot += (int64_t)((const float *)a->data)[i * k + l] * (int64_t)((const float *)b->data)[j * k + l];
            zero += ((double *)bd->data)[i * n + j] == 0;
            bad += value_out(c, i * n + j, of) != (double)dot;
        }
    CHECK(zero == m * n, "%s: %lld of %lld bounds are zero (expected all)", kv, (long long)zero, (long long)(m * n));
    CHECK(bad == 0, "%s: %lld outputs differ from the integer dot product", kv, (long long)bad);
    qc_set_free(&in);
    qc_set_free(&out);
}

static void test_exact_by_construction(void)
{
    exact_case("kind=fp8_tensor,scale_a=1,scale_b=1,m=7,n=33,k=200,out=f32,bias=1", 8);
    exact_case("kind=fp8_block,ue8m0=1,m=7,n=130,k=384,out=f32,bias=1", 8);
    exact_case("kind=fp8_block,ue8m0=1,m=3,n=40,k=128,out=bf16,bias=0", 1); /* |dot| <= 128: bf16 */
    exact_case("kind=mxfp8,m=5,n=40,k=160,out=f32,bias=0", 8);
    exact_case("kind=mxfp4_bf16,m=5,n=40,k=160,out=f32,bias=1", 3);
}

/* The bound can fail: one K block's weight scale read one block over is outside it. */
static void test_bound_can_fail(void)
{
    qc_tensor_set in = {0}, out = {0}, in2 = {0}, got = {0};
    const char *kv = "kind=fp8_block,m=4,n=16,k=384,out=bf16,bias=0";
    if (run_gemm(kv, 5, "normal", 1, &in, &out, NULL) ||
        run_gemm(kv, 5, "normal", 1, &in2, &got, "mutant:gemm-scale-block-off-by-one")) {
        failures++;
        return;
    }
    qc_tensor *e = qc_set_find(&out, "c"), *g = qc_set_find(&got, "c"), *bd = qc_set_find(&out, "c.bound");
    int64_t outside = 0;
    for (int64_t i = 0; i < qc_tensor_numel(e); i++)
        outside += fabs(value_out(e, i, QC_BF16) - value_out(g, i, QC_BF16)) > ((double *)bd->data)[i];
    CHECK(outside > qc_tensor_numel(e) / 2, "a wrong scale block leaves the bound on most elements (%lld of %lld)",
          (long long)outside, (long long)qc_tensor_numel(e));
    qc_set_free(&in), qc_set_free(&out), qc_set_free(&in2), qc_set_free(&got);
}

/* model=sgl-cpu: a kernel that rounds the dequantized weights to bf16 and dots in fp32 is inside
 * the modelled bound, and outside the exact reference's on most elements (the bf16 rounding of a
 * weight, 2^-9 relative, is far above gamma(K) u): the model is what makes that kernel checkable. */
static void test_sgl_cpu_model(void)
{
    const char *kv = "kind=fp8_block,m=4,n=16,k=512,out=f32,bias=0";
    char kvm[128];
    snprintf(kvm, sizeof kvm, "%s,model=sgl-cpu", kv);
    qc_tensor_set in = {0}, out = {0}, in2 = {0}, outm = {0};
    if (run_gemm(kv, 9, "normal", 1, &in, &out, NULL) || run_gemm(kvm, 9, "normal", 1, &in2, &outm, NULL)) {
        failures++;
        return;
    }
    const qc_tensor *a = qc_set_find(&in, "a");
    double *wb = qc_set_find(&outm, "stage.dequant.b")->data, *bx = qc_set_find(&out, "c.bound")->data;
    double *bm = qc_set_find(&outm, "c.bound")->data;
    qc_cast_policy p = qcref_default_policy();
    int64_t inside_model = 0, outside_exact = 0, n = 16, k = 512;
    for (int64_t i = 0; i < 4; i++)
        for (int64_t j = 0; j < n; j++) {
            float acc = 0;
            for (int64_t l = 0; l < k; l++) {
                float av = qcref_decode(QC_BF16, qcref_encode(QC_BF16, ((const float *)a->data)[i * k + l], &p), &p);
                acc += av * (float)wb[j * k + l]; /* bf16 x bf16 is exact in fp32 */
            }
            double em = value_out(qc_set_find(&outm, "c"), i * n + j, QC_F32);
            double ex = value_out(qc_set_find(&out, "c"), i * n + j, QC_F32);
            inside_model += fabs(acc - em) <= bm[i * n + j];
            outside_exact += fabs(acc - ex) > bx[i * n + j];
        }
    CHECK(inside_model == 4 * n, "the sgl-cpu kernel is inside the modelled bound (%lld of %lld)",
          (long long)inside_model, (long long)(4 * n));
    CHECK(outside_exact > 2 * n, "and outside the exact (fp8 x fp8) bound on most elements (%lld of %lld)",
          (long long)outside_exact, (long long)(4 * n));
    qc_set_free(&in), qc_set_free(&out), qc_set_free(&in2), qc_set_free(&outm);
}

/* Runs op on the inputs of `in` with the reference and with backend; the stage table of the pair. */
static void stage_table(const char *op, const char *kv, qc_tensor_set *in, const char *backend, char *table,
                        size_t len)
{
    qc_params p = {0};
    char err[512];
    qc_params_parse(&p, kv, err, sizeof err);
    qc_tensor_set e = {0}, g = {0};
    qc_op_call ce = {&p, in, &e, err, sizeof err, 0}, cg = {&p, in, &g, err, sizeof err, 0};
    const qc_backend *b = NULL;
    for (int i = 0; i < qc_backend_count(); i++)
        if (strcmp(qc_backend_at(i)->name, backend) == 0)
            b = qc_backend_at(i);
    table[0] = '\0';
    if (qc_op_find(op)->reference(&ce) || !b || qc_backend_call(b, op, &cg))
        snprintf(table, len, "refused: %s", err);
    else
        qc_stage_report(&p, &e, &g, table, len, NULL);
    qc_set_free(&e), qc_set_free(&g);
}

static void add_normal(qc_tensor_set *in, const qc_params *p, const char *name, int ndim, const char *d0,
                       const char *d1, const char *d2, double scale, uint64_t seed)
{
    qc_input_spec s = {0};
    char err[256];
    snprintf(s.name, sizeof s.name, "%s", name);
    s.ndim = ndim;
    snprintf(s.shape[0], sizeof s.shape[0], "%s", d0);
    snprintf(s.shape[1], sizeof s.shape[1], "%s", d1);
    snprintf(s.shape[2], sizeof s.shape[2], "%s", d2);
    s.storage = QC_ST_F32;
    snprintf(s.fill, sizeof s.fill, "normal");
    snprintf(s.scale, sizeof s.scale, "%g", scale);
    qc_tensor t;
    if (qc_generate(&s, p, seed, &t, err, sizeof err) == 0)
        qc_set_add(in, &t);
}

/* The investigation table names the first diverging stage and, for a wrong scale block, the
 * period and the blocks along K; a wrong W13 half order first shows at the activation, a masked
 * group scored 0 at the routing. */
static void test_stage_table(void)
{
    char table[4096];
    const char *kv = "kind=fp8_block,stages=1,out=f32,m=1,n=130,k=384";
    qc_params p = {0};
    char err[128];
    qc_params_parse(&p, kv, err, sizeof err);
    qc_tensor_set in = {0};
    add_normal(&in, &p, "a", 2, "m", "k", "", 1, 3);
    add_normal(&in, &p, "b", 2, "n", "k", "", 0.1, 4);
    stage_table("gemm", kv, &in, "mutant:gemm-scale-block-off-by-one", table, sizeof table);
    CHECK(strstr(table, "stage.dequant.b") && strstr(table, "first divergence; error block-constant along K in "
                                                            "blocks of 128 (blocks 0,1)"),
          "a scale read one block over: period 128, blocks 0 and 1:\n%s", table);
    qc_set_free(&in);

    const char *mk = "recipe=nvfp4,route=deepseek_v3,experts=8,n_group=4,topk_group=2,top_k=2,rsf=2.5,act=silu,"
                     "tokens=7,hidden=64,inter=80";
    qc_params mp = {0};
    qc_params_parse(&mp, mk, err, sizeof err);
    qc_tensor_set min = {0};
    add_normal(&min, &mp, "x", 2, "tokens", "hidden", "", 1, 5);
    add_normal(&min, &mp, "logits", 2, "tokens", "experts", "", 2, 6);
    add_normal(&min, &mp, "route_bias", 1, "experts", "", "", 3, 7);
    add_normal(&min, &mp, "w13", 3, "experts", "2 * inter", "hidden", 0.12, 8);
    add_normal(&min, &mp, "w2", 3, "experts", "hidden", "inter", 0.11, 9);
    stage_table("moe", mk, &min, "mutant:moe-gate-up-swapped", table, sizeof table);
    const char *act = strstr(table, "stage.act.a"), *first = strstr(table, "first divergence");
    CHECK(act && first && first > act && strstr(table, "stage.gemm1.h ") && strstr(strstr(table, "stage.gemm1.h "), "=\n"),
          "gate/up swapped: gemm1 agrees, the activation is the first divergence:\n%s", table);
    /* top-4 of the 4 candidates of the 2 kept groups: a masked expert scored 0 displaces any
     * candidate whose biased score is negative (route_bias ~ N(0, 9)) */
    const char *mk4 = "recipe=nvfp4,route=deepseek_v3,experts=8,n_group=4,topk_group=2,top_k=4,rsf=2.5,act=silu,"
                      "tokens=7,hidden=64,inter=80";
    stage_table("moe", mk4, &min, "mutant:moe-masked-groups-zero", table, sizeof table);
    const char *ids = strstr(table, "stage.route.ids");
    CHECK(ids && strstr(ids, "first divergence") && strstr(ids, "first divergence") < strstr(table, "stage.route.weights"),
          "masked groups scored 0: the routing ids are the first divergence:\n%s", table);
    qc_set_free(&min);
}

/* Rule bound on values: the same infinity meets (Inf - Inf is NaN, never <= a bound), the
 * other infinity or a finite value beyond the bound does not, NaN meets only NaN. */
static void test_bound_rule(void)
{
    qc_compare_spec spec = {0};
    snprintf(spec.output, sizeof spec.output, "c");
    snprintf(spec.rule, sizeof spec.rule, "bound");
    spec.budget_class = -1;
    int64_t n = 4;
    qc_tensor e, g, b;
    qc_tensor_alloc(&e, "c", QC_ST_F32, "f32", 1, &n);
    qc_tensor_alloc(&g, "c", QC_ST_F32, "f32", 1, &n);
    qc_tensor_alloc(&b, "c.bound", QC_ST_F64, "f64", 1, &n);
    float ev[4] = {INFINITY, 1.0f, NAN, 2.0f}, gv[4] = {INFINITY, 1.5f, NAN, 2.25f};
    double bv[4] = {1, 0.5, 0, 0.125};
    memcpy(e.data, ev, 16), memcpy(g.data, gv, 16), memcpy(b.data, bv, 32);
    qc_params p = {0};
    qc_compare_extra x = {0};
    x.bound = &b;
    qc_compare_out o;
    char detail[1024] = "";
    qc_compare(&spec, &p, NULL, &e, &g, &x, 4, &o, detail, sizeof detail);
    CHECK(o.mismatches == 1 && o.per_class[QC_MM_OUT_OF_BOUND] == 1,
          "Inf meets Inf, 1.5 is within 0.5 of 1, NaN meets NaN, 2.25 is 0.25 > 0.125 from 2: 1 mismatch, got %lld",
          (long long)o.mismatches);
    ((float *)g.data)[0] = -INFINITY;
    detail[0] = '\0';
    qc_compare(&spec, &p, NULL, &e, &g, &x, 4, &o, detail, sizeof detail);
    CHECK(o.mismatches == 2, "-Inf does not meet +Inf (%lld mismatches)", (long long)o.mismatches);
    qc_tensor_free(&e), qc_tensor_free(&g), qc_tensor_free(&b);
}

/* Near the top of f16 (max 65504, ulp 32 there; RNE overflows from 65520 on) the comparator reads
 * +-Inf as +-65520: an Inf within the bound of its expected value passes, and 0, the other Inf or
 * a finite value beyond the bound fail (an Inf bound had passed any value but NaN). */
static void test_bound_at_overflow(void)
{
    qc_compare_spec spec = {0};
    snprintf(spec.output, sizeof spec.output, "c");
    snprintf(spec.rule, sizeof spec.rule, "bound");
    spec.budget_class = -1;
    static const struct {
        uint16_t expected, got;
        double bound;
        int pass;
        const char *what;
    } rows[] = {{0x7C00, 0x7BFF, 20, 1, "+Inf expected, max 65504 got, bound 20 >= 16"},
                {0x7BFF, 0x7C00, 20, 1, "max expected, +Inf got, bound 20"},
                {0xFC00, 0xFBFF, 20, 1, "-Inf expected, -max got"},
                {0x7C00, 0x7BFE, 20, 0, "+Inf expected, 65472 got: 48 > 20"},
                {0x7C00, 0x0000, 1e4, 0, "+Inf expected, 0 got"},
                {0x7C00, 0xFC00, 1e4, 0, "+Inf expected, -Inf got"},
                {0x7BFF, 0x7C00, 10, 0, "max expected, +Inf got, bound 10 < 16"}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t n = 1;
        qc_tensor e, g, b;
        qc_tensor_alloc(&e, "c", QC_ST_U16, "f16", 1, &n);
        qc_tensor_alloc(&g, "c", QC_ST_U16, "f16", 1, &n);
        qc_tensor_alloc(&b, "c.bound", QC_ST_F64, "f64", 1, &n);
        *(uint16_t *)e.data = rows[i].expected, *(uint16_t *)g.data = rows[i].got, *(double *)b.data = rows[i].bound;
        qc_params p = {0};
        qc_compare_extra x = {.bound = &b};
        qc_compare_out o;
        char detail[1024] = "";
        qc_compare(&spec, &p, NULL, &e, &g, &x, 4, &o, detail, sizeof detail);
        CHECK((o.mismatches == 0) == rows[i].pass, "%s: %s (%lld mismatches)", rows[i].what,
              rows[i].pass ? "passes" : "fails", (long long)o.mismatches);
        qc_tensor_free(&e), qc_tensor_free(&g), qc_tensor_free(&b);
    }
}

/* ---- int8_rowwise: a second, deliberately plain implementation of sgl-kernel's W8A8 path
 * (csrc/cpu/vec.h quantize_row_int8, csrc/cpu/gemm_int8.cpp store lambda), in fp64 / int64
 * arithmetic rounded by hand, against the op; bit for bit. ---- */

static float bf16_of(float x) /* RNE by integer arithmetic (finite x) */
{
    uint32_t u;
    memcpy(&u, &x, 4);
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    memcpy(&x, &u, 4);
    return x;
}

static double round_half(double v, int even) /* v to an integer, ties even or away */
{
    double f = floor(v), d = v - f;
    if (d != 0.5)
        return d < 0.5 ? f : f + 1;
    return even ? (fmod(f, 2) == 0 ? f : f + 1) : (v > 0 ? f + 1 : f);
}

static int slow_quant_row(const float *x, int64_t k, int even, int *q, float *scale)
{
    double amax = 1e-7f;
    for (int64_t i = 0; i < k; i++)
        amax = fabs(x[i]) > amax ? fabs(x[i]) : amax;
    *scale = (float)(amax / 127.0); /* one rounding of the exact quotient (53 >= 2 * 24 + 2) */
    float inv = (float)(127.0 / amax);
    for (int64_t i = 0; i < k; i++) {
        q[i] = (int)round_half((double)(float)((double)x[i] * inv), even);
        if (q[i] < -127 || q[i] > 127)
            return 1;
    }
    return 0;
}

/* fl32(p + b) with one rounding: the fp64 sum rounded to odd (TwoSum error), then to fp32. */
static float add_once(double p, double b)
{
    double s = p + b, bb = s - p, e = (p - (s - bb)) + (b - bb);
    if (e != 0) {
        uint64_t u;
        memcpy(&u, &s, 8);
        if (!(u & 1)) {
            s = nextafter(s, e > 0 ? INFINITY : -INFINITY);
        }
    }
    return (float)s;
}

static float slow_epilogue(int64_t dot, float as, float bs, const float *bias)
{
    float v = (float)(double)dot;
    v = (float)((double)v * as);
    return bias ? add_once((double)v * bs, *bias) : (float)((double)v * bs);
}

static void int8_case(const char *kv, int64_t m, int64_t n, int64_t k, int even, int has_bias, uint64_t seed)
{
    qc_tensor_set in = {0}, out = {0};
    if (run_gemm(kv, seed, "normal", 3, &in, &out, NULL)) {
        failures++;
        return;
    }
    const float *a = qc_set_find(&in, "a")->data, *b = qc_set_find(&in, "b")->data;
    const float *bias = qc_set_find(&in, "bias")->data;
    const qc_tensor *c = qc_set_find(&out, "c");
    int *qa = malloc((size_t)(m * k + 1) * sizeof *qa), *qb = malloc((size_t)(n * k + 1) * sizeof *qb);
    float *row = malloc((size_t)k * sizeof *row), *sa = malloc((size_t)(m + 1) * 4), *sb = malloc((size_t)(n + 1) * 4);
    int range = 0;
    for (int64_t i = 0; i < m; i++) {
        for (int64_t l = 0; l < k; l++)
            row[l] = bf16_of(a[i * k + l]);
        range |= slow_quant_row(row, k, even, qa + i * k, sa + i);
    }
    for (int64_t j = 0; j < n; j++)
        range |= slow_quant_row(b + j * k, k, even, qb + j * k, sb + j);
    CHECK(!range, "%s: a quantized value left [-127, 127] (seed %llu)", kv, (unsigned long long)seed);
    int64_t bad = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t dot = 0;
            for (int64_t l = 0; l < k; l++)
                dot += (int64_t)qa[i * k + l] * qb[j * k + l];
            double want = slow_epilogue(dot, sa[i], sb[j], has_bias ? bias + j : NULL);
            double got = value_out(c, i * n + j, c->storage == QC_ST_U16 ? QC_BF16 : QC_F32);
            want = out_of_float((float)want, c->storage == QC_ST_U16 ? QC_BF16 : QC_F32);
            if (got != want && bad++ == 0)
                printf("FAIL int8 %s [%lld, %lld] (seed %llu): expected %.9g got %.9g\n", kv, (long long)i,
                       (long long)j, (unsigned long long)seed, want, got);
        }
    if (bad)
        failures++;
    free(qa), free(qb), free(row), free(sa), free(sb);
    qc_set_free(&in), qc_set_free(&out);
}

static void test_int8_rowwise(void)
{
    /* hand-worked: amax 127 gives inv = 1 exactly; 2.5 is a tie (2 even, 3 away), -2.5 (-2, -3). */
    float x[4] = {127, 2.5f, -2.5f, 0.4f};
    int8_t q[4];
    float s = qcref_quantize_row_int8(x, 4, QC_INT8_TIES_EVEN, q);
    CHECK(s == 1.0f && q[0] == 127 && q[1] == 2 && q[2] == -2 && q[3] == 0, "quantize_row_int8 ties even: "
          "scale %g q %d %d %d %d", s, q[0], q[1], q[2], q[3]);
    qcref_quantize_row_int8(x, 4, QC_INT8_TIES_AWAY, q);
    CHECK(q[1] == 3 && q[2] == -3, "quantize_row_int8 ties away: %d %d", q[1], q[2]);
    float z[2] = {0, 0};
    s = qcref_quantize_row_int8(z, 2, QC_INT8_TIES_EVEN, q);
    CHECK(s == 1e-7f / 127.0f && q[0] == 0, "an all-zero row: amax = eps 1e-7, scale %g", s);
    /* the fused bias: 3 * 1 * (1 + 2^-23) + (-3) is 3 * 2^-23 exactly; unfused it would round first */
    float bias = -3.0f, e = qcref_int8_epilogue(3, 1.0f, 1 + 0x1p-23f, &bias);
    CHECK(e == 3 * 0x1p-23f, "epilogue fuses the bias (fmadd): %a", e);
    CHECK(qcref_int8_epilogue(16777217, 1.0f, 1.0f, NULL) == 16777216.0f, "int32 -> fp32 rounds to even");
    static const int64_t shapes[][3] = {{1, 1, 4}, {7, 130, 384}, {33, 16, 128}, {5, 33, 1000}, {2, 3, 7168}};
    for (int t = 0; t < 5; t++)
        for (int even = 0; even < 2; even++)
            for (int hb = 0; hb < 2; hb++) {
                char kv[160];
                snprintf(kv, sizeof kv, "kind=int8_rowwise,m=%lld,n=%lld,k=%lld,bias=%d,out=%s,int8_ties=%s",
                         (long long)shapes[t][0], (long long)shapes[t][1], (long long)shapes[t][2], hb,
                         t % 2 ? "bf16" : "f32", even ? "even" : "away");
                int8_case(kv, shapes[t][0], shapes[t][1], shapes[t][2], even, hb, 100 + (uint64_t)t);
            }
    qc_tensor_set in = {0}, out = {0};
    printf("(expected) ");
    CHECK(run_gemm("kind=int8_rowwise,m=1,n=1,k=65537", 1, "normal", 1, &in, &out, NULL) == 2,
          "k above QCREF_INT8_MAX_K is refused with exit 2");
    qc_set_free(&in), qc_set_free(&out);
}

int main(void)
{
    test_int8_rowwise();
    test_bound_rule();
    test_bound_at_overflow();
    test_sgl_cpu_model();
    test_stage_table();
    test_hand_values();
    test_exact_by_construction();
    test_bound_can_fail();
    if (!qcx_have_mpfr()) {
        printf("SKIP: the soundness test needs MPFR (ci/deps.sh installs libmpfr-dev)\n");
        return failures ? 1 : 77;
    }
    printf("blas: %s\n", qcx_blas_name());
    test_magnitude_bound();
    test_soundness();
    test_cancellation();
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
