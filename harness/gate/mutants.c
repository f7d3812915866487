/* mutants.c: deliberately broken kernels, one per real bug class of the spec's bug tables
 * (docs/spec/formats.md §10, docs/spec/layouts.md §10). A gate that cannot fail is a defect: `qcheck run --backend
 * mutants` must FAIL every one of them, and tests/test_mutants enforces it.
 *
 * Each mutant is what a real kernel did: the right computation with one wrong rule. Most are
 * the reference op with one policy swapped for the wrong one; the rest post-process the
 * reference output exactly where the real bug differs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../registry.h"
#include "transforms/transforms.h"

static int is_format(qc_op_call *c, const char *key, const char *fmt)
{
    return strcmp(qc_param_or(c->params, key, ""), fmt) == 0;
}

/* A mutant of one format declines an instance of another: it is the reference there, and an item
 * it did not change is no evidence that the gate catches it. */
static int other_format(qc_op_call *c, const char *key, const char *fmt, const char *fmt2)
{
    if (is_format(c, key, fmt) || (fmt2 && is_format(c, key, fmt2)))
        return 0;
    snprintf(c->err, c->errlen, "the bug is in %s=%s%s%s; this instance has %s=%s", key, fmt, fmt2 ? " or " : "",
             fmt2 ? fmt2 : "", key, qc_param_or(c->params, key, "(none)"));
    return 1;
}

/* Runs the reference op with params[key] = val, where params[fmt_key] == fmt (any when NULL; an
 * instance of another format is declined). */
static int reference_with(qc_op_call *c, const char *op, const char *fmt_key, const char *fmt, const char *key,
                          const char *val)
{
    qc_params p = *c->params;
    if (fmt && other_format(c, fmt_key, fmt, NULL))
        return QC_OP_DECLINED;
    qc_params_set(&p, key, val);
    qc_op_call m = *c;
    m.params = &p;
    return qc_op_find(op)->reference(&m);
}

/* formats.md §3.2: microxcaling rounds FP4 ties away from zero where PTX/torchao round to even. */
static int e2m1_ties_away(qc_op_call *c) { return reference_with(c, "cast", "to", "e2m1", "ties", "away"); }

/* formats.md §2.3, B9/B10: a shift decoder reads e8m0 byte 0 as +0.0 (and 255 as +Inf). */
static int e8m0_byte0_zero(qc_op_call *c) { return reference_with(c, "decode", "from", "e8m0", "e8m0-decode", "shift"); }

/* formats.md §10 B11: ceil_to_ue8m0 through float log2 (sglang #29954) instead of the bits. */
static int e8m0_ceil_log2(qc_op_call *c) { return reference_with(c, "cast", "to", "e8m0", "e8m0", "log2-ceil"); }

/* formats.md §10 B8: the e8m0 scale rounded to nearest where the profile says ceil (or floor). */
static int e8m0_wrong_rounding(qc_op_call *c)
{
    const char *rule = is_format(c, "e8m0", "rne") ? "ceil" : "rne";
    return reference_with(c, "cast", "to", "e8m0", "e8m0", rule);
}

/* formats.md §3.3, B19: even element in the high nibble. */
static int nibble_swap(qc_op_call *c)
{
    return reference_with(c, "fp4_pack", NULL, NULL, "swap", is_format(c, "swap", "1") ? "0" : "1");
}

/* formats.md §10 B1: E4M3FN overflow decided at 448 instead of the RNE threshold 464, so
 * (448, 464] becomes NaN (or stays 448 under satfinite, where the bug hides). */
static int e4m3_overflow_off_by_one(qc_op_call *c)
{
    if (other_format(c, "to", "e4m3fn", NULL))
        return QC_OP_DECLINED;
    int rc = qc_op_find("cast")->reference(c);
    qc_tensor *y = qc_set_find(c->out, "y");
    const qc_tensor *x = qc_set_find((qc_tensor_set *)c->in, "x");
    if (rc || !y || !x || !is_format(c, "to", "e4m3fn"))
        return rc;
    qc_cast_policy p;
    if (qc_params_policy(c->params, QC_E4M3FN, &p, c->err, c->errlen))
        return 2;
    const float *xs = x->data;
    uint8_t *ys = y->data;
    for (int64_t i = 0; i < qc_tensor_numel(x); i++)
        if (fabsf(xs[i]) > 448.0f && fabsf(xs[i]) <= 464.0f && p.overflow == QC_OVERFLOW_NAN)
            ys[i] |= 0x7F;
    return 0;
}

/* formats.md §10 B4 (onnx PR #5764): a negative value that underflows keeps its sign in FNUZ,
 * producing 0x80, which is the NaN code. */
