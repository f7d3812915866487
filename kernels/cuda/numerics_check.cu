/* numerics_check.cu: the cuda backend's arithmetic (numerics.cuh), compiled for the host, against
 * the scalar reference (libqcref), so that the device code's software paths are checked on a
 * machine without a GPU. Host code only: the hardware instructions (cvt.rn.satfinite.*, cvt.rn.bf16x2,
 * rcp.approx.ftz.f32) are not compiled here; rcp.approx is the reference's emulation (QCK_HOST_RCP),
 * and the policies the PTX conversions implement are checked through the software path they
 * replace (docs/notes/cuda.md says how the hardware side is checked on an H200).
 *
 * Checked: every minifloat under every combination of the cast-policy fields on a sample of
 * fp32 patterns (every bf16 pattern with random low bits, the midpoints of every code and their
 * neighbours); e8m0 under every rule; every decoder; ceilf(log2f()) and exp2f() through the
 * libm table; and per recipe profile (every row of reference/profiles.c, ue8m0 on and off, several
 * element formats) the kernels' per-tile composition of the numerics against qcref_quant and
 * qcref_dequant on inputs with zero blocks, NaN, Inf, tiny, subnormal and huge values.
 * Exit 0 when everything agrees, 1 at the first disagreement (printed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arith/arith.h"
#include "layouts/layouts.h"
#include "profiles.h"

#define QCK_HOST_RCP qcref_rcp_approx_ftz
#include "exact/exact.h"
#include "exact_sum.cuh"
#include "libm_table.h"
#include "numerics.cuh"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next32(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static float fl(uint32_t b)
{
    float x;
    memcpy(&x, &b, 4);
    return x;
}

static uint32_t bi(float x)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    return b;
}

static long failures;
#define FAIL_LIMIT 12
static void report(const char *what)
{
    if (failures++ < FAIL_LIMIT)
        printf("MISMATCH %s\n", what);
}

/* ---------------------------------------------------------------- inputs */

static uint32_t *sample;
static size_t nsample;

static void add(uint32_t b)
{
    sample[nsample++] = b;
}

static void build_sample(void)
{
    sample = (uint32_t *)malloc(sizeof(uint32_t) * (1u << 21));
    for (uint32_t h = 0; h < 65536; h++)
        add(h << 16 | (next32() & 0xFFFFu));
    for (uint32_t h = 0; h < 65536; h += 7)
        add(h << 16);
    /* the midpoints of every 8-bit-and-narrower code of every format, and their neighbours */
    qc_format fs[] = {QC_E4M3FN, QC_E4M3FNUZ, QC_E5M2, QC_E5M2FNUZ, QC_E2M1, QC_E2M3, QC_E3M2};
    for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
        qc_minifloat m = qcref_minifloat(fs[k]);
        for (uint32_t c = 0; c + 1 < (1u << (m.bits - 1)); c++) {
            float a = qcref_minifloat_decode(m, c), b = qcref_minifloat_decode(m, c + 1);
            if (a != a || b != b || isinf(b))
                continue;
            double mid = ((double)a + (double)b) / 2;
            uint32_t mb = bi((float)mid);
            for (int d = -1; d <= 1; d++)
                for (uint32_t s = 0; s < 2; s++)
                    add((mb + (uint32_t)d) | s << 31);
        }
    }
    /* bf16 and f16 midpoints of a random subset of codes */
    for (int k = 0; k < 4096; k++) {
        uint32_t c = next32() & 0x7FFEu;
        float a = qcref_minifloat_decode(qcref_minifloat(QC_F16), c), b = qcref_minifloat_decode(qcref_minifloat(QC_F16), c + 1);
        if (a == a && b == b && !isinf(b))
            add(bi((float)(((double)a + b) / 2)) | (k & 1u) << 31);
        add(((c << 16) | 0x8000u) ^ ((k & 2u) << 30)); /* a bf16 tie */
    }
    uint32_t specials[] = {0, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u,
                           0xFFBFFFFFu, 0x7FFFFFFFu, 0x00000001u, 0x00400000u, 0x00400001u, 0x005FFFFFu, 0x00600000u,
                           0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu, 0x7F000000u, 0x7F400000u, 0x3FC00000u, 0x3FA00000u,
                           0x3FFFFFFFu, 0x43E00000u, 0x43E80000u, 0x43E80001u, 0x43F00000u, 0x47700000u, 0x47800000u};
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++)
        add(specials[k]), add(specials[k] ^ 0x80000000u);
}

/* ---------------------------------------------------------------- casts */

