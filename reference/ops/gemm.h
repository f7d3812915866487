/* gemm.h: quantized GEMM reference math (docs/spec/formats.md §9): what each kind of W8A8 /
 * MX / NVFP4 GEMM computes from its quantized operands, and the per-element error bound of a
 * kernel that accumulates in fp32 (docs/DESIGN.md "Comparison rules").
 *
 * C[m, n] = alpha * sum_k A[m, k] * B[n, k] + bias[n], A [M, K] activations, B [N, K] weights
 * (the "TN" layout of torch._scaled_mm and every kernel of formats.md §9), where A and B are the operands
 * dequantized EXACTLY: a code times its scale(s) is exact in fp64 (at most 4 + 4 + 24 significant
 * bits), so the only rounding of the reference is the fp64 sum, certified by reference/exact.
 * libm only: the fp64 product itself is computed by reference/exact (OpenBLAS dgemm). */
#ifndef QCREF_GEMM_H
#define QCREF_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "../formats/formats.h"
#include "../recipes/recipes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The GEMM kinds of formats.md §9 and the recipes of their operands (gemm.c's table). */
typedef enum qc_gemm_kind {
    QC_GEMM_FP8_TENSOR,  /* formats.md §9.2 tensorwise: (sa*sb) * (A_q @ B_q) */
    QC_GEMM_FP8_ROWWISE, /* formats.md §9.2 per-token x per-channel: acc * x_scale[m] * w_scale[n] */
    QC_GEMM_FP8_BLOCK,   /* formats.md §9.1 1x128 activations x 128x128 weights, per-128 partial dots then scales */
    QC_GEMM_MXFP8,       /* formats.md §9.3 e8m0 per 1x32 on both operands */
    QC_GEMM_MXFP4_BF16,  /* formats.md §9.3 MXFP4 weights x bf16 activations (triton_kernels matmul_ogs w4a16) */
    QC_GEMM_NVFP4,       /* formats.md §9.3 e4m3 per 1x16 on both, alpha = fl32(input_scale * weight_scale_2) */
    QC_GEMM_INT8_ROWWISE, /* sgl-kernel CPU int8_scaled_mm_cpu: per-token x per-channel symmetric int8,
                           * int32 accumulation, a bit-exact fp32 epilogue (qcref_int8_epilogue) */
    QC_GEMM_KIND_COUNT
} qc_gemm_kind;

typedef struct qc_gemm_kind_info {
    const char *name;
    int recipe_a;     /* qc_recipe of A, or -1: A is rounded to bf16 (no scale) */
    qc_recipe recipe_b;
    int group_k;      /* the K extent of one scale (0: one scale for all of K) */
    const char *doc;
} qc_gemm_kind_info;

const qc_gemm_kind_info *qcref_gemm_kind(int k); /* NULL out of range */
int qcref_gemm_kind_from_name(const char *s);     /* -1 when unknown */

/* Operand values in fp64, exactly: code * scale (nvfp4: code * e4m3 block scale; the global
 * scale goes into alpha, as the kernels apply it). *pow2 is set to 0 when some scale is not a
 * power of two (or zero): then the exactness proof of qcref_gemm_exact_grid does not apply. */
void qcref_operand_f64(qc_recipe r, const qc_recipe_policy *p, const qc_quantized *q, double *out, int *pow2);

/* alpha of a kind: fl32(gs_a * gs_b) for nvfp4 (formats.md §9.3), else 1. */
float qcref_gemm_alpha(qc_gemm_kind k, float gs_a, float gs_b);

/* The exponent of the lowest set bit of x (x finite and nonzero): x is a multiple of 2^lsb. */
int qcref_lsb_exponent(double x);

/* min over a row of qcref_lsb_exponent (zeros skipped; INT32_MAX for an all-zero row). */
int qcref_row_lsb(const double *row, size_t n);

