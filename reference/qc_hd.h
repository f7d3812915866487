/* qc_hd.h: the one macro that lets the reference codecs compile as host C11 and as CUDA/HIP
 * device code from the same source, plus the fp32 bit views every codec needs. */
#ifndef QC_HD_H
#define QC_HD_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define QC_HD __host__ __device__
#else
#define QC_HD
#endif

/* Inlined into each caller even across the per-format dispatch (constants fold). */
#define QC_INLINE static inline __attribute__((always_inline))

/* memcpy is the bit cast that is defined in C, C++ and CUDA/HIP device code alike. */
static inline QC_HD uint32_t qc_f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline QC_HD float qc_f32_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

#define QC_F32_SIGN 0x80000000u
#define QC_F32_ABS 0x7FFFFFFFu
#define QC_F32_INF 0x7F800000u
#define QC_F32_QNAN 0x7FC00000u

static inline QC_HD int qc_bits_is_nan(uint32_t u) { return (u & QC_F32_ABS) > QC_F32_INF; }
static inline QC_HD int qc_bits_is_inf(uint32_t u) { return (u & QC_F32_ABS) == QC_F32_INF; }

#endif
