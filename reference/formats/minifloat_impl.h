/* minifloat_impl.h: the rounding rule and the special-value rules of every minifloat, as inline
 * functions, private to reference/formats. minifloat.c defines the public codec with them, and
 * formats.c's dispatch inlines them with a constant descriptor per format, so every shift and
 * mask folds to an immediate (the scalar reference has a throughput target: ci/bench.sh). */
#ifndef QCREF_MINIFLOAT_IMPL_H
#define QCREF_MINIFLOAT_IMPL_H

#include "formats.h"

/* docs/spec/formats.md §1.1 (fp8), §3.1 (fp4, fp6); bf16 and f16 are IEEE binary16-style.
 * X(format, bits, ebits, mbits, bias, specials) */
#define QC_MINIFLOATS(X)                                   \
    X(QC_BF16, 16, 8, 7, 127, QC_SPECIALS_IEEE)             \
    X(QC_F16, 16, 5, 10, 15, QC_SPECIALS_IEEE)              \
    X(QC_E4M3FN, 8, 4, 3, 7, QC_SPECIALS_FN)                \
    X(QC_E4M3FNUZ, 8, 4, 3, 8, QC_SPECIALS_FNUZ)            \
    X(QC_E5M2, 8, 5, 2, 15, QC_SPECIALS_IEEE)               \
    X(QC_E5M2FNUZ, 8, 5, 2, 16, QC_SPECIALS_FNUZ)           \
    X(QC_E2M1, 4, 2, 1, 1, QC_SPECIALS_NONE)                \
    X(QC_E2M3, 6, 2, 3, 1, QC_SPECIALS_NONE)                \
    X(QC_E3M2, 6, 3, 2, 3, QC_SPECIALS_NONE)

QC_INLINE QC_HD uint32_t max_magnitude(qc_minifloat m)
{
    uint32_t all = (1u << (m.bits - 1)) - 1; /* every bit but the sign */
    switch (m.specials) {
    case QC_SPECIALS_IEEE: return all - (1u << m.mbits); /* exponent all ones is Inf/NaN */
    case QC_SPECIALS_FN:   return all - 1;               /* S.1111.111 is NaN */
    default:               return all;                   /* fnuz: 0x7F is finite; fp4/fp6: no specials */
    }
}

/* Rounds a finite magnitude (fp32 bits, sign clear) to the grid of m under the tie rule and
 * returns the magnitude code E<<mbits | M. The result may exceed max_magnitude(m); a carry
 * out of the mantissa bumps the exponent by itself because the code is formed by addition. */
QC_INLINE QC_HD uint32_t round_magnitude(qc_minifloat m, uint32_t abs_bits, qc_ties ties)
{
    int fexp = (int)(abs_bits >> 23);
    uint32_t sig = abs_bits & 0x7FFFFFu;
    if (fexp != 0)
        sig |= 0x800000u;
    else
        fexp = 1; /* fp32 subnormal: same quantum as the smallest normal binade */

    /* value = sig * 2^(fexp - 150). The target binade is the input's, but never below the
     * target's smallest normal one, where the grid becomes the subnormal grid. */
    int emin = 1 - m.bias;
    int binade = fexp - 127 > emin ? fexp - 127 : emin;
    int shift = (binade - m.mbits) - (fexp - 150); /* fp32 significand bits that fall off */
    if (shift > 24)
        return 0; /* sig < 2^24 <= half: below half the smallest subnormal (shift > 24 only on the subnormal grid) */

    uint32_t q = sig >> shift; /* 13 <= shift <= 24: every step fits 32 bits */
    uint32_t rem = sig & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    int up;
    switch (ties) {
    case QC_TIES_ZERO: up = rem > half; break;
    case QC_TIES_AWAY: up = rem >= half; break;
    default:           up = rem > half || (rem == half && (q & 1)); break;
    }
    return ((uint32_t)(binade - emin) << m.mbits) + q + (uint32_t)up;
}

/* NaN into a format without NaN codes: formats.md §3.2 table and §11. */
QC_INLINE QC_HD uint32_t nonan_code(qc_minifloat m, uint32_t bits, qc_nonan rule)
{
    uint32_t signbit = 1u << (m.bits - 1);
    uint32_t neg = bits >> 31;
    switch (rule) {
    case QC_NONAN_POSMAX:
        return max_magnitude(m);
    case QC_NONAN_MLDTYPES: /* quiet_NaN() is the -0 code, negation flips its sign bit */
        return neg ? 0 : signbit;
    case QC_NONAN_SIGNBIT:
        return signbit;
    case QC_NONAN_TORCHAO: {
        /* torchao _f32_to_fpx_unpacked sends NaN down its "normal" branch: add the rebias and the
         * magic rounding constant plus the odd bit, shift, truncate to uint8, OR the sign. */
        uint32_t abs_bits = bits & QC_F32_ABS;
        uint32_t drop = 23u - (uint32_t)m.mbits;
        uint32_t odd = (abs_bits >> drop) & 1u;
        uint32_t add = (uint32_t)((m.bias - 127) * (1 << 23)) + ((1u << (drop - 1)) - 1u);
        uint32_t code = ((abs_bits + add + odd) >> drop) & 0xFFu;
        return (code | (neg ? signbit : 0)) & ((1u << m.bits) - 1);
    }
    default:
        return 0;
    }
}

