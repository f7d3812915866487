/* dgemm.c: the fp64 product of exactly dequantized operands (exact.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The magnitude sum s[i, j] >= sum_k |a_ik| |b_jk| of gemm.h's bound, at a fraction of a GEMM.
 *
 * Only an upper bound is needed (a larger s makes the bound larger, never wrong). The exact sum
 * is a second GEMM, fp64 or fp32 at half that cost, which caps the reference core at 1/1.5 of
 * dgemm's speed. Instead K is cut into blocks of QCX_MAG_BLOCK and, for each block and each pair
 * of row vectors x = a_i and y = b_j restricted to it,
 *   sum |x_k| |y_k| <= ||x||_2 ||y||_2                          (Cauchy-Schwarz)
 *   sum |x_k| |y_k| <= ||x||_1 ||y||_inf  and  ||x||_inf ||y||_1  (Hölder, p = 1, q = inf).
 * Summed over the blocks each is a product of block-norm matrices [M, G] [N, G]^T with
 * G = ceil(K / QCX_MAG_BLOCK), 1/QCX_MAG_BLOCK of the product's cost each, and the elementwise
 * minimum of the three sums is an upper bound because each one is. Cauchy-Schwarz is exact where
 * |x| and |y| are proportional over a block and loses 2/pi on average for independent normal
 * entries; Hölder is exact where one side has a constant magnitude over a block or a single
 * nonzero (one outlier): the minimum takes the better of both on every element. All three are
 * loose where large entries of x and y sit at different positions of one block (at worst by the
 * ratio of the largest to the smallest magnitude in the block). A block of 16 divides every K
 * group of docs/spec/formats.md §9 (16, 32, 128), so a block never straddles two scales.
 *
 * Rounding (u = 2^-53, gamma(n) = n u / (1 - n u); Higham, Accuracy and Stability of Numerical
 * Algorithms, 2nd ed., Lemma 3.1 and (3.4), which hold for any order of evaluation and with fused
 * multiply-adds), when no operation underflows or overflows:
 *   a sum of squares or of magnitudes over a block of g <= QCX_MAG_BLOCK terms, in any order, is
 *     at least (1 - gamma(g)) times its exact value (a nonnegative inner product, (3.4));
 *   the correctly rounded sqrt (IEEE 754 section 5.4.1) is at least (1 - u) sqrt, and sqrt(1 - gamma)
 *     >= 1 - gamma, so a computed 2-norm is at least (1 - gamma(g)) (1 - u) ||x||_2; the max is
 *     exact;
 *   the norm product over G blocks, nonnegative terms, is at least (1 - gamma(G)) its exact value
 *     (gamma with u = 2^-24 when it runs in fp32, mag_blocks).
 * So exact s <= computed / phi, phi = (1 - gamma(G)) (1 - gamma(g))^2 (1 - u)^2 (Cauchy-Schwarz;
 * Hölder has one (1 - gamma(g)) factor and no (1 - u), so the same phi covers it). The roundings of
 * phi itself (< 10), of 1 / phi, of s * (1 / phi), of |alpha| s, of + |bias| and of the final
 * product (each at most u relative, 15 in all, every one possibly downward) are covered by a
 * further (1 + 2^-48) (32 u). No underflow or overflow: every nonzero |a| and |b| is checked to lie
 * in [2^-480, 2^480], so squares, norms, block norm products and their sums are normal fp64 values
 * below 2^1000 (for K < 2^40). Outside that range, or for NaN or Inf operands, the exact magnitude
 * product in fp64 is used instead (mag_exact). */
enum { QCX_MAG_BLOCK = 16, QCX_MAG_PANEL = 512 };

static double gamma_u(double n, double u) { return n * u / (1 - n * u); }

/* The range of the nonzero magnitudes of an operand, seen by block_norms. */
typedef struct mag_range {
    double max, min, min_block_max; /* max |x|, min nonzero |x|, min over nonzero blocks of max |x| */
    int nan;                        /* some x is NaN */
} mag_range;

