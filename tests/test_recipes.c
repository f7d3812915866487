/* test_recipes.c: the quantization recipes, their profiles, the transforms and the GPU reciprocal
 * emulation (docs/spec/formats.md §4-§8, §13).
 *   1. the named semantic catalog (recipe_catalog.h), expected bytes derived by hand from the spec;
 *   2. a deliberately simple second implementation of each recipe's math (doubles, brute-force
 *      nearest code search) compared on random and edge inputs;
 *   3. properties: dequant(quant(x)) within the recipe's bound for every profile, empty tensors,
 *      shapes that are not multiples of the block;
 *   4. transforms: fnuz normalize, requantize with fp16 overflow, MXFP4 -> FP8 tiles, ...;
 *   5. the rcp.approx table: the hash of the table recorded on the H200 and the formats.md §13 figures.
 * Usage: test_recipes [SEED]. Prints every failure with the seed; exit 0 / 1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith/arith.h"
#include "profiles.h"
#include "recipe_catalog.h"
#include "transforms/transforms.h"

static int failures, checks;
static unsigned long long seed = 20261201;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        checks++;                                                                          \
        if (!(cond)) {                                                                     \
            failures++;                                                                    \
            printf("FAIL %s:%d (seed %llu): ", __FILE__, __LINE__, seed);                  \
            printf(__VA_ARGS__);                                                           \
            printf("\n");                                                                  \
        }                                                                                  \
    } while (0)

static float fb(uint32_t b) { return qc_f32_from_bits(b); }
static uint32_t bf(float x) { return qc_f32_bits(x); }

static unsigned long long rng_state;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}
/* log-uniform magnitudes over [2^lo, 2^hi), random sign, some exact zeros */
static float rnd_value(int lo, int hi)
{
    uint32_t r = rnd();
    if (r % 53 == 0)
        return 0.0f;
    double m = 1.0 + (rnd() & 0xFFFFFF) / 16777216.0;
    float v = (float)ldexp(m, lo + (int)(rnd() % (uint32_t)(hi - lo)));
    return (r & 1) ? -v : v;
}

typedef struct job {
    qc_recipe r;
    qc_recipe_policy p;
    qc_quantized qz;
    float *y;
} job;

static int job_run(job *j, const char *recipe, const char *profile, int elem, int ue8m0, const float *x,
                   size_t rows, size_t cols, const float *gs)
{
    memset(j, 0, sizeof *j);
    j->r = (qc_recipe)qc_recipe_from_name(recipe);
    const qc_recipe_profile *pr = qc_recipe_profile_find(profile, j->r);
    if (!pr) {
        CHECK(0, "profile %s of recipe %s missing", profile, recipe);
        return -1;
    }
    j->p = qc_recipe_profile_policy(pr, elem, ue8m0);
    size_t n = rows * cols, ns = qcref_recipe_nscales(j->r, &j->p, rows, cols);
    j->qz.q = calloc(n + 1, 1);
    j->qz.scale_f32 = calloc(ns + 1, 4);
    j->qz.scale_u8 = calloc(ns + 1, 1);
    j->y = calloc(n + 1, 4);
    if (qcref_quant(j->r, &j->p, x, rows, cols, NULL, gs, &j->qz))
        return -1;
    qcref_dequant(j->r, &j->p, &j->qz, j->y);
    return 0;
}

static void job_free(job *j) { free(j->qz.q), free(j->qz.scale_f32), free(j->qz.scale_u8), free(j->y); }

/* The input's element type decides two knobs (qcref_recipe_policy_for_input); expected bytes by
 * hand from the recorded behaviour (formats.md §15.1): sglang-jit clamps an f32/f16 input by
 * fminf(q, 448), so NaN -> 448 = 0x7E, and a bf16 input not at all, so NaN -> satfinite 0x7F;
 * sglang-native on bf16 rounds its scale to bf16: amax 1 -> fl32(1/448) = 0x3B124925, in bf16 0x3B120000. */
