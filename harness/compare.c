/* compare.c: bit-exact comparison with mismatch classes. One place for every rule of what a
 * difference means; each class says why it is its own class. */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "formats/formats.h"
#include "registry.h"

static const char *const class_names[QC_MM_COUNT] = {"tie_flip", "one_ulp",       "nan_policy",   "zero_sign",
                                                     "wrong_block", "padding", "scale_coupled", "out_of_bound",
                                                     "other"};

const char *qc_mismatch_class_name(qc_mismatch_class c) { return (unsigned)c < QC_MM_COUNT ? class_names[c] : "?"; }

static uint64_t element(const qc_tensor *t, int64_t i)
{
    switch (t->storage) {
    case QC_ST_U8: return ((const uint8_t *)t->data)[i];
    case QC_ST_U16: return ((const uint16_t *)t->data)[i];
    case QC_ST_F64: return ((const uint64_t *)t->data)[i];
    default: return ((const uint32_t *)t->data)[i];
    }
}

/* The value a stored element means, for the report and the classes (NaN when unknown). */
static double decoded(const qc_tensor *t, uint64_t bits, const qc_params *p)
{
    int f = qc_format_from_name(t->dtype);
    if (t->storage == QC_ST_F64) {
        double d;
        memcpy(&d, &bits, 8);
        return d;
    }
    if (t->storage == QC_ST_I32)
        return (double)(int32_t)bits;
    if (f < 0)
        return t->storage == QC_ST_F32 ? (double)qc_f32_from_bits((uint32_t)bits) : (double)bits;
    qc_cast_policy pol;
    char err[8];
    if (qc_params_policy(p, (qc_format)f, &pol, err, sizeof err))
        pol = qcref_default_policy();
    return (double)qcref_decode((qc_format)f, (uint32_t)bits, &pol);
}

/* Magnitude ordering of codes: for sign-magnitude formats the magnitude is the code without the
 * sign bit; for fp32 the bits without the sign. Adjacent codes differ by one there. */
static int adjacent(const qc_tensor *t, uint64_t a, uint64_t b)
{
    int f = qc_format_from_name(t->dtype);
    int bits = f >= 0 ? qcref_format_bits((qc_format)f) : (int)qc_storage_size(t->storage) * 8;
    if (f == QC_E8M0)
        return (a > b ? a - b : b - a) == 1; /* e8m0 is unsigned: one exponent step */
    uint64_t sign = 1ull << (bits - 1);
    if ((a & sign) != (b & sign))
        return 0;
    uint64_t ma = a & (sign - 1), mb = b & (sign - 1);
    return (ma > mb ? ma - mb : mb - ma) == 1;
}

static qc_mismatch_class classify(const qc_compare_spec *spec, const qc_params *p, const qc_tensor_set *in,
                                  const qc_tensor *e, const qc_tensor *g, int64_t i, int64_t block, int64_t cols)
{
    uint64_t be = element(e, i), bg = element(g, i);
    double ve = decoded(e, be, p), vg = decoded(g, bg, p);
    if (isnan(ve) || isnan(vg))
        return QC_MM_NAN_POLICY;
    if (ve == 0 && vg == 0)
        return QC_MM_ZERO_SIGN;
    if (adjacent(e, be, bg)) {
        const qc_tensor *x = spec->midpoint_input[0] ? qc_set_find((qc_tensor_set *)in, spec->midpoint_input) : NULL;
        if (x && x->storage == QC_ST_F32 && qc_tensor_numel(x) == qc_tensor_numel(e) &&
            fabs((double)((const float *)x->data)[i]) == (fabs(ve) + fabs(vg)) / 2)
            return QC_MM_TIE_FLIP;
        return QC_MM_ONE_ULP;
    }
    if (block > 0 && cols > 0) {
        int64_t c = i % cols;
        for (int dir = -1; dir <= 1; dir += 2) {
            int64_t j = c + dir * block;
            if (j >= 0 && j < cols && element(e, i - c + j) == bg)
                return QC_MM_WRONG_BLOCK;
        }
    }
    return QC_MM_OTHER;
}

