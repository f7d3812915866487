/* transform_avx512.c: normalize_e4m3fn_to_e4m3fnuz with AVX-512 BW (claim: bit-exact with
 * qcref_normalize_e4m3fn_to_e4m3fnuz, docs/spec/formats.md §7.1): 64 bytes per step, 0x80 -> 0x00 by a
 * byte compare and a masked zeroing store; the scales are doubled 16 at a time (exact). */
#include <immintrin.h>

#include "cpu_avx512.h"

void qc_avx512_fnuz_normalize(uint8_t *w, size_t n, float *scales, size_t ns)
{
    const __m512i neg_zero = _mm512_set1_epi8((char)0x80);
    for (size_t i = 0; i < n; i += 64) {
        __mmask64 live = n - i >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (n - i)) - 1;
        __m512i v = _mm512_maskz_loadu_epi8(live, w + i);
        __mmask64 hit = _mm512_mask_cmpeq_epi8_mask(live, v, neg_zero);
        _mm512_mask_storeu_epi8(w + i, hit, _mm512_setzero_si512());
    }
    const __m512 two = _mm512_set1_ps(2.0f);
    for (size_t i = 0; i < ns; i += 16) {
        __mmask16 live = ns - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (ns - i)) - 1);
        __m512 s = _mm512_maskz_loadu_ps(live, scales + i);
        _mm512_mask_storeu_ps(scales + i, live, _mm512_mul_ps(s, two));
    }
}