static void check_minifloat_casts(void)
{
    qc_format fs[] = {QC_BF16, QC_F16, QC_E4M3FN, QC_E4M3FNUZ, QC_E5M2, QC_E5M2FNUZ, QC_E2M1, QC_E2M3, QC_E3M2};
    long n = 0;
    for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
        qc_minifloat rm = qcref_minifloat(fs[k]);
        qck_fmt m = qck_format(fs[k]);
        if (qcref_max_magnitude(rm) != m.maxmag)
            report("max magnitude");
        for (int ov = 0; ov < 2; ov++)
            for (int ns = 0; ns < 2; ns++)
                for (int nc = 0; nc < 3; nc++)
                    for (int ti = 0; ti < 3; ti++)
                        for (int nn = 0; nn < 4; nn++)
                            for (int zs = 0; zs < 4; zs++) {
                                qc_cast_policy p = qcref_default_policy();
                                p.overflow = (qc_overflow)ov, p.nan_sign = (qc_nan_sign)ns, p.nan_code = (qc_nan_code)nc;
                                p.ties = (qc_ties)ti, p.nonan = (qc_nonan)nn, p.zero_sign = (qc_zero_sign)zs;
                                /* fields a format does not look at: skip the duplicates */
                                if (m.sp != QC_SPECIALS_IEEE && nc)
                                    continue;
                                if (m.sp != QC_SPECIALS_NONE && nn)
                                    continue;
                                if (m.sp == QC_SPECIALS_NONE && (ov || ns || nc))
                                    continue;
                                size_t stride = m.bits == 16 ? 3 : 1;
                                for (size_t i = k % stride; i < nsample; i += stride) {
                                    float x = fl(sample[i]);
                                    uint32_t want = qcref_minifloat_encode(rm, x, &p);
                                    uint32_t got = qck_encode_minifloat(m, x, p);
                                    if (fs[k] == QC_E2M1 && qck_encode_e2m1(x, p) != want)
                                        report("cast e2m1: the comparison encoder");
                                    n++;
                                    if (want != got) {
                                        char b[200];
                                        snprintf(b, sizeof b, "cast %s x=0x%08x ov%d ns%d nc%d ties%d nonan%d zs%d: want 0x%x got 0x%x",
                                                 qc_format_name(fs[k]), sample[i], ov, ns, nc, ti, nn, zs, want, got);
                                        report(b);
                                    }
                                }
                            }
        /* every code decodes the same */
        for (uint32_t c = 0; c < (1u << rm.bits); c++) {
            uint32_t want = bi(qcref_minifloat_decode(rm, c)), got = bi(qck_decode_minifloat(m, c));
            if (want != got) {
                char b[120];
                snprintf(b, sizeof b, "decode %s 0x%x: want 0x%08x got 0x%08x", qc_format_name(fs[k]), c, want, got);
                report(b);
            }
        }
    }
    printf("minifloat casts: %ld encodes compared, decodes of every code\n", n);
}

static void check_e8m0(const qck_libm *L)
{
    long n = 0;
    for (int r = 0; r < QC_E8M0_RULE_COUNT; r++)
        for (int emax = 0; emax <= 8; emax += 2)
            for (int mb = 1; mb <= 3; mb += 2) {
                qc_cast_policy p = qcref_default_policy();
                p.e8m0 = (qc_e8m0_rule)r, p.e8m0_emax = emax, p.e8m0_mbits = mb;
                for (size_t i = 0; i < nsample; i++) {
                    float x = fl(sample[i]);
                    uint32_t want = qcref_e8m0_encode(x, &p), got = qck_e8m0_encode(x, p, L);
                    n++;
                    if (want != got) {
                        char b[160];
                        snprintf(b, sizeof b, "e8m0 %s emax %d mbits %d x=0x%08x: want 0x%x got 0x%x", qc_e8m0_rule_name(r),
                                 emax, mb, sample[i], want, got);
                        report(b);
                    }
                }
            }
    for (int d = 0; d < QC_E8M0_DECODER_COUNT; d++)
        for (uint32_t c = 0; c < 256; c++)
            if (bi(qcref_e8m0_decode((uint8_t)c, (qc_e8m0_decoder)d)) != bi(qck_e8m0_decode(c, (qc_e8m0_decoder)d)))
                report("e8m0 decode");
    printf("e8m0: %ld encodes under every rule, every decoder\n", n);
}

/* ceilf(log2f()) and exp2f(ceilf(log2f())) through the table, around every threshold and on the sample. */
static void check_floor_log2(uint32_t b, const qck_libm *L)
{
    float want = floorf(log2f(fl(b)));
    if ((float)qck_floor_log2(b, L) != want) {
        char s[100];
        snprintf(s, sizeof s, "log2-floor x=0x%08x: libm %g", b, want);
        report(s);
    }
}

static void check_libm(const qck_libm *L)
{
    if (!L->ok)
        report("libm table: log2f is not run-structured on this host");
    long n = 0;
    for (uint32_t e = 0; e <= 254; e++)
        for (int k = 0; k < 64; k++) {
            uint32_t b;
            if (e) {
                int32_t t = L->thr_norm[e];
                uint32_t off = k < 8 ? (uint32_t)(t + k - 3 < 0 ? 0 : t + k - 3) : next32() & 0x7FFFFFu;
                b = e << 23 | (off & 0x7FFFFFu);
            } else {
                b = next32() & 0x7FFFFFu;
                b = b ? b : 1;
            }
            float x = fl(b);
            float want = ceilf(log2f(x));
            int got = qck_ceil_log2(b, L);
            float pw = exp2f(want), pg = qck_pow2_log2_ceil(x, L);
            n++;
            if ((float)got != want || bi(pw) != bi(pg)) {
                char s[120];
                snprintf(s, sizeof s, "log2-ceil x=0x%08x: libm %g got %d (exp2 0x%08x vs 0x%08x)", b, want, got, bi(pw), bi(pg));
                report(s);
            }
        }
    for (size_t i = 0; i < nsample; i++) {
        float x = fabsf(fl(sample[i]));
        if (x != x)
            continue;
        float pw = exp2f(ceilf(log2f(x))), pg = qck_pow2_log2_ceil(x, L);
        n++;
        if (bi(pw) != bi(pg)) {
            char s[120];
            snprintf(s, sizeof s, "pow2 log2-ceil x=0x%08x: libm 0x%08x got 0x%08x", bi(x), bi(pw), bi(pg));
            report(s);
        }
    }
    /* floorf(log2f()): around every binade's closing run, at random, and on every subnormal */
    for (uint32_t e = 1; e <= 254; e++)
        for (int k = 0; k < 64; k++, n++) {
            int32_t t = L->top_norm[e];
            uint32_t off = k < 8 ? (uint32_t)(t + k - 4 < 0 ? 0 : t + k - 4) : next32() & 0x7FFFFFu;
            check_floor_log2(e << 23 | (off & 0x7FFFFFu), L);
        }
    for (uint32_t b = 1; b < 0x00800000u; b++, n++)
        check_floor_log2(b, L);
    printf("libm table: %ld values of ceilf(log2f()) / floorf(log2f()) / exp2f()\n", n);
}

