/* compare.c: bit-exact comparison with mismatch classes. One place for every rule of what a
 * difference means; each class says why it is its own class. */
#include "compare.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "formats/formats.h"
#include "recipes/recipes.h"
#include "registry.h"

static const char *const class_names[QC_MM_COUNT] = {
    "tie_flip",    "one_ulp",     "saturation", "nan_policy",    "zero_sign",    "nibble_swap",
    "wrong_block", "misplaced",   "padding",    "scale_coupled", "out_of_bound", "other"};

const char *qc_mismatch_class_name(qc_mismatch_class c) { return (unsigned)c < QC_MM_COUNT ? class_names[c] : "?"; }

/* A misplaced value is looked for this many elements either side: a 128x4 tile of scale bytes
 * (512, docs/spec/layouts.md) is the widest permutation a layout bug stays inside. */
#define MISPLACED_WINDOW 512

/* One output as the comparator reads it: n elements of `bits` bits holding values of format fmt
 * (-1: raw integers, which have no neighbouring codes). */
typedef struct elems {
    const uint8_t *data;
    int64_t n;
    int bits;
    int fmt;
    qc_storage storage;
    qc_cast_policy pol;
} elems;

static int storage_bits(const qc_tensor *t) { return (int)qc_storage_size(t->storage) * 8; }

int64_t qc_compare_elements(const qc_tensor *t, const qc_output_view *v)
{
    int bits = v && v->elem_bits ? v->elem_bits : storage_bits(t);
    return qc_tensor_numel(t) * storage_bits(t) / bits;
}

static elems elems_of(const qc_tensor *t, const qc_output_view *v, const qc_params *p)
{
    elems el = {t->data, qc_compare_elements(t, v), v && v->elem_bits ? v->elem_bits : storage_bits(t), -1,
                t->storage, qcref_default_policy()};
    el.fmt = qc_format_from_name(v && v->dtype[0] ? v->dtype : t->dtype);
    if (el.fmt < 0 && t->storage == QC_ST_F32 && !(v && v->elem_bits))
        el.fmt = QC_F32; /* f32 storage holds floats whatever the dtype's name */
    char err[8];
    if (el.fmt >= 0 && qc_params_policy(p, (qc_format)el.fmt, &el.pol, err, sizeof err))
        el.pol = qcref_default_policy();
    return el;
}

/* Element i: a nibble (element 2k in the low half of byte k, formats.md §3.3) or a little-endian word. */
static uint64_t element(const elems *el, int64_t i)
{
    if (el->bits == 4)
        return (el->data[i / 2] >> (4 * (i & 1))) & 0xF;
    uint64_t v = 0;
    memcpy(&v, el->data + i * (el->bits / 8), (size_t)el->bits / 8); /* little-endian hosts only (CMakeLists) */
    return v;
}

/* The value a stored element means, for the report and the classes. */
static double decoded(const elems *el, uint64_t bits)
{
    if (el->fmt == QC_F32)
        return (double)qc_f32_from_bits((uint32_t)bits);
    if (el->fmt >= 0)
        return (double)qcref_decode((qc_format)el->fmt, (uint32_t)bits, &el->pol);
    if (el->storage == QC_ST_F64) {
        double d;
        memcpy(&d, &bits, 8);
        return d;
    }
    return el->storage == QC_ST_I32 ? (double)(int32_t)bits : (double)bits;
}

/* The largest finite value of the format (NaN for raw integers). */
static double max_finite(const elems *el)
{
    if (el->fmt == QC_F32)
        return FLT_MAX;
    if (el->fmt == QC_E8M0)
        return qcref_e8m0_decode(0xFE, el->pol.e8m0_decoder);
    if (el->fmt >= 0 && qcref_is_minifloat((qc_format)el->fmt))
        return qcref_decode((qc_format)el->fmt, qcref_max_magnitude(qcref_minifloat((qc_format)el->fmt)), &el->pol);
    return NAN;
}

/* Neighbouring codes of one format: for sign-magnitude formats the magnitudes (the code without
 * the sign bit) differ by one; e8m0 is unsigned (one exponent step). Raw bytes have no neighbours. */
