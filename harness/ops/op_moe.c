/* op_moe.c: the fused-MoE op (shared/spec/layouts.md §9), the reference of every stage.
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
 * limit, weight_on_input, bias.
 *
 * Order of operations (layouts.md §9.2, the flashinfer references: fp32 except at the explicit
 * requantization points): a1 = quant(x) per the recipe; h = a1 . W13[e]^T + b13 (exact, then
 * fp32); h *= w if weight_on_input; a = act(h) (fp32); a2 = quant(bf16(a)) (§9.4: "act -> bf16 ->
 * quantize", scales dynamic over all rows for per-tensor and NVFP4 globals); y = a2 . W2[e]^T + b2;
 * out = rsf_out * sum_j w_j y_j (w_j = 1 with weight_on_input), rounded once to bf16. Operands are
 * dequantized exactly (NVFP4 with its global scale, so alpha is exact here). out.bound is the
 * fp32-accumulation bound of GEMM2 (reference/ops/gemm.h) carried through the weighted sum plus
 * the combine's fp32 roundings and the bf16 output: a kernel must match the stages before GEMM2
 * (same routing, same a2 codes); a difference there is reported at its stage. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    {"fp8_tensor", QC_RECIPE_TENSOR, QC_RECIPE_TENSOR, "§9.4 per-tensor FP8 (a2 scale dynamic over all rows)"},
    {"fp8_block", QC_RECIPE_TOKEN_GROUP, QC_RECIPE_BLOCK, "§9.4 DeepSeek FP8: per-token-group 128 x 128x128"},
    {"nvfp4", QC_RECIPE_NVFP4, QC_RECIPE_NVFP4, "§9.4 NVFP4 with global scales (g1/g2 alphas exact)"},
    {"mxfp8", QC_RECIPE_MXFP8, QC_RECIPE_MXFP8, "§9.4 MXFP8 (trtllm-gen MxFp8)"},
    {"mxfp4", -1, QC_RECIPE_MXFP4, "§9.4 MXFP4 weights x bf16 activations (gpt-oss)"},
};
#define NRECIPES ((int)(sizeof recipes / sizeof recipes[0]))

typedef struct moe_state {
    qc_moe_cfg cfg;
    int64_t kk, r1, rows; /* slots per token, GEMM1 width, rows = tokens * kk */
    int *ids;
    float *w;
    double *a1, *w13, *w2, *h64, *a2, *y64, *s64;
    float *h, *act;
} moe_state;

static int get_int(qc_op_call *c, const char *key, int64_t dflt, int64_t lo, int64_t hi, int64_t *out)
{
    const char *v = qc_param(c->params, key);
    char *end;
    *out = v ? strtoll(v, &end, 10) : dflt;
    if ((v && (end == v || *end)) || *out < lo || *out > hi) {
        snprintf(c->err, c->errlen, "param %s=%s: an integer in [%lld, %lld]", key, v ? v : "(missing)",
                 (long long)lo, (long long)hi);
        return 2;
    }
    return 0;
}

static int get_float(qc_op_call *c, const char *key, float dflt, float *out)
{
    const char *v = qc_param(c->params, key);
    char *end;
    *out = v ? strtof(v, &end) : dflt;
    if (v && (end == v || *end)) {
        snprintf(c->err, c->errlen, "param %s=%s is not a number", key, v);
        return 2;
    }
    return 0;
}

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
    if (get_name(c, "recipe", "", recipe_from_name, &m->recipe) || get_int(c, "tokens", -1, 0, 1 << 20, &m->t) ||
        get_int(c, "hidden", -1, 1, 1 << 16, &m->h) || get_int(c, "inter", -1, 1, 1 << 16, &m->i) ||
        get_int(c, "experts", -1, 1, 1024, &m->e) || get_int(c, "top_k", -1, 1, 1024, &k) ||
        get_int(c, "shared", 0, 0, 1, &m->shared) || get_int(c, "n_group", 0, 0, 1024, &ng) ||
        get_int(c, "topk_group", 0, 0, 1024, &tg) || get_int(c, "renorm", 1, 0, 1, &renorm) ||
        get_int(c, "rsf_in_weights", 1, 0, 1, &riw) || get_int(c, "weight_on_input", 0, 0, 1, &woi) ||
        get_int(c, "bias", 0, 0, 1, &bias) || get_float(c, "rsf", 1.0f, &rsf) ||
        get_name(c, "route", "renorm_naive", qc_route_method_from_name, &route) ||
        get_name(c, "act", "silu", qc_act_from_name, &act) ||
        get_name(c, "order", "gate_up", qc_w13_order_from_name, &order) ||
        get_float(c, "alpha", 1.702f, &m->act.alpha) || get_float(c, "beta", 1.0f, &m->act.beta) ||
        get_float(c, "limit", 7.0f, &m->act.limit))
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