/* ---------------------------------------------------------------- recipes */

/* The kernels' composition (kernels.cu qck_group_step, qck_tile_kernel, qck_final_kernel) on the host. */
static void host_quant(qc_recipe r, const qc_recipe_policy &p, const float *x, size_t rows, size_t cols,
                       const float *static_scale, const float *gscale, const qck_libm *L, uint8_t *codes,
                       float *scale_f32, uint8_t *scale_u8, float *gs_out)
{
    const qck_fmt m = qck_format(p.elem);
    size_t tr, tc, nr, nc;
    switch (r) {
    case QC_RECIPE_TENSOR: tr = rows ? rows : 1, tc = cols ? cols : 1, nr = 1, nc = 1; break;
    case QC_RECIPE_TOKEN: tr = 1, tc = cols ? cols : 1, nr = rows, nc = 1; break;
    case QC_RECIPE_BLOCK:
        tr = (size_t)p.block_r, tc = (size_t)p.block_c, nr = (rows + tr - 1) / tr, nc = (cols + tc - 1) / tc;
        break;
    default: tr = 1, tc = (size_t)p.group, nr = rows, nc = cols / tc; break;
    }
    float g = 0;
    if (r == QC_RECIPE_NVFP4) {
        float amax = 0;
        for (size_t i = 0; i < rows * cols; i++) {
            float a = fabsf(x[i]);
            if (a != a) {
                if (p.amax_nan == QC_AMAX_NAN_PROPAGATE) {
                    amax = a;
                    break;
                }
                continue;
            }
            amax = a > amax ? a : amax;
        }
        g = qck_nv_global(p, amax, gscale != NULL, gscale ? *gscale : 0.0f);
        *gs_out = qck_nv_gscale_out(p, g);
    }
    for (size_t ti = 0; ti < nr; ti++)
        for (size_t tj = 0; tj < nc; tj++) {
            size_t r0 = ti * tr, r1 = r0 + tr < rows ? r0 + tr : rows, c0 = tj * tc, c1 = c0 + tc < cols ? c0 + tc : cols;
            uint32_t mx = 0;
            int found = 0;
            float nanv = 0;
            for (size_t i = r0; i < r1; i++)
                for (size_t j = c0; j < c1; j++) {
                    uint32_t b = bi(x[i * cols + j]) & QCK_ABS;
                    if (b > QCK_INF) {
                        if (!found)
                            found = 1, nanv = fl(b);
                    } else if (b > mx) {
                        mx = b;
                    }
                }
            float amax = (found && p.amax_nan == QC_AMAX_NAN_PROPAGATE) ? nanv : fl(mx);
            qck_elem_op op;
            if (r >= QC_RECIPE_MXFP8 && r <= QC_RECIPE_MXFP4) {
                uint32_t E = qck_mx_byte(amax, p, L);
                scale_u8[ti * nc + tj] = (uint8_t)E;
                op = qck_mx_op(E, amax, p);
            } else if (r == QC_RECIPE_NVFP4) {
                uint32_t sf = qck_encode_e4m3_sf(qck_nv_sf_value(p, amax, g), p.sf_cast);
                scale_u8[ti * nc + tj] = (uint8_t)sf;
                op = qck_nv_op(p, amax, qck_decode_minifloat(qck_format(QC_E4M3FN), sf), g);
            } else {
                float s = static_scale ? *static_scale : qck_tiled_scale(amax, p, L);
                scale_f32[ti * nc + tj] = s;
                op = qck_tiled_op(s, amax, p);
            }
            for (size_t i = r0; i < r1; i++)
                for (size_t j = c0; j < c1; j++)
                    codes[i * cols + j] = (uint8_t)qck_encode_minifloat(m, qck_clamp(qck_apply(op, x[i * cols + j]), p), p.cast);
        }
}

/* The dequant kernel's arithmetic on the canonical layouts. */
static void host_dequant(qc_recipe r, const qc_recipe_policy &p, const qc_quantized *qz, float *y)
{
    const qck_fmt m = qck_format(p.elem), sfm = qck_format(QC_E4M3FN);
    size_t rows = qz->rows, cols = qz->cols;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            float v = qck_decode_minifloat(m, qz->q[i * cols + j]);
            if (r >= QC_RECIPE_MXFP8) {
                size_t g = (size_t)p.group, o = i * (cols / g) + j / g;
                y[i * cols + j] = r == QC_RECIPE_NVFP4 ? qck_mul(qck_mul(v, qck_decode_minifloat(sfm, qz->scale_u8[o])), qz->gscale)
                                                       : qck_mul(v, qck_e8m0_decode(qz->scale_u8[o], p.dequant_e8m0));
                continue;
            }
            size_t o;
            switch (r) {
            case QC_RECIPE_TENSOR: o = 0; break;
            case QC_RECIPE_TOKEN: o = i; break;
            case QC_RECIPE_BLOCK:
                o = (i / (size_t)p.block_r) * ((cols + (size_t)p.block_c - 1) / (size_t)p.block_c) + j / (size_t)p.block_c;
                break;
            default: o = i * (cols / (size_t)p.group) + j / (size_t)p.group; break;
            }
            y[i * cols + j] = qck_mul(v, qz->scale_f32[o]);
        }
}

