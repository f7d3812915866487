/* op_gemm.c: the quantized GEMM op (docs/spec/formats.md §9, reference/ops/gemm.h).
 *   gemm  a: f32 [m, k] activations, b: f32 [n, k] weights, bias: f32 [n] (bias=1)
 *         -> c: [m, n] in `out` (bf16 | f16 | f32 codes), c.bound: f64 [m, n] (rule bound)
 * params: kind (fp8_tensor fp8_rowwise fp8_block mxfp8 mxfp4_bf16 nvfp4 int8_rowwise), m, n, k, out (default
 * bf16), bias (0|1), profile_a / profile_b (recipe profiles, default: the recipe's first), ue8m0
 * (fp8_block: power-of-two scales), scale_a / scale_b (fp8_tensor: static scales), model (exact |
 * grouped: the bound of a kernel that scales per K group | sgl-cpu: bf16 activations and
 * bf16-rounded dequantized weights | sm90-wgmma, sm90-wgmma-fast: the H200's FP8 tensor core bit for bit
 * under cuBLASLt's K schedule without / with fast accumulation, fp8_tensor and fp8_rowwise (and
 * fp8_block under sm90-wgmma), reference/arith/mma_sm90.h; c.bound is 0), stages (1: also
 * the stage tensors stage.dequant.a / stage.dequant.b, f64 exact operand values, and
 * stage.dequant.alpha, f32 [1]), int8_ties (int8_rowwise: even | away, quantize_row_int8's rounding).
 * The operands are quantized inside the op with the recipe code, so a backend is checked on the
 * GEMM alone; an ABI backend gets the same quantized operands, in the forms of qcheck.h (abi_gemm).
 * int8_rowwise is bit-exact (its own path below, no fp64 product): c.bound is 0 everywhere. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gemm_op.h"
#include "../registry.h"
#include "exact.h"

typedef struct operand {
    qc_quant_job job;
    qc_quantized qz;
    double *v;   /* [rows, k] exact values */
    int *lsb;    /* per row: qcref_row_lsb */
    int pow2;
    int quantized;
} operand;

/* A required integer param in [0, 2^24] (qc_op_param_int: the default -1 is outside). */
static int param_dim(qc_op_call *c, const char *key, int64_t *out)
{
    return qc_op_param_int(c, key, -1, 0, 1 << 24, out);
}

/* The recipe params of one operand, as the quant op reads them. */
static void recipe_params(qc_op_call *c, qc_recipe r, char side, int64_t rows, int64_t k, qc_params *p)
{
    char key[32], v[32];
    memset(p, 0, sizeof *p);
    qc_params_set(p, "recipe", qc_recipe_name(r));
    snprintf(key, sizeof key, "profile_%c", side);
    if (qc_param(c->params, key))
        qc_params_set(p, "profile", qc_param(c->params, key));
    snprintf(v, sizeof v, "%lld", (long long)rows);
    qc_params_set(p, "rows", v);
    snprintf(v, sizeof v, "%lld", (long long)k);
    qc_params_set(p, "cols", v);
    if (r == QC_RECIPE_TOKEN_GROUP)
        qc_params_set(p, "group", "128");
    if (r == QC_RECIPE_BLOCK)
        qc_params_set(p, "block", "128x128");
    if ((r == QC_RECIPE_TOKEN_GROUP || r == QC_RECIPE_BLOCK) && qc_param(c->params, "ue8m0"))
        qc_params_set(p, "ue8m0", qc_param(c->params, "ue8m0"));
    snprintf(key, sizeof key, "scale_%c", side);
    if (r == QC_RECIPE_TENSOR && qc_param(c->params, key))
        qc_params_set(p, "static_scale", qc_param(c->params, key));
}