static void test_input_type_resolution(void)
{
    float x[128];
    for (int i = 0; i < 128; i++)
        x[i] = 1.0f;
    x[5] = fb(0x7FC00000u);
    static const struct { int in; uint8_t q5; } jit[] = {{QC_F32, 0x7E}, {QC_F16, 0x7E}, {QC_BF16, 0x7F}};
    for (size_t t = 0; t < sizeof jit / sizeof jit[0]; t++) {
        job j;
        if (job_run(&j, "token_group", "sglang-jit", -1, 0, x, 1, 128, NULL) == 0) {
            qc_recipe_policy p = qcref_recipe_policy_for_input(&j.p, (qc_format)jit[t].in);
            CHECK(qcref_quant(j.r, &p, x, 1, 128, NULL, NULL, &j.qz) == 0, "sglang-jit quant");
            CHECK(j.qz.q[5] == jit[t].q5, "sglang-jit, %s input: NaN -> 0x%02X, want 0x%02X",
                  qc_format_name((qc_format)jit[t].in), j.qz.q[5], jit[t].q5);
        }
        job_free(&j);
    }
    x[5] = 1.0f;
    static const struct { int in; uint32_t scale; } native[] = {{QC_F32, 0x3B124925u}, {QC_F16, 0x3B124925u},
                                                               {QC_BF16, 0x3B120000u}};
    for (size_t t = 0; t < sizeof native / sizeof native[0]; t++) {
        job j;
        if (job_run(&j, "tensor", "sglang-native", -1, 0, x, 1, 128, NULL) == 0) {
            qc_recipe_policy p = qcref_recipe_policy_for_input(&j.p, (qc_format)native[t].in);
            CHECK(p.round_bf16 == (native[t].in == QC_BF16), "round_bf16 only for a bf16 input");
            CHECK(qcref_quant(j.r, &p, x, 1, 128, NULL, NULL, &j.qz) == 0, "sglang-native quant");
            CHECK(bf(j.qz.scale_f32[0]) == native[t].scale, "sglang-native, %s input: scale 0x%08X, want 0x%08X",
                  qc_format_name((qc_format)native[t].in), bf(j.qz.scale_f32[0]), native[t].scale);
        }
        job_free(&j);
    }
}

/* ---------------------------------------------------------------------------------------- 1 */
static void test_catalog(void)
{
    for (size_t c = 0; c < sizeof recipe_catalog / sizeof recipe_catalog[0]; c++) {
        const recipe_case *k = &recipe_catalog[c];
        size_t n = (size_t)k->rows * k->cols;
        float *x = calloc(n, 4);
        for (int i = 0; i < k->nx; i++)
            x[i] = fb(k->x[i]);
        job j;
        if (job_run(&j, k->recipe, k->profile, -1, k->ue8m0, x, k->rows, k->cols, NULL) == 0) {
            for (size_t i = 0; i < n; i++) {
                uint8_t want = (int)i < k->nq ? k->q[i] : k->rest;
                CHECK(j.qz.q[i] == want, "%s: q[%zu] = 0x%02X, want 0x%02X (%s)", k->name, i, j.qz.q[i], want, k->why);
            }
            uint32_t got = j.r >= QC_RECIPE_MXFP8 ? j.qz.scale_u8[0] : bf(j.qz.scale_f32[0]);
            CHECK(got == k->scale, "%s: scale 0x%08X, want 0x%08X (%s)", k->name, got, k->scale, k->why);
        }
        job_free(&j);
        free(x);
    }
}

/* NVFP4 block 2 of [1.0 | 1e-7, -1e-7, 0 ...]: SFValue = 2688 * (1e-7/6) = 4.5e-5 < 2^-10 -> byte 0.
 * flashinfer (vecMax != 0): rcp(0 * rcp(gs)) = Inf -> +-6 (0x7/0xF), 0 * Inf = NaN -> +6 (PTX) (formats.md §4.2);
 * sgl-kernel (SFValue != 0 on the decoded scale): multiplier 0 -> 0x0, -0 -> 0x8, 0x0. Also: global amax
 * 0 gives gs = FLT_MAX and the decode scale 1/FLT_MAX = 0x00200000. */
static void test_nvfp4_special_blocks(void)
{
    float x[32] = {0};
    x[0] = 1.0f, x[16] = 1e-7f, x[17] = -1e-7f;
    static const struct { const char *profile; uint8_t q16, q17, q18; } want[] = {
        {"flashinfer-fast", 0x7, 0xF, 0x7}, {"sgl-kernel", 0x0, 0x8, 0x0}};
    for (int i = 0; i < 2; i++) {
        job j;
        if (job_run(&j, "nvfp4", want[i].profile, -1, 0, x, 1, 32, NULL) == 0) {
            CHECK(j.qz.scale_u8[1] == 0, "%s underflow block: sf 0x%02X, want 0", want[i].profile, j.qz.scale_u8[1]);
            CHECK(j.qz.q[16] == want[i].q16 && j.qz.q[17] == want[i].q17 && j.qz.q[18] == want[i].q18,
                  "%s underflow block: codes %X %X %X, want %X %X %X", want[i].profile, j.qz.q[16], j.qz.q[17],
                  j.qz.q[18], want[i].q16, want[i].q17, want[i].q18);
            CHECK(j.y[16] == 0.0f && j.y[17] == 0.0f, "%s underflow block dequantizes to 0", want[i].profile);
        }
        job_free(&j);
    }
    float z[16] = {0};
    job j;
    if (job_run(&j, "nvfp4", "flashinfer-fast", -1, 0, z, 1, 16, NULL) == 0)
        CHECK(bf(j.qz.gscale) == 0x00200000u, "global amax 0: decode gscale 0x%08X, want 1/FLT_MAX = 0x00200000",
              bf(j.qz.gscale));
    job_free(&j);
    if (job_run(&j, "nvfp4", "flashinfer-te", -1, 0, z, 1, 16, NULL) == 0)
        CHECK(j.qz.scale_u8[0] == 0 && j.qz.q[0] == 0, "TE all-zero block: sf 0, codes 0");
    job_free(&j);
    if (job_run(&j, "nvfp4", "torchao", -1, 0, x, 1, 32, NULL) == 0)
        CHECK(j.qz.scale_u8[1] >= 0x08, "torchao never writes an e4m3 subnormal scale (clamp 2^-6): 0x%02X",
              j.qz.scale_u8[1]);
    job_free(&j);
}

