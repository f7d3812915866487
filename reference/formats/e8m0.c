/* e8m0.c: UE8M0 (float8_e8m0fnu), the MX block-scale format: value 2^(E-127) for E = 0..254,
 * 0xFF is NaN, no zero, no sign (docs/spec/formats.md §2.1). Libraries disagree on both directions, so every
 * rule of formats.md §2.2 (encode) and §2.3 (decode) is one case below, named after who uses it. */
#include <math.h>

#include "formats.h"

#define E8M0_NAN 0xFFu
#define E8M0_MAX 0xFEu

/* Fields of |x|: biased exponent e and mantissa f. */
typedef struct { uint32_t e, f; } fp32_fields;

static QC_HD fp32_fields fields(uint32_t bits)
{
    fp32_fields r = {(bits >> 23) & 0xFFu, bits & 0x7FFFFFu};
    return r;
}

/* Round half to even of the significand (1.f or 0.f) to an integer power of two; the implicit
 * bit is the LSB that decides the tie: 1.5*2^e rounds up, 0.5*2^-126 stays (torch fp8e8m0fnu_from_fp32_value). */
static QC_HD uint32_t linear_rne(fp32_fields v)
{
    uint32_t guard = (v.f >> 22) & 1u;
    uint32_t sticky = (v.f & 0x3FFFFFu) != 0;
    uint32_t lsb = v.e != 0;
    return v.e + (guard && (sticky || lsb));
}

/* ceil(log2 |x|) + 127, clamped below at 0: byte 0 is 2^-127, so an fp32 subnormal rounds up to
 * byte 1 only when it exceeds 2^-127 (bits 0x00400000). Same as CUDA's host path through bf16
 * with round-up, and torchao's _f32_to_e8m0_rceil. */
/* The nearest of the powers of two 2^(E-127), E >= 0, by value, ties (1.5*2^k) up: as linear_rne
 * for normals, but a subnormal rounds up only from 1.5*2^-127 (bits 0x00600000) on. ml_dtypes 0.7.0
 * rounds this way; 0.5-0.6 rounded every subnormal above 2^-127 up (docs/spec/formats.md §2.2, §14). */
static QC_HD uint32_t nearest_ties_up(fp32_fields v)
{
    return v.e ? linear_rne(v) : v.f >= 0x600000u;
}

static QC_HD uint32_t ceil_exponent(fp32_fields v)
{
    if (v.e == 0)
        return v.f > 0x400000u;
    return v.e + (v.f != 0);
}

static QC_HD uint32_t clamp_u(int64_t v, int64_t lo, int64_t hi)
{
    return (uint32_t)(v < lo ? lo : v > hi ? hi : v);
}

/* torchao to_mx FLOOR / CEIL / EVEN after the exponent is extracted (mx_tensor.py): subtract the
 * element's emax, clamp to [-127, 128] (128 + 127 = 255 "captures NaN"), NaN amax forced to 255. */
static QC_HD uint8_t torchao_biased(int64_t unbiased_exp, int emax, int is_nan)
{
    if (is_nan)
        return E8M0_NAN;
    return (uint8_t)(clamp_u(unbiased_exp - emax, -127, 128) + 127);
}

/* ceilf(log2f(|x|)) + 127 for a non-NaN |x|: 0 below 2^-127 (log2f(0) = -Inf included), `over`
 * above 2^127 (log2f(Inf) = Inf included). libm's log2f, as the real code calls it. */
static QC_HD uint8_t log2_ceil_byte(uint32_t abs_bits, uint8_t over)
{
    float l = ceilf(log2f(qc_f32_from_bits(abs_bits)));
    return (uint8_t)(l < -127.0f ? 0 : l > 127.0f ? over : (uint32_t)((int)l + 127));
}

