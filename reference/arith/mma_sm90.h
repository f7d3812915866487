/* mma_sm90.h: the FP8 dot product of Hopper's tensor core, bit for bit, as measured on an H200
 * (docs/notes/mma_sm90.md has the probes, the hypotheses they ruled out and the figures).
 *
 * One `wgmma.mma_async.m64nNk32.f32.{e4m3,e5m2}.{e4m3,e5m2}` computes, for each output, d = c +
 * sum of 32 products a[k] b[k]; the hardware does it as one fused sum:
 *  1. every product is exact; its exponent is ea + eb, the exponents of the two inputs as their
 *     fields give them (a subnormal input counts as the format's smallest normal exponent, its
 *     significand is not normalised), and c's exponent is its fp32 one (subnormal: -126);
 *  2. E = the largest exponent among the nonzero terms (c and the products);
 *  3. each term is cut toward zero to a multiple of 2^(E - 13);
 *  4. the cut terms are added exactly;
 *  5. the sum is cut toward zero to 14 significant bits and written as fp32.
 * NaN inputs, Inf - Inf and Inf * 0 give the NaN 0x7FFFFFFF; an Inf term gives that Inf; an exact
 * zero is +0. No overflow is possible (step 5 never rounds up and the products are < 2^36).
 *
 * Header-only and libm-free, QC_HD: the same code runs in libqcref and on the device, where
 * `qcheck bringup` compares it with the hardware. */
#ifndef QCREF_MMA_SM90_H
#define QCREF_MMA_SM90_H

#include <stdint.h>

#include "../qc_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    QC_SM90_MMA_K = 32,      /* products per wgmma k-step (m64nNk32 for 8-bit inputs) */
    QC_SM90_NAN = 0x7FFFFFFF /* the NaN the tensor core writes */
};

/* The knobs of steps 1, 3 and 5, so that a probe can show which value the hardware takes (the
 * tests run the neighbours of the measured ones against the recording: each must fail). */
typedef struct qc_mma_rules {
    int frac;      /* step 3: bits kept below the largest exponent (H200: 13) */
    int sum_bits;  /* step 5: significant bits of the result (H200: 14); at most 24 */
    int normalise; /* step 1: 1 takes a subnormal input's exponent from its leading bit (H200: 0) */
} qc_mma_rules;

static inline QC_HD qc_mma_rules qc_sm90_rules(void)
{
    qc_mma_rules r = {13, 14, 0};
    return r;
}

/* One fp8 input as sign, integer significand and the exponent of its last bit; e5m2 = 1 selects
 * e5m2 (else e4m3fn). Returns 1 for NaN, 2 for Inf, 0 for a number. */
static inline QC_HD int qc_sm90_fp8_parts(uint8_t code, int e5m2, int *neg, int *sig, int *lsb_exp)
{
    int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
    int field = (code & 0x7F) >> mbits, man = code & ((1 << mbits) - 1);
    *neg = code >> 7;
    if (e5m2 && field == 31) return man ? 1 : 2;
    if (!e5m2 && (code & 0x7F) == 0x7F) return 1;
    *sig = field ? man | 1 << mbits : man;
    *lsb_exp = (field ? field : 1) - bias - mbits;
    return 0;
}

/* A finite nonzero fp32 accumulator (bits cb) as sign, 24-bit significand and the exponent of its
 * last bit (subnormal: the exponent of the smallest normal, step 1). */
static inline QC_HD void qc_sm90_f32_parts(uint32_t cb, int *neg, uint32_t *sig, int *lsb_exp)
{
    int field = (int)(cb >> 23 & 0xFF);
    *neg = (int)(cb >> 31), *sig = (cb & 0x7FFFFF) | (field ? 0x800000u : 0);
    *lsb_exp = (field ? field : 1) - 127 - 23;
}

/* |m| * 2^lsb cut toward zero to a multiple of 2^cut, in units of 2^cut (lsb - cut <= 13 + 6
 * here, so the shift left is small; a term far below the cut contributes nothing). */
static inline QC_HD int32_t qc_sm90_cut(uint32_t m, int lsb, int cut)
{
    int sh = lsb - cut;
    if (sh >= 0) return (int32_t)(m << sh);
    return sh <= -32 ? 0 : (int32_t)(m >> -sh);
}

/* The exponent step 2 compares for a product of significands ma, mb (each with `mbits` bits
 * after the point): the field exponents' sum, or with `normalise` the leading bits'. */
static inline QC_HD int qc_sm90_lead(int ma, int ea, int mbits_a, int mb, int eb, int mbits_b, int normalise)
{
    if (!normalise) return ea + mbits_a + eb + mbits_b;
    return ea + (31 - __builtin_clz((unsigned)ma)) + eb + (31 - __builtin_clz((unsigned)mb));
}

/* Step 5: the exact sum of the cut terms, in units of 2^cut, cut toward zero to sum_bits
 * significant bits and written as fp32 (+0 for a zero sum). */
