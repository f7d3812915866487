/* exp2_cr.h: 2^x of an fp32 argument, correctly rounded to fp32 (round to nearest even), libm-free.
 *
 * The reference against which `qcheck bringup` measures the GPU's approximate 2^x,
 * ex2.approx.ftz.f32 (docs/spec/formats.md §13). Its rules are exp_cr.h's: plain IEEE double
 * arithmetic with no fused multiply-add (-ffp-contract=off, --fmad=false), QC_HD, so the host and
 * the device compute the same bits; the same Taylor polynomial.
 *
 * d = 2^k 2^r with k = nearest(x), r = x - k (exact in double: |r| <= 1/2) and 2^r = e^t,
 * t = fl(r ln2) (the double ln2 is within 0.72 2^-53 relative and the product rounds once, so
 * t is r ln2 within 1.72 2^-53 |t|, |t| <= ln2 / 2: 0.6 2^-53 relative on e^t), e^t by
 * qcref_exp_taylor13 (truncation 0.08 2^-53; a running error analysis of the Horner steps, each
 * coefficient 1/j! within 2^-53 and each product and sum rounded once, gives 2.6 2^-53 relative
 * over t in [-ln2/2, ln2/2]) and 2^k exact: the relative error of d is below 3.3 2^-53 < 2^-51
 * (measured on every 4093rd input: 2^-52.3). An integer x gives r = 0, t = 0, d = 2^k exactly.
 * fl32(d), one correct rounding of d also where it is subnormal, is the correctly rounded 2^x
 * wherever d lies farther than 2^-51 d from every fp32 rounding boundary. Where it does not
 * (Ziv's rounding test: ACM TOMS 17(3), 1991), an accurate path decides: 2^r in double-double to
 * about 2^-95 (measured on every 40009th input: 2^-96.9), and on which side of the boundary it
 * lies. A double alone is not enough: for 0x3b429d37 and 0xbcf3a937 d is exactly a midpoint
 * (2^-57 from the true value) and ties to the wrong neighbour.
 * tests/test_exp_cr.c (exp2) checks with MPFR the 21 inputs whose d lies within 2^-49 d of a
 * boundary (8 take the accurate path), a sample of the rest and of the accurate path alone, and
 * its full tier every input. */
#ifndef QCREF_EXP2_CR_H
#define QCREF_EXP2_CR_H

#include "exp_cr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2^x in double, within 2^-51 relative, for finite x in (-150, 128). */
static inline QC_HD double qcref_exp2_f64_core(float x)
{
    const double ln2 = 0x1.62e42fefa39efp-1;
    double kd = ((double)x + 0x1.8p52) - 0x1.8p52; /* round to the nearest integer */
    double t = ((double)x - kd) * ln2;
    double two_k = qc_f64_from_bits((uint64_t)(1023 + (int)kd) << 52); /* exact: k in [-150, 128] */
    return qcref_exp_taylor13(t) * two_k;
}

/* ---- the accurate path, for the few inputs whose d lies too near a rounding boundary ---- */

/* a + b = *s + *e exactly (Knuth's TwoSum: no condition on the magnitudes). */
static inline QC_HD void qc_two_sum(double a, double b, double *s, double *e)
{
    *s = a + b;
    double bb = *s - a;
    *e = (a - (*s - bb)) + (b - bb);
}

/* a b = *p + *e exactly without a fused multiply-add (Dekker 1971, Veltkamp's split into 26 + 27
 * bits: the partial products are exact); |a b| well inside the double range. */
static inline QC_HD void qc_two_prod(double a, double b, double *p, double *e)
{
    double ca = 134217729.0 * a, cb = 134217729.0 * b; /* 2^27 + 1 */
    double ah = ca - (ca - a), al = a - ah, bh = cb - (cb - b), bl = b - bh;
    *p = a * b;
    *e = ((ah * bh - *p) + ah * bl + al * bh) + al * bl;
}

/* s + e renormalised into *h + *l (Dekker's FastTwoSum: |s| >= |e|). */
static inline QC_HD void qc_dd_norm(double s, double e, double *h, double *l)
{
    *h = s + e;
    *l = e - (*h - s);
}

/* (*h + *l) := (*h + *l)(th + tl) + (ch + cl), a double-double Horner step (relative error near
 * 2^-100: the dropped *l tl and the roundings of the small terms). */
