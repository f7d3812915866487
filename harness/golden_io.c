/* golden_io.c: between instances and the HDF5 golden store: metadata, file names, params as
 * JSON, and saving failing instances (--keep-failing). */
#include "golden_io.h"
#include "stages.h"
#include "formats/formats.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef QC_VERSION
#define QC_VERSION "0.0.0"
#endif
#ifndef QC_GIT_REVISION
#define QC_GIT_REVISION "unknown"
#endif

void qc_params_to_json(const qc_params *p, char *out, size_t len)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < p->n; i++)
        cJSON_AddStringToObject(o, p->key[i], p->val[i]);
    char *text = cJSON_PrintUnformatted(o);
    snprintf(out, len, "%s", text ? text : "{}");
    free(text);
    cJSON_Delete(o);
}

int qc_params_from_json(const char *json, qc_params *p, char *err, size_t errlen)
{
    cJSON *o = cJSON_Parse(json);
    memset(p, 0, sizeof *p);
    if (!cJSON_IsObject(o)) {
        snprintf(err, errlen, "params attribute is not a JSON object: '%.80s'", json);
        cJSON_Delete(o);
        return 2;
    }
    const cJSON *v;
    cJSON_ArrayForEach(v, o) {
        if (!cJSON_IsString(v) || qc_params_set(p, v->string, v->valuestring)) {
            snprintf(err, errlen, "params attribute: '%s' is not a string or too many params", v->string);
            cJSON_Delete(o);
            return 2;
        }
    }
    cJSON_Delete(o);
    return 0;
}

/* SOURCE_DATE_EPOCH (reproducible-builds.org) pins the timestamp so goldens are byte-identical. */
static void iso_now(char *out, size_t len)
{
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    time_t t = sde && *sde ? (time_t)strtoll(sde, NULL, 10) : time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void qc_instance_meta(const qc_instance *in, const char *backend, qc_golden_meta *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->qcheck_version, sizeof m->qcheck_version, "%s", QC_VERSION);
    m->format_version = QC_GOLDEN_FORMAT_VERSION;
    snprintf(m->case_name, sizeof m->case_name, "%s", in->c->name);
    snprintf(m->op, sizeof m->op, "%s", in->c->op);
    qc_params_to_json(&in->params, m->params_json, sizeof m->params_json);
    m->seed = in->seed;
    snprintf(m->profile, sizeof m->profile, "%s", qc_param_or(&in->params, "profile", ""));
    snprintf(m->backend, sizeof m->backend, "%s", backend);
    snprintf(m->git_revision, sizeof m->git_revision, "%s", QC_GIT_REVISION);
    iso_now(m->created, sizeof m->created);
}

int qc_mkdirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = buf + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(buf, 0777) && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(buf, 0777) && errno != EEXIST ? -1 : 0;
}

/* text as a file-name part of at most max characters: letters, digits and . _ = - survive, the
 * rest becomes _; a longer text keeps its start and ends in "~" and 16 hex digits of its hash. */
static void file_part(const char *text, size_t max, char *out)
{
    size_t n = 0, len = strlen(text);
    size_t keep = len > max ? max - 17 : len;
    for (const char *s = text; n < keep; s++)
        out[n++] = (strchr("._=-", *s) || (*s >= '0' && *s <= '9') || ((*s | 32) >= 'a' && (*s | 32) <= 'z')) ? *s : '_';
    out[n] = '\0';
    if (len > max)
        snprintf(out + n, 18, "~%016llx", (unsigned long long)qc_hash(text, 0));
}

void qc_golden_path(const char *dir, const qc_instance *in, const char *backend, char *out, size_t len)
{
    char params[QC_ID_LEN], name[200], be[80];
    /* id "case[k=v,k=v]" -> "k=v_k=v" (a file name is at most 255 bytes: the parts are capped) */
    const char *s = strchr(in->id, '[');
    snprintf(params, sizeof params, "%s", s ? s + 1 : in->id);
    size_t pl = strlen(params);
    if (pl && params[pl - 1] == ']')
        params[pl - 1] = '\0';
    file_part(params, 160, name);
    if (backend && strcmp(backend, "ref")) {
        file_part(backend, 60, be);
        snprintf(out, len, "%s/%s/%s__%s.h5", dir, in->c->name, name, be);
    } else {
        snprintf(out, len, "%s/%s/%s.h5", dir, in->c->name, name);
    }
}

