/* moe_kernels.cu: the fused MoE's kernels of the cuda backend around its expert GEMMs (the GEMMs
 * are gemm_wgmma.cu's, grouped; the quantizations kernels.cu's): routing, the GEMM1 epilogue with
 * the activation, and the weighted combine. The arithmetic is the op's (harness/ops/op_moe.c,
 * reference/ops/moe.h: docs/spec/layouts.md §9), written again here: every fp32 step one IEEE
 * operation (nvcc --fmad=false), exp correctly rounded (reference/arith/exp_cr.h, the definition
 * the op uses: plain double arithmetic, the same bits on the host and the device), the sums in the
 * op's order. What does not depend on order runs across the lanes of a warp (the scores, the
 * maxima, the top-k selection); the sums are one lane's, in expert or slot order. */
#include "launch.h" /* first: under HIP, gpu.h's runtime header gives memcpy its device overload */
#include "arith/erf_cr.h"
#include "arith/exp_cr.h"
#include "arith/tanh_cr.h"

namespace {

enum { ROUTE_LANES = 32 };

/* a ranks before b: the larger, NaN below everything, equal values by the lower index (moe.h). */
QCK_HD bool ranks_before(float a, int ia, float b, int ib)
{
    bool na = qck_isnan(a), nb = qck_isnan(b);
    if (na || nb) return na == nb ? ia < ib : !na;
    return a > b || (a == b && ia < ib);
}

QCK_HD float sigmoid(float t) { return qck_div(1.0f, qck_add_rn(1.0f, qcref_expf(-t))); }

/* The best expert of v[0..n) that is a candidate (cand NULL: all) and not taken, over the warp:
 * each lane scans experts lane, lane + 32, ...; the pairs meet by shuffles. -1 when none is left.
 * taken[e] is only ever read and written by lane e % 32. */
QCK_D int warp_best(const float *v, const unsigned char *cand, unsigned char *taken, int n, int lane)
{
    float bv = 0.0f;
    int bi = -1;
    for (int e = lane; e < n; e += ROUTE_LANES)
        if ((!cand || cand[e]) && !taken[e] && (bi < 0 || ranks_before(v[e], e, bv, bi)))
            bv = v[e], bi = e;
    for (int m = ROUTE_LANES / 2; m > 0; m /= 2) {
        float ov = qck_float(QCK_SHFL_XOR(qck_bits(bv), m, ROUTE_LANES));
        int oi = (int)QCK_SHFL_XOR((uint32_t)bi, m, ROUTE_LANES);
        if (oi >= 0 && (bi < 0 || ranks_before(ov, oi, bv, bi)))
            bv = ov, bi = oi;
    }
    if (bi >= 0 && bi % ROUTE_LANES == lane) taken[bi] = 1;
    return bi;
}

/* top-k of v over the warp into ids: every lane writes the same ids[j], and reads only what it wrote. */
QCK_D void warp_topk(const float *v, const unsigned char *cand, unsigned char *taken, int n, int k, int lane, int *ids)
{
    for (int e = lane; e < n; e += ROUTE_LANES) taken[e] = 0;
    for (int j = 0; j < k; j++) ids[j] = warp_best(v, cand, taken, n, lane);
}

/* One lane's top-k of a short array (the group scores, the two best of a group), as moe.h ranks. */
QCK_HD void serial_topk(const float *v, int n, int k, int *ids)
{
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int i = 0; i < n; i++) {
            bool taken = false;
            for (int q = 0; q < j; q++) taken = taken || ids[q] == i;
            if (!taken && (best < 0 || ranks_before(v[i], i, v[best], best))) best = i;
        }
        ids[j] = best;
    }
}

/* p = softmax(z[0..n)) in place of p: the max over the warp (NaN skipped), the exps across the
 * lanes, their sum in expert order on lane 0, the quotients across the lanes. */
