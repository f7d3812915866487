/* cuda_ops.h: the ABI slots of the cuda backend (runtime.cu), with C linkage, for the registration
 * table in cuda_backend.c. */
#ifndef QCK_CUDA_OPS_H
#define QCK_CUDA_OPS_H

#include "qcheck/qcheck.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The bugs cuda_mutants.c plants in these kernels for the gate (0: none, the real backend): the
 * bug classes of the gate's mutants (harness/gate/README.md), here in the CUDA code paths. */
enum qck_plant_kind {
    QCK_PLANT_NONE = 0,
    QCK_PLANT_TIES_AWAY,       /* cast, quant: element ties away from zero where the policy says even */
    QCK_PLANT_SCALE_ULP,       /* gemm, moe: every weight scale read one ulp larger by the GEMM kernel */
    QCK_PLANT_OUT_TOWARD_ZERO, /* gemm: bf16 / f16 outputs rounded toward zero */
    QCK_PLANT_GATE_UP_SWAPPED, /* moe: W13's gate and up halves read in the other order */
    QCK_PLANT_COMBINE_REVERSED, /* moe: the slots summed in reverse order */
    QCK_PLANT_ACT_LIBM          /* moe: gelu / gelu_tanh through the platform's erff / tanhf */
};
extern int qck_plant; /* the current call's planted bug, set by a planted backend's slot */

/* NULL when a CUDA device can run this build's code, else why not. Probes in a forked child
 * (cudaGetDeviceCount there, never in the caller's process); the answer is cached. */
const char *qck_unavailable(void);

qcheck_status qck_cast(const qcheck_cast_args *a, qcheck_ctx *ctx);
qcheck_status qck_decode(const qcheck_decode_args *a, qcheck_ctx *ctx);
qcheck_status qck_fp4_pack(const qcheck_fp4_pack_args *a, qcheck_ctx *ctx);
qcheck_status qck_quant(const qcheck_quant_args *a, qcheck_ctx *ctx);
qcheck_status qck_dequant(const qcheck_dequant_args *a, qcheck_ctx *ctx);
qcheck_status qck_layout(const qcheck_layout_args *a, qcheck_ctx *ctx);
qcheck_status qck_fnuz_normalize(const qcheck_fnuz_normalize_args *a, qcheck_ctx *ctx);
/* bringup.cu: the device's conversion instructions and approximate arithmetic against the reference (qcheck bringup). */
qcheck_status qc_cuda_bringup(qcheck_bringup_args *a, qcheck_ctx *ctx);
/* bringup_mma.cu (sm_90a only): wgmma's FP8 dot products against reference/arith/mma_sm90.h. */
qcheck_status qc_cuda_bringup_mma(qcheck_bringup_args *a, qcheck_ctx *ctx, int sms);
/* gemm_wgmma.cu (sm_90a only): fp8_tensor / fp8_rowwise / fp8_block on wgmma, models sm90-wgmma[-fast]. */
qcheck_status qc_cuda_gemm(const qcheck_gemm_args *a, qcheck_ctx *ctx);
/* gemm_wgmma.cu: NULL when the device runs wgmma (sm_90), else why not, written to why. */
const char *qck_wgmma_unsupported(int device, char *why, size_t n);
/* gemm_wgmma.cu: NULL when the wgmma GEMM takes operands quantized by j (e4m3fn / e5m2 elements,
 * token groups of 128 with row scales, 128x128 blocks, canonical scale layouts), else why not. */
const char *qck_wgmma_spec_declines(const qcheck_quant_spec *j, char *why, size_t n);
/* gemm_simt.cu: the bound models (exact, grouped, sgl-cpu) of the FP8, MX and NVFP4 kinds on CUDA
 * cores, any device. */
qcheck_status qck_gemm_simt(const qcheck_gemm_args *a, qcheck_ctx *ctx);
/* runtime.cu: the gemm slot (int8_rowwise and the bound models on any device, sm90-wgmma[-fast] through qc_cuda_gemm). */
qcheck_status qck_gemm(const qcheck_gemm_args *a, qcheck_ctx *ctx);
/* runtime.cu: the fused MoE under models sm90-wgmma[-fast] (fp8_tensor, fp8_block). */
qcheck_status qck_moe(const qcheck_moe_args *a, qcheck_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif
