/* swizzle_avx512.c: the 128x4 block-scale swizzle of 1-byte scales (cpu-avx512 backend).
 *
 * Claim: the bytes of reference/layouts/sf128x4.c (maps sf128x4 and block_scale_interleave with
 * 1-byte elements), docs/spec/layouts.md §1: [B, R, C] -> [B, Rp, Cp], Rp = pad(R, 128), Cp = pad(C, 4),
 * 512-byte atoms per (128-row tile, 4-column tile) in row-tile-major order; inside an atom the 4
 * scales of row r are one 32-bit word at word (r % 32) * 4 + (r % 128) / 32, padding zero.
 * Method: an atom is a 4 x 32 transpose of 32-bit words, so each 64-byte output vector is one
 * masked gather of 16 source words (rows past R masked to zero). A last column tile with fewer
 * than 4 columns is copied byte by byte (a 32-bit load there would read past the row). */
#include <immintrin.h>
#include <string.h>

#include "cpu_avx512.h"

/* Output words 16v..16v+15 of an atom hold rows (l % 4) * 32 + 4v + l / 4, l = 0..15. */
static void atom(const uint8_t *src, int64_t R, int64_t C, int64_t r0, int64_t c0, uint8_t *dst)
{
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i rowoff = _mm512_add_epi32(_mm512_slli_epi32(_mm512_and_si512(lane, _mm512_set1_epi32(3)), 5),
                                            _mm512_srli_epi32(lane, 2));
    for (int v = 0; v < 8; v++) {
        __m512i rows = _mm512_add_epi32(rowoff, _mm512_set1_epi32((int)(r0 + 4 * v)));
        __mmask16 live = _mm512_cmplt_epi32_mask(rows, _mm512_set1_epi32((int)R));
        __m512i idx = _mm512_mullo_epi32(_mm512_sub_epi32(rows, _mm512_set1_epi32((int)r0)), _mm512_set1_epi32((int)C));
        const uint8_t *base = src + r0 * C + c0;
        __m512i w = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, idx, base, 1);
        _mm512_storeu_si512(dst + 64 * v, w);
    }
}

static void atom_bytes(const uint8_t *src, int64_t R, int64_t C, int64_t r0, int64_t c0, uint8_t *dst)
{
    memset(dst, 0, 512);
    for (int64_t r = r0; r < r0 + 128 && r < R; r++)
        for (int64_t c = c0; c < C; c++)
            dst[(r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4] = src[r * C + c];
}

void qc_avx512_sf128x4(const uint8_t *src, int64_t B, int64_t R, int64_t C, uint8_t *dst)
{
    int64_t Rp = (R + 127) / 128 * 128, Cp = (C + 3) / 4 * 4;
    for (int64_t b = 0; b < B; b++) {
        const uint8_t *s = src + b * R * C;
        uint8_t *d = dst + b * Rp * Cp;
        for (int64_t rt = 0; rt < Rp / 128; rt++)
            for (int64_t ct = 0; ct < Cp / 4; ct++) {
                uint8_t *a = d + (rt * (Cp / 4) + ct) * 512;
                if (ct * 4 + 4 <= C)
                    atom(s, R, C, rt * 128, ct * 4, a);
                else
                    atom_bytes(s, R, C, rt * 128, ct * 4, a);
            }
    }
}
