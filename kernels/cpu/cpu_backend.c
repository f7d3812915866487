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
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "amx_gemm.h"
#include "cpu_avx512.h"
#include "gemm_op.h"
#include "layouts/layouts.h"
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

static const qc_impl amx_impls[] = {{"gemm", amx_gemm}};
#define AMX_NIMPLS 1
#else
static const qc_impl amx_impls[] = {{"gemm", NULL}};
#define AMX_NIMPLS 0
#endif

const qc_backend qc_backend_cpu_amx = {
    "cpu-amx", "cpu",
    "AMX-BF16 / AMX-INT8 kernels (kernels/cpu/amx_gemm.c), sgl-kernel CPU semantics: gemm kind=fp8_block "
    "model=sgl-cpu (e4m3fn 128x128 block weights unpacked to bf16, TDPBF16PS, fp32 accumulation) and "
    "kind=int8_rowwise (u8 x s8 TDPBUSD with s8s8 compensation, bit-exact epilogue), out bf16/f32; every other "
    "gemm and out=f16 fall back to the reference",
    qc_cpu_amx_unavailable, amx_impls, AMX_NIMPLS};
