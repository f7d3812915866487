/* moe_op.h: the fused-MoE op (ops/op_moe.c) with a hook that changes one rule of its parsed
 * configuration (NULL: the reference). Mutants use it to be the reference with one rule wrong. */
#ifndef QC_MOE_OP_H
#define QC_MOE_OP_H

#include <stddef.h>
#include <stdint.h>

#include "ops/moe.h"

struct qcheck_quant_spec;
struct qc_quantized;

/* Param model of op moe (ops/op_moe.c parse_model): the arithmetic of the expert GEMMs. */
typedef enum qc_moe_model {
    QC_MOE_MODEL_EXACT,     /* h the exact GEMM1 + b13 rounded once; out within GEMM2's fp32 bound */
    QC_MOE_MODEL_SM90,      /* sm90-wgmma: the H200's FP8 tensor core, promoted every 128 of K; bit-exact */
    QC_MOE_MODEL_SM90_FAST  /* sm90-wgmma-fast: the same, never promoted */
} qc_moe_model;

typedef struct qc_moe_cfg {
    int recipe;                 /* index into op_moe.c's recipe table */
    qc_moe_model model;
    int64_t t, h, i, e, shared; /* tokens, hidden, intermediate, routed experts, fused shared experts */
    qc_route_cfg route;
    qc_act_cfg act;
    const float *logits;        /* the router logits [t, e], for a tweak to read (route.bias likewise) */
    int weight_on_input;        /* apply_router_weight_on_input: w multiplies the GEMM1 output (after b13) */
    int bias;                   /* b13 and b2 */
    float rsf_out;              /* the routed scaling applied once after the sum (1 when in the weights) */
    /* NULL; a mutant's change to every expert's quantized weights, after the quantizer and
     * before the exact dequantization (the weight scales read from the wrong block, say) */
    void (*weight_tweak)(const struct qcheck_quant_spec *j, struct qc_quantized *q);
} qc_moe_cfg;

/* Changes one rule of cfg, or returns why it cannot change anything there (the item is then
 * declined, never passed): NULL when it did. */
typedef const char *(*qc_moe_tweak)(qc_moe_cfg *cfg);
/* The qc_recipe of the routed experts' weights of cfg, or -1 for bf16. */
int qc_moe_weight_recipe(const qc_moe_cfg *cfg);
struct qc_op_call;
int qc_moe_op(struct qc_op_call *c, qc_moe_tweak tweak);
/* The op's params parsed and checked by its rules (0, or 2 with c->err): op moe_cpu reuses them. */
int qc_moe_parse_cfg(struct qc_op_call *c, qc_moe_cfg *m);

/* The weights of param weights=generate: out[i] = element first + i (row-major) of expert's
 * tensor (0: w13 [R1, hidden], 1: w2 [hidden, inter]), for i < n, from seed (param weight_seed):
 *   z_c = splitmix64's output number c (from 0) seeded with seed, c = ((2 expert + tensor) << 40) + i,
 *         that is mix(seed + (c + 1) 0x9E3779B97F4A7C15), mix = splitmix64's finalizer
 *   u   = the sum of the four 16-bit lanes of z_c (Irwin-Hall(4): mean 131070, standard deviation
 *         sqrt((2^32 - 1) / 3), |u - 131070| <= 131070)
 *   out = fl32((u - 131070) * (std / sqrt((2^32 - 1) / 3))), the product and the quotient in fp64.
 * Near-normal, with standard deviation std (params w13_std, w2_std) and no tails past 3.46 std.
 * Any implementation (numpy: a few uint64 lines) regenerates them from the params alone, so a
 * golden needs no weight tensors and the op never holds more than one expert's. */
void qc_moe_weight_fill(uint64_t seed, int64_t expert, int tensor, float std, size_t first, size_t n, float *out);

/* The quantization job of qc_recipe `recipe` on [rows, cols] with the MoE ops' shapes (token
 * groups of 128, 128x128 blocks); 0, or 2 with the message in c->err. Not thread-safe (the
 * parameter parser keeps static state): set jobs up in the calling thread. */
int qc_moe_quant_job(struct qc_op_call *c, int recipe, int64_t rows, int64_t cols, struct qcheck_quant_spec *j);

/* Where the expert weights come from, param weights: inputs (the f32 tensors w13 [experts, r1,
 * hidden] and w2 [experts, hidden, inter]) or generate (weight_seed, w13_std, w2_std; then w13 and
 * w2 must not be given). Shared by ops moe and moe_cpu. */
typedef struct qc_moe_weight_src {
    int gen;
    uint64_t seed;
    float std[2];
    const float *in[2]; /* weights=inputs: w13, w2 */
} qc_moe_weight_src;
int qc_moe_weight_source(struct qc_op_call *c, int64_t experts, int64_t r1, int64_t hidden, int64_t inter,
                         qc_moe_weight_src *src);

/* For an instance's inputs (the kernel's whole contract, registry.h derived_inputs): adds
 * <name>.codes [experts, rows, cols] (FP4 two per byte; bf16 codes when recipe < 0),
 * <name>.scale [experts, scale grid] (fp32 scales as f32, byte scales as e4m3fn / e8m0) and, for
 * NVFP4, <name>.gscale f32 [experts], each expert quantized as the MoE ops quantize it. 0 or 2. */
int qc_moe_expert_codes(struct qc_op_call *c, int recipe, const char *name, const float *w, int64_t experts,
                        int64_t rows, int64_t cols);

#endif
