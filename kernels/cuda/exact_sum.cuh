/* exact_sum.cuh: a sum of products of doubles held exactly, then rounded once to fp32 (RNE), the
 * arithmetic of the MoE's model exact on the device (harness/ops/op_moe.c: h is the exact GEMM1 +
 * b13 rounded once). The host reference gets the same value another way (reference/exact: the fp64
 * GEMM with its error bound, MPFR where the bound straddles an fp32 rounding boundary);
 * cuda_numerics_check compares the two on midpoints, cancellations, subnormals and overflows.
 *
 * The accumulator is fixed point: digit i weighs 2^(QCK_XS_LOW + 32 i) and holds a signed 64-bit
 * count of such units, so an addition never carries (a double spreads over three digits of at most
 * 2^32 - 1 each) and 2^31 additions cannot overflow a digit; the carries are resolved once, when
 * rounding. A product a b is added as the two doubles of its error-free form p + e (p = fl(a b),
 * e = fma(a, b, -p), exact when e does not underflow). The range covers the dequantized operands
 * of every recipe the MoE runs: an fp32 value fl32(code scale) (times an fp32 global scale for
 * NVFP4, whose fl32(e2m1 e4m3) has no set bit below 2^-10) has no set bit below 2^-159 and is
 * below 2^141, so a product's bits lie in [2^-318, 2^282) and a sum of 2^31 of them below 2^313. A value
 * with bits outside [2^-352, 2^308) marks the sum out of range (rounded to NaN), never silently
 * truncated; the top digit stays free for the carries and the sign. */
#ifndef QCK_EXACT_SUM_CUH
#define QCK_EXACT_SUM_CUH

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu.h"

#define QCK_XS_DIGITS 22
#define QCK_XS_LOW (-352)

typedef struct qck_exact_sum {
    int64_t d[QCK_XS_DIGITS];
    int nan, pinf, ninf, out_of_range;
} qck_exact_sum;

QCK_HD void qck_xs_init(qck_exact_sum *s) { memset(s, 0, sizeof *s); }

QCK_HD uint64_t qck_xs_bits64(double v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}

/* The trailing zero bits of m != 0. */
QCK_HD int qck_xs_ctz64(uint64_t m)
{
#if defined(QCK_DEVICE_PASS)
    return __ffsll((long long)m) - 1;
#else
    return __builtin_ctzll(m);
#endif
}

/* s += v, exactly. */
QCK_HD void qck_xs_add(qck_exact_sum *s, double v)
{
    uint64_t b = qck_xs_bits64(v), m = b & 0xFFFFFFFFFFFFFull;
    int e = (int)((b >> 52) & 0x7FF), neg = (int)(b >> 63);
    if (e == 0x7FF) {
        if (m)
            s->nan = 1;
        else if (neg)
            s->ninf = 1;
        else
            s->pinf = 1;
        return;
    }
    if (e == 0 && m == 0)
        return;
    if (e)
        m |= 1ull << 52;
    else
        e = 1; /* subnormal: m 2^(1 - 1075) */
    int z = qck_xs_ctz64(m); /* placed by its lowest set bit, not by its exponent */
    m >>= z;
    int q = e - 1075 + z - QCK_XS_LOW, i = q >> 5, sh = q & 31;
    if (q < 0 || i + 2 >= QCK_XS_DIGITS - 1) {
        s->out_of_range = 1;
        return;
    }
    uint64_t lo = m << sh, hi = sh ? m >> (64 - sh) : 0; /* m 2^sh = hi 2^64 + lo */
    int64_t c0 = (int64_t)(lo & 0xFFFFFFFFu), c1 = (int64_t)(lo >> 32), c2 = (int64_t)hi;
    if (neg)
        c0 = -c0, c1 = -c1, c2 = -c2;
    s->d[i] += c0, s->d[i + 1] += c1, s->d[i + 2] += c2;
}

