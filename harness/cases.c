/* cases.c: loading and validating case files with cJSON, and expanding them into instances.
 * Every validation error names the file, the key and the bad value. */
#include "cases.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "registry.h"

static const char *const tier_names[] = {"quick", "full", "bringup"};

int qc_tier_from_name(const char *name)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, tier_names[i]))
            return 1 << i;
    return -1;
}

typedef struct ctx {
    const char *path;
    char *err;
    size_t errlen;
} ctx;

static int bad(ctx *x, const char *key, const char *what, const char *value)
{
    snprintf(x->err, x->errlen, "%s: key '%s': %s%s%s%s", x->path, key, what, value ? " '" : "", value ? value : "",
             value ? "'" : "");
    return 2;
}

static int in_list(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

/* A JSON scalar as the string the params carry: strings as they are, integers without a
 * fraction, other numbers with %.17g, booleans as 0/1. */
static int scalar_text(const cJSON *v, char *out, size_t len)
{
    if (cJSON_IsString(v))
        snprintf(out, len, "%s", v->valuestring);
    else if (cJSON_IsBool(v))
        snprintf(out, len, "%d", cJSON_IsTrue(v));
    else if (cJSON_IsNumber(v) && v->valuedouble == (double)(long long)v->valuedouble)
        snprintf(out, len, "%lld", (long long)v->valuedouble);
    else if (cJSON_IsNumber(v))
        snprintf(out, len, "%.17g", v->valuedouble);
    else
        return -1;
    return 0;
}

static int add_value(ctx *x, qc_sweep *s, int k, const char *key, const char *text)
{
    if (s->nvals[k] >= QC_MAX_VALUES)
        return bad(x, key, "more than 64 values in one sweep", NULL);
    snprintf(s->vals[k][s->nvals[k]++], QC_PARAM_LEN, "%s", text);
    return 0;
}

/* "key": scalar | [scalars] | {"range": [start, stop, step]} (stop exclusive) | {"pow2": [lo, hi]} */
static int parse_sweep_value(ctx *x, qc_sweep *s, const cJSON *v)
{
    if (s->n >= QC_MAX_PARAMS)
        return bad(x, v->string, "too many parameters", NULL);
    int k = s->n++;
    snprintf(s->key[k], sizeof s->key[k], "%s", v->string);
    s->nvals[k] = 0;
    char text[QC_PARAM_LEN];
    if (cJSON_IsArray(v)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, v) {
            if (scalar_text(e, text, sizeof text))
                return bad(x, v->string, "list entries must be strings, numbers or booleans", NULL);
            if (add_value(x, s, k, v->string, text))
                return 2;
        }
        if (s->nvals[k] == 0)
            return bad(x, v->string, "an empty list sweeps nothing", NULL);
        return 0;
    }
    if (cJSON_IsObject(v)) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(v, "range");
        const cJSON *p2 = cJSON_GetObjectItemCaseSensitive(v, "pow2");
        const cJSON *a = r ? r : p2;
        int na = a ? cJSON_GetArraySize(a) : 0;
        if (!a || !cJSON_IsArray(a) || na < 2 || na > 3)
            return bad(x, v->string, "an object must be {\"range\": [start, stop, step]} or {\"pow2\": [lo, hi]}",
                       NULL);
        long long lo = (long long)cJSON_GetArrayItem(a, 0)->valuedouble;
        long long hi = (long long)cJSON_GetArrayItem(a, 1)->valuedouble;
        long long step = na == 3 ? (long long)cJSON_GetArrayItem(a, 2)->valuedouble : 1;
        if (step <= 0 || (p2 && lo <= 0))
            return bad(x, v->string, "range step and pow2 bounds must be positive", NULL);
        for (long long i = lo; r ? i < hi : i <= hi; i = r ? i + step : i * 2) {
            snprintf(text, sizeof text, "%lld", i);
            if (add_value(x, s, k, v->string, text))
                return 2;
        }
        if (s->nvals[k] == 0)
            return bad(x, v->string, "the range is empty", NULL);
        return 0;
    }
    if (scalar_text(v, text, sizeof text))
        return bad(x, v->string, "must be a scalar, a list or a range object", NULL);
    return add_value(x, s, k, v->string, text);
}

