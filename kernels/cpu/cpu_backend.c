/* cpu_backend.c: the registration tables of the CPU backends, cpu-avx512 and cpu-amx (docs/STYLE.md,
 * BLIS: kernels in their own files, one table here), written against the public ABI
 * (include/qcheck/qcheck.h) and the reference's headers only. Compiled without AVX-512 flags, so
 * that the cpuid checks run on any x86-64 CPU; the kernels (cast_avx512.c, quant_avx512.c,
 * swizzle_avx512.c, transform_avx512.c, amx_gemm.c, amx_moe.c) are called only after their
 * backend's unavailable() returned NULL. What a kernel does not implement it declines, with the
 * reason: the harness reports that item SKIPPED. Nothing here calls the reference.
 *
 * cpu-avx512 implements:
 *   cast    fp32 -> every minifloat (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e2m1, e2m3, e3m2, bf16, f16)
 *           under every policy, and e8m0 under every rule.
 *   quant   tensor, token, token_group, block 128x128, mxfp8/mxfp6/mxfp4, nvfp4 (every profile),
 *           with FP4 packing and the scale bytes done here; scales row-major, or through sf128x4 /
 *           block_scale_interleave when they are bytes (mx, nvfp4). Declines: token_group's col,
 *           col_tma and packed_ue8m0 scale layouts, other layout maps on the scales.
 *   layout  sf128x4 and block_scale_interleave of 1-byte elements. Declines every other map.
 *   fnuz_normalize.
 * cpu-amx implements (amx_gemm.c; needs cpuid amx-tile, amx-bf16, amx-int8, avx512-bf16 and the
 * Linux tile permission, arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); else SKIPPED with
 * the missing feature named):
 *   gemm    kind=fp8_block model=sgl-cpu: sgl-kernel's fp8_scaled_mm_cpu (W8A16, weights unpacked
 *           to bf16 per tile, AMX-BF16, fp32 accumulation), checked within the bound;
 *           kind=int8_rowwise: sgl-kernel's int8_scaled_mm_cpu (W8A8, AMX-INT8 u8 x s8 with the
 *           s8s8 compensation words), bit-exact. Output bf16 or f32, any M, N, K (zero padding).
 *           Declines every other kind or model, e5m2 or non-128 blocks, out=f16.
 *   moe_cpu sgl-kernel fused_experts_cpu, fp8 w8a16.
 *   The AMX kernels were developed on a CPU without AMX and run only on the lent device machine
 *   (ci/amx-bundle.sh); docs/DECISIONS.md "AMX" says how they are validated. */
#define _DEFAULT_SOURCE /* syscall(2) */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "amx_gemm.h"
#include "amx_moe.h"
#include "cpu_avx512.h"
#include "qcheck/qcheck.h"

const char *qc_cpu_avx512_unavailable(void)
{
#if !defined(QC_CPU_AVX512_BUILT)
    return "this build's compiler cannot emit AVX-512 (QC_HAVE_AVX512 off): kernels/cpu not compiled";
#elif !defined(__x86_64__)
    return "not an x86-64 CPU";
#else
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512dq"))
        return "cpuid: this CPU lacks AVX-512 F/BW/VL/DQ";
    return NULL;
#endif
}

#if defined(QC_CPU_AVX512_BUILT)

static qcheck_status avx512_cast(const qcheck_cast_args *a, qcheck_ctx *ctx)
{
    if (!qc_avx512_cast_supported(a->to, &a->policy))
        return qcheck_say(ctx, QCHECK_DECLINED, "cast to %s under this policy", qc_format_name(a->to));
    qc_avx512_cast(a->to, &a->policy, a->x.data, (size_t)qcheck_numel(&a->x), a->y.data);
    return QCHECK_OK;
}

/* One code per byte -> two per byte, element 2i in the low nibble (docs/spec/formats.md §3.3). */
static void pack_fp4(const uint8_t *codes, size_t n, uint8_t *out)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        out[i / 2] = (uint8_t)((codes[i] & 0xF) | (codes[i + 1] & 0xF) << 4);
    if (n & 1)
        out[n / 2] = codes[n - 1] & 0xF;
}

