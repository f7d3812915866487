/* bringup.cu: the cuda backend's bringup slot (include/qcheck/qcheck.h, `qcheck bringup`): every
 * conversion instruction this GPU offers for qcheck's formats, on all 2^32 inputs of its domain,
 * against the reference's codec under the profile it claims; and the approximate arithmetic the
 * recipes' profiles model (rcp.approx.ftz.f32, div.full.f32, div.approx.ftz.f32 by the constant
 * divisors of the recipes) against the reference's emulation of it; and ex2.approx.ftz.f32, which
 * no profile models, against 2^x correctly rounded (reference/arith/exp2_cr.h) within a documented
 * ulp bound. The inputs are made and
 * compared on the device: one fused kernel per check counts the mismatches and keeps the first.
 *
 * The oracle here is the reference itself, compiled as device code the way
 * reference/formats/device.cu does it (the .c files included with their names renamed, so that
 * this object does not define libqcref's symbols), and the measured rcp.approx table of libqcref
 * (qcref_rcp_table) uploaded once. That is the point of bring-up: the device against the
 * reference, not a kernel against the reference. docs/spec/formats.md §13 holds what the H200
 * gave when these instructions were first measured. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "cuda_ops.h"
#include "profiles.h"
#include "qcheck/qcheck.h"

#define qcref_is_minifloat qcbu_is_minifloat
#define qcref_minifloat qcbu_minifloat
#define qcref_max_magnitude qcbu_max_magnitude
#define qcref_minifloat_encode qcbu_minifloat_encode
#define qcref_minifloat_decode qcbu_minifloat_decode
#define qcref_e8m0_encode qcbu_e8m0_encode
#define qcref_e8m0_decode qcbu_e8m0_decode
#define qcref_default_policy qcbu_default_policy
#define qcref_format_bits qcbu_format_bits
#define qcref_encode qcbu_encode
#define qcref_decode qcbu_decode
#include "formats/minifloat.c"
#include "formats/e8m0.c"
#include "formats/formats.c"
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

#include "arith/arith.h"
#include "arith/exp2_cr.h"

namespace {

/* What one check runs on the device, for input bits u (an fp32 pattern, or two f16 halves). */
enum Check {
    CVT_E4M3,      /* cvt.rn.satfinite.e4m3x2.f32 vs profile ptx e4m3fn */
    CVT_E5M2,      /* cvt.rn.satfinite.e5m2x2.f32 vs profile ptx e5m2 */
    CVT_BF16,      /* cvt.rn.bf16.f32 vs profile ptx bf16 */
    CVT_F16,       /* cvt.rn.f16.f32 vs profile ptx f16 */
    CVT_E8M0,      /* __nv_cvt_float_to_e8m0 satfinite round-up vs profile ptx e8m0 (ceil) */
    CVT_E4M3_F16X2, /* cvt.rn.satfinite.e4m3x2.f16x2 on every pair vs the f16 values' ptx e4m3fn */
    CVT_E5M2_F16X2,
    RCP_APPROX,    /* rcp.approx.ftz.f32 vs qcref_rcp_approx_ftz_with (the measured table) */
    DIV_FULL,      /* x / d as div.full.f32 vs mul.rn(x, rcp.approx.ftz(d)) (QC_DIV_FULL) */
    DIV_APPROX,    /* x / d as div.approx.ftz.f32 vs mul.ftz(x, rcp.approx.ftz(d)) (QC_DIV_FAST) */
    MUL_FTZ,       /* x * d as mul.rn.ftz.f32 vs qcref_fl32_mul_ftz (fast-math products) */
    EX2_APPROX     /* ex2.approx.ftz.f32 vs ftz(qcref_exp2f(ftz(x))) within EX2_ULP_BOUND: not emulated */
};

struct Tally {
    unsigned long long mismatches;
    unsigned int n;
    unsigned int in[4], got[4], want[4];
};

__device__ float bits_f(uint32_t u) { return __uint_as_float(u); }

/* hw, oracle and same take the check as a template argument: each check's kernel carries only its
 * own conversion and oracle (a runtime switch kept every path's registers live in every kernel). */
