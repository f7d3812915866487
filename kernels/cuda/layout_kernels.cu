/* layout_kernels.cu: the layout maps of docs/spec/layouts.md §2-§8 on the device (the §1
 * block-scale swizzles are kernels.cu's qck_swizzle_kernel). Each map is one device function from
 * a destination element (index within one batch) to its source element (row * C + col within the
 * batch) or to padding; one kernel thread per destination element gathers it, so every write is
 * one thread's. 4-bit elements (two per byte, the even one in the low nibble, layouts.md §0): one
 * thread per destination byte, both nibbles. The index arithmetic is written from the spec's text
 * (its formulas, views and permutes), not from the reference's map code, so that the harness's
 * comparison against reference/layouts/ checks two readings of the spec. */
#include "layout_kernels.h" /* first: under HIP, gpu.h's runtime header gives memcpy its device overload */

#include <stdio.h>
#include <string.h>

namespace {

enum { LK_THREADS = 256 };
const int64_t LK_PAD = -1, LK_DERIVED = -2;

QCK_HD int64_t lk_round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* The source element of cell (r, c) of the source's own [R, C] frame, or padding. */
QCK_D int64_t lk_cell(const qck_layout_map &m, int64_t r, int64_t c) { return r < m.R && c < m.C ? r * m.C + c : LK_PAD; }

/* layouts.md §1 inverse map: byte o of a 128x4 buffer with Cp columns -> grid cell (r, c). 512-byte atoms,
 * row tile major; inside an atom byte 16*(r%32) + 4*((r%128)/32) + c%4. */
QCK_D void lk_sf128_rc(int64_t o, int64_t Cp, int64_t *r, int64_t *c)
{
    int64_t t = o / 512, w = o % 512;
    *r = t / (Cp / 4) * 128 + w / 4 % 4 * 32 + w / 16;
    *c = t % (Cp / 4) * 4 + w % 4;
}

/* ---- layouts.md §2 TRT-LLM: row gathers (a[0] = the shuffle block bs, 32 or 16) ---- */

/* layouts.md §2.1: output row n of shuffle_matrix_a reads row (n/bs)*bs + (n%8)*(bs/8) + (n%bs)/8. */
QCK_D int64_t lk_shuffle_row(int64_t n, int64_t bs) { return n / bs * bs + n % 8 * (bs / 8) + n % bs / 8; }

/* layouts.md §2.3: out[2i] = X[i], out[2i+1] = X[M/2 + i]. */
QCK_D int64_t lk_gated_row(int64_t n, int64_t M) { return n % 2 ? M / 2 + n / 2 : n / 2; }

QCK_D int64_t lk_shuffle_a(const qck_layout_map &m, int64_t o) { return lk_shuffle_row(o / m.C, m.a[0]) * m.C + o % m.C; }

/* layouts.md §2.2: the row gather on the linear scales, then 128x4 with C padded to 4 (rows % 128 == 0). */
QCK_D int64_t lk_shuffle_sf_a(const qck_layout_map &m, int64_t o)
{
    int64_t r, c;
    lk_sf128_rc(o, m.Cg, &r, &c);
    return c < m.C ? lk_shuffle_row(r, m.a[0]) * m.C + c : LK_PAD;
}

QCK_D int64_t lk_gated_reorder(const qck_layout_map &m, int64_t o) { return lk_gated_row(o / m.C, m.R) * m.C + o % m.C; }

/* layouts.md §2.4: out[i] = in[P0[P1[i]]], P1 the shuffle, P0 the gated reorder; a[1] = sf: then 128x4. */
QCK_D int64_t lk_gated_w13(const qck_layout_map &m, int64_t o)
{
    int64_t r = o / m.C, c = o % m.C;
    if (m.a[1])
        lk_sf128_rc(o, m.Cg, &r, &c);
    return c < m.C ? lk_gated_row(lk_shuffle_row(r, m.a[0]), m.R) * m.C + c : LK_PAD;
}

/* layouts.md §2.5: out[kb][r][j] = X[r][kb*bk + j], a[0] = bk. */
QCK_D int64_t lk_block_major_k(const qck_layout_map &m, int64_t o)
{
    int64_t bk = m.a[0], kb = o / (m.R * bk), r = o % (m.R * bk) / bk;
    return r * m.C + kb * bk + o % bk;
}

/* ---- layouts.md §3 DeepGEMM (A = Rg = pad(MN, 4)) ---- */

/* layouts.md §3.2: fp32 (r, j) at j*A + r; rows MN..A-1 are allocation padding. */
QCK_D int64_t lk_dg_mn_major(const qck_layout_map &m, int64_t o) { return lk_cell(m, o % m.Rg, o / m.Rg); }

/* layouts.md §3.3: byte i of the int32 at p*A + r holds the scale of K block 4p + i (zero past SK). §3.4:
 * row r < mn (a[2]) takes source row r / gran_mn (a[1]); plain packing has gran_mn 1, mn = R. */
QCK_D int64_t lk_dg_packed(const qck_layout_map &m, int64_t o)
{
    int64_t word = o / 4, r = word % m.Rg, j = word / m.Rg * 4 + o % 4;
    return r < m.a[2] && j < m.C ? r / m.a[1] * m.C + j : LK_PAD;
}

/* ---- layouts.md §4 aiter ---- */

/* layouts.md §4.1: view [N/16, 16, K/32, 32/KP, KP], permute (0, 2, 3, 1, 4): a 16-row band holds 16K
 * elements, a 16x32 tile 512, and in it each KP-wide K slice of the 16 rows (16*KP). a[0] = KP. */
QCK_D int64_t lk_aiter_w(const qck_layout_map &m, int64_t o)
{
    int64_t kp = m.a[0], nt = o / (16 * m.C), kt = o % (16 * m.C) / 512, w = o % 512;
    int64_t n = nt * 16 + w % (16 * kp) / kp, k = kt * 32 + w / (16 * kp) * kp + w % kp;
    return n * m.C + k;
}

/* layouts.md §4.2: view [2, N0, NLane, K0, KLane, KPack] (gate/up halves), permute to (N0, 2, K0, KLane, NLane,
 * KPack); without gate_up the half axis is absent. a = {NLane, KPack, gate_up}. */
QCK_D int64_t lk_aiter_w_gu(const qck_layout_map &m, int64_t o)
{
    int64_t nl = m.a[0], kpk = m.a[1], halves = m.a[2] ? 2 : 1, kl = 64 / nl;
    int64_t k0s = m.C / (kl * kpk), half_rows = m.R / halves;
    int64_t kp = o % kpk, n = o / kpk % nl, kq = o / (kpk * nl) % kl, rest = o / (kpk * nl * kl);
    int64_t k0 = rest % k0s, h = rest / k0s % halves, n0 = rest / (k0s * halves);
    return (h * half_rows + n0 * nl + n) * m.C + (k0 * kl + kq) * kpk + kp;
}

/* layouts.md §4.3: [R/32, 2, 16, C/8, 2, 4] permuted (0, 3, 5, 2, 4, 1): per 32-row band 32*Cp bytes, per
 * 8-column block 256, then (c%4)*64 + (r%16)*4 + ((c%8)/4)*2 + (r%32)/16. */
QCK_D int64_t lk_aiter_s(const qck_layout_map &m, int64_t o)
{
    int64_t band = o / (32 * m.Cg), ct = o % (32 * m.Cg) / 256, w = o % 256;
    return lk_cell(m, band * 32 + w % 2 * 16 + w % 64 / 4, ct * 8 + w % 4 / 2 * 4 + w / 64);
}

/* layouts.md §4.3 is_guinterleave, per expert (rows n % 32, cols padded to 8): view [2, n/32, 16, k/8, 2, 4]
 * (gate_up, a[0]) permuted to (n/32, k/8, 4, 16, 2, 2) with the half last, or view
 * [n/32, 2, 16, k/8, 2, 4] permuted to the same order with the 16-row half last. */
QCK_D int64_t lk_aiter_s_gu(const qck_layout_map &m, int64_t o)
{
    int64_t last = o % 2, k2 = o / 2 % 2, r16 = o / 4 % 16, k4 = o / 64 % 4, kb = o / 256 % (m.Cg / 8);
    int64_t a = o / (32 * m.Cg), r = m.a[0] ? last * (m.R / 2) + a * 16 + r16 : a * 32 + last * 16 + r16;
    return lk_cell(m, r, kb * 8 + k2 * 4 + k4);
}

/* ---- layouts.md §5 triton_kernels ---- */

/* layouts.md §5.1 BLACKWELL_SCALE: source [K_sf, N]; 128x4 of the transpose [Np, Kp] (Kp = Rg, pad 8). */
QCK_D int64_t lk_tk_bw(const qck_layout_map &m, int64_t o)
{
    int64_t n, k;
    lk_sf128_rc(o, m.Rg, &n, &k);
    return lk_cell(m, k, n);
}

/* layouts.md §5.1 BLACKWELL_ACT_SCALE: 128x4 of [M, K_sf] itself, K padded to 8 (Cg). */
QCK_D int64_t lk_tk_bw_act(const qck_layout_map &m, int64_t o)
{
    int64_t r, c;
    lk_sf128_rc(o, m.Cg, &r, &c);
    return lk_cell(m, r, c);
}

/* layouts.md §5.2 HOPPER_MX_SCALE, W = a[0]: destination [M/32, 32K]; col = (k/2)*64 + a*32 + c*4 + (k%2)*2 + b
 * and row = m0*W + w give m = m0*32W + a*16W + w*16 + b*8 + c. */
QCK_D int64_t lk_tk_hopper(const qck_layout_map &m, int64_t o)
{
    int64_t W = m.a[0], row = o / (32 * m.Cg), col = o % (32 * m.Cg), q = col % 64;
    int64_t r = row / W * 32 * W + q / 32 * 16 * W + row % W * 16 + q % 2 * 8 + q % 32 / 4;
    return lk_cell(m, r, col / 64 * 2 + q % 4 / 2);
}

/* ---- layouts.md §6 W13 ---- */

/* layouts.md §6.1: [gate; up] <-> [up; gate]: row n takes row (n + I) % 2I. */
QCK_D int64_t lk_w13_swap(const qck_layout_map &m, int64_t o) { return (o / m.C + m.R / 2) % m.R * m.C + o % m.C; }

/* layouts.md §6.1: swap_every_two_rows. */
QCK_D int64_t lk_w13_pairs(const qck_layout_map &m, int64_t o) { return (o / m.C ^ 1) * m.C + o % m.C; }

/* layouts.md §6.2: new_row(h, j) = (j/g)*2g + h*g + j%g, read backwards: row n is half (n/g)%2, j = (n/2g)*g + n%g. */
QCK_D int64_t lk_w13_interleave(const qck_layout_map &m, int64_t o)
{
    int64_t g = m.a[0], n = o / m.C;
    return (n / g % 2 * (m.R / 2) + n / (2 * g) * g + n % g) * m.C + o % m.C;
}

/* layouts.md §6.3: a = {align, split, gated}. Split halves: up rows [I, 2I) go to [Ip, Ip + I); else the rows
 * stay where they are and zeros follow. */
QCK_D int64_t lk_w13_pad(const qck_layout_map &m, int64_t o)
{
    int64_t g = o / m.C, c = o % m.C;
    if (!(m.a[1] && m.a[2]))
        return lk_cell(m, g, c);
    int64_t I = m.R / 2, Ip = m.Rg / 2;
    return g % Ip < I ? (g / Ip * I + g % Ip) * m.C + c : LK_PAD;
}

/* layouts.md §6.3 pad_nvfp4_weight: zero rows and zero byte columns after the data. */
QCK_D int64_t lk_pad_nvfp4(const qck_layout_map &m, int64_t o) { return lk_cell(m, o / m.Cg, o % m.Cg); }

/* ---- layouts.md §7 sgl-kernel CPU packing: 32-row blocks at n0 * row length ---- */

/* VNNI-2: [K/2, Nb, 2] per block; the last block may have Nb = 16. */
QCK_D int64_t lk_amx_vnni2(const qck_layout_map &m, int64_t o)
{
    int64_t n0 = o / (32 * m.C) * 32, nb = m.R - n0 < 32 ? m.R - n0 : 32, w = o - n0 * m.C;
    return (n0 + w % (2 * nb) / 2) * m.C + w / (2 * nb) * 2 + w % 2;
}

/* VNNI-4 int8: [K/4, 32, 4] (32*K bytes), then 32 int32 compensation words: row length K + 4. */
QCK_D int64_t lk_amx_vnni4(const qck_layout_map &m, int64_t o)
{
    int64_t blk = o / (32 * (m.C + 4)), w = o % (32 * (m.C + 4));
    if (w >= 32 * m.C)
        return LK_DERIVED;
    return (blk * 32 + w % 128 / 4) * m.C + w / 128 * 4 + w % 4;
}

/* Byte o of a compensation word: comp[n] = sum_k 128 * W[n][k], W int8, little-endian int32. */
QCK_D uint8_t lk_vnni4_comp(const qck_layout_map &m, const uint8_t *xb, int64_t o)
{
    int64_t blk = o / (32 * (m.C + 4)), t = o % (32 * (m.C + 4)) - 32 * m.C;
    const uint8_t *row = xb + (blk * 32 + t / 4) * m.C;
    uint32_t sum = 0; /* mod 2^32: the int32 word's bits, without signed overflow */
    for (int64_t k = 0; k < m.C; k++)
        sum += 128u * (uint32_t)(int32_t)(int8_t)row[k];
    return (uint8_t)(sum >> (8 * (t % 4)));
}

/* uint8 (4-bit codes): byte kb*32 + n of a block is u[n] | u[n+32] << 4, u[2j+h] = nibble h of
 * W[j][kb]; so nibble h of byte (kb, n) is row 16h + n/2, code 2kb + n%2. Element = nibble index. */
QCK_D int64_t lk_amx_u4(const qck_layout_map &m, int64_t o)
{
    int64_t byte = o / 2, blk = byte / (16 * m.C), w = byte % (16 * m.C), n = w % 32;
    return (blk * 32 + o % 2 * 16 + n / 2) * m.C + w / 32 * 2 + n % 2;
}

/* convert_scale_packed: dst[nb][g][n] = src[nb*32 + n][g]. */
QCK_D int64_t lk_amx_mx4s(const qck_layout_map &m, int64_t o)
{
    int64_t nb = o / (32 * m.C), w = o % (32 * m.C);
    return (nb * 32 + w % 32) * m.C + w / 32;
}

/* ---- layouts.md §8 Marlin ---- */

/* marlin_permute_scales: a column gather per chunk of w = 64 (grouped, a[0]) or 32 columns.
 * scale_perm[8i + j] = i + 8j; scale_perm_single[8i + u] = 2i + {0,1,8,9,16,17,24,25}[u]. */
QCK_D int64_t lk_marlin_scale(const qck_layout_map &m, int64_t o)
{
    int64_t col = o % m.C, t = col % (m.a[0] ? 64 : 32);
    int64_t perm = m.a[0] ? t / 8 + t % 8 * 8 : t / 8 * 2 + t % 8 / 2 * 8 + t % 2;
    return o - t + perm;
}

/* get_weight_perm: chunk position p (0..1023) -> element of the 16x16-tiled chunk. Before the
 * interleave, position 32i + 8j + 4*block + ri holds 256j + 16*row + i/4 + 8*block, row the ri-th
 * of {2(i%4), 2(i%4)+1, 2(i%4+4), 2(i%4+4)+1}; the interleave then gathers within groups of
 * 8 (4-bit: [0,2,4,6,1,3,5,7]) or 4 (8-bit: [0,2,1,3]). */
QCK_D int64_t lk_marlin_perm(int64_t p, int bits)
{
    int64_t t = p % (bits == 4 ? 8 : 4), il = bits == 4 ? t % 4 * 2 + t / 4 : t % 2 * 2 + t / 2;
    int64_t q = p - t + il, i = q / 32, ri = q % 4;
    int64_t row = 2 * (i % 4 + ri / 2 * 4) + ri % 2;
    return q % 32 / 8 * 256 + 16 * row + i / 4 + q % 8 / 4 * 8;
}

/* marlin_weights on [K, N]: view [K/16, 16, N/16, 16] permuted (0, 2, 1, 3) to [K/16, 16N], each
 * 1024-element chunk gathered by the perm; then pack_factor values per int32, value i at bits*i,
 * which keeps the element order (little-endian; nibble i of a word = element 8w + i). */
QCK_D int64_t lk_marlin_w(const qck_layout_map &m, int64_t o)
{
    int64_t T = o / 1024 * 1024 + lk_marlin_perm(o % 1024, m.in_bits), band = 16 * m.C;
    int64_t kt = T / band, nt = T % band / 256, w = T % 256;
    return (kt * 16 + w / 16) * m.C + nt * 16 + w % 16;
}

/* nvfp4_marlin_process_scales after marlin_permute_scales (64-wide): a [0,2,1,3] gather within
 * each 4 columns of the permuted scales. */
QCK_D int64_t lk_marlin_nv_scale(const qck_layout_map &m, int64_t o)
{
    int64_t t = o % 4, col = o % m.C - t + t % 2 * 2 + t / 2, u = col % 64;
    return o / m.C * m.C + col - u + u / 8 + u % 8 * 8;
}

QCK_D int64_t lk_src(const qck_layout_map &m, int64_t o)
{
    switch (m.id) {
    case QCK_LM_SHUFFLE_A: return lk_shuffle_a(m, o);
    case QCK_LM_SHUFFLE_SF_A: return lk_shuffle_sf_a(m, o);
    case QCK_LM_GATED_REORDER: return lk_gated_reorder(m, o);
    case QCK_LM_GATED_W13: return lk_gated_w13(m, o);
    case QCK_LM_BLOCK_MAJOR_K: return lk_block_major_k(m, o);
    case QCK_LM_DG_MN_MAJOR: return lk_dg_mn_major(m, o);
    case QCK_LM_DG_PACKED: return lk_dg_packed(m, o);
    case QCK_LM_AITER_W: return lk_aiter_w(m, o);
    case QCK_LM_AITER_W_GU: return lk_aiter_w_gu(m, o);
    case QCK_LM_AITER_S: return lk_aiter_s(m, o);
    case QCK_LM_TK_BW: return lk_tk_bw(m, o);
    case QCK_LM_TK_BW_ACT: return lk_tk_bw_act(m, o);
    case QCK_LM_TK_HOPPER: return lk_tk_hopper(m, o);
    case QCK_LM_W13_SWAP: return lk_w13_swap(m, o);
    case QCK_LM_W13_PAIRS: return lk_w13_pairs(m, o);
    case QCK_LM_W13_INTERLEAVE: return lk_w13_interleave(m, o);
    case QCK_LM_W13_PAD: return lk_w13_pad(m, o);
    case QCK_LM_PAD_NVFP4: return lk_pad_nvfp4(m, o);
    case QCK_LM_AMX_VNNI2: return lk_amx_vnni2(m, o);
    case QCK_LM_AMX_VNNI4: return lk_amx_vnni4(m, o);
    case QCK_LM_AMX_U4: return lk_amx_u4(m, o);
    case QCK_LM_AMX_MX4S: return lk_amx_mx4s(m, o);
    case QCK_LM_MARLIN_W: return lk_marlin_w(m, o);
    case QCK_LM_MARLIN_NV_SCALE: return lk_marlin_nv_scale(m, o);
    case QCK_LM_AITER_S_GU: return lk_aiter_s_gu(m, o);
    case QCK_LM_IDENTITY: return o;
    case QCK_LM_MARLIN_SCALE: return lk_marlin_scale(m, o);
    default: return LK_PAD; /* qck_layout_map_of sets no other id */
    }
}

/* layouts.md §3.3: the UE8M0 byte of an fp32 scale, (bits >> 23) & 0xFF. strict (a[0], qcheck's own rule,
 * layouts.md §3.3 "strict"): sign 0 and mantissa 0 with a biased exponent below 255, i.e. the
 * normal positive powers of two and +0 (byte 0); the rest is flagged. */
QCK_D uint8_t lk_ue8m0(const qck_layout_map &m, const uint8_t *p, int64_t gs, unsigned long long *bad)
{
    uint32_t bits = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    uint32_t e = bits >> 23 & 0xFFu;
    if (m.a[0] && ((bits & 0x807FFFFFu) || e == 0xFFu))
        atomicMin(bad, (unsigned long long)gs);
    return (uint8_t)e;
}

/* layouts.md §8: an e4m3 scale as S0E5M3: the high byte of (fp16(s) * 2^7) << 1, i.e. the fp16 exponent
 * field and the top 3 mantissa bits of |s| * 128 (>= 2^-2 for every nonzero code, so normal in
 * fp16); NaN (fp16 0x7E00 or 0xFE00) gives 0xFC. strict (a[0]) flags NaN and every code with the
 * sign bit, -0 included (layouts.md §8 "strict": outside the domain the inverse restores). */
QCK_D uint8_t lk_s0e5m3(const qck_layout_map &m, uint8_t b, int64_t gs, unsigned long long *bad)
{
    int e = b >> 3 & 0xF, f = b & 7;
    if (m.a[0] && ((b & 0x7F) == 0x7F || (b & 0x80)))
        atomicMin(bad, (unsigned long long)gs);
    if ((b & 0x7F) == 0x7F)
        return 0xFC;
    if (e == 0 && f == 0)
        return 0;
    if (e == 0) /* subnormal: f * 2^-9 * 2^7 = 2^(h-2) * f/2^h, h the top bit of f: normalise */
        for (e = 1; f < 8; f <<= 1)
            e--;
    return (uint8_t)((e + 15) << 3 | (f & 7));
}

/* Destination element i (global over the batches) of a whole-byte map. */
QCK_D void lk_put_elem(const qck_layout_map &m, const uint8_t *x, uint8_t *y, int64_t i, unsigned long long *bad)
{
    int64_t b = i / m.dst_elems, o = i % m.dst_elems, s = lk_src(m, o), ob = m.out_bits / 8, ib = m.in_bits / 8;
    uint8_t *d = y + i * ob;
    if (s == LK_DERIVED) {
        d[0] = lk_vnni4_comp(m, x + b * m.R * m.C, o);
    } else if (s == LK_PAD) {
        for (int64_t k = 0; k < ob; k++)
            d[k] = m.pad;
    } else if (m.id == QCK_LM_DG_PACKED) {
        d[0] = lk_ue8m0(m, x + (b * m.R * m.C + s) * 4, b * m.R * m.C + s, bad);
    } else if (m.id == QCK_LM_MARLIN_NV_SCALE) {
        d[0] = lk_s0e5m3(m, x[b * m.R * m.C + s], b * m.R * m.C + s, bad);
    } else {
        const uint8_t *src = x + (b * m.R * m.C + s) * ib;
        for (int64_t k = 0; k < ob; k++)
            d[k] = src[k];
    }
}

/* Destination byte i of a 4-bit map: its two nibbles, each gathered (element e in byte e/2). */
QCK_D void lk_put_nibbles(const qck_layout_map &m, const uint8_t *x, uint8_t *y, int64_t i)
{
    uint32_t v = 0;
    for (int h = 0; h < 2; h++) {
        int64_t e = 2 * i + h;
        if (e >= m.B * m.dst_elems)
            break;
        int64_t s = lk_src(m, e % m.dst_elems), gs = e / m.dst_elems * m.R * m.C + s;
        uint32_t nib = s < 0 ? (uint32_t)m.pad & 0xFu : (uint32_t)x[gs / 2] >> (4 * (gs % 2)) & 0xFu;
        v |= nib << (4 * h);
    }
    y[i] = (uint8_t)v;
}

__global__ void __launch_bounds__(LK_THREADS) lk_kernel(qck_layout_map m, const uint8_t *__restrict__ x,
                                                         uint8_t *__restrict__ y, unsigned long long *bad)
{
    const int64_t n = m.out_bits == 4 ? (m.B * m.dst_elems + 1) / 2 : m.B * m.dst_elems;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (m.out_bits == 4)
            lk_put_nibbles(m, x, y, i);
        else
            lk_put_elem(m, x, y, i, bad);
    }
}

