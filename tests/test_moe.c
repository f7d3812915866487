/* test_moe.c: MoE routing and activations (reference/ops/moe.h) against hand-worked values
 * (expected numbers computed independently in Python's double math from the formulas of
 * docs/spec/layouts.md §9.1 and §9.3, then written here), incl. near-ties that resolve only in
 * fp32, masked groups that must be -inf and not 0, all -inf groups, routed scaling applied once,
 * the fused shared expert, and the clamp of gpt-oss swiglu. And the streamed op of weights=generate
 * (harness/ops/op_moe.c) bit for bit against its weights given as inputs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <stdint.h>
#include <stdlib.h>

#include "generate.h"
#include "moe_op.h"
#include "arith/mma_sm90.h"
#include "ops/moe.h"
#include "quant_job.h"
#include "registry.h"

#include "check.h"

/* fp32 results of libm against double expectations: within 8 ulps of fp32 at the value. */
static int near(float got, double want) { return fabs((double)got - want) <= 8 * 0x1p-24 * fmax(fabs(want), 1e-30); }

static void route(const qc_route_cfg *c, const float *z, int *ids, float *w)
{
    CHECK(qcref_route(c, z, ids, w) == 0, "route %s refused: %s", qc_route_method_name(c->method),
          qcref_route_check(c) ? qcref_route_check(c) : "?");
}

static void test_softmax_family(void)
{
    const float z[4] = {1, 3, 2, 0};
    int ids[4];
    float w[4];
    qc_route_cfg c = {QC_ROUTE_SOFTMAX, 4, 2, 0, 0, 0, 1.0f, 0, 0, NULL, 0};
    route(&c, z, ids, w);
    CHECK(ids[0] == 1 && ids[1] == 2, "softmax top-2 ids 1, 2 (got %d, %d)", ids[0], ids[1]);
    CHECK(near(w[0], 0.6439142598879724) && near(w[1], 0.23688281808991016), "softmax weights (%.9g, %.9g)", w[0],
          w[1]);
    c.method = QC_ROUTE_RENORM_NAIVE;
    route(&c, z, ids, w);
    CHECK(near(w[0], 0.7310585786300049) && near(w[1], 0.2689414213699951), "renorm_naive (%.9g, %.9g)", w[0], w[1]);
    c.method = QC_ROUTE_RENORMALIZE;
    route(&c, z, ids, w);
    CHECK(ids[0] == 1 && near(w[0], 0.7310585786300049) && near(w[1], 0.2689414213699951), "renormalize");
}

static void test_sigmoid_family(void)
{
    /* sigmoid(35), sigmoid(40), sigmoid(30) are all 1.0f: Sigmoid ranks a tie (lowest index first),
     * TopKSigmoid ranks the raw logits (flashinfer test_topk_sigmoid_selects_on_raw_logits). */
    const float z[3] = {35, 40, 30};
    int ids[3];
    float w[3];
    qc_route_cfg c = {QC_ROUTE_SIGMOID, 3, 2, 0, 0, 0, 1.0f, 0, 0, NULL, 0};
    route(&c, z, ids, w);
    CHECK(ids[0] == 0 && ids[1] == 1 && w[0] == 1.0f, "sigmoid: saturated tie -> ids 0, 1 (got %d, %d)", ids[0],
          ids[1]);
    c.method = QC_ROUTE_TOPK_SIGMOID;
    route(&c, z, ids, w);
    CHECK(ids[0] == 1 && ids[1] == 0, "topk_sigmoid ranks raw logits: ids 1, 0 (got %d, %d)", ids[0], ids[1]);
    c.method = QC_ROUTE_SIGMOID_RENORM;
    route(&c, z, ids, w);
    CHECK(w[0] == 0.5f && w[1] == 0.5f, "sigmoid_renorm: 1 / (2 + 1e-20) = 0.5 (%.9g)", w[0]);
    const float zl[3] = {0.5f, -1, 2};
    qc_route_cfg l = {QC_ROUTE_LLAMA4, 3, 1, 0, 0, 0, 1.0f, 0, 0, NULL, 0};
    route(&l, zl, ids, w);
    CHECK(ids[0] == 2 && near(w[0], 0.8807970779778823), "llama4: top-1 id 2, sigmoid(2) (%.9g)", w[0]);
}

/* DeepSeek-V3: 8 experts in 4 groups of 2, keep 2 groups, top-2. sb = s + bias is set directly:
 * groups score -6.1, -6, -4.5, -20 -> groups 2 and 1 kept; the best candidates are experts 4 (-1)
 * and 2 (-2). Scoring the masked experts 0 instead of -inf would pick experts 0 and 1. */
