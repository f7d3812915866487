/* amx_gemm.c: AMX-BF16 / AMX-INT8 GEMM kernels with sgl-kernel CPU semantics (amx_gemm.h).
 * Claim (the profile each kernel reproduces):
 *   fp8:  gemm kind=fp8_block model=sgl-cpu: sgl-kernel csrc/cpu/gemm_fp8.cpp fp8_scaled_mm_cpu,
 *         unpack_B: fp8 e4m3fn -> fp32, times the 128x128 block scale in fp32, rounded to bf16 with
 *         cvtne2ps_pbh (RNE), then a bf16 dot with fp32 accumulation (docs/spec/layouts.md §7). Checked
 *         within c.bound (any fp32 accumulation order).
 *   s8:   gemm kind=int8_rowwise: csrc/cpu/gemm_int8.cpp int8_scaled_mm_cpu: u8 (s8 + 128)
 *         activations x s8 weights in int32, minus comp[n] = 128 * sum_k w[n][k] (s8s8
 *         compensation, gemm.cpp), then the fp32 epilogue of tinygemm_kernel_nn: bit-exact.
 * Blocking: BLIS's loops (see `blocking` below) around one 32 x 32 block of C (2 x 2 tiles of
 * 16 x 16 fp32/int32), parked in an accumulator between K chunks and, after the last, converted
 * by the epilogue from a block in L1. Tiles: 0-3 C, 4-5 A (two 16-row halves), 6-7 B. Why these
 * loops: docs/DECISIONS.md (AMX) and docs/notes/amx/experiments.md.
 * Known departures from exact IEEE (documented, outside the sgl-cpu model only for tiny values):
 * TDPBF16PS and VCVTNE2PS2BF16 treat denormal inputs as zero and flush denormal results (Intel SDM
 * vol. 2); sgl-kernel runs the same instructions. Output rounding to bf16 is done by integer
 * arithmetic (RNE, denormals kept) so it matches the reference for every finite value. */
#include "amx_gemm.h"

#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

/* The blocking (BLIS's): panels of nc output columns, K chunks of kc, groups of mc rows. The A of
 * a group's chunk (mc x kc, 256 KiB) and the panel's B chunk (kc x nc, 1 MiB) stay in L2, and
 * each 32-column block of B meets the group's 32-row blocks one after another. A long chunk means
 * few round trips of C through the accumulator (each costs a pipeline drain of the four C tiles:
 * kc 256 blocks with B in L1 ran at 0.97 of the peak with C kept in tiles and 0.65 with C loaded
 * and stored); a small group keeps A's L2 share small. Rows are taken `rows` at a time, so that
 * the fp32 / int32 accumulator (rows x nc) stays bounded whatever M is (fp8 unpacks B once per row
 * range). Results do not depend on it (each C element is one chain of TDPs over K in the same
 * order, chunk by chunk); only bench_amx changes it, to measure. Chosen over 14 blockings on the
 * lent Xeon (docs/notes/amx/experiments.md §7). */
static qc_amx_blocking blocking = {256, 2048, 64, 2048};
#define NC blocking.nc
#define KC blocking.kc
#define MC blocking.mc
#define ROWS blocking.rows
#define ACC_LD (NC + 16) /* accumulator row stride: + 64 bytes keeps a tile's 16 rows off one L1 set */

void qc_amx_set_blocking(const qc_amx_blocking *b)
{
    if (b->nc >= 32 && b->nc % 32 == 0 && b->kc >= 64 && b->kc % 64 == 0 && b->mc >= 32 && b->mc % 32 == 0 &&
        b->rows >= 32 && b->rows % 32 == 0)
        blocking = *b;
}

qc_amx_blocking qc_amx_get_blocking(void) { return blocking; }

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Zeroed memory on a cache-line boundary, for every buffer a tile is loaded from: with calloc's
 * 16-byte alignment each 64-byte tile row straddles two lines, and on the lent Xeon the same
 * 32 x 32 blocks ran at 600 instead of 1580 GFLOP/s. */