/* A test input: normal values times scale, some zero groups, and edge values at fixed places. */
static void make_input(float *x, size_t rows, size_t cols, int variant)
{
    for (size_t i = 0; i < rows * cols; i++) {
        uint32_t u = next32();
        float v = ((float)(u & 0xFFFF) / 32768.0f - 1.0f) * (variant == 2 ? 1e-3f : 4.0f);
        if ((u >> 16) % 61 == 0)
            v *= 300.0f; /* outliers */
        x[i] = v;
    }
    if (variant == 0)
        return;
    for (size_t i = 0; i < rows * cols; i += 37 + variant) {
        static const uint32_t edges[] = {0x7FC00000u, 0xFFC00001u, 0x7F800000u, 0xFF800000u, 0x80000000u, 0x00000001u,
                                         0x00400000u, 0x7F7FFFFFu, 0x43E00000u, 0x43E80000u, 0x40C00000u, 0x40A00000u,
                                         0x3F400000u, 0x00000000u, 0x0A000000u, 0x43E80001u};
        x[i] = fl(edges[(i / 37) % (sizeof edges / sizeof edges[0])]);
    }
    for (size_t i = 0; i + 64 <= rows * cols; i += 512) /* zero blocks */
        for (size_t k = 0; k < 64; k++)
            x[i + k] = (k & 1) ? -0.0f : 0.0f;
}

static void check_recipes(const qck_libm *L)
{
    const size_t R = 9, C = 256;
    float *x = (float *)malloc(sizeof(float) * R * C * 64), *y0 = (float *)malloc(sizeof(float) * R * C * 64),
          *y1 = (float *)malloc(sizeof(float) * R * C * 64);
    uint8_t *codes = (uint8_t *)malloc(R * C * 64), *su8 = (uint8_t *)malloc(R * C * 64);
    float *sf32 = (float *)malloc(sizeof(float) * R * C * 64);
    long jobs = 0, elems = 0;
    for (int pi = 0; pi < qc_recipe_profile_count(); pi++) {
        const qc_recipe_profile *prof = qc_recipe_profile_at(pi);
        qc_recipe r = prof->recipe;
        int elems_to_try[4] = {-1, -1, -1, -1};
        if (r == QC_RECIPE_TOKEN_GROUP)
            elems_to_try[1] = QC_E4M3FNUZ, elems_to_try[2] = QC_E2M1;
        else if (r <= QC_RECIPE_BLOCK)
            elems_to_try[1] = QC_E5M2, elems_to_try[2] = QC_E4M3FNUZ;
        else if (r == QC_RECIPE_MXFP8)
            elems_to_try[1] = QC_E5M2, elems_to_try[2] = QC_E4M3FNUZ;
        else if (r == QC_RECIPE_MXFP6)
            elems_to_try[1] = QC_E3M2;
        for (int ei = 0; ei < 3; ei++) {
            if (ei && elems_to_try[ei] < 0)
                continue;
            for (int ue = 0; ue < 2; ue++) {
                if (ue && r != QC_RECIPE_TOKEN_GROUP && r != QC_RECIPE_BLOCK)
                    continue;
                qc_recipe_policy p = qc_recipe_profile_policy(prof, elems_to_try[ei], ue);
                static const size_t shapes[][2] = {{9, 256}, {1, 96}, {3, 64}, {130, 200}, {2, 7}, {0, 32}};
                for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
                    for (int variant = 0; variant < 4; variant++) {
                        size_t rows = shapes[si][0], cols = shapes[si][1];
                        if (qcref_recipe_shape_rule(r, &p, rows, cols))
                            continue;
                        if (r == QC_RECIPE_TOKEN_GROUP && cols % (size_t)p.group)
                            continue; /* a partial token group: the backend declines it (runtime.cu quant_setup) */
                        make_input(x, rows, cols, variant);
                        float st = 0.0123f, ge = variant == 3 ? 100.0f : 0.0f;
                        const float *stp = (r == QC_RECIPE_TENSOR && variant == 3) ? &st : NULL;
                        const float *gep = (r == QC_RECIPE_NVFP4 && variant == 3) ? &ge : NULL;
                        size_t n = rows * cols, ns = qcref_recipe_nscales(r, &p, rows, cols);
                        qc_quantized qz = {rows, cols, (uint8_t *)malloc(n + 1), (float *)malloc(4 * ns + 4),
                                           (uint8_t *)malloc(ns + 1), 0, ns};
                        qcref_quant(r, &p, x, rows, cols, stp, gep, &qz);
                        float gs = 0;
                        host_quant(r, p, x, rows, cols, stp, gep, L, codes, sf32, su8, &gs);
                        jobs++, elems += (long)n;
                        char what[220];
                        snprintf(what, sizeof what, "quant %s profile %s elem %s ue8m0 %d shape %zux%zu variant %d",
                                 qc_recipe_name(r), prof->name, qc_format_name(p.elem), ue, rows, cols, variant);
                        for (size_t i = 0; i < n; i++)
                            if (codes[i] != qz.q[i]) {
                                char b[400];
                                snprintf(b, sizeof b, "%s: code %zu (x=0x%08x): want 0x%x got 0x%x", what, i, bi(x[i]),
                                         qz.q[i], codes[i]);
                                report(b);
                                break;
                            }
                        for (size_t i = 0; i < ns; i++) {
                            int bad = r >= QC_RECIPE_MXFP8 ? su8[i] != qz.scale_u8[i] : bi(sf32[i]) != bi(qz.scale_f32[i]);
                            if (bad) {
                                char b[400];
                                snprintf(b, sizeof b, "%s: scale %zu: want 0x%08x got 0x%08x", what, i,
                                         r >= QC_RECIPE_MXFP8 ? qz.scale_u8[i] : bi(qz.scale_f32[i]),
                                         r >= QC_RECIPE_MXFP8 ? su8[i] : bi(sf32[i]));
                                report(b);
                                break;
                            }
                        }
                        if (r == QC_RECIPE_NVFP4 && bi(gs) != bi(qz.gscale)) {
                            char b[300];
                            snprintf(b, sizeof b, "%s: gscale want 0x%08x got 0x%08x", what, bi(qz.gscale), bi(gs));
                            report(b);
                        }
                        qcref_dequant(r, &p, &qz, y0);
                        host_dequant(r, p, &qz, y1);
                        for (size_t i = 0; i < n; i++)
                            if (bi(y0[i]) != bi(y1[i])) {
                                char b[300];
                                snprintf(b, sizeof b, "%s: dequant %zu: want 0x%08x got 0x%08x", what, i, bi(y0[i]), bi(y1[i]));
                                report(b);
                                break;
                            }
                        free(qz.q), free(qz.scale_f32), free(qz.scale_u8);
                    }
            }
        }
    }
    printf("recipes: %ld jobs (%ld elements) of every profile, quant and dequant\n", jobs, elems);
    free(x), free(y0), free(y1), free(codes), free(su8), free(sf32);
}

