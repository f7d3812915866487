/* kernels.cu: the device kernels of the cuda backend and their launchers (launch.h).
 *
 * Quantization, one pass over the data per quant:
 * - qck_group_kernel: token_group, mxfp8/6/4 and nvfp4 when a group is a whole number of 16-byte
 *   vectors of at most 32 of them (every mx and nvfp4 shape; token_group groups of 4..128 fp32).
 *   A group is held in the registers of lpg lanes (16 bytes each: 4 fp32 or 8 bf16), its amax is
 *   a shuffle reduction over those lanes, the scale math runs once per lane group, and each lane
 *   writes its codes with one 4- or 8-byte store (FP4: the two nibbles of a pair packed in
 *   registers). Grid-stride over lane-group slots; every loop is warp-uniform so the full-mask
 *   shuffles are legal.
 * - qck_tile_kernel: one CTA per scale tile for token (1 x K), block (128 x 128) and token_group
 *   shapes the group kernel does not take: amax by a shared-memory tree reduction, the scale by
 *   thread 0, then the codes.
 * - tensor and nvfp4's global scale: a grid-wide amax (atomicMax on the magnitude bits, atomicMin
 *   on the index of the first NaN), a one-thread finaliser, then the element kernel.
 * The amax follows the reference exactly: fmaxf-style (NaN skipped) or torch-style, where the
 * first NaN in row-major order of the tile is the amax, with its payload (recipes.h qc_amax_nan).
 *
 * Elementwise: cast, decode, fp4_pack, fnuz_normalize, the block-scale swizzles, dequant. */
#include "launch.h"

#define QCK_THREADS 256
#define QCK_NONE32 0xFFFFFFFFu
#define QCK_NONE64 0xFFFFFFFFFFFFFFFFull

/* Grid-stride kernels other than the group kernel (qck_waves_grid) launch at most QCK_GRID_PER_SM
 * blocks per SM (a benchmark variant may try others). */
#ifndef QCK_GRID_PER_SM
#define QCK_GRID_PER_SM 16
#endif
/* The blocks needed, at least one and at most per_sm for each of sms SMs (32 where unknown). */
static unsigned qck_grid_at_most(int64_t blocks_needed, int sms, int64_t per_sm)
{
    int64_t cap = (int64_t)(sms > 0 ? sms : 32) * per_sm;
    if (blocks_needed < 1)
        blocks_needed = 1;
    return (unsigned)(blocks_needed < cap ? blocks_needed : cap);
}

static unsigned qck_grid(int64_t blocks_needed, int sms)
{
    return qck_grid_at_most(blocks_needed, sms, QCK_GRID_PER_SM);
}

/* The group kernel's grid: QCK_GROUP_WAVES whole waves of the blocks an SM keeps resident (the
 * occupancy the compiled instantiation allows: nvfp4 6, token_group and MX 4 on sm_90), so that no
 * last wave runs the SMs part full and the blocks are short enough to even out where they end.
 * Against the former cap of 16 blocks per SM (nvfp4 2.67 waves; ncu: 64% achieved occupancy of 75%),
 * 6 waves took token_group / mxfp8 / nvfp4 from 0.94 / 0.95 / 0.86 to 0.95 / 0.97 / 0.89 of the copy
 * on an H100 and from 0.94 / 0.94 / 0.82 to 0.95 / 0.95 / 0.84 confined to 96 SMs (the H200's
 * stand-in, bench_cuda_quant --sms). 4 and 8 waves came close; 1 or 2 waves and 12 blocks per SM
 * lost; 32 blocks per SM gained nvfp4 only; 16 waves gained on all SMs but lost confined
 * (docs/notes/h100/bench_waves_2026-12-06*.log). 0: qck_grid's cap (a benchmark variant may compare). */
#ifndef QCK_GROUP_WAVES
#define QCK_GROUP_WAVES 6
#endif
template <typename K> static unsigned qck_waves_grid(K kernel, int64_t blocks_needed, int sms)
{
    int resident = 0;
    if (QCK_GROUP_WAVES == 0 ||
        gpuOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, QCK_THREADS, 0) != gpuSuccess || resident < 1)
        return qck_grid(blocks_needed, sms); /* a failed query's error is the launch's (gpuGetLastError) */
    return qck_grid_at_most(blocks_needed, sms, (int64_t)resident * QCK_GROUP_WAVES);
}

/* ---------------------------------------------------------------- loads and stores */

/* A lane's 16-byte vector as loaded, raw: 4 fp32, or 8 bf16 (element 2i in the low half of word i).
 * The group kernel keeps its vectors raw (a bf16 vector is 4 registers, not 8) and widens one at a
 * time where the elements are scaled. */
template <typename T> struct qck_vec;
template <> struct qck_vec<float> { static const int N = 4; };
template <> struct qck_vec<uint16_t> { static const int N = 8; };

/* QCK_LOAD_HINT, for benchmark variants: 0, a plain load; 1, ld.global.nc.L2::256B (L2 fetches 256
 * bytes around the line); 2, that and L1::no_allocate; 3, L1::no_allocate alone (PTX ISA, ld). */
#ifndef QCK_LOAD_HINT
#define QCK_LOAD_HINT 0
#endif
QCK_D uint4 qck_load_raw(const void *x, int64_t byte_offset)
{
    const uint8_t *p = static_cast<const uint8_t *>(x) + byte_offset;
#if defined(QCK_PTX) && QCK_LOAD_HINT
    uint4 r;
#if QCK_LOAD_HINT == 1
    asm("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
#elif QCK_LOAD_HINT == 2
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
#else
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
#endif
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
        : "l"(p));
    return r;
#else
    return *reinterpret_cast<const uint4 *>(p);
#endif
}

/* An L2 prefetch of the line at byte_offset (a hint, no register: the group kernel asks for a slot
 * QCK_PREFETCH iterations ahead, so that its loads then find their lines in L2). */
QCK_D void qck_prefetch_l2(const void *x, int64_t byte_offset)
{
#if defined(QCK_PTX)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(static_cast<const uint8_t *>(x) + byte_offset));
#else
    (void)x, (void)byte_offset;
#endif
}

/* A lane's 16 bytes copied to shared memory without passing through its registers, or zeros where
 * !read (nothing is read then: cp.async's src-size 0): cp.async.cg (L1 bypassed; PTX ISA, cp.async),
 * completed in commit groups; a thread's own copies are visible to it once cp.async.wait_group has
 * seen their group complete. Elsewhere (the emulation, HIP) a plain copy, so the same code runs
 * there. */
QCK_D void qck_copy_async(uint4 *dst, const void *x, int64_t byte_offset, bool read)
{
    const uint8_t *p = static_cast<const uint8_t *>(x) + byte_offset;
#if defined(QCK_PTX)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"((uint32_t)__cvta_generic_to_shared(dst)),
                 "l"(p), "r"(read ? 16 : 0)
                 : "memory");
#else
    *dst = read ? *reinterpret_cast<const uint4 *>(p) : uint4{0, 0, 0, 0};
