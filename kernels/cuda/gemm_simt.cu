/* gemm_simt.cu: the gemm op's bound models on CUDA cores (models exact, grouped, sgl-cpu; kinds
 * fp8_tensor, fp8_rowwise, fp8_block, mxfp8, mxfp4_bf16, nvfp4), on any GPU (HIP and the CPU
 * emulation too). The harness checks these models against the fp64 product within the fp32 bound
 * of reference/ops/gemm.h (qcref_gemm_bound with qcref_gemm_bound_k's K): every term may pass
 * through K + 4 roundings (exact, sgl-cpu: K products and sums in any order, two scale products,
 * alpha, bias), or group_k + ceil(K / group_k) + 4 (grouped). This kernel's order, per output:
 *   - per K block of the kind's group_k (fp8_block 128, mxfp8 and mxfp4_bf16 32, nvfp4 16; all of
 *     K for fp8_tensor and fp8_rowwise), the products of the decoded codes summed from zero in K
 *     order. A product of two codes (fp8, e2m1, bf16 x e2m1: at most 8 + 2 significant bits) is
 *     exact in fp32, so only the sums round: group_k - 1;
 *   - the block's scales left to right, fl32(fl32(p sa) sb) (formats.md §9.1 and §9.2), but
 *     fl32(fl32(sa sb) p) for fp8_tensor (formats.md §9.2); then the L = ceil(K / group_k)
 *     partials summed in K order: L - 1 more;
 *   - nvfp4: fl32(fl32(gs_a gs_b) total) (formats.md §9.3); + bias; RNE to bf16 / f16, or the fp32.
 *   That is at most group_k + L + 2 roundings per term, and the reference's own dequantization
 *   fl32(code scale) of each operand (exact for power-of-two scales) at most 2 more: inside both
 *   bounds (for fp8_tensor / fp8_rowwise, K - 1 + 2 + 1 + 2 = K + 4 exactly).
 * Model sgl-cpu (sgl-kernel's CPU w8a16, docs/spec/layouts.md §7): bf16 activations; each weight
 * dequantized fl32(code scale) and rounded to bf16 (RNE), as op_gemm.c's reference does; the bf16
 * products exact in fp32 (an underflow is one of the bound's 2^-149 terms); one fp32 sum over K in
 * order, + bias: K + 1 roundings, the weights being the reference's own values.
 * Where every partial sum is exact (integer data, power-of-two scales: qcref_gemm_exact_grid) the
 * harness's bound is 0: the accumulator then holds the exact value and its one RNE rounding to out
 * must give the reference's bits, which a misread scale or a rounding toward zero breaks.
 * Range: as in the real kernels (Triton's acc * a_s * b_s), a partial or its product with the
 * activation scale can overflow fp32 where the fp64 reference stays finite; that needs activations
 * above about 2^100 (K * 448 * |a| > 2^128), which no case comes near.
 * The MoE's model exact (exact = 1, runtime.cu moe_gemm_exact): the products of the dequantized
 * operands and the bias summed exactly and rounded once (exact_sum.cuh), the value the
 * op's reference defines h by (reference/exact/exact.h qcx_gemm_rn32), through the MoE's row maps.
 * One thread per output, operands straight from global memory: written for clarity, not speed.
 * No contraction (--fmad=false, and the explicit qck_mul_rn / qck_add_rn of numerics.cuh). */
#include <stdio.h>
#include <string.h>

#include "cuda_ops.h"
#include "exact_sum.cuh"
#include "launch.h"
#include "ops/gemm.h"
#include "qcheck/qcheck.h"

