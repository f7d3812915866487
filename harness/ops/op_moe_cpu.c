/* op_moe_cpu.c: op moe_cpu, the reference model of sgl-kernel's fused_experts_cpu with
 * use_fp8_w8a16 (sglang sgl-kernel/csrc/cpu/moe.cpp fused_experts_cpu -> moe_fp8.cpp
 * fused_experts_fp8_kernel_impl), and the per-element bound of its output.
 *   moe_cpu  x f32 [tokens, hidden], logits f32 [tokens, experts], route_bias, w13 f32 [E + shared,
 *            2 inter, hidden], w2 f32 [E + shared, hidden, inter] (or weights=generate)
 *         -> out bf16 [tokens, hidden], out.bound f64, stage.route.ids / weights, stage.gemm1.h
 *            (ic0) [rows, 2 inter], stage.act.a (ic1) [rows, inter], stage.gemm2.y (C, before the
 *            routing weight) [rows, hidden], all f32 holding bf16 values: the reference's chain.
 * params: those of op moe (op_moe.c's parse rules), recipe=fp8_block, act=silu, order=gate_up.
 *
 * The stages of the kernel, from the source (sgl-kernel commit read: 0954981f):
 *   a    = bf16(x)                        hidden_states is bf16 (the op's input dtype)
 *   wb   = bf16(fl32(code * s))           gemm_fp8.cpp unpack_B (cvtne2ps_pbh, RNE), block 128x128
 *   ic0  = bf16(sum_k a wb13)             moe_fp8.cpp stage 1: tinygemm_kernel<scalar_t> with C =
 *                                         ic0 (scalar_t*), fp32 accumulation, [M * topk, 2N]
 *   ic1  = bf16(fl(fl(g / fl(1 + exp_u20(-g))) * u))   stage 1.5: moe.h silu_and_mul_stub on
 *                                         ic0 (g = first half, u = second half), fp32
 *   C    = bf16(sum_i ic1 wb2)            stage 2: tinygemm_kernel into `scalar_t C[BLOCK_M *
 *                                         BLOCK_K]`: the GEMM2 output is rounded to bf16 HERE
 *   ic2  = bf16(fl32(C * w))              stage 2.b: moe.h copy_mul_stub(ic2, C, topk_weights[
 *                                         index], n): the routing weight is applied after GEMM2, to
 *                                         the bf16 C, in fp32 (docs/spec/layouts.md Q6)
 *   out  = bf16(sum_j ic2_j)              stage 3: moe.h sum_stub: fp32 sum over topk in order
 *                                         j = 0.., from 0 (topk == 1: a copy), then bf16
 * The model binds every kernel with these rounding points (bf16 RNE, possibly flushing values
 * below 2^-126 to zero as VCVTNE2PS2BF16 does), fp32 sums in ANY order (the two GEMMs and the
 * top-k sum), fp32 roundings of the activation and of the weight product, and an exp within
 * QC_MOE_CPU_EXP_REL/ABS (moe_cpu_op.h): exp_u20 fits it.
 *
 * The bound: intervals, element by element, in fp64 (proofs at each step below). For each stage
 * value v the op keeps an interval [lo, hi] that contains the value of EVERY such kernel (given
 * the same routing, weights and a); bf16 RNE and fl32 are monotone (x <= y implies rn(x) <=
 * rn(y)), so rounding maps an interval to the interval of its rounded endpoints; flushing to
 * zero only adds 0 to it. out.bound = max(hi - r, r - lo) for the reference's own output r, so
 * |kernel - r| <= out.bound for every kernel of the model. Where the intervals of a row collapse
 * (typical: an fp32 GEMM error of ~1e-7 relative rarely crosses a bf16 rounding boundary), the
 * bound is 0 and the element is proven bit-exact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../moe_cpu_op.h"
#include "../quant_job.h"
#include "../registry.h"
#include "exact.h"
#include "ops/gemm.h"

#define U32 0x1p-24       /* fp32 unit roundoff */
#define U64 0x1p-53       /* fp64 unit roundoff */
#define TINY32 0x1p-126   /* FLT_MIN: the absolute error of a flushed fp32/bf16 result */

static double gamma_u(double n, double u) { return n * u / (1 - n * u); }

float qc_bf16_rne(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7F800000u) == 0x7F800000u)
        return f; /* Inf, NaN (a NaN's payload does not matter here) */
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    memcpy(&f, &u, 4);
    return f;
}

float qc_exp_u20(float x)
{
    static const uint32_t bits[4] = {0xC2AEAC50u, 0x42B17218u, 0x3FB8AA3Bu, 0x3F317218u};
    float lnmin, lnmax, log2e, ln2;
    memcpy(&lnmin, bits, 4), memcpy(&lnmax, bits + 1, 4), memcpy(&log2e, bits + 2, 4), memcpy(&ln2, bits + 3, 4);
    int below = x < lnmin;               /* _CMP_LT_OS: false for NaN */
    float s = x < lnmax ? x : lnmax;     /* _mm512_min_ps(x, max): max when x is NaN */
    s = s > lnmin ? s : lnmin;           /* _mm512_max_ps(s, min) */
    float n = floorf(fmaf(s, log2e, 0.5f));
    float r = fmaf(-n, ln2, s);          /* _mm512_fnmadd_ps(n, ln2, s) */
    float p = fmaf(r, 0.00828929059f, 0.0418978221f);
    p = fmaf(r, p, 0.166676521f);
    p = fmaf(r, p, 0.499991506f);
    p = fmaf(r, p, 0.999999701f);
    p = fmaf(r, p, 1.0f);
    uint32_t e = (uint32_t)((int32_t)(n - 1.0f) + 127) << 23;
    float two;
    memcpy(&two, &e, 4);
    if (below)
        two = 0.0f;
    return p * two * 2.0f;
}

float qc_moe_cpu_wvalue(uint8_t code, float scale)
{
    qc_cast_policy p = qcref_default_policy();
    return qc_bf16_rne(qcref_decode(QC_E4M3FN, code, &p) * scale);
}

/* ---- setup (shared with the kernel adapter and the tests) ---- */

/* The data of f32 input name with numel elements (non-NULL even when empty), or NULL. */
static const float *input_f32(qc_op_call *c, const char *name, int64_t numel)
{
    const qc_tensor *t = qc_op_input_f32(c, name, numel);
    return !t ? NULL : numel ? t->data : (const float *)"";
}

static const char *model_rule(const qc_moe_cfg *m)
{
    if (m->act.act != QC_ACT_SILU || m->act.order != QC_W13_GATE_UP)
        return "act=silu order=gate_up (silu_and_mul_stub: gate = first half)";
    if (m->bias || m->weight_on_input)
        return "no bias and no weight_on_input (fused_experts_fp8_kernel_impl has neither)";
    if (m->rsf_out != 1.0f)
        return "rsf_in_weights=1 (fused_experts_cpu does not apply routed_scaling_factor)";
    return NULL;
}

int qc_moe_cpu_setup(qc_op_call *c, qc_moe_cpu *p)
{
    memset(p, 0, sizeof *p);
    if (qc_moe_parse_cfg(c, &p->cfg))
        return 2;
    qc_moe_cfg *m = &p->cfg;
    const char *rule = strcmp(qc_param_or(c->params, "recipe", ""), "fp8_block") ? "recipe=fp8_block" : model_rule(m);
    if (rule) {
        snprintf(c->err, c->errlen, "moe_cpu (sgl-kernel fused_experts_cpu, fp8 w8a16) needs %s", rule);
        return 2;
    }
    int64_t ne = m->e + m->shared;
    p->kk = m->route.top_k + m->shared, p->rows = m->t * p->kk;
    const float *x = input_f32(c, "x", m->t * m->h), *logits = x ? input_f32(c, "logits", m->t * m->e) : NULL;
    if (!logits)
        return 2;
    const float *rbias;
    if (qc_op_optional_f32(c, "route_bias", m->e, &rbias))
        return 2;
    if (qc_moe_weight_source(c, ne, 2 * m->i, m->h, m->i, &p->ws))
        return 2;
    size_t rows = (size_t)p->rows;
    p->ids = calloc(rows + 1, 4), p->w = calloc(rows + 1, 4), p->x = calloc((size_t)(m->t * m->h) + 1, 2);
    p->count = calloc((size_t)ne + 1, 8);
    p->wf = p->ws.gen ? calloc((size_t)(2 * m->i * m->h) + 1, 4) : NULL;
    if (!p->ids || !p->w || !p->x || !p->count || (p->ws.gen && !p->wf)) {
        snprintf(c->err, c->errlen, "out of memory for the moe_cpu problem");
        return 2;
    }
    m->route.bias = rbias;
    int ids[1024 + 8];
    for (int64_t t = 0; t < m->t; t++) {
        if (qcref_route(&m->route, logits + t * m->e, ids, p->w + t * p->kk)) {
            snprintf(c->err, c->errlen, "routing refused token %lld", (long long)t);
            return 2;
        }
        for (int64_t j = 0; j < p->kk; j++) {
            if (ids[j] < 0 || ids[j] >= ne) {
                snprintf(c->err, c->errlen, "routing gave token %lld no expert in slot %lld (fewer candidates "
                         "than top_k)", (long long)t, (long long)j);
                return 2;
            }
            p->ids[t * p->kk + j] = ids[j];
            p->count[ids[j]]++;
        }
    }
    for (int64_t i = 0; i < m->t * m->h; i++)
        p->x[i] = (uint16_t)qcref_gemm_round_out((double)x[i], QC_BF16);
    return 0;
}

