/* layout_ref.c: see layout_ref.h. Each function cites the source sequence it transcribes. */
#include "layout_ref.h"

#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"

void nd_permute(const uint8_t *in, uint8_t *out, int ndim, const int64_t *shape, const int *perm, int64_t esz)
{
    int64_t stride[16], oshape[16], idx[16] = {0}, total = 1;
    for (int k = ndim - 1; k >= 0; k--) {
        stride[k] = total;
        total *= shape[k];
    }
    for (int k = 0; k < ndim; k++)
        oshape[k] = shape[perm[k]];
    for (int64_t o = 0; o < total; o++) {
        int64_t s = 0;
        for (int k = 0; k < ndim; k++)
            s += idx[k] * stride[perm[k]];
        memcpy(out + o * esz, in + s * esz, (size_t)esz);
        for (int k = ndim - 1; k >= 0; k--) { /* odometer over the output index */
            if (++idx[k] < oshape[k])
                break;
            idx[k] = 0;
        }
    }
}

/* torch.zeros([B, Rp, Cp]) then padded[:, :R, :C] = x (padding value v). */
static uint8_t *pad3(const uint8_t *x, int64_t B, int64_t R, int64_t C, int64_t Rp, int64_t Cp, int64_t esz, int v)
{
    uint8_t *p = malloc((size_t)(B * Rp * Cp * esz) + 1);
    memset(p, v, (size_t)(B * Rp * Cp * esz));
    for (int64_t b = 0; b < B; b++)
        for (int64_t r = 0; r < R; r++)
            memcpy(p + ((b * Rp + r) * Cp) * esz, x + ((b * R + r) * C) * esz, (size_t)(C * esz));
    return p;
}

/* out = x[idx] along rows of rowbytes bytes, per batch. */
static void gather_rows(const uint8_t *x, uint8_t *out, int64_t B, int64_t R, int64_t rowbytes, const int64_t *idx)
{
    for (int64_t b = 0; b < B; b++)
        for (int64_t n = 0; n < R; n++)
            memcpy(out + (b * R + n) * rowbytes, x + (b * R + idx[n]) * rowbytes, (size_t)rowbytes);
}

static void unpack4(const uint8_t *p, uint8_t *u, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        u[i] = (p[i / 2] >> (4 * (i % 2))) & 0xF;
}

static void pack4(const uint8_t *u, uint8_t *p, int64_t n)
{
    memset(p, 0, (size_t)(n / 2));
    for (int64_t i = 0; i < n; i++)
        p[i / 2] |= (uint8_t)(u[i] << (4 * (i % 2)));
}

static int64_t esz_of(const qc_layout *L) { return L->in_bits / 8; }

/* swizzle_blockscale (vllm nvfp4_utils.py): zeros [B, Rp, Cp], reshape [B, Rp/128, 4, 32, Cp/4, 4],
 * permute (0, 1, 4, 3, 2, 5). tile 8: get_sf_out_offset_8x4 as [B, Rp/8, 8, Cp/4, 4] permute (0, 1, 3, 2, 4). */
static void ref_swizzle(const uint8_t *x, uint8_t *dst, int64_t B, int64_t R, int64_t C, int64_t tile, int64_t calign,
                        int64_t esz)
{
    int64_t Rp = (R + tile - 1) / tile * tile, Cp = (C + calign - 1) / calign * calign;
    uint8_t *p = pad3(x, B, R, C, Rp, Cp, esz, 0);
    if (tile == 128) {
        int64_t sh[] = {B, Rp / 128, 4, 32, Cp / 4, 4};
        int pm[] = {0, 1, 4, 3, 2, 5};
        nd_permute(p, dst, 6, sh, pm, esz);
    } else {
        int64_t sh[] = {B, Rp / 8, 8, Cp / 4, 4};
        int pm[] = {0, 1, 3, 2, 4};
        nd_permute(p, dst, 5, sh, pm, esz);
    }
    free(p);
}

/* flashinfer utils.py srcToDstBlk16RowMap / srcToDstBlk32RowMap and
 * get_shuffle_matrix_a_row_indices: row_indices[new_row] = old_row. */