/* The inverse: destination element i scatters back to its source element (a bijection on the
 * data cells of an invertible map, so no two threads write one byte). */
__global__ void __launch_bounds__(LK_THREADS) lk_inverse_kernel(qck_layout_map m, const uint8_t *__restrict__ y,
                                                                 uint8_t *__restrict__ x)
{
    const int64_t n = m.B * m.dst_elems, stride = (int64_t)gridDim.x * blockDim.x, eb = m.in_bits / 8;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        int64_t s = lk_src(m, i % m.dst_elems);
        if (s < 0)
            continue; /* padding or a derived word */
        uint8_t *d = x + (i / m.dst_elems * m.R * m.C + s) * eb;
        for (int64_t k = 0; k < eb; k++)
            d[k] = y[i * eb + k];
    }
}

unsigned lk_grid(int64_t n, int sms)
{
    int64_t blocks = (n + LK_THREADS - 1) / LK_THREADS, cap = (int64_t)(sms > 0 ? sms : 32) * 16;
    return (unsigned)(blocks < cap ? blocks : cap);
}

/* ---------------------------------------------------------------- host */

struct lk_name {
    const char *name;
    int id;
};

const lk_name lk_names[] = {
    {"trtllm_shuffle_a", QCK_LM_SHUFFLE_A}, {"trtllm_shuffle_sf_a", QCK_LM_SHUFFLE_SF_A},
    {"gated_reorder", QCK_LM_GATED_REORDER}, {"trtllm_gated_w13", QCK_LM_GATED_W13},
    {"block_major_k", QCK_LM_BLOCK_MAJOR_K}, {"deepgemm_mn_major", QCK_LM_DG_MN_MAJOR},
    {"deepgemm_packed_ue8m0", QCK_LM_DG_PACKED}, {"aiter_shuffle_weight", QCK_LM_AITER_W},
    {"aiter_shuffle_weight_gu", QCK_LM_AITER_W_GU}, {"aiter_shuffle_scale", QCK_LM_AITER_S},
    {"triton_blackwell_scale", QCK_LM_TK_BW}, {"triton_blackwell_act_scale", QCK_LM_TK_BW_ACT},
    {"triton_hopper_mx_scale", QCK_LM_TK_HOPPER}, {"w13_swap", QCK_LM_W13_SWAP},
    {"w13_swap_pairs", QCK_LM_W13_PAIRS}, {"w13_interleave", QCK_LM_W13_INTERLEAVE}, {"w13_pad", QCK_LM_W13_PAD},
    {"pad_nvfp4_weight", QCK_LM_PAD_NVFP4}, {"amx_vnni2", QCK_LM_AMX_VNNI2}, {"amx_vnni4", QCK_LM_AMX_VNNI4},
    {"amx_u4", QCK_LM_AMX_U4}, {"amx_mxfp4_scale", QCK_LM_AMX_MX4S}, {"marlin_scale", QCK_LM_MARLIN_SCALE},
    {"marlin_fp8_weight", QCK_LM_MARLIN_W}, {"marlin_nvfp4_weight", QCK_LM_MARLIN_W},
    {"marlin_nvfp4_scale", QCK_LM_MARLIN_NV_SCALE}, {"aiter_shuffle_scale_gu", QCK_LM_AITER_S_GU},
    {"deepgemm_sf_transform", QCK_LM_DG_TRANSFORM},
};

