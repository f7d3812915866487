/* quant_job.h: a quantization job (recipe, profile, shape, params), parsed from params once, and
 * the byte layout of its outputs; shared by `qcheck quant`/`dequant` (which build the params
 * from their command line) and the harness's quant, dequant, gemm and moe ops. */
#ifndef QC_QUANT_JOB_H
#define QC_QUANT_JOB_H

#include "params.h"
#include "qcheck/qcheck.h"

/* The job is the ABI's quant spec: what a backend receives is what the harness parsed. */
typedef qcheck_quant_spec qc_quant_job;

/* recipe, profile (default: the recipe's first), rows, cols, in-dtype, layout and the recipe keys
 * of p (docs/spec/cli.md). strict: any other key is an error (the CLI); else other keys are the
 * case's and are ignored. 0, or 2 with err naming the key and the rule. Thread-safe. */
int qc_quant_job_from_params(const qc_params *p, int strict, qc_quant_job *j, char *err, size_t errlen);

int qc_quant_job_alloc(const qc_quant_job *j, qc_quantized *qz);
void qc_quant_job_free(qc_quantized *qz);
int qc_quant_job_fp4(const qc_quant_job *j);
size_t qc_quant_job_q_bytes(const qc_quant_job *j);
/* The scale grid [rows, cols] of the job's canonical layout (per-tensor [1, 1]). */
void qc_quant_job_scale_grid(const qc_quant_job *j, int64_t *rows, int64_t *cols);
size_t qc_quant_job_scale_bytes(const qc_quant_job *j, size_t nscales);
/* The bytes `qcheck quant` writes: q (FP4 packed two per byte, in place in qz->q) and *scale (malloc'd)
 * in the recipe's scale layout. 0, or 2 with err. */
int qc_quant_job_serialize(const qc_quant_job *j, qc_quantized *qz, size_t *q_bytes, uint8_t **scale,
                           size_t *scale_bytes, char *err, size_t errlen);
void qc_quant_job_deserialize(const qc_quant_job *j, const uint8_t *q, const uint8_t *scale, const uint8_t *gscale,
                              qc_quantized *qz);

/* ops/op_quant.c: the quant op with the policy changed after the job is set up (NULL: the
 * reference itself). Mutants use it to be the reference with one rule wrong; a tweak returns NULL,
 * or why job j on input x (rows * cols) has nothing it could change (the item is then declined,
 * not passed). */
typedef const char *(*qc_quant_tweak)(qc_quant_job *j, const float *x);
/* A change to the quantized result before it is serialized (NULL: none), for bugs in what a
 * kernel writes rather than in how it rounds. */
typedef void (*qc_quant_post)(const qc_quant_job *j, const float *x, qc_quantized *qz);
struct qc_op_call;
int qc_quant_op(struct qc_op_call *c, qc_quant_tweak tweak, qc_quant_post post);

#endif
