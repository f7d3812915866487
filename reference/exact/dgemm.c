/* dgemm.c: the fp64 product of exactly dequantized operands (exact.h). */
#include <math.h>
#include <stdlib.h>

#include "exact.h"

#ifdef QC_HAVE_OPENBLAS
#include <cblas.h>
const char *qcx_blas_name(void) { return "openblas"; }
int qcx_dgemm_nt(size_t m, size_t n, size_t k, const double *a, const double *b, double *c)
{
    if (!m || !n)
        return 0;
    if (!k) {
        for (size_t i = 0; i < m * n; i++)
            c[i] = 0;
        return 0;
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0, a, (int)k, b, (int)k, 0.0, c,
                (int)n);
    return 0;
}
#else
const char *qcx_blas_name(void) { return "loop"; }
int qcx_dgemm_nt(size_t m, size_t n, size_t k, const double *a, const double *b, double *c)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double acc = 0;
            for (size_t l = 0; l < k; l++)
                acc += a[i * k + l] * b[j * k + l];
            c[i * n + j] = acc;
        }
    return 0;
}
#endif

/* |x| rounded up to fp32 (an upper bound of |x| when it is not representable). */
static float abs_up(double x)
{
    double a = fabs(x);
    float f = (float)a;
    return (double)f < a ? nextafterf(f, INFINITY) : f;
}

typedef struct range { double max, min_nonzero; } range;

static range abs_range(const double *x, size_t n)
{
    range r = {0, INFINITY};
    for (size_t i = 0; i < n; i++) {
        double a = fabs(x[i]);
        r.max = a > r.max ? a : r.max;
        if (a > 0 && a < r.min_nonzero)
            r.min_nonzero = a;
    }
    return r;
}

/* s = |A| |B|^T as an upper bound. When every nonzero product lies in [2^-100, 2^100 / K] the
 * fp32 sgemm of the magnitudes rounded up is used: every term is a normal fp32 value at least the
 * exact product, and a sum of K nonnegative terms in any order is within gamma32(K) of its exact
 * value (Higham §3.1), so exact <= computed / (1 - gamma32(K)). Otherwise fp64 dgemm, whose error
 * gamma53(K) the bound of gemm.h already carries. Half the cost of a second dgemm. */
static int magnitude_gemm(size_t m, size_t n, size_t k, const double *a, const double *b, double *s)
{
    range ra = abs_range(a, m * k), rb = abs_range(b, n * k);
    int fp32 = ra.max * rb.max * (double)(k + 1) < 0x1p100 && ra.min_nonzero * rb.min_nonzero > 0x1p-100;
#ifdef QC_HAVE_OPENBLAS
    if (fp32 && m && n && k && k < (1u << 20)) {
        float *fa = malloc(m * k * sizeof *fa + 8), *fb = malloc(n * k * sizeof *fb + 8), *fs = malloc(m * n * 4 + 8);
        int ok = fa && fb && fs;
        for (size_t i = 0; ok && i < m * k; i++)
            fa[i] = abs_up(a[i]);
        for (size_t i = 0; ok && i < n * k; i++)
            fb[i] = abs_up(b[i]);
        if (ok) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)n, (int)k, 1.0f, fa, (int)k, fb, (int)k,
                        0.0f, fs, (int)n);
            double g = (double)k * 0x1p-24 / (1 - (double)k * 0x1p-24);
            for (size_t i = 0; i < m * n; i++)
                s[i] = (double)fs[i] / (1 - g) * (1 + 0x1p-50);
        }
        free(fa), free(fb), free(fs);
        if (ok)
            return 0;
    }
#else
    (void)fp32;
    (void)abs_up;
#endif
    double *aa = malloc(m * k * sizeof *aa + 8), *ab = malloc(n * k * sizeof *ab + 8);
    for (size_t i = 0; aa && i < m * k; i++)
        aa[i] = fabs(a[i]);
    for (size_t i = 0; ab && i < n * k; i++)
        ab[i] = fabs(b[i]);
    int rc = !aa || !ab || qcx_dgemm_nt(m, n, k, aa, ab, s) ? -1 : 0;
    free(aa), free(ab);
    return rc;
}

int qcx_gemm(size_t m, size_t n, size_t k, const double *a, const double *b, double alpha, const double *bias,
             double *y, double *s)
{
    int rc = qcx_dgemm_nt(m, n, k, a, b, y) || magnitude_gemm(m, n, k, a, b, s) ? -1 : 0;
    for (size_t i = 0; !rc && i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double bj = bias ? bias[j] : 0.0;
            y[i * n + j] = alpha * y[i * n + j] + bj;
            s[i * n + j] = fabs(alpha) * s[i * n + j] + fabs(bj);
        }
    return rc;
}
