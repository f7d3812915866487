/* marlin.c: Marlin weight and scale permutations (docs/spec/layouts.md §8).
 * Sources: vllm vllm/model_executor/layers/quantization/utils/marlin_utils_test.py (get_weight_perm,
 * marlin_permute_weights, marlin_weights: the Python reference of the CUDA gptq_marlin_repack),
 * marlin_utils.py (get_scale_perms, marlin_permute_scales), marlin_utils_fp8.py (pack_fp8_to_int32),
 * marlin_utils_fp4.py (nvfp4_marlin_process_scales; the current version has no [R/2, 2, -1, 8] pre-permute,
 * Q9). Packing pack_factor = 32/bits consecutive values into one int32 (value i at bits*i) is the identity
 * on the little-endian element stream, so the maps below are over element positions. */
#include "layouts.h"

/* get_weight_perm before the interleave: for i < 32, j < 4, block < 2, row in {2(i%4), 2(i%4)+1,
 * 2(i%4+4), 2(i%4+4)+1}: 16*row + i/4 + 8*block + 256*j, listed i-major, then j, block, row. */
static QC_HD int64_t pre_perm(int64_t p)
{
    int64_t i = p / 32, j = (p % 32) / 8, blk = (p % 8) / 4, ri = p % 4;
    int64_t row = 2 * (i % 4) + (ri % 2) + 8 * (ri / 2);
    return 16 * row + i / 4 + 8 * blk + 256 * j;
}

static QC_HD int64_t pre_perm_inv(int64_t v)
{
    int64_t j = v / 256, row = (v % 256) / 16, blk = (v % 16) / 8, col = v % 8;
    int64_t ri = row % 2 + 2 * (row / 8), i = col * 4 + (row % 8) / 2;
    return i * 32 + j * 8 + blk * 4 + ri;
}

/* interleave inside each pack group: [0,2,4,6,1,3,5,7] (4-bit), [0,2,1,3] (8-bit). */
static QC_HD int64_t il(int64_t t, int64_t len) { return t < len / 2 ? 2 * t : 2 * (t - len / 2) + 1; }
static QC_HD int64_t il_inv(int64_t s, int64_t len) { return s % 2 ? len / 2 + s / 2 : s / 2; }

QC_HD int64_t qcref_marlin_weight_perm(int64_t j, int bits)
{
    int64_t len = bits == 4 ? 8 : 4;
    return pre_perm((j / len) * len + il(j % len, len));
}

QC_HD int64_t qcref_marlin_weight_perm_inv(int64_t v, int bits)
{
    int64_t len = bits == 4 ? 8 : 4, p = pre_perm_inv(v);
    return (p / len) * len + il_inv(p % len, len);
}

/* scale_perm[i*8 + j] = i + 8j (64 wide, grouped); scale_perm_single[i*8 + u] = 2i + {0,1,8,9,16,17,24,25}[u]. */
QC_HD int64_t qcref_marlin_scale_perm(int64_t j, int grouped)
{
    if (grouped)
        return j / 8 + 8 * (j % 8);
    return 2 * (j / 8) + ((j % 8) / 2) * 8 + j % 2;
}

QC_HD int64_t qcref_marlin_scale_perm_inv(int64_t v, int grouped)
{
    if (grouped)
        return (v % 8) * 8 + v / 8;
    return ((v % 8) / 2) * 8 + (v / 8) * 2 + v % 2;
}

/* nvfp4_marlin_process_scales: (half(s) * 2^7).view(int16) << 1, keep the odd byte = bits 7..14 of the
 * fp16 code of 128*s: exponent 5 bits, mantissa 3 bits, sign dropped ("S0E5M3"). For an e4m3 normal
 * (E >= 1) this is code + 120; subnormals m/512 become normal fp16 values m/4. */