/* ---------------------------------------------------------------------------------------- 2 */
/* The second implementation: grids from the definition (formats.md §1.1, §3.1), brute-force nearest. */
static double e4m3_value(int c) { int e = (c >> 3) & 15, m = c & 7; return e ? ldexp(1 + m / 8.0, e - 7) : ldexp(m / 8.0, -6); }
static double e2m1_value(int c) { int e = (c >> 1) & 3, m = c & 1; return e ? ldexp(1 + m / 2.0, e - 1) : m * 0.5; }

/* RNE to the grid with saturation at the largest code (the tests keep NaN out). */
static int nearest(double v, int fp4)
{
    int maxc = fp4 ? 7 : 0x7E, best = 0;
    double a = fabs(v), bd = INFINITY;
    for (int c = 0; c <= maxc; c++) {
        double g = fp4 ? e2m1_value(c) : e4m3_value(c), d = fabs(g - a);
        if (d < bd || (d == bd && (c & 1) == 0))
            bd = d, best = c;
    }
    if (a >= (fp4 ? 6.0 : 448.0))
        best = maxc;
    return best | (signbit(v) ? (fp4 ? 8 : 0x80) : 0);
}

static double pow2_ceil_clamped(float s) /* DeepGEMM ceil_to_ue8m0 by frexp: 2^ceil(log2 s), E in [1, 254] */
{
    int e;
    double m = frexp(s, &e); /* s = m * 2^e, m in [0.5, 1) */
    int k = m == 0.5 ? e - 1 : e;
    k = k < -126 ? -126 : k > 127 ? 127 : k;
    return ldexp(1.0, k);
}

static void slow_block(const float *x, size_t rows, size_t cols, int ue8m0, const job *j)
{
    size_t nc = (cols + 127) / 128;
    for (size_t ti = 0; ti * 128 < rows; ti++)
        for (size_t tj = 0; tj < nc; tj++) {
            double amax = 0;
            for (size_t i = ti * 128; i < rows && i < ti * 128 + 128; i++)
                for (size_t k = tj * 128; k < cols && k < tj * 128 + 128; k++)
                    amax = fmax(amax, fabs(x[i * cols + k]));
            float s = (float)fmax(amax, 1e-4f) * (1.0f / 448.0f);
            if (ue8m0)
                s = (float)pow2_ceil_clamped(s);
            CHECK(j->qz.scale_f32[ti * nc + tj] == s, "block tile (%zu,%zu): scale %a, slow %a", ti, tj,
                  j->qz.scale_f32[ti * nc + tj], s);
            float r = 1.0f / s;
            for (size_t i = ti * 128; i < rows && i < ti * 128 + 128; i++)
                for (size_t k = tj * 128; k < cols && k < tj * 128 + 128; k++) {
                    int want = nearest((float)(x[i * cols + k] * r), 0);
                    CHECK(j->qz.q[i * cols + k] == want, "block (%zu,%zu): 0x%02X, slow 0x%02X", i, k,
                          j->qz.q[i * cols + k], want);
                }
        }
}

static void slow_token_group(const float *x, size_t rows, size_t cols, const job *j)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t g = 0; g < cols / 128; g++) {
            double amax = 1e-10f;
            for (size_t k = 0; k < 128; k++)
                amax = fmax(amax, fabs(x[i * cols + g * 128 + k]));
            float s = (float)amax * (1.0f / 448.0f), mult = 448.0f / (float)amax;
            CHECK(j->qz.scale_f32[i * (cols / 128) + g] == s, "token_group (%zu,%zu): scale %a, slow %a", i, g,
                  j->qz.scale_f32[i * (cols / 128) + g], s);
            for (size_t k = 0; k < 128; k++) {
                size_t o = i * cols + g * 128 + k;
                int want = nearest((float)(x[o] * mult), 0);
                CHECK(j->qz.q[o] == want, "token_group [%zu]: 0x%02X, slow 0x%02X", o, j->qz.q[o], want);
            }
        }
}