namespace qck_simt {

/* Element k of row r, decoded exactly (formats.md §1.1, §3.1: every code is an fp32 value). */
__device__ __forceinline__ float element(const qck_simt_operand &o, int64_t r, int64_t k, int64_t K)
{
    int64_t e = r * K + k;
    uint32_t code;
    if (o.fp4)
        code = (uint32_t)(o.codes[e >> 1] >> ((e & 1) * 4)) & 0xFu; /* element 2i in the low nibble */
    else if (o.fmt.bits == 16)
        code = reinterpret_cast<const uint16_t *>(o.codes)[e];
    else
        code = o.codes[e];
    return qck_decode_minifloat(o.fmt, code);
}

/* The scale of element (r, k) (launch.h's indexing); 1 for an operand without scales. */
__device__ __forceinline__ float scale_at(const qck_simt_operand &o, int64_t r, int64_t k)
{
    int64_t i = (o.rows_per_scale ? r / o.rows_per_scale : 0) * o.scales_per_row + (o.k_per_scale ? k / o.k_per_scale : 0);
    switch (o.scale_kind) {
    case QCK_SS_F32: return static_cast<const float *>(o.scale)[i];
    case QCK_SS_E8M0: return qck_e8m0_decode(static_cast<const uint8_t *>(o.scale)[i], o.dec);
    case QCK_SS_E4M3: return qck_decode_minifloat(qck_format(QC_E4M3FN), static_cast<const uint8_t *>(o.scale)[i]);
    default: return 1.0f;
    }
}

/* A weight scale as the kernel reads it: itself, or one ulp larger under the gate's planted bug. */
__device__ __forceinline__ float weight_scale(const qck_simt_problem &p, int64_t r, int64_t k)
{
    return qck_planted_scale(p.plant, scale_at(p.b, r, k));
}

/* The K block [k0, k1) of output (i, j): its exact products summed in fp32, times its scales. */
__device__ float scaled_block(const qck_simt_problem &p, int64_t i, int64_t j, int64_t k0, int64_t k1)
{
    float part = 0.0f;
    for (int64_t k = k0; k < k1; k++)
        part = qck_add_rn(part, qck_mul_rn(element(p.a, i, k, p.k), element(p.b, j, k, p.k)));
    float sa = scale_at(p.a, i, k0), sb = weight_scale(p, j, k0);
    if (p.tensor_scales)
        return qck_mul_rn(qck_mul_rn(sa, sb), part);
    if (p.a.scale_kind != QCK_SS_NONE)
        part = qck_mul_rn(part, sa);
    return qck_mul_rn(part, sb);
}

/* Models exact and grouped: the scaled partials of the K blocks summed in K order. */
__device__ float blocked_dot(const qck_simt_problem &p, int64_t i, int64_t j)
{
    float total = 0.0f;
    for (int64_t k0 = 0; k0 < p.k; k0 += p.kblock)
        total = qck_add_rn(total, scaled_block(p, i, j, k0, k0 + p.kblock < p.k ? k0 + p.kblock : p.k));
    return total;
}

/* Model sgl-cpu's weight: fl32(code scale) rounded to bf16 (RNE; op_gemm.c dequantize_operand). */
__device__ __forceinline__ float bf16_weight(const qck_simt_problem &p, int64_t j, int64_t k)
{
    float w = qck_mul_rn(element(p.b, j, k, p.k), weight_scale(p, j, k));
    return qck_decode(QC_BF16, qck_encode(QC_BF16, w, p.outp, nullptr), p.outp);
}

__device__ float bf16_dot(const qck_simt_problem &p, int64_t i, int64_t j)
{
    float acc = 0.0f;
    for (int64_t k = 0; k < p.k; k++)
        acc = qck_add_rn(acc, qck_mul_rn(element(p.a, i, k, p.k), bf16_weight(p, j, k)));
    return acc;
}

/* Model exact of the MoE: the operands dequantized as the reference does, fl32(code scale)
 * (reference/ops/gemm.h qcref_operand_f64; NVFP4's then times its global scale, exact in fp64),
 * their products and the bias summed exactly, one rounding. */
__device__ float exact_dot(const qck_simt_problem &p, int64_t i, int64_t j)
{
    double ga = p.ga ? *p.ga : 1.0, gb = p.gb ? *p.gb : 1.0;
    qck_exact_sum s;
    qck_xs_init(&s);
    for (int64_t k = 0; k < p.k; k++) {
        double x = (double)qck_mul_rn(element(p.a, i, k, p.k), scale_at(p.a, i, k)) * ga;
        double w = (double)qck_mul_rn(element(p.b, j, k, p.k), weight_scale(p, j, k)) * gb;
        qck_xs_add_product(&s, x, w);
    }
    if (p.bias)
        qck_xs_add(&s, p.bias[j]);
    return qck_xs_round_f32(&s);
}

/* Output (i, j) in fp32 under the problem's model. */
__device__ float dot(const qck_simt_problem &p, int64_t i, int64_t j)
{
    if (p.exact)
        return exact_dot(p, i, j);
    float v = p.bf16_weights ? bf16_dot(p, i, j) : blocked_dot(p, i, j);
    if (p.has_alpha)
        v = qck_mul_rn(qck_mul_rn(p.gsa, p.gsb), v);
    return p.bias ? qck_add_rn(v, p.bias[j]) : v;
}

__global__ void simt_kernel(qck_simt_problem p)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < p.m * p.n; e += step) {
        int64_t i = e / p.n, j = e % p.n, ai = p.a_row ? p.a_row[i] : i, at = (p.c_row ? p.c_row[i] : i) * p.n + j;
        if (ai < 0)
            continue; /* a padding row of the MoE's expert layout */
        float v = dot(p, ai, j);
        if (p.out == QC_F32)
            static_cast<float *>(p.c)[at] = v;
        else
            static_cast<uint16_t *>(p.c)[at] = (uint16_t)qck_half_code(p.out, p.outp, p.plant, v);
    }
}

