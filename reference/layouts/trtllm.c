/* trtllm.c: TRT-LLM-gen weight preparation as flashinfer implements it (docs/spec/layouts.md §2).
 * Sources: flashinfer flashinfer/utils.py (srcToDstBlk16RowMap, srcToDstBlk32RowMap,
 * get_shuffle_block_size, get_shuffle_matrix_a_row_indices, get_shuffle_matrix_sf_a_row_indices),
 * fp4_quantization.py (shuffle_matrix_a, shuffle_matrix_sf_a), fused_moe/core.py
 * (get_reorder_rows_for_gated_act_gemm_row_indices: asserts M even; convert_to_block_layout: asserts
 * K % blockK == 0). */
#include "layouts.h"

/* get_shuffle_block_size: 32 when epilogue_tile_m % 128 == 0, else 16 (layouts.md §2.1). */
QC_HD int64_t qcref_trtllm_shuffle_block(int64_t epilogue_tile_m) { return epilogue_tile_m % 128 == 0 ? 32 : 16; }

/* shuffle_matrix_a is a row gather out[n] = A[src(n)] (layouts.md §2.1 [V]). */
QC_HD int64_t qcref_trtllm_shuffle_src_row(int64_t n, int64_t bs)
{
    return (n / bs) * bs + (n % 8) * (bs / 8) + (n % bs) / 8;
}

/* The srcToDstBlk tables: old position p in a block goes to q = (p % (bs/8))*8 + p / (bs/8). */
QC_HD int64_t qcref_trtllm_shuffle_dst_row(int64_t r, int64_t bs)
{
    int64_t p = r % bs;
    return (r / bs) * bs + (p % (bs / 8)) * 8 + p / (bs / 8);
}

/* reorder_rows_for_gated_act_gemm: out[2i] = X[i], out[2i+1] = X[M/2 + i] (layouts.md §2.3, M even). */
QC_HD int64_t qcref_gated_reorder_src_row(int64_t n, int64_t M) { return n % 2 ? M / 2 + n / 2 : n / 2; }
QC_HD int64_t qcref_gated_reorder_dst_row(int64_t r, int64_t M) { return r < M / 2 ? 2 * r : 2 * (r - M / 2) + 1; }

enum { P_EPI, P_SF_NELTS };

static int any_elem(qc_layout *L)
{
    L->in_bits = L->out_bits = 8 * (L->elem_bytes ? L->elem_bytes : 1);
    return 0;
}

static int check_epi(qc_layout *L, char *err, size_t n)
{
    if (L->p[P_EPI] < 1)
        return qc_layout_fail(err, n, "%s: epilogue_tile_m=%lld must be positive", L->desc->name,
                              (long long)L->p[P_EPI]);
    L->d[0] = qcref_trtllm_shuffle_block(L->p[P_EPI]);
    if (L->R % L->d[0])
        return qc_layout_fail(err, n,
                              "%s: rows %lld not a multiple of the shuffle block %lld (epilogue_tile_m=%lld; "
                              "layouts.md §2.1: M %% block == 0)",
                              L->desc->name, (long long)L->R, (long long)L->d[0], (long long)L->p[P_EPI]);
    return 0;
}

/* variant 0: shuffle_matrix_a; 1: reorder then shuffle (gated W13, layouts.md §2.4); 2: gated reorder only. */
static int64_t dst_row(const qc_layout *L, int64_t r)
{
    switch (L->desc->variant) {
    case 0: return qcref_trtllm_shuffle_dst_row(r, L->d[0]);
    case 1: return qcref_trtllm_shuffle_dst_row(qcref_gated_reorder_dst_row(r, L->R), L->d[0]);
    default: return qcref_gated_reorder_dst_row(r, L->R);
    }
}

static int64_t src_row(const qc_layout *L, int64_t n)
{
    switch (L->desc->variant) {
    case 0: return qcref_trtllm_shuffle_src_row(n, L->d[0]);
    case 1: return qcref_gated_reorder_src_row(qcref_trtllm_shuffle_src_row(n, L->d[0]), L->R); /* P0[P1[n]] */
    default: return qcref_gated_reorder_src_row(n, L->R);
    }
}