static void shuffle_indices(int64_t M, int64_t epi, int64_t *idx)
{
    static const int64_t map16[] = {0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15};
    static const int64_t map32[] = {0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27,
                                    4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31};
    int64_t bs = epi % 128 == 0 ? 32 : 16;
    for (int64_t old = 0; old < M; old++)
        idx[(old / bs) * bs + (bs == 32 ? map32 : map16)[old % bs]] = old;
}

/* get_reorder_rows_for_gated_act_gemm_row_indices: [0::2] = top half, [1::2] = bottom half. */
static void reorder_indices(int64_t M, int64_t *idx)
{
    for (int64_t i = 0; i < M; i++)
        idx[i] = i % 2 == 0 ? i / 2 : (M + 1) / 2 + i / 2;
}

static int ref_trtllm(const qc_layout *L, const uint8_t *src, uint8_t *dst)
{
    const char *nm = L->desc->name;
    int64_t M = L->R, rb = L->C * esz_of(L);
    int64_t *p1 = malloc(sizeof(int64_t) * M), *p0 = malloc(sizeof(int64_t) * M), *pc = malloc(sizeof(int64_t) * M);
    int sf = 0;
    if (strcmp(nm, "gated_reorder") != 0)
        shuffle_indices(M, L->p[0], p1);
    reorder_indices(M, p0);
    if (!strcmp(nm, "trtllm_shuffle_a") || !strcmp(nm, "trtllm_shuffle_sf_a")) {
        memcpy(pc, p1, sizeof(int64_t) * M);
        sf = !strcmp(nm, "trtllm_shuffle_sf_a");
    } else if (!strcmp(nm, "gated_reorder")) {
        memcpy(pc, p0, sizeof(int64_t) * M);
    } else { /* permute = P0[P1] (_maybe_get_cached_w3_w1_permute_indices) */
        for (int64_t i = 0; i < M; i++)
            pc[i] = p0[p1[i]];
        sf = L->p[1] != 0;
    }
    if (!sf) {
        gather_rows(src, dst, L->B, M, rb, pc);
    } else {
        uint8_t *t = malloc((size_t)(L->B * M * rb) + 1);
        gather_rows(src, t, L->B, M, rb, pc);
        ref_swizzle(t, dst, L->B, M, L->C, 128, 4, esz_of(L));
        free(t);
    }
    free(p1), free(p0), free(pc);
    return 0;
}

/* DeepGEMM tests/test_layout.py: pad SK to 4 with zeros, view [B, A, PK, 4] bytes, transpose to
 * [B, PK, A, 4] (int32 MN-major). bytes come from (bits >> 23) & 0xFF. */
static void ref_packed(const uint8_t *rows_f32, uint8_t *dst, int64_t B, int64_t MN, int64_t SK)
{
    int64_t A = (MN + 3) / 4 * 4, SKp = (SK + 3) / 4 * 4;
    uint8_t *bytes = malloc((size_t)(B * MN * SK) + 1);
    for (int64_t i = 0; i < B * MN * SK; i++) {
        uint32_t u;
        memcpy(&u, rows_f32 + 4 * i, 4);
        bytes[i] = (uint8_t)((u >> 23) & 0xFF);
    }
    uint8_t *p = pad3(bytes, B, MN, SK, A, SKp, 1, 0);
    int64_t sh[] = {B, A, SKp / 4, 4};
    int pm[] = {0, 2, 1, 3};
    nd_permute(p, dst, 4, sh, pm, 1);
    free(bytes), free(p);
}

static void ref_mn_major(const uint8_t *src, uint8_t *dst, int64_t B, int64_t MN, int64_t SK)
{
    int64_t A = (MN + 3) / 4 * 4;
    uint8_t *p = pad3(src, B, MN, SK, A, SK, 4, 0);
    int64_t sh[] = {B, A, SK};
    int pm[] = {0, 2, 1};
    nd_permute(p, dst, 3, sh, pm, 4);
    free(p);
}

