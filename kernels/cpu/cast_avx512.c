/* cast_avx512.c: the cast op's kernel, fp32 (or bf16) -> every 8-bit format, e2m1, fp6 and
 * bf16/f16, 16 elements per step (cpu-avx512 backend).
 *
 * Claim: the codes of the reference (reference/formats/minifloat.c, e8m0.c) under the policy of
 * the case, bit for bit: the profiles ptx, torch and ml_dtypes and any explicit policy flag, and
 * every e8m0 rule; log2-ceil (libm ceilf(log2f(.))) through a per-binade mantissa threshold built
 * from that same log2f (encode_avx512.h e8_log2ceil16). The core is encode_avx512.h; this file is
 * the loop with its masked tail. */
#include "cpu_avx512.h"
#include "encode_avx512.h"

int qc_avx512_cast_supported(qc_format to, const qc_cast_policy *p)
{
    if (to == QC_E8M0)
        return p->e8m0 < QC_E8M0_TORCHAO_RCEIL; /* the log2-ceil table has not these later rules */
    return qcref_is_minifloat(to) && p->zero_sign != QC_ZERO_EXACT_POSITIVE; /* not in encode_avx512.h */
}

/* Stores 16 codes (the low `bits` of each lane) as bytes or uint16; n < 16 stores a tail. */
static inline void store16(void *codes, size_t i, __m512i c, int wide, size_t n)
{
    __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
    if (wide)
        _mm512_mask_cvtepi32_storeu_epi16((uint16_t *)codes + i, m, c);
    else
        _mm512_mask_cvtepi32_storeu_epi8((uint8_t *)codes + i, m, c);
}

static inline __m512i load16(const float *x, size_t i, size_t n)
{
    __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
    return _mm512_maskz_loadu_epi32(m, x + i);
}

static void cast_minifloat(qc_minifloat m, const qc_cast_policy *p, const float *x, size_t n, void *codes)
{
    const mf_plan k = mf_plan_of(m, p);
    int wide = m.bits > 8;
    if (k.ties == QC_TIES_EVEN) /* one loop per tie rule, without a test inside */
        for (size_t i = 0; i < n; i += 16)
            store16(codes, i, mf_encode16_with(k, load16(x, i, n - i), 1), wide, n - i);
    else
        for (size_t i = 0; i < n; i += 16)
            store16(codes, i, mf_encode16_with(k, load16(x, i, n - i), 0), wide, n - i);
}

/* bf16 inputs widen exactly to fp32 (the bits shifted left by 16), then the same encoder. */
static inline __m512i load16_bf16(const uint16_t *x, size_t i, size_t n)
{
    __mmask16 m = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
    return _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, x + i)), 16);
}

int qc_avx512_cast_bf16(qc_format to, const qc_cast_policy *p, const uint16_t *x, size_t n, void *codes)
{
    if (!qc_avx512_cast_supported(to, p))
        return -1;
    if (to == QC_E8M0 && p->e8m0 == QC_E8M0_LOG2_CEIL) {
        e8_log2ceil_table T;
        e8_log2ceil_table_init(&T);
        for (size_t i = 0; i < n; i += 16)
            store16(codes, i, e8_log2ceil16(&T, load16_bf16(x, i, n - i)), 0, n - i);
        return 0;
    }
    if (to == QC_E8M0) {
        const qc_cast_policy pol = *p;
        for (size_t i = 0; i < n; i += 16)
            store16(codes, i, e8_encode16(&pol, load16_bf16(x, i, n - i)), 0, n - i);
        return 0;
    }
    qc_minifloat m = qcref_minifloat(to);
    const mf_plan k = mf_plan_of(m, p);
    for (size_t i = 0; i < n; i += 16)
        store16(codes, i, mf_encode16(k, load16_bf16(x, i, n - i)), m.bits > 8, n - i);
    return 0;
}

static void cast_e8m0(const qc_cast_policy *p, const float *x, size_t n, uint8_t *codes)
{
    const qc_cast_policy pol = *p;
    if (p->e8m0 == QC_E8M0_LOG2_CEIL) {
        e8_log2ceil_table T; /* about 6000 log2f calls per cast call */
        e8_log2ceil_table_init(&T);
        for (size_t i = 0; i < n; i += 16)
            store16(codes, i, e8_log2ceil16(&T, load16(x, i, n - i)), 0, n - i);
        return;
    }
    for (size_t i = 0; i < n; i += 16)
        store16(codes, i, e8_encode16(&pol, load16(x, i, n - i)), 0, n - i);
}

int qc_avx512_cast(qc_format to, const qc_cast_policy *p, const float *x, size_t n, void *codes)
{
    if (!qc_avx512_cast_supported(to, p))
        return -1;
    if (to == QC_E8M0)
        cast_e8m0(p, x, n, codes);
    else
        cast_minifloat(qcref_minifloat(to), p, x, n, codes);
    return 0;
}
