/* qcheck.h: the public backend ABI of qcheck, version 3 (2 added the converter slots after bringup;
 * 3 the model and the quantization specs of the moe op).
 *
 * A backend is a table of typed kernel slots (BLIS-style): one function per op, each taking that
 * op's argument struct. The harness parses every instance's params once into these structs,
 * allocates the outputs (dense row-major, filled with a poison pattern so that an unwritten
 * element fails), calls the slot, and compares what comes back. A slot left NULL means the
 * backend does not claim the op: the harness gives it no work. A slot may decline one call
 * (QCHECK_DECLINED, with the reason in ctx->msg): that item is SKIPPED and counted apart, never
 * run through the reference and never a PASS.
 *
 * A backend sees this header and the reference's headers (formats, recipes, layouts, ops: the
 * policies and plans it must follow), never the harness. In-tree backends register with one
 * qc_add_backend() line in kernels/CMakeLists.txt; an outside library is loaded with
 * `qcheck run --backend plugin:PATH.so[:NAME]` through QCHECK_PLUGIN_ENTRY, after its
 * abi_version and the sizes of every struct below are checked against the harness's.
 * docs/backends.md describes each op's tensors. */
#ifndef QCHECK_QCHECK_H
#define QCHECK_QCHECK_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/formats.h"
#include "layouts/layouts.h"
#include "ops/gemm.h"
#include "ops/moe.h"
#include "profiles.h"
#include "recipes/recipes.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QCHECK_ABI_VERSION 3u

typedef enum qcheck_status {
    QCHECK_OK = 0,
    QCHECK_DECLINED = 1,  /* not implemented for these arguments: SKIPPED with ctx->msg */
    QCHECK_BAD_INPUT = 2, /* the backend calls the arguments invalid: ERROR with ctx->msg */
    QCHECK_FAILED = 3     /* the kernel or its device failed (a CUDA error, out of memory): ERROR */
} qcheck_status;

/* What the bytes of a tensor are in memory (and in HDF5). */
typedef enum qcheck_storage {
    QCHECK_U8,  /* every byte format: fp8, e8m0, fp4 (packed or one code per byte), fp6, s8 */
    QCHECK_U16, /* bf16, f16 bit patterns */
    QCHECK_I32,
    QCHECK_U32,
    QCHECK_F32,
    QCHECK_F64
} qcheck_storage;

#define QCHECK_MAX_DIMS 4

/* A view of a dense tensor. The harness passes row-major tensors: strides (in elements) are
 * those of a contiguous row-major array; nbytes is exact. An absent optional tensor has
 * data NULL and nbytes 0. */
typedef struct qcheck_tensor {
    qcheck_storage storage;
    const char *dtype; /* logical: "f32", "bf16", "e4m3fn", "e2m1x2" (packed pairs), "e8m0", "s8", "i32" */
    int ndim;
    int64_t shape[QCHECK_MAX_DIMS];
    int64_t strides[QCHECK_MAX_DIMS];
    void *data;
    size_t nbytes;
} qcheck_tensor;

/* Per call: where a declined or failed call says why, and which device to use. */
typedef struct qcheck_ctx {
    char *msg;     /* NUL-terminated reason, at most msglen bytes with the NUL */
    size_t msglen;
    int device;    /* --device N (GPU backends); 0 by default */
} qcheck_ctx;

/* Returns st with the reason, printf-style, in ctx->msg: how a backend says why it declined or
 * failed a call (header-only, so it is no part of the binary interface). */
