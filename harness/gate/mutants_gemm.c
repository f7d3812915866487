/* mutants_gemm.c: quantized GEMMs with one rule wrong (formats.md §9, layouts.md §10). */
#include "../gemm_op.h"
#include "mutants.h"
#include "../registry.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* layouts.md §10 T-CK1 (ROCm/rocm-libraries#7920: b_scale advanced at the wrong K step) and T-DG5
 * (TIRx-kernels#5): the weight scale of K block g is read from block g + 1 (the last block keeps
 * its own), so every block but the last is scaled by its neighbour's scale (mutants.h). */
void qc_mutant_scale_block_shift(const qc_quant_job *jb, qc_quantized *qb)
{
    size_t rows, per_row;
    const qc_recipe_policy *p = &jb->policy;
    if (jb->recipe == QC_RECIPE_BLOCK) {
        rows = (qb->rows + (size_t)p->block_r - 1) / (size_t)p->block_r;
        per_row = (qb->cols + (size_t)p->block_c - 1) / (size_t)p->block_c;
    } else if (jb->recipe >= QC_RECIPE_MXFP8 || jb->recipe == QC_RECIPE_TOKEN_GROUP) {
        rows = qb->rows;
        per_row = qb->cols / (size_t)p->group;
    } else
        return; /* one scale along K: no block to miss */
    for (size_t r = 0; r < rows; r++)
        for (size_t g = 0; g + 1 < per_row; g++) {
            size_t i = r * per_row + g;
            if (jb->recipe >= QC_RECIPE_MXFP8)
                qb->scale_u8[i] = qb->scale_u8[i + 1];
            else
                qb->scale_f32[i] = qb->scale_f32[i + 1];
        }
}

static void scale_block_off_by_one(qc_gemm_kind kind, const qc_quant_job *jb, qc_quantized *qb)
{
    (void)kind;
    qc_mutant_scale_block_shift(jb, qb);
}

/* One K block (or one scale along K: the kind's group_k is 0): no neighbouring block to read. */
static const char *one_k_block(qc_op_call *c)
{
    const qc_gemm_kind_info *ki = qcref_gemm_kind(qcref_gemm_kind_from_name(qc_param_or(c->params, "kind", "")));
    int64_t k;
    if (ki && ki->group_k == 0)
        return "one scale along K: no neighbouring K block";
    if (ki && qc_op_param_int(c, "k", 0, 0, INT64_MAX, &k) == 0 && k <= ki->group_k)
        return "K is one scale block: no neighbouring K block";
    return NULL;
}

static int m_scale_block(qc_op_call *c)
{
    const char *why = one_k_block(c);
    if (why) {
        snprintf(c->err, c->errlen, "%s", why);
        return QC_OP_DECLINED;
    }
    return qc_gemm_op(c, scale_block_off_by_one, NULL);
}

static const qc_impl impl_scale_block[] = {{"gemm", m_scale_block}};

const qc_backend qc_mutant_gemm_scale_block = {
    "mutant:gemm-scale-block-off-by-one", "mutants",
    "weight scale of K block g read from block g+1 (layouts.md T-CK1, T-DG5)", NULL, .impls = impl_scale_block, .nimpls = 1};

/* The output rounded toward zero instead of to nearest (a bf16 conversion that drops the low half
 * of the fp32 accumulator, or a cvt.rz): the code of y64 one step nearer zero wherever RNE rounded
 * away from zero. */
static void out_toward_zero(const double *y64, int64_t count, qc_format out, qc_tensor *c)
{
    qc_cast_policy p = qcref_default_policy();
    for (int64_t e = 0; c && e < count; e++) {
        uint32_t code = qcref_gemm_round_out(y64[e], out);
        double v = qcref_decode(out, code, &p);
        if (v != v || !(fabs(v) > fabs(y64[e])))
            continue;
        code -= 1; /* sign-magnitude: one code nearer zero (Inf becomes the largest finite) */
        if (c->storage == QC_ST_U16)
            ((uint16_t *)c->data)[e] = (uint16_t)code;
        else
            ((uint32_t *)c->data)[e] = code;
    }
}

static int m_toward_zero(qc_op_call *c)
{
    if (!strcmp(qc_param_or(c->params, "out", "bf16"), "f32") || !strcmp(qc_param_or(c->params, "kind", ""), "int8_rowwise")) {
        snprintf(c->err, c->errlen, "an f32 output is the accumulator itself, and int8_rowwise has its own epilogue: "
                                    "no output rounding to get wrong");
        return QC_OP_DECLINED;
    }
    return qc_gemm_op(c, NULL, out_toward_zero);
}

static const qc_impl impl_toward_zero[] = {{"gemm", m_toward_zero}};

const qc_backend qc_mutant_gemm_out_toward_zero = {
    "mutant:gemm-out-toward-zero", "mutants", "bf16/f16 output rounded toward zero instead of to nearest",
    NULL, .impls = impl_toward_zero, .nimpls = 1};

/* Every fp32 weight scale one ulp too large (a scale computed as amax * fl32(1/448) where the
 * profile divides, or read back through a bf16 round trip and re-widened): a relative error of
 * 2^-23 that hides under any fp32 error bound (it passes all 192 fp8_rowwise_gemm instances there,
 * so it declines the bound models: their runs would show nothing); model sm90-wgmma sees it. */
void qc_mutant_scale_ulp_up(const qc_quant_job *jb, qc_quantized *qb)
{
    (void)jb;
    for (size_t i = 0; qb->scale_f32 && i < qb->nscales; i++)
        if (qb->scale_f32[i] > 0 && qb->scale_f32[i] < 3.4e38f)
            qb->scale_f32[i] = qc_f32_from_bits(qc_f32_bits(qb->scale_f32[i]) + 1);
}

static void scale_ulp_up(qc_gemm_kind kind, const qc_quant_job *jb, qc_quantized *qb)
{
    (void)kind;
    qc_mutant_scale_ulp_up(jb, qb);
}

static int m_scale_ulp(qc_op_call *c)
{
    const char *kind = qc_param_or(c->params, "kind", ""), *model = qc_param_or(c->params, "model", "exact");
    if (strcmp(kind, "fp8_tensor") && strcmp(kind, "fp8_rowwise") && strcmp(kind, "fp8_block")) {
        snprintf(c->err, c->errlen, "kind %s: its weight scales are not fp32", kind);
        return QC_OP_DECLINED;
    }
    if (strncmp(model, "sm90-wgmma", 10)) { /* a bound allows far more than one ulp of a scale */
        snprintf(c->err, c->errlen, "model %s: one ulp of a scale hides under its bound; the bug shows bit-exactly "
                                    "(model sm90-wgmma)", model);
        return QC_OP_DECLINED;
    }
    return qc_gemm_op(c, scale_ulp_up, NULL);
}

static const qc_impl impl_scale_ulp[] = {{"gemm", m_scale_ulp}};

const qc_backend qc_mutant_gemm_scale_ulp = {
    "mutant:gemm-weight-scale-ulp", "mutants", "every fp32 weight scale one ulp too large (caught bit-exactly by "
    "model sm90-wgmma; under the fp32 bound it hides)", NULL, .impls = impl_scale_ulp, .nimpls = 1};