static int adjacent(const elems *el, uint64_t a, uint64_t b)
{
    if (el->fmt < 0)
        return 0;
    if (el->fmt == QC_E8M0)
        return (a > b ? a - b : b - a) == 1;
    uint64_t sign = 1ull << (qcref_format_bits((qc_format)el->fmt) - 1);
    if ((a & sign) != (b & sign))
        return 0;
    uint64_t ma = a & (sign - 1), mb = b & (sign - 1);
    return (ma > mb ? ma - mb : mb - ma) == 1;
}

static int positional(const qc_output_view *v) { return v && v->layout_kind != QC_VIEW_ROW_MAJOR; }

/* The nearest j != i that holds (in expected) the value got has at i and is itself wrong in got;
 * a position that got[i]'s own value came from when two elements were exchanged first. -1: none. */
static int64_t belongs_at(const elems *e, const elems *g, int64_t i)
{
    uint64_t want = element(g, i), mine = element(e, i);
    for (int exchange = 1; exchange >= 0; exchange--)
        for (int64_t d = 1; d <= MISPLACED_WINDOW; d++)
            for (int side = -1; side <= 1; side += 2) {
                int64_t j = i + side * d;
                if (j < 0 || j >= e->n || element(e, j) != want || element(g, j) == element(e, j))
                    continue;
                if (!exchange || element(g, j) == mine)
                    return j;
            }
    return -1;
}

/* The class of the difference at i; *at: where got's value belongs (wrong_block, misplaced). */
static qc_mismatch_class classify(const qc_compare_spec *spec, const qc_tensor_set *in, const qc_output_view *v,
                                  const elems *e, const elems *g, int64_t i, int64_t block, int64_t cols,
                                  int64_t *at)
{
    uint64_t be = element(e, i), bg = element(g, i);
    double ve = decoded(e, be), vg = decoded(g, bg), top = max_finite(e);
    *at = -1;
    if ((fabs(ve) == top && (isnan(vg) || isinf(vg))) || (fabs(vg) == top && (isnan(ve) || isinf(ve))))
        return QC_MM_SATURATION;
    if (isnan(ve) || isnan(vg))
        return QC_MM_NAN_POLICY;
    if (ve == 0 && vg == 0)
        return QC_MM_ZERO_SIGN;
    int64_t k = i ^ 1; /* the other nibble of the byte */
    if (e->bits == 4 && k < e->n && element(e, k) == bg && element(g, k) == be)
        return QC_MM_NIBBLE_SWAP;
    if (adjacent(e, be, bg)) {
        const qc_tensor *x = spec->midpoint_input[0] ? qc_set_find((qc_tensor_set *)in, spec->midpoint_input) : NULL;
        if (x && x->storage == QC_ST_F32 && qc_tensor_numel(x) == e->n &&
            fabs((double)((const float *)x->data)[i]) == (fabs(ve) + fabs(vg)) / 2)
            return QC_MM_TIE_FLIP;
        return QC_MM_ONE_ULP;
    }
    if (block > 0 && cols > 0) {
        int64_t c = i % cols;
        for (int dir = -1; dir <= 1; dir += 2) {
            int64_t j = c + dir * block;
            if (j >= 0 && j < cols && element(e, i - c + j) == bg) {
                *at = i - c + j;
                return QC_MM_WRONG_BLOCK;
            }
        }
    }
    if (positional(v) && (*at = belongs_at(e, g, i)) >= 0)
        return QC_MM_MISPLACED;
    return QC_MM_OTHER;
}

/* Where element i sits: "(row 3, col 17) block 1" in the view's terms, else the tensor's
 * "(b, r, c) block k". */
/* The logical (batch, row, col) of element i under view v (row-major when v is NULL: the last
 * dimension is col, the one before it row, the rest batch); a note for padding and derived ones. */
