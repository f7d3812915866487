/* test_compare.c: the comparator's mismatch classes on synthetic mismatches whose class is
 * known by construction, the report's coordinates/hex/decoded values, shape mismatches and the
 * degenerate (MISTRUSTED) flag. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "runner.h"
#include "recipes/recipes.h"

#include "check.h"

static void codes(qc_tensor *t, const char *name, const char *dtype, int64_t rows, int64_t cols, const uint8_t *v)
{
    int64_t shape[2] = {rows, cols};
    qc_tensor_alloc(t, name, QC_ST_U8, dtype, 2, shape);
    memcpy(t->data, v, (size_t)(rows * cols));
}

static void test_classes(void)
{
    /* e2m1 row of 8 with block 4. Codes: 0=0 1=0.5 2=1 3=1.5 4=2 5=3 6=4 7=6 */
    const uint8_t exp[8] = {2, 4, 0x0, 5, 6, 1, 3, 7};
    const uint8_t got[8] = {3, 5, 0x8, 5, 6, 1, 3, 1};
    /* i=0: 1 vs 1.5 adjacent, input 1.25 is their midpoint        -> tie_flip
     * i=1: 2 vs 3 adjacent, input 2.2 is not a midpoint            -> one_ulp
     * i=2: +0 vs -0                                                -> zero_sign
     * i=7: got 1 (0.5) = expected[7 - 4] ... expected[3] is 5, not 1; expected[1]? use block 4: j = 7-4 = 3
     *      -> not equal -> other; wrong_block tested below */
    const float x[8] = {1.25f, 2.2f, 0.0f, 3.0f, 4.0f, 0.5f, 1.5f, 6.0f};
    qc_tensor e, g, xi;
    codes(&e, "y", "e2m1", 1, 8, exp);
    codes(&g, "y", "e2m1", 1, 8, got);
    int64_t n = 8;
    qc_tensor_alloc(&xi, "x", QC_ST_F32, "f32", 1, &n);
    memcpy(xi.data, x, sizeof x);
    qc_tensor_set in = {0};
    qc_set_add(&in, &xi);
    qc_compare_spec spec = {.output = "y", .rule = "bitexact", .block = "4", .midpoint_input = "x"};
    qc_params p = {0};
    qc_params_set(&p, "profile", "ptx");
    qc_compare_out o;
    char detail[4096] = "";
    int rc = qc_compare(&spec, &p, &in, &e, &g, NULL, 10, &o, detail, sizeof detail);
    CHECK(rc == 1 && o.mismatches == 4, "4 mismatches, got %lld", (long long)o.mismatches);
    CHECK(o.per_class[QC_MM_TIE_FLIP] == 1, "tie_flip %lld", (long long)o.per_class[QC_MM_TIE_FLIP]);
    CHECK(o.per_class[QC_MM_ONE_ULP] == 1, "one_ulp %lld", (long long)o.per_class[QC_MM_ONE_ULP]);
    CHECK(o.per_class[QC_MM_ZERO_SIGN] == 1, "zero_sign %lld", (long long)o.per_class[QC_MM_ZERO_SIGN]);
    CHECK(o.per_class[QC_MM_OTHER] == 1, "other %lld", (long long)o.per_class[QC_MM_OTHER]);
    CHECK(strstr(detail, "y (0, 0) block 0: expected 0x02 (1) got 0x03 (1.5)  [tie_flip]") != NULL, "report: %s",
          detail);
    CHECK(strstr(detail, "y (0, 7) block 1") != NULL, "coordinates of the last element: %s", detail);
    qc_tensor_free(&e);
    qc_tensor_free(&g);
    qc_set_free(&in);
}