template <int check> __device__ __forceinline__ uint32_t hw(uint32_t u, float d)
{
    float x = bits_f(u);
    switch (check) {
    case CVT_E4M3: return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    case CVT_E5M2: return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
    case CVT_BF16: return __bfloat16_as_ushort(__float2bfloat16_rn(x));
    case CVT_F16: return __half_as_ushort(__float2half_rn(x));
    case CVT_E8M0: return __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf);
    case CVT_E4M3_F16X2:
    case CVT_E5M2_F16X2: {
        __half2_raw h;
        h.x = (unsigned short)(u & 0xFFFF), h.y = (unsigned short)(u >> 16);
        return __nv_cvt_halfraw2_to_fp8x2(h, __NV_SATFINITE, check == CVT_E4M3_F16X2 ? __NV_E4M3 : __NV_E5M2);
    }
    case RCP_APPROX: {
        float r;
        asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
        return __float_as_uint(r);
    }
    case DIV_FULL: {
        float r;
        asm("div.full.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(d));
        return __float_as_uint(r);
    }
    case DIV_APPROX: {
        float r;
        asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(d));
        return __float_as_uint(r);
    }
    case MUL_FTZ: {
        float r;
        asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(d));
        return __float_as_uint(r);
    }
    default: {
        float r;
        asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
        return __float_as_uint(r);
    }
    }
}

template <int check>
__device__ __forceinline__ uint32_t oracle(uint32_t u, float d, const qc_cast_policy *p, const uint8_t *table)
{
    float x = bits_f(u);
    switch (check) {
    case CVT_E4M3: return qcbu_encode(QC_E4M3FN, x, p);
    case CVT_E5M2: return qcbu_encode(QC_E5M2, x, p);
    case CVT_BF16: return qcbu_encode(QC_BF16, x, p);
    case CVT_F16: return qcbu_encode(QC_F16, x, p);
    case CVT_E8M0: return qcbu_encode(QC_E8M0, x, p);
    case CVT_E4M3_F16X2:
    case CVT_E5M2_F16X2: { /* f16 -> f32 is exact, so the pair is two fp32 conversions */
        qc_format f = check == CVT_E4M3_F16X2 ? QC_E4M3FN : QC_E5M2;
        float lo = __half2float(__ushort_as_half((unsigned short)(u & 0xFFFF)));
        float hi = __half2float(__ushort_as_half((unsigned short)(u >> 16)));
        return qcbu_encode(f, lo, p) | qcbu_encode(f, hi, p) << 8;
    }
    case RCP_APPROX: return __float_as_uint(qcref_rcp_approx_ftz_with(x, table));
    case DIV_FULL: return __float_as_uint(qcref_fl32_mul(x, qcref_rcp_approx_ftz_with(d, table)));
    case DIV_APPROX: return __float_as_uint(qcref_fl32_mul_ftz(x, qcref_rcp_approx_ftz_with(d, table)));
    case MUL_FTZ: return __float_as_uint(qcref_fl32_mul_ftz(x, d));
    default: return __float_as_uint(qcref_ftz(qcref_exp2f(qcref_ftz(x))));
    }
}

/* A NaN against a NaN of another payload is a mismatch for conversions (NaN codes are the policy)
 * but not for the arithmetic checks, whose results are fp32 and whose NaN payload no recipe reads. */
/* fp32 bits as a signed count of ulps from zero (+0 and -0 both 0). */
__device__ __forceinline__ int64_t ulps_from_zero(uint32_t u)
{
    return u >> 31 ? -(int64_t)(u & 0x7FFFFFFFu) : (int64_t)u;
}

/* ex2.approx is held to a bound, not to bits: 2 ulp, the maximum error CUDA's math API documents
 * for exp2f, which -use_fast_math compiles to this instruction. */
#define EX2_ULP_BOUND 2

template <int check> __device__ __forceinline__ bool same(uint32_t a, uint32_t b)
{
    if (a == b)
        return true;
    if (check < RCP_APPROX)
        return false;
    if ((a & 0x7FFFFFFFu) > 0x7F800000u || (b & 0x7FFFFFFFu) > 0x7F800000u)
        return (a & 0x7FFFFFFFu) > 0x7F800000u && (b & 0x7FFFFFFFu) > 0x7F800000u;
    if (check == EX2_APPROX) {
        int64_t d = ulps_from_zero(a) - ulps_from_zero(b);
        return d <= EX2_ULP_BOUND && d >= -EX2_ULP_BOUND;
    }
    return false;
}

