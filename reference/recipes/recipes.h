/* recipes.h: quantization recipes, how scales are chosen and applied (docs/spec/formats.md §4-§6,
 * formats.md §12 items 4-9). A recipe is a plain function of an fp32 tensor and an explicit policy; a
 * recipe profile (profiles.h) is the policy one real implementation uses, with its source.
 *
 * Shapes are row-major [rows, cols]; the scale groups run along cols (K). Every recipe writes
 * the payload as one code per element (FP4 codes one per byte: qcref_fp4_pack packs them) and
 * its scales in the canonical row-major layout [rows, groups] (block: [row tiles, col tiles]);
 * qc_scale_layout_* re-lays token_group scales. Dequantization (qcref_dequant) multiplies exact
 * decoded values in fp32: q * scale is one IEEE product. */
#ifndef QCREF_RECIPES_H
#define QCREF_RECIPES_H

#include <stddef.h>
#include <stdint.h>

#include "../arith/arith.h"
#include "../formats/formats.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum qc_recipe {
    QC_RECIPE_TENSOR,      /* one fp32 scale for the tensor (dynamic, or static_scale given) */
    QC_RECIPE_TOKEN,       /* one fp32 scale per row */
    QC_RECIPE_TOKEN_GROUP, /* one fp32 (or power-of-two) scale per 1 x group */
    QC_RECIPE_BLOCK,       /* one fp32 scale per block_r x block_c tile, zero-padded */
    QC_RECIPE_MXFP8,       /* e8m0 per 1 x 32, e4m3fn or e5m2 elements */
    QC_RECIPE_MXFP6,       /* e8m0 per 1 x 32, e2m3 or e3m2 elements */
    QC_RECIPE_MXFP4,       /* e8m0 per 1 x 32, e2m1 elements */
    QC_RECIPE_NVFP4,       /* e4m3 per 1 x 16 and an fp32 global scale, e2m1 elements */
    QC_RECIPE_COUNT
} qc_recipe;

/* amax over a group when an element is NaN (formats.md §6.2, §6.3, §5). */
typedef enum qc_amax_nan {
    QC_AMAX_NAN_IGNORE,   /* fmaxf reduction: NaN elements do not count (sgl-kernel) */
    QC_AMAX_NAN_PROPAGATE /* torch amax / max: a NaN element makes amax NaN */
} qc_amax_nan;

/* Where eps enters (formats.md §6.2, B12). */
typedef enum qc_eps_at {
    QC_EPS_NONE,
    QC_EPS_AMAX, /* amax = max(amax, eps) before the scale (sglang, DeepGEMM 1e-4, HIP 1e-12) */
    QC_EPS_SCALE /* scale = max(amax / max, eps) (vLLM C++ UE8M0: fmaxf(y_s, 1e-10)) */
} qc_eps_at;

/* How the fp32 scale comes from amax. */
typedef enum qc_scale_op {
    QC_SCALE_DIV,           /* s = amax / max under div_mode */
    QC_SCALE_MUL_RCP,       /* s = amax * fl32(1/max) (sgl-kernel CUDA) */
    QC_SCALE_RCP_OF_MULT    /* s = 1 / m with m = max / amax as torch computes a Python float over a tensor:
                               fl32(fl32(1 / amax) * max) (torch Tensor.__rtruediv__ is reciprocal() * other;
                               sglang input_to_float8 returns scale.reciprocal(); golden/real/sglang-0.5.23) */
} qc_scale_op;

/* Power-of-two rounding of an fp32 scale (token_group / block "ue8m0"), formats.md §2.2. */
typedef enum qc_pow2 {
    QC_POW2_NONE,
    QC_POW2_E8M0,     /* byte = qcref_e8m0_encode(s, pow2_policy), scale = decode(byte, pow2_policy decoder) */
    QC_POW2_LOG2_CEIL /* exp2f(ceilf(log2f(s))) in float (sglang/vLLM Triton, vLLM C++) */
} qc_pow2;