#endif
}
QCK_D void qck_async_commit()
{
#if defined(QCK_PTX)
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
/* Until at most PENDING of the thread's newest commit groups are still in flight. */
template <int PENDING> QCK_D void qck_async_wait()
{
#if defined(QCK_PTX)
    asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
#endif
}

QCK_D uint32_t qck_word(const uint4 &r, int i) { return i == 0 ? r.x : i == 1 ? r.y : i == 2 ? r.z : r.w; }

/* The fp32 bits of element k of a raw vector. */
template <typename T> QCK_D uint32_t qck_elem_bits(const uint4 &r, int k);
template <> QCK_D uint32_t qck_elem_bits<float>(const uint4 &r, int k) { return qck_word(r, k); }
template <> QCK_D uint32_t qck_elem_bits<uint16_t>(const uint4 &r, int k)
{
    const uint32_t w = qck_word(r, k >> 1);
    return k & 1 ? w & 0xFFFF0000u : w << 16;
}

template <typename T> QCK_D void qck_unpack(const uint4 &r, float *v)
{
#pragma unroll
    for (int k = 0; k < qck_vec<T>::N; k++)
        v[k] = qck_float(qck_elem_bits<T>(r, k));
}

/* max of each 16-bit half: one VIMNMX.U16x2 on sm_90 (PTX max.u16x2). */
QCK_D uint32_t qck_max_u16x2(uint32_t a, uint32_t b)
{
#if defined(QCK_PTX)
    uint32_t r;
    asm("max.u16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
#else
    uint32_t lo = (a & 0xFFFFu) > (b & 0xFFFFu) ? a & 0xFFFFu : b & 0xFFFFu;
    return ((a >> 16) > (b >> 16) ? a & 0xFFFF0000u : b & 0xFFFF0000u) | lo;
#endif
}

/* The largest magnitude among a raw vector's elements, accumulated in acc, then as fp32 bits by
 * qck_absmax_bits (magnitude bits compare as the values do; NaN's lie above Inf's). bf16 takes both
 * halves of a word in one max. */
template <typename T> QCK_D uint32_t qck_absmax_acc(uint32_t acc, const uint4 &r);
template <> QCK_D uint32_t qck_absmax_acc<float>(uint32_t acc, const uint4 &r)
{
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const uint32_t b = qck_word(r, i) & QCK_ABS;
        acc = b > acc ? b : acc;
    }
    return acc;
}
template <> QCK_D uint32_t qck_absmax_acc<uint16_t>(uint32_t acc, const uint4 &r)
{
#pragma unroll
    for (int i = 0; i < 4; i++)
        acc = qck_max_u16x2(acc, qck_word(r, i) & 0x7FFF7FFFu);
    return acc;
}
template <typename T> QCK_D uint32_t qck_absmax_bits(uint32_t acc);
template <> QCK_D uint32_t qck_absmax_bits<float>(uint32_t acc) { return acc; }
template <> QCK_D uint32_t qck_absmax_bits<uint16_t>(uint32_t acc)
{
    return qck_max_u16x2(acc, acc >> 16) << 16; /* the low half: the larger half */
}

/* Two byte codes, element lo in the low byte: by the instruction CK, or (the host emulation, HIP) by
 * the software encoder of its cast. */
template <int CK>
QCK_D uint32_t qck_code2(float lo, float hi, const qck_fmt &m, const qc_cast_policy &c)
{
#if defined(QCK_PTX)
    if (CK == QCK_CK_E4M3_HW)
        return qck_cvt_e4m3x2(lo, hi);
    if (CK == QCK_CK_E5M2_HW)
        return qck_cvt_e5m2x2(lo, hi);
#endif
    const qc_cast_policy p = CK == QCK_CK_SOFT ? c : qck_hw_fp8_policy(c);
    return qck_encode_minifloat(m, lo, p) | qck_encode_minifloat(m, hi, p) << 8;
}

/* The same where the instruction serves only clean slots: a slot that may hold NaN takes the
 * instruction only when it is the policy itself (hw_exact), the software encoder otherwise. */
template <int CK>
QCK_D uint32_t qck_code2_any(float lo, float hi, const qck_fmt &m, const qc_cast_policy &c, int hw_exact)
{
    return CK != QCK_CK_SOFT && hw_exact ? qck_code2<CK>(lo, hi, m, c) : qck_code2<QCK_CK_SOFT>(lo, hi, m, c);
}

/* One code, by the hardware instruction where the policy is its own. */
QCK_D uint32_t qck_code1(float v, qc_format f, const qck_fmt &m, const qc_cast_policy &c, int hw)
{
#if defined(QCK_PTX)
    if (hw)
        return (f == QC_E4M3FN ? qck_cvt_e4m3x2(v, 0.0f) : qck_cvt_e5m2x2(v, 0.0f)) & 0xFFu;
#else
    (void)f, (void)hw;
#endif
    return qck_encode_minifloat(m, v, c);
}

QCK_D void qck_store_scale_f32(const qck_quant_args &a, int64_t i, int64_t j, float s)
{
    int64_t o = qck_tg_offset(a.tg_layout, a.tiles_r, a.tiles_c, i, j);
    if (a.tg_layout == QC_SL_PACKED_UE8M0) {
        int b = qck_pow2_byte(s);
        if (b < 0) /* the reference's layout stops at the first scale without a byte */
            atomicMin(a.bad, (unsigned long long)(i * a.tiles_c + j));
        else
            static_cast<uint8_t *>(a.scale)[o] = (uint8_t)b;
    } else {
        *reinterpret_cast<float *>(static_cast<uint8_t *>(a.scale) + o) = s;
    }
}

/* The map of a u8 scale grid, swizzled or row-major: each launcher sets its args' u8map by it. */
template <typename A> static qck_u8_map qck_u8_map_of(const A &a)
{
    return a.scale_kind == QCK_SC_U8_SF ? qck_sf_map(a.sf_cp, a.sf_tile) : qck_rowmajor_map(a.tiles_c);
}

/* The byte of the u8 block scale of tile (i, j) (the quant's store, A a qck_quant_args, and the
 * dequant's read, a qck_dequant_args). */
template <typename A, typename I> QCK_D int64_t qck_scale_u8_offset(const A &a, I i, I j)
{
    return qck_u8_offset(a.u8map, i, j);
}

template <typename I> QCK_D void qck_store_scale_u8(const qck_quant_args &a, I i, I j, uint32_t b)
{
    static_cast<uint8_t *>(a.scale)[qck_scale_u8_offset(a, i, j)] = (uint8_t)b;
}

/* The recipe families of the group kernel, a template parameter so that each instantiation
 * carries only its own scale math (code size: the instruction cache). */
enum { QCK_FAM_ANY = 0, QCK_FAM_TG = 1, QCK_FAM_MX = 2, QCK_FAM_NV = 3 };

/* nvfp4's global scale as a thread holds it (a.dev_scale[0], read once): g, rcp.approx.ftz(g), and
 * `finite`: the FAST order's block step may multiply plainly (qck_nv_fast_sf_value<true>) wherever
 * the block's amax is finite, for every product of the step then has finite operands
 * (qck_nv_g_normal, a.nv_fast_finite: the FAST order with the satfinite block-scale cast). */
typedef struct qck_nv_g {
    float g, rg;
    bool finite;
} qck_nv_g;

QCK_D qck_nv_g qck_nv_g_of(const qck_quant_args &a, float g)
{
    const qck_nv_g G = {g, qck_rcp_approx(g), a.nv_fast_finite && qck_nv_g_normal(g)};
    return G;
}

/* The scale of tile (i, j) from its amax, stored when `store`, and its element operation. */
template <int FAM = QCK_FAM_ANY, typename I = int64_t>
QCK_D qck_elem_op qck_group_step(const qck_quant_args &a, float amax, I i, I j, bool store, const qck_nv_g &G)
{
    const qc_recipe_policy &p = a.p;
    const bool mx = FAM == QCK_FAM_MX ||
                    (FAM == QCK_FAM_ANY && (a.recipe == QC_RECIPE_MXFP8 || a.recipe == QC_RECIPE_MXFP6 ||
                                            a.recipe == QC_RECIPE_MXFP4));
    const bool nv = FAM == QCK_FAM_NV || (FAM == QCK_FAM_ANY && a.recipe == QC_RECIPE_NVFP4);
    if (FAM != QCK_FAM_TG && FAM != QCK_FAM_NV && mx) {
        uint32_t E = qck_mx_byte(amax, p, a.L);
        if (store)
            qck_store_scale_u8(a, i, j, E);
        return qck_mx_op(E, amax, p);
    }
    if (FAM != QCK_FAM_TG && FAM != QCK_FAM_MX && nv) {
        if (G.finite && (qck_bits(amax) & QCK_ABS) < QCK_INF) { /* the lean step: qck_nv_g */
            const uint32_t sf = qck_encode_e4m3_satfinite(qck_nv_fast_sf_value<true>(amax, G.g), p.sf_cast);
            const float sfdec = qck_decode_e4m3fn_finite(sf);
            if (store)
                qck_store_scale_u8(a, i, j, sf);
            return qck_op_mul(qck_nv_fast_output_scale<true>(qck_nv_zero(p, amax, sfdec), sfdec, G.rg), 0);
        }
        const uint32_t sf = qck_encode_e4m3_sf(qck_nv_sf_value(p, amax, G.g), p.sf_cast);
        const float sfdec = qck_decode_e4m3fn(sf);
        if (store)
            qck_store_scale_u8(a, i, j, sf);
        return qck_nv_op(p, amax, sfdec, G.g);
    }
    float s = (a.recipe == QC_RECIPE_TENSOR && a.has_static) ? a.static_scale : qck_tiled_scale(amax, p, a.L);
    if (store)
        qck_store_scale_f32(a, i, j, s);
    return qck_tiled_op(s, amax, p);
}

/* ---------------------------------------------------------------- the group kernel */

/* The elements of a slot through the element op and a clamp known at compile time (numerics.cuh). */
template <int N, int CL>
QCK_D void qck_scale_elems(const qck_elem_op &op, const float *v, float *y, const qc_recipe_policy &p)
{
    const float mx = p.clamp_max, nm = qck_float(qck_bits(mx) ^ 0x80000000u);
    const int canon = p.nan_canonical;
#pragma unroll
    for (int k = 0; k < N; k++)
        y[k] = qck_clamp_as<CL>(qck_apply(op, v[k]), mx, nm, canon);
}

/* A slot is clean when none of its products can be NaN: no NaN or Inf among its elements (mx, the
 * largest magnitude bits, is below Inf's) and a finite multiplier (a nonzero one for a division).
 * Then the x86 NaN rules, the order of a multiplier-first product and the canonical NaN have nothing
 * to act on, and the elements take the straight path below; its clamp is a plain min / max where
 * the bound is positive (a.clamp_plain, qck_clamp_plain), the exact path takes any other bound. */
QCK_D bool qck_slot_clean(const qck_quant_args &a, uint32_t mx, const qck_elem_op &op)
{
    const uint32_t m = qck_bits(op.mult) & QCK_ABS;
    return mx < QCK_INF && m < QCK_INF && (!op.divide || m != 0) && a.clamp_plain;
}

enum { QCK_OPK_MUL = 0, QCK_OPK_MUL_FTZ = 1, QCK_OPK_DIV = 2 };

template <int OPK> QCK_D float qck_apply_clean(float x, float m)
{
    return OPK == QCK_OPK_DIV ? qck_div_rn(x, m) : OPK == QCK_OPK_MUL_FTZ ? qck_mul_ftz_clean(x, m) : qck_mul_rn(x, m);
}

/* The amax of a lane group that holds a NaN: the largest magnitude that is not NaN, and the bits of
 * the group's first NaN (lane-major, so in element order) for a profile that propagates it. */
template <typename T, int V>
QCK_D float qck_group_amax_nan(const qck_quant_args &a, const uint4 *r, int sub, int lpg)
{
    constexpr int N = qck_vec<T>::N;
    uint32_t mx = 0, key = QCK_NONE32, nanb = 0;
#pragma unroll
    for (int t = 0; t < V; t++)
#pragma unroll
        for (int k = 0; k < N; k++) {
            const uint32_t b = qck_elem_bits<T>(r[t], k) & QCK_ABS;
            if (b > QCK_INF) {
                if (key == QCK_NONE32)
                    key = (uint32_t)(sub * V * N + t * N + k), nanb = b;
            } else {
                mx = b > mx ? b : mx;
            }
        }
    for (int off = lpg >> 1; off > 0; off >>= 1) {
        uint32_t om = QCK_SHFL_XOR(mx, off, lpg), ok = QCK_SHFL_XOR(key, off, lpg);
        mx = om > mx ? om : mx;
        key = ok < key ? ok : key;
    }
    float amax = qck_float(mx);
    if (a.p.amax_nan == QC_AMAX_NAN_PROPAGATE) { /* kernel-uniform: every lane takes the shuffle */
        uint32_t nb = QCK_SHFL(nanb, key == QCK_NONE32 ? 0 : (int)(key / (V * N)), lpg);
        if (key != QCK_NONE32)
            amax = qck_float(nb);
    }
    return amax;
}

/* NW code words at dst (aligned to their size): one 4- or 8-byte store, or 16-byte ones. */
template <int NW> QCK_D void qck_store_words(uint8_t *dst, const uint32_t *w)
{
    if (NW == 1)
        *reinterpret_cast<uint32_t *>(dst) = w[0];
    else if (NW == 2)
        *reinterpret_cast<uint2 *>(dst) = make_uint2(w[0], w[NW - 1]);
    else
#pragma unroll
        for (int k = 0; k + 3 < NW; k += 4)
            reinterpret_cast<uint4 *>(dst)[k / 4] = make_uint4(w[k], w[k + 1], w[k + 2], w[k + 3]);
}

/* The codes of N values y (vector t of a slot, or the whole slot with t = 0) into the slot's words
 * w (FP4: 8 nibbles per word, element j at bit 4 j; else 4 bytes per word): by the instruction CK
 * where the slot is clean, by the policy's software encoder where it is not (qck_code2_any: the
 * instruction only when it is the policy). FP4's clean slots take qck_e2m1_word. */
template <int N, int CK>
QCK_D void qck_pack_codes(const qck_quant_args &a, const qck_fmt &m, const float *y, int t, bool clean, uint32_t *w)
{
    const bool fp4 = CK == QCK_CK_E2M1_RNE || (CK == QCK_CK_SOFT && a.fp4);
    if (fp4) {
#pragma unroll
        for (int k = 0; k < N; k++) {
            const int j = t * N + k;
            w[j / 8] |= qck_encode_e2m1(y[k], a.p.cast) << (4 * (j % 8));
        }
    } else {
#pragma unroll
        for (int k = 0; k < N; k += 2) {
            const int j = t * N + k;
            w[j / 4] |= (clean ? qck_code2<CK>(y[k], y[k + 1], m, a.p.cast)
                               : qck_code2_any<CK>(y[k], y[k + 1], m, a.p.cast, a.hw_exact))
                        << (8 * (j % 4));
        }
    }
}

/* The sign bits of the FP4 codes of one 16-byte vector of bf16 / f16 inputs, element k's at bit
 * 4k + 3: the inputs' top bytes gathered by PRMT (__byte_perm), the even elements' into one word and
 * the odd ones' into another, then put in place with a shift and two masks. */
QCK_D uint32_t qck_fp4_signs_u16(const uint4 &r)
{
    const uint32_t lo = __byte_perm(r.x, r.y, 0x7351), hi = __byte_perm(r.z, r.w, 0x7351);
    const uint32_t even = __byte_perm(lo, hi, 0x5410), odd = __byte_perm(lo, hi, 0x7632);
    return (odd & 0x80808080u) | (even >> 4 & 0x08080808u);
}

/* One FP4 word of a clean slot under the fast encoder (qck_e2m1_mag_biased): K = 8 values y (4 when
 * the slot has only 4), element k at bits 4k..4k+3: the biased magnitude codes added at their
 * nibbles (the sum minus the bias of each nibble is the codes side by side: each is below 8, so no
 * carry crosses), the bias taken off once, then the signs. A clean slot's y has the sign of its
 * input XOR the multiplier's (an IEEE product or quotient, flushed or not, clamped to +-m or not),
 * so 16-bit inputs (r: the word's one vector) give theirs by PRMT, flipped by `flip`; fp32 inputs
 * give y's. Sat: the encoder saturates each |y| at 6; the caller leaves it out where the slot's
 * largest |y| is below 7 (qck_e2m1_unsat). */
template <typename T, int K, bool Sat> QCK_D uint32_t qck_e2m1_word(const uint4 &r, uint32_t flip, const float *y)
{
    constexpr uint32_t bias = QCK_E2M1_BIAS * (K == 8 ? 0x11111111u : 0x1111u);
    uint32_t acc = 0, sign = 0;
#pragma unroll
    for (int k = 0; k < K; k++) {
        acc += qck_e2m1_mag_biased<Sat>(y[k]) << (4 * k);
        if (sizeof(T) == 4)
            sign |= (qck_bits(y[k]) >> 31) << (4 * k + 3);
    }
    return (acc - bias) | (sizeof(T) == 2 ? qck_fp4_signs_u16(r) ^ flip : sign);
}

/* VC raw vectors widened one at a time through the element op OPK and the clamp CL known at compile
 * time, into y (VC * N values). */
template <typename T, int VC, int OPK, int CL>
QCK_D void qck_scale_clean_as(const qck_quant_args &a, float mult, const uint4 *r, float *y)
{
    constexpr int N = qck_vec<T>::N;
    const float mx = a.p.clamp_max, nm = qck_float(qck_bits(mx) ^ 0x80000000u);
#pragma unroll
    for (int t = 0; t < VC; t++)
#pragma unroll
        for (int k = 0; k < N; k++)
            y[t * N + k] = qck_clamp_plain<CL>(qck_apply_clean<OPK>(qck_float(qck_elem_bits<T>(r[t], k)), mult), mx, nm);
}

/* A clean slot's block with the element op OPK and the clamp CL known at compile time, one straight
 * block (the op's and the clamp's switches are taken once per slot, outside it): FP4 is scaled and
 * encoded into w a word at a time, so that 8 values are live where the slot's E would be (on sm_90
 * the nvfp4 kernel's 40 registers then hold the loop without a spill); FP8 is only scaled into y,
 * for its encoder (qck_pack_codes) is one block after the switches, not one a clamp. */
template <typename T, int V, int CK, int OPK, int CL, bool Sat>
QCK_D void qck_clean_block(const qck_quant_args &a, float mult, const uint4 *r, float *y, uint32_t *w)
{
    constexpr int N = qck_vec<T>::N, E = V * N;
    if constexpr (CK == QCK_CK_E2M1_RNE) {
        constexpr int K = E < 8 ? E : 8, VC = K / N; /* values and vectors a word */
        const uint32_t flip = qck_bits(mult) >> 31 ? 0x88888888u : 0u;
#pragma unroll
        for (int q = 0; q < E / K; q++) {
            qck_scale_clean_as<T, VC, OPK, CL>(a, mult, r + q * VC, y);
            w[q] = qck_e2m1_word<T, K, Sat>(r[q * VC], flip, y);
        }
    } else {
        qck_scale_clean_as<T, V, OPK, CL>(a, mult, r, y);
    }
}

/* Whether no |y| of a clean slot reaches 7, so that the e2m1 encoder may leave out its saturation:
 * the op is one IEEE product or quotient of each element by the same multiplier (monotonic in |x|;
 * a flushed product is no larger, a plain clamp only lowers |y|), so the largest |y| is at most the
 * op of the amax. */
QCK_D bool qck_e2m1_unsat(const qck_elem_op &op, float amax)
{
    return fabsf(op.divide ? qck_div_rn(amax, op.mult) : qck_mul_rn(amax, op.mult)) < 7.0f;
}

/* a.unclamped (qck_unclamped): the clamp is left out; then FP4 may also leave out the e2m1
 * encoder's saturation where no |y| reaches 7 (qck_e2m1_unsat). A slot clamped below 6 takes the
 * saturation anyway (one block fewer a clamp). */
template <typename T, int V, int CK, int OPK>
QCK_D void qck_clean_op(const qck_quant_args &a, const qck_elem_op &op, float amax, const uint4 *r, float *y,
                        uint32_t *w)
{
    if (a.unclamped) {
        if (CK == QCK_CK_E2M1_RNE && qck_e2m1_unsat(op, amax))
            qck_clean_block<T, V, CK, OPK, QC_CLAMP_NONE, false>(a, op.mult, r, y, w);
        else
            qck_clean_block<T, V, CK, OPK, QC_CLAMP_NONE, true>(a, op.mult, r, y, w);
        return;
    }
    switch (a.p.clamp) {
    case QC_CLAMP_TORCH:  qck_clean_block<T, V, CK, OPK, QC_CLAMP_TORCH, true>(a, op.mult, r, y, w); break;
    case QC_CLAMP_FMINF:  qck_clean_block<T, V, CK, OPK, QC_CLAMP_FMINF, true>(a, op.mult, r, y, w); break;
    case QC_CLAMP_TRITON: qck_clean_block<T, V, CK, OPK, QC_CLAMP_TRITON, true>(a, op.mult, r, y, w); break;
    default:              qck_clean_block<T, V, CK, OPK, QC_CLAMP_FMINF_UPPER, true>(a, op.mult, r, y, w); break;
    }
}

/* A clean slot's codes into w: the block of its op and clamp, then FP8's encoder. */
template <typename T, int V, int CK>
QCK_D void qck_codes_clean(const qck_quant_args &a, const qck_fmt &m, const qck_elem_op &op, const uint4 *r, float amax,
                           uint32_t *w)
{
    constexpr int E = V * qck_vec<T>::N;
    float y[CK == QCK_CK_E2M1_RNE ? (E < 8 ? E : 8) : E];
    if (op.divide)
        qck_clean_op<T, V, CK, QCK_OPK_DIV>(a, op, amax, r, y, w);
    else if (op.ftz)
        qck_clean_op<T, V, CK, QCK_OPK_MUL_FTZ>(a, op, amax, r, y, w);
    else
        qck_clean_op<T, V, CK, QCK_OPK_MUL>(a, op, amax, r, y, w);
    if constexpr (CK != QCK_CK_E2M1_RNE)
        qck_pack_codes<E, CK>(a, m, y, 0, true, w);
}

/* A slot that may hold NaN: every element through the exact NaN rules and the policy's encoder. */
template <typename T, int V, int CK>
QCK_D void qck_codes_exact(const qck_quant_args &a, const qck_fmt &m, const qck_elem_op &op, const uint4 *r, uint32_t *w)
{
    constexpr int N = qck_vec<T>::N;
#pragma unroll
    for (int t = 0; t < V; t++) {
        float v[N], y[N];
        qck_unpack<T>(r[t], v);
        switch (a.p.clamp) {
        case QC_CLAMP_NONE:   qck_scale_elems<N, QC_CLAMP_NONE>(op, v, y, a.p); break;
        case QC_CLAMP_TORCH:  qck_scale_elems<N, QC_CLAMP_TORCH>(op, v, y, a.p); break;
        case QC_CLAMP_FMINF:  qck_scale_elems<N, QC_CLAMP_FMINF>(op, v, y, a.p); break;
        case QC_CLAMP_TRITON: qck_scale_elems<N, QC_CLAMP_TRITON>(op, v, y, a.p); break;
        default:              qck_scale_elems<N, QC_CLAMP_FMINF_UPPER>(op, v, y, a.p); break;
        }
        qck_pack_codes<N, CK>(a, m, y, t, false, w);
    }
}

/* The group the format fixes: nvfp4's 16 elements, MX's 32 (OCP MX v1.0); qck_group_kernel_fits
 * holds the group kernel to them. */
enum { QCK_NV_GROUP = 16, QCK_MX_GROUP = 32 };

/* The elements of a group: for nvfp4 and MX a constant (qck_group_kernel_fits), token_group's the
 * launch's. */
template <int FAM> QCK_D uint32_t qck_group_size(const qck_quant_args &a)
{
    return FAM == QCK_FAM_NV ? (uint32_t)QCK_NV_GROUP : FAM == QCK_FAM_MX ? (uint32_t)QCK_MX_GROUP : (uint32_t)a.tile_c;
}

/* Lanes per group: for nvfp4 and MX a constant, so the lane arithmetic and the shuffle loops fold
 * away (an nvfp4 group of bf16 is one lane's); token_group's is the launch's. */
template <int FAM, int E> QCK_D int qck_lanes_per_group(const qck_quant_args &a)
{
    constexpr int G = FAM == QCK_FAM_NV ? QCK_NV_GROUP : QCK_MX_GROUP;
    return FAM == QCK_FAM_TG ? a.lpg : E < G ? G / E : 1;
}

/* Whether the group kernel writes FP4 (two codes a byte): known at compile time for the e2m1
 * encoder and for nvfp4, else the launch's. */
template <int CK, int FAM> QCK_D bool qck_group_fp4(const qck_quant_args &a)
{
    return CK == QCK_CK_E2M1_RNE || FAM == QCK_FAM_NV || a.fp4;
}

/* One lane group's slot: amax, scale, codes of the V raw vectors each lane holds (E = V * N
 * elements). Every lane of the warp calls it (the shuffles). */
template <typename T, int V, int CK, int FAM>
QCK_D void qck_group_slot(const qck_quant_args &a, const qck_fmt &m, const qck_nv_g &G, const uint4 *r, uint32_t gi,
                          bool valid, int sub, uint8_t *dst)
{
    constexpr int N = qck_vec<T>::N, E = V * N;
    const int lpg = qck_lanes_per_group<FAM, E>(a);
    /* amax: the largest magnitude bits. A NaN's bits are above Inf's, so one maximum over all bits
     * says whether the group holds one; only a warp where some group does takes the exact NaN
     * rules (warp-uniform: the shuffles need every lane). */
    uint32_t acc = 0;
#pragma unroll
    for (int t = 0; t < V; t++)
        acc = qck_absmax_acc<T>(acc, r[t]);
    uint32_t mx = qck_absmax_bits<T>(acc);
    for (int off = lpg >> 1; off > 0; off >>= 1) {
        uint32_t om = QCK_SHFL_XOR(mx, off, lpg);
        mx = om > mx ? om : mx;
    }
    float amax = qck_float(mx);
    if (QCK_ANY(mx > QCK_INF)) {
        float exact = qck_group_amax_nan<T, V>(a, r, sub, lpg);
        if (mx > QCK_INF)
            amax = exact;
    }
    const uint32_t row = qck_fastdiv_div(a.groups_per_row, gi), col = gi - row * (uint32_t)a.tiles_c;
    const qck_elem_op op = qck_group_step<FAM>(a, amax, row, col, valid && sub == 0, G);
    if (!valid)
        return;
    /* the codes: 4 per word (FP4: 8 nibbles per word); the clean path and the exact one are
     * separate blocks, so that the hot one is short and straight (instruction cache) */
    uint32_t w[E / 4];
#pragma unroll
    for (int k = 0; k < E / 4; k++)
        w[k] = 0;
    if (qck_slot_clean(a, mx, op)) {
        qck_codes_clean<T, V, CK>(a, m, op, r, amax, w);
    } else {
        qck_codes_exact<T, V, CK>(a, m, op, r, w);
    }
    if (!qck_group_fp4<CK, FAM>(a))
        qck_store_words<E / 4>(dst, w);
    else if (E == 4)
        *reinterpret_cast<uint16_t *>(dst) = (uint16_t)w[0];
    else
        qck_store_words<(E / 8 > 0 ? E / 8 : 1)>(dst, w);
}

/* The group kernel's shape (docs/notes/cuda.md, bench_cuda_quant, bf16 [8192, 7168]): up to four
 * 16-byte vectors of one group per lane (two for nvfp4) and one slot per iteration, more elements
 * per lane for each group's scale step. On an H200 it gave 0.726 / 0.479 / 0.284 of the copy for
 * token_group / mxfp8 / nvfp4 against 0.515 / 0.367 / 0.197 with two vectors and two slots; with
 * raw vectors and the clean slots in one block, 0.923 / 0.942 / 0.689 on an H100 (0.833 / 0.598 /
 * 0.389 before, same run); nvfp4 0.70-0.71 with the min(|y|, 6) e2m1 encoder (0.68-0.69 before,
 * same runs). Measured and not taken (docs/notes/h100/nvfp4_shapes_2026-12-05.log): two slots per
 * lane (80 registers: 0.84 / 0.75 / 0.68), at least 5 blocks per SM (48 registers: 0.91 / 0.92 /
 * 0.72), two lanes per nvfp4 group (0.52). On the H200 (faster memory, so more bytes must be in
 * flight) an L2 prefetch of the slot one iteration ahead (QCK_PREFETCH 1) took 0.842-0.847 /
 * 0.829-0.830 / 0.520-0.523 to 0.854-0.856 / 0.833-0.835 / 0.538-0.539; two ahead gave 0.80 / 0.80 /
 * 0.53. The macros let a benchmark build try other shapes. QCK_UNROLL, QCK_NV_UNROLL: slots (adjacent
 * groups) per lane and iteration, their loads issued together, for token_group / MX and for nvfp4.
 * Two for nvfp4 at 4 blocks per SM (64 registers, no spill, 64 KB of loads in flight per SM where
 * one slot at 6 blocks holds 40 registers, spills a word and keeps 48 KB) gave nvfp4 0.670 of the
 * copy on an H100 against 0.958-0.959 for one slot, same run (docs/notes/h100/cuda_run_2026-12-07.log);
 * QCK_GROUP_VMAX, QCK_NVFP4_VMAX: the most vectors of a group per lane (1, 2
 * or 4); QCK_PREFETCH: how many iterations ahead the L2 prefetch asks (0: none); QCK_LOAD_HINT
 * (qck_load_raw), not yet measured; QCK_GROUP_WAVES (qck_waves_grid); QCK_NV_MIN_BLOCKS: at least
 * that many blocks per SM for the nvfp4 instantiations. Left to itself ptxas gives the bf16 one 64
 * registers (4 blocks); 6 asks for 40, met without spilling then (b0fa39a spills a word), and on
 * two H100s took nvfp4 from 0.805 to 0.822 and from 0.770 to 0.824 of the copy (5 gave nothing; 8
 * asks for 32, spills and gave 0.673; docs/notes/h100/cuda_run_2026-12-06b.log to -06e.log), with
 * one slot per lane. QCK_NV_STAGES: nvfp4's loads staged through shared memory, that many slots of
 * a ring (qck_group_loop_staged; 0: the register loads). On an H100, same runs
 * (docs/notes/h100/cuda_run_2026-12-07e.log), 2 stages gave nvfp4 0.955-0.959 of the copy on all
 * SMs against 0.949, but 0.86 against 0.94 at 96 SMs and 0.74 against 0.85 at 80: the copies, the
 * warp barriers and the shared loads are instructions the register loads do not need. 3 stages
 * 0.92 / 0.83 / 0.71, the same with cp.async.ca in place of .cg. Off until an H200, where the
 * longer latency rather than the instructions held nvfp4 back at dd5728b, measures it.
 * QCK_GROUP_MIN_BLOCKS, the same for token_group and MX: ptxas gave them 80 registers (3 blocks); 4
 * asks for 64 (a few bytes spill, on the exact path). The H200 asks more bytes per second of each SM
 * than an H100 can show on all its SMs, so the variants also ran confined to 96 and 80 of an H100's
 * 132 SMs (bench_cuda_quant --sms; 96 carrying 0.85 of the copy ask of each SM what the H200 asks):
 * there 4 blocks took mxfp8 from 0.81 to 0.94 of the copy at 96 SMs and from 0.75 to 0.94 at 80,
 * token_group from 0.93 to 0.94 and 0.89 to 0.94; unconfined 0.93 -> 0.95 (mxfp8), 0.95 -> 0.94
 * (token_group). Two vectors per lane (QCK_GROUP_VMAX 2) gave mxfp8 0.64 at 96 SMs; loading the next
 * iteration's vectors before working on this one's (registers double-buffered) lost everywhere
 * (nvfp4 0.70, token_group 0.87, mxfp8 0.84 unconfined); 7 or 8 nvfp4 blocks per SM 0.66 / 0.64;
 * the warp's whole chunk prefetched by one cp.async.bulk.prefetch.L2 in place of the lanes'
 * prefetches, 1, 2 or 3 iterations ahead: nvfp4 0.77 / 0.75 / 0.73 at 96 SMs against 0.82.
 * docs/notes/h100/bench_confined_2026-12-06*.log. kernels/cuda/bench-variants.sh builds such
 * variants and their runner.
 * The work of a slot, counted in the sm_90 SASS of the bf16 nvfp4 instantiation (cuobjdump -sass,
 * the instructions a clean slot executes): about 275 at 7b73881, of which about 130 are its 16
 * elements (widen, multiply, the e2m1 encoder's four, the nibble add) and the rest the loop, the
 * amax, the scale step and its store; ptxas met the 40 registers by spilling a word and by
 * recomputing loop invariants each iteration. 238 now, no spill: FP4 scaled and encoded a word at a
 * time (8 values live, not 16), the scale store through one branch-free map (qck_u8_map), the
 * unclamped flag and the grid's groups an iteration taken from the launcher, the group size a
 * constant for nvfp4 and MX, a slot past the end loading the last group where a predicated load
 * needed its registers zeroed. */
#ifndef QCK_UNROLL
#define QCK_UNROLL 1
#endif
#ifndef QCK_NV_UNROLL
#define QCK_NV_UNROLL 1
#endif
#ifndef QCK_GROUP_VMAX
#define QCK_GROUP_VMAX 4
#endif
#ifndef QCK_PREFETCH
#define QCK_PREFETCH 1
#endif
#ifndef QCK_NVFP4_VMAX
#define QCK_NVFP4_VMAX 2
#endif
#ifndef QCK_GROUP_MIN_BLOCKS
#define QCK_GROUP_MIN_BLOCKS 4
#endif
#ifndef QCK_NV_MIN_BLOCKS
#define QCK_NV_MIN_BLOCKS 6
#endif
#ifndef QCK_NV_STAGES
#define QCK_NV_STAGES 0
#endif
#if QCK_GROUP_VMAX >= 4 || QCK_NVFP4_VMAX >= 4
#define QCK_V4 4
#else
#define QCK_V4 2 /* no V = 4 instantiation */
#endif

/* Slots per lane and iteration: QCK_NV_UNROLL for nvfp4, QCK_UNROLL for the others (the launcher
 * sizes its grid by the same count). */
QCK_HD constexpr int qck_slots_per_lane(bool nv) { return nv ? QCK_NV_UNROLL : QCK_UNROLL; }

/* Where chunk k (16 bytes) of a warp's staged run lies in its slot. A lane reads chunks V apart,
 * so 8 lanes reading in place would meet in each bank twice; at k ^ ((k >> 3) & (V - 1)) their
 * reads cover the 32 banks once, and a copy's 8 adjacent chunks stay a permutation of one line. */
template <int V> QCK_D int qck_staged_pos(int k) { return k ^ ((k >> 3) & (V - 1)); }

/* The group loop with one slot per lane and its loads staged through shared memory (QCK_NV_STAGES
 * = S > 1). A warp's slots of an iteration are one run of 32 x V 16-byte chunks; the warp copies
 * the run S - 1 iterations ahead into a ring of S slots of its own (qck_copy_async), the lanes
 * taking adjacent chunks so that each copy instruction covers whole lines, and each lane then
 * reads its own V chunks. The loads wait in shared memory rather than in registers: (S - 1) x 32
 * bytes in flight per lane where the register loads kept 32 (and the L2 prefetch one iteration
 * ahead). A chunk past the end is zeros (nothing read; the register loads read the last group
 * instead, but here every lane ends with S - 1 such copies: had all the grid's lanes read the same
 * 32 bytes, nvfp4 would run 4 to 11 times slower, docs/notes/h100/cuda_run_2026-12-07c.log), and
 * its slot stores nothing. wg: the warp's first group. */
template <typename T, int CK, int FAM, int V, int S>
QCK_D void qck_group_loop_staged(const qck_quant_args &a, const qck_fmt &m, const qck_nv_g &G, const uint8_t *x,
                                 uint8_t *dst, uint32_t gi, uint32_t wg, uint32_t total, uint32_t group_bytes,
                                 uint32_t out_bytes, int sub)
{
    __shared__ uint4 ring[S][QCK_THREADS * V];
    const int lane = threadIdx.x & 31, first = (threadIdx.x - lane) * V;
    const uint32_t per_iter = a.per_iter;
    const uint64_t end = (uint64_t)total * group_bytes;
    auto copy = [&](int s, uint32_t from) { /* the warp's run of the iteration whose first group is from */
#pragma unroll
        for (int t = 0; t < V; t++) {
            const int k = t * 32 + lane;
            const uint64_t at = (uint64_t)from * group_bytes + k * 16;
            qck_copy_async(&ring[s][first + qck_staged_pos<V>(k)], x, at < end ? at : 0, at < end);
        }
        qck_async_commit();
    };
#pragma unroll
    for (int s = 0; s < S - 1; s++)
        copy(s, wg + s * per_iter);
    for (int rd = 0; QCK_ANY(gi < total); gi += per_iter, wg += per_iter, rd = rd == S - 1 ? 0 : rd + 1) {
        QCK_SYNCWARP(); /* every lane has read the slot of the iteration before, which is refilled now */
        copy(rd == 0 ? S - 1 : rd - 1, wg + (S - 1) * per_iter);
        qck_async_wait<S - 1>(); /* this lane's copies of this iteration are in */
        QCK_SYNCWARP();          /* and every lane's, visible to all */
        uint4 r[V];
#pragma unroll
        for (int t = 0; t < V; t++)
            r[t] = ring[rd][first + qck_staged_pos<V>(lane * V + t)];
        qck_group_slot<T, V, CK, FAM>(a, m, G, r, gi, gi < total, sub, dst + (uint64_t)gi * out_bytes);
    }
    qck_async_wait<0>(); /* no copy may land in shared memory after the block has ended */
}

/* V 16-byte vectors of one group per lane: the group's amax, scale and shuffles are paid once per
 * V * N elements. A lane group's U slots are adjacent groups (with one lane a group, U * 32 bytes of
 * bf16 in a row), loaded together, then worked through one by one. */
template <typename T, int CK, int FAM, int V>
__global__ void __launch_bounds__(QCK_THREADS, FAM == QCK_FAM_NV ? QCK_NV_MIN_BLOCKS : QCK_GROUP_MIN_BLOCKS)
    qck_group_kernel(const T *__restrict__ x, qck_quant_args a)
{
    constexpr int N = qck_vec<T>::N, E = V * N;
    const qck_fmt m = qck_format(a.p.elem);
    const qck_nv_g G = qck_nv_g_of(a, FAM != QCK_FAM_NV ? 0.0f : a.nv_g_known ? a.nv_g : a.dev_scale[0]);
    if (FAM == QCK_FAM_NV && a.nv_g_known && blockIdx.x == 0 && threadIdx.x == 0)
        *a.gscale = qck_nv_gscale_out(a.p, a.nv_g);
    const int lane = threadIdx.x & 31, lpg = qck_lanes_per_group<FAM, E>(a), gpw = 32 / lpg, sub = lane & (lpg - 1);
    constexpr int U = qck_slots_per_lane(FAM == QCK_FAM_NV);
    /* 32-bit group indices (qck_group_kernel_fits: fewer than 2^31 groups, so none wraps), 64-bit
     * byte offsets from the lane's first input and output bytes (for nvfp4 and MX those of the
     * tensors: one lane a group) */
    const uint32_t total = (uint32_t)(a.rows * a.tiles_c), group = qck_group_size<FAM>(a);
    const bool fp4 = qck_group_fp4<CK, FAM>(a);
    const uint32_t group_bytes = group * sizeof(T), out_bytes = fp4 ? group / 2 : group; /* a group's codes */
    const uint8_t *src = reinterpret_cast<const uint8_t *>(x) + sub * E * sizeof(T);
    uint8_t *dst = a.q + sub * (fp4 ? E / 2 : E);
    const uint32_t warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, per_iter = a.per_iter;
    /* gi: the lane's first group; the warp's lane 0 holds its lowest, so the loop goes on while any
     * lane has one (warp-uniform: the shuffles need every lane) */
    uint32_t gi = warp * gpw * U + lane / lpg * U;
#if QCK_NV_STAGES > 1
    if (FAM == QCK_FAM_NV && U == 1)
        qck_group_loop_staged<T, CK, FAM, V, QCK_NV_STAGES>(a, m, G, reinterpret_cast<const uint8_t *>(x), dst, gi,
                                                            warp * gpw * U, total, group_bytes, out_bytes, sub);
    else
#endif
    for (; QCK_ANY(gi < total); gi += per_iter) {
        uint4 r[U][V];
        /* a slot past the end loads the last group (no predicated load, no zeroing) and stores nothing */
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int t = 0; t < V; t++)
                r[u][t] = qck_load_raw(src, (uint64_t)(gi + u < total ? gi + u : total - 1) * group_bytes + t * 16);
        if (QCK_PREFETCH > 0 && gi + QCK_PREFETCH * per_iter < total)
            qck_prefetch_l2(src, (uint64_t)(gi + QCK_PREFETCH * per_iter) * group_bytes);
#if !defined(QCK_HIP) /* hipcc 5.2 cannot unroll this loop of shuffles and votes (-Wpass-failed) */
#pragma unroll
#endif
        for (int u = 0; u < U; u++)
            qck_group_slot<T, V, CK, FAM>(a, m, G, r[u], gi + u, gi + u < total, sub,
                                          dst + (uint64_t)(gi + u) * out_bytes);
    }
}