static int quantize_operand(qc_op_call *c, int recipe, char side, const float *x, int64_t rows, int64_t k,
                            operand *o)
{
    size_t n = (size_t)(rows * k);
    o->v = malloc(n * sizeof *o->v + 8);
    o->lsb = malloc((size_t)rows * sizeof *o->lsb + 8);
    o->pow2 = 1;
    if (!o->v || !o->lsb) {
        snprintf(c->err, c->errlen, "out of memory for operand %c (%zu elements)", side, n);
        return 2;
    }
    if (recipe < 0) { /* bf16 activations (RNE), formats.md §9.3 w4a16 */
        qc_cast_policy p = qcref_default_policy();
        for (size_t i = 0; i < n; i++)
            o->v[i] = qcref_decode(QC_BF16, qcref_encode(QC_BF16, x[i], &p), &p);
        return 0;
    }
    qc_params rp;
    recipe_params(c, (qc_recipe)recipe, side, rows, k, &rp);
    char why[512];
    if (qc_quant_job_from_params(&rp, 0, &o->job, why, sizeof why)) {
        snprintf(c->err, c->errlen, "operand %c (recipe %s): %s", side, qc_recipe_name(recipe), why);
        return 2;
    }
    if (qc_quant_job_alloc(&o->job, &o->qz)) {
        snprintf(c->err, c->errlen, "out of memory quantizing operand %c", side);
        return 2;
    }
    o->quantized = 1;
    const qc_quant_job *j = &o->job;
    qcref_quant(j->recipe, &j->policy, x, j->rows, j->cols, j->has_static ? &j->static_scale : NULL,
                j->has_gscale ? &j->gscale_encode : NULL, &o->qz);
    return 0;
}

/* bf16: the dequantized values rounded (RNE) to bf16, as a kernel that dequantizes its weights to
 * bf16 before the dot does (model=sgl-cpu). sgl-kernel's unpack_B multiplies code * scale in fp32
 * and then rounds that to bf16 (cvtne2ps_pbh; docs/spec/layouts.md §7): two roundings, so the exact fp64
 * product goes through fp32 first (it differs from one rounding about once in 2^16 weights). */
static void dequantize_operand(operand *o, int recipe, int64_t rows, int64_t k, int bf16)
{
    qc_cast_policy p = qcref_default_policy();
    if (recipe >= 0)
        qcref_operand_f64(o->job.recipe, &o->job.policy, &o->qz, o->v, &o->pow2);
    for (int64_t i = 0; bf16 && i < rows * k; i++)
        o->v[i] = qcref_decode(QC_BF16, qcref_gemm_round_out((double)(float)o->v[i], QC_BF16), &p);
    for (int64_t r = 0; r < rows; r++)
        o->lsb[r] = qcref_row_lsb(o->v + r * k, (size_t)k);
}

static void operand_free(operand *o)
{
    if (o->quantized)
        qc_quant_job_free(&o->qz);
    free(o->v);
    free(o->lsb);
}

static int out_format(qc_op_call *c, qc_format *f)
{
    const char *v = qc_param_or(c->params, "out", "bf16");
    int x = qc_format_from_name(v);
    if (x != QC_BF16 && x != QC_F16 && x != QC_F32) {
        snprintf(c->err, c->errlen, "param out=%s: the GEMM output is bf16, f16 or f32", v);
        return 2;
    }
    *f = (qc_format)x;
    return 0;
}

/* The exactness grid of element (i, j) (gemm.h): the terms' common power of two. */
static int element_grid(int la, int lb, int lalpha, double bias)
{
    int64_t g = la == INT32_MAX || lb == INT32_MAX ? INT32_MAX : (int64_t)la + lb + lalpha;
    if (bias != 0) {
        int l = qcref_lsb_exponent(bias);
        g = l < g ? l : g;
    }
    return g < -100000 ? -100000 : (int)(g > INT32_MAX ? INT32_MAX : g);
}

/* The stage tensors of an investigation (stages=1): the exact operands and alpha. */
static int write_stages(qc_op_call *c, int64_t m, int64_t n, int64_t k, const operand *a, const operand *b,
                        float alpha)
{
    int64_t one = 1;
    qc_tensor t;
    if (qc_op_add_tensor(c, "stage.dequant.a", QC_ST_F64, "f64", m, k, a->v) ||
        qc_op_add_tensor(c, "stage.dequant.b", QC_ST_F64, "f64", n, k, b->v) ||
        qc_tensor_alloc(&t, "stage.dequant.alpha", QC_ST_F32, "f32", 1, &one)) {
        snprintf(c->err, c->errlen, "out of memory (or too many outputs) for the stage tensors");
        return 2;
    }
    *(float *)t.data = alpha;
    return qc_set_add(c->out, &t) ? 0 : 2;
}

