/* mutants_recipe.c: quantizers with one rule of the recipe wrong (formats.md §10). */
#include "../quant_job.h"
#include "../registry.h"

#include <string.h>

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

/* Ties of the element cast rounded the other way: away from zero where the profile rounds to even
 * (formats.md §3.2 for FP4; the same slip in fp8), to even where it rounds away (OCP / ml_dtypes). */
static void quant_ties_away(qc_quant_job *j)
{
    j->policy.cast.ties = j->policy.cast.ties == QC_TIES_AWAY ? QC_TIES_EVEN : QC_TIES_AWAY;
}

/* x * fl32(1/s) where the profile divides by an fp32 scale, or x / s where it multiplies
 * (formats.md §6.2: they round differently). */
static void mul_by_reciprocal(qc_quant_job *j)
{
    j->policy.elem_op = j->policy.elem_op == QC_ELEM_DIV ? QC_ELEM_MUL_RCP : QC_ELEM_DIV;
}

/* Where the swap changes no value: MX and NVFP4 do not use elem_op, a power-of-two scale makes
 * x / s and x * (1/s) the same number, and under div.approx / div.full x / s already is
 * x * rcp.approx(s) (arith.h). */
static const char *mul_by_reciprocal_inert(const qc_quant_job *j)
{
    if (j->recipe > QC_RECIPE_BLOCK)
        return "the mx and nvfp4 recipes do not use elem_op";
    if (j->policy.pow2 != QC_POW2_NONE)
        return "power-of-two scales: x / s and x * (1/s) are the same value";
    if (j->policy.div_mode != QC_DIV_IEEE && j->policy.elem_op != QC_ELEM_MUL_MAX_AMAX)
        return "under an approximate div_mode x / s is x * rcp.approx(s) already";
    return NULL;
}

/* No clamp and a cast that overflows to NaN: a value just above the format's max after the scale
 * becomes NaN instead of max. */
static void no_saturation(qc_quant_job *j)
{
    j->policy.clamp = QC_CLAMP_NONE;
    j->policy.cast.overflow = QC_OVERFLOW_NAN;
}

/* With a dynamic scale from the amax that is not rounded down, x / s exceeds the max by at most a
 * few fp32 roundings, which the cast rounds back to the max; a NaN or Inf input gives NaN either way
 * where the clamp passes NaN. Then no input tells the mutant from the profile. */
static const char *no_saturation_inert(const qc_quant_job *j)
{
    const qc_recipe_policy *p = &j->policy;
    int rounded_up = p->pow2 == QC_POW2_NONE || p->pow2 == QC_POW2_LOG2_CEIL ||
                     (p->pow2 == QC_POW2_E8M0 && p->pow2_policy.e8m0 == QC_E8M0_CEIL);
    int dynamic = j->recipe <= QC_RECIPE_BLOCK && !j->has_static && rounded_up;
    if (dynamic && (p->clamp == QC_CLAMP_NONE || p->clamp == QC_CLAMP_TORCH))
        return "the scale maps the amax to the max and the clamp passes NaN: no input reaches the cast's overflow";
    return NULL;
}

/* The eps floor of the amax dropped (an all-zero group then takes the zero guard's path). */
static void eps_dropped(qc_quant_job *j) { j->policy.eps_at = QC_EPS_NONE; }

static const char *always(const qc_quant_job *j) { (void)j; return NULL; }

/* Why a mutant has nothing to change in job j (declined, not passed): an empty tensor, a policy
 * the tweak leaves as it was (the profile already has the bug's rule), or the tweak's own rule. */
static const char *inert(qc_quant_job *j, void (*tweak)(qc_quant_job *), const char *(*own)(const qc_quant_job *))
{
    qc_recipe_policy before = j->policy;
    if (j->rows * j->cols == 0)
        return "an empty tensor: no element the bug could change";
    const char *why = own(j);
    if (why)
        return why;
    tweak(j);
    return memcmp(&before, &j->policy, sizeof before) ? NULL : "the profile already has this rule";
}

/* A quant mutant: the reference quantizer with `tweak` applied to its job. */
#define QUANT_MUTANT(var, id, tweak, own, what)                                                             \
    static const char *t_##tweak(qc_quant_job *j) { return inert(j, tweak, own); }                        \
    static int m_##tweak(qc_op_call *c) { return qc_quant_op(c, t_##tweak); }                              \
    static const qc_impl impl_##tweak[] = {{"quant", m_##tweak}};                                          \
    const qc_backend var = {"mutant:" id, "mutants", what, NULL, .impls = impl_##tweak, .nimpls = 1};

QUANT_MUTANT(qc_mutant_clamp_nan, "clamp-swallows-nan", clamp_swallows_nan, always,
             "NaN turned into +max by an fminf/fmaxf clamp, or the reverse (formats.md B20)")
QUANT_MUTANT(qc_mutant_zero_block_nan, "zero-block-nan", zero_block_nan, always,
             "all-zero block divided by a zero scale gives NaN (formats.md B17)")
QUANT_MUTANT(qc_mutant_quant_ties_away, "quant-ties-away", quant_ties_away, always,
             "element cast ties rounded away from zero inside the quantizer (to even where the profile rounds away)")
QUANT_MUTANT(qc_mutant_quant_mul_rcp, "quant-mul-by-reciprocal", mul_by_reciprocal, mul_by_reciprocal_inert,
             "x * fl32(1/s) for x / s, or the reverse (formats.md §6.2)")
QUANT_MUTANT(qc_mutant_quant_no_saturation, "quant-no-saturation", no_saturation, no_saturation_inert,
             "no clamp before a cast that overflows to NaN")
QUANT_MUTANT(qc_mutant_quant_eps_dropped, "quant-eps-dropped", eps_dropped, always, "the eps floor of the amax dropped")