void qc_moe_cpu_free(qc_moe_cpu *p)
{
    free(p->ids), free(p->w), free(p->x), free(p->count), free(p->wf);
    memset(p, 0, sizeof *p);
}

int64_t qc_moe_cpu_nscales(const qc_moe_cpu *p, int t)
{
    int64_t rows = t ? p->cfg.h : 2 * p->cfg.i, cols = t ? p->cfg.i : p->cfg.h;
    return ((rows + 127) / 128) * ((cols + 127) / 128);
}

int qc_moe_cpu_weights(qc_op_call *c, const qc_moe_cpu *p, int64_t e, int t, uint8_t *codes, float *scales)
{
    int64_t rows = t ? p->cfg.h : 2 * p->cfg.i, cols = t ? p->cfg.i : p->cfg.h;
    const float *src = p->ws.gen ? p->wf : p->ws.in[t] + e * rows * cols;
    if (p->ws.gen)
        qc_moe_weight_fill(p->ws.seed, e, t, p->ws.std[t], 0, (size_t)(rows * cols), p->wf);
    qc_quant_job j;
    qc_quantized q;
    if (qc_moe_quant_job(c, QC_RECIPE_BLOCK, rows, cols, &j))
        return 2;
    if (j.policy.elem != QC_E4M3FN) {
        snprintf(c->err, c->errlen, "block recipe [%lld, %lld]: not e4m3fn", (long long)rows, (long long)cols);
        return 2;
    }
    if (qc_quant_job_alloc(&j, &q)) {
        snprintf(c->err, c->errlen, "out of memory quantizing [%lld, %lld]", (long long)rows, (long long)cols);
        return 2;
    }
    qcref_quant(j.recipe, &j.policy, src, j.rows, j.cols, NULL, NULL, &q);
    memcpy(codes, q.q, (size_t)(rows * cols));
    memcpy(scales, q.scale_f32, (size_t)qc_moe_cpu_nscales(p, t) * 4);
    qc_quant_job_free(&q);
    return 0;
}

int qc_moe_cpu_route_stages(qc_op_call *c, const qc_moe_cpu *p)
{
    return qc_op_add_tensor(c, "stage.route.ids", QC_ST_I32, "i32", p->cfg.t, p->kk, p->ids) ||
           qc_op_add_tensor(c, "stage.route.weights", QC_ST_F32, "f32", p->cfg.t, p->kk, p->w);
}

/* ---- the interval model ---- */

typedef struct iv {
    double lo, hi;
} iv;

/* The values a kernel can store when it rounds a real in [lo, hi] to fp32 and then to bf16 (or
 * rounds an fp32 value in [lo, hi] to bf16). Proof: RN to fp32 and RNE to bf16 are monotone and
 * an fp32 value >= lo is >= fl32(lo) (fl32(lo) <= RU32(lo)), so the stored value lies in
 * [bf16(fl32(lo)), bf16(fl32(hi))]. A kernel that flushes results below 2^-126 (VCVTNE2PS2BF16,
 * an FTZ fp32 unit) may also store 0 where the interval reaches below 2^-126 in magnitude: the
 * endpoints then widen to 0. fl32(lo) of a double is one correct rounding (C's conversion). */
static iv round_iv(iv x)
{
    iv r = {qc_bf16_rne((float)x.lo), qc_bf16_rne((float)x.hi)};
    if (x.lo < TINY32 && r.lo > 0)
        r.lo = 0;
    if (x.hi > -TINY32 && r.hi < 0)
        r.hi = 0;
    return r;
}

/* A real in [v - e, v + e]. */
static iv around(double v, double e) { return (iv){v - e, v + e}; }

