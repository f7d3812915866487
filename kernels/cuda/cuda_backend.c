/* cuda_backend.c: the registration table of the cuda backend (docs/STYLE.md, BLIS: kernels in
 * their own files, one table here), written against the public ABI (include/qcheck/qcheck.h) and
 * the reference's headers only. The slots live in runtime.cu (host orchestration: one CUDA
 * context, stream and set of buffers per worker process, kept across calls) and kernels.cu (the
 * kernels); docs/notes/cuda.md says what each op and profile does on the GPU and what is declined.
 *
 * QCHECK_BACKEND_PERSISTENT: the harness runs this backend's items in one long-lived worker per
 * device, forked before any CUDA call, so the context is created once per worker. unavailable()
 * is called in the harness's own process: it probes in a child of its own (runtime.cu). */
#include "cuda_ops.h"

/* emu_backend.c builds the same table as the CPU emulation's plugin, under another name. */
#ifndef QCK_BACKEND_NAME
#define QCK_BACKEND_NAME "cuda"
#define QCK_BACKEND_DOC_PREFIX ""
#endif

const qcheck_backend qc_backend_cuda = {
    QCHECK_BACKEND_HEADER,
    .name = QCK_BACKEND_NAME,
    .flags = QCHECK_BACKEND_PERSISTENT,
    .doc = QCK_BACKEND_DOC_PREFIX "CUDA kernels (kernels/cuda/, sm_90; HIP-portable source): cast to every format under every policy "
           "(cvt.rn.satfinite.e4m3x2/e5m2x2, cvt.rn.bf16x2/f16x2 where the policy is the instruction's), decode, "
           "fp4_pack, fnuz_normalize, layout (every map of docs/spec/layouts.md, forward: the block-scale swizzles and "
           "layout_kernels.cu's TRT-LLM, DeepGEMM, aiter, triton_kernels, W13, AMX and Marlin maps), quant + dequant "
           "of every recipe and profile (rcp.approx.ftz for fast math; scales row/col/col_tma/packed_ue8m0, the "
           "swizzles on byte scales, any other map as a device pass over the row-major scales, inverted for dequant "
           "where it only moves bytes); "
           "gemm (fp8_tensor, fp8_rowwise, fp8_block) on wgmma under models sm90-wgmma and sm90-wgmma-fast, "
           "bit for bit (sm_90); gemm models exact, grouped and sgl-cpu of the FP8, MX and NVFP4 kinds on CUDA cores "
           "(fp32 sums per K group in the order the bounds assume) and int8_rowwise (exact int32 dot, sgl-kernel's "
           "fp32 epilogue) on any device; moe (routing, quantization, expert GEMMs, activation and combine on the "
           "device) under model exact for every recipe (the expert GEMMs summed exactly on CUDA cores) and, for "
           "fp8_tensor and fp8_block, the tensor-core models (grouped wgmma GEMMs), every activation (exp, erf, "
           "tanh correctly rounded, as the reference's); declines inverse layouts",
    .unavailable = qck_unavailable,
    .cast = qck_cast,
    .decode = qck_decode,
    .fp4_pack = qck_fp4_pack,
    .quant = qck_quant,
    .dequant = qck_dequant,
    .layout = qck_layout,
    .fnuz_normalize = qck_fnuz_normalize,
    .gemm = qck_gemm,
    .moe = qck_moe,
#ifndef QCK_EMU /* bring-up characterises a real device: the emulation has none */
    .bringup = qc_cuda_bringup,
#endif
};
