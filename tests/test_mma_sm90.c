/* test_mma_sm90: reference/arith/mma_sm90.h against what the H200's tensor core wrote
 * (golden/tensor-core/h200-fp8-mma.h5, recorded by kernels/cuda/mma_probe.cu; tools/mma/record_h5.py
 * says what each dataset holds).
 *
 *   test_mma_sm90 MMA.h5 SCHEDULES.h5 ROWWISE.h5 BLOCK.h5
 *
 * 1. Every recorded wgmma output, bit for bit (the probe specs and the random tiles).
 * 2. The recording separates the model from its neighbours: one bit more or less below the
 *    largest exponent, one more or less in the result, normalised subnormal inputs. Each must
 *    differ from the hardware somewhere, or the recording could not tell them apart.
 * 3. mma.sync (the recording's other instruction) is not this datapath: the model must differ from
 *    it (were the two columns ever swapped, 1 would fail).
 * 4. Hand-worked values from docs/notes/mma_sm90.md, independent of the recording.
 * 5. Whole FP8 GEMMs of real kernels (golden/tensor-core/h200-fp8-gemm-schedules.h5,
 *    tools/mma/record_schedules.py): each kernel's fp32 outputs are qcref_sm90_mma_dot under its
 *    K schedule, bit for bit, and under no neighbouring schedule; torch._scaled_mm with scales is
 *    qcref_gemm_sm90 (model sm90-wgmma's epilogue) bit for bit, and the other order of the
 *    tensorwise scale products is not.
 * 6. cuBLASLt with per-row scales (golden/tensor-core/h200-cublaslt-rowwise.h5, qcheck's cublaslt
 *    backend on the H200): qcref_gemm_sm90's rowwise epilogue bit for bit, the scalar one not.
 * 7. cuBLASLt block-scaled (golden/tensor-core/h200-cublaslt-block.h5): qcref_gemm_sm90_block bit
 *    for bit, and the same sum with a rounded product instead of the fma not.
 * 8. The GEMMs' own k-step (reference/ops/gemm_sm90.c, rows taken apart once) against the model's
 *    step on random codes of every kind: zeros of both signs, subnormals, wide exponent spreads,
 *    cancellation, NaN and Inf in some rows, both formats, ragged K, every schedule. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arith/mma_sm90.h"
#include "check.h"
#include "ops/gemm.h"

typedef struct {
    size_t n;
    uint8_t *a, *b, *fa, *fb;
    float *c, *d_wgmma, *d_mma_sync;
} recording;

static void *read_set(hid_t f, const char *name, hid_t type, size_t elem, size_t per_row, size_t *rows)
{
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) {
        printf("recording: no dataset %s\n", name);
        return NULL;
    }
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) return NULL;
    hid_t s = H5Dget_space(d);
    hsize_t dims[2] = {0, 0};
    int rank = H5Sget_simple_extent_ndims(s);
    H5Sget_simple_extent_dims(s, dims, NULL);
    H5Sclose(s);
    size_t got_per_row = rank == 2 ? (size_t)dims[1] : 1;
    void *buf = NULL;
    if ((rank == 1 || rank == 2) && got_per_row == per_row && dims[0] > 0 && (*rows == 0 || *rows == dims[0])) {
        *rows = (size_t)dims[0];
        buf = malloc(*rows * per_row * elem);
        if (buf && H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) free(buf), buf = NULL;
    }
    H5Dclose(d);
    if (!buf) printf("recording: dataset %s is not [n, %zu] of the expected type\n", name, per_row);
    return buf;
}

static int load(const char *path, recording *r)
{
    memset(r, 0, sizeof *r);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        printf("%s: cannot open as HDF5\n", path);
        return -1;
    }
    r->a = read_set(f, "a", H5T_NATIVE_UINT8, 1, QC_SM90_MMA_K, &r->n);
    r->b = read_set(f, "b", H5T_NATIVE_UINT8, 1, QC_SM90_MMA_K, &r->n);
    r->fa = read_set(f, "fa", H5T_NATIVE_UINT8, 1, 1, &r->n);
    r->fb = read_set(f, "fb", H5T_NATIVE_UINT8, 1, 1, &r->n);
    r->c = read_set(f, "c", H5T_NATIVE_FLOAT, 4, 1, &r->n);
    r->d_wgmma = read_set(f, "d_wgmma", H5T_NATIVE_FLOAT, 4, 1, &r->n);
    r->d_mma_sync = read_set(f, "d_mma_sync", H5T_NATIVE_FLOAT, 4, 1, &r->n);
    H5Fclose(f);
    return r->a && r->b && r->fa && r->fb && r->c && r->d_wgmma && r->d_mma_sync ? 0 : -1;
}

/* Outputs of rules `rules` that differ from `want` (bits); prints the first `show`. */
static size_t count_differ(const recording *r, qc_mma_rules rules, const float *want, int show)
{
    size_t bad = 0;
    for (size_t i = 0; i < r->n; i++) {
        float got = qcref_mma_step_with(rules, r->a + i * QC_SM90_MMA_K, r->fa[i], r->b + i * QC_SM90_MMA_K, r->fb[i],
                                        QC_SM90_MMA_K, r->c[i]);
        if (qc_f32_bits(got) == qc_f32_bits(want[i])) continue;
        if ((int)bad++ < show)
            printf("  row %zu (%s x %s, c %a): hardware %08X, model %08X\n", i, r->fa[i] ? "e5m2" : "e4m3",
                   r->fb[i] ? "e5m2" : "e4m3", (double)r->c[i], qc_f32_bits(want[i]), qc_f32_bits(got));
    }
    return bad;
}

