/* op_quant.c: the quantization ops, with the bytes `qcheck quant` writes.
 *   quant    x: f32 [rows, cols] -> q: u8 (codes; FP4 packed), scale: u8 (the recipe's scale bytes),
 *            gscale: f32 [1] (nvfp4)
 *   dequant  x: f32 [rows, cols] -> y: f32 [rows, cols]: quantize with the reference, dequantize
 *            with the implementation under test (so a backend's dequant is checked on its own)
 * params: recipe, profile (default: the recipe's first), rows, cols, in-dtype, layout, and the
 * recipe's keys of docs/spec/cli.md, parsed once into the ABI's qcheck_quant_spec
 * (qc_quant_job_from_params). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compare.h"
#include "../quant_job.h"
#include "../registry.h"

static const char *scale_dtype(const qc_quant_job *j)
{
    if (j->recipe == QC_RECIPE_NVFP4)
        return "e4m3fn";
    return j->recipe >= QC_RECIPE_MXFP8 ? "e8m0" : "u8"; /* fp32 scales (or packed ue8m0 words) as bytes */
}

/* The job of c's params and its input x (f32, rows * cols elements). */
static int job_and_input(qc_op_call *c, qc_quant_job *j, const qc_tensor **x)
{
    if (qc_quant_job_from_params(c->params, 0, j, c->err, c->errlen))
        return QC_OP_BAD;
    *x = qc_set_find((qc_tensor_set *)c->in, "x");
    if (!*x || (*x)->storage != QC_ST_F32 || (size_t)qc_tensor_numel(*x) != j->rows * j->cols) {
        snprintf(c->err, c->errlen, "input x must be f32 with rows*cols = %zu elements", j->rows * j->cols);
        return QC_OP_BAD;
    }
    return QC_OP_OK;
}

/* q, scale and (nvfp4) gscale, in the byte forms of the job, added to out (poisoned). */
static int add_outputs(qc_op_call *c, const qc_quant_job *j, qcheck_tensor *q, qcheck_tensor *scale,
                       qcheck_tensor *gscale)
{
    int64_t nq = (int64_t)qc_quant_job_q_bytes(j);
    int64_t ns = (int64_t)qc_quant_job_scale_bytes(j, qcref_recipe_nscales(j->recipe, &j->policy, j->rows, j->cols));
    int64_t one = 1;
    memset(gscale, 0, sizeof *gscale);
    return qc_op_output(c, "q", QC_ST_U8, qc_quant_job_fp4(j) ? "e2m1x2" : qc_format_name(j->policy.elem), 1, &nq, q) ||
                   qc_op_output(c, "scale", QC_ST_U8, scale_dtype(j), 1, &ns, scale) ||
                   (j->recipe == QC_RECIPE_NVFP4 && qc_op_output(c, "gscale", QC_ST_F32, "f32", 1, &one, gscale))
               ? QC_OP_BAD
               : QC_OP_OK;
}

/* The reference quantizer into the output views (the bytes qcheck quant writes). */
static int reference_quant(qc_op_call *c, const qc_quant_job *j, const float *x, qcheck_tensor *q, qcheck_tensor *scale,
                           qcheck_tensor *gscale, qc_quant_post post)
{
    qc_quantized qz;
    if (qc_quant_job_alloc(j, &qz)) {
        snprintf(c->err, c->errlen, "out of memory");
        return QC_OP_BAD;
    }
    qcref_quant(j->recipe, &j->policy, x, j->rows, j->cols, j->has_static ? &j->static_scale : NULL,
                j->has_gscale ? &j->gscale_encode : NULL, &qz);
    if (post)
        post(j, x, &qz);
    size_t qbytes, sbytes;
    uint8_t *sb = NULL;
    int rc = qc_quant_job_serialize(j, &qz, &qbytes, &sb, &sbytes, c->err, c->errlen);
    if (!rc) { /* an empty tensor (rows = 0) has no buffers: memcpy(NULL, p, 0) is undefined */
        if (qbytes)
            memcpy(q->data, qz.q, qbytes);
        if (sbytes)
            memcpy(scale->data, sb, sbytes);
        if (gscale->data)
            memcpy(gscale->data, &qz.gscale, 4);
    }
    free(sb);
    qc_quant_job_free(&qz);
    return rc ? QC_OP_BAD : QC_OP_OK;
}

int qc_quant_op(qc_op_call *c, qc_quant_tweak tweak, qc_quant_post post)
{
    qc_quant_job j;
    const qc_tensor *x;
    qcheck_tensor q, scale, gscale;
    int rc = job_and_input(c, &j, &x);
    if (rc)
        return rc;
    const char *inert = tweak ? tweak(&j, x->data) : NULL;
    if (inert) {
        snprintf(c->err, c->errlen, "%s", inert);
        return QC_OP_DECLINED;
    }
    return add_outputs(c, &j, &q, &scale, &gscale) || reference_quant(c, &j, x->data, &q, &scale, &gscale, post)
               ? QC_OP_BAD
               : QC_OP_OK;
}

static int ref_quant(qc_op_call *c) { return qc_quant_op(c, NULL, NULL); }

