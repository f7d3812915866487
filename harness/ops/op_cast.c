/* op_cast.c: the element-format ops, each parsed once into its ABI argument struct.
 *   cast      x: f32 [n]            -> y: codes of `to` [n]   (params: to, profile and policy keys)
 *   decode    codes: u8/u16 [n]     -> y: f32 [n]             (params: from, profile, e8m0-decode)
 *   fp4_pack  codes: u8 [n] (0..15) -> packed: u8 [ceil(n/2)] (params: swap = 0|1) */
#include <stdio.h>
#include <string.h>

#include "../registry.h"

static uint32_t load(const qcheck_tensor *t, int64_t i)
{
    switch (t->storage) {
    case QCHECK_U8: return ((const uint8_t *)t->data)[i];
    case QCHECK_U16: return ((const uint16_t *)t->data)[i];
    default: return ((const uint32_t *)t->data)[i];
    }
}

static void store(const qcheck_tensor *t, int64_t i, uint32_t v)
{
    switch (t->storage) {
    case QCHECK_U8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
    case QCHECK_U16: ((uint16_t *)t->data)[i] = (uint16_t)v; break;
    default: ((uint32_t *)t->data)[i] = v; break;
    }
}

static const qc_tensor *input(qc_op_call *c, const char *name, qc_storage want)
{
    const qc_tensor *t = qc_set_find((qc_tensor_set *)c->in, name);
    if (!t)
        snprintf(c->err, c->errlen, "missing input tensor '%s'", name);
    else if ((int)want >= 0 && t->storage != want) {
        snprintf(c->err, c->errlen, "input %s must be %s, got %s", name, qc_storage_name(want),
                 qc_storage_name(t->storage));
        t = NULL;
    }
    return t;
}

static int parse_cast(qc_op_call *c, qcheck_cast_args *a)
{
    const qc_tensor *x = input(c, "x", QC_ST_F32);
    if (!x || qc_params_get_format(c->params, "to", &a->to, c->err, c->errlen) ||
        qc_params_policy(c->params, a->to, &a->policy, c->err, c->errlen))
        return QC_OP_BAD;
    int64_t n = qc_tensor_numel(x);
    a->x = qc_view(x);
    return qc_op_output(c, "y", qc_format_storage(a->to), qc_format_name(a->to), 1, &n, &a->y);
}

static int ref_cast(qc_op_call *c)
{
    qcheck_cast_args a;
    int rc = parse_cast(c, &a);
    const float *xs = a.x.data;
    for (int64_t i = 0; !rc && i < qcheck_numel(&a.x); i++)
        store(&a.y, i, qcref_encode(a.to, xs[i], &a.policy));
    return rc;
}

static int abi_cast(qc_op_call *c, const qcheck_backend *b)
{
    qcheck_cast_args a;
    int rc = parse_cast(c, &a);
    if (rc)
        return rc;
    qcheck_ctx ctx = qc_abi_ctx(c);
    return qc_abi_result(c, b, b->cast(&a, &ctx), &ctx);
}

static int parse_decode(qc_op_call *c, qcheck_decode_args *a)
{
    const qc_tensor *codes = input(c, "codes", (qc_storage)-1);
    if (!codes || qc_params_get_format(c->params, "from", &a->from, c->err, c->errlen) ||
        qc_params_policy(c->params, a->from, &a->policy, c->err, c->errlen))
        return QC_OP_BAD;
    if (codes->storage != qc_format_storage(a->from)) {
        snprintf(c->err, c->errlen, "input codes of %s must be %s", qc_format_name(a->from),
                 qc_storage_name(qc_format_storage(a->from)));
        return QC_OP_BAD;
    }
    int64_t n = qc_tensor_numel(codes);
    a->codes = qc_view(codes);
    return qc_op_output(c, "y", QC_ST_F32, "f32", 1, &n, &a->y);
}

static int ref_decode(qc_op_call *c)
{
    qcheck_decode_args a;
    int rc = parse_decode(c, &a);
    float *ys = a.y.data;
    for (int64_t i = 0; !rc && i < qcheck_numel(&a.codes); i++)
        ys[i] = qcref_decode(a.from, load(&a.codes, i), &a.policy);
    return rc;
}

static int abi_decode(qc_op_call *c, const qcheck_backend *b)
{
    qcheck_decode_args a;
    int rc = parse_decode(c, &a);
    if (rc)
        return rc;
    qcheck_ctx ctx = qc_abi_ctx(c);
    return qc_abi_result(c, b, b->decode(&a, &ctx), &ctx);
}

static int parse_fp4_pack(qc_op_call *c, qcheck_fp4_pack_args *a)
{
    const qc_tensor *codes = input(c, "codes", QC_ST_U8);
    const char *swap = qc_param_or(c->params, "swap", "0");
    if (!codes)
        return QC_OP_BAD;
    if (strcmp(swap, "0") && strcmp(swap, "1")) {
        snprintf(c->err, c->errlen, "param swap=%s must be 0 or 1", swap);
        return QC_OP_BAD;
    }
    a->swap = swap[0] == '1';
    a->codes = qc_view(codes);
    int64_t n = (qc_tensor_numel(codes) + 1) / 2;
    return qc_op_output(c, "packed", QC_ST_U8, "e2m1x2", 1, &n, &a->packed);
}

static int ref_fp4_pack(qc_op_call *c)
{
    qcheck_fp4_pack_args a;
    int rc = parse_fp4_pack(c, &a);
    if (!rc)
        qcref_fp4_pack(a.codes.data, (size_t)qcheck_numel(&a.codes), a.swap, a.packed.data);
    return rc;
}

static int abi_fp4_pack(qc_op_call *c, const qcheck_backend *b)
{
    qcheck_fp4_pack_args a;
    int rc = parse_fp4_pack(c, &a);
    if (rc)
        return rc;
    qcheck_ctx ctx = qc_abi_ctx(c);
    return qc_abi_result(c, b, b->fp4_pack(&a, &ctx), &ctx);
}

const qc_op qc_op_cast = {"cast", "x f32[n] -> y codes[n]; params: to, profile, policy keys", ref_cast,
                          offsetof(qcheck_backend, cast), abi_cast, NULL, NULL};
const qc_op qc_op_decode = {"decode", "codes[n] -> y f32[n]; params: from, profile, e8m0-decode", ref_decode,
                            offsetof(qcheck_backend, decode), abi_decode, NULL, NULL};
const qc_op qc_op_fp4_pack = {"fp4_pack", "codes u8[n] -> packed u8[ceil(n/2)]; params: swap", ref_fp4_pack,
                              offsetof(qcheck_backend, fp4_pack), abi_fp4_pack, NULL, NULL};
