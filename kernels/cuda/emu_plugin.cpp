/* emu_plugin.cpp: the cuda backend's kernels and runtime compiled as host C++ against the CPU
 * emulation (emu.h), for the cuda-emu plugin: `qcheck run --backend plugin:libqcheck_cuda_emu.so`
 * runs the real kernel sources through the harness on a machine without a GPU. rcp.approx.ftz.f32
 * is the reference's emulation of it (proven on all 2^32 inputs on an H200, docs/notes/rcp_approx.md),
 * wgmma the tensor-core model (reference/arith/mma_sm90.h, proven on 1.3e9 dot products; wgmma.cuh). */
#include "arith/arith.h"
#define QCK_HOST_RCP qcref_rcp_approx_ftz
#include "kernels.cu"
#include "moe_kernels.cu"
#include "layout_kernels.cu"
#include "gemm_int8.cu"
#include "gemm_simt.cu"
#include "gemm_wgmma.cu"
#include "runtime.cu"
