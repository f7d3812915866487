/* aiter.c: AMD aiter weight and scale shuffles (docs/spec/layouts.md §4).
 * Sources: aiter aiter/ops/shuffle.py (shuffle_weight, shuffle_scale, the is_guinterleave paths),
 * aiter/utility/fp4_utils.py::e8m0_shuffle (= shuffle_scale). */
#include "layouts.h"

/* shuffle_weight(x, layout=(16,16)): view [N/16, 16, K/32, 32/KP, KP] permute (0, 2, 3, 1, 4):
 * every KP consecutive elements are one row's K slice, 16 rows interleaved per slice (layouts.md §4.1 [V]). */
QC_HD int64_t qcref_aiter_shuffle_weight_offset(int64_t n, int64_t k, int64_t K, int64_t kp)
{
    return (n / 16) * 16 * K + (k / 32) * 512 + ((k % 32) / kp) * (16 * kp) + (n % 16) * kp + k % kp;
}

/* shuffle_scale: pad to [pad(R,256), pad(C,8)], view [R/32, 2, 16, C/8, 2, 4] permute
 * (0, 3, 5, 2, 4, 1) (layouts.md §4.3 [V]). */
QC_HD int64_t qcref_aiter_shuffle_scale_offset(int64_t r, int64_t c, int64_t Cp)
{
    return (r / 32) * 32 * Cp + (c / 8) * 256 + (c % 4) * 64 + (r % 16) * 4 + ((c % 8) / 4) * 2 + (r % 32) / 16;
}

/* ---- shuffle_weight (16,16) ---- */
static const int weight_elems[] = {1, 2, 0};

static int plan_sw(qc_layout *L, char *err, size_t n)
{
    if (qc_layout_elem(L, weight_elems, err, n))
        return 2;
    /* KP = 16 / element_size, use_int4 sets KP = 32 (BK = 32 either way) */
    L->d[0] = L->p[0] ? 32 : 16 / (L->in_bits / 8);
    if (L->R % 16 || L->C % 32)
        return qc_layout_fail(err, n, "%s: needs rows %% 16 == 0 and cols %% 32 == 0 (shuffle_weight layout (16,16): "
                              "N %% BN, K %% BK), got rows=%lld cols=%lld", L->desc->name, (long long)L->R,
                              (long long)L->C);
    L->Rg = L->R, L->Cg = L->C, L->pad = QC_PAD_NONE;
    if (qc_layout_set_dst(L, L->R, L->C, err, n))
        return 2;
    return 0;
}

static int64_t fwd_sw(const qc_layout *L, int64_t g, int64_t c)
{
    return qcref_aiter_shuffle_weight_offset(g, c, L->C, L->d[0]);
}

static int inv_sw(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t kp = L->d[0], nb = o / (16 * L->C), w = o % (16 * L->C);
    int64_t kb = w / 512, w2 = w % 512, ks = w2 / (16 * kp), w3 = w2 % (16 * kp);
    *g = nb * 16 + w3 / kp;
    *c = kb * 32 + ks * kp + w3 % kp;
    return 0;
}

const qc_layout_desc qcref_layout_aiter_shuffle_weight = {
    .name = "aiter_shuffle_weight",
    .summary = "shuffle_weight layout (16,16): 16-row x 32-col tiles, KP-element row slices interleaved "
               "(KP = 16/elem bytes; int4=1: KP = 32)",
    .source = "layouts.md §4.1; aiter aiter/ops/shuffle.py::shuffle_weight",
    .shapes = "rows % 16 == 0, cols % 32 == 0 (elements of the stored dtype); elem 1 (fp8, int8, fp4x2) or 2 (bf16)",
    .padding = "none (pad_k_to is a separate zero pad of K before the shuffle)",
    .params = {{"int4", 0, "1: use_int4 (KP = 32)"}},
    .plan = plan_sw, .fwd = fwd_sw, .inv = inv_sw};

/* ---- shuffle_weight, is_guinterleave (layouts.md §4.2): layout (NLane, KPack), KLane = 64 / NLane ----
 * gate_up=1: view [2, N0, NLane, K0, KLane, KPack] permute to (N0, 2, K0, KLane, NLane, KPack);
 * gate_up=0: view [N0, NLane, K0, KLane, KPack] permute to (N0, K0, KLane, NLane, KPack). */
