/* test_cpu_avx512.c: the cpu-avx512 kernels (kernels/cpu/) against the reference, bit for bit.
 *   cast   every minifloat under each cast profile and each one-knob change of it, and e8m0
 *          under every vectorized rule: all 2^16 bf16 patterns, 10^6 random fp32 bit patterns
 *          (the three profiles) or 2^12 (the variants), named specials; odd lengths 1, 15, 17,
 *          63, 65 (the masked tail) with guard bytes after the output that must stay untouched;
 *          the bf16-input entry on all 2^16 patterns under each profile, odd lengths too;
 *   rcp    the 16-lane rcp.approx.ftz of the quant chains against the reference's emulation;
 *   e8m0   log2-ceil at the small mantissas of every binade, where log2f's rounding decides;
 *   quant  every recipe profile row the kernels claim, with ue8m0 on and off and other element
 *          formats (mx also with 16-element blocks, nvfp4 sf=ue8m0), on shapes with odd row counts,
 *          zero groups, NaN, Inf and tiny elements;
 *   block  every block profile on shapes of 0 rows/cols and not multiples of 128, with zero, NaN,
 *          Inf and subnormal tiles;
 *   clamp  clamps below and above the format's largest value, with a static scale (products beyond);
 *   nvfp4  given global scales, negative, tiny and huge (SF bytes with the sign bit, zero, saturated);
 *   stream quant and block again with every call writing its codes by non-temporal stores;
 *   layout sf128x4 on shapes that are and are not multiples of the tile, batched.
 * Exit 77 (SKIPPED) with the reason when the CPU or the build lacks AVX-512. The seed is printed;
 * QC_SEED=n replays it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_avx512.h"
#include "layouts/layouts.h"
#include "profiles.h"

static unsigned long long rng_state;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 32);
}

static int failures;

/* ---- cast ---- */

#define NSPECIAL 24
static const uint32_t specials[NSPECIAL] = {
    0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu,
    0x7FBFFFFFu, 0x00000001u, 0x807FFFFFu, 0x00400000u, 0x00800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x43E00000u,
    0x43E80000u, 0x43E80001u, 0x47600000u, 0x40C00000u, 0x40A00000u, 0x3F400000u, 0x3E800000u, 0x7E000000u};

/* Encodes x[n] with the kernel and the reference; the kernel must leave the 16 guard codes
 * after n untouched. Returns mismatches, printing the first. */
static long check_cast(qc_format f, const qc_cast_policy *p, const float *x, size_t n, const char *what)
{
    int wide = qcref_format_bits(f) > 8;
    size_t sz = wide ? 2 : 1;
    uint8_t *got = malloc((n + 16) * sz);
    memset(got, 0xA5, (n + 16) * sz);
    qc_avx512_cast(f, p, x, n, got);
    long bad = 0;
    for (size_t i = 0; i < n + 16; i++) {
        uint32_t g = wide ? ((uint16_t *)got)[i] : got[i];
        uint32_t e = i < n ? qcref_encode(f, x[i], p) : (wide ? 0xA5A5u : 0xA5u);
        if (g != e && bad++ == 0)
            fprintf(stderr, "FAIL cast %s (%s) [%zu of %zu] input 0x%08X: expected 0x%X got 0x%X%s\n", qc_format_name(f),
                    what, i, n, i < n ? qc_f32_bits(x[i]) : 0, e, g, i < n ? "" : " (guard written)");
    }
    free(got);
    return bad;
}

static float *test_inputs(size_t nrandom, size_t *n)
{
    *n = 65536 + NSPECIAL + nrandom;
    float *x = malloc(*n * sizeof *x);
    for (uint32_t i = 0; i < 65536; i++)
        x[i] = qc_f32_from_bits(i << 16); /* every bf16 pattern */
    for (int i = 0; i < NSPECIAL; i++)
        x[65536 + i] = qc_f32_from_bits(specials[i]);
    for (size_t i = 0; i < nrandom; i++)
        x[65536 + NSPECIAL + i] = qc_f32_from_bits(rnd());
    return x;
}

