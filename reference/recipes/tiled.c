/* tiled.c: the fp32-scale recipes tensor, token, token_group and block (docs/spec/formats.md §6.2-§6.4).
 * They differ only in the tile one scale covers (whole tensor, 1 x K, 1 x group, 128 x 128), so
 * there is one quantizer over tiles; the knobs of the per-tile math are in scale.c. A partial
 * tile at the right or bottom edge is the zero padding of DeepGEMM per_block_cast_to_fp8: the
 * padding contributes 0 to amax and is not written. */
#include "recipes.h"

static void tile_of(qc_recipe r, const qc_recipe_policy *p, size_t rows, size_t cols, size_t *tr, size_t *tc)
{
    switch (r) {
    case QC_RECIPE_TOKEN:       *tr = 1; *tc = cols; break;
    case QC_RECIPE_TOKEN_GROUP: *tr = 1; *tc = (size_t)p->group; break;
    case QC_RECIPE_BLOCK:       *tr = (size_t)p->block_r; *tc = (size_t)p->block_c; break;
    default:                    *tr = rows; *tc = cols; break;
    }
}

static size_t ceil_div(size_t a, size_t b) { return b ? (a + b - 1) / b : 0; }

/* Tiles per dimension; the tensor recipe always has exactly one scale. */
static void tiles(qc_recipe r, const qc_recipe_policy *p, size_t rows, size_t cols, size_t *nr, size_t *nc)
{
    size_t tr, tc;
    tile_of(r, p, rows, cols, &tr, &tc);
    *nr = r == QC_RECIPE_TENSOR ? 1 : ceil_div(rows, tr);
    *nc = r == QC_RECIPE_TENSOR ? 1 : r == QC_RECIPE_TOKEN ? 1 : ceil_div(cols, tc);
}

size_t qcref_tiled_nscales(qc_recipe r, const qc_recipe_policy *p, size_t rows, size_t cols)
{
    size_t nr, nc;
    tiles(r, p, rows, cols, &nr, &nc);
    return nr * nc;
}

static float tile_amax(const float *x, size_t cols, size_t r0, size_t r1, size_t c0, size_t c1, qc_amax_nan rule)
{
    float m = 0.0f;
    for (size_t i = r0; i < r1; i++) {
        float a = qcref_group_amax(x + i * cols + c0, c1 - c0, 1, rule);
        if (a != a)
            return a;
        m = a > m ? a : m;
    }
    return m;
}

void qcref_tiled_quant(qc_recipe r, const qc_recipe_policy *p, const float *x, size_t rows, size_t cols,
                       const float *static_scale, qc_quantized *out, float *prescaled)
{
    size_t tr, tc, nr, nc;
    tile_of(r, p, rows, cols, &tr, &tc);
    tiles(r, p, rows, cols, &nr, &nc);
    if (r == QC_RECIPE_TENSOR || r == QC_RECIPE_TOKEN)
        tc = cols ? cols : 1;
    if (r == QC_RECIPE_TENSOR)
        tr = rows ? rows : 1;
    for (size_t ti = 0; ti < nr; ti++)
        for (size_t tj = 0; tj < nc; tj++) {
            size_t r0 = ti * tr, r1 = r0 + tr < rows ? r0 + tr : rows;
            size_t c0 = tj * tc, c1 = c0 + tc < cols ? c0 + tc : cols;
            if (c0 == c1) /* no columns: no elements (amax 0), however many rows the tile spans */
                r1 = r0;
            float amax = tile_amax(x, cols, r0, r1, c0, c1, p->amax_nan);
            float s = static_scale ? *static_scale : qcref_scale_from_amax(amax, p);
            out->scale_f32[ti * nc + tj] = s;
            for (size_t i = r0; i < r1; i++)
                for (size_t j = c0; j < c1; j++) {
                    out->q[i * cols + j] = qcref_quant_elem(x[i * cols + j], s, amax, p);
                    if (prescaled)
                        prescaled[i * cols + j] = qcref_prescale_elem(x[i * cols + j], s, amax, p);
                }
        }
}

void qcref_tiled_dequant(qc_recipe r, const qc_recipe_policy *p, const qc_quantized *in, float *y)
{
    size_t tr, tc, nr, nc, rows = in->rows, cols = in->cols;
    tile_of(r, p, rows, cols, &tr, &tc);
    tiles(r, p, rows, cols, &nr, &nc);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            size_t ti = r == QC_RECIPE_TENSOR ? 0 : i / tr;
            size_t tj = (r == QC_RECIPE_TENSOR || r == QC_RECIPE_TOKEN) ? 0 : j / tc;
            float v = qcref_decode(p->elem, in->q[i * cols + j], &p->cast);
            y[i * cols + j] = qcref_fl32_mul(v, in->scale_f32[ti * nc + tj]); /* a NaN code times a NaN scale: arith.h */
        }
}
