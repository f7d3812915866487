/* emu_backend.c: the cuda backend's table for the CPU emulation plugin (emu.h), named cuda-emu. */
#define QCK_BACKEND_NAME "cuda-emu"
#define QCK_BACKEND_DOC_PREFIX "[CPU emulation of kernels/cuda, for tests: fibers for threads, software paths for the PTX cvt and rcp.approx] "
#include "cuda_backend.c"