static void deepseek_cfg(qc_route_cfg *c, float *bias, float *z, int shared, float rsf)
{
    static const float sb[8] = {-3, -3.1f, -2, -4, -1, -5, -10, -10};
    for (int e = 0; e < 8; e++)
        z[e] = 0;
    z[4] = 1, z[2] = -1;
    for (int e = 0; e < 8; e++)
        bias[e] = sb[e] - 1.0f / (1.0f + expf(-z[e]));
    qc_route_cfg d = {QC_ROUTE_DEEPSEEK_V3, 8, 2, 4, 2, 1, rsf, 1, shared, bias, 0};
    *c = d;
}

static void test_deepseek(void)
{
    qc_route_cfg c;
    float bias[8], z[8], w[3];
    int ids[3];
    deepseek_cfg(&c, bias, z, 0, 2.5f);
    route(&c, z, ids, w);
    CHECK(ids[0] == 4 && ids[1] == 2, "deepseek: masked groups are -inf: ids 4, 2 (got %d, %d)", ids[0], ids[1]);
    /* w = s / (s4 + s2) * rsf: sigmoid(1) * 2.5 and sigmoid(-1) * 2.5 (unbiased s) */
    CHECK(near(w[0], 1.8276464465750122) && near(w[1], 0.6723535534249878), "deepseek weights x rsf once (%.9g, %.9g)",
          w[0], w[1]);
    c.mask_zero = 1; /* DeepSeek-V2's 0 for masked experts: with a bias it selects experts 0 and 1 */
    route(&c, z, ids, w);
    CHECK(ids[0] == 0 && ids[1] == 1, "mask_zero: masked experts (0) outrank kept ones (< 0): ids 0, 1 (got %d, %d)",
          ids[0], ids[1]);
    deepseek_cfg(&c, bias, z, 1, 2.5f);
    route(&c, z, ids, w);
    CHECK(ids[2] == 8 && near(w[2], 1.0), "fused shared expert: id 8, weight sum/rsf -> 1 after x rsf (%.9g)", w[2]);
    deepseek_cfg(&c, bias, z, 0, 2.5f);
    c.rsf_in_weights = 0;
    route(&c, z, ids, w);
    CHECK(near(w[0], 0.7310585786300049), "rsf left for the combine: weights not scaled (%.9g)", w[0]);

    /* An all -inf group is never kept over a finite one; when every group is -inf, the lowest. */
    float zb[4] = {0, 0, 0, 0}, b4[4] = {-INFINITY, -INFINITY, 0, 0};
    qc_route_cfg g = {QC_ROUTE_DEEPSEEK_V3, 4, 2, 2, 1, 1, 1.0f, 1, 0, b4, 0};
    route(&g, zb, ids, w);
    CHECK(ids[0] == 2 && ids[1] == 3 && w[0] == 0.5f, "all -inf group 0 is dropped: ids 2, 3 (got %d, %d)", ids[0],
          ids[1]);
    for (int e = 0; e < 4; e++)
        b4[e] = -INFINITY;
    route(&g, zb, ids, w);
    CHECK(ids[0] == 0 && ids[1] == 1 && w[0] == 0.5f, "every group -inf: group 0, ids 0, 1 (got %d, %d)", ids[0],
          ids[1]);

    /* A near-tie that only fp32 resolves (layouts.md T-RT3): 0.5 + 2^-20 and 0.5 are one bf16 value. */
    float zt[4] = {0, 0, 0, 0}, bt[4] = {0, 0x1p-20f, -1, -1};
    qc_route_cfg t = {QC_ROUTE_DEEPSEEK_V3, 4, 1, 0, 0, 0, 1.0f, 0, 0, bt, 0};
    route(&t, zt, ids, w);
    CHECK(ids[0] == 1, "near-tie in fp32: expert 1 (got %d)", ids[0]);
    CHECK(qcref_route_check(&(qc_route_cfg){QC_ROUTE_DEEPSEEK_V3, 8, 5, 4, 2, 1, 1, 0, 0, NULL, 0}) != NULL,
          "kept groups with fewer than top_k experts are rejected");
}

/* DeepSeek-V2 grouped_topk: 8 experts in 4 groups of 2, keep 2, top-2. z = 2, 2 | 2.5, -5 | 1.9, 1.9
 * | -3, -3: ranked by their max, groups 1 (2.5) and 0 (2) are kept, so the ids are 2 and 0 (the tie
 * e0 = e1 to the lower index); ranking groups by the sum of their two best (V3's rule) would keep
 * groups 0 and 2 and pick 0 and 1. Expected p = softmax(z) from Python's double math. */