/* 4: one product a b (codes) at position k, the rest zero, plus c. */
static float one(uint8_t a, int fa, uint8_t b, int fb, int k, float c)
{
    uint8_t va[QC_SM90_MMA_K] = {0}, vb[QC_SM90_MMA_K] = {0};
    va[k] = a, vb[k] = b;
    return qcref_sm90_mma_step(va, fa, vb, fb, QC_SM90_MMA_K, c);
}

/* e4m3fn codes: 2^e for a normal power of two, and the subnormals 2^-9, 2^-8. */
#define E4(e) ((uint8_t)(((e) + 7) << 3))
#define E4_SUB9 0x01
#define E4_SUB8 0x02

static void hand_worked(void)
{
    /* c = 1: E = 0, the grid is 2^-13. */
    CHECK(one(E4(-4), 0, E4(-3), 0, 3, 1.0f) == 1.0f + 0x1p-7f, "1 + 2^-7 is kept");
    CHECK(one(E4_SUB9, 0, E4(-4), 0, 3, 1.0f) == 1.0f + 0x1p-13f, "2^-13 below c = 1 is the last bit kept");
    CHECK(one(E4_SUB9, 0, E4(-5), 0, 3, 1.0f) == 1.0f, "2^-14 below c = 1 is cut");
    CHECK(one(E4_SUB9 | 0x80, 0, E4(-5), 0, 3, 1.0f) == 1.0f, "-2^-14 is cut toward zero, not to -2^-13");
    CHECK(one(E4(0), 0, E4(0), 0, 0, 1.0f + 0x1p-20f) == 2.0f, "c's bits below the grid are cut too");
    /* 2^-8 (subnormal: exponent -6) times 2^8 is 1, but step 2 sees exponent -6 + 8 = 2: the grid is
     * 2^-11, where c = 1 would have given 2^-13. */
    uint8_t va[QC_SM90_MMA_K] = {0}, vb[QC_SM90_MMA_K] = {0};
    va[0] = E4_SUB8, vb[0] = E4(8);
    va[1] = E4(-4), vb[1] = E4(-4);
    CHECK(qcref_sm90_mma_step(va, 0, vb, 0, 32, 0.0f) == 1.0f + 0x1p-8f, "2^-8 is kept beside it");
    va[1] = E4_SUB9, vb[1] = E4(-2);
    CHECK(qcref_sm90_mma_step(va, 0, vb, 0, 32, 0.0f) == 1.0f + 0x1p-11f, "2^-11 is the last bit kept beside it");
    va[1] = E4_SUB9, vb[1] = E4(-3);
    CHECK(qcref_sm90_mma_step(va, 0, vb, 0, 32, 0.0f) == 1.0f, "2^-12 is cut beside it");
    /* Step 5: c = 16383 (E = 13, grid 1) plus 2 is 2^14 + 1, 15 bits: cut to 14. */
    CHECK(one(E4(1), 0, E4(0), 0, 5, 16383.0f) == 16384.0f, "2^14 + 1 is cut to 2^14");
    CHECK(one(E4(0), 0, E4(0), 0, 5, 16382.0f) == 16383.0f, "16382 + 1 = 16383 has 14 bits and stays");
    /* Specials (e5m2 0x7C is +Inf). */
    CHECK(qc_f32_bits(one(0x7F, 0, E4(0), 0, 0, 1.0f)) == QC_SM90_NAN, "e4m3 NaN gives 0x7FFFFFFF");
    CHECK(qc_f32_bits(one(0x7C, 1, 0x00, 0, 0, 1.0f)) == QC_SM90_NAN, "Inf * 0 is NaN");
    CHECK(one(0x7C, 1, E4(0), 0, 0, 1.0f) == __builtin_inff(), "Inf * 1 + 1 is Inf");
    CHECK(qc_f32_bits(one(0x7C, 1, E4(0), 0, 0, -__builtin_inff())) == QC_SM90_NAN, "Inf - Inf is NaN");
    CHECK(qc_f32_bits(one(0x00, 0, 0x00, 0, 0, -0.0f)) == 0, "-0 plus zero products is +0");
    /* fp32 subnormal c: exponent -126, grid 2^-139. */
    CHECK(one(0x00, 0, 0x00, 0, 0, 0x1p-149f) == 0.0f, "c = 2^-149 is below the grid: 0");
    CHECK(one(0x00, 0, 0x00, 0, 0, 0x1p-130f) == 0x1p-130f, "c = 2^-130 is on the grid and stays");
}

