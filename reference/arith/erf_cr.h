/* erf_cr.h: erf of an fp32 argument, correctly rounded to fp32 (round to nearest even), libm-free.
 *
 * gelu's erf (reference/ops/moe_act.c): a check that is bit-exact across machines cannot take it from
 * the host's libm, and a GPU kernel has none (docs/DECISIONS.md "exp is qcheck's own"). The rules
 * are exp_cr.h's: plain IEEE double arithmetic (no fused multiply-add: -ffp-contract=off, --fmad=false),
 * QC_HD, so the host, the device and the CPU emulation compute the same bits.
 *
 * erf is odd: the work is on a = |x|, the sign goes on the fp32 result (round to nearest is symmetric).
 * For a >= 3.93, 1 - erf(a) = erfc(a) < e^-a^2 / (a sqrt(pi)) (Abramowitz & Stegun 7.1.13) < 2^-25,
 * half an ulp below 1: erf rounds to 1 (the smallest such fp32 is 0x407ad445, 3.9192059). Below, a
 * double d (qcref_erf_f64_core), with u = 2^-53:
 * - a <= 1: erf(a) = K a (1 + z s(z)), z = a^2 (exact), K = 2 / sqrt(pi), s(z) = sum_{n>=1} (-1)^n
 *   z^(n-1) / (n! (2n + 1)) (A&S 7.1.5) to n = 19 (truncation below 2^-63), in Horner form. K = Kh + Kl
 *   with Kh of 25 bits, so a Kh is exact and d = a Kh + a (Kl + K (z s)). A running error analysis
 *   (each step's roundings bounded by u times the magnitudes it rounds, the coefficients within u;
 *   z s is at most 0.34 of 1 + z s, so only a third of its error passes on) bounds the relative
 *   error of d by 3.8 u at z = 1, 1.95 u for z <= 0.4 and 1.0 u as z -> 0 (the last sum); bound
 *   2^-52 for a <= 0.625, 2^-51 up to 1.
 * - 1 < a < 3.93: the all-positive series erf(a) = K e^-z a p, p = sum_{n>=0} (2z)^n / (2n + 1)!!
 *   (A&S 7.1.6, no cancellation) to n = 64 (the tail is below 2^-66 p at z = 3.93^2), in Horner form
 *   p_(n-1) = 1 + p_n (2z / (2n + 1)); e^-z by qcref_exp_f64 (4 u). Each Horner step adds 3 roundings
 *   and passes on (1 - 1/p_(n-1)) of the error it receives: that running bound, largest at the
 *   largest z (it grows with z), is 45.8 u at z = 3.93^2; with e^-z (3.8 u), K (u / 2) and the
 *   three products d is within 53.1 u < 2^-47.2 relative; bound 2^-47.
 * Measured against MPFR on every 4093rd input: 2^-52.5 (a <= 1) and 2^-50.2 (a > 1).
 * fl32(d) is the correctly rounded erf wherever d lies farther than the bound from every fp32 rounding
 * boundary (Ziv's rounding test: ACM TOMS 17(3), 1991). Where it does not, an accurate path decides:
 * the alternating series (A&S 7.1.5) in double-double, whose cancellation (at most 2^19.5, at a = 3.93)
 * leaves about 2^-75 relative (measured on every 40009th input: 2^-88.9). tests/test_exp_cr.c (erf)
 * checks with MPFR the 26 inputs within 4 times the bound of a boundary (2 take the accurate path), a
 * sample of the rest and of the accurate path alone, and its full tier every input. */
#ifndef QCREF_ERF_CR_H
#define QCREF_ERF_CR_H

#include "exp2_cr.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QCREF_ERF_ONE 3.93f /* erf(a) rounds to 1 from here on */

/* 2 / sqrt(pi) as the double K, as Kh (25 bits) + Kl, and K's remainder (to 2^-109) */
#define QCREF_ERF_K 0x1.20dd750429b6dp+0
#define QCREF_ERF_KH 0x1.20dd75p+0
#define QCREF_ERF_KL 0x1.0a6db446b8ea4p-30
#define QCREF_ERF_K_LO 0x1.1ae3a914fed80p-56

/* The relative error bound of qcref_erf_f64_core for |x| = a (see above). */
static inline QC_HD double qcref_erf_f64_bound(double a) { return a <= 0.625 ? 0x1p-52 : a <= 1.0 ? 0x1p-51 : 0x1p-47; }

