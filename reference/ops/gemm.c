/* gemm.c: quantized GEMM reference math (docs/spec/formats.md §9): the kinds, the exact
 * operand values, the fp32-accumulation error bound and its exactness proof (gemm.h). */
#include "gemm.h"
#include "../arith/arith.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const qc_gemm_kind_info kinds[QC_GEMM_KIND_COUNT] = {
    {"fp8_tensor", QC_RECIPE_TENSOR, QC_RECIPE_TENSOR, 0,
     "formats.md §9.2 torch._scaled_mm TensorWise: (sa*sb)*(A_q@B_q); sglang apply_fp8_linear"},
    {"fp8_rowwise", QC_RECIPE_TOKEN, QC_RECIPE_TOKEN, 0,
     "formats.md §9.2 RowWise: acc * x_scale[m] * w_scale[n] (per-token x per-channel)"},
    {"fp8_block", QC_RECIPE_TOKEN_GROUP, QC_RECIPE_BLOCK, 128,
     "formats.md §9.1 w8a8_block_fp8_matmul: acc += dot(a, b)*a_s[m, g]*b_s[n/128, g] per 128-deep K block"},
    {"mxfp8", QC_RECIPE_MXFP8, QC_RECIPE_MXFP8, 32, "formats.md §9.3 MXFP8: e8m0 per 1x32 on both operands"},
    {"mxfp4_bf16", -1, QC_RECIPE_MXFP4, 32, "formats.md §9.3 MXFP4 weights (e8m0 per 1x32) x bf16 activations"},
    {"nvfp4", QC_RECIPE_NVFP4, QC_RECIPE_NVFP4, 16,
     "formats.md §9.3 NVFP4: alpha*sum (e2m1*sf_a)(e2m1*sf_b), alpha = fl32(input_scale*weight_scale_2)"},
    /* The recipes are not used: int8 has its own quantizer (qcref_quantize_row_int8). */
    {"int8_rowwise", QC_RECIPE_TOKEN, QC_RECIPE_TOKEN, 0,
     "sgl-kernel CPU int8_scaled_mm_cpu: per-token int8 activations (quantize_row_int8) x per-channel int8 "
     "weights, exact int32 dot, fp32 epilogue (acc - comp) * As[m] * Bs[n] (+ bias fused); bit-exact"},
};

const qc_gemm_kind_info *qcref_gemm_kind(int k) { return k >= 0 && k < QC_GEMM_KIND_COUNT ? &kinds[k] : NULL; }

int qcref_gemm_kind_from_name(const char *s)
{
    for (int k = 0; k < QC_GEMM_KIND_COUNT; k++)
        if (strcmp(kinds[k].name, s) == 0)
            return k;
    return -1;
}

static int is_pow2_or_zero(double s)
{
    int e;
    return s == 0 || (isfinite(s) && fabs(frexp(s, &e)) == 0.5);
}

/* The scale of element (i, j) of a recipe's canonical scale array (recipes.h), as a double. */
static double scale_at(qc_recipe r, const qc_recipe_policy *p, const qc_quantized *q, size_t i, size_t j)
{
    size_t cols = q->cols;
    switch (r) {
    case QC_RECIPE_TENSOR: return q->scale_f32[0];
    case QC_RECIPE_TOKEN: return q->scale_f32[i];
    case QC_RECIPE_TOKEN_GROUP: {
        size_t g = (size_t)p->group, ng = (cols + g - 1) / g;
        return q->scale_f32[i * ng + j / g];
    }
    case QC_RECIPE_BLOCK: {
        size_t bc = (size_t)p->block_c, nc = (cols + bc - 1) / bc;
        return q->scale_f32[(i / (size_t)p->block_r) * nc + j / bc];
    }
    case QC_RECIPE_NVFP4: /* the e4m3 block scale; the global scale is alpha's (formats.md §9.3) */
        return qcref_decode(QC_E4M3FN, q->scale_u8[i * (cols / (size_t)p->group) + j / (size_t)p->group], &p->sf_cast);
    default: /* MX: e8m0 under the dequantization decoder (recipes.h, mx.c) */
        return qcref_e8m0_decode(q->scale_u8[i * (cols / (size_t)p->group) + j / (size_t)p->group], p->dequant_e8m0);
    }
}

/* The scale is looked up once per run of elements that share it (run = the recipe's K group). */
void qcref_operand_f64(qc_recipe r, const qc_recipe_policy *p, const qc_quantized *q, double *out, int *pow2)
{
    double code[256];
    for (int c = 0; c < 256; c++)
        code[c] = qcref_decode(p->elem, (uint32_t)c, &p->cast);
    size_t run = r == QC_RECIPE_TENSOR || r == QC_RECIPE_TOKEN ? q->cols
                 : r == QC_RECIPE_BLOCK                        ? (size_t)p->block_c
                                                               : (size_t)p->group;
    for (size_t i = 0; i < q->rows; i++)
        for (size_t j0 = 0; j0 < q->cols; j0 += run) {
            double s = scale_at(r, p, q, i, j0);
            if (!is_pow2_or_zero(s))
                *pow2 = 0;
            size_t j1 = j0 + run < q->cols ? j0 + run : q->cols;
            for (size_t j = j0; j < j1; j++)
                out[i * q->cols + j] = qcref_fl32_mul(code[q->q[i * q->cols + j]], s);
        }
}