static int fnuz_keeps_negzero(qc_op_call *c)
{
    if (other_format(c, "to", "e4m3fnuz", "e5m2fnuz"))
        return QC_OP_DECLINED;
    int rc = qc_op_find("cast")->reference(c);
    qc_tensor *y = qc_set_find(c->out, "y");
    const qc_tensor *x = qc_set_find((qc_tensor_set *)c->in, "x");
    if (rc || !y || !x || !(is_format(c, "to", "e4m3fnuz") || is_format(c, "to", "e5m2fnuz")))
        return rc;
    const float *xs = x->data;
    uint8_t *ys = y->data;
    for (int64_t i = 0; i < qc_tensor_numel(x); i++)
        if (ys[i] == 0 && signbit(xs[i]))
            ys[i] = 0x80;
    return 0;
}

/* formats.md §10 B3 (triton#10745): FNUZ byte 0x80 decoded as -0.0 instead of NaN. */
static int fnuz_nan_as_negzero(qc_op_call *c)
{
    if (other_format(c, "from", "e4m3fnuz", "e5m2fnuz"))
        return QC_OP_DECLINED;
    int rc = qc_op_find("decode")->reference(c);
    qc_tensor *y = qc_set_find(c->out, "y");
    const qc_tensor *codes = qc_set_find((qc_tensor_set *)c->in, "codes");
    if (rc || !y || !codes || !(is_format(c, "from", "e4m3fnuz") || is_format(c, "from", "e5m2fnuz")))
        return rc;
    float *ys = y->data;
    const uint8_t *cs = codes->data;
    for (int64_t i = 0; i < qc_tensor_numel(codes); i++)
        if (cs[i] == 0x80)
            ys[i] = -0.0f;
    return 0;
}

/* Whether x (f32) holds a NaN that the positive canonical NaN changes: a negative one where the
 * profile keeps the sign, any where it writes the negative NaN. */
static int changed_nan(const qc_tensor *x, qc_nan_sign rule)
{
    const float *v = x->data;
    for (int64_t i = 0; x->storage == QC_ST_F32 && i < qc_tensor_numel(x); i++)
        if (v[i] != v[i] && (signbit(v[i]) || rule == QC_NAN_NEGATIVE))
            return 1;
    return 0;
}

/* formats.md §1.3 / §13: a kernel that canonicalises NaN (PTX) where the profile keeps the sign.
 * Only formats with a NaN of either sign can tell (e8m0 and FNUZ have one NaN code, FP4/FP6 none). */
static int nan_sign_dropped(qc_op_call *c)
{
    static const char *const signed_nan[] = {"e4m3fn", "e5m2", "bf16", "f16"};
    const qc_tensor *x = qc_set_find((qc_tensor_set *)c->in, "x");
    const char *to = qc_param_or(c->params, "to", "");
    int f = qc_format_from_name(to), has = 0;
    for (size_t i = 0; i < sizeof signed_nan / sizeof signed_nan[0]; i++)
        has |= !strcmp(to, signed_nan[i]);
    qc_cast_policy p = qcref_default_policy();
    if (!has)
        snprintf(c->err, c->errlen, "%s has no NaN of either sign", to);
    else if (f >= 0 && !qc_params_policy(c->params, (qc_format)f, &p, c->err, c->errlen) && p.nan_sign == QC_NAN_CANONICAL)
        snprintf(c->err, c->errlen, "the profile already has this rule");
    else if (!x || !changed_nan(x, p.nan_sign))
        snprintf(c->err, c->errlen, "no NaN input whose sign the positive canonical NaN changes");
    else
        return reference_with(c, "cast", NULL, NULL, "nan", "canonical");
    return QC_OP_DECLINED;
}

/* formats.md §1.3: E5M2 cast without satfinite (Inf on overflow) where the profile saturates. */
static int e5m2_no_satfinite(qc_op_call *c) { return reference_with(c, "cast", "to", "e5m2", "overflow", "nan"); }

/* formats.md §3.2: NaN into E2M1 written as code 0 (DeepGEMM/modelopt) instead of the profile's rule. */
static int e2m1_nan_zero(qc_op_call *c) { return reference_with(c, "cast", "to", "e2m1", "nonan", "zero"); }

/* A hand-written fp32 -> bf16 that drops the low 16 bits (round toward zero) instead of RNE:
 * the classic shortcut of converters written without cvt.rn.bf16.f32. */
