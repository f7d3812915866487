/* op_moe.c: the fused-MoE op (docs/spec/layouts.md §9), the reference of every stage.
 *   moe  x: f32 [tokens, hidden], logits: f32 [tokens, experts], route_bias: f32 [experts]
 *        (deepseek_v3), w13: f32 [experts + shared, R1, hidden] (R1 = 2 inter gated, else inter),
 *        w2: f32 [experts + shared, hidden, inter], b13: f32 [.., R1], b2: f32 [.., hidden] (bias=1)
 *     -> out: bf16 [tokens, hidden], out.bound: f64, and the stages
 *        stage.route.ids i32 / stage.route.weights f32 [tokens, top_k + shared],
 *        stage.a1.x f32 [tokens, hidden] (dequantized a1), stage.gemm1.h f32 [rows, R1],
 *        stage.act.a f32 [rows, inter], stage.a2.x f32 [rows, inter] (dequantized a2),
 *        stage.gemm2.y f32 [rows, hidden], stage.combine.out f32 [tokens, hidden];
 *        rows = tokens * (top_k + shared), row t * (top_k + shared) + j is token t's j-th expert.
 * params: recipe (bf16 fp8_tensor fp8_block nvfp4 mxfp8 mxfp4), tokens hidden inter experts top_k
 * shared, route (qc_route_method names) n_group topk_group renorm rsf rsf_in_weights, act
 * (silu gelu gelu_tanh relu2 swiglu_oai swiglu_step) order (gate_up up_gate interleaved) alpha beta
 * limit, weight_on_input, bias; weights (inputs: the w13 and w2 tensors; generate: no weight
 * inputs, the op makes them from weight_seed with w13_std and w2_std, qc_moe_weight_fill in
 * moe_op.h); threads (2: the quantizations of row-local recipes in two threads, 1: one; the same
 * bytes either way); model (exact, the default, below; sm90-wgmma / sm90-wgmma-fast: parse_model).
 *
 * Memory: expert by expert (expert_gemm), each expert's weights are generated or read, quantized,
 * dequantized and used for its rows, then dropped, so the op holds one expert's weights at a time
 * (DeepSeek-V3's 256 experts would be 45 GB of f32 inputs and 90 GB dequantized); GEMM1 runs
 * over all experts before GEMM2 because the a2 scales of per-tensor FP8 and the NVFP4 globals are
 * dynamic over all rows. The per-row state (h, act, a2, y, |.| sums: about 8 GB at 4096 tokens x
 * 9 experts of DeepSeek-V3) and every stage tensor are kept.
 *
 * Order of operations (layouts.md §9.2, the flashinfer references: fp32 except at the explicit
 * requantization points): a1 = quant(x) per the recipe; h = a1 . W13[e]^T + b13 (exact, rounded
 * once to fp32: exact.h qcx_gemm_rn32, so any kernel that sums exactly can match it bit for bit);
 * h *= w if weight_on_input; a = act(h) (fp32); a2 = quant(bf16(a)) (layouts.md §9.4: "act -> bf16
 * -> quantize", scales dynamic over all rows for per-tensor and NVFP4 globals); y = a2 . W2[e]^T + b2;
 * out = rsf_out * sum_j w_j y_j (w_j = 1 with weight_on_input), rounded once to bf16. Operands are
 * dequantized to fl32(code scale) (gemm.h qcref_operand_f64) and NVFP4's then times its global scale
 * in fp64, exactly (so alpha is exact here). out.bound is the
 * fp32-accumulation bound of GEMM2 (reference/ops/gemm.h) carried through the weighted sum plus
 * the combine's fp32 roundings and the bf16 output: a kernel must match the stages before GEMM2
 * (same routing, same a2 codes); a difference there is reported at its stage.
 *
 * Model sm90-wgmma (recipes fp8_tensor, fp8_block) keeps the codes instead: each expert GEMM is
 * the H200's tensor core bit for bit (gemm.h qcref_gemm_sm90 / _block: the tensor-core sums,
 * promoted every 128 of K, cuBLASLt's tensorwise epilogue or DeepGEMM's block fma, then the fp32
 * bias), h = that fp32 value (times the routing weight with weight_on_input), and the combine is
 * fp32 in routing order (qcref_moe_combine_f32): every stage and out are then bit-exact, out.bound
 * is 0. This is the arithmetic of the cuda backend's MoE (kernels/cuda), which a real fused-MoE
 * kernel matches where it makes the same choices (docs/notes/mma_sm90.md). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../generate.h"
#include "../moe_op.h"
#include "../quant_job.h"
#include "../registry.h"
#include "exact.h"
#include "ops/gemm.h"

typedef struct moe_recipe {
    const char *name;
    int act, weight; /* qc_recipe, or -1: bf16 */
    const char *doc;
} moe_recipe;

static const moe_recipe recipes[] = {
    {"bf16", -1, -1, "bf16 activations and weights"},
    {"fp8_tensor", QC_RECIPE_TENSOR, QC_RECIPE_TENSOR, "layouts.md §9.4 per-tensor FP8 (a2 scale dynamic over all rows)"},
    {"fp8_block", QC_RECIPE_TOKEN_GROUP, QC_RECIPE_BLOCK, "layouts.md §9.4 DeepSeek FP8: per-token-group 128 x 128x128"},
    {"nvfp4", QC_RECIPE_NVFP4, QC_RECIPE_NVFP4, "layouts.md §9.4 NVFP4 with global scales (g1/g2 alphas exact)"},
    {"mxfp8", QC_RECIPE_MXFP8, QC_RECIPE_MXFP8, "layouts.md §9.4 MXFP8 (trtllm-gen MxFp8)"},
    {"mxfp4", -1, QC_RECIPE_MXFP4, "layouts.md §9.4 MXFP4 weights x bf16 activations (gpt-oss)"},
};
#define NRECIPES ((int)(sizeof recipes / sizeof recipes[0]))

typedef struct moe_state {
    qc_moe_cfg cfg;
    int64_t kk, r1, rows; /* slots per token, GEMM1 width, rows = tokens * kk */
    int *ids;
    float *w;
    double *a1, *a2, *y64, *s64;
    float *h, *act;
    const float *b13;
    /* weights: inputs or generated (ws); one expert at a time in wf (f32, generated) and wd
     * (dequantized, f64) */
    qc_moe_weight_src ws;
    int threads;
    float *wf;
    double *wd;
    /* model sm90-wgmma: the activations' codes and scales, b2, and GEMM2's fp32 rows */
    qc_quant_job a1j, a2j;
    qc_quantized a1q, a2q;
    const float *b2;
    float *y32;
} moe_state;

static int get_name(qc_op_call *c, const char *key, const char *dflt, int (*lookup)(const char *), int *out)
{
    const char *v = qc_param_or(c->params, key, dflt);
    *out = lookup(v);
    if (*out < 0)
        snprintf(c->err, c->errlen, "param %s=%s: unknown name", key, v);
    return *out < 0 ? 2 : 0;
}