static inline QC_HD float qc_sm90_finish(int32_t sum, int cut, int sum_bits)
{
    if (!sum) return 0.0f;
    uint32_t mag = (uint32_t)(sum < 0 ? -sum : sum);
    int width = 32 - __builtin_clz(mag);
    if (width > sum_bits) { /* step 5: sum_bits significant bits, cut toward zero */
        int drop = width - sum_bits;
        mag = mag >> drop << drop;
    }
    /* mag * 2^cut is exact in fp32 for sum_bits <= 24 and cut >= -149 (frac <= 23: c's exponent
     * is at least -126); no rule here rounds up, so nothing overflows. */
    int exp = cut + width - 1; /* exponent of the leading bit */
    uint32_t bits;
    if (exp >= -126) {
        uint32_t frac = width > 24 ? mag >> (width - 24) : mag << (24 - width);
        bits = (uint32_t)(exp + 127) << 23 | (frac & 0x7FFFFF);
    } else {
        bits = mag << (cut + 149); /* subnormal: units of 2^-149 */
    }
    return qc_f32_from_bits(bits | (sum < 0 ? QC_F32_SIGN : 0));
}

/* d = c + sum_{k<n} a[k] b[k] as one k-step under rules r (n <= 32; the hardware's step is 32,
 * fewer means zeros in the rest). fa_e5m2 / fb_e5m2 pick each operand's format. */
static inline QC_HD float qcref_mma_step_with(qc_mma_rules r, const uint8_t *a, int fa_e5m2, const uint8_t *b,
                                              int fb_e5m2, int n, float c)
{
    int neg[QC_SM90_MMA_K + 1], lsb[QC_SM90_MMA_K + 1], lead[QC_SM90_MMA_K + 1], t = 0;
    uint32_t sig[QC_SM90_MMA_K + 1];
    int nan = 0, pinf = 0, ninf = 0;
    uint32_t cb = qc_f32_bits(c);
    if (qc_bits_is_nan(cb)) nan = 1;
    else if (qc_bits_is_inf(cb)) *(cb >> 31 ? &ninf : &pinf) = 1;
    else if (cb & QC_F32_ABS) {
        qc_sm90_f32_parts(cb, &neg[t], &sig[t], &lsb[t]);
        lead[t] = lsb[t] + 23, ++t;
    }
    int ma_bits = fa_e5m2 ? 2 : 3, mb_bits = fb_e5m2 ? 2 : 3;
    uint8_t sa = fa_e5m2 ? 0x7C : 0x7F, sb = fb_e5m2 ? 0x7C : 0x7F; /* exponent bits all ones: NaN or Inf */
    for (int k = 0; k < n; ++k) {
        int na, nb, ma = 0, mb = 0, ea = 0, eb = 0;
        int ka = qc_sm90_fp8_parts(a[k], fa_e5m2, &na, &ma, &ea);
        int kb = qc_sm90_fp8_parts(b[k], fb_e5m2, &nb, &mb, &eb);
        if ((a[k] & sa) == sa || (b[k] & sb) == sb) { /* a NaN or Inf input (the masks are exactly those) */
            if (ka == 1 || kb == 1) nan = 1;
            else if ((ka == 2 && kb == 0 && mb == 0) || (kb == 2 && ka == 0 && ma == 0)) nan = 1; /* Inf * 0 */
            else *(na ^ nb ? &ninf : &pinf) = 1;
            continue;
        }
        if (ma == 0 || mb == 0) continue; /* a zero product has no exponent (step 2) */
        neg[t] = na ^ nb, sig[t] = (uint32_t)(ma * mb), lsb[t] = ea + eb;
        lead[t] = r.normalise ? qc_sm90_lead(ma, ea, ma_bits, mb, eb, mb_bits, 1) : ea + eb + ma_bits + mb_bits, ++t;
    }
    if (nan || (pinf && ninf)) return qc_f32_from_bits(QC_SM90_NAN);
    if (pinf || ninf) return qc_f32_from_bits(ninf ? 0xFF800000u : QC_F32_INF);
    if (!t) return 0.0f;
    int top = lead[0];
    for (int i = 1; i < t; ++i) top = lead[i] > top ? lead[i] : top;
    int cut = top - r.frac;
    int32_t sum = 0; /* |sum| < 33 * 2^(frac + 2) units: frac <= 24 keeps it in int32 */
    for (int i = 0; i < t; ++i) {
        int32_t v = qc_sm90_cut(sig[i], lsb[i], cut);
        sum += neg[i] ? -v : v;
    }
    return qc_sm90_finish(sum, cut, r.sum_bits);
}

/* One k-step as the H200 does it. */
static inline QC_HD float qcref_sm90_mma_step(const uint8_t *a, int fa_e5m2, const uint8_t *b, int fb_e5m2, int n,
                                              float c)
{
    return qcref_mma_step_with(qc_sm90_rules(), a, fa_e5m2, b, fb_e5m2, n, c);
}

/* A K loop of k-steps on one output: the accumulator of each step is the previous step's d; every
 * `promote` steps (0: never) the tensor-core accumulator is added to an fp32 total with one IEEE
 * addition and restarts at zero (DeepGEMM's promotion to CUDA-core registers, every 128 of K =
 * 4 steps). K is a multiple of 32 here; the caller zero-pads. */
static inline QC_HD float qcref_sm90_mma_dot(const uint8_t *a, int fa_e5m2, const uint8_t *b, int fb_e5m2, int k,
                                             float c, int promote)
{
    float acc = promote ? 0.0f : c, total = c;
    for (int s = 0; s * QC_SM90_MMA_K < k; ++s) {
        acc = qcref_sm90_mma_step(a + s * QC_SM90_MMA_K, fa_e5m2, b + s * QC_SM90_MMA_K, fb_e5m2, QC_SM90_MMA_K, acc);
        if (promote && (s + 1) % promote == 0) total += acc, acc = 0.0f;
    }
    return promote ? total + acc : acc;
}

#ifdef __cplusplus
}
#endif

#endif
