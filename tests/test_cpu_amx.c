/* test_cpu_amx.c: the cpu-amx kernels (kernels/cpu/amx_gemm.c) against the reference gemm op.
 *   fp8    kind=fp8_block model=sgl-cpu: every element within the reference's c.bound, through the
 *          backend (the adapter) and through the kernel directly;
 *   int8   kind=int8_rowwise: bit for bit, through the backend and the kernel;
 *   bf16   the plain bf16 kernel (the benchmark's) against an fp64 dot within gamma(K) sum|ab|;
 * on M = 0, 1, 7, 33, 64, N = 1, 16, 17, 130, 300 (tails of 16 and 32, several 256-column panels),
 * K = 128, 384, 640 and K tails (96 / 160: zero padding), bias on and off, bf16 and
 * f32 outputs. The kernel writes into a poisoned buffer (0xA5 bytes) followed by guard bytes: every
 * element must be written (a poisoned element fails the comparison) and the guard left intact;
 * column ranges [0, 32) + [32, N) written by two calls must equal one call.
 * moe_cpu (amx_moe.c, sgl-kernel fused_experts_cpu fp8 w8a16): through the backend within the
 * reference's out.bound on tokens 0, 1, 7, 40 with experts that get no tokens, top-k 1..4,
 * hidden 128..384, inter 128/256, route stages bit for bit; the elementwise stubs (silu_and_mul
 * over every bf16 gate, copy_mul, sum) bit for bit against scalar C of the same fp32 operations,
 * and qc_amx_moe_expert, into poisoned buffers with guards.
 * Exit 77 (SKIPPED) with the reason when the CPU, the kernel or the build lacks AMX. Seeds are fixed
 * and printed with every failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amx_gemm.h"
#include "amx_moe.h"
#include "moe_cpu_op.h"
#include "generate.h"
#include "registry.h"

#include "gemm_inputs.h"

static int failures;
#define GUARD 64

static int gen_inputs(const char *kv, uint64_t seed, qc_tensor_set *in, qc_params *p)
{
    char err[512];
    memset(p, 0, sizeof *p);
    if (qc_params_parse(p, kv, err, sizeof err)) {
        printf("FAIL params %s: %s\n", kv, err);
        return 1;
    }
    const char *fill[3] = {qc_param_or(p, "dist", "normal"), qc_param_or(p, "dist", "normal"), "integers"};
    const double scale[3] = {2, 2, 4};
    if (gemm_inputs(p, seed, fill, scale, in, err, sizeof err)) {
        printf("FAIL %s\n", err);
        return 1;
    }
    return 0;
}

static double code_value(const qc_tensor *t, int64_t i)
{
    qc_cast_policy p = qcref_default_policy();
    if (t->storage == QC_ST_U16)
        return qcref_decode(QC_BF16, ((const uint16_t *)t->data)[i], &p);
    return ((const float *)t->data)[i];
}

/* got (codes of c's format) against the reference's c: within c.bound (bitexact: bound 0 and the
 * same bits). Returns mismatches, printing the first. */
static int64_t compare_c(const char *what, const char *kv, uint64_t seed, const qc_tensor *ref, const double *bound,
                         const void *got, int bitexact)
{
    int64_t n = qc_tensor_numel(ref), bad = 0;
    size_t es = ref->storage == QC_ST_U16 ? 2 : 4;
    qc_tensor g = *ref;
    g.data = (void *)got;
    for (int64_t i = 0; i < n; i++) {
        double e = code_value(ref, i), v = code_value(&g, i);
        int ok = bitexact ? memcmp((const char *)ref->data + i * (int64_t)es, (const char *)got + i * (int64_t)es, es) == 0
                          : (isnan(e) ? isnan(v) : fabs(v - e) <= bound[i]);
        if (!ok && bad++ == 0)
            printf("FAIL %s %s (seed %llu) element %lld: expected %.9g got %.9g (bound %.3g)\n", what, kv,
                   (unsigned long long)seed, (long long)i, e, v, bound[i]);
    }
    return bad;
}

static int64_t guard_broken(const uint8_t *buf, size_t bytes)
{
    for (size_t i = 0; i < GUARD; i++)
        if (buf[bytes + i] != 0xA5)
            return 1;
    return 0;
}

/* The operands the gemm op's ABI adapter hands a backend, captured by a backend whose gemm slot
 * keeps a copy (so the kernel is run directly on exactly what the backend got). */