/* The policy p with knob k set to value v (k < 0: p itself); 0 when v is out of range. */
static int variant(qc_cast_policy *p, int k, int v)
{
    static const int counts[] = {2, 2, 3, 3, 4, 3};
    if (k < 0)
        return v == 0;
    if (v >= counts[k])
        return 0;
    switch (k) {
    case 0: p->overflow = (qc_overflow)v; break;
    case 1: p->nan_sign = (qc_nan_sign)v; break;
    case 2: p->nan_code = (qc_nan_code)v; break;
    case 3: p->ties = (qc_ties)v; break;
    case 4: p->nonan = (qc_nonan)v; break;
    default: p->zero_sign = (qc_zero_sign)v; break;
    }
    return 1;
}

static void test_minifloat_casts(void)
{
    size_t nbig, nsmall;
    float *big = test_inputs(1000000, &nbig), *small = test_inputs(4096, &nsmall);
    long pairs = 0;
    for (int f = 0; f < QC_FORMAT_COUNT; f++) {
        if (!qcref_is_minifloat((qc_format)f))
            continue;
        for (int pi = 0; pi < qc_cast_profile_count(); pi++)
            for (int k = -1; k < 6; k++)
                for (int v = 0; v < 4; v++) {
                    qc_cast_policy p = qc_cast_profile_policy(qc_cast_profile_at(pi), (qc_format)f);
                    if (!variant(&p, k, v))
                        continue;
                    char what[96];
                    snprintf(what, sizeof what, "profile %s, knob %d = %d", qc_cast_profile_at(pi)->name, k, v);
                    failures += check_cast((qc_format)f, &p, k < 0 ? big : small, k < 0 ? nbig : nsmall, what) != 0;
                    for (size_t t = 0; t < 5 && k < 0; t++) {
                        static const size_t lens[] = {1, 15, 17, 63, 65};
                        failures += check_cast((qc_format)f, &p, big + 65536 + NSPECIAL, lens[t], "odd length") != 0;
                        failures += check_cast((qc_format)f, &p, big + 0x3F00 + t, lens[t], "odd length") != 0;
                    }
                    pairs++;
                }
    }
    printf("cast minifloat: %ld (format, policy) pairs checked\n", pairs);
    free(big), free(small);
}

/* bf16 inputs: every 2^16 pattern plus odd lengths, against the reference on the widened value. */
static void test_bf16_inputs(void)
{
    uint16_t *x = malloc(65536 * sizeof *x);
    uint8_t *got = malloc(2 * 65536 + 32);
    long pairs = 0;
    for (uint32_t i = 0; i < 65536; i++)
        x[i] = (uint16_t)i;
    for (int f = 0; f < QC_FORMAT_COUNT; f++)
        for (int pi = 0; pi < qc_cast_profile_count(); pi++) {
            qc_cast_policy p = qc_cast_profile_policy(qc_cast_profile_at(pi), (qc_format)f);
            if (f == QC_F32 || !qc_avx512_cast_supported((qc_format)f, &p))
                continue;
            int wide = qcref_format_bits((qc_format)f) > 8;
            static const size_t lens[] = {65536, 1, 15, 17, 63, 65};
            for (int t = 0; t < 6; t++) {
                size_t n = lens[t];
                memset(got, 0xA5, 2 * 65536 + 32);
                qc_avx512_cast_bf16((qc_format)f, &p, x + (t ? 0x3F70 : 0), n, got);
                for (size_t i = 0; i < n + 16; i++) {
                    uint32_t g = wide ? ((uint16_t *)got)[i] : got[i];
                    uint32_t e = i < n ? qcref_encode((qc_format)f, qc_f32_from_bits((uint32_t)x[(t ? 0x3F70 : 0) + i] << 16), &p)
                                       : (wide ? 0xA5A5u : 0xA5u);
                    if (g != e) {
                        fprintf(stderr, "FAIL cast bf16 -> %s (%s) [%zu of %zu]: expected 0x%X got 0x%X\n",
                                qc_format_name(f), qc_cast_profile_at(pi)->name, i, n, e, g);
                        failures++;
                        break;
                    }
                }
            }
            pairs++;
        }
    printf("cast from bf16: %ld (format, profile) pairs on all 2^16 patterns\n", pairs);
    free(x), free(got);
}

