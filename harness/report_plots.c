/* report_plots.c: a result's plot data (result.h qc_plots) in summary.json and back, so that
 * `qcheck report merge` carries it to the merged report and its index.html. */
#include "report_plots.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static cJSON *numbers_u32(const uint32_t *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++)
        if (!cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i])))
            return cJSON_Delete(a), NULL;
    return a;
}

static int add_map(cJSON *o, const qc_mismatch_map *m)
{
    cJSON *j = cJSON_AddObjectToObject(o, "map"), *rows = j ? cJSON_AddArrayToObject(j, "counts") : NULL;
    if (!rows || !cJSON_AddStringToObject(j, "output", m->output) || !cJSON_AddNumberToObject(j, "rows", (double)m->rows) ||
        !cJSON_AddNumberToObject(j, "cols", (double)m->cols) || !cJSON_AddNumberToObject(j, "block", (double)m->block) ||
        !cJSON_AddNumberToObject(j, "per_batch", (double)m->per_batch) ||
        !cJSON_AddNumberToObject(j, "brows", m->brows) || !cJSON_AddNumberToObject(j, "bcols", m->bcols))
        return 0;
    for (int r = 0; r < m->brows; r++)
        if (!cJSON_AddItemToArray(rows, numbers_u32(&m->count[r * QC_HEAT_COLS], m->bcols)))
            return 0;
    return 1;
}

static int add_ratio(cJSON *o, const qc_plots *p)
{
    cJSON *j = cJSON_AddObjectToObject(o, "ratio");
    return j && cJSON_AddStringToObject(j, "output", p->ratio.output) &&
           cJSON_AddNumberToObject(j, "zero", (double)p->ratio.zero) &&
           cJSON_AddNumberToObject(j, "tightness", isfinite(p->ratio_tightness) ? p->ratio_tightness : 1e300) &&
           cJSON_AddItemToObject(j, "bins", numbers_u32(p->ratio.bins, QC_RATIO_BINS));
}

static int add_stages(cJSON *o, const qc_plots *p)
{
    cJSON *a = cJSON_AddArrayToObject(o, "stages");
    for (int i = 0; a && i < p->nstages; i++) {
        cJSON *s = cJSON_CreateObject();
        if (!s || !cJSON_AddItemToArray(a, s) || !cJSON_AddStringToObject(s, "name", p->stages[i].name) ||
            !cJSON_AddNumberToObject(s, "bad", (double)p->stages[i].bad) ||
            !cJSON_AddNumberToObject(s, "n", (double)p->stages[i].n) ||
            !cJSON_AddNumberToObject(s, "maxerr", isfinite(p->stages[i].maxerr) ? p->stages[i].maxerr : 1e300))
            return 0;
    }
    if (!a || !cJSON_AddNumberToObject(o, "first_stage", p->first_stage))
        return 0;
    if (p->k_bins <= 0)
        return 1;
    cJSON *k = cJSON_AddObjectToObject(o, "along_k"), *bins = k ? cJSON_AddArrayToObject(k, "bins") : NULL;
    if (!bins || !cJSON_AddNumberToObject(k, "cols", (double)p->k_cols))
        return 0;
    for (int b = 0; b < p->k_bins; b++)
        if (!cJSON_AddItemToArray(bins, cJSON_CreateNumber(isfinite(p->along_k[b]) ? p->along_k[b] : 1e300)))
            return 0;
    return 1;
}

int qc_plots_to_json(cJSON *result, const qc_plots *p)
{
    if (!p->has_map && !p->has_ratio && !p->nstages)
        return 1;
    cJSON *o = cJSON_AddObjectToObject(result, "plots");
    return o && (!p->has_map || add_map(o, &p->map)) && (!p->has_ratio || add_ratio(o, p)) &&
           (!p->nstages || add_stages(o, p));
}

/* ---- back from summary.json: absent is fine, present must be whole and in range ---- */

static int num(const cJSON *o, const char *key, double lo, double hi, double *v)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(j) || !(j->valuedouble >= lo && j->valuedouble <= hi))
        return 0;
    *v = j->valuedouble;
    return 1;
}