typedef struct operands {
    int s8;
    int64_t m, n, k;
    void *a, *b;
    float *a_scale, *b_scale, *bias;
} operands;
static operands captured;

static void *copy_of(const qcheck_tensor *t)
{
    void *p = malloc(t->nbytes + 8);
    if (p && t->nbytes)
        memcpy(p, t->data, t->nbytes);
    return p;
}

static qcheck_status capture_gemm(const qcheck_gemm_args *g, qcheck_ctx *ctx)
{
    (void)ctx;
    captured = (operands){g->kind == QC_GEMM_INT8_ROWWISE, g->m, g->n, g->k, copy_of(&g->a.codes), copy_of(&g->b.codes),
                          g->a.scale.data ? copy_of(&g->a.scale) : NULL, copy_of(&g->b.scale),
                          g->bias.data ? copy_of(&g->bias) : NULL};
    return QCHECK_OK;
}

static const qcheck_backend capture = {QCHECK_BACKEND_HEADER, .name = "capture", .gemm = capture_gemm};

static void operands_free(operands *o)
{
    free(o->a), free(o->b), free(o->a_scale), free(o->b_scale), free(o->bias);
    memset(o, 0, sizeof *o);
}

/* The kernel on the operands, into a poisoned buffer, in one call and in two column ranges. */
static int64_t kernel_direct(const operands *o, int f32, void *c1, void *c2)
{
    qc_amx_weights w;
    qc_amx_act a = {0};
    int s8 = o->s8, rc;
    rc = s8 ? qc_amx_pack_s8(o->b, o->n, o->k, &w) || qc_amx_act_u8(o->a, o->m, o->k, &w, &a)
            : qc_amx_pack_fp8(o->b, o->b_scale, o->n, o->k, &w) || qc_amx_act_bf16(o->a, o->m, o->k, &w, &a);
    int64_t split = o->n > 32 ? 32 : o->n;
    for (int call = 0; !rc && call < 3; call++) {
        int64_t n0 = call == 2 ? split : 0, n1 = call == 1 ? split : o->n;
        void *c = call == 0 ? c1 : c2;
        rc = s8 ? qc_amx_gemm_s8(&a, o->a_scale, &w, o->b_scale, o->bias, f32, c, n0, n1)
                : qc_amx_gemm_fp8(&a, &w, o->bias, f32, c, n0, n1);
    }
    qc_amx_act_free(&a);
    qc_amx_weights_free(&w);
    return rc;
}

/* Another blocking (amx_gemm.h) changes only the loop order over 32 x 32 blocks and how often C
 * is parked between K chunks (fp32 either way): the output bytes must not change. The default's
 * K chunk (2048) holds every K here in one chunk; kc 128 runs up to five, through the accumulator,
 * and mc 32 gives M = 33 and 64 two row groups (the second prefetched during the first). */
static int64_t blocking_changes_bytes(const operands *o, int f32, const uint8_t *c1, size_t nbytes,
                                      const char *kv)
{
    const qc_amx_blocking saved = qc_amx_get_blocking(), other = {64, 128, 32, 64};
    uint8_t *c3 = malloc(nbytes + GUARD), *c4 = malloc(nbytes + GUARD);
    qc_amx_set_blocking(&other);
    int64_t rc = !c3 || !c4 || kernel_direct(o, f32, c3, c4) || memcmp(c1, c3, nbytes) || memcmp(c1, c4, nbytes);
    qc_amx_set_blocking(&saved);
    if (rc)
        printf("FAIL %s: blocking nc 64 kc 128 mc 32 rows 64 changed the output bytes\n", kv);
    free(c3), free(c4);
    return rc;
}

