/* moe_cpu_op.h: op moe_cpu (ops/op_moe_cpu.c), sgl-kernel's fused_experts_cpu with
 * use_fp8_w8a16 (bf16 activations, e4m3fn weights with 128x128 block scales): its problem setup,
 * shared by the reference op, the cpu-amx kernel's adapter (kernels/cpu/cpu_backend.c) and the
 * tests, so that all three see the same routing, bf16 activations and weight codes. */
#ifndef QC_MOE_CPU_OP_H
#define QC_MOE_CPU_OP_H

#include <stddef.h>
#include <stdint.h>

#include "moe_op.h"

struct qc_op_call;

typedef struct qc_moe_cpu {
    qc_moe_cfg cfg;       /* parsed by op_moe.c's rules (qc_moe_parse_cfg) */
    int64_t kk, rows;     /* slots per token (top_k + shared), rows = tokens * kk */
    int32_t *ids;         /* [rows] expert of slot r = t * kk + j (qcref_route) */
    float *w;             /* [rows] its routing weight (fp32, qcref_route) */
    uint16_t *x;          /* [tokens, hidden] bf16 codes of x (RNE) */
    int64_t *count;       /* [experts + shared] rows per expert */
    qc_moe_weight_src ws; /* inputs w13 / w2 (f32), or generated (weights=generate) */
    float *wf;            /* one generated tensor */
} qc_moe_cpu;

/* Parses and checks the params (recipe fp8_block, act silu, order gate_up, no bias, no
 * weight_on_input, the routed scaling in the weights: what fused_experts_cpu computes), routes
 * every token and rounds x to bf16. 0, or 2 with c->err. */
int qc_moe_cpu_setup(struct qc_op_call *c, qc_moe_cpu *p);
void qc_moe_cpu_free(qc_moe_cpu *p);

/* Expert e's tensor t (0: w13 [2 inter, hidden], 1: w2 [hidden, inter]) quantized with the block
 * recipe (e4m3fn codes, fp32 scales [ceil(rows/128), ceil(cols/128)] row-major, sgl-kernel's
 * w1_scale / w2_scale layout). codes: rows*cols bytes, scales: qc_moe_cpu_nscales floats. */
int qc_moe_cpu_weights(struct qc_op_call *c, const qc_moe_cpu *p, int64_t e, int t, uint8_t *codes, float *scales);
int64_t qc_moe_cpu_nscales(const qc_moe_cpu *p, int t);

/* The weight value the kernel multiplies: bf16(fl32(e4m3fn(code) * scale)) (sgl-kernel unpack_B). */
float qc_moe_cpu_wvalue(uint8_t code, float scale);

/* Adds stage.route.ids (i32) and stage.route.weights (f32) [tokens, kk]. 0 or 2. */
int qc_moe_cpu_route_stages(struct qc_op_call *c, const qc_moe_cpu *p);

/* The exp budget of the model: any fp32 exp with |exp(x) - e^x| <= QC_MOE_CPU_EXP_REL e^x +
 * QC_MOE_CPU_EXP_ABS for every bf16 x <= 88.5 (sgl-kernel's exp_u20 over all bf16 inputs: at
 * most 3.51e-7 relative in [-86.5, 88.5], below 2^-126 absolute under it; tests/test_moe_cpu.c
 * checks this exhaustively). */
#define QC_MOE_CPU_EXP_REL 0x1p-20
#define QC_MOE_CPU_EXP_ABS 0x1p-124

/* sgl-kernel's exp_u20 (PyTorch aten/src/ATen/cpu/vec/vec512/vec512_float.h,
 * Vectorized<float>::exp_u20, "ULP=20"), one lane in scalar C with the same fp32 operations in the
 * same order: clamp to [ln FLT_MIN, ln FLT_MAX], n = floor(fma(x, log2 e, 0.5)), r = fma(-n, ln 2,
 * x), a degree-5 Horner polynomial of fmas, times 2^(n-1) (0 below ln FLT_MIN) times 2. */
float qc_exp_u20(float x);

/* bf16 RNE of an fp32 value (as a float), VCVTNE2PS2BF16's rounding; Inf/NaN kept. The same as
 * the reference codec (qcref_encode / qcref_decode of bf16, default policy) on non-NaN inputs, in
 * a few integer operations for the interval model's inner loops (test_moe_cpu compares them). */
float qc_bf16_rne(float f);

#endif
