/* nvfp4.c: NVFP4, e2m1 elements with one e4m3 scale per 1 x 16 and an fp32 global scale
 * (docs/spec/formats.md §4). Three operation orders exist in public code and give different bits:
 * - FAST (flashinfer/TRT-LLM cvt_warp_fp16_to_fp4 default, formats.md §4.2 steps 1-5):
 *   SFValue = gs * (vecMax * rcp6), outputScale = rcp(SFdec * rcp(gs)), rcp = rcp.approx.ftz;
 * - TE (DISABLE_FP4_QUANT_FAST_MATH, formats.md §4.2 3'): SFValue = vecMax * (gs * (1/6)),
 *   outputScale = min(1 / (SFdec * (1/gs)), FLT_MAX) with IEEE division;
 * - TORCHAO (nvfp4_quantize, formats.md §4.3): block_scale = amax/6 divided by the per-tensor decode scale,
 *   clamped to [2^-6, 448] before the e4m3 cast, data * ((1/per_tensor_scale) / sf).
 * The zero test is on vecMax (flashinfer) or on the decoded SF (vLLM/sgl-kernel copy). */
#include <float.h>

#include "recipes.h"

/* The global encode scale gs of FAST/TE, or the per-tensor decode scale of TORCHAO (formats.md §4.1),
 * when the caller gives none. */
static float global_scale(const qc_recipe_policy *p, float amax_t)
{
    switch (p->nv_gscale) {
    case QC_GSCALE_TE: { /* flashinfer tests nvfp4_global_encode_scale_te */
        float gs = amax_t == 0.0f ? FLT_MAX : qcref_fl32_div(2688.0f, amax_t);
        gs = gs > FLT_MAX ? FLT_MAX : gs;
        return gs == 0.0f ? 1.0f : gs;
    }
    case QC_GSCALE_NONE: /* single-level scaling: amax/6 goes to e4m3 as it is */
        return 1.0f;
    default: /* flashinfer make_nvfp4_global_scale: (448 * 6) / amax, amax = 0 -> FLT_MAX */
        return amax_t == 0.0f ? FLT_MAX : qcref_fl32_div(2688.0f, amax_t);
    }
}

static float sf_value(const qc_recipe_policy *p, float vecmax, float g)
{
    switch (p->nv_order) {
    case QC_NVFP4_TE:
        return qcref_fl32_mul(vecmax, qcref_fl32_mul(g, qcref_fl32_div(1.0f, 6.0f)));
    case QC_NVFP4_TORCHAO: { /* clamp(amax/6 / per_tensor_scale, min=2^-6 (finfo.tiny), max=448) */
        float v = qcref_fl32_div(qcref_fl32_div(vecmax, 6.0f), g);
        return v != v ? v : v < 0.015625f ? 0.015625f : v > 448.0f ? 448.0f : v;
    }
    default:
        return qcref_fl32_mul(g, qcref_fl32_mul(vecmax, qcref_rcp_approx_ftz(6.0f)));
    }
}

/* The element multiplier of a block. */
static float output_scale(const qc_recipe_policy *p, float vecmax, float sfdec, float g)
{
    int zero = p->nv_zero == QC_ZERO_SFVALUE ? sfdec == 0.0f : vecmax == 0.0f;
    switch (p->nv_order) {
    case QC_NVFP4_TORCHAO: /* a NaN block scale has torch's bits, which its fp4 cast reads */
        return qcref_fl32_div(qcref_fl32_div(1.0f, g), sfdec != sfdec ? qc_f32_from_bits(QC_TORCH_E4M3_NAN) : sfdec);
    case QC_NVFP4_TE: {
        if (zero)
            return 0.0f;
        float o = qcref_fl32_div(1.0f, qcref_fl32_mul(sfdec, qcref_fl32_div(1.0f, g)));
        return o > FLT_MAX ? FLT_MAX : o;
    }
    default:
        return zero ? 0.0f : qcref_rcp_approx_ftz(qcref_fl32_mul(sfdec, qcref_rcp_approx_ftz(g)));
    }
}

/* The decode-form global scale written to PREFIX.gscale and multiplied by the dequantization. */
static float global_decode(const qc_recipe_policy *p, float g)
{
    float d = p->nv_order == QC_NVFP4_TORCHAO ? g : qcref_fl32_div(1.0f, g);
    return p->nan_canonical && d != d ? qc_f32_from_bits(0x7FFFFFFFu) : d;
}

void qcref_nvfp4_quant(const qc_recipe_policy *p, const float *x, size_t rows, size_t cols,
                       const float *gscale_encode, qc_quantized *out, float *prescaled)
{
    float g;
    if (gscale_encode)
        g = p->nv_order == QC_NVFP4_TORCHAO ? qcref_fl32_div(1.0f, *gscale_encode) : *gscale_encode;
    else
        g = global_scale(p, qcref_group_amax(x, rows * cols, 1, p->amax_nan));
    out->gscale = global_decode(p, g);
    size_t b = (size_t)p->group, nb = cols / b;
    for (size_t i = 0; i < rows; i++)
        for (size_t k = 0; k < nb; k++) {
            const float *xb = x + i * cols + k * b;
            float vecmax = qcref_group_amax(xb, b, 1, p->amax_nan);
            uint8_t sf = (uint8_t)qcref_encode(QC_E4M3FN, sf_value(p, vecmax, g), &p->sf_cast);
            float sfdec = qcref_decode(QC_E4M3FN, sf, &p->sf_cast);
            float o = output_scale(p, vecmax, sfdec, g);
            out->scale_u8[i * nb + k] = sf;
            for (size_t j = 0; j < b; j++) {
                /* torch on the CPU multiplies NaN by NaN into the scale's NaN (golden/real) */
                float v = p->nv_order == QC_NVFP4_TORCHAO ? qcref_fl32_mul(o, xb[j]) : qcref_fl32_mul(xb[j], o);
                out->q[i * cols + k * b + j] = (uint8_t)qcref_encode(QC_E2M1, qcref_recipe_clamp(v, p), &p->cast);
                if (prescaled)
                    prescaled[i * cols + k * b + j] = v;
            }
        }
}

void qcref_nvfp4_dequant(const qc_recipe_policy *p, const qc_quantized *in, float *y)
{
    size_t b = (size_t)p->group, nb = in->cols / b;
    for (size_t i = 0; i < in->rows; i++)
        for (size_t j = 0; j < in->cols; j++) {
            float sf = qcref_decode(QC_E4M3FN, in->scale_u8[i * nb + j / b], &p->sf_cast);
            float v = qcref_decode(QC_E2M1, in->q[i * in->cols + j], &p->cast);
            y[i * in->cols + j] = qcref_fl32_mul(qcref_fl32_mul(v, sf), in->gscale); /* e2m1 * e4m3 is exact in fp32 */
        }
}
