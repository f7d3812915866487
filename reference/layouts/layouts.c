/* layouts.c: the table of layout maps and the parameter handling every map shares.
 * One row per map; the maps themselves live in one file per family (layouts.h). */
#include "layouts.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../qc_checked.h"

static const qc_layout_desc *const table[] = {
    &qcref_layout_sf128x4,
    &qcref_layout_sf8x4,
    &qcref_layout_block_scale_interleave,
    &qcref_layout_trtllm_shuffle_a,
    &qcref_layout_trtllm_shuffle_sf_a,
    &qcref_layout_gated_reorder,
    &qcref_layout_trtllm_gated_w13,
    &qcref_layout_block_major_k,
    &qcref_layout_deepgemm_mn_major,
    &qcref_layout_deepgemm_packed_ue8m0,
    &qcref_layout_deepgemm_sf_transform,
    &qcref_layout_aiter_shuffle_weight,
    &qcref_layout_aiter_shuffle_weight_gu,
    &qcref_layout_aiter_shuffle_scale,
    &qcref_layout_aiter_shuffle_scale_gu,
    &qcref_layout_triton_blackwell_scale,
    &qcref_layout_triton_blackwell_act_scale,
    &qcref_layout_triton_hopper_mx_scale,
    &qcref_layout_w13_swap,
    &qcref_layout_w13_swap_pairs,
    &qcref_layout_w13_interleave,
    &qcref_layout_w13_pad,
    &qcref_layout_pad_nvfp4_weight,
    &qcref_layout_amx_vnni2,
    &qcref_layout_amx_vnni4,
    &qcref_layout_amx_u4,
    &qcref_layout_amx_mxfp4_scale,
    &qcref_layout_marlin_fp8_weight,
    &qcref_layout_marlin_nvfp4_weight,
    &qcref_layout_marlin_scale,
    &qcref_layout_marlin_nvfp4_scale,
};

int qcref_layout_count(void) { return (int)(sizeof table / sizeof table[0]); }

const qc_layout_desc *qcref_layout_at(int i) { return i >= 0 && i < qcref_layout_count() ? table[i] : NULL; }

const qc_layout_desc *qcref_layout_find(const char *name)
{
    for (int i = 0; i < qcref_layout_count(); i++)
        if (strcmp(table[i]->name, name) == 0)
            return table[i];
    return NULL;
}

int qcref_layout_param_index(const qc_layout_desc *d, const char *name)
{
    for (int i = 0; i < QC_LAYOUT_MAX_PARAMS && d->params[i].name; i++)
        if (strcmp(d->params[i].name, name) == 0)
            return i;
    return -1;
}

const char *qc_pad_rule_name(qc_pad_rule r)
{
    static const char *const names[] = {"zero", "const", "undefined", "none"};
    return (unsigned)r < 4 ? names[r] : "?";
}

int qc_layout_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return 2;
}

static int param_names(const qc_layout_desc *d, char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < QC_LAYOUT_MAX_PARAMS && d->params[i].name; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%s%s", i ? ", " : "", d->params[i].name);
    }
    if (!buf[0])
        snprintf(buf, n, "none");
    return 0;
}

int qc_layout_set_dst(qc_layout *L, int64_t rows, int64_t cols, char *err, size_t errlen)
{
    int overflow = 0;
    int64_t n = qc_ck_mul(rows, cols, &overflow);
    if (overflow || n > QC_MAX_ELEMS)
        return qc_layout_fail(err, errlen, "%s: the destination grid %lld x %lld has more than 2^40 elements",
                              L->desc->name, (long long)rows, (long long)cols);
    L->dst_elems = n;
    return 0;
}

/* Sizes from a command line or a case file are bounded before any plan computes with them: the
 * source and each parameter at most QC_MAX_ELEMS (2^40) in magnitude, so that the plans' sums
 * and paddings cannot overflow, and their products go through qc_layout_set_dst. */