/* What the quant kernel cannot lay out itself. */
static const char *quant_declines(const qcheck_quant_spec *j)
{
    static char why[160];
    int byte_scales = j->recipe >= QC_RECIPE_MXFP8;
    if (j->recipe == QC_RECIPE_TOKEN_GROUP && j->cols % (size_t)j->policy.group)
        return "a token group shorter than the group size (K % group != 0)";
    if (j->policy.nan_canonical)
        return "the GPU's canonical NaN bits (nan_canonical)";
    if (!qc_avx512_quant_supported(j->recipe, &j->policy))
        return "this recipe policy";
    if (j->recipe == QC_RECIPE_TOKEN_GROUP && j->layout != QC_SL_ROW) {
        snprintf(why, sizeof why, "token_group scale_layout=%s", qc_scale_layout_name(j->layout));
        return why;
    }
    if (j->has_sf_layout && (!byte_scales || (strcmp(j->sf_layout.desc->name, "sf128x4") &&
                                              strcmp(j->sf_layout.desc->name, "block_scale_interleave")))) {
        snprintf(why, sizeof why, "layout map %s on %s scales", j->sf_layout.desc->name, byte_scales ? "byte" : "fp32");
        return why;
    }
    return NULL;
}

static qcheck_status avx512_quant(const qcheck_quant_args *a, qcheck_ctx *ctx)
{
    const qcheck_quant_spec *j = a->spec;
    const char *why = quant_declines(j);
    if (why)
        return qcheck_say(ctx, QCHECK_DECLINED, "quant %s profile %s: %s", qc_recipe_name(j->recipe), j->profile->name, why);
    size_t n = j->rows * j->cols, ns = qcref_recipe_nscales(j->recipe, &j->policy, j->rows, j->cols);
    int fp4 = j->policy.elem == QC_E2M1, byte_scales = j->recipe >= QC_RECIPE_MXFP8;
    /* FP4 codes are packed afterwards, and an empty tensor's view has no data: both via a scratch buffer */
    int scratch = fp4 || n == 0;
    qc_quantized qz = {j->rows, j->cols, scratch ? malloc(n + 1) : a->q.data, malloc(4 * ns + 4), malloc(ns + 1), 0, ns};
    qcheck_status st = QCHECK_OK;
    if (!qz.q || !qz.scale_f32 || !qz.scale_u8)
        st = qcheck_say(ctx, QCHECK_FAILED, "out of memory");
    else if (qc_avx512_quant(j->recipe, &j->policy, a->x.data, j->rows, j->cols, j->has_static ? &j->static_scale : NULL,
                             j->has_gscale ? &j->gscale_encode : NULL, &qz))
        st = qcheck_say(ctx, QCHECK_DECLINED, "quant %s profile %s", qc_recipe_name(j->recipe), j->profile->name);
    if (!st) {
        if (fp4 && n)
            pack_fp4(qz.q, n, a->q.data);
        const void *scales = byte_scales ? (const void *)qz.scale_u8 : (const void *)qz.scale_f32;
        if (j->has_sf_layout)
            qc_avx512_sf128x4(scales, 1, j->sf_layout.R, j->sf_layout.C, a->scale.data);
        else if (ns)
            memcpy(a->scale.data, scales, byte_scales ? ns : 4 * ns);
        if (a->gscale.data)
            memcpy(a->gscale.data, &qz.gscale, 4);
    }
    if (scratch)
        free(qz.q);
    free(qz.scale_f32), free(qz.scale_u8);
    return st;
}

static qcheck_status avx512_layout(const qcheck_layout_args *a, qcheck_ctx *ctx)
{
    const qc_layout *L = a->plan;
    if ((strcmp(L->desc->name, "sf128x4") && strcmp(L->desc->name, "block_scale_interleave")) || L->in_bits != 8 ||
        a->inverse)
        return qcheck_say(ctx, QCHECK_DECLINED, "layout map %s%s with %d-bit elements", L->desc->name,
                   a->inverse ? " (inverse)" : "", L->in_bits);
    qc_avx512_sf128x4(a->x.data, L->B, L->R, L->C, a->y.data);
    return QCHECK_OK;
}

static qcheck_status avx512_fnuz_normalize(const qcheck_fnuz_normalize_args *a, qcheck_ctx *ctx)
{
    (void)ctx;
    qc_avx512_fnuz_normalize(a->w.data, (size_t)qcheck_numel(&a->w), a->scale.data, (size_t)qcheck_numel(&a->scale));
    return QCHECK_OK;
}