static void test_deepseek_v2(void)
{
    const float z[8] = {2, 2, 2.5f, -5, 1.9f, 1.9f, -3, -3};
    int ids[2];
    float w[2];
    qc_route_cfg c = {QC_ROUTE_DEEPSEEK_V2, 8, 2, 4, 2, 0, 16.0f, 0, 0, NULL, 0};
    route(&c, z, ids, w);
    CHECK(ids[0] == 2 && ids[1] == 0, "deepseek_v2: groups ranked by their max: ids 2, 0 (got %d, %d)", ids[0],
          ids[1]);
    CHECK(near(w[0], 0.30125824553407254) && near(w[1], 0.18272236240765155),
          "deepseek_v2: w = softmax over all experts, no renorm, rsf not in the weights (%.9g, %.9g)", w[0], w[1]);
    c.renorm = 1;
    route(&c, z, ids, w);
    CHECK(near(w[0], 0.6224593312018545) && near(w[1], 0.37754066879814546), "deepseek_v2 renorm (%.9g, %.9g)",
          w[0], w[1]);
    c.topk_group = 1; /* only group 1 is kept: e2 (2.5), then e3 (-5) before any masked expert */
    route(&c, z, ids, w);
    CHECK(ids[0] == 2 && ids[1] == 3, "deepseek_v2 one group: ids 2, 3 (got %d, %d)", ids[0], ids[1]);
    c.n_group = 0; /* no groups: plain softmax top-k */
    route(&c, z, ids, w);
    CHECK(ids[0] == 2 && ids[1] == 0, "deepseek_v2 without groups: ids 2, 0 (got %d, %d)", ids[0], ids[1]);
    CHECK(qcref_route_check(&(qc_route_cfg){QC_ROUTE_DEEPSEEK_V2, 8, 3, 4, 1, 0, 1, 0, 0, NULL, 0}) != NULL,
          "deepseek_v2: one kept group of 2 cannot give top-3");
}

static void test_topk_rules(void)
{
    const float v[5] = {NAN, -INFINITY, 2, 2, 1};
    int idx[5];
    qcref_topk(v, NULL, 5, 5, idx);
    CHECK(idx[0] == 2 && idx[1] == 3 && idx[2] == 4 && idx[3] == 1 && idx[4] == 0,
          "topk: ties by lower index, -inf after finite, NaN last (%d %d %d %d %d)", idx[0], idx[1], idx[2], idx[3],
          idx[4]);
    const unsigned char cand[5] = {1, 1, 0, 0, 0};
    qcref_topk(v, cand, 5, 3, idx);
    CHECK(idx[0] == 1 && idx[1] == 0 && idx[2] == -1, "topk over candidates only; -1 when they run out");
}

static void test_activations(void)
{
    qc_act_cfg c = {QC_ACT_SILU, QC_W13_GATE_UP, 1.702f, 1.0f, 7.0f};
    float h[2] = {1, 2}, o;
    qcref_act_row(&c, h, 1, &o);
    CHECK(near(o, 1.4621171572600098), "silu(1) * 2 (%.9g)", o);
    float hs[2] = {2, 1};
    c.order = QC_W13_UP_GATE;
    qcref_act_row(&c, hs, 1, &o);
    CHECK(near(o, 1.4621171572600098), "[up; gate]: gate is the second half (%.9g)", o);
    float hi[4] = {1, 2, 5, 6}, oi[2];
    c.order = QC_W13_INTERLEAVED;
    qcref_act_row(&c, hi, 2, oi);
    CHECK(near(oi[0], 1.4621171572600098), "interleaved: even column gate, odd column up (%.9g)", oi[0]);
    c.order = QC_W13_GATE_UP;
    /* gelu(1) = 0.8413447460685429 and gelu_tanh(1) = 0.8411919906082768, exact in bits: erf and tanh
     * are correctly rounded (arith/erf_cr.h, tanh_cr.h), so the fp32 steps are determined. Worked with
     * mpmath at 200 bits: fl32(1 / sqrt 2) = 0.70710677, erf of it 0.68268948 -> 0x3f2ec4bd;
     * (1 + that) 0.5 = 0x3f57625e. inner = fl32(0.7978846 fl32(1 + 0.044715)) = 0.833562, tanh of it
     * 0.682384 -> (1 + that) 0.5 = 0x3f57585c. */
    c.act = QC_ACT_GELU;
    float ge = qcref_act_pair(&c, 1, 1);
    CHECK(near(ge, 0.8413447460685429) && qc_f32_bits(ge) == 0x3f57625eu, "gelu erf (1): %a", (double)ge);
    c.act = QC_ACT_GELU_TANH;
    ge = qcref_act_pair(&c, 1, 1);
    CHECK(near(ge, 0.8411919906082768) && qc_f32_bits(ge) == 0x3f57585cu, "gelu tanh (1): %a", (double)ge);
    c.act = QC_ACT_RELU2;
    float hr[2] = {-3, 2}, orr[2];
    qcref_act_row(&c, hr, 2, orr);
    CHECK(orr[0] == 0 && orr[1] == 4, "relu2 [-3, 2] -> [0, 4]");
    c.act = QC_ACT_SWIGLU_OAI;
    CHECK(near(qcref_act_pair(&c, 10, -9), -41.99971876981991), "gpt-oss swiglu clamps G to 7, U to -7, +1 (%.9g)",
          qcref_act_pair(&c, 10, -9));
    CHECK(near(qcref_act_pair(&c, 2, 3), 7.742634492576833), "gpt-oss swiglu inside the limit");
    c.limit = -1;
    CHECK(near(qcref_act_pair(&c, 10, -9), -79.99999675363097), "negative limit: no clamp (%.9g)",
          qcref_act_pair(&c, 10, -9));
    c.act = QC_ACT_SWIGLU_STEP, c.limit = 7;
    CHECK(qcref_act_pair(&c, 10, 9) == 49.0f, "swiglu_step: min(silu(10), 7) * clamp(9) = 49");
}