static void test_e8m0_casts(void)
{
    size_t n;
    float *x = test_inputs(1000000, &n);
    long pairs = 0;
    static const int emax[] = {0, 8, 2}, mbits[] = {3, 1};
    for (int r = 0; r < QC_E8M0_RULE_COUNT; r++)
        for (int e = 0; e < 3; e++)
            for (int m = 0; m < 2; m++) {
                qc_cast_policy p = qcref_default_policy();
                p.e8m0 = (qc_e8m0_rule)r, p.e8m0_emax = emax[e], p.e8m0_mbits = mbits[m];
                if (!qc_avx512_cast_supported(QC_E8M0, &p))
                    continue;
                char what[64];
                snprintf(what, sizeof what, "rule %s emax %d mbits %d", qc_e8m0_rule_name(r), emax[e], mbits[m]);
                failures += check_cast(QC_E8M0, &p, x, e == 0 && m == 0 ? n : 65536 + NSPECIAL + 4096, what) != 0;
                failures += check_cast(QC_E8M0, &p, x + 65536, 17, what) != 0;
                pairs++;
            }
    printf("cast e8m0: %ld (rule, emax, mbits) triples checked\n", pairs);
    free(x);
}

/* e8m0 log2-ceil (libm ceilf(log2f(|x|)), e8m0.c): the kernel's per-binade threshold decides
 * only among the smallest mantissas of each binade (log2f rounds 2^k (1 + f 2^-23) to k while
 * f 2^-23 / ln 2 is under half an ulp of k: f < 2^7 even for |k| = 127), so every exponent with
 * mantissas 0..4095 and the top 64, both signs, is every input where the rule is decided. */
static void test_e8m0_log2ceil(void)
{
    size_t n = 256u * 2u * (4096u + 64u), k = 0;
    float *x = malloc(n * sizeof *x);
    for (uint32_t e = 0; e < 256; e++)
        for (uint32_t sgn = 0; sgn < 2; sgn++) {
            for (uint32_t f = 0; f < 4096; f++)
                x[k++] = qc_f32_from_bits(sgn << 31 | e << 23 | f);
            for (uint32_t f = 0x7FFFFFu - 63u; f <= 0x7FFFFFu; f++)
                x[k++] = qc_f32_from_bits(sgn << 31 | e << 23 | f);
        }
    qc_cast_policy p = qcref_default_policy();
    p.e8m0 = QC_E8M0_LOG2_CEIL;
    failures += check_cast(QC_E8M0, &p, x, k, "log2-ceil, small mantissas of every binade") != 0;
    long floors = 0; /* inputs where the float log2 gives floor, not ceil: the rule is not the exact one */
    for (size_t i = 0; i < k; i++) {
        uint32_t b = qc_f32_bits(x[i]) & QC_F32_ABS, e = b >> 23, f = b & 0x7FFFFFu;
        floors += e >= 1 && e < 254 && f != 0 && qcref_e8m0_encode(x[i], &p) == e;
    }
    printf("cast e8m0 log2-ceil: %zu inputs at the binade edges, %ld of them where log2f rounds to floor\n", k, floors);
    if (floors == 0) { /* the threshold table would be untested: the reference's log2f changed */
        fprintf(stderr, "FAIL e8m0 log2-ceil: no input rounds to floor; the edge test lost its point\n");
        failures++;
    }
    free(x);
}

/* ---- rcp.approx.ftz ---- */

/* Every mantissa of the table at exponent 0, every 61st at each other exponent (zeros, subnormals,
 * results that flush, Inf and NaN included), both signs. */
