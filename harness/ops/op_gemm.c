/* op_gemm.c: the quantized GEMM op (shared/spec/formats.md §9, reference/ops/gemm.h).
 *   gemm  a: f32 [m, k] activations, b: f32 [n, k] weights, bias: f32 [n] (bias=1)
 *         -> c: [m, n] in `out` (bf16 | f16 | f32 codes), c.bound: f64 [m, n] (rule bound)
 * params: kind (fp8_tensor fp8_rowwise fp8_block mxfp8 mxfp4_bf16 nvfp4), m, n, k, out (default
 * bf16), bias (0|1), profile_a / profile_b (recipe profiles, default: the recipe's first), ue8m0
 * (fp8_block: power-of-two scales), scale_a / scale_b (fp8_tensor: static scales), model (exact |
 * grouped: the bound of a kernel that scales per K group | sgl-cpu: bf16 activations and
 * bf16-rounded dequantized weights), stages (1: also
 * the stage tensors stage.dequant.a / stage.dequant.b, f64 exact operand values, and
 * stage.dequant.alpha, f32 [1]). The operands are quantized inside the op with the recipe code, so
 * a backend is checked on the GEMM alone. */
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

static int param_int(qc_op_call *c, const char *key, int64_t lo, int64_t *out)
{
    const char *v = qc_param(c->params, key);
    char *end;
    *out = v ? strtoll(v, &end, 10) : -1;
    if (!v || end == v || *end || *out < lo || *out > (1 << 24)) {
        snprintf(c->err, c->errlen, "param %s=%s: an integer >= %lld is required", key, v ? v : "(missing)",
                 (long long)lo);
        return 2;
    }
    return 0;
}