static void check_case(const char *kv, uint64_t seed)
{
    qc_tensor_set in = {0}, ref = {0}, be = {0};
    qc_params p;
    char err[512];
    if (gen_inputs(kv, seed, &in, &p)) {
        failures++;
        return;
    }
    qc_op_call rc_ref = {&p, &in, &ref, err, sizeof err, 0}, rc_be = {&p, &in, &be, err, sizeof err, 0};
    const qc_backend *amx = qc_backend_find("cpu-amx");
    if (!amx || qc_op_find("gemm")->reference(&rc_ref) || qc_backend_call(amx, "gemm", &rc_be)) {
        printf("FAIL %s: %s\n", kv, err);
        failures++;
        qc_set_free(&in), qc_set_free(&ref), qc_set_free(&be);
        return;
    }
    const qc_tensor *c = qc_set_find(&ref, "c"), *gb = qc_set_find(&be, "c");
    const double *bound = qc_set_find(&ref, "c.bound")->data;
    int bitexact = strstr(kv, "int8_rowwise") != NULL;
    int64_t bad = !gb || gb->nbytes != c->nbytes;
    if (bad)
        printf("FAIL %s: the backend's c has %zu bytes, the reference's %zu\n", kv, gb ? gb->nbytes : 0, c->nbytes);
    else
        bad += compare_c("backend", kv, seed, c, bound, gb->data, bitexact);
    operands o;
    uint8_t *c1 = malloc(c->nbytes + GUARD), *c2 = malloc(c->nbytes + GUARD);
    memset(c1, 0xA5, c->nbytes + GUARD), memset(c2, 0xA5, c->nbytes + GUARD);
    qc_tensor_set scratch = {0};
    qc_op_call rc_cap = {&p, &in, &scratch, err, sizeof err, 0};
    int got = qc_op_find("gemm")->abi(&rc_cap, &capture);
    o = captured;
    memset(&captured, 0, sizeof captured);
    qc_set_free(&scratch);
    if (got || kernel_direct(&o, c->storage != QC_ST_U16, c1, c2)) {
        printf("FAIL %s: operands or kernel (%s)\n", kv, err);
        bad++;
    } else {
        bad += compare_c("kernel", kv, seed, c, bound, c1, bitexact);
        bad += compare_c("kernel in two column ranges", kv, seed, c, bound, c2, bitexact);
        if (guard_broken(c1, c->nbytes) || guard_broken(c2, c->nbytes)) {
            printf("FAIL %s: the kernel wrote past c\n", kv);
            bad++;
        }
        bad += blocking_changes_bytes(&o, c->storage != QC_ST_U16, c1, c->nbytes, kv);
    }
    operands_free(&o);
    failures += bad != 0;
    free(c1), free(c2);
    qc_set_free(&in), qc_set_free(&ref), qc_set_free(&be);
}

static void test_gemm_kinds(void)
{
    static const int64_t ms[] = {0, 1, 7, 33, 64}, ns[] = {1, 16, 17, 130, 300}, ks[] = {128, 384, 640, 96, 160};
    static const char *kinds[] = {"kind=fp8_block,model=sgl-cpu", "kind=int8_rowwise"};
    int cases = 0;
    for (int t = 0; t < 2; t++)
        for (int mi = 0; mi < 5; mi++)
            for (int ni = 0; ni < 5; ni++)
                for (int ki = 0; ki < 5; ki++) {
                    if ((mi + ni + ki) % 2 && ms[mi] != 33) /* a thinned sweep; every value of each axis stays */
                        continue;
                    char kv[200];
                    int hb = (mi + ki) % 2, f32 = (ni + ki) % 2;
                    snprintf(kv, sizeof kv, "%s,m=%lld,n=%lld,k=%lld,bias=%d,out=%s,dist=%s", kinds[t],
                             (long long)ms[mi], (long long)ns[ni], (long long)ks[ki], hb, f32 ? "f32" : "bf16",
                             (mi + ni) % 3 ? "normal" : "integers");
                    check_case(kv, 1000 + (uint64_t)(t * 125 + mi * 25 + ni * 5 + ki));
                    cases++;
                }
    check_case("kind=int8_rowwise,m=7,n=130,k=384,bias=1,out=bf16,int8_ties=away", 7);
    check_case("kind=fp8_block,model=sgl-cpu,ue8m0=1,m=7,n=130,k=384,bias=1,out=bf16", 8);
    check_case("kind=fp8_block,model=sgl-cpu,m=40,n=2112,k=2048,out=bf16", 9);
    check_case("kind=int8_rowwise,m=40,n=2112,k=7168,out=bf16", 10);
    /* more rows than the kernels take at once by default (amx_gemm.c rows 2048) */
    check_case("kind=fp8_block,model=sgl-cpu,m=2100,n=96,k=256,bias=1,out=f32", 11);
    check_case("kind=int8_rowwise,m=2100,n=96,k=256,bias=1,out=bf16", 12);
    printf("gemm: %d shape cases + 6 (fp8 within c.bound, int8 bit-exact)\n", cases);
}

/* The plain bf16 kernel (the benchmark's): fp32 accumulation within gamma(K+1) sum |a b| plus the
 * output rounding, against an fp64 dot. */