static int write_outputs(qc_op_call *c, int64_t m, int64_t n, int64_t k, qc_format of, const operand *a,
                         const operand *b, float alpha, const float *bias, const double *y, const double *s)
{
    int64_t shape[2] = {m, n};
    qc_tensor t, tb;
    if (qc_tensor_alloc(&t, "c", qc_format_storage(of), qc_format_name(of), 2, shape) ||
        qc_tensor_alloc(&tb, "c.bound", QC_ST_F64, "f64", 2, shape)) {
        snprintf(c->err, c->errlen, "out of memory for c [%lld, %lld]", (long long)m, (long long)n);
        return 2;
    }
    int ealpha, lalpha = alpha != 0 ? qcref_lsb_exponent(alpha) : 0;
    int pow2 = a->pow2 && b->pow2 && (alpha == 0 || frexp(alpha, &ealpha) == 0.5); /* scaling by alpha is exact */
    double *bound = tb.data;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t e = i * n + j;
            uint32_t code = qcref_gemm_round_out(y[e], of);
            if (t.storage == QC_ST_U16)
                ((uint16_t *)t.data)[e] = (uint16_t)code;
            else
                ((uint32_t *)t.data)[e] = code;
            int grid = element_grid(a->lsb[i], b->lsb[j], lalpha, bias ? bias[j] : 0);
            bound[e] = qcref_gemm_bound(y[e], s[e], (size_t)k, of, qcref_gemm_exact_grid(grid, s[e], y[e], of, pow2));
        }
    if (!qc_set_add(c->out, &t) || !qc_set_add(c->out, &tb)) {
        snprintf(c->err, c->errlen, "too many output tensors");
        return 2;
    }
    return 0;
}

/* The params of one call, checked. */
typedef struct gemm_call {
    int kind, cpu, grouped;
    int promote; /* model sm90-wgmma: k-steps between fp32 additions (4), sm90-wgmma-fast: 0; else -1 */
    int64_t m, n, k, has_bias;
    qc_format of;
    qc_int8_ties ties;
    const float *a, *b, *bias;
} gemm_call;

static int int8_params(qc_op_call *c, gemm_call *g)
{
    const char *t = qc_param_or(c->params, "int8_ties", "even");
    if (strcmp(t, "even") && strcmp(t, "away")) {
        snprintf(c->err, c->errlen, "param int8_ties=%s (known: even, away; quantize_row_int8's rounding)", t);
        return 2;
    }
    g->ties = strcmp(t, "even") ? QC_INT8_TIES_AWAY : QC_INT8_TIES_EVEN;
    if (g->cpu || g->grouped) {
        snprintf(c->err, c->errlen, "kind int8_rowwise is bit-exact: model must be exact (the default)");
        return 2;
    }
    if (g->k > QCREF_INT8_MAX_K) {
        snprintf(c->err, c->errlen, "kind int8_rowwise: k=%lld > %d, the int32 u8 x s8 sum could overflow "
                 "(K * 255 * 127 must stay below 2^31)", (long long)g->k, QCREF_INT8_MAX_K);
        return 2;
    }
    for (int64_t i = 0; i < (g->m + g->n) * g->k; i++)
        if (!isfinite(i < g->m * g->k ? g->a[i] : g->b[i - g->m * g->k])) {
            snprintf(c->err, c->errlen, "kind int8_rowwise: inputs a and b must be finite (element %lld is not)",
                     (long long)i);
            return 2;
        }
    return 0;
}

