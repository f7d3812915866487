/* report_read.c: reads back a summary.json that report.c wrote (report.h), for `qcheck report
 * merge`: the run info, the coverage lines and every result. */
#include "report.h"
#include "report_plots.h"
#include "files.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2, with err = "PATH: what" */
static int fail(char *err, size_t errlen, const char *path, const char *what)
{
    snprintf(err, errlen, "%s: %s", path, what);
    return 2;
}

/* Copies the string member key of o into out[cap]; 0 when absent or not a string (required) */
static int str_of(const cJSON *o, const char *key, char *out, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v))
        return 0;
    snprintf(out, cap, "%s", v->valuestring);
    return 1;
}

/* A number member within [lo, hi] (so that the integer casts below are defined); 0 otherwise. */
static int num_in(const cJSON *o, const char *key, double lo, double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi))
        return 0;
    *out = v->valuedouble;
    return 1;
}

#define BIG 9007199254740992.0 /* 2^53 */
static int num_of(const cJSON *o, const char *key, double *out) { return num_in(o, key, 0, BIG, out); }

/* A JSON list of names as one space-separated string. */
static int names_of(const cJSON *o, const char *key, char *out, size_t cap)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, key), *e;
    size_t at = 0;
    out[0] = 0;
    if (!cJSON_IsArray(arr))
        return 0;
    cJSON_ArrayForEach(e, arr) {
        if (!cJSON_IsString(e))
            return 0;
        at += (size_t)snprintf(out + at, at < cap ? cap - at : 0, "%s%s", at ? " " : "", e->valuestring);
    }
    return at < cap;
}

static int read_result(const cJSON *o, qc_result *r)
{
    char verdict[16], seed[24];
    double sec, pos;
    if (!str_of(o, "case_id", r->case_id, sizeof r->case_id) || !str_of(o, "case", r->case_name, sizeof r->case_name) ||
        !str_of(o, "op", r->op, sizeof r->op) || !str_of(o, "backend", r->backend, sizeof r->backend) ||
        !str_of(o, "verdict", verdict, sizeof verdict) || !num_of(o, "seconds", &sec) ||
        !str_of(o, "figures", r->figures, sizeof r->figures) || !str_of(o, "repro", r->repro, sizeof r->repro) ||
        !str_of(o, "detail", r->detail, sizeof r->detail) || !num_of(o, "position", &pos) ||
        !str_of(o, "seed_text", seed, sizeof seed))
        return 0;
    const cJSON *planted = cJSON_GetObjectItemCaseSensitive(o, "planted");
    if (!cJSON_IsBool(planted) || !qc_plots_from_json(o, &r->plots))
        return 0;
    r->planted = cJSON_IsTrue(planted);
    r->seed = strtoull(seed, NULL, 10);
    r->seconds = sec;
    if (pos != floor(pos)) /* a position counts results */
        return 0;
    r->position = (int64_t)pos;
    r->verdict = QC_VERDICT_COUNT;
    for (int v = 0; v < QC_VERDICT_COUNT; v++)
        if (!strcmp(verdict, qc_verdict_name((qc_verdict)v)))
            r->verdict = (qc_verdict)v;
    return r->verdict != QC_VERDICT_COUNT;
}

static int read_coverage(const cJSON *root, qc_coverage_line **lines, int *n)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "coverage"), *e;
    double inst;
    *n = 0;
    if (!cJSON_IsArray(arr))
        return 0;
    *lines = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof **lines);
    if (!*lines)
        return 0;
    cJSON_ArrayForEach(e, arr) {
        qc_coverage_line *l = &(*lines)[(*n)++];
        if (!str_of(e, "recipe_profile", l->key, sizeof l->key) || !num_in(e, "instances", 0, 1 << 30, &inst) ||
            !names_of(e, "reached", l->reached, sizeof l->reached) ||
            !names_of(e, "required", l->required, sizeof l->required) ||
            !names_of(e, "required_not_reached", l->missing, sizeof l->missing))
            return 0;
        l->instances = (int)inst;
    }
    return 1;
}

int qc_report_read(const char *dir, qc_report_data *d, char *err, size_t errlen)
{
    char path[4096];
    memset(d, 0, sizeof *d);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    size_t size;
    char *text = qc_read_regular(path, (size_t)1 << 30, &size);
    if (!text)
        return fail(err, errlen, path, errno == ENOENT ? "cannot be read (not a report folder of qcheck run --report)"
                                       : errno == EINVAL ? "is not a regular file"
                                       : errno == EFBIG ? "holds more than 1 GiB" : "cannot be read");
    cJSON *root = cJSON_Parse(text);
    free(text);
    const cJSON *shard = cJSON_GetObjectItemCaseSensitive(root, "shard"),
                *sel = cJSON_GetObjectItemCaseSensitive(root, "selection"),
                *res = cJSON_GetObjectItemCaseSensitive(root, "results"), *e;
    double fmt = 0, idx = 0, cnt = 0, items = 0, secs = 0;
    qc_run_info *in = &d->info;
    int ok = root && num_of(root, "report_format", &fmt) && fmt == 1 &&
             str_of(root, "qcheck_version", in->qcheck_version, sizeof in->qcheck_version) &&
             str_of(root, "git_revision", in->git_revision, sizeof in->git_revision) &&
             str_of(root, "command", in->command, sizeof in->command) &&
             str_of(root, "suite", in->suite, sizeof in->suite) &&
             str_of(root, "started", in->started, sizeof in->started) && num_of(root, "seconds", &secs) &&
             num_in(shard, "count", 1, 1 << 20, &cnt) && num_in(shard, "index", 1, cnt, &idx) &&
             str_of(sel, "digest", in->selection, sizeof in->selection) && num_of(sel, "items", &items) &&
             cJSON_IsArray(res) && read_coverage(root, &d->coverage, &d->ncoverage);
    in->seconds = secs, in->shard_index = (int)idx, in->shard_count = (int)cnt, in->selection_items = (int64_t)items;
    if (ok && (d->results = calloc((size_t)cJSON_GetArraySize(res) + 1, sizeof *d->results)))
        cJSON_ArrayForEach(e, res) ok = ok && read_result(e, &d->results[d->n++]);
    else
        ok = 0;
    cJSON_Delete(root);
    if (!ok) {
        qc_report_data_free(d);
        return fail(err, errlen, path, "not a summary.json of this qcheck (report_format 1 with shard, selection, "
                                       "coverage and results)");
    }
    return 0;
}

void qc_report_data_free(qc_report_data *d)
{
    free(d->results), free(d->coverage);
    memset(d, 0, sizeof *d);
}
