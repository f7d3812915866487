/* encode_avx512.h: fp32 -> minifloat and fp32 -> e8m0 on 16 lanes, the inline core that
 * cast_avx512.c (the cast op) and quant_avx512.c (the element casts of the recipes) share.
 * Include only from files compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq.
 *
 * Claim: bit-exact with reference/formats/minifloat.c and e8m0.c under any qc_cast_policy. The
 * rounding is the reference's (docs/spec/formats.md §1.2, §3.2: round to nearest into the target grid,
 * ties by the policy) done on the fp32 bit pattern in 32-bit integer lanes; every special-value
 * rule (formats.md §1.1 NaN/Inf codes, §3.2 NaN into formats without NaN, zero sign) is a per-call constant
 * of the plan, blended in with a mask. */
#ifndef QC_ENCODE_AVX512_H
#define QC_ENCODE_AVX512_H

#include <immintrin.h>
#include <math.h>

#include "formats/formats.h"

typedef struct mf_plan {
    int bits, mbits, emin, bias, signshift;
    uint32_t maxmag, signbit;
    qc_ties ties;
    uint32_t ovf_code; /* the code of an overflow (Inf, NaN code or max), without the sign */
    int ovf_signed;    /* the input's sign is ORed into ovf_code */
    int zero_drop;     /* a zero result has no sign (fnuz, zero-sign drop) */
    int zero_modelopt; /* exact +-0 gives the sign bit (modelopt) */
    int nan_none;      /* the format has no NaN code: nonan decides */
    qc_nonan nonan;
    uint32_t nan_code; /* formats with NaN codes: the code without the sign */
    int nan_signed, nan_payload;
    /* ties-to-even fast path (mf_round16_even) */
    uint32_t min_normal;  /* fp32 bits of the target's smallest normal */
    uint32_t rebias;      /* added to a normal input's bits before the shift: rebias and half - 1 */
    uint32_t magic;       /* fp32 bits of 2^(emin - mbits + 23): its ulp is the target's subnormal quantum */
    int ovf_min;          /* ovf_code is maxmag or maxmag + 1, signed: the overflow rule is min(mag, ovf_code) */
    int saturates;        /* ovf_code is maxmag, signed: every finite or infinite input beyond the largest value
                           * gets the largest code of its sign (satfinite, formats without Inf/NaN) */
    float maxvalue;       /* the value of maxmag */
} mf_plan;

/* The per-call constants of minifloat m under policy p (minifloat.c: nan_code, nonan_code and the
 * overflow/zero rules of qcref_minifloat_encode). */
static inline mf_plan mf_plan_of(qc_minifloat m, const qc_cast_policy *p)
{
    mf_plan k;
    k.bits = m.bits, k.mbits = m.mbits, k.bias = m.bias, k.emin = 1 - m.bias, k.signshift = m.bits - 1;
    k.maxmag = qcref_max_magnitude(m), k.signbit = 1u << (m.bits - 1), k.ties = p->ties;
    uint32_t expo = ((1u << m.ebits) - 1) << m.mbits, mant = (1u << m.mbits) - 1;
    k.ovf_signed = 1;
    if (m.specials == QC_SPECIALS_NONE || p->overflow == QC_OVERFLOW_SATFINITE)
        k.ovf_code = k.maxmag;
    else if (m.specials == QC_SPECIALS_FNUZ)
        k.ovf_code = k.signbit, k.ovf_signed = 0;
    else if (m.specials == QC_SPECIALS_FN)
        k.ovf_code = k.maxmag + 1;
    else
        k.ovf_code = expo;
    k.zero_drop = m.specials == QC_SPECIALS_FNUZ || p->zero_sign == QC_ZERO_DROP;
    k.zero_modelopt = !k.zero_drop && p->zero_sign == QC_ZERO_MODELOPT;
    k.nan_none = m.specials == QC_SPECIALS_NONE, k.nonan = p->nonan;
    k.nan_signed = p->nan_sign == QC_NAN_KEEP && m.specials != QC_SPECIALS_FNUZ;
    /* 1: numpy's payload, forced nonzero; 2: the payload with the quiet bit (x86 VCVTPS2PH) */
    k.nan_payload = m.specials != QC_SPECIALS_IEEE ? 0 : p->nan_code == QC_NANCODE_PAYLOAD ? 1
                    : p->nan_code == QC_NANCODE_QUIET_PAYLOAD ? 2 : 0;
    if (m.specials == QC_SPECIALS_FNUZ)
        k.nan_code = k.signbit;
    else if (m.specials == QC_SPECIALS_IEEE && (p->nan_code == QC_NANCODE_QUIET || p->nan_code == QC_NANCODE_QUIET_PAYLOAD))
        k.nan_code = expo | (1u << (m.mbits - 1));
    else if (m.specials == QC_SPECIALS_IEEE && p->nan_code == QC_NANCODE_PAYLOAD)
        k.nan_code = expo;
    else
        k.nan_code = expo | mant;
    if (p->nan_sign == QC_NAN_NEGATIVE && m.specials != QC_SPECIALS_FNUZ)
        k.nan_code |= k.signbit;
    int shift = 23 - m.mbits;
    k.min_normal = (uint32_t)(k.emin + 127) << 23;
    k.rebias = (uint32_t)((int64_t)(m.bias - 127) * (1 << 23)) + ((1u << (shift - 1)) - 1u);
    k.magic = (uint32_t)(k.emin - m.mbits + 23 + 127) << 23;
    k.ovf_min = k.ovf_signed && (k.ovf_code == k.maxmag || k.ovf_code == k.maxmag + 1);
    k.saturates = k.ovf_signed && k.ovf_code == k.maxmag;
    k.maxvalue = qcref_minifloat_decode(m, k.maxmag);
    return k;
}

