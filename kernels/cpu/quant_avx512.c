/* quant_avx512.c: the quant op's kernels (cpu-avx512 backend): tensor, token and token_group FP8
 * (docs/spec/formats.md §6.2, §6.3), block 128x128 (§6.4), MXFP8/MXFP6/MXFP4 (§5), NVFP4 (§4).
 *
 * Claim: the bytes of qcref_quant (reference/recipes/) under the recipe profile of the case, bit
 * for bit: every token_group profile (sgl-kernel, sgl-kernel-sm100, triton-row, triton-col,
 * deepgemm-ref, vllm-cpp, with and without ue8m0), both block profiles (deepgemm-ref,
 * sglang-native, with and without ue8m0), every mx profile (torchao-floor/ceil/even/rceil, ocp,
 * flashinfer-cutedsl, flashinfer-fast, triton-kernels, sgl-kernel, aiter, and modelopt through the
 * log2f threshold table of encode_avx512.h), and the four nvfp4 orders (flashinfer-fast,
 * sgl-kernel, flashinfer-te, torchao).
 *
 * A row is done 16 groups at a time while they are in L1, in one pass over memory: the amax of
 * the 16 groups (integer max of |x| bits reduced by a shuffle tree, a NaN group redone with the
 * profile's NaN rule), the scale chain on 16 lanes (amax -> scale -> e8m0/e4m3 byte -> element
 * multiplier, every knob of the policy; the GPU's rcp.approx.ftz is the reference's measured
 * table, gathered), then the elements (x * c with or without flush-to-zero, or the IEEE x / c,
 * which for a power-of-two MX scale is x * (1/c) exactly; the clamp; the cast of
 * encode_avx512.h), four vectors packed per 64-byte store. block does the amax pass over the 128
 * rows of a tile row first, then the elements. The chain is written from the spec, not from the
 * reference's code; one step stays scalar per lane: exp2f(ceilf(log2f(s))) of the token_group
 * log2-ceil pow2 rounding (libm, once per group). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu_avx512.h"
#include "encode_avx512.h"

/* ---- scalar helpers ---- */

static float ftz(float x) { return fabsf(x) < 0x1p-126f ? copysignf(0.0f, x) : x; }
static float recip(float b, qc_div_mode m) { return m == QC_DIV_IEEE ? 1.0f / b : qcref_rcp_approx_ftz(b); }

/* ---- 16-lane passes ---- */

/* How far ahead the amax pass prefetches its input: the element pass re-reads each group from L1. */
#ifndef QC_PREFETCH_BYTES
#define QC_PREFETCH_BYTES 4096
#endif

/* The element pass runs from L1 and, without misses of its own, leaves the memory idle while it
 * computes: it prefetches the input this far ahead (past the current 16 groups) so that the next
 * amax pass finds its lines on the way. */
#ifndef QC_ELEM_PREFETCH_BYTES
#define QC_ELEM_PREFETCH_BYTES 16384
#endif

static inline void prefetch4(const float *x)
{
    const char *p = (const char *)x + QC_ELEM_PREFETCH_BYTES;
    _mm_prefetch(p, _MM_HINT_T0), _mm_prefetch(p + 64, _MM_HINT_T0);
    _mm_prefetch(p + 128, _MM_HINT_T0), _mm_prefetch(p + 192, _MM_HINT_T0);
}

static __mmask16 tail(size_t n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1); }

/* max |x| over n elements; a NaN element is skipped (fmaxf) or, under PROPAGATE, the first NaN's
 * |x| is the result (torch amax). */
static float group_amax(const float *x, size_t n, qc_amax_nan rule)
{
    __m512 m = _mm512_setzero_ps();
    __mmask16 nan = 0;
    for (size_t i = 0; i < n; i += 16) {
        _mm_prefetch((const char *)(x + i) + QC_PREFETCH_BYTES, _MM_HINT_T0); /* the first touch of x */
        __m512 a = _mm512_abs_ps(_mm512_maskz_loadu_ps(tail(n - i), x + i));
        nan |= _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
        m = _mm512_max_ps(a, m); /* MAXPS returns the second operand when the first is NaN */
    }
    if (nan && rule == QC_AMAX_NAN_PROPAGATE)
        for (size_t i = 0; i < n; i++)
            if (x[i] != x[i])
                return fabsf(x[i]);
    return _mm512_reduce_max_ps(m);
}

/* The element op of a row: x * c (EL_MUL, EL_MUL_FTZ under fast math) or the IEEE x / c (EL_DIV),
 * one c per group; then the clamp, then the cast. */
typedef enum { EL_MUL, EL_MUL_FTZ, EL_DIV } elem_kind;

typedef struct elem_op {
    elem_kind kind;
    qc_clamp clamp;
    float clamp_max;
    int stream; /* 64-byte code stores go around the cache (qc_avx512_set_stream_min) */
    int c_nan_first; /* a NaN multiplier's NaN is the product's, even for a NaN x (nvfp4.c, torchao) */
} elem_op;

static inline __m512 ftz16(__m512 v)
{
    __mmask16 tiny = _mm512_cmp_ps_mask(_mm512_abs_ps(v), _mm512_set1_ps(0x1p-126f), _CMP_LT_OQ);
    return _mm512_mask_and_ps(v, tiny, v, _mm512_castsi512_ps(_mm512_set1_epi32((int)QC_F32_SIGN)));
}

/* c * v as mul.rn.ftz.f32 computes it (v and c already flushed): zero of the product's sign when
 * the product is tiny after rounding to 24 bits with an unbounded exponent, which v * 2^64 * c
 * tells (a normal float at that scale; arith.h qcref_fl32_mul_ftz). */
static inline __m512 mul_ftz16(__m512 v, __m512 c)
{
    __m512 p = _mm512_mul_ps(v, c), s = _mm512_mul_ps(_mm512_mul_ps(v, _mm512_set1_ps(0x1p64f)), c);
    __mmask16 tiny = _mm512_cmp_ps_mask(_mm512_abs_ps(p), _mm512_set1_ps(0x1p-126f), _CMP_LE_OQ) &
                     _mm512_cmp_ps_mask(_mm512_abs_ps(s), _mm512_set1_ps(0x1p-62f), _CMP_LT_OQ);
    return _mm512_mask_and_ps(p, tiny, p, _mm512_castsi512_ps(_mm512_set1_epi32((int)QC_F32_SIGN)));
}

/* scale.c qcref_recipe_clamp with each NaN rule: MINPS/MAXPS return the second operand on NaN. */
static inline __m512 clamp16(__m512 v, qc_clamp c, __m512 m, __m512 neg)
{
    switch (c) {
    case QC_CLAMP_TORCH: return _mm512_max_ps(neg, _mm512_min_ps(m, v));  /* NaN propagates */
    case QC_CLAMP_FMINF: return _mm512_max_ps(_mm512_min_ps(v, m), neg);  /* NaN -> +max */
    case QC_CLAMP_TRITON: return _mm512_min_ps(_mm512_max_ps(v, neg), m); /* NaN -> -max */
    default: return v;
    }
}

/* x * c for a NaN multiplier c: x's NaN (quieted) where x is NaN, else c's. The reference pins
 * the NaN of a product of two NaNs to the first operand's (arith.h qcref_fl32_mul), and x is the
 * first operand of every element product (scale.c, mx.c, nvfp4.c) but torchao's nvfp4 one, where
 * the scale is (c_first: c's NaN always). */