static int parse_sweep(ctx *x, const cJSON *obj, qc_sweep *s, const char *key)
{
    memset(s, 0, sizeof *s);
    if (!obj)
        return 0;
    if (!cJSON_IsObject(obj))
        return bad(x, key, "must be an object of parameter sweeps", NULL);
    const cJSON *v;
    cJSON_ArrayForEach(v, obj) if (parse_sweep_value(x, s, v)) return 2;
    return 0;
}

static int str_field(ctx *x, const cJSON *obj, const char *key, char *out, size_t len, int required,
                     const char *ctxkey)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char full[128];
    snprintf(full, sizeof full, "%s%s%s", ctxkey ? ctxkey : "", ctxkey ? "." : "", key);
    if (!v) {
        if (required)
            return bad(x, full, "is required", NULL);
        return 0;
    }
    if (scalar_text(v, out, len))
        return bad(x, full, "must be a string or a number", NULL);
    return 0;
}

static int parse_input(ctx *x, const cJSON *v, const qc_sweep *c_params, qc_input_spec *in)
{
    char key[96];
    memset(in, 0, sizeof *in);
    snprintf(in->name, sizeof in->name, "%s", v->string);
    snprintf(key, sizeof key, "inputs.%s", v->string);
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(v, "shape");
    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) < 1 || cJSON_GetArraySize(shape) > QC_MAX_DIMS)
        return bad(x, key, "needs \"shape\": a list of 1 to 4 dimension expressions", NULL);
    const cJSON *d;
    cJSON_ArrayForEach(d, shape) {
        if (scalar_text(d, in->shape[in->ndim], sizeof in->shape[0]))
            return bad(x, key, "shape entries must be expressions (strings) or integers", NULL);
        in->ndim++;
    }
    char storage[16] = "f32";
    snprintf(in->fill, sizeof in->fill, "normal");
    if (str_field(x, v, "storage", storage, sizeof storage, 0, key) ||
        str_field(x, v, "fill", in->fill, sizeof in->fill, 0, key) ||
        str_field(x, v, "scale", in->scale, sizeof in->scale, 0, key) ||
        str_field(x, v, "dtype", in->dtype, sizeof in->dtype, 0, key) ||
        str_field(x, v, "edges_format", in->edges_format, sizeof in->edges_format, 0, key) ||
        str_field(x, v, "zero_blocks", in->zero_blocks, sizeof in->zero_blocks, 0, key) ||
        str_field(x, v, "at", in->at, sizeof in->at, 0, key) ||
        str_field(x, v, "bits", in->bits, sizeof in->bits, 0, key))
        return 2;
    int st = qc_storage_from_name(storage);
    if (st < 0)
        return bad(x, key, "unknown storage (known: u8 u16 i32 u32 f32 f64)", storage);
    in->storage = (qc_storage)st;
    if (!in->dtype[0])
        snprintf(in->dtype, sizeof in->dtype, "%s", storage);
    int swept = 0; /* "fill": "dist" takes the generator from the sweep parameter dist */
    for (int k = 0; k < c_params->n; k++)
        swept |= !strcmp(c_params->key[k], in->fill);
    if (!in_list(in->fill, qc_fill_names) && !swept)
        return bad(x, key,
                   "unknown fill (known: normal uniform outliers integers bits onehot zeros iota codes, or a "
                   "parameter naming one)",
                   in->fill);
    const cJSON *edges = cJSON_GetObjectItemCaseSensitive(v, "edges");
    if (edges) {
        const cJSON *e;
        if (!cJSON_IsArray(edges))
            return bad(x, key, "\"edges\" must be a list of edge names", NULL);
        cJSON_ArrayForEach(e, edges) {
            if (!cJSON_IsString(e) || !in_list(e->valuestring, qc_edge_names))
                return bad(x, key,
                           "unknown edge (known: nan inf zero subnormal max above_max midpoints tiny huge)",
                           cJSON_IsString(e) ? e->valuestring : "(not a string)");
            if (in->nedges >= QC_MAX_EDGES)
                return bad(x, key, "too many edges", NULL);
            snprintf(in->edges[in->nedges++], sizeof in->edges[0], "%s", e->valuestring);
        }
    }
    return 0;
}