/* ---- host: which calls this kernel takes, and the operands' byte sizes ---- */

/* The sizes one operand's tensors must have. */
struct sizes {
    size_t codes, scale;
};

const char *bf16_operand(const qcheck_gemm_operand *v, char side, int64_t rows, int64_t k, qck_simt_operand *o,
                         sizes *z, char *why, size_t n)
{
    if (v->form != QCHECK_FORM_BF16) {
        snprintf(why, n, "operand %c is not in the bf16 form (the activations of model sgl-cpu and kind mxfp4_bf16)", side);
        return why;
    }
    *o = qck_simt_operand{};
    o->fmt = qck_format(QC_BF16), o->scale_kind = QCK_SS_NONE;
    *z = sizes{(size_t)(rows * k) * 2, 0};
    return NULL;
}

/* The scale grid of a quantized operand (recipes.h's canonical layouts), or why not taken. group_k:
 * the kind's K per scale, which the blocked sum relies on. */
const char *scale_grid(const qcheck_quant_spec *j, int group_k, int64_t rows, int64_t k, qck_simt_operand *o,
                       size_t *count, char *why, size_t n)
{
    const qc_recipe_policy &q = j->policy;
    o->scale_kind = QCK_SS_F32, o->rows_per_scale = 1;
    switch (j->recipe) {
    case QC_RECIPE_TENSOR: o->rows_per_scale = 0, o->scales_per_row = 1, *count = 1; return NULL;
    case QC_RECIPE_TOKEN: o->scales_per_row = 1, *count = (size_t)rows; return NULL;
    case QC_RECIPE_TOKEN_GROUP:
        if (q.group != group_k || j->layout != QC_SL_ROW)
            break;
        o->k_per_scale = q.group, o->scales_per_row = (k + q.group - 1) / q.group;
        *count = (size_t)(rows * o->scales_per_row);
        return NULL;
    case QC_RECIPE_BLOCK:
        if (q.block_r != 128 || q.block_c != group_k)
            break;
        o->rows_per_scale = q.block_r, o->k_per_scale = q.block_c, o->scales_per_row = (k + q.block_c - 1) / q.block_c;
        *count = (size_t)((rows + q.block_r - 1) / q.block_r * o->scales_per_row);
        return NULL;
    default: /* mx, nvfp4: a byte per 1 x group, row-major [rows, k / group] */
        if (q.group != group_k || k % group_k)
            break;
        o->scale_kind = j->recipe == QC_RECIPE_NVFP4 ? QCK_SS_E4M3 : QCK_SS_E8M0;
        o->k_per_scale = q.group, o->scales_per_row = k / q.group, *count = (size_t)(rows * o->scales_per_row);
        return NULL;
    }
    snprintf(why, n, "%s scales of group %d, blocks %dx%d, scale_layout=%s with k=%lld (cuda gemm: the kind's K group "
             "of %d, 128x128 blocks, row layout)", qc_recipe_name(j->recipe), q.group, q.block_r, q.block_c,
             qc_scale_layout_name(j->layout), (long long)k, group_k);
    return why;
}