#define V1(x) _mm512_set1_epi32((int)(x))

/* NaN lanes: the code of minifloat.c nan_code / nonan_code. */
static inline __attribute__((always_inline)) __m512i mf_nan16(const mf_plan k, __m512i abs, __m512i sign)
{
    if (!k.nan_none) {
        __m512i c = V1(k.nan_code);
        __m512i payload = _mm512_srli_epi32(_mm512_and_si512(abs, V1(0x7FFFFF)), 23 - k.mbits);
        if (k.nan_payload == 1) /* numpy: top payload bits, forced nonzero */
            c = _mm512_or_si512(c, _mm512_max_epu32(payload, V1(1)));
        else if (k.nan_payload == 2) /* x86: the quiet bit is in nan_code already */
            c = _mm512_or_si512(c, payload);
        return k.nan_signed ? _mm512_or_si512(c, sign) : c;
    }
    switch (k.nonan) {
    case QC_NONAN_POSMAX: return V1(k.maxmag);
    case QC_NONAN_MLDTYPES: return _mm512_xor_si512(sign, V1(k.signbit)); /* -0 code, negated by the sign */
    case QC_NONAN_SIGNBIT: return V1(k.signbit); /* modelopt cast_fp4 */
    case QC_NONAN_TORCHAO: {
        int drop = 23 - k.mbits;
        uint32_t add = (uint32_t)((k.bias - 127) * (1 << 23)) + ((1u << (drop - 1)) - 1u);
        __m512i odd = _mm512_and_si512(_mm512_srli_epi32(abs, drop), V1(1));
        __m512i c = _mm512_and_si512(_mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(abs, V1(add)), odd), drop), V1(0xFF));
        return _mm512_and_si512(_mm512_or_si512(c, sign), V1((1u << k.bits) - 1));
    }
    default: return _mm512_setzero_si512();
    }
}

