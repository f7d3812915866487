/* mutants_recipe.c: quantizers with one rule of the recipe wrong (formats.md §10). */
#include "../generate.h"
#include "../quant_job.h"
#include "../registry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- what an input reaches: a mutant declines an input that cannot tell it from its profile ---- */

/* Whether x reaches boundary class k under job j (boundary.c). */
static int reaches(const qc_quant_job *j, const float *x, int k)
{
    unsigned classes = 0;
    return !qc_quant_job_coverage(j, x, &classes) && (classes >> k & 1);
}

/* The value each element of x has right before the clamp and the cast under job j
 * (qcref_quant_traced), malloc'd; NULL when out of memory. */
static float *traced(const qc_quant_job *j, const float *x)
{
    float *pre = malloc(sizeof *pre * (j->rows * j->cols));
    qc_quantized qz;
    if (!pre || qc_quant_job_alloc(j, &qz)) {
        free(pre);
        return NULL;
    }
    int rc = qcref_quant_traced(j->recipe, &j->policy, x, j->rows, j->cols, j->has_static ? &j->static_scale : NULL,
                                j->has_gscale ? &j->gscale_encode : NULL, &qz, pre);
    qc_quant_job_free(&qz);
    if (rc)
        memset(pre, 0, sizeof *pre * (j->rows * j->cols));
    return pre;
}

/* ---- the mutants ---- */

/* B20 (tilelang#3024): the clamp is fmaxf(fminf(q, max), -max), which turns NaN into +max, where
 * the profile propagates it (and the other way round where the profile swallows it). */
static void clamp_swallows_nan(qc_quant_job *j)
{
    j->policy.clamp = j->policy.clamp == QC_CLAMP_FMINF ? QC_CLAMP_TORCH : QC_CLAMP_FMINF;
    j->policy.clamp_max = j->policy.elem_max;
}

/* The two clamps part only on a NaN (both bound finite values and Inf), and only where the cast
 * writes the NaN one passes other than the max the other makes of it (FP4 and FP6 have no NaN
 * code). */