static void test_wrong_block_and_nan(void)
{
    /* e4m3fn: row of 8, block 4; got is the expected row with its two blocks swapped at 0 and 4;
     * 448 (0x7E) and -448 (0xFE) against NaN (0x7F, 0xFF) are a clamp's business, 1.125 against NaN is not */
    const uint8_t exp[8] = {0x38, 0x39, 0x3A, 0x3B, 0x40, 0xFE, 0x39, 0x7E};
    const uint8_t got[8] = {0x40, 0x39, 0x3A, 0x3B, 0x38, 0xFF, 0x7F, 0x7F};
    qc_tensor e, g;
    codes(&e, "q", "e4m3fn", 1, 8, exp);
    codes(&g, "q", "e4m3fn", 1, 8, got);
    qc_compare_spec spec = {.output = "q", .rule = "bitexact", .block = "4"};
    qc_params p = {0};
    qc_tensor_set in = {0};
    qc_compare_out o;
    char detail[4096] = "";
    qc_compare(&spec, &p, &in, &e, &g, NULL, 10, &o, detail, sizeof detail);
    CHECK(o.per_class[QC_MM_WRONG_BLOCK] == 2, "wrong_block %lld", (long long)o.per_class[QC_MM_WRONG_BLOCK]);
    CHECK(o.per_class[QC_MM_SATURATION] == 2, "+-448 vs NaN is saturation: %lld",
          (long long)o.per_class[QC_MM_SATURATION]);
    CHECK(o.per_class[QC_MM_NAN_POLICY] == 1, "1.125 vs NaN is nan_policy: %lld",
          (long long)o.per_class[QC_MM_NAN_POLICY]);
    CHECK(strstr(detail, "q (0, 0) block 0: expected 0x38 (1) got 0x40 (2)  [wrong_block] the value belongs at (0, 4) "
                         "block 1") != NULL,
          "wrong_block says where the value belongs: %s", detail);
    qc_tensor_free(&e);
    qc_tensor_free(&g);
}

/* qc_compare with no params and no inputs, its report in a fresh detail (up to 10 mismatches shown). */
static void compared(const qc_compare_spec *spec, const qc_tensor *e, const qc_tensor *g, const qc_compare_extra *x,
                     qc_compare_out *o, char *detail, size_t len)
{
    static const qc_params none = {0};
    static const qc_tensor_set no_inputs = {0};
    detail[0] = '\0';
    qc_compare(spec, &none, &no_inputs, e, g, x, 10, o, detail, len);
}

/* Raw bytes (a layout of u8 codes) have no neighbouring codes: 5 against 6 is not one_ulp. */
static void test_raw_bytes_have_no_ulp(void)
{
    const uint8_t exp[8] = {5, 1, 2, 3, 4, 5, 6, 7}, got[8] = {6, 1, 2, 3, 4, 5, 6, 7};
    qc_tensor e, g;
    codes(&e, "y", "u8", 1, 8, exp);
    codes(&g, "y", "u8", 1, 8, got);
    qc_compare_spec spec = {.output = "y", .rule = "bitexact"};
    qc_compare_out o;
    char detail[4096];
    compared(&spec, &e, &g, NULL, &o, detail, sizeof detail);
    CHECK(o.mismatches == 1 && o.per_class[QC_MM_OTHER] == 1, "u8 5 vs 6 is other: %s", detail);
    qc_tensor_free(&e);
    qc_tensor_free(&g);
}

/* Two e2m1 codes per byte: a byte with its nibbles exchanged is nibble_swap, element by element,
 * with the element's own coordinates; seen as bytes it is nothing in particular. */
