/* minifloat.c: fp32 <-> every sign-exponent-mantissa format (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz,
 * e2m1, e2m3, e3m2, bf16, f16) through one rounding rule and one table of special-value rules.
 *
 * Why one file and not one per family (DESIGN.md suggested fp8.c, fp4.c, fp6.c, half.c): all of
 * them round the same way (spec §1.2: "equivalent to IEEE RNE into the target grid"), and they
 * differ only in (ebits, mbits, bias) and in which codes are special (qc_specials). Writing the
 * rounding once keeps the one rule in one place; the formats differ in data, not in code. */
#include "formats.h"

QC_HD int qcref_is_minifloat(qc_format f)
{
    return f != QC_F32 && f != QC_E8M0 && f < QC_FORMAT_COUNT;
}

/* Spec §1.1 (fp8), §3.1 (fp4, fp6); bf16 and f16 are IEEE binary16-style. */
QC_HD qc_minifloat qcref_minifloat(qc_format f)
{
    qc_minifloat m = {16, 8, 7, 127, QC_SPECIALS_IEEE}; /* bf16 */
    switch (f) {
    case QC_F16:      m.ebits = 5; m.mbits = 10; m.bias = 15; break;
    case QC_E4M3FN:   m.bits = 8; m.ebits = 4; m.mbits = 3; m.bias = 7; m.specials = QC_SPECIALS_FN; break;
    case QC_E4M3FNUZ: m.bits = 8; m.ebits = 4; m.mbits = 3; m.bias = 8; m.specials = QC_SPECIALS_FNUZ; break;
    case QC_E5M2:     m.bits = 8; m.ebits = 5; m.mbits = 2; m.bias = 15; break;
    case QC_E5M2FNUZ: m.bits = 8; m.ebits = 5; m.mbits = 2; m.bias = 16; m.specials = QC_SPECIALS_FNUZ; break;
    case QC_E2M1:     m.bits = 4; m.ebits = 2; m.mbits = 1; m.bias = 1; m.specials = QC_SPECIALS_NONE; break;
    case QC_E2M3:     m.bits = 6; m.ebits = 2; m.mbits = 3; m.bias = 1; m.specials = QC_SPECIALS_NONE; break;
    case QC_E3M2:     m.bits = 6; m.ebits = 3; m.mbits = 2; m.bias = 3; m.specials = QC_SPECIALS_NONE; break;
    default: break;
    }
    return m;
}

QC_HD uint32_t qcref_max_magnitude(qc_minifloat m)
{
    uint32_t all = (1u << (m.bits - 1)) - 1; /* every bit but the sign */
    switch (m.specials) {
    case QC_SPECIALS_IEEE: return all - (1u << m.mbits); /* exponent all ones is Inf/NaN */
    case QC_SPECIALS_FN:   return all - 1;               /* S.1111.111 is NaN */
    default:               return all;                   /* fnuz: 0x7F is finite; fp4/fp6: no specials */
    }
}

/* Rounds a finite magnitude (fp32 bits, sign clear) to the grid of m under the tie rule and
 * returns the magnitude code E<<mbits | M. The result may exceed qcref_max_magnitude(m); a carry
 * out of the mantissa bumps the exponent by itself because the code is formed by addition. */
static QC_HD uint32_t round_magnitude(qc_minifloat m, uint32_t abs_bits, qc_ties ties)
{
    int fexp = (int)(abs_bits >> 23);
    uint64_t sig = abs_bits & 0x7FFFFFu;
    if (fexp != 0)
        sig |= 0x800000u;
    else
        fexp = 1; /* fp32 subnormal: same quantum as the smallest normal binade */

    /* value = sig * 2^(fexp - 150). The target binade is the input's, but never below the
     * target's smallest normal one, where the grid becomes the subnormal grid. */
    int emin = 1 - m.bias;
    int binade = fexp - 127 > emin ? fexp - 127 : emin;
    int shift = (binade - m.mbits) - (fexp - 150); /* fp32 significand bits that fall off */
    if (shift > 40)
        return 0; /* below a quarter of the smallest subnormal under every tie rule */

    uint64_t q = sig >> shift;
    uint64_t rem = sig & ((1ull << shift) - 1);
    uint64_t half = 1ull << (shift - 1);
    int up;
    switch (ties) {
    case QC_TIES_ZERO: up = rem > half; break;
    case QC_TIES_AWAY: up = rem >= half; break;
    default:           up = rem > half || (rem == half && (q & 1)); break;
    }
    return ((uint32_t)(binade - emin) << m.mbits) + (uint32_t)(q + (uint64_t)up);
}

