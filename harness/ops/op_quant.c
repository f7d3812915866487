/* op_quant.c: the quantization ops, with the bytes `qcheck quant` writes.
 *   quant    x: f32 [rows, cols] -> q: u8 (codes; FP4 packed), scale: u8 (the recipe's scale bytes),
 *            gscale: f32 [1] (nvfp4)
 *   dequant  x: f32 [rows, cols] -> y: f32 [rows, cols]: quantize with the reference, dequantize
 *            with the implementation under test (so a backend's dequant is checked on its own)
 * params: recipe, profile (default: the recipe's first), rows, cols, in-dtype, and the recipe's
 * keys of spec/cli.md (fp8, elem, group, eps, ue8m0, scale_layout, block, static_scale,
 * gscale_encode, gscale_decode, fp8_max, sf), read by the same code as the CLI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../quant_job.h"
#include "../registry.h"

static const char *const recipe_keys[] = {"fp8",   "elem",         "group",        "eps",
                                          "ue8m0", "scale_layout", "block",        "static_scale",
                                          "gscale_encode", "gscale_decode", "fp8_max", "sf"};

/* The params as the CLI's arguments, so that both go through qc_quant_job_setup. */
int qc_quant_job_from_params(const qc_params *p, qc_quant_job *j, char *err, size_t errlen)
{
    static char store[2 * QC_MAX_PARAMS + 8][QC_PARAM_LEN + 40];
    char *argv[2 * QC_MAX_PARAMS + 8];
    int argc = 0;
#define ARG(...) (snprintf(store[argc], sizeof store[0], __VA_ARGS__), argv[argc] = store[argc], argc++)
    ARG("--recipe");
    ARG("%s", qc_param_or(p, "recipe", ""));
    if (qc_param(p, "profile")) {
        ARG("--profile");
        ARG("%s", qc_param(p, "profile"));
    }
    if (qc_param(p, "in-dtype")) {
        ARG("--in-dtype");
        ARG("%s", qc_param(p, "in-dtype"));
    }
    if (qc_param(p, "layout")) {
        ARG("--layout");
        ARG("%s", qc_param(p, "layout"));
    }
    ARG("--shape");
    ARG("%sx%s", qc_param_or(p, "rows", "?"), qc_param_or(p, "cols", "?"));
    for (size_t k = 0; k < sizeof recipe_keys / sizeof recipe_keys[0]; k++)
        if (qc_param(p, recipe_keys[k])) {
            ARG("--param");
            ARG("%s=%s", recipe_keys[k], qc_param(p, recipe_keys[k]));
        }
#undef ARG
    qc_args a;
    qc_error_capture(err, errlen);
    int rc = qc_parse_args(&a, "quant", argc, argv, NULL) || qc_quant_job_setup(&a, j);
    qc_error_capture(NULL, 0);
    return rc ? 2 : 0;
}

static int add_bytes(qc_op_call *c, const char *name, qc_storage s, const char *dtype, const void *data, size_t bytes)
{
    int64_t n = (int64_t)(bytes / qc_storage_size(s));
    qc_tensor t;
    if (qc_tensor_alloc(&t, name, s, dtype, 1, &n))
        return 2;
    if (bytes)
        memcpy(t.data, data, bytes);
    return qc_set_add(c->out, &t) ? 0 : 2;
}

static const char *scale_dtype(const qc_quant_job *j)
{
    if (j->recipe == QC_RECIPE_NVFP4)
        return "e4m3fn";
    return j->recipe >= QC_RECIPE_MXFP8 ? "e8m0" : "u8"; /* fp32 scales (or packed ue8m0 words) as bytes */
}

/* Runs the quantizer of c's params on x: kern (a backend's kernel) or, when NULL, the reference
 * with the policy changed by tweak (mutants); qz is allocated. */
static int quantize(qc_op_call *c, qc_quant_job *j, qc_quantized *qz, qc_quant_tweak tweak, qc_quant_kernel kern)
{
    const qc_tensor *x = qc_set_find((qc_tensor_set *)c->in, "x");
    if (qc_quant_job_from_params(c->params, j, c->err, c->errlen))
        return 2;
    if (tweak)
        tweak(j);
    if (!x || x->storage != QC_ST_F32 || (size_t)qc_tensor_numel(x) != j->rows * j->cols) {
        snprintf(c->err, c->errlen, "input x must be f32 with rows*cols = %zu elements", j->rows * j->cols);
        return 2;
    }
    if (qc_quant_job_alloc(j, qz)) {
        snprintf(c->err, c->errlen, "out of memory");
        return 2;
    }
    if (kern && kern(j, x->data, qz)) {
        snprintf(c->err, c->errlen, "the kernel refused recipe %s profile %s", qc_recipe_name(j->recipe), j->profile->name);
        qc_quant_job_free(qz);
        return 1;
    }
    if (!kern)
        qcref_quant(j->recipe, &j->policy, x->data, j->rows, j->cols, j->has_static ? &j->static_scale : NULL,
                    j->has_gscale ? &j->gscale_encode : NULL, qz);
    return 0;
}

/* The outputs of the quant op (serialized as `qcheck quant` writes them) from kern or the reference. */
static int quant_op(qc_op_call *c, qc_quant_tweak tweak, qc_quant_kernel kern)
{
    qc_quant_job j;
    qc_quantized qz;
    int qrc = quantize(c, &j, &qz, tweak, kern);
    if (qrc)
        return qrc;
    size_t qbytes, sbytes;
    uint8_t *scale = NULL;
    int rc = qc_quant_job_serialize(&j, &qz, &qbytes, &scale, &sbytes) ||
             add_bytes(c, "q", QC_ST_U8, qc_quant_job_fp4(&j) ? "e2m1x2" : qc_format_name(j.policy.elem), qz.q, qbytes) ||
             add_bytes(c, "scale", QC_ST_U8, scale_dtype(&j), scale, sbytes) ||
             (j.recipe == QC_RECIPE_NVFP4 && add_bytes(c, "gscale", QC_ST_F32, "f32", &qz.gscale, 4));
    free(scale);
    qc_quant_job_free(&qz);
    return rc ? 2 : 0;
}

int qc_quant_op(qc_op_call *c, qc_quant_tweak tweak) { return quant_op(c, tweak, NULL); }
int qc_quant_op_kernel(qc_op_call *c, qc_quant_kernel kern) { return quant_op(c, NULL, kern); }

static int ref_quant(qc_op_call *c) { return qc_quant_op(c, NULL); }

static int ref_dequant(qc_op_call *c)
{
    qc_quant_job j;
    qc_quantized qz;
    if (quantize(c, &j, &qz, NULL, NULL))
        return 2;
    int64_t shape[2] = {(int64_t)j.rows, (int64_t)j.cols};
    qc_tensor y;
    int rc = qc_tensor_alloc(&y, "y", QC_ST_F32, "f32", 2, shape);
    if (!rc) {
        qcref_dequant(j.recipe, &j.policy, &qz, y.data);
        rc = qc_set_add(c->out, &y) ? 0 : 2;
    }
    qc_quant_job_free(&qz);
    return rc ? 2 : 0;
}

const qc_op qc_op_quant = {"quant", "x f32[rows, cols] -> q, scale (u8, as qcheck quant writes), gscale; params: "
                                    "recipe profile rows cols and the recipe's keys",
                           ref_quant};
const qc_op qc_op_dequant = {"dequant", "x f32[rows, cols] -> y f32: reference quant, then dequant; params as quant",
                             ref_dequant};