/* 5: the kernels of the schedules recording and the promotion interval (k-steps; 0: never) under
 * which each is bit-exact: cuBLASLt adds the tensor core's sum into fp32 every 128 of K unless
 * fast accumulation is on; Triton keeps it in the core unless the kernel adds per block. */
static const struct {
    const char *kernel;
    int promote;
} schedules[] = {{"scaled_mm_fast0", 4}, {"scaled_mm_fast1", 0}, {"triton_in_core", 0}, {"triton_promoted", 4}};

static size_t gemm_differ(const uint8_t *a, const uint8_t *b, const float *d, size_t rows, size_t k, int promote)
{
    size_t bad = 0;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < rows; j++) {
            float got = qcref_sm90_mma_dot(a + i * k, 0, b + j * k, 0, (int)k, 0.0f, promote);
            bad += qc_f32_bits(got) != qc_f32_bits(d[i * rows + j]);
        }
    return bad;
}

/* The scaled products of one shape (tensorwise f32 and bf16 out, rowwise bf16 out) against
 * qcref_gemm_sm90, fast accumulation off (promote 4) and on (0). */
static void check_scaled(hid_t g, const char *name, const uint8_t *a, const uint8_t *b, size_t rows, size_t k)
{
    size_t one = 1, nr = rows;
    float *tsa = read_set(g, "tensor_sa", H5T_NATIVE_FLOAT, 4, 1, &one), *tsb = NULL, *rsa = NULL, *rsb = NULL;
    one = 1;
    tsb = tsa ? read_set(g, "tensor_sb", H5T_NATIVE_FLOAT, 4, 1, &one) : NULL;
    rsa = tsb ? read_set(g, "row_sa", H5T_NATIVE_FLOAT, 4, 1, &nr) : NULL;
    rsb = rsa ? read_set(g, "row_sb", H5T_NATIVE_FLOAT, 4, 1, &nr) : NULL;
    float *y = malloc(rows * rows * sizeof *y);
    CHECK(rsb && y, "%s: tensor_sa, tensor_sb, row_sa, row_sb", name);
    for (int fast = 0; rsb && y && fast < 2; fast++) {
        char key[32];
        size_t n = rows, bad = 0, other = 0;
        snprintf(key, sizeof key, "tensor_f32_fast%d", fast);
        float *d = read_set(g, key, H5T_NATIVE_FLOAT, 4, rows, &n);
        qcref_gemm_sm90(a, 0, b, 0, rows, rows, k, tsa, 0, tsb, 0, NULL, fast ? 0 : 4, y);
        for (size_t e = 0; d && e < rows * rows; e++) {
            bad += qc_f32_bits(y[e]) != qc_f32_bits(d[e]);
            float acc = qcref_sm90_mma_dot(a + e / rows * k, 0, b + e % rows * k, 0, (int)k, 0.0f, fast ? 0 : 4);
            other += qc_f32_bits((acc * tsa[0]) * tsb[0]) != qc_f32_bits(d[e]);
        }
        printf("scaled %-12s %s: %zu of %zu differ; (acc sa) sb: %zu\n", name, key, bad, rows * rows, other);
        CHECK(d && bad == 0, "%s %s: fl32(fl32(sa sb) acc) is the epilogue", name, key);
        CHECK(d && other > 0, "%s %s: the recording does not tell the epilogue orders apart", name, key);
        free(d);
        uint16_t *h = NULL;
        for (int rowwise = 0; rowwise < 2; rowwise++) {
            snprintf(key, sizeof key, "%s_bf16_fast%d", rowwise ? "row" : "tensor", fast);
            n = rows, bad = 0;
            h = read_set(g, key, H5T_NATIVE_UINT16, 2, rows, &n);
            if (rowwise) qcref_gemm_sm90(a, 0, b, 0, rows, rows, k, rsa, 1, rsb, 1, NULL, fast ? 0 : 4, y);
            for (size_t e = 0; h && e < rows * rows; e++) bad += qcref_gemm_round_out(y[e], QC_BF16) != h[e];
            printf("scaled %-12s %s: %zu of %zu differ\n", name, key, bad, rows * rows);
            CHECK(h && bad == 0, "%s %s: bf16(fl32(fl32(sa sb) acc)) is the output", name, key);
            free(h);
        }
    }
    free(tsa), free(tsb), free(rsa), free(rsb), free(y);
}