/* torchao FLOOR: E = clamp(floor(log2 amax) - emax, -127, 128); x / 2^E, clamp, nearest. */
static void slow_mx_floor(const float *x, size_t rows, size_t cols, int fp4, const job *j)
{
    int emax = fp4 ? 2 : 8;
    for (size_t i = 0; i < rows; i++)
        for (size_t b = 0; b < cols / 32; b++) {
            double amax = 0;
            for (size_t k = 0; k < 32; k++)
                amax = fmax(amax, fabs(x[i * cols + b * 32 + k]));
            int e = -127;
            if (amax >= 0x1p-126) {
                frexp(amax, &e);
                e -= 1;
            }
            int E = e - emax < -127 ? -127 : e - emax;
            CHECK(j->qz.scale_u8[i * (cols / 32) + b] == E + 127, "mx floor block (%zu,%zu): byte %u, slow %d", i, b,
                  j->qz.scale_u8[i * (cols / 32) + b], E + 127);
            for (size_t k = 0; k < 32; k++) {
                size_t o = i * cols + b * 32 + k;
                int want = nearest((float)(x[o] / ldexp(1.0, E)), fp4);
                CHECK(j->qz.q[o] == want, "mx floor [%zu]: 0x%02X, slow 0x%02X", o, j->qz.q[o], want);
            }
        }
}

/* flashinfer TE order with IEEE division (formats.md §4.2 3'). */
static void slow_nvfp4_te(const float *x, size_t rows, size_t cols, const job *j)
{
    double amax_t = 0;
    for (size_t i = 0; i < rows * cols; i++)
        amax_t = fmax(amax_t, fabs(x[i]));
    float gs = amax_t == 0 ? 3.4028235e38f : 2688.0f / (float)amax_t;
    for (size_t i = 0; i < rows; i++)
        for (size_t b = 0; b < cols / 16; b++) {
            double vm = 0;
            for (size_t k = 0; k < 16; k++)
                vm = fmax(vm, fabs(x[i * cols + b * 16 + k]));
            float sfv = (float)vm * (gs * (1.0f / 6.0f));
            int sf = nearest(sfv, 0);
            CHECK(j->qz.scale_u8[i * (cols / 16) + b] == sf, "nvfp4 te block: sf 0x%02X, slow 0x%02X",
                  j->qz.scale_u8[i * (cols / 16) + b], sf);
            float sfdec = (float)e4m3_value(sf), o = vm == 0 ? 0.0f : 1.0f / (sfdec * (1.0f / gs));
            o = o > 3.4028235e38f ? 3.4028235e38f : o;
            for (size_t k = 0; k < 16; k++) {
                size_t q = i * cols + b * 16 + k;
                int want = nearest(x[q] * o, 1);
                CHECK(j->qz.q[q] == want, "nvfp4 te [%zu]: 0x%X, slow 0x%X", q, j->qz.q[q], want);
            }
        }
}

static void fill(float *x, size_t n, int lo, int hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = rnd_value(lo, hi);
    if (n > 40) { /* edge values inside the block structure */
        x[3] = 448.0f, x[5] = -448.0f, x[7] = 0x1p-126f, x[9] = -0.0f, x[11] = 0x1p-149f;
    }
}

static void test_slow_implementations(void)
{
    for (int round = 0; round < 4; round++) {
        int lo = round == 1 ? -40 : -12, hi = round == 2 ? 40 : 12;
        size_t rows = 3 + round, cols = 256;
        float *x = malloc(4 * 130 * 200 + 4 * rows * cols);
        job j;
        fill(x, rows * cols, lo, hi);
        if (!job_run(&j, "token_group", "sgl-kernel-sm100", -1, 0, x, rows, cols, NULL))
            slow_token_group(x, rows, cols, &j);
        job_free(&j);
        if (!job_run(&j, "mxfp8", "torchao-floor", -1, 0, x, rows, cols, NULL))
            slow_mx_floor(x, rows, cols, 0, &j);
        job_free(&j);
        if (!job_run(&j, "mxfp4", "torchao-floor", -1, 0, x, rows, cols, NULL))
            slow_mx_floor(x, rows, cols, 1, &j);
        job_free(&j);
        if (!job_run(&j, "nvfp4", "flashinfer-te", -1, 0, x, rows, cols, NULL))
            slow_nvfp4_te(x, rows, cols, &j);
        job_free(&j);
        fill(x, 130 * 200, lo, hi); /* not a multiple of 128 in either dimension: zero padding */
        for (int ue = 0; ue < 2; ue++) {
            if (!job_run(&j, "block", "deepgemm-ref", -1, ue, x, 130, 200, NULL))
                slow_block(x, 130, 200, ue, &j);
            job_free(&j);
        }
        free(x);
    }
}

