/* gemm_wgmma.cu: the cuda backend's FP8 GEMM on Hopper's tensor core (the gemm slot, kinds
 * fp8_tensor, fp8_rowwise, fp8_block; and the expert GEMMs of the moe slot, grouped), with the K
 * schedules and epilogues of docs/notes/mma_sm90.md:
 *   model sm90-wgmma       the tensor core's sum promoted into fp32 every 4 k-steps (128 of K):
 *                          total += acc (tensor, rowwise), t = fma(acc, fl32(sa sb), t) (block,
 *                          DeepGEMM's promotion);
 *   model sm90-wgmma-fast  the whole K in the tensor core (tensor, rowwise).
 * Epilogue: tensor fl32(fl32(sa sb) total), rowwise fl32(fl32(total sb[n]) sa[m]), then fl32 + bias,
 * then RNE to bf16 / f16 or the fp32 itself. The harness's expected output for these models is
 * reference/ops/gemm.h's qcref_gemm_sm90 / _block: this kernel is checked bit for bit against it.
 *
 * One warpgroup per 64 x 8 output tile (a 1-D grid, n-tiles fastest), one wgmma.m64n8k32 per
 * k-step (A from registers, B from shared memory; wgmma.cuh), operands read straight from global
 * memory with zeros past m, n and K; grouped, a tile's rows are gathered through a_row and its
 * outputs scattered through c_row (launch.h). Written for exactness, not speed. Declines every
 * other model: its accumulation is the tensor core's, which the fp32 bound of model exact does not
 * describe (formats.md §14, §16). sm_90a only (qcbackend_cuda_mma); on another device it declines.
 * The CPU emulation (QCK_EMU) compiles it too, with the model in the instruction's place. */
#include <stdio.h>
#include <string.h>

#include "cuda_ops.h"
#include "launch.h"
#include "ops/gemm.h"
#include "qcheck/qcheck.h"
#include "wgmma.cuh"

namespace {

using qck_wgmma::TK;
using qck_wgmma::TM;
using qck_wgmma::TN;

/* The row of a (or c) that row r of the padded problem reads (writes); -1 past m or padding. */
__device__ __forceinline__ int64_t mapped_row(const qck_gemm_problem &p, const int *map, int64_t r)
{
    return r >= p.m ? -1 : map ? map[r] : r;
}

template <int FA, int FB> __global__ void __launch_bounds__(128) gemm_kernel(qck_gemm_problem p)
{
    __shared__ __align__(128) uint8_t bcore[2][TN][16];
    __shared__ __align__(16) uint8_t as[TM][TK];
    int64_t ntn = (p.n + TN - 1) / TN, m0 = (int64_t)blockIdx.x / ntn * TM, n0 = (int64_t)blockIdx.x % ntn * TN;
    int e = p.tile_expert ? p.tile_expert[m0 / TM] : 0;
    if (e < 0) return; /* an empty tile of the grouped layout: the whole block leaves */
    const uint8_t *b = p.b + e * p.b_stride;
    const float *sb = p.sb + e * p.sb_stride, *bias = p.bias ? p.bias + (int64_t)e * p.n : nullptr;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
    int64_t row[4] = {m0 + warp * 16 + g, m0 + warp * 16 + g, m0 + warp * 16 + g + 8, m0 + warp * 16 + g + 8};
    int64_t col[4] = {n0 + 2 * q, n0 + 2 * q + 1, n0 + 2 * q, n0 + 2 * q + 1}, arow[4];
    for (int i = 0; i < 4; i++) arow[i] = mapped_row(p, p.a_row, row[i]);
    int64_t steps = (p.k + TK - 1) / TK, nblk = (p.k + 127) / 128;
    float acc[4] = {0, 0, 0, 0}, total[4] = {0, 0, 0, 0};
    for (int64_t s = 0; s < steps; s++) {
        int64_t k0 = s * TK;
        for (int i = threadIdx.x; i < TM * TK; i += 128) {
            int64_t r = mapped_row(p, p.a_row, m0 + i / TK), kk = k0 + i % TK;
            as[i / TK][i % TK] = r >= 0 && kk < p.k ? p.a[r * p.k + kk] : 0;
        }
        for (int i = threadIdx.x; i < TN * TK; i += 128) {
            int64_t r = n0 + i / TK, kk = k0 + i % TK;
            bcore[i % TK / 16][i / TK][i % 16] = r < p.n && kk < p.k ? b[r * p.k + kk] : 0;
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
                    int64_t l = s / p.promote, r = arow[i] >= 0 ? arow[i] : 0, c = col[i] < p.n ? col[i] : 0;
                    float sc = qck_mul_rn(p.sa[r * nblk + l], qck_planted_scale(p.plant, sb[c / 128 * nblk + l]));
                    total[i] = qck_fma_rn(acc[i], sc, total[i]);
                } else {
                    total[i] = qck_add_rn(total[i], acc[i]);
                }
                acc[i] = 0.0f;
            }
        }
    }
    for (int i = 0; i < 4; i++) {
        int64_t cr = mapped_row(p, p.c_row, row[i]);
        if (cr < 0 || arow[i] < 0 || col[i] >= p.n) continue;
        float t = p.promote ? total[i] : acc[i], v;
        if (p.kind == QC_GEMM_FP8_TENSOR) v = qck_mul_rn(qck_mul_rn(p.sa[0], qck_planted_scale(p.plant, sb[0])), t);
        else if (p.kind == QC_GEMM_FP8_ROWWISE) v = qck_mul_rn(qck_mul_rn(t, qck_planted_scale(p.plant, sb[col[i]])), p.sa[arow[i]]);
        else v = t;
        if (bias) v = qck_add_rn(v, bias[col[i]]);
        int64_t at = cr * p.n + col[i];
        if (p.out == QC_F32) static_cast<float *>(p.c)[at] = v;
        else static_cast<uint16_t *>(p.c)[at] = (uint16_t)qck_half_code(p.out, p.outp, p.plant, v);
    }
}