/* The plan's value of the map parameter called name (every map here declares the ones it reads). */
int64_t lk_param(const qc_layout *L, const char *name)
{
    for (int i = 0; i < QC_LAYOUT_MAX_PARAMS && L->desc->params[i].name; i++)
        if (!strcmp(L->desc->params[i].name, name))
            return L->p[i];
    return 0;
}

/* The parameters a map's device function reads (layouts.md: §2.1 bs = 32 when epilogue_tile_m
 * % 128 == 0, else 16; layouts.md §4.1 KP = 16 / element bytes, 32 with use_int4). */
void lk_params(const qc_layout *L, qck_layout_map *m)
{
    int64_t bs = lk_param(L, "epilogue_tile_m") % 128 == 0 ? 32 : 16;
    switch (m->id) {
    case QCK_LM_SHUFFLE_A: case QCK_LM_SHUFFLE_SF_A: m->a[0] = bs; break;
    case QCK_LM_GATED_W13: m->a[0] = bs, m->a[1] = lk_param(L, "sf") != 0; break;
    case QCK_LM_BLOCK_MAJOR_K: m->a[0] = lk_param(L, "block_k"); break;
    case QCK_LM_DG_PACKED: m->a[0] = lk_param(L, "strict") != 0, m->a[1] = 1, m->a[2] = m->R; break;
    case QCK_LM_AITER_W: m->a[0] = lk_param(L, "int4") ? 32 : 16 / (m->in_bits / 8); break;
    case QCK_LM_AITER_W_GU:
        m->a[0] = lk_param(L, "nlane"), m->a[1] = lk_param(L, "kpack"), m->a[2] = lk_param(L, "gate_up") != 0;
        break;
    case QCK_LM_TK_HOPPER: m->a[0] = lk_param(L, "num_warps"); break;
    case QCK_LM_W13_INTERLEAVE: m->a[0] = lk_param(L, "group"); break;
    case QCK_LM_W13_PAD:
        m->a[0] = lk_param(L, "align"), m->a[1] = lk_param(L, "split") != 0, m->a[2] = lk_param(L, "gated") != 0;
        break;
    case QCK_LM_PAD_NVFP4: m->a[0] = lk_param(L, "n_align"), m->a[1] = lk_param(L, "k_align"); break;
    case QCK_LM_MARLIN_SCALE: m->a[0] = lk_param(L, "grouped") != 0; break;
    case QCK_LM_MARLIN_NV_SCALE: m->a[0] = lk_param(L, "strict") != 0; break;
    case QCK_LM_AITER_S_GU: m->a[0] = lk_param(L, "gate_up") != 0; break;
    default: break;
    }
}