static void *zalloc64(size_t bytes)
{
    size_t n = (bytes + 63) / 64 * 64;
    void *p = aligned_alloc(64, n ? n : 64);
    if (p)
        memset(p, 0, n);
    return p;
}

/* ---- tile configuration: palette 1, eight 16-row x 64-byte tiles ---- */
typedef struct tile_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} tile_config;

/* A constant in memory, not a local filled in by stores: gcc 12 at -O2 was seen to drop the
 * stores to a local configuration whose only reader is LDTILECFG (then #GP on an invalid one). */
static const tile_config tile_cfg = {
    .palette = 1, .colsb = {64, 64, 64, 64, 64, 64, 64, 64}, .rows = {16, 16, 16, 16, 16, 16, 16, 16}};

void qc_amx_tiles_configure(void) { _tile_loadconfig(&tile_cfg); }

/* ---- packing (layouts.md §7, sgl-kernel gemm.cpp pack_vnni / s8s8_compensation) ---- */

static int pack_alloc(qc_amx_weights *w, qc_amx_wtype t, int64_t n, int64_t k, int64_t kmult, size_t block_bytes)
{
    memset(w, 0, sizeof *w);
    w->type = t, w->n = n, w->k = k, w->np = round_up(n, 32), w->kp = round_up(k, kmult);
    w->packed = zalloc64((size_t)(w->np / 32) * block_bytes + 64);
    return w->packed ? 0 : 2;
}

/* VNNI-2: block b holds rows 32b..32b+31 as [kp/2][32][2] (elements of esize bytes). */
static void pack_vnni2(const uint8_t *src, size_t esize, int64_t n, int64_t k, int64_t kp, uint8_t *dst)
{
    for (int64_t r = 0; r < n; r++) {
        uint8_t *blk = dst + (size_t)(r / 32 * 32 * kp) * esize;
        for (int64_t c = 0; c < k; c++)
            memcpy(blk + (size_t)((c / 2) * 64 + (r % 32) * 2 + c % 2) * esize, src + (size_t)(r * k + c) * esize,
                   esize);
    }
}

int qc_amx_pack_fp8(const uint8_t *w, const float *scale, int64_t n, int64_t k, qc_amx_weights *out)
{
    if (pack_alloc(out, QC_AMX_W_FP8, n, k, 32, (size_t)(32 * round_up(k, 32))))
        return 2;
    out->scale_cols = (k + 127) / 128;
    size_t ns = (size_t)((n + 127) / 128 * out->scale_cols);
    out->scale = malloc(ns * sizeof *out->scale + 64);
    if (!out->scale) {
        qc_amx_weights_free(out);
        return 2;
    }
    memcpy(out->scale, scale, ns * sizeof *out->scale);
    pack_vnni2(w, 1, n, k, out->kp, out->packed);
    return 0;
}

int qc_amx_pack_bf16(const uint16_t *w, int64_t n, int64_t k, qc_amx_weights *out)
{
    if (pack_alloc(out, QC_AMX_W_BF16, n, k, 32, (size_t)(64 * round_up(k, 32))))
        return 2;
    pack_vnni2((const uint8_t *)w, 2, n, k, out->kp, out->packed);
    return 0;
}

/* VNNI-4: block b is [kp/4][32][4] s8, then comp[32] int32 = 128 * sum_k w[n][k] (the u8 = s8 + 128
 * activations add 128 * w to every product; gemm_int8.cpp [NOTE]: s8s8 igemm compensation). */
int qc_amx_pack_s8(const int8_t *w, int64_t n, int64_t k, qc_amx_weights *out)
{
    int64_t kp = round_up(k, 64), bb = 32 * kp + 128;
    if (pack_alloc(out, QC_AMX_W_S8, n, k, 64, (size_t)bb))
        return 2;
    int8_t *dst = out->packed;
    for (int64_t r = 0; r < n; r++) {
        int8_t *blk = dst + r / 32 * bb;
        int32_t comp = 0;
        for (int64_t c = 0; c < k; c++) {
            blk[(c / 4) * 128 + (r % 32) * 4 + c % 4] = w[r * k + c];
            comp += 128 * (int32_t)w[r * k + c];
        }
        memcpy(blk + 32 * kp + (r % 32) * 4, &comp, 4);
    }
    return 0;
}