/* minifloat.c round_magnitude on 16 lanes: the magnitude code, possibly above maxmag. */
static inline __m512i mf_round16(const mf_plan k, __m512i abs)
{
    const __m512i one = V1(1);
    __m512i fexp = _mm512_srli_epi32(abs, 23);
    __m512i sig = _mm512_and_si512(abs, V1(0x7FFFFF));
    sig = _mm512_mask_or_epi32(sig, _mm512_test_epi32_mask(fexp, fexp), sig, V1(0x800000));
    fexp = _mm512_max_epi32(fexp, one); /* fp32 subnormal: the quantum of the smallest normal binade */
    __m512i binade = _mm512_max_epi32(_mm512_sub_epi32(fexp, V1(127)), V1(k.emin));
    /* fp32 significand bits that fall off; beyond 25 everything rounds to 0 under every tie rule */
    __m512i shift = _mm512_min_epi32(_mm512_sub_epi32(_mm512_add_epi32(binade, V1(150 - k.mbits)), fexp), V1(25));
    __m512i q = _mm512_srlv_epi32(sig, shift);
    __m512i unit = _mm512_sllv_epi32(one, shift);
    __m512i rem = _mm512_and_si512(sig, _mm512_sub_epi32(unit, one));
    __m512i half = _mm512_srli_epi32(unit, 1);
    __mmask16 up;
    switch (k.ties) {
    case QC_TIES_ZERO: up = _mm512_cmpgt_epu32_mask(rem, half); break;
    case QC_TIES_AWAY: up = _mm512_cmpge_epu32_mask(rem, half); break;
    default:
        up = _mm512_cmpgt_epu32_mask(rem, half) |
             _mm512_mask_test_epi32_mask(_mm512_cmpeq_epi32_mask(rem, half), q, one);
        break;
    }
    __m512i e = _mm512_sll_epi32(_mm512_sub_epi32(binade, V1(k.emin)), _mm_cvtsi32_si128(k.mbits));
    return _mm512_mask_add_epi32(_mm512_add_epi32(e, q), up, _mm512_add_epi32(e, q), one);
}

/* mf_round16 for ties to even, in fewer operations (the same result for every finite input):
 * - at or above the target's smallest normal, the code is (bits + rebias + odd) >> (23 - mbits):
 *   adding half - 1 plus the kept LSB carries exactly when RNE rounds up, and the exponent rebias
 *   rides along in the same addition;
 * - below it, |x| + 2^(emin - mbits + 23) in fp32 rounds |x| to the target's subnormal quantum by
 *   the FPU's own round-to-nearest-even (MXCSR default, no DAZ), and the sum's low bits are the code. */
static inline __m512i mf_round16_even(const mf_plan k, __m512i abs)
{
    int shift = 23 - k.mbits;
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(abs, shift), V1(1));
    __m512i normal = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(abs, V1(k.rebias)), odd), shift);
    __m512 sum = _mm512_add_ps(_mm512_castsi512_ps(abs), _mm512_castsi512_ps(V1(k.magic)));
    __m512i sub = _mm512_sub_epi32(_mm512_castps_si512(sum), V1(k.magic));
    return _mm512_mask_mov_epi32(normal, _mm512_cmplt_epu32_mask(abs, V1(k.min_normal)), sub);
}

/* qcref_minifloat_encode on 16 lanes of fp32 bits; even = (k.ties == QC_TIES_EVEN) and finite (the
 * caller knows that no lane is NaN, so the NaN blend is skipped) are arguments so that a caller can
 * pass them as constants. */
static inline __attribute__((always_inline)) __m512i mf_encode16_fin(const mf_plan k, __m512i bits, const int even,
                                                                     const int finite)
{
    __m512i abs = _mm512_and_si512(bits, V1(0x7FFFFFFF));
    /* the input's sign bit moved to the code's: one shift and one AND (or a VPTERNLOG with the OR) */
    __m512i sign = _mm512_and_si512(_mm512_srli_epi32(bits, 32 - k.bits), V1(k.signbit));
    __m512i mag = even ? mf_round16_even(k, abs) : mf_round16(k, abs);
    if (!even) /* Inf overflows; the even path's bit arithmetic already gives it a code above maxmag */
        mag = _mm512_mask_mov_epi32(mag, _mm512_cmpeq_epi32_mask(abs, V1(0x7F800000)), V1(k.maxmag + 1));
    __m512i r;
    if (k.ovf_min) { /* satfinite, or an overflow code right above maxmag (IEEE Inf, fn NaN): one VPMINUD */
        r = _mm512_or_si512(sign, _mm512_min_epu32(mag, V1(k.ovf_code)));
    } else {
        __m512i ovf = k.ovf_signed ? _mm512_or_si512(sign, V1(k.ovf_code)) : V1(k.ovf_code);
        r = _mm512_mask_mov_epi32(_mm512_or_si512(sign, mag), _mm512_cmpgt_epu32_mask(mag, V1(k.maxmag)), ovf);
    }
    __mmask16 zero = _mm512_cmpeq_epi32_mask(mag, _mm512_setzero_si512());
    if (k.zero_drop)
        r = _mm512_mask_mov_epi32(r, zero, _mm512_setzero_si512());
    if (k.zero_modelopt)
        r = _mm512_mask_mov_epi32(r, zero & _mm512_cmpeq_epi32_mask(abs, _mm512_setzero_si512()), V1(k.signbit));
    if (finite)
        return r;
    return _mm512_mask_mov_epi32(r, _mm512_cmpgt_epu32_mask(abs, V1(0x7F800000)), mf_nan16(k, abs, sign));
}

