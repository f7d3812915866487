/* minifloat.c: fp32 <-> every sign-exponent-mantissa format (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz,
 * e2m1, e2m3, e3m2, bf16, f16) through one rounding rule and one table of special-value rules.
 *
 * Why one file and not one per family (docs/DESIGN.md suggested fp8.c, fp4.c, fp6.c, half.c): all of
 * them round the same way (docs/spec/formats.md §1.2: IEEE RNE into the target's grid), and they
 * differ only in (ebits, mbits, bias) and in which codes are special (qc_specials). Writing the
 * rounding once keeps the one rule in one place; the formats differ in data, not in code. */
#include "minifloat_impl.h"

QC_HD int qcref_is_minifloat(qc_format f)
{
    return f != QC_F32 && f != QC_E8M0 && f < QC_FORMAT_COUNT;
}

/* The descriptor table lives in minifloat_impl.h (QC_MINIFLOATS). */
QC_HD qc_minifloat qcref_minifloat(qc_format f)
{
    switch (f) {
#define QC_DESCRIBE(fmt, b, e, mb, bi, sp) \
    case fmt: { qc_minifloat m = {b, e, mb, bi, sp}; return m; }
        QC_MINIFLOATS(QC_DESCRIBE)
#undef QC_DESCRIBE
    default: {
        qc_minifloat none = {0, 0, 0, 0, QC_SPECIALS_NONE};
        return none;
    }
    }
}

QC_HD uint32_t qcref_max_magnitude(qc_minifloat m) { return max_magnitude(m); }

QC_HD uint32_t qcref_minifloat_encode(qc_minifloat m, float x, const qc_cast_policy *p)
{
    return minifloat_encode(m, x, p);
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
