/* gemm_wgmma.cu: the cuda backend's FP8 GEMM (the gemm slot, kinds fp8_tensor, fp8_rowwise,
 * fp8_block) on Hopper's tensor core, with the K schedules and epilogues of docs/notes/mma_sm90.md:
 *   model sm90-wgmma       the tensor core's sum promoted into fp32 every 4 k-steps (128 of K):
 *                          total += acc (tensor, rowwise), t = fma(acc, fl32(sa sb), t) (block,
 *                          DeepGEMM's promotion);
 *   model sm90-wgmma-fast  the whole K in the tensor core (tensor, rowwise).
 * Epilogue: tensor fl32(fl32(sa sb) total), rowwise fl32(fl32(total sb[n]) sa[m]), then fl32 + bias,
 * then RNE to bf16 / f16 or the fp32 itself. The harness's expected output for these models is
 * reference/ops/gemm.h's qcref_gemm_sm90 / _block: this kernel is checked bit for bit against it.
 *
 * One warpgroup per 64 x 8 output tile, one wgmma.m64n8k32 per k-step (A from registers, B from
 * shared memory; wgmma.cuh), operands read straight from global memory with zeros past m, n and
 * K. Written for exactness, not speed. Declines every other model: its accumulation is the tensor
 * core's, which the fp32 bound of model exact does not describe (formats.md §14, §16). sm_90a only
 * (qcbackend_cuda_mma); on another device it declines. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include "cuda_ops.h"
#include "ops/gemm.h"
#include "qcheck/qcheck.h"
#include "wgmma.cuh"

namespace {

using qck_wgmma::TK;
using qck_wgmma::TM;
using qck_wgmma::TN;

struct Problem {
    const uint8_t *a, *b; /* [m, k], [n, k] codes */
    const float *sa, *sb; /* the kind's scales (canonical layouts) */
    const float *bias;    /* [n] or null */
    void *c;
    int64_t m, n, k;
    int kind, promote, out; /* qc_gemm_kind; k-steps between promotions (0: none); qc_format */
};

template <int FA, int FB> __global__ void __launch_bounds__(128) gemm_kernel(Problem p)
{
    __shared__ __align__(128) uint8_t bcore[2][TN][16];
    __shared__ __align__(16) uint8_t as[TM][TK];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
    int64_t m0 = (int64_t)blockIdx.y * TM, n0 = (int64_t)blockIdx.x * TN;
    int64_t row[4] = {m0 + warp * 16 + g, m0 + warp * 16 + g, m0 + warp * 16 + g + 8, m0 + warp * 16 + g + 8};
    int64_t col[4] = {n0 + 2 * q, n0 + 2 * q + 1, n0 + 2 * q, n0 + 2 * q + 1};
    int64_t steps = (p.k + TK - 1) / TK, nblk = (p.k + 127) / 128;
    float acc[4] = {0, 0, 0, 0}, total[4] = {0, 0, 0, 0};
    for (int64_t s = 0; s < steps; s++) {
        int64_t k0 = s * TK;
        for (int i = threadIdx.x; i < TM * TK; i += 128) {
            int64_t r = m0 + i / TK, kk = k0 + i % TK;
            as[i / TK][i % TK] = r < p.m && kk < p.k ? p.a[r * p.k + kk] : 0;
        }
        for (int i = threadIdx.x; i < TN * TK; i += 128) {
            int64_t r = n0 + i / TK, kk = k0 + i % TK;
            bcore[i % TK / 16][i / TK][i % 16] = r < p.n && kk < p.k ? p.b[r * p.k + kk] : 0;
        }
        qck_wgmma::proxy_fence();
        __syncthreads();
        uint32_t a[4];
        qck_wgmma::load_a(as, warp, lane, a);
        qck_wgmma::fence();
        qck_wgmma::mma<FA, FB>(acc, a, qck_wgmma::b_desc(bcore));
        qck_wgmma::commit_wait(acc);
        __syncthreads(); /* the tiles are rewritten next step */
        if (p.promote && ((s + 1) % p.promote == 0 || s + 1 == steps)) {
            for (int i = 0; i < 4; i++) {
                if (p.kind == QC_GEMM_FP8_BLOCK) {
                    int64_t l = s / p.promote, r = row[i] < p.m ? row[i] : 0, c = col[i] < p.n ? col[i] : 0;
                    float sc = __fmul_rn(p.sa[r * nblk + l], p.sb[c / 128 * nblk + l]);
                    total[i] = __fmaf_rn(acc[i], sc, total[i]);
                } else {
                    total[i] = __fadd_rn(total[i], acc[i]);
                }
                acc[i] = 0.0f;
            }
        }
    }
    for (int i = 0; i < 4; i++) {
        if (row[i] >= p.m || col[i] >= p.n) continue;
        float t = p.promote ? total[i] : acc[i], v;
        if (p.kind == QC_GEMM_FP8_TENSOR) v = __fmul_rn(__fmul_rn(p.sa[0], p.sb[0]), t);
        else if (p.kind == QC_GEMM_FP8_ROWWISE) v = __fmul_rn(__fmul_rn(t, p.sb[col[i]]), p.sa[row[i]]);
        else v = t;
        if (p.bias) v = __fadd_rn(v, p.bias[col[i]]);
        int64_t e = row[i] * p.n + col[i];
        if (p.out == QC_F32) static_cast<float *>(p.c)[e] = v;
        else if (p.out == QC_BF16) static_cast<__nv_bfloat16 *>(p.c)[e] = __float2bfloat16_rn(v);
        else static_cast<__half *>(p.c)[e] = __float2half_rn(v);
    }
}

