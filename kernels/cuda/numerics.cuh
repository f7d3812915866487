/* numerics.cuh: the arithmetic of the cuda backend, as __host__ __device__ functions: every
 * element format and cast policy (docs/spec/formats.md §1-§3), every e8m0 rule and decoder
 * (formats.md §2.2, §2.3), the division modes (reference/arith/arith.h) and the per-group steps of
 * every recipe (formats.md §4-§6). Written here from the spec, not included from the reference sources (an
 * independent implementation is the point of a backend); only the enums and structs of the
 * reference's headers are shared. The same functions run on the host in cuda_numerics_check
 * (kernels/cuda/numerics_check.cu), which compares them with libqcref.
 *
 * Hardware: where a PTX instruction implements a policy exactly (formats.md §13, measured on an
 * H200) the kernels use it: cvt.rn.satfinite.e4m3x2.f32 / e5m2x2.f32 for the `ptx` profile's fp8,
 * cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32 for RNE with the 0x7FFF NaN, rcp.approx.ftz.f32 for the
 * fast-math reciprocal and divisions (QC_DIV_FAST, QC_DIV_FULL). Everything else is bit
 * manipulation below.
 *
 * fp32 arithmetic follows the reference's machine, x86-64 SSE, where it differs from the GPU's:
 * a NaN operand is returned quieted (the first operand's when both are NaN, as qcref_fl32_mul
 * fixes it), and an invalid operation (0 * Inf, 0 / 0) gives the x86 default NaN 0xFFC00000; the
 * GPU would give 0x7FFFFFFF. NaN signs are bytes of the outputs under the torch and ml_dtypes
 * profiles, so they must agree. Products and quotients are one IEEE rounding each (__fmul_rn,
 * __fdiv_rn: never contracted). */
#ifndef QCK_NUMERICS_CUH
#define QCK_NUMERICS_CUH

#include <math.h>
#include <string.h>

#include "gpu.h"
#include "formats/formats.h"
#include "recipes/recipes.h"

#define QCK_ABS 0x7FFFFFFFu
#define QCK_INF 0x7F800000u
#define QCK_QUIET 0x00400000u
#define QCK_X86_DEFAULT_NAN 0xFFC00000u
#define QCK_FLT_MAX_BITS 0x7F7FFFFFu

/* ---------------------------------------------------------------- bit views */

QCK_HD uint32_t qck_bits(float x)
{
#if defined(QCK_DEVICE_PASS)
    return __float_as_uint(x);
#else
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
#endif
}

QCK_HD float qck_float(uint32_t u)
{
#if defined(QCK_DEVICE_PASS)
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, 4);
    return x;
#endif
}

QCK_HD int qck_isnan_bits(uint32_t u) { return (u & QCK_ABS) > QCK_INF; }
QCK_HD int qck_isnan(float x) { return qck_isnan_bits(qck_bits(x)); }

QCK_HD int qck_clz(uint32_t v)
{
#if defined(QCK_DEVICE_PASS)
    return __clz((int)v);
#else
    return v ? __builtin_clz(v) : 32;
#endif
}

/* ---------------------------------------------------------------- fp32 operations */