const char *quantized_operand(const qcheck_gemm_operand *v, char side, int want, int group_k, int64_t rows, int64_t k,
                              qck_simt_operand *o, sizes *z, char *why, size_t n)
{
    const qcheck_quant_spec *j = v->spec;
    char what[384];
    size_t count = 0;
    *o = qck_simt_operand{};
    if (v->form != QCHECK_FORM_QUANTIZED || !j)
        snprintf(why, n, "operand %c is not in the quantized form", side);
    else if ((int)j->recipe != want)
        snprintf(why, n, "operand %c recipe %s (the kind's is %s)", side, qc_recipe_name(j->recipe),
                 qc_recipe_name((qc_recipe)want));
    else if (qck_format(j->policy.elem).bits == 0 || qck_format(j->policy.elem).bits > 8)
        snprintf(why, n, "operand %c elements %s (cuda gemm: minifloats of up to 8 bits)", side,
                 qc_format_name(j->policy.elem));
    else if (j->has_sf_layout)
        snprintf(why, n, "operand %c: %s scales through a layout map (cuda gemm: the canonical layout)", side,
                 qc_recipe_name(j->recipe));
    else if (scale_grid(j, group_k, rows, k, o, &count, what, sizeof what))
        snprintf(why, n, "operand %c: %s", side, what);
    else {
        o->fmt = qck_format(j->policy.elem), o->fp4 = j->policy.elem == QC_E2M1, o->dec = j->policy.dequant_e8m0;
        *z = sizes{o->fp4 ? (size_t)(rows * k + 1) / 2 : (size_t)(rows * k), count * (o->scale_kind == QCK_SS_F32 ? 4 : 1)};
        return NULL;
    }
    return why;
}

/* Fills p from a call (the device pointers aside), or says why this kernel does not take it. */
const char *setup(const qcheck_gemm_args *a, qck_simt_problem *p, sizes *za, sizes *zb, char *why, size_t n)
{
    const qc_gemm_kind_info *ki = qcref_gemm_kind(a->kind);
    const char *model = a->model ? a->model : "exact";
    int cpu = !strcmp(model, "sgl-cpu");
    if (!ki || a->kind == QC_GEMM_INT8_ROWWISE)
        snprintf(why, n, "gemm kind %s (cuda cores: fp8_tensor, fp8_rowwise, fp8_block, mxfp8, mxfp4_bf16, nvfp4)",
                 ki ? ki->name : "?");
    else if (!cpu && strcmp(model, "exact") && strcmp(model, "grouped"))
        snprintf(why, n, "model %s (cuda: exact, grouped, sgl-cpu on CUDA cores; sm90-wgmma[-fast] on wgmma)", model);
    else if (a->out != QC_BF16 && a->out != QC_F16 && a->out != QC_F32)
        snprintf(why, n, "out %s (cuda gemm: bf16, f16, f32)", qc_format_name(a->out));
    else {
        int a_bf16 = cpu || ki->recipe_a < 0; /* the form op_gemm.c gives: bf16 for these, else quantized */
        if (a_bf16 ? bf16_operand(&a->a, 'a', a->m, a->k, &p->a, za, why, n)
                   : quantized_operand(&a->a, 'a', ki->recipe_a, ki->group_k, a->m, a->k, &p->a, za, why, n))
            return why;
        if (quantized_operand(&a->b, 'b', (int)ki->recipe_b, ki->group_k, a->n, a->k, &p->b, zb, why, n))
            return why;
        p->m = a->m, p->n = a->n, p->k = a->k, p->out = a->out, p->outp = qcref_default_policy();
        p->kblock = ki->group_k > 0 ? ki->group_k : a->k > 0 ? a->k : 1;
        p->tensor_scales = a->kind == QC_GEMM_FP8_TENSOR, p->bf16_weights = cpu;
        p->has_alpha = a->kind == QC_GEMM_NVFP4, p->plant = qck_plant;
        return NULL;
    }
    return why;
}

/* Every tensor of the call has the size setup derived, or why not. */
const char *check_sizes(const qcheck_gemm_args *a, const qck_simt_problem &p, const sizes &za, const sizes &zb,
                        char *why, size_t n)
{
    size_t c = (size_t)(a->m * a->n) * (a->out == QC_F32 ? 4 : 2);
    int gs = p.has_alpha && (a->a.gscale.nbytes != 4 || a->b.gscale.nbytes != 4);
    if (a->a.codes.nbytes != za.codes || a->a.scale.nbytes != za.scale || a->b.codes.nbytes != zb.codes ||
        a->b.scale.nbytes != zb.scale || a->c.nbytes != c || (a->bias.data && a->bias.nbytes != (size_t)a->n * 4) || gs) {
        snprintf(why, n, "cuda gemm (CUDA cores): tensor sizes do not match m=%lld n=%lld k=%lld (codes %zu + %zu, "
                 "scales %zu + %zu bytes expected)", (long long)a->m, (long long)a->n, (long long)a->k, za.codes,
                 zb.codes, za.scale, zb.scale);
        return why;
    }
    return NULL;
}