enum { GU_NLANE, GU_KPACK, GU_GATE_UP };

static int plan_swgu(qc_layout *L, char *err, size_t n)
{
    if (qc_layout_elem(L, weight_elems, err, n))
        return 2;
    int64_t nl = L->p[GU_NLANE], kpk = L->p[GU_KPACK], gu = L->p[GU_GATE_UP] != 0;
    if (nl < 1 || 64 % nl || kpk < 1)
        return qc_layout_fail(err, n, "%s: nlane=%lld must divide 64 (KLane = 64/NLane) and kpack=%lld be >= 1",
                              L->desc->name, (long long)nl, (long long)kpk);
    int64_t kl = 64 / nl;
    if (L->R % ((1 + gu) * nl) || L->C % (kl * kpk))
        return qc_layout_fail(err, n, "%s: needs rows %% %lld == 0 (%snlane) and cols %% %lld == 0 (KLane*KPack), "
                              "got rows=%lld cols=%lld", L->desc->name, (long long)((1 + gu) * nl),
                              gu ? "2*" : "", (long long)(kl * kpk), (long long)L->R, (long long)L->C);
    L->d[0] = nl, L->d[1] = kl, L->d[2] = kpk, L->d[3] = gu;
    L->d[4] = L->R / ((1 + gu) * nl); /* N0 */
    L->d[5] = L->C / (kl * kpk);      /* K0 */
    L->Rg = L->R, L->Cg = L->C, L->pad = QC_PAD_NONE;
    if (qc_layout_set_dst(L, L->R, L->C, err, n))
        return 2;
    return 0;
}

static int64_t fwd_swgu(const qc_layout *L, int64_t g, int64_t c)
{
    int64_t nl = L->d[0], kl = L->d[1], kpk = L->d[2], gu = L->d[3], K0 = L->d[5];
    int64_t half = gu ? L->R / 2 : L->R, h = g / half, rr = g % half;
    int64_t n0 = rr / nl, nli = rr % nl, k0 = c / (kl * kpk), kli = (c / kpk) % kl, kp = c % kpk;
    return ((((n0 * (1 + gu) + h) * K0 + k0) * kl + kli) * nl + nli) * kpk + kp;
}

static int inv_swgu(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t nl = L->d[0], kl = L->d[1], kpk = L->d[2], gu = L->d[3], K0 = L->d[5];
    int64_t kp = o % kpk, t = o / kpk, nli = t % nl;
    t /= nl;
    int64_t kli = t % kl;
    t /= kl;
    int64_t k0 = t % K0;
    t /= K0;
    int64_t h = t % (1 + gu), n0 = t / (1 + gu), half = gu ? L->R / 2 : L->R;
    *g = h * half + n0 * nl + nli;
    *c = (k0 * kl + kli) * kpk + kp;
    return 0;
}

const qc_layout_desc qcref_layout_aiter_shuffle_weight_gu = {
    .name = "aiter_shuffle_weight_gu",
    .summary = "shuffle_weight is_guinterleave: (NLane, KPack) tiles; gate_up=1 alternates NLane-row gate and "
               "up blocks",
    .source = "layouts.md §4.2; aiter aiter/ops/shuffle.py::shuffle_weight (is_guinterleave)",
    .shapes = "rows % (2*nlane) (gate_up=1) or % nlane; cols % (64/nlane * kpack); rows = N of one expert",
    .padding = "none",
    .params = {{"nlane", 16, "NLane (divides 64)"}, {"kpack", 16, "KPack, in elements"},
               {"gate_up", 1, "1: [gate; up] halves interleaved per NLane block"}},
    .plan = plan_swgu, .fwd = fwd_swgu, .inv = inv_swgu};

/* ---- shuffle_scale (e8m0 bytes) ---- */
static const int scale_elems[] = {1, 0};

static int plan_ss(qc_layout *L, char *err, size_t n)
{
    if (qc_layout_elem(L, scale_elems, err, n))
        return 2;
    L->Rg = qc_pad_to(L->R, 256), L->Cg = qc_pad_to(L->C, 8);
    L->pad = QC_PAD_UNDEFINED; /* torch.empty: padding bytes are uninitialised (layouts.md §4.3, T-SF6) */
    if (qc_layout_set_dst(L, L->Rg, L->Cg, err, n))
        return 2;
    return 0;
}

