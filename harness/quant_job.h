/* quant_job.h: a quantization job (recipe, profile, shape, params) and its output bytes. */
#ifndef QC_QUANT_JOB_H
#define QC_QUANT_JOB_H

#include "cli.h"
#include "params.h"
#include "layouts/layouts.h"
#include "recipes/recipes.h"

typedef struct qc_quant_job {
    qc_recipe recipe;
    const qc_recipe_profile *profile;
    qc_recipe_policy policy;
    size_t rows, cols;
    qc_scale_layout layout;
    int has_static, has_gscale;
    float static_scale, gscale_encode;
    qc_format in_dtype;
    int has_sf_layout;   /* --layout MAP: the scales go through a layout map (reference/layouts) */
    qc_layout sf_layout; /* planned on the scale grid [scale rows, scale cols] */
} qc_quant_job;


/* --recipe, --shape, --profile, --in-dtype and every --param of a; 0 or 2 with a message. */
int qc_quant_job_setup(qc_args *a, qc_quant_job *j);
int qc_quant_job_alloc(const qc_quant_job *j, qc_quantized *qz);
void qc_quant_job_free(qc_quantized *qz);
int qc_quant_job_fp4(const qc_quant_job *j);
size_t qc_quant_job_scale_bytes(const qc_quant_job *j, size_t nscales);
int qc_quant_job_serialize(const qc_quant_job *j, qc_quantized *qz, size_t *q_bytes, uint8_t **scale,
                           size_t *scale_bytes);
void qc_quant_job_deserialize(const qc_quant_job *j, const uint8_t *q, const uint8_t *scale, const uint8_t *gscale,
                              qc_quantized *qz);

/* ops/op_quant.c: the quant op with the policy changed after the job is set up (NULL: the
 * reference itself). Mutants use it to be the reference with one rule wrong. */
typedef void (*qc_quant_tweak)(qc_quant_job *j);
struct qc_op_call;
int qc_quant_op(struct qc_op_call *c, qc_quant_tweak tweak);
/* The quant op with a backend's kernel in place of qcref_quant: kern fills qz (allocated, the
 * reference's canonical layouts) and returns 0, or nonzero to refuse (the op returns 1). */
typedef int (*qc_quant_kernel)(const qc_quant_job *j, const float *x, qc_quantized *qz);
int qc_quant_op_kernel(struct qc_op_call *c, qc_quant_kernel kern);
int qc_quant_job_from_params(const qc_params *p, qc_quant_job *j, char *err, size_t errlen);

#endif
