/* dot_mpfr.c: correctly rounded fp64 dot products with MPFR (exact.h), the certificate of the
 * fp64 path: a product of two doubles is exact at 106 bits, and a sum of K of them is exact at
 * 2400 bits (fp64 product exponents span [-2148, 2048], plus log2 K < 48 carry bits). */
#include "exact.h"

#include <math.h>

#ifdef QC_HAVE_MPFR
#include <mpfr.h>

int qcx_have_mpfr(void) { return 1; }

/* acc (2400 bits, initialised by the caller) = sum_i a_i b_i (magnitudes: sum_i |a_i| |b_i|), exactly. */
static void exact_dot(mpfr_t acc, const double *a, const double *b, size_t k, int magnitudes)
{
    mpfr_t p, x;
    mpfr_init2(p, 106);
    mpfr_init2(x, 53);
    mpfr_set_zero(acc, 1);
    for (size_t i = 0; i < k; i++) {
        mpfr_set_d(x, magnitudes ? fabs(a[i]) : a[i], MPFR_RNDN);
        mpfr_mul_d(p, x, magnitudes ? fabs(b[i]) : b[i], MPFR_RNDN); /* exact: 53 + 53 bits */
        mpfr_add(acc, acc, p, MPFR_RNDN);                              /* exact at 2400 bits */
    }
    mpfr_clears(p, x, (mpfr_ptr)0);
}

static double rounded_dot(const double *a, const double *b, size_t k, int magnitudes, mpfr_rnd_t rnd)
{
    mpfr_t acc;
    mpfr_init2(acc, 2400);
    exact_dot(acc, a, b, k, magnitudes);
    double r = mpfr_get_d(acc, rnd);
    mpfr_clear(acc);
    return r;
}

double qcx_dot_mpfr(const double *a, const double *b, size_t k) { return rounded_dot(a, b, k, 0, MPFR_RNDN); }

/* Rounded up: +Inf above DBL_MAX. */
double qcx_absdot_mpfr_up(const double *a, const double *b, size_t k) { return rounded_dot(a, b, k, 1, MPFR_RNDU); }

/* The bias is one more exact term; mpfr_get_flt rounds once, subnormals included. */
float qcx_dot_rn32_mpfr(const double *a, const double *b, size_t k, double bias)
{
    mpfr_t acc;
    mpfr_init2(acc, 2400);
    exact_dot(acc, a, b, k, 0);
    mpfr_add_d(acc, acc, bias, MPFR_RNDN); /* exact: a double at 2400 bits */
    float r = mpfr_zero_p(acc) ? 0.0f : mpfr_get_flt(acc, MPFR_RNDN);
    mpfr_clear(acc);
    return r;
}
#else
int qcx_have_mpfr(void) { return 0; }
double qcx_dot_mpfr(const double *a, const double *b, size_t k)
{
    (void)a, (void)b, (void)k;
    return 0.0 / 0.0;
}
double qcx_absdot_mpfr_up(const double *a, const double *b, size_t k)
{
    (void)a, (void)b, (void)k;
    return 0.0 / 0.0;
}
float qcx_dot_rn32_mpfr(const double *a, const double *b, size_t k, double bias)
{
    (void)a, (void)b, (void)k, (void)bias;
    return 0.0f / 0.0f;
}
#endif
