/* exp_cr.h: exp of an fp32 argument, correctly rounded to fp32 (round to nearest even), libm-free.
 *
 * The MoE routing and activations (softmax, sigmoid, silu) need exp, and a check that is bit-exact
 * across machines cannot take it from the host's libm: glibc 2.36's expf differs from the
 * correctly rounded result on 170,648 of the 2^32 inputs, other libms elsewhere, and a GPU kernel
 * has none of them (docs/DECISIONS.md "exp is qcheck's own"). This one is plain IEEE double
 * arithmetic (no fused multiply-add: libqcref builds with -ffp-contract=off, the cuda backend with
 * --fmad=false), QC_HD, so the host, the device and the CPU emulation compute the same bits.
 *
 * d = 2^k e^r with k = nearest(x / ln2), r = x - k ln2 (|r| <= ln2 / 2; k ln2_hi is exact and so is
 * x - k ln2_hi, ln2 = ln2_hi + ln2_lo to 2^-99) and e^r by its Taylor polynomial of degree 13
 * (truncation below 2^-57) in Horner form; a running error analysis of those steps bounds the
 * relative error of d by 3.8 2^-53 < 2^-51 (measured on every 4093rd input: 2^-52.4). The result
 * is fl32(d). It is the correctly rounded exp wherever d lies farther than 2^-51 d from every
 * fp32 rounding boundary; tests/test_exp_cr.c checks with MPFR the inputs where it does not (26 of
 * 2^32 with a window of 2^-49 d) and a sample of the rest, and the full tier every input. */
#ifndef QCREF_EXP_CR_H
#define QCREF_EXP_CR_H

#include <stdint.h>
#include <string.h>

#include "../qc_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline QC_HD double qc_f64_from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* e^r by its Taylor polynomial of degree 13 in Horner form, for |r| <= ln2 / 2 (a hair more is
 * fine): truncation below 2^-56.7 relative. exp2_cr.h evaluates the same polynomial. */
static inline QC_HD double qcref_exp_taylor13(double r)
{
    double p = 1.0 / 6227020800.0; /* 1/13! ... 1/2!, then 1, 1 */
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    return p * r + 1.0;
}

/* exp(x) in double, within 2^-51 relative, for a double x in [-104, 89] (erf_cr.h passes -x^2, not
 * an fp32: x - k ln2_hi is still exact, by Sterbenz's lemma, as x lies within a factor 2 of k ln2_hi). */
static inline QC_HD double qcref_exp_f64(double x)
{
    const double inv_ln2 = 0x1.71547652b82fep0;
    const double ln2_hi = 0x1.62e42fefa3800p-1; /* 42 significant bits: k ln2_hi is exact for |k| < 2^11 */
    const double ln2_lo = 0x1.ef35793c7673p-45;
    double kd = (x * inv_ln2 + 0x1.8p52) - 0x1.8p52; /* round to the nearest integer */
    double r = (x - kd * ln2_hi) - kd * ln2_lo;
    double two_k = qc_f64_from_bits((uint64_t)(1023 + (int)kd) << 52); /* exact: k in [-151, 129] */
    return qcref_exp_taylor13(r) * two_k;
}

/* exp(x) in double, within 2^-51 relative, for finite x in [-104, 89]. */
static inline QC_HD double qcref_exp_f64_core(float x) { return qcref_exp_f64((double)x); }

/* exp(x) correctly rounded: NaN in, the same NaN quieted out (glibc's x + x, spelled out because a
 * GPU's arithmetic would give its canonical NaN); exp(x) > 2^128 for x > 89, < 2^-150 for x < -104. */
static inline QC_HD float qcref_expf(float x)
{
    uint32_t u = qc_f32_bits(x);
    if (qc_bits_is_nan(u))
        return qc_f32_from_bits(u | 0x00400000u);
    if (x > 89.0f)
        return qc_f32_from_bits(QC_F32_INF);
    if (x < -104.0f)
        return 0.0f;
    return (float)qcref_exp_f64_core(x);
}

#ifdef __cplusplus
}
#endif

#endif
