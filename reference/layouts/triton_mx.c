/* triton_mx.c: triton_kernels MX scale layouts (docs/spec/layouts.md §5).
 * Sources: triton python/triton_kernels/triton_kernels/tensor_details/layout_details/blackwell_scale.py
 * (BlackwellMXScaleLayout, ALIGN_K = 8, 128-row tiles), hopper_scale.py (HopperMXScaleLayout,
 * num_warps; triton PR #9029 made num_warps 4 work). Padding: both pad with torch.nn.functional.pad (zero). */
#include "layouts.h"

/* HOPPER_MX_SCALE: pad M to 32W, K to 2; view [M/(32W), 2, W, 2, 8, K/2, 2] permute
 * (0, 2, 5, 1, 4, 6, 3), flatten to [M/32, 32K] (layouts.md §5.2 [V]). */
QC_HD void qcref_triton_hopper_scale_rc(int64_t m, int64_t k, int64_t W, int64_t *row, int64_t *col)
{
    int64_t m0 = m / (32 * W), q = m % (32 * W), a = q / (16 * W), w = (q % (16 * W)) / 16, b = (q % 16) / 8,
            c = q % 8;
    *row = m0 * W + w;
    *col = (k / 2) * 64 + a * 32 + c * 4 + (k % 2) * 2 + b;
}

static const int scale_elems[] = {1, 0};

/* variant 0: BLACKWELL_SCALE (weights, source [K_sf, N], 128x4 of the transpose, K padded to 8);
 * variant 1: BLACKWELL_ACT_SCALE (activations [M, K_sf], M padded to 128, K to 8). */
static int plan_bw(qc_layout *L, char *err, size_t n)
{
    if (qc_layout_elem(L, scale_elems, err, n))
        return 2;
    if (L->desc->variant == 0)
        L->Rg = qc_pad_to(L->R, 8), L->Cg = qc_pad_to(L->C, 128);
    else
        L->Rg = qc_pad_to(L->R, 128), L->Cg = qc_pad_to(L->C, 8);
    if (qc_layout_set_dst(L, L->Rg, L->Cg, err, n))
        return 2;
    return 0;
}

static int64_t fwd_bw(const qc_layout *L, int64_t g, int64_t c)
{
    return L->desc->variant == 0 ? qcref_sf128x4_offset(c, g, L->Rg) : qcref_sf128x4_offset(g, c, L->Cg);
}

static int inv_bw(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    if (L->desc->variant == 0)
        qcref_sf128x4_coords(o, L->Rg, c, g);
    else
        qcref_sf128x4_coords(o, L->Cg, g, c);
    return 0;
}

const qc_layout_desc qcref_layout_triton_blackwell_scale = {
    .name = "triton_blackwell_scale",
    .summary = "BLACKWELL_SCALE: weight scales [K_sf, N] -> 128x4 swizzle of the transpose [Np, Kp]",
    .source = "layouts.md §5.1; triton_kernels layout_details/blackwell_scale.py::BlackwellMXScaleLayout",
    .shapes = "source [B, K_sf, N]: any; K_sf padded to 8 (ALIGN_K), N to 128; batch stride Np*Kp",
    .padding = "zero",
    .plan = plan_bw, .fwd = fwd_bw, .inv = inv_bw};

const qc_layout_desc qcref_layout_triton_blackwell_act_scale = {
    .name = "triton_blackwell_act_scale", .variant = 1,
    .summary = "BLACKWELL_ACT_SCALE: activation scales [M, K_sf] -> 128x4 with K padded to 8",
    .source = "layouts.md §5.1; triton_kernels blackwell_scale.py (activation variant)",
    .shapes = "source [B, M, K_sf]: any; M padded to 128 (ragged mode: per expert slice), K_sf to 8",
    .padding = "zero",
    .plan = plan_bw, .fwd = fwd_bw, .inv = inv_bw};

static int plan_hopper(qc_layout *L, char *err, size_t n)
{
    if (qc_layout_elem(L, scale_elems, err, n))
        return 2;
    int64_t W = L->p[0];
    if (W != 4 && W != 8)
        return qc_layout_fail(err, n, "%s: num_warps=%lld must be 4 or 8 (the kernel's num_warps must equal the "
                              "layout's; T-TK3)", L->desc->name, (long long)W);
    L->Rg = qc_pad_to(L->R, 32 * W), L->Cg = qc_pad_to(L->C, 2);
    if (qc_layout_set_dst(L, L->Rg, L->Cg, err, n))
        return 2;
    return 0;
}

static int64_t fwd_hopper(const qc_layout *L, int64_t g, int64_t c)
{
    int64_t row, col;
    qcref_triton_hopper_scale_rc(g, c, L->p[0], &row, &col);
    return row * 32 * L->Cg + col;
}

static int inv_hopper(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t W = L->p[0], row = o / (32 * L->Cg), col = o % (32 * L->Cg);
    int64_t m0 = row / W, w = row % W, k2 = col / 64, t = col % 64, a = t / 32, cc = (t % 32) / 4, k1 = (t % 4) / 2,
            b = t % 2;
    *g = m0 * 32 * W + a * 16 * W + w * 16 + b * 8 + cc;
    *c = k2 * 2 + k1;
    return 0;
}

const qc_layout_desc qcref_layout_triton_hopper_mx_scale = {
    .name = "triton_hopper_mx_scale",
    .summary = "HOPPER_MX_SCALE: [M, K] -> [M/32, 32K], view [M/32W,2,W,2,8,K/2,2] permute (0,2,5,1,4,6,3)",
    .source = "layouts.md §5.2; triton_kernels layout_details/hopper_scale.py::HopperMXScaleLayout",
    .shapes = "source [B, M, K] (M = the non-MX axis; transpose first when mx_axis is M); M padded to 32*W, K to 2",
    .padding = "zero",
    .params = {{"num_warps", 8, "4 or 8"}},
    .plan = plan_hopper, .fwd = fwd_hopper, .inv = inv_hopper};