/* The error of an fp32 dot of K exact products in ANY order against the exact sum, plus the fp64
 * reference's own error: Higham (Accuracy and Stability of Numerical Algorithms, 2nd ed.) Lemma 3.1
 * and (3.4): |fl(sum) - sum| <= gamma(K - 1) sum |t_k| for any order of K - 1 additions; bf16 x
 * bf16 products are exact in fp32 (8 + 8 significant bits) unless they underflow; each of at most
 * 2K operations may be flushed (TDPBF16PS: FTZ), 2^-126 each; K + 4 covers the VNNI pair order
 * of TDPBF16PS with margin, as reference/ops/gemm.h does. The fp64 dgemm: gamma53(K + 2) s
 * (reference/ops/gemm.h, certified by MPFR in tests/test_gemm.c). s >= sum |a b| (qcx_gemm). */
static double dot_err(double s, int64_t k)
{
    return gamma_u((double)k + 4, U32) * s + 2.0 * ((double)k + 4) * TINY32 + gamma_u((double)k + 2, U64) * s;
}

static double silu64(double g) { return g / (1.0 + exp(-g)); }

/* silu's minimum: silu'(m) = 0 at m = -1.27846454276107... (1 + e^-m + m e^-m = 0); silu is
 * decreasing below m and increasing above it. */
#define SILU_ARGMIN (-1.2784645427610738)

/* The range of exact silu over [g.lo, g.hi], widened by 2^-50 relative for libm's exp in fp64
 * (< 1 ulp) and the division and addition (2 ulps): monotone pieces either side of m, the
 * minimum in between (silu(m) evaluated at m's fp64 approximation is >= the true minimum by
 * O(dm^2) ~ 1e-32: the widening covers it). */
static iv silu_iv(iv g)
{
    double a = silu64(g.lo), b = silu64(g.hi), lo, hi;
    if (g.hi <= SILU_ARGMIN)
        lo = b, hi = a;
    else if (g.lo >= SILU_ARGMIN)
        lo = a, hi = b;
    else
        lo = silu64(SILU_ARGMIN), hi = a > b ? a : b;
    return (iv){lo - 0x1p-50 * fabs(lo), hi + 0x1p-50 * fabs(hi)};
}

/* The kernel's q = fl(g / fl(1 + E)), E = its exp(-g), for any fp32 g in [g.lo, g.hi]. With |E -
 * e^-g| <= eps e^-g + a (moe_cpu_op.h; g >= -88.5): 1 + E = (1 + e^-g)(1 + t), |t| <= eps + a
 * (divide by 1 + e^-g >= 1), so q = silu(g) (1 + d2) / ((1 + t)(1 + d1)), |d1|, |d2| <= u32:
 * |q - silu(g)| <= es |silu(g)|, es = (1 + u) / ((1 - eps - a)(1 - u)) - 1. For g < -88.5 the
 * kernel's E >= 2^127 (or Inf), so |q| <= |g| 2^-127 and |silu(g)| <= |g| e^-88.5 < |g| 2^-127:
 * |q - silu(g)| <= |g| 2^-126. A flushed q adds 2^-126. So q lies in silu_iv(g) widened by es
 * relative and (1 + max|g|) 2^-126 absolute. */
static iv q_iv(iv g)
{
    const double es = (1 + U32) / ((1 - QC_MOE_CPU_EXP_REL - QC_MOE_CPU_EXP_ABS) * (1 - U32)) - 1;
    iv s = silu_iv(g);
    double mg = fmax(fabs(g.lo), fabs(g.hi)), eta = (1 + mg) * TINY32;
    return (iv){s.lo - es * fabs(s.lo) - eta, s.hi + es * fabs(s.hi) + eta};
}

/* The exact product set {q u : q in a, u in b} (the four corner products; each fp64 product
 * widened by 2^-52 relative for its own rounding). */
static iv mul_iv(iv a, iv b)
{
    double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}, lo = p[0], hi = p[0];
    for (int i = 1; i < 4; i++)
        lo = fmin(lo, p[i]), hi = fmax(hi, p[i]);
    return (iv){lo - 0x1p-52 * fabs(lo), hi + 0x1p-52 * fabs(hi)};
}

static double width_from(double r, iv x) { return fmax(x.hi - r, r - x.lo); }

typedef struct moe_cpu_ref {
    qc_moe_cpu p;
    double *a;            /* [tokens, hidden] bf16 values of x */
    float *ic0, *ic1, *cy; /* the reference's stage values [rows, 2I], [rows, I], [rows, H] */
    double *d1;           /* [rows, I] max distance of a kernel's ic1 from the reference's */
    iv *ic2;              /* [rows, H] the kernel's weighted output interval */
    float *ic2r;          /* [rows, H] the reference's */
} moe_cpu_ref;