static void test_rcp(void)
{
    size_t n = 1u << 23;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    long checked = 0;
    for (uint32_t e = 0; e < 256; e++)
        for (uint32_t s = 0; s < 2; s++) {
            size_t k = 0;
            for (uint32_t m = 0; m < n; m += e == 127 ? 1 : 61)
                x[k++] = qc_f32_from_bits(s << 31 | e << 23 | m);
            qc_avx512_rcp_approx(x, k, y);
            for (size_t i = 0; i < k; i++)
                if (qc_f32_bits(y[i]) != qc_f32_bits(qcref_rcp_approx_ftz(x[i]))) {
                    fprintf(stderr, "FAIL rcp.approx 0x%08X: expected 0x%08X got 0x%08X\n", qc_f32_bits(x[i]),
                            qc_f32_bits(qcref_rcp_approx_ftz(x[i])), qc_f32_bits(y[i]));
                    failures++;
                    break;
                }
            checked += (long)k;
        }
    printf("rcp.approx.ftz: %ld inputs checked (all 2^23 mantissas at exponent 0)\n", checked);
    free(x), free(y);
}

/* ---- quant ---- */

static float gauss(void)
{
    float u = ((float)(rnd() >> 8) + 0.5f) / 16777216.0f, v = ((float)(rnd() >> 8) + 0.5f) / 16777216.0f;
    return sqrtf(-2.0f * logf(u)) * cosf(6.2831853f * v);
}

static void fill(float *x, size_t rows, size_t cols, int zero_block, int edges)
{
    for (size_t i = 0; i < rows * cols; i++)
        x[i] = gauss() * 3.0f;
    for (size_t i = 0; i < rows * cols && zero_block; i += 4 * (size_t)zero_block)
        for (size_t k = 0; k < (size_t)zero_block && i + k < rows * cols; k++)
            x[i + k] = 0.0f;
    static const uint32_t e[] = {0x7FC00000u, 0xFFC00000u, 0x7F800000u, 0xFF800000u, 0x00000001u, 0x80000000u,
                                 0x2F000000u, 0x43E00000u};
    for (int k = 0; k < edges && rows * cols > 0; k++)
        x[rnd() % (rows * cols)] = qc_f32_from_bits(e[k % 8]);
}

static int quiet; /* same_quant prints nothing (the self-check of test_block) */

static int same_quant(qc_recipe r, const qc_recipe_policy *p, const qc_quantized *a, const qc_quantized *b)
{
    size_t n = a->rows * a->cols, ns = qcref_recipe_nscales(r, p, a->rows, a->cols);
    int u8 = r >= QC_RECIPE_MXFP8;
    for (size_t i = 0; i < n; i++)
        if (a->q[i] != b->q[i]) {
            if (!quiet)
                fprintf(stderr, "  q[%zu]: expected 0x%02X got 0x%02X\n", i, a->q[i], b->q[i]);
            return 0;
        }
    for (size_t i = 0; i < ns; i++) {
        uint32_t e = u8 ? a->scale_u8[i] : qc_f32_bits(a->scale_f32[i]), g = u8 ? b->scale_u8[i] : qc_f32_bits(b->scale_f32[i]);
        if (e != g) {
            if (!quiet)
                fprintf(stderr, "  scale[%zu]: expected 0x%X got 0x%X\n", i, e, g);
            return 0;
        }
    }
    if (r == QC_RECIPE_NVFP4 && qc_f32_bits(a->gscale) != qc_f32_bits(b->gscale)) {
        if (!quiet)
            fprintf(stderr, "  gscale: expected 0x%08X got 0x%08X\n", qc_f32_bits(a->gscale), qc_f32_bits(b->gscale));
        return 0;
    }
    return 1;
}

static void alloc_q(qc_quantized *q, size_t rows, size_t cols, size_t ns)
{
    memset(q, 0, sizeof *q);
    q->rows = rows, q->cols = cols, q->nscales = ns;
    size_t qbytes = (rows * cols + 64) / 64 * 64; /* 64-byte aligned, so that streamed stores happen */
    q->q = aligned_alloc(64, qbytes), q->scale_f32 = calloc(ns + 1, 4), q->scale_u8 = calloc(ns + 1, 1);
    memset(q->q, 0, qbytes);
}

