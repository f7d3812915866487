/* tanh_cr.h: tanh of an fp32 argument, correctly rounded to fp32 (round to nearest even), libm-free.
 *
 * gelu_tanh's tanh (reference/ops/moe_act.c); the rules are exp_cr.h's and erf_cr.h's: plain IEEE
 * double arithmetic (no fused multiply-add), QC_HD, the same bits on the host, the device and the CPU
 * emulation (docs/DECISIONS.md "exp is qcheck's own").
 *
 * tanh is odd: the work is on a = |x|, the sign goes on the fp32 result. With y = 2a (exact) and
 * E = e^y - 1, tanh(a) = E / (E + 2) = 1 - 2 / (e^y + 1). For a >= 9.0625, 1 - tanh(a) < 2 e^-2a
 * < 2^-25, half an ulp below 1: tanh rounds to 1 (the smallest such fp32 is 0x41102cb4, 9.0109). Below,
 * a double d (qcref_tanh_f64_core), with u = 2^-53:
 * - a < 0.5625: E = y P(y), P(y) = sum_{n>=0} y^n / (n + 1)! (all positive: no cancellation) to n = 20
 *   (truncation below 2^-62) in Horner form; d = E / (E + 2). A running error analysis of the Horner
 *   steps (coefficients within u) bounds P's error by 1.9 u; with the product, the sum and the
 *   quotient (E's error passes on times 2 / (E + 2) < 1) d is within 4.9 u relative; bound 2^-50.
 * - 0.5625 <= a < 9.0625: d = 1 - 2 / (e^y + 1), e^y by qcref_exp_f64_core (4 u; y is an fp32). tanh
 *   is at least 0.51, so 2 / (e^y + 1) is at most 0.97 tanh and its 6 u (e^y, the sum, the quotient)
 *   pass on as at most 5.8 u, with the final subtraction 6.8 u; bound 2^-50.
 * Measured against MPFR on every 4093rd input: 2^-51.2 (a < 0.5625), 2^-51.8 (above).
 * fl32(d) is the correctly rounded tanh wherever d lies farther than 2^-50 d from every fp32 rounding
 * boundary (Ziv's rounding test). Where it does not, an accurate path decides: E in double-double
 * by the same series at t = y 2^-m <= 1/16 and m doublings E(2t) = E(t) (E(t) + 2) (no cancellation;
 * each at most doubles the relative error, m <= 9), then E / (E + 2): about 2^-95 (measured on every
 * 40009th input: 2^-103.6). tests/test_exp_cr.c (tanh) checks with MPFR the 18 inputs within 2^-48
 * of a boundary (2 take the accurate path), a sample of the rest and of the accurate path alone, and
 * its full tier every input. */
#ifndef QCREF_TANH_CR_H
#define QCREF_TANH_CR_H

#include "exp2_cr.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QCREF_TANH_ONE 9.0625f /* tanh(a) rounds to 1 from here on */

/* The relative error bound of qcref_tanh_f64_core (see above). */
static inline QC_HD double qcref_tanh_f64_bound(double a)
{
    (void)a;
    return 0x1p-50;
}

/* tanh(x) in double, within 2^-50 relative, for |x| < 9.0625. */
static inline QC_HD double qcref_tanh_f64_core(float x)
{
    float a = qc_f32_from_bits(qc_f32_bits(x) & QC_F32_ABS);
    double y = 2.0 * (double)a, d;
    if (a < 0.5625f) {
        double p = 0x1.71b8ef6dcf572p-66; /* 1 / (n + 1)!, n = 20 ... 0 */
        p = p * y + 0x1.e542ba4020225p-62;
        p = p * y + 0x1.2f49b46814157p-57;
        p = p * y + 0x1.6827863b97d97p-53;
        p = p * y + 0x1.952c77030ad4ap-49;
        p = p * y + 0x1.ae7f3e733b81fp-45;
        p = p * y + 0x1.ae7f3e733b81fp-41;
        p = p * y + 0x1.93974a8c07c9dp-37;
        p = p * y + 0x1.6124613a86d09p-33;
        p = p * y + 0x1.1eed8eff8d898p-29;
        p = p * y + 0x1.ae64567f544e4p-26;
        p = p * y + 0x1.27e4fb7789f5cp-22;
        p = p * y + 0x1.71de3a556c734p-19;
        p = p * y + 0x1.a01a01a01a01ap-16;
        p = p * y + 0x1.a01a01a01a01ap-13;
        p = p * y + 0x1.6c16c16c16c17p-10;
        p = p * y + 0x1.1111111111111p-7;
        p = p * y + 0x1.5555555555555p-5;
        p = p * y + 0x1.5555555555555p-3;
        p = p * y + 0.5;
        p = p * y + 1.0;
        double e = y * p;
        d = e / (e + 2.0);
    } else {
        d = 1.0 - 2.0 / (qcref_exp_f64_core(2.0f * a) + 1.0);
    }
    return x < 0 ? -d : d;
}