static void check_shape(hid_t root, const char *name)
{
    hid_t g = H5Gopen2(root, name, H5P_DEFAULT);
    CHECK(g >= 0, "%s: not a group", name);
    if (g < 0) return;
    size_t rows = 0, k = 0, rows_b = 0;
    hid_t d = H5Dopen2(g, "a", H5P_DEFAULT);
    if (d >= 0) {
        hsize_t dims[2] = {0, 0};
        hid_t sp = H5Dget_space(d);
        if (H5Sget_simple_extent_ndims(sp) == 2) H5Sget_simple_extent_dims(sp, dims, NULL);
        H5Sclose(sp), H5Dclose(d);
        k = (size_t)dims[1];
    }
    uint8_t *a = k ? read_set(g, "a", H5T_NATIVE_UINT8, 1, k, &rows) : NULL;
    rows_b = rows;
    uint8_t *b = a ? read_set(g, "b", H5T_NATIVE_UINT8, 1, k, &rows_b) : NULL;
    CHECK(a && b && k % QC_SM90_MMA_K == 0, "%s: a and b [rows, K], K a multiple of 32", name);
    for (size_t s = 0; a && b && s < sizeof schedules / sizeof schedules[0]; s++) {
        size_t n = rows;
        float *out = read_set(g, schedules[s].kernel, H5T_NATIVE_FLOAT, 4, rows, &n);
        CHECK(out != NULL, "%s: no %s [rows, rows]", name, schedules[s].kernel);
        if (!out) continue;
        size_t bad = gemm_differ(a, b, out, rows, k, schedules[s].promote);
        printf("gemm %-12s %-16s promote %d: %zu of %zu outputs differ;", name, schedules[s].kernel,
               schedules[s].promote, bad, rows * rows);
        CHECK(bad == 0, "%s %s: the schedule promote=%d should be bit-exact", name, schedules[s].kernel,
              schedules[s].promote);
        static const int others[] = {0, 1, 2, 4, 8};
        for (size_t o = 0; o < sizeof others / sizeof others[0]; o++) {
            if (others[o] == schedules[s].promote || (int)k / QC_SM90_MMA_K <= others[o]) continue;
            size_t n_other = gemm_differ(a, b, out, rows, k, others[o]);
            printf(" promote %d: %zu;", others[o], n_other);
            CHECK(n_other > 0, "%s %s: promote=%d matches too: the recording does not tell them apart", name,
                  schedules[s].kernel, others[o]);
        }
        printf("\n");
        free(out);
    }
    if (a && b && H5Lexists(g, "tensor_sa", H5P_DEFAULT) > 0) check_scaled(g, name, a, b, rows, k);
    free(a), free(b);
    H5Gclose(g);
}

