/* deepgemm.c: DeepGEMM scale-factor layouts (docs/spec/layouts.md §3).
 * Sources: DeepGEMM csrc/utils/math.hpp::get_tma_aligned_size (pad MN to 16 bytes),
 * csrc/jit_kernels/impls/smxx_layout.hpp::get_mn_major_tma_aligned_tensor and
 * get_mn_major_tma_aligned_packed_ue8m0_tensor, csrc/apis/layout.hpp::transform_sf_into_required_layout,
 * csrc/utils/layout.hpp::check_sf_layout, tests/test_layout.py (the torch reference of the pack). */
#include "layouts.h"

#include "../qc_checked.h"

/* MN-major TMA-aligned fp32: logical [MN, SK] with strides (1, A), A = pad(MN, 4) (layouts.md §3.1, §3.2). */
QC_HD int64_t qcref_deepgemm_mn_major_addr(int64_t r, int64_t j, int64_t MN) { return j * qc_pad_to(MN, 4) + r; }

/* byte(v) = (bits(v) >> 23) & 0xFF (layouts.md §3.3). DeepGEMM assumes sign 0 and mantissa 0; a
 * non-power-of-two then silently truncates (T-DG2). strict rejects everything but normal positive
 * powers of two (biased exponent 1..254, mantissa 0); +0 is accepted as the pack's own padding. */
QC_HD int qcref_deepgemm_ue8m0_byte(uint32_t f32_bits, int strict, uint8_t *out)
{
    uint32_t e = (f32_bits >> 23) & 0xFFu;
    if (strict && f32_bits != 0 && ((f32_bits & 0x807FFFFFu) != 0 || e == 0 || e == 0xFF))
        return 1;
    *out = (uint8_t)e;
    return 0;
}

enum { MODE_MN_MAJOR, MODE_IDENTITY, MODE_PACKED };
/* d[0] mode, d[1] row granularity (per-row broadcast), d[2] mn, d[3] strict, d[4] A = pad(mn, 4) */

static int plan_mode(qc_layout *L, int mode, char *err, size_t n)
{
    if (L->elem_bytes && L->elem_bytes != 4)
        return qc_layout_fail(err, n, "%s: scales are fp32: --elem-bytes must be 4, got %d", L->desc->name,
                              L->elem_bytes);
    L->in_bits = L->out_bits = 32;
    L->d[0] = mode;
    if (!L->d[1])
        L->d[1] = 1, L->d[2] = L->R;
    L->d[4] = qc_pad_to(L->d[2], 4);
    switch (mode) {
    case MODE_MN_MAJOR: /* torch.empty_strided: rows MN..A-1 are allocation padding */
        L->Rg = L->d[4], L->Cg = L->C, L->pad = QC_PAD_UNDEFINED;
        break;
    case MODE_IDENTITY:
        L->Rg = L->R, L->Cg = L->C, L->pad = QC_PAD_NONE;
        break;
    default: /* SK padded to 4 with zero bytes; rows MN..A-1 zero (T-DG2: never torch.empty) */
        L->out_bits = 8;
        L->Rg = L->d[4], L->Cg = qc_pad_to(L->C, 4), L->pad = QC_PAD_ZERO;
        break;
    }
    if (qc_layout_set_dst(L, L->Rg, L->Cg, err, n))
        return 2;
    return 0;
}

static int64_t fwd_dg(const qc_layout *L, int64_t g, int64_t c)
{
    switch (L->d[0]) {
    case MODE_MN_MAJOR: return c * L->Rg + g;
    case MODE_IDENTITY: return g * L->C + c;
    default: return ((c / 4) * L->Rg + g) * 4 + c % 4; /* int32 P[p][r], byte c%4 little-endian */
    }
}

static int inv_dg(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    switch (L->d[0]) {
    case MODE_MN_MAJOR: *g = o % L->Rg, *c = o / L->Rg; break;
    case MODE_IDENTITY: *g = o / L->C, *c = o % L->C; break;
    default: *g = (o / 4) % L->Rg, *c = (o / 4) / L->Rg * 4 + o % 4; break;
    }
    return 0;
}

static int64_t row_src_dg(const qc_layout *L, int64_t g) { return g < L->d[2] ? g / L->d[1] : -1; }

static int enc_dg(const qc_layout *L, uint32_t in, uint32_t *out)
{
    if (L->d[0] != MODE_PACKED) {
        *out = in;
        return 0;
    }
    uint8_t b = 0;
    int rc = qcref_deepgemm_ue8m0_byte(in, (int)L->d[3], &b);
    *out = b;
    return rc;
}

static uint32_t dec_dg(const qc_layout *L, uint32_t out) { return L->d[0] == MODE_PACKED ? out << 23 : out; }

static int plan_mn_major(qc_layout *L, char *err, size_t n) { return plan_mode(L, MODE_MN_MAJOR, err, n); }

static int plan_packed(qc_layout *L, char *err, size_t n)
{
    L->d[3] = L->p[0];
    return plan_mode(L, MODE_PACKED, err, n);
}

const qc_layout_desc qcref_layout_deepgemm_mn_major = {
    .name = "deepgemm_mn_major",
    .summary = "MN-major TMA-aligned fp32 scales: addr(b, r, j) = b*A*SK + j*A + r, A = pad(MN, 4)",
    .source = "layouts.md §3.2; DeepGEMM smxx_layout.hpp::get_mn_major_tma_aligned_tensor",
    .shapes = "source [B, MN, SK] fp32 (elem 4 bytes); any MN (T-DG1: mn % 4 != 0 is legal)",
    .padding = "undefined: rows MN..A-1 come from torch.empty_strided (qcheck writes 0, never compares)",
    .plan = plan_mn_major, .fwd = fwd_dg, .inv = inv_dg, .row_src = row_src_dg};

