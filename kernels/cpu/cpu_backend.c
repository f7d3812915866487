/* cpu_backend.c: the registration table of the CPU backends (STYLE.md, BLIS: kernels in their
 * own files, one table here). Compiled without AVX-512 flags, so that the cpuid checks run on any
 * x86-64 CPU; the kernels (cast_avx512.c, quant_avx512.c, swizzle_avx512.c, transform_avx512.c,
 * amx_gemm.c) are called only after their backend's unavailable() returned NULL.
 *
 * cpu-avx512 implements:
 *   cast    vectorized: fp32 -> every minifloat (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e2m1, e2m3,
 *           e3m2, bf16, f16) under every policy, and e8m0 under every rule (log2-ceil through a
 *           log2f threshold table). Falls back to the reference: inputs that are not fp32.
 *   quant   vectorized: tensor, token, token_group, block 128x128, mxfp8/mxfp6/mxfp4, nvfp4 (every
 *           profile, modelopt included). Falls back: inputs that are not fp32, elements wider than
 *           8 bits. Serialization (FP4 packing, scale layouts) is the harness's.
 *   layout  vectorized: sf128x4 and block_scale_interleave with 1-byte scales. Falls back: every
 *           other map and 2-byte elements.
 *   fnuz_normalize  vectorized (transform_avx512.c).
 * cpu-amx implements (amx_gemm.c; needs cpuid amx-tile, amx-bf16, amx-int8, avx512-bf16 and the
 * Linux tile permission, arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); else SKIPPED with
 * the missing feature named):
 *   gemm    kind=fp8_block model=sgl-cpu: sgl-kernel's fp8_scaled_mm_cpu (W8A16, weights unpacked
 *           to bf16 per tile, AMX-BF16, fp32 accumulation), checked within c.bound;
 *           kind=int8_rowwise: sgl-kernel's int8_scaled_mm_cpu (W8A8, AMX-INT8 u8 x s8 with the
 *           s8s8 compensation words), bit-exact. Output bf16 or f32, any M, N, K (zero padding).
 *           Falls back to the reference: every other kind or model, e5m2 or non-128 blocks, out=f16.
 *   The AMX kernels were developed on a CPU without AMX and run only on the lent device machine
 *   (ci/amx-bundle.sh); docs/DECISIONS.md "AMX" says how they are validated. */
#define _DEFAULT_SOURCE /* syscall(2) */
#include <errno.h>
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
#include "gemm_op.h"
#include "layouts/layouts.h"
#include "moe_cpu_op.h"
#include "quant_job.h"
#include "registry.h"

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

static int fallback(qc_op_call *c, const char *op) { return qc_op_find(op)->reference(c); }

static int avx512_cast(qc_op_call *c)
{
    qc_format to;
    qc_cast_policy p;
    const qc_tensor *x = qc_set_find((qc_tensor_set *)c->in, "x");
    if (!x || x->storage != QC_ST_F32 || qc_params_get_format(c->params, "to", &to, c->err, c->errlen) ||
        qc_params_policy(c->params, to, &p, c->err, c->errlen) || !qc_avx512_cast_supported(to, &p))
        return fallback(c, "cast"); /* the reference reports bad params itself */
    int64_t n = qc_tensor_numel(x);
    qc_tensor y;
    if (qc_tensor_alloc(&y, "y", qc_format_storage(to), qc_format_name(to), 1, &n)) {
        snprintf(c->err, c->errlen, "out of memory for output 'y' (%lld elements)", (long long)n);
        return 2;
    }
    qc_avx512_cast(to, &p, x->data, (size_t)n, y.data);
    if (!qc_set_add(c->out, &y)) {
        qc_tensor_free(&y);
        return 2;
    }
    return 0;
}

static int quant_kernel(const qc_quant_job *j, const float *x, qc_quantized *qz)
{
    return qc_avx512_quant(j->recipe, &j->policy, x, j->rows, j->cols, j->has_static ? &j->static_scale : NULL,
                           j->has_gscale ? &j->gscale_encode : NULL, qz);
}