static const char *clamp_inert(const qc_quant_job *j, const float *x)
{
    const qc_recipe_policy *p = &j->policy;
    qc_quant_job m = *j;
    clamp_swallows_nan(&m);
    if (qcref_encode(p->elem, qcref_recipe_clamp(NAN, p), &p->cast) ==
        qcref_encode(p->elem, qcref_recipe_clamp(NAN, &m.policy), &p->cast))
        return "the cast writes a NaN as the code the other clamp makes of it";
    float *pre = traced(j, x);
    int hit = 0;
    for (size_t i = 0; pre && i < j->rows * j->cols && !hit; i++)
        hit = pre[i] != pre[i];
    free(pre);
    return !pre ? "out of memory tracing the scaled elements" : hit ? NULL : "no NaN reaches the clamp";
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

static const char *ties_inert(const qc_quant_job *j, const float *x)
{
    return reaches(j, x, QC_COV_TIES) ? NULL : "no element lands on a midpoint between two codes after its scale";
}

/* x * fl32(1/s) where the profile divides by an fp32 scale, or x / s where it multiplies
 * (formats.md §6.2: they round differently). */
static void mul_by_reciprocal(qc_quant_job *j)
{
    j->policy.elem_op = j->policy.elem_op == QC_ELEM_DIV ? QC_ELEM_MUL_RCP : QC_ELEM_DIV;
}

/* Where the swap changes no value: MX and NVFP4 do not use elem_op, a power-of-two scale makes
 * x / s and x * (1/s) the same number, under div.approx / div.full x / s already is
 * x * rcp.approx(s) (arith.h), and some scales have no input the two round apart (an eps-floored
 * scale is one fixed number, and its fl32(1/s) may be one of them). */
static const char *mul_by_reciprocal_inert(const qc_quant_job *j, const float *x)
{
    if (j->recipe > QC_RECIPE_BLOCK)
        return "the mx and nvfp4 recipes do not use elem_op";
    if (j->policy.pow2 != QC_POW2_NONE)
        return "power-of-two scales: x / s and x * (1/s) are the same value";
    if (j->policy.div_mode != QC_DIV_IEEE && j->policy.elem_op != QC_ELEM_MUL_MAX_AMAX)
        return "under an approximate div_mode x / s is x * rcp.approx(s) already";
    if (!reaches(j, x, QC_COV_ELEM_OP_SPLIT))
        return "no element that x / s and x * fl32(1/s) round to different codes under its scale";
    return NULL;
}

/* No clamp and a cast that overflows to NaN: a value just above the format's max after the scale
 * becomes NaN instead of max. */
static void no_saturation(qc_quant_job *j)
{
    j->policy.clamp = QC_CLAMP_NONE;
    j->policy.cast.overflow = QC_OVERFLOW_NAN;
}

/* The mutant writes NaN where an element leaves the format's range after its scale (|v| at or
 * past the round-to-nearest overflow threshold, Inf, or NaN) and the profile's clamp and cast
 * still write a number. With a dynamic scale that is not rounded down no finite input gets there
 * (the amax maps to the max or below), and a NaN or Inf amax makes the block NaN under both. FP6
 * and FP4 have no NaN or Inf code: their cast saturates whatever the overflow rule says
 * (formats.md §3.1, §3.2). */
static const char *no_saturation_inert(const qc_quant_job *j, const float *x)
{
    if (qcref_format_bits(j->policy.elem) < 8)
        return "FP6/FP4 elements have no NaN or Inf code: the cast saturates either way";
    double overflow = qc_format_overflow(j->policy.elem);
    float *pre = traced(j, x);
    int hit = 0;
    for (size_t i = 0; pre && i < j->rows * j->cols && !hit; i++)
        hit = !(fabs((double)pre[i]) < overflow) && !isnan(qcref_recipe_clamp(pre[i], &j->policy));
    free(pre);
    if (!pre)
        return "out of memory tracing the scaled elements";
    return hit ? NULL
               : "no element leaves the format's range after its scale where the profile's clamp keeps it a "
                 "number: no input reaches the cast's overflow";
}

/* The eps floor of the amax dropped (an all-zero group then takes the zero guard's path). */
static void eps_dropped(qc_quant_job *j) { j->policy.eps_at = QC_EPS_NONE; }

static const char *eps_inert(const qc_quant_job *j, const float *x)
{
    return reaches(j, x, QC_COV_EPS_FLOOR) ? NULL : "no block's amax is below the eps: the floor sets no scale";
}

/* B8-like: the e8m0 byte of an MX block rounded up where the profile floors (torchao FLOOR, OCP). */
static void e8m0_ceil_for_floor(qc_quant_job *j) { j->policy.pow2_policy.e8m0 = QC_E8M0_TORCHAO_CEIL; }

static const char *e8m0_ceil_for_floor_inert(const qc_quant_job *j, const float *x)
{
    (void)x;
    int floors = j->recipe >= QC_RECIPE_MXFP8 && j->recipe <= QC_RECIPE_MXFP4 && j->policy.mx_rule == QC_MX_E8M0_OF_AMAX &&
                 j->policy.pow2_policy.e8m0 == QC_E8M0_FLOOR;
    return floors ? NULL : "the profile's e8m0 byte is not floor(log2 amax) - emax";
}

static void unchanged(qc_quant_job *j) { (void)j; }

static const char *zero_block_inert(const qc_quant_job *j, const float *x)
{
    return reaches(j, x, QC_COV_ZERO_BLOCK) ? NULL : "no all-zero block";
}

/* B17's symptom: a zero element the mutant scales to NaN where the profile does not (0 * (1/0));
 * where the scale of an all-zero block is never 0 (an e8m0 byte is a power of two) there is none. */
static const char *zero_nan_inert(const qc_quant_job *j, const float *x)
{
    const char *why = zero_block_inert(j, x);
    if (why)
        return why;
    qc_quant_job m = *j;
    zero_block_nan(&m);
    float *own = traced(j, x), *bug = traced(&m, x);
    int hit = 0;
    for (size_t i = 0; own && bug && i < j->rows * j->cols && !hit; i++)
        hit = x[i] == 0.0f && bug[i] != bug[i] && own[i] == own[i];
    why = !own || !bug ? "out of memory tracing the scaled elements"
          : hit        ? NULL
                       : "no zero element becomes NaN without the eps and the zero guard (the block scale is never 0)";
    free(own), free(bug);
    return why;
}

static const char *zero_byte_inert(const qc_quant_job *j, const float *x)
{
    return j->recipe < QC_RECIPE_MXFP8 ? "fp32 scales: no scale byte of its own" : zero_block_inert(j, x);
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

static const char *fp4_only(const qc_quant_job *j, const float *x)
{
    (void)x;
    return qc_quant_job_fp4(j) ? NULL : "not an FP4 payload";
}

/* B19 inside the quantizer: the even element packed into the high nibble (codes swapped pairwise). */
static void nibbles_swapped(const qc_quant_job *j, const float *x, qc_quantized *qz)
{
    (void)x;
    for (size_t i = 0; i + 1 < j->rows * j->cols; i += 2) {
        uint8_t t = qz->q[i];
        qz->q[i] = qz->q[i + 1], qz->q[i + 1] = t;
    }
}

/* Why a mutant has nothing to change in job j on input x (declined, not passed): an empty tensor,
 * a policy the tweak leaves as it was (the profile already has the bug's rule), or the mutant's
 * own rule, asked of the job as the profile has it. */
static const char *inert(qc_quant_job *j, const float *x, void (*tweak)(qc_quant_job *),
                         const char *(*own)(const qc_quant_job *, const float *))
{
    qc_quant_job profile = *j;
    if (j->rows * j->cols == 0)
        return "an empty tensor: no element the bug could change";
    tweak(j);
    if (tweak != unchanged && !memcmp(&profile.policy, &j->policy, sizeof j->policy))
        return "the profile already has this rule";
    return own(&profile, x);
}

/* A quant mutant: the reference quantizer with `tweak` applied to its job (and `post` to its result). */
#define QUANT_MUTANT_POST(var, id, name, tweak, post, own, what)                                            \
    static const char *t_##name(qc_quant_job *j, const float *x) { return inert(j, x, tweak, own); }                          \
    static int m_##name(qc_op_call *c) { return qc_quant_op(c, t_##name, post); }                          \
    static const qc_impl impl_##name[] = {{"quant", m_##name}};                                            \
    const qc_backend var = {"mutant:" id, "mutants", what, NULL, .impls = impl_##name, .nimpls = 1};
#define QUANT_MUTANT(var, id, tweak, own, what) QUANT_MUTANT_POST(var, id, tweak, tweak, NULL, own, what)

QUANT_MUTANT(qc_mutant_clamp_nan, "clamp-swallows-nan", clamp_swallows_nan, clamp_inert,
             "NaN turned into +max by an fminf/fmaxf clamp, or the reverse (formats.md B20)")
QUANT_MUTANT(qc_mutant_zero_block_nan, "zero-block-nan", zero_block_nan, zero_nan_inert,
             "all-zero block divided by a zero scale gives NaN (formats.md B17)")
QUANT_MUTANT(qc_mutant_quant_ties_away, "quant-ties-away", quant_ties_away, ties_inert,
             "element cast ties rounded away from zero inside the quantizer (to even where the profile rounds away)")
QUANT_MUTANT(qc_mutant_quant_mul_rcp, "quant-mul-by-reciprocal", mul_by_reciprocal, mul_by_reciprocal_inert,
             "x * fl32(1/s) for x / s, or the reverse (formats.md §6.2)")
QUANT_MUTANT(qc_mutant_quant_no_saturation, "quant-no-saturation", no_saturation, no_saturation_inert,
             "no clamp before a cast that overflows to NaN")
QUANT_MUTANT(qc_mutant_quant_eps_dropped, "quant-eps-dropped", eps_dropped, eps_inert, "the eps floor of the amax dropped")
QUANT_MUTANT(qc_mutant_quant_e8m0_ceil, "quant-e8m0-ceil-for-floor", e8m0_ceil_for_floor, e8m0_ceil_for_floor_inert,
             "the MX scale byte rounded up where the profile floors (formats.md §2.2)")
QUANT_MUTANT_POST(qc_mutant_quant_zero_block_byte, "quant-zero-block-byte", zero_block_byte, unchanged, zero_block_byte,
                  zero_byte_inert, "an all-zero block's scale byte written as 1.0 (or 0 where the profile writes 1.0)")
QUANT_MUTANT_POST(qc_mutant_quant_nibbles, "quant-nibbles-swapped", nibbles_swapped, unchanged, nibbles_swapped,
                  fp4_only, "FP4 codes packed with the even element in the high nibble, inside the quantizer (formats.md B19)")
