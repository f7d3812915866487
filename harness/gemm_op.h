/* gemm_op.h: the gemm op (ops/op_gemm.c) with a hook that changes one rule after the operands are
 * quantized (NULL: the reference itself). Mutants use it to be the reference with one rule wrong. */
#ifndef QC_GEMM_OP_H
#define QC_GEMM_OP_H

#include "ops/gemm.h"
#include "quant_job.h"

/* Called with B's job and its quantized payload/scales, before the operands are dequantized. */
typedef void (*qc_gemm_tweak)(qc_gemm_kind kind, const qc_quant_job *jb, qc_quantized *qb);
/* Called with the exact fp64 outputs y64 [count] and the output tensor c (codes of out) once it is
 * written: a kernel's own rounding of the result. */
struct qc_tensor;
typedef void (*qc_gemm_post)(const double *y64, int64_t count, qc_format out, struct qc_tensor *c);
struct qc_op_call;
int qc_gemm_op(struct qc_op_call *c, qc_gemm_tweak tweak, qc_gemm_post post);

#endif