static int bf16_truncates(qc_op_call *c)
{
    if (other_format(c, "to", "bf16", NULL))
        return QC_OP_DECLINED;
    int rc = qc_op_find("cast")->reference(c);
    qc_tensor *y = qc_set_find(c->out, "y");
    const qc_tensor *x = qc_set_find((qc_tensor_set *)c->in, "x");
    if (rc || !y || !x || !is_format(c, "to", "bf16"))
        return rc;
    const float *xs = x->data;
    uint16_t *ys = y->data;
    for (int64_t i = 0; i < qc_tensor_numel(x); i++)
        if (!isnan(xs[i]))
            ys[i] = (uint16_t)(qc_f32_bits(xs[i]) >> 16);
    return 0;
}

/* formats.md §7.1 / B3: normalize_e4m3fn_to_e4m3fnuz without zeroing 0x80: FN -0 becomes the
 * FNUZ NaN in the weights. */
static int fnuz_normalize_keeps_0x80(qc_op_call *c)
{
    int rc = qc_op_find("fnuz_normalize")->reference(c);
    const qc_tensor *in = qc_set_find((qc_tensor_set *)c->in, "w");
    qc_tensor *w = qc_set_find(c->out, "w");
    if (rc || !in || !w)
        return rc ? rc : 2;
    for (size_t i = 0; i < w->nbytes && i < in->nbytes; i++)
        if (((const uint8_t *)in->data)[i] == 0x80)
            ((uint8_t *)w->data)[i] = 0x80;
    return 0;
}

/* formats.md §7.2: the dequantization in the other precision (fp16 in sglang/vLLM, fp32 in AMD ATOM). */
static int requantize_other_intermediate(qc_op_call *c)
{
    const qc_tensor *scale = qc_set_find((qc_tensor_set *)c->in, "scale");
    if (scale && scale->storage == QC_ST_F32 && !qcref_requant_applies(scale->data, (size_t)qc_tensor_numel(scale))) {
        snprintf(c->err, c->errlen, "no shard is requantized (the last scale is the loader's sentinel): no intermediate");
        return QC_OP_DECLINED;
    }
    const char *mid = is_format(c, "intermediate", "fp32") ? "fp16" : "fp32";
    return reference_with(c, "requantize_with_max_scale", NULL, NULL, "intermediate", mid);
}

/* formats.md §8.1: e2m1 code 8 decoded as the other zero (+0.0 in DeepSeek, -0.0 in sglang's tool). */
static int e2m1_zero8_swapped(qc_op_call *c)
{
    const char *neg = is_format(c, "zero8_negative", "1") ? "0" : "1";
    return reference_with(c, "cast_e2m1fn_to_e4m3fn", NULL, NULL, "zero8_negative", neg);
}

/* formats.md §8.1: the checkpoint's tile pinned wrongly (32 for 128, or 128 for 32). */
static int e2m1_tile_swapped(qc_op_call *c)
{
    const char *tile = is_format(c, "tile", "32") ? "128" : "32";
    return reference_with(c, "cast_e2m1fn_to_e4m3fn", NULL, NULL, "tile", tile);
}

/* An instance whose inputs are all empty has no element a bug could change: declined. */
static int declines_empty(qc_op_call *c)
{
    for (int i = 0; i < c->in->n; i++)
        if (qc_tensor_numel(&c->in->t[i]) > 0)
            return 0;
    snprintf(c->err, c->errlen, "an empty tensor: no element the bug could change");
    return 1;
}

#define MUTANT(id, opname, fn, what)                                                                           \
    static int nonempty_##fn(qc_op_call *c) { return declines_empty(c) ? QC_OP_DECLINED : fn(c); }            \
    static const qc_impl impl_##fn[] = {{opname, nonempty_##fn}};                                              \
    static const qc_backend mutant_##fn = {"mutant:" id, "mutants", what, NULL, .impls = impl_##fn, .nimpls = 1};