/* layouts.md §3.4 transform_sf_into_required_layout for fp32 scales: SM90 (or disable_ue8m0_cast) keeps
 * (1, 128) scales as MN-major TMA-aligned fp32 and (128, 128) ones as they are; SM100 and SM120
 * broadcast row r to sf[r / gran_mn] over mn rows, then pack UE8M0. The plan checked the recipe. */
void lk_dg_transform(const qc_layout *L, qck_layout_map *m)
{
    int64_t g = lk_param(L, "gran_mn"), mn = lk_param(L, "mn");
    if (lk_param(L, "arch") == 90 || lk_param(L, "disable_ue8m0_cast")) {
        m->id = g == 1 ? QCK_LM_DG_MN_MAJOR : QCK_LM_IDENTITY;
        return;
    }
    m->id = QCK_LM_DG_PACKED;
    m->a[0] = lk_param(L, "strict") != 0, m->a[1] = g, m->a[2] = mn ? mn : m->R * g;
}

/* The padded grid [Rg, Cg] and the destination elements per batch, from the spec's shape rules. */
int64_t lk_shape(qck_layout_map *m)
{
    int64_t R = m->R, C = m->C;
    m->Rg = R, m->Cg = C;
    switch (m->id) {
    case QCK_LM_SHUFFLE_SF_A: m->Cg = lk_round_up(C, 4); break;          /* layouts.md §2.2 */
    case QCK_LM_GATED_W13: m->Cg = m->a[1] ? lk_round_up(C, 4) : C; break; /* layouts.md §2.4 */
    case QCK_LM_DG_MN_MAJOR: m->Rg = lk_round_up(R, 4); break;           /* layouts.md §3.2 */
    case QCK_LM_DG_PACKED: m->Rg = lk_round_up(m->a[2], 4), m->Cg = lk_round_up(C, 4); break; /* layouts.md §3.3 */
    case QCK_LM_AITER_S: m->Rg = lk_round_up(R, 256), m->Cg = lk_round_up(C, 8); break; /* layouts.md §4.3 */
    case QCK_LM_AITER_S_GU: m->Cg = lk_round_up(C, 8); break;
    case QCK_LM_TK_BW: m->Rg = lk_round_up(R, 8), m->Cg = lk_round_up(C, 128); break;   /* layouts.md §5.1 */
    case QCK_LM_TK_BW_ACT: m->Rg = lk_round_up(R, 128), m->Cg = lk_round_up(C, 8); break;
    case QCK_LM_TK_HOPPER: m->Rg = lk_round_up(R, 32 * m->a[0]), m->Cg = lk_round_up(C, 2); break; /* layouts.md §5.2 */
    case QCK_LM_W13_PAD: m->Rg = m->a[2] ? 2 * lk_round_up(R / 2, m->a[0]) : lk_round_up(R, m->a[0]); break;
    case QCK_LM_PAD_NVFP4: /* layouts.md §6.3: K counted in FP4 codes, two per byte */
        m->Rg = lk_round_up(R, m->a[0]), m->Cg = m->a[1] ? lk_round_up(2 * C, m->a[1]) / 2 : C;
        break;
    case QCK_LM_AMX_VNNI4: return R * (C + 4); /* layouts.md §7: row length K + 4 */
    default: break;
    }
    return m->Rg * m->Cg;
}