/* The division modes against reference/arith (rcp.approx through the same emulation). */
static void check_arith(void)
{
    for (size_t i = 0; i < nsample; i += 3) {
        float a = fl(sample[i]), b = fl(sample[(i * 7919) % nsample]);
        for (int m = 0; m < 3; m++) {
            if (bi(qcref_div(a, b, (qc_div_mode)m)) != bi(qck_div_mode(a, b, (qc_div_mode)m)))
                report("div mode");
            if (bi(qcref_recip(b, (qc_div_mode)m)) != bi(qck_recip(b, (qc_div_mode)m)))
                report("recip mode");
        }
        if (bi(qcref_fl32_mul_ftz(a, b)) != bi(qck_mul_ftz(a, b)) || bi(qcref_fl32_mul(a, b)) != bi(qck_mul(a, b)))
            report("mul");
    }
    printf("arith: division modes, reciprocals and products on %zu pairs\n", nsample / 3);
}

/* qck_sf_offset against the reference's maps (reference/layouts/sf128x4.c), both tiles: every
 * (r, c) of a small grid, and random ones on grids of up to 2^40 bytes (64-bit indices) and of up
 * to 2^32 (32-bit indices too: the group kernel's, whose launch holds its grid to 2^32 bytes,
 * qck_group_kernel_fits; their products wrap modulo 2^32, and the offset is below it). */
static void check_sf_offset(void)
{
    long n = 0, n32 = 0;
    for (int tile = 8; tile <= 128; tile += 120)
        for (int k = 0; k < 300000; k++) {
            uint32_t r, c;
            int64_t Cp;
            bool small = k % 2 == 0;
            if (k < 256 * 12) {
                r = (uint32_t)(k / 12), c = (uint32_t)(k % 12), Cp = 12;
            } else {
                /* whole bands of rows (the padded grid), at most 2^32 or 2^40 bytes (the reference's
                 * signed products stay in range) */
                Cp = (int64_t)(next32() >> (next32() % 32)) / 4 * 4 + 4;
                uint64_t bands = ((small ? 1ull << 32 : 1ull << 40) / (uint64_t)Cp) / (uint64_t)tile;
                uint64_t rows = bands * (uint64_t)tile, rnd = (uint64_t)next32() << 32 | next32();
                rows = rows < (1ull << 32) ? rows : (1ull << 32);
                if (rows == 0) /* one band wider than the limit: a grid no launch gives */
                    continue;
                r = (uint32_t)(rnd % rows) >> (next32() % 32), c = (uint32_t)((uint64_t)next32() * (uint64_t)Cp >> 32);
            }
            int64_t want = tile == 8 ? qcref_sf8x4_offset(r, c, Cp) : qcref_sf128x4_offset(r, c, Cp);
            int64_t got64 = qck_sf_offset<int64_t>(r, c, Cp, tile);
            int64_t got32 = small ? qck_sf_offset<uint32_t>(r, c, Cp, tile) : want;
            /* the row-major map of the same grid (qck_u8_map's third form): r * Cp + c */
            int64_t row64 = qck_u8_offset<int64_t>(qck_rowmajor_map(Cp), r, c);
            int64_t row32 = small && (uint64_t)r * (uint64_t)Cp + c < (1ull << 32) ?
                                qck_u8_offset<uint32_t>(qck_rowmajor_map(Cp), r, c) : (int64_t)r * Cp + c;
            n++, n32 += small;
            if (row64 != (int64_t)r * Cp + c || row32 != row64) {
                char b[160];
                snprintf(b, sizeof b, "row-major u8 offset (C %lld) r %u c %u: got %lld / %lld", (long long)Cp, r, c,
                         (long long)row32, (long long)row64);
                report(b);
            }
            if (want != got32 || want != got64) {
                char b[160];
                snprintf(b, sizeof b, "sf offset (tile %d, Cp %lld) r %u c %u: want %lld got %lld / %lld", tile,
                         (long long)Cp, r, c, (long long)want, (long long)got32, (long long)got64);
                report(b);
            }
        }
    printf("sf offsets: %ld (r, c) pairs against the reference's maps and the row-major product, %ld of them with "
           "32-bit indices\n",
           n, n32);
}