static int plan_rows(qc_layout *L, char *err, size_t n)
{
    any_elem(L);
    L->Rg = L->R, L->Cg = L->C, L->pad = QC_PAD_NONE;
    if (qc_layout_set_dst(L, L->R, L->C, err, n))
        return 2;
    if (L->desc->variant >= 1 && L->R % 2)
        return qc_layout_fail(err, n, "%s: rows %lld must be even (reorder_rows_for_gated_act_gemm asserts M %% 2 == 0)",
                              L->desc->name, (long long)L->R);
    if (L->desc->variant <= 1 && check_epi(L, err, n))
        return 2;
    if (L->desc->variant == 1 && L->p[1]) { /* sf=1: scales, then 128x4 (layouts.md §2.4) */
        if (L->R % 128)
            return qc_layout_fail(err, n, "%s: sf=1 needs rows %% 128 == 0 (shuffle_matrix_sf_a asserts M %% 128), got %lld",
                                  L->desc->name, (long long)L->R);
        L->Cg = qc_pad_to(L->C, 4);
        if (qc_layout_set_dst(L, L->R, L->Cg, err, n))
            return 2;
        L->pad = QC_PAD_ZERO;
    }
    return 0;
}

static int sf_after(const qc_layout *L) { return L->desc->variant == 1 && L->p[1]; }

static int64_t fwd_rows(const qc_layout *L, int64_t g, int64_t c)
{
    return sf_after(L) ? qcref_sf128x4_offset(dst_row(L, g), c, L->Cg) : dst_row(L, g) * L->Cg + c;
}

static int inv_rows(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t nrow;
    if (sf_after(L))
        qcref_sf128x4_coords(o, L->Cg, &nrow, c);
    else
        nrow = o / L->Cg, *c = o % L->Cg;
    *g = src_row(L, nrow);
    return 0;
}

const qc_layout_desc qcref_layout_trtllm_shuffle_a = {
    .name = "trtllm_shuffle_a", .variant = 0,
    .summary = "shuffle_matrix_a: row gather within 32-row (or 16-row) blocks, columns untouched",
    .source = "layouts.md §2.1; flashinfer fp4_quantization.py::shuffle_matrix_a, utils.py srcToDstBlk32RowMap",
    .shapes = "rows % block == 0 (block 32 if epilogue_tile_m % 128 == 0 else 16); any cols, any elem bytes",
    .padding = "none (a permutation of rows)",
    .params = {{"epilogue_tile_m", 128, "128 (block 32) or 64 (block 16; DeepSeek-FP8 weights)"}},
    .plan = plan_rows, .fwd = fwd_rows, .inv = inv_rows};

const qc_layout_desc qcref_layout_gated_reorder = {
    .name = "gated_reorder", .variant = 2,
    .summary = "reorder_rows_for_gated_act_gemm: out[2i] = X[i], out[2i+1] = X[M/2+i]",
    .source = "layouts.md §2.3; flashinfer fused_moe/core.py::reorder_rows_for_gated_act_gemm",
    .shapes = "rows even; any cols, any elem bytes",
    .padding = "none (a permutation of rows)",
    .plan = plan_rows, .fwd = fwd_rows, .inv = inv_rows};

const qc_layout_desc qcref_layout_trtllm_gated_w13 = {
    .name = "trtllm_gated_w13", .variant = 1,
    .summary = "gated W13 composition out[i] = in[P0[P1[i]]]: gated reorder, then shuffle_matrix_a rows "
               "(sf=1: then 128x4, as for the W13 block scales)",
    .source = "layouts.md §2.4; flashinfer _maybe_get_cached_w3_w1_permute_indices, tests/moe "
              "trtllm_gen_fused_moe_utils.py prepare_static_weights_for_kernel",
    .shapes = "rows even and % shuffle block (sf=1: rows % 128); any cols",
    .padding = "none (sf=0); zero in the 128x4 column padding (sf=1)",
    .params = {{"epilogue_tile_m", 128, "128 or 64"}, {"sf", 0, "0 weights/bias, 1 block scales (adds 128x4)"}},
    .plan = plan_rows, .fwd = fwd_rows, .inv = inv_rows};

/* shuffle_matrix_sf_a: the same row gather as shuffle_matrix_a, then block_scale_interleave
 * (layouts.md §2.2). flashinfer's contract: LINEAR scales in (upstream TRT-LLM reads 128x4: Q4). */
