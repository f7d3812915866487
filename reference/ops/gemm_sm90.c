/* gemm_sm90.c: model sm90-wgmma's GEMMs (gemm.h) on the tensor-core model of arith/mma_sm90.h.
 *
 * The model's k-step (qcref_mma_step_with) takes every code apart for every output. A GEMM
 * reuses each row of a for n outputs and each row of b for m, so here every row is taken apart
 * once, into the magnitude of its significand, the exponent of its last bit and its sign, and a
 * k-step becomes a maximum and a sum of shifted integers: the same terms, the same cut
 * (qc_sm90_cut's), the same finish (qc_sm90_finish). A dot whose rows hold a NaN or Inf code, or
 * rules other than the H200's, take the model's own step. tests/test_mma_sm90.c checks the two bit
 * for bit and both against the H200's recordings; bench/bench_mma prints the speed of both. */
#include "gemm.h"
#include "../arith/arith.h"
#include "../arith/mma_sm90.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A code's exponent when it is zero: far enough below every real product exponent (>= -32: two
 * e5m2 subnormals) that a product with a zero factor never wins step 2's maximum, and its zero
 * magnitude adds nothing. */
enum { ZERO_EXP = -100, NO_PRODUCT = -64 };

/* Rows of codes taken apart (sm90_rows_of); k padded to a multiple of 32 with zero codes. */
typedef struct sm90_rows {
    uint8_t *mag, *neg;
    int8_t *exp;
    uint8_t *special; /* per row: holds a NaN or Inf code */
    size_t kp;
} sm90_rows;

static void sm90_rows_free(sm90_rows *r) { free(r->mag), free(r->neg), free(r->exp), free(r->special); }

static int sm90_rows_of(const uint8_t *src, size_t rows, size_t k, size_t kp, int e5m2, sm90_rows *r)
{
    size_t n = rows * kp + 1;
    r->kp = kp;
    r->mag = calloc(n, 1), r->neg = calloc(n, 1), r->exp = malloc(n), r->special = calloc(rows + 1, 1);
    if (!r->mag || !r->neg || !r->exp || !r->special)
        return sm90_rows_free(r), -1;
    memset(r->exp, ZERO_EXP, n);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < k; j++) {
            int neg, sig = 0, lsb = 0;
            if (qc_sm90_fp8_parts(src[i * k + j], e5m2, &neg, &sig, &lsb)) {
                r->special[i] = 1;
                continue;
            }
            size_t at = i * kp + j;
            r->mag[at] = (uint8_t)sig, r->neg[at] = (uint8_t)neg, r->exp[at] = (int8_t)(sig ? lsb : ZERO_EXP);
        }
    return 0;
}

/* One k-step of the H200's rules (mma_sm90.h steps 1-5) on rows taken apart; lead = the
 * significand bits after the point of both formats (a product's leading exponent is its last
 * bit's + lead). A product is at most 15 x 15 < 2^8 and sits at most 13 - lead <= 9 bits above the
 * cut, so (p << 9) >> (9 - sh) is p cut to the 2^cut grid for every shift sh it can have. */
static float sm90_step(const uint8_t *ma, const uint8_t *na, const int8_t *ea, const uint8_t *mb, const uint8_t *nb,
                       const int8_t *eb, int lead, float c)
{
    const qc_mma_rules r = qc_sm90_rules();
    int e[QC_SM90_MMA_K], top = NO_PRODUCT;
    for (int k = 0; k < QC_SM90_MMA_K; k++) {
        e[k] = ea[k] + eb[k];
        top = e[k] > top ? e[k] : top;
    }
    top = top > NO_PRODUCT ? top + lead : INT32_MIN / 2;
    uint32_t cb = qc_f32_bits(c), csig = 0;
    int cneg = 0, clsb = 0, has_c = (cb & QC_F32_ABS) != 0;
    if (has_c) {
        qc_sm90_f32_parts(cb, &cneg, &csig, &clsb);
        top = clsb + 23 > top ? clsb + 23 : top;
    }
    if (top == INT32_MIN / 2)
        return 0.0f; /* no nonzero term: +0 */
    int cut = top - r.frac;
    int32_t sum = 0;
    for (int k = 0; k < QC_SM90_MMA_K; k++) {
        unsigned down = (unsigned)(9 - (e[k] - cut)); /* "negative" (huge) only for a zero product */
        int32_t v = (int32_t)(((uint32_t)(ma[k] * mb[k]) << 9) >> (down < 31 ? down : 31));
        sum += na[k] ^ nb[k] ? -v : v;
    }
    if (has_c) {
        int32_t v = qc_sm90_cut(csig, clsb, cut);
        sum += cneg ? -v : v;
    }
    return qc_sm90_finish(sum, cut, r.sum_bits);
}

