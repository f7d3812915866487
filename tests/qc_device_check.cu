/* qc_device_check.cu: the reference codecs compiled for the GPU (reference/formats/device.cu), run
 * on all 2^32 fp32 inputs under the `ptx` cast profile, checked two ways:
 *   1. against the host reference (libqcref, C11) on a sample of the inputs: the device build of
 *      the codecs is the same function as the host build;
 *   2. on every input, against what CUDA's own device code gives on this GPU: on sm_90
 *      __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...) is the hardware instruction
 *      cvt.rn.satfinite.e4m3x2.f32 / e5m2x2.f32 (SASS F2FP), __float2bfloat16_rn / __float2half_rn
 *      are cvt.rn.bf16.f32 / cvt.rn.f16.f32; e8m0, e2m1, e2m3 and e3m2 have no cvt before sm_100,
 *      so there CUDA's device code is its software path (e8m0 rounds through cvt.rp.bf16.f32).
 * Expected values in 2 are CUDA's; in 1 the host reference. Spec: docs/spec/formats.md §13.
 *
 *   qc_device_check [--sample-shift N] [--formats a,b,..] [--chunk-log2 N] [--threads N] [--device N]
 *     --sample-shift N  host-compare 2^-N of the inputs (hash-chosen) plus every bf16 pattern
 *                       (low 16 bits zero); 0 compares all 2^32. Default 6.
 *     --formats         a subset, by CLI name (e4m3fn e4m3fnuz e5m2 e5m2fnuz e8m0 bf16 f16 e2m1 e2m3 e3m2)
 * Exit: 0 all agree, 1 a mismatch or a CUDA error, 2 usage, 77 no usable CUDA device (SKIPPED).
 *
 * Self-contained: links libqcref statically and the CUDA runtime statically (cudart_static), so the
 * binary needs only the driver (libcuda.so). To build it on a GPU machine, from the repository root:
 *   cmake -S . -B build && cmake --build build --target qc_device_check && build/tests/qc_device_check
 * or without CMake (libqcref's codec and profile sources into a scratch directory):
 *   d=$(mktemp -d); for f in reference/formats/{minifloat,e8m0,formats,fp4,names}.c reference/profiles.c;
 *     do cc -std=c11 -O2 -ffp-contract=off -Ireference -c "$f" -o "$d/$(basename "$f" .c).o"; done
 *   (cd "$d" && ar rcs libqcref.a *.o)
 *   nvcc -arch=sm_90 -O2 --fmad=false -std=c++17 -Ireference reference/formats/device.cu \
 *     tests/qc_device_check.cu "$d/libqcref.a" -o qc_device_check
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "device_test.h"
#include "formats/formats.h"
#include "profiles.h"

/* reference/formats/device.cu (its header comment is the contract) */
extern "C" int qcdev_encode_range(int format, const qc_cast_policy *policy, uint64_t first, uint32_t count,
                                  uint16_t *device_codes, void *stream);
extern "C" const char *qcdev_error_string(int rc);

namespace {

/* CUDA's device-side conversion each format is compared with (NONE: no CUDA conversion exists). */
enum CudaKind { NONE, E4M3_SAT, E5M2_SAT, E8M0_RP_SAT, BF16_RN, F16_RN, E2M1_RN, E2M3_RN, E3M2_RN };

__device__ uint32_t cuda_encode(int kind, float x)
{
    switch (kind) {
    case E4M3_SAT: return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    case E5M2_SAT: return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
    case E8M0_RP_SAT: return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf);
    case BF16_RN: {
        __nv_bfloat16_raw r = __float2bfloat16_rn(x);
        return r.x;
    }
    case F16_RN: {
        __half_raw r = __float2half_rn(x);
        return r.x;
    }
    case E2M1_RN: return __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest);
    case E2M3_RN: return __nv_cvt_float_to_fp6(x, __NV_E2M3, cudaRoundNearest);
    case E3M2_RN: return __nv_cvt_float_to_fp6(x, __NV_E3M2, cudaRoundNearest);
    default: return 0;
    }
}