QCK_D void warp_softmax(const float *z, float *p, int n, int lane, float *sum_slot)
{
    float mx = -INFINITY;
    for (int e = lane; e < n; e += ROUTE_LANES) mx = z[e] > mx ? z[e] : mx;
    for (int m = ROUTE_LANES / 2; m > 0; m /= 2) {
        float o = qck_float(QCK_SHFL_XOR(qck_bits(mx), m, ROUTE_LANES));
        mx = o > mx ? o : mx;
    }
    for (int e = lane; e < n; e += ROUTE_LANES) p[e] = qcref_expf(z[e] - mx);
    __syncthreads();
    if (lane == 0) {
        float s = 0.0f;
        for (int e = 0; e < n; e++) s = qck_add_rn(s, p[e]);
        *sum_slot = s;
    }
    __syncthreads();
    for (int e = lane; e < n; e += ROUTE_LANES) p[e] = qck_div(p[e], *sum_slot);
    __syncthreads();
}

/* The candidates of grouped routing (lane 0): the topk_group groups with the best score, the sum
 * of a group's per_group largest v (DeepSeek-V3: two; V2: one). */
QCK_HD void group_candidates(const qc_route_cfg &c, const float *v, int per_group, float *score, unsigned char *cand)
{
    int ng = c.n_group > 0 ? c.n_group : 1, gs = c.experts / ng, keep = c.n_group > 0 ? c.topk_group : 1;
    int n = gs >= per_group ? per_group : 1, two[2], kept[QC_MAX_EXPERTS];
    for (int g = 0; g < ng; g++) {
        serial_topk(v + g * gs, gs, n, two);
        score[g] = qck_add_rn(v[g * gs + two[0]], n == 2 ? v[g * gs + two[1]] : 0.0f); /* + 0: as moe.h, -0 -> +0 */
    }
    serial_topk(score, ng, keep, kept);
    for (int e = 0; e < c.experts; e++) cand[e] = 0;
    for (int j = 0; j < keep; j++)
        for (int e = kept[j] * gs; e < (kept[j] + 1) * gs; e++) cand[e] = 1;
}

/* One warp per token (grid-stride): ids [tokens, top_k + n_shared] and weights, moe.h qcref_route. */
__global__ void __launch_bounds__(ROUTE_LANES) route_kernel(const float *logits, qc_route_cfg c, int64_t tokens,
                                                            int *ids_out, float *w_out)
{
    __shared__ float p[QC_MAX_EXPERTS], s[QC_MAX_EXPERTS], gscore[QC_MAX_EXPERTS];
    __shared__ unsigned char cand[QC_MAX_EXPERTS], taken[QC_MAX_EXPERTS];
    __shared__ float sum_slot;
    __shared__ int ids[QC_MAX_EXPERTS + 1];
    int lane = threadIdx.x, n = c.experts, k = c.top_k, kk = k + c.n_shared;
    for (int64_t t = blockIdx.x; t < tokens; t += gridDim.x) {
        const float *z = logits + t * n;
        float w[QC_MAX_EXPERTS + 1];
        float eps = 0.0f;
        bool renorm = false;
        switch (c.method) {
        case QC_ROUTE_SOFTMAX:
        case QC_ROUTE_RENORM_NAIVE:
            warp_softmax(z, p, n, lane, &sum_slot);
            warp_topk(p, nullptr, taken, n, k, lane, ids);
            for (int j = 0; j < k; j++) w[j] = p[ids[j]];
            renorm = c.method == QC_ROUTE_RENORM_NAIVE;
            break;
        case QC_ROUTE_RENORMALIZE:
            warp_topk(z, nullptr, taken, n, k, lane, ids);
            for (int j = lane; j < k; j += ROUTE_LANES) s[j] = z[ids[j]];
            __syncthreads();
            warp_softmax(s, p, k, lane, &sum_slot);
            for (int j = 0; j < k; j++) w[j] = p[j];
            break;
        case QC_ROUTE_SIGMOID:
        case QC_ROUTE_SIGMOID_RENORM:
            for (int e = lane; e < n; e += ROUTE_LANES) p[e] = sigmoid(z[e]);
            __syncthreads();
            warp_topk(p, nullptr, taken, n, k, lane, ids);
            for (int j = 0; j < k; j++) w[j] = p[ids[j]];
            renorm = c.method == QC_ROUTE_SIGMOID_RENORM, eps = 1e-20f;
            break;
        case QC_ROUTE_TOPK_SIGMOID:
        case QC_ROUTE_LLAMA4:
            warp_topk(z, nullptr, taken, n, k, lane, ids);
            for (int j = 0; j < k; j++) w[j] = sigmoid(z[ids[j]]);
            break;
        case QC_ROUTE_DEEPSEEK_V2:
            warp_softmax(z, p, n, lane, &sum_slot);
            if (lane == 0) group_candidates(c, p, 1, gscore, cand);
            __syncthreads();
            for (int e = lane; e < n; e += ROUTE_LANES) p[e] = cand[e] ? p[e] : 0.0f;
            __syncthreads();
            warp_topk(p, nullptr, taken, n, k, lane, ids);
            for (int j = 0; j < k; j++) w[j] = p[ids[j]];
            renorm = c.renorm != 0;
            break;
        default: /* DeepSeek-V3: sigmoid scores, biased for the selection only */
            for (int e = lane; e < n; e += ROUTE_LANES) {
                s[e] = sigmoid(z[e]);
                p[e] = qck_add_rn(s[e], c.bias ? c.bias[e] : 0.0f);
            }
            __syncthreads();
            if (lane == 0) group_candidates(c, p, 2, gscore, cand);
            __syncthreads();
            if (c.mask_zero) {
                for (int e = lane; e < n; e += ROUTE_LANES) p[e] = cand[e] ? p[e] : 0.0f;
                __syncthreads();
            }
            warp_topk(p, c.mask_zero ? nullptr : cand, taken, n, k, lane, ids);
            for (int j = 0; j < k; j++) w[j] = s[ids[j]];
            renorm = c.renorm != 0, eps = 1e-20f;
            break;
        }
        if (lane == 0) {
            float routed = 0.0f;
            for (int j = 0; j < k; j++) routed = qck_add_rn(routed, w[j]);
            if (c.n_shared) { /* sglang topk.py: the shared column is sum(routed) / rsf before the renorm */
                ids[k] = c.experts;
                w[k] = qck_div(routed, c.rsf);
            }
            for (int j = 0; j < kk; j++) {
                float v = renorm ? qck_div(w[j], qck_add_rn(routed, eps)) : w[j];
                w_out[t * kk + j] = c.rsf_in_weights ? qck_mul(v, c.rsf) : v;
                ids_out[t * kk + j] = ids[j];
            }
        }
        __syncthreads(); /* the shared arrays are the next token's */
    }
}