/* erf(x) in double, within qcref_erf_f64_bound(|x|) relative, for |x| < 3.93. */
static inline QC_HD double qcref_erf_f64_core(float x)
{
    double a = (double)qc_f32_from_bits(qc_f32_bits(x) & QC_F32_ABS), z = a * a, d;
    if (a <= 1.0) {
        double s = -0x1.f1b4073b34a68p-63; /* (-1)^n / (n! (2n + 1)), n = 19 ... 1 */
        s = s * z + 0x1.377c2110f2083p-58;
        s = s * z - 0x1.7271cbe5863ecp-54;
        s = s * z + 0x1.a173a167fba4dp-50;
        s = s * z - 0x1.bc6250fb14231p-46;
        s = s * z + 0x1.bd577e658d020p-42;
        s = s * z - 0x1.a289ee7e40f74p-38;
        s = s * z + 0x1.6f448e13e85e1p-34;
        s = s * z - 0x1.2b67310aa9f3ap-30;
        s = s * z + 0x1.c2e3054870b38p-27;
        s = s * z - 0x1.3777c55568ccdp-23;
        s = s * z + 0x1.87a00187a0018p-20;
        s = s * z - 0x1.bbd779334ef0bp-17;
        s = s * z + 0x1.c01c01c01c01cp-14;
        s = s * z - 0x1.8d3018d3018d3p-11;
        s = s * z + 0x1.2f684bda12f68p-8;
        s = s * z - 0x1.8618618618618p-6;
        s = s * z + 0x1.999999999999ap-4;
        s = s * z - 0x1.5555555555555p-2;
        d = a * QCREF_ERF_KH + a * (QCREF_ERF_KL + QCREF_ERF_K * (z * s));
    } else {
        double p = 1.0;
        for (int n = 64; n >= 1; n--)
            p = 1.0 + p * ((2.0 * z) / (double)(2 * n + 1));
        d = ((QCREF_ERF_K * a) * p) * qcref_exp_f64(-z);
    }
    return x < 0 ? -d : d;
}

/* ---- the accurate path, for the few inputs whose d lies too near a rounding boundary ---- */

/* fl32(erf(x)) for |x| < 3.93 from K a sum_n (-1)^n z^n / (n! (2n + 1)) in double-double: the terms
 * T_n = T_(n-1) z / n, to the first below 2^-112 (the sum is at least 0.22). */
static inline QC_HD float qcref_erff_accurate(float x)
{
    double a = (double)qc_f32_from_bits(qc_f32_bits(x) & QC_F32_ABS), z = a * a;
    double th = 1.0, tl = 0.0, sh = 1.0, sl = 0.0, h, l;
    for (int n = 1;; n++) {
        double uh, ul, p, e;
        qc_two_prod(th, z, &p, &e); /* T_n = T_(n-1) z / n */
        qc_dd_norm(p, e + tl * z, &th, &tl);
        qc_dd_div(th, tl, (double)n, 0.0, &th, &tl);
        qc_dd_div(th, tl, (double)(2 * n + 1), 0.0, &uh, &ul);
        if (uh < 0x1p-112)
            break;
        qc_dd_add(sh, sl, n & 1 ? -uh : uh, n & 1 ? -ul : ul, &sh, &sl);
    }
    qc_dd_mul(sh, sl, a, 0.0, &h, &l);
    qc_dd_mul(h, l, QCREF_ERF_K, QCREF_ERF_K_LO, &h, &l);
    float f = qc_f32_round_dd(h, l);
    return qc_f32_bits(x) & QC_F32_SIGN ? -f : f;
}

/* erf(x) correctly rounded: NaN, +-0, +-Inf and |x| >= 3.93 as qc_odd_unit_special says. Where d lies
 * within the bound of a rounding boundary (Ziv's rounding test), the accurate path decides. */
static inline QC_HD float qcref_erff(float x)
{
    float r, a = qc_f32_from_bits(qc_f32_bits(x) & QC_F32_ABS);
    if (qc_odd_unit_special(x, QCREF_ERF_ONE, &r))
        return r;
    double d = qcref_erf_f64_core(a);
    float f = qc_f32_decided(d, d * qcref_erf_f64_bound((double)a)) ? (float)d : qcref_erff_accurate(a);
    return x < 0 ? -f : f;
}

#ifdef __cplusplus
}
#endif

#endif