/* qcref_sm90_mma_dot of row i of a and row j of b, over k-steps [s0, s0 + steps). */
static float sm90_dot(const sm90_rows *a, size_t i, int fa, const sm90_rows *b, size_t j, int fb, size_t s0,
                      size_t steps, int promote, const uint8_t *ca, const uint8_t *cb)
{
    size_t kp = a->kp, o = s0 * QC_SM90_MMA_K;
    if (a->special[i] || b->special[j])
        return qcref_sm90_mma_dot(ca + i * kp + o, fa, cb + j * kp + o, fb, (int)(steps * QC_SM90_MMA_K), 0.0f, promote);
    const int lead = (fa ? 2 : 3) + (fb ? 2 : 3);
    float acc = 0.0f, total = 0.0f; /* as qcref_sm90_mma_dot with c = 0 */
    for (size_t s = 0; s < steps; s++) {
        size_t pa = i * kp + o + s * QC_SM90_MMA_K, pb = j * kp + o + s * QC_SM90_MMA_K;
        acc = sm90_step(a->mag + pa, a->neg + pa, a->exp + pa, b->mag + pb, b->neg + pb, b->exp + pb, lead, acc);
        if (promote && (s + 1) % (size_t)promote == 0)
            total += acc, acc = 0.0f;
    }
    return promote ? total + acc : acc;
}

/* Rows of codes zero-padded to kp (the model's own step reads them for a row with NaN or Inf). */
static uint8_t *padded(const uint8_t *src, size_t rows, size_t k, size_t kp)
{
    uint8_t *p = calloc(rows * kp + 1, 1);
    for (size_t r = 0; p && r < rows; r++)
        memcpy(p + r * kp, src + r * k, k);
    return p;
}

typedef struct sm90_operands {
    sm90_rows a, b;
    uint8_t *pa, *pb;
} sm90_operands;

static void operands_free(sm90_operands *o)
{
    sm90_rows_free(&o->a), sm90_rows_free(&o->b), free(o->pa), free(o->pb);
}

static int operands_of(const uint8_t *a, int fa, const uint8_t *b, int fb, size_t m, size_t n, size_t k, size_t kp,
                       sm90_operands *o)
{
    memset(o, 0, sizeof *o);
    o->pa = padded(a, m, k, kp), o->pb = padded(b, n, k, kp);
    int rc = o->pa && o->pb && !sm90_rows_of(a, m, k, kp, fa, &o->a) && !sm90_rows_of(b, n, k, kp, fb, &o->b) ? 0 : -1;
    if (rc)
        operands_free(o);
    return rc;
}

int qcref_gemm_sm90(const uint8_t *a, int a_e5m2, const uint8_t *b, int b_e5m2, size_t m, size_t n, size_t k,
                    const float *sa, size_t sa_stride, const float *sb, size_t sb_stride, const float *bias,
                    int promote, float *y)
{
    size_t steps = (k + QC_SM90_MMA_K - 1) / QC_SM90_MMA_K;
    sm90_operands o;
    if (operands_of(a, a_e5m2, b, b_e5m2, m, n, k, steps * QC_SM90_MMA_K, &o))
        return -1;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float acc = sm90_dot(&o.a, i, a_e5m2, &o.b, j, b_e5m2, 0, steps, promote, o.pa, o.pb);
            /* cuBLASLt: a scalar alpha = sa sb first (SCALAR_32F), per-row scales one after the
             * other, the weights' first (OUTER_VEC_32F; formats.md §16) */
            float v = sa_stride || sb_stride ? qcref_fl32_mul(qcref_fl32_mul(acc, sb[j * sb_stride]), sa[i * sa_stride])
                                             : qcref_fl32_mul(qcref_fl32_mul(sa[0], sb[0]), acc);
            y[i * n + j] = bias ? v + bias[j] : v;
        }
    operands_free(&o);
    return 0;
}

int qcref_gemm_sm90_block(const uint8_t *a, int a_e5m2, const uint8_t *b, int b_e5m2, size_t m, size_t n, size_t k,
                          const float *sa, const float *sb, const float *bias, float *y)
{
    enum { BK = 128, STEPS = BK / QC_SM90_MMA_K };
    size_t nblk = (k + BK - 1) / BK;
    sm90_operands o;
    if (operands_of(a, a_e5m2, b, b_e5m2, m, n, k, nblk * BK, &o))
        return -1;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float t = 0.0f;
            for (size_t l = 0; l < nblk; l++) {
                float p = sm90_dot(&o.a, i, a_e5m2, &o.b, j, b_e5m2, l * STEPS, STEPS, 0, o.pa, o.pb);
                t = fmaf(p, qcref_fl32_mul(sa[i * nblk + l], sb[j / BK * nblk + l]), t);
            }
            y[i * n + j] = bias ? t + bias[j] : t;
        }
    operands_free(&o);
    return 0;
}