#define AVX512_SLOTS .cast = avx512_cast, .quant = avx512_quant, .layout = avx512_layout, \
                     .fnuz_normalize = avx512_fnuz_normalize
#else
#define AVX512_SLOTS .cast = NULL
#endif

const qcheck_backend qc_backend_cpu_avx512 = {
    QCHECK_BACKEND_HEADER,
    .name = "cpu-avx512",
    .doc = "AVX-512 F/BW/VL/DQ kernels (kernels/cpu/): cast to every minifloat and e8m0 (every rule), quant "
           "tensor/token/token_group/block/mx/nvfp4 (every profile; row-major scales, sf128x4 on byte scales), "
           "layout sf128x4 and block_scale_interleave (1-byte elements), fnuz_normalize; declines the rest",
    .unavailable = qc_cpu_avx512_unavailable,
    AVX512_SLOTS};

/* ---- cpu-amx (amx_gemm.c) ---- */

/* The features the AMX kernels execute, by cpuid (Intel SDM vol. 2A, CPUID leaf 07H): subleaf 0
 * EDX bit 22 AMX-BF16, bit 24 AMX-TILE, bit 25 AMX-INT8; subleaf 1 EAX bit 5 AVX512-BF16 (the
 * fp8 unpack's VCVTNE2PS2BF16). Returns the names of the missing ones ("" when none). */
static const char *amx_missing_features(char *buf, size_t n)
{
    unsigned a = 0, b = 0, c = 0, d = 0, a1 = 0, b1 = 0, c1 = 0, d1 = 0;
    int ok0 = __get_cpuid_count(7, 0, &a, &b, &c, &d), ok1 = ok0 && a >= 1 && __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1);
    snprintf(buf, n, "%s%s%s%s", ok0 && (d >> 24 & 1) ? "" : " amx-tile", ok0 && (d >> 22 & 1) ? "" : " amx-bf16",
             ok0 && (d >> 25 & 1) ? "" : " amx-int8", ok1 && (a1 >> 5 & 1) ? "" : " avx512-bf16");
    return buf;
}

/* Linux (>= 5.16) hands a process the AMX tile data state only on request: arch_prctl(
 * ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18) (Documentation/arch/x86/xstate.rst);
 * without it the first tile instruction faults. The request is process-wide and idempotent. */
const char *qc_cpu_amx_unavailable(void)
{
#if !defined(QC_CPU_AMX_BUILT)
    return "this build's compiler cannot emit AMX + AVX512-BF16 (QC_HAVE_AMX off): amx_gemm.c not compiled";
#elif !defined(__x86_64__) || !defined(__linux__)
    return "not x86-64 Linux: the AMX tile permission is requested with Linux's arch_prctl";
#else
    static char why[256];
    char missing[96];
    if (qc_cpu_avx512_unavailable())
        return "cpuid: this CPU lacks AVX-512 F/BW/VL/DQ (the AMX kernels' unpack and epilogues use it)";
    if (amx_missing_features(missing, sizeof missing)[0]) {
        snprintf(why, sizeof why, "cpuid: this CPU lacks%s (leaf 7: AMX tiles, TDPBF16PS, TDPBUSD, VCVTNE2PS2BF16)",
                 missing);
        return why;
    }
    if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) != 0) {
        snprintf(why, sizeof why, "arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) failed: %s (Linux >= 5.16 "
                 "grants the AMX tile state)", strerror(errno));
        return why;
    }
    return NULL;
#endif
}

#if defined(QC_CPU_AMX_BUILT)

static qcheck_status amx_declines(qcheck_ctx *ctx, const qcheck_gemm_args *a)
{
    return qcheck_say(ctx, QCHECK_DECLINED, "gemm kind %s model %s out %s (cpu-amx: fp8_block model=sgl-cpu with e4m3fn "
               "128x128 weights, int8_rowwise; out bf16 or f32)", qcref_gemm_kind(a->kind)->name, a->model,
               qc_format_name(a->out));
}

/* fp8_block under model sgl-cpu: bf16 activations, e4m3fn 128x128 block weights with row-major fp32 scales. */
static int fp8_block_form(const qcheck_gemm_args *a)
{
    const qcheck_quant_spec *b = a->b.spec;
    return a->kind == QC_GEMM_FP8_BLOCK && !strcmp(a->model, "sgl-cpu") && a->a.form == QCHECK_FORM_BF16 &&
           a->b.form == QCHECK_FORM_QUANTIZED && b->recipe == QC_RECIPE_BLOCK && b->policy.elem == QC_E4M3FN &&
           b->policy.block_r == 128 && b->policy.block_c == 128 && !b->has_sf_layout;
}

