/* qc_checked.h: checked integer arithmetic and strict integer parsing, the one helper for every
 * size, index and sweep computation that comes from a file or a command line (issue 19: a shape
 * of 2^32 x 2^32, a range near 2^63 or "-1" read as 2^64 - 1 must be an error, never a wrapped
 * size). Header-only and freestanding (the C library only), so that reference/, core/, golden/
 * and harness/ share it without depending on each other's libraries (tests/check_layering.py
 * allows this one header everywhere). Host code only: device code never sizes buffers.
 *
 * The arithmetic is sticky: each call takes an int *overflow that it sets to 1 when the exact
 * result does not fit (and then returns 0), and leaves alone otherwise, so that a whole size
 * formula is written plainly and checked once at the end. */
#ifndef QC_CHECKED_H
#define QC_CHECKED_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The most elements one tensor, layout or quantization may have: 2^40 (a 4 TiB fp32 tensor, far
 * beyond any kernel's test shape, and small enough that elements x bytes-per-element x 8 bits
 * and every padded grid of it fit in int64_t). Sizes beyond it are rejected before anything is
 * allocated. */
#define QC_MAX_ELEMS ((int64_t)1 << 40)

static inline int64_t qc_ck_add(int64_t a, int64_t b, int *overflow)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        *overflow = 1;
        return 0;
    }
    return r;
}

static inline int64_t qc_ck_sub(int64_t a, int64_t b, int *overflow)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) {
        *overflow = 1;
        return 0;
    }
    return r;
}

static inline int64_t qc_ck_mul(int64_t a, int64_t b, int *overflow)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *overflow = 1;
        return 0;
    }
    return r;
}

/* a / b and a % b: b == 0 and INT64_MIN / -1 (whose quotient 2^63 does not fit, and which traps
 * on x86) are overflows. C99 truncates toward zero; so do these. */
static inline int64_t qc_ck_div(int64_t a, int64_t b, int *overflow)
{
    if (b == 0 || (a == INT64_MIN && b == -1)) {
        *overflow = 1;
        return 0;
    }
    return a / b;
}

static inline int64_t qc_ck_mod(int64_t a, int64_t b, int *overflow)
{
    if (b == 0) {
        *overflow = 1;
        return 0;
    }
    return b == -1 ? 0 : a % b; /* INT64_MIN % -1 is 0 mathematically, and traps on x86 */
}

/* ceil(a / b) and a rounded up to a multiple of b, for a >= 0 and b > 0 (else an overflow). */
static inline int64_t qc_ck_cdiv(int64_t a, int64_t b, int *overflow)
{
    if (a < 0 || b <= 0) {
        *overflow = 1;
        return 0;
    }
    return a / b + (a % b != 0);
}

static inline int64_t qc_ck_pad(int64_t a, int64_t b, int *overflow)
{
    return qc_ck_mul(qc_ck_cdiv(a, b, overflow), b, overflow);
}

/* Byte sizes: a * b in size_t. */
static inline size_t qc_ck_size_mul(size_t a, size_t b, int *overflow)
{
    size_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *overflow = 1;
        return 0;
    }
    return r;
}

/* A double as an int64_t when it is an integer that int64_t holds exactly (a cast of 1e300, NaN
 * or 2^63 is undefined behaviour in C). 0 and *out, or -1. */
static inline int qc_double_to_i64(double d, int64_t *out)
{
    /* -2^63 <= d < 2^63 (both bounds exact doubles); NaN fails both comparisons */
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != (double)(int64_t)d)
        return -1;
    *out = (int64_t)d;
    return 0;
}

/* Strict decimal parsing: the whole string is digits (with one leading '-' for the signed form),
 * no blanks, no '+', no base prefix, and the value lies in [lo, hi]. 0 and *out, or -1 (*out
 * untouched): "-1" is never 2^64 - 1, "4x" never 4, "99999999999999999999" never saturates. */
static inline int qc_parse_u64(const char *s, uint64_t hi, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno || v > hi)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static inline int qc_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (!s || !((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno || v < lo || v > hi)
        return -1;
    *out = (int64_t)v;
    return 0;
}

#endif