static int ref_deepgemm(const qc_layout *L, const uint8_t *src, uint8_t *dst)
{
    const char *nm = L->desc->name;
    if (!strcmp(nm, "deepgemm_mn_major")) {
        ref_mn_major(src, dst, L->B, L->R, L->C);
    } else if (!strcmp(nm, "deepgemm_packed_ue8m0")) {
        ref_packed(src, dst, L->B, L->R, L->C);
    } else { /* transform_sf_into_required_layout */
        int64_t g = L->p[0], arch = L->p[2];
        if (arch == 90 || L->p[4]) {
            if (g == 1)
                ref_mn_major(src, dst, L->B, L->R, L->C);
            else
                memcpy(dst, src, (size_t)(L->B * L->R * L->C * 4));
            return 0;
        }
        int64_t mn = L->p[3] ? L->p[3] : L->R * g;
        int64_t *idx = malloc(sizeof(int64_t) * mn);
        uint8_t *t = malloc((size_t)(L->B * mn * L->C * 4) + 1);
        for (int64_t r = 0; r < mn; r++) /* sf.repeat_interleave(g)[:mn] */
            idx[r] = r / g;
        for (int64_t b = 0; b < L->B; b++)
            for (int64_t r = 0; r < mn; r++)
                memcpy(t + (b * mn + r) * L->C * 4, src + (b * L->R + idx[r]) * L->C * 4, (size_t)(L->C * 4));
        ref_packed(t, dst, L->B, mn, L->C);
        free(idx), free(t);
    }
    return 0;
}

static int ref_aiter(const qc_layout *L, const uint8_t *src, uint8_t *dst)
{
    const char *nm = L->desc->name;
    int64_t B = L->B, N = L->R, K = L->C, e = esz_of(L);
    if (!strcmp(nm, "aiter_shuffle_weight")) {
        int64_t KP = L->p[0] ? 32 : 16 / e;
        int64_t sh[] = {B, N / 16, 16, K / 32, 32 / KP, KP};
        int pm[] = {0, 1, 3, 4, 2, 5};
        nd_permute(src, dst, 6, sh, pm, e);
    } else if (!strcmp(nm, "aiter_shuffle_weight_gu")) {
        int64_t NL = L->p[0], KL = 64 / NL, KPk = L->p[1];
        if (L->p[2]) {
            int64_t sh[] = {B, 2, N / 2 / NL, NL, K / (KL * KPk), KL, KPk};
            int pm[] = {0, 2, 1, 4, 5, 3, 6};
            nd_permute(src, dst, 7, sh, pm, e);
        } else {
            int64_t sh[] = {B, N / NL, NL, K / (KL * KPk), KL, KPk};
            int pm[] = {0, 1, 3, 4, 2, 5};
            nd_permute(src, dst, 6, sh, pm, e);
        }
    } else if (!strcmp(nm, "aiter_shuffle_scale")) {
        int64_t Rp = (N + 255) / 256 * 256, Cp = (K + 7) / 8 * 8;
        uint8_t *p = pad3(src, B, N, K, Rp, Cp, 1, 0);
        int64_t sh[] = {B, Rp / 32, 2, 16, Cp / 8, 2, 4};
        int pm[] = {0, 1, 4, 6, 3, 5, 2};
        nd_permute(p, dst, 7, sh, pm, 1);
        free(p);
    } else {
        int64_t Cp = (K + 7) / 8 * 8;
        uint8_t *p = pad3(src, B, N, K, N, Cp, 1, 0x7F);
        if (L->p[0]) {
            int64_t sh[] = {B, 2, N / 32, 16, Cp / 8, 2, 4};
            int pm[] = {0, 2, 4, 6, 3, 5, 1};
            nd_permute(p, dst, 7, sh, pm, 1);
        } else {
            int64_t sh[] = {B, N / 32, 2, 16, Cp / 8, 2, 4};
            int pm[] = {0, 1, 4, 6, 3, 5, 2};
            nd_permute(p, dst, 7, sh, pm, 1);
        }
        free(p);
    }
    return 0;
}