/* *out = the f32 data of input name with numel elements (NULL for an empty tensor); 0 or 2. */
static int input(qc_op_call *c, const char *name, int64_t numel, const float **out)
{
    const qc_tensor *t = qc_set_find((qc_tensor_set *)c->in, name);
    if (!t || t->storage != QC_ST_F32 || qc_tensor_numel(t) != numel) {
        snprintf(c->err, c->errlen, "input %s must be f32 with %lld elements%s", name, (long long)numel,
                 t ? "" : " (missing)");
        return 2;
    }
    *out = t->data;
    return 0;
}

/* x [rows, cols] quantized with recipe (or rounded to bf16) and dequantized exactly into out. */
static int quant_exact(qc_op_call *c, int recipe, const float *x, int64_t rows, int64_t cols, double *out)
{
    qc_cast_policy bf = qcref_default_policy();
    if (recipe < 0) {
        for (int64_t i = 0; i < rows * cols; i++)
            out[i] = qcref_decode(QC_BF16, qcref_encode(QC_BF16, x[i], &bf), &bf);
        return 0;
    }
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
    qc_quant_job j;
    qc_quantized q;
    if (qc_quant_job_from_params(&p, &j, why, sizeof why)) {
        snprintf(c->err, c->errlen, "%s [%lld, %lld]: %s", qc_recipe_name(recipe), (long long)rows, (long long)cols,
                 why);
        return 2;
    }
    if (qc_quant_job_alloc(&j, &q)) {
        snprintf(c->err, c->errlen, "out of memory quantizing [%lld, %lld]", (long long)rows, (long long)cols);
        return 2;
    }
    int pow2 = 1;
    qcref_quant(j.recipe, &j.policy, x, j.rows, j.cols, j.has_static ? &j.static_scale : NULL, NULL, &q);
    qcref_operand_f64(j.recipe, &j.policy, &q, out, &pow2);
    for (int64_t i = 0; recipe == QC_RECIPE_NVFP4 && i < rows * cols; i++)
        out[i] *= q.gscale; /* exact: e2m1 * e4m3 (6 bits) * fp32 (24 bits) */
    qc_quant_job_free(&q);
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

static int quant_weights(qc_op_call *c, moe_state *s, const float *w13, const float *w2)
{
    int64_t ne = s->cfg.e + s->cfg.shared, h = s->cfg.h, in = s->cfg.i;
    int wr = recipes[s->cfg.recipe].weight;
    for (int64_t e = 0; e < ne; e++)
        if (quant_exact(c, wr, w13 + e * s->r1 * h, s->r1, h, s->w13 + e * s->r1 * h) ||
            quant_exact(c, wr, w2 + e * h * in, h, in, s->w2 + e * h * in))
            return 2;
    return 0;
}

/* y[row] = x[row's token or row] . W[e]^T (+ |.| sums) for the rows routed to each expert. */
static int expert_gemm(qc_op_call *c, moe_state *s, const double *x, int per_token, int64_t kdim,
                       const double *w, int64_t n, double *y, double *sabs)
{
    int64_t ne = s->cfg.e + s->cfg.shared;
    double *xa = alloc(s, c, (size_t)(s->rows * kdim), sizeof *xa), *ya = alloc(s, c, (size_t)(s->rows * n), 8);
    double *sa = alloc(s, c, (size_t)(s->rows * n), 8);
    int64_t *which = alloc(s, c, (size_t)s->rows, sizeof *which);
    int rc = xa && ya && sa && which ? 0 : 2;
    for (int64_t e = 0; !rc && e < ne; e++) {
        int64_t cnt = 0;
        for (int64_t r = 0; r < s->rows; r++)
            if (s->ids[r] == e) {
                memcpy(xa + cnt * kdim, x + (per_token ? r / s->kk : r) * kdim, (size_t)kdim * sizeof *xa);
                which[cnt++] = r;
            }
        if (!cnt)
            continue; /* an expert that gets no tokens */
        if (sabs ? qcx_gemm((size_t)cnt, (size_t)n, (size_t)kdim, xa, w + e * n * kdim, 1.0, NULL, ya, sa)
                 : qcx_dgemm_nt((size_t)cnt, (size_t)n, (size_t)kdim, xa, w + e * n * kdim, ya)) {
            rc = 2;
            break;
        }
        for (int64_t q = 0; q < cnt; q++) {
            memcpy(y + which[q] * n, ya + q * n, (size_t)n * sizeof *y);
            if (sabs)
                memcpy(sabs + which[q] * n, sa + q * n, (size_t)n * sizeof *y);
        }
    }
    free(xa), free(ya), free(sa), free(which);
    if (rc)
        snprintf(c->err, c->errlen, "out of memory in the expert GEMMs");
    return rc;
}

static void gemm1_epilogue(moe_state *s, const float *b13)
{
    for (int64_t r = 0; r < s->rows; r++) {
        int64_t e = s->ids[r];
        for (int64_t j = 0; j < s->r1; j++) {
            float v = (float)(s->h64[r * s->r1 + j] + (s->cfg.bias ? (double)b13[e * s->r1 + j] : 0.0));
            s->h[r * s->r1 + j] = s->cfg.weight_on_input ? v * s->w[r] : v;
        }
        qcref_act_row(&s->cfg.act, s->h + r * s->r1, (size_t)s->cfg.i, s->act + r * s->cfg.i);
    }
}

static int add_tensor(qc_op_call *c, const char *name, qc_storage st, const char *dtype, int64_t rows,
                      int64_t cols, const void *data)
{
    int64_t shape[2] = {rows, cols};
    qc_tensor t;
    if (qc_tensor_alloc(&t, name, st, dtype, 2, shape)) {
        snprintf(c->err, c->errlen, "out of memory for %s", name);
        return 2;
    }
    if (data && t.nbytes)
        memcpy(t.data, data, t.nbytes);
    if (!qc_set_add(c->out, &t)) {
        snprintf(c->err, c->errlen, "too many outputs at %s", name);
        qc_tensor_free(&t);
        return 2;
    }
    return 0;
}

static int add_f32_of(qc_op_call *c, const char *name, int64_t rows, int64_t cols, const double *v)
{
    if (add_tensor(c, name, QC_ST_F32, "f32", rows, cols, NULL))
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
    if (!out || add_tensor(c, "out", QC_ST_U16, "bf16", t, h, NULL) ||
        add_tensor(c, "out.bound", QC_ST_F64, "f64", t, h, NULL)) {
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
                err += fabs(wq) * qcref_gemm_bound(y, sy, (size_t)s->cfg.i, QC_F32, 0);
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
    return add_tensor(c, "stage.route.ids", QC_ST_I32, "i32", t, s->kk, s->ids) ||
           add_tensor(c, "stage.route.weights", QC_ST_F32, "f32", t, s->kk, s->w) ||
           add_f32_of(c, "stage.a1.x", t, s->cfg.h, s->a1) ||
           add_tensor(c, "stage.gemm1.h", QC_ST_F32, "f32", s->rows, s->r1, s->h) ||
           add_tensor(c, "stage.act.a", QC_ST_F32, "f32", s->rows, s->cfg.i, s->act) ||
           add_f32_of(c, "stage.a2.x", s->rows, s->cfg.i, s->a2);
}

static void state_free(moe_state *s)
{
    free(s->ids), free(s->w), free(s->a1), free(s->w13), free(s->w2), free(s->h64), free(s->a2), free(s->y64);
    free(s->s64), free(s->h), free(s->act);
}

static int run(qc_op_call *c, moe_state *s)
{
    qc_moe_cfg *m = &s->cfg;
    int64_t ne = m->e + m->shared;
    s->kk = m->route.top_k + m->shared, s->r1 = qcref_act_gated(m->act.act) ? 2 * m->i : m->i, s->rows = m->t * s->kk;
    const float *x, *logits, *w13, *w2, *b13 = NULL, *b2 = NULL;
    if (input(c, "x", m->t * m->h, &x) || input(c, "logits", m->t * m->e, &logits) ||
        input(c, "w13", ne * s->r1 * m->h, &w13) || input(c, "w2", ne * m->h * m->i, &w2) ||
        (m->bias && (input(c, "b13", ne * s->r1, &b13) || input(c, "b2", ne * m->h, &b2))))
        return 2;
    const qc_tensor *rb = qc_set_find((qc_tensor_set *)c->in, "route_bias");
    if (rb && (rb->storage != QC_ST_F32 || qc_tensor_numel(rb) != m->e)) {
        snprintf(c->err, c->errlen, "input route_bias must be f32 [experts = %lld]", (long long)m->e);
        return 2;
    }
    size_t rows = (size_t)s->rows;
    if (!(s->ids = alloc(s, c, rows, sizeof *s->ids)) || !(s->w = alloc(s, c, rows, 4)) ||
        !(s->a1 = alloc(s, c, (size_t)(m->t * m->h), 8)) || !(s->w13 = alloc(s, c, (size_t)(ne * s->r1 * m->h), 8)) ||
        !(s->w2 = alloc(s, c, (size_t)(ne * m->h * m->i), 8)) || !(s->h64 = alloc(s, c, rows * (size_t)s->r1, 8)) ||
        !(s->h = alloc(s, c, rows * (size_t)s->r1, 4)) || !(s->act = alloc(s, c, rows * (size_t)m->i, 4)) ||
        !(s->a2 = alloc(s, c, rows * (size_t)m->i, 8)) || !(s->y64 = alloc(s, c, rows * (size_t)m->h, 8)) ||
        !(s->s64 = alloc(s, c, rows * (size_t)m->h, 8)))
        return 2;
    const moe_recipe *rc = &recipes[m->recipe];
    if (route_all(c, s, logits, rb ? rb->data : NULL) || quant_exact(c, rc->act, x, m->t, m->h, s->a1) ||
        quant_weights(c, s, w13, w2) || expert_gemm(c, s, s->a1, 1, m->h, s->w13, s->r1, s->h64, NULL))
        return 2;
    gemm1_epilogue(s, b13);
    float *abf = alloc(s, c, rows * (size_t)m->i, 4);
    qc_cast_policy bf = qcref_default_policy();
    for (size_t i = 0; abf && i < rows * (size_t)m->i; i++) /* §9.4: act -> bf16 -> quantize */
        abf[i] = qcref_decode(QC_BF16, qcref_encode(QC_BF16, s->act[i], &bf), &bf);
    int bad = !abf || quant_exact(c, rc->act, abf, s->rows, m->i, s->a2);
    free(abf);
    if (bad || stages_before_gemm2(c, s) || expert_gemm(c, s, s->a2, 0, m->i, s->w2, m->h, s->y64, s->s64))
        return 2;
    return combine(c, s, b2);
}

int qc_moe_op(qc_op_call *c, qc_moe_tweak tweak)
{
    moe_state s;
    memset(&s, 0, sizeof s);
    if (parse_cfg(c, &s.cfg))
        return 2;
    if (tweak)
        tweak(&s.cfg);
    int rc = run(c, &s);
    state_free(&s);
    return rc;
}

static int ref_moe(qc_op_call *c) { return qc_moe_op(c, NULL); }

const qc_op qc_op_moe = {"moe",
                         "x, logits, route_bias, w13, w2, b13, b2 (f32) -> out bf16 [tokens, hidden], out.bound, "
                         "stage.* (route ids/weights, a1, gemm1, act, a2, gemm2, combine); params: recipe tokens "
                         "hidden inter experts top_k shared route n_group topk_group renorm rsf rsf_in_weights act "
                         "order alpha beta limit weight_on_input bias",
                         ref_moe};
