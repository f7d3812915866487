/* cpu_avx512.h: the AVX-512 kernels of the cpu-avx512 backend (kernels/cpu/), shared by the
 * backend's op adapters (cpu_backend.c), tests/test_cpu_avx512.c and bench/bench_cpu.c.
 *
 * Every function here is compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq and must only be
 * called after qc_cpu_avx512_unavailable() returned NULL. Each kernel claims bit-exactness with the
 * reference under the policy it is given (the profile of the case): the harness checks it. */
#ifndef QC_CPU_AVX512_H
#define QC_CPU_AVX512_H

#include <stddef.h>
#include <stdint.h>

#include "formats/formats.h"
#include "recipes/recipes.h"

/* NULL when this CPU (cpuid) and this build can run the kernels, else the reason. */
const char *qc_cpu_avx512_unavailable(void);

/* cast_avx512.c. Which (format, policy) pairs are vectorized: every minifloat (e4m3fn, e4m3fnuz,
 * e5m2, e5m2fnuz, e2m1, e2m3, e3m2, bf16, f16) under every policy, and e8m0 under every rule
 * (log2-ceil = libm ceilf(log2f(.)) through a per-binade threshold table built from log2f). */
int qc_avx512_cast_supported(qc_format to, const qc_cast_policy *p);
/* x[n] -> codes: one byte per code for <= 8-bit formats, uint16 for bf16/f16. 0, or -1 when
 * (to, p) is not supported. */
int qc_avx512_cast(qc_format to, const qc_cast_policy *p, const float *x, size_t n, void *codes);
/* The same from bf16 bit patterns (an exact widening; the harness's cast op takes fp32). */
int qc_avx512_cast_bf16(qc_format to, const qc_cast_policy *p, const uint16_t *x, size_t n, void *codes);

/* quant_avx512.c. Vectorized recipes: tensor, token, token_group (every profile: amax, scale
 * formula, pow2 rounding, element op, clamp and cast are the policy's), block 128x128 (every
 * profile), mxfp8/mxfp6/mxfp4 (every profile, modelopt's log2-ceil included), nvfp4
 * flashinfer-fast, flashinfer-te, sgl-kernel and torchao. Fills out as qcref_quant does (canonical
 * layouts, one code per byte); static_scale (tensor recipes only) / gscale_encode as qcref_quant.
 * 0, or -1 when the recipe or policy is not supported. */
int qc_avx512_quant_supported(qc_recipe r, const qc_recipe_policy *p);
int qc_avx512_quant(qc_recipe r, const qc_recipe_policy *p, const float *x, size_t rows, size_t cols,
                    const float *static_scale, const float *gscale_encode, qc_quantized *out);

/* qc_avx512_quant writes its 64-byte runs of codes with non-temporal stores (around the cache,
 * where the output is 64-byte aligned) in calls whose fp32 input plus codes are at least this
 * many bytes; default the last-level cache size, SIZE_MAX never. Returns the previous threshold.
 * The bytes written are the same either way; the tests set 0 to check the streaming path. Not to
 * be called while quant calls run on other threads. */
size_t qc_avx512_set_stream_min(size_t bytes);

/* The 16-lane emulation of the GPU's rcp.approx.ftz.f32 the quant chains use (a gather from the
 * reference's measured table, reference/arith/rcp_approx_core.h), for the tests: y[i] = rcp(x[i]). */
void qc_avx512_rcp_approx(const float *x, size_t n, float *y);

/* swizzle_avx512.c: the 128x4 block-scale swizzle of 1-byte scales (docs/spec/layouts.md §1), source
 * [B, R, C] -> destination [B, Rp, Cp] in 512-byte atoms, padding zero. */
void qc_avx512_sf128x4(const uint8_t *src, int64_t B, int64_t R, int64_t C, uint8_t *dst);

/* transform_avx512.c: normalize_e4m3fn_to_e4m3fnuz in place (bit-exact with the reference). */
void qc_avx512_fnuz_normalize(uint8_t *w, size_t n, float *scales, size_t nscales);

#endif
