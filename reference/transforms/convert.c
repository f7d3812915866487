/* convert.c: the format-conversion utilities of docs/spec/formats.md §8: cast_e2m1fn_to_e4m3fn (DeepSeek-V4
 * inference/convert.py; sglang fp8.py and tools/convert_mxfp4_to_fp8.py), convert_mxfp8_weight_
 * to_block_fp8 (sglang mxfp8_block_convert.py) and requant_weight_ue8m0 (sglang fp8_utils.py).
 * The block requantizations reuse the block recipe with the profile that reproduces them. */
#include <stdlib.h>

#include "../profiles.h"
#include "transforms.h"

static qc_cast_policy torch_cast(qc_format f) { return qc_cast_profile_policy(qc_cast_profile_find("torch"), f); }

static size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

/* formats.md §8.1. MAX_OFFSET_BITS = 6: 6 * 2^6 = 384 <= 448 < 768. */
size_t qcref_cast_e2m1fn_to_e4m3fn(const uint8_t *packed, const uint8_t *scale_e8m0, size_t rows, size_t cols,
                                   int tile, int zero8_negative, uint8_t *out_e4m3, uint8_t *out_scale)
{
    qc_cast_policy e4 = torch_cast(QC_E4M3FN), e8 = torch_cast(QC_E8M0), any = qcref_default_policy();
    size_t t = (size_t)tile, nsb = cols / 32, ntc = ceil_div(cols, t), lossy = 0;
    for (size_t ti = 0; ti < ceil_div(rows, t); ti++)
        for (size_t tj = 0; tj < ntc; tj++) {
            size_t r1 = (ti + 1) * t < rows ? (ti + 1) * t : rows, b0 = tj * t / 32, b1 = ((tj + 1) * t) / 32;
            b1 = b1 < nsb ? b1 : nsb;
            float smax = 0.0f;
            int has_nan = 0;
            for (size_t r = ti * t; r < r1; r++)
                for (size_t b = b0; b < b1; b++) {
                    float s = qcref_e8m0_decode(scale_e8m0[r * nsb + b], QC_E8M0_DEC_TORCH);
                    has_nan |= s != s;
                    smax = s > smax ? s : smax;
                }
            float tile_scale = has_nan ? qc_f32_from_bits(QC_F32_QNAN) : smax / 64.0f; /* torch max: NaN wins */
            out_scale[ti * ntc + tj] = (uint8_t)qcref_encode(QC_E8M0, tile_scale, &e8);
            for (size_t r = ti * t; r < r1; r++)
                for (size_t b = b0; b < b1; b++) {
                    float s = qcref_e8m0_decode(scale_e8m0[r * nsb + b], QC_E8M0_DEC_TORCH);
                    float offset = s / tile_scale;
                    lossy += !(s >= smax * 0x1p-14f); /* the lossless condition of formats.md §8.1 [derived] */
                    for (size_t j = b * 32; j < b * 32 + 32 && j < cols; j++) {
                        uint8_t code = (packed[(r * cols + j) / 2] >> (4 * (j & 1))) & 0xF;
                        float v = code == 8 && !zero8_negative ? 0.0f : qcref_decode(QC_E2M1, code, &any);
                        out_e4m3[r * cols + j] = (uint8_t)qcref_encode(QC_E4M3FN, v * offset, &e4);
                    }
                }
        }
    return lossy;
}

/* Block requant of an fp32 tensor with a block profile (ue8m0 switch); scales fp32 [tiles]. */
static void block_requant(const char *profile, int ue8m0, const float *x, size_t n, size_t k, uint8_t *out_w,
                          float *out_scale)
{
    qc_recipe_policy p = qc_recipe_profile_policy(qc_recipe_profile_find(profile, QC_RECIPE_BLOCK), -1, ue8m0);
    qc_quantized qz = {.q = out_w, .scale_f32 = out_scale};
    qcref_quant(QC_RECIPE_BLOCK, &p, x, n, k, NULL, NULL, &qz);
}

/* The converters run in torch on the GPU, where every fp32 operation that yields a NaN gives the
 * positive canonical 0x7FFFFFFF (formats.md §13): their NaN codes are all 0x7F. The host's NaN
 * signs (a NaN weight's own, x86's negative "indefinite" for 0 * Inf and Inf / Inf) do not survive. */
static void gpu_nan_codes(uint8_t *e4m3, size_t n)
{
    for (size_t i = 0; i < n; i++)
        e4m3[i] = e4m3[i] == 0xFF ? 0x7F : e4m3[i];
}

static float to_bf16(float v)
{
    qc_cast_policy c = torch_cast(QC_BF16), d = qcref_default_policy();
    return qcref_decode(QC_BF16, qcref_encode(QC_BF16, v, &c), &d);
}

/* formats.md §8.2: descale = byte << 23 (0 -> +0, 255 -> +Inf), dq = bf16(W * descale), then block fp8 with
 * x / s (profile sglang-native of recipe block). */
int qcref_convert_mxfp8_weight_to_block_fp8(const uint8_t *w, const uint8_t *scale_u8, size_t n, size_t k,
                                            uint8_t *out_w, float *out_scale)
{
    float *dq = malloc(n * k * sizeof *dq + 1);
    qc_cast_policy c = qcref_default_policy();
    if (!dq)
        return -1;
    for (size_t i = 0; i < n * k; i++) {
        float descale = qcref_e8m0_decode(scale_u8[(i / k) * (k / 32) + (i % k) / 32], QC_E8M0_DEC_SHIFT);
        dq[i] = to_bf16(qcref_decode(QC_E4M3FN, w[i], &c) * descale);
    }
    block_requant("sglang-native", 0, dq, n, k, out_w, out_scale);
    gpu_nan_codes(out_w, n * k);
    free(dq);
    return 0;
}

size_t qcref_requant_weight_ue8m0_packed_bytes(size_t n, size_t k)
{
    return qc_scale_layout_size(QC_SL_PACKED_UE8M0, n, ceil_div(k, 128));
}

/* formats.md §8.3: dequant (fp32 product) -> bf16 -> DeepGEMM per_block_cast_to_fp8(use_ue8m0) ->
 * transform_scale_ue8m0: each scale row replicated for its 128 rows of N, then packed. */
int qcref_requant_weight_ue8m0(const uint8_t *w, const float *scale_inv, size_t n, size_t k, uint8_t *out_w,
                               uint8_t *out_packed)
{
    size_t kb = ceil_div(k, 128), nb = ceil_div(n, 128);
    float *dq = malloc(n * k * sizeof *dq + 1), *s = malloc(nb * kb * sizeof *s + 1), *rows = malloc(n * kb * 4 + 4);
    qc_cast_policy c = qcref_default_policy();
    int ok = dq && s && rows;
    if (ok) {
        for (size_t i = 0; i < n * k; i++)
            dq[i] = to_bf16(qcref_decode(QC_E4M3FN, w[i], &c) * scale_inv[(i / k / 128) * kb + (i % k) / 128]);
        block_requant("deepgemm-ref", 1, dq, n, k, out_w, s);
        gpu_nan_codes(out_w, n * k);
        for (size_t r = 0; r < n; r++)
            for (size_t j = 0; j < kb; j++)
                rows[r * kb + j] = s[(r / 128) * kb + j];
        qc_scale_layout_apply(QC_SL_PACKED_UE8M0, rows, n, kb, out_packed);
    }
    free(dq), free(s), free(rows);
    return ok ? 0 : -1;
}
