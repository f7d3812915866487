/* op_transform.c: the weight transforms of reference/transforms as ops.
 *   fnuz_normalize  w: u8 [n] (e4m3fn codes), scale: f32 [s] -> w: u8 [n] (e4m3fnuz codes),
 *                   scale: f32 [s] (doubled); docs/spec/formats.md §7.1 normalize_e4m3fn_to_e4m3fnuz */
#include <stdio.h>
#include <string.h>

#include "../registry.h"
#include "transforms/transforms.h"

/* Copies input `name` into a new output of the same name, for the in-place transforms. */
static qc_tensor *copy_to_output(qc_op_call *c, const char *name, qc_storage storage)
{
    const qc_tensor *in = qc_set_find((qc_tensor_set *)c->in, name);
    qc_tensor t;
    if (!in || in->storage != storage) {
        snprintf(c->err, c->errlen, "input %s must be %s", name, qc_storage_name(storage));
        return NULL;
    }
    if (qc_tensor_alloc(&t, name, storage, in->dtype, in->ndim, in->shape)) {
        snprintf(c->err, c->errlen, "out of memory");
        return NULL;
    }
    if (in->nbytes)
        memcpy(t.data, in->data, in->nbytes);
    qc_tensor *out = qc_set_add(c->out, &t);
    if (!out)
        qc_tensor_free(&t);
    return out;
}

static int parse_fnuz(qc_op_call *c, qcheck_fnuz_normalize_args *a)
{
    qc_tensor *w = copy_to_output(c, "w", QC_ST_U8);
    qc_tensor *scale = w ? copy_to_output(c, "scale", QC_ST_F32) : NULL;
    if (!scale)
        return QC_OP_BAD;
    snprintf(w->dtype, sizeof w->dtype, "e4m3fnuz");
    a->w = qc_view(w);
    a->scale = qc_view(scale);
    return QC_OP_OK;
}

static int ref_fnuz_normalize(qc_op_call *c)
{
    qcheck_fnuz_normalize_args a;
    int rc = parse_fnuz(c, &a);
    if (!rc)
        qcref_normalize_e4m3fn_to_e4m3fnuz(a.w.data, (size_t)qcheck_numel(&a.w), a.scale.data,
                                           (size_t)qcheck_numel(&a.scale));
    return rc;
}

static int abi_fnuz_normalize(qc_op_call *c, const qcheck_backend *b)
{
    qcheck_fnuz_normalize_args a;
    int rc = parse_fnuz(c, &a);
    if (rc)
        return rc;
    qcheck_ctx ctx = qc_abi_ctx(c);
    return qc_abi_result(c, b, b->fnuz_normalize(&a, &ctx), &ctx);
}

const qc_op qc_op_fnuz_normalize = {"fnuz_normalize",
                                    "w u8[n] e4m3fn, scale f32[s] -> w e4m3fnuz (0x80 -> 0), scale * 2",
                                    ref_fnuz_normalize, offsetof(qcheck_backend, fnuz_normalize), abi_fnuz_normalize, NULL, NULL};

/* ---- the checkpoint converters (docs/spec/formats.md §7.2-§8.3) ---- */

/* The input `name`: storage st, exactly rows x cols elements (the shape the op's rule gives). */
static const qc_tensor *input_of(qc_op_call *c, const char *name, qc_storage st, int64_t rows, int64_t cols)
{
    const qc_tensor *t = qc_set_find((qc_tensor_set *)c->in, name);
    if (!t || t->storage != st || qc_tensor_numel(t) != rows * cols) {
        snprintf(c->err, c->errlen, "input %s must be %s with %lld x %lld elements%s", name, qc_storage_name(st),
                 (long long)rows, (long long)cols, t ? "" : " (missing)");
        return NULL;
    }
    return t;
}

