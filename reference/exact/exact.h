/* exact.h: the exact GEMM path (docs/DESIGN.md "Architecture", reference/exact): operands dequantized exactly to
 * fp64 (reference/ops/gemm.h) and multiplied through OpenBLAS dgemm; MPFR correctly-rounded dots
 * certify, on sampled elements, that the fp64 path's own error is far below the fp32 bound.
 * Only this library may use OpenBLAS and MPFR (libqcref stays libm-only). */
#ifndef QCX_EXACT_H
#define QCX_EXACT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* C[M, N] = A[M, K] * B[N, K]^T in fp64 (cblas_dgemm RowMajor, NoTrans, Trans; a plain loop
 * when the build has no OpenBLAS). Returns 0, or -1 when out of memory. */
int qcx_dgemm_nt(size_t m, size_t n, size_t k, const double *a, const double *b, double *c);

/* The reference GEMM: y[m, n] = alpha * (A B^T)[m, n] + bias[n] and s[m, n] >= |alpha| (|A| |B|^T)
 * + |bias[n]|, an upper bound (never below, whatever the range of the operands) of the magnitude
 * sum of gemm.h's bound: per K block of 16 the minimum of the Cauchy-Schwarz and both Hölder
 * (1, inf) bounds, summed through three [M, K/16] x [N, K/16]^T products of block norms and
 * inflated for their fp64 rounding (dgemm.c proves it), about 1/5 of a dgemm; the exact fp64
 * magnitude product, inflated, where an operand is outside [2^-480, 2^480] or not finite. s is 0
 * where the rows of A and B have no nonzero in a common K block (an all-zero row, say) and the
 * bias is 0, which is where the exact sum is 0 in the block path. bias may be NULL. 0, or -1 out
 * of memory. */
int qcx_gemm(size_t m, size_t n, size_t k, const double *a, const double *b, double alpha, const double *bias,
             double *y, double *s);

/* y[m, n] = the exact (A B^T)[m, n] + bias[n], rounded once to fp32 (RNE; a sum that is exactly
 * zero gives +0; a NaN or infinite operand: the fp64 value converted). Whatever the summation order,
 * the fp64 product v of qcx_gemm, plus the bias, is within gamma(K + 1) (sum |a_k| |b_k| + |bias|)
 * of the exact value (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., (3.4) and
 * Lemma 3.1, with fused multiply-adds too); where that interval rounds to one fp32 value, that is
 * the result; where it straddles an fp32 rounding boundary (about K 2^-29 of the elements) the
 * element is summed exactly with MPFR (qcx_dot_rn32_mpfr). So the result does not depend on
 * OpenBLAS's order, threads or kernels. bias may be NULL. 0; -1 out of memory; -2 an element
 * needed MPFR and the build has none. */
int qcx_gemm_rn32(size_t m, size_t n, size_t k, const double *a, const double *b, const float *bias, float *y);

/* sum_i a[i] * b[i] + bias, exact, rounded once to fp32 (RNE, subnormals included; an exact zero is
 * +0). NaN without MPFR. */
float qcx_dot_rn32_mpfr(const double *a, const double *b, size_t k, double bias);

/* "openblas" or "loop": what qcx_dgemm_nt runs on. */
const char *qcx_blas_name(void);

/* 1 when the build has MPFR (then qcx_dot_mpfr works), else 0. */
int qcx_have_mpfr(void);

/* sum_i a[i] * b[i] correctly rounded to fp64 (RNE): products exact at 106 bits, the sum exact at
 * 2400 bits (the exponent range of fp64 products plus log2 K), one final rounding. */
double qcx_dot_mpfr(const double *a, const double *b, size_t k);

/* sum_i |a[i]| |b[i]| rounded UP to fp64 (exact at 2400 bits as above, then MPFR_RNDU; +Inf
 * beyond the fp64 range): a double s bounds the exact sum from above iff s >= this value. */
double qcx_absdot_mpfr_up(const double *a, const double *b, size_t k);

#ifdef __cplusplus
}
#endif

#endif
