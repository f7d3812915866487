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
 * where the clamp passes NaN, and an Inf amax makes the scale Inf. Then no input tells the mutant
 * from the profile. FP6 and FP4 have no NaN or Inf code: their cast saturates whatever the overflow
 * rule says (formats.md §3.1, §3.2). */
static const char *no_saturation_inert(const qc_quant_job *j)
{
    const qc_recipe_policy *p = &j->policy;
    if (qcref_format_bits(p->elem) < 8)
        return "FP6/FP4 elements have no NaN or Inf code: the cast saturates either way";
    int rounded_up = p->pow2 == QC_POW2_NONE || p->pow2 == QC_POW2_LOG2_CEIL ||
                     (p->pow2 == QC_POW2_E8M0 && p->pow2_policy.e8m0 == QC_E8M0_CEIL);
    /* not MX: an MX scale byte can stay finite for an Inf amax (RCEIL's 254), and the clamp then
     * makes that Inf the max where the mutant makes it NaN */
    int dynamic = j->recipe <= QC_RECIPE_BLOCK && !j->has_static && rounded_up;
    if (dynamic && (p->clamp == QC_CLAMP_NONE || p->clamp == QC_CLAMP_TORCH))
        return "the scale maps the amax to the max and the clamp passes NaN: no input reaches the cast's overflow";
    return NULL;
}

/* The eps floor of the amax dropped (an all-zero group then takes the zero guard's path). */
static void eps_dropped(qc_quant_job *j) { j->policy.eps_at = QC_EPS_NONE; }

/* B8-like: the e8m0 byte of an MX block rounded up where the profile floors (torchao FLOOR, OCP). */
static void e8m0_ceil_for_floor(qc_quant_job *j) { j->policy.pow2_policy.e8m0 = QC_E8M0_TORCHAO_CEIL; }

static const char *e8m0_ceil_for_floor_inert(const qc_quant_job *j)
{
    int floors = j->recipe >= QC_RECIPE_MXFP8 && j->recipe <= QC_RECIPE_MXFP4 && j->policy.mx_rule == QC_MX_E8M0_OF_AMAX &&
                 j->policy.pow2_policy.e8m0 == QC_E8M0_FLOOR;
    return floors ? NULL : "the profile's e8m0 byte is not floor(log2 amax) - emax";
}

static void unchanged(qc_quant_job *j) { (void)j; }

static const char *byte_scales_only(const qc_quant_job *j)
{
    return j->recipe >= QC_RECIPE_MXFP8 ? NULL : "fp32 scales: no scale byte of its own";
}

/* The scale byte of an all-zero block written as 127 (2^0, e8m0) or 0x38 (1.0, e4m3) instead of
 * what the profile writes there (0 for most): the zero block's byte is a rule of its own. */
static void zero_block_byte(const qc_quant_job *j, const float *x, qc_quantized *qz)
{
    size_t g = (size_t)j->policy.group, nb = j->cols / g;
    uint8_t one = j->recipe == QC_RECIPE_NVFP4 ? 0x38 : 127;
    for (size_t b = 0; b < j->rows * nb; b++) {
        int zero = 1;
        for (size_t k = 0; k < g && zero; k++)
            zero = x[(b / nb) * j->cols + (b % nb) * g + k] == 0.0f;
        if (zero)
            qz->scale_u8[b] = qz->scale_u8[b] == one ? 0 : one;
    }
}

static const char *fp4_only(const qc_quant_job *j) { return qc_quant_job_fp4(j) ? NULL : "not an FP4 payload"; }

/* B19 inside the quantizer: the even element packed into the high nibble (codes swapped pairwise). */
static void nibbles_swapped(const qc_quant_job *j, const float *x, qc_quantized *qz)
{
    (void)x;
    for (size_t i = 0; i + 1 < j->rows * j->cols; i += 2) {
        uint8_t t = qz->q[i];
        qz->q[i] = qz->q[i + 1], qz->q[i + 1] = t;
    }
}

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
    return tweak == unchanged || memcmp(&before, &j->policy, sizeof before) ? NULL : "the profile already has this rule";
}

/* A quant mutant: the reference quantizer with `tweak` applied to its job (and `post` to its result). */
#define QUANT_MUTANT_POST(var, id, name, tweak, post, own, what)                                            \
    static const char *t_##name(qc_quant_job *j) { return inert(j, tweak, own); }                          \
    static int m_##name(qc_op_call *c) { return qc_quant_op(c, t_##name, post); }                          \
    static const qc_impl impl_##name[] = {{"quant", m_##name}};                                            \
    const qc_backend var = {"mutant:" id, "mutants", what, NULL, .impls = impl_##name, .nimpls = 1};
#define QUANT_MUTANT(var, id, tweak, own, what) QUANT_MUTANT_POST(var, id, tweak, tweak, NULL, own, what)

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
QUANT_MUTANT(qc_mutant_quant_e8m0_ceil, "quant-e8m0-ceil-for-floor", e8m0_ceil_for_floor, e8m0_ceil_for_floor_inert,
             "the MX scale byte rounded up where the profile floors (formats.md §2.2)")
QUANT_MUTANT_POST(qc_mutant_quant_zero_block_byte, "quant-zero-block-byte", zero_block_byte, unchanged, zero_block_byte,
                  byte_scales_only, "an all-zero block's scale byte written as 1.0 (or 0 where the profile writes 1.0)")
QUANT_MUTANT_POST(qc_mutant_quant_nibbles, "quant-nibbles-swapped", nibbles_swapped, unchanged, nibbles_swapped,
                  fp4_only, "FP4 codes packed with the even element in the high nibble, inside the quantizer (formats.md B19)")
