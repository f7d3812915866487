/* test_lt_pack.c: the host side of the cublaslt backend (lt_pack.c) without a GPU.
 *
 * 1. Layouts: for each kind and shapes with every kind of padding, canonical operands and scales
 *    (as `qcheck quant` writes them) are packed as the backend packs them, then multiplied by a
 *    CPU model of what cuBLASLt documents for that problem (column-major, TN, D = Np x Mp with ld
 *    Np, the kind's scale modes and layouts of lt_pack.h), cropped, and compared with the qcheck
 *    GEMM computed straight from the canonical arrays (in double, to 1e-12 relative). A wrong
 *    transpose, stride, padding or scale index fails here; whether cuBLASLt reads its scales the
 *    way the model says is what the GPU run checks (docs/notes/cublaslt.md).
 * 2. Rounding: qc_lt_round_bf16 / qc_lt_round_f16 on every finite code, every midpoint between
 *    neighbours (ties to even) and one fp32 ulp either side of it, overflow, NaN, signed zeros.
 * 3. The epilogue: fl32(d + bias) then the rounding, and the in-place f32 case.
 * Exit 0 when everything holds, 1 otherwise (the first failures printed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_pack.h"

static int failures;

#define CHECK(cond, ...)                                                                                       \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            if (failures++ < 20) {                                                                             \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                    \
                printf(__VA_ARGS__);                                                                           \
                printf("\n");                                                                                  \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_u32(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* e4m3fn: 1-4-3, bias 7, no Inf, 0x7F / 0xFF NaN (never generated here). */
static double e4m3(uint8_t c)
{
    int e = c >> 3 & 15, m = c & 7;
    double v = e ? ldexp(1.0 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);
    return c & 0x80 ? -v : v;
}

static uint8_t random_code(void)
{
    uint8_t c;
    do
        c = (uint8_t)next_u32();
    while ((c & 0x7F) == 0x7F);
    return c;
}

static float random_scale(void) { return ldexpf(1.0f + (float)(next_u32() % 1000) / 1000.0f, (int)(next_u32() % 9) - 6); }

/* The canonical scale of element (row, col) of a side ('a': m rows, 'b': n rows). */
static double canon_scale(const qc_lt_shape *s, char side, const float *sc, int64_t row, int64_t col)
{
    int64_t kg = (s->k + 127) / 128;
    switch (s->kind) {
    case QC_GEMM_FP8_ROWWISE: return sc[row];
    case QC_GEMM_FP8_BLOCK: return side == 'a' ? sc[row * kg + col / 128] : sc[(row / 128) * kg + col / 128];
    default: return sc[0];
    }
}

/* What cuBLASLt computes for the packed problem, as its documentation reads (lt_pack.h). */
static void model(const qc_lt_shape *s, const uint8_t *A, const uint8_t *B, const float *sa, const float *sb,
                  double *D)
{
    for (int64_t j = 0; j < s->Mp; j++)     /* columns of D: op(B)'s columns, the tokens */
        for (int64_t i = 0; i < s->Np; i++) { /* rows of D: op(A)'s rows, the channels */
            double acc = 0;
            if (s->kind == QC_GEMM_FP8_BLOCK) {
                for (int64_t l = 0; l < s->L; l++) {
                    double part = 0;
                    for (int64_t kk = l * 128; kk < (l + 1) * 128; kk++)
                        part += e4m3(A[i * s->Kp + kk]) * e4m3(B[j * s->Kp + kk]);
                    acc += part * sa[(i / 128) * s->L4 + l] * sb[l * s->Mp + j];
                }
            } else {
                for (int64_t kk = 0; kk < s->Kp; kk++)
                    acc += e4m3(A[i * s->Kp + kk]) * e4m3(B[j * s->Kp + kk]);
                acc *= s->kind == QC_GEMM_FP8_ROWWISE ? (double)sa[i] * sb[j] : (double)sa[0] * sb[0];
            }
            D[j * s->Np + i] = acc;
        }
}