static int avx512_quant(qc_op_call *c)
{
    qc_quant_job j;
    if (qc_quant_job_from_params(c->params, &j, c->err, c->errlen) || j.in_dtype != QC_F32 ||
        !qc_avx512_quant_supported(j.recipe, &j.policy))
        return fallback(c, "quant");
    return qc_quant_op_kernel(c, quant_kernel);
}

int qc_layout_from_params(qc_op_call *c, qc_layout *L); /* harness/ops/op_layout.c */

static int avx512_layout(qc_op_call *c)
{
    qc_layout L;
    const char *map = qc_param_or(c->params, "map", "");
    const qc_tensor *x = qc_set_find((qc_tensor_set *)c->in, "x");
    if ((strcmp(map, "sf128x4") && strcmp(map, "block_scale_interleave")) || qc_layout_from_params(c, &L) ||
        L.in_bits != 8 || !x || x->storage != QC_ST_U8 || x->nbytes != qcref_layout_src_bytes(&L))
        return fallback(c, "layout");
    int64_t n = (int64_t)qcref_layout_dst_bytes(&L);
    qc_tensor y;
    if (qc_tensor_alloc(&y, "y", QC_ST_U8, "u8", 1, &n)) {
        snprintf(c->err, c->errlen, "out of memory");
        return 2;
    }
    snprintf(y.layout, sizeof y.layout, "%s", L.desc->name);
    qc_avx512_sf128x4(x->data, L.B, L.R, L.C, y.data);
    if (!qc_set_add(c->out, &y)) {
        qc_tensor_free(&y);
        return 2;
    }
    return 0;
}

int qc_fnuz_normalize_outputs(qc_op_call *c, qc_tensor **w, qc_tensor **scale); /* harness/ops/op_transform.c */

static int avx512_fnuz_normalize(qc_op_call *c)
{
    qc_tensor *w, *scale;
    if (qc_fnuz_normalize_outputs(c, &w, &scale))
        return 2;
    qc_avx512_fnuz_normalize(w->data, (size_t)qc_tensor_numel(w), scale->data, (size_t)qc_tensor_numel(scale));
    return 0;
}

static const qc_impl avx512_impls[] = {{"cast", avx512_cast},
                                       {"quant", avx512_quant},
                                       {"layout", avx512_layout},
                                       {"fnuz_normalize", avx512_fnuz_normalize}};
#define AVX512_NIMPLS 4
#else
static const qc_impl avx512_impls[] = {{"cast", NULL}};
#define AVX512_NIMPLS 0
#endif

const qc_backend qc_backend_cpu_avx512 = {
    "cpu-avx512", "cpu",
    "AVX-512 F/BW/VL/DQ kernels (kernels/cpu/): cast to every minifloat and e8m0 (every rule), quant "
    "tensor/token/token_group/block/mx/nvfp4 (every profile), layout sf128x4 and block_scale_interleave "
    "(1-byte scales), fnuz_normalize; the rest falls back to the reference",
    qc_cpu_avx512_unavailable, avx512_impls, AVX512_NIMPLS};

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

static int amx_gemm_run(const qc_gemm_operands *o, qc_tensor *t)
{
    qc_amx_weights w;
    qc_amx_act a = {0};
    int f32 = o->out == QC_F32, rc;
    if (o->kind == QC_GEMM_INT8_ROWWISE)
        rc = qc_amx_pack_s8(o->b_s8, o->n, o->k, &w) || qc_amx_act_u8(o->a_s8, o->m, o->k, &w, &a) ||
             qc_amx_gemm_s8(&a, o->a_scale, &w, o->b_scale, o->bias, f32, t->data, 0, o->n);
    else
        rc = qc_amx_pack_fp8(o->b_codes, o->b_block_scale, o->n, o->k, &w) ||
             qc_amx_act_bf16(o->a_bf16, o->m, o->k, &w, &a) || qc_amx_gemm_fp8(&a, &w, o->bias, f32, t->data, 0, o->n);
    qc_amx_act_free(&a);
    qc_amx_weights_free(&w);
    return rc ? 2 : 0;
}

/* gemm: kind=fp8_block model=sgl-cpu (e4m3fn, 128x128 blocks) and kind=int8_rowwise, out bf16 or
 * f32, on the operands the reference op quantizes (qc_gemm_operands_get); everything else, and
 * out=f16, falls back to the reference. */
