/* lt_pack.h: the host side of the cublaslt backend, with no CUDA in it (so that
 * test_lt_pack.c checks it on any machine): the cuBLASLt problem a qcheck GEMM becomes, the
 * scale buffers in the layouts cuBLASLt reads, and the fp32 epilogue (bias, rounding to bf16 /
 * f16) used when a bias is given.
 *
 * The problem (docs/notes/cublaslt.md "Layouts"). qcheck: c [m, n] row-major = a [m, k] x b [n, k]^T
 * with the kind's scales, both operands K-contiguous. cuBLASLt is column-major and, for FP8 on
 * sm_90, takes only TN (op(A) transposed, op(B) not). Read as column-major, c is the Np x Mp matrix
 * D = c^T (ld Np), b is a Kp x Np matrix (ld Kp) whose transpose is [n, k], and a is a Kp x Mp
 * matrix (ld Kp). So
 *     cuBLASLt A = b (the weights),     transa = T, rows Kp, cols Np, ld Kp
 *     cuBLASLt B = a (the activations), transb = N, rows Kp, cols Mp, ld Kp
 *     cuBLASLt D = c^T,                              rows Np, cols Mp, ld Np
 * and cuBLASLt's M, N, K are Np, Mp, Kp. The operands are zero-padded to Mp = roundup(m, 16),
 * Np = roundup(n, 16) rows and Kp = roundup(k, 16) columns (fp8_block: Np = roundup(n, 128) and
 * Kp = roundup(k, 128), so that every weight block and K block is whole); the zeros add nothing
 * to any sum, and c is cropped from D.
 *
 * The scales: cuBLASLt's A scale belongs to b, its B scale to a.
 *   fp8_tensor   SCALAR_32F both: one fp32 each.
 *   fp8_rowwise  OUTER_VEC_32F both: A scale [Np] (b's per-channel scales), B scale [Mp] (a's
 *                per-token scales), zero in the padding.
 *   fp8_block    A: BLK128x128_32F, one fp32 per 128x128 block of b, K-block-major with the K
 *                blocks padded to L4 = roundup(L, 4), L = Kp / 128: sa[r * L4 + l] for row block r
 *                (ceil(Np / 128) = ceil(n / 128) of them), the canonical [ceil(n/128), L] row-major
 *                array with its rows padded from L to L4;
 *                B: VEC128_32F, one fp32 per 1x128 group of a, outer-dimension-major: sb[l * Mp + i],
 *                the transpose of the canonical [m, L] row-major array, zero in rows m..Mp-1. */
#ifndef QC_LT_PACK_H
#define QC_LT_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "formats/formats.h"
#include "ops/gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qc_lt_shape {
    qc_gemm_kind kind;
    int64_t m, n, k;    /* the qcheck problem */
    int64_t Mp, Np, Kp; /* padded: cuBLASLt's N, M, K */
    int64_t L, L4;      /* fp8_block: K blocks of 128, and their count padded to a multiple of 4 */
    int64_t nsa, nsb;   /* floats in the cuBLASLt A (weights) and B (activations) scale buffers */
    int fast;           /* CUBLASLT_MATMUL_DESC_FAST_ACCUM: the whole K in the tensor core (model sm90-wgmma-fast) */
} qc_lt_shape;

/* The kinds handled: fp8_tensor, fp8_rowwise, fp8_block. */
int qc_lt_kind_supported(qc_gemm_kind kind);

/* The padded problem of a kind and shape (m, n, k >= 0). */
void qc_lt_shape_of(qc_gemm_kind kind, int64_t m, int64_t n, int64_t k, qc_lt_shape *s);

/* Bytes of the canonical scales `qcheck quant` writes for the activations (side 'a', rows m) or
 * the weights (side 'b', rows n): tensor 4, token 4 rows, token_group 4 rows ceil(k / 128),
 * block 4 ceil(rows / 128) ceil(k / 128). */
size_t qc_lt_canon_scale_bytes(const qc_lt_shape *s, char side);

/* The canonical scale bytes of b -> cuBLASLt's A scale buffer (nsa floats), of a -> its B scale
 * buffer (nsb floats), in the layouts above. canon may be unaligned. */
void qc_lt_pack_weight_scales(const qc_lt_shape *s, const void *canon, float *out);
void qc_lt_pack_act_scales(const qc_lt_shape *s, const void *canon, float *out);

/* rows x k codes -> a rows_p x kp zero-padded copy (what the backend does with cudaMemcpy2D). */
void qc_lt_pad_codes(const uint8_t *src, int64_t rows, int64_t k, int64_t rows_p, int64_t kp, uint8_t *dst);

/* fp32 -> bf16 / f16 codes, round to nearest even (IEEE 754 convertFormat): overflow to Inf,
 * f16 subnormals rounded, a NaN stays a quiet NaN of its sign. */
uint16_t qc_lt_round_bf16(float x);
uint16_t qc_lt_round_f16(float x);

/* The epilogue of the bias path: d [m, n] fp32 (row stride ldd floats), the cuBLASLt result
 * acc * scales rounded to fp32, gets fl32(d + bias[j]) (bias may be NULL) and is rounded to out
 * (bf16 / f16 codes or f32) into c [m, n] row-major. c may be d when out is f32 and ldd == n. */
void qc_lt_epilogue(qc_format out, const float *d, int64_t m, int64_t n, int64_t ldd, const float *bias, void *c);

#ifdef __cplusplus
}
#endif

#endif