static int gemm_setup(qc_op_call *c, gemm_call *g)
{
    const char *kname = qc_param_or(c->params, "kind", "");
    memset(g, 0, sizeof *g);
    g->kind = qcref_gemm_kind_from_name(kname);
    if (g->kind < 0) {
        snprintf(c->err, c->errlen,
                 "param kind=%s (known: fp8_tensor fp8_rowwise fp8_block mxfp8 mxfp4_bf16 nvfp4 int8_rowwise)", kname);
        return 2;
    }
    if (param_dim(c, "m", &g->m) || param_dim(c, "n", &g->n) || param_dim(c, "k", &g->k) || out_format(c, &g->of) ||
        (qc_param(c->params, "bias") && param_dim(c, "bias", &g->has_bias)))
        return 2;
    /* model (the rounding points of a real kernel, as a profile): exact, or sgl-cpu (sgl-kernel CPU
     * w8a16: bf16 activations, weights dequantized to bf16 before an fp32 dot; layouts.md §7), or
     * grouped (per-group_k fp32 partial dots, then the scales, then the partials: gemm.h) */
    const char *model = qc_param_or(c->params, "model", "exact");
    g->cpu = strcmp(model, "sgl-cpu") == 0, g->grouped = strcmp(model, "grouped") == 0;
    g->promote = !strcmp(model, "sm90-wgmma") ? 4 : !strcmp(model, "sm90-wgmma-fast") ? 0 : -1;
    if (!g->cpu && !g->grouped && g->promote < 0 && strcmp(model, "exact")) {
        snprintf(c->err, c->errlen, "param model=%s (known: exact, grouped, sgl-cpu, sm90-wgmma, sm90-wgmma-fast)", model);
        return 2;
    }
    /* sm90-wgmma: the tensor core bit for bit (reference/arith/mma_sm90.h) with cuBLASLt's measured
     * epilogues (formats.md §16): per tensor, per row, and per 128-deep block (promoted every block:
     * there is no fast-accumulation form of it) */
    int wgmma_kind = g->kind == QC_GEMM_FP8_TENSOR || g->kind == QC_GEMM_FP8_ROWWISE ||
                     (g->kind == QC_GEMM_FP8_BLOCK && g->promote == 4);
    if (g->promote >= 0 && strcmp(qc_param_or(c->params, "stages", "0"), "0")) {
        snprintf(c->err, c->errlen, "model=%s: stages (the fp64 dequantized operands) belong to the bound models",
                 model);
        return 2;
    }
    if (g->promote >= 0 && !wgmma_kind) {
        snprintf(c->err, c->errlen, "model=%s: kinds fp8_tensor, fp8_rowwise%s, not %s", model,
                 g->promote == 4 ? ", fp8_block" : " (fp8_block: model sm90-wgmma)", kname);
        return 2;
    }
    if (g->cpu && g->kind != QC_GEMM_FP8_BLOCK && g->kind != QC_GEMM_MXFP4_BF16) {
        snprintf(c->err, c->errlen, "model=sgl-cpu is the w8a16 path of kinds fp8_block and mxfp4_bf16, not %s", kname);
        return 2;
    }
    const qc_tensor *ta = qc_op_input_f32(c, "a", g->m * g->k), *tb = qc_op_input_f32(c, "b", g->n * g->k);
    const qc_tensor *tbias = g->has_bias ? qc_op_input_f32(c, "bias", g->n) : NULL;
    if (!ta || !tb || (g->has_bias && !tbias))
        return 2;
    g->a = ta->data, g->b = tb->data, g->bias = tbias ? tbias->data : NULL;
    return g->kind == QC_GEMM_INT8_ROWWISE ? int8_params(c, g) : 0;
}

/* ---- int8_rowwise (gemm.h): sgl-kernel per_token_quant_int8_cpu + int8_scaled_mm_cpu ---- */

typedef struct int8_operands {
    int8_t *a_s8, *b_s8;      /* [m, k] and [n, k] (qcref_quantize_row_int8) */
    float *a_scale, *b_scale; /* [m] and [n] */
} int8_operands;

static void int8_free(int8_operands *o)
{
    free(o->a_s8), free(o->b_s8), free(o->a_scale), free(o->b_scale);
    memset(o, 0, sizeof *o);
}

/* Activations are bf16 in sgl-kernel (per_token_quant_int8_cpu takes bf16/fp16): a is rounded to
 * bf16 (RNE) first. Weights arrive already quantized in sgl-kernel (static per-channel); qcheck
 * quantizes b's rows from fp32 with the same rule (qcref_quantize_row_int8). */
static int int8_quantize(qc_op_call *c, const gemm_call *g, int8_operands *o)
{
    size_t mk = (size_t)(g->m * g->k), nk = (size_t)(g->n * g->k);
    o->a_s8 = malloc(mk + 8), o->b_s8 = malloc(nk + 8);
    o->a_scale = malloc((size_t)g->m * sizeof(float) + 8), o->b_scale = malloc((size_t)g->n * sizeof(float) + 8);
    float *row = malloc((size_t)g->k * sizeof *row + 8);
    int rc = !o->a_s8 || !o->b_s8 || !o->a_scale || !o->b_scale || !row;
    qc_cast_policy p = qcref_default_policy();
    for (int64_t i = 0; !rc && i < g->m; i++) {
        for (int64_t j = 0; j < g->k; j++)
            row[j] = qcref_decode(QC_BF16, qcref_encode(QC_BF16, g->a[i * g->k + j], &p), &p);
        o->a_scale[i] = qcref_quantize_row_int8(row, (size_t)g->k, g->ties, o->a_s8 + i * g->k);
    }
    for (int64_t i = 0; !rc && i < g->n; i++)
        o->b_scale[i] = qcref_quantize_row_int8(g->b + i * g->k, (size_t)g->k, g->ties, o->b_s8 + i * g->k);
    free(row);
    if (rc)
        snprintf(c->err, c->errlen, "out of memory quantizing the int8 operands");
    return rc ? 2 : 0;
}