static inline __m512 nan_product(__m512 x, float c, int c_first)
{
    __m512 r = _mm512_set1_ps(c + c);
    if (c_first)
        return r;
    __m512 qx = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(x), V1(0x00400000)));
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), qx);
}

/* One vector of the element op: x * c, x * c with fast math's flushes, or x / c; the clamp; the cast. */
static inline __attribute__((always_inline)) __m512i elem16(__m512 v, __m512 cv, const mf_plan k, const elem_kind kind,
                                                            const qc_clamp clamp, __m512 m, __m512 neg, const int even,
                                                            const int finite)
{
    /* Flushing a subnormal product is invisible in a format whose smallest subnormal is far above
     * 2^-126 (every element format here): both give a zero code of the product's sign. Only
     * modelopt's zero rule (exact +-0 -> sign bit) tells them apart. */
    const int out_ftz = k.zero_modelopt || k.bits > 8;
    if (kind == EL_DIV)
        v = _mm512_div_ps(v, cv);
    else if (kind == EL_MUL_FTZ && out_ftz)
        v = mul_ftz16(ftz16(v), cv);
    else if (kind == EL_MUL_FTZ)
        v = _mm512_mul_ps(ftz16(v), cv);
    else
        v = _mm512_mul_ps(v, cv);
    v = clamp16(v, clamp, m, neg);
    return mf_encode16_fin(k, _mm512_castps_si512(v), even, finite);
}

/* Four vectors of codes (0..255 in each 32-bit lane) as 64 consecutive bytes: PACKUSDW and
 * PACKUSWB work inside 128-bit lanes, so 128-bit lane L holds 4 codes of each vector; VPERMD puts
 * the 4-byte pieces back in order (one store instead of four VPMOVDB). */
static inline __m512i pack4(__m512i a, __m512i b, __m512i c, __m512i d)
{
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    __m512i abcd = _mm512_packus_epi16(_mm512_packus_epi32(a, b), _mm512_packus_epi32(c, d));
    return _mm512_permutexvar_epi32(order, abcd);
}

/* nv vectors of whole groups (2^sh vectors per group, multiplier cf[group]), four per 64-byte store;
 * finite: no lane of x op c is NaN, so the cast skips its NaN blend. stream: the 64-byte stores
 * are non-temporal (VMOVNTDQ, which needs a 64-byte aligned address) where qb is aligned. */
static inline __attribute__((always_inline)) void elem_vectors(const float *xb, uint8_t *qb, const float *cf, size_t nv,
                                                               size_t sh, const mf_plan k, const elem_kind kind,
                                                               const qc_clamp clamp, __m512 m, __m512 neg,
                                                               const int even, const int finite, int stream)
{
    size_t v = 0;
    stream = stream && ((uintptr_t)qb & 63) == 0;
    for (; v + 4 <= nv; v += 4) {
        prefetch4(xb + 16 * v);
        __m512i r[4];
        for (int u = 0; u < 4; u++)
            r[u] = elem16(_mm512_loadu_ps(xb + 16 * (v + u)), _mm512_set1_ps(cf[(v + u) >> sh]), k, kind, clamp, m, neg,
                          even, finite);
        if (stream)
            _mm512_stream_si512((void *)(qb + 16 * v), pack4(r[0], r[1], r[2], r[3]));
        else
            _mm512_storeu_si512((void *)(qb + 16 * v), pack4(r[0], r[1], r[2], r[3]));
    }
    for (; v < nv; v++)
        _mm512_mask_cvtepi32_storeu_epi8(qb + 16 * v, 0xFFFF,
                                         elem16(_mm512_loadu_ps(xb + 16 * v), _mm512_set1_ps(cf[v >> sh]), k, kind, clamp,
                                                m, neg, even, finite));
}

/* The lanes of multipliers (or divisors) c whose product with any finite x is not NaN: for a finite
 * x, x * c is never NaN when c is finite (overflow gives Inf), and x / c never when c is finite and
 * nonzero (IEEE 754 section 7.2: NaN only from 0 * Inf, Inf * 0, 0 / 0, Inf / Inf or a NaN operand). */
static inline __mmask16 nan_free16(__m512 c, elem_kind kind)
{
    __mmask16 ok = _mm512_cmp_ps_mask(_mm512_abs_ps(c), _mm512_set1_ps(INFINITY), _CMP_LT_OQ); /* NaN fails too */
    return kind == EL_DIV ? ok & _mm512_cmp_ps_mask(c, _mm512_setzero_ps(), _CMP_NEQ_OQ) : ok;
}

/* q[0..n) from x[0..n) in groups of `group` elements (the last may be shorter), multiplier c[b]
 * of group b. The op's kind, clamp and tie rule are arguments that elem_row passes as constants,
 * so that the compiler writes one loop per combination without a test inside. Whole groups of a
 * multiple of 16 elements (a power of two of vectors per group) with non-NaN multipliers take the
 * unmasked path, four vectors per store; the rest (tails, a NaN multiplier) the masked one.
 * finite: the caller knows x[0..n) holds no NaN or Inf (chunk_amax); with finite multipliers the
 * fast path then drops the cast's NaN blend. */
static inline __attribute__((always_inline)) void elem_row_with(const float *x, size_t n, size_t group, const float *c,
                                                                uint8_t *q, elem_op op, const mf_plan k, int finite,
                                                                const elem_kind kind, const qc_clamp clamp, const int even)
{
    const __m512 m = _mm512_set1_ps(op.clamp_max), neg = _mm512_set1_ps(-op.clamp_max);
    size_t per = group / 16, ngr = n / group, sh = 0;
    int fast = group % 16 == 0 && (per & (per - 1)) == 0;
    for (size_t b = 0; fast && b < ngr && kind != EL_DIV; b += 16) { /* no NaN multiplier */
        __m512 cv = _mm512_maskz_loadu_ps(tail(ngr - b), c + b);
        fast = !_mm512_cmp_ps_mask(cv, cv, _CMP_UNORD_Q);
    }
    if (fast) {
        float cf[16];
        while ((1u << sh) < per)
            sh++;
        for (size_t b = 0; b < ngr; b += 16) {
            size_t nb = ngr - b < 16 ? ngr - b : 16, nv = nb * per;
            __mmask16 t = tail(nb);
            __m512 cv = _mm512_maskz_loadu_ps(t, c + b);
            cv = kind == EL_MUL_FTZ ? ftz16(cv) : cv;
            _mm512_storeu_ps(cf, cv);
            int fin = finite && (nan_free16(cv, kind) & t) == t;
            const float *xb = x + b * group;
            uint8_t *qb = q + b * group;
            if (fin)
                elem_vectors(xb, qb, cf, nv, sh, k, kind, clamp, m, neg, even, 1, op.stream);
            else
                elem_vectors(xb, qb, cf, nv, sh, k, kind, clamp, m, neg, even, 0, op.stream);
        }
        if (ngr * group == n)
            return;
        size_t done = ngr * group; /* the short last group */
        x += done, q += done, c += ngr, n -= done;
    }
    for (size_t g0 = 0, b = 0; g0 < n; g0 += group, b++) {
        float cs = c[b];
        __m512 cv = _mm512_set1_ps(kind == EL_MUL_FTZ ? ftz(cs) : cs);
        int nan_c = cs != cs && kind != EL_DIV;
        size_t g1 = g0 + group < n ? g0 + group : n;
        for (size_t i = g0; i < g1; i += 16) {
            __mmask16 t = tail(g1 - i);
            __m512 v = _mm512_maskz_loadu_ps(t, x + i);
            __m512i r = nan_c ? mf_encode16_with(k, _mm512_castps_si512(clamp16(nan_product(v, cs, op.c_nan_first), clamp, m, neg)), even)
                              : elem16(v, cv, k, kind, clamp, m, neg, even, 0);
            _mm512_mask_cvtepi32_storeu_epi8(q + i, t, r);
        }
    }
}