static int u32s(const cJSON *a, uint32_t *out, int n)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return 0;
    int i = 0;
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        if (!cJSON_IsNumber(e) || !(e->valuedouble >= 0 && e->valuedouble <= 4294967295.0))
            return 0;
        out[i] = (uint32_t)e->valuedouble;
    }
    return 1;
}

static int str(const cJSON *o, const char *key, char *out, size_t cap)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(j) || strlen(j->valuestring) >= cap)
        return 0;
    snprintf(out, cap, "%s", j->valuestring);
    return 1;
}

static int read_map(const cJSON *j, qc_mismatch_map *m)
{
    double rows, cols, block, per, br, bc;
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(j, "counts");
    if (!str(j, "output", m->output, sizeof m->output) || !num(j, "rows", 1, 1e15, &rows) ||
        !num(j, "cols", 1, 1e15, &cols) || !num(j, "block", 1, 1e15, &block) || !num(j, "per_batch", 1, 1e15, &per) ||
        !num(j, "brows", 1, QC_HEAT_ROWS, &br) || !num(j, "bcols", 1, QC_HEAT_COLS, &bc) || !cJSON_IsArray(counts) ||
        cJSON_GetArraySize(counts) != (int)br)
        return 0;
    m->rows = (int64_t)rows, m->cols = (int64_t)cols, m->block = (int64_t)block, m->per_batch = (int64_t)per;
    m->brows = (int)br, m->bcols = (int)bc;
    int r = 0;
    for (const cJSON *row = counts->child; row; row = row->next, r++)
        if (!u32s(row, &m->count[r * QC_HEAT_COLS], m->bcols))
            return 0;
    return 1;
}

static int read_ratio(const cJSON *j, qc_plots *p)
{
    double zero;
    if (!str(j, "output", p->ratio.output, sizeof p->ratio.output) || !num(j, "zero", 0, 1e18, &zero) ||
        !num(j, "tightness", 0, INFINITY, &p->ratio_tightness) ||
        !u32s(cJSON_GetObjectItemCaseSensitive(j, "bins"), p->ratio.bins, QC_RATIO_BINS))
        return 0;
    p->ratio.zero = (int64_t)zero;
    return 1;
}

static int read_stages(const cJSON *o, const cJSON *a, qc_plots *p)
{
    double first, cols;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) > QC_PLOT_STAGES || !num(o, "first_stage", -1, QC_PLOT_STAGES, &first))
        return 0;
    p->first_stage = (int)first;
    for (const cJSON *s = a->child; s; s = s->next) {
        qc_stage_row *r = &p->stages[p->nstages++];
        double bad, n;
        if (!str(s, "name", r->name, sizeof r->name) || !num(s, "bad", 0, 1e18, &bad) || !num(s, "n", 0, 1e18, &n) ||
            !num(s, "maxerr", 0, INFINITY, &r->maxerr))
            return 0;
        r->bad = (int64_t)bad, r->n = (int64_t)n;
    }
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "along_k");
    if (!k)
        return 1;
    const cJSON *bins = cJSON_GetObjectItemCaseSensitive(k, "bins");
    if (!num(k, "cols", 1, 1e15, &cols) || !cJSON_IsArray(bins) || cJSON_GetArraySize(bins) > QC_PLOT_K)
        return 0;
    p->k_cols = (int64_t)cols;
    for (const cJSON *b = bins->child; b; b = b->next) {
        if (!cJSON_IsNumber(b))
            return 0;
        p->along_k[p->k_bins++] = (float)b->valuedouble;
    }
    return 1;
}

int qc_plots_from_json(const cJSON *result, qc_plots *p)
{
    memset(p, 0, sizeof *p);
    p->first_stage = -1;
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(result, "plots");
    if (!o)
        return 1;
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(o, "map"), *ratio = cJSON_GetObjectItemCaseSensitive(o, "ratio");
    const cJSON *stages = cJSON_GetObjectItemCaseSensitive(o, "stages");
    if (map && !(p->has_map = read_map(map, &p->map)))
        return 0;
    if (ratio && !(p->has_ratio = read_ratio(ratio, p)))
        return 0;
    return !stages || read_stages(o, stages, p);
}