static qcheck_status amx_gemm(const qcheck_gemm_args *a, qcheck_ctx *ctx)
{
    int int8 = a->kind == QC_GEMM_INT8_ROWWISE && a->a.form == QCHECK_FORM_INT8_ROW;
    if ((!int8 && !fp8_block_form(a)) || a->out == QC_F16)
        return amx_declines(ctx, a);
    const char *why = qc_cpu_amx_unavailable(); /* this process's tile permission (a runner's child) */
    if (why)
        return qcheck_say(ctx, QCHECK_FAILED, "cpu-amx: %s", why);
    qc_amx_weights w;
    qc_amx_act act = {0};
    int f32 = a->out == QC_F32, rc;
    const float *bias = a->bias.data;
    if (int8)
        rc = qc_amx_pack_s8(a->b.codes.data, a->n, a->k, &w) || qc_amx_act_u8(a->a.codes.data, a->m, a->k, &w, &act) ||
             qc_amx_gemm_s8(&act, a->a.scale.data, &w, a->b.scale.data, bias, f32, a->c.data, 0, a->n);
    else
        rc = qc_amx_pack_fp8(a->b.codes.data, a->b.scale.data, a->n, a->k, &w) ||
             qc_amx_act_bf16(a->a.codes.data, a->m, a->k, &w, &act) ||
             qc_amx_gemm_fp8(&act, &w, bias, f32, a->c.data, 0, a->n);
    qc_amx_act_free(&act);
    qc_amx_weights_free(&w);
    return rc ? qcheck_say(ctx, QCHECK_FAILED, "out of memory in the AMX kernel") : QCHECK_OK;
}

static float bf16_value(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}


/* The scratch of the MoE: ic2 [rows, hidden] in slot order, one expert's gathered rows and its
 * ic0 / ic1 / C, its weight codes and scales, which rows it has. */
typedef struct moe_buffers {
    uint16_t *ic2, *a, *ic0, *ic1, *cy;
    uint8_t *codes;
    float *sc;
    int64_t *which;
} moe_buffers;

/* One expert with tokens: pack w13 and w2 once, gather its rows, qc_amx_moe_expert, then copy_mul
 * into ic2 in slot order; the kernel's ic0 / ic1 / C go to the stages gemm1.h / act.a / gemm2.y. */
static int moe_expert(const qcheck_moe_cpu_args *a, moe_buffers *m, int64_t e, float *st1, float *st2, float *st3)
{
    int64_t hd = a->hidden, in = a->inter, rows = a->tokens * a->slots, cnt = 0;
    const int32_t *ids = a->topk_ids.data;
    const float *wts = a->topk_weights.data;
    for (int64_t r = 0; r < rows; r++)
        if (ids[r] == e) {
            memcpy(m->a + cnt * hd, (const uint16_t *)a->x.data + (r / a->slots) * hd, (size_t)hd * 2);
            m->which[cnt++] = r;
        }
    if (!cnt)
        return 0; /* no tokens: its weights are never packed */
    int64_t ns13 = ((2 * in + 127) / 128) * ((hd + 127) / 128);
    qc_amx_weights w13, w2;
    if (a->weights(a->weights_self, e, 0, m->codes, m->sc) || qc_amx_pack_fp8(m->codes, m->sc, 2 * in, hd, &w13))
        return 2;
    if (a->weights(a->weights_self, e, 1, m->codes, m->sc + ns13) ||
        qc_amx_pack_fp8(m->codes, m->sc + ns13, hd, in, &w2)) {
        qc_amx_weights_free(&w13);
        return 2;
    }
    int rc = qc_amx_moe_expert(m->a, cnt, hd, in, &w13, &w2, m->ic0, m->ic1, m->cy) ? 2 : 0;
    for (int64_t q = 0; !rc && q < cnt; q++) {
        int64_t r = m->which[q];
        qc_amx_copy_mul(m->cy + q * hd, wts[r], hd, m->ic2 + r * hd);
        for (int64_t j = 0; st1 && j < 2 * in; j++)
            st1[r * 2 * in + j] = bf16_value(m->ic0[q * 2 * in + j]);
        for (int64_t j = 0; st2 && j < in; j++)
            st2[r * in + j] = bf16_value(m->ic1[q * in + j]);
        for (int64_t j = 0; st3 && j < hd; j++)
            st3[r * hd + j] = bf16_value(m->cy[q * hd + j]);
    }
    qc_amx_weights_free(&w13);
    qc_amx_weights_free(&w2);
    return rc;
}