static inline QC_HD void qc_dd_mul_add(double *h, double *l, double th, double tl, double ch, double cl)
{
    double m, me, s, se;
    qc_two_prod(*h, th, &m, &me);
    me += *h * tl + *l * th;
    qc_two_sum(m, ch, &s, &se);
    qc_dd_norm(s, se + (me + cl), h, l); /* |s| >> |se| */
}

/* 2^r = e^t as a double-double *h + *l to about 2^-95 relative, for |r| <= 1/2: t = r ln2 with
 * ln2 in two doubles (to 2^-108); e^t by its Taylor polynomial of degree 20 (truncation 2^-97),
 * the terms from t^12/12! on (below 2^-47 together) in double, the rest by double-double Horner
 * steps with 1/j! as hi + lo (lo = 1/j! - hi to 2^-105; 1/n! is exact in double up to 22!). */
static inline QC_HD void qcref_exp2_dd(double r, double *h, double *l)
{
    double th, tl;
    qc_two_prod(r, 0x1.62e42fefa39efp-1, &th, &tl);
    tl += r * 0x1.abc9e3b39803fp-56;
    double q = 1.0 / 2432902008176640000.0; /* 1/20! ... 1/12! */
    q = q * th + 1.0 / 121645100408832000.0;
    q = q * th + 1.0 / 6402373705728000.0;
    q = q * th + 1.0 / 355687428096000.0;
    q = q * th + 1.0 / 20922789888000.0;
    q = q * th + 1.0 / 1307674368000.0;
    q = q * th + 1.0 / 87178291200.0;
    q = q * th + 1.0 / 6227020800.0;
    q = q * th + 1.0 / 479001600.0;
    *h = q, *l = 0;
    qc_dd_mul_add(h, l, th, tl, 1.0 / 39916800.0, -0x1.c062e06d1f209p-80);
    qc_dd_mul_add(h, l, th, tl, 1.0 / 3628800.0, 0x1.cbbc05b4fa99ap-76);
    qc_dd_mul_add(h, l, th, tl, 1.0 / 362880.0, -0x1.c154f8ddc6c00p-73);
    qc_dd_mul_add(h, l, th, tl, 1.0 / 40320.0, 0x1.a01a01a01a01ap-76);
    qc_dd_mul_add(h, l, th, tl, 1.0 / 5040.0, 0x1.a01a01a01a01ap-73);
    qc_dd_mul_add(h, l, th, tl, 1.0 / 720.0, -0x1.f49f49f49f49fp-65);
    qc_dd_mul_add(h, l, th, tl, 1.0 / 120.0, 0x1.1111111111111p-63);
    qc_dd_mul_add(h, l, th, tl, 1.0 / 24.0, 0x1.5555555555555p-59);
    qc_dd_mul_add(h, l, th, tl, 1.0 / 6.0, 0x1.5555555555555p-57);
    qc_dd_mul_add(h, l, th, tl, 0.5, 0);
    qc_dd_mul_add(h, l, th, tl, 1.0, 0);
    qc_dd_mul_add(h, l, th, tl, 1.0, 0);
}

/* The midpoints between fl32(y) = f >= 0 and its neighbours, as doubles (exact); below +0 and
 * above +Inf none: -1 and the double maximum; above FLT_MAX the overflow threshold. */
static inline QC_HD void qc_f32_mids(float f, double *dn, double *up)
{
    uint32_t b = qc_f32_bits(f);
    *dn = b == 0 ? -1.0 : b == QC_F32_INF ? 0x1.ffffffp127 : ((double)f + (double)qc_f32_from_bits(b - 1)) / 2;
    *up = b == QC_F32_INF ? 0x1.fffffffffffffp1023
        : b == 0x7F7FFFFFu ? 0x1.ffffffp127
                           : ((double)f + (double)qc_f32_from_bits(b + 1)) / 2;
}

/* Double-double helpers for erf_cr.h and tanh_cr.h's accurate paths (each result normalised, relative
 * error a few 2^-104 with the Dekker and Knuth transformations above). */

/* (ah + al) + (bh + bl). */
static inline QC_HD void qc_dd_add(double ah, double al, double bh, double bl, double *h, double *l)
{
    double s, e;
    qc_two_sum(ah, bh, &s, &e);
    qc_dd_norm(s, e + (al + bl), h, l);
}