QCK_HD float qck_mul_rn(float a, float b)
{
#if defined(QCK_DEVICE_PASS)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

QCK_HD float qck_add_rn(float a, float b)
{
#if defined(QCK_DEVICE_PASS)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

QCK_HD float qck_fma_rn(float a, float b, float c)
{
#if defined(QCK_DEVICE_PASS)
    return __fmaf_rn(a, b, c);
#else
    return fmaf(a, b, c);
#endif
}

QCK_HD float qck_div_rn(float a, float b)
{
#if defined(QCK_DEVICE_PASS)
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}

/* The x86 result of a NaN-producing a op b: the NaN operand quieted (a's when both are), else the
 * default NaN of an invalid operation (0 * Inf, 0 / 0, Inf / Inf). */
QCK_HD float qck_nan_result(float a, float b)
{
    uint32_t ab = qck_bits(a), bb = qck_bits(b);
    if (qck_isnan_bits(ab))
        return qck_float(ab | QCK_QUIET);
    if (qck_isnan_bits(bb))
        return qck_float(bb | QCK_QUIET);
    return qck_float(QCK_X86_DEFAULT_NAN);
}

/* a * b with the x86 NaN rules (see the file comment); the IEEE product is the common case. */
QCK_HD float qck_mul(float a, float b)
{
    float r = qck_mul_rn(a, b);
    return qck_isnan(r) ? qck_nan_result(a, b) : r;
}

QCK_HD float qck_div(float a, float b)
{
    float r = qck_div_rn(a, b);
    return qck_isnan(r) ? qck_nan_result(a, b) : r;
}

/* .ftz: a subnormal becomes the zero of its sign. */
QCK_HD float qck_ftz(float x)
{
    uint32_t b = qck_bits(x);
    return (b & QCK_ABS) < 0x00800000u ? qck_float(b & 0x80000000u) : x;
}

/* mul.rn.ftz as a --use_fast_math kernel executes every multiply (arith.h qcref_mul): on NVIDIA the
 * instruction itself, with the x86 NaN rules on the flushed operands; elsewhere its rule: the
 * product flushed when tiny after rounding to 24 bits with an unbounded exponent (measured on the
 * H200 by qcheck bringup; docs/spec/formats.md §13). */
QCK_HD float qck_mul_ftz(float a, float b)
{
#if defined(QCK_PTX)
    float r;
    asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return qck_isnan(r) ? qck_nan_result(qck_ftz(a), qck_ftz(b)) : r;
#else
    float fa = qck_ftz(a), fb = qck_ftz(b);
    double p = (double)fa * (double)fb; /* exact; times 2^64 it rounds to 24 bits as a normal float */
    if (p > -0x1p-126 && p < 0x1p-126 && (float)(p * 0x1p64) > -0x1p-62f && (float)(p * 0x1p64) < 0x1p-62f)
        return qck_float((qck_bits(fa) ^ qck_bits(fb)) & 0x80000000u);
    return qck_mul(fa, fb);
#endif
}

QCK_HD float qck_mul_mode(float a, float b, int fast) { return fast ? qck_mul_ftz(a, b) : qck_mul(a, b); }

/* mul.rn.ftz of operands whose product cannot be NaN (a quant kernel's clean slots): the instruction
 * alone, without the x86 NaN rules. */
QCK_HD float qck_mul_ftz_clean(float a, float b)
{
#if defined(QCK_PTX)
    float r;
    asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
#else
    return qck_mul_ftz(a, b);
#endif
}

/* n / d and n % d for 32-bit n by a multiply and a shift, d fixed per launch (the grid-stride
 * loops' row of a group: a 64-bit division is a long call on the GPU). Granlund and Montgomery,
 * "Division by invariant integers using multiplication" (PLDI 1994), section 4: with l = ceil(log2 d) and
 * m = floor(2^32 (2^l - d) / d) + 1, n / d = (mulhi(m, n) + n) >> l for every n < 2^32 (the sum
 * taken in 64 bits). */
typedef struct qck_fastdiv {
    uint32_t d, m, l;
} qck_fastdiv;

QCK_HD qck_fastdiv qck_fastdiv_of(uint32_t d)
{
    qck_fastdiv f = {d, 0, 0};
    while (f.l < 32 && (1ull << f.l) < d)
        f.l++;
    f.m = (uint32_t)((((1ull << f.l) - d) << 32) / d + 1);
    return f;
}

QCK_HD uint32_t qck_fastdiv_div(const qck_fastdiv &f, uint32_t n)
{
#if defined(QCK_DEVICE_PASS)
    uint32_t hi = __umulhi(f.m, n);
#else
    uint32_t hi = (uint32_t)(((uint64_t)f.m * n) >> 32);
#endif
    return (uint32_t)(((uint64_t)hi + n) >> f.l);
}

/* rcp.approx.ftz.f32 (SASS MUFU.RCP): the instruction itself on NVIDIA. formats.md §13 lists its
 * behaviour (NaN -> 0x7FFFFFFF, +-0 and subnormals -> +-Inf, +-Inf -> +-0). The host pass has no
 * such instruction: numerics_check.cu defines QCK_HOST_RCP to the reference's emulation; the HIP
 * pass uses __frcp_rn, which is not the same function, and the backend declines every policy
 * that needs it there (qck_policy_needs_rcp). */
QCK_HD float qck_rcp_approx(float x)
{
#if defined(QCK_PTX)
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#elif defined(QCK_DEVICE_PASS)
    return __frcp_rn(x);
#elif defined(QCK_HOST_RCP)
    return QCK_HOST_RCP(x);
#else
    return 1.0f / x;
#endif
}

/* a / b under the kernel's division mode (arith.h qc_div_mode: QC_DIV_FAST is div.approx.ftz =
 * mul.ftz(a, rcp(b)); QC_DIV_FULL is Triton's div.full = mul.rn(a, rcp(b)), which the reference
 * models for |b| < 2^126 and which this backend evaluates the same way for every b). */
QCK_HD float qck_div_mode(float a, float b, qc_div_mode m)
{
    switch (m) {
    case QC_DIV_FAST: return qck_mul_ftz(a, qck_rcp_approx(b));
    case QC_DIV_FULL: return qck_mul(a, qck_rcp_approx(b));
    default:          return qck_div(a, b);
    }
}

/* 1 / b: IEEE (__frcp_rn's value, with the x86 NaN rules) or rcp.approx.ftz. */
QCK_HD float qck_recip(float b, qc_div_mode m) { return m == QC_DIV_IEEE ? qck_div(1.0f, b) : qck_rcp_approx(b); }

/* fminf / fmaxf: IEEE minNum / maxNum (a NaN operand yields the other), as glibc and CUDA agree. */
QCK_HD float qck_fminf(float a, float b)
{
    if (qck_isnan(a))
        return b;
    if (qck_isnan(b))
        return a;
    return a < b ? a : b;
}

QCK_HD float qck_fmaxf(float a, float b)
{
    if (qck_isnan(a))
        return b;
    if (qck_isnan(b))
        return a;
    return a > b ? a : b;
}

/* ---------------------------------------------------------------- element formats */

/* formats.md §1.1 (fp8), §3.1 (fp4, fp6); bf16 and f16 are IEEE-style. */
typedef struct qck_fmt {
    int bits, ebits, mbits, bias;
    qc_specials sp;
    uint32_t maxmag; /* magnitude code of the largest finite value */
} qck_fmt;

QCK_HD qck_fmt qck_format(qc_format f)
{
    qck_fmt m = {0, 0, 0, 0, QC_SPECIALS_NONE, 0};
    switch (f) {
    case QC_BF16:     m.bits = 16, m.ebits = 8, m.mbits = 7, m.bias = 127, m.sp = QC_SPECIALS_IEEE; break;
    case QC_F16:      m.bits = 16, m.ebits = 5, m.mbits = 10, m.bias = 15, m.sp = QC_SPECIALS_IEEE; break;
    case QC_E4M3FN:   m.bits = 8, m.ebits = 4, m.mbits = 3, m.bias = 7, m.sp = QC_SPECIALS_FN; break;
    case QC_E4M3FNUZ: m.bits = 8, m.ebits = 4, m.mbits = 3, m.bias = 8, m.sp = QC_SPECIALS_FNUZ; break;
    case QC_E5M2:     m.bits = 8, m.ebits = 5, m.mbits = 2, m.bias = 15, m.sp = QC_SPECIALS_IEEE; break;
    case QC_E5M2FNUZ: m.bits = 8, m.ebits = 5, m.mbits = 2, m.bias = 16, m.sp = QC_SPECIALS_FNUZ; break;
    case QC_E2M1:     m.bits = 4, m.ebits = 2, m.mbits = 1, m.bias = 1; break;
    case QC_E2M3:     m.bits = 6, m.ebits = 2, m.mbits = 3, m.bias = 1; break;
    case QC_E3M2:     m.bits = 6, m.ebits = 3, m.mbits = 2, m.bias = 3; break;
    default: return m;
    }
    uint32_t all = (1u << (m.bits - 1)) - 1; /* every bit but the sign */
    m.maxmag = m.sp == QC_SPECIALS_IEEE ? all - (1u << m.mbits) : m.sp == QC_SPECIALS_FN ? all - 1 : all;
    return m;
}

/* The magnitude code of a finite |x| (fp32 bits a, sign clear) on the grid of m, rounded to
 * nearest with the given ties (formats.md §1.2 for RNE, §3.2 for the other two). It may exceed
 * maxmag: the caller decides the overflow. The code is exponent field << mbits plus the rounded
 * significand, so a carry out of the mantissa raises the exponent by itself. */
QCK_HD uint32_t qck_round_mag(const qck_fmt &m, uint32_t a, qc_ties ties)
{
    int fe = (int)(a >> 23);
    uint32_t sig = a & 0x7FFFFFu;
    if (fe)
        sig |= 0x800000u;
    else
        fe = 1; /* fp32 subnormal: the quantum of the smallest normal binade */
    int emin = 1 - m.bias;                   /* the target's smallest normal exponent */
    int e = fe - 127 > emin ? fe - 127 : emin; /* the target binade (subnormal grid below emin) */
    int shift = (e - m.mbits) - (fe - 150);   /* dropped significand bits, >= 13 */
    if (shift >= 32)
        return 0; /* far below half of the smallest subnormal */
    uint32_t q = sig >> shift, rem = sig & ((1u << shift) - 1), half = 1u << (shift - 1);
    uint32_t up = ties == QC_TIES_ZERO   ? rem > half
                  : ties == QC_TIES_AWAY ? rem >= half
                                         : (rem > half || (rem == half && (q & 1u)));
    return ((uint32_t)(e - emin) << m.mbits) + q + up;
}

/* NaN into a format without NaN codes (formats.md §3.2, §11). */
QCK_HD uint32_t qck_nonan(const qck_fmt &m, uint32_t b, qc_nonan rule)
{
    uint32_t sbit = 1u << (m.bits - 1), neg = b >> 31;
    switch (rule) {
    case QC_NONAN_POSMAX:   return m.maxmag;
    case QC_NONAN_MLDTYPES: return neg ? 0u : sbit; /* quiet_NaN() is the -0 code; -NaN flips it */
    case QC_NONAN_SIGNBIT:  return sbit;            /* modelopt cast_fp4 */
    case QC_NONAN_TORCHAO: {
        /* torchao _f32_to_fpx_unpacked takes a NaN down its normal branch: rebias plus the
         * rounding constant plus the odd bit, shift, keep 8 bits, OR the sign (formats.md §3.2). */
        uint32_t a = b & QCK_ABS, drop = 23u - (uint32_t)m.mbits;
        uint32_t rebias = (uint32_t)((m.bias - 127) * (1 << 23));
        uint32_t code = ((a + rebias + ((1u << (drop - 1)) - 1u) + ((a >> drop) & 1u)) >> drop) & 0xFFu;
        return (code | (neg ? sbit : 0u)) & ((1u << m.bits) - 1u);
    }
    default: return 0;
    }
}

/* fp32 -> a minifloat code under every field of the policy (formats.md §1.3, §3.2, §12 items 1, 3). */
QCK_HD uint32_t qck_encode_minifloat(const qck_fmt &m, float x, const qc_cast_policy &p)
{
    uint32_t b = qck_bits(x), a = b & QCK_ABS;
    uint32_t sbit = 1u << (m.bits - 1), sign = (b >> 31) ? sbit : 0u;
    uint32_t expall = ((1u << m.ebits) - 1u) << m.mbits;
    if (a > QCK_INF) {
        if (m.sp == QC_SPECIALS_NONE)
            return qck_nonan(m, b, p.nonan);
        if (m.sp == QC_SPECIALS_FNUZ)
            return sbit; /* 0x80, the only NaN */
        uint32_t s = p.nan_sign == QC_NAN_NEGATIVE ? sbit : (p.nan_sign == QC_NAN_KEEP) ? sign : 0u;
        if (m.sp == QC_SPECIALS_FN)
            return s | (m.maxmag + 1u); /* S.1111.111 */
        uint32_t mant = (1u << m.mbits) - 1u;
        if (p.nan_code == QC_NANCODE_QUIET) {
            mant = 1u << (m.mbits - 1);
        } else if (p.nan_code == QC_NANCODE_PAYLOAD) {
            mant = (a & 0x7FFFFFu) >> (23 - m.mbits);
            mant = mant ? mant : 1u;
        } else if (p.nan_code == QC_NANCODE_QUIET_PAYLOAD) {
            mant = ((a & 0x7FFFFFu) >> (23 - m.mbits)) | (1u << (m.mbits - 1));
        }
        return s | expall | mant;
    }
    uint32_t mag = a == QCK_INF ? m.maxmag + 1u : qck_round_mag(m, a, p.ties);
    if (mag > m.maxmag) {
        if (m.sp == QC_SPECIALS_NONE || p.overflow == QC_OVERFLOW_SATFINITE)
            return sign | m.maxmag;
        if (m.sp == QC_SPECIALS_FNUZ)
            return sbit;
        if (m.sp == QC_SPECIALS_FN)
            return sign | (m.maxmag + 1u);
        return sign | expall; /* Inf */
    }
    if (mag == 0) {
        if (m.sp == QC_SPECIALS_FNUZ || p.zero_sign == QC_ZERO_DROP)
            return 0;
        if (p.zero_sign == QC_ZERO_MODELOPT && a == 0)
            return sbit;
        if (p.zero_sign == QC_ZERO_EXACT_POSITIVE && a == 0)
            return 0;
    }
    return sign | mag;
}

/* fp32 -> e2m1 in a dozen instructions (the same function as qck_encode_minifloat for e2m1): RNE by
 * integer rounding of the bits, the other ties by comparisons with the seven midpoints 0.25, 0.75,
 * 1.25, 1.75, 2.5, 3.5, 5 (formats.md §3.2: toward zero every comparison strict, away every one
 * >=); beyond 5 and for Inf the code saturates at 7 (6.0); NaN takes the policy's rule. */
QCK_HD uint32_t qck_encode_e2m1(float x, const qc_cast_policy &p)
{
    uint32_t b = qck_bits(x), a = b & QCK_ABS;
    if (a > QCK_INF)
        return qck_nonan(qck_format(QC_E2M1), b, p.nonan);
    float v = qck_float(a);
    uint32_t c;
    if (p.ties == QC_TIES_EVEN) {
        /* below 1 the grid is 0.5: v + 2^22 rounds v to it (the ulp of 2^22 is 0.5); from 1 on the
         * code is the fp32 bits rounded to 1 mantissa bit (RNE by adding half - 1 + the kept LSB),
         * rebiased, saturated at 7; the codes' parity is the grid's, so both ties go to even */
        if (v < 1.0f) {
            c = qck_bits(qck_add_rn(v, 4194304.0f)) - 0x4A800000u;
        } else {
            c = ((a + 0x1FFFFFu + ((a >> 22) & 1u)) >> 22) - 252u;
            c = c > 7u ? 7u : c;
        }
    } else if (p.ties == QC_TIES_ZERO)
        c = (v > 0.25f) + (v > 0.75f) + (v > 1.25f) + (v > 1.75f) + (v > 2.5f) + (v > 3.5f) + (v > 5.0f);
    else
        c = (v >= 0.25f) + (v >= 0.75f) + (v >= 1.25f) + (v >= 1.75f) + (v >= 2.5f) + (v >= 3.5f) + (v >= 5.0f);
    if (c == 0 && p.zero_sign == QC_ZERO_DROP)
        return 0;
    if (c == 0 && p.zero_sign == QC_ZERO_MODELOPT && a == 0)
        return 8;
    if (c == 0 && p.zero_sign == QC_ZERO_EXACT_POSITIVE && a == 0)
        return 0;
    return (b >> 31) << 3 | c;
}

/* The least of three unsigned words: one VIMNMX3 on sm_90 (a DPX instruction). */
QCK_HD uint32_t qck_min3_u32(uint32_t a, uint32_t b, uint32_t c)
{
#if defined(QCK_PTX)
    return __vimin3_u32(a, b, c);
#else
    const uint32_t m = a < b ? a : b;
    return m < c ? m : c;
#endif
}

/* fp32 -> e2m1 for a y that is not NaN, ties to even, saturating, the sign of zero kept (the cast of
 * cvt.rn.satfinite.e2m1x2, formats.md §3.2; every e2m1 policy with those ties and zero sign agrees
 * on non-NaN input), without a branch and mostly on the FMA pipe. qck_e2m1_mag_biased gives the
 * magnitude's code plus QCK_E2M1_BIAS. e2m1's grid is 0.5 on [0, 2), 1 on [2, 4) and 2 on [4, 6], so
 * the code of a = |y| is 2a, a + 2 or a / 2 + 4 rounded to an integer on those ranges, and the least
 * of the three everywhere below 7 (each line lies above the others outside its range); one FMA or
 * add of 2^23 rounds each, ties to even (the ulp of 2^23 is 1; the offsets 0, 2 and 4 are even, so
 * the tie goes to the even code), and its bits are 2^23's plus the rounded value. Sat: a =
 * min(|y|, 6) first (6 is e2m1's largest), for any y; without it the caller knows |y| < 7 (7 would
 * give 8). Checked on every fp32 >= 0 of both kinds against the comparison encoder while written;
 * numerics_check.cu compares both with the reference. Three FFMA/FADD (|y| a free operand modifier)
 * and one VIMNMX3, and an FMNMX when Sat; the FP4 pack (kernels.cu) adds the biased codes at their
 * nibbles and takes the bias off once per word. */
#define QCK_E2M1_BIAS 0x4B000000u
template <bool Sat = true> QCK_HD uint32_t qck_e2m1_mag_biased(float y)
{
    const float a = Sat ? fminf(fabsf(y), 6.0f) : fabsf(y);
    return qck_min3_u32(qck_bits(qck_fma_rn(a, 2.0f, 8388608.0f)), qck_bits(qck_add_rn(a, 8388610.0f)),
                        qck_bits(qck_fma_rn(a, 0.5f, 8388612.0f)));
}

template <bool Sat = true> QCK_HD uint32_t qck_e2m1_rne_sat(float y)
{
    return (qck_bits(y) >> 28 & 8u) | (qck_e2m1_mag_biased<Sat>(y) - QCK_E2M1_BIAS);
}

/* Does an e2m1 cast policy equal qck_e2m1_rne_sat on non-NaN input? */
QCK_HD int qck_e2m1_rne_ok(const qc_cast_policy &p) { return p.ties == QC_TIES_EVEN && p.zero_sign == QC_ZERO_KEEP; }

/* An e4m3fn code that is not NaN -> fp32, exact: the code's bits placed in an fp32 exponent and
 * mantissa are the value times 2^-120 (its subnormals too, as fp32 subnormals). A satfinite cast
 * never gives the NaN codes, so the lean nvfp4 step decodes its scale by this alone. */
QCK_HD float qck_decode_e4m3fn_finite(uint32_t code)
{
    return qck_float((code & 0x80u) << 24 | (code & 0x7Fu) << 20) * 0x1p120f;
}

/* Any e4m3fn code: 0x7F / 0xFF are NaN (the bits of qck_decode_minifloat). */
QCK_HD float qck_decode_e4m3fn(uint32_t code)
{
    if ((code & 0x7Fu) == 0x7Fu)
        return qck_float((code & 0x80u) << 24 | 0x7FC00000u);
    return qck_decode_e4m3fn_finite(code);
}

/* A minifloat code -> fp32, exact; NaN codes of 8 bits and fewer give sign | 0x7FC00000 (ml_dtypes'
 * widening), bf16/f16 NaN keep their payload shifted (the IEEE widening). */
QCK_HD float qck_decode_minifloat(const qck_fmt &m, uint32_t code)
{
    uint32_t sbit = 1u << (m.bits - 1), sign = (code & sbit) ? 0x80000000u : 0u;
    uint32_t mag = code & (sbit - 1u), e = mag >> m.mbits, f = mag & ((1u << m.mbits) - 1u);
    uint32_t eall = (1u << m.ebits) - 1u;
    int nan = (m.sp == QC_SPECIALS_FN && mag == sbit - 1u) || (m.sp == QC_SPECIALS_FNUZ && (code & ((sbit << 1) - 1u)) == sbit) ||
              (m.sp == QC_SPECIALS_IEEE && e == eall && f != 0);
    if (nan)
        return qck_float(m.bits <= 8 ? sign | 0x7FC00000u : sign | QCK_INF | (f << (23 - m.mbits)));
    if (m.sp == QC_SPECIALS_IEEE && e == eall)
        return qck_float(sign | QCK_INF);
    if (e != 0) /* normal: every minifloat normal is an fp32 normal */
        return qck_float(sign | ((e - (uint32_t)m.bias + 127u) << 23) | (f << (23 - m.mbits)));
    if (f == 0)
        return qck_float(sign);
    /* subnormal f * 2^(1 - bias - mbits): normalise f into the fp32 significand */
    int lz = qck_clz(f) - (32 - m.mbits); /* leading zeros within the mbits field */
    int exp2 = 1 - m.bias - m.mbits + (m.mbits - 1 - lz); /* exponent of f's top bit */
    uint32_t frac = (f << (lz + 1)) & ((1u << m.mbits) - 1u);
    if (exp2 >= -126)
        return qck_float(sign | ((uint32_t)(exp2 + 127) << 23) | (frac << (23 - m.mbits)));
    /* an fp32 subnormal (bf16's subnormals): f * 2^(1 - bias - mbits) = f << (149 + 1 - bias - mbits) ulps */
    return qck_float(sign | (f << (150 - m.bias - m.mbits)));
}

/* ---------------------------------------------------------------- e8m0 */

/* The results of the host's libm that two rules need on the device: ceilf(log2f(x)) and
 * exp2f(c) (QC_E8M0_LOG2_CEIL, QC_POW2_LOG2_CEIL; the reference calls glibc's log2f, which is not
 * correctly rounded, and sglang #29954 (formats.md §10 B11) is precisely the float log2 landing on
 * an integer). For x in the binade [2^k, 2^(k+1)) a faithful log2f returns k or more, and k
 * exactly only on a first run of mantissas: thr[] holds the last mantissa offset of that run,
 * measured with the host's log2f by qck_libm_build (runtime.cu), which also checks that the run
 * is contiguous and that no later mantissa of the scanned window comes back to k. */
typedef struct qck_libm {
    int32_t thr_norm[256]; /* biased exponent e (1..254): ceil = k + (mantissa > thr) */
    int32_t thr_sub[24];   /* fp32 subnormals, by the top bit j of the mantissa */
    uint32_t exp2_bits[280]; /* exp2f(c) for c = -151 .. 128 */
    int32_t top_norm[256];   /* floorf(log2f()): floor = k + (mantissa >= top), the run rounded up to k + 1 */
    int32_t top_sub[24];
    int ok;
} qck_libm;

/* ceilf(log2f(a)) for 0 < a < Inf (fp32 bits, sign clear). */
QCK_HD int qck_ceil_log2(uint32_t a, const qck_libm *L)
{
    uint32_t e = a >> 23, f = a & 0x7FFFFFu;
    if (e)
        return (int)e - 127 + ((int32_t)f > L->thr_norm[e]);
    int j = 31 - qck_clz(f);
    return j - 149 + ((int32_t)(f - (1u << j)) > L->thr_sub[j]);
}

/* floorf(log2f(a)) for 0 < a < Inf (fp32 bits, sign clear): k, or k + 1 on the binade's last
 * mantissas, whose log2f rounds up to k + 1. */
QCK_HD int qck_floor_log2(uint32_t a, const qck_libm *L)
{
    uint32_t e = a >> 23, f = a & 0x7FFFFFu;
    if (e)
        return (int)e - 127 + ((int32_t)f >= L->top_norm[e]);
    int j = 31 - qck_clz(f);
    return j - 149 + ((int32_t)(f - (1u << j)) >= L->top_sub[j]);
}

/* exp2f(ceilf(log2f(s))) of the host's libm, for s >= 0 (scales; formats.md §2.2). */
QCK_HD float qck_pow2_log2_ceil(float s, const qck_libm *L)
{
    uint32_t b = qck_bits(s);
    if (qck_isnan_bits(b))
        return qck_float(b | QCK_QUIET); /* no profile reaches it: an eps or fmaxf precedes */
    if ((b & QCK_ABS) == 0)
        return 0.0f; /* log2f(0) = -Inf, exp2f(-Inf) = +0 */
    if (b == QCK_INF)
        return s;
    int c = qck_ceil_log2(b & QCK_ABS, L);
    return qck_float(L->exp2_bits[c + 151]);
}

/* e8m0.c log2_ceil_byte: ceilf(log2f(a)) + 127 for a non-NaN |x| bits a, 0 below 2^-127 and for
 * 0, `over` above 2^127 and for Inf (the table has no entry for 0 or Inf). */
QCK_HD uint32_t qck_log2_ceil_byte(uint32_t a, const qck_libm *L, uint32_t over)
{
    if (a == 0)
        return 0;
    if (a == QCK_INF)
        return over;
    int l = qck_ceil_log2(a, L);
    return l < -127 ? 0u : l > 127 ? over : (uint32_t)(l + 127);
}

QCK_HD uint32_t qck_clampi(int v, int lo, int hi) { return (uint32_t)(v < lo ? lo : v > hi ? hi : v); }

/* torchao to_mx FLOOR / CEIL / EVEN after the exponent (formats.md §2.2): minus emax, clamped to
 * [-127, 128], NaN -> 0xFF. */
QCK_HD uint32_t qck_torchao_byte(int unbiased, int emax, int nan)
{
    return nan ? 0xFFu : qck_clampi(unbiased - emax, -127, 128) + 127u;
}

/* Does the e8m0 rule read the qck_libm table (the host's log2f)? */
QCK_HD int qck_e8m0_uses_libm(qc_e8m0_rule r)
{
    return r == QC_E8M0_LOG2_CEIL || r == QC_E8M0_TORCHAO_RCEIL || r == QC_E8M0_MODELOPT || r == QC_E8M0_MODELOPT_CPU ||
           r == QC_E8M0_LOG2_FLOOR;
}

/* fp32 -> e8m0 under every rule of formats.md §2.2 (names as qc_e8m0_rule). */
QCK_HD uint32_t qck_e8m0_encode(float x, const qc_cast_policy &p, const qck_libm *L)
{
    uint32_t b = qck_bits(x), a = b & QCK_ABS, e = a >> 23, f = a & 0x7FFFFFu;
    int nan = a > QCK_INF, nonfinite = e == 0xFFu;
    /* torch's linear RNE: up when the guard bit is set and a lower bit or the implicit LSB is */
    uint32_t rne = e + (((f >> 22) & 1u) && ((f & 0x3FFFFFu) || e != 0));
    uint32_t ceil = e ? e + (f != 0) : (f > 0x400000u);
    switch (p.e8m0) {
    case QC_E8M0_RNE:
        return nonfinite || rne > 254 ? 0xFFu : rne;
    case QC_E8M0_MLDTYPES:
    case QC_E8M0_MLDTYPES_06: {
        uint32_t E = p.e8m0 == QC_E8M0_MLDTYPES_06 ? rne : e ? rne : (f >= 0x600000u);
        if ((b >> 31) || a == 0 || nonfinite || E > 254)
            return 0xFFu;
        return E;
    }
    case QC_E8M0_CEIL: /* cvt.rp.satfinite.ue8m0x2.f32 */
        return nan ? 0xFFu : nonfinite ? 0xFEu : (ceil > 254 ? 254u : ceil);
    case QC_E8M0_FLOOR_SAT: /* cvt.rz.satfinite.ue8m0x2.f32 */
        return nan ? 0xFFu : nonfinite ? 0xFEu : e;
    case QC_E8M0_RCEIL:
        return nonfinite ? 0xFFu : ceil;
    case QC_E8M0_DEEPGEMM:
        return qck_clampi((int)e + (f != 0), 1, 254);
    case QC_E8M0_FLOOR:
        return qck_torchao_byte((int)e - 127, p.e8m0_emax, nan);
    case QC_E8M0_TORCHAO_CEIL:
        return qck_torchao_byte((int)e - 127 + (f != 0), p.e8m0_emax, nan);
    case QC_E8M0_EVEN: {
        uint32_t r = (a + (1u << (22 - p.e8m0_mbits))) & 0xFF800000u;
        return qck_torchao_byte((int)(r >> 23) - 127, p.e8m0_emax, nan);
    }
    case QC_E8M0_TRITON_UP:
        return ((b + 0x7FFFFFu) & 0x7F800000u) >> 23;
    case QC_E8M0_TRITON_DOWN:
        return (b & 0x7F800000u) >> 23;
    case QC_E8M0_LOG2_CEIL:
        return nan ? 0xFFu : qck_log2_ceil_byte(a, L, 0xFFu);
    case QC_E8M0_TORCHAO_RCEIL: /* e8m0.c: the same, saturating at 254 */
        return nan ? 0xFFu : qck_log2_ceil_byte(a, L, 0xFEu);
    case QC_E8M0_LOG2_FLOOR: { /* e8m0.c: microxcaling, floor(log2f(x)) - emax with 0 read as 2^-126 */
        if (nonfinite)
            return 0xFFu;
        int l = qck_floor_log2(a ? a : 0x00800000u, L) - p.e8m0_emax;
        return l > 127 ? 0xFFu : l < -127 ? 0u : (uint32_t)(l + 127);
    }
    case QC_E8M0_MODELOPT: /* e8m0.c: NaN 0, +Inf 255 (GPU) or 0 (CPU) */
    case QC_E8M0_MODELOPT_CPU:
        return nan ? 0u : (a == QCK_INF) ? (p.e8m0 == QC_E8M0_MODELOPT ? 0xFFu : 0u) : qck_log2_ceil_byte(a, L, 0xFFu);
    default:
        return 0xFFu;
    }
}

/* e8m0 -> fp32 under every decoder of formats.md §2.3. */
QCK_HD float qck_e8m0_decode(uint32_t E, qc_e8m0_decoder d)
{
    switch (d) {
    case QC_E8M0_DEC_SHIFT:
        return qck_float(E << 23);
    case QC_E8M0_DEC_EXP2:
        return qck_float(E == 0 ? 0x00400000u : E << 23);
    case QC_E8M0_DEC_TRTLLM_RCP:
        if (E == 0)
            return 1.0f;
        return qck_float(E <= 253 ? (254u - E) << 23 : 0x00400000u >> (E - 254));
    case QC_E8M0_DEC_CUTEDSL_INV:
        return E == 0 || E >= 254 ? 0.0f : qck_float((254u - E) << 23);
    case QC_E8M0_DEC_TORCHAO:
        return qck_float(E == 0 ? 0x00800000u : E << 23);
    case QC_E8M0_DEC_TORCHAO_RCP:
        if (E == 0xFF)
            return qck_float(0x7FC00000u);
        return E == 0 ? 1.0f : qck_float(E <= 253 ? (254u - E) << 23 : 0x00400000u);
    default:
        return qck_float(E == 0xFF ? 0x7FC00000u : E == 0 ? 0x00400000u : E << 23);
    }
}

/* Any format: the code in the low bits (f32 is its bits). */
QCK_HD uint32_t qck_encode(qc_format f, float x, const qc_cast_policy &p, const qck_libm *L)
{
    if (f == QC_E8M0)
        return qck_e8m0_encode(x, p, L);
    if (f == QC_F32)
        return qck_bits(x);
    return qck_encode_minifloat(qck_format(f), x, p);
}

QCK_HD float qck_decode(qc_format f, uint32_t code, const qc_cast_policy &p)
{
    if (f == QC_F32)
        return qck_float(code);
    if (f == QC_E8M0)
        return qck_e8m0_decode(code & 0xFFu, p.e8m0_decoder);
    return qck_decode_minifloat(qck_format(f), code);
}

/* ---------------------------------------------------------------- hardware conversions */

/* The policies the PTX instructions implement exactly (formats.md §13): RNE, satfinite, every NaN
 * -> 0x7F (e5m2: the all-ones NaN), the sign of zero kept. */
QCK_HD int qck_hw_fp8_ok(qc_format f, const qc_cast_policy &p)
{
    return (f == QC_E4M3FN || (f == QC_E5M2 && p.nan_code == QC_NANCODE_ONES)) && p.overflow == QC_OVERFLOW_SATFINITE &&
           p.nan_sign == QC_NAN_CANONICAL && p.ties == QC_TIES_EVEN && p.zero_sign == QC_ZERO_KEEP;
}

/* The cast those instructions perform (the fields qck_hw_fp8_ok asks for), for a build without them:
 * the host emulation and HIP run their clean slots through it. */
QCK_HD qc_cast_policy qck_hw_fp8_policy(qc_cast_policy c)
{
    c.overflow = QC_OVERFLOW_SATFINITE, c.nan_sign = QC_NAN_CANONICAL, c.nan_code = QC_NANCODE_ONES;
    c.ties = QC_TIES_EVEN, c.zero_sign = QC_ZERO_KEEP;
    return c;
}

/* The same instructions give a recipe's codes on its clean slots (no NaN, values clamped into
 * [-clamp_max, clamp_max] within the format's finite range) whenever its cast rounds ties to even
 * and keeps the sign of zero: a cast policy acts on finite in-range values only through those two
 * fields (ties, zero_sign); overflow, NaN sign and NaN code act on the rest (formats.md §1.3, §3.2).
 * numerics_check.cu proves the equality on every fp32 value of the range for each such policy. */
QCK_HD int qck_hw_fp8_clean_ok(const qc_recipe_policy &p)
{
    const qc_cast_policy &c = p.cast;
    const float fmax = p.elem == QC_E4M3FN ? 448.0f : 57344.0f;
    const int bounded = p.clamp == QC_CLAMP_TORCH || p.clamp == QC_CLAMP_FMINF || p.clamp == QC_CLAMP_TRITON;
    return (p.elem == QC_E4M3FN || p.elem == QC_E5M2) && c.ties == QC_TIES_EVEN && c.zero_sign == QC_ZERO_KEEP &&
           bounded && p.clamp_max >= 0.0f && p.clamp_max <= fmax;
}

/* cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32: RNE, overflow to Inf, every NaN -> 0x7FFF. */
QCK_HD int qck_hw_half_ok(qc_format f, const qc_cast_policy &p)
{
    return (f == QC_BF16 || f == QC_F16) && p.overflow == QC_OVERFLOW_NAN && p.nan_sign == QC_NAN_CANONICAL &&
           p.nan_code == QC_NANCODE_ONES && p.ties == QC_TIES_EVEN && p.zero_sign == QC_ZERO_KEEP;
}

#if defined(QCK_PTX)
/* Element lo in the low byte: the instruction puts its first source in the upper one. */
QCK_D uint32_t qck_cvt_e4m3x2(float lo, float hi)
{
    unsigned short r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
    return r;
}
QCK_D uint32_t qck_cvt_e5m2x2(float lo, float hi)
{
    unsigned short r;
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
    return r;
}
QCK_D uint32_t qck_cvt_bf16x2(float lo, float hi)
{
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
QCK_D uint32_t qck_cvt_f16x2(float lo, float hi)
{
    uint32_t r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
#endif

/* ---------------------------------------------------------------- recipe steps */

/* How a group's elements are scaled before the clamp: x * mult (mul.rn or mul.rn.ftz) or an IEEE
 * x / mult. */
typedef struct qck_elem_op {
    float mult;
    int divide, ftz;
    int mult_first; /* mult * x: a NaN multiplier's NaN wins over a NaN x (nvfp4.c, torchao) */
} qck_elem_op;

QCK_HD qck_elem_op qck_op_mul(float m, int ftz)
{
    qck_elem_op o = {m, 0, ftz, 0};
    return o;
}

QCK_HD qck_elem_op qck_op_div(float d)
{
    qck_elem_op o = {d, 1, 0, 0};
    return o;
}

QCK_HD float qck_apply(const qck_elem_op &o, float x)
{
    return o.divide ? qck_div(x, o.mult) : o.mult_first ? qck_mul_mode(o.mult, x, o.ftz) : qck_mul_mode(x, o.mult, o.ftz);
}

/* The clamp before the cast (formats.md §10 B20; recipes.h qc_clamp). */
/* Clamp kind CL (a compile-time qc_clamp) to [nm, m], after the canonical NaN where the policy has it. */
template <int CL> QCK_HD float qck_clamp_as(float v, float m, float nm, int nan_canonical)
{
    if (nan_canonical && qck_isnan(v)) /* the GPU's own NaN already; explicit for the host emulation */
        v = qck_float(0x7FFFFFFFu);
    switch (CL) {
    case QC_CLAMP_TORCH:  return qck_isnan(v) ? v : v > m ? m : v < nm ? nm : v;
    case QC_CLAMP_FMINF:  return qck_fmaxf(qck_fminf(v, m), nm);
    case QC_CLAMP_TRITON: return qck_fminf(qck_fmaxf(v, nm), m);
    case QC_CLAMP_FMINF_UPPER: return qck_fminf(v, m);
    default:              return v;
    }
}

/* min and max of two values neither of which is NaN and which are not two zeros: every fminf-,
 * torch- and triton-style clamp agrees with them there (FMNMX on the device). */
QCK_HD float qck_min_plain(float a, float b)
{
#if defined(QCK_DEVICE_PASS)
    return fminf(a, b);
#else
    return a < b ? a : b;
#endif
}

QCK_HD float qck_max_plain(float a, float b)
{
#if defined(QCK_DEVICE_PASS)
    return fmaxf(a, b);
#else
    return a > b ? a : b;
#endif
}

/* Clamp kind CL of a value that is not NaN, with bounds m > 0 and nm = -m (so no two zeros meet):
 * each kind is a plain minimum and maximum there (qck_clamp_as's NaN cases have nothing to act on). */
template <int CL> QCK_HD float qck_clamp_plain(float v, float m, float nm)
{
    switch (CL) {
    case QC_CLAMP_TORCH:
    case QC_CLAMP_FMINF:       return qck_max_plain(qck_min_plain(v, m), nm);
    case QC_CLAMP_TRITON:      return qck_min_plain(qck_max_plain(v, nm), m);
    case QC_CLAMP_FMINF_UPPER: return qck_min_plain(v, m);
    default:                   return v;
    }
}

QCK_HD float qck_clamp(float v, const qc_recipe_policy &p)
{
    float m = p.clamp_max, nm = qck_float(qck_bits(m) ^ 0x80000000u);
    switch (p.clamp) {
    case QC_CLAMP_TORCH:       return qck_clamp_as<QC_CLAMP_TORCH>(v, m, nm, p.nan_canonical);
    case QC_CLAMP_FMINF:       return qck_clamp_as<QC_CLAMP_FMINF>(v, m, nm, p.nan_canonical);
    case QC_CLAMP_TRITON:      return qck_clamp_as<QC_CLAMP_TRITON>(v, m, nm, p.nan_canonical);
    case QC_CLAMP_FMINF_UPPER: return qck_clamp_as<QC_CLAMP_FMINF_UPPER>(v, m, nm, p.nan_canonical);
    default:                   return qck_clamp_as<QC_CLAMP_NONE>(v, m, nm, p.nan_canonical);
    }
}

QCK_HD float qck_amax_used(float amax, const qc_recipe_policy &p)
{
    return p.eps_at == QC_EPS_AMAX && amax < p.eps ? p.eps : amax; /* torch.clamp(min): NaN stays */
}

/* max / amax: a division, or torch's Python float over a tensor, amax.reciprocal() * max (scale.c). */
QCK_HD float qck_max_over_amax(float a, const qc_recipe_policy &p)
{
    if (p.scale_op == QC_SCALE_RCP_OF_MULT)
        return qck_mul_mode(qck_recip(a, p.div_mode), p.elem_max, p.div_mode == QC_DIV_FAST);
    return qck_div_mode(p.elem_max, a, p.div_mode);
}

/* The fp32 scale of tensor / token / token_group / block from the tile's amax (formats.md §6.2-§6.4). */
QCK_HD float qck_tiled_scale(float amax, const qc_recipe_policy &p, const qck_libm *L)
{
    float a = qck_amax_used(amax, p), s;
    int fast = p.div_mode == QC_DIV_FAST;
    switch (p.scale_op) {
    case QC_SCALE_MUL_RCP:     s = qck_mul_mode(a, qck_recip(p.elem_max, p.div_mode), fast); break;
    case QC_SCALE_RCP_OF_MULT: s = qck_recip(qck_max_over_amax(a, p), p.div_mode); break;
    default:                   s = qck_div_mode(a, p.elem_max, p.div_mode); break;
    }
    if (p.eps_at == QC_EPS_SCALE)
        s = qck_fmaxf(s, p.eps);
    if (p.pow2 == QC_POW2_E8M0)
        s = qck_e8m0_decode(qck_e8m0_encode(s, p.pow2_policy, L), p.pow2_policy.e8m0_decoder);
    else if (p.pow2 == QC_POW2_LOG2_CEIL)
        s = qck_pow2_log2_ceil(s, L);
    /* the GPU's scale of a NaN amax is its canonical NaN; explicit for the host emulation */
    return p.nan_canonical && qck_isnan(s) ? qck_float(0x7FFFFFFFu) : s;
}

/* The element operation of a tiled recipe's group (formats.md §6.2's three roundings). */
QCK_HD qck_elem_op qck_tiled_op(float s, float amax, const qc_recipe_policy &p)
{
    qc_elem_op op = p.elem_op;
    int fast = p.div_mode == QC_DIV_FAST;
    if (op == QC_ELEM_MUL_MAX_AMAX && p.pow2 != QC_POW2_NONE) {
        if (p.pow2_mult == QC_POW2_MULT_INV_BITS) /* sglang JIT inv_scale_ue8m0: byte 255 gives -Inf */
            return qck_op_mul(qck_float((254u - ((qck_bits(s) >> 23) & 0xFFu)) << 23), fast);
        op = QC_ELEM_MUL_RCP; /* sgl-kernel ue8m0: the multiplier is exactly 2^-E */
    }
    switch (op) {
    case QC_ELEM_DIV:
        if (p.div_mode == QC_DIV_IEEE)
            return qck_op_div(s);
        return qck_op_mul(qck_rcp_approx(s), fast); /* div.approx / div.full = a * rcp(b) */
    case QC_ELEM_MUL_MAX_AMAX:
        return qck_op_mul(qck_max_over_amax(qck_amax_used(amax, p), p), fast);
    default:
        return qck_op_mul((p.zero_guard && s == 0.0f) ? 0.0f : qck_recip(s, p.div_mode), fast);
    }
}

/* flashinfer cute-dsl float_to_ue8m0_fast (formats.md §5). */
QCK_HD uint32_t qck_cutedsl_ue8m0(float d)
{
    uint32_t b = qck_bits(d);
    if (qck_isnan_bits(b))
        return 254;
    if (!(d > 0.0f))
        return 0;
    uint32_t e = b >> 23, f = b & 0x7FFFFFu, E = e ? e + (f != 0) : (f > 0x400000u);
    return E > 254 ? 254 : E;
}

/* An MX block's e8m0 byte from its amax (formats.md §5; recipes.h qc_mx_rule). */
QCK_HD uint32_t qck_mx_byte(float amax, const qc_recipe_policy &p, const qck_libm *L)
{
    if (p.mx_rule == QC_MX_E8M0_OF_AMAX)
        return qck_e8m0_encode(amax, p.pow2_policy, L);
    float d = qck_tiled_scale(amax, p, L); /* the descale amax / max (no eps_at SCALE, no pow2 in mx rows) */
    return p.mx_rule == QC_MX_CUTEDSL ? qck_cutedsl_ue8m0(d) : qck_e8m0_encode(d, p.pow2_policy, L);
}

/* The element operation of an MX block with byte E. */
QCK_HD qck_elem_op qck_mx_op(uint32_t E, float amax, const qc_recipe_policy &p)
{
    int fast = p.div_mode == QC_DIV_FAST;
    if (p.mx_zero_guard && amax == 0.0f)
        return qck_op_mul(0.0f, fast); /* TRT-LLM: outputScale = vecMax != 0 ? ... : 0 */
    float d = qck_e8m0_decode(E, p.mx_dec);
    if ((p.pow2_policy.e8m0 == QC_E8M0_MODELOPT || p.pow2_policy.e8m0 == QC_E8M0_MODELOPT_CPU) &&
        (qck_bits(amax) & QCK_ABS) >= QCK_INF) /* mx.c: modelopt divides by exp2 of its float exponent */
        d = qck_isnan(amax) ? amax : qck_float(QCK_INF);
    switch (p.mx_op) {
    case QC_MX_MUL:          return qck_op_mul(d, fast);
    case QC_MX_MUL_RCP:      return qck_op_mul(qck_rcp_approx(d), fast);
    case QC_MX_MUL_RECIP_NZ: return qck_op_mul(d == 0.0f ? 0.0f : qck_recip(d, p.div_mode), fast);
    default:                 return qck_op_div(d); /* x / 2^(E-127): one IEEE rounding */
    }
}

/* NVFP4 (formats.md §4.2, §4.3): the global scale g of the recipe's order from the tensor amax
 * (or the given encode scale), and its decode form written to gscale. */
QCK_HD float qck_nv_global(const qc_recipe_policy &p, float amax_t, int has_given, float given)
{
    if (has_given)
        return p.nv_order == QC_NVFP4_TORCHAO ? qck_div(1.0f, given) : given;
    float flt_max = qck_float(QCK_FLT_MAX_BITS);
    switch (p.nv_gscale) {
    case QC_GSCALE_TE: {
        float gs = amax_t == 0.0f ? flt_max : qck_div(2688.0f, amax_t);
        gs = gs > flt_max ? flt_max : gs;
        return gs == 0.0f ? 1.0f : gs;
    }
    case QC_GSCALE_NONE:
        return 1.0f;
    default:
        return amax_t == 0.0f ? flt_max : qck_div(2688.0f, amax_t);
    }
}

QCK_HD float qck_nv_gscale_out(const qc_recipe_policy &p, float g)
{
    float d = p.nv_order == QC_NVFP4_TORCHAO ? g : qck_div(1.0f, g);
    return p.nan_canonical && qck_isnan(d) ? qck_float(0x7FFFFFFFu) : d;
}

/* The FAST order (flashinfer / TRT-LLM, formats.md §4.3): SFValue = g * (vecMax * rcp(6)), and the
 * output scale rcp(SFValue decoded * rcp(g)), or 0 (qck_nv_zero); rcp is rcp.approx.ftz. Finite: the
 * caller knows every operand finite (the group kernel's common case, qck_nv_g), so no product is
 * NaN and the x86 NaN rules (qck_mul) have nothing to act on: plain multiplies. */
template <bool Finite> QCK_HD float qck_mul_x86(float a, float b)
{
    return Finite ? qck_mul_rn(a, b) : qck_mul(a, b);
}
template <bool Finite = false> QCK_HD float qck_nv_fast_sf_value(float vecmax, float g)
{
    return qck_mul_x86<Finite>(g, qck_mul_x86<Finite>(vecmax, qck_rcp_approx(6.0f)));
}
template <bool Finite = false> QCK_HD float qck_nv_fast_output_scale(int zero, float sfdec, float rcp_g)
{
    return zero ? 0.0f : qck_rcp_approx(qck_mul_x86<Finite>(sfdec, rcp_g));
}

/* Whether g lets the FAST order's step take Finite = true for a block with a finite amax: g normal
 * and finite, so rcp.approx.ftz(g) is finite too (the block scale's cast must also never give the
 * NaN code: qck_hw_fp8_ok's satfinite cast). */
QCK_HD int qck_nv_g_normal(float g)
{
    const uint32_t m = qck_bits(g) & QCK_ABS;
    return m >= 0x00800000u && m < QCK_INF;
}

/* Whether a block's output scale is 0: by its decoded scale or by its amax (nvfp4.c, nv_zero). */
QCK_HD int qck_nv_zero(const qc_recipe_policy &p, float vecmax, float sfdec)
{
    return (p.nv_zero == QC_ZERO_SFVALUE ? sfdec : vecmax) == 0.0f; /* one select, one compare */
}

QCK_HD float qck_nv_sf_value(const qc_recipe_policy &p, float vecmax, float g)
{
    switch (p.nv_order) {
    case QC_NVFP4_TE:
        return qck_mul(vecmax, qck_mul(g, qck_div(1.0f, 6.0f)));
    case QC_NVFP4_TORCHAO: {
        float v = qck_div(qck_div(vecmax, 6.0f), g);
        return qck_isnan(v) ? v : v < 0.015625f ? 0.015625f : v > 448.0f ? 448.0f : v;
    }
    default:
        return qck_nv_fast_sf_value(vecmax, g);
    }
}

QCK_HD float qck_nv_output_scale(const qc_recipe_policy &p, float vecmax, float sfdec, float g)
{
    int zero = qck_nv_zero(p, vecmax, sfdec);
    switch (p.nv_order) {
    case QC_NVFP4_TORCHAO: /* nvfp4.c: torch's NaN bits (the GPU's own NaN gives the same code) */
        return qck_div(qck_div(1.0f, g), qck_isnan(sfdec) ? qck_float(QC_TORCH_E4M3_NAN) : sfdec);
    case QC_NVFP4_TE: {
        if (zero)
            return 0.0f;
        float o = qck_div(1.0f, qck_mul(sfdec, qck_div(1.0f, g))), flt_max = qck_float(QCK_FLT_MAX_BITS);
        return o > flt_max ? flt_max : o;
    }
    default:
        return qck_nv_fast_output_scale(zero, sfdec, qck_rcp_approx(g));
    }
}

/* An NVFP4 block's element op: x * outputScale (torchao: outputScale * x, nvfp4.c). */
QCK_HD qck_elem_op qck_nv_op(const qc_recipe_policy &p, float vecmax, float sfdec, float g)
{
    qck_elem_op o = qck_op_mul(qck_nv_output_scale(p, vecmax, sfdec, g), 0);
    o.mult_first = p.nv_order == QC_NVFP4_TORCHAO;
    return o;
}

/* The e4m3 block-scale byte: the PTX instruction when the sf cast is the `ptx` policy. */
QCK_HD uint32_t qck_encode_e4m3_sf(float v, const qc_cast_policy &p)
{
#if defined(QCK_PTX)
    if (qck_hw_fp8_ok(QC_E4M3FN, p))
        return qck_cvt_e4m3x2(v, 0.0f) & 0xFFu;
#endif
    return qck_encode_minifloat(qck_format(QC_E4M3FN), v, p);
}

/* The same where the caller knows the sf cast is that policy (qck_hw_fp8_ok: the FAST step's lean
 * condition), so the instruction needs no check of it. */
QCK_HD uint32_t qck_encode_e4m3_satfinite(float v, const qc_cast_policy &p)
{
#if defined(QCK_PTX)
    (void)p;
    return qck_cvt_e4m3x2(v, 0.0f) & 0xFFu;
#else
    return qck_encode_minifloat(qck_format(QC_E4M3FN), v, p);
#endif
}

/* A power-of-two scale's e8m0 byte for the packed_ue8m0 layout, or -1 (recipes/scale_layout.c's
 * rule: 2^-127 is byte 0; zero, Inf, NaN and non-powers of two have none). */
QCK_HD int qck_pow2_byte(float s)
{
    uint32_t b = qck_bits(s);
    if (b == 0x00400000u)
        return 0;
    if (b == QCK_INF) /* +Inf: byte 255 (reference/recipes/scale_layout.c pow2_byte) */
        return 0xFF;
    if ((b & 0x807FFFFFu) != 0 || (b >> 23) == 0)
        return -1;
    return (int)(b >> 23);
}

/* Does any step of this recipe policy use rcp.approx.ftz (which the HIP build cannot do exactly)? */
QCK_HD int qck_policy_needs_rcp(qc_recipe r, const qc_recipe_policy &p)
{
    if (p.div_mode != QC_DIV_IEEE)
        return 1;
    if (r >= QC_RECIPE_MXFP8 && r <= QC_RECIPE_MXFP4 && p.mx_op == QC_MX_MUL_RCP)
        return 1;
    return r == QC_RECIPE_NVFP4 && p.nv_order == QC_NVFP4_FAST;
}

/* The unsigned arithmetic of a layout offset of indices I: 64 bits (a very wide grid overflows 32),
 * 32 for the group kernel's uint32_t indices, whose launch holds every offset below 2^32
 * (qck_group_kernel_fits): one IMAD a product where 64 bits take three. */
template <typename I> struct qck_offset_uint { typedef uint64_t type; };
template <> struct qck_offset_uint<uint32_t> { typedef uint32_t type; };

/* A byte-scale grid's layout map, (r, c) -> the byte of scale (r, c) >= 0, in one branch-free form
 * that the swizzles and the row-major grid share, so that a kernel's scale store takes no branch on
 * the layout (the nvfp4 group kernel's per-group step):
 *   (r >> rs) * rstride + (c >> 2) * atom + (r & m1) * mul1 + (r >> 5 & m2) * 4 + (c & 3).
 * Block-scale swizzles (docs/spec/layouts.md §1), Cp = pad(C, 4) columns (Cp / 4 atoms of 4 columns
 * a row band): tile 128 (sf128x4, block_scale_interleave) is (r >> 7) * 128 Cp + (c >> 2) * 512 +
 * (r & 31) * 16 + (r >> 5 & 3) * 4 + (c & 3); tile 8 (sf8x4) is (r >> 3) * 8 Cp + (c >> 2) * 32 +
 * (r & 7) * 4 + (c & 3). Row-major with C columns: r * C + (c >> 2) * 4 + (c & 3). */
typedef struct qck_u8_map {
    uint32_t rs, m1, mul1, m2, atom;
    int64_t rstride;
} qck_u8_map;

QCK_HD qck_u8_map qck_sf_map(int64_t Cp, int tile)
{
    const qck_u8_map sf8 = {3, 7, 4, 0, 32, Cp * 8}, sf128 = {7, 31, 16, 3, 512, Cp * 128};
    return tile == 8 ? sf8 : sf128;
}

QCK_HD qck_u8_map qck_rowmajor_map(int64_t C)
{
    const qck_u8_map m = {0, 0, 0, 0, 4, C};
    return m;
}

/* Unsigned shifts and masks; I: int64_t, or the group kernel's uint32_t. */
template <typename I> QCK_HD int64_t qck_u8_offset(const qck_u8_map &m, I r, I c)
{
    typedef typename qck_offset_uint<I>::type U;
    const U R = (U)r, C = (U)c;
    return (int64_t)((R >> m.rs) * (U)m.rstride + (C >> 2) * m.atom + (R & m.m1) * m.mul1 + (R >> 5 & m.m2) * 4 +
                     (C & 3));
}

template <typename I> QCK_HD int64_t qck_sf_offset(I r, I c, int64_t Cp, int tile)
{
    return qck_u8_offset(qck_sf_map(Cp, tile), r, c);
}

QCK_HD void qck_sf_coords(int64_t o, int64_t Cp, int tile, int64_t *r, int64_t *c)
{
    int64_t atom = tile == 8 ? 32 : 512, t = o / atom, w = o % atom, ct = Cp / 4;
    if (tile == 8) {
        *r = (t / ct) * 8 + w / 4;
    } else {
        *r = (t / ct) * 128 + ((w / 4) % 4) * 32 + w / 16;
    }
    *c = (t % ct) * 4 + w % 4;
}

/* token_group scale layouts (formats.md §6.2): the byte offset of scale (i, j) of an [m, g] grid. */
QCK_HD int64_t qck_tg_offset(qc_scale_layout l, int64_t m, int64_t g, int64_t i, int64_t j)
{
    int64_t m4 = (m + 3) / 4 * 4;
    switch (l) {
    case QC_SL_COL:          return 4 * (j * m + i);
    case QC_SL_COL_TMA:      return 4 * (j * m4 + i);
    case QC_SL_PACKED_UE8M0: return 4 * ((j / 4) * m4 + i) + j % 4;
    default:                 return 4 * (i * g + j);
    }
}

#endif
