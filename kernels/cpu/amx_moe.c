/* amx_moe.c: claim: the stages of sgl-kernel's fused_experts_cpu with fp8 w8a16 (sglang
 * sgl-kernel/csrc/cpu/moe_fp8.cpp fused_experts_fp8_kernel_impl): GEMM1 of an expert's gathered
 * bf16 rows with its packed fp8 w13 (qc_amx_gemm_fp8: unpack_B to bf16, TDPBF16PS, fp32) stored
 * as bf16 ic0; silu_and_mul_stub (moe.h) with PyTorch's Vectorized<float>::exp_u20 (vec512_float.h)
 * -> bf16 ic1; GEMM2 with packed w2 stored as bf16 C (the kernel's `scalar_t C[]`); copy_mul_stub
 * (C * routing weight in fp32 -> bf16 ic2); sum_stub over top-k in slot order from 0 -> bf16.
 * Checked against op moe_cpu within out.bound (harness/ops/op_moe_cpu.c). Single-threaded. */
#include "amx_moe.h"

#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

/* bf16 codes (16 lanes, masked) -> fp32 */
static inline __m512 load_bf16(const uint16_t *p, __mmask16 m)
{
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
}

static inline void store_bf16(uint16_t *p, __mmask16 m, __m512 v)
{
    _mm256_mask_storeu_epi16(p, m, (__m256i)_mm512_cvtneps_pbh(v));
}

static inline __mmask16 tail_mask(int64_t left) { return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1); }

/* PyTorch vec512_float.h Vectorized<float>::exp_u20, operation for operation: clamp to [ln
 * FLT_MIN, ln FLT_MAX], n = floor(x log2e + 0.5) (fmadd, cvt_roundps_epi32 toward -inf), r = x -
 * n ln2 (fnmadd), Horner with the coefficients 0.999999701, 0.499991506, 0.166676521,
 * 0.0418978221, 0.00828929059, times 2^(n-1) built in the exponent field (0 below ln FLT_MIN),
 * times 2. */
static inline __m512 exp_u20(__m512 x)
{
    const __m512 lnmin = _mm512_castsi512_ps(_mm512_set1_epi32((int)0xC2AEAC50u));
    const __m512 lnmax = _mm512_castsi512_ps(_mm512_set1_epi32(0x42B17218));
    const __m512 log2e = _mm512_castsi512_ps(_mm512_set1_epi32(0x3FB8AA3B));
    const __m512 ln2 = _mm512_castsi512_ps(_mm512_set1_epi32(0x3F317218));
    const __m512 one = _mm512_set1_ps(1.0f);
    __mmask16 below = _mm512_cmp_ps_mask(x, lnmin, _CMP_LT_OS);
    __m512 s = _mm512_max_ps(_mm512_min_ps(x, lnmax), lnmin);
    __m512 fx = _mm512_fmadd_ps(s, log2e, _mm512_set1_ps(0.5f));
    fx = _mm512_cvtepi32_ps(_mm512_cvt_roundps_epi32(fx, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
    __m512 r = _mm512_fnmadd_ps(fx, ln2, s);
    __m512 p = _mm512_fmadd_ps(r, _mm512_set1_ps(0.00828929059f), _mm512_set1_ps(0.0418978221f));
    p = _mm512_fmadd_ps(r, p, _mm512_set1_ps(0.166676521f));
    p = _mm512_fmadd_ps(r, p, _mm512_set1_ps(0.499991506f));
    p = _mm512_fmadd_ps(r, p, _mm512_set1_ps(0.999999701f));
    p = _mm512_fmadd_ps(r, p, one);
    __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_sub_ps(fx, one)), _mm512_set1_epi32(127));
    __m512 two = _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
    two = _mm512_mask_blend_ps(below, two, _mm512_setzero_ps());
    return _mm512_mul_ps(_mm512_mul_ps(p, two), _mm512_set1_ps(2.0f));
}

void qc_amx_silu_and_mul(const uint16_t *in, int64_t inter, uint16_t *out)
{
    const __m512 one = _mm512_set1_ps(1.0f), neg = _mm512_set1_ps(-0.0f);
    for (int64_t d = 0; d < inter; d += 16) {
        __mmask16 m = tail_mask(inter - d);
        __m512 g = load_bf16(in + d, m), u = load_bf16(in + inter + d, m);
        __m512 q = _mm512_div_ps(g, _mm512_add_ps(one, exp_u20(_mm512_xor_ps(g, neg))));
        store_bf16(out + d, m, _mm512_mul_ps(q, u));
    }
}

void qc_amx_copy_mul(const uint16_t *c, float w, int64_t n, uint16_t *out)
{
    const __m512 wv = _mm512_set1_ps(w);
    for (int64_t d = 0; d < n; d += 16) {
        __mmask16 m = tail_mask(n - d);
        store_bf16(out + d, m, _mm512_mul_ps(load_bf16(c + d, m), wv));
    }
}

void qc_amx_sum(const uint16_t *in, int64_t topk, int64_t n, uint16_t *out)
{
    if (topk == 1) {
        memcpy(out, in, (size_t)n * 2);
        return;
    }
    for (int64_t d = 0; d < n; d += 16) {
        __mmask16 m = tail_mask(n - d);
        __m512 s = _mm512_setzero_ps();
        for (int64_t t = 0; t < topk; t++)
            s = _mm512_add_ps(s, load_bf16(in + t * n + d, m));
        store_bf16(out + d, m, s);
    }
}

int qc_amx_moe_expert(const uint16_t *a, int64_t cnt, int64_t hidden, int64_t inter, const qc_amx_weights *w13,
                      const qc_amx_weights *w2, uint16_t *ic0, uint16_t *ic1, uint16_t *c)
{
    qc_amx_act x = {0}, y = {0};
    int rc = qc_amx_act_bf16(a, cnt, hidden, w13, &x) || qc_amx_gemm_fp8(&x, w13, NULL, 0, ic0, 0, 2 * inter);
    for (int64_t r = 0; !rc && r < cnt; r++)
        qc_amx_silu_and_mul(ic0 + r * 2 * inter, inter, ic1 + r * inter);
    rc = rc || qc_amx_act_bf16(ic1, cnt, inter, w2, &y) || qc_amx_gemm_fp8(&y, w2, NULL, 0, c, 0, hidden);
    qc_amx_act_free(&x);
    qc_amx_act_free(&y);
    return rc ? 2 : 0;
}