/* The element widths the map takes: 4-bit codes only for amx_u4 and the Marlin weights; DeepGEMM
 * reads fp32 (layouts.md §3). */
int lk_widths_ok(const qck_layout_map *m)
{
    if (m->id == QCK_LM_AMX_U4)
        return m->in_bits == 4 && m->out_bits == 4;
    if (m->id == QCK_LM_MARLIN_W) /* fp8 bytes or 4-bit codes */
        return (m->in_bits == 4 || m->in_bits == 8) && m->out_bits == m->in_bits;
    if (m->id == QCK_LM_MARLIN_NV_SCALE)
        return m->in_bits == 8 && m->out_bits == 8;
    if (m->id == QCK_LM_DG_PACKED)
        return m->in_bits == 32 && m->out_bits == 8;
    if ((m->id == QCK_LM_DG_MN_MAJOR || m->id == QCK_LM_IDENTITY) && m->in_bits != 32)
        return 0;
    return m->in_bits >= 8 && m->in_bits % 8 == 0 && m->out_bits == m->in_bits;
}

} // namespace

int qck_layout_map_of(const qc_layout *L, qck_layout_map *m, char *why, size_t n)
{
    memset(m, 0, sizeof *m);
    m->id = -1;
    for (const lk_name &e : lk_names)
        if (!strcmp(e.name, L->desc->name))
            m->id = e.id;
    m->in_bits = L->in_bits, m->out_bits = L->out_bits;
    m->B = L->B, m->R = L->R, m->C = L->C;
    int transform = m->id == QCK_LM_DG_TRANSFORM;
    if (transform)
        lk_dg_transform(L, m);
    if (m->id < 0 || !lk_widths_ok(m)) {
        snprintf(why, n, "layout map %s with %d-bit elements (cuda: not a map of layout_kernels.cu, or not its "
                 "element width)", L->desc->name, L->in_bits);
        return 1;
    }
    if (!transform)
        lk_params(L, m);
    m->pad = L->pad == QC_PAD_CONST ? L->pad_byte : 0;
    m->dst_elems = lk_shape(m);
    if (m->dst_elems != L->dst_elems) {
        snprintf(why, n, "layout %s: the plan has %lld destination elements per batch, the spec's shape rule "
                 "(docs/spec/layouts.md) %lld", L->desc->name, (long long)L->dst_elems, (long long)m->dst_elems);
        return 2;
    }
    return 0;
}