static void test_nibble_swap(void)
{
    const uint8_t exp[2] = {0x21, 0x73}, got[2] = {0x12, 0x72};
    qc_tensor e, g;
    codes(&e, "q", "e2m1x2", 1, 2, exp);
    codes(&g, "q", "e2m1x2", 1, 2, got);
    qc_compare_spec spec = {.output = "q", .rule = "bitexact"};
    qc_compare_out o;
    char detail[4096];
    compared(&spec, &e, &g, NULL, &o, detail, sizeof detail);
    CHECK(o.n == 2 && o.per_class[QC_MM_OTHER] == 2,
          "as bytes both are other (0x73 vs 0x72 is no ulp of e2m1x2): %s", detail);
    qc_output_view v = {.dtype = "e2m1", .elem_bits = 4, .rows = 1, .cols = 4, .block = 2, .axes = {"row", "col"}};
    qc_compare_extra x = {.view = &v};
    compared(&spec, &e, &g, &x, &o, detail, sizeof detail);
    CHECK(o.n == 4 && o.mismatches == 3 && o.per_class[QC_MM_NIBBLE_SWAP] == 2 && o.per_class[QC_MM_ONE_ULP] == 1,
          "as e2m1 elements: two nibble_swap, 1.5 vs 1 one_ulp: %s", detail);
    CHECK(strstr(detail, "q (row 0, col 1) block 0: expected 0x2 (1) got 0x1 (0.5)  [nibble_swap]") &&
              strstr(detail, "q (row 0, col 2) block 1: expected 0x3 (1.5) got 0x2 (1)  [one_ulp]"),
          "codes decoded at their logical coordinates: %s", detail);
    qc_tensor_free(&e);
    qc_tensor_free(&g);
}

/* A permutation bug inside a 128x4 scale tile: each of the two exchanged bytes is misplaced, and the
 * report names the source element (row, col) whose byte it is. */
static void test_misplaced_in_layout(void)
{
    qc_output_view v = {.layout_kind = QC_VIEW_LAYOUT, .elem_bits = 8, .axes = {"batch", "row", "col"}};
    char err[256];
    CHECK(qcref_layout_plan(&v.layout, qcref_layout_find("sf128x4"), 1, 128, 4, 1, NULL, NULL, 0, err, sizeof err) == 0,
          "plan: %s", err);
    uint8_t src[512], dst[512];
    for (int i = 0; i < 512; i++)
        src[i] = (uint8_t)i; /* every value twice, 64 rows apart */
    int64_t bad;
    qcref_layout_apply(&v.layout, src, dst, &bad);
    qc_tensor e, g;
    codes(&e, "y", "u8", 1, 512, dst);
    int64_t a = qcref_sf128x4_offset(0, 0, 4), b = qcref_sf128x4_offset(5, 2, 4);
    uint8_t t = dst[a];
    dst[a] = dst[b], dst[b] = t;
    codes(&g, "y", "u8", 1, 512, dst);
    qc_compare_spec spec = {.output = "y", .rule = "bitexact", .degenerate_ok = 1};
    qc_compare_out o;
    char detail[4096];
    qc_compare_extra x = {.view = &v};
    compared(&spec, &e, &g, &x, &o, detail, sizeof detail);
    CHECK(o.mismatches == 2 && o.per_class[QC_MM_MISPLACED] == 2, "two misplaced bytes: %s", detail);
    CHECK(strstr(detail, "y (batch 0, row 0, col 0): expected 0x00 (0) got 0x16 (22)  [misplaced] the value belongs "
                         "at (batch 0, row 5, col 2)") != NULL,
          "the report says where the byte belongs: %s", detail);
    compared(&spec, &e, &g, NULL, &o, detail, sizeof detail);
    CHECK(o.per_class[QC_MM_MISPLACED] == 0, "without the layout's view there is no place to name");
    qc_tensor_free(&e);
    qc_tensor_free(&g);
}

/* fp32 scales stored as u8 bytes in the col_tma layout: compared and printed as fp32 values at
 * (row, block), not as bytes at a flat index. */