qcheck_status device_fail(qcheck_ctx *ctx, const char *what, gpuError_t e)
{
    (void)gpuGetLastError();
    return qcheck_say(ctx, QCHECK_FAILED, "cuda gemm (CUDA cores): %s: %s (%s)", what, gpuGetErrorName(e),
                      gpuGetErrorString(e));
}

/* Copies the inputs, runs the kernel, copies c back; every buffer freed. */
gpuError_t run(const qcheck_gemm_args *a, qck_simt_problem *p, int device)
{
    size_t size[6] = {a->a.codes.nbytes, a->a.scale.nbytes, a->b.codes.nbytes, a->b.scale.nbytes,
                      a->bias.data ? a->bias.nbytes : 0, a->c.nbytes};
    const void *src[5] = {a->a.codes.data, a->a.scale.data, a->b.codes.data, a->b.scale.data, a->bias.data};
    void *d[6] = {};
    int sms = 0;
    gpuError_t e = gpuDeviceGetAttribute(&sms, gpuDevAttrMultiProcessorCount, device);
    for (int i = 0; i < 6 && e == gpuSuccess; i++)
        if (size[i]) {
            e = gpuMalloc(&d[i], size[i]);
            if (e == gpuSuccess && i < 5)
                e = gpuMemcpy(d[i], src[i], size[i], gpuMemcpyHostToDevice);
        }
    if (e == gpuSuccess) {
        p->a.codes = (const uint8_t *)d[0], p->a.scale = d[1], p->b.codes = (const uint8_t *)d[2], p->b.scale = d[3];
        p->bias = (const float *)d[4], p->c = d[5];
        e = qck_launch_gemm_simt(p, sms, 0);
        if (e == gpuSuccess)
            e = gpuMemcpy(a->c.data, d[5], size[5], gpuMemcpyDeviceToHost);
    }
    for (int i = 0; i < 6; i++)
        if (d[i])
            (void)gpuFree(d[i]);
    return e;
}

} // namespace qck_simt

const char *qck_simt_moe_operand(const qcheck_quant_spec *j, int64_t rows, int64_t k, qck_simt_operand *o, char *why,
                                 size_t n)
{
    qcheck_gemm_operand v = {};
    qck_simt::sizes z;
    v.form = j ? QCHECK_FORM_QUANTIZED : QCHECK_FORM_BF16, v.spec = j;
    if (!j)
        return qck_simt::bf16_operand(&v, 'x', rows, k, o, &z, why, n);
    int group_k = j->recipe == QC_RECIPE_BLOCK ? j->policy.block_c : j->policy.group; /* exact: any K group */
    return qck_simt::quantized_operand(&v, 'x', (int)j->recipe, group_k, rows, k, o, &z, why, n);
}

gpuError_t qck_launch_gemm_simt(const qck_simt_problem *p, int sms, gpuStream_t s)
{
    int64_t n = p->m * p->n, blocks = (n + 127) / 128, cap = (int64_t)(sms > 0 ? sms : 32) * 16;
    if (n > 0)
        QCK_LAUNCH(qck_simt::simt_kernel, (unsigned)(blocks < cap ? blocks : cap), 128, s, *p);
    return gpuGetLastError();
}

extern "C" qcheck_status qck_gemm_simt(const qcheck_gemm_args *a, qcheck_ctx *ctx)
{
    char why[512];
    qck_simt_problem p = {};
    qck_simt::sizes za = {0, 0}, zb = {0, 0};
    if (qck_simt::setup(a, &p, &za, &zb, why, sizeof why))
        return qcheck_say(ctx, QCHECK_DECLINED, "%s", why);
    if (qck_simt::check_sizes(a, p, za, zb, why, sizeof why))
        return qcheck_say(ctx, QCHECK_BAD_INPUT, "%s", why);
    if (a->m == 0 || a->n == 0)
        return QCHECK_OK;
    if (p.has_alpha)
        memcpy(&p.gsa, a->a.gscale.data, 4), memcpy(&p.gsb, a->b.gscale.data, 4);
    gpuError_t e = gpuSetDevice(ctx->device);
    if (e != gpuSuccess)
        return qck_simt::device_fail(ctx, "cudaSetDevice", e);
    e = qck_simt::run(a, &p, ctx->device);
    return e == gpuSuccess ? QCHECK_OK : qck_simt::device_fail(ctx, "kernel or copy", e);
}