/* Expert e's tensor t as the kernel's bf16 weight values, in fp64 (wd) and |.| (wabs, or NULL). */
static int expert_wb(qc_op_call *c, moe_cpu_ref *s, int64_t e, int t, double *wd, double *wabs)
{
    int64_t rows = t ? s->p.cfg.h : 2 * s->p.cfg.i, cols = t ? s->p.cfg.i : s->p.cfg.h;
    uint8_t *codes = malloc((size_t)(rows * cols) + 8);
    float *sc = malloc((size_t)qc_moe_cpu_nscales(&s->p, t) * 4 + 8);
    int rc = !codes || !sc ? 2 : qc_moe_cpu_weights(c, &s->p, e, t, codes, sc);
    int64_t scols = (cols + 127) / 128;
    for (int64_t r = 0; !rc && r < rows; r++)
        for (int64_t k = 0; k < cols; k++) {
            double v = qc_moe_cpu_wvalue(codes[r * cols + k], sc[(r / 128) * scols + k / 128]);
            wd[r * cols + k] = v;
            if (wabs)
                wabs[r * cols + k] = fabs(v);
        }
    if (!codes || !sc)
        snprintf(c->err, c->errlen, "out of memory for expert weights");
    free(codes), free(sc);
    return rc;
}

/* GEMM1 and the activation of expert e's cnt rows which[]: ic0 = bf16(h), ic1 (reference values
 * and the kernel's interval, kept as the distance d1). */
static void gemm1_act(moe_cpu_ref *s, const int64_t *which, int64_t cnt, const double *y, const double *sm)
{
    int64_t in = s->p.cfg.i, hd = s->p.cfg.h;
    iv *g = malloc(sizeof *g * (size_t)(2 * in) + 16);
    for (int64_t q = 0; g && q < cnt; q++) {
        int64_t r = which[q];
        for (int64_t n = 0; n < 2 * in; n++) {
            double h = y[q * 2 * in + n];
            s->ic0[r * 2 * in + n] = qc_bf16_rne((float)h); /* the reference's ic0: fl32 then bf16 */
            g[n] = round_iv(around(h, dot_err(sm[q * 2 * in + n], hd)));
        }
        for (int64_t n = 0; n < in; n++) {
            float gr = s->ic0[r * 2 * in + n], ur = s->ic0[r * 2 * in + in + n];
            /* reference: exact silu in fp64 of its own bf16 g, times u, fl32, bf16 */
            float r1 = qc_bf16_rne((float)(silu64(gr) * (double)ur));
            /* kernel: q in q_iv(g), u in its ic0 interval, fl32(q u) then bf16 (round_iv) */
            iv a = round_iv(mul_iv(q_iv(g[n]), g[in + n]));
            s->ic1[r * in + n] = r1;
            s->d1[r * in + n] = width_from(r1, a);
        }
    }
    free(g);
}

/* GEMM2 of expert e's rows, C = bf16(y), and the weighted ic2 = bf16(fl32(C w)). The kernel's
 * ic1 differs from the reference's by at most d1 per element, so its exact dot differs by at
 * most sum_i d1_i |wb_i| =: D (computed in fp64 as a dgemm of nonnegative terms: inflated by
 * gamma53(I + 1), Higham (3.4)); its fp32 dot errs by gamma(I + 4) sum |ic1_k| |wb| <= gamma(I +
 * 4)(s + D) (|ic1_k| <= |ic1_r| + d1), as dot_err; the reference's fp64 dot by gamma53(I + 2) s.
 * C's interval is round_iv of y +- that; C w is exact in fp64 (8 + 24 bits), fl32 and bf16 are
 * monotone: ic2 in round_iv of the products of C's endpoints with w. */
static void gemm2_rows(moe_cpu_ref *s, const int64_t *which, int64_t cnt, const double *y, const double *sm,
                       const double *dsum)
{
    int64_t in = s->p.cfg.i, hd = s->p.cfg.h;
    for (int64_t q = 0; q < cnt; q++) {
        int64_t r = which[q];
        double w = s->p.w[r];
        for (int64_t n = 0; n < hd; n++) {
            double d = dsum ? dsum[q * hd + n] * (1 + gamma_u((double)in + 1, U64)) : 0.0;
            double e = d + gamma_u((double)in + 4, U32) * d + dot_err(sm[q * hd + n], in);
            float cr = qc_bf16_rne((float)y[q * hd + n]);
            iv cy = round_iv(around(y[q * hd + n], e)), p = {cy.lo * w, cy.hi * w};
            if (w < 0)
                p = (iv){cy.hi * w, cy.lo * w};
            s->cy[r * hd + n] = cr;
            s->ic2r[r * hd + n] = qc_bf16_rne((float)((double)cr * w));
            s->ic2[r * hd + n] = round_iv(p);
        }
    }
}

