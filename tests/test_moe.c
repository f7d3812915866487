/* test_moe.c: MoE routing and activations (reference/ops/moe.h) against hand-worked values
 * (expected numbers computed independently in Python's double math from the formulas of
 * shared/spec/layouts.md §9.1 and §9.3, then written here), incl. near-ties that resolve only in
 * fp32, masked groups that must be -inf and not 0, all -inf groups, routed scaling applied once,
 * the fused shared expert, and the clamp of gpt-oss swiglu. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/moe.h"

static int failures;
#define CHECK(cond, ...)                                                                                            \
    do {                                                                                                            \
        if (!(cond)) {                                                                                              \
            failures++;                                                                                             \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                             \
            printf(__VA_ARGS__);                                                                                    \
            printf("\n");                                                                                           \
        }                                                                                                           \
    } while (0)

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
    c.act = QC_ACT_GELU;
    CHECK(near(qcref_act_pair(&c, 1, 1), 0.8413447460685429), "gelu erf (1)");
    c.act = QC_ACT_GELU_TANH;
    CHECK(near(qcref_act_pair(&c, 1, 1), 0.8411919906082768), "gelu tanh (1)");
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

int main(void)
{
    test_topk_rules();
    test_softmax_family();
    test_sigmoid_family();
    test_deepseek();
    test_deepseek_v2();
    test_activations();
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