static void free_q(qc_quantized *q) { free(q->q), free(q->scale_f32), free(q->scale_u8); }

static long quant_one(const qc_recipe_profile *pr, int elem, int ue8m0, size_t rows, size_t cols, int edges, int group)
{
    qc_recipe r = pr->recipe;
    qc_recipe_policy p = qc_recipe_profile_policy(pr, elem, ue8m0);
    if (group)
        p.group = group;
    if (!qc_avx512_quant_supported(r, &p) || qcref_recipe_shape_rule(r, &p, rows, cols))
        return -1;
    size_t ns = qcref_recipe_nscales(r, &p, rows, cols);
    float *x = malloc((rows * cols + 1) * sizeof *x);
    int zb = r == QC_RECIPE_TOKEN_GROUP || r >= QC_RECIPE_MXFP8 ? p.group : 0;
    fill(x, rows, cols, zb, edges);
    qc_quantized want, got;
    alloc_q(&want, rows, cols, ns), alloc_q(&got, rows, cols, ns);
    qcref_quant(r, &p, x, rows, cols, NULL, NULL, &want);
    qc_avx512_quant(r, &p, x, rows, cols, NULL, NULL, &got);
    int ok = same_quant(r, &p, &want, &got);
    if (!ok)
        fprintf(stderr, "FAIL quant %s profile %s elem %s ue8m0 %d shape %zux%zu edges %d\n", qc_recipe_name(r), pr->name,
                qc_format_name(p.elem), ue8m0, rows, cols, edges);
    free_q(&want), free_q(&got), free(x);
    return !ok;
}

static void test_quant(void)
{
    long runs = 0, skipped = 0;
    static const size_t rows[] = {1, 3, 17}, cols[] = {7, 32, 96, 256, 384};
    for (int i = 0; i < qc_recipe_profile_count(); i++) {
        const qc_recipe_profile *pr = qc_recipe_profile_at(i);
        int elems[3] = {-1, -1, -1};
        if (pr->recipe == QC_RECIPE_MXFP8)
            elems[1] = QC_E5M2;
        if (pr->recipe == QC_RECIPE_MXFP6)
            elems[1] = QC_E3M2;
        if (pr->recipe <= QC_RECIPE_TOKEN_GROUP)
            elems[1] = QC_E4M3FNUZ, elems[2] = QC_E5M2;
        int any = 0;
        for (int e = 0; e < 3; e++)
            for (int u = 0; u < 2; u++)
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 5; b++)
                        for (int edges = 0; edges <= 8; edges += 8) {
                            if (e > 0 && elems[e] < 0)
                                continue;
                            long rc = quant_one(pr, elems[e], u, rows[a], cols[b], edges, 0);
                            if (rc >= 0)
                                failures += (int)rc, runs++, any = 1;
                            /* mx with 16-element blocks: nvfp4 sf=ue8m0 (TRT-LLM's UE8M0 branch) is mxfp4
                             * at group 16 (harness/quant_job.c) */
                            rc = pr->recipe >= QC_RECIPE_MXFP8 && pr->recipe <= QC_RECIPE_MXFP4
                                     ? quant_one(pr, elems[e], u, rows[a], cols[b], edges, 16) : -1;
                            if (rc >= 0)
                                failures += (int)rc, runs++;
                        }
        skipped += !any;
        if (!any)
            printf("quant %s %s: not vectorized (the backend falls back to the reference)\n", qc_recipe_name(pr->recipe),
                   pr->name);
    }
    printf("quant: %ld instances checked, %ld profile rows not vectorized\n", runs, skipped);
}

/* A clamp below the format's largest value (a case's fp8_max, e.g. 224) and one above it (480,
 * where values in (464, 480] stay and overflow under a non-saturating cast), with a static scale
 * (the harness takes one for tensor recipes only) so that products exceed the bound: the kernel
 * may drop a clamp only where that changes no code (clamp_folds), and here it does. Every tensor
 * profile with a clamp, e4m3fn, under its own cast policy and under satfinite; inputs spread to
 * +-600, finite (the chunks take the no-NaN path). */