/* (ah + al)(bh + bl), dropping al bl. */
static inline QC_HD void qc_dd_mul(double ah, double al, double bh, double bl, double *h, double *l)
{
    double p, e;
    qc_two_prod(ah, bh, &p, &e);
    qc_dd_norm(p, e + (ah * bl + al * bh), h, l);
}

/* (ah + al) / (bh + bl): q1 = ah / bh, then the remainder a - q1 b (ah - p exact by Sterbenz) / bh. */
static inline QC_HD void qc_dd_div(double ah, double al, double bh, double bl, double *h, double *l)
{
    double q1 = ah / bh, p, e;
    qc_two_prod(q1, bh, &p, &e);
    qc_dd_norm(q1, ((((ah - p) - e) + al) - q1 * bl) / bh, h, l);
}

/* fl32(h + l) for h >= 0, |l| <= 2^-40 h: which side of the midpoints near fl32(h) h + l lies on (h - mid
 * is exact where it is small: Sterbenz). h + l is never a midpoint: 2^x, erf x and tanh x are irrational
 * at every fp32 x an accurate path sees (2^x is rational only at integers, which the fast path decides). */
static inline QC_HD float qc_f32_round_dd(double h, double l)
{
    double dn, up;
    float f = (float)h;
    qc_f32_mids(f, &dn, &up);
    if ((h - up) + l > 0)
        return qc_f32_from_bits(qc_f32_bits(f) + 1);
    if ((h - dn) + l < 0)
        return qc_f32_from_bits(qc_f32_bits(f) - 1);
    return f;
}

/* Ziv's rounding test: 1 when every value within w of d >= 0 rounds to fl32(d). */
static inline QC_HD int qc_f32_decided(double d, double w)
{
    double dn, up;
    qc_f32_mids((float)d, &dn, &up);
    return d - dn > w && up - d > w;
}

/* The inputs an odd function f with f(x) -> +-1 answers without evaluating (erf_cr.h, tanh_cr.h): NaN
 * in, the same NaN quieted out (as qcref_expf); f(+-0) = +-0; +-1 for |x| >= one (+-Inf included).
 * 1 with *r set for those, else 0. */
static inline QC_HD int qc_odd_unit_special(float x, float one, float *r)
{
    uint32_t u = qc_f32_bits(x), m = u & QC_F32_ABS;
    if (qc_bits_is_nan(u))
        *r = qc_f32_from_bits(u | 0x00400000u);
    else if (m == 0)
        *r = x;
    else if (qc_f32_from_bits(m) >= one)
        *r = x < 0 ? -1.0f : 1.0f;
    else
        return 0;
    return 1;
}

/* fl32(2^x) from the accurate path: which side of the midpoints near fl32(d) (h + l) 2^k lies on
 * (h 2^k - mid is exact where it is small: Sterbenz). */
static inline QC_HD float qcref_exp2f_accurate(float x)
{
    double kd = ((double)x + 0x1.8p52) - 0x1.8p52, h, l;
    double two_k = qc_f64_from_bits((uint64_t)(1023 + (int)kd) << 52);
    qcref_exp2_dd((double)x - kd, &h, &l);
    return qc_f32_round_dd(h * two_k, l * two_k); /* exact scalings by 2^k */
}

/* 2^x correctly rounded: NaN in, the same NaN quieted out (as qcref_expf); 2^x >= 2^128 overflows
 * for x >= 128, and for x <= -150 2^x is at most half the smallest subnormal 2^-149, which rounds
 * to +0 (exactly half, at x = -150, ties to the even +0). Where d lies within 2^-51 d of a
 * rounding boundary (Ziv's rounding test), the accurate path decides. */
static inline QC_HD float qcref_exp2f(float x)
{
    uint32_t u = qc_f32_bits(x);
    if (qc_bits_is_nan(u))
        return qc_f32_from_bits(u | 0x00400000u);
    if (x >= 128.0f)
        return qc_f32_from_bits(QC_F32_INF);
    if (x <= -150.0f)
        return 0.0f;
    double d = qcref_exp2_f64_core(x);
    return qc_f32_decided(d, d * 0x1p-51) ? (float)d : qcref_exp2f_accurate(x);
}

#ifdef __cplusplus
}
#endif

#endif
