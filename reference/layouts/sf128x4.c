/* sf128x4.c: the CUTLASS / NVFP4 block-scale swizzles (docs/spec/layouts.md §1).
 * Sources: flashinfer quantization_utils.cuh::get_sf_out_offset_128x4 / get_sf_out_offset_8x4,
 * fp4Op.cpp::computeSFIndex and blockScaleInterleaveHost, quantization.cu::block_scale_interleave_kernel
 * (writes 0 for row >= R or col >= C); vllm nvfp4_utils.py::swizzle_blockscale (starts from torch.zeros);
 * CUTLASS sm100_blockscaled_layout.hpp SfKMajorAtom ((32,4),(SFVec,4)):((16,4),(0,1)). */
#include "layouts.h"

/* 512-byte atoms, one per (128-row tile, 4-column tile), row-tile major; inside an atom the 4
 * scales of a row are one 32-bit word and rows r, r+32, r+64, r+96 are adjacent words (layouts.md §1). */
QC_HD int64_t qcref_sf128x4_offset(int64_t r, int64_t c, int64_t Cp)
{
    return (r / 128) * (Cp / 4) * 512 + (c / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4;
}

QC_HD void qcref_sf128x4_coords(int64_t o, int64_t Cp, int64_t *r, int64_t *c)
{
    int64_t t = o / 512, w = o % 512;
    *r = (t / (Cp / 4)) * 128 + ((w / 4) % 4) * 32 + w / 16;
    *c = (t % (Cp / 4)) * 4 + w % 4;
}

/* SfLayout layout_8x4: rows padded to 8, 32-byte atoms (layouts.md §1 "8x4 variant"). */
QC_HD int64_t qcref_sf8x4_offset(int64_t r, int64_t c, int64_t Cp)
{
    return (r / 8) * (Cp / 4) * 32 + (c / 4) * 32 + (r % 8) * 4 + c % 4;
}

QC_HD void qcref_sf8x4_coords(int64_t o, int64_t Cp, int64_t *r, int64_t *c)
{
    int64_t t = o / 32, w = o % 32;
    *r = (t / (Cp / 4)) * 8 + w / 4;
    *c = (t % (Cp / 4)) * 4 + w % 4;
}

/* uint8 scales, or bf16 scales interleaved with the same map (fp4Op.cpp BlockScaleInterleave). */
static const int scale_elems[] = {1, 2, 0};

static int plan_128x4(qc_layout *L, char *err, size_t n)
{
    if (qc_layout_elem(L, scale_elems, err, n))
        return 2;
    int64_t tile = L->desc->variant == 8 ? 8 : 128;
    L->Rg = qc_pad_to(L->R, tile);
    L->Cg = qc_pad_to(L->C, 4);
    if (qc_layout_set_dst(L, L->Rg, L->Cg, err, n)) /* _compute_swizzled_layout_sf_size: Rp*Cp per batch/expert */
        return 2;
    return 0;
}

static int64_t fwd_128x4(const qc_layout *L, int64_t g, int64_t c)
{
    return L->desc->variant == 8 ? qcref_sf8x4_offset(g, c, L->Cg) : qcref_sf128x4_offset(g, c, L->Cg);
}

static int inv_128x4(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    if (L->desc->variant == 8)
        qcref_sf8x4_coords(o, L->Cg, g, c);
    else
        qcref_sf128x4_coords(o, L->Cg, g, c);
    return 0;
}

#define SF128_ROW(NAME, STR, VARIANT, SUMMARY, SOURCE, SHAPES)                                                  \
    const qc_layout_desc NAME = {                                                                          \
        .name = STR, .variant = VARIANT, .summary = SUMMARY, .source = SOURCE, .shapes = SHAPES,    \
        .padding = "zero (block_scale_interleave_kernel writes 0; swizzle_blockscale starts from zeros)", \
        .plan = plan_128x4, .fwd = fwd_128x4, .inv = inv_128x4}

SF128_ROW(qcref_layout_sf128x4, "sf128x4", 128, "128x4 block-scale swizzle: 512-byte atoms of 128 rows x 4 scale columns",
          "layouts.md §1; flashinfer get_sf_out_offset_128x4, vllm swizzle_blockscale",
          "any R, C; rows padded to 128, cols to 4; elem 1 (e4m3/ue8m0) or 2 (bf16) bytes; batch stride Rp*Cp");
SF128_ROW(qcref_layout_sf8x4, "sf8x4", 8, "8x4 block-scale swizzle (SfLayout layout_8x4, small-tile MXFP8 activations)",
          "layouts.md §1; flashinfer get_sf_out_offset_8x4, computeSFIndex SWIZZLED_8x4",
          "any R, C; rows padded to 8, cols to 4; elem 1 or 2 bytes; batch stride Rp*Cp");
SF128_ROW(qcref_layout_block_scale_interleave, "block_scale_interleave", 128,
          "TRT-LLM block_scale_interleave (= sf128x4 on [E, R, C], per-expert stride Rp*Cp)",
          "layouts.md §1, §2.2; flashinfer fp4_quantization.py::block_scale_interleave, fp4Op.cpp::blockScaleInterleaveHost",
          "any R, C (flashinfer PR #3163 dropped the K%4 assert: cols are padded); elem 1 or 2 bytes");
