/* launch.h: the device-side interface of kernels/cuda: the argument blocks of the kernels and the
 * host launchers (kernels.cu), used by the ABI slots (runtime.cu) and by bench_cuda_quant.cu.
 * Every pointer in these structs is a device pointer; every launcher is asynchronous on its
 * stream and returns the launch's error. */
#ifndef QCK_LAUNCH_H
#define QCK_LAUNCH_H

#include "numerics.cuh" /* first: it includes gpu.h, whose HIP runtime gives memcpy its device overload */
#include "cuda_ops.h"
#include "ops/moe.h"

/* The element encoder a quant kernel is instantiated with. */
enum qck_cast_kind {
    QCK_CK_SOFT = 0,    /* qck_encode_minifloat under the cast policy */
    QCK_CK_E4M3_HW = 1, /* cvt.rn.satfinite.e4m3x2.f32 (group kernel: on clean slots, qck_hw_fp8_clean_ok) */
    QCK_CK_E5M2_HW = 2, /* cvt.rn.satfinite.e5m2x2.f32 */
    QCK_CK_E2M1_RNE = 3 /* FP4 clean slots: qck_e2m1_word (qck_e2m1_rne_ok) */
};

/* How a kernel stores a scale. */
enum qck_scale_kind {
    QCK_SC_F32 = 0,  /* fp32 at qck_tg_offset(tg_layout, ...) (row-major for tensor/token/block) */
    QCK_SC_U8 = 1,   /* e8m0 / e4m3 bytes, row-major [rows, groups] */
    QCK_SC_U8_SF = 2 /* bytes through the block-scale swizzle (sf_tile 128 or 8, Cp = sf_cp) */
};

/* One quantization (any recipe). */
typedef struct qck_quant_args {
    qc_recipe recipe;
    qc_recipe_policy p;
    int64_t rows, cols;
    int64_t tile_r, tile_c;  /* the tile one scale covers (token_group / mx / nvfp4: 1 x group) */
    int64_t tiles_r, tiles_c; /* tiles per dimension (the scale grid) */
    int lpg;                 /* group kernel: lanes per group (1..32, a power of two) */
    qck_fastdiv groups_per_row; /* group kernel: tiles_c, for a group index's row */
    uint32_t per_iter;       /* group kernel: the groups its grid takes an iteration (set by the launcher) */
    int hw_exact;            /* group kernel: the cvt instruction is the cast policy (qck_hw_fp8_ok) */
    int clamp_plain;         /* group kernel: clean slots clamp by plain min / max (bound > 0) */
    int unclamped;           /* group kernel: clean slots leave the clamp out (qck_unclamped) */
    int nv_fast_finite;      /* nvfp4 FAST order, satfinite block scales: qck_nv_g (set by qck_launch_quant) */
    int fp4;                 /* e2m1 payload: two codes per byte, element 2i low */
    int scale_kind;
    qc_scale_layout tg_layout;
    int sf_tile;
    int64_t sf_cp;
    qck_u8_map u8map;        /* the u8 scale grid's map (set by qck_launch_quant: qck_u8_map_of) */
    int has_static;
    float static_scale;
    int has_gscale;
    float gscale_encode;
    int nv_g_known;          /* nvfp4, given global scale, group kernel: g is nv_g, computed on the host
                              * (qck_nv_global), and the group kernel writes gscale (set by qck_launch_quant) */
    float nv_g;
    uint8_t *q;              /* the payload bytes as quant writes them */
    uint8_t *codes;          /* tile kernel: one code per byte (q itself unless fp4) */
    void *scale;
    float *gscale;           /* nvfp4: the decode-form global scale out */
    const qck_libm *L;
    /* scratch: amax reduction words and what the finaliser computes */
    unsigned int *amax_bits;
    unsigned long long *nan_index;
    float *dev_scale;        /* tensor: the scale; nvfp4: the global encode scale g */
    unsigned long long *bad; /* packed_ue8m0: first scale (row-major index) with no e8m0 byte */
} qck_quant_args;

/* One dequantization: q, scale and gscale as quant writes them -> y f32. */
typedef struct qck_dequant_args {
    qc_recipe recipe;
    qc_recipe_policy p;
    int64_t rows, cols, tile_r, tile_c, tiles_r, tiles_c;
    int fp4, scale_kind;
    qc_scale_layout tg_layout;
    int sf_tile;
    int64_t sf_cp;
    qck_u8_map u8map; /* set by qck_launch_dequant */
    const uint8_t *q;
    const void *scale;
    const float *gscale;
    float *y;
} qck_dequant_args;

/* The scratch bytes qck_launch_quant needs beside its outputs (the tile codes when fp4). */
size_t qck_quant_scratch_bytes(const qck_quant_args *a);
/* x: float (x_bf16 = 0) or bf16 bit patterns (x_bf16 = 1, the benchmark's input) [rows, cols].
 * The scale buffer must be zeroed first where its layout has padding. The scratch pointers of a
 * (amax_bits, nan_index, dev_scale, bad, codes) must be set. */
