/* emu.h: a CPU emulation of the part of CUDA that kernels/cuda uses, for testing on a machine
 * without a GPU (the cuda-emu plugin, emu_plugin.cpp). Test-only: the real backend never sees it.
 *
 * gpu.h includes it when QCK_EMU is defined; the .cu sources then compile as plain C++ (g++).
 * Kernels run as written: every CUDA thread of a block is a fiber (ucontext) with its own stack,
 * blocks run one after another, __syncthreads() waits for the block's live threads and a warp
 * shuffle waits for the 32 lanes of its warp (a shuffle with an exited lane, or any other wait
 * that can never be met, aborts with a message: it would hang or be undefined on the GPU).
 * __shared__ variables are function statics, which is right because one block runs at a time.
 * The runtime calls are host memory operations (device pointers are host pointers); "launch"
 * runs the kernel to completion.
 *
 * What the emulation cannot show: the PTX instructions (cvt.rn.satfinite.*, rcp.approx.ftz.f32)
 * are not compiled (QCK_PTX is undefined), so the software path of the same policy and the
 * reference's rcp.approx emulation (QCK_HOST_RCP) run in their place; timing; memory ordering. */
#ifndef QCK_EMU_H
#define QCK_EMU_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <functional>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct qck_dim3 {
    unsigned x, y, z;
};

struct float4 {
    float x, y, z, w;
};
struct uint4 {
    unsigned x, y, z, w;
};
struct uint2 {
    unsigned x, y;
};
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return uint2{x, y}; }

extern qck_dim3 qck_emu_block_idx, qck_emu_block_dim, qck_emu_grid_dim;
unsigned qck_emu_tid(void);
#define threadIdx (qck_dim3{qck_emu_tid(), 0u, 0u})
#define blockIdx qck_emu_block_idx
#define blockDim qck_emu_block_dim
#define gridDim qck_emu_grid_dim

void __syncthreads(void);
uint32_t qck_emu_shfl_xor(uint32_t v, int mask, int width);
uint32_t qck_emu_shfl(uint32_t v, int src, int width);
#define QCK_SHFL_XOR(v, m, w) qck_emu_shfl_xor((v), (m), (w))
#define QCK_SHFL(v, s, w) qck_emu_shfl((v), (s), (w))
int qck_emu_any(int p);
#define QCK_ANY(p) qck_emu_any(p)
#define QCK_SYNCWARP() ((void)qck_emu_any(0)) /* a vote waits for the whole warp */

/* PRMT: byte n of the result is byte (bits 4n..4n+2 of s) of the eight bytes of y:x (CUDA's
 * __byte_perm, its default mode). */
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
    const unsigned long long b = (unsigned long long)y << 32 | x;
    unsigned r = 0;
    for (int n = 0; n < 4; n++)
        r |= (unsigned)(b >> (8 * ((s >> (4 * n)) & 7)) & 0xFF) << (8 * n);
    return r;
}

/* One block runs at a time on one OS thread: the atomics are plain read-modify-writes. */
inline unsigned atomicMax(unsigned *p, unsigned v)
{
    unsigned o = *p;
    *p = v > o ? v : o;
    return o;
}
inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v)
{
    unsigned long long o = *p;
    *p = v < o ? v : o;
    return o;
}

void qck_emu_launch(unsigned grid, unsigned block, const std::function<void()> &body);
#define QCK_LAUNCH(kernel, grid, block, stream, ...)                                                               \
    ((void)(stream), qck_emu_launch((unsigned)(grid), (unsigned)(block), [&]() { kernel(__VA_ARGS__); }))

/* ---- the runtime ---- */
typedef int gpuStream_t;
typedef int gpuError_t;
typedef int gpuEvent_t;
typedef struct gpuDeviceProp {
    char name[64];
    int major, minor, multiProcessorCount;
} gpuDeviceProp;
enum { gpuSuccess = 0, gpuErrorInvalidValue = 1, gpuErrorMemoryAllocation = 2 };
enum { gpuStreamNonBlocking = 1, gpuDevAttrMultiProcessorCount = 16 };
enum { gpuMemcpyHostToDevice = 1, gpuMemcpyDeviceToHost = 2, gpuMemcpyDeviceToDevice = 3 };

inline const char *gpuGetErrorName(gpuError_t e)
{
    return e == 0 ? "cudaSuccess" : e == 1 ? "cudaErrorInvalidValue" : "cudaErrorMemoryAllocation";
}
inline const char *gpuGetErrorString(gpuError_t e)
{
    return e == 0 ? "no error" : e == 1 ? "invalid argument" : "out of memory";
}
inline gpuError_t gpuGetLastError(void) { return gpuSuccess; }
inline gpuError_t gpuGetDeviceCount(int *n) { return *n = 1, gpuSuccess; }
inline gpuError_t gpuGetDeviceProperties(gpuDeviceProp *p, int)
{
    memset(p, 0, sizeof *p);
    strcpy(p->name, "CPU emulation (kernels/cuda/emu.h)");
    p->major = 9, p->minor = 0, p->multiProcessorCount = 1;
    return gpuSuccess;
}
inline gpuError_t gpuSetDevice(int d) { return d == 0 ? gpuSuccess : gpuErrorInvalidValue; }
inline gpuError_t gpuDeviceReset(void) { return gpuSuccess; }
inline gpuError_t gpuDeviceGetAttribute(int *v, int, int) { return *v = 1, gpuSuccess; }
/* One block resident per SM: blocks run one at a time here. */
template <typename K> inline gpuError_t gpuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, K, int, size_t)
{
    return *n = 1, gpuSuccess;
}
inline gpuError_t gpuMalloc(void **p, size_t n)
{
    *p = aligned_alloc(256, (n + 255) / 256 * 256);
    return *p ? gpuSuccess : gpuErrorMemoryAllocation;
}
inline gpuError_t gpuFree(void *p) { return free(p), gpuSuccess; }
inline gpuError_t gpuMallocHost(void **p, size_t n) { return gpuMalloc(p, n); }
inline gpuError_t gpuFreeHost(void *p) { return gpuFree(p); }
inline gpuError_t gpuMemcpyAsync(void *d, const void *s, size_t n, int, gpuStream_t)
{
    return memmove(d, s, n), gpuSuccess;
}
inline gpuError_t gpuMemcpy(void *d, const void *s, size_t n, int) { return memmove(d, s, n), gpuSuccess; }
inline gpuError_t gpuMemsetAsync(void *d, int v, size_t n, gpuStream_t) { return memset(d, v, n), gpuSuccess; }
inline gpuError_t gpuStreamCreateWithFlags(gpuStream_t *s, int) { return *s = 1, gpuSuccess; }
inline gpuError_t gpuStreamSynchronize(gpuStream_t) { return gpuSuccess; }
inline gpuError_t gpuStreamDestroy(gpuStream_t) { return gpuSuccess; }
/* Events measure nothing here: every interval is 1 ms. */
inline gpuError_t gpuEventCreate(gpuEvent_t *e) { return *e = 1, gpuSuccess; }
inline gpuError_t gpuEventRecord(gpuEvent_t, gpuStream_t) { return gpuSuccess; }
inline gpuError_t gpuEventSynchronize(gpuEvent_t) { return gpuSuccess; }
inline gpuError_t gpuEventElapsedTime(float *ms, gpuEvent_t, gpuEvent_t) { return *ms = 1.0f, gpuSuccess; }

#endif