/* How an element is scaled before the cast (formats.md §6.2: the same operation rounds three different ways). */
typedef enum qc_elem_op {
    QC_ELEM_MUL_RCP,     /* q = x * recip(s) (recip under div_mode; s = 0 -> see zero_guard) */
    QC_ELEM_DIV,         /* q = x / s under div_mode */
    QC_ELEM_MUL_MAX_AMAX /* q = x * fl32(max / amax) (sgl-kernel per-token-group, input_to_float8) */
} qc_elem_op;

/* What a clamp to [-max, max] before the cast does with NaN (formats.md §10 B20). */
typedef enum qc_clamp {
    QC_CLAMP_NONE,  /* no clamp: the cast's overflow policy decides */
    QC_CLAMP_TORCH, /* torch.clamp / tl.clamp: NaN propagates */
    QC_CLAMP_FMINF, /* fmaxf(fminf(q, max), -max): a NaN becomes +max (CUDA) */
    QC_CLAMP_TRITON, /* tl.clamp = min(max(q, -max), max) ignoring NaN: a NaN becomes -max (formats.md §13) */
    QC_CLAMP_FMINF_UPPER /* fminf(q, max) only: a NaN becomes +max, the low side is left to the satfinite cast
                            (sglang JIT per_token_group_quant's f32/f16 path, formats.md §15) */
} qc_clamp;

/* How an element is scaled when its fp32 scale s is a power of two 2^(E-127) (pow2 set). */
typedef enum qc_pow2_mult {
    QC_POW2_MULT_RCP,     /* x * recip(s): sgl-kernel fast_pow2(-exp), exactly 1/s */
    QC_POW2_MULT_INV_BITS /* x * fp32((254 - E) << 23), E = s's exponent field: sglang JIT inv_scale_ue8m0,
                             so a scale byte of 255 (an Inf amax) multiplies by -Inf (formats.md §15) */
} qc_pow2_mult;

/* How an MX block's e8m0 byte is chosen (formats.md §2.2, §5). */
typedef enum qc_mx_rule {
    QC_MX_E8M0_OF_AMAX,   /* byte = e8m0(amax) with the cast policy's rule and emax (torchao FLOOR/CEIL/EVEN, OCP) */
    QC_MX_E8M0_OF_DESCALE,/* byte = e8m0(descale), descale = amax / max by scale_op (RCEIL, cvt.rp, triton, aiter, modelopt) */
    QC_MX_CUTEDSL         /* flashinfer float_to_ue8m0_fast(descale): ceil, <= 0 -> 0, clamp 254, NaN -> 254 */
} qc_mx_rule;

/* How an MX element is scaled by its byte's decoded value d (formats.md §5, the "element operation" column). */
typedef enum qc_mx_op {
    QC_MX_DIV,          /* x / d: torchao, OCP, aiter, modelopt, sgl-kernel x * 2^-E (exact for d = 2^k) */
    QC_MX_MUL,          /* x * d, the decoder gives the reciprocal (trtllm-rcp, cutedsl-inv) */
    QC_MX_MUL_RCP,      /* x * rcp.approx.ftz(d) (TRT-LLM cvt_warp_fp16_to_mxfp8) */
    QC_MX_MUL_RECIP_NZ  /* x * (d == 0 ? 0 : 1/d) under div_mode (triton_kernels quant_scale) */
} qc_mx_op;

/* NVFP4 operation orders (formats.md §4.2, §4.3). */
typedef enum qc_nvfp4_order {
    QC_NVFP4_FAST,   /* TRT-LLM cvt_warp_fp16_to_fp4 default: gs*(vecMax*rcp6), rcp.approx outputScale */
    QC_NVFP4_TE,     /* DISABLE_FP4_QUANT_FAST_MATH: vecMax*(gs*(1/6)), IEEE outputScale, <= FLT_MAX */
    QC_NVFP4_TORCHAO /* torchao nvfp4_quantize: amax/6 / per_tensor_scale clamped to [2^-6, 448] */
} qc_nvfp4_order;

typedef enum qc_zero_rule {
    QC_ZERO_VECMAX, /* outputScale = 0 iff vecMax == 0 (flashinfer, formats.md §4.2 step 4) */
    QC_ZERO_SFVALUE /* outputScale = 0 iff SFValue == 0 (vLLM / sgl-kernel copy) */
} qc_zero_rule;

