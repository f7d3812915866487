/* stages.c: per-stage investigation table and stage split for the golden store (stages.h). */
#include "stages.h"

#include "formats/formats.h"
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double value(const qc_tensor *t, int64_t i)
{
    switch (t->storage) {
    case QC_ST_F32: return ((const float *)t->data)[i];
    case QC_ST_F64: return ((const double *)t->data)[i];
    case QC_ST_I32: return ((const int32_t *)t->data)[i];
    case QC_ST_U8: return ((const uint8_t *)t->data)[i];
    case QC_ST_U16: { /* bf16 / f16 outputs */
        int f = qc_format_from_name(t->dtype);
        qc_cast_policy p = qcref_default_policy();
        uint16_t code = ((const uint16_t *)t->data)[i];
        return f == QC_BF16 || f == QC_F16 ? (double)qcref_decode((qc_format)f, code, &p) : (double)code;
    }
    default: return ((const uint32_t *)t->data)[i];
    }
}

/* The scale block along K of the op's recipe (0: none). */
static int64_t recipe_block(const qc_params *p)
{
    const char *r = qc_param_or(p, "recipe", qc_param_or(p, "kind", ""));
    if (strstr(r, "nvfp4"))
        return 16;
    if (strstr(r, "mx"))
        return 32;
    return strstr(r, "block") ? 128 : 0;
}

/* Largest p in {128, 64, 32, 16, 8} (p < cols) inside whose aligned column blocks the per-column
 * error mass is constant to 5% of its variance; 0 when none. */
static int64_t period(const qc_tensor *e, const qc_tensor *g, double *prof, int64_t cols)
{
    int64_t rows = cols ? qc_tensor_numel(e) / cols : 0;
    double mean = 0, total = 0;
    for (int64_t c = 0; c < cols; c++) {
        prof[c] = 0;
        for (int64_t r = 0; r < rows; r++)
            prof[c] += fabs(value(g, r * cols + c) - value(e, r * cols + c));
        mean += prof[c] / (double)cols;
    }
    for (int64_t c = 0; c < cols; c++)
        total += (prof[c] - mean) * (prof[c] - mean);
    for (int64_t p = 128; p >= 8 && total > 0; p /= 2) {
        if (p >= cols)
            continue;
        double within = 0;
        for (int64_t b0 = 0; b0 < cols; b0 += p) {
            int64_t b1 = b0 + p < cols ? b0 + p : cols;
            double m = 0;
            for (int64_t c = b0; c < b1; c++)
                m += prof[c] / (double)(b1 - b0);
            for (int64_t c = b0; c < b1; c++)
                within += (prof[c] - m) * (prof[c] - m);
        }
        if (within <= 0.05 * total)
            return p;
    }
    return 0;
}

static void blocks_touched(const double *prof, int64_t cols, int64_t p, char *out, size_t len)
{
    size_t at = 0;
    int shown = 0;
    out[0] = '\0';
    for (int64_t b = 0; b * p < cols && at < len; b++) {
        if (prof[b * p] == 0)
            continue;
        if (shown++ == 8) {
            snprintf(out + at, len - at, " ...");
            return;
        }
        at += (size_t)snprintf(out + at, len - at, "%s%lld", shown > 1 ? "," : "", (long long)b);
    }
}

/* The per-column error mass prof[cols] in at most QC_PLOT_K bins (their maximum). */
static void keep_profile(const double *prof, int64_t cols, qc_plots *pl)
{
    pl->k_cols = cols;
    pl->k_bins = (int)(cols < QC_PLOT_K ? cols : QC_PLOT_K);
    for (int b = 0; b < pl->k_bins; b++)
        pl->along_k[b] = 0;
    for (int64_t c = 0; c < cols; c++) {
        int b = (int)(c * pl->k_bins / cols);
        pl->along_k[b] = (float)prof[c] > pl->along_k[b] ? (float)prof[c] : pl->along_k[b];
    }
}

