/* rcp_approx_core.h: the emulation of the GPU's approximate reciprocal `rcp.approx.ftz.f32`
 * (SASS MUFU.RCP), as one inline function shared by the host reference (rcp_approx.c) and the
 * device proof program (rcp_probe.cu), so that the code proven on the GPU is the code the
 * reference runs.
 *
 * Facts (docs/spec/formats.md §13, measured on an H200 and re-proven over all 2^32 inputs by
 * rcp_probe.cu, see docs/notes/rcp_approx.md):
 * - for a normal x the result depends only on the mantissa: rcp(x * 2^k) = rcp(x) * 2^-k exactly
 *   while the result is normal; a result below the normal range is flushed to +-0;
 * - over the 2^23 mantissas of [1, 2) the result is the correctly rounded 1/x plus a delta of
 *   -1, 0 or +1 ulp; the delta is the table (rcp_table.h), 2 bits per mantissa;
 * - rcp(+-0) = +-Inf; subnormal inputs are flushed to +-0 first (.ftz); rcp(+-Inf) = +-0;
 *   rcp(NaN) = 0x7FFFFFFF.
 * The correctly rounded reciprocal is computed in integers so that it does not depend on the
 * compiler's division mode (host or device, fast-math or not). */
#ifndef QCREF_RCP_APPROX_CORE_H
#define QCREF_RCP_APPROX_CORE_H

#include <stdint.h>

#include "../qc_hd.h"

#define QC_RCP_MANTISSAS (1u << 23)
#define QC_RCP_TABLE_BYTES (QC_RCP_MANTISSAS / 4) /* 2 bits per mantissa */

/* The bits of the correctly rounded (RNE) 1/(1 + m/2^23), a value in (0.5, 1]. */
static inline QC_HD uint32_t qcref_rcp_rn_mantissa(uint32_t m)
{
    if (m == 0)
        return 0x3F800000u; /* 1/1 = 1 */
    /* 1/(1.m) = q * 2^-24 with q in [2^23, 2^24): q = RNE(2^47 / (2^23 + m)). No exact tie
     * exists (it would need 2^48 / (2^23 + m) to be an odd integer). */
    uint64_t den = (1ull << 23) + m;
    uint64_t q = (1ull << 47) / den, rem = (1ull << 47) % den;
    q += 2 * rem > den;
    return 0x3F000000u + (uint32_t)(q - (1ull << 23));
}

/* The table entry of mantissa m: code 0, 1, 2 = delta -1, 0, +1 ulp (rcp_table.h). */
static inline QC_HD int qcref_rcp_delta(const uint8_t *table, uint32_t m)
{
    return (int)((table[m >> 2] >> (2 * (m & 3u))) & 3u) - 1;
}

static inline QC_HD float qcref_rcp_approx_ftz_with(float x, const uint8_t *table)
{
    uint32_t b = qc_f32_bits(x), sign = b & QC_F32_SIGN, a = b & QC_F32_ABS;
    if (a > QC_F32_INF)
        return qc_f32_from_bits(0x7FFFFFFFu);
    if (a == QC_F32_INF)
        return qc_f32_from_bits(sign); /* 1/+-Inf = +-0 */
    if (a < 0x00800000u)
        return qc_f32_from_bits(sign | QC_F32_INF); /* zero, or a subnormal flushed to zero */
    uint32_t m = a & 0x7FFFFFu;
    int e = (int)(a >> 23) - 127;
    uint32_t r = (uint32_t)((int64_t)qcref_rcp_rn_mantissa(m) + qcref_rcp_delta(table, m));
    int re = (int)(r >> 23) - e; /* the result's biased exponent after scaling by 2^-e */
    if (re <= 0)
        return qc_f32_from_bits(sign); /* below the normal range: flushed */
    return qc_f32_from_bits(sign | ((uint32_t)re << 23) | (r & 0x7FFFFFu));
}

#endif