static void check_schedules(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0, "%s: cannot open as HDF5", path);
    if (f < 0) return;
    H5G_info_t gi;
    int ok = H5Gget_info(f, &gi) >= 0 && gi.nlinks > 0;
    CHECK(ok, "%s: no shapes", path);
    for (hsize_t i = 0; ok && i < gi.nlinks; i++) {
        char name[64];
        if (H5Lget_name_by_idx(f, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT) > 0)
            check_shape(f, name);
    }
    H5Fclose(f);
}

static void check_rowwise(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0, "%s: cannot open as HDF5", path);
    if (f < 0) return;
    static const struct {
        const char *group;
        int promote;
    } runs[] = {{"promote4", 4}, {"promote0", 0}};
    for (size_t r = 0; r < 2; r++) {
        hid_t g = H5Gopen2(f, runs[r].group, H5P_DEFAULT);
        CHECK(g >= 0, "%s: no group %s", path, runs[r].group);
        if (g < 0) continue;
        hsize_t dims[2] = {0, 0};
        hid_t d = H5Dopen2(g, "a", H5P_DEFAULT), sp = d >= 0 ? H5Dget_space(d) : -1;
        if (sp >= 0) H5Sget_simple_extent_dims(sp, dims, NULL), H5Sclose(sp);
        if (d >= 0) H5Dclose(d);
        size_t k = (size_t)dims[1], m = 0, n = 0, mm, nn;
        uint8_t *a = k ? read_set(g, "a", H5T_NATIVE_UINT8, 1, k, &m) : NULL;
        uint8_t *b = a ? read_set(g, "b", H5T_NATIVE_UINT8, 1, k, &n) : NULL;
        mm = m, nn = n;
        float *sa = b ? read_set(g, "sa", H5T_NATIVE_FLOAT, 4, 1, &mm) : NULL;
        float *sb = sa ? read_set(g, "sb", H5T_NATIVE_FLOAT, 4, 1, &nn) : NULL;
        size_t rows = m;
        float *want = sb ? read_set(g, "d", H5T_NATIVE_FLOAT, 4, n, &rows) : NULL;
        float *y = malloc(m * n * sizeof *y + 4);
        CHECK(want && y, "%s/%s: a, b, sa, sb, d", path, runs[r].group);
        if (want && y) {
            size_t bad = 0, scalar_order = 0;
            qcref_gemm_sm90(a, 0, b, 0, m, n, k, sa, 1, sb, 1, NULL, runs[r].promote, y);
            for (size_t e = 0; e < m * n; e++) bad += qc_f32_bits(y[e]) != qc_f32_bits(want[e]);
            /* the scalar epilogue's order, per element: fl32(fl32(sa sb) acc) */
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    float one = 1.0f, s = sa[i] * sb[j];
                    float v;
                    qcref_gemm_sm90(a + i * k, 0, b + j * k, 0, 1, 1, k, &s, 0, &one, 0, NULL, runs[r].promote, &v);
                    scalar_order += qc_f32_bits(v) != qc_f32_bits(want[i * n + j]);
                }
            printf("cublaslt rowwise %s (%zux%zux%zu): %zu of %zu differ; fl32(sa sb) acc: %zu\n", runs[r].group, m, n, k,
                   bad, m * n, scalar_order);
            CHECK(bad == 0, "%s: fl32(fl32(acc sb) sa) is cuBLASLt's rowwise epilogue", runs[r].group);
            CHECK(scalar_order > 0, "%s: the recording does not tell the epilogue orders apart", runs[r].group);
        }
        free(a), free(b), free(sa), free(sb), free(want), free(y);
        H5Gclose(g);
    }
    H5Fclose(f);
}

