/* libm_table.h: measures the host libm functions that the e8m0 rules depend on (formats.md §2.2
 * "log2-ceil": exp2f(ceilf(log2f(x))) in float, as sglang's Triton kernels, vLLM's C++ kernel and
 * modelopt compute it, and "log2-floor", microxcaling's floor(log2f(x)); the reference evaluates
 * both with glibc) into the qck_libm table of
 * numerics.cuh, so that the device returns what this process's log2f / exp2f return. Host only;
 * used by runtime.cu (once per worker) and numerics_check.cu. */
#ifndef QCK_LIBM_TABLE_H
#define QCK_LIBM_TABLE_H

#include <math.h>
#include <string.h>

#include "numerics.cuh"

/* The mantissa offsets of one binade (first fp32 bits `base`, `count` mantissas, exponent k)
 * whose log2f is exactly k: the last of them, after checking that they form a run from 0 and
 * that every other log2f of the scanned window lies in (k, k + 1]. Beyond the window the true
 * log2 exceeds k by more than two ulps of k, so a faithful log2f (glibc's: < 1 ulp) cannot
 * return k there. */
static inline int32_t qck_scan_binade(uint32_t base, uint32_t count, int k, int *ok)
{
    int q = 0;
    for (int a = k < 0 ? -k : k; a > 1; a >>= 1)
        q++;
    uint32_t window = (4u << q) + 64;
    window = window < count ? window : count;
    int32_t thr = -1;
    for (uint32_t m = 0; m < window; m++) {
        uint32_t bits = base + m;
        float x;
        memcpy(&x, &bits, 4);
        float r = log2f(x);
        if (r == (float)k) {
            if ((int32_t)m != thr + 1)
                *ok = 0; /* not a run from the binade's start */
            thr = (int32_t)m;
        } else if (!(r > (float)k && r <= (float)(k + 1))) {
            *ok = 0;
        }
    }
    return thr;
}

/* The first mantissa offset of the binade's closing run whose log2f is k + 1 (count when none),
 * after checking that they form a run to the binade's end and that every other log2f of the
 * scanned window lies in [k, k + 1). The window is wide enough for the same reason as above. */
static inline int32_t qck_scan_binade_top(uint32_t base, uint32_t count, int k, int *ok)
{
    int q = 0;
    for (int a = (k < 0 ? -k : k) + 1; a > 1; a >>= 1)
        q++;
    uint32_t window = (8u << q) + 64;
    window = window < count ? window : count;
    int32_t top = (int32_t)count;
    for (uint32_t m = count - window; m < count; m++) {
        uint32_t bits = base + m;
        float x;
        memcpy(&x, &bits, 4);
        float r = log2f(x);
        if (r == (float)(k + 1)) {
            if (top == (int32_t)count)
                top = (int32_t)m;
        } else if (top != (int32_t)count || !(r >= (float)k && r < (float)(k + 1))) {
            *ok = 0; /* a gap in the closing run, or a log2f outside the binade */
        }
    }
    return top;
}

static inline void qck_libm_build(qck_libm *L)
{
    int ok = 1;
    memset(L, 0, sizeof *L);
    for (uint32_t e = 1; e <= 254; e++)
        L->thr_norm[e] = qck_scan_binade(e << 23, 1u << 23, (int)e - 127, &ok);
    for (int j = 0; j < 23; j++)
        L->thr_sub[j] = qck_scan_binade(1u << j, 1u << j, j - 149, &ok);
    for (uint32_t e = 1; e <= 254; e++)
        L->top_norm[e] = qck_scan_binade_top(e << 23, 1u << 23, (int)e - 127, &ok);
    for (int j = 0; j < 23; j++)
        L->top_sub[j] = qck_scan_binade_top(1u << j, 1u << j, j - 149, &ok);
    for (int c = -151; c <= 128; c++) {
        float v = exp2f((float)c);
        memcpy(&L->exp2_bits[c + 151], &v, 4);
    }
    L->ok = ok;
}

#endif