/* s += a b, exactly (a NaN or infinite operand counts as its IEEE product). */
QCK_HD void qck_xs_add_product(qck_exact_sum *s, double a, double b)
{
    double p = a * b;
    if (!isfinite(a) || !isfinite(b) || !isfinite(p)) {
        qck_xs_add(s, p != p ? NAN : p);
        return;
    }
    qck_xs_add(s, p);
    qck_xs_add(s, fma(a, b, -p)); /* the product's exact remainder */
}

/* Bit p (absolute: weight 2^p) of the magnitude held in normalised digits g. */
QCK_HD int qck_xs_bit(const uint32_t *g, int p)
{
    int q = p - QCK_XS_LOW;
    return q >= 0 && q < 32 * QCK_XS_DIGITS ? (int)((g[q >> 5] >> (q & 31)) & 1u) : 0;
}

/* 1 when any bit below weight 2^p is set. */
QCK_HD int qck_xs_any_below(const uint32_t *g, int p)
{
    int q = p - QCK_XS_LOW;
    for (int i = 0; i < QCK_XS_DIGITS && 32 * i < q; i++) {
        uint32_t m = 32 * (i + 1) <= q ? 0xFFFFFFFFu : (1u << (q - 32 * i)) - 1u;
        if (g[i] & m)
            return 1;
    }
    return 0;
}

/* The sum rounded once to fp32, ties to even; an exact zero is +0 (as an IEEE sum of terms that
 * cancel), a negative sum that rounds to zero is -0, beyond the range +-Inf; NaN when a term was
 * NaN, when both infinities were added, or when a term was out of the accumulator's range. */
QCK_HD float qck_xs_round_f32(const qck_exact_sum *s)
{
    if (s->nan || s->out_of_range || (s->pinf && s->ninf))
        return NAN;
    if (s->pinf || s->ninf)
        return s->pinf ? INFINITY : -INFINITY;
    int64_t d[QCK_XS_DIGITS];
    for (int i = 0; i < QCK_XS_DIGITS; i++)
        d[i] = s->d[i];
    for (int i = 0; i + 1 < QCK_XS_DIGITS; i++) { /* carries: digits 0 .. n-2 into [0, 2^32) */
        int64_t c = d[i] >> 32;                      /* arithmetic shift: floor(d / 2^32) */
        d[i] -= c * 4294967296LL, d[i + 1] += c;
    }
    int neg = d[QCK_XS_DIGITS - 1] < 0;
    uint32_t g[QCK_XS_DIGITS];
    int64_t borrow = 0;
    for (int i = 0; i < QCK_XS_DIGITS; i++) { /* the magnitude: the two's complement negated */
        int64_t v = (neg ? -d[i] : d[i]) + borrow;
        borrow = v >> 32;
        g[i] = (uint32_t)(v & 0xFFFFFFFF);
    }
    int top = QCK_XS_DIGITS - 1;
    while (top >= 0 && !g[top])
        top--;
    if (top < 0)
        return 0.0f;
    int msb = 31;
    while (!((g[top] >> msb) & 1u))
        msb--;
    int B = QCK_XS_LOW + 32 * top + msb;  /* 2^B <= |sum| < 2^(B + 1) */
    int u = B - 23 > -149 ? B - 23 : -149; /* the weight of the last kept bit */
    uint32_t n = 0, r;
    for (int p = B; p >= u; p--)
        n = n << 1 | (uint32_t)qck_xs_bit(g, p);
    if (qck_xs_bit(g, u - 1) && ((n & 1u) || qck_xs_any_below(g, u - 1)))
        n++;
    if (B >= 128)
        r = 0x7F800000u;
    else {
        /* a normal: the exponent field B + 127 plus n's leading bit gives (B + 126) << 23 + n, and a
         * carry out of n moves into the exponent; a subnormal (B < -126): n itself */
        r = B < -126 ? n : (uint32_t)(B + 126) * 0x800000u + n;
        r = r > 0x7F800000u ? 0x7F800000u : r;
    }
    r |= neg ? 0x80000000u : 0u;
    float f;
    memcpy(&f, &r, 4);
    return f;
}

#endif