/* Per-element error bound of an fp32-accumulating kernel against the reference's stored output,
 * from the fp64 value y64 = alpha * dot + bias (fp64 dgemm) and any s >= |alpha| * sum_k |A B| +
 * |bias| (reference/exact's qcx_gemm gives a proven upper bound from K-block norms, up to ~1.5x the
 * exact sum on random data; every term below only grows with s, so it stays sound). Terms (all in units of the fp32 roundoff u = 2^-24, gamma(n) = n u / (1 - n u),
 * Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 3.1 and (3.4)):
 *   E    = gamma(K + 4) s + (K + 4) 2^-149   fp32: K products and K-1 sums in ANY order/blocking,
 *                                             two scale products, alpha, bias; underflow per op
 *   F    = gamma53(K + 2) s                   the fp64 reference's own sum (certified by MPFR)
 *   out  = u_out (|y64| + F + E) twice        the kernel's and the reference's rounding to out
 *   + one smallest subnormal of out for each of the two roundings.
 * exact != 0 (qcref_gemm_exact_grid proved every partial sum exact in fp32): 0, and the check is
 * bit-exact: the kernel's fp32 accumulator holds y64 itself, so its output is y64 rounded once to
 * out, to nearest (qcref_gemm_round_out); a kernel rounding toward zero there fails. */
double qcref_gemm_bound(double y64, double s, size_t k, qc_format out, int exact);
/* Near the top of out's range (|y64| + bound reaches the RNE overflow threshold, max + half an
 * ulp) a kernel may round to +-Inf or stay finite; the comparator reads +-Inf as +-threshold
 * there (harness/compare.c), so the bound admits Inf of the right sign and never 0 or the other
 * Inf. A y64 or s that is not finite (an Inf or NaN input) has bound 0: the same Inf or NaN.
 * qcref_gemm_may_overflow says whether an fp32 intermediate (MoE's GEMM2 output) may be Inf. */
int qcref_gemm_may_overflow(double y64, double bound, qc_format out);

/* The K of qcref_gemm_bound for a kernel's accumulation structure. grouped = 0: any order over all
 * K terms (K). grouped = 1, the block-scaled kernels of formats.md §9.1 (Triton
 * w8a8_block_fp8_matmul, DeepGEMM's promotion every 128): fp32 partial dots of exact code products
 * over each group_k block in any order (group_k - 1 sums), two scale products, then the
 * ceil(K / group_k) partials summed in any order: group_k + ceil(K / group_k) (Higham (3.4) on
 * each level), far below K for large K. Kinds without K groups: K. */
size_t qcref_gemm_bound_k(qc_gemm_kind kind, size_t k, int grouped);

/* The exactness proof: every term alpha*A*B and the bias is a multiple of 2^grid (grid = the sum
 * of the operands' row lsbs and alpha's, or the bias's lsb), and s < 2^(grid + 24): then every
 * partial sum in every order is a multiple of 2^grid below 2^24 ulps, exact in fp32; power-of-two
 * scales keep it so through the scale products. Returns 1 when that holds (y64 is then an fp32
 * value; out no longer matters: the output rounding is fixed, RNE, whether or not y64 is an out value). */
int qcref_gemm_exact_grid(int grid, double s, double y64, qc_format out, int pow2_scales);

/* y64 rounded (RNE) to the output format: bf16, f16 (16-bit codes) or f32 bits. */
uint32_t qcref_gemm_round_out(double y64, qc_format out);