static int ref_triton(const qc_layout *L, const uint8_t *src, uint8_t *dst)
{
    const char *nm = L->desc->name;
    int64_t B = L->B, R = L->R, C = L->C;
    if (!strcmp(nm, "triton_blackwell_scale")) { /* pad, transpose, 128x4 (swap dims 2 and 4) */
        int64_t Kp = (R + 7) / 8 * 8, Np = (C + 127) / 128 * 128;
        uint8_t *p = pad3(src, B, R, C, Kp, Np, 1, 0), *t = malloc((size_t)(B * Kp * Np));
        int64_t sh[] = {B, Kp, Np};
        int pm[] = {0, 2, 1};
        nd_permute(p, t, 3, sh, pm, 1);
        ref_swizzle(t, dst, B, Np, Kp, 128, 4, 1);
        free(p), free(t);
    } else if (!strcmp(nm, "triton_blackwell_act_scale")) {
        ref_swizzle(src, dst, B, R, C, 128, 8, 1);
    } else {
        int64_t W = L->p[0], Mp = (R + 32 * W - 1) / (32 * W) * 32 * W, Kp = (C + 1) / 2 * 2;
        uint8_t *p = pad3(src, B, R, C, Mp, Kp, 1, 0);
        int64_t sh[] = {B, Mp / (32 * W), 2, W, 2, 8, Kp / 2, 2};
        int pm[] = {0, 1, 3, 6, 2, 5, 7, 4};
        nd_permute(p, dst, 8, sh, pm, 1);
        free(p);
    }
    return 0;
}

static int ref_w13(const qc_layout *L, const uint8_t *src, uint8_t *dst)
{
    const char *nm = L->desc->name;
    int64_t B = L->B, R = L->R, rb = L->C * esz_of(L), I = R / 2;
    if (!strcmp(nm, "w13_swap")) { /* torch.cat([w[I:], w[:I]]) */
        for (int64_t b = 0; b < B; b++) {
            memcpy(dst + b * R * rb, src + (b * R + I) * rb, (size_t)(I * rb));
            memcpy(dst + (b * R + I) * rb, src + b * R * rb, (size_t)(I * rb));
        }
    } else if (!strcmp(nm, "w13_swap_pairs")) { /* view(-1, 2, C).flip(1) */
        for (int64_t r = 0; r < B * R; r += 2) {
            memcpy(dst + r * rb, src + (r + 1) * rb, (size_t)rb);
            memcpy(dst + (r + 1) * rb, src + r * rb, (size_t)rb);
        }
    } else if (!strcmp(nm, "w13_interleave")) { /* stack([F.view(I/g,g,C), S.view(I/g,g,C)], 1) */
        int64_t g = L->p[0], sh[] = {B, 2, I / g, g, rb};
        int pm[] = {0, 2, 1, 3, 4};
        nd_permute(src, dst, 5, sh, pm, 1);
    } else if (!strcmp(nm, "w13_pad")) {
        int64_t gated = L->p[2] != 0, Ih = gated ? I : R, Ip = (Ih + L->p[0] - 1) / L->p[0] * L->p[0];
        int64_t Rp = (gated ? 2 : 1) * Ip;
        memset(dst, 0, (size_t)(B * Rp * rb));
        for (int64_t b = 0; b < B; b++) {
            if (gated && L->p[1]) { /* w13[:I] = gate, w13[Ip:Ip+I] = up */
                memcpy(dst + b * Rp * rb, src + b * R * rb, (size_t)(I * rb));
                memcpy(dst + (b * Rp + Ip) * rb, src + (b * R + I) * rb, (size_t)(I * rb));
            } else {
                memcpy(dst + b * Rp * rb, src + b * R * rb, (size_t)(R * rb));
            }
        }
    } else { /* pad_nvfp4_weight: F.pad rows, then F.pad bytes */
        int64_t na = L->p[0], ka = L->p[1], Rp = (R + na - 1) / na * na;
        int64_t Cp = ka ? ((2 * L->C + ka - 1) / ka * ka) / 2 : L->C;
        uint8_t *p = pad3(src, B, R, L->C, Rp, Cp, 1, 0);
        memcpy(dst, p, (size_t)(B * Rp * Cp));
        free(p);
    }
    return 0;
}