/* NaN into a format with NaN codes. */
QC_INLINE QC_HD uint32_t nan_code(qc_minifloat m, uint32_t bits, const qc_cast_policy *p)
{
    uint32_t signbit = 1u << (m.bits - 1);
    uint32_t sign = p->nan_sign == QC_NAN_NEGATIVE || (p->nan_sign == QC_NAN_KEEP && (bits >> 31)) ? signbit : 0;
    uint32_t expo = ((1u << m.ebits) - 1) << m.mbits;
    uint32_t mant = (1u << m.mbits) - 1;
    if (m.specials == QC_SPECIALS_FNUZ)
        return signbit; /* 0x80, the only NaN */
    if (m.specials == QC_SPECIALS_IEEE) {
        if (p->nan_code == QC_NANCODE_QUIET) {
            mant = 1u << (m.mbits - 1);
        } else if (p->nan_code == QC_NANCODE_PAYLOAD) {
            mant = (bits & 0x7FFFFFu) >> (23 - m.mbits);
            if (mant == 0)
                mant = 1; /* a NaN must stay a NaN */
        } else if (p->nan_code == QC_NANCODE_QUIET_PAYLOAD) {
            mant = ((bits & 0x7FFFFFu) >> (23 - m.mbits)) | (1u << (m.mbits - 1));
        }
    }
    return sign | expo | mant;
}

QC_INLINE QC_HD uint32_t encode_general(qc_minifloat m, float x, const qc_cast_policy *p)
{
    uint32_t bits = qc_f32_bits(x);
    uint32_t abs_bits = bits & QC_F32_ABS;
    uint32_t signbit = 1u << (m.bits - 1);
    uint32_t sign = (bits >> 31) ? signbit : 0;
    uint32_t maxmag = max_magnitude(m);

    if (qc_bits_is_nan(bits))
        return m.specials == QC_SPECIALS_NONE ? nonan_code(m, bits, p->nonan) : nan_code(m, bits, p);

    uint32_t mag = abs_bits == QC_F32_INF ? maxmag + 1 : round_magnitude(m, abs_bits, p->ties);
    if (mag > maxmag) {
        if (m.specials == QC_SPECIALS_NONE || p->overflow == QC_OVERFLOW_SATFINITE)
            return sign | maxmag;
        if (m.specials == QC_SPECIALS_FNUZ)
            return signbit; /* the NaN code */
        if (m.specials == QC_SPECIALS_FN)
            return sign | (maxmag + 1); /* S.1111.111 */
        return sign | (((1u << m.ebits) - 1) << m.mbits); /* IEEE: Inf */
    }
    if (mag == 0) {
        if (m.specials == QC_SPECIALS_FNUZ || p->zero_sign == QC_ZERO_DROP)
            return 0;
        if (p->zero_sign == QC_ZERO_MODELOPT && abs_bits == 0)
            return signbit;
        if (p->zero_sign == QC_ZERO_EXACT_POSITIVE && abs_bits == 0)
            return 0;
    }
    return sign | mag;
}


/* The common case first: under RNE a value of the normal range strictly below the largest
 * finite value neither overflows nor underflows, so its code is the rebiased bits rounded by one
 * addition (half - 1 + the kept LSB; ml_dtypes RoundBitsToNearestEven) and one shift, the carry
 * bumping the exponent by itself. The same rule as round_magnitude, specialised; everything else
 * (subnormal range, overflow, Inf, NaN, other tie rules) takes the general path. */
QC_INLINE QC_HD uint32_t minifloat_encode(qc_minifloat m, float x, const qc_cast_policy *p)
{
    uint32_t bits = qc_f32_bits(x);
    uint32_t abs_bits = bits & QC_F32_ABS;
    uint32_t drop = 23u - (uint32_t)m.mbits;
    uint32_t rebias = (uint32_t)(127 - m.bias) << 23;
    uint32_t lo = rebias + (1u << 23);                /* fp32 bits of the smallest normal */
    uint32_t hi = (max_magnitude(m) << drop) + rebias; /* fp32 bits of the largest finite */
    if (abs_bits - lo < hi - lo && p->ties == QC_TIES_EVEN) {
        uint32_t sign = (bits >> 31) << (m.bits - 1);
        uint32_t add = (1u << (drop - 1)) - 1 + ((abs_bits >> drop) & 1u);
        return sign | ((abs_bits + add - rebias) >> drop);
    }
    return encode_general(m, x, p);
}

#endif
