/* example_plugin.c: the smallest outside backend, as another team would write one: a qcheck
 * plugin (include/qcheck/qcheck.h) with one kernel, fp32 -> e4m3fn the way the GPU's
 * cvt.rn.satfinite.e4m3x2.f32 does it (round to nearest even, +-Inf and overflow to +-448, every
 * NaN to 0x7F; docs/spec/formats.md §1.3 and §13), written from the format's definition without
 * any qcheck code. Everything else it declines, so those items are SKIPPED, never PASS.
 *
 *   cc -shared -fPIC -I include -I reference example_plugin.c -o libqcheck_example.so
 *   qcheck run --case cast_fp8 --backend plugin:./libqcheck_example.so
 *
 * EXAMPLE_ABI_VERSION builds it for another ABI version, to see qcheck refuse it; EXAMPLE_TIES_AWAY
 * plants a real bug class (ties rounded away from zero), to see the gate catch it (the tests do). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "qcheck/qcheck.h"

/* e4m3fn: 1 sign, 4 exponent bits (bias 7), 3 mantissa bits; max 448 = 0x7E, NaN 0x7F. */
static uint8_t e4m3fn_satfinite(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    uint8_t sign = (uint8_t)(u >> 24 & 0x80);
    uint32_t mag = u & 0x7FFFFFFFu;
    if (mag > 0x7F800000u)
        return 0x7F;
    if (mag >= 0x43E80000u) /* |x| >= 464, the midpoint of 448 and 480: saturate (Inf too) */
        return sign | 0x7E;
    int e = (int)(mag >> 23) - 127;
    if (e < -6) { /* subnormal: units of 2^-9, round half to even */
        double v = (double)(x < 0 ? -x : x) * 512.0;
        uint32_t q = (uint32_t)v;
        double rem = v - q;
        q += rem > 0.5 || (rem == 0.5 && (q & 1));
        return sign | (uint8_t)q; /* q == 8 is 2^-6, the smallest normal: the same bits */
    }
    uint32_t m = mag & 0x7FFFFFu, keep = m >> 20, rest = m & 0xFFFFFu;
    uint32_t code = (uint32_t)(e + 7) << 3 | keep;
#ifdef EXAMPLE_TIES_AWAY
    code += rest >= 0x80000u;
#else
    code += rest > 0x80000u || (rest == 0x80000u && (keep & 1)); /* a carry moves to the next binade */
#endif
    return sign | (uint8_t)code;
}

static qcheck_status cast(const qcheck_cast_args *a, qcheck_ctx *ctx)
{
    const qc_cast_policy *p = &a->policy;
    if (a->to != QC_E4M3FN || p->overflow != QC_OVERFLOW_SATFINITE || p->nan_sign != QC_NAN_CANONICAL)
        return qcheck_say(ctx, QCHECK_DECLINED, "example plugin: only fp32 -> e4m3fn with satfinite overflow and "
                          "the canonical NaN (profile ptx)");
    const float *x = a->x.data;
    uint8_t *y = a->y.data;
    for (int64_t i = 0; i < qcheck_numel(&a->x); i++)
        y[i] = e4m3fn_satfinite(x[i]);
    return QCHECK_OK;
}

#ifndef EXAMPLE_ABI_VERSION
#define EXAMPLE_ABI_VERSION QCHECK_ABI_VERSION
#endif

static const qcheck_backend example = {
    .abi_version = EXAMPLE_ABI_VERSION,
    .sizes = QCHECK_SIZES,
    .name = "example-e4m3",
    .doc = "examples/plugin: fp32 -> e4m3fn as cvt.rn.satfinite, in plain C; declines everything else",
    .cast = cast,
};

const qcheck_backend *const *qcheck_plugin_backends_v1(int *n);
const qcheck_backend *const *qcheck_plugin_backends_v1(int *n)
{
    static const qcheck_backend *const all[] = {&example};
    *n = 1;
    return all;
}