typedef void (*gemm_fn)(Problem);
const gemm_fn kernels[4] = {gemm_kernel<0, 0>, gemm_kernel<0, 1>, gemm_kernel<1, 0>, gemm_kernel<1, 1>};

/* What this kernel does not implement, or NULL. */
const char *declines(const qcheck_gemm_args *a, char *why, size_t n)
{
    int want_a = a->kind == QC_GEMM_FP8_TENSOR ? QC_RECIPE_TENSOR : a->kind == QC_GEMM_FP8_ROWWISE ? QC_RECIPE_TOKEN
                                                                                                   : QC_RECIPE_TOKEN_GROUP;
    int want_b = a->kind == QC_GEMM_FP8_TENSOR ? QC_RECIPE_TENSOR : a->kind == QC_GEMM_FP8_ROWWISE ? QC_RECIPE_TOKEN
                                                                                                   : QC_RECIPE_BLOCK;
    const char *model = a->model ? a->model : "exact";
    if (a->kind != QC_GEMM_FP8_TENSOR && a->kind != QC_GEMM_FP8_ROWWISE && a->kind != QC_GEMM_FP8_BLOCK)
        snprintf(why, n, "gemm kind %s (cuda: fp8_tensor, fp8_rowwise, fp8_block)",
                 qcref_gemm_kind(a->kind) ? qcref_gemm_kind(a->kind)->name : "?");
    else if (strcmp(model, "sm90-wgmma") && strcmp(model, "sm90-wgmma-fast"))
        snprintf(why, n, "model %s: this GEMM accumulates in the tensor core, which is model sm90-wgmma[-fast] bit for "
                 "bit and outside the fp32 bound of the others (docs/notes/mma_sm90.md)", model);
    else if (a->out != QC_BF16 && a->out != QC_F16 && a->out != QC_F32)
        snprintf(why, n, "out %s (cuda gemm: bf16, f16, f32)", qc_format_name(a->out));
    else {
        const qcheck_gemm_operand *op[2] = {&a->a, &a->b};
        for (int s = 0; s < 2; s++) {
            const qcheck_quant_spec *j = op[s]->spec;
            char side = s ? 'b' : 'a';
            if (op[s]->form != QCHECK_FORM_QUANTIZED || !j)
                snprintf(why, n, "operand %c is not in the quantized form", side);
            else if ((int)j->recipe != (s ? want_b : want_a))
                snprintf(why, n, "operand %c recipe %s", side, qc_recipe_name(j->recipe));
            else if (j->policy.elem != QC_E4M3FN && j->policy.elem != QC_E5M2)
                snprintf(why, n, "operand %c elements %s (wgmma: e4m3fn, e5m2)", side, qc_format_name(j->policy.elem));
            else if (j->recipe == QC_RECIPE_TOKEN_GROUP && (j->policy.group != 128 || j->layout != QC_SL_ROW))
                snprintf(why, n, "operand a: groups of %d, scale_layout=%s (cuda gemm: 128, row)", j->policy.group,
                         qc_scale_layout_name(j->layout));
            else if (j->recipe == QC_RECIPE_BLOCK && (j->policy.block_r != 128 || j->policy.block_c != 128))
                snprintf(why, n, "operand b blocks of %dx%d (cuda gemm: 128x128)", j->policy.block_r, j->policy.block_c);
            else if (j->has_sf_layout)
                snprintf(why, n, "operand %c scales through a layout map (cuda gemm: the canonical layout)", side);
            else
                continue;
            return why;
        }
        return NULL;
    }
    return why;
}