static const char *logical_of(const qc_tensor *t, const qc_output_view *v, int64_t i, int64_t *b, int64_t *r,
                              int64_t *c)
{
    const char *note = "";
    *b = *r = *c = 0;
    if (!v) {
        int64_t cols = t->ndim ? t->shape[t->ndim - 1] : 1, rows = t->ndim > 1 ? t->shape[t->ndim - 2] : 1;
        cols = cols ? cols : 1, rows = rows ? rows : 1;
        *c = i % cols, *r = i / cols % rows, *b = i / cols / rows;
    } else if (v->layout_kind == QC_VIEW_LAYOUT) {
        const qc_layout *L = &v->layout;
        int64_t per = L->dst_elems ? L->dst_elems : 1, o = i % per, g;
        *b = i / per;
        if (L->desc->inv(L, o, &g, c))
            note = " (a derived element)", *r = g;
        else if ((*r = qcref_layout_row_src(L, g)) < 0 || *c >= L->C)
            note = " (padding)", *r = g;
    } else if (v->layout_kind == QC_VIEW_SCALE_LAYOUT) {
        size_t ri = 0, ci = 0;
        if (qc_scale_layout_locate((qc_scale_layout)v->scale_layout, (size_t)v->rows, (size_t)v->cols,
                                   (size_t)i * (size_t)v->elem_bits / 8, &ri, &ci))
            note = " (padding)";
        *r = (int64_t)ri, *c = (int64_t)ci;
    } else {
        int64_t per = v->rows > 0 && v->cols > 0 ? v->rows * v->cols : 1;
        *b = i / per, *r = i % per / (v->cols ? v->cols : 1), *c = v->cols ? i % v->cols : 0;
    }
    return note;
}

static void coordinates(const qc_tensor *t, const qc_output_view *v, int64_t i, int64_t block, char *out,
                        size_t len)
{
    int64_t idx[QC_MAX_DIMS], nd = 0, rest = i;
    const char *const *axes = NULL;
    const char *note = "";
    if (!v) {
        nd = t->ndim;
        for (int64_t d = nd - 1; d >= 0; d--) {
            idx[d] = t->shape[d] ? rest % t->shape[d] : 0;
            rest = t->shape[d] ? rest / t->shape[d] : 0;
        }
    } else {
        int64_t r, c, b;
        note = logical_of(t, v, i, &b, &r, &c);
        axes = v->axes;
        if (axes[2])
            idx[nd++] = b;
        idx[nd++] = r, idx[nd++] = c;
        block = v->block;
    }
    size_t at = (size_t)snprintf(out, len, "(");
    for (int64_t d = 0; d < nd && at < len; d++)
        at += (size_t)snprintf(out + at, len - at, "%s%s%s%lld", d ? ", " : "", axes ? axes[d] : "",
                               axes ? " " : "", (long long)idx[d]);
    if (at < len)
        at += (size_t)snprintf(out + at, len - at, ")%s", note);
    if (block > 0 && nd > 0 && at < len)
        snprintf(out + at, len - at, " block %lld", (long long)(idx[nd - 1] / block));
}

static int is_degenerate(const elems *e)
{
    if (e->n < 8)
        return 0;
    for (int64_t i = 1; i < e->n; i++)
        if (element(e, i) != element(e, 0))
            return 0;
    return 1;
}

/* Rule bound: the values (not the bits) within the reference's per-element bound; NaN must
 * meet NaN. The bound comes from the op's error analysis (docs/DESIGN.md "Comparison rules"). */
static void ratio_add(qc_ratio_hist *h, double err, double bound);

/* Where round to nearest starts to give Inf: the largest finite value plus half its ulp (IEEE 754
 * section 4.3.1; docs/spec/formats.md for the minifloats with an Inf); Inf for a format without one. */
static double overflow_threshold(const elems *el)
{
    if (el->fmt == QC_F32)
        return (double)FLT_MAX + ((double)FLT_MAX - (double)nextafterf(FLT_MAX, 0)) / 2;
    if (el->fmt < 0 || !qcref_is_minifloat((qc_format)el->fmt))
        return INFINITY;
    uint32_t top = qcref_max_magnitude(qcref_minifloat((qc_format)el->fmt));
    double m = decoded(el, top), below = decoded(el, top - 1);
    return m + (m - below) / 2;
}