/* ---------------------------------------------------------------------------------------- 3 */
/* |dequant - x| <= rel * |x| + min_subnormal(elem) * (largest dequant scale): RNE gives half an ulp,
 * FLOOR-style saturation up to 2^-mbits; rel = 2^-mbits covers both, e2m1 saturation 8 -> 6 needs 1/4. */
static void check_roundtrip(const qc_recipe_profile *pr, const float *x, size_t rows, size_t cols)
{
    job j;
    if (job_run(&j, qc_recipe_name(pr->recipe), pr->name, -1, 0, x, rows, cols, NULL))
        return;
    qc_minifloat m = qcref_minifloat(j.p.elem);
    double rel = j.p.elem == QC_E2M1 ? 0.25 : ldexp(1.0, -m.mbits), smax = 0;
    for (size_t i = 0; i < j.qz.nscales; i++) {
        double s = j.r >= QC_RECIPE_MXFP8 && j.r != QC_RECIPE_NVFP4 ? qcref_e8m0_decode(j.qz.scale_u8[i], j.p.dequant_e8m0)
                 : j.r == QC_RECIPE_NVFP4 ? e4m3_value(j.qz.scale_u8[i] & 0x7F) * j.qz.gscale
                                          : j.qz.scale_f32[i];
        smax = fmax(smax, s);
    }
    double minsub = qcref_minifloat_decode(m, 1);
    int bad = 0;
    for (size_t i = 0; i < rows * cols && bad < 3; i++) {
        double err = fabs((double)j.y[i] - x[i]), bound = rel * fabs(x[i]) + minsub * smax;
        if (!(err <= bound)) {
            bad++;
            CHECK(0, "round trip %s/%s [%zu]: x %a, dequant %a, |err| %g > bound %g", pr->name,
                  qc_recipe_name(pr->recipe), i, x[i], j.y[i], err, bound);
        }
    }
    checks++;
    job_free(&j);
}

static void test_properties(void)
{
    size_t rows = 4, cols = 256;
    float *x = malloc(4 * rows * cols);
    for (int i = 0; i < qc_recipe_profile_count(); i++) {
        const qc_recipe_profile *pr = qc_recipe_profile_at(i);
        for (size_t k = 0; k < rows * cols; k++)
            x[k] = rnd_value(-6, 6);
        check_roundtrip(pr, x, rows, cols);
        /* empty tensor: 0 rows */
        qc_recipe_policy p = qc_recipe_profile_policy(pr, -1, 0);
        qc_quantized qz = {.q = NULL, .scale_f32 = x, .scale_u8 = (uint8_t *)x};
        CHECK(qcref_quant(pr->recipe, &p, x, 0, cols, NULL, NULL, &qz) == 0 &&
                  qz.nscales == (pr->recipe == QC_RECIPE_TENSOR ? 1u : 0u),
              "%s/%s: empty tensor gives %zu scales", pr->name, qc_recipe_name(pr->recipe), qz.nscales);
        /* a K that is not a multiple of the block: refused where the recipe requires it (DeepGEMM's
         * per_token_cast_to_fp8 pads the last group instead, formats.md §14) */
        int needs = pr->recipe >= QC_RECIPE_MXFP8 ||
                    (pr->recipe == QC_RECIPE_TOKEN_GROUP && strcmp(pr->name, "deepgemm-ref") != 0);
        const char *rule = qcref_recipe_shape_rule(pr->recipe, &p, 2, 136);
        CHECK(needs ? rule != NULL : rule == NULL, "%s/%s: K = 136 rule '%s'", pr->name,
              qc_recipe_name(pr->recipe), rule ? rule : "(none)");
    }
    free(x);
}

/* Every recipe has a profile; every name of docs/spec/cli.md "Recipe profiles" defines some recipe; every
 * row's cast profiles exist. */
static void test_profile_table(void)
{
    static const char *const names[] = {"sgl-kernel", "triton-row", "triton-col", "deepgemm-ref", "vllm-cpp",
                                        "flashinfer-fast", "flashinfer-te", "flashinfer-cutedsl", "torchao-floor",
                                        "torchao-rceil", "torchao-ceil", "torchao-even", "torchao", "ocp", "aiter",
                                        "modelopt"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        int found = 0;
        for (int r = 0; r < QC_RECIPE_COUNT; r++)
            found |= qc_recipe_profile_find(names[k], (qc_recipe)r) != NULL;
        CHECK(found, "docs/spec/cli.md recipe profile '%s' defines no recipe", names[k]);
    }
    for (int r = 0; r < QC_RECIPE_COUNT; r++)
        CHECK(qc_recipe_default_profile((qc_recipe)r) != NULL, "recipe %s has no profile", qc_recipe_name(r));
    for (int i = 0; i < qc_recipe_profile_count(); i++) {
        const qc_recipe_profile *p = qc_recipe_profile_at(i);
        CHECK(qc_cast_profile_find(p->cast) && (!p->sf_cast || qc_cast_profile_find(p->sf_cast)) && p->reproduces,
              "profile %s/%s: cast profile or citation missing", p->name, qc_recipe_name(p->recipe));
    }
}