static int amx_gemm(qc_op_call *c)
{
    qc_gemm_operands o;
    int rc = qc_gemm_operands_get(c, &o);
    if (rc == 1 || (rc == 0 && o.out == QC_F16)) {
        qc_gemm_operands_free(&o);
        return fallback(c, "gemm");
    }
    if (rc) {
        qc_gemm_operands_free(&o);
        return rc;
    }
    int64_t shape[2] = {o.m, o.n};
    qc_tensor t;
    const char *why = qc_cpu_amx_unavailable(); /* this process's tile permission (a runner's child) */
    if (why) {
        snprintf(c->err, c->errlen, "cpu-amx: %s", why);
        qc_gemm_operands_free(&o);
        return 1;
    }
    if (qc_tensor_alloc(&t, "c", qc_format_storage(o.out), qc_format_name(o.out), 2, shape)) {
        snprintf(c->err, c->errlen, "out of memory for c [%lld, %lld]", (long long)o.m, (long long)o.n);
        qc_gemm_operands_free(&o);
        return 2;
    }
    rc = amx_gemm_run(&o, &t);
    qc_gemm_operands_free(&o);
    if (rc)
        snprintf(c->err, c->errlen, "out of memory in the AMX kernel");
    if (rc || !qc_set_add(c->out, &t)) {
        qc_tensor_free(&t);
        return 2;
    }
    return 0;
}

/* moe_cpu (op_moe_cpu.c: sgl-kernel fused_experts_cpu, fp8 w8a16): the reference's routing,
 * bf16 x and weight codes (qc_moe_cpu_setup / qc_moe_cpu_weights); per expert with tokens: pack
 * w13 and w2 once, gather its rows, qc_amx_moe_expert, then copy_mul into ic2 in slot order;
 * then sum_stub per token. Also writes the kernel's stage.gemm1.h (ic0), stage.act.a (ic1) and
 * stage.gemm2.y (C) for the investigation table, and the reference's stage.route.*. */