#define ELEM_KINDS(CLAMP, EVEN)                                                                        \
    switch (op.kind) {                                                                                \
    case EL_DIV: elem_row_with(x, n, group, c, q, op, k, finite, EL_DIV, CLAMP, EVEN); return;         \
    case EL_MUL_FTZ: elem_row_with(x, n, group, c, q, op, k, finite, EL_MUL_FTZ, CLAMP, EVEN); return; \
    default: elem_row_with(x, n, group, c, q, op, k, finite, EL_MUL, CLAMP, EVEN); return;             \
    }
#define ELEM_CLAMPS(EVEN)                                                       \
    switch (op.clamp) {                                                         \
    case QC_CLAMP_TORCH: ELEM_KINDS(QC_CLAMP_TORCH, EVEN)                       \
    case QC_CLAMP_FMINF: ELEM_KINDS(QC_CLAMP_FMINF, EVEN)                       \
    case QC_CLAMP_TRITON: ELEM_KINDS(QC_CLAMP_TRITON, EVEN)                     \
    default: ELEM_KINDS(QC_CLAMP_NONE, EVEN)                                    \
    }

/* Under fast math the input is flushed before x * c (EL_MUL_FTZ). Where the product is not
 * flushed too (out_ftz off in elem16) that flush is invisible when every |c| <= 2^(124 + emin -
 * mbits): then |x c| < 2^-126 2^(124 + emin - mbits) = 2^(emin - mbits - 2), a quarter of the
 * format's smallest subnormal, for every fp32 subnormal x, so fl32(x c) and ftz(x) c = +-0 both
 * encode to the zero code of the same sign under every tie rule. */
static int demotable(elem_op op, const float *c, size_t ngr, const mf_plan k)
{
    if (op.kind != EL_MUL_FTZ || k.zero_modelopt || k.bits > 8 || ngr > 16)
        return 0;
    float lim = ldexpf(1.0f, 124 + k.emin - k.mbits);
    for (size_t b = 0; b < ngr; b++)
        if (!(fabsf(c[b]) <= lim))
            return 0;
    return 1;
}

/* Where a chunk may drop its clamp (two operations per vector): no product is NaN (finite x,
 * nan_free16 multipliers), the bound is at or above the format's
 * largest value, and the cast either saturates already or the bound is exactly that value. Then a
 * product beyond the bound, Inf included, gets the largest code of its sign with the clamp, and
 * without it under a saturating cast; every other product is left alone by the clamp and cannot
 * overflow. The caller then encodes with the overflow rule made saturating. In L2 on the CI
 * machine: token_group triton-row 8-12% faster, mxfp8 flashinfer-cutedsl 5-10%, mxfp8
 * torchao-floor / rceil and mxfp4 torchao-floor 2-7%. */
static int clamp_folds(elem_op op, const float *c, size_t ngr, const mf_plan k, int finite)
{
    if (op.clamp == QC_CLAMP_NONE || !finite || !(op.clamp_max >= k.maxvalue) || ngr > 16 ||
        !(k.saturates || op.clamp_max == k.maxvalue))
        return 0;
    __mmask16 t = tail(ngr);
    return (nan_free16(_mm512_maskz_loadu_ps(t, c), op.kind) & t) == t;
}

static void elem_row(const float *x, size_t n, size_t group, const float *c, uint8_t *q, elem_op op, const mf_plan plan,
                     int finite)
{
    mf_plan k = plan;
    if (group == 0)
        return;
    size_t ngr = (n + group - 1) / group;
    float flushed[16];
    if (demotable(op, c, ngr, k)) { /* the multiplier itself stays flushed (fast math's ftz of c) */
        for (size_t b = 0; b < ngr; b++)
            flushed[b] = ftz(c[b]);
        c = flushed, op.kind = EL_MUL;
    }
    if (clamp_folds(op, c, ngr, k, finite)) {
        op.clamp = QC_CLAMP_NONE;
        k.ovf_code = k.maxmag, k.ovf_signed = 1, k.ovf_min = 1, k.saturates = 1;
    }
    if (k.ties == QC_TIES_EVEN)
        ELEM_CLAMPS(1)
    ELEM_CLAMPS(0)
}

/* ---- amax of 16 groups at once ---- */

/* The max of |x| as unsigned integers: the bits of non-negative floats order as their values,
 * and a NaN's |x| bits (> 0x7F800000) exceed every number, so a NaN group shows as a result above
 * Inf and is redone by group_amax (its NaN rule). The 16 group vectors are reduced to one vector
 * of 16 maxima by halving: 256-bit halves (VSHUFI32X4), 128-bit quarters, 64-bit and 32-bit pairs
 * (UNPCK*, SHUFPS); tracing the halving, lane i ends with the vector of slot tree_order[i], an
 * involution, so group g is loaded into slot tree_order[g] and lands in lane g. */
static const uint8_t tree_order[16] = {0, 2, 1, 3, 8, 10, 9, 11, 4, 6, 5, 7, 12, 14, 13, 15};

static inline __m512i amax_tree(const __m512i v[16])
{
    __m512i w[8], u[4], t[2];
    for (int b = 0; b < 8; b++)
        w[b] = _mm512_max_epu32(_mm512_shuffle_i32x4(v[b], v[b + 8], 0x44), _mm512_shuffle_i32x4(v[b], v[b + 8], 0xEE));
    for (int b = 0; b < 4; b++)
        u[b] = _mm512_max_epu32(_mm512_shuffle_i32x4(w[b], w[b + 4], 0x88), _mm512_shuffle_i32x4(w[b], w[b + 4], 0xDD));
    for (int b = 0; b < 2; b++)
        t[b] = _mm512_max_epu32(_mm512_unpacklo_epi64(u[b], u[b + 2]), _mm512_unpackhi_epi64(u[b], u[b + 2]));
    __m512 r = _mm512_castsi512_ps(t[0]), s = _mm512_castsi512_ps(t[1]);
    return _mm512_max_epu32(_mm512_castps_si512(_mm512_shuffle_ps(r, s, 0x88)),
                            _mm512_castps_si512(_mm512_shuffle_ps(r, s, 0xDD)));
}

/* amax of the groups [b0, b0 + n) (n <= 16) of a row of len elements in groups of g; lanes >= n
 * are 0. *finite: 1 when these groups are known to hold no NaN or Inf (the integer max is below
 * Inf's bits), 0 when they may. */