static int parse_compare(ctx *x, const cJSON *v, qc_compare_spec *cmp)
{
    char key[96];
    memset(cmp, 0, sizeof *cmp);
    snprintf(cmp->output, sizeof cmp->output, "%s", v->string);
    snprintf(key, sizeof key, "compare.%s", v->string);
    snprintf(cmp->rule, sizeof cmp->rule, "bitexact");
    if (str_field(x, v, "rule", cmp->rule, sizeof cmp->rule, 0, key) ||
        str_field(x, v, "why", cmp->why, sizeof cmp->why, 1, key) ||
        str_field(x, v, "block", cmp->block, sizeof cmp->block, 0, key) ||
        str_field(x, v, "midpoint_input", cmp->midpoint_input, sizeof cmp->midpoint_input, 0, key))
        return 2;
    if (strcmp(cmp->rule, "bitexact") && strcmp(cmp->rule, "budget") && strcmp(cmp->rule, "bound"))
        return bad(x, key, "unknown rule (known: bitexact, budget, bound)", cmp->rule);
    cmp->degenerate_ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "degenerate_ok"));
    cmp->budget_class = -1;
    if (strcmp(cmp->rule, "budget") == 0) {
        char cls[32] = "", frac[32] = "";
        if (str_field(x, v, "class", cls, sizeof cls, 1, key) || str_field(x, v, "budget", frac, sizeof frac, 1, key) ||
            str_field(x, v, "coupled_to", cmp->coupled_to, sizeof cmp->coupled_to, 0, key))
            return 2;
        for (int i = 0; i < QC_MM_COUNT; i++)
            if (!strcmp(cls, qc_mismatch_class_name((qc_mismatch_class)i)))
                cmp->budget_class = i;
        char *end;
        cmp->budget = strtod(frac, &end);
        if (cmp->budget_class < 0 && strcmp(cls, "scale_coupled"))
            return bad(x, key, "unknown budget class (known: tie_flip one_ulp nan_policy zero_sign wrong_block padding other)", cls);
        if (*end || cmp->budget < 0 || cmp->budget > 1)
            return bad(x, key, "budget must be a fraction in [0, 1]", frac);
        if (cmp->coupled_to[0] && !cmp->block[0])
            return bad(x, key, "coupled_to needs \"block\": the block length that one scale covers", NULL);
    }
    return 0;
}

static int load_vectors(ctx *x, const char *dir, const char *file, qc_case *c)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return bad(x, "vectors", "cannot open the vector table", path);
    c->vectors = calloc(QC_MAX_VECTORS, sizeof *c->vectors);
    char line[512];
    int lineno = 0;
    while (c->vectors && fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        qc_vector *v = &c->vectors[c->nvectors];
        char in[16], ex[16], *e1, *e2;
        if (c->nvectors >= QC_MAX_VECTORS ||
            sscanf(line, "%15[^\t]\t%95[^\t]\t%15[^\t]\t%15[^\t]\t%127[^\n]", v->format, v->policy, in, ex,
                   v->source) < 4) {
            snprintf(x->err, x->errlen, "%s:%d: expected format, policy, input hex, expected hex, source", path,
                     lineno);
            fclose(f);
            return 2;
        }
        v->input = (uint32_t)strtoul(in, &e1, 16);
        v->expected = (uint32_t)strtoul(ex, &e2, 16);
        if (*e1 || *e2) {
            snprintf(x->err, x->errlen, "%s:%d: bad hex value '%s' or '%s'", path, lineno, in, ex);
            fclose(f);
            return 2;
        }
        c->nvectors++;
    }
    fclose(f);
    return c->vectors ? 0 : bad(x, "vectors", "out of memory", NULL);
}