static int recipe_from_name(const char *s)
{
    for (int r = 0; r < NRECIPES; r++)
        if (strcmp(recipes[r].name, s) == 0)
            return r;
    return -1;
}

static int parse_cfg(qc_op_call *c, qc_moe_cfg *m)
{
    int64_t k, ng, tg, renorm, riw, woi, bias;
    int route, act, order;
    float rsf;
    memset(m, 0, sizeof *m);
    if (get_name(c, "recipe", "", recipe_from_name, &m->recipe) ||
        qc_op_param_int(c, "tokens", -1, 0, 1 << 20, &m->t) ||
        qc_op_param_int(c, "hidden", -1, 1, 1 << 16, &m->h) || qc_op_param_int(c, "inter", -1, 1, 1 << 16, &m->i) ||
        qc_op_param_int(c, "experts", -1, 1, 1024, &m->e) || qc_op_param_int(c, "top_k", -1, 1, 1024, &k) ||
        qc_op_param_int(c, "shared", 0, 0, 1, &m->shared) || qc_op_param_int(c, "n_group", 0, 0, 1024, &ng) ||
        qc_op_param_int(c, "topk_group", 0, 0, 1024, &tg) || qc_op_param_int(c, "renorm", 1, 0, 1, &renorm) ||
        qc_op_param_int(c, "rsf_in_weights", 1, 0, 1, &riw) || qc_op_param_int(c, "weight_on_input", 0, 0, 1, &woi) ||
        qc_op_param_int(c, "bias", 0, 0, 1, &bias) || qc_op_param_float(c, "rsf", 1.0f, &rsf) ||
        get_name(c, "route", "renorm_naive", qc_route_method_from_name, &route) ||
        get_name(c, "act", "silu", qc_act_from_name, &act) ||
        get_name(c, "order", "gate_up", qc_w13_order_from_name, &order) ||
        qc_op_param_float(c, "alpha", 1.702f, &m->act.alpha) || qc_op_param_float(c, "beta", 1.0f, &m->act.beta) ||
        qc_op_param_float(c, "limit", 7.0f, &m->act.limit))
        return 2;
    qc_route_cfg r = {(qc_route_method)route, (int)m->e, (int)k, (int)ng, (int)tg, (int)renorm, rsf, (int)riw,
                      (int)m->shared, NULL, 0};
    m->route = r;
    m->act.act = (qc_act)act, m->act.order = (qc_w13_order)order;
    m->weight_on_input = (int)woi, m->bias = (int)bias;
    m->rsf_out = riw ? 1.0f : rsf;
    const char *rule = qcref_route_check(&m->route);
    if (rule || (woi && k + m->shared != 1)) {
        snprintf(c->err, c->errlen, "routing: %s", rule ? rule : "weight_on_input needs top_k 1 (layouts.md §9.2)");
        return 2;
    }
    return 0;
}

static const char *const model_names[] = {"exact", "sm90-wgmma", "sm90-wgmma-fast"}; /* by qc_moe_model */

/* Param model: exact (the default: exact expert GEMMs, h rounded once, out within GEMM2's fp32 bound) or
 * sm90-wgmma[-fast]: every expert GEMM as the H200's FP8 tensor core computes it
 * (reference/arith/mma_sm90.h) under the K schedule of cuBLASLt and DeepGEMM (the tensor core's
 * sum promoted into fp32 every 128 of K; -fast: never), the fp32 combine of qcref_moe_combine_f32,
 * out.bound 0. 0, or 2 with c->err. */
static int parse_model(qc_op_call *c, qc_moe_cfg *m)
{
    const char *model = qc_param_or(c->params, "model", "exact");
    int w = recipes[m->recipe].weight;
    m->model = QC_MOE_MODEL_EXACT;
    for (int i = 1; i < 3; i++)
        m->model = strcmp(model, model_names[i]) ? m->model : (qc_moe_model)i;
    if (m->model == QC_MOE_MODEL_EXACT && strcmp(model, "exact"))
        snprintf(c->err, c->errlen, "param model=%s (known: exact, sm90-wgmma, sm90-wgmma-fast)", model);
    else if (m->model != QC_MOE_MODEL_EXACT && w != QC_RECIPE_TENSOR && w != QC_RECIPE_BLOCK)
        snprintf(c->err, c->errlen, "model %s: recipe %s; the tensor-core model takes FP8 operands (recipes "
                 "fp8_tensor, fp8_block)", model, recipes[m->recipe].name);
    else if (m->model == QC_MOE_MODEL_SM90_FAST && w == QC_RECIPE_BLOCK)
        snprintf(c->err, c->errlen, "model sm90-wgmma-fast: fp8_block is promoted every 128 of K (model sm90-wgmma)");
    else
        return 0;
    return 2;
}

/* *out = the f32 data of input name with numel elements; 0 or 2. */
static int input(qc_op_call *c, const char *name, int64_t numel, const float **out)
{
    const qc_tensor *t = qc_op_input_f32(c, name, numel);
    *out = t ? t->data : NULL;
    return t ? 0 : 2;
}

int qc_moe_quant_job(qc_op_call *c, int recipe, int64_t rows, int64_t cols, struct qcheck_quant_spec *j)
{
    qc_params p = {0};
    char v[32], why[512];
    qc_params_set(&p, "recipe", qc_recipe_name(recipe));
    snprintf(v, sizeof v, "%lld", (long long)rows);
    qc_params_set(&p, "rows", v);
    snprintf(v, sizeof v, "%lld", (long long)cols);
    qc_params_set(&p, "cols", v);
    if (recipe == QC_RECIPE_TOKEN_GROUP)
        qc_params_set(&p, "group", "128");
    if (recipe == QC_RECIPE_BLOCK)
        qc_params_set(&p, "block", "128x128");
    if (qc_quant_job_from_params(&p, 0, j, why, sizeof why)) {
        snprintf(c->err, c->errlen, "%s [%lld, %lld]: %s", qc_recipe_name(recipe), (long long)rows, (long long)cols,
                 why);
        return 2;
    }
    return 0;
}

/* x quantized by job j (recipe < 0: rounded to bf16, no job) and dequantized exactly into out;
 * thread-safe. 0, or 2 out of memory. */