gpuError_t qck_launch_quant(const qck_quant_args *a, const void *x, int x_bf16, int sms, gpuStream_t s);
gpuError_t qck_launch_dequant(const qck_dequant_args *a, int sms, gpuStream_t s);

/* Elementwise ops. */
gpuError_t qck_launch_cast(const float *x, int64_t n, void *y, qc_format to, const qc_cast_policy *p,
                           const qck_libm *L, int sms, gpuStream_t s);
gpuError_t qck_launch_decode(const void *codes, int64_t n, float *y, qc_format from, const qc_cast_policy *p,
                             int sms, gpuStream_t s);
gpuError_t qck_launch_fp4_pack(const uint8_t *codes, int64_t n, int swap, uint8_t *packed, int sms, gpuStream_t s);
gpuError_t qck_launch_fnuz(uint8_t *w, int64_t n, float *scale, int64_t ns, int sms, gpuStream_t s);
/* The block-scale swizzle of B batches of [R, C] elements of eb bytes (1 or 2) into [B, Rg, Cg]. */
gpuError_t qck_launch_swizzle(const uint8_t *x, uint8_t *y, int64_t B, int64_t R, int64_t C, int64_t Rg, int64_t Cg,
                              int tile, int eb, int sms, gpuStream_t s);

/* One FP8 GEMM on Hopper's tensor core (gemm_wgmma.cu, sm_90a; in the CPU emulation the model it
 * equals): c [m, n] = a [m, k] x b [n, k]^T in 64 x 8 tiles, the tensor core's sum promoted into
 * fp32 every `promote` k-steps of 32 (0: never) with the kind's scales (tensor: sa[0] sb[0];
 * rowwise: sa[row], sb[col]; block: sa [m, L] per 1 x 128, sb [ceil(n/128), L] per 128 x 128,
 * L = ceil(k/128)), + bias [n], stored as out (f32, bf16 or f16: RNE under outp).
 * Grouped (the MoE's expert GEMMs, a_row != NULL): m counts padded rows in tiles of 64, each tile
 * one expert's (tile_expert, -1: an empty tile); row i of the tile reads a's row a_row[i] and
 * writes c's row c_row[i] (-1: padding), and the tile's b, sb and bias are its expert's (+ e
 * b_stride bytes, + e sb_stride floats, + e n floats). */
typedef struct qck_gemm_problem {
    const uint8_t *a, *b;
    const float *sa, *sb, *bias;
    void *c;
    int64_t m, n, k;
    int kind, promote;
    qc_format out;
    qc_cast_policy outp;
    const int *a_row, *c_row, *tile_expert;
    int64_t b_stride, sb_stride;
    int plant; /* cuda_ops.h qck_plant_kind: the gate's planted bug (0: none) */
} qck_gemm_problem;
gpuError_t qck_launch_gemm_wgmma(const qck_gemm_problem *p, int a_e5m2, int b_e5m2, gpuStream_t s);

/* gemm kind int8_rowwise (gemm_int8.cu): c [m, n] = epilogue(exact s8 dot of a [m, k], b [n, k]; sa [m],
 * sb [n], bias [n] or NULL) in out (f32, bf16, f16 under outp). */
typedef struct qck_int8_problem {
    const int8_t *a, *b;
    const float *sa, *sb, *bias;
    void *c;
    int64_t m, n, k;
    qc_format out;
    qc_cast_policy outp;
} qck_int8_problem;
gpuError_t qck_launch_gemm_int8(const qck_int8_problem *p, int sms, gpuStream_t s);

/* The CUDA-core GEMM of the bound models (gemm_simt.cu): one operand as the kernel reads it. The
 * scale of element (r, k) is scale[(r / rows_per_scale) * scales_per_row + k / k_per_scale]
 * (rows_per_scale 0: one scale row; k_per_scale 0: one scale for all of K). */
enum qck_simt_scale {
    QCK_SS_NONE = 0, /* no scale: bf16 activations */
    QCK_SS_F32 = 1,  /* fp32 (tensor, token, token_group rows, block) */
    QCK_SS_E8M0 = 2, /* e8m0 bytes under the recipe's dequantization decoder (mx) */
    QCK_SS_E4M3 = 3  /* e4m3fn bytes (nvfp4's block scales) */
};
typedef struct qck_simt_operand {
    const uint8_t *codes; /* [rows, k]: a byte per code, FP4 two per byte (flat element 2i low), bf16 two */
    const void *scale;
    qck_fmt fmt;          /* the element format */
    int fp4, scale_kind;
    qc_e8m0_decoder dec;
    int64_t rows_per_scale, k_per_scale, scales_per_row;
} qck_simt_operand;