/* qck_fastdiv against the division: every divisor to 2^17 and random ones to 2^32, each on the
 * numerators around its multiples, the ends of the range and random ones. */
static void check_fastdiv(void)
{
    long n = 0;
    for (uint64_t t = 1; t < (1u << 17) + 4096; t++) {
        uint32_t d = t <= (1u << 17) ? (uint32_t)t : next32() | 1u << 31 >> (next32() % 31);
        qck_fastdiv f = qck_fastdiv_of(d);
        uint32_t probe[12] = {0, 1, d - 1, d, d + 1, 0xFFFFFFFFu, 0xFFFFFFFFu - 0xFFFFFFFFu % d,
                              0xFFFFFFFFu - 0xFFFFFFFFu % d - 1, next32(), next32(), 2 * d - 1, 2 * d};
        for (int k = 0; k < 12; k++, n++)
            if (qck_fastdiv_div(f, probe[k]) != probe[k] / d) {
                char b[120];
                snprintf(b, sizeof b, "fastdiv %u / %u: want %u got %u", probe[k], d, probe[k] / d,
                         qck_fastdiv_div(f, probe[k]));
                report(b);
            }
    }
    printf("fastdiv: %ld quotients\n", n);
}

/* qck_hw_fp8_clean_ok: where it lets the group kernel's clean slots take the cvt instruction, the
 * recipe's cast and the instruction's (profile ptx, equal to it on all 2^32 inputs: bring-up) must
 * give the same code for every fp32 value in [-clamp_max, clamp_max]. A round-to-nearest encode is
 * a function of the sign, the exponent, the kept mantissa bits, the round bit and the sticky bit:
 * every magnitude up to clamp_max whose top 12 mantissa bits take every value and whose low 11 are
 * 0, 1 or 0x7FF meets every such combination of e4m3 and e5m2 (3 or 2 kept bits). */
/* The magnitude of rounding class lo (0, 1, 2: low 11 bits 0, 1 or 0x7FF) under the top bits hi:
 * every combination of kept bits, round bit and sticky bit for a target of up to 12 kept bits. */
static uint32_t class_mag(uint32_t hi, int lo) { return hi << 11 | (lo == 0 ? 0u : lo == 1 ? 1u : 0x7FFu); }

static void check_clean_cvt(void)
{
    const qc_cast_profile *ptx = qc_cast_profile_find("ptx");
    long policies = 0, values = 0;
    for (int pi = 0; pi < qc_recipe_profile_count(); pi++) {
        const qc_recipe_profile *prof = qc_recipe_profile_at(pi);
        for (int e = 0; e < 2; e++) {
            qc_format f = e ? QC_E5M2 : QC_E4M3FN;
            qc_recipe_policy p = qc_recipe_profile_policy(prof, f, 0);
            if (p.elem != f || !qck_hw_fp8_clean_ok(p))
                continue;
            const qc_cast_policy hw = qc_cast_profile_policy(ptx, f);
            const qc_minifloat m = qcref_minifloat(f);
            const uint32_t top = bi(p.clamp_max);
            policies++;
            for (uint32_t hi = 0; hi <= top >> 11; hi++)
                for (int lo = 0; lo < 3; lo++) {
                    uint32_t mag = class_mag(hi, lo);
                    if (mag > top)
                        continue;
                    for (uint32_t sign = 0; sign < 2; sign++, values++) {
                        float x = fl(mag | sign << 31);
                        uint32_t want = qcref_minifloat_encode(m, x, &hw), got = qcref_minifloat_encode(m, x, &p.cast);
                        if (want != got) {
                            char b[200];
                            snprintf(b, sizeof b, "clean cvt: profile %s %s x=0x%08x: instruction 0x%02x, policy 0x%02x",
                                     prof->name, qc_format_name(f), bi(x), want, got);
                            report(b);
                        }
                    }
                }
        }
    }
    printf("clean cvt: %ld recipe policies take the instruction on clean slots, %ld values each equal\n", policies,
           values);
    if (policies == 0)
        report("clean cvt: no policy takes the instruction (the check checked nothing)");
}

/* qck_e2m1_rne_sat against the reference's e2m1 encoder under profile ptx (ties to even, the sign
 * of zero kept) and under every recipe's e2m1 cast that qck_e2m1_rne_ok lets take it (below 7 in
 * magnitude also the one without the saturation step), on every
 * exponent with the top 12 mantissa bits taking every value and the low 11 0, 1 or 0x7FF (every
 * combination of kept bit, round bit and sticky bit), both signs, and Inf; qck_decode_e4m3fn
 * against the reference on all 256 codes, qck_decode_e4m3fn_finite on the 254 that are not NaN. */
