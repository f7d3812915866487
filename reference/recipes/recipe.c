/* recipe.c: dispatch from a recipe to its quantizer, the shape rules and the names. */
#include <string.h>

#include "recipes.h"

size_t qcref_tiled_nscales(qc_recipe r, const qc_recipe_policy *p, size_t rows, size_t cols);
void qcref_tiled_quant(qc_recipe r, const qc_recipe_policy *p, const float *x, size_t rows, size_t cols,
                       const float *static_scale, qc_quantized *out, float *prescaled);
void qcref_tiled_dequant(qc_recipe r, const qc_recipe_policy *p, const qc_quantized *in, float *y);
void qcref_mx_quant(const qc_recipe_policy *p, const float *x, size_t rows, size_t cols, qc_quantized *out,
                    float *prescaled);
void qcref_mx_dequant(const qc_recipe_policy *p, const qc_quantized *in, float *y);
void qcref_nvfp4_quant(const qc_recipe_policy *p, const float *x, size_t rows, size_t cols,
                       const float *gscale_encode, qc_quantized *out, float *prescaled);
void qcref_nvfp4_dequant(const qc_recipe_policy *p, const qc_quantized *in, float *y);

static const char *const recipe_names[QC_RECIPE_COUNT] = {"tensor", "token", "token_group", "block",
                                                          "mxfp8",  "mxfp6", "mxfp4",       "nvfp4"};

const char *qc_recipe_name(int r) { return r >= 0 && r < QC_RECIPE_COUNT ? recipe_names[r] : "?"; }

int qc_recipe_from_name(const char *s)
{
    for (int i = 0; i < QC_RECIPE_COUNT; i++)
        if (strcmp(recipe_names[i], s) == 0)
            return i;
    return -1;
}

static int is_block_scaled(qc_recipe r) { return r >= QC_RECIPE_MXFP8; }

size_t qcref_recipe_nscales(qc_recipe r, const qc_recipe_policy *p, size_t rows, size_t cols)
{
    if (is_block_scaled(r))
        return p->group > 0 ? rows * (cols / (size_t)p->group) : 0;
    return qcref_tiled_nscales(r, p, rows, cols);
}

/* The rules each library enforces on the shape; the message names the rule (docs/spec/formats.md §4-§6). */
const char *qcref_recipe_shape_rule(qc_recipe r, const qc_recipe_policy *p, size_t rows, size_t cols)
{
    (void)rows;
    switch (r) {
    case QC_RECIPE_TOKEN_GROUP:
        if (p->group <= 0)
            return "token_group: group must be positive";
        if (cols % (size_t)p->group && !p->partial_group)
            return "token_group: K must be a multiple of the group size (sglang per_token_group_quant_fp8 asserts "
                   "x.shape[-1] % group_size == 0; profile deepgemm-ref zero-pads the last group)";
        return NULL;
    case QC_RECIPE_BLOCK:
        return p->block_r > 0 && p->block_c > 0 ? NULL : "block: the tile must be positive";
    case QC_RECIPE_MXFP8:
    case QC_RECIPE_MXFP6:
    case QC_RECIPE_MXFP4:
        if (p->group <= 0 || cols % (size_t)p->group)
            return "mx: K must be a multiple of the block size 32 (OCP MX v1.0 section 6; torchao to_mx asserts it)";
        return NULL;
    case QC_RECIPE_NVFP4:
        if (p->group <= 0 || cols % (size_t)p->group)
            return "nvfp4: K must be a multiple of the block size 16 (flashinfer fp4_quantize requires it)";
        return NULL;
    default:
        return NULL;
    }
}

int qcref_quant(qc_recipe r, const qc_recipe_policy *p, const float *x, size_t rows, size_t cols,
                const float *static_scale, const float *gscale_encode, qc_quantized *out)
{
    return qcref_quant_traced(r, p, x, rows, cols, static_scale, gscale_encode, out, NULL);
}

int qcref_quant_traced(qc_recipe r, const qc_recipe_policy *p, const float *x, size_t rows, size_t cols,
                       const float *static_scale, const float *gscale_encode, qc_quantized *out, float *prescaled)
{
    if (qcref_recipe_shape_rule(r, p, rows, cols))
        return -1;
    out->rows = rows;
    out->cols = cols;
    out->nscales = qcref_recipe_nscales(r, p, rows, cols);
    out->gscale = 0.0f;
    if (r == QC_RECIPE_NVFP4)
        qcref_nvfp4_quant(p, x, rows, cols, gscale_encode, out, prescaled);
    else if (is_block_scaled(r))
        qcref_mx_quant(p, x, rows, cols, out, prescaled);
    else
        qcref_tiled_quant(r, p, x, rows, cols, r == QC_RECIPE_TENSOR ? static_scale : NULL, out, prescaled);
    return 0;
}

void qcref_dequant(qc_recipe r, const qc_recipe_policy *p, const qc_quantized *in, float *y)
{
    if (r == QC_RECIPE_NVFP4)
        qcref_nvfp4_dequant(p, in, y);
    else if (is_block_scaled(r))
        qcref_mx_dequant(p, in, y);
    else
        qcref_tiled_dequant(r, p, in, y);
}