const qc_layout_desc qcref_layout_deepgemm_packed_ue8m0 = {
    .name = "deepgemm_packed_ue8m0",
    .summary = "4 UE8M0 bytes per int32 along K, MN-major: P[b][r][p] at int32 b*PK*A + p*A + r (a transform: "
               "fp32 power of two in, its exponent byte out; inverse byte e -> e << 23)",
    .source = "layouts.md §3.3; DeepGEMM smxx_layout.hpp::get_mn_major_tma_aligned_packed_ue8m0_tensor, "
              "tests/test_layout.py",
    .shapes = "source [B, MN, SK] fp32 (elem 4 bytes); any MN, SK; out [B, ceil(SK/4), pad(MN,4)] int32",
    .padding = "zero (SK padded to 4 with zero bytes; rows MN..A-1 zero)",
    .params = {{"strict", 1, "1: reject inputs that are not normal positive powers of two; 0: take "
                             "(bits >> 23) & 0xFF as DeepGEMM does"}},
    .plan = plan_packed, .fwd = fwd_dg, .inv = inv_dg, .row_src = row_src_dg, .enc = enc_dg, .dec = dec_dg};

/* transform_sf_into_required_layout (layouts.md §3.4): the recipe table. */
enum { T_GRAN_MN, T_GRAN_K, T_ARCH, T_MN, T_DISABLE, T_STRICT };

static int plan_transform(qc_layout *L, char *err, size_t n)
{
    int64_t g = L->p[T_GRAN_MN], gk = L->p[T_GRAN_K], arch = L->p[T_ARCH];
    const char *nm = L->desc->name;
    if (g < 1)
        return qc_layout_fail(err, n, "%s: gran_mn=%lld must be >= 1", nm, (long long)g);
    if (arch != 90 && arch != 100 && arch != 120)
        return qc_layout_fail(err, n, "%s: arch=%lld unknown (90, 100, or 120 which DeepGEMM PR #403 routes like 100)",
                              nm, (long long)arch);
    L->d[3] = L->p[T_STRICT];
    if (arch == 90 || L->p[T_DISABLE]) {
        if (gk != 128)
            return qc_layout_fail(err, n, "%s: fp32 scales on SM90 need gran_k=128, got %lld", nm, (long long)gk);
        if (g == 1)
            return plan_mode(L, MODE_MN_MAJOR, err, n);
        if (g == 128)
            return plan_mode(L, MODE_IDENTITY, err, n);
        return qc_layout_fail(err, n, "%s: fp32 scales on SM90 need gran_mn 1 or 128, got %lld", nm, (long long)g);
    }
    if (gk != 32 && gk != 128)
        return qc_layout_fail(err, n, "%s: SM100 packing needs gran_k 32 or 128, got %lld", nm, (long long)gk);
    int overflow = 0; /* R and gran_mn are at most 2^40 (qcref_layout_plan), their product may not fit */
    int64_t mn = L->p[T_MN] ? L->p[T_MN] : qc_ck_mul(L->R, g, &overflow);
    if (overflow || mn < 1)
        return qc_layout_fail(err, n, "%s: mn=%lld (rows x gran_mn = %lld x %lld) must be >= 1", nm,
                              (long long)mn, (long long)L->R, (long long)g);
    if ((mn + g - 1) / g != L->R)
        return qc_layout_fail(err, n, "%s: rows %lld must be ceil(mn/gran_mn) = ceil(%lld/%lld) = %lld", nm,
                              (long long)L->R, (long long)mn, (long long)g, (long long)((mn + g - 1) / g));
    L->d[1] = g, L->d[2] = mn; /* row r takes sf[r / gran_mn]: per-row broadcast, then pack */
    return plan_mode(L, MODE_PACKED, err, n);
}

const qc_layout_desc qcref_layout_deepgemm_sf_transform = {
    .name = "deepgemm_sf_transform",
    .summary = "transform_sf_into_required_layout for fp32 scales: SM90 (1,128) -> deepgemm_mn_major, SM90 "
               "(128,128) -> unchanged, SM100 (g,32|128) -> row r takes sf[r/g] (broadcast), then packed UE8M0",
    .source = "layouts.md §3.4; DeepGEMM csrc/apis/layout.hpp::transform_sf_into_required_layout",
    .shapes = "source [B, ceil(mn/gran_mn), SK] fp32; mn defaults to rows*gran_mn",
    .padding = "as the branch taken: undefined (mn_major), none (unchanged), zero (packed)",
    .params = {{"gran_mn", 1, "MN granularity of the input scales (1, 128, ...)"},
               {"gran_k", 128, "K granularity: 128, or 32 (SM100 only)"},
               {"arch", 100, "90, 100 or 120"},
               {"mn", 0, "rows of the operand (0: rows*gran_mn)"},
               {"disable_ue8m0_cast", 0, "1: SM90 behaviour on SM100"},
               {"strict", 1, "packed branch: reject non-powers of two"}},
    .plan = plan_transform, .fwd = fwd_dg, .inv = inv_dg, .row_src = row_src_dg, .enc = enc_dg, .dec = dec_dg};