static qcheck_status amx_moe_cpu(const qcheck_moe_cpu_args *a, qcheck_ctx *ctx)
{
    const char *why = qc_cpu_amx_unavailable();
    if (why)
        return qcheck_say(ctx, QCHECK_FAILED, "cpu-amx: %s", why);
    int64_t t = a->tokens, hd = a->hidden, in = a->inter, kk = a->slots, rows = t * kk, most = 0;
    for (int64_t e = 0; e < a->experts; e++) { /* the largest expert's row count sizes the buffers */
        int64_t n = 0;
        for (int64_t r = 0; r < rows; r++)
            n += ((const int32_t *)a->topk_ids.data)[r] == e;
        most = n > most ? n : most;
    }
    int64_t ns = ((2 * in + 127) / 128) * ((hd + 127) / 128) + ((hd + 127) / 128) * ((in + 127) / 128);
    moe_buffers m = {malloc((size_t)(rows * hd) * 2 + 8), malloc((size_t)(most * hd) * 2 + 8),
                     malloc((size_t)(most * 2 * in) * 2 + 8), malloc((size_t)(most * in) * 2 + 8),
                     malloc((size_t)(most * hd) * 2 + 8), malloc((size_t)(2 * in * hd) + 8), malloc((size_t)ns * 4 + 8),
                     malloc((size_t)most * 8 + 8)};
    int rc = !m.ic2 || !m.a || !m.ic0 || !m.ic1 || !m.cy || !m.codes || !m.sc || !m.which;
    qcheck_stage *s1 = qcheck_stage_find(a->stages, a->nstages, "gemm1.h");
    qcheck_stage *s2 = qcheck_stage_find(a->stages, a->nstages, "act.a");
    qcheck_stage *s3 = qcheck_stage_find(a->stages, a->nstages, "gemm2.y");
    float *st1 = s1 ? s1->t.data : NULL, *st2 = s2 ? s2->t.data : NULL, *st3 = s3 ? s3->t.data : NULL;
    for (int64_t e = 0; !rc && e < a->experts; e++)
        rc = moe_expert(a, &m, e, st1, st2, st3);
    for (int64_t tk = 0; !rc && tk < t; tk++)
        qc_amx_sum(m.ic2 + tk * kk * hd, kk, hd, (uint16_t *)a->out.data + tk * hd);
    for (int i = 0; !rc && i < a->nstages; i++)
        a->stages[i].filled = &a->stages[i] == s1 || &a->stages[i] == s2 || &a->stages[i] == s3;
    free(m.ic2), free(m.a), free(m.ic0), free(m.ic1), free(m.cy), free(m.codes), free(m.sc), free(m.which);
    return rc ? qcheck_say(ctx, QCHECK_FAILED, "out of memory (or no weights) in the AMX MoE") : QCHECK_OK;
}

#define AMX_SLOTS .gemm = amx_gemm, .moe_cpu = amx_moe_cpu
#else
#define AMX_SLOTS .gemm = NULL
#endif

const qcheck_backend qc_backend_cpu_amx = {
    QCHECK_BACKEND_HEADER,
    .name = "cpu-amx",
    .doc = "AMX-BF16 / AMX-INT8 kernels (kernels/cpu/amx_gemm.c), sgl-kernel CPU semantics: gemm kind=fp8_block "
           "model=sgl-cpu (e4m3fn 128x128 block weights unpacked to bf16, TDPBF16PS, fp32 accumulation) and "
           "kind=int8_rowwise (u8 x s8 TDPBUSD with s8s8 compensation, bit-exact epilogue), out bf16/f32, declines "
           "every other gemm; moe_cpu (sgl-kernel fused_experts_cpu, fp8 w8a16: bf16 ic0 / ic1 / C / ic2 caches, "
           "exp_u20 silu, single-threaded)",
    .unavailable = qc_cpu_amx_unavailable,
    AMX_SLOTS};