static int quant_apply(int recipe, const qc_quant_job *j, const float *x, int64_t rows, int64_t cols, double *out,
                       void (*tweak)(const qc_quant_job *, qc_quantized *))
{
    qc_cast_policy bf = qcref_default_policy();
    if (recipe < 0) {
        for (int64_t i = 0; i < rows * cols; i++)
            out[i] = qcref_decode(QC_BF16, qcref_encode(QC_BF16, x[i], &bf), &bf);
        return 0;
    }
    qc_quantized q;
    if (qc_quant_job_alloc(j, &q))
        return 2;
    int pow2 = 1;
    qcref_quant(j->recipe, &j->policy, x, j->rows, j->cols, j->has_static ? &j->static_scale : NULL, NULL, &q);
    if (tweak)
        tweak(j, &q);
    qcref_operand_f64(j->recipe, &j->policy, &q, out, &pow2);
    for (int64_t i = 0; recipe == QC_RECIPE_NVFP4 && i < rows * cols; i++)
        out[i] *= q.gscale; /* exact: e2m1 * e4m3 (6 bits) * fp32 (24 bits) */
    qc_quant_job_free(&q);
    return 0;
}

/* Model sm90-wgmma: x [rows, cols] quantized with recipe into *q (job *j: codes and fp32 scales as
 * the tensor core's kernels take them), tweaked (mutants), and dequantized exactly into out (NULL:
 * not needed). The elements must be ones wgmma multiplies. 0, or 2 with c->err. */
static int quant_codes(qc_op_call *c, int recipe, const float *x, int64_t rows, int64_t cols, qc_quant_job *j,
                       qc_quantized *q, double *out, void (*tweak)(const qc_quant_job *, qc_quantized *))
{
    memset(q, 0, sizeof *q);
    if (qc_moe_quant_job(c, recipe, rows, cols, j))
        return 2;
    if (j->policy.elem != QC_E4M3FN && j->policy.elem != QC_E5M2) {
        snprintf(c->err, c->errlen, "model sm90-wgmma: %s elements are %s; wgmma takes e4m3fn and e5m2",
                 qc_recipe_name(recipe), qc_format_name(j->policy.elem));
        return 2;
    }
    if (qc_quant_job_alloc(j, q)) {
        snprintf(c->err, c->errlen, "out of memory quantizing [%lld, %lld]", (long long)rows, (long long)cols);
        return 2;
    }
    int pow2 = 1;
    qcref_quant(j->recipe, &j->policy, x, j->rows, j->cols, j->has_static ? &j->static_scale : NULL, NULL, q);
    if (tweak)
        tweak(j, q);
    if (out)
        qcref_operand_f64(j->recipe, &j->policy, q, out, &pow2);
    return 0;
}

/* Optional generation of the f32 rows before quant_exact quantizes them (weights=generate). */
typedef struct quant_gen {
    uint64_t seed;
    int64_t expert;
    int tensor;
    float std;
    float *buf; /* the whole tensor; each half fills its rows */
} quant_gen;

typedef struct quant_half {
    int recipe;
    qc_quant_job job;
    const float *x;
    int64_t row0, rows, cols;
    double *out;
    const quant_gen *gen;
    void (*tweak)(const qc_quant_job *, qc_quantized *);
    int rc;
} quant_half;

static void *quant_half_run(void *arg)
{
    quant_half *h = arg;
    size_t first = (size_t)(h->row0 * h->cols), n = (size_t)(h->rows * h->cols);
    if (h->gen)
        qc_moe_weight_fill(h->gen->seed, h->gen->expert, h->gen->tensor, h->gen->std, first, n, h->gen->buf + first);
    h->rc = quant_apply(h->recipe, &h->job, h->x + first, h->rows, h->cols, h->out + first, h->tweak);
    return NULL;
}

/* x [rows, cols] (generated first by gen when given) quantized with recipe (or rounded to bf16)
 * and dequantized exactly into out. In two threads on two row ranges where the recipe's scales are
 * row-local (bf16, token, token group, 128x128 blocks split at a multiple of 128 rows, MX), so the
 * codes and scales are those of one call; per-tensor FP8 and NVFP4 (a scale over the whole tensor)
 * in one. The machine has 2 cores: this halves the weight phase of a 256-expert layer (dgemm uses
 * both already). threads = 1 (param threads=1): one call, always. 0, or 2 with the message in
 * c->err. */
static int quant_exact(qc_op_call *c, int recipe, const float *x, int64_t rows, int64_t cols, double *out,
                       const quant_gen *gen, int threads, void (*tweak)(const qc_quant_job *, qc_quantized *))
{
    int local = recipe < 0 || recipe == QC_RECIPE_TOKEN || recipe == QC_RECIPE_TOKEN_GROUP ||
                recipe == QC_RECIPE_BLOCK || recipe == QC_RECIPE_MXFP8 || recipe == QC_RECIPE_MXFP6 ||
                recipe == QC_RECIPE_MXFP4;
    int64_t mid = recipe == QC_RECIPE_BLOCK ? (rows / 2 + 127) / 128 * 128 : rows / 2;
    int two = threads > 1 && local && mid > 0 && mid < rows && rows * cols >= (1 << 16);
    quant_half h[2] = {{recipe, {0}, x, 0, two ? mid : rows, cols, out, gen, tweak, 0},
                       {recipe, {0}, x, mid, rows - mid, cols, out, gen, tweak, 0}};
    for (int i = 0; i < 1 + two; i++)
        if (recipe >= 0 && qc_moe_quant_job(c, recipe, h[i].rows, cols, &h[i].job))
            return 2;
    pthread_t th;
    int threaded = two && pthread_create(&th, NULL, quant_half_run, &h[1]) == 0;
    quant_half_run(&h[0]);
    if (threaded)
        pthread_join(th, NULL);
    else if (two)
        quant_half_run(&h[1]); /* no thread: the same halves one after the other */
    if (h[0].rc || (two && h[1].rc)) {
        snprintf(c->err, c->errlen, "out of memory quantizing [%lld, %lld]", (long long)rows, (long long)cols);
        return 2;
    }
    return 0;
}

static void *alloc(moe_state *s, qc_op_call *c, size_t n, size_t size)
{
    (void)s;
    void *p = calloc(n + 1, size);
    if (!p)
        snprintf(c->err, c->errlen, "out of memory (%zu x %zu bytes)", n, size);
    return p;
}

static int route_all(qc_op_call *c, moe_state *s, const float *logits, const float *rbias)
{
    s->cfg.route.bias = rbias;
    for (int64_t t = 0; t < s->cfg.t; t++)
        if (qcref_route(&s->cfg.route, logits + t * s->cfg.e, s->ids + t * s->kk, s->w + t * s->kk)) {
            snprintf(c->err, c->errlen, "routing refused token %lld", (long long)t);
            return 2;
        }
    return 0;
}

/* weights=generate (moe_op.h): output c = ((2 expert + tensor) << 40) + i of splitmix64 (Steele,
 * Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014) seeded with seed, so
 * any element is computed on its own; the sum of its four 16-bit lanes is Irwin-Hall(4) on
 * [0, 262140] with mean 131070 and standard deviation sqrt((2^32 - 1) / 3). */