/* One element of an amax scan: the largest |x| bits among the elements that are not NaN, and the
 * first index of a NaN (the amax of a profile that propagates NaN). */
__device__ inline void qck_amax_step(float v, unsigned long long e, uint32_t &mx, unsigned long long &key)
{
    uint32_t b = qck_bits(v) & QCK_ABS;
    if (b > QCK_INF)
        key = e < key ? e : key;
    else
        mx = b > mx ? b : mx;
}

/* The block's tree reduction of every thread's (mx, key) into s_max[0], s_key[0]. */
__device__ inline void qck_block_amax(uint32_t *s_max, unsigned long long *s_key, uint32_t mx, unsigned long long key)
{
    const int tid = threadIdx.x;
    s_max[tid] = mx, s_key[tid] = key;
    __syncthreads();
    for (int st = blockDim.x >> 1; st > 0; st >>= 1) {
        if (tid < st) {
            s_max[tid] = s_max[tid + st] > s_max[tid] ? s_max[tid + st] : s_max[tid];
            s_key[tid] = s_key[tid + st] < s_key[tid] ? s_key[tid + st] : s_key[tid];
        }
        __syncthreads();
    }
}

/* ---------------------------------------------------------------- the tile kernel */

__global__ void __launch_bounds__(QCK_THREADS) qck_tile_kernel(const float *__restrict__ x, qck_quant_args a)
{
    __shared__ uint32_t s_max[QCK_THREADS];
    __shared__ unsigned long long s_key[QCK_THREADS];
    __shared__ qck_elem_op s_op;
    const qck_fmt m = qck_format(a.p.elem);
    const int hw = qck_hw_fp8_ok(a.p.elem, a.p.cast), prop = a.p.amax_nan == QC_AMAX_NAN_PROPAGATE;
    const int tid = threadIdx.x;
    const int64_t ntiles = a.tiles_r * a.tiles_c;
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const int64_t ti = t / a.tiles_c, tj = t - ti * a.tiles_c;
        const int64_t r0 = ti * a.tile_r, c0 = tj * a.tile_c;
        const int64_t r1 = r0 + a.tile_r < a.rows ? r0 + a.tile_r : a.rows;
        const int64_t c1 = c0 + a.tile_c < a.cols ? c0 + a.tile_c : a.cols;
        const int64_t w = c1 - c0, n = (r1 - r0) * w;
        uint32_t mx = 0;
        unsigned long long key = QCK_NONE64;
        for (int64_t e = tid; e < n; e += blockDim.x) /* e: row-major order inside the tile */
            qck_amax_step(x[(r0 + e / w) * a.cols + c0 + e % w], (unsigned long long)e, mx, key);
        qck_block_amax(s_max, s_key, mx, key);
        if (tid == 0) {
            unsigned long long k = s_key[0];
            float amax = qck_float(s_max[0]);
            if (prop && k != QCK_NONE64)
                amax = qck_float(qck_bits(x[(r0 + (int64_t)k / w) * a.cols + c0 + (int64_t)k % w]) & QCK_ABS);
            s_op = qck_group_step(a, amax, ti, tj, true, qck_nv_g_of(a, a.recipe == QC_RECIPE_NVFP4 ? a.dev_scale[0] : 0.0f));
        }
        __syncthreads();
        const qck_elem_op op = s_op;
        for (int64_t e = tid; e < n; e += blockDim.x) {
            int64_t idx = (r0 + e / w) * a.cols + c0 + e % w;
            a.codes[idx] = (uint8_t)qck_code1(qck_clamp(qck_apply(op, x[idx]), a.p), a.p.elem, m, a.p.cast, hw);
        }
        __syncthreads(); /* s_max, s_key and s_op are reused by the next tile */
    }
}