/* NaN into a format without NaN codes: spec §3.2 table and §11. */
static QC_HD uint32_t nonan_code(qc_minifloat m, uint32_t bits, qc_nonan rule)
{
    uint32_t signbit = 1u << (m.bits - 1);
    uint32_t neg = bits >> 31;
    switch (rule) {
    case QC_NONAN_POSMAX:
        return qcref_max_magnitude(m);
    case QC_NONAN_MLDTYPES: /* quiet_NaN() is the -0 code, negation flips its sign bit */
        return neg ? 0 : signbit;
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
static QC_HD uint32_t nan_code(qc_minifloat m, uint32_t bits, const qc_cast_policy *p)
{
    uint32_t signbit = 1u << (m.bits - 1);
    uint32_t sign = (p->nan_sign == QC_NAN_KEEP && (bits >> 31)) ? signbit : 0;
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
        }
    }
    return sign | expo | mant;
}

QC_HD uint32_t qcref_minifloat_encode(qc_minifloat m, float x, const qc_cast_policy *p)
{
    uint32_t bits = qc_f32_bits(x);
    uint32_t abs_bits = bits & QC_F32_ABS;
    uint32_t signbit = 1u << (m.bits - 1);
    uint32_t sign = (bits >> 31) ? signbit : 0;
    uint32_t maxmag = qcref_max_magnitude(m);

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
    }
    return sign | mag;
}

/* v * 2^k for a small integer v, exact whenever the result is representable (all our codes are). */
static QC_HD float scale_exact(uint32_t v, int k)
{
    float p2 = k >= -126 ? qc_f32_from_bits((uint32_t)(k + 127) << 23) : qc_f32_from_bits(1u << (k + 149));
    return (float)v * p2;
}

QC_HD float qcref_minifloat_decode(qc_minifloat m, uint32_t code)
{
    uint32_t signbit = 1u << (m.bits - 1);
    uint32_t sign = (code & signbit) ? QC_F32_SIGN : 0;
    uint32_t mag = code & (signbit - 1);
    uint32_t e = mag >> m.mbits;
    uint32_t f = mag & ((1u << m.mbits) - 1);
    uint32_t eall = (1u << m.ebits) - 1;

    int is_nan = (m.specials == QC_SPECIALS_FN && mag == (signbit - 1)) ||
                 (m.specials == QC_SPECIALS_FNUZ && code == signbit) ||
                 (m.specials == QC_SPECIALS_IEEE && e == eall && f != 0);
    if (is_nan) {
        /* 8-bit and narrower: ml_dtypes' sign | canonical quiet NaN; bf16/f16: the exact IEEE
         * widening (payload shifted, not quieted), as numpy and ml_dtypes do. */
        if (m.bits <= 8)
            return qc_f32_from_bits(sign | QC_F32_QNAN);
        return qc_f32_from_bits(sign | QC_F32_INF | (f << (23 - m.mbits)));
    }
    if (m.specials == QC_SPECIALS_IEEE && e == eall)
        return qc_f32_from_bits(sign | QC_F32_INF);

    float v = e == 0 ? scale_exact(f, 1 - m.bias - m.mbits)
                     : scale_exact((1u << m.mbits) | f, (int)e - m.bias - m.mbits);
    return qc_f32_from_bits(qc_f32_bits(v) | sign);
}