void qc_moe_weight_fill(uint64_t seed, int64_t expert, int tensor, float std, size_t first, size_t n, float *out)
{
    uint64_t c0 = ((uint64_t)(2 * expert + tensor) << 40) + 1 + (uint64_t)first;
    double k = (double)std / sqrt(4294967295.0 / 3.0);
    for (size_t i = 0; i < n; i++) {
        uint64_t z = qc_rng_mix(seed + (c0 + (uint64_t)i) * QC_RNG_GAMMA);
        int64_t u = (int64_t)((z & 0xFFFF) + ((z >> 16) & 0xFFFF) + ((z >> 32) & 0xFFFF) + (z >> 48));
        out[i] = (float)((double)(u - 131070) * k);
    }
}

/* Expert e's weight tensor t (0: W13 [R1, hidden], 1: W2 [hidden, inter]) quantized with the
 * recipe and dequantized exactly into s->wd, from the input tensor or generated: the op holds one
 * expert's weights at a time (256 DeepSeek-V3 experts are 45 GB of f32, 90 GB dequantized). */
static int expert_weights(qc_op_call *c, moe_state *s, int t, int64_t e, int64_t rows, int64_t cols)
{
    const float *src = s->ws.gen ? s->wf : s->ws.in[t] + e * rows * cols;
    quant_gen g = {s->ws.seed, e, t, s->ws.std[t], s->wf};
    return quant_exact(c, recipes[s->cfg.recipe].weight, src, rows, cols, s->wd, s->ws.gen ? &g : NULL, s->threads,
                       s->cfg.weight_tweak);
}

/* GEMM1's epilogue on the rows which[0..cnt) of one expert, whose fp32 outputs (b13 added) are y:
 * times the routing weight with weight_on_input, then the activation. */
static void gemm1_rows(moe_state *s, const int64_t *which, int64_t cnt, const float *y)
{
    for (int64_t q = 0; q < cnt; q++) {
        int64_t r = which[q];
        for (int64_t j = 0; j < s->r1; j++) {
            float v = y[q * s->r1 + j];
            s->h[r * s->r1 + j] = s->cfg.weight_on_input ? v * s->w[r] : v;
        }
        qcref_act_row(&s->cfg.act, s->h + r * s->r1, (size_t)s->cfg.i, s->act + r * s->cfg.i);
    }
}

/* Expert by expert (weights quantized when the expert gets rows, then dropped): t = 0, GEMM1 of a1
 * (per token) + b13 rounded once to fp32 (qcx_gemm_rn32: the same bits whatever the order of the
 * fp64 sums) and its epilogue into h and act; t = 1, GEMM2 of a2 (per row) into y64 with the
 * magnitude sums s64. */
static int expert_gemm(qc_op_call *c, moe_state *s, int t)
{
    int64_t ne = s->cfg.e + s->cfg.shared, kdim = t ? s->cfg.i : s->cfg.h, n = t ? s->cfg.h : s->r1, most = 0;
    const double *x = t ? s->a2 : s->a1;
    int64_t *count = alloc(s, c, (size_t)ne, sizeof *count), *which = alloc(s, c, (size_t)s->rows, sizeof *which);
    int rc = count && which ? 0 : 2;
    for (int64_t r = 0; !rc && r < s->rows; r++)
        most = ++count[s->ids[r]] > most ? count[s->ids[r]] : most;
    double *xa = rc ? NULL : alloc(s, c, (size_t)(most * kdim), sizeof *xa);
    /* GEMM2: fp64 products and magnitude sums; GEMM1: its fp32 outputs (qcx_gemm_rn32) */
    double *ya = t && !rc ? alloc(s, c, (size_t)(most * n), 8) : NULL;
    double *sa = t && !rc ? alloc(s, c, (size_t)(most * n), 8) : NULL;
    float *h = t || rc ? NULL : alloc(s, c, (size_t)(most * n), 4);
    rc = rc || !xa || (t ? !ya || !sa : !h) ? 2 : 0;
    for (int64_t e = 0; !rc && e < ne; e++) {
        int64_t cnt = 0;
        if (!count[e])
            continue; /* an expert that gets no tokens: its weights are never needed */
        for (int64_t r = 0; r < s->rows; r++)
            if (s->ids[r] == e) {
                memcpy(xa + cnt * kdim, x + (t ? r : r / s->kk) * kdim, (size_t)kdim * sizeof *xa);
                which[cnt++] = r;
            }
        int g = 0;
        if (expert_weights(c, s, t, e, n, kdim))
            rc = 3;
        else if ((g = t ? qcx_gemm((size_t)cnt, (size_t)n, (size_t)kdim, xa, s->wd, 1.0, NULL, ya, sa)
                        : qcx_gemm_rn32((size_t)cnt, (size_t)n, (size_t)kdim, xa, s->wd,
                                        s->cfg.bias ? s->b13 + e * s->r1 : NULL, h)))
            rc = g == -2 ? 4 : 2;
        else if (!t)
            gemm1_rows(s, which, cnt, h);
        else
            for (int64_t q = 0; q < cnt; q++) {
                memcpy(s->y64 + which[q] * n, ya + q * n, (size_t)n * sizeof *ya);
                memcpy(s->s64 + which[q] * n, sa + q * n, (size_t)n * sizeof *sa);
            }
    }
    free(count), free(which), free(xa), free(ya), free(sa), free(h);
    if (rc == 2)
        snprintf(c->err, c->errlen, "out of memory in the expert GEMMs");
    else if (rc == 4)
        snprintf(c->err, c->errlen, "model exact: an element of GEMM1 lies within the fp64 GEMM's error of an fp32 "
                 "rounding boundary, and this build has no MPFR to sum it exactly");
    return rc ? 2 : 0;
}

/* Model sm90-wgmma: expert e's weight tensor t (0: W13 [rows = R1, cols = hidden], 1: W2 [hidden,
 * inter]) as codes and scales in *q (the caller frees it), from the input tensor or generated. */
static int expert_codes(qc_op_call *c, moe_state *s, int t, int64_t e, int64_t rows, int64_t cols, qc_quant_job *j,
                        qc_quantized *q)
{
    const float *src = s->ws.in[t] ? s->ws.in[t] + e * rows * cols : s->wf;
    if (s->ws.gen)
        qc_moe_weight_fill(s->ws.seed, e, t, s->ws.std[t], 0, (size_t)(rows * cols), s->wf);
    return quant_codes(c, recipes[s->cfg.recipe].weight, src, rows, cols, j, q, NULL, s->cfg.weight_tweak);
}

/* One expert's GEMM on the tensor-core model: its cnt gathered rows xa (codes) with their scales
 * (xs: ls per row for fp8_block; per tensor: the activation's one scale), times the expert's
 * weights w, + its bias in fp32 (gemm.h qcref_gemm_sm90, _block) into y [cnt, n]. 0 or -1. */