/* 7: per 128-deep block p, t = fma(p, s, t); the neighbour rounds p s first. */
static void check_block(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0, "%s: cannot open as HDF5", path);
    if (f < 0) return;
    size_t separated = 0;
    static const char *groups[] = {"k384", "k128"};
    for (size_t r = 0; r < 2; r++) {
        hid_t g = H5Gopen2(f, groups[r], H5P_DEFAULT);
        CHECK(g >= 0, "%s: no group %s", path, groups[r]);
        if (g < 0) continue;
        hsize_t dims[2] = {0, 0}, sd[2] = {0, 0};
        hid_t d = H5Dopen2(g, "a", H5P_DEFAULT), sp = d >= 0 ? H5Dget_space(d) : -1;
        if (sp >= 0) H5Sget_simple_extent_dims(sp, dims, NULL), H5Sclose(sp);
        if (d >= 0) H5Dclose(d);
        d = H5Dopen2(g, "sa", H5P_DEFAULT), sp = d >= 0 ? H5Dget_space(d) : -1;
        if (sp >= 0) H5Sget_simple_extent_dims(sp, sd, NULL), H5Sclose(sp);
        if (d >= 0) H5Dclose(d);
        size_t k = (size_t)dims[1], nblk = (size_t)sd[1], m = 0, n = 0, ms = 0, ns = 0, rows = 0;
        uint8_t *a = k ? read_set(g, "a", H5T_NATIVE_UINT8, 1, k, &m) : NULL;
        uint8_t *b = a ? read_set(g, "b", H5T_NATIVE_UINT8, 1, k, &n) : NULL;
        float *sa = b && nblk ? read_set(g, "sa", H5T_NATIVE_FLOAT, 4, nblk, &ms) : NULL;
        float *sb = sa ? read_set(g, "sb", H5T_NATIVE_FLOAT, 4, nblk, &ns) : NULL;
        float *want = sb ? read_set(g, "d", H5T_NATIVE_FLOAT, 4, n, &rows) : NULL;
        float *y = malloc(m * n * sizeof *y + 4);
        CHECK(want && y && ms == m && ns == (n + 127) / 128 && nblk == (k + 127) / 128, "%s/%s: a, b, sa, sb, d", path,
              groups[r]);
        if (want && y && ms == m) {
            size_t bad = 0, rounded = 0;
            qcref_gemm_sm90_block(a, 0, b, 0, m, n, k, sa, sb, NULL, y);
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    bad += qc_f32_bits(y[i * n + j]) != qc_f32_bits(want[i * n + j]);
                    float t = 0.0f;
                    for (size_t l = 0; l < nblk; l++) {
                        float p = qcref_sm90_mma_dot(a + i * k + l * 128, 0, b + j * k + l * 128, 0, 128, 0.0f, 0);
                        t += p * (sa[i * nblk + l] * sb[j / 128 * nblk + l]);
                    }
                    rounded += qc_f32_bits(t) != qc_f32_bits(want[i * n + j]);
                }
            printf("cublaslt block %s (%zux%zux%zu): %zu of %zu differ; t + fl32(p s): %zu\n", groups[r], m, n, k, bad,
                   m * n, rounded);
            CHECK(bad == 0, "%s: fma(p, fl32(sa sb), t) per 128-deep block is cuBLASLt's epilogue", groups[r]);
            separated += rounded;
        }
        free(a), free(b), free(sa), free(sb), free(want), free(y);
        H5Gclose(g);
    }
    CHECK(separated > 0, "%s: the recording does not tell the fma from a rounded product", path);
    H5Fclose(f);
}