static void test_bf16_kernel(void)
{
    int64_t m = 33, n = 70, k = 576;
    uint16_t *a = malloc((size_t)(m * k) * 2), *b = malloc((size_t)(n * k) * 2);
    float *c = malloc((size_t)(m * n) * 4 + GUARD);
    uint64_t st = 42;
    for (int64_t i = 0; i < m * k; i++)
        a[i] = (uint16_t)(0x3F00 + (qc_rng_next(&st) & 0xFF)) ^ (uint16_t)(qc_rng_next(&st) & 0x8000);
    for (int64_t i = 0; i < n * k; i++)
        b[i] = (uint16_t)(0x3E80 + (qc_rng_next(&st) & 0x1FF)) ^ (uint16_t)(qc_rng_next(&st) & 0x8000);
    memset(c, 0xA5, (size_t)(m * n) * 4 + GUARD);
    qc_amx_weights w;
    qc_amx_act x = {0};
    int rc = qc_amx_pack_bf16(b, n, k, &w) || qc_amx_act_bf16(a, m, k, &w, &x) ||
             qc_amx_gemm_bf16(&x, &w, NULL, 1, c, 0, n);
    qc_cast_policy p = qcref_default_policy();
    int64_t bad = rc;
    for (int64_t i = 0; !rc && i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double y = 0, s = 0;
            for (int64_t l = 0; l < k; l++) {
                double t = (double)qcref_decode(QC_BF16, a[i * k + l], &p) * qcref_decode(QC_BF16, b[j * k + l], &p);
                y += t, s += fabs(t);
            }
            double u = 0x1p-24 * (double)(k + 1), tol = u / (1 - u) * s;
            if (!(fabs(c[i * n + j] - y) <= tol) && bad++ == 0)
                printf("FAIL bf16 kernel [%lld, %lld]: %.9g, fp64 %.9g, tolerance %.3g\n", (long long)i, (long long)j,
                       c[i * n + j], y, tol);
        }
    bad += guard_broken((const uint8_t *)c, (size_t)(m * n) * 4);
    failures += bad != 0;
    qc_amx_act_free(&x);
    qc_amx_weights_free(&w);
    free(a), free(b), free(c);
}

