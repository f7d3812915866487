/* lt_pack.c: the host side of the cublaslt backend (lt_pack.h): padded shapes, scale layouts,
 * the fp32 epilogue of the bias path. No CUDA here. */
#include "lt_pack.h"

#include <math.h>
#include <string.h>

static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }
static int64_t ceil_div(int64_t x, int64_t by) { return (x + by - 1) / by; }

int qc_lt_kind_supported(qc_gemm_kind kind)
{
    return kind == QC_GEMM_FP8_TENSOR || kind == QC_GEMM_FP8_ROWWISE || kind == QC_GEMM_FP8_BLOCK;
}

void qc_lt_shape_of(qc_gemm_kind kind, int64_t m, int64_t n, int64_t k, qc_lt_shape *s)
{
    memset(s, 0, sizeof *s);
    s->kind = kind, s->m = m, s->n = n, s->k = k;
    s->Mp = round_up(m > 0 ? m : 1, 16);
    s->Np = round_up(n > 0 ? n : 1, kind == QC_GEMM_FP8_BLOCK ? 128 : 16); /* block: whole 128x128 weight blocks */
    s->Kp = round_up(k > 0 ? k : 1, kind == QC_GEMM_FP8_BLOCK ? 128 : 16);
    switch (kind) {
    case QC_GEMM_FP8_ROWWISE:
        s->nsa = s->Np, s->nsb = s->Mp;
        break;
    case QC_GEMM_FP8_BLOCK:
        s->L = s->Kp / 128, s->L4 = round_up(s->L, 4);
        s->nsa = ceil_div(s->Np, 128) * s->L4, s->nsb = s->L * s->Mp;
        break;
    default:
        s->nsa = s->nsb = 1;
        break;
    }
}

size_t qc_lt_canon_scale_bytes(const qc_lt_shape *s, char side)
{
    int64_t rows = side == 'a' ? s->m : s->n, kg = ceil_div(s->k, 128);
    switch (s->kind) {
    case QC_GEMM_FP8_ROWWISE: return (size_t)(4 * rows);
    case QC_GEMM_FP8_BLOCK: return (size_t)(4 * (side == 'a' ? rows * kg : ceil_div(rows, 128) * kg));
    default: return 4;
    }
}

static float at(const void *canon, int64_t i)
{
    float f;
    memcpy(&f, (const unsigned char *)canon + 4 * i, 4);
    return f;
}

void qc_lt_pack_weight_scales(const qc_lt_shape *s, const void *canon, float *out)
{
    memset(out, 0, (size_t)s->nsa * sizeof *out);
    switch (s->kind) {
    case QC_GEMM_FP8_ROWWISE:
        for (int64_t j = 0; j < s->n; j++)
            out[j] = at(canon, j);
        break;
    case QC_GEMM_FP8_BLOCK: /* [ceil(n/128), L] row-major -> rows of L4 */
        for (int64_t r = 0; r < ceil_div(s->n, 128); r++)
            for (int64_t l = 0; l < s->L; l++)
                out[r * s->L4 + l] = at(canon, r * s->L + l);
        break;
    default:
        out[0] = at(canon, 0);
        break;
    }
}

void qc_lt_pack_act_scales(const qc_lt_shape *s, const void *canon, float *out)
{
    memset(out, 0, (size_t)s->nsb * sizeof *out);
    switch (s->kind) {
    case QC_GEMM_FP8_ROWWISE:
        for (int64_t i = 0; i < s->m; i++)
            out[i] = at(canon, i);
        break;
    case QC_GEMM_FP8_BLOCK: /* [m, L] row-major -> [L, Mp] (outer-dimension-major) */
        for (int64_t i = 0; i < s->m; i++)
            for (int64_t l = 0; l < s->L; l++)
                out[l * s->Mp + i] = at(canon, i * s->L + l);
        break;
    default:
        out[0] = at(canon, 0);
        break;
    }
}

void qc_lt_pad_codes(const uint8_t *src, int64_t rows, int64_t k, int64_t rows_p, int64_t kp, uint8_t *dst)
{
    memset(dst, 0, (size_t)(rows_p * kp));
    for (int64_t r = 0; r < rows; r++)
        memcpy(dst + r * kp, src + r * k, (size_t)k);
}

static uint32_t bits_of(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

uint16_t qc_lt_round_bf16(float x)
{
    uint32_t u = bits_of(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)(u >> 16 | 0x0040u); /* quiet NaN, sign and payload top kept */
    return (uint16_t)((u + 0x7FFFu + (u >> 16 & 1u)) >> 16); /* a carry into the exponent is right, Inf included */
}

uint16_t qc_lt_round_f16(float x)
{
    uint32_t u = bits_of(x), sign = u >> 16 & 0x8000u, ax = u & 0x7FFFFFFFu;
    if (ax > 0x7F800000u)
        return (uint16_t)(sign | 0x7E00u | (ax >> 13 & 0x3FFu));
    if (ax >= 0x477FF000u) /* 65520 = 65504 + half an ulp: the tie goes to the even, Inf */
        return (uint16_t)(sign | 0x7C00u);
    if (ax < 0x38800000u) { /* below 2^-14: a multiple of 2^-24, |x| 2^24 < 1024 is exact */
        float v = fabsf(x) * 0x1p24f;
        return (uint16_t)(sign | (uint32_t)nearbyintf(v)); /* the default mode: to nearest even */
    }
    /* normal: rebias the exponent by 15 - 127 and round the 13 dropped bits to nearest even */
    ax += 0xC8000FFFu + (ax >> 13 & 1u);
    return (uint16_t)(sign | ax >> 13);
}

void qc_lt_epilogue(qc_format out, const float *d, int64_t m, int64_t n, int64_t ldd, const float *bias, void *c)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float v = d[i * ldd + j];
            if (bias)
                v = v + bias[j]; /* one fp32 rounding */
            if (out == QC_F32)
                ((float *)c)[i * n + j] = v;
            else
                ((uint16_t *)c)[i * n + j] = out == QC_BF16 ? qc_lt_round_bf16(v) : qc_lt_round_f16(v);
        }
}