/* 8: a code of format e5m2 (else e4m3fn): a zero, a subnormal or a normal whose exponent field
 * lies in a window of `spread` fields (1: all equal, cancellation likely; 31: everything). */
static uint32_t rng_state = 12345;
static uint32_t rnd(void) { return rng_state = rng_state * 1664525u + 1013904223u, rng_state >> 8; }

static uint8_t random_code(int e5m2, int spread, int base)
{
    int mbits = e5m2 ? 2 : 3, fields = e5m2 ? 31 : 16, kind = (int)(rnd() % 100);
    uint8_t sign = (uint8_t)(rnd() & 1) << 7, man = (uint8_t)(rnd() & ((1u << mbits) - 1));
    if (kind < 8) return sign;                                        /* +-0 */
    if (kind < 14) return sign | (uint8_t)(man ? man : 1);            /* subnormal */
    int field = 1 + (base + (int)(rnd() % (unsigned)spread)) % (fields - 1);
    uint8_t code = sign | (uint8_t)(field << mbits) | man;
    return !e5m2 && (code & 0x7F) == 0x7F ? code - 1 : code;          /* 0x7F is NaN: not here */
}

static size_t fast_differ(int fa, int fb, size_t m, size_t n, size_t k, int spread, int promote, int block)
{
    size_t kp = (k + 127) / 128 * 128, bad = 0;
    uint8_t *a = calloc(m * kp, 1), *b = calloc(n * kp, 1), *pa = calloc(m * kp, 1), *pb = calloc(n * kp, 1);
    float *sa = malloc(sizeof(float) * m * (kp / 128)), *sb = malloc(sizeof(float) * ((n + 127) / 128) * (kp / 128));
    float *y = malloc(sizeof(float) * m * n), one1 = 1.0f;
    int base = (int)(rnd() % 31);
    for (size_t i = 0; i < m * k; i++) a[i] = random_code(fa, spread, base);
    for (size_t i = 0; i < n * k; i++) b[i] = random_code(fb, spread, base);
    if (rnd() % 4 == 0) a[rnd() % (m * k)] = fa ? (rnd() & 1 ? 0x7C : 0xFE) : 0x7F; /* Inf or NaN in one row */
    if (rnd() % 4 == 0) b[rnd() % (n * k)] = fb ? 0xFC : 0xFF;
    for (size_t i = 0; i < m * (kp / 128); i++) sa[i] = (float)(1 + rnd() % 1000) * 0x1p-9f;
    for (size_t i = 0; i < ((n + 127) / 128) * (kp / 128); i++) sb[i] = (float)(1 + rnd() % 1000) * 0x1p-7f;
    for (size_t i = 0; i < m; i++) memcpy(pa + i * kp, a + i * k, k);
    for (size_t j = 0; j < n; j++) memcpy(pb + j * kp, b + j * k, k);
    int rc = block ? qcref_gemm_sm90_block(a, fa, b, fb, m, n, k, sa, sb, NULL, y)
                   : qcref_gemm_sm90(a, fa, b, fb, m, n, k, &one1, 0, &one1, 0, NULL, promote, y);
    CHECK(rc == 0, "qcref_gemm_sm90%s failed", block ? "_block" : "");
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            float want = 0.0f;
            if (!block)
                want = qcref_sm90_mma_dot(pa + i * kp, fa, pb + j * kp, fb, (int)kp, 0.0f, promote);
            for (size_t l = 0; block && l < kp / 128; l++)
                want = fmaf(qcref_sm90_mma_dot(pa + i * kp + l * 128, fa, pb + j * kp + l * 128, fb, 128, 0.0f, 0),
                            sa[i * (kp / 128) + l] * sb[j / 128 * (kp / 128) + l], want);
            int same = qc_f32_bits(want) == qc_f32_bits(y[i * n + j]);
            if (!same && bad++ < 4)
                printf("  fast path: fa %d fb %d k %zu promote %d block %d [%zu,%zu]: %a, the model %a\n", fa, fb, k,
                       promote, block, i, j, y[i * n + j], want);
        }
    free(a), free(b), free(pa), free(pb), free(sa), free(sb), free(y);
    return bad;
}