static void test_f32_scales_in_bytes(void)
{
    float ev[4] = {0.5f, 0.25f, 0, 0}, gv[4];
    memcpy(gv, ev, sizeof ev);
    uint32_t bits;
    memcpy(&bits, &gv[1], 4);
    bits++;
    memcpy(&gv[1], &bits, 4);
    qc_tensor e, g;
    codes(&e, "scale", "u8", 1, 16, (const uint8_t *)ev);
    codes(&g, "scale", "u8", 1, 16, (const uint8_t *)gv);
    qc_output_view v = {.dtype = "f32", .elem_bits = 32, .rows = 2, .cols = 1, .axes = {"row", "block"},
                        .layout_kind = QC_VIEW_SCALE_LAYOUT, .scale_layout = QC_SL_COL_TMA};
    qc_compare_spec spec = {.output = "scale", .rule = "bitexact"};
    qc_compare_out o;
    char detail[4096];
    qc_compare_extra x = {.view = &v};
    compared(&spec, &e, &g, &x, &o, detail, sizeof detail);
    CHECK(o.n == 4 && o.mismatches == 1 && o.per_class[QC_MM_ONE_ULP] == 1, "one fp32 scale one ulp off: %s", detail);
    CHECK(strstr(detail, "scale (row 1, block 0): expected 0x3E800000 (0.25) got 0x3E800001 (0.25000003)  [one_ulp]"),
          "printed as fp32 at its scale's coordinates: %s", detail);
    qc_tensor_free(&e);
    qc_tensor_free(&g);
}

static void test_f32_scales_and_shapes(void)
{
    int64_t n = 8;
    qc_tensor e, g;
    qc_tensor_alloc(&e, "s", QC_ST_F32, "f32", 1, &n);
    qc_tensor_alloc(&g, "s", QC_ST_F32, "f32", 1, &n);
    float *ev = e.data, *gv = g.data;
    for (int i = 0; i < 8; i++)
        ev[i] = gv[i] = 0.25f * (float)(i + 1);
    uint32_t bits;
    memcpy(&bits, &gv[3], 4);
    bits += 1; /* one ulp up: a one-ulp scale */
    memcpy(&gv[3], &bits, 4);
    qc_compare_spec spec = {.output = "s", .rule = "bitexact"};
    qc_params p = {0};
    qc_tensor_set in = {0};
    qc_compare_out o;
    char detail[4096] = "";
    qc_compare(&spec, &p, &in, &e, &g, NULL, 10, &o, detail, sizeof detail);
    CHECK(o.mismatches == 1 && o.per_class[QC_MM_ONE_ULP] == 1, "one-ulp fp32 scale: %lld", (long long)o.mismatches);
    CHECK(!o.degenerate, "distinct values are not degenerate");
    qc_tensor short_t;
    int64_t m = 7;
    qc_tensor_alloc(&short_t, "s", QC_ST_F32, "f32", 1, &m);
    detail[0] = '\0';
    CHECK(qc_compare(&spec, &p, &in, &e, &short_t, NULL, 10, &o, detail, sizeof detail) == -1 &&
              strstr(detail, "shape/storage mismatch"),
          "a shorter output is a shape mismatch: %s", detail);
    for (int i = 0; i < 8; i++)
        ev[i] = gv[i] = 448.0f;
    qc_compare(&spec, &p, &in, &e, &g, NULL, 10, &o, detail, sizeof detail);
    CHECK(o.mismatches == 0 && o.degenerate, "an all-448 expected output is degenerate");
    spec.degenerate_ok = 1;
    qc_compare(&spec, &p, &in, &e, &g, NULL, 10, &o, detail, sizeof detail);
    CHECK(!o.degenerate, "degenerate_ok lets a case mean it");
    qc_tensor_free(&e);
    qc_tensor_free(&g);
    qc_tensor_free(&short_t);
}

static void test_padding_mask(void)
{
    /* 8 elements: 0-5 data, 6 padding defined as zero, 7 padding the real code leaves undefined */
    const uint8_t exp[8] = {1, 2, 3, 4, 5, 6, 0, 0};
    const uint8_t got[8] = {1, 2, 3, 4, 5, 6, 9, 0xAB};
    const uint8_t roles[8] = {1, 1, 1, 1, 1, 1, QC_MASK_PADDING, QC_MASK_UNDEFINED};
    qc_tensor e, g, m;
    codes(&e, "y", "u8", 1, 8, exp);
    codes(&g, "y", "u8", 1, 8, got);
    codes(&m, "y.mask", "u8", 1, 8, roles);
    qc_compare_spec spec = {.output = "y", .rule = "bitexact"};
    qc_params p = {0};
    qc_tensor_set in = {0};
    qc_compare_out o;
    char detail[4096] = "";
    qc_compare_extra xm = {.mask = &m};
    qc_compare(&spec, &p, &in, &e, &g, &xm, 10, &o, detail, sizeof detail);
    CHECK(o.mismatches == 1 && o.per_class[QC_MM_PADDING] == 1 && o.skipped == 1,
          "defined padding compared and classed, undefined skipped: %lld %lld", (long long)o.mismatches,
          (long long)o.skipped);
    qc_tensor_free(&e);
    qc_tensor_free(&g);
    qc_tensor_free(&m);
}