static int amx_moe_cpu(qc_op_call *c)
{
    const char *why = qc_cpu_amx_unavailable();
    if (why) {
        snprintf(c->err, c->errlen, "cpu-amx: %s", why);
        return 1;
    }
    qc_moe_cpu p;
    if (qc_moe_cpu_setup(c, &p)) {
        qc_moe_cpu_free(&p);
        return 2;
    }
    int64_t t = p.cfg.t, hd = p.cfg.h, in = p.cfg.i, kk = p.kk, ne = p.cfg.e + p.cfg.shared, most = 0;
    for (int64_t e = 0; e < ne; e++)
        most = p.count[e] > most ? p.count[e] : most;
    int64_t sh[4][2] = {{t, hd}, {p.rows, 2 * in}, {p.rows, in}, {p.rows, hd}};
    static const char *names[4] = {"out", "stage.gemm1.h", "stage.act.a", "stage.gemm2.y"};
    qc_tensor ts[4];
    int nt = 0, rc = 0;
    for (; nt < 4 && !rc; nt++)
        rc = qc_tensor_alloc(&ts[nt], names[nt], nt ? QC_ST_F32 : QC_ST_U16, nt ? "f32" : "bf16", 2, sh[nt]);
    nt -= rc ? 1 : 0;
    uint16_t *ic2 = malloc((size_t)(p.rows * hd) * 2 + 8), *a = malloc((size_t)(most * hd) * 2 + 8);
    uint16_t *ic0 = malloc((size_t)(most * 2 * in) * 2 + 8), *ic1 = malloc((size_t)(most * in) * 2 + 8);
    uint16_t *cy = malloc((size_t)(most * hd) * 2 + 8);
    uint8_t *codes = malloc((size_t)(2 * in * hd) + 8);
    float *sc = malloc((size_t)(qc_moe_cpu_nscales(&p, 0) + qc_moe_cpu_nscales(&p, 1)) * 4 + 8);
    rc = rc || !ic2 || !a || !ic0 || !ic1 || !cy || !codes || !sc ? 2 : 0;
    if (rc)
        snprintf(c->err, c->errlen, "out of memory in the AMX MoE");
    float *st1 = rc ? NULL : ts[1].data, *st2 = rc ? NULL : ts[2].data, *st3 = rc ? NULL : ts[3].data;
    for (int64_t e = 0; !rc && e < ne; e++) {
        qc_amx_weights w13, w2;
        int64_t cnt = 0, *which = NULL;
        if (!p.count[e])
            continue; /* no tokens: its weights are never packed */
        if (qc_moe_cpu_weights(c, &p, e, 0, codes, sc) || qc_amx_pack_fp8(codes, sc, 2 * in, hd, &w13)) {
            rc = 2;
            break;
        }
        if (qc_moe_cpu_weights(c, &p, e, 1, codes, sc) || qc_amx_pack_fp8(codes, sc, hd, in, &w2)) {
            qc_amx_weights_free(&w13);
            rc = 2;
            break;
        }
        which = malloc(sizeof *which * (size_t)p.count[e] + 8);
        for (int64_t r = 0; which && r < p.rows; r++)
            if (p.ids[r] == e) {
                memcpy(a + cnt * hd, p.x + (r / kk) * hd, (size_t)hd * 2);
                which[cnt++] = r;
            }
        rc = !which || qc_amx_moe_expert(a, cnt, hd, in, &w13, &w2, ic0, ic1, cy) ? 2 : 0;
        for (int64_t q = 0; !rc && q < cnt; q++) {
            int64_t r = which[q];
            qc_amx_copy_mul(cy + q * hd, p.w[r], hd, ic2 + r * hd);
            for (int64_t j = 0; j < 2 * in; j++)
                st1[r * 2 * in + j] = qc_f32_from_bits((uint32_t)ic0[q * 2 * in + j] << 16);
            for (int64_t j = 0; j < in; j++)
                st2[r * in + j] = qc_f32_from_bits((uint32_t)ic1[q * in + j] << 16);
            for (int64_t j = 0; j < hd; j++)
                st3[r * hd + j] = qc_f32_from_bits((uint32_t)cy[q * hd + j] << 16);
        }
        if (rc)
            snprintf(c->err, c->errlen, "out of memory in the AMX MoE expert %lld", (long long)e);
        free(which);
        qc_amx_weights_free(&w13);
        qc_amx_weights_free(&w2);
    }
    for (int64_t tk = 0; !rc && tk < t; tk++)
        qc_amx_sum(ic2 + tk * kk * hd, kk, hd, (uint16_t *)ts[0].data + tk * hd);
    for (int i = 0; i < nt; i++)
        if (rc || !qc_set_add(c->out, &ts[i])) {
            qc_tensor_free(&ts[i]);
            rc = rc ? rc : 2;
        }
    rc = rc || qc_moe_cpu_route_stages(c, &p);
    free(ic2), free(a), free(ic0), free(ic1), free(cy), free(codes), free(sc);
    qc_moe_cpu_free(&p);
    return rc ? 2 : 0;
}

static const qc_impl amx_impls[] = {{"gemm", amx_gemm}, {"moe_cpu", amx_moe_cpu}};
#define AMX_NIMPLS 2
#else
static const qc_impl amx_impls[] = {{"gemm", NULL}, {"moe_cpu", NULL}};
#define AMX_NIMPLS 0
#endif

const qc_backend qc_backend_cpu_amx = {
    "cpu-amx", "cpu",
    "AMX-BF16 / AMX-INT8 kernels (kernels/cpu/amx_gemm.c), sgl-kernel CPU semantics: gemm kind=fp8_block "
    "model=sgl-cpu (e4m3fn 128x128 block weights unpacked to bf16, TDPBF16PS, fp32 accumulation) and "
    "kind=int8_rowwise (u8 x s8 TDPBUSD with s8s8 compensation, bit-exact epilogue), out bf16/f32; every other "
    "gemm and out=f16 fall back to the reference; moe_cpu (sgl-kernel fused_experts_cpu, fp8 w8a16: bf16 ic0 / ic1 / "
    "C / ic2 caches, exp_u20 silu, single-threaded; no fallback needed: moe_cpu only has this model)",
    qc_cpu_amx_unavailable, amx_impls, AMX_NIMPLS};