size_t qck_layout_src_bytes(const qck_layout_map *m) { return (size_t)((m->B * m->R * m->C * m->in_bits + 7) / 8); }

size_t qck_layout_dst_bytes(const qck_layout_map *m) { return (size_t)((m->B * m->dst_elems * m->out_bits + 7) / 8); }

gpuError_t qck_launch_layout(const qck_layout_map *m, const uint8_t *x, uint8_t *y, unsigned long long *bad, int sms,
                             gpuStream_t s)
{
    int64_t n = m->out_bits == 4 ? (m->B * m->dst_elems + 1) / 2 : m->B * m->dst_elems;
    if (n == 0)
        return gpuSuccess;
    QCK_LAUNCH(lk_kernel, lk_grid(n, sms), LK_THREADS, s, *m, x, y, bad);
    return gpuGetLastError();
}

/* Not: 4-bit elements (two threads would share a byte), the value transforms (UE8M0, S0E5M3) and
 * the per-row broadcast of deepgemm_sf_transform (one source row at several places). */
int qck_layout_invertible(const qck_layout_map *m)
{
    return m->in_bits >= 8 && m->in_bits == m->out_bits && m->id != QCK_LM_DG_PACKED &&
           m->id != QCK_LM_MARLIN_NV_SCALE;
}

gpuError_t qck_launch_layout_inverse(const qck_layout_map *m, const uint8_t *y, uint8_t *x, int sms, gpuStream_t s)
{
    int64_t n = m->B * m->dst_elems;
    if (n == 0)
        return gpuSuccess;
    QCK_LAUNCH(lk_inverse_kernel, lk_grid(n, sms), LK_THREADS, s, *m, y, x);
    return gpuGetLastError();
}
