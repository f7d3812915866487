/* mutants_gemm.c: quantized GEMMs with one rule wrong (formats.md §9, layouts.md §10). */
#include "../gemm_op.h"
#include "mutants.h"
#include "../registry.h"

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

static int m_scale_block(qc_op_call *c) { return qc_gemm_op(c, scale_block_off_by_one); }

static const qc_impl impl_scale_block[] = {{"gemm", m_scale_block}};

const qc_backend qc_mutant_gemm_scale_block = {
    "mutant:gemm-scale-block-off-by-one", "mutants",
    "weight scale of K block g read from block g+1 (layouts.md T-CK1, T-DG5)", NULL, .impls = impl_scale_block, .nimpls = 1};
