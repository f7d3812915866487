/* mutants_moe.c: fused MoE with one rule wrong (docs/spec/layouts.md §10). */
#include "../moe_op.h"
#include "mutants.h"
#include "../registry.h"

/* T-ORD1 (sglang#32430, flashinfer#5291): [gate; up] read as [up; gate] (and back). */
static const char *gate_up_swapped(qc_moe_cfg *m)
{
    if (!qcref_act_gated(m->act.act))
        return "the activation is not gated: W13 has no halves to swap";
    m->act.order = m->act.order == QC_W13_GATE_UP ? QC_W13_UP_GATE : QC_W13_GATE_UP;
    return NULL;
}

/* T-RSF (sglang#35152, #8511, vllm#45037): routed_scaling_factor in the weights AND after the sum. */
static const char *rsf_twice(qc_moe_cfg *m)
{
    if (m->route.rsf == 1.0f)
        return "routed_scaling_factor is 1: twice is once";
    m->route.rsf_in_weights = 1;
    m->rsf_out = m->route.rsf;
    return NULL;
}

/* T-ACT1 (sglang#39939, TensorRT-LLM#13767): swiglu_limit silently dropped. */
static const char *swiglu_no_clamp(qc_moe_cfg *m)
{
    if ((m->act.act != QC_ACT_SWIGLU_OAI && m->act.act != QC_ACT_SWIGLU_STEP) || m->act.limit < 0)
        return "the activation has no swiglu_limit to drop (only swiglu_oai and swiglu_step clamp)";
    m->act.limit = -1.0f;
    return NULL;
}

/* Whether some token chooses an expert whose biased score sigmoid(z) + bias is <= 0 under the
 * reference's routing: only there can a masked expert scored 0 take its place. The scores are
 * the reference's (qcref_route's weights before renormalisation and scaling). */
static int chosen_negative(const qc_moe_cfg *m)
{
    qc_route_cfg r = m->route;
    r.renorm = 0, r.rsf = 1.0f, r.rsf_in_weights = 0, r.n_shared = 0;
    int ids[QC_MAX_EXPERTS];
    float w[QC_MAX_EXPERTS];
    for (int64_t t = 0; t < m->t; t++) {
        if (qcref_route(&r, m->logits + t * m->e, ids, w))
            return 1; /* the reference refuses: let the op say so */
        for (int j = 0; j < r.top_k; j++)
            if (ids[j] >= 0 && ids[j] < m->e && w[j] + r.bias[ids[j]] <= 0.0f)
                return 1;
    }
    return 0;
}

/* T-RT1 (sglang#3705, vllm#13474, DeepSeek-V3#741): experts of dropped groups scored 0, not -inf. */
static const char *masked_groups_zero(qc_moe_cfg *m)
{
    if (m->route.method != QC_ROUTE_DEEPSEEK_V3 && m->route.method != QC_ROUTE_DEEPSEEK_V2)
        return "the routing has no expert groups (only deepseek_v2/v3 mask them)";
    if (m->route.n_group <= 1 || m->route.topk_group >= m->route.n_group)
        return "no expert group is dropped: nothing is masked";
    if (!m->route.bias) /* T-RT1: scoring masked experts 0 is safe while every score is >= 0 */
        return "without a correction bias every score is positive: a masked expert scored 0 is never chosen";
    if (m->route.mask_zero)
        return "the routing already scores masked experts 0";
    if (m->logits && !chosen_negative(m))
        return "no token's chosen expert has a negative biased score: a masked expert scored 0 never displaces one";
    m->route.mask_zero = 1;
    return NULL;
}

/* T-CK1 / T-DG5 inside a fused MoE (the grouped GEMMs' weight scale of K block g read from block
 * g + 1): the error starts at GEMM1, periodic along K with the block size. */