static int ref_amx(const qc_layout *L, const uint8_t *src, uint8_t *dst)
{
    const char *nm = L->desc->name;
    int64_t B = L->B, OC = L->R, K = L->C;
    if (!strcmp(nm, "amx_vnni2")) { /* per block: [Nb, K/2, 2] -> [K/2, Nb, 2] */
        int64_t e = esz_of(L);
        for (int64_t b = 0; b < B; b++)
            for (int64_t n0 = 0; n0 < OC; n0 += 32) {
                int64_t nb = OC - n0 < 32 ? OC - n0 : 32, sh[] = {nb, K / 2, 2};
                int pm[] = {1, 0, 2};
                nd_permute(src + (b * OC + n0) * K * e, dst + (b * OC + n0) * K * e, 3, sh, pm, e);
            }
    } else if (!strcmp(nm, "amx_vnni4")) {
        for (int64_t b = 0; b < B; b++)
            for (int64_t n0 = 0; n0 < OC; n0 += 32) {
                const uint8_t *s = src + (b * OC + n0) * K;
                uint8_t *d = dst + (b * OC + n0) * (K + 4);
                int64_t sh[] = {32, K / 4, 4};
                int pm[] = {1, 0, 2};
                nd_permute(s, d, 3, sh, pm, 1);
                for (int64_t n = 0; n < 32; n++) { /* comp = 128 * rowsum, as an int32 */
                    int64_t sum = 0;
                    for (int64_t k = 0; k < K; k++)
                        sum += (int8_t)s[n * K + k];
                    uint32_t w = (uint32_t)(int32_t)(sum * 128);
                    memcpy(d + 32 * K + 4 * n, &w, 4); /* little-endian host */
                }
            }
    } else if (!strcmp(nm, "amx_u4")) { /* the loop of pack_vnni<uint8_t> */
        int64_t KB = K / 2;
        for (int64_t b = 0; b < B; b++)
            for (int64_t n0 = 0; n0 < OC; n0 += 32) {
                const uint8_t *s = src + (b * OC + n0) * KB;
                uint8_t *d = dst + (b * OC + n0) * KB;
                for (int64_t kb = 0; kb < KB; kb++) {
                    uint8_t u[64];
                    for (int n = 0; n < 32; n++) {
                        u[2 * n] = s[n * KB + kb] & 0xF;
                        u[2 * n + 1] = s[n * KB + kb] >> 4;
                    }
                    for (int n = 0; n < 32; n++)
                        d[kb * 32 + n] = (uint8_t)(u[n] | u[n + 32] << 4);
                }
            }
    } else { /* convert_scale_packed: view [N/32, 32, G] -> [N/32, G, 32] */
        int64_t sh[] = {B * OC / 32, 32, K};
        int pm[] = {0, 2, 1};
        nd_permute(src, dst, 3, sh, pm, 1);
    }
    return 0;
}

/* marlin_utils_test.py::get_weight_perm, transcribed loop by loop. */
static void marlin_perm_list(int bits, int64_t *perm)
{
    int64_t n = 0;
    for (int i = 0; i < 32; i++) {
        int64_t perm1[8], m = 0, col = i / 4;
        for (int block = 0; block < 2; block++) {
            int rows[4] = {2 * (i % 4), 2 * (i % 4) + 1, 2 * (i % 4 + 4), 2 * (i % 4 + 4) + 1};
            for (int r = 0; r < 4; r++)
                perm1[m++] = 16 * rows[r] + col + 8 * block;
        }
        for (int j = 0; j < 4; j++)
            for (int t = 0; t < 8; t++)
                perm[n++] = perm1[t] + 256 * j;
    }
    static const int il4[] = {0, 2, 4, 6, 1, 3, 5, 7}, il8[] = {0, 2, 1, 3};
    int len = bits == 4 ? 8 : 4;
    int64_t tmp[1024];
    memcpy(tmp, perm, sizeof tmp);
    for (int64_t g = 0; g < 1024 / len; g++)
        for (int t = 0; t < len; t++)
            perm[g * len + t] = tmp[g * len + (bits == 4 ? il4 : il8)[t]];
}

/* out[:, j] = in[:, perm[j]] on rows of width w. */
static void gather_cols(const uint8_t *in, uint8_t *out, int64_t n, int64_t w, const int64_t *perm, int64_t e)
{
    for (int64_t q = 0; q < n / w; q++)
        for (int64_t j = 0; j < w; j++)
            memcpy(out + (q * w + j) * e, in + (q * w + perm[j]) * e, (size_t)e);
}