template <int check>
__global__ void check_kernel(float d, qc_cast_policy p, const uint8_t *table, uint64_t first, uint64_t count, Tally *t)
{
    /* the thread's inputs first + i, i = i0 + j * stride, stepped in 32 bits: a 64-bit index costs
     * two adds and two compares in every iteration of a loop run 2^32 times */
    const uint32_t stride = gridDim.x * blockDim.x;
    const uint64_t i0 = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t steps = i0 < count ? (uint32_t)((count - i0 + stride - 1) / stride) : 0;
    unsigned long long bad = 0;
    uint32_t u = (uint32_t)(first + i0);
    for (uint32_t j = 0; j < steps; j++, u += stride) {
        uint32_t g = hw<check>(u, d), w = oracle<check>(u, d, &p, table);
        if (same<check>(g, w))
            continue;
        bad++;
        unsigned int k = atomicAdd(&t->n, 1u);
        if (k < 4)
            t->in[k] = u, t->got[k] = g, t->want[k] = w;
    }
    if (bad)
        atomicAdd(&t->mismatches, bad);
}

typedef void (*check_fn)(float, qc_cast_policy, const uint8_t *, uint64_t, uint64_t, Tally *);
const check_fn kernels[] = {check_kernel<CVT_E4M3>,       check_kernel<CVT_E5M2>,       check_kernel<CVT_BF16>,
                            check_kernel<CVT_F16>,        check_kernel<CVT_E8M0>,       check_kernel<CVT_E4M3_F16X2>,
                            check_kernel<CVT_E5M2_F16X2>, check_kernel<RCP_APPROX>,     check_kernel<DIV_FULL>,
                            check_kernel<DIV_APPROX>,     check_kernel<MUL_FTZ>,        check_kernel<EX2_APPROX>};

struct Spec {
    int check;
    float divisor;
    const char *what, *against;
};

const Spec specs[] = {
    {CVT_E4M3, 0, "cvt.rn.satfinite.e4m3x2.f32", "profile ptx, e4m3fn (qcref device build)"},
    {CVT_E5M2, 0, "cvt.rn.satfinite.e5m2x2.f32", "profile ptx, e5m2"},
    {CVT_BF16, 0, "cvt.rn.bf16.f32", "profile ptx, bf16 (NaN -> 0x7FFF)"},
    {CVT_F16, 0, "cvt.rn.f16.f32", "profile ptx, f16 (NaN -> 0x7FFF)"},
    {CVT_E8M0, 0, "__nv_cvt_float_to_e8m0 (satfinite, rp)", "profile ptx, e8m0 rule ceil"},
    {CVT_E4M3_F16X2, 0, "cvt.rn.satfinite.e4m3x2.f16x2", "profile ptx, e4m3fn of both f16 values"},
    {CVT_E5M2_F16X2, 0, "cvt.rn.satfinite.e5m2x2.f16x2", "profile ptx, e5m2 of both f16 values"},
    {RCP_APPROX, 0, "rcp.approx.ftz.f32", "qcref_rcp_approx_ftz (the measured delta table)"},
    {DIV_FULL, 448, "div.full.f32 x / 448", "mul.rn(x, rcp.approx.ftz(448)) (div mode full)"},
    {DIV_FULL, 240, "div.full.f32 x / 240", "mul.rn(x, rcp.approx.ftz(240))"},
    {DIV_FULL, 224, "div.full.f32 x / 224", "mul.rn(x, rcp.approx.ftz(224))"},
    {DIV_FULL, 6, "div.full.f32 x / 6", "mul.rn(x, rcp.approx.ftz(6))"},
    {DIV_APPROX, 448, "div.approx.ftz.f32 x / 448", "mul.ftz(x, rcp.approx.ftz(448)) (div mode fast; ftz after 24-bit rounding)"},
    {DIV_APPROX, 6, "div.approx.ftz.f32 x / 6", "mul.ftz(x, rcp.approx.ftz(6))"},
    {MUL_FTZ, 0x1.24924ap-9f, "mul.rn.ftz.f32 x * rcp.approx(448)", "qcref_fl32_mul_ftz (flushed when tiny after 24-bit rounding)"},
    {MUL_FTZ, 0x1.555556p-3f, "mul.rn.ftz.f32 x * fl32(1/6)", "qcref_fl32_mul_ftz"},
    {EX2_APPROX, 0, "ex2.approx.ftz.f32",
     "qcref_exp2f (2^x correctly rounded) within 2 ulp, subnormal x and result read as 0 of their sign (ftz)"},
};

qcheck_status fail(qcheck_ctx *ctx, const char *what, cudaError_t e)
{
    snprintf(ctx->msg, ctx->msglen, "%s: %s", what, cudaGetErrorString(e));
    return QCHECK_FAILED;
}

} // namespace