static void test_clamp_bounds(void)
{
    const size_t rows = 3, cols = 256;
    float x[3 * 256], one = 1.0f;
    for (size_t i = 0; i < rows * cols; i++)
        x[i] = gauss() * 300.0f;
    long runs = 0, clamped = 0;
    for (int i = 0; i < qc_recipe_profile_count(); i++) {
        const qc_recipe_profile *pr = qc_recipe_profile_at(i);
        for (int v = 0; v < 4 && pr->recipe == QC_RECIPE_TENSOR; v++) {
            int sat = v & 1;
            float bound = v < 2 ? 224.0f : 480.0f;
            qc_recipe_policy p = qc_recipe_profile_policy(pr, QC_E4M3FN, 0);
            if (p.clamp == QC_CLAMP_NONE || !qc_avx512_quant_supported(pr->recipe, &p))
                continue;
            p.elem_max = p.clamp_max = bound;
            if (sat)
                p.cast.overflow = QC_OVERFLOW_SATFINITE;
            size_t ns = qcref_recipe_nscales(pr->recipe, &p, rows, cols);
            qc_quantized want, got;
            alloc_q(&want, rows, cols, ns), alloc_q(&got, rows, cols, ns);
            qcref_quant(pr->recipe, &p, x, rows, cols, &one, NULL, &want);
            int rc = qc_avx512_quant(pr->recipe, &p, x, rows, cols, &one, NULL, &got);
            if (rc || !same_quant(pr->recipe, &p, &want, &got)) {
                fprintf(stderr, "FAIL quant %s profile %s%s with clamp %g and static scale 1\n",
                        qc_recipe_name(pr->recipe), pr->name, sat ? " (satfinite)" : "", bound);
                failures++;
            }
            for (size_t e = 0; e < rows * cols; e++)
                clamped += fabsf(x[e]) > bound;
            free_q(&want), free_q(&got), runs++;
        }
    }
    printf("quant clamp 224 and 480 around the e4m3fn max, static scale: %ld profile rows, %ld clamped elements\n",
           runs, clamped);
    if (runs == 0 || clamped == 0) {
        printf("FAIL: the clamp check ran on nothing\n");
        failures++;
    }
}

/* nvfp4 with a given global scale (the harness's gscale input): positive, negative (every SF byte
 * then has its sign bit, the upper half of the kernel's output-scale table), tiny and huge (SF
 * bytes at zero and saturated), for every nvfp4 profile; codes, SF bytes and gscale bit for bit. */
static void test_nvfp4_given_gscale(void)
{
    const size_t rows = 5, cols = 256;
    float x[5 * 256];
    fill(x, rows, cols, 16, 8);
    static const float gs[] = {134.4f, -134.4f, 1e-30f, -3e30f, 0.25f};
    long runs = 0;
    for (int i = 0; i < qc_recipe_profile_count(); i++) {
        const qc_recipe_profile *pr = qc_recipe_profile_at(i);
        qc_recipe_policy p = qc_recipe_profile_policy(pr, -1, 0);
        if (pr->recipe != QC_RECIPE_NVFP4 || !qc_avx512_quant_supported(pr->recipe, &p))
            continue;
        size_t ns = qcref_recipe_nscales(pr->recipe, &p, rows, cols);
        for (size_t g = 0; g < sizeof gs / sizeof gs[0]; g++) {
            qc_quantized want, got;
            alloc_q(&want, rows, cols, ns), alloc_q(&got, rows, cols, ns);
            qcref_quant(pr->recipe, &p, x, rows, cols, NULL, &gs[g], &want);
            int rc = qc_avx512_quant(pr->recipe, &p, x, rows, cols, NULL, &gs[g], &got);
            if (rc || !same_quant(pr->recipe, &p, &want, &got)) {
                fprintf(stderr, "FAIL quant nvfp4 profile %s with global scale %g\n", pr->name, gs[g]);
                failures++;
            }
            free_q(&want), free_q(&got), runs++;
        }
    }
    printf("quant nvfp4 with given global scales (negative, tiny, huge): %ld instances\n", runs);
    if (runs == 0) {
        printf("FAIL: no nvfp4 profile ran\n");
        failures++;
    }
}

