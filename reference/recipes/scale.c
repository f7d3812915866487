/* scale.c: the per-group steps every scaled-fp8 recipe shares (docs/spec/formats.md §6.2-§6.4):
 * amax, eps, the scale formula, its power-of-two rounding, the element op, the clamp, the cast.
 * Each step is one switch over the policy knob that real libraries disagree on. */
#include <math.h>

#include "recipes.h"

float qcref_group_amax(const float *x, size_t n, size_t stride, qc_amax_nan rule)
{
    float m = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float a = fabsf(x[i * stride]);
        if (a != a) {
            if (rule == QC_AMAX_NAN_PROPAGATE)
                return a; /* torch amax: NaN wins */
            continue;     /* fmaxf(m, NaN) = m */
        }
        m = a > m ? a : m;
    }
    return m;
}

qc_recipe_policy qcref_recipe_policy_for_input(const qc_recipe_policy *p, qc_format in)
{
    qc_recipe_policy r = *p;
    if (in == QC_BF16 && p->bf16_input_unclamped)
        r.clamp = QC_CLAMP_NONE;
    r.round_bf16 = in == QC_BF16 && p->bf16_ops;
    return r;
}

/* The NaN an NVIDIA GPU writes: 0x7FFFFFFF, or bf16's 0x7FFF of a bf16 tensor (as fp32 0x7FFF0000;
 * golden/real/sglang-0.5.23 native-*-bf16-edges). */
static float gpu_nan(const qc_recipe_policy *p) { return qc_f32_from_bits(p->round_bf16 ? 0x7FFF0000u : 0x7FFFFFFFu); }

/* A torch op's result on a bf16 tensor: RNE to bf16 (a NaN stays a NaN). */
static float op_result(float v, const qc_recipe_policy *p)
{
    if (!p->round_bf16 || v != v)
        return v;
    uint32_t b = qc_f32_bits(v);
    return qc_f32_from_bits((b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u);
}

/* max(amax, eps) as torch.clamp(min=eps) does it: a NaN amax stays NaN. */
static float floor_eps(float v, float eps) { return v < eps ? eps : v; }

static float amax_used(float amax, const qc_recipe_policy *p)
{
    return p->eps_at == QC_EPS_AMAX ? op_result(floor_eps(amax, op_result(p->eps, p)), p) : amax;
}

static int fast(const qc_recipe_policy *p) { return p->div_mode == QC_DIV_FAST; }

static float pow2_round(float s, const qc_recipe_policy *p)
{
    switch (p->pow2) {
    case QC_POW2_E8M0: /* DeepGEMM ceil_to_ue8m0, sgl-kernel fast_log2_ceil + fast_pow2 (formats.md §2.2) */
        return qcref_e8m0_decode(qcref_e8m0_encode(s, &p->pow2_policy), p->pow2_policy.e8m0_decoder);
    case QC_POW2_LOG2_CEIL: /* exp2(ceil(log2(s))) in float (sglang Triton, vLLM C++) */
        return exp2f(ceilf(log2f(s)));
    default:
        return s;
    }
}

/* max / amax: a division, or torch's Python float over a tensor, amax.reciprocal() * max (RCP_OF_MULT). */
static float max_over_amax(float a, const qc_recipe_policy *p)
{
    if (p->scale_op == QC_SCALE_RCP_OF_MULT)
        return qcref_mul(qcref_recip(a, p->div_mode), p->elem_max, fast(p));
    return qcref_div(p->elem_max, a, p->div_mode);
}

float qcref_scale_from_amax(float amax, const qc_recipe_policy *p)
{
    float a = amax_used(amax, p), s;
    switch (p->scale_op) {
    case QC_SCALE_MUL_RCP: /* amax * fl32(1/max): sgl-kernel CUDA, torch on CUDA for t / c (formats.md §13) */
        s = qcref_mul(a, qcref_recip(p->elem_max, p->div_mode), fast(p));
        break;
    case QC_SCALE_RCP_OF_MULT: /* sglang input_to_float8: scale = max/amax, returns its reciprocal */
        s = qcref_recip(max_over_amax(a, p), p->div_mode);
        break;
    default:
        s = qcref_div(a, p->elem_max, p->div_mode);
        break;
    }
    if (p->eps_at == QC_EPS_SCALE) /* vLLM C++: fmaxf(y_s, eps), NaN -> eps as fmaxf does */
        s = fmaxf(s, p->eps);
    s = pow2_round(op_result(s, p), p);
    /* the GPU's scale of a NaN amax is the canonical NaN (golden/real/torch-2.11.0/token_group-*-cuda.h5) */
    return p->nan_canonical && s != s ? gpu_nan(p) : s;
}

float qcref_recipe_clamp(float v, const qc_recipe_policy *p)
{
    float m = p->clamp_max;
    if (p->nan_canonical && v != v)
        v = gpu_nan(p);
    switch (p->clamp) {
    case QC_CLAMP_TORCH: /* torch.clamp: NaN propagates */
        return v != v ? v : v > m ? m : v < -m ? -m : v;
    case QC_CLAMP_FMINF: /* fmaxf(fminf(v, max), -max): NaN -> +max (B20, B26) */
        return fmaxf(fminf(v, m), -m);
    case QC_CLAMP_TRITON: /* minimum(maximum(v, -max), max) with fmaxf semantics: NaN -> -max (formats.md §13) */
        return fminf(fmaxf(v, -m), m);
    case QC_CLAMP_FMINF_UPPER:
        return fminf(v, m);
    default:
        return v;
    }
}

/* The element multiplier or divisor; amax is the group's raw amax (eps applied here). */
float qcref_prescale_elem(float x, float s, float amax, const qc_recipe_policy *p)
{
    qc_elem_op op = p->elem_op;
    if (op == QC_ELEM_MUL_MAX_AMAX && p->pow2 != QC_POW2_NONE) {
        if (p->pow2_mult == QC_POW2_MULT_INV_BITS) {
            uint32_t e = (qc_f32_bits(s) >> 23) & 0xFFu;
            return qcref_mul(x, qc_f32_from_bits((254u - e) << 23), fast(p));
        }
        op = QC_ELEM_MUL_RCP; /* sgl-kernel ue8m0: y_scale = fast_pow2(-exp), exactly 1/s */
    }
    switch (op) {
    case QC_ELEM_DIV:
        return op_result(qcref_div(x, s, p->div_mode), p);
    case QC_ELEM_MUL_MAX_AMAX: /* sgl-kernel: y_scale = fp8_max / amax; input_to_float8: fp_max / amax */
        return qcref_mul(x, max_over_amax(amax_used(amax, p), p), fast(p));
    default: {
        float r = (p->zero_guard && s == 0.0f) ? 0.0f : qcref_recip(s, p->div_mode);
        return qcref_mul(x, r, fast(p));
    }
    }
}

uint8_t qcref_quant_elem(float x, float scale, float amax, const qc_recipe_policy *p)
{
    return (uint8_t)qcref_encode(p->elem, qcref_recipe_clamp(qcref_prescale_elem(x, scale, amax, p), p), &p->cast);
}