/* weights=generate: the generator against an independent reading of its definition (moe_op.h),
 * starting from splitmix64's published first output for seed 0, 0xE220A8397B1DCDAF (Vigna,
 * prng.di.unimi.it/splitmix64.c); its moments; and the streamed op (weights generated and dropped
 * expert by expert, quantized in two threads) bit for bit against the same weights given as input
 * tensors and quantized in one call (threads=1). */
static void test_weight_generator(void)
{
    float w[4096];
    qc_moe_weight_fill(0, 0, 0, 1.0f, 0, 4096, w);
    uint64_t z = 0xE220A8397B1DCDAFull; /* output 0: expert 0, w13, element 0 */
    int64_t u = (int64_t)((z & 0xFFFF) + ((z >> 16) & 0xFFFF) + ((z >> 32) & 0xFFFF) + (z >> 48)) - 131070;
    float want = (float)((double)u * (1.0 / sqrt(4294967295.0 / 3.0)));
    CHECK(w[0] == want, "generated w13[0][0] for seed 0 = %.9g, expected %.9g from splitmix64's first output", w[0],
          want);
    float tail[8];
    qc_moe_weight_fill(0, 0, 0, 1.0f, 4090, 6, tail);
    CHECK(memcmp(tail, w + 4090, sizeof(float) * 6) == 0, "an offset fill equals the same elements of a full one");
    qc_moe_weight_fill(0, 0, 1, 1.0f, 0, 1, tail);
    qc_moe_weight_fill(0, 1, 0, 1.0f, 0, 1, tail + 1);
    CHECK(tail[0] != w[0] && tail[1] != w[0] && tail[0] != tail[1], "w2 and expert 1 are other streams");
    double sum = 0, sq = 0, mx = 0;
    static float big[1 << 18];
    qc_moe_weight_fill(7, 3, 1, 0.5f, 0, 1 << 18, big);
    for (int i = 0; i < 1 << 18; i++)
        sum += big[i], sq += (double)big[i] * big[i], mx = fmax(mx, fabs(big[i]));
    double mean = sum / (1 << 18), sd = sqrt(sq / (1 << 18) - mean * mean);
    CHECK(fabs(mean) < 0.005 && fabs(sd - 0.5) < 0.005 && mx <= 0.5 * 3.4642, "std 0.5: mean %g, sd %g, max %g", mean,
          sd, mx);
}

static int run_moe(const char *kv, qc_tensor_set *in, qc_tensor_set *out)
{
    qc_params p = {0};
    char err[512];
    if (qc_params_parse(&p, kv, err, sizeof err)) {
        printf("params %s: %s\n", kv, err);
        return 2;
    }
    qc_op_call c = {&p, in, out, err, sizeof err, 0};
    int rc = qc_op_find("moe")->reference(&c);
    if (rc)
        printf("moe %s: %s\n", kv, err);
    return rc;
}

static void add_input(qc_tensor_set *in, const char *kv, const char *name, const char *d0, const char *d1, double scale,
                      uint64_t seed)
{
    qc_params p = {0};
    char err[256];
    qc_params_parse(&p, kv, err, sizeof err);
    qc_input_spec sp = {0};
    snprintf(sp.name, sizeof sp.name, "%s", name);
    sp.ndim = d1 ? 2 : 1;
    snprintf(sp.shape[0], sizeof sp.shape[0], "%s", d0);
    snprintf(sp.shape[1], sizeof sp.shape[1], "%s", d1 ? d1 : "");
    sp.storage = QC_ST_F32;
    snprintf(sp.fill, sizeof sp.fill, "normal");
    snprintf(sp.scale, sizeof sp.scale, "%g", scale);
    qc_tensor t;
    if (qc_generate(&sp, &p, seed, &t, err, sizeof err) == 0)
        qc_set_add(in, &t);
    else
        CHECK(0, "generate %s: %s", name, err);
}

