/* recipe_catalog.h: named semantic cases of the recipes with their expected bytes, each worked out
 * by hand from docs/spec/formats.md (the derivation is the `why`), never produced by the code under
 * test. Inputs list the leading elements of one block/group; the rest of it is +0. Expected payload:
 * the listed leading codes, every other code equals `rest`. Scale: fp32 bits (tensor, token,
 * token_group, block) or the e8m0/e4m3 byte (mx, nvfp4). */
#ifndef QC_RECIPE_CATALOG_H
#define QC_RECIPE_CATALOG_H

#include <stdint.h>

#define QC_CAT_MAXN 16

typedef struct recipe_case {
    const char *name;
    const char *recipe, *profile;
    int ue8m0;
    unsigned rows, cols;
    int nx;
    uint32_t x[QC_CAT_MAXN]; /* fp32 bits */
    int nq;
    uint8_t q[QC_CAT_MAXN];
    uint8_t rest;
    uint32_t scale;          /* first scale */
    const char *why;
} recipe_case;

#define INF 0x7F800000u
#define NINF 0xFF800000u
#define QNAN 0x7FC00000u
#define FMAX 0x7F7FFFFFu
#define NFMAX 0xFF7FFFFFu
#define ONE 0x3F800000u

static const recipe_case recipe_catalog[] = {
    /* ---- the MXFP8 contract, torchao-rceil: torchao 0.18.0 _to_mx_rceil in eager mode (mx_tensor.py;
     * golden/real/torchao-0.18.0 records it): descale = amax / 448, byte = clamp(ceil(log2(descale)),
     * -127, 127) + 127, NaN 255, Inf 254; elements x * 2^(127 - byte), x * 1 for byte 0 and x * 2^-127
     * for 254, then torch.clamp and the torch cast ---- */
    {"mxfp8_zero_block", "mxfp8", "torchao-rceil", 0, 1, 32, 1, {0}, 1, {0x00}, 0x00, 0x00,
     "amax 0 -> descale 0 -> log2 -Inf, clamped -> byte 0; 0 * 1 = 0 -> 0x00"},
    {"mxfp8_smallest_normal", "mxfp8", "torchao-rceil", 0, 1, 32, 2, {0x00800000u, 0x00800000u}, 2, {0x00, 0x00}, 0x00, 0x00,
     "amax 2^-126: descale 2^-126 / 448 ~ 2^-134.8 -> ceil -134, clamped to -127 -> byte 0, whose multiplier is 1: "
     "2^-126 * 1 is far below e4m3's 2^-9 -> 0x00"},
    {"mxfp8_mixed_inf", "mxfp8", "torchao-rceil", 0, 1, 32, 3, {INF, ONE, 0xBF800000u}, 3, {0x7E, 0x00, 0x80}, 0x00, 0xFE,
     "amax Inf -> descale Inf -> byte 254, multiplier 2^-127: Inf stays Inf -> torch.clamp 448 -> 0x7E; +-1 * 2^-127 -> "
     "+-0 (0x00, 0x80)"},
    {"mxfp8_mixed_nan", "mxfp8", "torchao-rceil", 0, 1, 32, 2, {QNAN, ONE}, 2, {0x7F, 0x7F}, 0x7F, 0xFF,
     "torch amax propagates NaN -> 0xFF -> every element NaN -> 0x7F"},
    {"mxfp8_pm_fp8_max", "mxfp8", "torchao-rceil", 0, 1, 32, 2, {0x43E00000u, 0xC3E00000u}, 2, {0x7E, 0xFE}, 0x00, 0x7F,
     "amax 448: 448 / 448 = 1 -> log2 0 -> byte 127, multiplier 1 -> +-448 = 0x7E/0xFE"},
    {"mxfp8_pm_dtype_max", "mxfp8", "torchao-rceil", 0, 1, 32, 2, {FMAX, NFMAX}, 2, {0x78, 0xF8}, 0x00, 247,
     "amax FLT_MAX: descale ~1.14*2^119 -> ceil 2^120 (byte 247); FLT_MAX / 2^120 = 2^8(1-2^-24) -> RNE 256 = 0x78"},
    {"mxfp8_pm_smallest_subnormal", "mxfp8", "torchao-rceil", 0, 1, 32, 2, {0x00000001u, 0x80000001u}, 2, {0x00, 0x80}, 0x00, 0x00,
     "amax 2^-149: descale underflows to 0 -> byte 0, multiplier 1; 2^-149 < 2^-10 -> +-0 (torch keeps the sign)"},
    {"mxfp8_underflow_mix", "mxfp8", "torchao-rceil", 0, 1, 32, 4, {0x43E00000u, 0x3A800000u, 0x3AC00000u, 0xBA000000u},
     4, {0x7E, 0x00, 0x01, 0x80}, 0x00, 0x7F,
     "scale 1: 2^-10 is the tie 0|2^-9 -> even 0; 1.5*2^-10 -> 2^-9 (0x01); -2^-11 -> -0 (0x80)"},
    {"mxfp8_saturation_underflow_floor", "mxfp8", "torchao-floor", 0, 1, 32, 3, {0x43FA0000u, 0xC3FA0000u, 0x3A000000u},
     3, {0x7E, 0xFE, 0x00}, 0x00, 0x7F,
     "FLOOR: floor(log2 500) - 8 = 0 -> byte 127; 500 > 448 saturated by torch.clamp -> 0x7E/0xFE; 2^-11 -> 0"},
    {"mxfp8_saturation_rceil", "mxfp8", "torchao-rceil", 0, 1, 32, 1, {0x43FA0000u}, 1, {0x78}, 0x00, 0x80,
     "RCEIL: 500 / 448 = 1.116 -> ceil(log2) 1 -> byte 128; 500 * 2^-1 = 250 -> RNE on the 16-spaced grid -> 256 = 0x78"},
    {"mxfp8_all_nan", "mxfp8", "torchao-rceil", 0, 1, 32, 1, {QNAN}, 1, {0x7F}, 0x7F, 0xFF,
     "a NaN block: 0xFF and NaN elements (0x7F; the +0 elements divided by NaN are NaN too)"},
    {"mxfp8_satfinite_ocp", "mxfp8", "ocp", 0, 1, 32, 2, {0x43F00000u, 0xC3F00000u}, 2, {0x7E, 0xFE}, 0x00, 0x7F,
     "OCP floor: floor(log2 480) - 8 = 0 -> scale 1; 480 saturates to 448 (saturate_normals) -> 0x7E/0xFE"},
    {"mxfp8_flashinfer_cuda_zero_block", "mxfp8", "flashinfer-fast", 0, 1, 32, 1, {0}, 1, {0x7E}, 0x7E, 0x00,
     "B13, formats.md §5: SF byte 0 decodes to 2^-127, rcp.approx.ftz flushes it -> Inf; 0 * Inf = NaN; fminf(NaN, 448) = 448 -> 0x7E"},
    {"mxfp8_cutedsl_zero_block", "mxfp8", "flashinfer-cutedsl", 0, 1, 32, 1, {0}, 1, {0x00}, 0x00, 0x00,
     "B27: cute-dsl E = 0 -> inv scale 0 -> data 0"},

    /* ---- FP4 midpoints under each tie rule: scale 1 (amax 6) ---- */
    {"fp4_midpoints_rne", "mxfp4", "torchao-floor", 0, 1, 32, 9,
     {0x40C00000u, 0x3E800000u, 0x3F400000u, 0x3FA00000u, 0x3FE00000u, 0x40200000u, 0x40600000u, 0x40A00000u, 0xBF400000u},
     9, {0x7, 0x0, 0x2, 0x2, 0x4, 0x4, 0x6, 0x6, 0xA}, 0x0, 0x7F,
     "FLOOR: floor(log2 6) - 2 = 0 -> scale 1; RNE: .25->0 .75->1 1.25->1 1.75->2 2.5->2 3.5->4 5->4 (formats.md §3.2)"},
    {"fp4_midpoints_ties_zero", "mxfp4", "modelopt", 0, 1, 32, 9,
     {0x40C00000u, 0x3E800000u, 0x3F400000u, 0x3FA00000u, 0x3FE00000u, 0x40200000u, 0x40600000u, 0x40A00000u, 0xBF400000u},
     9, {0x7, 0x0, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x9}, 0x8, 0x7F,
     "modelopt: ceil(log2(6/6)) = 0; ties toward zero: .75->.5 1.75->1.5 3.5->3 5->4; +0 gets the sign bit -> 0x8"},
    {"fp4_midpoints_ties_away", "mxfp4", "ocp", 0, 1, 32, 9,
     {0x40C00000u, 0x3E800000u, 0x3F400000u, 0x3FA00000u, 0x3FE00000u, 0x40200000u, 0x40600000u, 0x40A00000u, 0xBF400000u},
     9, {0x7, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0xA}, 0x0, 0x7F,
     "microxcaling 'nearest' = floor(|x|+.5) on the grid: .25->.5 1.25->1.5 2.5->3 3.5->4 5->6"},

    /* ---- NVFP4 (flashinfer-fast unless named) ---- */
    {"nvfp4_all_zero_block", "nvfp4", "flashinfer-fast", 0, 1, 16, 1, {0}, 1, {0x0}, 0x0, 0x00,
     "global amax 0 -> gs = FLT_MAX; vecMax 0 -> SFValue 0 -> byte 0, outputScale 0 -> codes 0"},
    {"nvfp4_single_nonzero", "nvfp4", "flashinfer-fast", 0, 1, 16, 2, {ONE, 0xBF000000u}, 2, {0x7, 0xD}, 0x0, 0x7E,
     "gs = 2688 / 1: SFValue = 2688 * (1 * fl32(1/6)) = 448 -> 0x7E; outputScale = rcp(448 * rcp(2688)) ~ 6 -> "
     "1 -> 6 (0x7), -0.5 -> -3 (code 5 | sign = 0xD)"},
    /* ---- a partial group (formats.md §14: DeepGEMM per_token_cast_to_fp8 zero-pads K up to 128) ---- */
    {"tg_partial_group_deepgemm", "token_group", "deepgemm-ref", 0, 1, 100, 2, {0x43E00000u, ONE}, 2, {0x7E, 0x38}, 0x00,
     0x3F800000u, "K = 100 < 128: one group padded with zeros; amax 448 -> s = 448 * fl32(1/448) = 0.99999998 -> "
     "fl32 1.0; q = x * (1/s) = 448 -> 0x7E, 1 -> 0x38, padding not written"},
    /* ---- token_group all-zero group under each eps rule (ue8m0=1) ---- */
    {"tg_zero_triton_eps_on_amax", "token_group", "triton-row", 1, 1, 128, 1, {0}, 1, {0x00}, 0x00, 0x2A800000u,
     "B12: amax = 1e-10, 1e-10/448 (div.full) = 2.23e-13, ceil(log2) = -42 -> 2^-42"},
    {"tg_zero_vllm_eps_on_scale", "token_group", "vllm-cpp", 1, 1, 128, 1, {0}, 1, {0x00}, 0x00, 0x2F000000u,
     "B12: y_s = 0/448 = 0 -> fmaxf(0, 1e-10) -> ceil(log2 1e-10) = -33 -> 2^-33"},
    {"tg_zero_sgl_kernel", "token_group", "sgl-kernel", 1, 1, 128, 1, {0}, 1, {0x00}, 0x00, 0x2A800000u,
     "amax 1e-10 * rcp(448) = 2.23e-13 = 1.x*2^-43 -> fast_log2_ceil -42 -> (85 << 23)"},
    {"tg_zero_deepgemm", "token_group", "deepgemm-ref", 1, 1, 128, 1, {0}, 1, {0x00}, 0x00, 0x34800000u,
     "amax.clamp(1e-4): 1e-4 * fl32(1/448) = 2.23e-7 = 1.87*2^-23 -> ceil_to_ue8m0 2^-22"},
    {"tg_zero_triton_fp32", "token_group", "triton-row", 0, 1, 128, 1, {0}, 1, {0x00}, 0x00, 0x2A7B5124u,
     "no ue8m0: s = fl32(fl32(1e-10) * fl32(1/448)) = 0x2A7B5124"},
    /* ---- tensor / token zero inputs (B26) ---- */
    {"tensor_zero_sgl_kernel", "tensor", "sgl-kernel", 0, 2, 4, 1, {0}, 1, {0x7E}, 0x7E, 0x00000000u,
     "B26: scale 0, 1/0 = Inf, 0 * Inf = NaN, fminf(NaN, 448) = 448 -> every byte 0x7E"},
    {"token_zero_warp_kernel", "token", "sgl-kernel-warp", 0, 1, 4, 1, {0}, 1, {0x00}, 0x00, 0x00000000u,
     "the warp kernel guards scale 0 -> multiplier 0 -> 0x00"},
    {"token_sgl_kernel_row", "token", "sgl-kernel", 0, 1, 4, 3, {0x40000000u, 0xBF800000u, QNAN}, 3, {0x7E, 0xF6, 0x7E}, 0x00,
     0x3B924925u,
     "amax 2 (fmaxf ignores the NaN): s = 2 * rcp(448) = 0x3B924925; 2 * rcp(s) ~ 448 -> 0x7E; -1 -> -224 = 0xF6; "
     "NaN * r = NaN, fminf(NaN, 448) = 448 -> 0x7E (B20)"},
};

#endif