void qc_amx_weights_free(qc_amx_weights *w)
{
    free(w->packed);
    free(w->scale);
    memset(w, 0, sizeof *w);
}

/* Activations in tile order: each block of 32 rows is [kp / step][32 rows][64 bytes] (step = 64 /
 * esize elements: one K step of both A tiles is 2 KiB, contiguous), so that a K chunk of a row
 * block is one contiguous stream the prefetchers follow. */
static int act_alloc(qc_amx_act *a, int64_t m, const qc_amx_weights *w, size_t esize)
{
    a->m = m, a->mp = round_up(m, 32), a->kp = w->kp, a->esize = (int64_t)esize;
    a->data = zalloc64((size_t)(a->mp * a->kp) * esize + 64);
    return a->data ? 0 : 2;
}

/* Byte offset of row i, element j (j a multiple of step), in the tile order above. */
static size_t act_offset(const qc_amx_act *a, int64_t i, int64_t j)
{
    return (size_t)((i / 32) * 32 * a->kp * a->esize + (j * a->esize / 64) * 2048 + (i % 32) * 64);
}

int qc_amx_act_bf16(const uint16_t *a, int64_t m, int64_t k, const qc_amx_weights *w, qc_amx_act *out)
{
    if (act_alloc(out, m, w, 2))
        return 2;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j += 32)
            memcpy((uint8_t *)out->data + act_offset(out, i, j), a + i * k + j, (size_t)min64(32, k - j) * 2);
    return 0;
}

int qc_amx_act_u8(const int8_t *a, int64_t m, int64_t k, const qc_amx_weights *w, qc_amx_act *out)
{
    if (act_alloc(out, m, w, 1))
        return 2;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++) /* quantize_row_int8: Aq = q + 128 */
            ((uint8_t *)out->data)[act_offset(out, i, j / 64 * 64) + j % 64] = (uint8_t)(a[i * k + j] + 128);
    return 0;
}

qc_amx_act qc_amx_act_rows(const qc_amx_act *a, int64_t r0, int64_t r1)
{
    qc_amx_act v = *a;
    v.data = (uint8_t *)a->data + act_offset(a, r0, 0);
    v.m = r1 - r0, v.mp = round_up(r1 - r0, 32);
    return v;
}