/* The scale floats of one side for the kind's canonical layout. */
size_t scale_floats(const qcheck_gemm_args *a, char side)
{
    size_t l = (size_t)(a->k + 127) / 128;
    if (a->kind == QC_GEMM_FP8_TENSOR) return 1;
    if (a->kind == QC_GEMM_FP8_ROWWISE) return (size_t)(side == 'a' ? a->m : a->n);
    return side == 'a' ? (size_t)a->m * l : (size_t)(a->n + 127) / 128 * l;
}

qcheck_status cuda_fail(qcheck_ctx *ctx, const char *what, cudaError_t e)
{
    (void)cudaGetLastError();
    return qcheck_say(ctx, QCHECK_FAILED, "cuda gemm: %s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

} // namespace

extern "C" qcheck_status qc_cuda_gemm(const qcheck_gemm_args *a, qcheck_ctx *ctx)
{
    char why[512];
    if (declines(a, why, sizeof why)) return qcheck_say(ctx, QCHECK_DECLINED, "%s", why);
    size_t es = a->out == QC_F32 ? 4 : 2, csize = (size_t)(a->m * a->n) * es;
    size_t na = scale_floats(a, 'a'), nb = scale_floats(a, 'b');
    if (a->a.codes.nbytes != (size_t)(a->m * a->k) || a->b.codes.nbytes != (size_t)(a->n * a->k) ||
        a->a.scale.nbytes != na * 4 || a->b.scale.nbytes != nb * 4 || a->c.nbytes != csize ||
        (a->bias.data && a->bias.nbytes != (size_t)a->n * 4))
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "cuda gemm: tensor sizes do not match m=%lld n=%lld k=%lld",
                          (long long)a->m, (long long)a->n, (long long)a->k);
    if (a->m == 0 || a->n == 0) return QCHECK_OK;
    cudaDeviceProp prop;
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, ctx->device);
    if (e != cudaSuccess) return cuda_fail(ctx, "cudaGetDeviceProperties", e);
    if (prop.major != 9 || prop.minor != 0)
        return qcheck_say(ctx, QCHECK_DECLINED, "cuda gemm: sm_%d%d; wgmma (and this model) is sm_90's", prop.major,
                          prop.minor);
    Problem p = {};
    p.m = a->m, p.n = a->n, p.k = a->k, p.kind = a->kind, p.out = a->out;
    p.promote = strcmp(a->model, "sm90-wgmma-fast") ? 4 : 0;
    if (a->kind == QC_GEMM_FP8_BLOCK && !p.promote)
        return qcheck_say(ctx, QCHECK_DECLINED, "cuda gemm: fp8_block is promoted every 128 of K (model sm90-wgmma)");
    size_t sizes[6] = {a->a.codes.nbytes, a->b.codes.nbytes, na * 4, nb * 4, a->bias.data ? a->bias.nbytes : 0, csize};
    const void *src[5] = {a->a.codes.data, a->b.codes.data, a->a.scale.data, a->b.scale.data, a->bias.data};
    void *d[6] = {};
    for (int i = 0; i < 6 && e == cudaSuccess; i++)
        if (sizes[i]) {
            e = cudaMalloc(&d[i], sizes[i]);
            if (e == cudaSuccess && i < 5) e = cudaMemcpy(d[i], src[i], sizes[i], cudaMemcpyHostToDevice);
        }
    if (e == cudaSuccess) {
        p.a = (const uint8_t *)d[0], p.b = (const uint8_t *)d[1], p.sa = (const float *)d[2], p.sb = (const float *)d[3];
        p.bias = (const float *)d[4], p.c = d[5];
        int fa = a->a.spec->policy.elem == QC_E5M2, fb = a->b.spec->policy.elem == QC_E5M2;
        dim3 grid((unsigned)((a->n + TN - 1) / TN), (unsigned)((a->m + TM - 1) / TM));
        kernels[fa * 2 + fb]<<<grid, 128>>>(p);
        e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaMemcpy(a->c.data, d[5], csize, cudaMemcpyDeviceToHost);
    }
    for (int i = 0; i < 6; i++)
        if (d[i]) cudaFree(d[i]);
    return e == cudaSuccess ? QCHECK_OK : cuda_fail(ctx, "kernel or copy", e);
}