static void check_fast_fp4(void)
{
    const qc_minifloat m = qcref_minifloat(QC_E2M1), e4 = qcref_minifloat(QC_E4M3FN);
    qc_cast_policy pols[64];
    int np = 0;
    pols[np++] = qc_cast_profile_policy(qc_cast_profile_find("ptx"), QC_E2M1);
    for (int pi = 0; pi < qc_recipe_profile_count() && np < 64; pi++) {
        qc_recipe_policy p = qc_recipe_profile_policy(qc_recipe_profile_at(pi), QC_E2M1, 0);
        int seen = 0;
        for (int k = 0; k < np && !seen; k++)
            seen = !memcmp(&pols[k], &p.cast, sizeof p.cast);
        if (p.elem == QC_E2M1 && qck_e2m1_rne_ok(p.cast) && !seen)
            pols[np++] = p.cast;
    }
    long values = 0;
    for (int k = 0; k < np; k++) {
        if (!qck_e2m1_rne_ok(pols[k]))
            report("fast e2m1: profile ptx's e2m1 cast is not ties-even, zero-keeping");
        for (uint32_t hi = 0; hi <= 0x7F800000u >> 11; hi++)
            for (int lo = 0; lo < 3; lo++) {
                uint32_t mag = class_mag(hi, lo);
                if (mag > 0x7F800000u)
                    continue;
                for (uint32_t sign = 0; sign < 2; sign++, values++) {
                    float x = fl(mag | sign << 31);
                    uint32_t want = qcref_minifloat_encode(m, x, &pols[k]), got = qck_e2m1_rne_sat(x);
                    /* without the saturation where the kernel leaves it out: |x| < 7 */
                    uint32_t got_unsat = mag < 0x40E00000u ? qck_e2m1_rne_sat<false>(x) : want;
                    if (want != got || want != got_unsat) {
                        char b[160];
                        snprintf(b, sizeof b, "fast e2m1%s: policy %d x=0x%08x: want 0x%x got 0x%x",
                                 want != got ? "" : " (no saturation)", k, bi(x), want, want != got ? got : got_unsat);
                        report(b);
                    }
                }
            }
    }
    for (uint32_t c = 0; c < 256; c++)
        if (bi(qcref_minifloat_decode(e4, c)) != bi(qck_decode_e4m3fn(c)) ||
            ((c & 0x7Fu) != 0x7Fu && bi(qcref_minifloat_decode(e4, c)) != bi(qck_decode_e4m3fn_finite(c)))) {
            char b[80];
            snprintf(b, sizeof b, "fast e4m3 decode 0x%02x", c);
            report(b);
        }
    printf("fast fp4: e2m1 of %d distinct policies on %ld values each, e4m3 decode of 256 codes\n", np, values / (np ? np : 1));
}

/* The group kernel's nvfp4 step without the NaN rules (kernels.cu qck_group_step, Finite = true)
 * against the step with them, on the condition the kernel takes it: the FAST order, the satfinite
 * block-scale cast, qck_nv_g_normal(g) and a finite amax. g and amax of every kind (zero, subnormal,
 * Inf, NaN, near the e4m3 codes' midpoints), so a condition too wide shows as a mismatch. */
static void check_nv_fast_finite(void)
{
    long pairs = 0, lean = 0;
    for (int pi = 0; pi < qc_recipe_profile_count(); pi++) {
        const qc_recipe_profile *rp = qc_recipe_profile_at(pi);
        qc_recipe_policy p = qc_recipe_profile_policy(rp, QC_E2M1, 0);
        if (rp->recipe != QC_RECIPE_NVFP4 || p.nv_order != QC_NVFP4_FAST || !qck_hw_fp8_ok(QC_E4M3FN, p.sf_cast))
            continue;
        for (int n = 0; n < 400000; n++, pairs++) {
            float amax = fl(sample[next32() % nsample] & QCK_ABS);
            float g = next32() % 4 ? fl(sample[next32() % nsample]) : 2688.0f / fl(sample[next32() % nsample] & QCK_ABS);
            if (!qck_nv_g_normal(g) || (bi(amax) & QCK_ABS) >= QCK_INF)
                continue;
            lean++;
            uint32_t sf = qck_encode_e4m3_sf(qck_nv_sf_value(p, amax, g), p.sf_cast);
            uint32_t sf_lean = qck_encode_e4m3_satfinite(qck_nv_fast_sf_value<true>(amax, g), p.sf_cast);
            float sfdec = qck_decode_e4m3fn(sf), out = qck_nv_output_scale(p, amax, sfdec, g);
            float sfdec_lean = qck_decode_e4m3fn_finite(sf_lean);
            float out_lean = qck_nv_fast_output_scale<true>(qck_nv_zero(p, amax, sfdec_lean), sfdec_lean, qck_rcp_approx(g));
            /* the condition's claim itself: no product of the step is NaN (this host's multiply follows
             * the x86 NaN rules, so equal results alone would not show a NaN the GPU gives otherwise) */
            float p1 = amax * qck_rcp_approx(6.0f), p2 = g * p1, p3 = sfdec * qck_rcp_approx(g);
            if (p1 != p1 || p2 != p2 || p3 != p3 || sf != sf_lean || bi(out) != bi(out_lean)) {
                char b[200];
                snprintf(b, sizeof b, "nvfp4 step without NaN rules (%s): amax 0x%08x g 0x%08x: sf 0x%02x/0x%02x, scale 0x%08x/0x%08x",
                         rp->name, bi(amax), bi(g), sf, sf_lean, bi(out), bi(out_lean));
                report(b);
            }
        }
    }
    printf("nvfp4 FAST step without the NaN rules: %ld of %ld (amax, g) pairs on its condition, equal to the full step\n",
           lean, pairs);
}