static int sm90_expert(const moe_state *s, const uint8_t *xa, int xe5, const float *xs, const qc_quant_job *wj,
                       const qc_quantized *w, int64_t cnt, int64_t n, int64_t kdim, const float *bias, float *y)
{
    int we5 = wj->policy.elem == QC_E5M2;
    if (wj->recipe == QC_RECIPE_BLOCK)
        return qcref_gemm_sm90_block(xa, xe5, w->q, we5, (size_t)cnt, (size_t)n, (size_t)kdim, xs, w->scale_f32, bias,
                                     y);
    int promote = s->cfg.model == QC_MOE_MODEL_SM90 ? 4 : 0; /* k-steps of 32 between fp32 additions */
    return qcref_gemm_sm90(xa, xe5, w->q, we5, (size_t)cnt, (size_t)n, (size_t)kdim, xs, 0, w->scale_f32, 0, bias,
                           promote, y);
}

/* Model sm90-wgmma, expert by expert as expert_gemm: t = 0, GEMM1 of a1's codes (per token) and its
 * epilogue into h and act; t = 1, GEMM2 of a2's codes (per row) into y32. */
static int expert_gemm_sm90(qc_op_call *c, moe_state *s, int t)
{
    int64_t ne = s->cfg.e + s->cfg.shared, kdim = t ? s->cfg.i : s->cfg.h, n = t ? s->cfg.h : s->r1, most = 0;
    const qc_quantized *xq = t ? &s->a2q : &s->a1q;
    int block = recipes[s->cfg.recipe].act == QC_RECIPE_TOKEN_GROUP, xe5 = (t ? &s->a2j : &s->a1j)->policy.elem == QC_E5M2;
    int64_t ls = block ? (kdim + 127) / 128 : 0; /* a's fp32 scales per row: one per 128 of K */
    const float *bias = !s->cfg.bias ? NULL : t ? s->b2 : s->b13;
    int64_t *count = alloc(s, c, (size_t)ne, sizeof *count), *which = alloc(s, c, (size_t)s->rows, sizeof *which);
    int rc = count && which ? 0 : 2;
    for (int64_t r = 0; !rc && r < s->rows; r++)
        most = ++count[s->ids[r]] > most ? count[s->ids[r]] : most;
    uint8_t *xa = rc ? NULL : alloc(s, c, (size_t)(most * kdim), 1);
    float *xs = rc ? NULL : alloc(s, c, (size_t)(most * ls), 4), *y = rc ? NULL : alloc(s, c, (size_t)(most * n), 4);
    rc = rc || !xa || !xs || !y ? 2 : 0;
    for (int64_t e = 0; !rc && e < ne; e++) {
        int64_t cnt = 0;
        qc_quant_job wj;
        qc_quantized w;
        if (!count[e])
            continue; /* an expert that gets no tokens: its weights are never needed */
        for (int64_t r = 0; r < s->rows; r++)
            if (s->ids[r] == e) {
                int64_t src = t ? r : r / s->kk;
                memcpy(xa + cnt * kdim, xq->q + src * kdim, (size_t)kdim);
                memcpy(xs + cnt * ls, xq->scale_f32 + src * ls, (size_t)ls * sizeof *xs);
                which[cnt++] = r;
            }
        if ((rc = expert_codes(c, s, t, e, n, kdim, &wj, &w)))
            break; /* c->err says why */
        rc = sm90_expert(s, xa, xe5, block ? xs : xq->scale_f32, &wj, &w, cnt, n, kdim, bias ? bias + e * n : NULL, y)
                 ? 2
                 : 0;
        if (rc)
            snprintf(c->err, c->errlen, "out of memory in the expert GEMMs");
        else if (!t)
            gemm1_rows(s, which, cnt, y);
        else
            for (int64_t q = 0; q < cnt; q++)
                memcpy(s->y32 + which[q] * n, y + q * n, (size_t)n * sizeof *y);
        qc_quant_job_free(&w);
    }
    free(count), free(which), free(xa), free(xs), free(y);
    return rc ? 2 : 0;
}

/* Model sm90-wgmma's combine (qcref_moe_combine_f32), out.bound 0, and the stage tensors of GEMM2
 * and the combine. */
static int combine_sm90(qc_op_call *c, moe_state *s)
{
    int64_t t = s->cfg.t, h = s->cfg.h, kk = s->kk;
    float *out = alloc(s, c, (size_t)(t * h), 4), *ones = alloc(s, c, (size_t)kk, 4);
    int rc = !out || !ones || qc_op_add_tensor(c, "out", QC_ST_U16, "bf16", t, h, NULL) ||
             qc_op_add_tensor(c, "out.bound", QC_ST_F64, "f64", t, h, NULL); /* zeros: bit-exact */
    for (int64_t q = 0; !rc && q < kk; q++)
        ones[q] = 1.0f; /* weight_on_input: the weights were applied to GEMM1's output */
    for (int64_t tk = 0; !rc && tk < t; tk++) {
        const float *w = s->cfg.weight_on_input ? ones : s->w + tk * kk;
        uint16_t *ob = qc_set_find(c->out, "out")->data;
        for (int64_t j = 0; j < h; j++) {
            out[tk * h + j] = qcref_moe_combine_f32(w, s->y32 + tk * kk * h + j, (size_t)kk, (size_t)h, s->cfg.rsf_out);
            ob[tk * h + j] = (uint16_t)qcref_gemm_round_out(out[tk * h + j], QC_BF16);
        }
    }
    rc = rc || qc_op_add_tensor(c, "stage.gemm2.y", QC_ST_F32, "f32", s->rows, h, s->y32) ||
         qc_op_add_tensor(c, "stage.combine.out", QC_ST_F32, "f32", t, h, out);
    free(out), free(ones);
    return rc ? 2 : 0;
}

static int add_f32_of(qc_op_call *c, const char *name, int64_t rows, int64_t cols, const double *v)
{
    if (qc_op_add_tensor(c, name, QC_ST_F32, "f32", rows, cols, NULL))
        return 2;
    float *d = qc_set_find(c->out, name)->data;
    for (int64_t i = 0; i < rows * cols; i++)
        d[i] = (float)v[i];
    return 0;
}

static double gamma32(double n) { return n * 0x1p-24 / (1 - n * 0x1p-24); }