float qcref_gemm_alpha(qc_gemm_kind k, float gs_a, float gs_b) { return k == QC_GEMM_NVFP4 ? gs_a * gs_b : 1.0f; }

int qcref_lsb_exponent(double x)
{
    int e;
    double m = frexp(fabs(x), &e); /* x = m 2^e, m in [0.5, 1): m 2^53 is an integer */
    uint64_t mant = (uint64_t)ldexp(m, 53);
    return e - 53 + __builtin_ctzll(mant); /* mant != 0 */
}

int qcref_row_lsb(const double *row, size_t n)
{
    int g = INT32_MAX;
    for (size_t i = 0; i < n; i++)
        if (row[i] != 0 && isfinite(row[i])) {
            int l = qcref_lsb_exponent(row[i]);
            g = l < g ? l : g;
        }
    return g;
}

static double gamma_n(double n, double u) { return n * u / (1 - n * u); }

/* Unit roundoff, the smallest subnormal and the RNE overflow threshold (max + half an ulp) of
 * the output format. */
static void out_format(qc_format out, double *u, double *tiny, double *overflow)
{
    switch (out) {
    case QC_BF16: *u = 0x1p-8, *tiny = 0x1p-133, *overflow = 0x1.FFp127; break;
    case QC_F16: *u = 0x1p-11, *tiny = 0x1p-24, *overflow = 65520.0; break;
    default: *u = 0x1p-24, *tiny = 0x1p-149, *overflow = 0x1.FFFFFFp127; break;
    }
}

double qcref_gemm_bound(double y64, double s, size_t k, qc_format out, int exact)
{
    if (exact || !isfinite(y64) || !isfinite(s))
        return 0.0; /* an Inf or NaN input: every order of the sum gives the reference's Inf or NaN */
    double u, tiny, overflow, n = (double)k + 4;
    out_format(out, &u, &tiny, &overflow);
    double e = gamma_n(n, 0x1p-24) * s + n * 0x1p-149;
    double f = gamma_n((double)k + 2, 0x1p-53) * s;
    double bound = e + f + 2 * u * (fabs(y64) + f + e) + 2 * tiny;
    return bound * (1 + 0x1p-50); /* the fp64 evaluation of this formula rounds too */
}

int qcref_gemm_may_overflow(double y64, double bound, qc_format out)
{
    double u, tiny, overflow;
    out_format(out, &u, &tiny, &overflow);
    return fabs(y64) + bound >= overflow;
}

size_t qcref_gemm_bound_k(qc_gemm_kind kind, size_t k, int grouped)
{
    size_t g = (size_t)kinds[kind].group_k;
    if (!grouped || g == 0 || k <= g)
        return k;
    return g + (k + g - 1) / g;
}

uint32_t qcref_gemm_round_out(double y64, qc_format out)
{
    float f = (float)y64;
    if (out == QC_F32)
        return qc_f32_bits(f);
    /* Round to odd into fp32 first (24 >= 11 + 2 bits), so the RNE to bf16/f16 rounds once
     * (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums", IEEE TC 2008). */
    if (isfinite(f) && (double)f != y64) {
        if (fabs((double)f) > fabs(y64))
            f = nextafterf(f, 0.0f);
        f = qc_f32_from_bits(qc_f32_bits(f) | 1u);
    }
    qc_cast_policy p = qcref_default_policy();
    return qcref_encode(out, f, &p);
}

int qcref_gemm_exact_grid(int grid, double s, double y64, qc_format out, int pow2_scales)
{
    if (!pow2_scales || !isfinite(s) || !isfinite(y64))
        return 0;
    if (s == 0)
        return 1;
    if (grid < -149 || s >= ldexp(1.0, grid + 24))
        return 0;
    (void)out; /* the kernel's accumulator holds y64 itself: its one rounding to out is fixed */
    return (double)(float)y64 == y64;
}

float qcref_quantize_row_int8(const float *x, size_t k, qc_int8_ties ties, int8_t *q)
{
    float amax = 0.0f;
    for (size_t i = 0; i < k; i++)
        amax = fmaxf(amax, fabsf(x[i]));
    amax = fmaxf(amax, 1e-7f); /* vec.h: eps = 1e-7 */
    float inv = 127.0f / amax;
    for (size_t i = 0; i < k; i++) {
        float v = x[i] * inv;
        q[i] = (int8_t)(ties == QC_INT8_TIES_EVEN ? nearbyintf(v) : roundf(v));
    }
    return amax / 127.0f;
}

float qcref_int8_epilogue(int32_t dot, float as, float bs, const float *bias)
{
    float v = (float)dot * as; /* int32 -> fp32 rounds to nearest even (the default mode) */
    return bias ? fmaf(v, bs, *bias) : v * bs;
}
