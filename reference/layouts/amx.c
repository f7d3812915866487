/* amx.c: sgl-kernel CPU (AMX / AVX-512) weight and scale packing (docs/spec/layouts.md §7).
 * Sources: sglang sgl-kernel/csrc/cpu/gemm.h (TILE_N 16, block_size_n() 32, get_row_size: K+4 for int8),
 * gemm.cpp (pack_vnni, s8s8_compensation, convert_weight_packed, convert_scale_packed), gemm_fp8.cpp
 * (unpack_B reads fp8 as [K/2, N, 2]). Blocks of 32 output rows stay contiguous; a 16-row tail block is
 * allowed for VNNI-2 (OC % 16), the int8 and uint8 packers need whole 32-row blocks. */
#include "layouts.h"

static int check_oc_ic(qc_layout *L, int64_t oc_mult, char *err, size_t n)
{
    if (L->R % oc_mult || L->C % 32)
        return qc_layout_fail(err, n, "%s: needs OC (rows) %% %lld == 0 and IC (cols, elements) %% 32 == 0 "
                              "(convert_weight_packed), got rows=%lld cols=%lld", L->desc->name,
                              (long long)oc_mult, (long long)L->R, (long long)L->C);
    L->Rg = L->R, L->Cg = L->C, L->pad = QC_PAD_NONE;
    return 0;
}

/* ---- VNNI-2 (bf16, fp16, fp8 e4m3): packed[(k/2)*Nb*2 + n*2 + k%2] = W[n][k] per block ---- */
static const int vnni2_elems[] = {2, 1, 0};

static int plan_vnni2(qc_layout *L, char *err, size_t n)
{
    if (qc_layout_elem(L, vnni2_elems, err, n) || check_oc_ic(L, 16, err, n))
        return 2;
    if (qc_layout_set_dst(L, L->R, L->C, err, n))
        return 2;
    return 0;
}

static int64_t block_rows(const qc_layout *L, int64_t n0) { return L->R - n0 < 32 ? L->R - n0 : 32; }

static int64_t fwd_vnni2(const qc_layout *L, int64_t g, int64_t c)
{
    int64_t n0 = g / 32 * 32, nb = block_rows(L, n0);
    return n0 * L->C + (c / 2) * nb * 2 + (g - n0) * 2 + c % 2;
}

static int inv_vnni2(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t n0 = o / (32 * L->C) * 32, nb = block_rows(L, n0), w = o - n0 * L->C;
    *g = n0 + (w % (nb * 2)) / 2;
    *c = (w / (nb * 2)) * 2 + w % 2;
    return 0;
}

const qc_layout_desc qcref_layout_amx_vnni2 = {
    .name = "amx_vnni2",
    .summary = "AMX VNNI-2 weight packing (bf16/fp16 2-byte, fp8 1-byte): per 32-row block [K/2, Nb, 2]",
    .source = "layouts.md §7; sgl-kernel csrc/cpu/gemm.cpp::pack_vnni, convert_weight_packed",
    .shapes = "[E, OC, IC]: OC % 16 (last block may be 16 rows), IC % 32; elem 2 (bf16/fp16) or 1 (fp8)",
    .padding = "none",
    .plan = plan_vnni2, .fwd = fwd_vnni2, .inv = inv_vnni2};

/* ---- VNNI-4 (int8): packed[(k/4)*128 + n*4 + k%4], then 32 int32 comp[n] = sum_k 128*W[n][k];
 * the packed row stride is K+4 bytes, so a block is 32*K + 128 bytes. ---- */
static int plan_vnni4(qc_layout *L, char *err, size_t n)
{
    if (L->elem_bytes && L->elem_bytes != 1)
        return qc_layout_fail(err, n, "%s: int8 weights: --elem-bytes must be 1", L->desc->name);
    L->in_bits = L->out_bits = 8;
    if (check_oc_ic(L, 32, err, n))
        return 2;
    if (qc_layout_set_dst(L, L->R, L->C + 4, err, n)) /* get_row_size<int8_t>: K + 4 */
        return 2;
    return 0;
}

static int64_t fwd_vnni4(const qc_layout *L, int64_t g, int64_t c)
{
    int64_t n0 = g / 32 * 32;
    return n0 * (L->C + 4) + (c / 4) * 128 + (g - n0) * 4 + c % 4;
}

static int inv_vnni4(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t blk = o / (32 * (L->C + 4)), w = o % (32 * (L->C + 4));
    if (w >= 32 * L->C)
        return 1; /* a compensation byte */
    *g = blk * 32 + (w % 128) / 4;
    *c = (w / 128) * 4 + w % 4;
    return 0;
}