static int parse_case(ctx *x, const cJSON *root, const char *dir, qc_case *c)
{
    if (!cJSON_IsObject(root))
        return bad(x, "(top level)", "must be a JSON object", NULL);
    if (str_field(x, root, "name", c->name, sizeof c->name, 1, NULL) ||
        str_field(x, root, "op", c->op, sizeof c->op, 1, NULL) ||
        str_field(x, root, "doc", c->doc, sizeof c->doc, 1, NULL))
        return 2;
    if (!qc_op_find(c->op))
        return bad(x, "op", "unknown op (qcheck list ops)", c->op);
    const cJSON *tiers = cJSON_GetObjectItemCaseSensitive(root, "tiers"), *t;
    if (!cJSON_IsArray(tiers) || cJSON_GetArraySize(tiers) == 0)
        return bad(x, "tiers", "must be a non-empty list of quick, full, bringup", NULL);
    cJSON_ArrayForEach(t, tiers) {
        int bit = cJSON_IsString(t) ? qc_tier_from_name(t->valuestring) : -1;
        if (bit < 0)
            return bad(x, "tiers", "unknown tier (known: quick, full, bringup)",
                       cJSON_IsString(t) ? t->valuestring : "(not a string)");
        c->tiers |= bit;
    }
    if (parse_sweep(x, cJSON_GetObjectItemCaseSensitive(root, "params"), &c->params, "params"))
        return 2;
    const cJSON *tp = cJSON_GetObjectItemCaseSensitive(root, "tier_params");
    for (int i = 0; i < 3; i++) {
        char key[32];
        snprintf(key, sizeof key, "tier_params.%s", tier_names[i]);
        if (parse_sweep(x, tp ? cJSON_GetObjectItemCaseSensitive(tp, tier_names[i]) : NULL, &c->tier_params[i], key))
            return 2;
    }
    const cJSON *cons = cJSON_GetObjectItemCaseSensitive(root, "constraints"), *e;
    cJSON_ArrayForEach(e, cons) {
        if (!cJSON_IsString(e) || c->nconstraints >= QC_MAX_CONSTRAINTS)
            return bad(x, "constraints", "must be a list of at most 8 expression strings", NULL);
        snprintf(c->constraints[c->nconstraints++], sizeof c->constraints[0], "%s", e->valuestring);
    }
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs"), *v;
    cJSON_ArrayForEach(v, inputs) {
        if (c->ninputs >= QC_MAX_INPUTS || parse_input(x, v, &c->params, &c->inputs[c->ninputs]))
            return c->ninputs >= QC_MAX_INPUTS ? bad(x, "inputs", "more than 8 inputs", NULL) : 2;
        c->ninputs++;
    }
    const cJSON *cmps = cJSON_GetObjectItemCaseSensitive(root, "compare");
    if (!cJSON_IsObject(cmps) || cJSON_GetArraySize(cmps) == 0)
        return bad(x, "compare", "is required: one rule (with its \"why\") per output", NULL);
    cJSON_ArrayForEach(v, cmps) {
        if (c->ncompares >= QC_MAX_COMPARES || parse_compare(x, v, &c->compares[c->ncompares]))
            return c->ncompares >= QC_MAX_COMPARES ? bad(x, "compare", "more than 8 outputs", NULL) : 2;
        c->ncompares++;
    }
    char vecfile[128] = "";
    if (str_field(x, root, "vectors", vecfile, sizeof vecfile, 0, NULL))
        return 2;
    if (vecfile[0] && load_vectors(x, dir, vecfile, c))
        return 2;
    if (!vecfile[0] && c->ninputs == 0)
        return bad(x, "inputs", "is required (or \"vectors\": a table of inputs and expected outputs)", NULL);
    return 0;
}

