/* bench_cuda_quant.cu: GB/s of the cuda backend's quant kernels on a large bf16 tensor, against a
 * device-to-device copy kernel measured in the same run (the target: >= 85% of the copy's
 * bandwidth). Not a test: it prints figures (kernels/cuda/run-on-gpu.sh runs it on the H200).
 *
 *   bench_cuda_quant [--rows 8192] [--cols 7168] [--iters 50] [--sms N]
 *
 * Kernels (kernels.cu, the same launchers the backend uses, here with bf16 input as the real
 * activations come): token_group with profile sgl-kernel (group 128, fp32 row-major scales,
 * cvt.rn.satfinite.e4m3x2), mxfp8 with flashinfer-fast (e8m0 row-major scales), nvfp4 with
 * flashinfer-fast and a given global scale, scales through the sf128x4 swizzle. GB/s counts the
 * bytes read and written once (input + payload + scales); the copy kernel moves 2 x the input
 * bytes with two 16-byte vectors in flight per thread; cudaMemcpyAsync's
 * device-to-device figure is printed for information.
 * CUDA events around `iters` back-to-back launches after 5 warm-up launches.
 *
 * A consistency check closes the run: each kernel again on the same values as fp32 input (the
 * harness path, lanes mapped differently), whose bytes must equal the bf16 run's.
 *
 * --sms N confines the whole run, copy kernel included, to N SMs through a green context (CUDA
 * >= 12.4, driver entry points; CUDA only). A kernel whose SMs wait on memory rather than on its
 * instructions is bound by the bytes each SM keeps in flight, so confined to fewer SMs it must carry
 * more bytes per SM per second: 96 of an H100's 132 SMs carrying the H100's copy bandwidth (2.76
 * TB/s) ask of each SM what 132 SMs of an H200 carrying its 0.85 x 3.84 TB/s ask. Compare the
 * confined kernel's GB/s with the unconfined copy's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "libm_table.h"
#include "profiles.h"

#define CHECK(x)                                                                                                   \
    do {                                                                                                           \
        gpuError_t e_ = (x);                                                                                       \
        if (e_ != gpuSuccess) {                                                                                    \
            fprintf(stderr, "bench_cuda_quant: %s: %s (%s)\n", #x, gpuGetErrorName(e_), gpuGetErrorString(e_)); \
            exit(1);                                                                                               \
        }                                                                                                          \
    } while (0)

/* Normal-looking bf16 values with a few outliers, and a NaN or an Inf in about one group in 16K (so
 * that the closing check compares the two paths' exact NaN rules too), from a hash of the index. */
__global__ void init_kernel(uint16_t *x, float *xf, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29, h *= 0xBF58476D1CE4E5B9ull, h ^= h >> 32;
        float u = ((float)(h & 0xFFFFFF) / 8388608.0f - 1.0f) * 2.0f;
        if ((h >> 40) % 997 == 0)
            u *= 100.0f;
        uint32_t b = qck_bits(u);
        uint16_t v = (uint16_t)((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16); /* RNE to bf16 */
        if ((h >> 44) % 262139 == 0) /* a NaN of some payload and sign, or the Inf of v's sign */
            v = (h >> 43) & 1 ? (uint16_t)(0x7F81u | (h & 0x7Eu) | (h >> 63 ? 0x8000u : 0u))
                              : (uint16_t)((v & 0x8000u) | 0x7F80u);
        x[i] = v;
        xf[i] = qck_float((uint32_t)v << 16);
    }
}

#if !defined(QCK_HIP) && !defined(QCK_EMU)
#include <cuda.h> /* types only: the functions come through cudaGetDriverEntryPointByVersion */

static void *driver_entry(const char *name)
{
    void *f = NULL;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion(name, &f, 12040, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !f) {
        fprintf(stderr, "bench_cuda_quant: --sms: the driver has no %s (green contexts need CUDA 12.4)\n", name);
        exit(1);
    }
    return f;
}

