/* mx.c: MXFP8 / MXFP6 / MXFP4, one e8m0 scale per 1 x 32 along K (docs/spec/formats.md §5, §2.2, §2.3).
 * Every row of the formats.md §5 table is a policy: how the byte comes from amax (qc_mx_rule), how the
 * element multiplier comes from the byte, the clamp and the element cast. */
#include <math.h>

#include "recipes.h"

/* flashinfer quantization_cute_dsl_utils.py float_to_ue8m0_fast: ceil of the exponent (an fp32
 * subnormal bumps only above 2^-127), clamped to 254; a value <= 0 gives 0 and a NaN gives 254
 * (the clamp of the all-ones exponent) [formats.md §5, derived]. */
static uint8_t cutedsl_ue8m0(float d)
{
    uint32_t b = qc_f32_bits(d);
    if (qc_bits_is_nan(b))
        return 254;
    if (!(d > 0.0f))
        return 0;
    uint32_t e = b >> 23, f = b & 0x7FFFFFu;
    uint32_t E = e == 0 ? (f > 0x400000u) : e + (f != 0);
    return (uint8_t)(E > 254 ? 254 : E);
}

static uint8_t mx_byte(float amax, const qc_recipe_policy *p)
{
    switch (p->mx_rule) {
    case QC_MX_E8M0_OF_AMAX: /* torchao FLOOR/CEIL/EVEN, OCP: the rule subtracts emax itself */
        return qcref_e8m0_encode(amax, &p->pow2_policy);
    case QC_MX_CUTEDSL:
        return cutedsl_ue8m0(qcref_scale_from_amax(amax, p));
    default: /* a descale amax / max, then the rule (RCEIL, cvt.rp, triton_kernels, aiter, modelopt) */
        return qcref_e8m0_encode(qcref_scale_from_amax(amax, p), &p->pow2_policy);
    }
}

/* The element before the clamp and cast. */
static float mx_scaled(float x, uint8_t byte, float amax, const qc_recipe_policy *p)
{
    int fast = p->div_mode == QC_DIV_FAST;
    if (p->mx_zero_guard && amax == 0.0f)
        return qcref_mul(x, 0.0f, fast); /* TRT-LLM: outputScale = vecMax != 0 ? ... : 0 */
    float d = qcref_e8m0_decode(byte, p->mx_dec);
    int modelopt = p->pow2_policy.e8m0 == QC_E8M0_MODELOPT || p->pow2_policy.e8m0 == QC_E8M0_MODELOPT_CPU;
    if (modelopt && !isfinite(amax)) /* it divides by exp2 of the float exponent, not of the byte */
        d = amax != amax ? amax : INFINITY;
    switch (p->mx_op) {
    case QC_MX_MUL:
        return qcref_mul(x, d, fast);
    case QC_MX_MUL_RCP:
        return qcref_mul(x, qcref_rcp_approx_ftz(d), fast);
    case QC_MX_MUL_RECIP_NZ:
        return qcref_mul(x, d == 0.0f ? 0.0f : qcref_recip(d, p->div_mode), fast);
    default: /* x / 2^(E-127): one rounding of the exact quotient, the same as x * 2^(127-E) */
        return qcref_fl32_div(x, d);
    }
}

void qcref_mx_quant(const qc_recipe_policy *p, const float *x, size_t rows, size_t cols, qc_quantized *out,
                    float *prescaled)
{
    size_t g = (size_t)p->group, ng = cols / g;
    for (size_t i = 0; i < rows; i++)
        for (size_t b = 0; b < ng; b++) {
            const float *xb = x + i * cols + b * g;
            float amax = qcref_group_amax(xb, g, 1, p->amax_nan);
            uint8_t byte = mx_byte(amax, p);
            out->scale_u8[i * ng + b] = byte;
            for (size_t k = 0; k < g; k++) {
                float v = mx_scaled(xb[k], byte, amax, p);
                out->q[i * cols + b * g + k] = (uint8_t)qcref_encode(p->elem, qcref_recipe_clamp(v, p), &p->cast);
                if (prescaled)
                    prescaled[i * cols + b * g + k] = v;
            }
        }
}

void qcref_mx_dequant(const qc_recipe_policy *p, const qc_quantized *in, float *y)
{
    size_t g = (size_t)p->group, ng = in->cols / g;
    for (size_t i = 0; i < in->rows; i++)
        for (size_t j = 0; j < in->cols; j++) {
            float s = qcref_e8m0_decode(in->scale_u8[i * ng + j / g], p->dequant_e8m0);
            y[i * in->cols + j] = qcref_fl32_mul(qcref_decode(p->elem, in->q[i * in->cols + j], &p->cast), s);
        }
}