static __m512 chunk_amax(const float *xr, size_t len, size_t g, size_t b0, size_t n, qc_amax_nan rule, int *finite)
{
    float a[16] = {0};
    *finite = 0;
    if (g % 16 || (b0 + n) * g > len) {
        for (size_t b = 0; b < n; b++) {
            size_t s0 = (b0 + b) * g;
            a[b] = group_amax(xr + s0, s0 + g < len ? g : len - s0, rule);
        }
        return _mm512_loadu_ps(a);
    }
    const __m512i absm = V1(QC_F32_ABS);
    __m512i v[16];
    for (size_t b = 0; b < 16; b++) {
        __m512i mx = _mm512_setzero_si512();
        const float *xb = xr + (b0 + b) * g;
        for (size_t i = 0; b < n && i < g; i += 16) {
            _mm_prefetch((const char *)(xb + i) + QC_PREFETCH_BYTES, _MM_HINT_T0); /* the first touch of x */
            mx = _mm512_max_epu32(mx, _mm512_and_si512(_mm512_loadu_si512((const void *)(xb + i)), absm));
        }
        v[tree_order[b]] = mx;
    }
    __m512i r = amax_tree(v);
    __mmask16 nan = _mm512_cmpgt_epu32_mask(r, V1(QC_F32_INF));
    *finite = !_mm512_cmpeq_epi32_mask(r, V1(QC_F32_INF)) && !nan;
    if (!nan)
        return _mm512_castsi512_ps(r);
    _mm512_storeu_ps(a, _mm512_castsi512_ps(r));
    for (size_t b = 0; b < n; b++)
        if (nan >> b & 1)
            a[b] = group_amax(xr + (b0 + b) * g, g, rule);
    return _mm512_loadu_ps(a);
}

/* rcp.approx.ftz.f32 on 16 lanes, the emulation of reference/arith/rcp_approx_core.h: the
 * correctly rounded 1/mantissa (one IEEE division is exactly that RNE) plus the measured delta
 * of the table (2 bits per mantissa, gathered as 32-bit words), rescaled by the exponent. */
static inline __m512 rcp16(__m512 x, const uint8_t *table)
{
    __m512i b = _mm512_castps_si512(x), sign = _mm512_and_si512(b, V1(QC_F32_SIGN)), a = _mm512_and_si512(b, V1(QC_F32_ABS));
    __m512i m = _mm512_and_si512(a, V1(0x7FFFFF));
    __m512 mant = _mm512_castsi512_ps(_mm512_or_si512(m, V1(0x3F800000)));
    __m512i r = _mm512_castps_si512(_mm512_div_ps(_mm512_set1_ps(1.0f), mant));
    __m512i word = _mm512_i32gather_epi32(_mm512_srli_epi32(m, 4), (const void *)table, 4);
    __m512i code = _mm512_and_si512(_mm512_srlv_epi32(word, _mm512_slli_epi32(_mm512_and_si512(m, V1(15)), 1)), V1(3));
    r = _mm512_sub_epi32(_mm512_add_epi32(r, code), V1(1));
    __m512i re = _mm512_sub_epi32(_mm512_srli_epi32(r, 23), _mm512_sub_epi32(_mm512_srli_epi32(a, 23), V1(127)));
    __m512i v = _mm512_or_si512(sign, _mm512_or_si512(_mm512_slli_epi32(re, 23), _mm512_and_si512(r, V1(0x7FFFFF))));
    v = _mm512_mask_mov_epi32(v, _mm512_cmple_epi32_mask(re, _mm512_setzero_si512()), sign); /* below normal: flushed */
    v = _mm512_mask_mov_epi32(v, _mm512_cmplt_epu32_mask(a, V1(0x00800000)), _mm512_or_si512(sign, V1(QC_F32_INF)));
    v = _mm512_mask_mov_epi32(v, _mm512_cmpeq_epi32_mask(a, V1(QC_F32_INF)), sign);
    v = _mm512_mask_mov_epi32(v, _mm512_cmpgt_epu32_mask(a, V1(QC_F32_INF)), V1(0x7FFFFFFF));
    return _mm512_castsi512_ps(v);
}

/* e4m3fn codes -> fp32 (formats.md §1.1): NaN 0x7F decodes to sign | 0x7FC00000 (docs/DECISIONS.md). */
static inline __m512 e4m3fn_decode16(__m512i c)
{
    __m512i mag = _mm512_and_si512(c, V1(0x7F)), e = _mm512_srli_epi32(mag, 3), m = _mm512_and_si512(mag, V1(7));
    __m512i normal = _mm512_or_si512(_mm512_slli_epi32(_mm512_add_epi32(e, V1(120)), 23), _mm512_slli_epi32(m, 20));
    __m512i sub = _mm512_castps_si512(_mm512_mul_ps(_mm512_cvtepi32_ps(m), _mm512_set1_ps(0x1p-9f)));
    __m512i v = _mm512_mask_mov_epi32(normal, _mm512_cmpeq_epi32_mask(e, _mm512_setzero_si512()), sub);
    v = _mm512_mask_mov_epi32(v, _mm512_cmpeq_epi32_mask(mag, V1(0x7F)), V1(QC_F32_QNAN));
    return _mm512_castsi512_ps(_mm512_or_si512(v, _mm512_slli_epi32(_mm512_and_si512(c, V1(0x80)), 24)));
}

/* ---- the arithmetic of the scale chain on 16 groups (arith.h) ---- */

static inline __m512 mul16(__m512 a, __m512 b, int fast)
{
    return fast ? ftz16(_mm512_mul_ps(ftz16(a), ftz16(b))) : _mm512_mul_ps(a, b);
}

static inline __m512 recip16(__m512 b, qc_div_mode m, const uint8_t *tab)
{
    return m == QC_DIV_IEEE ? _mm512_div_ps(_mm512_set1_ps(1.0f), b) : rcp16(b, tab);
}

/* a / b as the kernel's build executes it: div.rn, or a * rcp.approx(b) (ftz under fast math). */
static inline __m512 divm16(__m512 a, __m512 b, qc_div_mode m, const uint8_t *tab)
{
    return m == QC_DIV_IEEE ? _mm512_div_ps(a, b) : mul16(a, rcp16(b, tab), m == QC_DIV_FAST);
}

/* e8m0 bytes -> fp32 under each decoder of formats.md §2.3. */
static inline __m512 e8m0_decode16(__m512i E, qc_e8m0_decoder d)
{
    const __m512i zero = _mm512_setzero_si512();
    __mmask16 e0 = _mm512_cmpeq_epi32_mask(E, zero);
    __m512i shifted = _mm512_slli_epi32(E, 23), r;
    switch (d) {
    case QC_E8M0_DEC_SHIFT: r = shifted; break;
    case QC_E8M0_DEC_EXP2: r = _mm512_mask_mov_epi32(shifted, e0, V1(0x00400000)); break;
    case QC_E8M0_DEC_TRTLLM_RCP: /* exp2f_rcp: 2^(127 - E), 1 for E = 0, 254 -> 2^-127, 255 -> 2^-128 */
        r = _mm512_slli_epi32(_mm512_sub_epi32(V1(254), E), 23);
        r = _mm512_mask_mov_epi32(r, _mm512_cmpgt_epu32_mask(E, V1(253)),
                                  _mm512_srlv_epi32(V1(0x00400000), _mm512_sub_epi32(E, V1(254))));
        r = _mm512_mask_mov_epi32(r, e0, V1(0x3F800000));
        break;
    case QC_E8M0_DEC_CUTEDSL_INV:
        r = _mm512_maskz_mov_epi32(~e0 & _mm512_cmplt_epu32_mask(E, V1(254)), _mm512_slli_epi32(_mm512_sub_epi32(V1(254), E), 23));
        break;
    case QC_E8M0_DEC_TORCHAO: r = _mm512_mask_mov_epi32(shifted, e0, V1(0x00800000)); break;
    case QC_E8M0_DEC_TORCHAO_RCP: /* 2^(127 - E), 1 for E = 0, 254 -> 2^-127, 255 -> NaN */
        r = _mm512_slli_epi32(_mm512_sub_epi32(V1(254), E), 23);
        r = _mm512_mask_mov_epi32(r, _mm512_cmpeq_epi32_mask(E, V1(254)), V1(0x00400000));
        r = _mm512_mask_mov_epi32(r, _mm512_cmpeq_epi32_mask(E, V1(255)), V1(QC_F32_QNAN));
        r = _mm512_mask_mov_epi32(r, e0, V1(0x3F800000));
        break;
    default: /* torch, CUDA, ml_dtypes */
        r = _mm512_mask_mov_epi32(_mm512_mask_mov_epi32(shifted, e0, V1(0x00400000)), _mm512_cmpeq_epi32_mask(E, V1(255)),
                                  V1(QC_F32_QNAN));
        break;
    }
    return _mm512_castsi512_ps(r);
}