/* The w13 / w2 input tensors that weights=generate makes inside the op. */
static void add_generated_weights(qc_tensor_set *in, int64_t ne, int64_t r1, int64_t h, int64_t inter, uint64_t seed,
                                  float s13, float s2)
{
    int64_t d13[3] = {ne, r1, h}, d2[3] = {ne, h, inter};
    qc_tensor w13, w2;
    qc_tensor_alloc(&w13, "w13", QC_ST_F32, "f32", 3, d13);
    qc_tensor_alloc(&w2, "w2", QC_ST_F32, "f32", 3, d2);
    for (int64_t e = 0; e < ne; e++) {
        qc_moe_weight_fill(seed, e, 0, s13, 0, (size_t)(r1 * h), (float *)w13.data + e * r1 * h);
        qc_moe_weight_fill(seed, e, 1, s2, 0, (size_t)(h * inter), (float *)w2.data + e * h * inter);
    }
    qc_set_add(in, &w13), qc_set_add(in, &w2);
}

/* Every output of a equals the same-named output of b, byte for byte; the number that differ. */
static int differing(const qc_tensor_set *a, const qc_tensor_set *b, const char *what)
{
    int bad = a->n != b->n;
    for (int i = 0; i < a->n; i++) {
        const qc_tensor *x = &a->t[i], *y = qc_set_find((qc_tensor_set *)b, x->name);
        int same = y && x->nbytes == y->nbytes && memcmp(x->data, y->data, x->nbytes) == 0;
        if (!same && what)
            printf("  %s: %s differs\n", what, x->name);
        bad += !same;
    }
    return bad;
}

static void test_streamed_equals_inputs(void)
{
    static const struct { const char *kv; int64_t r1mul; } inst[] = {
        /* DeepSeek-V3's routing and recipe on small shapes; 128x128 weight blocks split across threads */
        {"recipe=fp8_block,route=deepseek_v3,experts=16,n_group=8,topk_group=4,top_k=8,rsf=2.5,shared=1,act=silu,"
         "tokens=33,hidden=256,inter=384", 2},
        /* NVFP4: a global scale per tensor (one quantizer call), an a2 global over all rows */
        {"recipe=nvfp4,route=renorm_naive,experts=8,top_k=2,act=silu,tokens=9,hidden=128,inter=80", 2},
        /* MXFP4 weights x bf16 activations, gpt-oss swiglu, biases, weights on the input */
        {"recipe=mxfp4,route=renorm_naive,experts=4,top_k=1,act=swiglu_oai,bias=1,weight_on_input=1,tokens=5,"
         "hidden=64,inter=64", 2},
        /* bf16, per-tensor fp8 (a2 scale dynamic over all rows), an ungated activation */
        {"recipe=fp8_tensor,route=renorm_naive,experts=4,top_k=2,act=relu2,tokens=6,hidden=64,inter=96", 1},
        {"recipe=bf16,route=renorm_naive,experts=4,top_k=2,act=gelu,tokens=6,hidden=64,inter=96", 2},
    };
    for (size_t i = 0; i < sizeof inst / sizeof inst[0]; i++) {
        const char *kv = inst[i].kv;
        qc_params p = {0};
        char err[256], gen[512], gen2[512];
        qc_params_parse(&p, kv, err, sizeof err);
        int64_t e = atoll(qc_param(&p, "experts")), sh = atoll(qc_param_or(&p, "shared", "0"));
        int64_t h = atoll(qc_param(&p, "hidden")), in = atoll(qc_param(&p, "inter")), r1 = inst[i].r1mul * in;
        snprintf(gen, sizeof gen, "%s,weights=generate,weight_seed=11,w13_std=0.07,w2_std=0.08", kv);
        snprintf(gen2, sizeof gen2, "%s,weights=generate,weight_seed=12,w13_std=0.07,w2_std=0.08", kv);
        qc_tensor_set base = {0}, full = {0}, o_gen = {0}, o_in = {0}, o_gen2 = {0};
        add_input(&base, kv, "x", "tokens", "hidden", 1, 1);
        add_input(&base, kv, "logits", "tokens", "experts", 1, 2);
        if (strstr(kv, "deepseek_v3"))
            add_input(&base, kv, "route_bias", "experts", NULL, 3, 3);
        if (strstr(kv, "bias=1")) {
            add_input(&base, kv, "b13", "experts", "2 * inter", 0.1, 4);
            add_input(&base, kv, "b2", "experts", "hidden", 0.1, 5);
        }
        for (int t = 0; t < base.n; t++) { /* the same inputs plus the materialized weights */
            qc_tensor c;
            qc_tensor_alloc(&c, base.t[t].name, base.t[t].storage, base.t[t].dtype, base.t[t].ndim, base.t[t].shape);
            memcpy(c.data, base.t[t].data, base.t[t].nbytes);
            qc_set_add(&full, &c);
        }
        add_generated_weights(&full, e + sh, r1, h, in, 11, 0.07f, 0.08f);
        char one[512];
        snprintf(one, sizeof one, "%s,threads=1", kv); /* and the quantizer in one call, not two row halves */
        if (run_moe(gen, &base, &o_gen) || run_moe(one, &full, &o_in) || run_moe(gen2, &base, &o_gen2)) {
            failures++;
            continue;
        }
        int bad = differing(&o_gen, &o_in, kv);
        CHECK(bad == 0 && o_gen.n >= 9, "%s: streamed (weights=generate) and input weights differ in %d of %d outputs",
              kv, bad, o_gen.n);
        const qc_tensor *a = qc_set_find(&o_gen, "stage.gemm1.h"), *b = qc_set_find(&o_gen2, "stage.gemm1.h");
        CHECK(a && b && memcmp(a->data, b->data, a->nbytes) != 0, "%s: another weight_seed changes GEMM1", kv);
        printf("  streamed == inputs, %d outputs bit for bit: %s\n", o_gen.n, kv);
        qc_set_free(&base), qc_set_free(&full), qc_set_free(&o_gen), qc_set_free(&o_in), qc_set_free(&o_gen2);
    }
    qc_tensor_set none = {0}, o = {0};
    add_input(&none, "tokens=2,experts=4,hidden=64", "x", "tokens", "hidden", 1, 1);
    add_input(&none, "tokens=2,experts=4,hidden=64", "logits", "tokens", "experts", 1, 2);
    qc_params p = {0};
    char err[256];
    qc_params_parse(&p, "recipe=bf16,experts=4,top_k=1,tokens=2,hidden=64,inter=32,weights=generate,weight_seed=-1",
                    err, sizeof err);
    qc_op_call c = {&p, &none, &o, err, sizeof err, 0};
    CHECK(qc_op_find("moe")->reference(&c) == 2 && strstr(err, "weight_seed"), "weight_seed=-1 is refused: %s", err);
    qc_set_free(&none), qc_set_free(&o);
}

