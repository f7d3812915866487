/* op_layout.c: the layout op.
 *   layout  x: u8 [source bytes of B x R x C elements] -> y: u8 [destination bytes], y.mask
 * params: map, rows, cols, batch [1], elem_bytes [0 = the map's natural element], and the map's
 * own parameters by name (qcheck layout list). y.mask marks each destination byte as data,
 * padding with a defined value (compared, class "padding") or padding the real implementation
 * leaves undefined (never compared). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compare.h"
#include "../registry.h"
#include "layouts/layouts.h"
#include "qc_checked.h"

static int int_param(qc_op_call *c, const char *key, int64_t def, int64_t *out)
{
    const char *v = qc_param(c->params, key);
    if (!v) {
        *out = def;
        return 0;
    }
    if (qc_parse_i64(v, INT64_MIN, INT64_MAX, out)) {
        snprintf(c->err, c->errlen, "param %s = '%s' is not a decimal 64-bit integer", key, v);
        return 2;
    }
    return 0;
}

int qc_layout_from_params(qc_op_call *c, qc_layout *L)
{
    const char *map = qc_param(c->params, "map");
    const qc_layout_desc *d = map ? qcref_layout_find(map) : NULL;
    if (!d) {
        snprintf(c->err, c->errlen, map ? "unknown layout map '%s' (qcheck layout list)" : "param map is required%s",
                 map ? map : "");
        return 2;
    }
    int64_t B, R, C, eb;
    if (int_param(c, "batch", 1, &B) || int_param(c, "rows", -1, &R) || int_param(c, "cols", -1, &C) ||
        int_param(c, "elem_bytes", 0, &eb))
        return 2;
    if (eb < 0 || eb > 64) { /* before the cast to int */
        snprintf(c->err, c->errlen, "param elem_bytes = %lld is outside 0..64", (long long)eb);
        return 2;
    }
    const char *keys[QC_LAYOUT_MAX_PARAMS];
    int64_t vals[QC_LAYOUT_MAX_PARAMS];
    int nkv = 0;
    for (int i = 0; i < QC_LAYOUT_MAX_PARAMS && d->params[i].name; i++)
        if (qc_param(c->params, d->params[i].name)) {
            keys[nkv] = d->params[i].name;
            if (int_param(c, d->params[i].name, 0, &vals[nkv]))
                return 2;
            nkv++;
        }
    return qcref_layout_plan(L, d, B, R, C, (int)eb, keys, vals, nkv, c->err, c->errlen) ? 2 : 0;
}

/* Role of every destination byte, from the inverse map. */
static void fill_mask(const qc_layout *L, uint8_t *mask)
{
    size_t per_batch = qcref_layout_dst_bytes(L) / (size_t)(L->B ? L->B : 1);
    uint8_t pad_role = L->pad == QC_PAD_UNDEFINED ? QC_MASK_UNDEFINED : QC_MASK_PADDING;
    memset(mask, pad_role, qcref_layout_dst_bytes(L));
    for (int64_t o = 0; o < L->dst_elems; o++) {
        int64_t g, col;
        int data = L->desc->inv(L, o, &g, &col) != 0 || /* derived elements are data */
                   (qcref_layout_row_src(L, g) >= 0 && col < L->C);
        if (!data)
            continue;
        int64_t first = o * L->out_bits / 8, last = (o * L->out_bits + L->out_bits - 1) / 8;
        for (int64_t b = 0; b < L->B; b++)
            for (int64_t i = first; i <= last; i++)
                mask[(size_t)b * per_batch + (size_t)i] = QC_MASK_DATA;
    }
}

/* The plan, the input x (u8, the map's source bytes) and the outputs y and y.mask. */
static int parse_layout(qc_op_call *c, qc_layout *L, qcheck_layout_args *a)
{
    if (qc_layout_from_params(c, L))
        return QC_OP_BAD;
    const qc_tensor *x = qc_set_find((qc_tensor_set *)c->in, "x");
    if (!x || x->storage != QC_ST_U8 || x->nbytes != qcref_layout_src_bytes(L)) {
        snprintf(c->err, c->errlen, "input x must be u8 with %zu bytes for this shape, got %zu",
                 qcref_layout_src_bytes(L), x ? x->nbytes : 0);
        return QC_OP_BAD;
    }
    int64_t n = (int64_t)qcref_layout_dst_bytes(L);
    qcheck_tensor mask;
    *a = (qcheck_layout_args){.plan = L, .inverse = 0, .x = qc_view(x)};
    if (qc_op_output(c, "y", QC_ST_U8, "u8", 1, &n, &a->y) || qc_op_output(c, "y.mask", QC_ST_U8, "u8", 1, &n, &mask))
        return QC_OP_BAD;
    snprintf(qc_set_find(c->out, "y")->layout, QC_NAME_LEN, "%s", L->desc->name);
    fill_mask(L, mask.data);
    return QC_OP_OK;
}

/* y: the map's destination elements, each placed in x [batch, row, col] through the inverse map. */
static int layout_view(const qc_params *p, const char *output, qc_output_view *v)
{
    char err[256];
    qc_op_call c = {.params = p, .err = err, .errlen = sizeof err};
    memset(v, 0, sizeof *v);
    if (strcmp(output, "y") || qc_layout_from_params(&c, &v->layout))
        return 1;
    v->elem_bits = v->layout.out_bits;
    v->layout_kind = QC_VIEW_LAYOUT;
    v->axes[0] = "batch", v->axes[1] = "row", v->axes[2] = "col";
    return 0;
}

static int ref_layout(qc_op_call *c)
{
    qc_layout L;
    qcheck_layout_args a;
    int64_t bad = -1;
    int rc = parse_layout(c, &L, &a);
    if (!rc && qcref_layout_apply(&L, a.x.data, a.y.data, &bad)) {
        snprintf(c->err, c->errlen, "map %s rejects source element %lld (its value breaks the map's rule)",
                 L.desc->name, (long long)bad);
        return QC_OP_BAD;
    }
    return rc;
}

static int abi_layout(qc_op_call *c, const qcheck_backend *b)
{
    qc_layout L;
    qcheck_layout_args a;
    int rc = parse_layout(c, &L, &a);
    if (rc)
        return rc;
    qcheck_ctx ctx = qc_abi_ctx(c);
    return qc_abi_result(c, b, b->layout(&a, &ctx), &ctx);
}

const qc_op qc_op_layout = {"layout", "x u8[src bytes] -> y u8[dst bytes] + y.mask; params: map rows cols batch "
                                      "elem_bytes and the map's own",
                            ref_layout, offsetof(qcheck_backend, layout), abi_layout, NULL, layout_view};