/* ---------------------------------------------------------------- exact sums */

/* One dot a . b + bias three ways: the device's fixed-point accumulator (exact_sum.cuh), MPFR
 * summing exactly, and the host reference's filtered fp64 GEMM (exact.h qcx_gemm_rn32), which must
 * all give the same fp32 bits. */
static void exact_dot_case(const double *a, const double *b, int k, float bias, const char *what)
{
    qck_exact_sum s;
    qck_xs_init(&s);
    for (int i = 0; i < k; i++)
        qck_xs_add_product(&s, a[i], b[i]);
    qck_xs_add(&s, (double)bias);
    float dev = qck_xs_round_f32(&s), mp = qcx_dot_rn32_mpfr(a, b, (size_t)k, (double)bias), ref = NAN;
    int rc = qcx_gemm_rn32(1, 1, (size_t)k, a, b, &bias, &ref);
    if (rc || bi(dev) != bi(mp) || bi(ref) != bi(mp)) {
        char m[200];
        snprintf(m, sizeof m, "exact dot (%s, k %d): device 0x%08X, MPFR 0x%08X, reference 0x%08X (rc %d)", what, k,
                 bi(dev), bi(mp), bi(ref), rc);
        report(m);
    }
}

/* A dequantized operand: a code of up to 8 significant bits (lsb >= 2^-16) times an fp32 scale (24 bits,
 * lsb >= 2^-149, below 2^100): the products stay inside exact_sum.cuh's range. */
static double random_operand(void)
{
    double code = (double)(next32() & 0xFF) * ldexp(1.0, (int)(next32() % 16) - 16);
    double scale = (double)((next32() & 0xFFFFFF) | 1) * ldexp(1.0, (int)(next32() % 226) - 149);
    return next32() & 1 ? -code * scale : code * scale;
}

/* The midpoint above fp32 f (a double: 25 significant bits), or f's upper neighbour minus half the gap. */
static double midpoint_above(float f)
{
    uint32_t b = bi(f);
    return ((double)f + (double)fl(b + 1)) / 2;
}

static void check_exact_sum(void)
{
    if (!qcx_have_mpfr()) {
        printf("exact sums: SKIPPED (this build has no MPFR)\n");
        return;
    }
    double a[64], b[64];
    for (int n = 0; n < 20000; n++) { /* random dots, wide ranges, cancellation by chance */
        int k = 1 + (int)(next32() % 48);
        for (int i = 0; i < k; i++)
            a[i] = random_operand(), b[i] = random_operand();
        exact_dot_case(a, b, k, next32() & 1 ? fl(next32() & 0xBFFFFFFFu) : 0.0f, "random");
    }
    for (int n = 0; n < 20000; n++) { /* near an fp32 rounding boundary: ties, ties +- tiny, zeros */
        uint32_t fb = next32() % 6 == 0 ? next32() % 0x1000000u : next32() % 0x7F7FFFFFu; /* subnormals too */
        double m = midpoint_above(fl(fb)), big = ldexp((double)(next32() | 1), (int)(next32() % 80) - 40);
        int kind = (int)(next32() % 4), e;
        frexp(m, &e);
        double tiny = ldexp(next32() & 1 ? 1.0 : -1.0, e - 60 - (int)(next32() % 40));
        a[0] = m, b[0] = next32() & 1 ? 1.0 : -1.0;      /* the midpoint, either sign */
        a[1] = big, b[1] = 1.0, a[2] = big, b[2] = -1.0;  /* cancels exactly */
        a[3] = kind == 0 ? 0.0 : tiny, b[3] = 1.0;        /* kind 0: an exact tie */
        if (kind == 3)
            a[0] = 0.0;                                   /* tiny alone: +-0 or the least subnormal */
        exact_dot_case(a, b, 4, 0.0f, "midpoint");
    }
    a[0] = 0x1p127, b[0] = 1.9999999, exact_dot_case(a, b, 1, 0.0f, "overflow");
    a[0] = midpoint_above(fl(0x7F7FFFFFu)), b[0] = 1.0, exact_dot_case(a, b, 1, 0.0f, "overflow tie");
    a[1] = -0x1p-200, b[1] = 1.0, exact_dot_case(a, b, 2, 0.0f, "below the overflow tie");
    a[0] = 3.0, b[0] = -3.0, a[1] = 9.0, b[1] = 1.0, exact_dot_case(a, b, 2, -0.0f, "exact zero");
    printf("exact sums: 40005 dots (random, around fp32 midpoints, overflow, zero) compared: device, MPFR, "
           "reference\n");
}

int main(void)
{
    build_sample();
    static qck_libm L;
    qck_libm_build(&L);
    check_arith();
    check_fastdiv();
    check_sf_offset();
    check_clean_cvt();
    check_fast_fp4();
    check_nv_fast_finite();
    check_minifloat_casts();
    check_e8m0(&L);
    check_libm(&L);
    check_recipes(&L);
    check_exact_sum();
    if (failures) {
        printf("FAIL: %ld mismatches\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