/* ---- model sm90-wgmma: the op against a slow second implementation ----
 * Everything after the routing (taken from the op's route stages, checked above) is recomputed
 * here from the inputs: the recipes' quantizers, every output of every expert GEMM as its own dot
 * of the header model (arith/mma_sm90.h qcref_sm90_mma_dot: the tensor core's k-step, not the
 * GEMM path of gemm_sm90.c the op uses) with the schedule and epilogue the model names, the
 * activations, and the fp32 combine written out again. Stages and out must agree bit for bit. */

/* x [rows, cols] quantized by the MoE's job for recipe into *q (fp32 scales). */
static void slow_quant(int recipe, const float *x, int64_t rows, int64_t cols, qc_quant_job *j, qc_quantized *q)
{
    char err[256];
    qc_params none = {0};
    qc_op_call c = {&none, NULL, NULL, err, sizeof err, 0};
    CHECK(qc_moe_quant_job(&c, recipe, rows, cols, j) == 0 && qc_quant_job_alloc(j, q) == 0, "quant job: %s", err);
    qcref_quant(j->recipe, &j->policy, x, (size_t)rows, (size_t)cols, NULL, NULL, q);
}

/* One GEMM output: codes a, b of length k; block: per 128 of K the tensor core's sum from zero,
 * t = fma(p, fl32(sa[l] sb[l]), t); else the K loop promoted every `promote` k-steps and
 * fl32(fl32(sa sb) acc); then + bias in fp32. */
static float slow_dot(const uint8_t *a, int ae5, const uint8_t *b, int be5, int64_t k, int block, const float *sa,
                      const float *sb, int promote, const float *bias)
{
    static uint8_t ap[4096], bp[4096];
    int64_t kp = (k + 31) / 32 * 32;
    memset(ap, 0, (size_t)kp), memset(bp, 0, (size_t)kp);
    memcpy(ap, a, (size_t)k), memcpy(bp, b, (size_t)k);
    float v;
    if (block) {
        v = 0.0f;
        for (int64_t l = 0; l * 128 < k; l++) {
            int64_t n = kp - l * 128 < 128 ? kp - l * 128 : 128;
            float p = qcref_sm90_mma_dot(ap + l * 128, ae5, bp + l * 128, be5, (int)n, 0.0f, 0);
            v = fmaf(p, sa[l] * sb[l], v);
        }
    } else
        v = sa[0] * sb[0] * qcref_sm90_mma_dot(ap, ae5, bp, be5, (int)kp, 0.0f, promote);
    return bias ? v + *bias : v;
}

static const qc_tensor *out_of(const qc_tensor_set *o, const char *name)
{
    const qc_tensor *t = qc_set_find((qc_tensor_set *)o, name);
    CHECK(t != NULL, "the op wrote no %s", name);
    return t;
}