/* "(b, r, c) block k" coordinates of flat index i. */
static void coordinates(const qc_tensor *t, int64_t i, int64_t block, char *out, size_t len)
{
    int64_t idx[QC_MAX_DIMS];
    int64_t rest = i;
    for (int d = t->ndim - 1; d >= 0; d--) {
        idx[d] = t->shape[d] ? rest % t->shape[d] : 0;
        rest = t->shape[d] ? rest / t->shape[d] : 0;
    }
    size_t at = (size_t)snprintf(out, len, "(");
    for (int d = 0; d < t->ndim && at < len; d++)
        at += (size_t)snprintf(out + at, len - at, "%s%lld", d ? ", " : "", (long long)idx[d]);
    if (at < len)
        at += (size_t)snprintf(out + at, len - at, ")");
    if (block > 0 && t->ndim > 0 && at < len)
        snprintf(out + at, len - at, " block %lld", (long long)(idx[t->ndim - 1] / block));
}

static int is_degenerate(const qc_tensor *e)
{
    int64_t n = qc_tensor_numel(e);
    if (n < 8)
        return 0;
    for (int64_t i = 1; i < n; i++)
        if (element(e, i) != element(e, 0))
            return 0;
    return 1;
}

/* Rule bound: the values (not the bits) within the reference's per-element bound; NaN must
 * meet NaN. The bound comes from the op's error analysis (docs/DESIGN.md "Comparison rules"). */
static int within_bound(const qc_tensor *e, const qc_tensor *g, const qc_tensor *bound, int64_t i,
                        const qc_params *p, qc_mismatch_class *c, double *tightness)
{
    double ve = decoded(e, element(e, i), p), vg = decoded(g, element(g, i), p);
    double b = bound->storage == QC_ST_F64 ? ((const double *)bound->data)[i] : ((const float *)bound->data)[i];
    if (isnan(ve) || isnan(vg)) {
        *c = QC_MM_NAN_POLICY;
        return isnan(ve) && isnan(vg);
    }
    *c = QC_MM_OUT_OF_BOUND;
    if (vg == ve) /* equal values meet (+-Inf included) */
        return 1;
    double r = b > 0 ? fabs(vg - ve) / b : INFINITY;
    *tightness = r > *tightness ? r : *tightness;
    return fabs(vg - ve) <= b;
}

static void report(const qc_compare_spec *spec, const qc_params *p, const qc_tensor *e, const qc_tensor *g,
                   int64_t i, int64_t block, qc_mismatch_class c, int allowed, const qc_tensor *bound, char *detail,
                   size_t len)
{
    char where[96];
    int hexw = (int)qc_storage_size(e->storage) * 2;
    uint64_t be = element(e, i), bg = element(g, i);
    coordinates(e, i, block, where, sizeof where);
    qc_appendf(detail, len, "  %s %s: expected 0x%0*llX (%.9g) got 0x%0*llX (%.9g)  [%s%s]", spec->output, where, hexw,
               (unsigned long long)be, decoded(e, be, p), hexw, (unsigned long long)bg, decoded(g, bg, p),
               class_names[c], allowed ? ", within budget" : "");
    if (bound)
        qc_appendf(detail, len, " |err| %.3g > bound %.3g", fabs(decoded(g, bg, p) - decoded(e, be, p)),
                   bound->storage == QC_ST_F64 ? ((const double *)bound->data)[i]
                                               : (double)((const float *)bound->data)[i]);
    qc_appendf(detail, len, "\n");
}

/* The scale that element i of an [rows, cols] output uses, for a block length along cols. */
static int64_t scale_of(int64_t i, int64_t cols, int64_t block, int64_t nscales, int64_t n)
{
    int64_t rows = cols ? n / cols : 0, per_row = rows ? nscales / rows : 0;
    return per_row ? (i / cols) * per_row + (i % cols) / block : -1;
}