/* NaN codes from the format definitions (formats.md §1.1, §2.1), to tell NaN-code-only differences apart. */
__host__ __device__ bool is_nan_code(int f, uint32_t c)
{
    switch (f) {
    case QC_BF16: return (c & 0x7FFFu) > 0x7F80u;
    case QC_F16: return (c & 0x7FFFu) > 0x7C00u;
    case QC_E4M3FN: return (c & 0x7Fu) == 0x7Fu;
    case QC_E5M2: return (c & 0x7Fu) > 0x7Cu;
    case QC_E4M3FNUZ:
    case QC_E5M2FNUZ: return c == 0x80u;
    case QC_E8M0: return c == 0xFFu;
    default: return false;
    }
}

const int kFirst = 10;

struct DevStats {
    unsigned long long mismatches, nan_code_diffs;
    unsigned int nfirst;
    uint32_t in[kFirst], expected[kFirst], got[kFirst]; /* some mismatches, in no particular order */
};

__global__ void compare_with_cuda(int kind, int format, uint64_t first, uint32_t count, const uint16_t *ref,
                                  DevStats *st)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        uint32_t u = (uint32_t)(first + i);
        uint32_t e = cuda_encode(kind, __uint_as_float(u));
        uint32_t g = ref[i];
        if (e != g) {
            atomicAdd(&st->mismatches, 1ull);
            if (is_nan_code(format, e) && is_nan_code(format, g))
                atomicAdd(&st->nan_code_diffs, 1ull);
            unsigned s = atomicAdd(&st->nfirst, 1u);
            if (s < (unsigned)kFirst) {
                st->in[s] = u;
                st->expected[s] = e;
                st->got[s] = g;
            }
        }
    }
}

struct Job {
    qc_format format;
    int kind;
    const char *cuda; /* what the CUDA side is on sm_90 */
};

const Job jobs[] = {
    {QC_E4M3FN, E4M3_SAT, "cvt.rn.satfinite.e4m3x2.f32 (hardware; __nv_cvt_float_to_fp8 SATFINITE)"},
    {QC_E4M3FNUZ, NONE, "none (no PTX cvt for fnuz)"},
    {QC_E5M2, E5M2_SAT, "cvt.rn.satfinite.e5m2x2.f32 (hardware; __nv_cvt_float_to_fp8 SATFINITE)"},
    {QC_E5M2FNUZ, NONE, "none (no PTX cvt for fnuz)"},
    {QC_E8M0, E8M0_RP_SAT, "__nv_cvt_float_to_e8m0(SATFINITE, RoundPosInf) (software + cvt.rp.bf16.f32 on sm_90)"},
    {QC_BF16, BF16_RN, "cvt.rn.bf16.f32 (hardware; __float2bfloat16_rn)"},
    {QC_F16, F16_RN, "cvt.rn.f16.f32 (hardware; __float2half_rn)"},
    {QC_E2M1, E2M1_RN, "__nv_cvt_float_to_fp4 RN (software on sm_90; e2m1 cvt needs sm_100+)"},
    {QC_E2M3, E2M3_RN, "__nv_cvt_float_to_fp6 RN (software on sm_90; fp6 cvt needs sm_100+)"},
    {QC_E3M2, E3M2_RN, "__nv_cvt_float_to_fp6 RN (software on sm_90; fp6 cvt needs sm_100+)"},
};

using qc_device_test::parse_uint;
using qc_device_test::sampled;

struct HostStats {
    uint64_t compared = 0, mismatches = 0;
    std::vector<uint32_t> in, expected, got; /* the first 10 in input order */
};