/* ---- model sm90-wgmma: the H200's FP8 tensor core, bit for bit (docs/notes/mma_sm90.md) ----
 * c[i, j] = out(v (+ fl32 bias[j])), acc = qcref_sm90_mma_dot of the codes (K zero-padded to a
 * multiple of 32) under the K schedule `promote` (k-steps between fp32 additions; 0: the whole K in
 * the tensor core), and cuBLASLt's epilogue (formats.md §16): one scale per tensor, v =
 * fl32(fl32(sa sb) acc); one per row, v = fl32(fl32(acc sb[j]) sa[i]). cuBLASLt's FP8 GEMM is this
 * with promote 4 (fast accumulation off) or 0 (on), bit for bit on the H200 (golden/tensor-core/).
 * sa / sb: the scales of the rows of a / b (sa_stride = sb_stride = 0: one per tensor). The
 * elements are e4m3fn or e5m2 (e5m2 = 1), the inputs wgmma takes; k < 2^31. Writes the fp32
 * results to y (the caller rounds them to the output format, RNE); -1 when out of memory. */
int qcref_gemm_sm90(const uint8_t *a, int a_e5m2, const uint8_t *b, int b_e5m2, size_t m, size_t n, size_t k,
                    const float *sa, size_t sa_stride, const float *sb, size_t sb_stride, const float *bias,
                    int promote, float *y);

/* The block-scaled form (kind fp8_block: a's scales [m, L] per 1x128 group, b's [ceil(n/128), L]
 * per 128x128 block, L = ceil(k/128), both row-major): for each 128-deep K block the tensor core's
 * sum p of its 4 k-steps from zero, then t = fma(p, fl32(sa[i, l] sb[j/128, l]), t) from t = 0 in
 * K order, then the fp32 bias; cuBLASLt's BLK128x128 x VEC128 matmul bit for bit on the H200
 * (formats.md §16) and DeepGEMM's promotion, with the fma its `+=` compiles to. -1 when out of memory. */
int qcref_gemm_sm90_block(const uint8_t *a, int a_e5m2, const uint8_t *b, int b_e5m2, size_t m, size_t n, size_t k,
                          const float *sa, const float *sb, const float *bias, float *y);

/* ---- int8_rowwise: sgl-kernel CPU W8A8 (sgl-kernel/csrc/cpu/gemm_int8.cpp, vec.h) ----
 * The int32 sum of s8 x s8 products is exact, so the reference is bit-exact: the kernel's own fp32
 * epilogue in its own op order, nothing left to bound. */

/* The largest K: the kernel sums u8 (s8 + 128, <= 255) x s8 (|w| <= 127) products in int32, and
 * K * 255 * 127 < 2^31 for K <= 66311 (no wraparound anywhere); 65536 is the limit qcheck states. */
#define QCREF_INT8_MAX_K 65536

/* How std::round-like rounding breaks ties in quantize_row_int8: the AVX-512 bf16 specialization
 * (the path of an AVX-512/AMX CPU) rounds with _mm512_roundscale_ps(TO_NEAREST_INT): ties to even;
 * the generic template uses std::round: ties away from zero. */
typedef enum qc_int8_ties { QC_INT8_TIES_EVEN, QC_INT8_TIES_AWAY } qc_int8_ties;

/* sgl-kernel csrc/cpu/vec.h quantize_row_int8 (per_token_quant_int8_cpu): amax = max(max_k |x|,
 * 1e-7f); scale = amax / 127 and inv = 127 / amax (two fp32 divisions); q = round(x * inv) (fp32
 * product), no clamp (|x * inv| < 127.5 always). The kernel stores q + 128 as u8. Returns scale. */
float qcref_quantize_row_int8(const float *x, size_t k, qc_int8_ties ties, int8_t *q);

/* sgl-kernel csrc/cpu/gemm_int8.cpp tinygemm_kernel_nn<BFloat16>::apply, the store lambda:
 * v = cvtepi32_ps(acc - comp) (RNE), then with bias fmadd(v * As[m], Bs[n], bias[n]) (one fused
 * rounding), without bias (v * As[m]) * Bs[n]; acc - comp is the s8 x s8 dot. The kernel then
 * rounds to bf16 with cvtne2ps_pbh (RNE). */
float qcref_int8_epilogue(int32_t dot, float as, float bs, const float *bias);

#ifdef __cplusplus
}
#endif

#endif