/* s8s8_compensation: activations are fed as u8 = s8 + 128, so the kernel subtracts 128 * sum_k W[n][k]. */
static void derive_vnni4(const qc_layout *L, const uint8_t *src, uint8_t *dst)
{
    for (int64_t n0 = 0; n0 < L->R; n0 += 32) {
        uint8_t *comp = dst + n0 * (L->C + 4) + 32 * L->C;
        for (int64_t n = 0; n < 32; n++) {
            int32_t s = 0;
            for (int64_t k = 0; k < L->C; k++)
                s += 128 * (int32_t)(int8_t)src[(n0 + n) * L->C + k];
            qcref_layout_store(comp, n, 32, (uint32_t)s);
        }
    }
}

const qc_layout_desc qcref_layout_amx_vnni4 = {
    .name = "amx_vnni4",
    .summary = "AMX VNNI-4 int8 packing [K/4, 32, 4] per 32-row block plus 32 int32 compensation words "
               "(a transform: the words are derived, inverse ignores them)",
    .source = "layouts.md §7; sgl-kernel csrc/cpu/gemm.cpp::pack_vnni<int8_t>, s8s8_compensation",
    .shapes = "[E, OC, IC] int8: OC % 32 (the int8 packer needs whole blocks), IC % 32; out row stride IC+4",
    .padding = "none; bytes 32*IC .. 32*IC+127 of each block are comp[n] = sum_k 128*W[n][k] (int32 LE)",
    .plan = plan_vnni4, .fwd = fwd_vnni4, .inv = inv_vnni4, .derive = derive_vnni4};

/* ---- uint8 (two 4-bit codes per byte): for byte column kb, u[2n+h] = nibble h of W[n][kb];
 * packed[kb*32 + n] = u[n] | u[n+32] << 4 ("32-way" pack). Elements here are the nibbles. ---- */
static int plan_u4(qc_layout *L, char *err, size_t n)
{
    if (L->elem_bytes)
        return qc_layout_fail(err, n, "%s: elements are 4-bit codes (cols counts codes); omit --elem-bytes",
                              L->desc->name);
    L->in_bits = L->out_bits = 4;
    if (check_oc_ic(L, 32, err, n))
        return 2;
    if (qc_layout_set_dst(L, L->R, L->C, err, n))
        return 2;
    return 0;
}

static int64_t fwd_u4(const qc_layout *L, int64_t g, int64_t c)
{
    int64_t n0 = g / 32 * 32, m = 2 * (g - n0) + c % 2, byte = n0 * (L->C / 2) + (c / 2) * 32 + m % 32;
    return 2 * byte + m / 32;
}

static int inv_u4(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t byte = o / 2, blk = byte / (16 * L->C), w = byte % (16 * L->C), m = w % 32 + 32 * (o % 2);
    *g = blk * 32 + m / 2;
    *c = (w / 32) * 2 + m % 2;
    return 0;
}

const qc_layout_desc qcref_layout_amx_u4 = {
    .name = "amx_u4",
    .summary = "uint8 MXFP4/int4 32-way nibble pack: byte kb*32+n = u[n] | u[n+32] << 4 per 32-row block",
    .source = "layouts.md §7; sgl-kernel csrc/cpu/gemm.cpp::pack_vnni<uint8_t> (convert_weight_packed)",
    .shapes = "[E, OC, IC] 4-bit codes (2 per byte, even code low): OC % 32, IC % 32",
    .padding = "none",
    .plan = plan_u4, .fwd = fwd_u4, .inv = inv_u4};

/* ---- convert_scale_packed: dst[e][nb][g][n] = src[e][nb*32 + n][g] ---- */
static const int scale_elems[] = {1, 0};

static int plan_mx4s(qc_layout *L, char *err, size_t n)
{
    if (qc_layout_elem(L, scale_elems, err, n))
        return 2;
    if (L->R % 32)
        return qc_layout_fail(err, n, "%s: rows N=%lld must be a multiple of 32 (convert_scale_packed)",
                              L->desc->name, (long long)L->R);
    L->Rg = L->R, L->Cg = L->C, L->pad = QC_PAD_NONE;
    if (qc_layout_set_dst(L, L->R, L->C, err, n))
        return 2;
    return 0;
}

static int64_t fwd_mx4s(const qc_layout *L, int64_t g, int64_t c) { return (g / 32) * 32 * L->C + c * 32 + g % 32; }

static int inv_mx4s(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t nb = o / (32 * L->C), w = o % (32 * L->C);
    *g = nb * 32 + w % 32;
    *c = w / 32;
    return 0;
}

const qc_layout_desc qcref_layout_amx_mxfp4_scale = {
    .name = "amx_mxfp4_scale",
    .summary = "MXFP4 scale packing [N, G] -> [N/32, G, 32]",
    .source = "layouts.md §7; sgl-kernel csrc/cpu/gemm.cpp::convert_scale_packed",
    .shapes = "[E, N, G] e8m0 bytes: N % 32",
    .padding = "none",
    .plan = plan_mx4s, .fwd = fwd_mx4s, .inv = inv_mx4s};