/* Host reference (libqcref) against the device codes of one chunk, on nthreads contiguous slices. */
void host_compare(qc_format f, const qc_cast_policy &p, uint64_t first, uint32_t count, const uint16_t *codes,
                  unsigned shift, unsigned nthreads, HostStats &total)
{
    std::vector<HostStats> part(nthreads);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < nthreads; t++) {
        pool.emplace_back([&, t] {
            uint64_t lo = (uint64_t)count * t / nthreads, hi = (uint64_t)count * (t + 1) / nthreads;
            HostStats &s = part[t];
            for (uint64_t i = lo; i < hi; i++) {
                uint32_t u = (uint32_t)(first + i);
                if (!sampled(u, shift))
                    continue;
                float x;
                std::memcpy(&x, &u, sizeof x);
                uint32_t e = qcref_encode(f, x, &p);
                s.compared++;
                if (e != codes[i]) {
                    s.mismatches++;
                    if (s.in.size() < (size_t)kFirst) {
                        s.in.push_back(u);
                        s.expected.push_back(e);
                        s.got.push_back(codes[i]);
                    }
                }
            }
        });
    }
    for (std::thread &th : pool)
        th.join();
    for (const HostStats &s : part) {
        total.compared += s.compared;
        total.mismatches += s.mismatches;
        for (size_t k = 0; k < s.in.size() && total.in.size() < (size_t)kFirst; k++) {
            total.in.push_back(s.in[k]);
            total.expected.push_back(s.expected[k]);
            total.got.push_back(s.got[k]);
        }
    }
}

#define CHECK_CUDA(call) QC_CHECK_CUDA("qc_device_check", call)