static void one_problem(qc_gemm_kind kind, int64_t m, int64_t n, int64_t k)
{
    qc_lt_shape s;
    qc_lt_shape_of(kind, m, n, k, &s);
    CHECK(s.Mp % 16 == 0 && s.Np % 16 == 0 && s.Kp % 16 == 0 && s.Mp >= m && s.Np >= n && s.Kp >= k,
          "padding of %lld x %lld x %lld", (long long)m, (long long)n, (long long)k);
    if (kind == QC_GEMM_FP8_BLOCK)
        CHECK(s.Kp % 128 == 0 && s.Np % 128 == 0 && s.L == (k + 127) / 128 && s.L4 % 4 == 0 &&
                  (s.Np + 127) / 128 == (n + 127) / 128,
              "block padding of k=%lld n=%lld", (long long)k, (long long)n);
    uint8_t *a = malloc((size_t)(m * k) + 1), *b = malloc((size_t)(n * k) + 1);
    size_t sab = qc_lt_canon_scale_bytes(&s, 'a'), sbb = qc_lt_canon_scale_bytes(&s, 'b');
    float *sca = malloc(sab + 4), *scb = malloc(sbb + 4);
    for (int64_t i = 0; i < m * k; i++)
        a[i] = random_code();
    for (int64_t i = 0; i < n * k; i++)
        b[i] = random_code();
    for (size_t i = 0; i < sab / 4; i++)
        sca[i] = random_scale();
    for (size_t i = 0; i < sbb / 4; i++)
        scb[i] = random_scale();
    /* the scales as bytes at an odd address, as the harness's u8 views may be */
    unsigned char *ua = malloc(sab + 1), *ub = malloc(sbb + 1);
    memcpy(ua + 1, sca, sab);
    memcpy(ub + 1, scb, sbb);
    uint8_t *A = malloc((size_t)(s.Np * s.Kp)), *B = malloc((size_t)(s.Mp * s.Kp));
    float *psa = malloc((size_t)s.nsa * 4), *psb = malloc((size_t)s.nsb * 4);
    double *D = malloc((size_t)(s.Np * s.Mp) * sizeof *D);
    qc_lt_pad_codes(b, n, k, s.Np, s.Kp, A);
    qc_lt_pad_codes(a, m, k, s.Mp, s.Kp, B);
    qc_lt_pack_weight_scales(&s, ub + 1, psa);
    qc_lt_pack_act_scales(&s, ua + 1, psb);
    model(&s, A, B, psa, psb, D);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double want = 0, mag = 0;
            for (int64_t kk = 0; kk < k; kk++) {
                double t = e4m3(a[i * k + kk]) * e4m3(b[j * k + kk]) * canon_scale(&s, 'a', sca, i, kk) *
                           canon_scale(&s, 'b', scb, j, kk);
                want += t, mag += fabs(t);
            }
            double got = D[i * s.Np + j]; /* D = c^T column-major = c row-major with row stride Np */
            CHECK(fabs(got - want) <= 1e-12 * mag + 1e-300, "kind %d m=%lld n=%lld k=%lld c[%lld, %lld]: model %.17g, "
                  "direct %.17g", (int)kind, (long long)m, (long long)n, (long long)k, (long long)i, (long long)j, got,
                  want);
        }
    free(a), free(b), free(sca), free(scb), free(ua), free(ub), free(A), free(B), free(psa), free(psb), free(D);
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static double f16_value(uint16_t h)
{
    int e = h >> 10 & 31, m = h & 1023;
    double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return h & 0x8000 ? -v : v;
}

static double bf16_value(uint16_t h) { return from_bits((uint32_t)h << 16); }

/* Every finite non-negative code, the midpoint to its successor (ties to even) and one fp32
 * ulp either side of the midpoint, with both signs. */