/* The scale chain's constants, once per quantize call. */
typedef struct chain {
    const qc_recipe_policy *p;
    const uint8_t *tab;
    int fast;
    float rcp_max; /* fl32(1 / elem_max) under the recipe's division */
    e8_log2ceil_table log2ceil; /* e8m0 rule log2-ceil (modelopt), filled only when the policy uses it */
} chain;

static void chain_init(chain *c, const qc_recipe_policy *p)
{
    c->p = p, c->tab = qcref_rcp_table(), c->fast = p->div_mode == QC_DIV_FAST, c->rcp_max = recip(p->elem_max, p->div_mode);
    if (p->pow2_policy.e8m0 == QC_E8M0_LOG2_CEIL)
        e8_log2ceil_table_init(&c->log2ceil);
}

/* qcref_e8m0_encode of the pow2 policy on 16 lanes, log2-ceil included. */
static inline __m512i e8_byte16(const chain *k, __m512i bits)
{
    if (k->p->pow2_policy.e8m0 == QC_E8M0_LOG2_CEIL)
        return e8_log2ceil16(&k->log2ceil, bits);
    return e8_encode16(&k->p->pow2_policy, bits);
}

/* ---- tensor, token, token_group: scale.c's knobs, one per step ---- */

/* max(amax, eps) as torch.clamp(min=eps): a NaN amax stays NaN. */
static inline __m512 amax_used16(__m512 amax, const qc_recipe_policy *p)
{
    if (p->eps_at != QC_EPS_AMAX)
        return amax;
    __m512 eps = _mm512_set1_ps(p->eps);
    return _mm512_mask_mov_ps(amax, _mm512_cmp_ps_mask(amax, eps, _CMP_LT_OQ), eps);
}

/* exp2(ceil(log2(s))) in float (sglang/vLLM Triton, vLLM C++): libm, lane by lane. */
static __m512 log2_ceil16(__m512 s)
{
    float v[16];
    _mm512_storeu_ps(v, s);
    for (int i = 0; i < 16; i++)
        v[i] = exp2f(ceilf(log2f(v[i])));
    return _mm512_loadu_ps(v);
}

/* max / amax: a division, or torch's amax.reciprocal() * max (scale.c max_over_amax). */
static __m512 max_over_amax16(__m512 a, const chain *k)
{
    const qc_recipe_policy *p = k->p;
    __m512 mx = _mm512_set1_ps(p->elem_max);
    if (p->scale_op == QC_SCALE_RCP_OF_MULT)
        return mul16(recip16(a, p->div_mode, k->tab), mx, k->fast);
    return divm16(mx, a, p->div_mode, k->tab);
}

static __m512 scale_of16(__m512 amax, const chain *k)
{
    const qc_recipe_policy *p = k->p;
    __m512 a = amax_used16(amax, p), mx = _mm512_set1_ps(p->elem_max), s;
    if (p->scale_op == QC_SCALE_MUL_RCP) /* amax * fl32(1/max) */
        s = mul16(a, _mm512_set1_ps(k->rcp_max), k->fast);
    else if (p->scale_op == QC_SCALE_RCP_OF_MULT) /* 1 / m, m = fl32(fl32(1 / amax) * max) (scale.c) */
        s = recip16(max_over_amax16(a, k), p->div_mode, k->tab);
    else
        s = divm16(a, mx, p->div_mode, k->tab);
    if (p->eps_at == QC_EPS_SCALE) /* fmaxf(s, eps): NaN -> eps (MAXPS returns the second operand) */
        s = _mm512_max_ps(s, _mm512_set1_ps(p->eps));
    if (p->pow2 == QC_POW2_E8M0)
        return e8m0_decode16(e8_byte16(k, _mm512_castps_si512(s)), p->pow2_policy.e8m0_decoder);
    if (p->pow2 == QC_POW2_LOG2_CEIL)
        return log2_ceil16(s);
    return s;
}

static elem_op tiled_op(const qc_recipe_policy *p)
{
    qc_elem_op e = p->elem_op == QC_ELEM_MUL_MAX_AMAX && p->pow2 != QC_POW2_NONE ? QC_ELEM_MUL_RCP : p->elem_op;
    elem_op o = {p->div_mode == QC_DIV_FAST ? EL_MUL_FTZ : EL_MUL, p->clamp, p->clamp_max, 0, 0};
    if (e == QC_ELEM_DIV && p->div_mode == QC_DIV_IEEE)
        o.kind = EL_DIV;
    return o;
}

/* The multiplier (or IEEE divisor) of each group with scale s (scale.c `scaled`); sgl-kernel's
 * ue8m0 y_scale = fast_pow2(-exp) is exactly 1/s, hence MUL_RCP there. */
static __m512 tiled_c16(__m512 s, __m512 amax, const chain *k)
{
    const qc_recipe_policy *p = k->p;
    qc_elem_op e = p->elem_op == QC_ELEM_MUL_MAX_AMAX && p->pow2 != QC_POW2_NONE ? QC_ELEM_MUL_RCP : p->elem_op;
    if (e == QC_ELEM_DIV) /* div.approx / div.full = a * rcp.approx(b) */
        return p->div_mode == QC_DIV_IEEE ? s : rcp16(s, k->tab);
    if (e == QC_ELEM_MUL_MAX_AMAX)
        return max_over_amax16(amax_used16(amax, p), k);
    __m512 r = recip16(s, p->div_mode, k->tab);
    if (p->zero_guard) /* scale 0 -> multiplier 0 */
        r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(s, _mm512_setzero_ps(), _CMP_EQ_OQ), _mm512_setzero_ps());
    return r;
}