/* ---------------------------------------------------------------- tensor-wide amax */

__global__ void __launch_bounds__(QCK_THREADS) qck_amax_kernel(const float *__restrict__ x, int64_t n, int prop,
                                                              unsigned int *amax_bits, unsigned long long *nan_index)
{
    __shared__ uint32_t s_max[QCK_THREADS];
    __shared__ unsigned long long s_key[QCK_THREADS];
    const int tid = threadIdx.x;
    uint32_t mx = 0;
    unsigned long long key = QCK_NONE64;
    const int64_t nv = n / 4, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + tid; i < nv; i += stride) {
        float4 t = reinterpret_cast<const float4 *>(x)[i];
        float v[4] = {t.x, t.y, t.z, t.w};
        for (int k = 0; k < 4; k++)
            qck_amax_step(v[k], (unsigned long long)(4 * i + k), mx, key);
    }
    for (int64_t i = 4 * nv + (int64_t)blockIdx.x * blockDim.x + tid; i < n; i += stride)
        qck_amax_step(x[i], (unsigned long long)i, mx, key);
    qck_block_amax(s_max, s_key, mx, key);
    if (tid == 0) {
        atomicMax(amax_bits, s_max[0]);
        if (prop && s_key[0] != QCK_NONE64)
            atomicMin(nan_index, s_key[0]);
    }
}

