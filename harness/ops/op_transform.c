/* op_transform.c: the weight transforms of reference/transforms as ops.
 *   fnuz_normalize  w: u8 [n] (e4m3fn codes), scale: f32 [s] -> w: u8 [n] (e4m3fnuz codes),
 *                   scale: f32 [s] (doubled); spec/formats.md §7.1 normalize_e4m3fn_to_e4m3fnuz */
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

int qc_fnuz_normalize_outputs(qc_op_call *c, qc_tensor **w, qc_tensor **scale)
{
    *w = copy_to_output(c, "w", QC_ST_U8);
    *scale = *w ? copy_to_output(c, "scale", QC_ST_F32) : NULL;
    if (!*scale)
        return 2;
    snprintf((*w)->dtype, sizeof (*w)->dtype, "e4m3fnuz");
    return 0;
}

static int ref_fnuz_normalize(qc_op_call *c)
{
    qc_tensor *w, *scale;
    if (qc_fnuz_normalize_outputs(c, &w, &scale))
        return 2;
    qcref_normalize_e4m3fn_to_e4m3fnuz(w->data, (size_t)qc_tensor_numel(w), scale->data,
                                       (size_t)qc_tensor_numel(scale));
    return 0;
}

const qc_op qc_op_fnuz_normalize = {"fnuz_normalize",
                                    "w u8[n] e4m3fn, scale f32[s] -> w e4m3fnuz (0x80 -> 0), scale * 2",
                                    ref_fnuz_normalize};
