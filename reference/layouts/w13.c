/* w13.c: W13 half order, half interleave and intermediate-size padding (docs/spec/layouts.md §6).
 * Sources: vllm flashinfer_utils.py::swap_w13_to_w31, flashinfer_fp4_moe.py::reorder_w1w3_to_w3w1 and
 * interleave_linear_and_gate; sglang flashinfer_cutedsl.py::interleave_w13_halves; sglang/vllm mxfp4
 * loaders swap_every_two_rows; vllm align_fp4_moe_weights_for_fi (halves padded separately); sglang
 * flashinfer_trtllm.py _align_*_moe_weights (contiguous pad); sglang modelopt_quant.py::pad_nvfp4_weight. */
#include "layouts.h"

/* interleave_w13_halves(T, g): F[0:g], S[0:g], F[g:2g], S[g:2g], ... (layouts.md §6.2 [V]). */
QC_HD int64_t qcref_w13_interleave_row(int64_t h, int64_t j, int64_t g) { return (j / g) * 2 * g + h * g + j % g; }

static int any_elem(qc_layout *L)
{
    L->in_bits = L->out_bits = 8 * (L->elem_bytes ? L->elem_bytes : 1);
    return 0;
}

/* variant 0: [gate;up] <-> [up;gate]; 1: swap each row pair; 2: interleave_w13_halves. */
static int plan_perm(qc_layout *L, char *err, size_t n)
{
    any_elem(L);
    if (L->R % 2)
        return qc_layout_fail(err, n, "%s: rows %lld must be even (two halves of W13)", L->desc->name, (long long)L->R);
    if (L->desc->variant == 2) {
        int64_t g = L->p[0];
        if (g < 1 || (L->R / 2) % g)
            return qc_layout_fail(err, n, "%s: half size I = rows/2 = %lld not a multiple of group=%lld "
                                  "(interleave_w13_halves needs I %% g == 0)", L->desc->name, (long long)(L->R / 2),
                                  (long long)g);
    }
    L->Rg = L->R, L->Cg = L->C, L->pad = QC_PAD_NONE;
    if (qc_layout_set_dst(L, L->R, L->C, err, n))
        return 2;
    return 0;
}

static int64_t perm_row(const qc_layout *L, int64_t r)
{
    int64_t I = L->R / 2;
    switch (L->desc->variant) {
    case 0: return (r + I) % L->R;
    case 1: return r ^ 1;
    default: return qcref_w13_interleave_row(r / I, r % I, L->p[0]);
    }
}

static int64_t perm_row_inv(const qc_layout *L, int64_t n)
{
    int64_t I = L->R / 2, g = L->p[0];
    switch (L->desc->variant) {
    case 0: return (n + I) % L->R;
    case 1: return n ^ 1;
    default: return ((n / g) % 2) * I + (n / (2 * g)) * g + n % g;
    }
}

static int64_t fwd_perm(const qc_layout *L, int64_t g, int64_t c) { return perm_row(L, g) * L->C + c; }

static int inv_perm(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    *g = perm_row_inv(L, o / L->C);
    *c = o % L->C;
    return 0;
}

const qc_layout_desc qcref_layout_w13_swap = {
    .name = "w13_swap",
    .summary = "W13 half order [gate; up] <-> [up; gate] (its own inverse)",
    .source = "layouts.md §6.1; vllm flashinfer_utils.py::swap_w13_to_w31, flashinfer_fp4_moe.py::reorder_w1w3_to_w3w1",
    .shapes = "rows = 2I even; any cols, any elem bytes",
    .padding = "none",
    .plan = plan_perm, .fwd = fwd_perm, .inv = inv_perm};

const qc_layout_desc qcref_layout_w13_swap_pairs = {
    .name = "w13_swap_pairs", .variant = 1,
    .summary = "row-pair swap [g0, u0, g1, u1, ..] <-> [u0, g0, u1, g1, ..] (gpt-oss MXFP4 for TRT-LLM-gen)",
    .source = "layouts.md §6.1; sglang/vllm mxfp4 loaders swap_every_two_rows",
    .shapes = "rows even; any cols, any elem bytes",
    .padding = "none",
    .plan = plan_perm, .fwd = fwd_perm, .inv = inv_perm};

const qc_layout_desc qcref_layout_w13_interleave = {
    .name = "w13_interleave", .variant = 2,
    .summary = "interleave_w13_halves: new_row(h, j) = (j/g)*2g + h*g + j%g",
    .source = "layouts.md §6.2; sglang flashinfer_cutedsl.py::interleave_w13_halves, vllm interleave_linear_and_gate",
    .shapes = "rows = 2I with I % group == 0; any cols, any elem bytes",
    .padding = "none",
    .params = {{"group", 64, "8 (SM120 MegaMoE), 16 (flashinfer PR #4882), 32, 64 (CuteDSL v2)"}},
    .plan = plan_perm, .fwd = fwd_perm, .inv = inv_perm};