/* One thread: the tensor scale (tensor) or the global scale g and gscale (nvfp4). */
__global__ void qck_final_kernel(const float *__restrict__ x, qck_quant_args a)
{
    const qc_recipe_policy &p = a.p;
    float amax = qck_float(*a.amax_bits);
    if (p.amax_nan == QC_AMAX_NAN_PROPAGATE && *a.nan_index != QCK_NONE64)
        amax = qck_float(qck_bits(x[*a.nan_index]) & QCK_ABS);
    if (a.recipe == QC_RECIPE_NVFP4) {
        float g = qck_nv_global(p, amax, a.has_gscale, a.gscale_encode);
        a.dev_scale[0] = g;
        *a.gscale = qck_nv_gscale_out(p, g);
        return;
    }
    float s = a.has_static ? a.static_scale : qck_tiled_scale(amax, p, a.L);
    static_cast<float *>(a.scale)[0] = s;
    a.dev_scale[0] = s, a.dev_scale[1] = amax;
}

/* The tensor recipe's elements, 4 per thread and iteration. */
__global__ void __launch_bounds__(QCK_THREADS) qck_tensor_kernel(const float *__restrict__ x, int64_t n, qck_quant_args a)
{
    const qck_fmt m = qck_format(a.p.elem);
    const int hw = qck_hw_fp8_ok(a.p.elem, a.p.cast);
    const qck_elem_op op = qck_tiled_op(a.dev_scale[0], a.dev_scale[1], a.p);
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; 4 * i < n; i += stride) {
        if (4 * i + 4 <= n) {
            float4 t = reinterpret_cast<const float4 *>(x)[i];
            float v[4] = {t.x, t.y, t.z, t.w};
            uint32_t w = 0;
            for (int k = 0; k < 4; k++)
                w |= qck_code1(qck_clamp(qck_apply(op, v[k]), a.p), a.p.elem, m, a.p.cast, hw) << (8 * k);
            reinterpret_cast<uint32_t *>(a.q)[i] = w;
        } else {
            for (int64_t j = 4 * i; j < n; j++)
                a.q[j] = (uint8_t)qck_code1(qck_clamp(qck_apply(op, x[j]), a.p), a.p.elem, m, a.p.cast, hw);
        }
    }
}

