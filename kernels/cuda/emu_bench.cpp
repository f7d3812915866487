/* emu_bench.cpp: bench_cuda_quant.cu against the CPU emulation (emu.h), small shapes: its closing
 * check (the bf16-input lane mapping writes the bytes of the fp32 path) without a GPU. Timings are
 * meaningless here. */
#include "arith/arith.h"
#define QCK_HOST_RCP qcref_rcp_approx_ftz
#include "kernels.cu"
#include "bench_cuda_quant.cu"