static void tiled_quant(qc_recipe r, const qc_recipe_policy *p, const float *x, size_t rows, size_t cols,
                        const float *static_scale, qc_quantized *out, float *c, int stream)
{
    const mf_plan k = mf_plan_of(qcref_minifloat(p->elem), &p->cast);
    chain ch;
    chain_init(&ch, p);
    elem_op op = tiled_op(p);
    op.stream = stream;
    size_t g = r == QC_RECIPE_TOKEN_GROUP ? (size_t)p->group : cols;
    size_t nrow = r == QC_RECIPE_TENSOR ? 1 : rows, len = r == QC_RECIPE_TENSOR ? rows * cols : cols;
    size_t ng = len ? (len + g - 1) / g : 0;
    if (r != QC_RECIPE_TOKEN_GROUP) /* tiled.c: tensor and token have one scale per tile, even when empty */
        g = len ? len : 1, ng = 1;
    /* One pass per 16 groups while they are in L1: amax, the scale chain, the elements. */
    for (size_t i = 0; i < nrow; i++) {
        const float *xr = x + i * len;
        for (size_t j = 0; j < ng; j += 16) {
            size_t nb = ng - j < 16 ? ng - j : 16, e0 = j * g, e1 = (j + nb) * g < len ? (j + nb) * g : len;
            __mmask16 t = tail(nb);
            int fin;
            __m512 av = chunk_amax(xr, len, g, j, nb, p->amax_nan, &fin);
            __m512 s = static_scale ? _mm512_set1_ps(*static_scale) : scale_of16(av, &ch);
            _mm512_mask_storeu_ps(out->scale_f32 + i * ng + j, t, s);
            _mm512_mask_storeu_ps(c, t, tiled_c16(s, av, &ch));
            elem_row(xr + e0, e1 - e0, g, c, out->q + i * len + e0, op, k, fin);
        }
    }
}

/* block (formats.md §6.4, tiled.c): one scale per block_r x block_c tile; the tile's amax is the max of
 * its rows' segment amaxes, and under the NaN-propagating rule the first NaN in row-major order
 * (tiled.c tile_amax). The partial tiles at the right and bottom edges are the zero padding of
 * DeepGEMM per_block_cast_to_fp8: nothing added to amax, nothing written. */
static void block_quant(const qc_recipe_policy *p, const float *x, size_t rows, size_t cols, qc_quantized *out, float *c,
                        int stream)
{
    const mf_plan k = mf_plan_of(qcref_minifloat(p->elem), &p->cast);
    chain ch;
    chain_init(&ch, p);
    elem_op op = tiled_op(p);
    op.stream = stream;
    size_t tr = (size_t)p->block_r, tc = (size_t)p->block_c, nc = cols ? (cols + tc - 1) / tc : 0;
    float *amax = c + nc + 16;
    for (size_t r0 = 0, ti = 0; r0 < rows; r0 += tr, ti++) {
        size_t r1 = r0 + tr < rows ? r0 + tr : rows;
        for (size_t j = 0; j < nc; j++)
            amax[j] = 0.0f;
        for (size_t i = r0; i < r1; i++)
            for (size_t j = 0; j < nc; j += 16) {
                size_t nb = nc - j < 16 ? nc - j : 16;
                float a[16];
                int fin;
                _mm512_storeu_ps(a, chunk_amax(x + i * cols, cols, tc, j, nb, p->amax_nan, &fin));
                for (size_t b = 0; b < nb; b++)
                    if (amax[j + b] == amax[j + b] && !(a[b] <= amax[j + b])) /* NaN, or larger */
                        amax[j + b] = a[b];
            }
        for (size_t j = 0; j < nc; j += 16) {
            __mmask16 t = tail(nc - j);
            __m512 av = _mm512_maskz_loadu_ps(t, amax + j);
            __m512 s = scale_of16(av, &ch);
            _mm512_mask_storeu_ps(out->scale_f32 + ti * nc + j, t, s);
            _mm512_mask_storeu_ps(c + j, t, tiled_c16(s, av, &ch));
        }
        for (size_t i = r0; i < r1; i++)
            for (size_t j = 0; j < nc; j += 16) {
                size_t e0 = j * tc, e1 = (j + 16) * tc < cols ? (j + 16) * tc : cols;
                elem_row(x + i * cols + e0, e1 - e0, tc, c + j, out->q + i * cols + e0, op, k, 0);
            }
    }
}

/* ---- mx (formats.md §5) ---- */

/* flashinfer float_to_ue8m0_fast: ceil of the exponent, <= 0 -> 0, NaN and overflow -> 254. */
static inline __m512i cutedsl16(__m512 d)
{
    __m512i b = _mm512_castps_si512(d);
    __m512i E = _mm512_min_epu32(e8_ceil_exp(_mm512_srli_epi32(b, 23), _mm512_and_si512(b, V1(0x7FFFFF))), V1(254));
    E = _mm512_maskz_mov_epi32(_mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_GT_OQ), E);
    return _mm512_mask_mov_epi32(E, _mm512_cmp_ps_mask(d, d, _CMP_UNORD_Q), V1(254));
}

static __m512i mx_byte16(__m512 amax, const chain *k)
{
    const qc_recipe_policy *p = k->p;
    if (p->mx_rule == QC_MX_E8M0_OF_AMAX) /* torchao FLOOR/CEIL/EVEN, OCP: the rule subtracts emax */
        return e8_byte16(k, _mm512_castps_si512(amax));
    if (p->mx_rule == QC_MX_CUTEDSL)
        return cutedsl16(scale_of16(amax, k));
    return e8_byte16(k, _mm512_castps_si512(scale_of16(amax, k)));
}

static elem_op mx_elem_op(const qc_recipe_policy *p)
{
    elem_op o = {p->div_mode == QC_DIV_FAST ? EL_MUL_FTZ : EL_MUL, p->clamp, p->clamp_max, 0, 0};
    if (p->mx_op == QC_MX_DIV)
        o.kind = EL_DIV;
    return o;
}

/* The multiplier (or, for QC_MX_DIV, the IEEE divisor) of each block (mx.c mx_scaled). */
static __m512 mx_c16(__m512i byte, __m512 amax, const chain *k)
{
    const qc_recipe_policy *p = k->p;
    __m512 d = e8m0_decode16(byte, p->mx_dec), c;
    switch (p->mx_op) {
    case QC_MX_MUL: c = d; break;
    case QC_MX_MUL_RCP: c = rcp16(d, k->tab); break;
    case QC_MX_MUL_RECIP_NZ:
        c = _mm512_mask_mov_ps(recip16(d, p->div_mode, k->tab), _mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_EQ_OQ),
                               _mm512_setzero_ps());
        break;
    default: c = d; break; /* x / 2^(E-127), one IEEE rounding */
    }
    if (p->mx_zero_guard) /* TRT-LLM: outputScale = vecMax != 0 ? ... : 0; x / Inf = x * 0 for every x */
        c = _mm512_mask_mov_ps(c, _mm512_cmp_ps_mask(amax, _mm512_setzero_ps(), _CMP_EQ_OQ),
                               _mm512_set1_ps(p->mx_op == QC_MX_DIV ? INFINITY : 0.0f));
    return c;
}

/* x / d for the decoded byte d of QC_MX_DIV equals x * (1/d) bit for bit wherever 1/d is exact:
 * both are one rounding of the same real x 2^-j for d = 2^j (j in [-127, 127], so 1/d = 2^-j is an
 * fp32 value, 2^-127 a subnormal one, computed exactly by the IEEE division), and the specials
 * agree too (x86 IEEE rules): d = 0 gives +-Inf and 0/0 = 0 * Inf = the default NaN, d = Inf gives
 * +-0 and Inf/Inf = Inf * 0 = the default NaN, d NaN gives x's NaN or d's (quieted) either way
 * (elem_row's NaN-multiplier path). Returns the lanes of t where it holds. */