/* The elements along cols that share one scale (0: a whole row or the tensor). */
static int64_t block_of(const qc_quant_job *j)
{
    switch (j->recipe) {
    case QC_RECIPE_TENSOR:
    case QC_RECIPE_TOKEN: return 0;
    case QC_RECIPE_BLOCK: return j->policy.block_c;
    default:              return j->policy.group;
    }
}

/* q: one code per element of [rows, cols] (FP4: two per byte); scale: one value per scale of the
 * grid (fp32 scales are 4 bytes each), through the scale layout when there is one. */
static int quant_view(const qc_params *p, const char *output, qc_output_view *v)
{
    qc_quant_job j;
    char err[256];
    memset(v, 0, sizeof *v);
    if (qc_quant_job_from_params(p, 0, &j, err, sizeof err))
        return 1;
    if (!strcmp(output, "q")) {
        snprintf(v->dtype, sizeof v->dtype, "%s", qc_format_name(j.policy.elem));
        v->elem_bits = qc_quant_job_fp4(&j) ? 4 : 8;
        v->rows = (int64_t)j.rows, v->cols = (int64_t)j.cols, v->block = block_of(&j);
        v->axes[0] = "row", v->axes[1] = "col";
        return 0;
    }
    if (strcmp(output, "scale"))
        return 1;
    qc_quant_job_scale_grid(&j, &v->rows, &v->cols);
    int bytes = !strcmp(scale_dtype(&j), "u8") ? 4 : 1;
    if (j.recipe == QC_RECIPE_TOKEN_GROUP && j.layout == QC_SL_PACKED_UE8M0)
        bytes = 1, snprintf(v->dtype, sizeof v->dtype, "e8m0");
    else
        snprintf(v->dtype, sizeof v->dtype, "%s", bytes == 4 ? "f32" : scale_dtype(&j));
    v->elem_bits = 8 * bytes;
    v->axes[0] = j.recipe == QC_RECIPE_BLOCK ? "row tile" : "row";
    v->axes[1] = j.recipe == QC_RECIPE_BLOCK ? "col tile" : "block";
    if (j.has_sf_layout)
        v->layout_kind = QC_VIEW_LAYOUT, v->layout = j.sf_layout;
    else if (j.recipe == QC_RECIPE_TOKEN_GROUP && j.layout != QC_SL_ROW)
        v->layout_kind = QC_VIEW_SCALE_LAYOUT, v->scale_layout = (int)j.layout;
    return 0;
}

static int abi_quant(qc_op_call *c, const qcheck_backend *b)
{
    qc_quant_job j;
    const qc_tensor *x;
    qcheck_quant_args a = {.spec = &j};
    int rc = job_and_input(c, &j, &x);
    if (rc || (rc = add_outputs(c, &j, &a.q, &a.scale, &a.gscale)))
        return rc;
    a.x = qc_view(x);
    qcheck_ctx ctx = qc_abi_ctx(c);
    return qc_abi_result(c, b, b->quant(&a, &ctx), &ctx);
}

/* dequant: the reference's quant bytes (in a set of their own, not outputs) go to the
 * dequantizer of b (NULL: the reference's). */
static int dequant_call(qc_op_call *c, const qcheck_backend *b)
{
    qc_quant_job j;
    const qc_tensor *x;
    qc_tensor_set bytes = {0};
    qc_op_call qc = *c;
    qc.out = &bytes;
    qcheck_dequant_args a = {.spec = &j};
    int rc = job_and_input(c, &j, &x);
    if (!rc)
        rc = add_outputs(&qc, &j, &a.q, &a.scale, &a.gscale) || reference_quant(&qc, &j, x->data, &a.q, &a.scale, &a.gscale, NULL)
                 ? QC_OP_BAD
                 : QC_OP_OK;
    int64_t shape[2] = {(int64_t)j.rows, (int64_t)j.cols};
    if (!rc)
        rc = qc_op_output(c, "y", QC_ST_F32, "f32", 2, shape, &a.y);
    if (!rc && b) {
        qcheck_ctx ctx = qc_abi_ctx(c);
        rc = qc_abi_result(c, b, b->dequant(&a, &ctx), &ctx);
    } else if (!rc) { /* the reference dequantizer */
        qc_quantized qz;
        if (qc_quant_job_alloc(&j, &qz)) {
            snprintf(c->err, c->errlen, "out of memory");
            rc = QC_OP_BAD;
        } else {
            qc_quant_job_deserialize(&j, a.q.data, a.scale.data, a.gscale.data, &qz);
            qcref_dequant(j.recipe, &j.policy, &qz, a.y.data);
            qc_quant_job_free(&qz);
        }
    }
    qc_set_free(&bytes);
    return rc;
}

static int ref_dequant(qc_op_call *c) { return dequant_call(c, NULL); }

const qc_op qc_op_quant = {"quant",
                           "x f32[rows, cols] -> q, scale (u8, as qcheck quant writes), gscale; params: "
                           "recipe profile rows cols and the recipe's keys",
                           ref_quant, offsetof(qcheck_backend, quant), abi_quant, NULL, quant_view};
const qc_op qc_op_dequant = {"dequant", "x f32[rows, cols] -> y f32: reference quant, then dequant; params as quant",
                             ref_dequant, offsetof(qcheck_backend, dequant), dequant_call, NULL, NULL};