extern "C" qcheck_status qc_cuda_bringup(qcheck_bringup_args *a, qcheck_ctx *ctx)
{
    cudaDeviceProp prop;
    int drv = 0;
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e == cudaSuccess)
        e = cudaGetDeviceProperties(&prop, ctx->device);
    if (e != cudaSuccess)
        return fail(ctx, "cudaGetDeviceProperties", e);
    cudaDriverGetVersion(&drv);
    snprintf(a->device, sizeof a->device, "%.96s (sm_%d%d, %d SMs)", prop.name, prop.major, prop.minor,
             prop.multiProcessorCount);
    snprintf(a->driver, sizeof a->driver, "CUDA driver API %d.%d", drv / 1000, drv % 1000 / 10);
    snprintf(a->toolkit, sizeof a->toolkit, "CUDA runtime %d.%d (built with)", CUDART_VERSION / 1000,
             CUDART_VERSION % 1000 / 10);
    uint8_t *table = nullptr;
    Tally *t = nullptr;
    if ((e = cudaMalloc(&table, QC_RCP_TABLE_BYTES)) != cudaSuccess || (e = cudaMalloc(&t, sizeof *t)) != cudaSuccess ||
        (e = cudaMemcpy(table, qcref_rcp_table(), QC_RCP_TABLE_BYTES, cudaMemcpyHostToDevice)) != cudaSuccess) {
        cudaFree(table);
        return fail(ctx, "device memory for the rcp table", e);
    }
    qc_cast_policy ptx[QC_FORMAT_COUNT];
    const qc_cast_profile *prof = qc_cast_profile_find("ptx");
    for (int f = 0; f < QC_FORMAT_COUNT; f++)
        ptx[f] = qc_cast_profile_policy(prof, (qc_format)f);
    static const qc_format fmt_of[] = {QC_E4M3FN, QC_E5M2, QC_BF16, QC_F16, QC_E8M0, QC_E4M3FN,
                                       QC_E5M2,   QC_F32,  QC_F32,  QC_F32, QC_F32, QC_F32};
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0), cudaEventCreate(&t1);
    qcheck_status st = QCHECK_OK;
    for (size_t s = 0; s < sizeof specs / sizeof specs[0] && a->n < a->max && st == QCHECK_OK; s++) {
        Tally h;
        memset(&h, 0, sizeof h);
        cudaMemcpy(t, &h, sizeof h, cudaMemcpyHostToDevice);
        /* an empty launch first: under lazy module loading a kernel's first launch loads it, and that
         * host time would fall between the events */
        kernels[specs[s].check]<<<1, 32>>>(specs[s].divisor, ptx[fmt_of[specs[s].check]], table, 0, 0, t);
        cudaEventRecord(t0);
        kernels[specs[s].check]<<<prop.multiProcessorCount * 8, 256>>>(specs[s].divisor, ptx[fmt_of[specs[s].check]],
                                                                         table, 0, 1ull << 32, t);
        cudaEventRecord(t1);
        if ((e = cudaEventSynchronize(t1)) != cudaSuccess || (e = cudaGetLastError()) != cudaSuccess ||
            (e = cudaMemcpy(&h, t, sizeof h, cudaMemcpyDeviceToHost)) != cudaSuccess) {
            st = fail(ctx, specs[s].what, e);
            break;
        }
        float ms = 0;
        cudaEventElapsedTime(&ms, t0, t1);
        qcheck_finding *f = &a->findings[a->n++];
        memset(f, 0, sizeof *f);
        snprintf(f->what, sizeof f->what, "%s", specs[s].what);
        snprintf(f->against, sizeof f->against, "%s", specs[s].against);
        f->inputs = 1ull << 32, f->mismatches = h.mismatches, f->device_ms = ms;
        f->nexamples = h.n < 4 ? (int)h.n : 4;
        for (int k = 0; k < f->nexamples; k++)
            f->example_input[k] = h.in[k], f->example_got[k] = h.got[k], f->example_expected[k] = h.want[k];
    }
    cudaEventDestroy(t0), cudaEventDestroy(t1);
    cudaFree(table), cudaFree(t);
    /* The FP8 tensor core against the reference's model of it: Hopper only (the model is sm_90's,
     * and wgmma exists nowhere else). */
    if (st == QCHECK_OK && prop.major == 9 && prop.minor == 0)
        st = qc_cuda_bringup_mma(a, ctx, prop.multiProcessorCount);
    return st;
}
