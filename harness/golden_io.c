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

int qc_outputs_fit(qc_tensor_set *got, qc_tensor_set *expected, char *err, size_t errlen)
{
    for (int i = 0; i < expected->n; i++) {
        const qc_tensor *e = &expected->t[i];
        if (!qc_judge_aid(e->name) && strncmp(e->name, "stage.", 6) && !qc_set_find(got, e->name)) {
            snprintf(err, errlen, "no dataset /outputs/%s (an output of the op)", e->name);
            return 2;
        }
    }
    for (int i = 0; i < got->n; i++) {
        const qc_tensor *g = &got->t[i], *e = qc_set_find(expected, g->name);
        if (!e || qc_judge_aid(g->name)) {
            snprintf(err, errlen, "/outputs/%s is not an output of the op", g->name);
            return 2;
        }
        if (e->storage != g->storage) {
            snprintf(err, errlen, "/outputs/%s is stored as %s, the op's as %s", g->name,
                     qc_storage_name(g->storage), qc_storage_name(e->storage));
            return 2;
        }
    }
    return 0;
}

int qc_golden_read_joined(const char *path, qc_golden_meta *m, qc_tensor_set *inputs, qc_tensor_set *outputs,
                          char *err, size_t errlen)
{
    char names[QC_MAX_TENSORS][QC_NAME_LEN];
    int n = 0;
    if (qc_golden_read(path, m, inputs, outputs, err, errlen) ||
        qc_golden_stage_names(path, names, QC_MAX_TENSORS, &n, err, errlen))
        return 2;
    for (int i = 0; i < n; i++) {
        if (!strncmp(names[i], "backend", 7))
            continue;
        qc_tensor_set st = {0};
        if (qc_golden_read_stage(path, names[i], &st, err, errlen))
            return 2;
        for (int k = 0; k < st.n; k++) {
            qc_tensor *t = &st.t[k];
            char full[2 * QC_NAME_LEN + 8];
            int len = snprintf(full, sizeof full, "stage.%s.%s", names[i], t->name);
            if (len >= QC_NAME_LEN || qc_set_find(outputs, full) || !qc_set_add(outputs, t)) {
                snprintf(err, errlen, "%s: /stages/%s/%s: %s", path, names[i], t->name,
                         len >= QC_NAME_LEN ? "its name is too long" : qc_set_find(outputs, full) ? "stored twice"
                                                                                                   : "too many tensors");
                qc_set_free(&st);
                return 2;
            }
            memcpy(outputs->t[outputs->n - 1].name, full, (size_t)len + 1); /* len < QC_NAME_LEN */
        }
        qc_set_free(&st); /* its tensors moved: nothing left to free */
    }
    return 0;
}

/* The first element at which two tensors of one storage and size differ, -1 when none. */
static int64_t first_difference(const qc_tensor *a, const qc_tensor *b)
{
    const size_t es = qc_storage_size(a->storage);
    for (size_t i = 0; i < a->nbytes / es; i++) {
        const uint8_t *x = (const uint8_t *)a->data + i * es, *y = (const uint8_t *)b->data + i * es;
        if (memcmp(x, y, es) == 0)
            continue;
        float fx, fy;
        if (a->storage == QC_ST_F32 && a->nan_any) {
            memcpy(&fx, x, 4), memcpy(&fy, y, 4);
            if (fx != fx && fy != fy)
                continue;
        }
        return (int64_t)i;
    }
    return -1;
}

int qc_judge_aid(const char *name)
{
    size_t n = strlen(name);
    return (n > 6 && !strcmp(name + n - 6, ".bound")) || (n > 5 && !strcmp(name + n - 5, ".mask"));
}

int qc_outputs_identical(const qc_tensor_set *stored, const qc_tensor_set *now, int aids_only, char *err,
                         size_t errlen)
{
    for (int i = 0; i < now->n && !aids_only; i++) {
        const char *name = now->t[i].name;
        if (strncmp(name, "stage.", 6) && !qc_set_find((qc_tensor_set *)stored, name)) {
            snprintf(err, errlen, "it lacks the output '%s' the reference gives", name);
            return 2;
        }
    }
    for (int i = 0; i < stored->n; i++) {
        const qc_tensor *s = &stored->t[i], *n = qc_set_find((qc_tensor_set *)now, s->name);
        if (aids_only && !qc_judge_aid(s->name))
            continue;
        if (!n) {
            snprintf(err, errlen, "its output '%s' is not one the reference gives", s->name);
            return 2;
        }
        int same_shape = s->ndim == n->ndim && !memcmp(s->shape, n->shape, sizeof s->shape[0] * (size_t)s->ndim);
        if (s->storage != n->storage || strcmp(s->dtype, n->dtype) || strcmp(s->layout, n->layout) || !same_shape ||
            s->nbytes != n->nbytes) {
            snprintf(err, errlen, "its output '%s' is %s %s (layout %s), the reference's %s %s (layout %s)%s", s->name,
                     qc_storage_name(s->storage), s->dtype, s->layout, qc_storage_name(n->storage), n->dtype, n->layout,
                     same_shape ? "" : ", or of another shape");
            return 1;
        }
        int64_t at = s->nbytes ? first_difference(s, n) : -1;
        if (at >= 0) {
            snprintf(err, errlen, "its output '%s' differs from the reference's at element %lld", s->name, (long long)at);
            return 1;
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