/* packed_ue8m0: the reference's layout writer returns at the first scale that is no power of two
 * 2^(E-127), leaving it and every later scale (row-major order) at the zero of the memset. */
__global__ void qck_packed_fixup_kernel(qck_quant_args a)
{
    const unsigned long long bad = *a.bad;
    if (bad == QCK_NONE64)
        return;
    const int64_t ns = a.tiles_r * a.tiles_c, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < ns; k += stride)
        if ((unsigned long long)k >= bad) {
            int64_t i = k / a.tiles_c, j = k - i * a.tiles_c;
            static_cast<uint8_t *>(a.scale)[qck_tg_offset(QC_SL_PACKED_UE8M0, a.tiles_r, a.tiles_c, i, j)] = 0;
        }
}

/* ---------------------------------------------------------------- fp4 packing */

__global__ void qck_fp4_pack_kernel(const uint8_t *__restrict__ codes, int64_t n, int swap, uint8_t *__restrict__ out)
{
    const int64_t nb = (n + 1) / 2, stride = (int64_t)gridDim.x * blockDim.x;
    const int lo = swap ? 4 : 0, hi = swap ? 0 : 4;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nb; i += stride) {
        uint32_t even = codes[2 * i] & 0xFu, odd = 2 * i + 1 < n ? codes[2 * i + 1] & 0xFu : 0u;
        out[i] = (uint8_t)(even << lo | odd << hi);
    }
}

/* ---------------------------------------------------------------- launchers: quant */

size_t qck_quant_scratch_bytes(const qck_quant_args *a)
{
    return a->fp4 ? (size_t)(a->rows * a->cols) : 0;
}

static bool qck_group_kernel_fits(const qck_quant_args *a, int N)
{
    if (a->recipe != QC_RECIPE_TOKEN_GROUP && a->recipe < QC_RECIPE_MXFP8)
        return false;
    if (a->tile_c % N || a->cols % a->tile_c) /* a short last group goes to the tile kernel */
        return false;
    if (a->recipe >= QC_RECIPE_MXFP8 && a->tile_c != (a->recipe == QC_RECIPE_NVFP4 ? QCK_NV_GROUP : QCK_MX_GROUP))
        return false; /* qck_lanes_per_group's constants */
    int64_t lanes = a->tile_c / N;
    /* 32-bit group indices (their row by a 32-bit fast division) and byte-scale offsets
     * (qck_offset_uint): a swizzled grid pads its rows to whole bands */
    const bool sf32 = a->scale_kind != QCK_SC_U8_SF ||
                      (a->rows + a->sf_tile - 1) / a->sf_tile * a->sf_tile * a->sf_cp <= ((int64_t)1 << 32);
    return lanes >= 1 && lanes <= 32 && (lanes & (lanes - 1)) == 0 && a->rows * a->tiles_c < ((int64_t)1 << 31) && sf32;
}

/* Whether a clean slot under the encoder CK may leave its clamp out: no clamp, or one the encoder's
 * saturation makes moot: to +-fmax, the format's largest, a clamp to +-m (or below m alone) with
 * m >= fmax gives the encoder's result. qck_e2m1_rne_sat saturates by min(|y|, 6);
 * cvt.rn.satfinite.e4m3x2 / e5m2x2 take finite overflow and +-Inf to +-448 / +-57344
 * (formats.md §13: all 2^32 inputs on the H200). The launch's, so that a slot tests one flag. */
static bool qck_unclamped(const qc_recipe_policy &p, int ck)
{
    const float fmax = ck == QCK_CK_E2M1_RNE ? 6.0f : ck == QCK_CK_E4M3_HW ? 448.0f : 57344.0f;
    return p.clamp == QC_CLAMP_NONE || (ck != QCK_CK_SOFT && !(p.clamp_max < fmax));
}