QC_HD uint8_t qcref_marlin_s0e5m3_from_e4m3(uint8_t e4m3)
{
    uint8_t mag = e4m3 & 0x7F, m = mag & 7;
    if (mag == 0x7F)
        return 0xFC; /* fp16 NaN 0x7E00 */
    if (mag >> 3)
        return (uint8_t)(mag + 120);
    if (m == 0)
        return 0;
    int e = m >= 4 ? 2 : m >= 2 ? 1 : 0;
    return (uint8_t)(((13 + e) << 3) | ((m - (1 << e)) << (3 - e)));
}

/* ---- weights: source [K, N] codes (fp8 bytes or 4-bit codes), tiles 16x16 -> [K/16, 16N], then the
 * 1024-element perm per chunk (out[j] = in[perm[j]]). ---- */
static int plan_mw(qc_layout *L, char *err, size_t n)
{
    int bits = L->desc->variant;
    if ((bits == 8 && L->elem_bytes && L->elem_bytes != 1) || (bits == 4 && L->elem_bytes))
        return qc_layout_fail(err, n, "%s: elements are %s; %s", L->desc->name, bits == 8 ? "fp8 bytes" : "4-bit codes",
                              bits == 8 ? "--elem-bytes must be 1" : "omit --elem-bytes");
    L->in_bits = L->out_bits = bits;
    if (L->R % 16 || L->C % 64)
        return qc_layout_fail(err, n, "%s: needs K (rows) %% 16 == 0 and N (cols) %% 64 == 0 (Marlin 16x64 tile; "
                              "perm of 1024), got rows=%lld cols=%lld", L->desc->name, (long long)L->R, (long long)L->C);
    L->Rg = L->R, L->Cg = L->C, L->pad = QC_PAD_NONE;
    if (qc_layout_set_dst(L, L->R, L->C, err, n))
        return 2;
    return 0;
}

static int64_t fwd_mw(const qc_layout *L, int64_t g, int64_t c)
{
    int64_t t = (c / 16) * 256 + (g % 16) * 16 + c % 16;
    return (g / 16) * 16 * L->C + (t / 1024) * 1024 + qcref_marlin_weight_perm_inv(t % 1024, L->desc->variant);
}

static int inv_mw(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t row = o / (16 * L->C), w = o % (16 * L->C);
    int64_t t = (w / 1024) * 1024 + qcref_marlin_weight_perm(w % 1024, L->desc->variant);
    *g = row * 16 + (t % 256) / 16;
    *c = (t / 256) * 16 + t % 16;
    return 0;
}

const qc_layout_desc qcref_layout_marlin_fp8_weight = {
    .name = "marlin_fp8_weight", .variant = 8,
    .summary = "Marlin FP8 weight repack (num_bits 8): 16x16 tiles, 1024-perm, 4 bytes per int32",
    .source = "layouts.md §8; vllm marlin_utils_test.py::marlin_weights/get_weight_perm(8), "
              "marlin_utils_fp8.py::pack_fp8_to_int32 + gptq_marlin_repack",
    .shapes = "source [K, N] fp8 bytes (K-first): K % 16, N % 64; is_a_8bit perm not modelled",
    .padding = "none",
    .plan = plan_mw, .fwd = fwd_mw, .inv = inv_mw};

const qc_layout_desc qcref_layout_marlin_nvfp4_weight = {
    .name = "marlin_nvfp4_weight", .variant = 4,
    .summary = "Marlin NVFP4 weight repack (num_bits 4): 16x16 tiles, 1024-perm, interleave [0,2,4,6,1,3,5,7], "
               "8 codes per int32",
    .source = "layouts.md §8; vllm marlin_utils_test.py::marlin_weights/get_weight_perm(4), "
              "marlin_utils_fp4.py::prepare_fp4_layer_for_marlin",
    .shapes = "source [K, N] 4-bit codes (K-first, 2 per byte, even low): K % 16, N % 64",
    .padding = "none",
    .plan = plan_mw, .fwd = fwd_mw, .inv = inv_mw};

/* ---- scales: source [G, N]; column gather with the 64-wide (grouped) or 32-wide perm ---- */
static const int scale_elems[] = {2, 1, 4, 0};