static void check_fast_path(void)
{
    static const int spreads[] = {1, 3, 8, 31}, promotes[] = {0, 1, 2, 4};
    size_t bad = 0, dots = 0;
    for (int it = 0; it < 4000; it++) {
        int fa = (int)(rnd() & 1), fb = (int)(rnd() & 1), block = it % 5 == 0;
        size_t m = 1 + rnd() % 6, n = 1 + rnd() % (block ? 140 : 6), k = 1 + rnd() % 300;
        bad += fast_differ(fa, fb, m, n, k, spreads[rnd() % 4], promotes[rnd() % 4], block);
        dots += m * n;
    }
    printf("fast path: %zu random GEMM outputs, %zu differ from the model's step\n", dots, bad);
    CHECK(bad == 0, "the GEMMs' k-step differs from qcref_sm90_mma_step on %zu of %zu outputs", bad, dots);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        printf("usage: test_mma_sm90 MMA.h5 SCHEDULES.h5 ROWWISE.h5 BLOCK.h5\n");
        return 2;
    }
    hand_worked();
    check_fast_path();
    recording r;
    if (load(argv[1], &r)) return 1;
    size_t bad = count_differ(&r, qc_sm90_rules(), r.d_wgmma, 8);
    CHECK(bad == 0, "%zu of %zu recorded wgmma outputs differ from qcref_sm90_mma_step", bad, r.n);
    printf("wgmma: %zu recorded dot products, %zu differ from the model\n", r.n, bad);
    struct {
        const char *what;
        qc_mma_rules rules;
    } neighbours[] = {
        {"frac 12", {12, 14, 0}}, {"frac 14", {14, 14, 0}},    {"sum_bits 13", {13, 13, 0}},
        {"sum_bits 15", {13, 15, 0}}, {"sum_bits 24", {13, 24, 0}}, {"normalised subnormals", {13, 14, 1}},
    };
    for (size_t i = 0; i < sizeof neighbours / sizeof neighbours[0]; i++) {
        size_t n = count_differ(&r, neighbours[i].rules, r.d_wgmma, 0);
        printf("neighbour %-22s differs on %zu\n", neighbours[i].what, n);
        CHECK(n > 0, "the recording does not separate the model from %s", neighbours[i].what);
    }
    size_t sync = count_differ(&r, qc_sm90_rules(), r.d_mma_sync, 0);
    printf("mma.sync m16n8k32: the model differs on %zu of %zu\n", sync, r.n);
    CHECK(sync > 0, "mma.sync matched the wgmma model everywhere: columns swapped?");
    free(r.a), free(r.b), free(r.fa), free(r.fb), free(r.c), free(r.d_wgmma), free(r.d_mma_sync);
    check_schedules(argv[2]);
    check_rowwise(argv[3]);
    check_block(argv[4]);
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