static void f32_tensor(qc_tensor *t, const char *name, int64_t rows, int64_t cols, const float *v)
{
    int64_t shape[2] = {rows, cols};
    qc_tensor_alloc(t, name, QC_ST_F32, "f32", 2, shape);
    memcpy(t->data, v, sizeof(float) * (size_t)(rows * cols));
}

static void test_bound(void)
{
    const float exp[4] = {1.0f, 2.0f, NAN, 4.0f}, got[4] = {1.0000001f, 2.1f, NAN, NAN};
    const float bnd[4] = {1e-6f, 0.05f, 0.0f, 1.0f};
    qc_tensor e, g, b;
    f32_tensor(&e, "c", 1, 4, exp);
    f32_tensor(&g, "c", 1, 4, got);
    f32_tensor(&b, "c.bound", 1, 4, bnd);
    qc_compare_spec spec = {.output = "c", .rule = "bound", .budget_class = -1};
    qc_params p = {0};
    qc_tensor_set in = {0};
    qc_compare_extra x = {.bound = &b};
    qc_compare_out o;
    char detail[4096] = "";
    qc_compare(&spec, &p, &in, &e, &g, &x, 10, &o, detail, sizeof detail);
    CHECK(o.mismatches == 2 && o.per_class[QC_MM_OUT_OF_BOUND] == 1 && o.per_class[QC_MM_NAN_POLICY] == 1,
          "bound: 2.1 vs 2 +- 0.05 fails, NaN vs 4 fails, within-bound and NaN=NaN pass: %s", detail);
    CHECK(strstr(detail, "|err| 0.1 > bound 0.05") != NULL, "the report gives error and bound: %s", detail);
    qc_tensor_free(&e);
    qc_tensor_free(&g);
    qc_tensor_free(&b);
}

static void test_scale_coupled_budget(void)
{
    /* scales [2 rows x 2 blocks]; scale (0, 1) is one ulp up; codes [2 x 8] with block 4 */
    float se[4] = {0.5f, 0.25f, 1.0f, 2.0f}, sg[4];
    memcpy(sg, se, sizeof se);
    uint32_t bits;
    memcpy(&bits, &sg[1], 4);
    bits++;
    memcpy(&sg[1], &bits, 4);
    const uint8_t qe[16] = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8};
    uint8_t qg[16];
    memcpy(qg, qe, 16);
    qg[5] = 9, qg[6] = 9; /* row 0, block 1: the block of the off-by-one-ulp scale */
    qc_tensor e, g, qet, qgt;
    f32_tensor(&e, "scale", 2, 2, se);
    f32_tensor(&g, "scale", 2, 2, sg);
    codes(&qet, "q", "u8", 2, 8, qe);
    codes(&qgt, "q", "u8", 2, 8, qg);
    qc_compare_spec ss = {.output = "scale", .rule = "budget", .budget_class = QC_MM_ONE_ULP, .budget = 0.25};
    qc_compare_spec qs = {.output = "q", .rule = "budget", .budget_class = QC_MM_SCALE_COUPLED, .budget = 0,
                          .block = "4", .coupled_to = "scale"};
    qc_params p = {0};
    qc_tensor_set in = {0};
    uint8_t map[4] = {0};
    qc_compare_extra xs = {.budget_map = map};
    qc_compare_out o;
    char detail[4096] = "";
    qc_compare(&ss, &p, &in, &e, &g, &xs, 10, &o, detail, sizeof detail);
    CHECK(o.mismatches == 0 && o.allowed == 1 && map[1] == 1, "one one-ulp scale within a 25%% budget: %s", detail);
    qc_compare_extra xq = {.coupled_bad = map, .coupled_n = 4};
    qc_compare(&qs, &p, &in, &qet, &qgt, &xq, 10, &o, detail, sizeof detail);
    CHECK(o.mismatches == 0 && o.allowed == 2 && o.per_class[QC_MM_SCALE_COUPLED] == 2,
          "codes of the coupled block are allowed: %s", detail);
    qg[9] = 7; /* row 1, block 0: its scale is exact, so this one fails */
    memcpy(qgt.data, qg, 16);
    qc_compare(&qs, &p, &in, &qet, &qgt, &xq, 10, &o, detail, sizeof detail);
    CHECK(o.mismatches == 1, "a difference outside coupled blocks fails: %lld", (long long)o.mismatches);
    ss.budget = 0.1; /* 1 of 4 scales is more than 10% */
    qc_compare(&ss, &p, &in, &e, &g, &xs, 10, &o, detail, sizeof detail);
    CHECK(o.mismatches == 1 && strstr(detail, "exceed the budget"), "over budget fails: %s", detail);
    qc_tensor_free(&e);
    qc_tensor_free(&g);
    qc_tensor_free(&qet);
    qc_tensor_free(&qgt);
}