static int plan_ms(qc_layout *L, char *err, size_t n)
{
    int nv = L->desc->variant == 1;
    if (nv) {
        if (L->elem_bytes && L->elem_bytes != 1)
            return qc_layout_fail(err, n, "%s: e4m3 scale bytes: --elem-bytes must be 1", L->desc->name);
        L->in_bits = L->out_bits = 8;
    } else if (qc_layout_elem(L, scale_elems, err, n)) {
        return 2;
    }
    int64_t w = (nv || L->p[0]) ? 64 : 32;
    if (L->C % w)
        return qc_layout_fail(err, n, "%s: cols N=%lld must be a multiple of %lld (the %s scale perm)", L->desc->name,
                              (long long)L->C, (long long)w, w == 64 ? "grouped 64-wide" : "single 32-wide");
    L->d[0] = w == 64;
    L->Rg = L->R, L->Cg = L->C, L->pad = QC_PAD_NONE;
    if (qc_layout_set_dst(L, L->R, L->C, err, n))
        return 2;
    return 0;
}

static int64_t fwd_ms(const qc_layout *L, int64_t g, int64_t c)
{
    int64_t w = L->d[0] ? 64 : 32, flat = g * L->C + c;
    int64_t p = (flat / w) * w + qcref_marlin_scale_perm_inv(flat % w, (int)L->d[0]);
    return L->desc->variant == 1 ? (p / 4) * 4 + il(p % 4, 4) : p; /* then view(-1, 4)[:, [0, 2, 1, 3]] */
}

static int inv_ms(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t w = L->d[0] ? 64 : 32, p = L->desc->variant == 1 ? (o / 4) * 4 + il(o % 4, 4) : o;
    int64_t flat = (p / w) * w + qcref_marlin_scale_perm(p % w, (int)L->d[0]);
    *g = flat / L->C, *c = flat % L->C;
    return 0;
}

/* strict: NVFP4 Marlin assumes scales >= 0 (the real code only warns); NaN is rejected too. */
static int enc_nv(const qc_layout *L, uint32_t in, uint32_t *out)
{
    if (L->p[0] && ((in & 0x80) || (in & 0x7F) == 0x7F))
        return 1;
    *out = qcref_marlin_s0e5m3_from_e4m3((uint8_t)in);
    return 0;
}

static uint32_t dec_nv(const qc_layout *L, uint32_t out)
{
    (void)L;
    for (uint32_t c = 0; c < 0x7F; c++)
        if (qcref_marlin_s0e5m3_from_e4m3((uint8_t)c) == out)
            return c;
    return 0x7F; /* outside the image of non-negative finite scales */
}

const qc_layout_desc qcref_layout_marlin_scale = {
    .name = "marlin_scale",
    .summary = "marlin_permute_scales: column gather by scale_perm (64-wide, grouped) or scale_perm_single (32-wide)",
    .source = "layouts.md §8; vllm marlin_utils.py::get_scale_perms, marlin_permute_scales",
    .shapes = "source [G, N] (fp16/bf16 2 bytes default; 1 or 4 also): N % 64 (grouped) or % 32 (single)",
    .padding = "none",
    .params = {{"grouped", 1, "1: group_size < K (scale_perm); 0: per-channel (scale_perm_single)"}},
    .plan = plan_ms, .fwd = fwd_ms, .inv = inv_ms};

const qc_layout_desc qcref_layout_marlin_nvfp4_scale = {
    .name = "marlin_nvfp4_scale", .variant = 1,
    .summary = "NVFP4 Marlin scales: scale_perm (64-wide), then [0,2,1,3] within 4, e4m3 -> S0E5M3 bytes "
               "(a transform; inverse exact for non-negative finite scales)",
    .source = "layouts.md §8; vllm marlin_utils_fp4.py::prepare_fp4_layer_for_marlin, nvfp4_marlin_process_scales",
    .shapes = "source [K/16, N] e4m3 bytes (the transposed weight_scale): N % 64",
    .padding = "none",
    .params = {{"strict", 1, "1: reject negative or NaN scales (the real code warns and drops the sign)"}},
    .plan = plan_ms, .fwd = fwd_ms, .inv = inv_ms, .enc = enc_nv, .dec = dec_nv};
