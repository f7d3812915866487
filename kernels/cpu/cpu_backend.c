/* cpu_backend.c: the registration table of the CPU backends (STYLE.md, BLIS: kernels in their
 * own files, one table here). Compiled without AVX-512 flags, so that the cpuid checks run on any
 * x86-64 CPU; the kernels (cast_avx512.c, quant_avx512.c, swizzle_avx512.c) are called only after
 * unavailable() returned NULL.
 *
 * cpu-avx512 implements:
 *   cast    vectorized: fp32 -> every minifloat (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e2m1, e2m3,
 *           e3m2, bf16, f16) under every policy, and e8m0 under every rule but log2-ceil.
 *           Falls back to the reference: e8m0 log2-ceil.
 *   quant   vectorized: tensor, token, token_group (every profile), mxfp8/mxfp6/mxfp4 (every
 *           profile but modelopt, whose e8m0 is log2-ceil), nvfp4 (every profile). Falls back:
 *           block, modelopt. Serialization (FP4 packing, scale layouts) is the harness's.
 *   layout  vectorized: sf128x4 and block_scale_interleave with 1-byte scales. Falls back: every
 *           other map and 2-byte elements.
 *   fnuz_normalize  vectorized (transform_avx512.c).
 * cpu-amx implements nothing: this machine's CPU has no AMX, so nothing written for it could be
 * tested here; it is registered so that its absence is reported with the reason. */
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "cpu_avx512.h"
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
    "AVX-512 F/BW/VL/DQ kernels (kernels/cpu/): cast to every minifloat and e8m0 (not log2-ceil), quant "
    "tensor/token/token_group/mx/nvfp4 (not block, not modelopt), layout sf128x4 and block_scale_interleave "
    "(1-byte scales), fnuz_normalize; the rest falls back to the reference",
    qc_cpu_avx512_unavailable, avx512_impls, AVX512_NIMPLS};

/* AMX: Linux hands out the tile data state only after arch_prctl(ARCH_REQ_XCOMP_PERM,
 * XFEATURE_XTILEDATA); with cpuid reporting amx-tile that request would be made here. This CPU has
 * no AMX (cpuid amx_tile, amx_int8, amx_bf16 absent), so no AMX kernel exists: none could be tested. */
static const char *amx_unavailable(void)
{
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    /* cpuid leaf 7 subleaf 0, EDX bit 24: AMX-TILE (Intel SDM vol. 2A, CPUID) */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)))
        return "cpuid: this CPU has no AMX (amx-tile); no AMX kernels are written yet (none could be tested here; "
               "with AMX, arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) would be requested)";
#endif
    return "no AMX kernels are written yet: they were never run on an AMX CPU";
}

static const qc_impl amx_impls[] = {{"cast", NULL}};

const qc_backend qc_backend_cpu_amx = {"cpu-amx", "cpu", "AMX kernels: none yet (SKIPPED with the reason)",
                                       amx_unavailable, amx_impls, 0};
