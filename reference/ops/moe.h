/* moe.h: fused-MoE reference semantics (docs/spec/layouts.md §9): routing (§9.1) and the
 * activations with their W13 half orders (layouts.md §9.3, §6.1). Every step is fp32 in a fixed order, as the
 * flashinfer / sglang references are (tests/moe/utils.py, topk.py). exp is correctly rounded
 * (arith/exp_cr.h, not the host's libm), and so are gelu's erf and gelu_tanh's tanh (erf_cr.h,
 * tanh_cr.h), so routing and every activation give the same bits on every machine and on a GPU. */
#ifndef QCREF_MOE_H
#define QCREF_MOE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* layouts.md §9.1 (flashinfer RoutingMethodType, sglang topk.py). */
typedef enum qc_route_method {
    QC_ROUTE_SOFTMAX,        /* Default: p = softmax(z), top-K of p, w = p */
    QC_ROUTE_RENORM_NAIVE,   /* RenormalizeNaive (Qwen3): softmax, top-K, w = p_k / sum_j p_j */
    QC_ROUTE_RENORMALIZE,    /* Renormalize: top-K on z, softmax over the K selected logits */
    QC_ROUTE_SIGMOID,        /* Sigmoid: sigmoid(z), top-K, no renorm */
    QC_ROUTE_SIGMOID_RENORM, /* SigmoidRenorm: sigmoid, top-K, w / (sum + 1e-20) */
    QC_ROUTE_TOPK_SIGMOID,   /* TopKSigmoid: rank raw z, w = sigmoid(z_k) */
    QC_ROUTE_LLAMA4,         /* Llama4: top-1 on z, w = sigmoid(z_1) (applied on the input) */
    QC_ROUTE_DEEPSEEK_V3,    /* noaux_tc: grouped, biased selection, unbiased weights (below) */
    QC_ROUTE_DEEPSEEK_V2,    /* grouped_topk: softmax, groups ranked by their max, masked experts 0 (below) */
    QC_ROUTE_COUNT
} qc_route_method;

#define QC_MAX_EXPERTS 1024 /* routed experts a routing takes (qcref_route_check) */

typedef struct qc_route_cfg {
    qc_route_method method;
    int experts, top_k;
    int n_group, topk_group; /* DeepSeek-V2/V3: groups of experts/n_group; 0 = one group */
    int renorm;              /* DeepSeek-V3: w = s_k / (sum s + 1e-20); V2: w = p_k / sum p */
    float rsf;               /* routed_scaling_factor (1: none) */
    int rsf_in_weights;      /* 1: w *= rsf here (apply_routed_scaling_factor_on_output); 0: once, after the sum */
    int n_shared;            /* fused shared experts (ids experts .. experts+n_shared-1), sglang topk.py */
    const float *bias;       /* DeepSeek-V3 e_score_correction_bias [experts], or NULL */
    int mask_zero;           /* masked experts score 0, not -inf: DeepSeek-V2 grouped_topk (safe only when
                                every score is >= 0; wrong with a bias, layouts.md T-RT1) */
} qc_route_cfg;

const char *qc_route_method_name(int m);
int qc_route_method_from_name(const char *s); /* -1 when unknown */

/* The rule that cfg breaks (a static string), or NULL. */
const char *qcref_route_check(const qc_route_cfg *cfg);

/* Top-k of v[0..n) among the candidates (cand NULL: all): descending, NaN below -Inf, ties to the
 * lower index (torch.topk leaves tie order open, layouts.md Q10: qcheck pins lowest index first
 * and the cases avoid exact ties). Fewer candidates than k: the rest of idx is -1. */
void qcref_topk(const float *v, const unsigned char *cand, int n, int k, int *idx);

/* One token: ids[top_k + n_shared], w[top_k + n_shared]. DeepSeek-V3 (layouts.md §9.1, sglang
 * biased_grouped_topk_impl, vllm PR #13474): s = sigmoid(z), sb = s + bias; group score = sum of
 * the two largest sb of the group; the topk_group best groups are kept and every other expert is
 * not a candidate (masked with -inf, NOT 0: sglang PR #3705); top-K on sb; w = s at those ids;
 * a fused shared expert gets sum(w)/rsf before the renorm (so 1 after the final x rsf).
 * DeepSeek-V2 (sglang topk.py grouped_topk_gpu, the DeepSeek-V2 modeling code's
 * group_limited_greedy): p = softmax(z) over all experts; group score = the group's max p; the
 * topk_group best groups are kept; every other expert scores 0 (masked_fill 0.0: harmless because
 * p >= 0, unlike V3's biased scores); top-K on the masked p; w = p; renorm without eps. */
int qcref_route(const qc_route_cfg *cfg, const float *z, int *ids, float *w);

/* layouts.md §9.3. */
typedef enum qc_act {
    QC_ACT_SILU,        /* silu(G) * U, silu(t) = t / (1 + e^-t) */
    QC_ACT_GELU,        /* 0.5 G (1 + erf(G / sqrt 2)) * U */
    QC_ACT_GELU_TANH,   /* 0.5 G (1 + tanh(sqrt(2/pi) (G + 0.044715 G^3))) * U */
    QC_ACT_RELU2,       /* relu(h)^2, not gated (Nemotron) */
    QC_ACT_SWIGLU_OAI,  /* gpt-oss: Gc = min(G, L), Uc = clamp(U, -L, L), Gc sigmoid(alpha Gc) (Uc + beta) */
    QC_ACT_SWIGLU_STEP, /* Step-3: min(silu(G), L) * clamp(U, -L, L) */
    QC_ACT_COUNT
} qc_act;

/* Where G and U sit in a GEMM1 output row of 2I (layouts.md §6.1). */
typedef enum qc_w13_order {
    QC_W13_GATE_UP,    /* [gate; up]: HF, vLLM, sglang Triton, aiter */
    QC_W13_UP_GATE,    /* [up; gate]: TRT-LLM-gen, flashinfer CUTLASS (x0 = linear, x1 = gate) */
    QC_W13_INTERLEAVED,/* [g0, u0, g1, u1, ...]: gpt-oss checkpoints, sgl-kernel CPU swiglu */
    QC_W13_ORDER_COUNT
} qc_w13_order;

typedef struct qc_act_cfg {
    qc_act act;
    qc_w13_order order;
    float alpha, beta; /* swiglu_oai: 1.702, 1 (the "+1") */
    float limit;       /* swiglu_oai / swiglu_step: 7.0; negative = no clamp (TRT-LLM sentinel, PR #15632) */
} qc_act_cfg;

const char *qc_act_name(int a);
int qc_act_from_name(const char *s);
const char *qc_w13_order_name(int o);
int qc_w13_order_from_name(const char *s);
int qcref_act_gated(qc_act a);

/* fp32 activation of one (G, U) pair (U ignored for relu2). */
float qcref_act_pair(const qc_act_cfg *c, float g, float u);

/* One GEMM1 output row h (2I wide, or I for relu2) -> out (I wide). */
void qcref_act_row(const qc_act_cfg *c, const float *h, size_t inter, float *out);

/* The fp32 combine of one output element under model sm90-wgmma (layouts.md §9.2 with the order
 * pinned): acc = +0, then acc = fl32(acc + fl32(w[j] y[j stride])) for the slots j = 0..slots-1 in
 * routing order (top-k by rank, then the fused shared expert), then fl32(rsf_out acc). */
float qcref_moe_combine_f32(const float *w, const float *y, size_t slots, size_t stride, float rsf_out);

#ifdef __cplusplus
}
#endif

#endif