int qc_case_load(const char *path, const char *dir, qc_case *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    ctx x = {path, err, errlen};
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    size_t got = text ? fread(text, 1, (size_t)size, f) : 0;
    fclose(f);
    if (!text || got != (size_t)size) {
        free(text);
        snprintf(err, errlen, "%s: cannot read", path);
        return 2;
    }
    text[size] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        int line = 1;
        for (const char *s = text; end && s < end; s++)
            line += *s == '\n';
        snprintf(err, errlen, "%s:%d: malformed JSON near '%.20s'", path, line, end ? end : "");
        free(text);
        return 2;
    }
    int rc = parse_case(&x, root, dir, c);
    cJSON_Delete(root);
    free(text);
    return rc;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int qc_cases_load_dir(const char *dir, qc_case **cases, int *ncases, char *err, size_t errlen)
{
    *cases = NULL; /* qc_cases_free(*cases, *ncases) is right whatever this returns */
    *ncases = 0;
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cannot open the cases folder '%s' (set QCHECK_CASES)", dir);
        return 2;
    }
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".json"))
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], by_name);
    *cases = calloc((size_t)(n ? n : 1), sizeof **cases);
    *ncases = 0;
    int rc = *cases ? 0 : 2;
    for (int i = 0; i < n; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (!rc)
            rc = qc_case_load(path, dir, &(*cases)[(*ncases)++], err, errlen);
        free(names[i]);
    }
    return rc;
}

void qc_cases_free(qc_case *cases, int n)
{
    for (int i = 0; i < n; i++)
        free(cases[i].vectors);
    free(cases);
}

static int push(qc_instance **inst, int *n, int *cap, const qc_instance *x)
{
    if (*n == *cap) {
        int nc = *cap ? 2 * *cap : 256;
        qc_instance *g = realloc(*inst, (size_t)nc * sizeof *g);
        if (!g)
            return -1;
        *inst = g;
        *cap = nc;
    }
    (*inst)[(*n)++] = *x;
    return 0;
}

/* "profile[,key=value...]" -> params profile=..., key=value */
static void policy_params(const char *column, qc_params *p)
{
    char buf[96];
    snprintf(buf, sizeof buf, "%s", column);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (eq) {
            *eq = '\0';
            qc_params_set(p, tok, eq + 1);
        } else {
            qc_params_set(p, "profile", tok);
        }
    }
}

static int expand_vectors(const qc_case *c, uint64_t seed, qc_instance **inst, int *n, int *cap)
{
    for (int i = 0; i < c->nvectors; i++) {
        int first = 1;
        for (int j = 0; j < i; j++)
            first &= strcmp(c->vectors[j].format, c->vectors[i].format) ||
                     strcmp(c->vectors[j].policy, c->vectors[i].policy);
        if (!first)
            continue;
        qc_instance x = {.c = c, .vec_first = i};
        qc_params_set(&x.params, "to", c->vectors[i].format);
        policy_params(c->vectors[i].policy, &x.params);
        for (int j = i; j < c->nvectors; j++)
            x.vec_count += !strcmp(c->vectors[j].format, c->vectors[i].format) &&
                           !strcmp(c->vectors[j].policy, c->vectors[i].policy);
        char ps[160];
        qc_params_format(&x.params, ps, sizeof ps);
        snprintf(x.id, sizeof x.id, "%.40s[%.150s]", c->name, ps);
        x.seed = qc_hash(x.id, seed);
        if (push(inst, n, cap, &x))
            return 2;
    }
    return 0;
}

void qc_instance_name(const qc_case *c, const qc_params *p, char id[QC_ID_LEN])
{
    char ps[QC_MAX_PARAMS * (QC_PARAM_LEN + 34)], full[sizeof ps + 80];
    qc_params_format(p, ps, sizeof ps);
    int n = snprintf(full, sizeof full, "%s[%s]", c->name, ps);
    if (n < QC_ID_LEN) {
        memcpy(id, full, (size_t)n + 1);
        return;
    }
    snprintf(id, QC_ID_LEN, "%.*s~%016llx", QC_ID_LEN - 18, full, (unsigned long long)qc_hash(full, 0));
}

/* 1 when key is a parameter of c (its base sweep or a tier's). */
static int case_has_key(const qc_case *c, const char *key)
{
    for (int k = 0; k < c->params.n; k++)
        if (!strcmp(c->params.key[k], key))
            return 1;
    for (int t = 0; t < 3; t++)
        for (int k = 0; k < c->tier_params[t].n; k++)
            if (!strcmp(c->tier_params[t].key[k], key))
                return 1;
    return 0;
}