/* The encoder of the group kernel: the hardware cvt where the policy is its own. */
static int qck_group_ck(const qck_quant_args &a)
{
    if (a.fp4)
        return qck_e2m1_rne_ok(a.p.cast) ? QCK_CK_E2M1_RNE : QCK_CK_SOFT;
#if defined(QCK_HIP)
    return QCK_CK_SOFT;
#else
    if (!(a.hw_exact || qck_hw_fp8_clean_ok(a.p)))
        return QCK_CK_SOFT;
    return a.p.elem == QC_E4M3FN ? QCK_CK_E4M3_HW : QCK_CK_E5M2_HW;
#endif
}

/* The group kernel of this recipe family and encoder (qck_group_ck). */
template <typename T, int V>
static void (*qck_group_pick(const qck_quant_args &a, int ck))(const T *, qck_quant_args)
{
    const int fam = a.recipe == QC_RECIPE_NVFP4 ? QCK_FAM_NV : a.recipe >= QC_RECIPE_MXFP8 ? QCK_FAM_MX : QCK_FAM_TG;
    if constexpr (V <= QCK_NVFP4_VMAX) /* qck_group_launch gives nvfp4 no more vectors */
        if (fam == QCK_FAM_NV)
            return ck == QCK_CK_E2M1_RNE ? qck_group_kernel<T, QCK_CK_E2M1_RNE, QCK_FAM_NV, V>
                                         : qck_group_kernel<T, QCK_CK_SOFT, QCK_FAM_NV, V>;
    switch (ck) {
    case QCK_CK_E2M1_RNE:
        return fam == QCK_FAM_MX ? qck_group_kernel<T, QCK_CK_E2M1_RNE, QCK_FAM_MX, V>
                                 : qck_group_kernel<T, QCK_CK_E2M1_RNE, QCK_FAM_TG, V>;
#if !defined(QCK_HIP)
    case QCK_CK_E4M3_HW:
        return fam == QCK_FAM_MX ? qck_group_kernel<T, QCK_CK_E4M3_HW, QCK_FAM_MX, V>
                                 : qck_group_kernel<T, QCK_CK_E4M3_HW, QCK_FAM_TG, V>;
    case QCK_CK_E5M2_HW:
        return fam == QCK_FAM_MX ? qck_group_kernel<T, QCK_CK_E5M2_HW, QCK_FAM_MX, V>
                                 : qck_group_kernel<T, QCK_CK_E5M2_HW, QCK_FAM_TG, V>;
#endif
    default:
        return fam == QCK_FAM_MX ? qck_group_kernel<T, QCK_CK_SOFT, QCK_FAM_MX, V>
                                 : qck_group_kernel<T, QCK_CK_SOFT, QCK_FAM_TG, V>;
    }
}

/* V vectors of a group per lane: the most the group divides into, up to QCK_GROUP_VMAX
 * (QCK_NVFP4_VMAX); a.lpg lanes per group follow. */
template <typename T>
static gpuError_t qck_group_launch(qck_quant_args a, const T *x, int sms, gpuStream_t s)
{
    const int N = qck_vec<T>::N, vmax = a.recipe == QC_RECIPE_NVFP4 ? QCK_NVFP4_VMAX : QCK_GROUP_VMAX;
    const int V = vmax >= 4 && a.tile_c % (4 * N) == 0 ? 4 : vmax >= 2 && a.tile_c % (2 * N) == 0 ? 2 : 1;
    a.lpg = (int)(a.tile_c / (V * N));
    a.groups_per_row = qck_fastdiv_of((uint32_t)a.tiles_c);
    a.hw_exact = !a.fp4 && qck_hw_fp8_ok(a.p.elem, a.p.cast);
    a.clamp_plain = a.p.clamp == QC_CLAMP_NONE || (a.p.clamp_max > 0.0f && a.p.clamp_max <= qck_float(QCK_INF));
    const int ck = qck_group_ck(a);
    a.unclamped = qck_unclamped(a.p, ck);
    const int64_t groups = a.rows * a.tiles_c,
                  per_block = (QCK_THREADS / 32) * (32 / a.lpg) * qck_slots_per_lane(a.recipe == QC_RECIPE_NVFP4);
    void (*k)(const T *, qck_quant_args) = V == 4   ? qck_group_pick<T, QCK_V4>(a, ck)
                                           : V == 2 ? qck_group_pick<T, 2>(a, ck)
                                                    : qck_group_pick<T, 1>(a, ck);
    const unsigned grid = qck_waves_grid(k, (groups + per_block - 1) / per_block, sms);
    a.per_iter = (uint32_t)(grid * per_block);
    QCK_LAUNCH(k, grid, QCK_THREADS, s, x, a);
    return gpuGetLastError();
}

gpuError_t qck_launch_quant(const qck_quant_args *in, const void *x, int x_bf16, int sms, gpuStream_t s)
{
    qck_quant_args a = *in;
    a.u8map = qck_u8_map_of(a);
    const int64_t n = a.rows * a.cols;
    gpuError_t e;
    const int N = x_bf16 ? 8 : 4;
    const bool group_kernel = qck_group_kernel_fits(&a, N);
    a.nv_fast_finite = a.recipe == QC_RECIPE_NVFP4 && a.p.nv_order == QC_NVFP4_FAST && qck_hw_fp8_ok(QC_E4M3FN, a.p.sf_cast);
    /* A given global scale needs no amax: the group kernel takes g from the host and writes gscale,
     * one launch where the finaliser and its two memsets made four: on an H100, nvfp4 0.889-0.891 of
     * the copy with the four, 0.958-0.959 with one (docs/notes/h100/cuda_run_2026-12-07.log). */
    a.nv_g_known = a.recipe == QC_RECIPE_NVFP4 && a.has_gscale && group_kernel && a.rows * a.tiles_c > 0;
    a.nv_g = a.nv_g_known ? qck_nv_global(a.p, 0.0f, 1, a.gscale_encode) : 0.0f;
    if (a.tg_layout == QC_SL_PACKED_UE8M0 && (e = gpuMemsetAsync(a.bad, 0xFF, sizeof *a.bad, s)) != gpuSuccess)
        return e;
    if ((a.recipe == QC_RECIPE_TENSOR || a.recipe == QC_RECIPE_NVFP4) && !a.nv_g_known) {
        if (x_bf16 && !(a.recipe == QC_RECIPE_NVFP4 && a.has_gscale))
            return gpuErrorInvalidValue; /* the tensor-wide amax reads fp32 */
        if ((e = gpuMemsetAsync(a.amax_bits, 0, sizeof *a.amax_bits, s)) != gpuSuccess ||
            (e = gpuMemsetAsync(a.nan_index, 0xFF, sizeof *a.nan_index, s)) != gpuSuccess)
            return e;
        if (n > 0 && !(a.recipe == QC_RECIPE_NVFP4 && a.has_gscale))
            QCK_LAUNCH(qck_amax_kernel, qck_grid((n / 4 + QCK_THREADS - 1) / QCK_THREADS, sms), QCK_THREADS, s,
                       (const float *)x, n, a.p.amax_nan == QC_AMAX_NAN_PROPAGATE, a.amax_bits, a.nan_index);
        QCK_LAUNCH(qck_final_kernel, 1, 1, s, (const float *)x, a);
    }
    if ((e = gpuGetLastError()) != gpuSuccess)
        return e;
    if (a.recipe == QC_RECIPE_TENSOR) {
        if (n > 0)
            QCK_LAUNCH(qck_tensor_kernel, qck_grid((n / 4 + QCK_THREADS) / QCK_THREADS, sms), QCK_THREADS, s,
                       (const float *)x, n, a);
        return gpuGetLastError();
    }
    if (group_kernel) {
        if (a.rows * a.tiles_c == 0)
            return gpuSuccess;
        e = x_bf16 ? qck_group_launch(a, (const uint16_t *)x, sms, s) : qck_group_launch(a, (const float *)x, sms, s);
    } else {
        if (x_bf16)
            return gpuErrorInvalidValue;
        a.codes = a.fp4 ? a.codes : a.q;
        if (a.tiles_r * a.tiles_c > 0)
            QCK_LAUNCH(qck_tile_kernel, qck_grid(a.tiles_r * a.tiles_c, sms), QCK_THREADS, s, (const float *)x, a);
        if (a.fp4 && n > 0)
            QCK_LAUNCH(qck_fp4_pack_kernel, qck_grid(((n + 1) / 2 + QCK_THREADS - 1) / QCK_THREADS, sms), QCK_THREADS, s,
                       a.codes, n, 0, a.q);
        e = gpuGetLastError();
    }
    if (e == gpuSuccess && a.tg_layout == QC_SL_PACKED_UE8M0 && a.tiles_r * a.tiles_c > 0) {
        QCK_LAUNCH(qck_packed_fixup_kernel, qck_grid((a.tiles_r * a.tiles_c + QCK_THREADS - 1) / QCK_THREADS, sms),
                   QCK_THREADS, s, a);
        e = gpuGetLastError();
    }
    return e;
}

/* ---------------------------------------------------------------- dequant */