static int check_sizes(const qc_layout *L, char *err, size_t errlen)
{
    int overflow = 0;
    int64_t n = qc_ck_mul(qc_ck_mul(L->B, L->R, &overflow), L->C, &overflow);
    if (overflow || n > QC_MAX_ELEMS)
        return qc_layout_fail(err, errlen, "%s: batch x rows x cols = %lld x %lld x %lld is more than 2^40 elements",
                              L->desc->name, (long long)L->B, (long long)L->R, (long long)L->C);
    for (int i = 0; i < QC_LAYOUT_MAX_PARAMS && L->desc->params[i].name; i++)
        if (L->p[i] > QC_MAX_ELEMS || L->p[i] < -QC_MAX_ELEMS)
            return qc_layout_fail(err, errlen, "%s: parameter %s=%lld is outside [-2^40, 2^40]", L->desc->name,
                                  L->desc->params[i].name, (long long)L->p[i]);
    return 0;
}

/* The checks every map shares; the map's plan() adds its own contract (spec section cited there). */
int qcref_layout_plan(qc_layout *L, const qc_layout_desc *d, int64_t B, int64_t R, int64_t C, int elem_bytes,
                      const char *const *keys, const int64_t *vals, int nkv, char *err, size_t errlen)
{
    memset(L, 0, sizeof *L);
    L->desc = d;
    L->B = B, L->R = R, L->C = C;
    if (B < 1 || R < 1 || C < 1)
        return qc_layout_fail(err, errlen, "%s: batch, rows and cols must be >= 1 (got B=%lld R=%lld C=%lld)",
                              d->name, (long long)B, (long long)R, (long long)C);
    if (elem_bytes < 0 || elem_bytes > 64)
        return qc_layout_fail(err, errlen, "%s: --elem-bytes %d out of range 1..64", d->name, elem_bytes);
    for (int i = 0; i < QC_LAYOUT_MAX_PARAMS && d->params[i].name; i++)
        L->p[i] = d->params[i].def;
    for (int k = 0; k < nkv; k++) {
        int i = qcref_layout_param_index(d, keys[k]);
        if (i < 0) {
            char known[256];
            param_names(d, known, sizeof known);
            return qc_layout_fail(err, errlen, "%s: unknown parameter '%s' (known: %s)", d->name, keys[k], known);
        }
        L->p[i] = vals[k];
    }
    L->in_bits = L->out_bits = 8 * (elem_bytes ? elem_bytes : 1);
    L->pad = QC_PAD_ZERO;
    L->elem_bytes = elem_bytes;
    int overflow = 0;
    int rc = check_sizes(L, err, errlen) || d->plan(L, err, errlen);
    if (rc)
        return 2;
    if (qc_ck_mul(L->B, L->dst_elems, &overflow) > QC_MAX_ELEMS || overflow)
        return qc_layout_fail(err, errlen, "%s: the destination of %lld batches of %lld elements has more than 2^40",
                              d->name, (long long)L->B, (long long)L->dst_elems);
    if ((L->in_bits == 4 && (L->C % 2)) || (L->out_bits == 4 && (L->dst_elems % 2)))
        return qc_layout_fail(err, errlen, "%s: 4-bit elements need an even number per row (cols=%lld)", d->name,
                              (long long)C);
    return 0;
}

int qc_layout_elem(qc_layout *L, const int *allowed, char *err, size_t errlen)
{
    int eb = L->elem_bytes ? L->elem_bytes : allowed[0];
    char list[64] = "";
    for (int i = 0; allowed[i]; i++) {
        if (allowed[i] == eb) {
            L->in_bits = L->out_bits = 8 * eb;
            return 0;
        }
        size_t n = strlen(list);
        snprintf(list + n, sizeof list - n, "%s%d", i ? " or " : "", allowed[i]);
    }
    return qc_layout_fail(err, errlen, "%s: --elem-bytes %d not supported (the map takes %s-byte elements)",
                          L->desc->name, eb, list);
}
