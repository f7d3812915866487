/* device_test.h: what the GPU checks built by nvcc share (qc_device_check.cu, qc_device_functions.cu):
 * the hash-chosen sample of inputs the host compares, option parsing, and finding the device or
 * saying why there is none (exit 77, SKIPPED). */
#ifndef QC_DEVICE_TEST_H
#define QC_DEVICE_TEST_H

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

/* A CUDA call whose failure ends main() with 1, naming the program and the call. */
#define QC_CHECK_CUDA(program, call)                                                                       \
    do {                                                                                                   \
        cudaError_t e_ = (call);                                                                           \
        if (e_ != cudaSuccess) {                                                                           \
            std::fprintf(stderr, "%s: %s failed: %s\n", program, #call, cudaGetErrorString(e_));           \
            return 1;                                                                                      \
        }                                                                                                  \
    } while (0)

namespace qc_device_test {

inline uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}

/* Whether the host compares fp32 pattern u: 2^-shift of the patterns, hash-chosen, and every bf16
 * pattern (low 16 bits zero); all of them for shift 0. */
inline bool sampled(uint32_t u, unsigned shift)
{
    return shift == 0 || (u & 0xFFFFu) == 0 || (mix32(u ^ 0x9E3779B9u) >> (32 - shift)) == 0;
}

/* An unsigned option value in [lo, hi] (decimal, 0x hex or 0 octal), whole string. */
inline bool parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    char *end = nullptr;
    unsigned long v = std::strtoul(s, &end, 0);
    if (!*s || *end || v < lo || v > hi)
        return false;
    *out = (unsigned)v;
    return true;
}

/* Selects CUDA device `device` of compute capability min_major or more and fills *prop: 0, or 77
 * after printing why no such device is here (SKIPPED), or 1 on a CUDA error. */
inline int open_device(const char *program, unsigned device, int min_major, cudaDeviceProp *prop)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        std::printf("SKIPPED: no CUDA device (cudaGetDeviceCount: %s)\n",
                    e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    if ((int)device >= ndev) {
        std::printf("SKIPPED: no CUDA device %u (%d present)\n", device, ndev);
        return 77;
    }
    QC_CHECK_CUDA(program, cudaSetDevice((int)device));
    QC_CHECK_CUDA(program, cudaGetDeviceProperties(prop, (int)device));
    if (prop->major < min_major) {
        std::printf("SKIPPED: no CUDA device of sm_%d0 or newer (device %u is %s, sm_%d%d)\n", min_major, device,
                    prop->name, prop->major, prop->minor);
        return 77;
    }
    return 0;
}

} // namespace qc_device_test

#endif