static void store_code(qc_tensor *t, int64_t e, uint32_t code)
{
    if (t->storage == QC_ST_U16)
        ((uint16_t *)t->data)[e] = (uint16_t)code;
    else
        ((uint32_t *)t->data)[e] = code;
}

static int int8_gemm(qc_op_call *c, const gemm_call *g)
{
    int8_operands o = {0};
    int64_t shape[2] = {g->m, g->n};
    qc_tensor t, tb;
    if (int8_quantize(c, g, &o)) {
        int8_free(&o);
        return 2;
    }
    if (qc_tensor_alloc(&t, "c", qc_format_storage(g->of), qc_format_name(g->of), 2, shape) ||
        qc_tensor_alloc(&tb, "c.bound", QC_ST_F64, "f64", 2, shape)) {
        int8_free(&o);
        snprintf(c->err, c->errlen, "out of memory for c [%lld, %lld]", (long long)g->m, (long long)g->n);
        return 2;
    }
    qc_cast_policy p = qcref_default_policy();
    for (int64_t i = 0; i < g->m; i++)
        for (int64_t j = 0; j < g->n; j++) {
            int32_t dot = 0; /* exact: |dot| <= K * 127 * 127 < 2^31 for K <= QCREF_INT8_MAX_K */
            for (int64_t l = 0; l < g->k; l++)
                dot += (int32_t)o.a_s8[i * g->k + l] * o.b_s8[j * g->k + l];
            float v = qcref_int8_epilogue(dot, o.a_scale[i], o.b_scale[j], g->bias ? g->bias + j : NULL);
            store_code(&t, i * g->n + j, g->of == QC_F32 ? qc_f32_bits(v) : qcref_encode(g->of, v, &p));
            ((double *)tb.data)[i * g->n + j] = 0.0; /* bit-exact */
        }
    int8_free(&o);
    if (!qc_set_add(c->out, &t) || !qc_set_add(c->out, &tb)) {
        snprintf(c->err, c->errlen, "too many output tensors");
        return 2;
    }
    return 0;
}

/* ---- the ABI adapter: the operands in the forms the kernel consumes (qcheck.h) ---- */

/* One side's tensors, owned here for the duration of the call. */
typedef struct abi_operand {
    qc_quant_job job;
    qc_tensor_set t; /* codes, scale, gscale */
} abi_operand;

static qcheck_tensor add_view(qc_tensor_set *set, const char *name, qc_storage st, const char *dtype, int64_t rows,
                              int64_t cols, int *rc)
{
    int64_t shape[2] = {rows, cols};
    qc_tensor t;
    qcheck_tensor v = {0};
    if (*rc || qc_tensor_alloc(&t, name, st, dtype, cols < 0 ? 1 : 2, shape) || !qc_set_add(set, &t)) {
        *rc = 2;
        return v;
    }
    return qc_view(qc_set_find(set, name));
}

/* FORM_QUANTIZED: the reference recipe's bytes, exactly as the quant op writes them. */
static int quantized_form(qc_op_call *c, int recipe, char side, const float *x, int64_t rows, int64_t k,
                          abi_operand *o, qcheck_gemm_operand *v)
{
    qc_params rp;
    char why[512];
    recipe_params(c, (qc_recipe)recipe, side, rows, k, &rp);
    if (qc_quant_job_from_params(&rp, 0, &o->job, why, sizeof why)) {
        snprintf(c->err, c->errlen, "operand %c (recipe %s): %s", side, qc_recipe_name(recipe), why);
        return 2;
    }
    qc_quantized qz;
    size_t qb, sb;
    uint8_t *sbytes = NULL;
    if (qc_quant_job_alloc(&o->job, &qz)) {
        snprintf(c->err, c->errlen, "out of memory quantizing operand %c", side);
        return 2;
    }
    qcref_quant(o->job.recipe, &o->job.policy, x, o->job.rows, o->job.cols, o->job.has_static ? &o->job.static_scale : NULL,
                o->job.has_gscale ? &o->job.gscale_encode : NULL, &qz);
    int rc = qc_quant_job_serialize(&o->job, &qz, &qb, &sbytes, &sb, c->err, c->errlen) ? 2 : 0;
    int fp4 = qc_quant_job_fp4(&o->job);
    *v = (qcheck_gemm_operand){.form = QCHECK_FORM_QUANTIZED, .spec = &o->job};
    v->codes = add_view(&o->t, "codes", QC_ST_U8, fp4 ? "e2m1x2" : qc_format_name(o->job.policy.elem), rows,
                        fp4 ? (k + 1) / 2 : k, &rc);
    v->scale = add_view(&o->t, "scale", QC_ST_U8, o->job.recipe == QC_RECIPE_NVFP4 ? "e4m3fn"
                                                  : o->job.recipe >= QC_RECIPE_MXFP8 ? "e8m0" : "u8",
                        (int64_t)sb, -1, &rc);
    if (o->job.recipe == QC_RECIPE_NVFP4)
        v->gscale = add_view(&o->t, "gscale", QC_ST_F32, "f32", 1, -1, &rc);
    if (!rc) { /* an empty operand (m = 0) has no buffers: memcpy(NULL, p, 0) is undefined */
        if (qb)
            memcpy(v->codes.data, qz.q, qb);
        if (sb)
            memcpy(v->scale.data, sbytes, sb);
        if (v->gscale.data)
            memcpy(v->gscale.data, &qz.gscale, 4);
    }
    free(sbytes);
    qc_quant_job_free(&qz);
    return rc;
}