MUTANT("e2m1-ties-away", "cast", e2m1_ties_away, "FP4 ties rounded away from zero (formats.md §3.2)")
MUTANT("e8m0-byte0-as-zero", "decode", e8m0_byte0_zero, "e8m0 byte 0 decoded as +0, 255 as +Inf (formats.md B9)")
MUTANT("e8m0-ceil-via-log2", "cast", e8m0_ceil_log2, "e8m0 ceil through float log2 (formats.md B11)")
MUTANT("e8m0-wrong-rounding", "cast", e8m0_wrong_rounding, "e8m0 rounding mode swapped (formats.md B8)")
MUTANT("fp4-nibbles-swapped", "fp4_pack", nibble_swap, "FP4 even element in the high nibble (formats.md B19)")
MUTANT("e4m3-overflow-at-448", "cast", e4m3_overflow_off_by_one, "E4M3 overflow threshold 448 not 464 (formats.md B1)")
MUTANT("fnuz-keeps-negzero", "cast", fnuz_keeps_negzero, "FNUZ negative underflow gives 0x80 = NaN (formats.md B4)")
MUTANT("fnuz-nan-as-negzero", "decode", fnuz_nan_as_negzero, "FNUZ 0x80 decoded as -0.0 (formats.md B3)")
MUTANT("nan-sign-dropped", "cast", nan_sign_dropped, "NaN sign canonicalised against the profile (formats.md §1.3)")
MUTANT("e5m2-no-satfinite", "cast", e5m2_no_satfinite, "E5M2 overflow to Inf under a satfinite profile (formats.md §1.3)")
MUTANT("e2m1-nan-as-zero", "cast", e2m1_nan_zero, "NaN into E2M1 written as 0 (formats.md §3.2)")
MUTANT("bf16-truncates", "cast", bf16_truncates, "fp32 -> bf16 by dropping the low half (round toward zero)")
MUTANT("fnuz-normalize-keeps-0x80", "fnuz_normalize", fnuz_normalize_keeps_0x80,
       "e4m3fn -> e4m3fnuz normalize leaves 0x80 (FN -0), the FNUZ NaN (formats.md §7.1)")
MUTANT("requantize-other-intermediate", "requantize_with_max_scale", requantize_other_intermediate,
       "shards dequantized in fp32 where the profile says fp16, or the reverse (formats.md §7.2)")
MUTANT("e2m1-zero8-sign-swapped", "cast_e2m1fn_to_e4m3fn", e2m1_zero8_swapped,
       "e2m1 code 8 converted as the other zero (formats.md §8.1)")
MUTANT("e2m1-tile-swapped", "cast_e2m1fn_to_e4m3fn", e2m1_tile_swapped,
       "e2m1 -> e4m3 tiles of 32 for 128, or 128 for 32 (formats.md §8.1)")

extern const qc_backend qc_mutant_sf_unpadded_rows, qc_mutant_sf_unpadded_stride, qc_mutant_sf_column_major;
extern const qc_backend qc_mutant_clamp_nan, qc_mutant_zero_block_nan, qc_mutant_quant_ties_away,
    qc_mutant_quant_mul_rcp, qc_mutant_quant_no_saturation, qc_mutant_quant_eps_dropped, qc_mutant_quant_e8m0_ceil,
    qc_mutant_quant_zero_block_byte, qc_mutant_quant_nibbles;
extern const qc_backend qc_mutant_gemm_scale_block, qc_mutant_gemm_out_toward_zero, qc_mutant_gemm_scale_ulp;
extern const qc_backend qc_mutant_moe_gate_up, qc_mutant_moe_rsf_twice, qc_mutant_moe_no_clamp, qc_mutant_moe_mask_zero,
    qc_mutant_moe_scale_block, qc_mutant_moe_scale_ulp;

const qc_backend *const qc_mutant_backends[] = {
    &mutant_e2m1_ties_away,   &mutant_e8m0_byte0_zero,     &mutant_e8m0_ceil_log2,
    &mutant_e8m0_wrong_rounding, &mutant_nibble_swap,      &mutant_e4m3_overflow_off_by_one,
    &mutant_fnuz_keeps_negzero, &mutant_fnuz_nan_as_negzero, &mutant_nan_sign_dropped,
    &mutant_e5m2_no_satfinite, &mutant_e2m1_nan_zero,     &mutant_bf16_truncates, &mutant_fnuz_normalize_keeps_0x80,
    &mutant_requantize_other_intermediate, &mutant_e2m1_zero8_swapped, &mutant_e2m1_tile_swapped,
    &qc_mutant_sf_unpadded_rows, &qc_mutant_sf_unpadded_stride, &qc_mutant_sf_column_major,
    &qc_mutant_clamp_nan,        &qc_mutant_zero_block_nan, &qc_mutant_quant_ties_away, &qc_mutant_quant_mul_rcp,
    &qc_mutant_quant_no_saturation, &qc_mutant_quant_eps_dropped, &qc_mutant_quant_e8m0_ceil,
    &qc_mutant_quant_zero_block_byte, &qc_mutant_quant_nibbles,
    &qc_mutant_gemm_scale_block, &qc_mutant_gemm_out_toward_zero, &qc_mutant_gemm_scale_ulp, &qc_mutant_moe_gate_up, &qc_mutant_moe_rsf_twice, &qc_mutant_moe_no_clamp,
    &qc_mutant_moe_mask_zero,    &qc_mutant_moe_scale_block, &qc_mutant_moe_scale_ulp,
};
const int qc_mutant_backend_count = (int)(sizeof qc_mutant_backends / sizeof qc_mutant_backends[0]);