static void rounding(const char *name, uint16_t (*round)(float), double (*value)(uint16_t), uint16_t inf)
{
    for (uint32_t h = 0; h < inf; h++) {
        double lo = value((uint16_t)h), hi = value((uint16_t)(h + 1));
        if (h + 1 == inf) /* the overflow threshold: max + half an ulp rounds to Inf (the even) */
            hi = lo + (lo - value((uint16_t)(h - 1)));
        for (int sg = 0; sg < 2; sg++) {
            uint16_t s = sg ? 0x8000 : 0;
            float x = (float)(sg ? -lo : lo);
            CHECK(round(x) == (s | h), "%s(%a) = 0x%04x, want 0x%04x", name, x, round(x), s | h);
            float mid = (float)((lo + hi) / 2); /* exact: 12 (f16) or 9 (bf16) significant bits */
            if ((double)mid != (lo + hi) / 2)
                continue;
            uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
            float below = nextafterf(mid, 0.0f), above = nextafterf(mid, INFINITY);
            if (sg)
                mid = -mid, below = -below, above = -above;
            CHECK(round(mid) == (s | even), "%s(%a) = 0x%04x, want the even 0x%04x", name, mid, round(mid), s | even);
            CHECK(round(below) == (s | h), "%s(%a) = 0x%04x, want 0x%04x", name, below, round(below), s | h);
            CHECK(round(above) == (s | (h + 1)), "%s(%a) = 0x%04x, want 0x%04x", name, above, round(above),
                  s | (h + 1));
        }
    }
    CHECK(round(INFINITY) == inf && round(-INFINITY) == (0x8000 | inf), "%s of +-Inf", name);
    CHECK(round(3.4e38f) == inf && round(-3.4e38f) == (0x8000 | inf), "%s overflow of 3.4e38", name);
    uint16_t qn = round(NAN), nq = round(from_bits(0xFF800001u));
    CHECK((qn & 0x7FFF) > inf && (nq & 0x7FFF) > inf && (nq & 0x8000), "%s of NaN: 0x%04x 0x%04x", name, qn, nq);
    CHECK(round(-0.0f) == 0x8000 && round(0.0f) == 0, "%s of signed zeros", name);
    CHECK(round(from_bits(1)) == 0 && round(from_bits(0x80000001u)) == 0x8000, "%s of the smallest fp32 subnormal",
          name);
}

static void epilogue(void)
{
    float d[6] = {1.0f, 0x1p-30f, -3.5f, 65504.0f, 1e30f, 0.1f}, bias[3] = {0x1p24f, 1.0f, 0.25f};
    uint16_t c[6];
    float f[6];
    qc_lt_epilogue(QC_BF16, d, 2, 3, 3, bias, c);
    for (int i = 0; i < 6; i++) {
        float v = d[i] + bias[i % 3];
        CHECK(c[i] == qc_lt_round_bf16(v), "bf16 epilogue [%d]", i);
    }
    qc_lt_epilogue(QC_F16, d, 2, 2, 3, NULL, c); /* ldd 3, n 2: the crop */
    CHECK(c[0] == qc_lt_round_f16(d[0]) && c[1] == qc_lt_round_f16(d[1]) && c[2] == qc_lt_round_f16(d[3]) &&
              c[3] == 0x7C00,
          "f16 epilogue with a row stride");
    memcpy(f, d, sizeof f);
    qc_lt_epilogue(QC_F32, f, 2, 3, 3, bias, f); /* in place */
    CHECK(f[0] == 0x1p24f + 1.0f && to_bits(f[1]) == to_bits(0x1p-30f + 1.0f) && f[3] == 65504.0f + 0x1p24f,
          "f32 epilogue in place");
}

int main(void)
{
    static const int64_t ms[] = {1, 7, 16, 33}, ns[] = {1, 5, 64, 130, 257}, ks[] = {16, 200, 384};
    static const qc_gemm_kind kinds[] = {QC_GEMM_FP8_TENSOR, QC_GEMM_FP8_ROWWISE, QC_GEMM_FP8_BLOCK};
    int problems = 0;
    for (int q = 0; q < 3; q++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++)
                for (int l = 0; l < 3; l++, problems++)
                    one_problem(kinds[q], ms[i], ns[j], ks[l]);
    one_problem(QC_GEMM_FP8_BLOCK, 3, 300, 1000); /* L = 8, three row blocks of weights */
    one_problem(QC_GEMM_FP8_BLOCK, 2, 20, 600);   /* L = 5, L4 = 8 */
    CHECK(!qc_lt_kind_supported(QC_GEMM_MXFP8) && !qc_lt_kind_supported(QC_GEMM_INT8_ROWWISE), "kinds");
    rounding("bf16", qc_lt_round_bf16, bf16_value, 0x7F80);
    rounding("f16", qc_lt_round_f16, f16_value, 0x7C00);
    CHECK(qc_lt_round_f16(65519.99f) == 0x7BFF && qc_lt_round_f16(65520.0f) == 0x7C00, "f16 overflow threshold");
    epilogue();
    printf("cublaslt host layouts: %d problems (+2), rounding, epilogue: %s\n", problems, failures ? "FAIL" : "ok");
    printf("%d passed, %d failed\n", failures ? 0 : 1, failures ? 1 : 0);
    return failures ? 1 : 0;
}