/* block (128 x 128 tiles, docs/spec/formats.md §6.4): every block profile row, ue8m0 off and on, three element
 * formats, shapes with 0 rows or columns and rows/cols that are not multiples of the tile (the
 * zero padding), on inputs whose tiles include an all-zero tile, a tile holding a NaN (the first
 * NaN's payload is the scale's under the torch amax), a tile with +-Inf, a tile of fp32
 * subnormals (amax below the 1e-4 floor) and random edges elsewhere. Codes and fp32 scales are
 * compared bit for bit with qcref_quant; a flipped code must be noticed (the check can fail). */
static void fill_block_tiles(float *x, size_t rows, size_t cols, int variant)
{
    fill(x, rows, cols, 0, 8);
    if (rows == 0 || cols == 0)
        return;
    size_t nr = (rows + 127) / 128, nc = (cols + 127) / 128;
    for (size_t ti = 0; ti < nr; ti++)
        for (size_t tj = 0; tj < nc; tj++) {
            int kind = (int)((ti * nc + tj + (size_t)variant) % 5);
            size_t r0 = ti * 128, r1 = r0 + 128 < rows ? r0 + 128 : rows, c0 = tj * 128, c1 = c0 + 128 < cols ? c0 + 128 : cols;
            size_t ri = r0 + rnd() % (r1 - r0), ci = c0 + rnd() % (c1 - c0);
            for (size_t i = r0; i < r1 && (kind == 0 || kind == 3); i++)
                for (size_t j = c0; j < c1; j++)
                    x[i * cols + j] = kind == 0 ? 0.0f : qc_f32_from_bits((rnd() & 0x807FFFFFu)); /* zero / subnormal */
            if (kind == 1) { /* two NaNs of different payloads and signs: the first in row-major order counts */
                x[ri * cols + ci] = qc_f32_from_bits(0xFFC00123u);
                x[(r1 - 1) * cols + c1 - 1] = qc_f32_from_bits(0x7FC00456u);
            }
            if (kind == 2)
                x[ri * cols + ci] = qc_f32_from_bits(rnd() & 1 ? 0x7F800000u : 0xFF800000u);
        }
}

static void test_block(void)
{
    static const size_t rows[] = {0, 1, 5, 128, 129, 300}, cols[] = {0, 1, 100, 128, 129, 300};
    static const int elems[] = {-1, QC_E4M3FNUZ, QC_E5M2};
    long runs = 0, profiles = 0;
    for (int i = 0; i < qc_recipe_profile_count(); i++) {
        const qc_recipe_profile *pr = qc_recipe_profile_at(i);
        if (pr->recipe != QC_RECIPE_BLOCK)
            continue;
        profiles++;
        for (int e = 0; e < 3; e++)
            for (int u = 0; u < 2; u++)
                for (int a = 0; a < 6; a++)
                    for (int b = 0; b < 6; b++) {
                        qc_recipe_policy p = qc_recipe_profile_policy(pr, elems[e], u);
                        /* deepgemm-ref's GPU NaN bits (golden/real/deepgemm-54e2261), which the kernel
                         * declines: its every other knob is checked with the CPU's NaNs */
                        p.nan_canonical = 0;
                        size_t R = rows[a], C = cols[b];
                        if (qcref_recipe_shape_rule(QC_RECIPE_BLOCK, &p, R, C))
                            continue;
                        if (!qc_avx512_quant_supported(QC_RECIPE_BLOCK, &p)) {
                            fprintf(stderr, "FAIL block %s ue8m0 %d: not vectorized\n", pr->name, u);
                            failures++;
                            continue;
                        }
                        size_t ns = qcref_recipe_nscales(QC_RECIPE_BLOCK, &p, R, C);
                        float *x = malloc((R * C + 1) * sizeof *x);
                        fill_block_tiles(x, R, C, a + b + e);
                        qc_quantized want, got;
                        alloc_q(&want, R, C, ns), alloc_q(&got, R, C, ns);
                        qcref_quant(QC_RECIPE_BLOCK, &p, x, R, C, NULL, NULL, &want);
                        if (qc_avx512_quant(QC_RECIPE_BLOCK, &p, x, R, C, NULL, NULL, &got) ||
                            !same_quant(QC_RECIPE_BLOCK, &p, &want, &got)) {
                            fprintf(stderr, "FAIL quant block profile %s elem %s ue8m0 %d shape %zux%zu\n", pr->name,
                                    qc_format_name(p.elem), u, R, C);
                            failures++;
                        } else if (R * C > 0) { /* the comparison must see one flipped code */
                            got.q[(R * C) / 2] ^= 1;
                            quiet = 1;
                            int missed = same_quant(QC_RECIPE_BLOCK, &p, &want, &got);
                            quiet = 0;
                            if (missed) {
                                fprintf(stderr, "FAIL block: a flipped code went unnoticed\n");
                                failures++;
                            }
                        }
                        free_q(&want), free_q(&got), free(x);
                        runs++;
                    }
    }
    printf("quant block: %ld profile rows, %ld instances checked (codes and scales bit for bit)\n", profiles, runs);
    if (profiles == 0) {
        fprintf(stderr, "FAIL block: no block profile rows\n");
        failures++;
    }
}

