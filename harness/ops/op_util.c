/* op_util.c: what every op implementation shares: reading numbers, formats and policies from
 * params, and the storage type of a format's codes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "../registry.h"
#include "qc_checked.h"

int qc_op_param_int(qc_op_call *c, const char *key, int64_t dflt, int64_t lo, int64_t hi, int64_t *out)
{
    const char *v = qc_param(c->params, key);
    *out = dflt;
    if ((v && qc_parse_i64(v, lo, hi, out)) || *out < lo || *out > hi) {
        snprintf(c->err, c->errlen, "param %s=%s: an integer in [%lld, %lld]", key, v ? v : "(missing)",
                 (long long)lo, (long long)hi);
        return 2;
    }
    return 0;
}

int qc_op_param_float(qc_op_call *c, const char *key, float dflt, float *out)
{
    const char *v = qc_param(c->params, key);
    char *end;
    *out = v ? strtof(v, &end) : dflt;
    if (v && (end == v || *end)) {
        snprintf(c->err, c->errlen, "param %s=%s is not a number", key, v);
        return 2;
    }
    return 0;
}

const qc_tensor *qc_op_input_f32(qc_op_call *c, const char *name, int64_t numel)
{
    const qc_tensor *t = qc_set_find((qc_tensor_set *)c->in, name);
    if (!t || t->storage != QC_ST_F32 || qc_tensor_numel(t) != numel) {
        snprintf(c->err, c->errlen, "input %s must be f32 with %lld elements%s", name, (long long)numel,
                 t ? "" : " (missing)");
        return NULL;
    }
    return t;
}

int qc_op_optional_f32(qc_op_call *c, const char *name, int64_t numel, const float **out)
{
    const qc_tensor *t = NULL;
    *out = NULL;
    if (qc_set_find((qc_tensor_set *)c->in, name) && !(t = qc_op_input_f32(c, name, numel)))
        return 2;
    *out = t ? t->data : NULL;
    return 0;
}

int qc_op_add_tensor(qc_op_call *c, const char *name, qc_storage st, const char *dtype, int64_t rows, int64_t cols,
                     const void *data)
{
    int64_t shape[2] = {rows, cols};
    qc_tensor t;
    if (qc_tensor_alloc(&t, name, st, dtype, 2, shape)) {
        snprintf(c->err, c->errlen, "%s [%lld, %lld]: more than 2^40 elements, or out of memory", name,
                 (long long)rows, (long long)cols);
        return 2;
    }
    if (data && t.nbytes)
        memcpy(t.data, data, t.nbytes);
    if (!qc_set_add(c->out, &t)) {
        snprintf(c->err, c->errlen, "too many outputs at %s", name);
        qc_tensor_free(&t);
        return 2;
    }
    return 0;
}

qc_storage qc_format_storage(qc_format f)
{
    if (f == QC_F32)
        return QC_ST_F32;
    return qcref_format_bits(f) > 8 ? QC_ST_U16 : QC_ST_U8;
}

int qc_params_get_format(const qc_params *p, const char *key, qc_format *out, char *err, size_t errlen)
{
    const char *v = qc_param(p, key);
    int f = v ? qc_format_from_name(v) : -1;
    if (f < 0) {
        snprintf(err, errlen, v ? "param %s: unknown format '%s'" : "param %s is required", key, v ? v : "");
        return 2;
    }
    *out = (qc_format)f;
    return 0;
}

int qc_params_policy(const qc_params *p, qc_format f, qc_cast_policy *out, char *err, size_t errlen)
{
    return qc_policy_from_params(p, f, out, err, errlen) ? 2 : 0;
}

/* ---- ABI adapters ---- */

_Static_assert((int)QCHECK_U8 == (int)QC_ST_U8 && (int)QCHECK_U16 == (int)QC_ST_U16 &&
                   (int)QCHECK_I32 == (int)QC_ST_I32 && (int)QCHECK_U32 == (int)QC_ST_U32 &&
                   (int)QCHECK_F32 == (int)QC_ST_F32 && (int)QCHECK_F64 == (int)QC_ST_F64,
               "qcheck_storage and qc_storage name the same storages in the same order");

qcheck_tensor qc_view(const qc_tensor *t)
{
    qcheck_tensor v = {0};
    if (!t)
        return v;
    v.storage = (qcheck_storage)t->storage;
    v.dtype = t->dtype;
    v.ndim = t->ndim;
    int64_t stride = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        v.shape[i] = t->shape[i];
        v.strides[i] = stride;
        stride *= t->shape[i];
    }
    v.data = t->data;
    v.nbytes = t->nbytes;
    return v;
}

int qc_op_output(qc_op_call *c, const char *name, qc_storage st, const char *dtype, int ndim, const int64_t *shape,
                 qcheck_tensor *view)
{
    qc_tensor t;
    if (qc_tensor_alloc(&t, name, st, dtype, ndim, shape)) {
        snprintf(c->err, c->errlen, "output %s: its shape has more than 2^40 elements, or out of memory", name);
        return QC_OP_BAD;
    }
    if (t.nbytes)
        memset(t.data, 0xA5, t.nbytes);
    qc_tensor *added = qc_set_add(c->out, &t);
    if (!added) {
        snprintf(c->err, c->errlen, "too many outputs at %s", name);
        qc_tensor_free(&t);
        return QC_OP_BAD;
    }
    if (view)
        *view = qc_view(added);
    return QC_OP_OK;
}

qcheck_ctx qc_abi_ctx(qc_op_call *c)
{
    qcheck_ctx x = {c->err, c->errlen, c->device};
    if (c->errlen)
        c->err[0] = '\0';
    return x;
}

int qc_abi_result(qc_op_call *c, const qcheck_backend *b, qcheck_status st, const qcheck_ctx *ctx)
{
    char why[1024];
    snprintf(why, sizeof why, "%s", ctx->msg && ctx->msg[0] ? ctx->msg : "(no reason given)");
    switch (st) {
    case QCHECK_OK:
        return QC_OP_OK;
    case QCHECK_DECLINED:
        snprintf(c->err, c->errlen, "not implemented by %s: %s", b->name, why);
        return QC_OP_DECLINED;
    case QCHECK_BAD_INPUT:
        snprintf(c->err, c->errlen, "%s rejects the arguments: %s", b->name, why);
        return QC_OP_REFUSED;
    default:
        snprintf(c->err, c->errlen, "%s failed (status %d): %s", b->name, (int)st, why);
        return QC_OP_FAILED;
    }
}