static inline __attribute__((always_inline)) __m512i mf_encode16_with(const mf_plan k, __m512i bits, const int even)
{
    return mf_encode16_fin(k, bits, even, 0);
}

static inline __m512i mf_encode16(const mf_plan k, __m512i bits) { return mf_encode16_with(k, bits, k.ties == QC_TIES_EVEN); }

/* e8m0.c ceil_exponent: ceil(log2 |x|) + 127 with byte 0 = 2^-127. */
static inline __m512i e8_ceil_exp(__m512i e, __m512i f)
{
    __m512i normal = _mm512_add_epi32(e, _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(f, f), V1(1)));
    __m512i sub = _mm512_maskz_mov_epi32(_mm512_cmpgt_epu32_mask(f, V1(0x400000)), V1(1));
    return _mm512_mask_mov_epi32(normal, _mm512_cmpeq_epi32_mask(e, _mm512_setzero_si512()), sub);
}

/* e8m0.c torchao_biased: clamp(unbiased - emax, -127, 128) + 127, NaN -> 0xFF. */
static inline __m512i e8_torchao(__m512i unbiased, int emax, __mmask16 nan)
{
    __m512i v = _mm512_sub_epi32(unbiased, V1(emax));
    v = _mm512_add_epi32(_mm512_min_epi32(_mm512_max_epi32(v, V1(-127)), V1(128)), V1(127));
    return _mm512_mask_mov_epi32(v, nan, V1(0xFF));
}

/* e8m0 rule log2-ceil (formats.md §2.2: sglang Triton exp2(ceil(log2(.))), modelopt MXFP4
 * ceil(log2(amax / 6)) in float; reference/formats/e8m0.c QC_E8M0_LOG2_CEIL) is ceilf(log2f(|x|))
 * with the float log2, NOT the exact ceiling of log2: log2f rounds 2^k (1 + f 2^-23) to exactly k
 * for the smallest f of every binade whose log2 sits within half an ulp of k (|k| >= 2), and ceil
 * then gives k (sglang #29954, formats.md §10 B11). So the byte is, for the biased exponent e of |x| and its
 * mantissa f: e + (f >= t[e]), where t[e] is the smallest f with log2f(2^(e-127) (1 + f 2^-23)) >
 * e - 127 (2^23 if none); e = 0 reads fp32 subnormals the same way (byte 1 iff log2f(x) > -127,
 * else 0: zero gives log2f = -Inf, byte 0); e = 254 with f >= t gives 255, the reference's
 * "l > 127 -> 0xFF"; e = 255 (Inf, NaN) is 0xFF. t is found by bisection on the same libm log2f
 * the reference calls, which assumes log2f is monotone inside a binade: bench_cpu's exhaustive
 * e8m0 pass checks the result against qcref_e8m0_encode on all 2^32 inputs. */
typedef struct e8_log2ceil_table {
    uint32_t t[256];
} e8_log2ceil_table;

static inline void e8_log2ceil_table_init(e8_log2ceil_table *T)
{
    for (uint32_t e = 0; e < 255; e++) {
        float k = (float)((int)e - 127);
        uint32_t lo = 0, hi = 1u << 23; /* log2f(f = lo) <= k (f = 0 is 2^k, or zero for e = 0); f = hi: > k */
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            union { uint32_t u; float f; } v = {e << 23 | mid};
            if (log2f(v.f) > k)
                hi = mid;
            else
                lo = mid;
        }
        union { uint32_t u; float f; } last = {e << 23 | ((1u << 23) - 1)};
        T->t[e] = log2f(last.f) > k ? hi : 1u << 23;
    }
    T->t[255] = 0;
}

static inline __m512i e8_log2ceil16(const e8_log2ceil_table *T, __m512i bits)
{
    __m512i e = _mm512_and_si512(_mm512_srli_epi32(bits, 23), V1(0xFF)), f = _mm512_and_si512(bits, V1(0x7FFFFF));
    __m512i t = _mm512_i32gather_epi32(e, (const void *)T->t, 4);
    __m512i r = _mm512_mask_add_epi32(e, _mm512_cmpge_epu32_mask(f, t), e, V1(1));
    return _mm512_min_epu32(r, V1(0xFF));
}