/* A new output rows x cols; NULL with c->err set. */
static qc_tensor *output_of(qc_op_call *c, const char *name, qc_storage st, const char *dtype, int64_t rows,
                            int64_t cols)
{
    return qc_op_add_tensor(c, name, st, dtype, rows, cols, NULL) ? NULL : qc_set_find(c->out, name);
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Shard widths: params w0, w1, ... (as many as the instance has, at least w0), e.g. Q, K, V. */
typedef struct shards {
    int n;
    int64_t width[4];
    size_t width_sz[4];
    int64_t rows;
} shards;

static int parse_shards(qc_op_call *c, shards *s)
{
    memset(s, 0, sizeof *s);
    for (; s->n < 4; s->n++) {
        char key[16];
        snprintf(key, sizeof key, "w%d", s->n);
        if (!qc_param(c->params, key))
            break;
        if (qc_op_param_int(c, key, 0, 0, 1 << 20, &s->width[s->n]))
            return QC_OP_BAD;
        s->width_sz[s->n] = (size_t)s->width[s->n];
        s->rows += s->width[s->n];
    }
    if (s->n == 0) {
        snprintf(c->err, c->errlen, "params w0, w1, ...: the row count of each fused shard (at least w0)");
        return QC_OP_BAD;
    }
    return QC_OP_OK;
}

static int parse_requantize(qc_op_call *c, shards *s, qcheck_requantize_args *a)
{
    int64_t k;
    const char *mid = qc_param_or(c->params, "intermediate", "fp16");
    if (parse_shards(c, s) || qc_op_param_int(c, "k", 0, 0, 1 << 20, &k))
        return QC_OP_BAD;
    if (strcmp(mid, "fp16") && strcmp(mid, "fp32")) {
        snprintf(c->err, c->errlen, "param intermediate=%s: fp16 (sglang, vLLM) or fp32 (AMD ATOM)", mid);
        return QC_OP_BAD;
    }
    const qc_tensor *w = input_of(c, "w", QC_ST_U8, s->rows, k), *scale = w ? input_of(c, "scale", QC_ST_F32, 1, s->n) : NULL;
    qc_tensor *out = scale ? output_of(c, "w_requant", QC_ST_U8, "e4m3fn", s->rows, k) : NULL;
    qc_tensor *max_scale = out ? output_of(c, "max_scale", QC_ST_F32, "f32", 1, 1) : NULL;
    if (!max_scale)
        return QC_OP_BAD;
    *a = (qcheck_requantize_args){.fp16_intermediate = !strcmp(mid, "fp16"), .nshards = s->n, .widths = s->width,
                                  .w = qc_view(w), .scale = qc_view(scale), .out_w = qc_view(out),
                                  .max_scale = qc_view(max_scale)};
    return QC_OP_OK;
}

static int ref_requantize(qc_op_call *c)
{
    shards s;
    qcheck_requantize_args a;
    int rc = parse_requantize(c, &s, &a);
    if (rc)
        return rc;
    if (a.w.nbytes) /* k = 0 or no rows: nothing to copy, and no buffer to copy from */
        memcpy(a.out_w.data, a.w.data, a.w.nbytes);
    *(float *)a.max_scale.data = qcref_requantize_with_max_scale(a.out_w.data, (size_t)a.out_w.shape[1], a.scale.data,
                                                                 s.width_sz, (size_t)s.n, a.fp16_intermediate);
    return QC_OP_OK;
}

static int abi_requantize(qc_op_call *c, const qcheck_backend *b)
{
    shards s;
    qcheck_requantize_args a;
    int rc = parse_requantize(c, &s, &a);
    qcheck_ctx ctx = qc_abi_ctx(c);
    return rc ? rc : qc_abi_result(c, b, b->requantize_with_max_scale(&a, &ctx), &ctx);
}

static int parse_channelwise(qc_op_call *c, shards *s, qcheck_channelwise_args *a)
{
    if (parse_shards(c, s))
        return QC_OP_BAD;
    const qc_tensor *scale = input_of(c, "scale", QC_ST_F32, 1, s->n);
    qc_tensor *out = scale ? output_of(c, "scale_channel", QC_ST_F32, "f32", s->rows, 1) : NULL;
    if (!out)
        return QC_OP_BAD;
    *a = (qcheck_channelwise_args){.nshards = s->n, .widths = s->width, .scale = qc_view(scale), .out = qc_view(out)};
    return QC_OP_OK;
}

static int ref_channelwise(qc_op_call *c)
{
    shards s;
    qcheck_channelwise_args a;
    int rc = parse_channelwise(c, &s, &a);
    if (!rc)
        qcref_convert_to_channelwise(a.scale.data, s.width_sz, (size_t)s.n, a.out.data);
    return rc;
}

static int abi_channelwise(qc_op_call *c, const qcheck_backend *b)
{
    shards s;
    qcheck_channelwise_args a;
    int rc = parse_channelwise(c, &s, &a);
    qcheck_ctx ctx = qc_abi_ctx(c);
    return rc ? rc : qc_abi_result(c, b, b->convert_to_channelwise(&a, &ctx), &ctx);
}

/* rows, cols (a multiple of 32: one e8m0 scale per 1 x 32) of the MX-scaled converters. */
static int parse_mx_shape(qc_op_call *c, int64_t *rows, int64_t *cols)
{
    if (qc_op_param_int(c, "rows", 0, 0, 1 << 20, rows) || qc_op_param_int(c, "cols", 0, 0, 1 << 20, cols))
        return QC_OP_BAD;
    if (*cols % 32) {
        snprintf(c->err, c->errlen, "param cols=%lld: a multiple of 32 (one e8m0 scale per 32 elements)",
                 (long long)*cols);
        return QC_OP_BAD;
    }
    return QC_OP_OK;
}

static int parse_e2m1_to_e4m3(qc_op_call *c, qcheck_e2m1_to_e4m3_args *a)
{
    int64_t rows, cols, tile, neg;
    if (parse_mx_shape(c, &rows, &cols) || qc_op_param_int(c, "zero8_negative", 0, 0, 1, &neg) ||
        qc_op_param_int(c, "tile", 128, 32, 128, &tile))
        return QC_OP_BAD;
    if (tile != 32 && tile != 128) {
        snprintf(c->err, c->errlen, "param tile=%lld: 128 (DeepSeek-V4 convert.py) or 32", (long long)tile);
        return QC_OP_BAD;
    }
    const qc_tensor *packed = input_of(c, "packed", QC_ST_U8, rows, cols / 2);
    const qc_tensor *scale = packed ? input_of(c, "scale", QC_ST_U8, rows, cols / 32) : NULL;
    qc_tensor *w = scale ? output_of(c, "w", QC_ST_U8, "e4m3fn", rows, cols) : NULL;
    qc_tensor *ts = w ? output_of(c, "tile_scale", QC_ST_U8, "e8m0", cdiv(rows, tile), cdiv(cols, tile)) : NULL;
    if (!ts)
        return QC_OP_BAD;
    *a = (qcheck_e2m1_to_e4m3_args){.tile = (int)tile, .zero8_negative = (int)neg, .packed = qc_view(packed),
                                    .scale = qc_view(scale), .w = qc_view(w), .tile_scale = qc_view(ts)};
    return QC_OP_OK;
}

static int ref_e2m1_to_e4m3(qc_op_call *c)
{
    qcheck_e2m1_to_e4m3_args a;
    int rc = parse_e2m1_to_e4m3(c, &a);
    if (!rc)
        qcref_cast_e2m1fn_to_e4m3fn(a.packed.data, a.scale.data, (size_t)a.w.shape[0], (size_t)a.w.shape[1], a.tile,
                                    a.zero8_negative, a.w.data, a.tile_scale.data);
    return rc;
}

static int abi_e2m1_to_e4m3(qc_op_call *c, const qcheck_backend *b)
{
    qcheck_e2m1_to_e4m3_args a;
    int rc = parse_e2m1_to_e4m3(c, &a);
    qcheck_ctx ctx = qc_abi_ctx(c);
    return rc ? rc : qc_abi_result(c, b, b->cast_e2m1fn_to_e4m3fn(&a, &ctx), &ctx);
}

static int parse_mxfp8_to_block(qc_op_call *c, qcheck_mxfp8_to_block_args *a)
{
    int64_t n, k;
    if (parse_mx_shape(c, &n, &k))
        return QC_OP_BAD;
    const qc_tensor *w = input_of(c, "w", QC_ST_U8, n, k), *scale = w ? input_of(c, "scale", QC_ST_U8, n, k / 32) : NULL;
    qc_tensor *ow = scale ? output_of(c, "w_block", QC_ST_U8, "e4m3fn", n, k) : NULL;
    qc_tensor *os = ow ? output_of(c, "scale_block", QC_ST_F32, "f32", cdiv(n, 128), cdiv(k, 128)) : NULL;
    if (!os)
        return QC_OP_BAD;
    *a = (qcheck_mxfp8_to_block_args){.w = qc_view(w), .scale = qc_view(scale), .out_w = qc_view(ow), .out_scale = qc_view(os)};
    return QC_OP_OK;
}

static int ref_mxfp8_to_block(qc_op_call *c)
{
    qcheck_mxfp8_to_block_args a;
    int rc = parse_mxfp8_to_block(c, &a);
    if (!rc && qcref_convert_mxfp8_weight_to_block_fp8(a.w.data, a.scale.data, (size_t)a.w.shape[0],
                                                       (size_t)a.w.shape[1], a.out_w.data, a.out_scale.data)) {
        snprintf(c->err, c->errlen, "out of memory");
        return QC_OP_FAILED;
    }
    return rc;
}

static int abi_mxfp8_to_block(qc_op_call *c, const qcheck_backend *b)
{
    qcheck_mxfp8_to_block_args a;
    int rc = parse_mxfp8_to_block(c, &a);
    qcheck_ctx ctx = qc_abi_ctx(c);
    return rc ? rc : qc_abi_result(c, b, b->convert_mxfp8_weight_to_block_fp8(&a, &ctx), &ctx);
}

static int parse_requant_ue8m0(qc_op_call *c, qcheck_requant_ue8m0_args *a)
{
    int64_t n, k;
    if (qc_op_param_int(c, "rows", 0, 0, 1 << 20, &n) || qc_op_param_int(c, "cols", 0, 0, 1 << 20, &k))
        return QC_OP_BAD;
    const qc_tensor *w = input_of(c, "w", QC_ST_U8, n, k);
    const qc_tensor *s = w ? input_of(c, "scale_inv", QC_ST_F32, cdiv(n, 128), cdiv(k, 128)) : NULL;
    qc_tensor *ow = s ? output_of(c, "w_ue8m0", QC_ST_U8, "e4m3fn", n, k) : NULL;
    /* four K-block scales per int32, MN-major, rows padded to 4 (layouts.md: DeepGEMM TMA-aligned) */
    qc_tensor *pk = ow ? output_of(c, "packed", QC_ST_I32, "i32", cdiv(cdiv(k, 128), 4), cdiv(n, 4) * 4) : NULL;
    if (!pk)
        return QC_OP_BAD;
    if (pk->nbytes != qcref_requant_weight_ue8m0_packed_bytes((size_t)n, (size_t)k)) {
        snprintf(c->err, c->errlen, "internal: packed ue8m0 scales are %zu bytes, the layout says %zu", pk->nbytes,
                 qcref_requant_weight_ue8m0_packed_bytes((size_t)n, (size_t)k));
        return QC_OP_BAD;
    }
    *a = (qcheck_requant_ue8m0_args){.w = qc_view(w), .scale_inv = qc_view(s), .out_w = qc_view(ow), .packed = qc_view(pk)};
    return QC_OP_OK;
}

static int ref_requant_ue8m0(qc_op_call *c)
{
    qcheck_requant_ue8m0_args a;
    int rc = parse_requant_ue8m0(c, &a);
    if (!rc && qcref_requant_weight_ue8m0(a.w.data, a.scale_inv.data, (size_t)a.w.shape[0], (size_t)a.w.shape[1],
                                          a.out_w.data, a.packed.data)) {
        snprintf(c->err, c->errlen, "out of memory");
        return QC_OP_FAILED;
    }
    return rc;
}

static int abi_requant_ue8m0(qc_op_call *c, const qcheck_backend *b)
{
    qcheck_requant_ue8m0_args a;
    int rc = parse_requant_ue8m0(c, &a);
    qcheck_ctx ctx = qc_abi_ctx(c);
    return rc ? rc : qc_abi_result(c, b, b->requant_weight_ue8m0(&a, &ctx), &ctx);
}

const qc_op qc_op_requantize_with_max_scale = {
    "requantize_with_max_scale",
    "w u8[w0+w1+.., k] e4m3fn, scale f32[shards] -> w_requant e4m3fn (every shard to the max scale), max_scale "
    "f32[1]; params w0 w1 .. k intermediate=fp16|fp32",
    ref_requantize, offsetof(qcheck_backend, requantize_with_max_scale), abi_requantize, NULL, NULL};
const qc_op qc_op_convert_to_channelwise = {
    "convert_to_channelwise", "scale f32[shards] -> scale_channel f32[w0+w1+.., 1]; params w0 w1 ..",
    ref_channelwise, offsetof(qcheck_backend, convert_to_channelwise), abi_channelwise, NULL, NULL};
const qc_op qc_op_cast_e2m1fn_to_e4m3fn = {
    "cast_e2m1fn_to_e4m3fn",
    "packed u8[rows, cols/2] e2m1x2, scale u8[rows, cols/32] e8m0 -> w e4m3fn[rows, cols], tile_scale e8m0 "
    "[rows/tile, cols/tile]; params rows cols tile=128|32 zero8_negative=0|1",
    ref_e2m1_to_e4m3, offsetof(qcheck_backend, cast_e2m1fn_to_e4m3fn), abi_e2m1_to_e4m3, NULL, NULL};
const qc_op qc_op_convert_mxfp8_weight_to_block_fp8 = {
    "convert_mxfp8_weight_to_block_fp8",
    "w u8[rows, cols] e4m3fn, scale u8[rows, cols/32] e8m0 -> w_block e4m3fn, scale_block f32 128x128; params rows cols",
    ref_mxfp8_to_block, offsetof(qcheck_backend, convert_mxfp8_weight_to_block_fp8), abi_mxfp8_to_block, NULL, NULL};
const qc_op qc_op_requant_weight_ue8m0 = {
    "requant_weight_ue8m0",
    "w u8[rows, cols] e4m3fn, scale_inv f32 128x128 -> w_ue8m0 e4m3fn, packed i32 ue8m0 x4 MN-major; params rows cols",
    ref_requant_ue8m0, offsetof(qcheck_backend, requant_weight_ue8m0), abi_requant_ue8m0, NULL, NULL};
