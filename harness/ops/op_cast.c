/* op_cast.c: the element-format ops.
 *   cast      x: f32 [n]            -> y: codes of `to` [n]   (params: to, profile and policy keys)
 *   decode    codes: u8/u16 [n]     -> y: f32 [n]             (params: from, profile, e8m0-decode)
 *   fp4_pack  codes: u8 [n] (0..15) -> packed: u8 [ceil(n/2)] (params: swap = 0|1) */
#include <stdio.h>
#include <string.h>

#include "../registry.h"

static uint32_t load(const qc_tensor *t, int64_t i)
{
    switch (t->storage) {
    case QC_ST_U8: return ((const uint8_t *)t->data)[i];
    case QC_ST_U16: return ((const uint16_t *)t->data)[i];
    default: return ((const uint32_t *)t->data)[i];
    }
}

static void store(qc_tensor *t, int64_t i, uint32_t v)
{
    switch (t->storage) {
    case QC_ST_U8: ((uint8_t *)t->data)[i] = (uint8_t)v; break;
    case QC_ST_U16: ((uint16_t *)t->data)[i] = (uint16_t)v; break;
    default: ((uint32_t *)t->data)[i] = v; break;
    }
}

static const qc_tensor *input(qc_op_call *c, const char *name)
{
    const qc_tensor *t = qc_set_find((qc_tensor_set *)c->in, name);
    if (!t)
        snprintf(c->err, c->errlen, "missing input tensor '%s'", name);
    return t;
}

static qc_tensor *output(qc_op_call *c, const char *name, qc_storage s, const char *dtype, int64_t n)
{
    qc_tensor t;
    if (qc_tensor_alloc(&t, name, s, dtype, 1, &n)) {
        snprintf(c->err, c->errlen, "out of memory for output '%s' (%lld elements)", name, (long long)n);
        return NULL;
    }
    qc_tensor *r = qc_set_add(c->out, &t);
    if (!r)
        qc_tensor_free(&t);
    return r;
}

static int ref_cast(qc_op_call *c)
{
    qc_format to;
    qc_cast_policy p;
    const qc_tensor *x = input(c, "x");
    if (!x || qc_params_get_format(c->params, "to", &to, c->err, c->errlen) ||
        qc_params_policy(c->params, to, &p, c->err, c->errlen))
        return 2;
    int64_t n = qc_tensor_numel(x);
    qc_tensor *y = output(c, "y", qc_format_storage(to), qc_format_name(to), n);
    if (!y)
        return 2;
    const float *xs = x->data;
    for (int64_t i = 0; i < n; i++)
        store(y, i, qcref_encode(to, xs[i], &p));
    return 0;
}

static int ref_decode(qc_op_call *c)
{
    qc_format from;
    qc_cast_policy p;
    const qc_tensor *codes = input(c, "codes");
    if (!codes || qc_params_get_format(c->params, "from", &from, c->err, c->errlen) ||
        qc_params_policy(c->params, from, &p, c->err, c->errlen))
        return 2;
    int64_t n = qc_tensor_numel(codes);
    qc_tensor *y = output(c, "y", QC_ST_F32, "f32", n);
    if (!y)
        return 2;
    float *ys = y->data;
    for (int64_t i = 0; i < n; i++)
        ys[i] = qcref_decode(from, load(codes, i), &p);
    return 0;
}

static int ref_fp4_pack(qc_op_call *c)
{
    const qc_tensor *codes = input(c, "codes");
    if (!codes)
        return 2;
    int64_t n = qc_tensor_numel(codes);
    qc_tensor *y = output(c, "packed", QC_ST_U8, "e2m1x2", (n + 1) / 2);
    if (!y)
        return 2;
    qcref_fp4_pack(codes->data, (size_t)n, strcmp(qc_param_or(c->params, "swap", "0"), "1") == 0, y->data);
    return 0;
}

const qc_op qc_op_cast = {"cast", "x f32[n] -> y codes[n]; params: to, profile, policy keys", ref_cast};
const qc_op qc_op_decode = {"decode", "codes[n] -> y f32[n]; params: from, profile, e8m0-decode", ref_decode};
const qc_op qc_op_fp4_pack = {"fp4_pack", "codes u8[n] -> packed u8[ceil(n/2)]; params: swap", ref_fp4_pack};