/* out = rsf_out * sum_j w_j y_j in fp64, its bound, and the output tensors of the combine. */
static int combine(qc_op_call *c, moe_state *s, const float *b2)
{
    int64_t t = s->cfg.t, h = s->cfg.h;
    double *out = alloc(s, c, (size_t)(t * h), 8);
    if (!out || qc_op_add_tensor(c, "out", QC_ST_U16, "bf16", t, h, NULL) ||
        qc_op_add_tensor(c, "out.bound", QC_ST_F64, "f64", t, h, NULL)) {
        free(out);
        return 2;
    }
    uint16_t *ob = qc_set_find(c->out, "out")->data;
    double *bd = qc_set_find(c->out, "out.bound")->data, rsf = fabs((double)s->cfg.rsf_out);
    for (int64_t tk = 0; tk < t; tk++)
        for (int64_t j = 0; j < h; j++) {
            double acc = 0, err = 0, mag = 0;
            for (int64_t q = 0; q < s->kk; q++) {
                int64_t r = tk * s->kk + q, e = s->ids[r];
                double wq = s->cfg.weight_on_input ? 1.0 : (double)s->w[r];
                double y = s->y64[r * h + j] + (s->cfg.bias ? (double)b2[e * h + j] : 0.0);
                double sy = s->s64[r * h + j] + (s->cfg.bias ? fabs((double)b2[e * h + j]) : 0.0);
                s->y64[r * h + j] = y;
                acc += wq * y;
                double g = qcref_gemm_bound(y, sy, (size_t)s->cfg.i, QC_F32, 0);
                err += qcref_gemm_may_overflow(y, g, QC_F32) ? INFINITY : fabs(wq) * g; /* y may be Inf: no claim */
                mag += fabs(wq * y);
            }
            double v = (double)s->cfg.rsf_out * acc, b = rsf * (err + gamma32(2.0 * (double)s->kk + 2) * (mag + err));
            out[tk * h + j] = v;
            ob[tk * h + j] = (uint16_t)qcref_gemm_round_out(v, QC_BF16);
            b = b + 2 * 0x1p-8 * (fabs(v) + b) + 2 * 0x1p-133;
            bd[tk * h + j] = isfinite(b) ? b * (1 + 0x1p-50) : INFINITY;
        }
    int rc = add_f32_of(c, "stage.gemm2.y", s->rows, h, s->y64) || add_f32_of(c, "stage.combine.out", t, h, out);
    free(out);
    return rc;
}

static int stages_before_gemm2(qc_op_call *c, moe_state *s)
{
    int64_t t = s->cfg.t;
    return qc_op_add_tensor(c, "stage.route.ids", QC_ST_I32, "i32", t, s->kk, s->ids) ||
           qc_op_add_tensor(c, "stage.route.weights", QC_ST_F32, "f32", t, s->kk, s->w) ||
           add_f32_of(c, "stage.a1.x", t, s->cfg.h, s->a1) ||
           qc_op_add_tensor(c, "stage.gemm1.h", QC_ST_F32, "f32", s->rows, s->r1, s->h) ||
           qc_op_add_tensor(c, "stage.act.a", QC_ST_F32, "f32", s->rows, s->cfg.i, s->act) ||
           add_f32_of(c, "stage.a2.x", s->rows, s->cfg.i, s->a2);
}

static void state_free(moe_state *s)
{
    free(s->ids), free(s->w), free(s->a1), free(s->a2), free(s->y64), free(s->s64), free(s->h), free(s->act);
    free(s->wf), free(s->wd), free(s->y32);
    qc_quant_job_free(&s->a1q), qc_quant_job_free(&s->a2q);
}

int qc_moe_weight_source(qc_op_call *c, int64_t experts, int64_t r1, int64_t hidden, int64_t inter,
                         qc_moe_weight_src *src)
{
    const char *mode = qc_param_or(c->params, "weights", "inputs");
    int64_t seed;
    memset(src, 0, sizeof *src);
    src->gen = strcmp(mode, "generate") == 0;
    if (!src->gen && strcmp(mode, "inputs")) {
        snprintf(c->err, c->errlen, "param weights=%s (known: inputs, generate)", mode);
        return 2;
    }
    if (!src->gen)
        return input(c, "w13", experts * r1 * hidden, &src->in[0]) ||
               input(c, "w2", experts * hidden * inter, &src->in[1]);
    if (qc_set_find((qc_tensor_set *)c->in, "w13") || qc_set_find((qc_tensor_set *)c->in, "w2")) {
        snprintf(c->err, c->errlen, "weights=generate makes w13 and w2 from weight_seed: drop those inputs");
        return 2;
    }
    if (qc_op_param_int(c, "weight_seed", 0, 0, INT64_MAX, &seed) ||
        qc_op_param_float(c, "w13_std", 0.06f, &src->std[0]) || qc_op_param_float(c, "w2_std", 0.09f, &src->std[1]))
        return 2;
    src->seed = (uint64_t)seed;
    return 0;
}

/* The weight source, the threads param and the scratch of one expert's generated weights. */
static int weight_source(qc_op_call *c, moe_state *s, int64_t ne)
{
    int64_t threads;
    if (qc_op_param_int(c, "threads", 2, 1, 2, &threads) ||
        qc_moe_weight_source(c, ne, s->r1, s->cfg.h, s->cfg.i, &s->ws))
        return 2;
    s->threads = (int)threads;
    size_t most = (size_t)(s->r1 > s->cfg.i ? s->r1 : s->cfg.i) * (size_t)s->cfg.h;
    return s->ws.gen && !(s->wf = alloc(s, c, most, sizeof *s->wf)) ? 2 : 0;
}

static int run(qc_op_call *c, moe_state *s)
{
    qc_moe_cfg *m = &s->cfg;
    int64_t ne = m->e + m->shared;
    s->kk = m->route.top_k + m->shared, s->r1 = qcref_act_gated(m->act.act) ? 2 * m->i : m->i, s->rows = m->t * s->kk;
    const float *x, *logits, *b2 = NULL;
    if (input(c, "x", m->t * m->h, &x) || input(c, "logits", m->t * m->e, &logits) || weight_source(c, s, ne) ||
        (m->bias && (input(c, "b13", ne * s->r1, &s->b13) || input(c, "b2", ne * m->h, &b2))))
        return 2;
    const float *rbias;
    if (qc_op_optional_f32(c, "route_bias", m->e, &rbias))
        return 2;
    size_t rows = (size_t)s->rows, wmost = (size_t)(s->r1 > m->i ? s->r1 : m->i) * (size_t)m->h;
    if (!(s->ids = alloc(s, c, rows, sizeof *s->ids)) || !(s->w = alloc(s, c, rows, 4)) ||
        !(s->a1 = alloc(s, c, (size_t)(m->t * m->h), 8)) || !(s->wd = alloc(s, c, wmost, 8)) ||
        !(s->h = alloc(s, c, rows * (size_t)s->r1, 4)) || !(s->act = alloc(s, c, rows * (size_t)m->i, 4)) ||
        !(s->a2 = alloc(s, c, rows * (size_t)m->i, 8)))
        return 2;
    const moe_recipe *rc = &recipes[m->recipe];
    int sm90 = m->model != QC_MOE_MODEL_EXACT;
    s->b2 = b2;
    if (route_all(c, s, logits, rbias) ||
        (sm90 ? quant_codes(c, rc->act, x, m->t, m->h, &s->a1j, &s->a1q, s->a1, NULL) || expert_gemm_sm90(c, s, 0)
              : quant_exact(c, rc->act, x, m->t, m->h, s->a1, NULL, s->threads, NULL) || expert_gemm(c, s, 0)))
        return 2;
    float *abf = alloc(s, c, rows * (size_t)m->i, 4);
    qc_cast_policy bf = qcref_default_policy();
    for (size_t i = 0; abf && i < rows * (size_t)m->i; i++) /* layouts.md §9.4: act -> bf16 -> quantize */
        abf[i] = qcref_decode(QC_BF16, qcref_encode(QC_BF16, s->act[i], &bf), &bf);
    int bad = !abf || (sm90 ? quant_codes(c, rc->act, abf, s->rows, m->i, &s->a2j, &s->a2q, s->a2, NULL)
                            : quant_exact(c, rc->act, abf, s->rows, m->i, s->a2, NULL, s->threads, NULL));
    free(abf);
    if (bad || stages_before_gemm2(c, s))
        return 2;
    /* a1, h and act live on in their stage tensors only: GEMM2 needs a2 */
    free(s->a1), free(s->h), free(s->act);
    s->a1 = NULL, s->h = NULL, s->act = NULL;
    if (sm90)
        return !(s->y32 = alloc(s, c, rows * (size_t)m->h, 4)) || expert_gemm_sm90(c, s, 1) || combine_sm90(c, s) ? 2 : 0;
    if (!(s->y64 = alloc(s, c, rows * (size_t)m->h, 8)) || !(s->s64 = alloc(s, c, rows * (size_t)m->h, 8)) ||
        expert_gemm(c, s, 1))
        return 2;
    return combine(c, s, b2);
}