/* One pass over the experts that have rows: t = 0 GEMM1 + activation, t = 1 GEMM2 + weight. */
static int expert_pass(qc_op_call *c, moe_cpu_ref *s, int t)
{
    qc_moe_cpu *p = &s->p;
    int64_t ne = p->cfg.e + p->cfg.shared, in = p->cfg.i, hd = p->cfg.h, most = 0;
    int64_t kdim = t ? in : hd, n = t ? hd : 2 * in;
    for (int64_t e = 0; e < ne; e++)
        most = p->count[e] > most ? p->count[e] : most;
    int64_t *which = malloc(sizeof *which * (size_t)most + 8);
    double *wd = malloc((size_t)(n * kdim) * 8 + 8), *wabs = t ? malloc((size_t)(n * kdim) * 8 + 8) : NULL;
    double *xa = malloc((size_t)(most * kdim) * 8 + 8), *da = t ? malloc((size_t)(most * kdim) * 8 + 8) : NULL;
    double *y = malloc((size_t)(most * n) * 8 + 8), *sm = malloc((size_t)(most * n) * 8 + 8);
    double *dsum = t ? malloc((size_t)(most * n) * 8 + 8) : NULL;
    int rc = !which || !wd || !xa || !y || !sm || (t && (!wabs || !da || !dsum)) ? 2 : 0;
    if (rc)
        snprintf(c->err, c->errlen, "out of memory in the moe_cpu expert GEMMs");
    for (int64_t e = 0; !rc && e < ne; e++) {
        int64_t cnt = 0, anyd = 0;
        if (!p->count[e])
            continue; /* an expert without tokens: fused_experts_cpu never reads its weights */
        for (int64_t r = 0; r < p->rows; r++)
            if (p->ids[r] == e) {
                for (int64_t k = 0; k < kdim; k++) {
                    xa[cnt * kdim + k] = t ? (double)s->ic1[r * in + k] : s->a[(r / p->kk) * hd + k];
                    if (t)
                        anyd |= (da[cnt * kdim + k] = s->d1[r * in + k]) != 0;
                }
                which[cnt++] = r;
            }
        if ((rc = expert_wb(c, s, e, t, wd, wabs)))
            break;
        if (qcx_gemm((size_t)cnt, (size_t)n, (size_t)kdim, xa, wd, 1.0, NULL, y, sm) ||
            (t && anyd && qcx_dgemm_nt((size_t)cnt, (size_t)n, (size_t)kdim, da, wabs, dsum))) {
            snprintf(c->err, c->errlen, "out of memory in the fp64 GEMM");
            rc = 2;
        } else if (!t)
            gemm1_act(s, which, cnt, y, sm);
        else
            gemm2_rows(s, which, cnt, y, sm, anyd ? dsum : NULL);
    }
    free(which), free(wd), free(wabs), free(xa), free(da), free(y), free(sm), free(dsum);
    return rc;
}

/* out = bf16(fp32 sum_j ic2_j): the kernel sums kk bf16 values in some order (sgl-kernel: j = 0..
 * from 0.f; topk == 1 copies): the exact sum of its ic2 lies in [sum lo_j, sum hi_j]; any order
 * of kk - 1 fp32 additions errs by at most gamma(kk - 1) sum |ic2_j| (Higham (3.4)) plus 2^-126
 * per flushed addition; the fp64 sums of the endpoints by gamma53(kk) sum |.|. Then fl32 (the
 * sum is fp32 already) and bf16: round_iv. The reference: its own ic2 summed in fp64, rounded
 * once to bf16 (round to odd through fp32, qcref_gemm_round_out). */