static inline __mmask16 exact_recip16(__m512 d, __mmask16 t)
{
    __m512i b = _mm512_castps_si512(d), e = _mm512_srli_epi32(b, 23), f = _mm512_and_si512(b, V1(0x7FFFFF));
    __mmask16 pow2 = _mm512_testn_epi32_mask(f, f) & _mm512_cmpge_epu32_mask(e, V1(1)) & _mm512_cmple_epu32_mask(e, V1(254));
    __mmask16 special = _mm512_cmpeq_epi32_mask(b, V1(0x00400000)) | _mm512_cmpeq_epi32_mask(b, _mm512_setzero_si512()) |
                        _mm512_cmpeq_epi32_mask(e, V1(255));
    return (pow2 | special) & t;
}

static void mx_quant(const qc_recipe_policy *p, const float *x, size_t rows, size_t cols, qc_quantized *out, float *c,
                     int stream)
{
    const mf_plan k = mf_plan_of(qcref_minifloat(p->elem), &p->cast);
    chain ch;
    chain_init(&ch, p);
    elem_op op = mx_elem_op(p);
    op.stream = stream;
    size_t g = (size_t)p->group, ng = cols / g;
    /* One pass per 16 blocks while they are in L1: amax, byte, multiplier, elements. */
    for (size_t i = 0; i < rows; i++) {
        const float *xr = x + i * cols;
        for (size_t j = 0; j < ng; j += 16) {
            size_t nb = ng - j < 16 ? ng - j : 16;
            __mmask16 t = tail(nb);
            int fin;
            __m512 av = chunk_amax(xr, ng * g, g, j, nb, p->amax_nan, &fin);
            __m512i byte = mx_byte16(av, &ch);
            _mm512_mask_cvtepi32_storeu_epi8(out->scale_u8 + i * ng + j, t, byte);
            __m512 cv = mx_c16(byte, av, &ch);
            elem_op o = op;
            if (o.kind == EL_DIV && exact_recip16(cv, t) == t)
                cv = _mm512_div_ps(_mm512_set1_ps(1.0f), cv), o.kind = EL_MUL;
            _mm512_storeu_ps(c, cv);
            elem_row(xr + j * g, nb * g, g, c, out->q + i * cols + j * g, o, k, fin);
        }
    }
}

/* ---- nvfp4 (formats.md §4.1-§4.3) ---- */

static float nv_global(const qc_recipe_policy *p, float amax_t)
{
    if (p->nv_gscale == QC_GSCALE_NONE)
        return 1.0f; /* torchao's per_tensor_scale=None: no global scale */
    float gs = amax_t == 0.0f ? 0x1.fffffep127f : 2688.0f / amax_t;
    if (p->nv_gscale == QC_GSCALE_TE) {
        gs = gs > 0x1.fffffep127f ? 0x1.fffffep127f : gs;
        gs = gs == 0.0f ? 1.0f : gs;
    }
    return gs;
}

/* nvfp4.c sf_value: the fp32 block scale before its e4m3 cast. */
static inline __m512 nv_sf_value16(const qc_recipe_policy *p, __m512 vm, float g)
{
    if (p->nv_order == QC_NVFP4_TE)
        return _mm512_mul_ps(vm, _mm512_set1_ps(g * (1.0f / 6.0f)));
    if (p->nv_order == QC_NVFP4_TORCHAO) { /* clamp to [2^-6, 448], NaN kept */
        __m512 v = _mm512_div_ps(_mm512_div_ps(vm, _mm512_set1_ps(6.0f)), _mm512_set1_ps(g));
        return _mm512_min_ps(_mm512_set1_ps(448.0f), _mm512_max_ps(_mm512_set1_ps(0.015625f), v));
    }
    return _mm512_mul_ps(_mm512_set1_ps(g), _mm512_mul_ps(vm, _mm512_set1_ps(qcref_rcp_approx_ftz(6.0f))));
}

/* nvfp4.c output_scale: the element multiplier of each block. */
static inline __m512 nv_output16(const qc_recipe_policy *p, __m512 vm, __m512 sfdec, float g, const uint8_t *table)
{
    __mmask16 zero = _mm512_cmp_ps_mask(p->nv_zero == QC_ZERO_SFVALUE ? sfdec : vm, _mm512_setzero_ps(), _CMP_EQ_OQ);
    if (p->nv_order == QC_NVFP4_TORCHAO) { /* nvfp4.c: a NaN scale has torch's bits */
        __mmask16 nan = _mm512_cmp_ps_mask(sfdec, sfdec, _CMP_UNORD_Q);
        sfdec = _mm512_mask_mov_ps(sfdec, nan, _mm512_castsi512_ps(V1(QC_TORCH_E4M3_NAN)));
        return _mm512_div_ps(_mm512_set1_ps(1.0f / g), sfdec);
    }
    if (p->nv_order == QC_NVFP4_TE) {
        __m512 o = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_mul_ps(sfdec, _mm512_set1_ps(1.0f / g)));
        o = _mm512_mask_mov_ps(o, zero, _mm512_setzero_ps());
        return _mm512_min_ps(_mm512_set1_ps(0x1.fffffep127f), o); /* NaN kept */
    }
    __m512 o = rcp16(_mm512_mul_ps(sfdec, _mm512_set1_ps(qcref_rcp_approx_ftz(g))), table);
    return _mm512_mask_mov_ps(o, zero, _mm512_setzero_ps());
}

/* nv_output16 depends on a block only through its SF byte (256 values) and, under the vecMax zero
 * rule, on vm == 0; so it is tabulated once per call (vm = 1 in the table, the vecMax rule applied
 * per block), and the per-block rcp.approx emulation, whose delta-table gather spans 2 MiB (a cache
 * miss per lane), becomes a gather from these 1 KiB. */