/* token_group scale layouts: col_tma pads M to 4 with zeros; packed_ue8m0 packs 4 groups per int32. */
static void test_scale_layouts(void)
{
    float s[3 * 5], back[3 * 5];
    for (int i = 0; i < 15; i++)
        s[i] = ldexpf(1.0f, i - 7);
    uint8_t buf[256];
    for (int l = 0; l < QC_SL_COUNT; l++) {
        CHECK(qc_scale_layout_apply((qc_scale_layout)l, s, 3, 5, buf) == 0, "layout %s apply", qc_scale_layout_name(l));
        qc_scale_layout_inverse((qc_scale_layout)l, buf, 3, 5, back);
        CHECK(memcmp(s, back, sizeof s) == 0, "layout %s: inverse(apply) != identity", qc_scale_layout_name(l));
        /* locate names, for every byte apply wrote, the scale whose value is there (the values are
         * distinct powers of two), and padding bytes, which apply leaves zero */
        int hits[15] = {0};
        for (size_t b = 0; b < qc_scale_layout_size((qc_scale_layout)l, 3, 5); b++) {
            size_t i, j;
            int padding = qc_scale_layout_locate((qc_scale_layout)l, 3, 5, b, &i, &j);
            if (padding) {
                CHECK(buf[b] == 0, "layout %s byte %zu: padding located but not zero", qc_scale_layout_name(l), b);
                continue;
            }
            float at;
            memcpy(&at, buf + b / 4 * 4, 4);
            int ok = l == QC_SL_PACKED_UE8M0 ? buf[b] == 127 + (int)(i * 5 + j) - 7 : at == s[i * 5 + j];
            CHECK(ok, "layout %s byte %zu located at scale (%zu, %zu), which is not there", qc_scale_layout_name(l), b,
                  i, j);
            hits[i * 5 + j]++;
        }
        for (int k = 0; k < 15; k++)
            CHECK(hits[k] == (l == QC_SL_PACKED_UE8M0 ? 1 : 4), "layout %s: scale %d located %d times",
                  qc_scale_layout_name(l), k, hits[k]);
    }
    CHECK(qc_scale_layout_size(QC_SL_PACKED_UE8M0, 3, 5) == 4 * 2 * 4, "packed size [2, 4] int32");
    qc_scale_layout_apply(QC_SL_PACKED_UE8M0, s, 3, 5, buf);
    /* row 1, groups 4..7 -> int32 (1, 1) at byte 4*(1*4+1); group 4 of row 1 is s[9] = 2^2 -> byte 129 */
    CHECK(buf[4 * (4 + 1)] == 129 && buf[4 * (4 + 1) + 1] == 0, "packed_ue8m0 byte of (1,4): %u", buf[20]);
    CHECK(buf[4 * 1 + 2] == 127 + (1 * 5 + 2) - 7, "packed_ue8m0 byte of (1,2): %u", buf[6]);
    qc_scale_layout_apply(QC_SL_COL_TMA, s, 3, 5, buf);
    float pad;
    memcpy(&pad, buf + 4 * 3, 4);
    CHECK(pad == 0.0f, "col_tma padding row is zero");
}