__global__ void __launch_bounds__(QCK_THREADS) qck_dequant_kernel(qck_dequant_args a)
{
    const qc_recipe_policy &p = a.p;
    const qck_fmt m = qck_format(p.elem), sfm = qck_format(QC_E4M3FN);
    const int64_t n = a.rows * a.cols, stride = (int64_t)gridDim.x * blockDim.x;
    const uint8_t *sb = static_cast<const uint8_t *>(a.scale);
    const float gs = a.recipe == QC_RECIPE_NVFP4 ? a.gscale[0] : 0.0f;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += stride) {
        const int64_t i = idx / a.cols, j = idx - i * a.cols;
        uint32_t code = a.fp4 ? (a.q[idx / 2] >> (4 * (idx & 1))) & 0xFu : a.q[idx];
        float v = qck_decode_minifloat(m, code);
        const int64_t ti = a.recipe == QC_RECIPE_TENSOR ? 0 : i / a.tile_r;
        const int64_t tj = (a.recipe == QC_RECIPE_TENSOR || a.recipe == QC_RECIPE_TOKEN) ? 0 : j / a.tile_c;
        if (a.recipe >= QC_RECIPE_MXFP8) {
            const int64_t o = qck_scale_u8_offset(a, ti, tj);
            if (a.recipe == QC_RECIPE_NVFP4)
                a.y[idx] = qck_mul(qck_mul(v, qck_decode_minifloat(sfm, sb[o])), gs);
            else
                a.y[idx] = qck_mul(v, qck_e8m0_decode(sb[o], p.dequant_e8m0));
            continue;
        }
        const int64_t o = qck_tg_offset(a.tg_layout, a.tiles_r, a.tiles_c, ti, tj);
        float s = a.tg_layout == QC_SL_PACKED_UE8M0 ? qck_e8m0_decode(sb[o], QC_E8M0_DEC_EXP2)
                                                     : *reinterpret_cast<const float *>(sb + o);
        a.y[idx] = qck_mul(v, s);
    }
}

gpuError_t qck_launch_dequant(const qck_dequant_args *a, int sms, gpuStream_t s)
{
    const int64_t n = a->rows * a->cols;
    if (n == 0)
        return gpuSuccess;
    qck_dequant_args d = *a;
    d.u8map = qck_u8_map_of(d);
    QCK_LAUNCH(qck_dequant_kernel, qck_grid((n + QCK_THREADS - 1) / QCK_THREADS, sms), QCK_THREADS, s, d);
    return gpuGetLastError();
}

/* ---------------------------------------------------------------- cast and decode */

/* 4 elements per thread and iteration: one 16-byte load, one 4-, 8- or 16-byte store. */
__global__ void __launch_bounds__(QCK_THREADS) qck_cast_kernel(const float *__restrict__ x, int64_t n, void *y,
                                                              qc_format to, qc_cast_policy p, const qck_libm *L)
{
    const int width = to == QC_F32 ? 4 : (to == QC_BF16 || to == QC_F16) ? 2 : 1;
    const int hw8 = qck_hw_fp8_ok(to, p), hw16 = qck_hw_half_ok(to, p);
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; 4 * i < n; i += stride) {
        float v[4] = {0.f, 0.f, 0.f, 0.f};
        const int cnt = 4 * i + 4 <= n ? 4 : (int)(n - 4 * i);
        if (cnt == 4) {
            float4 t = reinterpret_cast<const float4 *>(x)[i];
            v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
        } else {
            for (int k = 0; k < cnt; k++)
                v[k] = x[4 * i + k];
        }
        uint32_t c[4];
#if defined(QCK_PTX)
        if (hw8) {
            uint32_t lo = to == QC_E4M3FN ? qck_cvt_e4m3x2(v[0], v[1]) : qck_cvt_e5m2x2(v[0], v[1]);
            uint32_t hi = to == QC_E4M3FN ? qck_cvt_e4m3x2(v[2], v[3]) : qck_cvt_e5m2x2(v[2], v[3]);
            c[0] = lo & 0xFF, c[1] = lo >> 8, c[2] = hi & 0xFF, c[3] = hi >> 8;
        } else if (hw16) {
            uint32_t lo = to == QC_BF16 ? qck_cvt_bf16x2(v[0], v[1]) : qck_cvt_f16x2(v[0], v[1]);
            uint32_t hi = to == QC_BF16 ? qck_cvt_bf16x2(v[2], v[3]) : qck_cvt_f16x2(v[2], v[3]);
            c[0] = lo & 0xFFFF, c[1] = lo >> 16, c[2] = hi & 0xFFFF, c[3] = hi >> 16;
        } else
#else
        (void)hw8, (void)hw16;
#endif
        {
            for (int k = 0; k < 4; k++)
                c[k] = qck_encode(to, v[k], p, L);
        }
        if (cnt == 4) {
            if (width == 1)
                static_cast<uint32_t *>(y)[i] = c[0] | c[1] << 8 | c[2] << 16 | c[3] << 24;
            else if (width == 2)
                static_cast<uint2 *>(y)[i] = make_uint2(c[0] | c[1] << 16, c[2] | c[3] << 16);
            else
                static_cast<uint4 *>(y)[i] = make_uint4(c[0], c[1], c[2], c[3]);
        } else {
            for (int k = 0; k < cnt; k++) {
                if (width == 1)
                    static_cast<uint8_t *>(y)[4 * i + k] = (uint8_t)c[k];
                else if (width == 2)
                    static_cast<uint16_t *>(y)[4 * i + k] = (uint16_t)c[k];
                else
                    static_cast<uint32_t *>(y)[4 * i + k] = c[k];
            }
        }
    }
}

gpuError_t qck_launch_cast(const float *x, int64_t n, void *y, qc_format to, const qc_cast_policy *p,
                           const qck_libm *L, int sms, gpuStream_t s)
{
    if (n == 0)
        return gpuSuccess;
    QCK_LAUNCH(qck_cast_kernel, qck_grid(((n + 3) / 4 + QCK_THREADS - 1) / QCK_THREADS, sms), QCK_THREADS, s, x, n, y,
               to, *p, L);
    return gpuGetLastError();
}

__global__ void __launch_bounds__(QCK_THREADS) qck_decode_kernel(const void *codes, int64_t n, float *y, qc_format from,
                                                                qc_cast_policy p)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint32_t c = from == QC_F32                     ? static_cast<const uint32_t *>(codes)[i]
                     : (from == QC_BF16 || from == QC_F16) ? static_cast<const uint16_t *>(codes)[i]
                                                           : static_cast<const uint8_t *>(codes)[i];
        y[i] = qck_decode(from, c, p);
    }
}

gpuError_t qck_launch_decode(const void *codes, int64_t n, float *y, qc_format from, const qc_cast_policy *p, int sms,
                             gpuStream_t s)
{
    if (n == 0)
        return gpuSuccess;
    QCK_LAUNCH(qck_decode_kernel, qck_grid((n + QCK_THREADS - 1) / QCK_THREADS, sms), QCK_THREADS, s, codes, n, y,
               from, *p);
    return gpuGetLastError();
}

gpuError_t qck_launch_fp4_pack(const uint8_t *codes, int64_t n, int swap, uint8_t *packed, int sms, gpuStream_t s)
{
    if (n == 0)
        return gpuSuccess;
    QCK_LAUNCH(qck_fp4_pack_kernel, qck_grid(((n + 1) / 2 + QCK_THREADS - 1) / QCK_THREADS, sms), QCK_THREADS, s,
               codes, n, swap, packed);
    return gpuGetLastError();
}

/* ---------------------------------------------------------------- fnuz_normalize (formats.md §7.1) */

__global__ void qck_fnuz_kernel(uint8_t *w, int64_t n, float *scale, int64_t ns)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        if (w[i] == 0x80)
            w[i] = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < ns; i += stride)
        scale[i] = qck_mul(scale[i], 2.0f);
}

gpuError_t qck_launch_fnuz(uint8_t *w, int64_t n, float *scale, int64_t ns, int sms, gpuStream_t s)
{
    int64_t most = n > ns ? n : ns;
    if (most == 0)
        return gpuSuccess;
    QCK_LAUNCH(qck_fnuz_kernel, qck_grid((most + QCK_THREADS - 1) / QCK_THREADS, sms), QCK_THREADS, s, w, n, scale,
               ns);
    return gpuGetLastError();
}

/* ---------------------------------------------------------------- block-scale swizzle (layouts.md §1) */

/* One thread per destination element: its (r, c) by the inverse map, the source element or the
 * zero of the padding; the writes are contiguous. */
__global__ void qck_swizzle_kernel(const uint8_t *__restrict__ x, uint8_t *__restrict__ y, int64_t B, int64_t R,
                                   int64_t C, int64_t Rg, int64_t Cg, int tile, int eb)
{
    const int64_t per = Rg * Cg, total = B * per, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < total; o += stride) {
        int64_t b = o / per, r, c;
        qck_sf_coords(o - b * per, Cg, tile, &r, &c);
        bool in = r < R && c < C;
        const uint8_t *src = x + ((b * R + r) * C + c) * eb;
        for (int k = 0; k < eb; k++)
            y[o * eb + k] = in ? src[k] : 0;
    }
}

gpuError_t qck_launch_swizzle(const uint8_t *x, uint8_t *y, int64_t B, int64_t R, int64_t C, int64_t Rg, int64_t Cg,
                              int tile, int eb, int sms, gpuStream_t s)
{
    int64_t total = B * Rg * Cg;
    if (total == 0)
        return gpuSuccess;
    QCK_LAUNCH(qck_swizzle_kernel, qck_grid((total + QCK_THREADS - 1) / QCK_THREADS, sms), QCK_THREADS, s, x, y, B, R,
               C, Rg, Cg, tile, eb);
    return gpuGetLastError();
}

/* ---------------------------------------------------------------- the benchmark's copy */

/* Two 16-byte vectors per thread and iteration in flight, as the quant kernels keep. */
__global__ void __launch_bounds__(QCK_THREADS) qck_copy_kernel(const uint4 *__restrict__ src, uint4 *__restrict__ dst,
                                                              int64_t n16)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += 2 * stride) {
        uint4 a = src[i], b = i + stride < n16 ? src[i + stride] : make_uint4(0u, 0u, 0u, 0u);
        dst[i] = a;
        if (i + stride < n16)
            dst[i + stride] = b;
    }
}

gpuError_t qck_launch_copy(const void *src, void *dst, size_t n, int sms, gpuStream_t s)
{
    int64_t n16 = (int64_t)(n / 16);
    QCK_LAUNCH(qck_copy_kernel, qck_grid((n16 + 2 * QCK_THREADS - 1) / (2 * QCK_THREADS), sms), QCK_THREADS, s,
               (const uint4 *)src, (uint4 *)dst, n16);
    return gpuGetLastError();
}