/* c [m, n] = a [m, k] x b [n, k]^T on CUDA cores in fp32: per kblock of K the exact code products
 * summed from zero in K order, that partial times its scales, the partials summed in K order; or,
 * bf16_weights (model sgl-cpu), every weight dequantized and rounded to bf16 first and one fp32 dot.
 * Then alpha = fl32(gsa gsb) (has_alpha, nvfp4), + bias [n], stored as out. outp: the RNE policy
 * (qcref_default_policy) of the output and of sgl-cpu's bf16 weights.
 * exact (the MoE's model exact, out f32): the dot of the operands dequantized to fp32 (each then
 * times its NVFP4 global scale *ga, *gb where not NULL) + bias, summed exactly and rounded once
 * (exact_sum.cuh).
 * Row maps (the MoE's rows of one expert): a_row NULL, row i of a and c; else row i reads a's row
 * a_row[i] and writes c's row c_row[i], and a_row[i] = -1 is a padding row, skipped. */
typedef struct qck_simt_problem {
    qck_simt_operand a, b;
    const float *bias;
    void *c;
    const int *a_row, *c_row;
    const float *ga, *gb; /* exact: the operands' global scales on the device, or NULL */
    int64_t m, n, k, kblock;
    int tensor_scales; /* fp8_tensor: fl32(sa sb) times the dot (formats.md §9.2); else left to right */
    int bf16_weights, has_alpha, exact;
    float gsa, gsb;
    qc_format out;
    qc_cast_policy outp;
    int plant; /* cuda_ops.h qck_plant_kind: the gate's planted bug (0: none) */
} qck_simt_problem;
gpuError_t qck_launch_gemm_simt(const qck_simt_problem *p, int sms, gpuStream_t s);
/* The operand of an MoE tensor [rows, k] quantized under spec j (its canonical scale layout), or of
 * its bf16 codes (j NULL), pointers NULL; or why this kernel does not take it (in why). */
const char *qck_simt_moe_operand(const qcheck_quant_spec *j, int64_t rows, int64_t k, qck_simt_operand *o, char *why,
                                 size_t n);

/* The fused MoE around its expert GEMMs (moe_kernels.cu; reference/ops/moe.h):
 * route: logits [tokens, c->experts] (c->bias: the device's correction bias) -> ids, w [tokens,
 *   top_k + n_shared], one warp per token;
 * act: h [rows, r1] (GEMM1's fp32 outputs with b13) times w per row with weight_on_input, in
 *   place -> act [rows, inter] and act_bf16 (act rounded to bf16 under bf, as fp32);
 * combine: y [tokens * kk, hidden] -> comb = rsf_out * sum_j w_j y_j in fp32 in slot order (reversed:
 *   the gate's planted bug), out its bf16 codes under bf. */
gpuError_t qck_launch_moe_route(const float *logits, const qc_route_cfg *c, int64_t tokens, int *ids, float *w, int sms,
                                gpuStream_t s);
/* libm: the planted bug QCK_PLANT_ACT_LIBM (0 but in that planted backend). */
gpuError_t qck_launch_moe_act(float *h, const float *w, const qc_act_cfg *c, int weight_on_input, int64_t rows,
                              int64_t inter, const qc_cast_policy *bf, int libm, float *act, float *act_bf16, int sms,
                              gpuStream_t s);
gpuError_t qck_launch_moe_combine(const float *y, const float *w, int weight_on_input, float rsf_out, int64_t tokens,
                                  int64_t kk, int64_t hidden, int reversed, const qc_cast_policy *bf, float *comb,
                                  uint16_t *out, int sms, gpuStream_t s);

/* The benchmark's copy kernel: n bytes (a multiple of 16), 16 bytes per thread and iteration. */
gpuError_t qck_launch_copy(const void *src, void *dst, size_t n, int sms, gpuStream_t s);

/* ---------------------------------------------------------------- the GEMM kernels' shared steps */

/* A weight scale as a GEMM kernel (gemm_wgmma.cu, gemm_simt.cu) reads it: itself, or one ulp larger
 * under the gate's planted bug. */
QCK_D float qck_planted_scale(int plant, float s)
{
    return plant == QCK_PLANT_SCALE_ULP && s > 0 && s < 3.4e38f ? qck_float(qck_bits(s) + 1) : s;
}

/* v's bf16 / f16 output code: RNE under outp, or one code toward zero (sign and magnitude) under
 * the gate's planted bug. */
QCK_D uint32_t qck_half_code(qc_format out, const qc_cast_policy &outp, int plant, float v)
{
    uint32_t c = qck_encode(out, v, outp, nullptr);
    float back = qck_decode(out, c, outp);
    if (plant == QCK_PLANT_OUT_TOWARD_ZERO && (c & 0x7FFFu) != 0 && (back < 0 ? -back : back) > (v < 0 ? -v : v))
        c -= 1;
    return c;
}

#endif
