/* qc_device_functions.cu: the reference's own correctly rounded functions (reference/arith: exp,
 * 2^x, erf, tanh, each with its accurate path alone), compiled for the GPU, give the host build's
 * bits. The cuda backend's MoE (routing: exp; activations: exp, erf, tanh) and bring-up's
 * ex2.approx row run these headers on the device and are held bit for bit to the host reference, so
 * this checks that premise directly, for every input rather than the values a case happens to
 * make: the device build must not contract the double arithmetic into FMA (--fmad=false), and its
 * double operations must round as the host's do (IEEE; CUDA's double division is correctly rounded).
 * A mismatch means the device build of a header is not the host's function. Expected values: the
 * host build of the same headers (tests/test_exp_cr.c holds that one to MPFR).
 *
 *   qc_device_functions [--sample-shift N] [--threads N] [--device N]
 *     --sample-shift N  the GPU evaluates all 2^32 fp32 inputs; the host compares 2^-N of them
 *                       (hash-chosen) plus every bf16 pattern (low 16 bits zero); 0: all. Default 4.
 * Exit: 0 all agree, 1 a mismatch or a CUDA error, 2 usage, 77 no usable CUDA device (SKIPPED). */
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

#include "arith/erf_cr.h"
#include "arith/exp2_cr.h"
#include "arith/exp_cr.h"
#include "arith/tanh_cr.h"
#include "device_test.h"

namespace {

enum Fn { EXP, EXP2, EXP2_ACC, ERF, ERF_ACC, TANH, TANH_ACC, FN_COUNT };

const char *const fn_names[FN_COUNT] = {"qcref_expf",  "qcref_exp2f",          "qcref_exp2f_accurate",
                                        "qcref_erff",  "qcref_erff_accurate",  "qcref_tanhf",
                                        "qcref_tanhf_accurate"};

/* An accurate path answers only where its function sends it: finite x, within the double core's range
 * (exp2_cr.h, erf_cr.h, tanh_cr.h); elsewhere, and for the plain functions never, the result is 0. */
__host__ __device__ uint32_t eval(int fn, float x)
{
    const float a = qc_f32_from_bits(qc_f32_bits(x) & 0x7FFFFFFFu);
    switch (fn) {
    case EXP: return qc_f32_bits(qcref_expf(x));
    case EXP2: return qc_f32_bits(qcref_exp2f(x));
    case EXP2_ACC: return x >= -0x1.2bfffep+7f && x <= 0x1.fffffep+6f ? qc_f32_bits(qcref_exp2f_accurate(x)) : 0;
    case ERF: return qc_f32_bits(qcref_erff(x));
    case ERF_ACC: return a > 0 && a < QCREF_ERF_ONE ? qc_f32_bits(qcref_erff_accurate(x)) : 0;
    case TANH: return qc_f32_bits(qcref_tanhf(x));
    case TANH_ACC: return a > 0 && a < QCREF_TANH_ONE ? qc_f32_bits(qcref_tanhf_accurate(x)) : 0;
    default: return 0;
    }
}

__global__ void eval_range(int fn, uint64_t first, uint32_t count, uint32_t *out)
{
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride)
        out[i] = eval(fn, qc_f32_from_bits((uint32_t)(first + i)));
}

using qc_device_test::parse_uint;
using qc_device_test::sampled;

const size_t kFirst = 10;

struct Stats {
    uint64_t compared = 0, mismatches = 0;
    std::vector<uint32_t> in, host, dev; /* the first kFirst, in input order */
};

