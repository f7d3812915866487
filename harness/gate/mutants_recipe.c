/* mutants_recipe.c: quantizers with one rule of the recipe wrong (formats.md §10). */
#include "../quant_job.h"
#include "../registry.h"

/* B20 (tilelang#3024): the clamp is fmaxf(fminf(q, max), -max), which turns NaN into +max, where
 * the profile propagates it (and the other way round where the profile swallows it). */
static void clamp_swallows_nan(qc_quant_job *j)
{
    j->policy.clamp = j->policy.clamp == QC_CLAMP_FMINF ? QC_CLAMP_TORCH : QC_CLAMP_FMINF;
    j->policy.clamp_max = j->policy.elem_max;
}

/* B17 (pytorch/ao#4713, kernels-community#681): no eps and no zero guard, so an all-zero block
 * has scale 0 and its elements are 0 * (1/0) = NaN. */
static void zero_block_nan(qc_quant_job *j)
{
    j->policy.eps_at = QC_EPS_NONE;
    j->policy.zero_guard = 0;
    j->policy.mx_zero_guard = 0;
    j->policy.elem_op = QC_ELEM_MUL_RCP;
    j->policy.clamp = QC_CLAMP_NONE;
}

static int m_clamp(qc_op_call *c) { return qc_quant_op(c, clamp_swallows_nan); }
static int m_zero(qc_op_call *c) { return qc_quant_op(c, zero_block_nan); }

static const qc_impl impl_clamp[] = {{"quant", m_clamp}};
static const qc_impl impl_zero[] = {{"quant", m_zero}};

const qc_backend qc_mutant_clamp_nan = {"mutant:clamp-swallows-nan", "mutants",
                                        "NaN turned into +max by an fminf/fmaxf clamp, or the reverse (formats.md B20)",
                                        NULL, .impls = impl_clamp, .nimpls = 1};
const qc_backend qc_mutant_zero_block_nan = {"mutant:zero-block-nan", "mutants",
                                             "all-zero block divided by a zero scale gives NaN (formats.md B17)", NULL,
                                             .impls = impl_zero, .nimpls = 1};