/* fp32 activation of one (G, U) pair, moe.h qcref_act_pair operation for operation (its fp32 products
 * left to right); exp, erf and tanh are the reference's own correctly rounded ones (arith/), but for
 * the planted bug `libm`: the platform's erff / tanhf (CUDA's on the device, the host's in the
 * emulation), the slip a kernel author would make. */
QCK_HD float act_pair(const qc_act_cfg &c, float g, float u, bool libm)
{
    bool clamp = c.limit >= 0;
    float L = c.limit;
    switch (c.act) {
    case QC_ACT_GELU: { /* 0.5f * g * (1.0f + erff(g * 0.70710678118654752f)) * u */
        float x = qck_mul(g, 0.70710678118654752f);
        return qck_mul(qck_mul(qck_mul(0.5f, g), qck_add_rn(1.0f, libm ? erff(x) : qcref_erff(x))), u);
    }
    case QC_ACT_GELU_TANH: { /* 0.79788456080286536f * (g + 0.044715f * g * g * g), then as gelu with tanh */
        float inner = qck_mul(0.79788456080286536f, qck_add_rn(g, qck_mul(qck_mul(qck_mul(0.044715f, g), g), g)));
        return qck_mul(qck_mul(qck_mul(0.5f, g), qck_add_rn(1.0f, libm ? tanhf(inner) : qcref_tanhf(inner))), u);
    }
    case QC_ACT_RELU2: {
        float r = g > 0 ? g : 0.0f;
        return qck_mul(r, r);
    }
    case QC_ACT_SWIGLU_OAI: {
        float gc = clamp ? qck_fminf(g, L) : g, uc = clamp ? (u < -L ? -L : u > L ? L : u) : u;
        return qck_mul(qck_mul(gc, sigmoid(qck_mul(c.alpha, gc))), qck_add_rn(uc, c.beta));
    }
    default: { /* silu, swiglu_step */
        float si = qck_div(g, qck_add_rn(1.0f, qcref_expf(-g)));
        if (c.act == QC_ACT_SWIGLU_STEP && clamp) si = qck_fminf(si, L), u = u < -L ? -L : u > L ? L : u;
        return qck_mul(si, u);
    }
    }
}