static int same_bytes(const qc_tensor_set *o, const char *name, const void *want, size_t n)
{
    const qc_tensor *t = out_of(o, name);
    if (!t || t->nbytes != n)
        return 0;
    if (memcmp(t->data, want, n) == 0)
        return 1;
    size_t i = 0;
    while (((const uint8_t *)t->data)[i] == ((const uint8_t *)want)[i])
        i++;
    printf("  %s: first difference at byte %zu\n", name, i);
    return 0;
}

typedef struct sm90_inst {
    const char *kv;
    int act_recipe, w_recipe, promote; /* promote 4: sm90-wgmma, 0: sm90-wgmma-fast */
} sm90_inst;

static void test_sm90_slow_one(const sm90_inst *in)
{
    qc_params p = {0};
    char err[256], kv[640];
    snprintf(kv, sizeof kv, "%s,model=%s", in->kv, in->promote ? "sm90-wgmma" : "sm90-wgmma-fast");
    qc_params_parse(&p, kv, err, sizeof err);
    int64_t t = atoll(qc_param(&p, "tokens")), hd = atoll(qc_param(&p, "hidden")), it = atoll(qc_param(&p, "inter"));
    int64_t e = atoll(qc_param(&p, "experts")), kk = atoll(qc_param(&p, "top_k")) + atoll(qc_param_or(&p, "shared", "0"));
    int64_t ne = e + atoll(qc_param_or(&p, "shared", "0")), r1 = 2 * it, rows = t * kk;
    int bias = strstr(kv, "bias=1") != NULL, woi = strstr(kv, "weight_on_input=1") != NULL;
    int block = in->w_recipe == QC_RECIPE_BLOCK;
    float rsf = strstr(kv, "rsf_in_weights=0") ? (float)atof(qc_param(&p, "rsf")) : 1.0f;
    qc_act_cfg act = {(qc_act)qc_act_from_name(qc_param(&p, "act")), QC_W13_GATE_UP, 1.702f, 1.0f, 7.0f};
    qc_tensor_set ins = {0}, o = {0};
    add_input(&ins, kv, "x", "tokens", "hidden", 1, 1);
    add_input(&ins, kv, "logits", "tokens", "experts", 1, 2);
    if (strstr(kv, "deepseek_v3"))
        add_input(&ins, kv, "route_bias", "experts", NULL, 3, 3);
    const char *all = strstr(kv, "shared=") ? "experts + shared" : "experts";
    if (bias) {
        add_input(&ins, kv, "b13", all, "2 * inter", 0.5, 4);
        add_input(&ins, kv, "b2", all, "hidden", 0.5, 5);
    }
    add_generated_weights(&ins, ne, r1, hd, it, 21, 0.25f, 0.1f);
    if (run_moe(kv, &ins, &o)) {
        failures++;
        return;
    }
    const int *ids = out_of(&o, "stage.route.ids")->data;
    const float *w = out_of(&o, "stage.route.weights")->data, *x = qc_set_find(&ins, "x")->data;
    const float *w13 = qc_set_find(&ins, "w13")->data, *w2 = qc_set_find(&ins, "w2")->data;
    const float *b13 = bias ? qc_set_find(&ins, "b13")->data : NULL, *b2 = bias ? qc_set_find(&ins, "b2")->data : NULL;
    qc_quant_job j1, j2, jw;
    qc_quantized a1, a2, *wq13 = calloc((size_t)ne, sizeof *wq13), *wq2 = calloc((size_t)ne, sizeof *wq2);
    for (int64_t x_ = 0; x_ < ne; x_++) {
        slow_quant(in->w_recipe, w13 + x_ * r1 * hd, r1, hd, &jw, &wq13[x_]);
        slow_quant(in->w_recipe, w2 + x_ * hd * it, hd, it, &jw, &wq2[x_]);
    }
    int we5 = jw.policy.elem == QC_E5M2, ls1 = (int)((hd + 127) / 128), ls2 = (int)((it + 127) / 128);
    slow_quant(in->act_recipe, x, t, hd, &j1, &a1);
    float *h = calloc((size_t)(rows * r1), 4), *a = calloc((size_t)(rows * it), 4), *abf = calloc((size_t)(rows * it), 4);
    float *y = calloc((size_t)(rows * hd), 4), *comb = calloc((size_t)(t * hd), 4);
    uint16_t *out = calloc((size_t)(t * hd), 2);
    for (int64_t r = 0; r < rows; r++) {
        int64_t ex = ids[r], tok = r / kk;
        for (int64_t n = 0; n < r1; n++) {
            float v = slow_dot(a1.q + tok * hd, j1.policy.elem == QC_E5M2, wq13[ex].q + n * hd, we5, hd, block,
                               block ? a1.scale_f32 + tok * ls1 : a1.scale_f32,
                               block ? wq13[ex].scale_f32 + n / 128 * ls1 : wq13[ex].scale_f32, in->promote,
                               bias ? b13 + ex * r1 + n : NULL);
            h[r * r1 + n] = woi ? v * w[r] : v;
        }
        qcref_act_row(&act, h + r * r1, (size_t)it, a + r * it);
    }
    qc_cast_policy bf = qcref_default_policy();
    for (int64_t i = 0; i < rows * it; i++)
        abf[i] = qcref_decode(QC_BF16, qcref_encode(QC_BF16, a[i], &bf), &bf);
    slow_quant(in->act_recipe, abf, rows, it, &j2, &a2);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t n = 0; n < hd; n++)
            y[r * hd + n] = slow_dot(a2.q + r * it, j2.policy.elem == QC_E5M2, wq2[ids[r]].q + n * it, we5, it, block,
                                     block ? a2.scale_f32 + r * ls2 : a2.scale_f32,
                                     block ? wq2[ids[r]].scale_f32 + n / 128 * ls2 : wq2[ids[r]].scale_f32, in->promote,
                                     bias ? b2 + ids[r] * hd + n : NULL);
    for (int64_t tok = 0; tok < t; tok++)
        for (int64_t n = 0; n < hd; n++) {
            float acc = 0.0f;
            for (int64_t q = 0; q < kk; q++)
                acc += (woi ? 1.0f : w[tok * kk + q]) * y[(tok * kk + q) * hd + n];
            comb[tok * hd + n] = rsf * acc;
            out[tok * hd + n] = (uint16_t)qcref_encode(QC_BF16, comb[tok * hd + n], &bf);
        }
    int ok = same_bytes(&o, "stage.gemm1.h", h, (size_t)(rows * r1) * 4) &&
             same_bytes(&o, "stage.act.a", a, (size_t)(rows * it) * 4) &&
             same_bytes(&o, "stage.gemm2.y", y, (size_t)(rows * hd) * 4) &&
             same_bytes(&o, "stage.combine.out", comb, (size_t)(t * hd) * 4) &&
             same_bytes(&o, "out", out, (size_t)(t * hd) * 2);
    const double *bound = out_of(&o, "out.bound")->data;
    for (int64_t i = 0; ok && i < t * hd; i++)
        ok = bound[i] == 0.0;
    CHECK(ok, "%s: the op and the slow second implementation differ (or out.bound is not 0)", kv);
    if (ok)
        printf("  sm90-wgmma: op == slow second implementation, %lld GEMM outputs bit for bit: %s\n",
               (long long)(rows * (r1 + hd)), kv);
    for (int64_t x_ = 0; x_ < ne; x_++)
        qc_quant_job_free(&wq13[x_]), qc_quant_job_free(&wq2[x_]);
    qc_quant_job_free(&a1), qc_quant_job_free(&a2);
    free(wq13), free(wq2), free(h), free(a), free(abf), free(y), free(comb), free(out);
    qc_set_free(&ins), qc_set_free(&o);
}