/* qcref_e8m0_encode on 16 lanes for every rule but QC_E8M0_LOG2_CEIL (formats.md §2.2). */
static inline __m512i e8_encode16(const qc_cast_policy *p, __m512i bits)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i abs = _mm512_and_si512(bits, V1(0x7FFFFFFF));
    __m512i e = _mm512_srli_epi32(abs, 23), f = _mm512_and_si512(abs, V1(0x7FFFFF));
    __mmask16 nan = _mm512_cmpgt_epu32_mask(abs, V1(0x7F800000));
    __mmask16 nonfinite = _mm512_cmpeq_epi32_mask(e, V1(0xFF));
    __m512i fnz = _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(f, f), V1(1));
    switch (p->e8m0) {
    case QC_E8M0_RNE:
    case QC_E8M0_MLDTYPES:
    case QC_E8M0_MLDTYPES_06: { /* linear RNE; the implicit bit decides the tie */
        __m512i guard = _mm512_and_si512(_mm512_srli_epi32(f, 22), V1(1));
        __mmask16 sticky = _mm512_test_epi32_mask(f, V1(0x3FFFFF)) | _mm512_test_epi32_mask(e, e);
        __m512i r = _mm512_mask_add_epi32(e, sticky & _mm512_test_epi32_mask(guard, guard), e, V1(1));
        if (p->e8m0 == QC_E8M0_MLDTYPES) /* ml_dtypes 0.7: a subnormal rounds up from 1.5*2^-127 on */
            r = _mm512_mask_mov_epi32(r, _mm512_cmpeq_epi32_mask(e, zero),
                                      _mm512_maskz_mov_epi32(_mm512_cmpge_epu32_mask(f, V1(0x600000)), V1(1)));
        __mmask16 bad = nonfinite | _mm512_cmpgt_epu32_mask(r, V1(254));
        if (p->e8m0 != QC_E8M0_RNE)
            bad |= _mm512_cmplt_epi32_mask(bits, zero) | _mm512_cmpeq_epi32_mask(abs, zero);
        return _mm512_mask_mov_epi32(r, bad, V1(0xFF));
    }
    case QC_E8M0_CEIL: {
        __m512i r = _mm512_min_epu32(e8_ceil_exp(e, f), V1(254));
        r = _mm512_mask_mov_epi32(r, nonfinite, V1(0xFE));
        return _mm512_mask_mov_epi32(r, nan, V1(0xFF));
    }
    case QC_E8M0_FLOOR_SAT:
        return _mm512_mask_mov_epi32(_mm512_mask_mov_epi32(e, nonfinite, V1(0xFE)), nan, V1(0xFF));
    case QC_E8M0_RCEIL:
        return _mm512_mask_mov_epi32(e8_ceil_exp(e, f), nonfinite, V1(0xFF));
    case QC_E8M0_DEEPGEMM:
        return _mm512_min_epu32(_mm512_max_epu32(_mm512_add_epi32(e, fnz), V1(1)), V1(254));
    case QC_E8M0_FLOOR:
        return e8_torchao(_mm512_sub_epi32(e, V1(127)), p->e8m0_emax, nan);
    case QC_E8M0_TORCHAO_CEIL:
        return e8_torchao(_mm512_sub_epi32(_mm512_add_epi32(e, fnz), V1(127)), p->e8m0_emax, nan);
    case QC_E8M0_EVEN: {
        __m512i rounded = _mm512_and_si512(_mm512_add_epi32(abs, V1(1u << (22 - p->e8m0_mbits))), V1(0xFF800000u));
        return e8_torchao(_mm512_sub_epi32(_mm512_srli_epi32(rounded, 23), V1(127)), p->e8m0_emax, nan);
    }
    case QC_E8M0_TRITON_UP:
        return _mm512_srli_epi32(_mm512_and_si512(_mm512_add_epi32(bits, V1(0x7FFFFF)), V1(0x7F800000)), 23);
    case QC_E8M0_TRITON_DOWN:
        return _mm512_srli_epi32(_mm512_and_si512(bits, V1(0x7F800000)), 23);
    default:
        return V1(0xFF);
    }
}

#endif