static inline qcheck_status qcheck_say(qcheck_ctx *ctx, qcheck_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline qcheck_status qcheck_say(qcheck_ctx *ctx, qcheck_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (ctx && ctx->msg && ctx->msglen)
        vsnprintf(ctx->msg, ctx->msglen, fmt, ap);
    va_end(ap);
    return st;
}

/* ---- element formats (docs/spec/formats.md §1-§3) ---- */

/* cast: x f32 [n] -> y [n] codes of `to` (u8; bf16/f16 u16; one 4- or 6-bit code per byte). */
typedef struct qcheck_cast_args {
    qc_format to;
    qc_cast_policy policy; /* overflow, NaN, ties, zero sign, e8m0 rule: resolved from the profile */
    qcheck_tensor x, y;
} qcheck_cast_args;

/* decode: codes [n] of `from` -> y f32 [n]. */
typedef struct qcheck_decode_args {
    qc_format from;
    qc_cast_policy policy; /* e8m0: the decoder */
    qcheck_tensor codes, y;
} qcheck_decode_args;

/* fp4_pack: codes u8 [n] (0..15) -> packed u8 [ceil(n/2)], element 2i in the low nibble
 * (swap = 1: the high nibble). */
typedef struct qcheck_fp4_pack_args {
    int swap;
    qcheck_tensor codes, packed;
} qcheck_fp4_pack_args;

/* ---- quantization recipes (docs/spec/formats.md §4-§6) ---- */

/* One quantization job: the recipe, its profile's policy and the byte forms of its outputs. */
typedef struct qcheck_quant_spec {
    qc_recipe recipe;
    const qc_recipe_profile *profile;
    qc_recipe_policy policy; /* every rule of the profile, with the params' overrides applied */
    size_t rows, cols;
    qc_scale_layout layout;  /* token_group scales: row, col, col_tma, packed_ue8m0 */
    int has_static, has_gscale;
    float static_scale;      /* tensor: the given dequant scale */
    float gscale_encode;     /* nvfp4: the given global encode scale */
    qc_format in_dtype;      /* f32, or bf16 / f16: x holds values of that format (as f32) */
    int has_sf_layout;       /* the scales go through the layout map sf_layout */
    qc_layout sf_layout;     /* planned on the scale grid */
} qcheck_quant_spec;

/* quant: x f32 [rows, cols] -> q (codes; FP4 packed two per byte), scale (the recipe's scale
 * bytes in spec's layout: fp32 for tensor/token/token_group/block, e8m0 bytes for mx, e4m3 bytes
 * for nvfp4), gscale f32 [1] (nvfp4; else empty). The exact bytes `qcheck quant` writes. */
typedef struct qcheck_quant_args {
    const qcheck_quant_spec *spec;
    qcheck_tensor x, q, scale, gscale;
} qcheck_quant_args;

/* dequant: q, scale, gscale (as quant writes them) -> y f32 [rows, cols]. */
typedef struct qcheck_dequant_args {
    const qcheck_quant_spec *spec;
    qcheck_tensor q, scale, gscale, y;
} qcheck_dequant_args;

/* ---- layouts (docs/spec/layouts.md) ---- */

/* layout: x u8 [source bytes] -> y u8 [destination bytes] by plan (inverse = 0), or back. */
typedef struct qcheck_layout_args {
    const qc_layout *plan;
    int inverse;
    qcheck_tensor x, y;
} qcheck_layout_args;

/* fnuz_normalize (docs/spec/formats.md §7.1): w e4m3fn codes u8 [n] -> e4m3fnuz codes in place
 * (0x80 -> 0), scale f32 [s] doubled in place. The harness passes copies of the inputs. */
typedef struct qcheck_fnuz_normalize_args {
    qcheck_tensor w, scale;
} qcheck_fnuz_normalize_args;

/* The checkpoint converters of sglang/vLLM/DeepSeek (docs/spec/formats.md §7.2-§8.3). Shard widths
 * (rows of each fused shard, e.g. Q, K, V) come as nshards integers; outputs are fresh tensors. */

/* requantize_with_max_scale (formats.md §7.2): w e4m3fn u8 [sum widths, k] with one f32 scale per shard ->
 * w requantized to max_scale f32 [1] (the largest shard scale). fp16_intermediate 1: sglang/vLLM
 * dequantize through fp16; 0: AMD ATOM in fp32. A last scale <= -448 (the loader's sentinel of a
 * checkpoint fused on disk) leaves w as it is. */
typedef struct qcheck_requantize_args {
    int fp16_intermediate, nshards;
    const int64_t *widths;
    qcheck_tensor w, scale, out_w, max_scale;
} qcheck_requantize_args;

/* convert_to_channelwise (formats.md §7.3): scale f32 [nshards] -> out f32 [sum widths, 1], row r of shard i
 * holding scale[i]. */
typedef struct qcheck_channelwise_args {
    int nshards;
    const int64_t *widths;
    qcheck_tensor scale, out;
} qcheck_channelwise_args;

/* cast_e2m1fn_to_e4m3fn (formats.md §8.1): packed e2m1 u8 [rows, cols/2] (even element low) with e8m0 scales
 * u8 [rows, cols/32] -> w e4m3fn u8 [rows, cols] and one e8m0 scale per tile x tile, u8
 * [ceil(rows/tile), ceil(cols/tile)]. zero8_negative: code 8 is -0.0 (sglang's tool), not +0.0. */
typedef struct qcheck_e2m1_to_e4m3_args {
    int tile, zero8_negative;
    qcheck_tensor packed, scale, w, tile_scale;
} qcheck_e2m1_to_e4m3_args;

/* convert_mxfp8_weight_to_block_fp8 (formats.md §8.2): e4m3fn u8 [n, k] with e8m0 bytes u8 [n, k/32] ->
 * e4m3fn u8 [n, k] and f32 128x128 scales [ceil(n/128), ceil(k/128)]. */
typedef struct qcheck_mxfp8_to_block_args {
    qcheck_tensor w, scale, out_w, out_scale;
} qcheck_mxfp8_to_block_args;

/* requant_weight_ue8m0 (formats.md §8.3): e4m3fn u8 [n, k] with f32 128x128 scale_inv [ceil(n/128),
 * ceil(k/128)] -> e4m3fn u8 [n, k] and the ue8m0 scales of every row, packed four per int32,
 * MN-major: i32 [ceil(ceil(k/128)/4), round_up(n, 4)]. */
typedef struct qcheck_requant_ue8m0_args {
    qcheck_tensor w, scale_inv, out_w, packed;
} qcheck_requant_ue8m0_args;

/* ---- quantized GEMM (docs/spec/formats.md §9) ---- */

/* The form of one GEMM operand; which form each side takes follows from kind and model
 * (docs/backends.md "gemm"): the harness quantizes the op's f32 inputs with the reference
 * recipe, as the real pipeline's quantizer would, and hands the kernel what it consumes. */
typedef enum qcheck_operand_form {
    QCHECK_FORM_QUANTIZED, /* codes + scales of `spec` (FP4 packed), as quant writes them */
    QCHECK_FORM_BF16,      /* bf16 codes (RNE of the f32 input): model sgl-cpu's activations */
    QCHECK_FORM_INT8_ROW   /* s8 codes [rows, k] + f32 [rows] scales (sgl-kernel quantize_row_int8) */
} qcheck_operand_form;

typedef struct qcheck_gemm_operand {
    qcheck_operand_form form;
    const qcheck_quant_spec *spec; /* FORM_QUANTIZED */
    qcheck_tensor values;          /* the op's f32 input [rows, k], for reference */
    qcheck_tensor codes, scale, gscale;
} qcheck_gemm_operand;

/* gemm: c [m, n] (out: bf16, f16 or f32) = a [m, k] x b [n, k]^T with the kind's scales, + bias. */
typedef struct qcheck_gemm_args {
    qc_gemm_kind kind;
    const char *model; /* "exact", "grouped", "sgl-cpu": the rounding points the bound allows */
    int64_t m, n, k;
    qc_format out;
    qcheck_gemm_operand a, b;
    qcheck_tensor bias; /* f32 [n], or empty */
    qcheck_tensor c;
} qcheck_gemm_args;

/* ---- fused MoE (docs/spec/layouts.md §9) ---- */

/* A stage tensor the harness would like ("route.ids", "gemm1.h", ...; docs/backends.md). A
 * backend that computes it writes t and sets filled = 1; unfilled stages are left out of the
 * per-stage investigation table, never compared as zeros. */
typedef struct qcheck_stage {
    const char *name;
    qcheck_tensor t;
    int filled;
} qcheck_stage;

/* moe: the fused MoE of the case (routing, quantized GEMM1, activation, requantization, GEMM2,
 * weighted combine). Expert weights come on demand, one expert at a time, as f32 values:
 * weights(self, e, 0, out) fills w13 [r1, hidden], weights(self, e, 1, out) w2 [hidden, inter]
 * (0, or nonzero when out of memory). */
typedef struct qcheck_moe_args {
    int64_t tokens, hidden, inter, experts, shared, top_k, r1;
    const char *recipe;    /* bf16 fp8_tensor fp8_block nvfp4 mxfp8 mxfp4 */
    int act_recipe, weight_recipe; /* qc_recipe of activations / weights, -1: bf16 */
    /* "exact" (fp64 expert GEMMs, out within GEMM2's fp32 bound), "sm90-wgmma" or "sm90-wgmma-fast"
     * (the expert GEMMs of the H200's tensor core, bit-exact: docs/backends.md "moe") */
    const char *model;
    /* The quantizations of the recipe as the op applies them (NULL where the recipe has none):
     * a1 of x [tokens, hidden], a2 of bf16(act) [tokens * (top_k + shared), inter], and one
     * expert's w13 [r1, hidden] and w2 [hidden, inter] */
    const qcheck_quant_spec *a1_spec, *a2_spec, *w13_spec, *w2_spec;
    qc_route_cfg route;
    qc_act_cfg act;
    int weight_on_input, bias;
    float rsf_out;         /* routed scaling applied once after the sum (1 when in the weights) */
    qcheck_tensor x, logits, route_bias, b13, b2;
    int (*weights)(void *self, int64_t expert, int tensor, float *out);
    void *weights_self;
    qcheck_tensor out;     /* bf16 [tokens, hidden] */
    qcheck_stage *stages;
    int nstages;
} qcheck_moe_args;

/* moe_cpu: sgl-kernel fused_experts_cpu with use_fp8_w8a16 (docs/backends.md "moe_cpu"): the
 * routing is an input, as in the real op (topk_ids, topk_weights [tokens, slots]); x bf16
 * [tokens, hidden]; expert e's weights on demand as e4m3fn codes and fp32 128x128 block scales:
 * weights(self, e, 0, codes, scales) fills w13 [2 inter, hidden] and its
 * [ceil(2 inter / 128), ceil(hidden / 128)] scales, tensor 1 w2 [hidden, inter]. */
typedef struct qcheck_moe_cpu_args {
    int64_t tokens, hidden, inter, experts, slots;
    qcheck_tensor x, topk_ids, topk_weights;
    int (*weights)(void *self, int64_t expert, int tensor, uint8_t *codes, float *scales);
    void *weights_self;
    qcheck_tensor out; /* bf16 [tokens, hidden] */
    qcheck_stage *stages;
    int nstages;
} qcheck_moe_cpu_args;

/* ---- bring-up: a device characterised against the reference (qcheck bringup) ---- */

/* One instruction or path of the device, checked on every input of its domain against what the
 * reference (or its emulation of the instruction) gives. */
typedef struct qcheck_finding {
    char what[96];           /* "cvt.rn.satfinite.e4m3x2.f32" */
    char against[160];       /* "profile ptx (e4m3fn satfinite, NaN -> 0x7F), qcref device build" */
    uint64_t inputs;         /* how many were checked (2^32 for every fp32 pattern) */
    uint64_t mismatches;
    int nexamples;           /* the first mismatches, at most 4 */
    uint32_t example_input[4], example_got[4], example_expected[4];
    double device_ms;        /* device time of generate + convert + compare */
} qcheck_finding;

/* bringup: the backend fills in what it ran on and appends its findings (at most max). */
typedef struct qcheck_bringup_args {
    char device[128], driver[64], toolkit[64];
    qcheck_finding *findings;
    int max, n;
} qcheck_bringup_args;

/* ---- the backend ---- */

typedef qcheck_status (*qcheck_cast_fn)(const qcheck_cast_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_decode_fn)(const qcheck_decode_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_fp4_pack_fn)(const qcheck_fp4_pack_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_quant_fn)(const qcheck_quant_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_dequant_fn)(const qcheck_dequant_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_layout_fn)(const qcheck_layout_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_fnuz_normalize_fn)(const qcheck_fnuz_normalize_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_requantize_fn)(const qcheck_requantize_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_channelwise_fn)(const qcheck_channelwise_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_e2m1_to_e4m3_fn)(const qcheck_e2m1_to_e4m3_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_mxfp8_to_block_fn)(const qcheck_mxfp8_to_block_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_requant_ue8m0_fn)(const qcheck_requant_ue8m0_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_gemm_fn)(const qcheck_gemm_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_moe_fn)(const qcheck_moe_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_moe_cpu_fn)(const qcheck_moe_cpu_args *, qcheck_ctx *);
typedef qcheck_status (*qcheck_bringup_fn)(qcheck_bringup_args *, qcheck_ctx *);

/* The sizes the two sides must agree on, in this order. */
#define QCHECK_NSIZES 23
#define QCHECK_SIZES                                                                                         \
    {sizeof(qcheck_tensor), sizeof(qcheck_ctx), sizeof(qc_cast_policy), sizeof(qc_recipe_policy),           \
     sizeof(qc_layout), sizeof(qcheck_quant_spec), sizeof(qcheck_cast_args), sizeof(qcheck_decode_args),    \
     sizeof(qcheck_fp4_pack_args), sizeof(qcheck_quant_args), sizeof(qcheck_dequant_args),                  \
     sizeof(qcheck_layout_args), sizeof(qcheck_gemm_args), sizeof(qcheck_moe_args),                         \
     sizeof(qcheck_moe_cpu_args), sizeof(qcheck_finding), sizeof(qcheck_bringup_args),                      \
     sizeof(struct qcheck_backend), sizeof(qcheck_requantize_args), sizeof(qcheck_channelwise_args),         \
     sizeof(qcheck_e2m1_to_e4m3_args), sizeof(qcheck_mxfp8_to_block_args), sizeof(qcheck_requant_ue8m0_args)}

/* qcheck_backend.flags */
enum {
    /* Run this backend's items in one long-lived worker process per device (started after the
     * fork, restarted after a crash or a timeout), not a fresh child per item: for GPU backends,
     * whose driver state must never cross a fork(2) and whose context takes long to create. A
     * crash still makes only the item that was running ERROR. */
    QCHECK_BACKEND_PERSISTENT = 1u,
    /* A deliberately broken backend (a bug planted in real kernels): the harness counts it with
     * the mutants (group "mutants", built in or loaded as a plugin), which must FAIL somewhere;
     * its failures are the gate working, not a failed run. */
    QCHECK_BACKEND_PLANTED = 2u
};

typedef struct qcheck_backend {
    uint32_t abi_version;          /* QCHECK_ABI_VERSION */
    uint32_t sizes[QCHECK_NSIZES]; /* QCHECK_SIZES */
    const char *name;              /* "cpu-avx512": what --backend and the reports call it */
    unsigned flags;                /* QCHECK_BACKEND_* */
    const char *doc;               /* what it is, what it implements, what it declines */
    /* NULL when it can run here, else why not (every item SKIPPED). Called in the harness's own
     * process, before any worker is forked: it must not initialise a GPU driver there (probe in a
     * child process of its own instead). */
    const char *(*unavailable)(void);
    qcheck_cast_fn cast;
    qcheck_decode_fn decode;
    qcheck_fp4_pack_fn fp4_pack;
    qcheck_quant_fn quant;
    qcheck_dequant_fn dequant;
    qcheck_layout_fn layout;
    qcheck_fnuz_normalize_fn fnuz_normalize;
    qcheck_gemm_fn gemm;
    qcheck_moe_fn moe;
    qcheck_moe_cpu_fn moe_cpu;
    qcheck_bringup_fn bringup;
    qcheck_requantize_fn requantize_with_max_scale;
    qcheck_channelwise_fn convert_to_channelwise;
    qcheck_e2m1_to_e4m3_fn cast_e2m1fn_to_e4m3fn;
    qcheck_mxfp8_to_block_fn convert_mxfp8_weight_to_block_fp8;
    qcheck_requant_ue8m0_fn requant_weight_ue8m0;
} qcheck_backend;

/* The first two fields of every qcheck_backend definition. */
#define QCHECK_BACKEND_HEADER .abi_version = QCHECK_ABI_VERSION, .sizes = QCHECK_SIZES

/* A plugin library exports this function: its backends (count of them in *n). */
#define QCHECK_PLUGIN_ENTRY "qcheck_plugin_backends_v1"
typedef const qcheck_backend *const *(*qcheck_plugin_fn)(int *n);

/* Helpers every backend needs, header-only so a plugin links nothing of qcheck. */
static inline int64_t qcheck_numel(const qcheck_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}

/* The stage of that name among a moe / moe_cpu call's stages (args->stages, args->nstages), or NULL. */
static inline qcheck_stage *qcheck_stage_find(qcheck_stage *stages, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(stages[i].name, name))
            return &stages[i];
    return NULL;
}

#ifdef __cplusplus
}
#endif

#endif