static int bf16_form(const float *x, int64_t rows, int64_t k, abi_operand *o, qcheck_gemm_operand *v)
{
    int rc = 0;
    qc_cast_policy p = qcref_default_policy();
    *v = (qcheck_gemm_operand){.form = QCHECK_FORM_BF16};
    v->codes = add_view(&o->t, "codes", QC_ST_U16, "bf16", rows, k, &rc);
    for (int64_t i = 0; !rc && i < rows * k; i++)
        ((uint16_t *)v->codes.data)[i] = (uint16_t)qcref_encode(QC_BF16, x[i], &p);
    return rc;
}

static int int8_form(int8_t *codes, float *scales, int64_t rows, int64_t k, abi_operand *o, qcheck_gemm_operand *v)
{
    int rc = 0;
    *v = (qcheck_gemm_operand){.form = QCHECK_FORM_INT8_ROW};
    v->codes = add_view(&o->t, "codes", QC_ST_U8, "s8", rows, k, &rc);
    v->scale = add_view(&o->t, "scale", QC_ST_F32, "f32", rows, -1, &rc);
    if (!rc && rows > 0 && k > 0) /* an empty operand has no buffers */
        memcpy(v->codes.data, codes, (size_t)(rows * k));
    if (!rc && rows > 0)
        memcpy(v->scale.data, scales, (size_t)rows * 4);
    return rc;
}

static int operand_forms(qc_op_call *c, const gemm_call *g, abi_operand *oa, abi_operand *ob, qcheck_gemm_args *a)
{
    if (g->kind == QC_GEMM_INT8_ROWWISE) {
        int8_operands o = {0};
        int rc = int8_quantize(c, g, &o) || int8_form(o.a_s8, o.a_scale, g->m, g->k, oa, &a->a) ||
                 int8_form(o.b_s8, o.b_scale, g->n, g->k, ob, &a->b);
        int8_free(&o);
        return rc ? 2 : 0;
    }
    const qc_gemm_kind_info *ki = qcref_gemm_kind(g->kind);
    int recipe_a = g->cpu ? -1 : ki->recipe_a;
    int rc = recipe_a < 0 ? bf16_form(g->a, g->m, g->k, oa, &a->a)
                          : quantized_form(c, recipe_a, 'a', g->a, g->m, g->k, oa, &a->a);
    return rc || quantized_form(c, (int)ki->recipe_b, 'b', g->b, g->n, g->k, ob, &a->b) ? 2 : 0;
}

static int abi_gemm(qc_op_call *c, const qcheck_backend *b)
{
    gemm_call g;
    abi_operand oa = {0}, ob = {0};
    qcheck_gemm_args a = {0};
    int rc = gemm_setup(c, &g);
    if (rc)
        return rc;
    a.kind = (qc_gemm_kind)g.kind, a.model = qc_param_or(c->params, "model", "exact");
    a.m = g.m, a.n = g.n, a.k = g.k, a.out = g.of;
    int64_t shape[2] = {g.m, g.n};
    rc = operand_forms(c, &g, &oa, &ob, &a) ||
         qc_op_output(c, "c", qc_format_storage(g.of), qc_format_name(g.of), 2, shape, &a.c) ? 2 : 0;
    a.a.values = qc_view(qc_set_find((qc_tensor_set *)c->in, "a"));
    a.b.values = qc_view(qc_set_find((qc_tensor_set *)c->in, "b"));
    if (g.has_bias)
        a.bias = qc_view(qc_set_find((qc_tensor_set *)c->in, "bias"));
    if (!rc) {
        qcheck_ctx ctx = qc_abi_ctx(c);
        rc = qc_abi_result(c, b, b->gemm(&a, &ctx), &ctx);
    }
    qc_set_free(&oa.t);
    qc_set_free(&ob.t);
    return rc;
}