/* ---- layout ---- */

static void test_sf128x4(void)
{
    static const int64_t Rs[] = {1, 3, 31, 33, 127, 128, 129, 256, 300}, Cs[] = {1, 3, 4, 5, 8, 9, 16};
    long runs = 0;
    for (int64_t B = 1; B <= 2; B++)
        for (int a = 0; a < 9; a++)
            for (int b = 0; b < 7; b++) {
                qc_layout L;
                char err[256];
                if (qcref_layout_plan(&L, &qcref_layout_sf128x4, B, Rs[a], Cs[b], 1, NULL, NULL, 0, err, sizeof err))
                    continue;
                size_t sb = qcref_layout_src_bytes(&L), db = qcref_layout_dst_bytes(&L);
                uint8_t *src = malloc(sb), *want = malloc(db), *got = malloc(db);
                for (size_t i = 0; i < sb; i++)
                    src[i] = (uint8_t)rnd();
                int64_t bad;
                qcref_layout_apply(&L, src, want, &bad);
                memset(got, 0xA5, db);
                qc_avx512_sf128x4(src, B, Rs[a], Cs[b], got);
                if (memcmp(want, got, db)) {
                    fprintf(stderr, "FAIL sf128x4 B=%lld R=%lld C=%lld\n", (long long)B, (long long)Rs[a], (long long)Cs[b]);
                    failures++;
                }
                free(src), free(want), free(got);
                runs++;
            }
    printf("layout sf128x4: %ld shapes checked\n", runs);
}

int main(void)
{
    const char *why = qc_cpu_avx512_unavailable();
    if (why) {
        printf("SKIPPED: %s\n", why);
        return 77;
    }
    const char *s = getenv("QC_SEED");
    rng_state = s ? strtoull(s, NULL, 10) : 20261201ull;
    printf("seed %llu (QC_SEED replays it)\n", rng_state);
    test_minifloat_casts();
    test_bf16_inputs();
    test_e8m0_casts();
    test_e8m0_log2ceil();
    test_rcp();
    test_quant();
    test_clamp_bounds();
    test_nvfp4_given_gscale();
    test_block();
    /* The same instances with every call writing its codes by non-temporal stores (where a 64-byte
     * run of codes is aligned: row 0 always, other rows where cols is a multiple of 64); by
     * default only calls larger than the last-level cache do. */
    size_t stream_min = qc_avx512_set_stream_min(0);
    printf("quant and block again with streamed code stores (threshold 0; default %zu bytes):\n", stream_min);
    test_quant();
    test_block();
    qc_avx512_set_stream_min(stream_min);
    test_sf128x4();
    printf("%s: %d failing checks\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