static uint16_t bf16_code(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

static float bf16_val(uint16_t c) { return qc_f32_from_bits((uint32_t)c << 16); }

/* silu_and_mul over every bf16 gate (u = a fixed spread of values), copy_mul and sum against
 * scalar C with the same fp32 operations, into poisoned buffers with guards. */
static void test_moe_stubs(void)
{
    enum { N = 65536 + 5 };
    uint16_t *in = malloc(2 * N * 2), *out = malloc((N + GUARD) * 2), *c2 = malloc(4 * N * 2);
    int64_t bad = 0;
    for (int64_t i = 0; i < N; i++) {
        in[i] = (uint16_t)i, in[N + i] = bf16_code(0.75f + (float)(i % 13) * 0.125f);
        c2[i] = (uint16_t)(i * 7), c2[N + i] = (uint16_t)(i * 13), c2[2 * N + i] = (uint16_t)(i * 3 + 1), c2[3 * N + i] = (uint16_t)i;
    }
    memset(out, 0xA5, (N + GUARD) * 2);
    qc_amx_silu_and_mul(in, N, out);
    for (int64_t i = 0; i < N; i++) {
        float g = bf16_val(in[i]), u = bf16_val(in[N + i]);
        float pre = g / (1.0f + qc_exp_u20(-g)) * u, e = qc_bf16_rne(pre), k = bf16_val(out[i]);
        /* VCVTNEPS2BF16 flushes an fp32 value below 2^-126 to zero (the model allows it) */
        int same = (isnan(e) && isnan(k)) || memcmp(&e, &k, 4) == 0 || (fabsf(pre) < 0x1p-126f && k == 0);
        if (!same && bad++ < 8)
            printf("FAIL silu_and_mul g=%a u=%a: kernel %a scalar %a\n", (double)g, (double)u, (double)k, (double)e);
    }
    bad += guard_broken((const uint8_t *)out, N * 2);
    for (int topk = 1; topk <= 4; topk++) {
        memset(out, 0xA5, (N + GUARD) * 2);
        qc_amx_sum(c2, topk, N, out);
        for (int64_t i = 0; i < N; i++) {
            float s = 0;
            for (int t = 0; t < topk; t++)
                s += bf16_val(c2[t * N + i]);
            float e = topk == 1 ? bf16_val(c2[i]) : qc_bf16_rne(s), k = bf16_val(out[i]);
            if (!((isnan(e) && isnan(k)) || memcmp(&e, &k, 4) == 0 || (fabsf(s) < 0x1p-126f && k == 0)) && bad++ < 3)
                printf("FAIL sum topk %d element %lld: kernel %a scalar %a\n", topk, (long long)i, (double)k, (double)e);
        }
        bad += guard_broken((const uint8_t *)out, N * 2);
    }
    memset(out, 0xA5, (N + GUARD) * 2);
    qc_amx_copy_mul(c2, 0.3137f, N, out);
    for (int64_t i = 0; i < N; i++) {
        float pre = bf16_val(c2[i]) * 0.3137f, e = qc_bf16_rne(pre), k = bf16_val(out[i]);
        if (!((isnan(e) && isnan(k)) || memcmp(&e, &k, 4) == 0 || (fabsf(pre) < 0x1p-126f && k == 0)) && bad++ < 3)
            printf("FAIL copy_mul element %lld: kernel %a scalar %a\n", (long long)i, (double)k, (double)e);
    }
    bad += guard_broken((const uint8_t *)out, N * 2);
    printf("%s moe stubs (silu_and_mul over all bf16 gates, sum, copy_mul): %lld mismatches\n", bad ? "FAIL" : "ok",
           (long long)bad);
    failures += bad > 0;
    free(in), free(out), free(c2);
}

static void fill_normal(qc_tensor_set *in, const char *name, int64_t rows, int64_t cols, uint64_t seed)
{
    int64_t shape[2] = {rows, cols};
    qc_tensor t;
    qc_tensor_alloc(&t, name, QC_ST_F32, "f32", 2, shape);
    uint64_t z = seed;
    for (int64_t i = 0; i < rows * cols; i++) {
        double acc = 0;
        for (int j = 0; j < 4; j++) {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            acc += (double)(z >> 11) * 0x1p-53;
        }
        ((float *)t.data)[i] = (float)((acc - 2.0) * 1.732);
    }
    qc_set_add(in, &t);
}

/* moe_cpu through the backend against the reference: out within out.bound, route stages equal;
 * then qc_amx_moe_expert on the first expert with rows into poisoned buffers. */
static void check_moe(int64_t tokens, int64_t hidden, int64_t inter, int64_t top_k, uint64_t seed)
{
    char kv[512], err[512];
    snprintf(kv, sizeof kv, "recipe=fp8_block,route=renorm_naive,experts=8,top_k=%lld,shared=0,act=silu,order=gate_up,"
             "tokens=%lld,hidden=%lld,inter=%lld,weights=generate,weight_seed=%llu", (long long)top_k,
             (long long)tokens, (long long)hidden, (long long)inter, (unsigned long long)seed);
    qc_params prm = {0};
    qc_tensor_set in = {0}, ref = {0}, be = {0};
    qc_params_parse(&prm, kv, err, sizeof err);
    fill_normal(&in, "x", tokens, hidden, seed * 3 + 1);
    fill_normal(&in, "logits", tokens, 8, seed * 5 + 2);
    qc_op_call cr = {&prm, &in, &ref, err, sizeof err, 0}, cb = {&prm, &in, &be, err, sizeof err, 0};
    const qc_backend *b = NULL;
    for (int i = 0; i < qc_backend_count(); i++)
        if (strcmp(qc_backend_at(i)->name, "cpu-amx") == 0)
            b = qc_backend_at(i);
    if (!b || qc_op_find("moe_cpu")->reference(&cr) || qc_backend_call(b, "moe_cpu", &cb)) {
        printf("FAIL moe_cpu %s: %s\n", kv, b ? err : "no cpu-amx backend");
        failures++;
        return;
    }
    const qc_tensor *ro = qc_set_find(&ref, "out"), *bo = qc_set_find(&be, "out");
    const double *bound = qc_set_find(&ref, "out.bound")->data;
    int64_t bad = compare_c("moe_cpu out", kv, seed, ro, bound, bo->data, 0), exact = 0;
    for (int64_t i = 0; i < qc_tensor_numel(ro); i++)
        exact += bound[i] == 0;
    for (int s = 0; s < 2; s++) {
        const char *nm = s ? "stage.route.weights" : "stage.route.ids";
        const qc_tensor *x = qc_set_find(&ref, nm), *y = qc_set_find(&be, nm);
        if (!x || !y || x->nbytes != y->nbytes || (x->nbytes && memcmp(x->data, y->data, x->nbytes))) {
            printf("FAIL moe_cpu %s: %s differs\n", kv, nm);
            bad++;
        }
    }
    /* the expert kernel into poisoned buffers */
    qc_moe_cpu p;
    if (!qc_moe_cpu_setup(&cb, &p)) {
        int64_t e = 0;
        while (e < 8 && !p.count[e])
            e++;
        if (e < 8) {
            int64_t cnt = p.count[e], sz[3] = {cnt * 2 * inter, cnt * inter, cnt * hidden};
            uint16_t *a = malloc((size_t)(cnt * hidden) * 2 + 8), *buf[3];
            uint8_t *codes = malloc((size_t)(2 * inter * hidden) + 8);
            float *sc = malloc((size_t)(qc_moe_cpu_nscales(&p, 0) + qc_moe_cpu_nscales(&p, 1)) * 4 + 8);
            qc_amx_weights w13, w2;
            for (int i = 0; i < 3; i++)
                memset(buf[i] = malloc((size_t)sz[i] * 2 + GUARD), 0xA5, (size_t)sz[i] * 2 + GUARD);
            for (int64_t r = 0, q = 0; r < p.rows; r++)
                if (p.ids[r] == e)
                    memcpy(a + (q++) * hidden, p.x + (r / p.kk) * hidden, (size_t)hidden * 2);
            qc_moe_cpu_weights(&cb, &p, e, 0, codes, sc);
            qc_amx_pack_fp8(codes, sc, 2 * inter, hidden, &w13);
            qc_moe_cpu_weights(&cb, &p, e, 1, codes, sc);
            qc_amx_pack_fp8(codes, sc, hidden, inter, &w2);
            if (qc_amx_moe_expert(a, cnt, hidden, inter, &w13, &w2, buf[0], buf[1], buf[2]))
                bad++;
            const float *st = qc_set_find(&be, "stage.gemm2.y")->data;
            for (int i = 0; i < 3; i++) {
                bad += guard_broken((const uint8_t *)buf[i], (size_t)sz[i] * 2);
                for (int64_t j = 0; j < sz[i]; j++)
                    if (buf[i][j] == 0xA5A5 && bad++ == 0)
                        printf("FAIL moe expert %s: buffer %d element %lld unwritten\n", kv, i, (long long)j);
            }
            for (int64_t r = 0, q = 0; r < p.rows; r++) /* the same C as through the backend */
                if (p.ids[r] == e) {
                    for (int64_t j = 0; j < hidden; j++)
                        if (bf16_val(buf[2][q * hidden + j]) != st[r * hidden + j] && bad++ == 0)
                            printf("FAIL moe expert %s: C differs from the backend's\n", kv);
                    q++;
                }
            qc_amx_weights_free(&w13), qc_amx_weights_free(&w2);
            for (int i = 0; i < 3; i++)
                free(buf[i]);
            free(a), free(codes), free(sc);
        }
        int64_t empty = 0;
        for (int64_t x = 0; x < 8; x++)
            empty += p.count[x] == 0;
        printf("%s moe_cpu %s: %lld mismatches, %lld of %lld elements proven bit-exact, %lld experts without "
               "tokens\n", bad ? "FAIL" : "ok", kv, (long long)bad, (long long)exact, (long long)qc_tensor_numel(ro),
               (long long)empty);
        qc_moe_cpu_free(&p);
    }
    failures += bad > 0;
    qc_set_free(&in), qc_set_free(&ref), qc_set_free(&be);
}

int main(void)
{
    const char *why = qc_cpu_amx_unavailable();
    if (why) {
        printf("SKIPPED: %s\n", why);
        return 77;
    }
    test_gemm_kinds();
    test_bf16_kernel();
    test_moe_stubs();
    static const int64_t moe_shapes[][4] = {{0, 128, 128, 2}, {1, 128, 128, 1}, {1, 256, 128, 4}, {7, 128, 128, 2},
                                            {7, 384, 256, 3}, {40, 256, 128, 4}, {40, 128, 256, 2}};
    for (size_t i = 0; i < sizeof moe_shapes / sizeof moe_shapes[0]; i++)
        for (uint64_t seed = 1; seed <= 2; seed++)
            check_moe(moe_shapes[i][0], moe_shapes[i][1], moe_shapes[i][2], moe_shapes[i][3], seed + 10 * i);
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