int qc_case_check_keys(const qc_case *c, const qc_params *p, char *err, size_t errlen)
{
    for (int i = 0; !c->nvectors && i < p->n; i++) /* a vectors case's params come from its table */
        if (!case_has_key(c, p->key[i])) {
            size_t at = (size_t)snprintf(err, errlen, "case %s has no parameter '%s' (its parameters:", c->name, p->key[i]);
            for (int k = 0; k < c->params.n && at < errlen; k++)
                at += (size_t)snprintf(err + at, errlen - at, " %s", c->params.key[k]);
            if (at < errlen)
                snprintf(err + at, errlen - at, ")");
            return 2;
        }
    return 0;
}

int qc_instance_from_params(const qc_case *c, const qc_params *p, uint64_t seed, qc_instance *x, char *err,
                            size_t errlen)
{
    memset(x, 0, sizeof *x);
    x->c = c;
    x->params = *p;
    for (int i = 0; i < c->nconstraints; i++) {
        int64_t v;
        if (qc_eval(c->constraints[i], p, &v, err, errlen))
            return 2;
        if (!v) {
            snprintf(err, errlen, "the params break constraint '%s' of case %s", c->constraints[i], c->name);
            return 2;
        }
    }
    qc_instance_name(c, p, x->id);
    x->seed = qc_hash(x->id, seed);
    return 0;
}

int qc_case_expand(const qc_case *c, int tier, uint64_t seed, qc_instance **inst, int *n, int *cap, char *err,
                   size_t errlen)
{
    if (!(c->tiers & tier))
        return 0;
    if (c->nvectors)
        return expand_vectors(c, seed, inst, n, cap);
    /* the tier's overrides replace the base sweep of the same key */
    const qc_sweep *over = &c->tier_params[tier == QC_TIER_QUICK ? 0 : tier == QC_TIER_FULL ? 1 : 2];
    const qc_sweep *src[QC_MAX_PARAMS];
    int idx[QC_MAX_PARAMS], nkeys = 0;
    for (int k = 0; k < c->params.n; k++) {
        src[nkeys] = &c->params;
        idx[nkeys] = k;
        for (int j = 0; j < over->n; j++)
            if (!strcmp(over->key[j], c->params.key[k])) {
                src[nkeys] = over;
                idx[nkeys] = j;
            }
        nkeys++;
    }
    for (int j = 0; j < over->n; j++) {
        int known = 0;
        for (int k = 0; k < c->params.n; k++)
            known |= !strcmp(over->key[j], c->params.key[k]);
        if (!known && nkeys < QC_MAX_PARAMS) {
            src[nkeys] = over;
            idx[nkeys++] = j;
        }
    }
    int at[QC_MAX_PARAMS] = {0};
    for (;;) {
        qc_instance x = {.c = c};
        for (int k = 0; k < nkeys; k++)
            qc_params_set(&x.params, src[k]->key[idx[k]], src[k]->vals[idx[k]][at[k]]);
        int keep = 1;
        for (int i = 0; i < c->nconstraints && keep; i++) {
            int64_t v;
            if (qc_eval(c->constraints[i], &x.params, &v, err, errlen)) {
                char msg[512];
                snprintf(msg, sizeof msg, "%s: key 'constraints[%d]': %s", c->path, i, err);
                snprintf(err, errlen, "%s", msg);
                return 2;
            }
            keep = v != 0;
        }
        if (keep) {
            qc_instance_name(c, &x.params, x.id);
            x.seed = qc_hash(x.id, seed);
            if (push(inst, n, cap, &x)) {
                snprintf(err, errlen, "out of memory expanding %s", c->name);
                return 2;
            }
        }
        int k = nkeys - 1; /* odometer: the last key varies fastest */
        while (k >= 0 && ++at[k] == src[k]->nvals[idx[k]])
            at[k--] = 0;
        if (k < 0)
            return 0;
    }
}