int qc_moe_op(qc_op_call *c, qc_moe_tweak tweak)
{
    moe_state s;
    memset(&s, 0, sizeof s);
    if (parse_cfg(c, &s.cfg) || parse_model(c, &s.cfg))
        return 2;
    const qc_tensor *rb = qc_set_find((qc_tensor_set *)c->in, "route_bias");
    s.cfg.route.bias = rb && qc_tensor_numel(rb) ? rb->data : NULL; /* for a tweak to read; routing sets it again */
    const qc_tensor *lg = qc_set_find((qc_tensor_set *)c->in, "logits");
    s.cfg.logits = lg && lg->storage == QC_ST_F32 && qc_tensor_numel(lg) == s.cfg.t * s.cfg.e ? lg->data : NULL;
    const char *why = tweak ? s.cfg.t == 0 ? "no tokens: nothing a rule could change" : tweak(&s.cfg) : NULL;
    if (why) {
        snprintf(c->err, c->errlen, "%s", why);
        return QC_OP_DECLINED;
    }
    int rc = run(c, &s);
    state_free(&s);
    return rc;
}

static int ref_moe(qc_op_call *c) { return qc_moe_op(c, NULL); }

int qc_moe_weight_recipe(const qc_moe_cfg *cfg) { return recipes[cfg->recipe].weight; }

/* ---- the quantized weights an exported instance carries ---- */

int qc_moe_expert_codes(qc_op_call *c, int recipe, const char *name, const float *w, int64_t ne, int64_t rows,
                        int64_t cols)
{
    char tn[QC_NAME_LEN];
    qcheck_tensor codes, scale = {0}, gscale = {0};
    snprintf(tn, sizeof tn, "%s.codes", name);
    if (recipe < 0) {
        qc_cast_policy bf = qcref_default_policy();
        int64_t shape[3] = {ne, rows, cols};
        if (qc_op_output(c, tn, QC_ST_U16, "bf16", 3, shape, &codes))
            return 2;
        for (int64_t i = 0; i < ne * rows * cols; i++)
            ((uint16_t *)codes.data)[i] = (uint16_t)qcref_encode(QC_BF16, w[i], &bf);
        return 0;
    }
    qc_quant_job j;
    int64_t gr, gc;
    if (qc_moe_quant_job(c, recipe, rows, cols, &j))
        return 2;
    qc_quant_job_scale_grid(&j, &gr, &gc);
    int fp4 = qc_quant_job_fp4(&j), f32 = recipe < QC_RECIPE_MXFP8, nv = recipe == QC_RECIPE_NVFP4;
    int64_t cshape[3] = {ne, rows, fp4 ? (cols + 1) / 2 : cols}, sshape[3] = {ne, gr, gc};
    size_t qb = (size_t)(rows * cshape[2]), sb = (size_t)(gr * gc) * (f32 ? 4 : 1);
    int rc = qc_op_output(c, tn, QC_ST_U8, fp4 ? "e2m1x2" : qc_format_name(j.policy.elem), 3, cshape, &codes);
    snprintf(tn, sizeof tn, "%s.scale", name);
    rc = rc || qc_op_output(c, tn, f32 ? QC_ST_F32 : QC_ST_U8, f32 ? "f32" : nv ? "e4m3fn" : "e8m0", 3, sshape, &scale);
    snprintf(tn, sizeof tn, "%s.gscale", name);
    rc = rc || (nv && qc_op_output(c, tn, QC_ST_F32, "f32", 1, &ne, &gscale));
    for (int64_t e = 0; !rc && e < ne; e++) {
        qc_quantized q;
        size_t got_q, got_s;
        uint8_t *sbytes = NULL;
        if (qc_quant_job_alloc(&j, &q)) {
            snprintf(c->err, c->errlen, "out of memory quantizing %s of expert %lld", name, (long long)e);
            return 2;
        }
        qcref_quant(j.recipe, &j.policy, w + e * rows * cols, j.rows, j.cols, j.has_static ? &j.static_scale : NULL,
                    NULL, &q);
        rc = qc_quant_job_serialize(&j, &q, &got_q, &sbytes, &got_s, c->err, c->errlen) ? 2 : 0;
        if (!rc && (got_q != qb || got_s != sb)) { /* the grid of qc_quant_job_scale_grid is the layout's */
            snprintf(c->err, c->errlen, "%s: %zu code and %zu scale bytes, expected %zu and %zu", name, got_q, got_s,
                     qb, sb);
            rc = 2;
        }
        if (!rc && qb)
            memcpy((uint8_t *)codes.data + (size_t)e * qb, q.q, qb);
        if (!rc && sb)
            memcpy((uint8_t *)scale.data + (size_t)e * sb, sbytes, sb);
        if (!rc && nv)
            ((float *)gscale.data)[e] = q.gscale;
        free(sbytes);
        qc_quant_job_free(&q);
    }
    return rc;
}

/* An instance with its weights as inputs also carries them as the kernel consumes them:
 * w13.* and w2.* of qc_moe_expert_codes (docs/backends.md "moe"). weights=generate instances carry
 * no weights at all (DeepSeek-V3's are 45 GB): in-process backends get them from the weights
 * callback, an exec backend cannot run them. */
