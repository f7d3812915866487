/* amx_moe.h: the cpu-amx fused MoE pieces (amx_moe.c), sgl-kernel fused_experts_cpu with fp8
 * w8a16 (moe_fp8.cpp fused_experts_fp8_kernel_impl, moe.h stubs), on the GEMM kernels of
 * amx_gemm.h. All arrays are bf16 codes; callers must have had qc_cpu_amx_unavailable() return
 * NULL first. The adapter (cpu_backend.c amx_moe_cpu) routes, packs each expert once per call and
 * gathers its rows. */
#ifndef QC_AMX_MOE_H
#define QC_AMX_MOE_H

#include <stdint.h>

#include "amx_gemm.h"

/* One expert: a [cnt, hidden] (its gathered token rows), w13 packed [2 inter, hidden], w2 packed
 * [hidden, inter] -> ic0 [cnt, 2 inter] = bf16(a w13^T) (GEMM1), ic1 [cnt, inter] =
 * qc_amx_silu_and_mul of each ic0 row, c [cnt, hidden] = bf16(ic1 w2^T) (GEMM2). 0, or 2 when
 * out of memory. */
int qc_amx_moe_expert(const uint16_t *a, int64_t cnt, int64_t hidden, int64_t inter, const qc_amx_weights *w13,
                      const qc_amx_weights *w2, uint16_t *ic0, uint16_t *ic1, uint16_t *c);

/* silu_and_mul_stub: out[i] = bf16(fl(fl(g / fl(1 + exp_u20(-g))) * u)), g = in[i], u = in[inter + i]
 * (AVX-512, 16 lanes, masked tail; VCVTNEPS2BF16). */
void qc_amx_silu_and_mul(const uint16_t *in, int64_t inter, uint16_t *out);

/* copy_mul_stub: out[i] = bf16(fl32(c[i] * w)). */
void qc_amx_copy_mul(const uint16_t *c, float w, int64_t n, uint16_t *out);

/* sum_stub: out[i] = bf16(fp32 sum over t = 0..topk-1 of in[t * n + i], from 0); topk 1: a copy. */
void qc_amx_sum(const uint16_t *in, int64_t topk, int64_t n, uint16_t *out);

#endif