void qc_amx_act_free(qc_amx_act *a)
{
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- 32 x 32 micro-kernels over one K chunk (a, b: byte pointers; c: row stride in words) ---- */

/* C tiles 0-3 from a 32 x 32 block of fp32 / int32 at c (row stride ld words), or zero. */
static void c_tiles_load(const void *c, int64_t ld, int load)
{
    if (!load) {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        return;
    }
    const float *f = c;
    _tile_loadd(0, f, ld * 4);
    _tile_loadd(1, f + 16, ld * 4);
    _tile_loadd(2, f + 16 * ld, ld * 4);
    _tile_loadd(3, f + 16 * ld + 16, ld * 4);
}

static void c_tiles_store(void *c, int64_t ld)
{
    float *f = c;
    _tile_stored(0, f, ld * 4);
    _tile_stored(1, f + 16, ld * 4);
    _tile_stored(2, f + 16 * ld, ld * 4);
    _tile_stored(3, f + 16 * ld + 16, ld * 4);
}

/* Lines to prefetch into L2 at each K step of a block, from a and from b (NULL: none). */
typedef struct l2_prefetch {
    const uint8_t *a, *b;
    int64_t a_lines, b_lines;
} l2_prefetch;

/* One K chunk of a 32 x 32 block: C from cin (when load) plus a's chunk times b's, to cout. a is a
 * row block's chunk in tile order, b one column block's chunk in packed order; both advance 2 KiB
 * per K step (A: rows 0-15 then 16-31, 64 bytes each; B: 16 pair rows (bf16, [kc/2][32][2]) or
 * quad rows (s8, [kc/4][32][4]) of 128 bytes, a tile taking 16 columns, 64 bytes, of each).
 * bytes: the chunk's length in either. Each K step also prefetches pf's lines into L2 (see
 * chunk_times_a). A is loaded with TILELOADDT1, the hint that its lines need not be kept in L1:
 * a group's A is read again only after the group's other row blocks, from L2 in any case. The
 * hint was worth 0 to 0.06 of the peak, never less (docs/notes/amx/experiments.md §7). TDP names
 * the instruction (TDPBF16PS or TDPBUSD), whose tile operands must be constants: hence a macro. */
#define BLOCK_2X2(name, TDP)                                                                                           \
    static void name(const uint8_t *a, const uint8_t *b, const void *cin, int64_t ldin, void *cout, int64_t ldout,     \
                     int64_t bytes, int load, l2_prefetch pf)                                                          \
    {                                                                                                                  \
        c_tiles_load(cin, ldin, load);                                                                                 \
        for (int64_t o = 0; o < bytes; o += 2048) {                                                                    \
            for (int64_t l = 0; pf.a && l < pf.a_lines; l++, pf.a += 64)                                               \
                _mm_prefetch((const char *)pf.a, _MM_HINT_T2);                                                         \
            for (int64_t l = 0; pf.b && l < pf.b_lines; l++, pf.b += 64)                                               \
                _mm_prefetch((const char *)pf.b, _MM_HINT_T2);                                                         \
            _tile_stream_loadd(4, a + o, 64);                                                                          \
            _tile_loadd(6, b + o, 128);                                                                                \
            TDP(0, 4, 6);                                                                                              \
            _tile_loadd(7, b + o + 64, 128);                                                                           \
            TDP(1, 4, 7);                                                                                              \
            _tile_stream_loadd(5, a + o + 1024, 64);                                                                   \
            TDP(2, 5, 6);                                                                                              \
            TDP(3, 5, 7);                                                                                              \
        }                                                                                                              \
        c_tiles_store(cout, ldout);                                                                                    \
    }

BLOCK_2X2(block_bf16, _tile_dpbf16ps)
BLOCK_2X2(block_s8, _tile_dpbusd)

/* ---- fp8 -> bf16 unpack (sgl-kernel gemm_fp8.cpp unpack_B) ---- */

/* 32 e4m3fn codes -> bf16(fl32(value * s)). The code's 7 magnitude bits shifted left by 7 are an
 * f16 with the same 4-bit exponent field and 3 mantissa bits: exactly value * 2^-8, subnormals
 * included (f16 bias 15, e4m3 bias 7); * 256 restores it exactly. 0x7F / 0xFF are NaN. */
static __m512i fp8x32_bf16(__m256i codes, __m512 s)
{
    __m512i h = _mm512_cvtepu8_epi16(codes);
    __m512i mag = _mm512_and_si512(h, _mm512_set1_epi16(0x7F));
    __m512i sign = _mm512_slli_epi16(_mm512_and_si512(h, _mm512_set1_epi16(0x80)), 8);
    __m512i f16 = _mm512_or_si512(_mm512_slli_epi16(mag, 7), sign);
    __m512 two8 = _mm512_set1_ps(256.0f);
    __m512 lo = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtph_ps(_mm512_castsi512_si256(f16)), two8), s);
    __m512 hi = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtph_ps(_mm512_extracti64x4_epi64(f16, 1)), two8), s);
    __m512i r = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
    __mmask32 nan = _mm512_cmpeq_epi16_mask(mag, _mm512_set1_epi16(0x7F));
    return _mm512_mask_mov_epi16(r, nan, _mm512_or_si512(sign, _mm512_set1_epi16(0x7FC0)));
}

/* One block's K chunk [k0, k0 + kc): kc/2 pair rows of 64 codes each, one scale per pair row (the
 * 32 columns and the 2 k of a pair row share the 128 x 128 scale block). */