/* torch's e4m3fn NaN (0x7F) as fp32: 0x7FF00000 (c10 fp8e4m3fn_to_fp32_value keeps the code's
 * mantissa bits under the all-ones exponent). torchao's bit-level fp4 cast reads these bits, so a
 * NaN block gives code 4, not the 3 of a 0x7FC00000 NaN (golden/real/torchao-0.18.0 nvfp4_quantize-*). */
#define QC_TORCH_E4M3_NAN 0x7FF00000u

/* NVFP4 global scale when none is given (formats.md §4.1, §4.3). */
typedef enum qc_gscale_rule {
    QC_GSCALE_FLASHINFER, /* encode 2688 / amax, amax = 0 -> FLT_MAX */
    QC_GSCALE_TE,         /* as flashinfer, clamped to <= FLT_MAX, gs == 0 -> 1 */
    QC_GSCALE_NONE        /* none: 1 (torchao nvfp4_quantize's default per_tensor_scale=None, golden/real) */
} qc_gscale_rule;

typedef struct qc_recipe_policy {
    qc_format elem;          /* payload format */
    qc_cast_policy cast;     /* element cast */
    float elem_max;          /* the max of the scale formula: 448, 240, 224, 57344, 6, 7.5, 28 */
    qc_amax_nan amax_nan;
    qc_eps_at eps_at;
    float eps;
    qc_scale_op scale_op;
    qc_div_mode div_mode;    /* every division and reciprocal of the recipe */
    qc_pow2 pow2;            /* fp32-scale recipes */
    qc_cast_policy pow2_policy;
    qc_pow2_mult pow2_mult;  /* the element op under pow2 (qc_elem_op MUL_MAX_AMAX) */
    qc_elem_op elem_op;
    int zero_guard;          /* MUL_RCP: scale 0 -> multiplier 0 (else 1/0 = Inf, 0*Inf = NaN) */
    qc_clamp clamp;
    float clamp_max;         /* the clamp bound (usually elem_max; sglang fnuz: 224 scale, 240 clamp) */
    int group;               /* token_group: group size; mx: 32; nvfp4: 16 */
    int partial_group;       /* token_group: 1 takes K that the group does not divide, the last group
                                zero-padded (DeepGEMM per_token_cast_to_fp8 aligns K up to gran_k) */
    int block_r, block_c;    /* block: tile */
    /* mx */
    qc_mx_rule mx_rule;
    qc_mx_op mx_op;          /* how the element is scaled by the byte */
    qc_e8m0_decoder mx_dec;  /* the decoder mx_op applies to the byte */
    int mx_zero_guard;       /* 1: amax == 0 -> multiplier 0 (TRT-LLM ue8m0 "vecMax != 0") */
    /* nvfp4 */
    qc_nvfp4_order nv_order;
    qc_zero_rule nv_zero;
    qc_gscale_rule nv_gscale;
    qc_cast_policy sf_cast;  /* e4m3 block scale cast */
    qc_e8m0_decoder dequant_e8m0; /* e8m0 decoder of dequantization */
    /* 1: a NaN the fp32 scaling produces is the canonical 0x7FFFFFFF, as on NVIDIA GPUs (an x86
     * CPU passes the operand's NaN on); it shows where a bit-level cast reads the NaN's payload
     * (torchao's fp4/fp6 casts, golden/real/torchao-0.18.0 *-cuda.h5), in an fp32 scale of a
     * NaN block, and in the sign of a NaN code (golden/real/torch-2.11.0/token_group-*-cuda.h5) */
    int nan_canonical;
    /* What depends on the input's element type; qcref_recipe_policy_for_input resolves both. */
    int bf16_input_unclamped; /* 1: a bf16 input is not clamped (sglang JIT per_token_group_quant clamps
                                 f32/f16 inputs only; golden/real/sglang-0.5.23 jit-token_group-*) */
    int bf16_ops;            /* 1: on a bf16 input the library's tensor ops run in bf16 (torch type
                                promotion; golden/real/sglang-0.5.23 native-*-bf16-*) */
    int round_bf16;          /* resolved from bf16_ops for a bf16 input: the eps-floored amax, the
                                scale and x / s are each rounded to bf16 (RNE) before the next step */
} qc_recipe_policy;

