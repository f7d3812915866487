/* formats.c: the dispatch from a format to its codec, and the format-wide defaults. */
#include "minifloat_impl.h"

QC_HD qc_cast_policy qcref_default_policy(void)
{
    qc_cast_policy p;
    p.overflow = QC_OVERFLOW_NAN;
    p.nan_sign = QC_NAN_KEEP;
    p.nan_code = QC_NANCODE_ONES;
    p.ties = QC_TIES_EVEN;
    p.nonan = QC_NONAN_POSMAX;
    p.zero_sign = QC_ZERO_KEEP;
    p.e8m0 = QC_E8M0_RNE;
    p.e8m0_emax = 0;
    p.e8m0_mbits = 3;
    p.e8m0_decoder = QC_E8M0_DEC_TORCH;
    return p;
}

QC_HD int qcref_format_bits(qc_format f)
{
    if (f == QC_F32)
        return 32;
    if (f == QC_E8M0)
        return 8;
    return qcref_minifloat(f).bits;
}

/* e8m0 is tested before the switch: the dispatch stays one compare for the scale format. Each
 * minifloat case inlines the codec with a constant descriptor. */
QC_HD uint32_t qcref_encode(qc_format f, float x, const qc_cast_policy *p)
{
    if (f == QC_E8M0)
        return qcref_e8m0_encode(x, p);
    switch (f) {
#define QC_ENCODE(fmt, b, e, mb, bi, sp) \
    case fmt: { const qc_minifloat m = {b, e, mb, bi, sp}; return minifloat_encode(m, x, p); }
        QC_MINIFLOATS(QC_ENCODE)
#undef QC_ENCODE
    default:
        return qc_f32_bits(x); /* f32 */
    }
}

QC_HD float qcref_decode(qc_format f, uint32_t code, const qc_cast_policy *p)
{
    if (f == QC_F32)
        return qc_f32_from_bits(code);
    if (f == QC_E8M0)
        return qcref_e8m0_decode((uint8_t)code, p->e8m0_decoder);
    return qcref_minifloat_decode(qcref_minifloat(f), code);
}