static void unpack_block(const qc_amx_weights *w, int64_t blk, int64_t k0, int64_t kc, uint16_t *dst)
{
    const uint8_t *src = (const uint8_t *)w->packed + blk * 32 * w->kp + k0 * 32;
    const float *srow = w->scale + (blk * 32 / 128) * w->scale_cols;
    for (int64_t p = 0; p < kc / 2; p++) {
        __m512 s = _mm512_set1_ps(srow[(k0 + 2 * p) / 128]);
        __m256i c0 = _mm256_loadu_si256((const void *)(src + p * 64));
        __m256i c1 = _mm256_loadu_si256((const void *)(src + p * 64 + 32));
        _mm512_storeu_si512(dst + p * 64, fp8x32_bf16(c0, s));
        _mm512_storeu_si512(dst + p * 64 + 32, fp8x32_bf16(c1, s));
    }
}

/* ---- epilogues: 16 columns at a time, masked at the N tail ---- */

/* fp32 -> bf16 RNE by integer arithmetic: (u + 0x7FFF + lsb) >> 16; NaN keeps its sign, quiet. */
static __m256i f32x16_bf16(__m512 v)
{
    __m512i u = _mm512_castps_si512(v);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), lsb), 16);
    __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40)));
    return _mm512_cvtepi32_epi16(r);
}

static void store16(void *c, int out_f32, int64_t off, __mmask16 mk, __m512 v)
{
    if (out_f32)
        _mm512_mask_storeu_ps((float *)c + off, mk, v);
    else
        _mm256_mask_storeu_epi16((uint16_t *)c + off, mk, f32x16_bf16(v));
}

static __mmask16 tail_mask(int64_t left) { return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1); }

/* What turns one finished 32 x 32 block into output: the weights and scales, and where the block
 * lands (c and as at the row range's first row, cols [j0, j1) of the panel, m rows in the range). */
typedef struct epilogue {
    const qc_amx_weights *w;
    const float *as, *bs, *bias;
    int out_f32;
    uint8_t *c;
    int64_t m, j0, j1;
} epilogue;

/* c[i][j0 + j] = blk[i][j] + bias, i < rows, j0 + j < j1 (blk: 32 x 32 fp32, row stride 32). */
static void epilogue_f32(const epilogue *e, const float *blk, int64_t rows, int64_t j0, int64_t j1, uint8_t *c)
{
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = j0; j < j1; j += 16) {
            __mmask16 mk = tail_mask(j1 - j);
            __m512 v = _mm512_maskz_loadu_ps(mk, blk + i * 32 + (j - j0));
            if (e->bias)
                v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk, e->bias + j));
            store16(c, e->out_f32, i * e->w->n + j, mk, v);
        }
}

/* gemm_int8.cpp tinygemm_kernel_nn store lambda: cvtepi32_ps(acc - comp), * As[m], then
 * fmadd(., Bs[n], bias[n]) or * Bs[n]. comp of column j lies in block j/32 at word j%32. as: the
 * block's first row. */
static void epilogue_s8(const epilogue *e, const int32_t *blk, int64_t rows, int64_t j0, int64_t j1, const float *as,
                        uint8_t *c)
{
    const qc_amx_weights *w = e->w;
    const int8_t *base = w->packed;
    for (int64_t j = j0; j < j1; j += 16) {
        __mmask16 mk = tail_mask(j1 - j);
        const int32_t *comp = (const int32_t *)(base + (j / 32) * (32 * w->kp + 128) + 32 * w->kp) + j % 32;
        __m512i vcomp = _mm512_maskz_loadu_epi32(mk, comp);
        __m512 vbs = _mm512_maskz_loadu_ps(mk, e->bs + j);
        __m512 vbias = e->bias ? _mm512_maskz_loadu_ps(mk, e->bias + j) : _mm512_setzero_ps();
        for (int64_t i = 0; i < rows; i++) {
            __m512i d = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(mk, blk + i * 32 + (j - j0)), vcomp);
            __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(d), _mm512_set1_ps(as[i]));
            v = e->bias ? _mm512_fmadd_ps(v, vbs, vbias) : _mm512_mul_ps(v, vbs);
            store16(c, e->out_f32, i * w->n + j, mk, v);
        }
    }
}

