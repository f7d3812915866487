/* gemm_int8.cu: the gemm op's kind int8_rowwise on the GPU (reference/ops/gemm.h: sgl-kernel's
 * W8A8 int8_scaled_mm_cpu semantics): the s8 x s8 dot of a row of a and a row of b summed exactly
 * in int32 (K <= 65536: no wraparound), then the kernel's fp32 epilogue in its order, v = fl32(dot)
 * fl32 as[m], then fma(v, bs[n], bias[n]) with a bias, else fl32(v bs[n]), then RNE to the output
 * format. Every step is exact or one IEEE rounding, so any device gives the reference's bits.
 * One thread per output, its dot four codes at a time. Any architecture (HIP and the emulation too). */
#include "launch.h"

namespace {

__global__ void int8_kernel(qck_int8_problem p)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.m * p.n; i += step) {
        int64_t r = i / p.n, c = i % p.n;
        const int8_t *a = p.a + r * p.k, *b = p.b + c * p.k;
        int32_t dot = 0;
        for (int64_t k = 0; k < p.k; k++)
            dot += (int32_t)a[k] * (int32_t)b[k];
        float v = qck_mul_rn((float)dot, p.sa[r]); /* int32 -> fp32 rounds to nearest even */
        v = p.bias ? qck_fma_rn(v, p.sb[c], p.bias[c]) : qck_mul_rn(v, p.sb[c]);
        if (p.out == QC_F32)
            static_cast<float *>(p.c)[i] = v;
        else
            static_cast<uint16_t *>(p.c)[i] = (uint16_t)qck_encode(p.out, v, p.outp, nullptr);
    }
}

} // namespace

gpuError_t qck_launch_gemm_int8(const qck_int8_problem *p, int sms, gpuStream_t s)
{
    int64_t n = p->m * p->n, blocks = (n + 255) / 256, cap = (int64_t)(sms > 0 ? sms : 32) * 16;
    if (n > 0)
        QCK_LAUNCH(int8_kernel, (unsigned)(blocks < cap ? blocks : cap), 256, s, *p);
    return gpuGetLastError();
}