static int64_t fwd_ss(const qc_layout *L, int64_t g, int64_t c) { return qcref_aiter_shuffle_scale_offset(g, c, L->Cg); }

static int inv_ss(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t Cp = L->Cg, rb = o / (32 * Cp), w = o % (32 * Cp), cb = w / 256, w2 = w % 256;
    int64_t c4 = w2 / 64, r16 = (w2 % 64) / 4, c2 = (w2 % 4) / 2, r2 = w2 % 2;
    *g = rb * 32 + r2 * 16 + r16;
    *c = cb * 8 + c2 * 4 + c4;
    return 0;
}

const qc_layout_desc qcref_layout_aiter_shuffle_scale = {
    .name = "aiter_shuffle_scale",
    .summary = "shuffle_scale / e8m0_shuffle: 32x8 tiles, view [R/32,2,16,C/8,2,4] permute (0,3,5,2,4,1)",
    .source = "layouts.md §4.3; aiter aiter/ops/shuffle.py::shuffle_scale, fp4_utils.py::e8m0_shuffle",
    .shapes = "any R, C; rows padded to 256, cols to 8; e8m0 bytes (fp32 scales are returned untouched)",
    .padding = "UNDEFINED: torch.empty in the real code (qcheck writes 0 and never compares padding)",
    .plan = plan_ss, .fwd = fwd_ss, .inv = inv_ss};

/* ---- shuffle_scale is_guinterleave (layouts.md §4.3): per expert [n, k], k padded to 8 with 0x7F (= 1.0);
 * gate_up=1: view [2, n/32, 16, k/8, 2, 4] permute to (n/32, k/8, 4, 16, 2, 2[half]);
 * gate_up=0: view [n/32, 2, 16, k/8, 2, 4] permute to (n/32, k/8, 4, 16, 2, 2[row half]). */
static int plan_ssgu(qc_layout *L, char *err, size_t n)
{
    if (qc_layout_elem(L, scale_elems, err, n))
        return 2;
    if (L->R % 32)
        return qc_layout_fail(err, n, "%s: rows %lld (per expert) must be a multiple of 32 (view [.., n/32, 16, ..])",
                              L->desc->name, (long long)L->R);
    L->Rg = L->R, L->Cg = qc_pad_to(L->C, 8);
    L->pad = QC_PAD_CONST, L->pad_byte = 0x7F;
    if (qc_layout_set_dst(L, L->Rg, L->Cg, err, n))
        return 2;
    return 0;
}

static int64_t fwd_ssgu(const qc_layout *L, int64_t g, int64_t c)
{
    int64_t KB = L->Cg / 8, nb, r16, h;
    if (L->p[0]) {
        int64_t half = L->R / 2;
        h = g / half, nb = (g % half) / 16, r16 = g % 16;
    } else {
        nb = g / 32, h = (g % 32) / 16, r16 = g % 16;
    }
    int64_t kb = c / 8, kk = (c % 8) / 4, k4 = c % 4;
    return ((((nb * KB + kb) * 4 + k4) * 16 + r16) * 2 + kk) * 2 + h;
}

static int inv_ssgu(const qc_layout *L, int64_t o, int64_t *g, int64_t *c)
{
    int64_t KB = L->Cg / 8, h = o % 2, kk = (o / 2) % 2, r16 = (o / 4) % 16, k4 = (o / 64) % 4;
    int64_t kb = (o / 256) % KB, nb = o / 256 / KB;
    *g = L->p[0] ? h * (L->R / 2) + nb * 16 + r16 : nb * 32 + h * 16 + r16;
    *c = kb * 8 + kk * 4 + k4;
    return 0;
}

const qc_layout_desc qcref_layout_aiter_shuffle_scale_gu = {
    .name = "aiter_shuffle_scale_gu",
    .summary = "shuffle_scale is_guinterleave (MoE, per expert): gate_up=1 pairs gate and up rows in the last dim",
    .source = "layouts.md §4.3; aiter aiter/ops/shuffle.py::shuffle_scale (is_guinterleave, experts_cnt)",
    .shapes = "--batch = experts, rows = n per expert with n % 32 == 0; cols padded to 8",
    .padding = "0x7F (e8m0 1.0) on the K axis, as the real code pads",
    .params = {{"gate_up", 1, "1: [gate; up] halves interleaved"}},
    .plan = plan_ssgu, .fwd = fwd_ssgu, .inv = inv_ssgu};
