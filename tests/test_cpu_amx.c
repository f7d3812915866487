/* test_cpu_amx.c: the cpu-amx kernels (kernels/cpu/amx_gemm.c) against the reference gemm op.
 *   fp8    kind=fp8_block model=sgl-cpu: every element within the reference's c.bound, through the
 *          backend (the adapter) and through the kernel directly;
 *   int8   kind=int8_rowwise: bit for bit, through the backend and the kernel;
 *   bf16   the plain bf16 kernel (the benchmark's) against an fp64 dot within gamma(K) sum|ab|;
 * on M = 0, 1, 7, 33, 64, N = 1, 16, 17, 130, 300 (tails of 16 and 32, several 256-column panels),
 * K = 128, 384, 640 (two K chunks) and K tails (96 / 160: zero padding), bias on and off, bf16 and
 * f32 outputs. The kernel writes into a poisoned buffer (0xA5 bytes) followed by guard bytes: every
 * element must be written (a poisoned element fails the comparison) and the guard left intact;
 * column ranges [0, 32) + [32, N) written by two calls must equal one call.
 * Exit 77 (SKIPPED) with the reason when the CPU, the kernel or the build lacks AMX. Seeds are fixed
 * and printed with every failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amx_gemm.h"
#include "gemm_op.h"
#include "generate.h"
#include "registry.h"

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
    static const char *names[] = {"a", "b", "bias"};
    static const char *shapes[][2] = {{"m", "k"}, {"n", "k"}, {"n", ""}};
    for (int i = 0; i < 3; i++) {
        qc_input_spec s = {0};
        snprintf(s.name, sizeof s.name, "%s", names[i]);
        s.ndim = i == 2 ? 1 : 2;
        snprintf(s.shape[0], sizeof s.shape[0], "%s", shapes[i][0]);
        snprintf(s.shape[1], sizeof s.shape[1], "%s", shapes[i][1]);
        s.storage = QC_ST_F32;
        snprintf(s.fill, sizeof s.fill, "%s", i == 2 ? "integers" : qc_param_or(p, "dist", "normal"));
        snprintf(s.scale, sizeof s.scale, "%d", i == 2 ? 4 : 2);
        qc_tensor t;
        if (qc_generate(&s, p, seed + (uint64_t)i, &t, err, sizeof err)) {
            printf("FAIL generate %s: %s\n", names[i], err);
            return 1;
        }
        qc_set_add(in, &t);
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

/* The kernel on the reference op's own operands, into a poisoned buffer, in one call and in two
 * column ranges. */
static int64_t kernel_direct(const qc_gemm_operands *o, int f32, void *c1, void *c2)
{
    qc_amx_weights w;
    qc_amx_act a = {0};
    int s8 = o->kind == QC_GEMM_INT8_ROWWISE, rc;
    rc = s8 ? qc_amx_pack_s8(o->b_s8, o->n, o->k, &w) || qc_amx_act_u8(o->a_s8, o->m, o->k, &w, &a)
            : qc_amx_pack_fp8(o->b_codes, o->b_block_scale, o->n, o->k, &w) ||
                  qc_amx_act_bf16(o->a_bf16, o->m, o->k, &w, &a);
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

static void check_case(const char *kv, uint64_t seed)
{
    qc_tensor_set in = {0}, ref = {0}, be = {0};
    qc_params p;
    char err[512];
    if (gen_inputs(kv, seed, &in, &p)) {
        failures++;
        return;
    }
    qc_op_call rc_ref = {&p, &in, &ref, err, sizeof err}, rc_be = {&p, &in, &be, err, sizeof err};
    qc_op_fn amx = NULL;
    for (int i = 0; i < qc_backend_count(); i++)
        if (!strcmp(qc_backend_at(i)->name, "cpu-amx"))
            amx = qc_backend_impl(qc_backend_at(i), "gemm");
    if (!amx || qc_op_find("gemm")->reference(&rc_ref) || amx(&rc_be)) {
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
    qc_gemm_operands o;
    uint8_t *c1 = malloc(c->nbytes + GUARD), *c2 = malloc(c->nbytes + GUARD);
    memset(c1, 0xA5, c->nbytes + GUARD), memset(c2, 0xA5, c->nbytes + GUARD);
    if (qc_gemm_operands_get(&rc_ref, &o) || kernel_direct(&o, c->storage != QC_ST_U16, c1, c2)) {
        printf("FAIL %s: operands or kernel (%s)\n", kv, err);
        bad++;
    } else {
        bad += compare_c("kernel", kv, seed, c, bound, c1, bitexact);
        bad += compare_c("kernel in two column ranges", kv, seed, c, bound, c2, bitexact);
        if (guard_broken(c1, c->nbytes) || guard_broken(c2, c->nbytes)) {
            printf("FAIL %s: the kernel wrote past c\n", kv);
            bad++;
        }
    }
    qc_gemm_operands_free(&o);
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
    printf("gemm: %d shape cases + 4 (fp8 within c.bound, int8 bit-exact)\n", cases);
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

int main(void)
{
    const char *why = qc_cpu_amx_unavailable();
    if (why) {
        printf("SKIPPED: %s\n", why);
        return 77;
    }
    test_gemm_kinds();
    test_bf16_kernel();
    printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