static int combine(qc_op_call *c, moe_cpu_ref *s)
{
    qc_moe_cpu *p = &s->p;
    int64_t t = p->cfg.t, hd = p->cfg.h, kk = p->kk;
    if (qc_op_add_tensor(c, "out", QC_ST_U16, "bf16", t, hd, NULL) ||
        qc_op_add_tensor(c, "out.bound", QC_ST_F64, "f64", t, hd, NULL))
        return 2;
    uint16_t *ob = qc_set_find(c->out, "out")->data;
    double *bd = qc_set_find(c->out, "out.bound")->data;
    qc_cast_policy pol = qcref_default_policy();
    for (int64_t tk = 0; tk < t; tk++)
        for (int64_t n = 0; n < hd; n++) {
            double lo = 0, hi = 0, mag = 0, ref = 0;
            for (int64_t j = 0; j < kk; j++) {
                iv v = s->ic2[(tk * kk + j) * hd + n];
                lo += v.lo, hi += v.hi, mag += fmax(fabs(v.lo), fabs(v.hi));
                ref += s->ic2r[(tk * kk + j) * hd + n];
            }
            double e = kk > 1 ? gamma_u((double)kk - 1, U32) * mag + (double)(kk - 1) * TINY32 : 0.0;
            e += gamma_u((double)kk, U64) * mag;
            iv o = kk > 1 ? round_iv((iv){lo - e, hi + e}) : (iv){lo, hi};
            uint16_t code = (uint16_t)qcref_gemm_round_out(ref, QC_BF16);
            double r = qcref_decode(QC_BF16, code, &pol), b = width_from(r, o);
            ob[tk * hd + n] = code;
            bd[tk * hd + n] = isfinite(b) && isfinite(r) ? b : INFINITY;
        }
    return 0;
}

static int ref_moe_cpu(qc_op_call *c)
{
    moe_cpu_ref s;
    memset(&s, 0, sizeof s);
    int rc = qc_moe_cpu_setup(c, &s.p);
    qc_moe_cpu *p = &s.p;
    size_t rows = (size_t)p->rows, in = (size_t)p->cfg.i, hd = (size_t)p->cfg.h;
    if (!rc) {
        s.a = malloc((size_t)(p->cfg.t * p->cfg.h) * 8 + 8);
        s.ic0 = malloc(rows * 2 * in * 4 + 8), s.ic1 = malloc(rows * in * 4 + 8), s.d1 = malloc(rows * in * 8 + 8);
        s.cy = malloc(rows * hd * 4 + 8), s.ic2 = malloc(rows * hd * sizeof *s.ic2 + 16);
        s.ic2r = malloc(rows * hd * 4 + 8);
        if (!s.a || !s.ic0 || !s.ic1 || !s.d1 || !s.cy || !s.ic2 || !s.ic2r) {
            snprintf(c->err, c->errlen, "out of memory for the moe_cpu stages");
            rc = 2;
        }
    }
    qc_cast_policy pol = qcref_default_policy();
    for (int64_t i = 0; !rc && i < p->cfg.t * p->cfg.h; i++)
        s.a[i] = qcref_decode(QC_BF16, p->x[i], &pol);
    rc = rc || expert_pass(c, &s, 0) || expert_pass(c, &s, 1) || combine(c, &s) || qc_moe_cpu_route_stages(c, p) ||
         qc_op_add_tensor(c, "stage.gemm1.h", QC_ST_F32, "f32", p->rows, 2 * p->cfg.i, s.ic0) ||
         qc_op_add_tensor(c, "stage.act.a", QC_ST_F32, "f32", p->rows, p->cfg.i, s.ic1) ||
         qc_op_add_tensor(c, "stage.gemm2.y", QC_ST_F32, "f32", p->rows, p->cfg.h, s.cy);
    free(s.a), free(s.ic0), free(s.ic1), free(s.d1), free(s.cy), free(s.ic2), free(s.ic2r);
    qc_moe_cpu_free(p);
    return rc ? 2 : 0;
}

/* ---- the ABI adapter: routing, bf16 x and the weights' bytes as fused_experts_cpu takes them ---- */

typedef struct weights_src {
    qc_op_call *c;
    const qc_moe_cpu *p;
} weights_src;

static int weights_on_demand(void *self, int64_t e, int t, uint8_t *codes, float *scales)
{
    weights_src *w = self;
    return e < 0 || e >= w->p->cfg.e + w->p->cfg.shared || (t != 0 && t != 1) ||
           qc_moe_cpu_weights(w->c, w->p, e, t, codes, scales);
}

static const char *const cpu_stages[] = {"gemm1.h", "act.a", "gemm2.y"};

