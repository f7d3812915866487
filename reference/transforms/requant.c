/* requant.c: requantize_with_max_scale, per_tensor_dequantize, convert_to_channelwise (docs/spec/formats.md §7.2-
 * formats.md §7.4; sglang python/sglang/srt/layers/quantization/utils.py, vLLM origin). */
#include "../formats/formats.h"
#include "../profiles.h"
#include "transforms.h"

static float e4m3(uint8_t b)
{
    qc_cast_policy c = qcref_default_policy();
    return qcref_decode(QC_E4M3FN, b, &c);
}

/* t.to(float16) * s with s an fp32 0-dim tensor: computed in fp32, rounded to fp16 (torch). */
static uint16_t dequant_f16(uint8_t b, float s)
{
    qc_cast_policy c = qc_cast_profile_policy(qc_cast_profile_find("torch"), QC_F16);
    return (uint16_t)qcref_encode(QC_F16, e4m3(b) * s, &c);
}

void qcref_per_tensor_dequantize(const uint8_t *t, size_t n, float s, uint16_t *out_f16)
{
    for (size_t i = 0; i < n; i++)
        out_f16[i] = dequant_f16(t[i], s);
}

void qcref_convert_to_channelwise(const float *scales, const size_t *widths, size_t nshards, float *out)
{
    size_t r = 0;
    for (size_t i = 0; i < nshards; i++)
        for (size_t k = 0; k < widths[i]; k++)
            out[r++] = scales[i];
}

/* scaled_fp8_quant(dq, max_s) static: q = fmaxf(fminf(dq * fl32(1/max_s), 448), -448) -> e4m3fn (c10). */
static uint8_t static_quant(float dq, float inv)
{
    float v = dq * inv;
    v = v != v ? 448.0f : v > 448.0f ? 448.0f : v < -448.0f ? -448.0f : v; /* fminf/fmaxf: NaN -> 448 */
    qc_cast_policy c = qc_cast_profile_policy(qc_cast_profile_find("torch"), QC_E4M3FN);
    return (uint8_t)qcref_encode(QC_E4M3FN, v, &c);
}

int qcref_requant_applies(const float *scales, size_t nshards) { return nshards > 0 && scales[nshards - 1] > -448.0f; }

float qcref_requantize_with_max_scale(uint8_t *w, size_t k, const float *scales, const size_t *widths,
                                      size_t nshards, int fp16_intermediate)
{
    float max_s = scales[0];
    for (size_t i = 1; i < nshards; i++)
        max_s = scales[i] > max_s ? scales[i] : max_s;
    if (!qcref_requant_applies(scales, nshards)) /* fused on-disk checkpoint: one real scale, sentinels after */
        return max_s;
    float inv = 1.0f / max_s;
    qc_cast_policy h = qcref_default_policy();
    size_t row = 0;
    for (size_t i = 0; i < nshards; i++)
        for (size_t r = 0; r < widths[i]; r++, row++)
            for (size_t j = 0; j < k; j++) {
                uint8_t *b = &w[row * k + j];
                float dq = fp16_intermediate ? qcref_decode(QC_F16, dequant_f16(*b, scales[i]), &h)
                                             : e4m3(*b) * scales[i];
                *b = static_quant(dq, inv);
            }
    return max_s;
}
