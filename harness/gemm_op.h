/* gemm_op.h: the gemm op (ops/op_gemm.c) with a hook that changes one rule after the operands are
 * quantized (NULL: the reference itself). Mutants use it to be the reference with one rule wrong. */
#ifndef QC_GEMM_OP_H
#define QC_GEMM_OP_H

#include "ops/gemm.h"
#include "quant_job.h"

/* Called with B's job and its quantized payload/scales, before the operands are dequantized. */
typedef void (*qc_gemm_tweak)(qc_gemm_kind kind, const qc_quant_job *jb, qc_quantized *qb);
struct qc_op_call;
int qc_gemm_op(struct qc_op_call *c, qc_gemm_tweak tweak);

/* The quantized operands of one gemm call exactly as the reference op makes them, for a backend
 * that computes the product itself (kernels/cpu/amx_gemm.c). Only the fields of the call's form
 * are set; bias points into the call's input (NULL: none). */
typedef struct qc_gemm_operands {
    int kind;
    int64_t m, n, k;
    qc_format out;
    const float *bias;
    uint16_t *a_bf16;     /* fp8_block, model=sgl-cpu: a [m, k] as bf16 codes (RNE) */
    uint8_t *b_codes;     /* fp8_block: b [n, k] e4m3fn codes */
    float *b_block_scale; /* fp8_block: [ceil(n/128), ceil(k/128)] fp32 dequant multipliers */
    int8_t *a_s8, *b_s8;  /* int8_rowwise: [m, k] and [n, k] (qcref_quantize_row_int8) */
    float *a_scale, *b_scale; /* int8_rowwise: [m] and [n] */
} qc_gemm_operands;

/* 0: o holds the operands; 1: the call is neither fp8_block model=sgl-cpu (e4m3fn, 128x128) nor
 * int8_rowwise (the caller falls back to the reference); 2: bad params (err says which). */
int qc_gemm_operands_get(struct qc_op_call *c, qc_gemm_operands *o);
void qc_gemm_operands_free(qc_gemm_operands *o);

#endif