/* ---- intermediate-size padding (layouts.md §6.3) ----
 * gated, split=1 (vllm TRTLLM NVFP4 / FP8, Marlin): gate rows [0,I) -> [0,I), up rows [I,2I) -> [Ip, Ip+I);
 * gated, split=0 (sglang flashinfer_trtllm _align_*): rows [0,2I) copied as one block, zeros at the end
 * (a kernel that splits at Ip then mispairs up: T-PAD1); non-gated: rows [0,I) -> [0,I). */
enum { PAD_ALIGN, PAD_SPLIT, PAD_GATED };

static int plan_w13pad(qc_layout *L, char *err, size_t n)
{
    any_elem(L);
    int64_t a = L->p[PAD_ALIGN], gated = L->p[PAD_GATED] != 0;
    if (a < 1)
        return qc_layout_fail(err, n, "%s: align=%lld must be >= 1", L->desc->name, (long long)a);
    if (gated && L->R % 2)
        return qc_layout_fail(err, n, "%s: gated rows %lld must be even (2I)", L->desc->name, (long long)L->R);
    int64_t I = gated ? L->R / 2 : L->R, Ip = qc_pad_to(I, a);
    L->d[0] = I, L->d[1] = Ip, L->d[2] = gated && L->p[PAD_SPLIT];
    L->Rg = (gated ? 2 : 1) * Ip, L->Cg = L->C;
    if (qc_layout_set_dst(L, L->Rg, L->Cg, err, n))
        return 2;
    return 0;
}

static int64_t row_src_w13pad(const qc_layout *L, int64_t g)
{
    int64_t I = L->d[0], Ip = L->d[1];
    if (L->d[2])
        return g % Ip < I ? (g / Ip) * I + g % Ip : -1;
    return g < L->R ? g : -1;
}

static int64_t fwd_id(const qc_layout *L, int64_t g, int64_t c) { return g * L->Cg + c; }

static int inv_id(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    *g = o / L->Cg, *c = o % L->Cg;
    return 0;
}

const qc_layout_desc qcref_layout_w13_pad = {
    .name = "w13_pad",
    .summary = "pad the intermediate size I to a multiple of align: halves separately (split=1) or as one "
               "contiguous block (split=0)",
    .source = "layouts.md §6.3; vllm flashinfer_fp4_moe.py::align_fp4_moe_weights_for_fi (split), sglang "
              "flashinfer_trtllm.py::_align_fp4_moe_weights (contiguous)",
    .shapes = "gated: rows = 2I even -> 2*pad(I, align); non-gated: rows I -> pad(I, align)",
    .padding = "zero (padded weight rows and NVFP4 scale 0 contribute 0)",
    .params = {{"align", 64, "vllm TRTLLM NVFP4 gated 64 / non-gated 128; vllm FP8 16; sglang trtllm 16 "
                            "(contiguous); Marlin 64; vllm CPU 32"},
               {"split", 1, "1: halves padded separately [g, 0, u, 0]; 0: contiguous [g, u, 0]"},
               {"gated", 1, "1: W13 = [2I, H]; 0: [I, H]"}},
    .plan = plan_w13pad, .fwd = fwd_id, .inv = inv_id, .row_src = row_src_w13pad};

/* pad_nvfp4_weight(weight [N, K/2] packed FP4, n_alignment, k_alignment): zero rows to pad(N, na),
 * zero bytes to pad(K, ka)/2 columns (K counted in FP4 elements, 2 per byte; ka = 0 skips). */
static int plan_padnv(qc_layout *L, char *err, size_t n)
{
    if (L->elem_bytes && L->elem_bytes != 1)
        return qc_layout_fail(err, n, "%s: packed FP4 bytes: --elem-bytes must be 1", L->desc->name);
    L->in_bits = L->out_bits = 8;
    int64_t na = L->p[0], ka = L->p[1];
    if (na < 1 || ka < 0 || ka % 2)
        return qc_layout_fail(err, n, "%s: n_align=%lld must be >= 1 and k_align=%lld even or 0", L->desc->name,
                              (long long)na, (long long)ka);
    L->Rg = qc_pad_to(L->R, na);
    L->Cg = ka ? qc_pad_to(2 * L->C, ka) / 2 : L->C;
    if (qc_layout_set_dst(L, L->Rg, L->Cg, err, n))
        return 2;
    return 0;
}

const qc_layout_desc qcref_layout_pad_nvfp4_weight = {
    .name = "pad_nvfp4_weight",
    .summary = "zero-pad packed NVFP4 weights [N, K/2] to N % n_align and K % k_align (K in FP4 elements)",
    .source = "layouts.md §6.3; sglang modelopt_quant.py::pad_nvfp4_weight (CUTLASS 32/32, TRTLLM n_align 128)",
    .shapes = "source [B, N, K/2] bytes; any N, K",
    .padding = "zero rows and zero bytes (activations are padded by the same byte count, outputs sliced)",
    .params = {{"n_align", 32, "32 (CUTLASS/cuDNN), 128 (TRTLLM)"}, {"k_align", 32, "in FP4 elements; 0 skips"}},
    .plan = plan_padnv, .fwd = fwd_id, .inv = inv_id};