/* The host build against the device's results for one chunk, on nthreads contiguous slices. */
void host_compare(int fn, uint64_t first, uint32_t count, const uint32_t *dev, unsigned shift, unsigned nthreads,
                  Stats &total)
{
    std::vector<Stats> part(nthreads);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < nthreads; t++)
        pool.emplace_back([&, t] {
            Stats &s = part[t];
            for (uint64_t i = (uint64_t)count * t / nthreads; i < (uint64_t)count * (t + 1) / nthreads; i++) {
                uint32_t u = (uint32_t)(first + i);
                if (!sampled(u, shift))
                    continue;
                uint32_t h = eval(fn, qc_f32_from_bits(u));
                s.compared++;
                if (h != dev[i] && s.mismatches++ < kFirst)
                    s.in.push_back(u), s.host.push_back(h), s.dev.push_back(dev[i]);
            }
        });
    for (std::thread &th : pool)
        th.join();
    for (const Stats &s : part) {
        total.compared += s.compared;
        total.mismatches += s.mismatches;
        for (size_t k = 0; k < s.in.size() && total.in.size() < kFirst; k++)
            total.in.push_back(s.in[k]), total.host.push_back(s.host[k]), total.dev.push_back(s.dev[k]);
    }
}

#define CHECK_CUDA(call) QC_CHECK_CUDA("qc_device_functions", call)

int usage()
{
    std::fprintf(stderr, "usage: qc_device_functions [--sample-shift N] [--threads N] [--device N]\n");
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    unsigned shift = 4, device = 0, nthreads = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        bool ok = i + 1 < argc;
        if (ok && a == "--sample-shift")
            ok = parse_uint(argv[++i], 0, 24, &shift);
        else if (ok && a == "--threads")
            ok = parse_uint(argv[++i], 1, 256, &nthreads);
        else if (ok && a == "--device")
            ok = parse_uint(argv[++i], 0, 1024, &device);
        else
            ok = false;
        if (!ok)
            return usage();
    }
    cudaDeviceProp prop;
    if (int rc = qc_device_test::open_device("qc_device_functions", device, 9, &prop))
        return rc;
    std::printf("device %u: %s, sm_%d%d; host sample 2^-%u + bf16 patterns, %u threads\n", device, prop.name,
                prop.major, prop.minor, shift, nthreads);

    const uint32_t chunk = 1u << 26;
    uint32_t *d_out = nullptr, *h_out = nullptr;
    CHECK_CUDA(cudaMalloc(&d_out, (size_t)chunk * sizeof(uint32_t)));
    CHECK_CUDA(cudaMallocHost(&h_out, (size_t)chunk * sizeof(uint32_t)));
    bool failed = false;
    for (int fn = 0; fn < FN_COUNT; fn++) {
        Stats st;
        double gpu_s = 0, host_s = 0;
        for (uint64_t first = 0; first < (1ull << 32); first += chunk) {
            auto t0 = std::chrono::steady_clock::now();
            eval_range<<<4096, 256>>>(fn, first, chunk, d_out);
            CHECK_CUDA(cudaGetLastError());
            CHECK_CUDA(cudaMemcpy(h_out, d_out, (size_t)chunk * sizeof(uint32_t), cudaMemcpyDeviceToHost));
            auto t1 = std::chrono::steady_clock::now();
            host_compare(fn, first, chunk, h_out, shift, nthreads, st);
            host_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
            gpu_s += std::chrono::duration<double>(t1 - t0).count();
        }
        failed |= st.mismatches != 0;
        std::printf("%-4s %-21s compared=%" PRIu64 " mismatches=%" PRIu64 " (GPU all 2^32 with copies %.2f s, host %.2f s)\n",
                    st.mismatches ? "FAIL" : "ok", fn_names[fn], st.compared, st.mismatches, gpu_s, host_s);
        for (size_t k = 0; k < st.in.size(); k++)
            std::printf("       input 0x%08" PRIx32 ": host 0x%08" PRIx32 ", device 0x%08" PRIx32 "\n", st.in[k],
                        st.host[k], st.dev[k]);
    }
    cudaFree(d_out);
    cudaFreeHost(h_out);
    std::printf("%s\n", failed ? "FAILED: a device build differs from the host build" : "PASSED");
    return failed ? 1 : 0;
}