/* Per row of x [rows, k] and per K block: l2 (fp64 sqrt of the fp64 sum of squares), l1 (fp64
 * sum of magnitudes), linf (max magnitude, exact), each [rows, nb]; and the range of |x|. Four
 * partial sums per block (any order is covered by (3.4)), so the compiler can vectorize. */
static mag_range block_norms(const double *x, size_t rows, size_t k, size_t nb, double *l2, double *l1,
                             double *linf)
{
    mag_range r = {0, INFINITY, INFINITY, 0};
    for (size_t i = 0; i < rows; i++)
        for (size_t b = 0; b < nb; b++) {
            const double *p = x + i * k + b * QCX_MAG_BLOCK;
            size_t len = k - b * QCX_MAG_BLOCK < QCX_MAG_BLOCK ? k - b * QCX_MAG_BLOCK : QCX_MAG_BLOCK, l = 0;
            double sq[4] = {0, 0, 0, 0}, sm[4] = {0, 0, 0, 0}, mx[4] = {0, 0, 0, 0};
            double mn[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
            for (; l + 4 <= len; l += 4)
                for (int j = 0; j < 4; j++) {
                    double v = fabs(p[l + (size_t)j]), w = v != 0 ? v : INFINITY;
                    sq[j] += v * v, sm[j] += v;
                    mx[j] = v > mx[j] ? v : mx[j], mn[j] = w < mn[j] ? w : mn[j];
                }
            for (; l < len; l++) {
                double v = fabs(p[l]), w = v != 0 ? v : INFINITY;
                sq[0] += v * v, sm[0] += v;
                mx[0] = v > mx[0] ? v : mx[0], mn[0] = w < mn[0] ? w : mn[0];
            }
            double m = fmax(fmax(mx[0], mx[1]), fmax(mx[2], mx[3])), s1 = (sm[0] + sm[1]) + (sm[2] + sm[3]);
            l2[i * nb + b] = sqrt((sq[0] + sq[1]) + (sq[2] + sq[3])), l1[i * nb + b] = s1, linf[i * nb + b] = m;
            r.nan |= s1 != s1; /* a NaN element makes the sum NaN; the max may skip it */
            r.max = m > r.max ? m : r.max;
            r.min = fmin(r.min, fmin(fmin(mn[0], mn[1]), fmin(mn[2], mn[3])));
            if (m > 0 && m < r.min_block_max)
                r.min_block_max = m;
        }
    return r;
}

/* x >= 0 rounded up to fp32 (x within fp32's normal range): the next fp32 code when the
 * conversion rounded down. */
static float up32(double x)
{
    float f = (float)x;
    if ((double)f < x) {
        uint32_t bits;
        memcpy(&bits, &f, 4);
        bits++;
        memcpy(&f, &bits, 4);
    }
    return f;
}

/* s = the block bound (the comment above) without the epilogue: the minimum of the three norm
 * products times 1 / phi. The products run in fp32 (sgemm, half the cost) when every nonzero
 * norm lies in [2^-50, 2^50] (a block's norms lie between its max and 16 times it, so max |x| <=
 * 2^45 and every nonzero block max >= 2^-50 suffice) and G < 2^20: the norms rounded up to fp32
 * are at least the fp64 ones, every nonzero product of two lies in [2^-100, 2^100] and a sum of G
 * of them below 2^120, all normal fp32 values, so (3.4) holds with u = 2^-24. Otherwise fp64.
 * Row panels of QCX_MAG_PANEL rows keep the scratch small. 1 when an operand is outside the range
 * of the block bound (nothing written), 0 done, -1 out of memory. */
static int mag_blocks(size_t m, size_t n, size_t k, const double *a, const double *b, double *s,
                      mag_range *ra, mag_range *rb)
{
    size_t nb = (k + QCX_MAG_BLOCK - 1) / QCX_MAG_BLOCK, pr = m < QCX_MAG_PANEL ? m : QCX_MAG_PANEL;
    double *na = malloc(3 * m * nb * sizeof *na + 8), *nbm = malloc(3 * n * nb * sizeof *nbm + 8);
    double *t = NULL;
    float *f = NULL;
    int rc = na && nbm ? 0 : -1;
    if (!rc) {
        *ra = block_norms(a, m, k, nb, na, na + m * nb, na + 2 * m * nb);
        *rb = block_norms(b, n, k, nb, nbm, nbm + n * nb, nbm + 2 * n * nb);
        if (ra->nan || rb->nan || !(ra->max <= 0x1p480 && rb->max <= 0x1p480) || ra->min < 0x1p-480 ||
            rb->min < 0x1p-480 || k >= ((size_t)1 << 40))
            rc = 1;
    }
    int fp32 = 0;
#ifdef QC_HAVE_OPENBLAS
    fp32 = !rc && nb < (1u << 20) && ra->max <= 0x1p45 && rb->max <= 0x1p45 && ra->min_block_max >= 0x1p-50 &&
           rb->min_block_max >= 0x1p-50;
#else
    (void)up32;
#endif
    if (!rc && fp32) {
        f = malloc((3 * (m + n) * nb + 3 * pr * n) * sizeof *f + 8);
        rc = f ? 0 : -1;
        for (size_t i = 0; !rc && i < 3 * m * nb; i++)
            f[i] = up32(na[i]);
        for (size_t i = 0; !rc && i < 3 * n * nb; i++)
            f[3 * m * nb + i] = up32(nbm[i]);
    } else if (!rc) {
        t = malloc(2 * pr * n * sizeof *t + 8);
        rc = t ? 0 : -1;
    }
    double u = 0x1p-53, g = 1 - gamma_u(QCX_MAG_BLOCK, u), gb = 1 - gamma_u((double)nb, fp32 ? 0x1p-24 : u);
    double rphi = 1 / (gb * g * g * (1 - u) * (1 - u));
    for (size_t i0 = 0; !rc && i0 < m; i0 += pr) {
        size_t rows = m - i0 < pr ? m - i0 : pr;
        double *si = s + i0 * n;
#ifdef QC_HAVE_OPENBLAS
        if (fp32) { /* (2, 2), (1, inf), (inf, 1): norm q of A with norm pair[q] of B */
            static const int pair[3] = {0, 2, 1};
            float *fb = f + 3 * m * nb, *ts = fb + 3 * n * nb;
            for (int q = 0; q < 3; q++)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)n, (int)nb, 1.0f,
                            f + (q * m + i0) * nb, (int)nb, fb + (size_t)pair[q] * n * nb, (int)nb, 0.0f,
                            ts + (size_t)q * rows * n, (int)n);
            for (size_t e = 0; e < rows * n; e++) {
                float v = ts[e] < ts[rows * n + e] ? ts[e] : ts[rows * n + e];
                si[e] = (double)(v < ts[2 * rows * n + e] ? v : ts[2 * rows * n + e]) * rphi;
            }
            continue;
        }
#endif
        double *t1 = t, *t2 = t + rows * n;
        rc = qcx_dgemm_nt(rows, n, nb, na + i0 * nb, nbm, si) ||
                     qcx_dgemm_nt(rows, n, nb, na + (m + i0) * nb, nbm + 2 * n * nb, t1) ||
                     qcx_dgemm_nt(rows, n, nb, na + (2 * m + i0) * nb, nbm + n * nb, t2)
                 ? -1
                 : 0;
        for (size_t e = 0; !rc && e < rows * n; e++) {
            double v = si[e] < t1[e] ? si[e] : t1[e];
            si[e] = (v < t2[e] ? v : t2[e]) * rphi;
        }
    }
    free(na), free(nbm), free(t), free(f);
    return rc;
}