/* qc_judge: a stage tensor the backend does not give is not compared (a vendor kernel exposes no
 * intermediates) and the detail says so; a missing plain output is ERROR. */
static void test_optional_stage_tensors(void)
{
    const uint8_t v[4] = {1, 2, 3, 4};
    qc_case c = {.ncompares = 2};
    snprintf(c.op, sizeof c.op, "gemm");
    c.compares[0] = (qc_compare_spec){.output = "y", .rule = "bitexact", .degenerate_ok = 1, .budget_class = -1};
    c.compares[1] = (qc_compare_spec){.output = "stage.dequant.b", .rule = "bitexact", .degenerate_ok = 1, .budget_class = -1};
    qc_tensor_set in = {0}, expected = {0}, got = {0}, none = {0};
    qc_tensor t;
    codes(&t, "y", "e4m3fn", 1, 4, v), qc_set_add(&expected, &t);
    codes(&t, "stage.dequant.b", "e4m3fn", 1, 4, v), qc_set_add(&expected, &t);
    codes(&t, "y", "e4m3fn", 1, 4, v), qc_set_add(&got, &t);
    qc_params p = {0};
    qc_result r;
    memset(&r, 0, sizeof r);
    qc_judge(&c, &p, &in, &expected, &got, 8, &r);
    CHECK(r.verdict == QC_PASS && strstr(r.detail, "stage.dequant.b: not produced by the backend"),
          "a stage tensor the backend does not give is not compared, and said so (%d: %s)", r.verdict, r.detail);
    ((uint8_t *)qc_set_find(&got, "y")->data)[2] = 9;
    memset(&r, 0, sizeof r);
    qc_judge(&c, &p, &in, &expected, &got, 8, &r);
    CHECK(r.verdict == QC_FAIL, "the outputs it gives are still judged (%d)", r.verdict);
    memset(&r, 0, sizeof r);
    qc_judge(&c, &p, &in, &expected, &none, 8, &r);
    CHECK(r.verdict == QC_ERROR && strstr(r.figures, "output 'y' missing"), "a missing plain output is ERROR: %s",
          r.figures);
    qc_set_free(&expected), qc_set_free(&got);
}

int main(void)
{
    test_optional_stage_tensors();
    test_bound();
    test_scale_coupled_budget();
    test_padding_mask();
    test_classes();
    test_wrong_block_and_nan();
    test_f32_scales_and_shapes();
    test_raw_bytes_have_no_ulp();
    test_nibble_swap();
    test_misplaced_in_layout();
    test_f32_scales_in_bytes();
    printf("%s\n", failures ? "comparator tests FAILED" : "comparator tests passed");
    return failures != 0;
}