/* The block at row mb, column block q of the panel: its real rows and columns only. */
static void epilogue_block(const epilogue *e, const void *blk, int64_t mb, int64_t q)
{
    int64_t rows = min64(32, e->m - mb), j0 = e->j0 + q * 32, j1 = min64(j0 + 32, e->j1);
    uint8_t *c = e->c + (size_t)(mb * e->w->n) * (e->out_f32 ? 4 : 2);
    if (rows <= 0 || j0 >= j1)
        return;
    if (e->w->type == QC_AMX_W_S8)
        epilogue_s8(e, blk, rows, j0, j1, e->as + mb, c);
    else
        epilogue_f32(e, blk, rows, j0, j1, c);
}

/* ---- drivers: the loops of BLIS (Van Zee and van de Geijn, TOMS 2015) around the 32 x 32 blocks ---- */

typedef void block_fn(const uint8_t *a, const uint8_t *b, const void *cin, int64_t ldin, void *cout, int64_t ldout,
                      int64_t bytes, int load, l2_prefetch pf);

/* One K chunk of a panel's B: nb blocks of 32 columns, block q at b + q * bstride bytes, in the
 * packed order [kc / step][32][step] (the same byte geometry as A's chunks). */
typedef struct b_chunk {
    const uint8_t *b;
    int64_t bstride, nb;
} b_chunk;

/* a's K chunk [k0, k0 + kc) times b, added to the chunks before (k0 > 0) held in acc (row stride
 * ACC_LD): for each group of MC rows (its A chunk, MC x kc, stays in L2), each 32-column block of
 * B (kc x 32) meets every 32-row block of the group in turn.
 * - A chunk that is not the last goes back to acc; the last goes through a 4 KiB block in L1
 *   straight into the epilogue, so that C is written while its block is hot and acc is never read
 *   back (nor, for K <= kc, used): the separate epilogue pass over acc cost 0.03-0.07 of the peak.
 * - Prefetches into L2, where the first touch would otherwise come from L3 at its latency (the
 *   hardware prefetcher stops at every 4 KiB page, two K steps): while a group runs, block (q,
 *   row block) prefetches the q-th of nb parts of the same row block of the next group's A; in
 *   the first group, which meets each B block first, the row blocks prefetch the next B block, a
 *   part each. A's first touch cost 0.08-0.11 of the peak; B's prefetch raised M = 128 (an MoE
 *   expert's tokens) from 0.14 to 0.24 on 16 threads (docs/notes/amx/experiments.md §7). */
static void chunk_times_a(const qc_amx_act *a, int64_t k0, int64_t kc, const b_chunk *b, block_fn *blk, uint32_t *acc,
                          const epilogue *last)
{
    _Alignas(64) uint32_t out[32 * 32];
    int64_t es = a->esize, row_bytes = 32 * a->kp * es, bytes = kc * 32 * es, steps = bytes / 2048;
    const uint8_t *a0 = (const uint8_t *)a->data + k0 * 32 * es;
    for (int64_t m0 = 0; m0 < a->mp; m0 += MC) {
        int64_t m1 = min64(m0 + MC, a->mp), apart = bytes / b->nb / 64 * 64, bpart = bytes / ((m1 - m0) / 32) / 64 * 64;
        for (int64_t q = 0; q < b->nb; q++)
            for (int64_t mb = m0; mb < m1; mb += 32) {
                const uint8_t *ab = a0 + mb / 32 * row_bytes, *bb = b->b + q * b->bstride;
                l2_prefetch pf = {mb + MC < a->mp ? ab + MC / 32 * row_bytes + q * apart : NULL,
                                  m0 == 0 && q + 1 < b->nb ? bb + b->bstride + (mb - m0) / 32 * bpart : NULL,
                                  steps ? apart / 64 / steps : 0, steps ? bpart / 64 / steps : 0};
                uint32_t *cacc = acc ? acc + mb * ACC_LD + q * 32 : NULL; /* NULL: one chunk, never loaded */
                if (!last) {
                    blk(ab, bb, cacc, ACC_LD, cacc, ACC_LD, bytes, k0 > 0, pf);
                    continue;
                }
                blk(ab, bb, cacc, ACC_LD, out, 32, bytes, k0 > 0, pf);
                epilogue_block(last, out, mb, q);
            }
    }
}