int usage()
{
    std::fprintf(stderr, "usage: qc_device_check [--sample-shift N] [--formats a,b,..] [--chunk-log2 N] "
                         "[--threads N] [--device N]\n");
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    unsigned shift = 6, chunk_log2 = 28, device = 0;
    unsigned nthreads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    std::vector<bool> want(QC_FORMAT_COUNT, true);
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        bool has = i + 1 < argc;
        if (a == "--sample-shift" && has) {
            if (!parse_uint(argv[++i], 0, 24, &shift))
                return usage();
        } else if (a == "--chunk-log2" && has) {
            if (!parse_uint(argv[++i], 16, 30, &chunk_log2))
                return usage();
        } else if (a == "--threads" && has) {
            if (!parse_uint(argv[++i], 1, 256, &nthreads))
                return usage();
        } else if (a == "--device" && has) {
            if (!parse_uint(argv[++i], 0, 1024, &device))
                return usage();
        } else if (a == "--formats" && has) {
            std::fill(want.begin(), want.end(), false);
            std::string list = argv[++i];
            size_t pos = 0;
            while (pos <= list.size()) {
                size_t comma = list.find(',', pos);
                std::string name = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
                int f = qc_format_from_name(name.c_str());
                if (f < 0 || f == QC_F32) {
                    std::fprintf(stderr, "qc_device_check: unknown or unsupported format '%s'\n", name.c_str());
                    return 2;
                }
                want[f] = true;
                if (comma == std::string::npos)
                    break;
                pos = comma + 1;
            }
        } else {
            return usage();
        }
    }

    cudaDeviceProp prop; /* sm_90: this check is built for sm_90, whose fp8 cvt is in hardware */
    if (int rc = qc_device_test::open_device("qc_device_check", device, 9, &prop))
        return rc;
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    std::printf("device %u: %s, sm_%d%d, driver %d, runtime %d; host sample 2^-%u + bf16 patterns, %u threads\n",
                device, prop.name, prop.major, prop.minor, drv, rt, shift, nthreads);

    const qc_cast_profile *ptx = qc_cast_profile_find("ptx");
    if (!ptx) {
        std::fprintf(stderr, "qc_device_check: the cast profile `ptx` is missing from profiles.c\n");
        return 1;
    }

    const uint32_t chunk = 1u << chunk_log2;
    uint16_t *d_codes = nullptr, *h_codes = nullptr;
    DevStats *d_stats = nullptr;
    CHECK_CUDA(cudaMalloc(&d_codes, (size_t)chunk * sizeof(uint16_t)));
    bool pinned = cudaMallocHost(&h_codes, (size_t)chunk * sizeof(uint16_t)) == cudaSuccess;
    if (!pinned) { /* no page-locked memory here (memlock limit): pageable copies are only slower */
        cudaGetLastError();
        h_codes = static_cast<uint16_t *>(std::malloc((size_t)chunk * sizeof(uint16_t)));
        if (!h_codes) {
            std::fprintf(stderr, "qc_device_check: out of host memory for %u codes\n", chunk);
            return 1;
        }
    }
    CHECK_CUDA(cudaMalloc(&d_stats, sizeof(DevStats)));

    bool failed = false;
    auto t_all = std::chrono::steady_clock::now();
    for (const Job &job : jobs) {
        if (!want[job.format])
            continue;
        qc_cast_policy pol = qc_cast_profile_policy(ptx, job.format);
        CHECK_CUDA(cudaMemset(d_stats, 0, sizeof(DevStats)));
        HostStats hs;
        double gpu_s = 0, host_s = 0;
        for (uint64_t first = 0; first < (1ull << 32); first += chunk) {
            auto t0 = std::chrono::steady_clock::now();
            int rc = qcdev_encode_range(job.format, &pol, first, chunk, d_codes, nullptr);
            if (rc != 0) {
                std::fprintf(stderr, "qc_device_check: qcdev_encode_range(%s): %s\n", qc_format_name(job.format),
                             qcdev_error_string(rc));
                return 1;
            }
            if (job.kind != NONE) {
                compare_with_cuda<<<1u << 16, 256>>>(job.kind, job.format, first, chunk, d_codes, d_stats);
                CHECK_CUDA(cudaGetLastError());
            }
            CHECK_CUDA(cudaMemcpy(h_codes, d_codes, (size_t)chunk * sizeof(uint16_t), cudaMemcpyDeviceToHost));
            auto t1 = std::chrono::steady_clock::now();
            host_compare(job.format, pol, first, chunk, h_codes, shift, nthreads, hs);
            auto t2 = std::chrono::steady_clock::now();
            gpu_s += std::chrono::duration<double>(t1 - t0).count();
            host_s += std::chrono::duration<double>(t2 - t1).count();
        }
        DevStats ds;
        CHECK_CUDA(cudaMemcpy(&ds, d_stats, sizeof ds, cudaMemcpyDeviceToHost));
        bool bad = hs.mismatches != 0 || ds.mismatches != 0;
        failed |= bad;
        int w = (qcref_format_bits(job.format) + 3) / 4;
        std::printf("%-4s %-8s profile ptx, 2^32 inputs on the GPU (%.2f s incl. copy)\n", bad ? "FAIL" : "ok",
                    qc_format_name(job.format), gpu_s);
        std::printf("       vs host qcref (sample): compared=%" PRIu64 " mismatches=%" PRIu64 " (%.2f s)\n", hs.compared,
                    hs.mismatches, host_s);
        for (size_t k = 0; k < hs.in.size(); k++)
            std::printf("         input 0x%08" PRIx32 ": expected (host qcref) 0x%0*" PRIx32 ", got (device qcref) 0x%0*" PRIx32 "\n",
                        hs.in[k], w, hs.expected[k], w, hs.got[k]);
        if (job.kind == NONE) {
            std::printf("       vs CUDA: %s\n", job.cuda);
            continue;
        }
        std::printf("       vs CUDA %s: compared=4294967296 mismatches=%llu (nan-code only: %llu)\n", job.cuda,
                    ds.mismatches, ds.nan_code_diffs);
        unsigned nshow = std::min<unsigned>(ds.nfirst, (unsigned)kFirst);
        std::vector<unsigned> order(nshow);
        for (unsigned k = 0; k < nshow; k++)
            order[k] = k;
        std::sort(order.begin(), order.end(), [&](unsigned a, unsigned b) { return ds.in[a] < ds.in[b]; });
        for (unsigned k : order)
            std::printf("         input 0x%08" PRIx32 ": expected (CUDA device) 0x%0*" PRIx32 ", got (device qcref) 0x%0*" PRIx32 "\n",
                        ds.in[k], w, ds.expected[k], w, ds.got[k]);
    }
    double all_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count();
    cudaFree(d_codes);
    if (pinned)
        cudaFreeHost(h_codes);
    else
        std::free(h_codes);
    cudaFree(d_stats);
    std::printf("qc_device_check: %s (%.1f s)\n", failed ? "FAILED" : "all formats agree", all_s);
    return failed ? 1 : 0;
}