/* ---- model sm90-wgmma: the tensor core's own arithmetic, so the check is bit-exact ---- */

static int wgmma_gemm(qc_op_call *c, const gemm_call *g, operand *a, operand *b, qc_gemm_post post)
{
    qc_format fa = a->job.policy.elem, fb = b->job.policy.elem;
    if ((fa != QC_E4M3FN && fa != QC_E5M2) || (fb != QC_E4M3FN && fb != QC_E5M2)) {
        snprintf(c->err, c->errlen, "model sm90-wgmma: elements %s x %s; wgmma takes e4m3fn and e5m2 only",
                 qc_format_name(fa), qc_format_name(fb));
        return 2;
    }
    int64_t mn = g->m * g->n, shape[2] = {g->m, g->n};
    float *y = malloc((size_t)mn * sizeof *y + 8);
    double *y64 = malloc((size_t)mn * sizeof *y64 + 8);
    size_t stride = g->kind == QC_GEMM_FP8_ROWWISE; /* one scale per row, or one per tensor */
    qc_tensor t, tb;
    int rc = !y || !y64;
    if (!rc && g->kind == QC_GEMM_FP8_BLOCK)
        rc = qcref_gemm_sm90_block(a->qz.q, fa == QC_E5M2, b->qz.q, fb == QC_E5M2, (size_t)g->m, (size_t)g->n,
                                   (size_t)g->k, a->qz.scale_f32, b->qz.scale_f32, g->bias, y);
    else if (!rc)
        rc = qcref_gemm_sm90(a->qz.q, fa == QC_E5M2, b->qz.q, fb == QC_E5M2, (size_t)g->m, (size_t)g->n, (size_t)g->k,
                             a->qz.scale_f32, stride, b->qz.scale_f32, stride, g->bias, g->promote, y);
    if (rc || qc_tensor_alloc(&t, "c", qc_format_storage(g->of), qc_format_name(g->of), 2, shape) ||
        qc_tensor_alloc(&tb, "c.bound", QC_ST_F64, "f64", 2, shape)) {
        free(y), free(y64);
        snprintf(c->err, c->errlen, "out of memory for c [%lld, %lld]", (long long)g->m, (long long)g->n);
        return 2;
    }
    for (int64_t e = 0; e < mn; e++) {
        y64[e] = y[e];
        store_code(&t, e, qcref_gemm_round_out(y64[e], g->of));
        ((double *)tb.data)[e] = 0.0; /* bit-exact */
    }
    free(y);
    if (!qc_set_add(c->out, &t) || !qc_set_add(c->out, &tb)) {
        free(y64);
        snprintf(c->err, c->errlen, "too many output tensors");
        return 2;
    }
    if (post)
        post(y64, mn, g->of, qc_set_find(c->out, "c"));
    free(y64);
    return 0;
}