/* s = the exact magnitude product in fp64 (any range): computed >= (1 - gamma(K)) exact - K eta
 * where a product may underflow (|eta| <= 2^-1075 per product, Higham section 2.2, the model with
 * gradual underflow; sums of nonnegative terms add no eta), so s = (computed + K 2^-1074) / (1 -
 * gamma(K)) there and computed / (1 - gamma(K)) where no product of nonzero operands is below
 * 2^-1000. NaN and Inf propagate (gemm.h's bound is Inf there). */
static int mag_exact(size_t m, size_t n, size_t k, const double *a, const double *b, int underflow, double *s)
{
    double *aa = malloc(m * k * sizeof *aa + 8), *ab = malloc(n * k * sizeof *ab + 8);
    for (size_t i = 0; aa && i < m * k; i++)
        aa[i] = fabs(a[i]);
    for (size_t i = 0; ab && i < n * k; i++)
        ab[i] = fabs(b[i]);
    int rc = !aa || !ab || qcx_dgemm_nt(m, n, k, aa, ab, s) ? -1 : 0;
    double phi = 1 - gamma_u((double)k, 0x1p-53), eta = underflow ? (double)k * 0x1p-1074 : 0;
    for (size_t i = 0; !rc && i < m * n; i++)
        s[i] = (s[i] + eta) / phi;
    free(aa), free(ab);
    return rc;
}