/* ---------------------------------------------------------------------------------------- 4 */
static void test_transforms(void)
{
    /* formats.md §7.1: 0x80 -> 0x00; 0x7F, 0xFF kept (FNUZ +-240); scale doubled */
    uint8_t w[4] = {0x80, 0x7F, 0xFF, 0x38};
    float sc = 0.5f;
    qcref_normalize_e4m3fn_to_e4m3fnuz(w, 4, &sc, 1);
    CHECK(w[0] == 0x00 && w[1] == 0x7F && w[2] == 0xFF && w[3] == 0x38 && sc == 1.0f,
          "fnuz normalize: %02X %02X %02X %02X scale %g", w[0], w[1], w[2], w[3], sc);

    /* formats.md §7.2: shard 0 scale 200, shard 1 scale 1000 (max). W0 = 448: 448 * 200 = 89600 > 65504 -> fp16 Inf ->
     * Inf / 1000 -> fminf 448 -> 0x7E; with the fp32 intermediate (ATOM) 89.6 -> e4m3 88 = 0x6B. */
    uint8_t ws[2] = {0x7E, 0x38}, ws32[2] = {0x7E, 0x38};
    float scales[2] = {200.0f, 1000.0f};
    size_t widths[2] = {1, 1};
    float m = qcref_requantize_with_max_scale(ws, 1, scales, widths, 2, 1);
    qcref_requantize_with_max_scale(ws32, 1, scales, widths, 2, 0);
    CHECK(m == 1000.0f && ws[0] == 0x7E && ws32[0] == 0x6B, "requantize fp16 overflow: max %g, fp16 0x%02X (want 7E), "
          "fp32 0x%02X (want 6B)", m, ws[0], ws32[0]);
    CHECK(ws[1] == 0x38, "requantize shard 1 (scale = max) keeps 1.0: 0x%02X", ws[1]);
    uint8_t wsent[2] = {0x7E, 0x38};
    float sent[2] = {2.0f, -3.4028235e38f};
    qcref_requantize_with_max_scale(wsent, 1, sent, widths, 2, 1);
    CHECK(wsent[0] == 0x7E && wsent[1] == 0x38, "sentinel scale: no requantization");
    float col[3];
    size_t w3[2] = {2, 1};
    qcref_convert_to_channelwise(scales, w3, 2, col);
    CHECK(col[0] == 200.0f && col[1] == 200.0f && col[2] == 1000.0f, "convert_to_channelwise");
    uint16_t h;
    uint8_t big = 0x7E;
    qcref_per_tensor_dequantize(&big, 1, 200.0f, &h);
    CHECK(h == 0x7C00, "per_tensor_dequantize 448 * 200 -> fp16 +Inf (0x%04X)", h);

    /* formats.md §8.1 tile 32: row 0 scale 2^0 (byte 127), rows 1..31 scale 2^-15 (byte 112): span 2^15 > 2^14.
     * tile_scale = 2^0 / 2^6 = 2^-6 (byte 121); offsets 2^6 and 2^-9. Row 0: 0.5 -> 32 (0x60). Row 1:
     * 0.5 * 2^-9 = 2^-10, the tie 0|2^-9 -> 0x00 (lost); 6 * 2^-9 -> 0x06 (exact); 1.5 * 2^-9 -> tie 1|2 -> 0x02. */
    uint8_t packed[32 * 16], sc8[32], out[32 * 32], tsc[1];
    memset(packed, 0, sizeof packed);
    packed[0] = 0x01;                  /* row 0: element 0 = 0.5 (code 1) */
    packed[16] = 0x7 << 4 | 0x1;       /* row 1: element 0 = 0.5, element 1 = 6 */
    packed[17] = 0x3;                  /* row 1: element 2 = 1.5 */
    for (int r = 0; r < 32; r++)
        sc8[r] = r == 0 ? 127 : 112;
    size_t lossy = qcref_cast_e2m1fn_to_e4m3fn(packed, sc8, 32, 32, 32, 0, out, tsc);
    CHECK(tsc[0] == 121, "fp4->fp8 tile scale byte %u, want 121", tsc[0]);
    CHECK(out[0] == 0x60 && out[32] == 0x00 && out[33] == 0x06 && out[34] == 0x02,
          "fp4->fp8 bytes %02X %02X %02X %02X, want 60 00 06 02", out[0], out[32], out[33], out[34]);
    CHECK(lossy == 31, "fp4->fp8: %zu sub-blocks below max * 2^-14, want 31", lossy);
    for (int r = 0; r < 32; r++)
        sc8[r] = r == 0 ? 127 : 113; /* span exactly 2^14: lossless */
    CHECK(qcref_cast_e2m1fn_to_e4m3fn(packed, sc8, 32, 32, 32, 0, out, tsc) == 0, "span 2^14 is lossless");
    packed[16] = 0x8; /* code 8 (-0): +0 table -> 0x00, -0 table -> 0x80 */
    qcref_cast_e2m1fn_to_e4m3fn(packed, sc8, 32, 32, 32, 0, out, tsc);
    uint8_t pos = out[32];
    qcref_cast_e2m1fn_to_e4m3fn(packed, sc8, 32, 32, 32, 1, out, tsc);
    CHECK(pos == 0x00 && out[32] == 0x80, "code 8 table variants: %02X %02X", pos, out[32]);

    /* formats.md §8.2: power-of-two scales and one 128 x 128 tile: W = 448 * 2^0 -> amax 448 -> s = 448 * fl32(1/448) = 1
     * -> x / 1 -> 0x7E; byte 0 decodes to +0.0 here (shift) -> the element becomes 0 */
    uint8_t wm[128 * 128], su[128 * 4], wo[128 * 128];
    float so[1];
    memset(wm, 0x38, sizeof wm);
    wm[0] = 0x7E;
    memset(su, 127, sizeof su);
    su[4] = 0; /* row 1, first sub-block: descale +0 */
    qcref_convert_mxfp8_weight_to_block_fp8(wm, su, 128, 128, wo, so);
    CHECK(so[0] == 1.0f && wo[0] == 0x7E && wo[1] == 0x38 && wo[128] == 0x00,
          "mxfp8 -> block fp8: scale %g, %02X %02X %02X", so[0], wo[0], wo[1], wo[128]);

    /* formats.md §8.3: scale_inv 1.0 per tile, N = 130 (two row tiles), K = 256 (two K tiles): amax 448 -> s = 448/448
     * = 1 -> ceil_to_ue8m0 = 1 (byte 127) -> data unchanged; packed [1, 132] int32, rows 128..131 = tile 1 */
    static uint8_t wr[130 * 256], wro[130 * 256];
    float si[4] = {1, 1, 1, 1};
    memset(wr, 0x38, sizeof wr);
    wr[0] = 0x7E, wr[128 * 256] = 0x7E, wr[128] = 0x7E, wr[128 * 256 + 128] = 0x7E;
    uint8_t pk[4 * 132];
    CHECK(qcref_requant_weight_ue8m0_packed_bytes(130, 256) == sizeof pk, "requant_weight_ue8m0 packed size");
    qcref_requant_weight_ue8m0(wr, si, 130, 256, wro, pk);
    CHECK(memcmp(wr, wro, sizeof wr) == 0, "requant_weight_ue8m0 with unit power-of-two scales is lossless");
    CHECK(pk[0] == 127 && pk[1] == 127 && pk[2] == 0 && pk[4 * 129] == 127 && pk[4 * 131] == 0,
          "packed ue8m0 bytes %u %u %u row129 %u pad-row131 %u", pk[0], pk[1], pk[2], pk[4 * 129], pk[4 * 131]);
}