int qc_compare(const qc_compare_spec *spec, const qc_params *p, const qc_tensor_set *inputs,
               const qc_tensor *expected, const qc_tensor *got, const qc_compare_extra *x, int show,
               qc_compare_out *out, char *detail, size_t detail_len)
{
    static const qc_compare_extra none = {0};
    x = x ? x : &none;
    memset(out, 0, sizeof *out);
    if (strcmp(got->dtype, expected->dtype)) { /* the same bytes mean another value: not comparable */
        qc_appendf(detail, detail_len, "output %s: dtype mismatch: expected %.47s, got %.47s\n", spec->output,
                   expected->dtype, got->dtype);
        out->mismatches = -1;
        return -1;
    }
    if (got->storage != expected->storage || got->ndim != expected->ndim ||
        qc_tensor_numel(got) != qc_tensor_numel(expected)) {
        qc_appendf(detail, detail_len, "output %s: shape/storage mismatch: expected %s[%lld], got %s[%lld]\n",
                   spec->output, qc_storage_name(expected->storage), (long long)qc_tensor_numel(expected),
                   qc_storage_name(got->storage), (long long)qc_tensor_numel(got));
        out->mismatches = -1;
        return -1;
    }
    int64_t block = 0, cols = expected->ndim ? expected->shape[expected->ndim - 1] : 0;
    char err[256];
    if (spec->block[0] && qc_eval(spec->block, p, &block, err, sizeof err))
        block = 0;
    out->n = qc_tensor_numel(expected);
    out->degenerate = !spec->degenerate_ok && is_degenerate(expected);
    const qc_tensor *mask = x->mask, *bound = !strcmp(spec->rule, "bound") ? x->bound : NULL;
    if (mask && (mask->storage != QC_ST_U8 || qc_tensor_numel(mask) != out->n))
        mask = NULL;
    if (!strcmp(spec->rule, "bound") && (!bound || qc_tensor_numel(bound) != out->n)) {
        qc_appendf(detail, detail_len, "  %s: rule bound but the reference gives no %s.bound\n", spec->output,
                   spec->output);
        out->mismatches = -1;
        return -1;
    }
    const uint8_t *roles = mask ? mask->data : NULL;
    out->has_bound = bound != NULL;
    int64_t shown = 0, budgeted = 0;
    int has_budget = !strcmp(spec->rule, "budget") && spec->budget_class >= 0;
    for (int64_t i = 0; i < out->n; i++) {
        if (roles && roles[i] == QC_MASK_UNDEFINED) {
            out->skipped++;
            continue;
        }
        qc_mismatch_class c;
        if (bound) {
            if (within_bound(expected, got, bound, i, p, &c, &out->tightness))
                continue;
        } else {
            if (element(expected, i) == element(got, i))
                continue;
            c = roles && roles[i] == QC_MASK_PADDING ? QC_MM_PADDING
                                                     : classify(spec, p, inputs, expected, got, i, block, cols);
        }
        int64_t si = x->coupled_bad && block > 0 ? scale_of(i, cols, block, x->coupled_n, out->n) : -1;
        int allowed = 0;
        if (si >= 0 && si < x->coupled_n && x->coupled_bad[si]) {
            c = QC_MM_SCALE_COUPLED;
            allowed = 1;
        } else if (has_budget && (int)c == spec->budget_class) {
            allowed = 1;
            budgeted++;
            if (x->budget_map)
                x->budget_map[i] = 1;
        }
        out->per_class[c]++;
        if (allowed)
            out->allowed++;
        else
            out->mismatches++;
        if (shown++ < show)
            report(spec, p, expected, got, i, block, c, allowed, bound, detail, detail_len);
    }
    if (has_budget && budgeted > spec->budget * (double)out->n) { /* over budget: every one of them counts */
        qc_appendf(detail, detail_len, "  %s: %lld %s differences exceed the budget of %.3g%% of %lld elements\n",
                   spec->output, (long long)budgeted, class_names[spec->budget_class], 100 * spec->budget,
                   (long long)out->n);
        out->mismatches += budgeted;
        out->allowed -= budgeted;
    }
    if (out->mismatches || out->allowed) {
        qc_appendf(detail, detail_len, "  %s: %lld of %lld elements differ (%lld within budget);", spec->output,
                   (long long)(out->mismatches + out->allowed), (long long)out->n, (long long)out->allowed);
        for (int c = 0; c < QC_MM_COUNT; c++)
            if (out->per_class[c])
                qc_appendf(detail, detail_len, " %s=%lld", class_names[c], (long long)out->per_class[c]);
        qc_appendf(detail, detail_len, "\n");
    }
    return (int)(out->mismatches > 0);
}
