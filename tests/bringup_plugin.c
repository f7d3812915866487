/* bringup_plugin.c: plugins for `qcheck bringup`'s own test (tests/test_plugin.py): "bringup-test"
 * reports a check it ran (its own e4m3fn satfinite cast of all 2^32 fp32 patterns against a
 * second, table-driven implementation: they agree) and a planted difference with three examples;
 * "bringup-crash" dies in the middle, which must cost its report only. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "qcheck/qcheck.h"

/* fp32 -> e4m3fn as cvt.rn.satfinite, by the bits. */
static uint8_t by_bits(uint32_t u)
{
    uint8_t sign = (uint8_t)(u >> 24 & 0x80);
    uint32_t mag = u & 0x7FFFFFFFu;
    if (mag > 0x7F800000u)
        return 0x7F;
    if (mag >= 0x43E80000u)
        return sign | 0x7E;
    if (mag < 0x3C800000u) { /* below 2^-6: the subnormal grid 2^-9, ties to even */
        uint32_t e = mag >> 23, m = (mag & 0x7FFFFFu) | 0x800000u;
        int shift = 141 - (int)e; /* value = m * 2^(e-150), in units of 2^-9: m >> (141 - e) */
        if (e == 0 || shift > 31)
            return sign;
        uint32_t q = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        q += rest > half || (rest == half && (q & 1));
        return sign | (uint8_t)q;
    }
    uint32_t keep = (mag >> 20) & 7, rest = mag & 0xFFFFFu;
    uint32_t code = (((mag >> 23) - 120) << 3 | keep) + (rest > 0x80000u || (rest == 0x80000u && (keep & 1)));
    return sign | (uint8_t)code;
}

/* The same by searching the 127 positive codes' values (a slow, different formulation). */
static uint8_t by_table(uint32_t u)
{
    static float value[127];
    static int made;
    if (!made) {
        for (int c = 0; c < 127; c++) {
            int e = c >> 3, m = c & 7;
            value[c] = e ? (float)(1 << e) * (1.0f + m / 8.0f) / 128.0f : m / 512.0f;
        }
        made = 1;
    }
    float x;
    memcpy(&x, &u, 4);
    if (x != x)
        return 0x7F;
    uint8_t sign = (uint8_t)(u >> 24 & 0x80);
    float a = x < 0 ? -x : x;
    if (a >= 464.0f)
        return sign | 0x7E;
    int lo = 0;
    while (lo < 126 && value[lo + 1] <= a)
        lo++;
    if (lo == 126 || a == value[lo])
        return sign | (uint8_t)lo;
    float mid = (value[lo] + value[lo + 1]) / 2; /* exact: the codes' values have few bits */
    int up = a > mid || (a == mid && (lo & 1));
    return sign | (uint8_t)(lo + up);
}

static qcheck_status bringup(qcheck_bringup_args *a, qcheck_ctx *ctx)
{
    (void)ctx;
    snprintf(a->device, sizeof a->device, "the test's CPU");
    snprintf(a->driver, sizeof a->driver, "none");
    snprintf(a->toolkit, sizeof a->toolkit, "cc");
    qcheck_finding *f = &a->findings[a->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->what, sizeof f->what, "e4m3fn satfinite by the bits");
    snprintf(f->against, sizeof f->against, "the same by a table search");
    for (uint64_t u = 0; u < (1ull << 32); u += 4093) { /* a sample: the table search is slow */
        f->inputs++;
        if (by_bits((uint32_t)u) != by_table((uint32_t)u) && f->nexamples < 4) {
            f->example_input[f->nexamples] = (uint32_t)u;
            f->example_got[f->nexamples] = by_bits((uint32_t)u);
            f->example_expected[f->nexamples++] = by_table((uint32_t)u);
        }
        f->mismatches += by_bits((uint32_t)u) != by_table((uint32_t)u);
    }
    f = &a->findings[a->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->what, sizeof f->what, "planted.difference");
    snprintf(f->against, sizeof f->against, "the test's expectation");
    f->inputs = 1000, f->mismatches = 3, f->nexamples = 3;
    for (int i = 0; i < 3; i++)
        f->example_input[i] = 0x40000000u + (uint32_t)i, f->example_got[i] = 1, f->example_expected[i] = 2;
    return QCHECK_OK;
}

static qcheck_status crash(qcheck_bringup_args *a, qcheck_ctx *ctx)
{
    (void)a, (void)ctx;
    raise(SIGSEGV);
    return QCHECK_OK;
}

static const qcheck_backend ok = {QCHECK_BACKEND_HEADER, .name = "bringup-test", .bringup = bringup};
static const qcheck_backend dies = {QCHECK_BACKEND_HEADER, .name = "bringup-crash", .bringup = crash};

const qcheck_backend *const *qcheck_plugin_backends_v1(int *n);
const qcheck_backend *const *qcheck_plugin_backends_v1(int *n)
{
    static const qcheck_backend *const all[] = {&ok, &dies};
    *n = 2;
    return all;
}