static void row(const qc_params *p, const qc_tensor *e, const qc_tensor *g, const qc_tensor *bound,
                const qc_tensor *ids, int *first, char *d, size_t len, qc_plots *pl)
{
    int64_t n = qc_tensor_numel(e), cols = e->ndim > 1 ? e->shape[e->ndim - 1] : n, worst = -1, bad = 0;
    double maxerr = 0, maxratio = 0;
    for (int64_t i = 0; i < n; i++) {
        double ve = value(e, i), vg = value(g, i), err = fabs(vg - ve);
        int differ = bound ? !(ve == vg || err <= value(bound, i) || (isnan(ve) && isnan(vg)))
                           : memcmp((const char *)e->data + i * (int64_t)qc_storage_size(e->storage),
                                    (const char *)g->data + i * (int64_t)qc_storage_size(e->storage),
                                    qc_storage_size(e->storage)) != 0;
        if (!differ)
            continue;
        bad++;
        if (isnan(err))
            err = INFINITY;
        if (worst < 0 || err > maxerr)
            maxerr = err, worst = i;
        if (bound && value(bound, i) > 0 && err / value(bound, i) > maxratio)
            maxratio = err / value(bound, i);
    }
    qc_appendf(d, len, "  %-22s %9lld/%-9lld", e->name, (long long)bad, (long long)n);
    if (pl && pl->nstages < QC_PLOT_STAGES) {
        qc_stage_row *sr = &pl->stages[pl->nstages++];
        snprintf(sr->name, sizeof sr->name, "%s", e->name);
        sr->bad = bad, sr->n = n, sr->maxerr = maxerr;
        if (bad && *first)
            pl->first_stage = pl->nstages - 1;
    }
    if (!bad) {
        qc_appendf(d, len, "  =\n");
        return;
    }
    int64_t r = cols ? worst / cols : 0, c = cols ? worst % cols : 0, kk = ids && ids->ndim == 2 ? ids->shape[1] : 1;
    int per_slot = ids && e->ndim == 2 && e->shape[0] == qc_tensor_numel(ids) && strcmp(e->name, "stage.route.ids");
    int64_t block = recipe_block(p);
    qc_appendf(d, len, "  max|err| %-10.4g", maxerr);
    if (bound)
        qc_appendf(d, len, " (%.3g x bound)", maxratio);
    qc_appendf(d, len, "  worst (%lld, %lld)", (long long)r, (long long)c);
    if (per_slot)
        qc_appendf(d, len, " token %lld expert %d", (long long)(r / kk), ((const int32_t *)ids->data)[r]);
    else if (ids)
        qc_appendf(d, len, " token %lld", (long long)r);
    if (block && strncmp(e->name, "stage.", 6) == 0) /* a stage's last dim is the K of the next GEMM */
        qc_appendf(d, len, " block %lld", (long long)(c / block));
    if (*first && e->ndim >= 2 && cols >= 16) {
        double *prof = malloc((size_t)cols * sizeof *prof);
        int64_t per = prof ? period(e, g, prof, cols) : 0;
        if (prof && pl)
            keep_profile(prof, cols, pl);
        char touched[96] = "";
        if (per)
            blocks_touched(prof, cols, per, touched, sizeof touched);
        if (per)
            qc_appendf(d, len, "  <- first divergence; error block-constant along K in blocks of %lld (blocks %s)",
                       (long long)per, touched);
        else
            qc_appendf(d, len, "  <- first divergence; error not block-structured along K");
        free(prof);
    } else if (*first)
        qc_appendf(d, len, "  <- first divergence");
    *first = 0;
    qc_appendf(d, len, "\n");
}

void qc_stage_report(const qc_params *p, const qc_tensor_set *expected, const qc_tensor_set *got, char *d, size_t len,
                     qc_plots *pl)
{
    int any = 0, first = 1;
    if (pl)
        pl->nstages = 0, pl->first_stage = -1;
    for (int i = 0; i < expected->n; i++)
        any |= strncmp(expected->t[i].name, "stage.", 6) == 0;
    if (!any)
        return;
    const qc_tensor *ids = qc_set_find((qc_tensor_set *)expected, "stage.route.ids");
    qc_appendf(d, len, "  stage table (reference order; '=' agrees):\n");
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < expected->n; i++) {
            const qc_tensor *e = &expected->t[i];
            int is_stage = strncmp(e->name, "stage.", 6) == 0;
            size_t nl = strlen(e->name);
            if ((pass == 0) != is_stage || (nl > 6 && strcmp(e->name + nl - 6, ".bound") == 0) ||
                (nl > 5 && strcmp(e->name + nl - 5, ".mask") == 0))
                continue;
            const qc_tensor *g = qc_set_find((qc_tensor_set *)got, e->name);
            if (!g || g->storage != e->storage || qc_tensor_numel(g) != qc_tensor_numel(e)) {
                qc_appendf(d, len, "  %-22s missing or of another shape in the backend's outputs\n", e->name);
                continue;
            }
            char bn[QC_NAME_LEN + 8];
            snprintf(bn, sizeof bn, "%s.bound", e->name);
            row(p, e, g, qc_set_find((qc_tensor_set *)expected, bn), ids, &first, d, len, pl);
        }
}

int qc_stage_split(const qc_tensor_set *src, const char *prefix, qc_tensor_set *plain, qc_tensor_set *stages,
                   char (*names)[QC_NAME_LEN], int max)
{
    int ns = 0;
    memset(plain, 0, sizeof *plain);
    for (int i = 0; i < src->n; i++) {
        const qc_tensor *t = &src->t[i];
        const char *dot = strncmp(t->name, "stage.", 6) == 0 ? strchr(t->name + 6, '.') : NULL;
        if (!dot) {
            if (plain->n < QC_MAX_TENSORS)
                plain->t[plain->n++] = *t;
            continue;
        }
        char stage[QC_NAME_LEN];
        snprintf(stage, sizeof stage, "%s%.*s", prefix ? prefix : "", (int)(dot - t->name - 6), t->name + 6);
        int s = 0;
        while (s < ns && strcmp(names[s], stage))
            s++;
        if (s == ns) {
            if (ns == max)
                continue;
            memset(&stages[ns], 0, sizeof stages[ns]);
            snprintf(names[ns++], QC_NAME_LEN, "%s", stage);
        }
        if (stages[s].n < QC_MAX_TENSORS) {
            stages[s].t[stages[s].n] = *t;
            snprintf(stages[s].t[stages[s].n++].name, QC_NAME_LEN, "%s", dot + 1);
        }
    }
    return ns;
}