/* The accumulator of one row range: rows x ACC_LD words, 64-byte aligned, used only when K takes
 * more than one chunk. Not zeroed: the first chunk starts from zero tiles and overwrites it (a
 * 2 MiB memset per call was most of the time of a small GEMM). */
static void *acc_alloc(int64_t rows, int64_t kp)
{
    return kp > KC ? aligned_alloc(64, (size_t)(rows * ACC_LD) * 4) : NULL;
}

/* c[:, n0..n1) for any weight type: bf16 and fp8 (unpacked to bf16 per chunk) through
 * TDPBF16PS and the fp32 epilogue, s8 through TDPBUSD and the int8 epilogue (as, bs). K = 0 runs
 * one empty chunk, whose zero tiles give c = bias. */
static int gemm_run(const qc_amx_act *a0, const qc_amx_weights *w, const float *as, const float *bs, const float *bias,
                    int out_f32, void *c, int64_t n0, int64_t n1)
{
    int s8 = w->type == QC_AMX_W_S8, fp8 = w->type == QC_AMX_W_FP8;
    int64_t es = s8 ? 1 : 2, bstride = s8 ? 32 * w->kp + 128 : 32 * w->kp * 2; /* packed block stride, bytes */
    int64_t rows = min64(ROWS, round_up(a0->m, 32)), chunks = w->kp ? (w->kp + KC - 1) / KC : 1;
    void *acc = acc_alloc(rows, w->kp);
    uint8_t *buf = fp8 ? aligned_alloc(64, (size_t)(NC * KC) * 2) : NULL;
    if ((w->kp > KC && !acc) || (fp8 && !buf)) {
        free(acc), free(buf);
        return 2;
    }
    qc_amx_tiles_configure();
    for (int64_t jp = n0; jp < n1; jp += NC) {
        int64_t j1 = min64(jp + NC, n1), nb = (j1 - jp + 31) / 32;
        for (int64_t r0 = 0; r0 < a0->m; r0 += ROWS) {
            qc_amx_act a = qc_amx_act_rows(a0, r0, min64(r0 + ROWS, a0->m));
            epilogue e = {
                w, as ? as + r0 : NULL, bs, bias, out_f32, (uint8_t *)c + r0 * w->n * (out_f32 ? 4 : 2), a.m, jp, j1};
            for (int64_t ci = 0; ci < chunks; ci++) {
                int64_t k0 = ci * KC, kc = min64(KC, w->kp - k0);
                b_chunk b = {(const uint8_t *)w->packed + jp / 32 * bstride + k0 * 32 * es, bstride, nb};
                if (fp8) { /* unpacked to bf16 once per chunk, for every row block */
                    for (int64_t q = 0; q < nb; q++)
                        unpack_block(w, jp / 32 + q, k0, kc, (uint16_t *)(buf + q * kc * 64));
                    b = (b_chunk){buf, kc * 64, nb};
                }
                chunk_times_a(&a, k0, kc, &b, s8 ? block_s8 : block_bf16, acc, ci == chunks - 1 ? &e : NULL);
            }
        }
    }
    _tile_release();
    free(acc), free(buf);
    return 0;
}

int qc_amx_gemm_fp8(const qc_amx_act *a, const qc_amx_weights *w, const float *bias, int out_f32, void *c, int64_t n0,
                    int64_t n1)
{
    return w->type == QC_AMX_W_FP8 ? gemm_run(a, w, NULL, NULL, bias, out_f32, c, n0, n1) : 2;
}

int qc_amx_gemm_bf16(const qc_amx_act *a, const qc_amx_weights *w, const float *bias, int out_f32, void *c, int64_t n0,
                     int64_t n1)
{
    return w->type == QC_AMX_W_BF16 ? gemm_run(a, w, NULL, NULL, bias, out_f32, c, n0, n1) : 2;
}

int qc_amx_gemm_s8(const qc_amx_act *a, const float *as, const qc_amx_weights *w, const float *bs, const float *bias,
                   int out_f32, void *c, int64_t n0, int64_t n1)
{
    return w->type == QC_AMX_W_S8 ? gemm_run(a, w, as, bs, bias, out_f32, c, n0, n1) : 2;
}