static void nv_output_table(const qc_recipe_policy *p, float g, const uint8_t *table, float out[256])
{
    for (int i = 0; i < 256; i += 16) {
        __m512i code = _mm512_add_epi32(V1(i), _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
        _mm512_storeu_ps(out + i, nv_output16(p, _mm512_set1_ps(1.0f), e4m3fn_decode16(code), g, table));
    }
}

/* t[idx] for 16 indices in [0, 128) (idx bit 7 clear): four 32-entry VPERMT2PS lookups (index bits
 * 0-4) and a blend tree on bits 5 and 6. */
static inline __m512 lut128_ps(const float t[128], __m512i idx)
{
    __m512 s[4];
    for (int k = 0; k < 4; k++)
        s[k] = _mm512_permutex2var_ps(_mm512_loadu_ps(t + 32 * k), idx, _mm512_loadu_ps(t + 32 * k + 16));
    __mmask16 b5 = _mm512_test_epi32_mask(idx, V1(0x20)), b6 = _mm512_test_epi32_mask(idx, V1(0x40));
    return _mm512_mask_blend_ps(b6, _mm512_mask_blend_ps(b5, s[0], s[1]), _mm512_mask_blend_ps(b5, s[2], s[3]));
}

/* t[idx] for 16 indices in [0, 256), without VGATHERDPS: on the Ice Lake CI machine a gather issued
 * after non-temporal stores waits until they have drained (a loop of four streamed lines and one
 * gather: 1.5 GB/s, against 8.6 with ordinary stores; docs/DECISIONS.md "Streamed codes, and no
 * gathers between them"), and this lookup sits between the streamed code stores of every 16
 * blocks. The upper half is looked up only where a lane needs it (nvfp4's SF bytes are codes of
 * non-negative values: bit 7 is clear unless the global scale is negative). */
static inline __m512 lut256_ps(const float t[256], __m512i idx)
{
    __m512 lo = lut128_ps(t, idx);
    __mmask16 b7 = _mm512_test_epi32_mask(idx, V1(0x80));
    return b7 ? _mm512_mask_blend_ps(b7, lo, lut128_ps(t + 128, idx)) : lo;
}

static inline __m512 nv_output_of(const qc_recipe_policy *p, __m512 vm, __m512i sf, const float out[256])
{
    __m512 o = lut256_ps(out, sf);
    if (p->nv_order != QC_NVFP4_TORCHAO && p->nv_zero != QC_ZERO_SFVALUE)
        o = _mm512_mask_mov_ps(o, _mm512_cmp_ps_mask(vm, _mm512_setzero_ps(), _CMP_EQ_OQ), _mm512_setzero_ps());
    return o;
}

static void nvfp4_quant(const qc_recipe_policy *p, const float *x, size_t rows, size_t cols, const float *ge,
                        qc_quantized *out, float *c, int stream)
{
    const mf_plan k = mf_plan_of(qcref_minifloat(QC_E2M1), &p->cast);
    const mf_plan ksf = mf_plan_of(qcref_minifloat(QC_E4M3FN), &p->sf_cast);
    const uint8_t *table = qcref_rcp_table();
    float g = ge ? (p->nv_order == QC_NVFP4_TORCHAO ? 1.0f / *ge : *ge)
                 : nv_global(p, group_amax(x, rows * cols, p->amax_nan));
    out->gscale = p->nv_order == QC_NVFP4_TORCHAO ? g : 1.0f / g;
    float otab[256];
    nv_output_table(p, g, table, otab);
    elem_op op = {EL_MUL, p->clamp, p->clamp_max, stream, p->nv_order == QC_NVFP4_TORCHAO};
    size_t b = (size_t)p->group, nb = cols / b;
    /* One pass per 16 blocks while they are in L1: vecMax, SF, outputScale, elements. */
    for (size_t i = 0; i < rows; i++) {
        const float *xr = x + i * cols;
        for (size_t j = 0; j < nb; j += 16) {
            size_t n = nb - j < 16 ? nb - j : 16;
            __mmask16 t = tail(n);
            int fin;
            __m512 vm = chunk_amax(xr, nb * b, b, j, n, p->amax_nan, &fin);
            __m512i sf = mf_encode16(ksf, _mm512_castps_si512(nv_sf_value16(p, vm, g)));
            _mm512_mask_cvtepi32_storeu_epi8(out->scale_u8 + i * nb + j, t, sf);
            _mm512_storeu_ps(c, nv_output_of(p, vm, sf, otab));
            elem_row(xr + j * b, n * b, b, c, out->q + i * cols + j * b, op, k, fin);
        }
    }
}

/* ---- entry ---- */

/* Non-temporal code stores. A call that touches more bytes than the last-level cache holds
 * cannot leave its codes in cache for the next kernel anyway; written around the cache, each
 * 64-byte line of codes costs one write to memory instead of a read for ownership and a later
 * write-back (the read is 1/5 of the traffic of an fp32 -> 8-bit quant). The threshold is the
 * LLC size (sysconf; 32 MiB where the C library does not know it); results are the same bytes
 * either way. */
static _Atomic size_t stream_min;
static _Atomic int stream_min_known; /* stream_min holds the LLC size or a value set */

static size_t stream_min_bytes(void)
{
    if (!stream_min_known) {
        long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
        stream_min = llc > 0 ? (size_t)llc : (size_t)32 << 20;
        stream_min_known = 1;
    }
    return stream_min;
}

size_t qc_avx512_set_stream_min(size_t bytes)
{
    size_t old = stream_min_bytes();
    stream_min = bytes;
    return old;
}

void qc_avx512_rcp_approx(const float *x, size_t n, float *y)
{
    const uint8_t *table = qcref_rcp_table();
    for (size_t i = 0; i < n; i += 16)
        _mm512_mask_storeu_ps(y + i, tail(n - i), rcp16(_mm512_maskz_loadu_ps(tail(n - i), x + i), table));
}


/* An e8m0 rule the 16-lane encoders know (encode_avx512.h: every rule, log2-ceil included). */
static int e8m0_rule_known(qc_recipe r, const qc_recipe_policy *p)
{
    int e8 = (r <= QC_RECIPE_BLOCK && p->pow2 == QC_POW2_E8M0) ||
             (r >= QC_RECIPE_MXFP8 && r <= QC_RECIPE_MXFP4 && p->mx_rule != QC_MX_CUTEDSL);
    return !e8 || p->pow2_policy.e8m0 < QC_E8M0_TORCHAO_RCEIL; /* the rules after it: not in the 16-lane encoders */
}

int qc_avx512_quant_supported(qc_recipe r, const qc_recipe_policy *p)
{
    if (r >= QC_RECIPE_COUNT || !qcref_is_minifloat(p->elem) || qcref_format_bits(p->elem) > 8)
        return 0;
    if (r == QC_RECIPE_BLOCK && (p->block_r < 1 || p->block_c < 1))
        return 0;
    if (p->nan_canonical) /* the GPU's NaN bits: not this CPU's (recipes.h) */
        return 0;
    /* knobs the 16-lane kernels do not implement (sglang-jit, sglang-native on bf16 input) */
    if (p->round_bf16 || p->clamp == QC_CLAMP_FMINF_UPPER || (p->pow2 != QC_POW2_NONE && p->pow2_mult != QC_POW2_MULT_RCP))
        return 0;
    if (p->cast.zero_sign == QC_ZERO_EXACT_POSITIVE) /* ocp (microxcaling): not in encode_avx512.h */
        return 0;
    return e8m0_rule_known(r, p);
}

int qc_avx512_quant(qc_recipe r, const qc_recipe_policy *p, const float *x, size_t rows, size_t cols,
                    const float *static_scale, const float *gscale_encode, qc_quantized *out)
{
    /* A static scale is the harness's for tensor recipes only (quant_job.c); with per-group element
     * rules (multiplier elem_max / amax) the kernel does not claim the reference's combination. */
    if (!qc_avx512_quant_supported(r, p) || (static_scale && r != QC_RECIPE_TENSOR))
        return -1;
    float *c = malloc((2 * cols + 64) * sizeof *c); /* per-group multipliers (and nvfp4 amaxes) of one row */
    if (!c)
        return -1;
    int stream = rows * cols * 5 >= stream_min_bytes(); /* fp32 read + one code per element written */
    if (r == QC_RECIPE_NVFP4)
        nvfp4_quant(p, x, rows, cols, gscale_encode, out, c, stream);
    else if (r >= QC_RECIPE_MXFP8)
        mx_quant(p, x, rows, cols, out, c, stream);
    else if (r == QC_RECIPE_BLOCK)
        block_quant(p, x, rows, cols, out, c, stream);
    else
        tiled_quant(r, p, x, rows, cols, static_scale, out, c, stream);
    if (stream) /* non-temporal stores are weakly ordered: visible to other threads only after SFENCE */
        _mm_sfence();
    free(c);
    return 0;
}
