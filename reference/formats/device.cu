/* device.cu: the reference codecs (minifloat.c, e8m0.c, formats.c) built as GPU device code, one
 * source for CUDA (nvcc -arch=sm_90) and HIP (hipcc -x hip --offload-arch=gfx90a / gfx940), plus one
 * kernel that encodes a range of fp32 bit patterns, so that the same oracle can run exhaustive
 * bring-up checks on a GPU (docs/DESIGN.md "Architecture": codecs and layouts also compile as CUDA/HIP device code).
 *
 * The .c files are included as they are: they are C11 that is also valid C++, and QC_HD marks
 * every function they define __host__ __device__. Their public names are renamed qcref_* ->
 * qcdev_* while they are included, because nvcc emits a host definition under the C name of every
 * external device function (for a __device__-only one a stub that calls exit(1)): unrenamed, this
 * object would define qcref_encode & co. beside libqcref, and the linker would take this copy (or
 * a stub) for the host reference without a word. Renamed, a program links libqcref (the host
 * reference, C11 with -ffp-contract=off) and this TU side by side; a public function added to
 * those files and missing below shows up as a duplicate symbol when both are linked.
 * Floating-point contraction is off here too (nvcc --fmad=false, hipcc -ffp-contract=off; set by
 * the build): the codecs' only float arithmetic is one exact product in scale_exact() and libm
 * ceilf/log2f in the e8m0 log2-ceil rule, where the device log2f is the GPU's, not glibc's.
 *
 * Host API (C linkage; a caller declares it, see tests/qc_device_check.cu):
 *   int qcdev_encode_range(int format, const qc_cast_policy *policy, uint64_t first,
 *                          uint32_t count, uint16_t *device_codes, void *stream)
 *       device_codes[i] = qcref_encode(format, fp32 with bits first + i, policy) on the GPU, for
 *       every format but f32 (codes are at most 16 bits). first + count <= 2^32. Asynchronous on
 *       stream (a cudaStream_t / hipStream_t, NULL = default stream). Returns 0, QCDEV_EINVAL
 *       (-1) for a bad argument, or the runtime's error code (> 0) of the launch.
 *   const char *qcdev_error_string(int rc)
 */
#if defined(__HIP__)
#include <hip/hip_runtime.h>
#define QCDEV_RT(name) hip##name
typedef hipStream_t qcdev_stream;
#else
#include <cuda_runtime.h>
#define QCDEV_RT(name) cuda##name
typedef cudaStream_t qcdev_stream;
#endif

#define qcref_is_minifloat qcdev_is_minifloat
#define qcref_minifloat qcdev_minifloat
#define qcref_max_magnitude qcdev_max_magnitude
#define qcref_minifloat_encode qcdev_minifloat_encode
#define qcref_minifloat_decode qcdev_minifloat_decode
#define qcref_e8m0_encode qcdev_e8m0_encode
#define qcref_e8m0_decode qcdev_e8m0_decode
#define qcref_default_policy qcdev_default_policy
#define qcref_format_bits qcdev_format_bits
#define qcref_encode qcdev_encode
#define qcref_decode qcdev_decode
#include "minifloat.c"
#include "e8m0.c"
#include "formats.c"
#undef qcref_is_minifloat
#undef qcref_minifloat
#undef qcref_max_magnitude
#undef qcref_minifloat_encode
#undef qcref_minifloat_decode
#undef qcref_e8m0_encode
#undef qcref_e8m0_decode
#undef qcref_default_policy
#undef qcref_format_bits
#undef qcref_encode
#undef qcref_decode

#define QCDEV_EINVAL (-1)

/* One thread per input, grid-stride so that any count fits the launch limits. */
__global__ void qcdev_encode_range_kernel(qc_format f, qc_cast_policy p, uint64_t first, uint32_t count,
                                          uint16_t *codes)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
        codes[i] = (uint16_t)qcdev_encode(f, qc_f32_from_bits((uint32_t)(first + i)), &p);
}

extern "C" int qcdev_encode_range(int format, const qc_cast_policy *policy, uint64_t first, uint32_t count,
                                  uint16_t *device_codes, void *stream)
{
    if (format <= (int)QC_F32 || format >= (int)QC_FORMAT_COUNT || !policy || !device_codes ||
        first > (1ull << 32) || count > (1ull << 32) - first)
        return QCDEV_EINVAL;
    if (count == 0)
        return 0;
    const unsigned threads = 256;
    uint64_t blocks = ((uint64_t)count + threads - 1) / threads;
    if (blocks > (1u << 20))
        blocks = 1u << 20; /* the grid-stride loop covers the rest */
    qcdev_encode_range_kernel<<<(unsigned)blocks, threads, 0, (qcdev_stream)stream>>>((qc_format)format, *policy,
                                                                                     first, count, device_codes);
    return (int)QCDEV_RT(GetLastError)();
}

extern "C" const char *qcdev_error_string(int rc)
{
    if (rc == 0)
        return "no error";
    if (rc == QCDEV_EINVAL)
        return "qcdev_encode_range: invalid argument (format f32 or unknown, null pointer, or range beyond 2^32)";
    return QCDEV_RT(GetErrorString)((QCDEV_RT(Error_t))rc);
}
