/* arith.h: the scale arithmetic of the recipes (docs/spec/formats.md §12 item 4): fl32 multiply and
 * divide, the GPU's approximate reciprocal, and the divisions real kernels actually execute.
 *
 * Every fl32() of the spec is one IEEE operation; libqcref is compiled with -ffp-contract=off so
 * that no multiply-add is fused. The GPU facts below were measured on an H200 with
 * reference/arith/rcp_probe.cu (docs/notes/rcp_approx.md has the commands and figures):
 * - `rcp.approx.ftz.f32` is emulated bit for bit on all 2^32 inputs (rcp_approx_core.h);
 * - `div.approx.ftz.f32` (what CUDA's `/` becomes under --use_fast_math) equals
 *   mul.rn.ftz(a, rcp.approx.ftz(b)) for every dividend and the divisors 448, 240, 224, 6, 2688,
 *   and on 4.19e9 pseudo-random pairs of normal a and normal |b| < 2^126;
 * - `div.full.f32` (what Triton 3.6 emits for fp32 `/`, formats.md §13) equals mul.rn(a, rcp.approx.ftz(b))
 *   on the same dividends, divisors and pairs (for |b| >= 2^126 div.full scales its operands: not
 *   modelled, QC_DIV_FULL is exact only below that);
 * - mul.rn.ftz equals qcref_fl32_mul_ftz on 2^32 products around 2^-126.
 * sgl-kernel builds its Hopper (sm90) library with -use_fast_math and its sm100 library without
 * (sgl-project/sglang:sgl-kernel/CMakeLists.txt, common_ops_sm90_build), so on an H200 its `/`
 * is QC_DIV_FAST. */
#ifndef QCREF_ARITH_H
#define QCREF_ARITH_H

#include "../qc_hd.h"
#include "rcp_approx_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How a kernel's `a / b` is evaluated. */
typedef enum qc_div_mode {
    QC_DIV_IEEE, /* div.rn.f32: C, torch on the CPU, CUDA without fast-math */
    QC_DIV_FAST, /* --use_fast_math: div.approx.ftz.f32 = mul.ftz(a, rcp.approx.ftz(b)) */
    QC_DIV_FULL  /* Triton fp32 `/`: div.full.f32 = mul.rn(a, rcp.approx.ftz(b)) */
} qc_div_mode;

/* A product of two NaNs is a's NaN, quieted: the x86 rule for the first source operand, made
 * explicit because C leaves the choice to the compiler (gcc and clang order the operands of the
 * same `x * scale` differently, and the NaN's sign is a byte of the output). */
static inline QC_HD float qcref_fl32_mul(float a, float b)
{
    return a != a ? qc_f32_from_bits(qc_f32_bits(a) | 0x00400000u) : a * b;
}
static inline QC_HD float qcref_fl32_div(float a, float b) { return a / b; }

/* .ftz: a subnormal operand or result becomes the zero of its sign. */
static inline QC_HD float qcref_ftz(float x)
{
    uint32_t b = qc_f32_bits(x);
    return (b & QC_F32_ABS) < 0x00800000u ? qc_f32_from_bits(b & QC_F32_SIGN) : x;
}

/* The product as mul.rn.ftz.f32 computes it: subnormal operands flushed, and the result flushed
 * to the zero of its sign when it is tiny AFTER rounding to 24 significant bits with an unbounded
 * exponent (IEEE 754's "tininess after rounding"). Flushing the product rounded on the subnormal
 * grid instead differs where that grid rounds up to 2^-126 and 24 bits do not: `qcheck bringup`
 * on the H200 found 0x01BFFFFF * fl32(1/6) = +0, not 2^-126 (2 of 2^32 inputs; div.approx.ftz.f32,
 * which is mul.ftz(a, rcp.approx(b)), the same; docs/spec/formats.md §13). The fp32 product is exact
 * in a double, and times 2^64 it rounds as a normal float does: the 24-bit rounding. */
static inline QC_HD float qcref_fl32_mul_ftz(float a, float b)
{
    float fa = qcref_ftz(a), fb = qcref_ftz(b);
    double p = (double)fa * (double)fb;
    if (p > -0x1p-126 && p < 0x1p-126) {
        float s24 = (float)(p * 0x1p64);
        if (s24 > -0x1p-62f && s24 < 0x1p-62f)
            return qc_f32_from_bits((qc_f32_bits(fa) ^ qc_f32_bits(fb)) & QC_F32_SIGN);
    }
    return qcref_fl32_mul(fa, fb);
}

/* a * b as a kernel built in the given mode executes it: --use_fast_math implies -ftz=true, so
 * every fp32 multiply of such a kernel (sgl-kernel's sm90 build) flushes subnormals. */
static inline QC_HD float qcref_mul(float a, float b, int fast)
{
    return fast ? qcref_fl32_mul_ftz(a, b) : qcref_fl32_mul(a, b);
}

/* The table-driven emulation with the table compiled into libqcref (host only). */
float qcref_rcp_approx_ftz(float x);
const uint8_t *qcref_rcp_table(void); /* QC_RCP_TABLE_BYTES bytes, layout of rcp_approx_core.h */

float qcref_div(float a, float b, qc_div_mode mode);
/* 1/b as the kernel computes it: IEEE, or rcp.approx.ftz for both approximate modes (CUDA
 * fast-math 1.0f/x is rcp.approx.ftz.f32; Triton 1.0/x is div.full, i.e. 1 * rcp). */
float qcref_recip(float b, qc_div_mode mode);

const char *qc_div_mode_name(int m);
int qc_div_mode_from_name(const char *s);

#ifdef __cplusplus
}
#endif

#endif
