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

/* Ties of the element cast rounded away from zero (formats.md §3.2 for FP4; the same slip in fp8). */
static void quant_ties_away(qc_quant_job *j) { j->policy.cast.ties = QC_TIES_AWAY; }

/* x * fl32(1/s) where the profile divides by an fp32 scale, or x / s where it multiplies
 * (formats.md §6.2: they round differently; MX scales are powers of two, where both are exact). */
static void mul_by_reciprocal(qc_quant_job *j)
{
    j->policy.elem_op = j->policy.elem_op == QC_ELEM_DIV ? QC_ELEM_MUL_RCP : QC_ELEM_DIV;
}

/* No clamp and a cast that overflows to NaN: a value just above the format's max after the scale
 * becomes NaN instead of max. */
static void no_saturation(qc_quant_job *j)
{
    j->policy.clamp = QC_CLAMP_NONE;
    j->policy.cast.overflow = QC_OVERFLOW_NAN;
}

/* The eps floor of the amax dropped (an all-zero group then takes the zero guard's path). */
static void eps_dropped(qc_quant_job *j) { j->policy.eps_at = QC_EPS_NONE; }

/* A quant mutant: the reference quantizer with `tweak` applied to its job. */
#define QUANT_MUTANT(var, id, tweak, what)                                                                  \
    static int m_##tweak(qc_op_call *c) { return qc_quant_op(c, tweak); }                                  \
    static const qc_impl impl_##tweak[] = {{"quant", m_##tweak}};                                          \
    const qc_backend var = {"mutant:" id, "mutants", what, NULL, .impls = impl_##tweak, .nimpls = 1};

QUANT_MUTANT(qc_mutant_clamp_nan, "clamp-swallows-nan", clamp_swallows_nan,
             "NaN turned into +max by an fminf/fmaxf clamp, or the reverse (formats.md B20)")
QUANT_MUTANT(qc_mutant_zero_block_nan, "zero-block-nan", zero_block_nan,
             "all-zero block divided by a zero scale gives NaN (formats.md B17)")
QUANT_MUTANT(qc_mutant_quant_ties_away, "quant-ties-away", quant_ties_away,
             "element cast ties rounded away from zero inside the quantizer")
QUANT_MUTANT(qc_mutant_quant_mul_rcp, "quant-mul-by-reciprocal", mul_by_reciprocal,
             "x * fl32(1/s) for x / s, or the reverse (formats.md §6.2)")
QUANT_MUTANT(qc_mutant_quant_no_saturation, "quant-no-saturation", no_saturation,
             "no clamp before a cast that overflows to NaN")
QUANT_MUTANT(qc_mutant_quant_eps_dropped, "quant-eps-dropped", eps_dropped, "the eps floor of the amax dropped")