static int ref_marlin(const qc_layout *L, const uint8_t *src, uint8_t *dst)
{
    const char *nm = L->desc->name;
    int64_t B = L->B, K = L->R, N = L->C, total = B * K * N;
    if (strstr(nm, "weight")) {
        int bits = L->in_bits;
        uint8_t *u = malloc((size_t)total), *t = malloc((size_t)total), *o = malloc((size_t)total);
        if (bits == 4)
            unpack4(src, u, total);
        else
            memcpy(u, src, (size_t)total);
        int64_t sh[] = {B * K / 16, 16, N / 16, 16}, perm[1024];
        int pm[] = {0, 2, 1, 3};
        nd_permute(u, t, 4, sh, pm, 1);
        marlin_perm_list(bits, perm);
        gather_cols(t, o, total, 1024, perm, 1);
        if (bits == 4)
            pack4(o, dst, total);
        else
            memcpy(dst, o, (size_t)total);
        free(u), free(t), free(o);
        return 0;
    }
    int64_t sp[64], sps[32], n = 0;
    for (int i = 0; i < 8; i++) /* get_scale_perms */
        for (int j = 0; j < 8; j++)
            sp[n++] = i + 8 * j;
    static const int js[] = {0, 1, 8, 9, 16, 17, 24, 25};
    n = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            sps[n++] = 2 * i + js[j];
    int nv = L->desc->variant == 1, grouped = nv || L->p[0];
    int64_t e = esz_of(L);
    if (!nv) {
        gather_cols(src, dst, total, grouped ? 64 : 32, grouped ? sp : sps, e);
        return 0;
    }
    uint8_t *t = malloc((size_t)total), *t2 = malloc((size_t)total);
    static const int64_t il[] = {0, 2, 1, 3};
    gather_cols(src, t, total, 64, sp, 1);
    gather_cols(t, t2, total, 4, il, 1);
    qc_cast_policy pol = qcref_default_policy();
    for (int64_t i = 0; i < total; i++) { /* (half(s) * 2^7).view(int16) << 1, odd byte */
        float s = qcref_decode(QC_E4M3FN, t2[i], &pol);
        uint32_t h = qcref_encode(QC_F16, s * 128.0f, &pol);
        dst[i] = (uint8_t)(((h << 1) >> 8) & 0xFF);
    }
    free(t), free(t2);
    return 0;
}

int ref_layout_apply(const qc_layout *L, const uint8_t *src, uint8_t *dst)
{
    const char *nm = L->desc->name;
    if (!strcmp(nm, "sf128x4") || !strcmp(nm, "block_scale_interleave") || !strcmp(nm, "sf8x4")) {
        ref_swizzle(src, dst, L->B, L->R, L->C, nm[2] == '8' ? 8 : 128, 4, esz_of(L));
        return 0;
    }
    if (strstr(nm, "trtllm") || !strcmp(nm, "gated_reorder"))
        return ref_trtllm(L, src, dst);
    if (!strcmp(nm, "block_major_k")) {
        int64_t e = esz_of(L), bk = L->p[0];
        for (int64_t b = 0; b < L->B; b++) {
            int64_t sh[] = {L->R, L->C / bk, bk};
            int pm[] = {1, 0, 2};
            nd_permute(src + b * L->R * L->C * e, dst + b * L->R * L->C * e, 3, sh, pm, e);
        }
        return 0;
    }
    if (!strncmp(nm, "deepgemm", 8))
        return ref_deepgemm(L, src, dst);
    if (!strncmp(nm, "aiter", 5))
        return ref_aiter(L, src, dst);
    if (!strncmp(nm, "triton", 6))
        return ref_triton(L, src, dst);
    if (!strncmp(nm, "w13", 3) || !strcmp(nm, "pad_nvfp4_weight"))
        return ref_w13(L, src, dst);
    if (!strncmp(nm, "amx", 3))
        return ref_amx(L, src, dst);
    if (!strncmp(nm, "marlin", 6))
        return ref_marlin(L, src, dst);
    return -1;
}