/* The policy of profile p for an input of element type in (f32, bf16, f16): the two knobs above
 * resolved. A profile's own policy is the one of an f32 input. */
qc_recipe_policy qcref_recipe_policy_for_input(const qc_recipe_policy *p, qc_format in);

/* A quantized tensor: payload codes (one per element), scales, optional global scale. */
typedef struct qc_quantized {
    size_t rows, cols;
    uint8_t *q;          /* rows*cols codes */
    float *scale_f32;    /* tensor, token, token_group, block: the fp32 dequant multipliers */
    uint8_t *scale_u8;   /* mx: e8m0 bytes; nvfp4: e4m3 bytes */
    float gscale;        /* nvfp4: the global dequant scale (weight_scale_2 / input_scale form) */
    size_t nscales;
} qc_quantized;

/* Number of scales of a recipe for a shape (canonical layout). */
size_t qcref_recipe_nscales(qc_recipe r, const qc_recipe_policy *p, size_t rows, size_t cols);

/* Checks that a shape fits the recipe: returns NULL or the rule that is broken (a static string). */
const char *qcref_recipe_shape_rule(qc_recipe r, const qc_recipe_policy *p, size_t rows, size_t cols);

/* Quantize x [rows, cols]. out->q and the scale array the recipe uses must hold rows*cols and
 * qcref_recipe_nscales() entries. static_scale (tensor) / gscale_encode (nvfp4): NULL = from amax. */
int qcref_quant(qc_recipe r, const qc_recipe_policy *p, const float *x, size_t rows, size_t cols,
                const float *static_scale, const float *gscale_encode, qc_quantized *out);
/* qcref_quant that also writes, per element, the fp32 value right before the clamp and the element
 * cast (rows*cols floats): where the scale put each element on the element grid. The generators use it
 * to place elements on rounding midpoints and to record which boundaries an input reaches. */
int qcref_quant_traced(qc_recipe r, const qc_recipe_policy *p, const float *x, size_t rows, size_t cols,
                       const float *static_scale, const float *gscale_encode, qc_quantized *out, float *prescaled);
void qcref_dequant(qc_recipe r, const qc_recipe_policy *p, const qc_quantized *in, float *y);

/* One-group primitives (shared by the recipes, the transforms and the tests). */
float qcref_group_amax(const float *x, size_t n, size_t stride, qc_amax_nan rule);
float qcref_scale_from_amax(float amax, const qc_recipe_policy *p);
uint8_t qcref_quant_elem(float x, float scale, float amax, const qc_recipe_policy *p);
float qcref_prescale_elem(float x, float scale, float amax, const qc_recipe_policy *p); /* before clamp and cast */
float qcref_recipe_clamp(float v, const qc_recipe_policy *p); /* the clamp knob, bound clamp_max */

/* token_group scale layouts (formats.md §6.2): row [M, G], col [G, M], col_tma [G, round_up(M, 4)],
 * packed_ue8m0 int32 [ceil(G/4), round_up(M, 4)] of bytes E (little-endian, 4 groups per int32).
 * qc_scale_layout_size gives the bytes; apply writes from the row-major fp32 scales, inverse reads. */
typedef enum qc_scale_layout { QC_SL_ROW, QC_SL_COL, QC_SL_COL_TMA, QC_SL_PACKED_UE8M0, QC_SL_COUNT } qc_scale_layout;
size_t qc_scale_layout_size(qc_scale_layout l, size_t m, size_t g);
int qc_scale_layout_apply(qc_scale_layout l, const float *row_major, size_t m, size_t g, uint8_t *out);
int qc_scale_layout_inverse(qc_scale_layout l, const uint8_t *in, size_t m, size_t g, float *row_major);
/* The scale (*i, *j) whose bytes hold byte `byte` of the layout: 0, or 1 for a padding byte. */
int qc_scale_layout_locate(qc_scale_layout l, size_t m, size_t g, size_t byte, size_t *i, size_t *j);
const char *qc_scale_layout_name(int l);
int qc_scale_layout_from_name(const char *s);

const char *qc_recipe_name(int r);
int qc_recipe_from_name(const char *s);

#ifdef __cplusplus
}
#endif

#endif
