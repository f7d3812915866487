/* lt_model.c: lt_device.h on the CPU, for the test-only plugin cublaslt-model. The same packed
 * problem the cuBLASLt path builds (zero-padded operands, scales in cuBLASLt's layouts,
 * lt_pack.h), multiplied the way cuBLASLt's documentation describes it and rounded as an fp32
 * kernel would: every e4m3 x e4m3 product is exact in fp32; tensor and rowwise sum all of K in
 * fp32, then scale (sa * sb) once; block sums each 128-deep block in fp32 and adds
 * partial * sa * sb into an fp32 accumulator; D is rounded to its type (RNE) and cropped.
 * What this cannot tell is whether cuBLASLt reads its scales as documented: the GPU run does. */
#include <string.h>

#include "lt_device.h"

static float code_value[256];

static void decode_table(void)
{
    for (int c = 0; c < 256; c++) {
        int e = c >> 3 & 15, m = c & 7;
        float v = e ? (1.0f + (float)m / 8.0f) * (float)(1 << e) / 128.0f : (float)m / 512.0f;
        code_value[c] = (c & 0x7F) == 0x7F ? __builtin_nanf("") : c & 0x80 ? -v : v;
    }
}

int qc_lt_dev_probe(char *out, size_t n)
{
    (void)n;
    out[0] = '\0';
    return 0;
}

int qc_lt_dev_open(int device, const char *libpath, char *why, size_t n)
{
    (void)device, (void)libpath, (void)why, (void)n;
    decode_table();
    return 0;
}

void qc_lt_dev_close(void) {}

/* Element (row, kk) of a padded K-contiguous operand: zero outside the unpadded one. */
static float at(const uint8_t *x, int64_t rows, int64_t k, int64_t row, int64_t kk)
{
    return row < rows && kk < k ? code_value[x[row * k + kk]] : 0.0f;
}

int qc_lt_dev_gemm(const qc_lt_shape *s, qc_format dfmt, const void *a, const void *b, const float *sa_lt,
                   const float *sb_lt, void *d, char *why, size_t n)
{
    (void)why, (void)n;
    const uint8_t *A = b, *B = a; /* cuBLASLt's A is the weights, its B the activations */
    for (int64_t j = 0; j < s->m; j++)     /* D's columns that survive the crop: the tokens */
        for (int64_t i = 0; i < s->n; i++) { /* its rows: the channels */
            volatile float acc = 0.0f;      /* one fp32 rounding per operation, never contracted */
            if (s->kind == QC_GEMM_FP8_BLOCK) {
                for (int64_t l = 0; l < s->L; l++) {
                    volatile float part = 0.0f;
                    for (int64_t kk = l * 128; kk < (l + 1) * 128; kk++)
                        part = part + at(A, s->n, s->k, i, kk) * at(B, s->m, s->k, j, kk);
                    volatile float scaled = part * sa_lt[(i / 128) * s->L4 + l];
                    scaled = scaled * sb_lt[l * s->Mp + j];
                    acc = acc + scaled;
                }
            } else {
                for (int64_t kk = 0; kk < s->Kp; kk++)
                    acc = acc + at(A, s->n, s->k, i, kk) * at(B, s->m, s->k, j, kk);
                volatile float scale = s->kind == QC_GEMM_FP8_ROWWISE ? sa_lt[i] * sb_lt[j] : sa_lt[0] * sb_lt[0];
                acc = acc * scale;
            }
            float v = acc;
            if (dfmt == QC_F32)
                ((float *)d)[j * s->n + i] = v;
            else
                ((uint16_t *)d)[j * s->n + i] = dfmt == QC_BF16 ? qc_lt_round_bf16(v) : qc_lt_round_f16(v);
        }
    return 0;
}
