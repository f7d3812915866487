/* persistent_plugin.c: a plugin with QCHECK_BACKEND_PERSISTENT, to test the runner's persistent
 * workers (tests/test_plugin.py): it casts fp32 -> e4m3fn like examples/plugin, and
 *   - declines every other cast, naming its pid and how many calls that process has served (one
 *     worker serves many items);
 *   - crashes (SIGSEGV) on a tensor of 7 elements, and never returns on one of 1 element, so that a
 *     crash and a timeout cost their own item only and the next item gets a fresh worker. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "qcheck/qcheck.h"

static uint8_t e4m3fn_satfinite(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    uint8_t sign = (uint8_t)(u >> 24 & 0x80);
    uint32_t mag = u & 0x7FFFFFFFu;
    if (mag > 0x7F800000u)
        return 0x7F;
    if (mag >= 0x43E80000u)
        return sign | 0x7E;
    int e = (int)(mag >> 23) - 127;
    if (e < -6) {
        double v = (double)(x < 0 ? -x : x) * 512.0;
        uint32_t q = (uint32_t)v;
        double rem = v - q;
        q += rem > 0.5 || (rem == 0.5 && (q & 1));
        return sign | (uint8_t)q;
    }
    uint32_t m = mag & 0x7FFFFFu, keep = m >> 20, rest = m & 0xFFFFFu;
    uint32_t code = (uint32_t)(e + 7) << 3 | keep;
    code += rest > 0x80000u || (rest == 0x80000u && (keep & 1));
    return sign | (uint8_t)code;
}

static qcheck_status cast(const qcheck_cast_args *a, qcheck_ctx *ctx)
{
    static int calls;
    calls++;
    if (a->to != QC_E4M3FN || a->policy.overflow != QC_OVERFLOW_SATFINITE || a->policy.nan_sign != QC_NAN_CANONICAL) {
        snprintf(ctx->msg, ctx->msglen, "persistent test plugin: pid %d call %d device %d", (int)getpid(), calls,
                 ctx->device);
        return QCHECK_DECLINED;
    }
    int64_t n = qcheck_numel(&a->x);
    if (n == 7)
        raise(SIGSEGV);
    while (n == 1)
        pause();
    for (int64_t i = 0; i < n; i++)
        ((uint8_t *)a->y.data)[i] = e4m3fn_satfinite(((const float *)a->x.data)[i]);
    return QCHECK_OK;
}

static const qcheck_backend persistent = {QCHECK_BACKEND_HEADER, .name = "persistent-test",
                                          .flags = QCHECK_BACKEND_PERSISTENT, .cast = cast};

const qcheck_backend *const *qcheck_plugin_backends_v1(int *n);
const qcheck_backend *const *qcheck_plugin_backends_v1(int *n)
{
    static const qcheck_backend *const all[] = {&persistent};
    *n = 1;
    return all;
}