#define DRIVER(call)                                                                           \
    do {                                                                                       \
        CUresult r_ = (call);                                                                  \
        if (r_ != CUDA_SUCCESS) {                                                              \
            fprintf(stderr, "bench_cuda_quant: --sms: %s failed (CUresult %d)\n", #call, (int)r_); \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

/* Makes a green context of at least `want` SMs of device 0 current, so that the runtime's calls
 * from here on run in it; returns its SM count (the split rounds up to the device's granularity). */
static int confine_to_sms(int want)
{
    typedef CUresult (*get_res_f)(CUdevice, CUdevResource *, CUdevResourceType);
    typedef CUresult (*split_f)(CUdevResource *, unsigned *, const CUdevResource *, CUdevResource *, unsigned, unsigned);
    typedef CUresult (*desc_f)(CUdevResourceDesc *, CUdevResource *, unsigned);
    typedef CUresult (*green_f)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned);
    typedef CUresult (*from_green_f)(CUcontext *, CUgreenCtx);
    typedef CUresult (*set_current_f)(CUcontext);
    CUdevResource all, part, rest;
    CUdevResourceDesc desc;
    CUgreenCtx green;
    CUcontext ctx;
    unsigned groups = 1;
    DRIVER(((get_res_f)driver_entry("cuDeviceGetDevResource"))(0, &all, CU_DEV_RESOURCE_TYPE_SM));
    DRIVER(((split_f)driver_entry("cuDevSmResourceSplitByCount"))(&part, &groups, &all, &rest, 0, (unsigned)want));
    DRIVER(((desc_f)driver_entry("cuDevResourceGenerateDesc"))(&desc, &part, 1));
    DRIVER(((green_f)driver_entry("cuGreenCtxCreate"))(&green, desc, 0, CU_GREEN_CTX_DEFAULT_STREAM));
    DRIVER(((from_green_f)driver_entry("cuCtxFromGreenCtx"))(&ctx, green));
    DRIVER(((set_current_f)driver_entry("cuCtxSetCurrent"))(ctx));
    return (int)part.sm.smCount;
}
#endif

/* Each block's SM, to count the SMs a launch reaches (the check that --sms took hold). */
__global__ void smid_kernel(unsigned *seen)
{
    unsigned id = 0;
#if defined(QCK_PTX)
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
#endif
    if (threadIdx.x == 0 && id < 1024)
        seen[id] = 1;
}

static int sms_reached(int blocks, gpuStream_t s)
{
    unsigned *d, h[1024];
    CHECK(gpuMalloc((void **)&d, sizeof h));
    CHECK(gpuMemsetAsync(d, 0, sizeof h, s));
    QCK_LAUNCH(smid_kernel, blocks, 256, s, d);
    CHECK(gpuGetLastError());
    CHECK(gpuMemcpyAsync(h, d, sizeof h, gpuMemcpyDeviceToHost, s));
    CHECK(gpuStreamSynchronize(s));
    CHECK(gpuFree(d));
    int n = 0;
    for (int i = 0; i < 1024; i++)
        n += h[i] != 0;
    return n;
}

typedef struct job {
    const char *name;
    qc_recipe recipe;
    const char *profile;
    int swizzle;
} job;

static float elapsed(gpuEvent_t a, gpuEvent_t b)
{
    float ms = 0;
    CHECK(gpuEventElapsedTime(&ms, a, b));
    return ms;
}

int main(int argc, char **argv)
{
    int64_t rows = 8192, cols = 7168;
    int iters = 50, confine = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rows"))
            rows = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--cols"))
            cols = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--iters"))
            iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--sms"))
            confine = atoi(argv[i + 1]);
    }
    if (rows <= 0 || cols <= 0 || cols % 128 || iters <= 0 || confine < 0) {
        fprintf(stderr, "usage: bench_cuda_quant [--rows R] [--cols C (a multiple of 128)] [--iters N] [--sms N]\n");
        return 2;
    }
    int n_dev = 0;
    gpuError_t pe = gpuGetDeviceCount(&n_dev);
    if (pe != gpuSuccess || n_dev == 0) {
        printf("SKIPPED: no CUDA device (%s)\n", pe != gpuSuccess ? gpuGetErrorString(pe) : "0 devices");
        return 77;
    }
    gpuDeviceProp prop;
    CHECK(gpuGetDeviceProperties(&prop, 0));
    int sms = prop.multiProcessorCount;
    if (confine) {
#if defined(QCK_HIP) || defined(QCK_EMU)
        fprintf(stderr, "bench_cuda_quant: --sms needs CUDA's green contexts\n");
        return 2;
#else
        sms = confine_to_sms(confine);
        printf("confined to %d of %d SMs (a green context)\n", sms, prop.multiProcessorCount);
#endif
    }
    const int64_t n = rows * cols;
    gpuStream_t s;
    CHECK(gpuStreamCreateWithFlags(&s, gpuStreamNonBlocking));
    uint16_t *x;
    float *xf;
    uint8_t *copy_dst, *q, *q2, *scale, *scale2;
    CHECK(gpuMalloc((void **)&x, (size_t)n * 2));
    CHECK(gpuMalloc((void **)&xf, (size_t)n * 4));
    CHECK(gpuMalloc((void **)&copy_dst, (size_t)n * 2));
    CHECK(gpuMalloc((void **)&q, (size_t)n));
    CHECK(gpuMalloc((void **)&q2, (size_t)n));
    size_t scale_cap = (size_t)((rows + 127) / 128 * 128) * (size_t)((cols / 16 + 3) / 4 * 4) * 4;
    CHECK(gpuMalloc((void **)&scale, scale_cap));
    CHECK(gpuMalloc((void **)&scale2, scale_cap));
    uint8_t *scratch;
    CHECK(gpuMalloc((void **)&scratch, 256));
    static qck_libm hl;
    qck_libm_build(&hl);
    qck_libm *dl;
    CHECK(gpuMalloc((void **)&dl, sizeof hl));
    CHECK(gpuMemcpy(dl, &hl, sizeof hl, gpuMemcpyHostToDevice));
    if (confine)
        printf("a launch of %d blocks ran on %d SMs\n", prop.multiProcessorCount * 16,
               sms_reached(prop.multiProcessorCount * 16, s));
    QCK_LAUNCH(init_kernel, sms * 8, 256, s, x, xf, n);
    CHECK(gpuGetLastError());
    CHECK(gpuStreamSynchronize(s));

    gpuEvent_t e0, e1;
    CHECK(gpuEventCreate(&e0));
    CHECK(gpuEventCreate(&e1));
    printf("bench_cuda_quant: %s (sm_%d%d, %d SMs), x bf16 [%lld, %lld] = %.1f MB, %d iterations\n", prop.name,
           prop.major, prop.minor, sms, (long long)rows, (long long)cols, (double)n * 2 / 1e6, iters);
    printf("%-40s %10s %10s %10s %8s\n", "kernel", "MB moved", "ms", "GB/s", "vs copy");

    for (int k = 0; k < 5; k++)
        CHECK(qck_launch_copy(x, copy_dst, (size_t)n * 2, sms, s));
    CHECK(gpuEventRecord(e0, s));
    for (int k = 0; k < iters; k++)
        CHECK(qck_launch_copy(x, copy_dst, (size_t)n * 2, sms, s));
    CHECK(gpuEventRecord(e1, s));
    CHECK(gpuEventSynchronize(e1));
    double copy_ms = elapsed(e0, e1) / iters, copy_bytes = (double)n * 4, copy_gbs = copy_bytes / copy_ms / 1e6;
    printf("%-40s %10.1f %10.4f %10.1f %8.3f\n", "copy kernel (device to device, 16 B loads)", copy_bytes / 1e6,
           copy_ms, copy_gbs, 1.0);
    int copy_ok;
    {
        uint16_t *h1 = (uint16_t *)malloc((size_t)n * 2), *h2 = (uint16_t *)malloc((size_t)n * 2);
        CHECK(gpuMemcpy(h1, x, (size_t)n * 2, gpuMemcpyDeviceToHost));
        CHECK(gpuMemcpy(h2, copy_dst, (size_t)n * 2, gpuMemcpyDeviceToHost));
        copy_ok = !memcmp(h1, h2, (size_t)n * 2);
        free(h1), free(h2);
    }
    CHECK(gpuEventRecord(e0, s));
    for (int k = 0; k < iters; k++)
        CHECK(gpuMemcpyAsync(copy_dst, x, (size_t)n * 2, gpuMemcpyDeviceToDevice, s));
    CHECK(gpuEventRecord(e1, s));
    CHECK(gpuEventSynchronize(e1));
    double mc_ms = elapsed(e0, e1) / iters;
    printf("%-40s %10.1f %10.4f %10.1f %8.3f\n", "cudaMemcpyAsync device to device (info)", copy_bytes / 1e6, mc_ms,
           copy_bytes / mc_ms / 1e6, copy_bytes / mc_ms / 1e6 / copy_gbs);

    const job jobs[] = {{"token_group sgl-kernel g128 (e4m3)", QC_RECIPE_TOKEN_GROUP, "sgl-kernel", 0},
                        {"mxfp8 flashinfer-fast (e4m3, e8m0)", QC_RECIPE_MXFP8, "flashinfer-fast", 0},
                        {"nvfp4 flashinfer-fast sf128x4", QC_RECIPE_NVFP4, "flashinfer-fast", 1}};
    int all_same = 1;
    char same[3][8];
    for (int jn = 0; jn < 3; jn++) {
        const job *J = &jobs[jn];
        const qc_recipe_profile *prof = qc_recipe_profile_find(J->profile, J->recipe);
        if (!prof) {
            fprintf(stderr, "bench_cuda_quant: no profile %s for %s\n", J->profile, qc_recipe_name(J->recipe));
            return 1;
        }
        qck_quant_args a;
        memset(&a, 0, sizeof a);
        a.recipe = J->recipe;
        a.p = qc_recipe_profile_policy(prof, -1, 0);
        a.rows = rows, a.cols = cols;
        a.tile_r = 1, a.tile_c = a.p.group, a.tiles_r = rows, a.tiles_c = cols / a.p.group;
        a.fp4 = a.p.elem == QC_E2M1;
        a.scale_kind = J->recipe >= QC_RECIPE_MXFP8 ? (J->swizzle ? QCK_SC_U8_SF : QCK_SC_U8) : QCK_SC_F32;
        a.tg_layout = QC_SL_ROW;
        a.sf_tile = 128, a.sf_cp = (a.tiles_c + 3) / 4 * 4;
        a.has_gscale = J->recipe == QC_RECIPE_NVFP4, a.gscale_encode = 2688.0f / 200.0f;
        a.L = dl;
        a.amax_bits = (unsigned int *)scratch, a.nan_index = (unsigned long long *)(scratch + 8);
        a.dev_scale = (float *)(scratch + 16), a.bad = (unsigned long long *)(scratch + 32);
        a.gscale = (float *)(scratch + 64);
        a.q = q, a.scale = scale;
        size_t qbytes = a.fp4 ? (size_t)n / 2 : (size_t)n;
        size_t sbytes = J->recipe == QC_RECIPE_TOKEN_GROUP ? (size_t)(rows * a.tiles_c) * 4
                        : J->swizzle ? (size_t)((rows + 127) / 128 * 128) * (size_t)a.sf_cp
                                     : (size_t)(rows * a.tiles_c);
        CHECK(gpuMemsetAsync(scale, 0, sbytes, s)); /* the swizzle's padding (none at 8192 rows) */
        for (int k = 0; k < 5; k++)
            CHECK(qck_launch_quant(&a, x, 1, sms, s));
        CHECK(gpuEventRecord(e0, s));
        for (int k = 0; k < iters; k++)
            CHECK(qck_launch_quant(&a, x, 1, sms, s));
        CHECK(gpuEventRecord(e1, s));
        CHECK(gpuEventSynchronize(e1));
        double ms = elapsed(e0, e1) / iters, bytes = (double)n * 2 + (double)qbytes + (double)sbytes;
        double gbs = bytes / ms / 1e6;
        printf("%-40s %10.1f %10.4f %10.1f %8.3f\n", J->name, bytes / 1e6, ms, gbs, gbs / copy_gbs);
        /* the fp32 path on the same values must write the same bytes */
        qck_quant_args b = a;
        b.q = q2, b.scale = scale2;
        CHECK(gpuMemsetAsync(q2, 0xA5, qbytes, s));
        CHECK(gpuMemsetAsync(scale2, 0, sbytes, s));
        CHECK(qck_launch_quant(&b, xf, 0, sms, s));
        CHECK(gpuStreamSynchronize(s));
        uint8_t *h1 = (uint8_t *)malloc(qbytes + sbytes), *h2 = (uint8_t *)malloc(qbytes + sbytes);
        CHECK(gpuMemcpy(h1, q, qbytes, gpuMemcpyDeviceToHost));
        CHECK(gpuMemcpy(h1 + qbytes, scale, sbytes, gpuMemcpyDeviceToHost));
        CHECK(gpuMemcpy(h2, q2, qbytes, gpuMemcpyDeviceToHost));
        CHECK(gpuMemcpy(h2 + qbytes, scale2, sbytes, gpuMemcpyDeviceToHost));
        int eq = !memcmp(h1, h2, qbytes + sbytes);
        snprintf(same[jn], sizeof same[jn], "%s", eq ? "yes" : "NO");
        all_same &= eq;
        free(h1), free(h2);
    }
    printf("check: the fp32-input path writes the same bytes as the bf16 one: token_group %s, mxfp8 %s, nvfp4 %s; "
           "the copy kernel's copy is exact: %s\n", same[0], same[1], same[2], copy_ok ? "yes" : "NO");
    void *bufs[] = {x, xf, copy_dst, q, q2, scale, scale2, scratch, dl};
    for (void *b : bufs)
        CHECK(gpuFree(b));
    return all_same && copy_ok ? 0 : 1;
}