static const int scale_elems[] = {1, 2, 0};

static int plan_sf_a(qc_layout *L, char *err, size_t n)
{
    if (qc_layout_elem(L, scale_elems, err, n))
        return 2;
    if (L->p[P_SF_NELTS] != 16 && L->p[P_SF_NELTS] != 32)
        return qc_layout_fail(err, n, "%s: num_elts_per_sf=%lld must be 16 or 32 (get_shuffle_matrix_sf_a_row_indices)",
                              L->desc->name, (long long)L->p[P_SF_NELTS]);
    if (L->R % 128)
        return qc_layout_fail(err, n, "%s: rows %lld not a multiple of 128 (shuffle_matrix_sf_a asserts M %% 128 == 0)",
                              L->desc->name, (long long)L->R);
    if (check_epi(L, err, n))
        return 2;
    L->Rg = L->R, L->Cg = qc_pad_to(L->C, 4);
    if (qc_layout_set_dst(L, L->Rg, L->Cg, err, n))
        return 2;
    return 0;
}

static int64_t fwd_sf_a(const qc_layout *L, int64_t g, int64_t c)
{
    return qcref_sf128x4_offset(qcref_trtllm_shuffle_dst_row(g, L->d[0]), c, L->Cg);
}

static int inv_sf_a(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t nrow;
    qcref_sf128x4_coords(o, L->Cg, &nrow, c);
    *g = qcref_trtllm_shuffle_src_row(nrow, L->d[0]);
    return 0;
}

const qc_layout_desc qcref_layout_trtllm_shuffle_sf_a = {
    .name = "trtllm_shuffle_sf_a",
    .summary = "shuffle_matrix_sf_a: shuffle_matrix_a's row gather on LINEAR scales, then 128x4",
    .source = "layouts.md §2.2; flashinfer fp4_quantization.py::shuffle_matrix_sf_a",
    .shapes = "rows % 128 == 0; any cols (padded to 4, PR #3163); elem 1 or 2 bytes",
    .padding = "zero (block_scale_interleave)",
    .params = {{"epilogue_tile_m", 128, "128 or 64"}, {"num_elts_per_sf", 16, "16 or 32 (validated, no effect)"}},
    .plan = plan_sf_a, .fwd = fwd_sf_a, .inv = inv_sf_a};

/* convert_to_block_layout(X[M, K], block_k): out[kb][m][j] = X[m][kb*block_k + j] (layouts.md §2.5). */
static int plan_bmk(qc_layout *L, char *err, size_t n)
{
    any_elem(L);
    int64_t bk = L->p[0];
    if (bk < 1 || L->C % bk)
        return qc_layout_fail(err, n, "%s: cols %lld not a multiple of block_k=%lld (convert_to_block_layout asserts "
                              "K %% blockK == 0)", L->desc->name, (long long)L->C, (long long)bk);
    L->Rg = L->R, L->Cg = L->C, L->pad = QC_PAD_NONE;
    if (qc_layout_set_dst(L, L->R, L->C, err, n))
        return 2;
    return 0;
}

static int64_t fwd_bmk(const qc_layout *L, int64_t g, int64_t c)
{
    int64_t bk = L->p[0];
    return (c / bk) * L->R * bk + g * bk + c % bk;
}

static int inv_bmk(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t bk = L->p[0], kb = o / (L->R * bk), w = o % (L->R * bk);
    *g = w / bk;
    *c = kb * bk + w % bk;
    return 0;
}

const qc_layout_desc qcref_layout_block_major_k = {
    .name = "block_major_k",
    .summary = "BlockMajorK: [M, K] -> [K/block_k, M, block_k]",
    .source = "layouts.md §2.5; flashinfer fused_moe/core.py::convert_to_block_layout, prepare.py "
              "prepare_trtllm_bf16_weights (block_k 128 bytes of the uint8 view)",
    .shapes = "cols % block_k == 0 (cols and block_k in elements of --elem-bytes)",
    .padding = "none",
    .params = {{"block_k", 128, "K block, in elements"}},
    .plan = plan_bmk, .fwd = fwd_bmk, .inv = inv_bmk};