static const char *scale_block_off_by_one(qc_moe_cfg *m)
{
    int w = qc_moe_weight_recipe(m);
    if (w < 0 || w == QC_RECIPE_TENSOR)
        return "the expert weights have one scale along K (bf16 or per tensor): no neighbouring K block";
    int64_t block = w == QC_RECIPE_BLOCK ? 128 : w == QC_RECIPE_NVFP4 ? 16 : 32;
    if (m->h <= block && m->i <= block)
        return "hidden and intermediate are one K block each: no neighbouring K block";
    m->weight_tweak = qc_mutant_scale_block_shift;
    return NULL;
}

/* Every fp32 scale of the expert weights one ulp too large (mutant:gemm-weight-scale-ulp inside a
 * MoE): GEMM2's bound hides it, so it declines model exact, whose runs would show nothing. */
static const char *weight_scale_ulp(qc_moe_cfg *m)
{
    int w = qc_moe_weight_recipe(m);
    if (w != QC_RECIPE_TENSOR && w != QC_RECIPE_BLOCK)
        return "the expert weights' scales are not fp32 (bf16, or e8m0 / e4m3 bytes)";
    if (m->model == QC_MOE_MODEL_EXACT)
        return "model exact: one ulp of a scale hides under GEMM2's bound; the bug shows bit-exactly (model sm90-wgmma)";
    m->weight_tweak = qc_mutant_scale_ulp_up;
    return NULL;
}

static int m_gate_up(qc_op_call *c) { return qc_moe_op(c, gate_up_swapped); }
static int m_rsf(qc_op_call *c) { return qc_moe_op(c, rsf_twice); }
static int m_clamp(qc_op_call *c) { return qc_moe_op(c, swiglu_no_clamp); }
static int m_mask(qc_op_call *c) { return qc_moe_op(c, masked_groups_zero); }
static int m_scale_block(qc_op_call *c) { return qc_moe_op(c, scale_block_off_by_one); }
static int m_scale_ulp(qc_op_call *c) { return qc_moe_op(c, weight_scale_ulp); }

static const qc_impl impl_gate_up[] = {{"moe", m_gate_up}};
static const qc_impl impl_rsf[] = {{"moe", m_rsf}};
static const qc_impl impl_clamp[] = {{"moe", m_clamp}};
static const qc_impl impl_mask[] = {{"moe", m_mask}};
static const qc_impl impl_scale_block[] = {{"moe", m_scale_block}};
static const qc_impl impl_scale_ulp[] = {{"moe", m_scale_ulp}};

const qc_backend qc_mutant_moe_gate_up = {"mutant:moe-gate-up-swapped", "mutants",
                                          "W13 halves read in the other order (layouts.md T-ORD1)", NULL,
                                          .impls = impl_gate_up, .nimpls = 1};
const qc_backend qc_mutant_moe_rsf_twice = {"mutant:moe-rsf-twice", "mutants",
                                            "routed_scaling_factor applied twice (layouts.md T-RSF)", NULL, .impls = impl_rsf,
                                            .nimpls = 1};
const qc_backend qc_mutant_moe_no_clamp = {"mutant:moe-swiglu-no-clamp", "mutants",
                                           "swiglu_limit dropped (layouts.md T-ACT1)", NULL, .impls = impl_clamp, .nimpls = 1};
const qc_backend qc_mutant_moe_mask_zero = {"mutant:moe-masked-groups-zero", "mutants",
                                            "experts of dropped groups scored 0 instead of -inf (layouts.md T-RT1)",
                                            NULL, .impls = impl_mask, .nimpls = 1};
const qc_backend qc_mutant_moe_scale_block = {"mutant:moe-scale-block-off-by-one", "mutants",
                                              "expert weight scale of K block g read from block g+1 (layouts.md "
                                              "T-CK1, T-DG5)",
                                              NULL, .impls = impl_scale_block, .nimpls = 1};
const qc_backend qc_mutant_moe_scale_ulp = {"mutant:moe-weight-scale-ulp", "mutants",
                                            "every fp32 expert weight scale one ulp too large (caught bit-exactly by "
                                            "model sm90-wgmma; under GEMM2's bound it hides)",
                                            NULL, .impls = impl_scale_ulp, .nimpls = 1};