static void test_sm90_slow(void)
{
    static const sm90_inst inst[] = {
        /* DeepSeek-V3 block FP8: K of 256 and 384 (promotions with the block scales), biases, a fused
         * shared expert, rsf after the sum */
        {"recipe=fp8_block,route=deepseek_v3,experts=8,n_group=4,topk_group=2,top_k=4,rsf=2.5,rsf_in_weights=0,"
         "shared=1,act=silu,bias=1,tokens=5,hidden=256,inter=384",
         QC_RECIPE_TOKEN_GROUP, QC_RECIPE_BLOCK, 4},
        /* per-tensor FP8, K 96 (zero-padded) and 160 (one promotion), both schedules */
        {"recipe=fp8_tensor,route=renorm_naive,experts=4,top_k=2,act=swiglu_oai,bias=1,tokens=6,hidden=96,inter=160",
         QC_RECIPE_TENSOR, QC_RECIPE_TENSOR, 4},
        {"recipe=fp8_tensor,route=sigmoid_renorm,experts=4,top_k=2,act=swiglu_step,tokens=6,hidden=96,inter=160",
         QC_RECIPE_TENSOR, QC_RECIPE_TENSOR, 0},
        /* the routing weight on GEMM1's output (Llama4, top-1) */
        {"recipe=fp8_tensor,route=llama4,experts=4,top_k=1,weight_on_input=1,act=silu,tokens=6,hidden=64,inter=200",
         QC_RECIPE_TENSOR, QC_RECIPE_TENSOR, 4},
    };
    for (size_t i = 0; i < sizeof inst / sizeof inst[0]; i++)
        test_sm90_slow_one(&inst[i]);
}

int main(void)
{
    test_weight_generator();
    test_streamed_equals_inputs();
    test_sm90_slow();
    test_topk_rules();
    test_softmax_family();
    test_sigmoid_family();
    test_deepseek();
    test_deepseek_v2();
    test_activations();
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