/* ---- the accurate path, for the few inputs whose d lies too near a rounding boundary ---- */

/* fl32(tanh(x)) for |x| < 9.0625 from E = e^(2a) - 1 in double-double (see above). */
static inline QC_HD float qcref_tanhf_accurate(float x)
{
    double t = 2.0 * (double)qc_f32_from_bits(qc_f32_bits(x) & QC_F32_ABS), h, l, sh, sl;
    int m = 0;
    for (; t > 0.0625; m++)
        t *= 0.5; /* exact */
    double q = 0x1.952c77030ad4ap-49; /* 1 / (n + 1)!, n = 16 ... 9 in double (below 2^-108 of P) */
    q = q * t + 0x1.ae7f3e733b81fp-45;
    q = q * t + 0x1.ae7f3e733b81fp-41;
    q = q * t + 0x1.93974a8c07c9dp-37;
    q = q * t + 0x1.6124613a86d09p-33;
    q = q * t + 0x1.1eed8eff8d898p-29;
    q = q * t + 0x1.ae64567f544e4p-26;
    q = q * t + 0x1.27e4fb7789f5cp-22;
    h = q, l = 0; /* then n = 8 ... 0 with 1 / (n + 1)! as hi + lo */
    qc_dd_mul_add(&h, &l, t, 0, 0x1.71de3a556c734p-19, -0x1.c154f8ddc6c00p-73);
    qc_dd_mul_add(&h, &l, t, 0, 0x1.a01a01a01a01ap-16, 0x1.a01a01a01a01ap-76);
    qc_dd_mul_add(&h, &l, t, 0, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-73);
    qc_dd_mul_add(&h, &l, t, 0, 0x1.6c16c16c16c17p-10, -0x1.f49f49f49f49fp-65);
    qc_dd_mul_add(&h, &l, t, 0, 0x1.1111111111111p-7, 0x1.1111111111111p-63);
    qc_dd_mul_add(&h, &l, t, 0, 0x1.5555555555555p-5, 0x1.5555555555555p-59);
    qc_dd_mul_add(&h, &l, t, 0, 0x1.5555555555555p-3, 0x1.5555555555555p-57);
    qc_dd_mul_add(&h, &l, t, 0, 0.5, 0);
    qc_dd_mul_add(&h, &l, t, 0, 1.0, 0);
    qc_dd_mul(h, l, t, 0, &h, &l); /* E(t) */
    for (; m > 0; m--) {
        qc_dd_add(h, l, 2.0, 0, &sh, &sl);
        qc_dd_mul(h, l, sh, sl, &h, &l); /* E(2t) = E(t) (E(t) + 2) */
    }
    qc_dd_add(h, l, 2.0, 0, &sh, &sl);
    qc_dd_div(h, l, sh, sl, &h, &l);
    float f = qc_f32_round_dd(h, l);
    return qc_f32_bits(x) & QC_F32_SIGN ? -f : f;
}

/* tanh(x) correctly rounded: NaN, +-0, +-Inf and |x| >= 9.0625 as qc_odd_unit_special says. Where d
 * lies within 2^-50 d of a rounding boundary (Ziv's rounding test), the accurate path decides. */
static inline QC_HD float qcref_tanhf(float x)
{
    float r, a = qc_f32_from_bits(qc_f32_bits(x) & QC_F32_ABS);
    if (qc_odd_unit_special(x, QCREF_TANH_ONE, &r))
        return r;
    double d = qcref_tanh_f64_core(a);
    float f = qc_f32_decided(d, d * qcref_tanh_f64_bound((double)a)) ? (float)d : qcref_tanhf_accurate(a);
    return x < 0 ? -f : f;
}

#ifdef __cplusplus
}
#endif

#endif