static int moe_weight_inputs(qc_op_call *c)
{
    qc_moe_cfg m;
    qc_moe_weight_src ws;
    if (parse_cfg(c, &m))
        return 2;
    int64_t ne = m.e + m.shared, r1 = qcref_act_gated(m.act.act) ? 2 * m.i : m.i;
    int weight = recipes[m.recipe].weight;
    if (qc_moe_weight_source(c, ne, r1, m.h, m.i, &ws))
        return 2;
    return ws.gen ? 0
                  : qc_moe_expert_codes(c, weight, "w13", ws.in[0], ne, r1, m.h) ||
                        qc_moe_expert_codes(c, weight, "w2", ws.in[1], ne, m.h, m.i);
}

/* ---- the ABI adapter ---- */

typedef struct moe_weights {
    moe_state *s;
    int64_t experts;
} moe_weights;

/* Expert e's tensor t as f32 values: the input's slice, or generated (weights=generate). */
static int weights_f32(void *self, int64_t e, int t, float *out)
{
    moe_weights *w = self;
    moe_state *s = w->s;
    if (e < 0 || e >= w->experts || (t != 0 && t != 1))
        return 1;
    int64_t n = t ? s->cfg.h * s->cfg.i : s->r1 * s->cfg.h;
    if (s->ws.gen)
        qc_moe_weight_fill(s->ws.seed, e, t, s->ws.std[t], 0, (size_t)n, out);
    else
        memcpy(out, s->ws.in[t] + e * n, (size_t)n * 4);
    return 0;
}

/* The stages a backend may fill, in the reference's order and shapes (docs/backends.md). */
static const char *const moe_stages[] = {"route.ids", "route.weights", "a1.x", "gemm1.h", "act.a", "a2.x",
                                         "gemm2.y", "combine.out"};
#define NSTAGES 8

static int abi_moe(qc_op_call *c, const qcheck_backend *b)
{
    moe_state s;
    memset(&s, 0, sizeof s);
    if (parse_cfg(c, &s.cfg) || parse_model(c, &s.cfg))
        return 2;
    qc_moe_cfg *m = &s.cfg;
    int64_t ne = m->e + m->shared;
    s.kk = m->route.top_k + m->shared, s.r1 = qcref_act_gated(m->act.act) ? 2 * m->i : m->i, s.rows = m->t * s.kk;
    const float *unused;
    const moe_recipe *mr = &recipes[m->recipe];
    qc_quant_job jobs[4]; /* a1, a2, w13, w2 */
    int rc = input(c, "x", m->t * m->h, &unused) || input(c, "logits", m->t * m->e, &unused) || weight_source(c, &s, ne) ||
             (m->bias && (input(c, "b13", ne * s.r1, &unused) || input(c, "b2", ne * m->h, &unused))) ||
             qc_op_optional_f32(c, "route_bias", m->e, &unused) ||
             (mr->act >= 0 && (qc_moe_quant_job(c, mr->act, m->t, m->h, &jobs[0]) ||
                               qc_moe_quant_job(c, mr->act, s.rows, m->i, &jobs[1]))) ||
             (mr->weight >= 0 && (qc_moe_quant_job(c, mr->weight, s.r1, m->h, &jobs[2]) ||
                                  qc_moe_quant_job(c, mr->weight, m->h, m->i, &jobs[3])));
    moe_weights w = {&s, ne};
    qcheck_stage st[NSTAGES];
    int64_t shapes[NSTAGES][2] = {{m->t, s.kk}, {m->t, s.kk}, {m->t, m->h}, {s.rows, s.r1}, {s.rows, m->i},
                                  {s.rows, m->i}, {s.rows, m->h}, {m->t, m->h}};
    int64_t out_shape[2] = {m->t, m->h};
    qcheck_moe_args a = {.tokens = m->t, .hidden = m->h, .inter = m->i, .experts = m->e, .shared = m->shared,
                         .top_k = m->route.top_k, .r1 = s.r1, .recipe = recipes[m->recipe].name,
                         .act_recipe = recipes[m->recipe].act, .weight_recipe = recipes[m->recipe].weight,
                         .model = model_names[m->model], .a1_spec = mr->act >= 0 ? &jobs[0] : NULL,
                         .a2_spec = mr->act >= 0 ? &jobs[1] : NULL, .w13_spec = mr->weight >= 0 ? &jobs[2] : NULL,
                         .w2_spec = mr->weight >= 0 ? &jobs[3] : NULL,
                         .route = m->route, .act = m->act, .weight_on_input = m->weight_on_input, .bias = m->bias,
                         .rsf_out = m->rsf_out, .weights = weights_f32, .weights_self = &w, .stages = st,
                         .nstages = NSTAGES};
    const qc_tensor_set *in = c->in;
    a.x = qc_view(qc_set_find((qc_tensor_set *)in, "x")), a.logits = qc_view(qc_set_find((qc_tensor_set *)in, "logits"));
    a.route_bias = qc_view(qc_set_find((qc_tensor_set *)in, "route_bias"));
    a.b13 = qc_view(qc_set_find((qc_tensor_set *)in, "b13")), a.b2 = qc_view(qc_set_find((qc_tensor_set *)in, "b2"));
    a.route.bias = a.route_bias.data;
    rc = rc || qc_op_output(c, "out", QC_ST_U16, "bf16", 2, out_shape, &a.out);
    char name[QC_NAME_LEN];
    for (int i = 0; !rc && i < NSTAGES; i++) {
        int ids = i == 0;
        snprintf(name, sizeof name, "stage.%s", moe_stages[i]);
        st[i] = (qcheck_stage){.name = moe_stages[i]};
        rc = qc_op_output(c, name, ids ? QC_ST_I32 : QC_ST_F32, ids ? "i32" : "f32", 2, shapes[i], &st[i].t);
    }
    rc = rc ? QC_OP_BAD : QC_OP_OK;
    if (!rc) {
        qcheck_ctx ctx = qc_abi_ctx(c);
        rc = qc_abi_result(c, b, b->moe(&a, &ctx), &ctx);
    }
    for (int i = 0; !rc && i < NSTAGES; i++) /* a stage the backend did not fill is left out */
        if (!st[i].filled) {
            snprintf(name, sizeof name, "stage.%s", moe_stages[i]);
            qc_set_remove(c->out, name);
        }
    state_free(&s);
    return rc;
}

const qc_op qc_op_moe = {"moe",
                         "x, logits, route_bias, w13, w2, b13, b2 (f32) -> out bf16 [tokens, hidden], out.bound, "
                         "stage.* (route ids/weights, a1, gemm1, act, a2, gemm2, combine); params: recipe tokens "
                         "hidden inter experts top_k shared route n_group topk_group renorm rsf rsf_in_weights act "
                         "order alpha beta limit weight_on_input bias model (exact, sm90-wgmma[-fast])",
                         ref_moe, offsetof(qcheck_backend, moe), abi_moe, moe_weight_inputs, NULL};

/* parse_cfg for op moe_cpu (ops/op_moe_cpu.c): the same params, the same rules. */
int qc_moe_parse_cfg(qc_op_call *c, qc_moe_cfg *m) { return parse_cfg(c, m); }