int qc_gemm_op(qc_op_call *c, qc_gemm_tweak tweak, qc_gemm_post post)
{
    gemm_call g;
    if (gemm_setup(c, &g))
        return 2;
    if (g.kind == QC_GEMM_INT8_ROWWISE)
        return int8_gemm(c, &g);
    if (g.promote >= 0) {
        const qc_gemm_kind_info *wk = qcref_gemm_kind(g.kind);
        operand a = {0}, b = {0};
        int rc = quantize_operand(c, wk->recipe_a, 'a', g.a, g.m, g.k, &a) ||
                 quantize_operand(c, (int)wk->recipe_b, 'b', g.b, g.n, g.k, &b);
        if (!rc && tweak)
            tweak((qc_gemm_kind)g.kind, &b.job, &b.qz);
        rc = rc || wgmma_gemm(c, &g, &a, &b, post);
        operand_free(&a);
        operand_free(&b);
        return rc ? 2 : 0;
    }
    int kind = g.kind, cpu = g.cpu, grouped = g.grouped;
    int64_t m = g.m, n = g.n, k = g.k, has_bias = g.has_bias;
    qc_format of = g.of;
    const qc_gemm_kind_info *ki = qcref_gemm_kind(kind);
    int recipe_a = cpu ? -1 : ki->recipe_a;
    operand a = {0}, b = {0};
    double *y = malloc((size_t)(m * n) * sizeof *y + 8), *s = malloc((size_t)(m * n) * sizeof *s + 8);
    double *bias = has_bias ? malloc((size_t)n * sizeof *bias + 8) : NULL;
    int rc = !y || !s || (has_bias && !bias) ? 2 : 0;
    if (rc)
        snprintf(c->err, c->errlen, "out of memory for [%lld, %lld]", (long long)m, (long long)n);
    rc = rc || quantize_operand(c, recipe_a, 'a', g.a, m, k, &a) ||
         quantize_operand(c, (int)ki->recipe_b, 'b', g.b, n, k, &b);
    if (!rc) {
        if (tweak)
            tweak((qc_gemm_kind)kind, &b.job, &b.qz);
        dequantize_operand(&a, recipe_a, m, k, 0);
        dequantize_operand(&b, (int)ki->recipe_b, n, k, cpu);
        for (int64_t j = 0; has_bias && j < n; j++)
            bias[j] = g.bias[j];
        float alpha = qcref_gemm_alpha((qc_gemm_kind)kind, a.qz.gscale, b.qz.gscale);
        if (qcx_gemm((size_t)m, (size_t)n, (size_t)k, a.v, b.v, alpha, bias, y, s)) {
            snprintf(c->err, c->errlen, "out of memory in the fp64 GEMM");
            rc = 2;
        } else {
            int64_t kb = (int64_t)qcref_gemm_bound_k((qc_gemm_kind)kind, (size_t)k, grouped);
            rc = write_outputs(c, m, n, kb, of, &a, &b, alpha, g.bias, y, s);
            if (!rc && post)
                post(y, m * n, of, qc_set_find(c->out, "c"));
            if (!rc && strcmp(qc_param_or(c->params, "stages", "0"), "1") == 0)
                rc = write_stages(c, m, n, k, &a, &b, alpha);
        }
    }
    operand_free(&a);
    operand_free(&b);
    free(y);
    free(s);
    free(bias);
    return rc;
}

static int ref_gemm(qc_op_call *c) { return qc_gemm_op(c, NULL, NULL); }

/* Adds side's operand tensors to c->out as "<side>.codes", "<side>.scale" (fp32 scales as f32
 * [grid], byte scales as u8 [grid]) and "<side>.gscale". */
static int add_operand(qc_op_call *c, char side, const qcheck_gemm_operand *v)
{
    char name[QC_NAME_LEN];
    int64_t r = v->codes.shape[0], k = v->codes.ndim > 1 ? v->codes.shape[1] : 1, sr = r, sc = 1;
    snprintf(name, sizeof name, "%c.codes", side);
    if (qc_op_add_tensor(c, name, (qc_storage)v->codes.storage, v->codes.dtype, r, k, v->codes.data))
        return 2;
    if (!v->scale.data)
        return 0;
    int f32 = v->form == QCHECK_FORM_INT8_ROW || v->spec->recipe < QC_RECIPE_MXFP8;
    if (v->form == QCHECK_FORM_QUANTIZED)
        qc_quant_job_scale_grid(v->spec, &sr, &sc);
    snprintf(name, sizeof name, "%c.scale", side);
    if (qc_op_add_tensor(c, name, f32 ? QC_ST_F32 : QC_ST_U8, f32 ? "f32" : v->scale.dtype, sr, sc, v->scale.data))
        return 2;
    snprintf(name, sizeof name, "%c.gscale", side);
    return v->gscale.data ? qc_op_add_tensor(c, name, QC_ST_F32, "f32", 1, 1, v->gscale.data) : 0;
}

/* The operands as the kernel consumes them, added to the instance's inputs (an exported instance
 * is the kernel's whole contract): a.codes, a.scale, b.codes, b.scale (+ gscale), in the forms
 * of qcheck.h (docs/backends.md "gemm"). */
static int gemm_operand_inputs(qc_op_call *c)
{
    gemm_call g;
    abi_operand oa = {0}, ob = {0};
    qcheck_gemm_args a = {0};
    int rc = gemm_setup(c, &g) || operand_forms(c, &g, &oa, &ob, &a) || add_operand(c, 'a', &a.a) ||
             add_operand(c, 'b', &a.b);
    qc_set_free(&oa.t);
    qc_set_free(&ob.t);
    return rc ? 2 : 0;
}

const qc_op qc_op_gemm = {"gemm",
                          "a f32[m, k], b f32[n, k], bias f32[n] -> c [m, n] (out: bf16|f16|f32), c.bound f64; "
                          "params: kind m n k out bias profile_a profile_b ue8m0 scale_a scale_b model stages int8_ties",
                          ref_gemm, offsetof(qcheck_backend, gemm), abi_gemm, gemm_operand_inputs, NULL};
