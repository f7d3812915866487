/* dot_mpfr.c: correctly rounded fp64 dot products with MPFR (exact.h), the certificate of the
 * fp64 path: a product of two doubles is exact at 106 bits, and a sum of K of them is exact at
 * 2400 bits (fp64 product exponents span [-2148, 2048], plus log2 K < 48 carry bits). */
#include "exact.h"

#include <math.h>

#ifdef QC_HAVE_MPFR
#include <mpfr.h>

int qcx_have_mpfr(void) { return 1; }

/* sum_i a_i b_i (magnitudes: sum_i |a_i| |b_i|), exact at 2400 bits, rounded once by rnd. */
static double exact_dot(const double *a, const double *b, size_t k, int magnitudes, mpfr_rnd_t rnd)
{
    mpfr_t acc, p, x;
    mpfr_inits2(2400, acc, (mpfr_ptr)0);
    mpfr_inits2(106, p, (mpfr_ptr)0);
    mpfr_init2(x, 53);
    mpfr_set_zero(acc, 1);
    for (size_t i = 0; i < k; i++) {
        mpfr_set_d(x, magnitudes ? fabs(a[i]) : a[i], MPFR_RNDN);
        mpfr_mul_d(p, x, magnitudes ? fabs(b[i]) : b[i], MPFR_RNDN); /* exact: 53 + 53 bits */
        mpfr_add(acc, acc, p, MPFR_RNDN);                              /* exact at 2400 bits */
    }
    double r = mpfr_get_d(acc, rnd);
    mpfr_clears(acc, p, x, (mpfr_ptr)0);
    return r;
}

double qcx_dot_mpfr(const double *a, const double *b, size_t k) { return exact_dot(a, b, k, 0, MPFR_RNDN); }

/* Rounded up: +Inf above DBL_MAX. */
double qcx_absdot_mpfr_up(const double *a, const double *b, size_t k) { return exact_dot(a, b, k, 1, MPFR_RNDU); }
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
#endif