QC_HD uint8_t qcref_e8m0_encode(float x, const qc_cast_policy *p)
{
    uint32_t bits = qc_f32_bits(x);
    uint32_t abs_bits = bits & QC_F32_ABS;
    fp32_fields v = fields(abs_bits);
    int is_nan = qc_bits_is_nan(bits);
    int nonfinite = v.e == 0xFFu;

    switch (p->e8m0) {
    case QC_E8M0_RNE: /* torch: sign ignored, zero -> 0x00, rounding 2^127 up gives NaN */
        return nonfinite ? E8M0_NAN : (uint8_t)(linear_rne(v) > 254 ? E8M0_NAN : linear_rne(v));
    case QC_E8M0_MLDTYPES:    /* no zero and no negatives: both are NaN; subnormals by value */
    case QC_E8M0_MLDTYPES_06: { /* as torch, but no zero and no negatives */
        uint32_t E = p->e8m0 == QC_E8M0_MLDTYPES ? nearest_ties_up(v) : linear_rne(v);
        if ((bits >> 31) || abs_bits == 0 || nonfinite)
            return E8M0_NAN;
        return (uint8_t)(E > 254 ? E8M0_NAN : E);
    }
    case QC_E8M0_CEIL: /* cvt.rp.satfinite: |x|, NaN -> 0xFF, Inf and overflow -> 0xFE */
        if (is_nan)
            return E8M0_NAN;
        return (uint8_t)(nonfinite ? E8M0_MAX : clamp_u(ceil_exponent(v), 0, 254));
    case QC_E8M0_FLOOR_SAT: /* cvt.rz.satfinite: exponent bits, fp32 subnormals -> 0 */
        if (is_nan)
            return E8M0_NAN;
        return (uint8_t)(nonfinite ? E8M0_MAX : v.e);
    case QC_E8M0_RCEIL: /* torchao: no saturation, 2^127*(1+ulp) -> 255, non-finite -> 0xFF */
        return nonfinite ? E8M0_NAN : (uint8_t)ceil_exponent(v);
    case QC_E8M0_DEEPGEMM: /* ceil_to_ue8m0: e + (f != 0) on the bits, clamped to [1, 254]; NaN and Inf -> 254 */
        return (uint8_t)clamp_u((int64_t)v.e + (v.f != 0), 1, 254);
    case QC_E8M0_FLOOR:
        return torchao_biased((int64_t)v.e - 127, p->e8m0_emax, is_nan);
    case QC_E8M0_TORCHAO_CEIL:
        return torchao_biased((int64_t)v.e - 127 + (v.f != 0), p->e8m0_emax, is_nan);
    case QC_E8M0_EVEN: {
        /* (bits + 2^(22 - mbits)) & exponent mask: the carry happens iff the mantissa rounds up
         * at mbits + 1 bits; the NaN mask is taken before, as torchao does. */
        uint32_t rounded = (abs_bits + (1u << (22 - p->e8m0_mbits))) & 0xFF800000u;
        return torchao_biased((int64_t)(rounded >> 23) - 127, p->e8m0_emax, is_nan);
    }
    case QC_E8M0_TRITON_UP: /* on the raw bits: a NaN 0x7FC00000 wraps to 0x00 */
        return (uint8_t)(((bits + 0x7FFFFFu) & 0x7F800000u) >> 23);
    case QC_E8M0_TRITON_DOWN:
        return (uint8_t)((bits & 0x7F800000u) >> 23);
    case QC_E8M0_LOG2_CEIL: {
        /* exp2(ceil(log2(|x|))) in fp32 (sglang _per_token_group_quant_8bit, modelopt MXFP4), read
         * as an e8m0 byte (its exponent field): below 2^-127 that is byte 0, above 2^127 exp2
         * overflows to +Inf, whose field is 0xFF. The float log2 can round 2^k*(1+2^-23) to
         * exactly k and so give floor instead of ceil (sglang #29954, formats.md §10 B11). */
        return is_nan ? E8M0_NAN : log2_ceil_byte(abs_bits, E8M0_NAN);
    }
    case QC_E8M0_TORCHAO_RCEIL:
        /* torch.clamp(torch.ceil(torch.log2(x)), -127, 127) + 127, NaN 255: the same float log2, so
         * just above a power of two the byte is floor's (golden/real/torchao-0.18.0 to_mx-*-rceil,
         * blocks above_pow2_*); the clamp sends Inf and overflow to 254 */
        return is_nan ? E8M0_NAN : log2_ceil_byte(abs_bits, E8M0_MAX);
    case QC_E8M0_MODELOPT: /* (ceil(max(log2(x), -127)) + 127).to(uint8): NaN gives 0, +Inf 255 */
    case QC_E8M0_MODELOPT_CPU: /* ... and +Inf 0 on the CPU (golden/real/modelopt-0.47.0 mxfp4-*) */
        if (is_nan)
            return 0;
        if (nonfinite)
            return p->e8m0 == QC_E8M0_MODELOPT ? 0xFF : 0;
        return log2_ceil_byte(abs_bits, 0xFF);
    case QC_E8M0_LOG2_FLOOR: { /* the float log2 rounds 2^k * (1 - 2^-24) up to k: floor is then k */
        if (nonfinite)
            return E8M0_NAN;
        float l = floorf(log2f(abs_bits ? qc_f32_from_bits(abs_bits) : 0x1p-126f)) - (float)p->e8m0_emax;
        return (uint8_t)(l > 127.0f ? E8M0_NAN : l < -127.0f ? 0 : (uint32_t)((int)l + 127));
    }
    default:
        return E8M0_NAN;
    }
}

QC_HD float qcref_e8m0_decode(uint8_t code, qc_e8m0_decoder d)
{
    uint32_t E = code;
    switch (d) {
    case QC_E8M0_DEC_SHIFT:
        return qc_f32_from_bits(E << 23);
    case QC_E8M0_DEC_EXP2: /* 2^(E-127): byte 0 is the fp32 subnormal 2^-127, 255 overflows to Inf */
        return E == 0 ? qc_f32_from_bits(0x00400000u) : qc_f32_from_bits(E << 23);
    case QC_E8M0_DEC_TRTLLM_RCP: /* exp2f_rcp: 1.0 for E = 0, else 2^(127 - E), exact (254 -> 2^-127, 255 -> 2^-128) */
        if (E == 0)
            return 1.0f;
        return E <= 253 ? qc_f32_from_bits((254u - E) << 23) : qc_f32_from_bits(0x00400000u >> (E - 254));
    case QC_E8M0_DEC_CUTEDSL_INV: /* max(254 - E, 0) << 23, forced to 0 for E = 0 */
        return E == 0 || E >= 254 ? 0.0f : qc_f32_from_bits((254u - E) << 23);
    case QC_E8M0_DEC_TORCHAO: /* clamp(min=F32_MIN_NORMAL) of the shifted byte (golden/real/torchao-0.18.0) */
        return qc_f32_from_bits(E == 0 ? 0x00800000u : E << 23);
    case QC_E8M0_DEC_TORCHAO_RCP: /* the rcp of _to_mx_rceil: NaN stays NaN, Inf's 254 -> 2^-127, 0 -> 1 */
        if (E == E8M0_NAN)
            return qc_f32_from_bits(QC_F32_QNAN);
        return E == 0 ? 1.0f : qc_f32_from_bits(E <= 253 ? (254u - E) << 23 : 0x00400000u);
    default: /* torch, CUDA, ml_dtypes */
        if (E == E8M0_NAN)
            return qc_f32_from_bits(QC_F32_QNAN);
        return E == 0 ? qc_f32_from_bits(0x00400000u) : qc_f32_from_bits(E << 23);
    }
}