static const qc_tensor *f32_input(qc_op_call *c, const char *name, int64_t numel)
{
    const qc_tensor *t = qc_set_find((qc_tensor_set *)c->in, name);
    if (!t || t->storage != QC_ST_F32 || qc_tensor_numel(t) != numel) {
        snprintf(c->err, c->errlen, "input %s must be f32 with %lld elements%s", name, (long long)numel,
                 t ? "" : " (missing)");
        return NULL;
    }
    return t;
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
    if (qc_quant_job_from_params(&rp, &o->job, why, sizeof why)) {
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
 * bf16 before the dot does (model=sgl-cpu). */
static void dequantize_operand(operand *o, int recipe, int64_t rows, int64_t k, int bf16)
{
    qc_cast_policy p = qcref_default_policy();
    if (recipe >= 0)
        qcref_operand_f64(o->job.recipe, &o->job.policy, &o->qz, o->v, &o->pow2);
    for (int64_t i = 0; bf16 && i < rows * k; i++)
        o->v[i] = qcref_decode(QC_BF16, qcref_gemm_round_out(o->v[i], QC_BF16), &p);
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

static int add_f64(qc_op_call *c, const char *name, int64_t rows, int64_t cols, const double *v)
{
    int64_t shape[2] = {rows, cols};
    qc_tensor t;
    if (qc_tensor_alloc(&t, name, QC_ST_F64, "f64", 2, shape))
        return 2;
    if (t.nbytes)
        memcpy(t.data, v, t.nbytes);
    return qc_set_add(c->out, &t) ? 0 : 2;
}

/* The stage tensors of an investigation (stages=1): the exact operands and alpha. */
static int write_stages(qc_op_call *c, int64_t m, int64_t n, int64_t k, const operand *a, const operand *b,
                        float alpha)
{
    int64_t one = 1;
    qc_tensor t;
    if (add_f64(c, "stage.dequant.a", m, k, a->v) || add_f64(c, "stage.dequant.b", n, k, b->v) ||
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

int qc_gemm_op(qc_op_call *c, qc_gemm_tweak tweak)
{
    const char *kname = qc_param_or(c->params, "kind", "");
    int kind = qcref_gemm_kind_from_name(kname);
    int64_t m, n, k, has_bias = 0;
    qc_format of;
    if (kind < 0) {
        snprintf(c->err, c->errlen, "param kind=%s (known: fp8_tensor fp8_rowwise fp8_block mxfp8 mxfp4_bf16 nvfp4)",
                 kname);
        return 2;
    }
    if (param_int(c, "m", 0, &m) || param_int(c, "n", 0, &n) || param_int(c, "k", 0, &k) || out_format(c, &of) ||
        (qc_param(c->params, "bias") && param_int(c, "bias", 0, &has_bias)))
        return 2;
    const qc_gemm_kind_info *ki = qcref_gemm_kind(kind);
    /* model (the rounding points of a real kernel, as a profile): exact, or sgl-cpu (sgl-kernel CPU
     * w8a16: bf16 activations, weights dequantized to bf16 before an fp32 dot; layouts.md §7), or
     * grouped (per-group_k fp32 partial dots, then the scales, then the partials: gemm.h) */
    const char *model = qc_param_or(c->params, "model", "exact");
    int cpu = strcmp(model, "sgl-cpu") == 0, grouped = strcmp(model, "grouped") == 0;
    if (!cpu && !grouped && strcmp(model, "exact")) {
        snprintf(c->err, c->errlen, "param model=%s (known: exact, grouped, sgl-cpu)", model);
        return 2;
    }
    if (cpu && kind != QC_GEMM_FP8_BLOCK && kind != QC_GEMM_MXFP4_BF16) {
        snprintf(c->err, c->errlen, "model=sgl-cpu is the w8a16 path of kinds fp8_block and mxfp4_bf16, not %s", kname);
        return 2;
    }
    int recipe_a = cpu ? -1 : ki->recipe_a;
    const qc_tensor *ta = f32_input(c, "a", m * k), *tb = f32_input(c, "b", n * k);
    const qc_tensor *tbias = has_bias ? f32_input(c, "bias", n) : NULL;
    if (!ta || !tb || (has_bias && !tbias))
        return 2;
    operand a = {0}, b = {0};
    double *y = malloc((size_t)(m * n) * sizeof *y + 8), *s = malloc((size_t)(m * n) * sizeof *s + 8);
    double *bias = has_bias ? malloc((size_t)n * sizeof *bias + 8) : NULL;
    int rc = !y || !s || (has_bias && !bias) ? 2 : 0;
    if (rc)
        snprintf(c->err, c->errlen, "out of memory for [%lld, %lld]", (long long)m, (long long)n);
    rc = rc || quantize_operand(c, recipe_a, 'a', ta->data, m, k, &a) ||
         quantize_operand(c, (int)ki->recipe_b, 'b', tb->data, n, k, &b);
    if (!rc) {
        if (tweak)
            tweak((qc_gemm_kind)kind, &b.job, &b.qz);
        dequantize_operand(&a, recipe_a, m, k, 0);
        dequantize_operand(&b, (int)ki->recipe_b, n, k, cpu);
        for (int64_t j = 0; has_bias && j < n; j++)
            bias[j] = ((const float *)tbias->data)[j];
        float alpha = qcref_gemm_alpha((qc_gemm_kind)kind, a.qz.gscale, b.qz.gscale);
        if (qcx_gemm((size_t)m, (size_t)n, (size_t)k, a.v, b.v, alpha, bias, y, s)) {
            snprintf(c->err, c->errlen, "out of memory in the fp64 GEMM");
            rc = 2;
        } else {
            int64_t kb = (int64_t)qcref_gemm_bound_k((qc_gemm_kind)kind, (size_t)k, grouped);
            rc = write_outputs(c, m, n, kb, of, &a, &b, alpha, has_bias ? tbias->data : NULL, y, s);
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

static int ref_gemm(qc_op_call *c) { return qc_gemm_op(c, NULL); }

const qc_op qc_op_gemm = {"gemm",
                          "a f32[m, k], b f32[n, k], bias f32[n] -> c [m, n] (out: bf16|f16|f32), c.bound f64; "
                          "params: kind m n k out bias profile_a profile_b ue8m0 scale_a scale_b model stages",
                          ref_gemm};