typedef void (*gemm_fn)(qck_gemm_problem);
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
            char what[384];
            if (op[s]->form != QCHECK_FORM_QUANTIZED || !j)
                snprintf(why, n, "operand %c is not in the quantized form", side);
            else if ((int)j->recipe != (s ? want_b : want_a))
                snprintf(why, n, "operand %c recipe %s", side, qc_recipe_name(j->recipe));
            else if (qck_wgmma_spec_declines(j, what, sizeof what))
                snprintf(why, n, "operand %c: %s", side, what);
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

qcheck_status cuda_fail(qcheck_ctx *ctx, const char *what, gpuError_t e)
{
    (void)gpuGetLastError();
    return qcheck_say(ctx, QCHECK_FAILED, "cuda gemm: %s: %s (%s)", what, gpuGetErrorName(e), gpuGetErrorString(e));
}

} // namespace

gpuError_t qck_launch_gemm_wgmma(const qck_gemm_problem *p, int a_e5m2, int b_e5m2, gpuStream_t s)
{
    int64_t tiles = (p->m + TM - 1) / TM * ((p->n + TN - 1) / TN);
    if (tiles == 0) return gpuSuccess;
    QCK_LAUNCH(kernels[a_e5m2 * 2 + b_e5m2], (unsigned)tiles, 128, s, *p);
    return gpuGetLastError();
}

extern "C" const char *qck_wgmma_spec_declines(const qcheck_quant_spec *j, char *why, size_t n)
{
    if (j->policy.elem != QC_E4M3FN && j->policy.elem != QC_E5M2)
        snprintf(why, n, "%s elements %s (wgmma: e4m3fn, e5m2)", qc_recipe_name(j->recipe), qc_format_name(j->policy.elem));
    else if (j->recipe == QC_RECIPE_TOKEN_GROUP && (j->policy.group != 128 || j->layout != QC_SL_ROW))
        snprintf(why, n, "token groups of %d, scale_layout=%s (cuda: 128, row)", j->policy.group,
                 qc_scale_layout_name(j->layout));
    else if (j->recipe == QC_RECIPE_BLOCK && (j->policy.block_r != 128 || j->policy.block_c != 128))
        snprintf(why, n, "blocks of %dx%d (cuda: 128x128)", j->policy.block_r, j->policy.block_c);
    else if (j->has_sf_layout)
        snprintf(why, n, "%s scales through a layout map (cuda: the canonical layout)", qc_recipe_name(j->recipe));
    else
        return NULL;
    return why;
}

/* NULL when this device runs wgmma, else why not (the reason in why). */
extern "C" const char *qck_wgmma_unsupported(int device, char *why, size_t n)
{
    gpuDeviceProp prop;
    gpuError_t e = gpuGetDeviceProperties(&prop, device);
    if (e != gpuSuccess)
        snprintf(why, n, "cudaGetDeviceProperties: %s (%s)", gpuGetErrorName(e), gpuGetErrorString(e));
    else if (prop.major != 9 || prop.minor != 0)
        snprintf(why, n, "sm_%d%d; wgmma (and model sm90-wgmma) is sm_90's", prop.major, prop.minor);
    else
        return NULL;
    return why;
}

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
    gpuError_t e = gpuSetDevice(ctx->device);
    if (e != gpuSuccess) return cuda_fail(ctx, "cudaSetDevice", e);
    if (qck_wgmma_unsupported(ctx->device, why, sizeof why))
        return qcheck_say(ctx, QCHECK_DECLINED, "cuda gemm: %s", why);
    qck_gemm_problem p = {};
    p.m = a->m, p.n = a->n, p.k = a->k, p.kind = a->kind, p.out = a->out, p.outp = qcref_default_policy();
    p.plant = qck_plant;
    p.promote = strcmp(a->model, "sm90-wgmma-fast") ? 4 : 0;
    if (a->kind == QC_GEMM_FP8_BLOCK && !p.promote)
        return qcheck_say(ctx, QCHECK_DECLINED, "cuda gemm: fp8_block is promoted every 128 of K (model sm90-wgmma)");
    size_t sizes[6] = {a->a.codes.nbytes, a->b.codes.nbytes, na * 4, nb * 4, a->bias.data ? a->bias.nbytes : 0, csize};
    const void *src[5] = {a->a.codes.data, a->b.codes.data, a->a.scale.data, a->b.scale.data, a->bias.data};
    void *d[6] = {};
    for (int i = 0; i < 6 && e == gpuSuccess; i++)
        if (sizes[i]) {
            e = gpuMalloc(&d[i], sizes[i]);
            if (e == gpuSuccess && i < 5) e = gpuMemcpy(d[i], src[i], sizes[i], gpuMemcpyHostToDevice);
        }
    if (e == gpuSuccess) {
        p.a = (const uint8_t *)d[0], p.b = (const uint8_t *)d[1], p.sa = (const float *)d[2], p.sb = (const float *)d[3];
        p.bias = (const float *)d[4], p.c = d[5];
        e = qck_launch_gemm_wgmma(&p, a->a.spec->policy.elem == QC_E5M2, a->b.spec->policy.elem == QC_E5M2, 0);
        if (e == gpuSuccess) e = gpuMemcpy(a->c.data, d[5], csize, gpuMemcpyDeviceToHost);
    }
    for (int i = 0; i < 6; i++)
        if (d[i]) (void)gpuFree(d[i]);
    return e == gpuSuccess ? QCHECK_OK : cuda_fail(ctx, "kernel or copy", e);
}