/* GEMM1's epilogue and the activation, one thread per (row, j < inter): h's pair of j times the
 * routing weight (weight_on_input, written back: the gemm1.h stage), act, and act rounded to bf16
 * (layouts.md §9.4: act -> bf16 -> quantize). */
__global__ void act_kernel(float *h, const float *w, qc_act_cfg c, int weight_on_input, int64_t rows, int64_t inter,
                           qc_cast_policy bf, int libm, float *act, float *act_bf16)
{
    bool gated = c.act != QC_ACT_RELU2;
    int64_t r1 = gated ? 2 * inter : inter;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows * inter; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i / inter, j = i % inter, gi, ui;
        if (!gated) gi = ui = j;
        else if (c.order == QC_W13_GATE_UP) gi = j, ui = inter + j;
        else if (c.order == QC_W13_UP_GATE) ui = j, gi = inter + j;
        else gi = 2 * j, ui = 2 * j + 1;
        float *row = h + r * r1;
        if (weight_on_input) {
            row[gi] = qck_mul(row[gi], w[r]);
            if (ui != gi) row[ui] = qck_mul(row[ui], w[r]);
        }
        float a = act_pair(c, row[gi], gated ? row[ui] : 0.0f, libm);
        act[i] = a;
        act_bf16[i] = qck_float(qck_encode(QC_BF16, a, bf, nullptr) << 16);
    }
}

/* out = rsf_out * sum_j w_j y_j in fp32 in slot order (moe.h qcref_moe_combine_f32), then bf16. */
__global__ void combine_kernel(const float *y, const float *w, int weight_on_input, float rsf_out, int64_t tokens,
                               int64_t kk, int64_t hidden, int reversed, qc_cast_policy bf, float *comb, uint16_t *out)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < tokens * hidden; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t t = i / hidden, col = i % hidden;
        float acc = 0.0f;
        for (int64_t j = 0; j < kk; j++) {
            int64_t q = reversed ? kk - 1 - j : j;
            acc = qck_add_rn(acc, qck_mul(weight_on_input ? 1.0f : w[t * kk + q], y[(t * kk + q) * hidden + col]));
        }
        float v = qck_mul(rsf_out, acc);
        comb[i] = v;
        out[i] = (uint16_t)qck_encode(QC_BF16, v, bf, nullptr);
    }
}

unsigned grid_for(int64_t n, int threads, int sms)
{
    int64_t blocks = (n + threads - 1) / threads, cap = (int64_t)(sms > 0 ? sms : 32) * 16;
    return (unsigned)(blocks < 1 ? 1 : blocks < cap ? blocks : cap);
}

} // namespace

gpuError_t qck_launch_moe_route(const float *logits, const qc_route_cfg *c, int64_t tokens, int *ids, float *w, int sms,
                                gpuStream_t s)
{
    if (tokens > 0) QCK_LAUNCH(route_kernel, grid_for(tokens, 1, sms), ROUTE_LANES, s, logits, *c, tokens, ids, w);
    return gpuGetLastError();
}

gpuError_t qck_launch_moe_act(float *h, const float *w, const qc_act_cfg *c, int weight_on_input, int64_t rows,
                              int64_t inter, const qc_cast_policy *bf, int libm, float *act, float *act_bf16, int sms,
                              gpuStream_t s)
{
    if (rows * inter > 0)
        QCK_LAUNCH(act_kernel, grid_for(rows * inter, 256, sms), 256, s, h, w, *c, weight_on_input, rows, inter, *bf,
                   libm, act, act_bf16);
    return gpuGetLastError();
}

gpuError_t qck_launch_moe_combine(const float *y, const float *w, int weight_on_input, float rsf_out, int64_t tokens,
                                  int64_t kk, int64_t hidden, int reversed, const qc_cast_policy *bf, float *comb,
                                  uint16_t *out, int sms, gpuStream_t s)
{
    if (tokens * hidden > 0)
        QCK_LAUNCH(combine_kernel, grid_for(tokens * hidden, 256, sms), 256, s, y, w, weight_on_input, rsf_out, tokens,
                   kk, hidden, reversed, *bf, comb, out);
    return gpuGetLastError();
}