/* ---------------------------------------------------------------------------------------- 5 */
/* The table recorded on the H200 (rcp_probe table; docs/notes/rcp_approx.md): FNV-1a 64 of the 2 MiB
 * and the delta counts of formats.md §13 (measured independently of this table). */
static void test_rcp_table(void)
{
    const uint8_t *t = qcref_rcp_table();
    unsigned long long h = 0xcbf29ce484222325ull, count[3] = {0, 0, 0};
    for (uint32_t i = 0; i < QC_RCP_TABLE_BYTES; i++)
        h = (h ^ t[i]) * 0x100000001b3ull;
    for (uint32_t m = 0; m < QC_RCP_MANTISSAS; m++) {
        int d = qcref_rcp_delta(t, m);
        count[d + 1] += d >= -1 && d <= 1;
    }
    CHECK(h == 0x642f2fa58be9a401ull, "rcp table hash %016llx, want 642f2fa58be9a401", h);
    CHECK(count[0] == 374723 && count[1] == 7280086 && count[2] == 733799,
          "rcp deltas -1/0/+1: %llu %llu %llu, formats.md §13: 374723 7280086 733799", count[0], count[1], count[2]);
    CHECK(bf(qcref_rcp_approx_ftz(6.0f)) == 0x3E2AAAABu, "rcp(6) = 0x3E2AAAAB (formats.md §13)");
    CHECK(bf(qcref_rcp_approx_ftz(0.0f)) == 0x7F800000u && bf(qcref_rcp_approx_ftz(-0.0f)) == 0xFF800000u, "rcp(+-0)");
    CHECK(bf(qcref_rcp_approx_ftz(fb(0x00000123u))) == 0x7F800000u, "rcp(subnormal) = +Inf");
    CHECK(bf(qcref_rcp_approx_ftz(fb(INF))) == 0 && bf(qcref_rcp_approx_ftz(fb(NINF))) == 0x80000000u, "rcp(+-Inf)");
    CHECK(bf(qcref_rcp_approx_ftz(fb(0xFFC00001u))) == 0x7FFFFFFFu, "rcp(NaN) = 0x7FFFFFFF");
    CHECK(bf(qcref_rcp_approx_ftz(0x1p127f)) == 0, "rcp(2^127) flushes the subnormal result");
    CHECK(bf(qcref_rcp_approx_ftz(0x1p126f)) == 0x00800000u, "rcp(2^126) = 2^-126");
    CHECK(qcref_div(3.0f, 448.0f, QC_DIV_FAST) == 3.0f * qcref_rcp_approx_ftz(448.0f), "fast division");
    CHECK(bf(qcref_div(0x1p-120f, 0x1p10f, QC_DIV_FAST)) == 0 && qcref_div(0x1p-120f, 0x1p10f, QC_DIV_IEEE) != 0,
          "fast-math division flushes a subnormal quotient");
}

int main(int argc, char **argv)
{
    if (argc > 1)
        seed = strtoull(argv[1], NULL, 10);
    rng_state = seed | 1;
    test_catalog();
    test_nvfp4_special_blocks();
    test_input_type_resolution();
    test_slow_implementations();
    test_properties();
    test_profile_table();
    test_scale_layouts();
    test_transforms();
    test_rcp_table();
    printf("%s: %d checks, %d failed (seed %llu)\n", failures ? "FAIL" : "PASS", checks, failures, seed);
    return failures ? 1 : 0;
}
