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
