/* gpu.h: the one portability header of kernels/cuda. The sources are CUDA (.cu, built by nvcc for
 * sm_90, plus sm_100a where nvcc accepts it) and also compile as HIP (hipcc -x hip, gfx90a /
 * gfx942; ci/build-hip.sh, compile only), as reference/formats/device.cu does: under __HIP__ the
 * cuda* runtime names map to hip*, the warp shuffles take HIP's form, and every NVIDIA-only
 * instruction (PTX cvt.rn.satfinite.*, rcp.approx.ftz.f32) sits behind QCK_PTX, with a software
 * path where one exists (the backend declines at run time what the HIP build cannot do exactly:
 * the rcp.approx.ftz.f32 of the fast-math profiles).
 *
 * Lane groups: the kernels reduce over groups of at most 32 lanes with a width argument, so they
 * are also correct on AMD's 64-lane wavefronts (the width keeps each reduction in its segment). */
#ifndef QCK_GPU_H
#define QCK_GPU_H

#include <stddef.h>
#include <stdint.h>

#if defined(__HIP__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define QCK_HIP 1
typedef hipStream_t gpuStream_t;
typedef hipError_t gpuError_t;
typedef hipEvent_t gpuEvent_t;
typedef hipDeviceProp_t gpuDeviceProp;
#define gpuSuccess hipSuccess
#define gpuErrorInvalidValue hipErrorInvalidValue
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuSetDevice hipSetDevice
#define gpuDeviceReset hipDeviceReset
#define gpuGetErrorString hipGetErrorString
#define gpuGetErrorName hipGetErrorName
#define gpuGetLastError hipGetLastError
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMallocHost(p, n) hipHostMalloc((p), (n), hipHostMallocDefault)
#define gpuFreeHost hipHostFree
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpy hipMemcpy
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuMemcpyToSymbolAsync(sym, src, n, off, kind, s) hipMemcpyToSymbolAsync(HIP_SYMBOL(sym), src, n, off, kind, s)
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStreamDestroy hipStreamDestroy
#define gpuEventCreate hipEventCreate
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuEventDestroy hipEventDestroy
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor
/* HIP 5.x has no *_sync shuffles; a wavefront executes in lockstep. */
#define QCK_SHFL_XOR(v, m, w) __shfl_xor((v), (m), (w))
#define QCK_SHFL(v, src, w) __shfl((v), (src), (w))
#define QCK_ANY(p) __any(p)
#define QCK_SYNCWARP() __builtin_amdgcn_wave_barrier()
#elif defined(QCK_EMU)
#include "emu.h" /* the CPU emulation of the tests (emu.h); gpu* names are its functions */
#else
#include <cuda_runtime.h>
typedef cudaStream_t gpuStream_t;
typedef cudaError_t gpuError_t;
typedef cudaEvent_t gpuEvent_t;
typedef cudaDeviceProp gpuDeviceProp;
#define gpuSuccess cudaSuccess
#define gpuErrorInvalidValue cudaErrorInvalidValue
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuSetDevice cudaSetDevice
#define gpuDeviceReset cudaDeviceReset
#define gpuGetErrorString cudaGetErrorString
#define gpuGetErrorName cudaGetErrorName
#define gpuGetLastError cudaGetLastError
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMallocHost cudaMallocHost
#define gpuFreeHost cudaFreeHost
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpy cudaMemcpy
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuMemcpyToSymbolAsync cudaMemcpyToSymbolAsync
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStreamDestroy cudaStreamDestroy
#define gpuEventCreate cudaEventCreate
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuEventDestroy cudaEventDestroy
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDevAttrMultiProcessorCount cudaDevAttrMultiProcessorCount
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
/* Every lane of the 32-lane warp takes part (the kernels keep their loops warp-uniform); the
 * width confines the exchange to the lane group. */
#define QCK_SHFL_XOR(v, m, w) __shfl_xor_sync(0xffffffffu, (v), (m), (w))
#define QCK_SHFL(v, src, w) __shfl_sync(0xffffffffu, (v), (src), (w))
#define QCK_ANY(p) __any_sync(0xffffffffu, (p))
/* The warp's lanes meet, and what each wrote to shared memory before is visible to all after. */
#define QCK_SYNCWARP() __syncwarp()
#endif

/* QCK_PTX: this pass compiles NVIDIA device code, where PTX inline assembly is available. */
#if defined(__CUDA_ARCH__) && !defined(QCK_HIP)
#define QCK_PTX 1
#endif

/* QCK_DEVICE_PASS: any device pass (CUDA or HIP), where the float intrinsics exist. */
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define QCK_DEVICE_PASS 1
#endif

/* A kernel launch (a pointer to a __global__ function works too). */
#if !defined(QCK_EMU)
#define QCK_LAUNCH(kernel, grid, block, stream, ...) kernel<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#endif

#define QCK_HD __host__ __device__ __forceinline__
#define QCK_D __device__ __forceinline__

#endif