static int abi_moe_cpu(qc_op_call *c, const qcheck_backend *b)
{
    qc_moe_cpu p;
    int rc = qc_moe_cpu_setup(c, &p);
    qc_tensor_set in = {0};
    qcheck_stage st[3];
    weights_src ws = {c, &p};
    char name[QC_NAME_LEN];
    int64_t t = p.cfg.t, kk = p.kk, one[2] = {p.cfg.t, p.cfg.h};
    int64_t cols[3] = {2 * p.cfg.i, p.cfg.i, p.cfg.h};
    qcheck_moe_cpu_args a = {.tokens = t, .hidden = p.cfg.h, .inter = p.cfg.i, .experts = p.cfg.e + p.cfg.shared,
                             .slots = kk, .weights = weights_on_demand, .weights_self = &ws, .stages = st, .nstages = 3};
    qc_op_call ic = *c;
    ic.out = &in;
    rc = rc || qc_op_add_tensor(&ic, "x", QC_ST_U16, "bf16", t, p.cfg.h, p.x) ||
         qc_op_add_tensor(&ic, "ids", QC_ST_I32, "i32", t, kk, p.ids) ||
         qc_op_add_tensor(&ic, "weights", QC_ST_F32, "f32", t, kk, p.w) ||
         qc_op_output(c, "out", QC_ST_U16, "bf16", 2, one, &a.out);
    for (int i = 0; !rc && i < 3; i++) {
        int64_t sh[2] = {p.rows, cols[i]};
        snprintf(name, sizeof name, "stage.%s", cpu_stages[i]);
        st[i] = (qcheck_stage){.name = cpu_stages[i]};
        rc = qc_op_output(c, name, QC_ST_F32, "f32", 2, sh, &st[i].t);
    }
    if (!rc) {
        a.x = qc_view(qc_set_find(&in, "x")), a.topk_ids = qc_view(qc_set_find(&in, "ids"));
        a.topk_weights = qc_view(qc_set_find(&in, "weights"));
        qcheck_ctx ctx = qc_abi_ctx(c);
        rc = qc_abi_result(c, b, b->moe_cpu(&a, &ctx), &ctx);
    }
    for (int i = 0; !rc && i < 3; i++) /* a stage the backend did not fill is left out, not compared as poison */
        if (!st[i].filled) {
            snprintf(name, sizeof name, "stage.%s", cpu_stages[i]);
            qc_set_remove(c->out, name);
        }
    rc = rc || qc_moe_cpu_route_stages(c, &p); /* the routing is the kernel's input: shown, not computed by it */
    qc_set_free(&in);
    qc_moe_cpu_free(&p);
    return rc;
}

/* An instance's inputs as fused_experts_cpu takes them (the ABI's arguments): x.bf16, topk_ids,
 * topk_weights [tokens, slots] and, with weights=inputs, the w13 / w2 codes and 128x128 scales. */
static int moe_cpu_inputs(qc_op_call *c)
{
    qc_moe_cpu p;
    int rc = qc_moe_cpu_setup(c, &p);
    qc_moe_cfg *m = &p.cfg;
    int64_t ne = m->e + m->shared;
    rc = rc || qc_op_add_tensor(c, "x.bf16", QC_ST_U16, "bf16", m->t, m->h, p.x) ||
         qc_op_add_tensor(c, "topk_ids", QC_ST_I32, "i32", m->t, p.kk, p.ids) ||
         qc_op_add_tensor(c, "topk_weights", QC_ST_F32, "f32", m->t, p.kk, p.w) ||
         (!p.ws.gen && (qc_moe_expert_codes(c, QC_RECIPE_BLOCK, "w13", p.ws.in[0], ne, 2 * m->i, m->h) ||
                        qc_moe_expert_codes(c, QC_RECIPE_BLOCK, "w2", p.ws.in[1], ne, m->h, m->i)));
    qc_moe_cpu_free(&p);
    return rc ? 2 : 0;
}

const qc_op qc_op_moe_cpu = {
    "moe_cpu",
    "sgl-kernel fused_experts_cpu, fp8 w8a16 (bf16 x, e4m3fn 128x128 block weights): x, logits, route_bias, w13, w2 "
    "(f32; or weights=generate) -> out bf16 [tokens, hidden], out.bound (every kernel with its bf16 rounding points "
    "ic0/ic1/C/ic2/out, fp32 sums in any order, an exp within 2^-20), stage.route.*, stage.gemm1.h (ic0), "
    "stage.act.a (ic1), stage.gemm2.y (C); params: those of moe with recipe=fp8_block act=silu order=gate_up",
    ref_moe_cpu, offsetof(qcheck_backend, moe_cpu), abi_moe_cpu, moe_cpu_inputs, NULL};