static int magnitude_gemm(size_t m, size_t n, size_t k, const double *a, const double *b, double *s)
{
    mag_range ra, rb;
    int rc = mag_blocks(m, n, k, a, b, s, &ra, &rb);
    return rc == 1 ? mag_exact(m, n, k, a, b, ra.min * rb.min < 0x1p-1000, s) : rc;
}

int qcx_gemm(size_t m, size_t n, size_t k, const double *a, const double *b, double alpha, const double *bias,
             double *y, double *s)
{
    int rc = qcx_dgemm_nt(m, n, k, a, b, y) || magnitude_gemm(m, n, k, a, b, s) ? -1 : 0;
    double aa = fabs(alpha);
    for (size_t i = 0; !rc && i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double bj = bias ? bias[j] : 0.0, v = aa * s[i * n + j];
            /* an |alpha| s below the normal range may have lost up to 2^-1075, down to 0 (Higham
             * section 2.2); a sum of nonnegative subnormals is exact */
            v += v < 0x1p-1000 && s[i * n + j] != 0 && aa != 0 ? 0x1p-1074 : 0;
            y[i * n + j] = alpha * y[i * n + j] + bj;
            s[i * n + j] = (v + fabs(bj)) * (1 + 0x1p-48);
        }
    return rc;
}

/* The fp32 value of every real in [v - err, v + err] when they all round to one (its bits, the
 * sign of zero included, agree at both ends; RN is monotonic), in *out; else 0. */
static int one_fp32(double v, double err, float *out)
{
    float lo = (float)nextafter(v - err, -INFINITY), hi = (float)nextafter(v + err, INFINITY);
    uint32_t bl, bh;
    memcpy(&bl, &lo, 4), memcpy(&bh, &hi, 4);
    *out = lo;
    return bl == bh;
}

int qcx_gemm_rn32(size_t m, size_t n, size_t k, const double *a, const double *b, const float *bias, float *y)
{
    double *v = malloc(m * n * sizeof *v + 8), *s = malloc(m * n * sizeof *s + 8);
    int rc = v && s ? qcx_gemm(m, n, k, a, b, 1.0, NULL, v, s) : -1;
    /* the error of K products and K additions (the bias the last), and K + 1 underflows of 2^-1075
     * (none for the dequantized operands of docs/spec/formats.md, but free to cover) */
    double g = gamma_u((double)k + 1, 0x1p-53) * (1 + 0x1p-50), eta = ((double)k + 1) * 0x1p-1074;
    for (size_t i = 0; !rc && i < m; i++)
        for (size_t j = 0; j < n; j++) {
            size_t e = i * n + j;
            double bj = bias ? (double)bias[j] : 0.0, t = v[e] + bj;
            if (!isfinite(t))
                y[e] = (float)t; /* a NaN or infinite operand (finite ones stay far below 2^1024) */
            else if (s[e] == 0)
                y[e] = bj != 0 ? (float)bj : 0.0f; /* every product is zero: the sum is the bias */
            else if (!one_fp32(t, g * (s[e] + fabs(bj)) + eta, &y[e])) {
                if (!qcx_have_mpfr()) {
                    rc = -2;
                    break;
                }
                y[e] = qcx_dot_rn32_mpfr(a + i * k, b + j * k, k, bj);
            }
        }
    free(v), free(s);
    return rc;
}