static int within_bound(const elems *e, const elems *g, const qc_tensor *bound, int64_t i, qc_mismatch_class *c,
                        double *tightness, qc_ratio_hist *hist)
{
    double ve = decoded(e, element(e, i)), vg = decoded(g, element(g, i));
    double b = bound->storage == QC_ST_F64 ? ((const double *)bound->data)[i] : ((const float *)bound->data)[i];
    ratio_add(hist, ve == vg ? 0 : fabs(vg - ve), b);
    if (isnan(ve) || isnan(vg)) {
        *c = QC_MM_NAN_POLICY;
        return isnan(ve) && isnan(vg);
    }
    *c = QC_MM_OUT_OF_BOUND;
    if (vg == ve) /* equal values meet (+-Inf included) */
        return 1;
    if (isinf(ve) || isinf(vg)) { /* Inf is where RNE overflows: right only when the bound reaches there */
        double t = overflow_threshold(e);
        ve = isinf(ve) ? copysign(t, ve) : ve;
        vg = isinf(vg) ? copysign(t, vg) : vg;
    }
    double r = b > 0 ? fabs(vg - ve) / b : INFINITY;
    *tightness = r > *tightness ? r : *tightness;
    return fabs(vg - ve) <= b;
}

static void report(const qc_compare_spec *spec, const qc_output_view *v, const qc_tensor *t, const elems *e,
                   const elems *g, int64_t i, int64_t at, int64_t block, qc_mismatch_class c, int allowed,
                   const qc_tensor *bound, char *detail, size_t len)
{
    char where[128];
    int hexw = e->bits / 4;
    uint64_t be = element(e, i), bg = element(g, i);
    coordinates(t, v, i, block, where, sizeof where);
    qc_appendf(detail, len, "  %s %s: expected 0x%0*llX (%.9g) got 0x%0*llX (%.9g)  [%s%s]", spec->output, where, hexw,
               (unsigned long long)be, decoded(e, be), hexw, (unsigned long long)bg, decoded(g, bg), class_names[c],
               allowed ? ", within budget" : "");
    if (at >= 0) {
        coordinates(t, v, at, block, where, sizeof where);
        qc_appendf(detail, len, " the value belongs at %s", where);
    }
    if (bound)
        qc_appendf(detail, len, " |err| %.3g > bound %.3g", fabs(decoded(g, bg) - decoded(e, be)),
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

/* The role (QC_MASK_*) of element i: the mask holds one per stored element. */
static int role_of(const uint8_t *roles, const elems *e, const qc_tensor *t, int64_t i)
{
    return roles ? roles[i * e->bits / storage_bits(t)] : QC_MASK_DATA;
}

/* The grid of the mismatch map: the view's [rows, cols] (batches stacked as rows), or the
 * tensor's last two dimensions; cols counted in blocks when there are blocks. */
static void map_init(qc_mismatch_map *m, const char *output, const qc_tensor *t, const qc_output_view *v,
                     int64_t block)
{
    int64_t n = qc_tensor_numel(t), cols = v && v->cols ? v->cols : t->ndim ? t->shape[t->ndim - 1] : 1;
    int64_t rows = v && v->rows ? v->rows : t->ndim > 1 ? t->shape[t->ndim - 2] : 1;
    if (v && v->layout_kind == QC_VIEW_LAYOUT)
        rows = v->layout.R, cols = v->layout.C;
    cols = cols > 0 ? cols : 1, rows = rows > 0 ? rows : 1;
    int64_t batches = v && v->layout_kind == QC_VIEW_LAYOUT ? v->layout.B : n / (rows * cols);
    memset(m, 0, sizeof *m);
    snprintf(m->output, sizeof m->output, "%s", output);
    m->block = block > 1 ? block : 1;
    m->per_batch = rows;
    m->rows = rows * (batches > 1 ? batches : 1), m->cols = (cols + m->block - 1) / m->block;
    m->brows = (int)(m->rows < QC_HEAT_ROWS ? m->rows : QC_HEAT_ROWS);
    m->bcols = (int)(m->cols < QC_HEAT_COLS ? m->cols : QC_HEAT_COLS);
}

static void map_add(qc_mismatch_map *m, const qc_tensor *t, const qc_output_view *v, int64_t i)
{
    int64_t b, r, c;
    logical_of(t, v, i, &b, &r, &c);
    m->mismatches++;
    int64_t row = b * m->per_batch + r, col = c / m->block;
    if (row < 0 || row >= m->rows || col < 0 || col >= m->cols)
        return; /* padding outside the logical grid */
    m->count[(row * m->brows / m->rows) * QC_HEAT_COLS + col * m->bcols / m->cols]++;
}

static void ratio_add(qc_ratio_hist *h, double err, double bound)
{
    if (err == 0) {
        h->zero++;
        return;
    }
    double r = bound > 0 ? err / bound : INFINITY;
    int k = r > 0 ? (int)floor(2 * (log10(r) + 6)) : 0;
    h->bins[k < 0 ? 0 : k >= QC_RATIO_BINS ? QC_RATIO_BINS - 1 : k]++;
}

static int f32_nan(uint64_t b) { return (b & 0x7FFFFFFFu) > 0x7F800000u; }

/* "f32[24, 256]": a tensor's storage and every dimension (a mismatch of the dims alone shows) */
static const char *shape_name(const qc_tensor *t, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "%s[", qc_storage_name(t->storage));
    for (int d = 0; d < t->ndim && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
    if (n < len)
        snprintf(buf + n, len - n, "]");
    return buf;
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
        char want[160], have[160];
        qc_appendf(detail, detail_len, "output %s: shape/storage mismatch: expected %s, got %s\n", spec->output,
                   shape_name(expected, want, sizeof want), shape_name(got, have, sizeof have));
        out->mismatches = -1;
        return -1;
    }
    const qc_tensor *mask = x->mask, *bound = !strcmp(spec->rule, "bound") ? x->bound : NULL;
    const qc_output_view *v = bound ? NULL : x->view; /* a bound is per stored element */
    elems e = elems_of(expected, v, p), g = elems_of(got, v, p);
    int64_t block = 0, cols = v && v->cols ? v->cols : expected->ndim ? expected->shape[expected->ndim - 1] : 0;
    char err[256];
    if (spec->block[0] && qc_eval(spec->block, p, &block, err, sizeof err))
        block = 0;
    if (v)
        block = v->block;
    out->n = e.n;
    out->degenerate = !spec->degenerate_ok && is_degenerate(&e);
    if (mask && (mask->storage != QC_ST_U8 || qc_tensor_numel(mask) != qc_tensor_numel(expected)))
        mask = NULL;
    if (!strcmp(spec->rule, "bound") && (!bound || qc_tensor_numel(bound) != out->n)) {
        qc_appendf(detail, detail_len, "  %s: rule bound but the reference gives no %s.bound\n", spec->output,
                   spec->output);
        out->mismatches = -1;
        return -1;
    }
    const uint8_t *roles = mask ? mask->data : NULL;
    out->has_bound = bound != NULL;
    map_init(&out->map, spec->output, expected, v, block);
    snprintf(out->ratio.output, sizeof out->ratio.output, "%s", spec->output);
    int64_t shown = 0, budgeted = 0;
    int has_budget = !strcmp(spec->rule, "budget") && spec->budget_class >= 0;
    for (int64_t i = 0; i < out->n; i++) {
        int role = role_of(roles, &e, expected, i);
        if (role == QC_MASK_UNDEFINED) {
            out->skipped++;
            continue;
        }
        qc_mismatch_class c;
        int64_t at = -1;
        if (bound) {
            if (within_bound(&e, &g, bound, i, &c, &out->tightness, &out->ratio))
                continue;
        } else {
            if (element(&e, i) == element(&g, i))
                continue;
            if (expected->nan_any && e.storage == QC_ST_F32 && f32_nan(element(&e, i)) && f32_nan(element(&g, i))) {
                out->nan_matched++;
                continue;
            }
            c = role == QC_MASK_PADDING ? QC_MM_PADDING : classify(spec, inputs, v, &e, &g, i, block, cols, &at);
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
        if (!allowed)
            map_add(&out->map, expected, v, i);
        if (allowed)
            out->allowed++;
        else
            out->mismatches++;
        if (shown++ < show)
            report(spec, v, expected, &e, &g, i, at, block, c, allowed, bound, detail, detail_len);
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