void qc_keep_failing(const char *dir, const qc_instance *in, const char *backend, const qc_tensor_set *inputs,
                     const qc_tensor_set *expected, const qc_tensor_set *got, qc_result *r)
{
    char path[1024], folder[1024], err[512];
    qc_golden_path(dir, in, backend, path, sizeof path);
    snprintf(folder, sizeof folder, "%s/%s", dir, in->c->name);
    qc_golden_meta m;
    qc_instance_meta(in, backend, &m);
    /* stage.<stage>.<tensor> of the reference -> /stages/<stage>/<tensor>, the backend's ->
     * /stages/backend.<stage>/<tensor>, its plain outputs -> /stages/backend (stages.h) */
    static qc_tensor_set split[2 * QC_MAX_TENSORS + 2];
    static char snames[2 * QC_MAX_TENSORS + 2][QC_NAME_LEN];
    qc_tensor_set plain_e;
    int ne = qc_stage_split(expected, NULL, &plain_e, split, snames, QC_MAX_TENSORS);
    int ng = qc_stage_split(got, "backend.", &split[ne + 1], &split[ne + 2], &snames[ne + 2], QC_MAX_TENSORS);
    snprintf(snames[ne + 1], QC_NAME_LEN, "backend");
    const qc_tensor_set *stages[2 * QC_MAX_TENSORS + 2];
    const char *names[2 * QC_MAX_TENSORS + 2];
    int nst = 0;
    for (int i = 0; i < ne + 2 + ng; i++)
        if (i != ne) /* slot ne is unused: plain_e holds the reference's plain outputs */
            stages[nst] = &split[i], names[nst++] = snames[i];
    size_t at = strlen(r->detail);
    if (qc_mkdirs(folder) || qc_golden_write(path, &m, inputs, &plain_e, stages, names, nst, err, sizeof err)) {
        snprintf(r->detail + at, sizeof r->detail - at, "  --keep-failing: could not save %s: %s\n", path,
                 qc_mkdirs(folder) ? "cannot create the folder" : err);
        r->unsaved = 1;
    }
    else
        snprintf(r->detail + at, sizeof r->detail - at, "  saved: %s (stage 'backend' holds its outputs)\n", path);
}

int qc_outputs_adopt_dtypes(qc_tensor_set *got, qc_tensor_set *expected, char *err, size_t errlen)
{
    for (int i = 0; i < got->n; i++) {
        qc_tensor *g = &got->t[i], *e = qc_set_find(expected, g->name);
        if (!e || e->storage != g->storage)
            continue;
        if (!strcmp(g->dtype, qc_storage_name(g->storage)))
            snprintf(g->dtype, sizeof g->dtype, "%s", e->dtype);
        else if (strcmp(g->dtype, e->dtype)) {
            snprintf(err, errlen, "output %s says qc_dtype %s, the op writes %s", g->name, g->dtype, e->dtype);
            return 2;
        }
        if (qc_tensor_numel(g) == qc_tensor_numel(e)) { /* the same elements in another shape: the op's shape */
            g->ndim = e->ndim;
            memcpy(g->shape, e->shape, sizeof g->shape);
        }
    }
    return 0;
}

int qc_check_dtypes(const char *path, const char *group, const qc_tensor_set *s, char *err, size_t errlen)
{
    for (int i = 0; i < s->n; i++) {
        const char *d = s->t[i].dtype;
        if (qc_format_from_name(d) >= 0 || qc_storage_from_name(d) >= 0 || !strcmp(d, "e2m1x2") || !strcmp(d, "s8"))
            continue;
        snprintf(err, errlen, "%s: %s/%s: unknown qc_dtype '%s' (known: the formats of qcheck list formats, the "
                 "storage names u8 u16 i32 u32 f32 f64, e2m1x2, s8)", path, group, s->t[i].name, d);
        return 2;
    }
    return 0;
}
