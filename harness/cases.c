/* cases.c: loading and validating case files with cJSON, and expanding them into instances.
 * Every validation error names the file, the key and the bad value. */
#include "cases.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compare.h"
#include "qc_checked.h"
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
    snprintf(x->err, x->errlen, "%s: key '%s': %s%s%.200s%s", x->path, key, what, value ? " '" : "", value ? value : "",
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

/* ---- the schema (docs/cases.md): every key known, once, of the documented type ---- */

static const char *const top_keys[] = {"name", "op", "doc", "tiers", "params", "tier_params", "constraints",
                                       "inputs", "compare", "vectors", NULL};
static const char *const input_keys[] = {"shape", "storage", "fill", "scale", "dtype", "edges", "edges_format",
                                         "zero_blocks", "at", "bits", "min", "max", "finite", "edges_at",
                                         "gain", "gain_block", "boundaries", NULL};
static const char *const compare_keys[] = {"rule", "why", "block", "midpoint_input", "degenerate_ok", "class",
                                           "budget", "coupled_to", NULL};

static void key_path(char *out, size_t len, const char *where, const char *key)
{
    snprintf(out, len, "%s%s%s", where ? where : "", where ? "." : "", key ? key : "");
}

static void known_list(const char *const *known, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (; *known && at < len; known++)
        at += (size_t)snprintf(out + at, len - at, "%s%s", at ? " " : "", *known);
}

/* Each member of obj once; with known, each one of them (a misspelt "parms" is an error, not a
 * silently ignored key). */
static int check_members(ctx *x, const cJSON *obj, const char *where, const char *const *known)
{
    for (const cJSON *a = obj->child; a; a = a->next) {
        char full[160], names[256];
        key_path(full, sizeof full, where, a->string);
        for (const cJSON *b = obj->child; b != a; b = b->next)
            if (!strcmp(a->string, b->string))
                return bad(x, full, "appears twice (JSON objects take each key once)", NULL);
        if (known && !in_list(a->string, known)) {
            known_list(known, names, sizeof names);
            snprintf(full + strlen(full), sizeof full - strlen(full), "' (known here: %.120s", names);
            snprintf(x->err, x->errlen, "%s: unknown key '%s)", x->path, full);
            return 2;
        }
    }
    return 0;
}

/* An integer-valued JSON number that double holds exactly: |v| < 2^53 (a larger literal may
 * already have been rounded by the parser; write such values as strings). */
static int exact_int(const cJSON *v, int64_t *out)
{
    return cJSON_IsNumber(v) && v->valuedouble > -0x1p53 && v->valuedouble < 0x1p53 &&
                   qc_double_to_i64(v->valuedouble, out) == 0
               ? 0
               : -1;
}

/* A JSON scalar as the string the params carry: strings as they are, integers without a
 * fraction, other finite numbers with %.17g, booleans as 0/1. -1 for anything else (an object,
 * an array, null, an integer too large for a double to hold exactly), -2 when it does not fit. */
static int scalar_text(const cJSON *v, char *out, size_t len)
{
    int64_t i;
    int n;
    if (cJSON_IsString(v))
        n = snprintf(out, len, "%s", v->valuestring);
    else if (cJSON_IsBool(v))
        n = snprintf(out, len, "%d", cJSON_IsTrue(v));
    else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble))
        n = exact_int(v, &i) ? -1 : snprintf(out, len, "%lld", (long long)i);
    else if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
        n = snprintf(out, len, "%.17g", v->valuedouble);
    else
        return -1;
    return n < 0 ? -1 : (size_t)n >= len ? -2 : 0;
}

/* A param key or value goes into ids, --params lists ("k=v,k=v") and REPRO lines: no commas, no
 * control characters, and no '=' in a key. */
static int param_text_ok(const char *s, int is_key)
{
    for (; *s; s++)
        if (*s == ',' || (unsigned char)*s < 0x20 || (is_key && *s == '='))
            return 0;
    return 1;
}

static int add_value(ctx *x, qc_sweep *s, int k, const char *key, const char *text)
{
    if (s->nvals[k] >= QC_MAX_VALUES)
        return bad(x, key, "more than 64 values in one sweep", NULL);
    if (!param_text_ok(text, 0))
        return bad(x, key, "a value may hold no ',' and no control character", text);
    snprintf(s->vals[k][s->nvals[k]++], QC_PARAM_LEN, "%s", text);
    return 0;
}

/* {"range": [start, stop, step]} (stop exclusive, step >= 1) or {"pow2": [lo, hi]} (lo, 2 lo, ...
 * up to hi, lo >= 1): integer bounds, and the count of values worked out before any is made, in
 * arithmetic that cannot overflow (near 2^63 included). */
static int parse_generated(ctx *x, qc_sweep *s, int k, const cJSON *v, const char *key)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(v, "range"), *p2 = cJSON_GetObjectItemCaseSensitive(v, "pow2");
    const cJSON *a = r ? r : p2;
    int na = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
    if (!a || (r && p2) || cJSON_GetArraySize(v) != 1 || na < 2 || na > (r ? 3 : 2))
        return bad(x, key, "an object must be {\"range\": [start, stop, step]} or {\"pow2\": [lo, hi]}", NULL);
    int64_t b[3] = {0, 0, 1};
    for (int i = 0; i < na; i++)
        if (exact_int(cJSON_GetArrayItem(a, i), &b[i]))
            return bad(x, key, "range and pow2 bounds must be integers of magnitude below 2^53", NULL);
    int64_t lo = b[0], hi = b[1], step = b[2];
    char text[QC_PARAM_LEN];
    if (step <= 0 || (p2 && lo <= 0))
        return bad(x, key, "range step and pow2 bounds must be positive", NULL);
    uint64_t count = 0;
    if (r && hi > lo)
        count = ((uint64_t)hi - (uint64_t)lo - 1) / (uint64_t)step + 1;
    for (int64_t i = lo; p2 && i <= hi; i = i > hi / 2 ? hi + 1 : 2 * i) /* never doubles past hi */
        count++;
    if (count == 0)
        return bad(x, key, "the range is empty", NULL);
    if (count > QC_MAX_VALUES) {
        snprintf(text, sizeof text, "%llu", (unsigned long long)count);
        return bad(x, key, "more than 64 values in one sweep: the range or pow2 makes", text);
    }
    for (uint64_t j = 0, pw = (uint64_t)lo; j < count; j++, pw *= 2) { /* lo + j * step <= hi - 1 here */
        snprintf(text, sizeof text, "%lld", r ? (long long)(lo + (int64_t)j * step) : (long long)pw);
        if (add_value(x, s, k, key, text))
            return 2;
    }
    return 0;
}

/* "key": scalar | [scalars] | {"range": [start, stop, step]} (stop exclusive) | {"pow2": [lo, hi]} */
static int parse_sweep_value(ctx *x, qc_sweep *s, const cJSON *v, const char *where)
{
    char key[96];
    key_path(key, sizeof key, where, v->string);
    if (s->n >= QC_MAX_PARAMS)
        return bad(x, key, "too many parameters (at most 24)", NULL);
    if (!v->string[0] || strlen(v->string) >= sizeof s->key[0] || !param_text_ok(v->string, 1))
        return bad(x, key, "a parameter name has 1 to 31 characters, no ',', '=' or control character", NULL);
    int k = s->n++;
    snprintf(s->key[k], sizeof s->key[k], "%s", v->string);
    s->nvals[k] = 0;
    char text[QC_PARAM_LEN];
    if (cJSON_IsArray(v)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, v) {
            int rc = scalar_text(e, text, sizeof text);
            if (rc)
                return bad(x, key, rc == -2 ? "a value is longer than 95 characters"
                                                  : "list entries must be strings, finite numbers (integers below "
                                                    "2^53; larger ones as strings) or booleans", NULL);
            if (add_value(x, s, k, key, text))
                return 2;
        }
        if (s->nvals[k] == 0)
            return bad(x, key, "an empty list sweeps nothing", NULL);
        return 0;
    }
    if (cJSON_IsObject(v))
        return parse_generated(x, s, k, v, key);
    int rc = scalar_text(v, text, sizeof text);
    if (rc)
        return bad(x, key, rc == -2 ? "the value is longer than 95 characters"
                                          : "must be a string, a boolean, a finite number (an integer below 2^53 in "
                                            "magnitude; write larger ones as strings), a list or a range object",
                   NULL);
    return add_value(x, s, k, key, text);
}

static int parse_sweep(ctx *x, const cJSON *obj, qc_sweep *s, const char *key)
{
    memset(s, 0, sizeof *s);
    if (!obj)
        return 0;
    if (!cJSON_IsObject(obj))
        return bad(x, key, "must be an object of parameter sweeps", NULL);
    if (check_members(x, obj, key, NULL))
        return 2;
    const cJSON *v;
    cJSON_ArrayForEach(v, obj) if (parse_sweep_value(x, s, v, key)) return 2;
    return 0;
}

/* F_COUNT: a number given as a JSON number is a whole number >= 0 (a dimension, a code, a bit
 * count: an expression string is checked when an instance evaluates it) */
enum { F_STRING = 1, F_NUMBER = 2, F_REQUIRED = 4, F_COUNT = 8 };

/* A field of the given JSON types (F_NUMBER: an expression may be written as a plain number),
 * copied whole: a value longer than the field is an error, never cut short. */
/* A JSON number that is a whole number >= 0 (below 2^53: scalar_text refuses the rest). */
static int count_number(const cJSON *v) { return v->valuedouble >= 0 && v->valuedouble == floor(v->valuedouble); }

static int field(ctx *x, const cJSON *obj, const char *key, char *out, size_t len, int flags, const char *ctxkey)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    char full[128];
    key_path(full, sizeof full, ctxkey, key);
    if (!v)
        return (flags & F_REQUIRED) ? bad(x, full, "is required", NULL) : 0;
    int ok = (cJSON_IsString(v) && (flags & F_STRING)) || (cJSON_IsNumber(v) && (flags & F_NUMBER));
    if (ok && cJSON_IsNumber(v) && (flags & F_COUNT) && !count_number(v))
        return bad(x, full, "must be a whole number >= 0 (or an expression string)", NULL);
    int rc = ok ? scalar_text(v, out, len) : -1;
    if (rc == -2) {
        char max[48];
        snprintf(max, sizeof max, "is longer than %zu characters", len - 1);
        return bad(x, full, max, NULL);
    }
    if (rc)
        return bad(x, full, (flags & F_NUMBER) ? "must be a string or a finite number (an integer below 2^53)"
                                               : "must be a string", NULL);
    return 0;
}

/* Object and array members: absent is allowed where optional, another JSON type never is. */
static int typed(ctx *x, const cJSON *v, const char *key, int want_object)
{
    if (v && !(want_object ? cJSON_IsObject(v) : cJSON_IsArray(v)))
        return bad(x, key, want_object ? "must be an object" : "must be a list", NULL);
    return 0;
}

/* A name that becomes a file or dataset name (case names: golden folders; tensor names: HDF5
 * datasets): letters, digits, '_', '-', '.', not starting with '.'. */
static int name_ok(const char *s, size_t cap)
{
    size_t n = strlen(s);
    if (n == 0 || n >= cap || s[0] == '.')
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_-.", *s))
            return 0;
    return 1;
}

static int parse_input(ctx *x, const cJSON *v, const qc_sweep *c_params, qc_input_spec *in)
{
    char key[96];
    memset(in, 0, sizeof *in);
    snprintf(key, sizeof key, "inputs.%.80s", v->string);
    if (!name_ok(v->string, sizeof in->name))
        return bad(x, key, "an input name has 1 to 47 letters, digits, '_', '-' or '.' (not first)", v->string);
    snprintf(in->name, sizeof in->name, "%s", v->string);
    if (typed(x, v, key, 1) || check_members(x, v, key, input_keys))
        return 2;
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(v, "shape");
    if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) < 1 || cJSON_GetArraySize(shape) > QC_MAX_DIMS)
        return bad(x, key, "needs \"shape\": a list of 1 to 4 dimension expressions", NULL);
    const cJSON *d;
    cJSON_ArrayForEach(d, shape) {
        if ((!cJSON_IsString(d) && !cJSON_IsNumber(d)) || (cJSON_IsNumber(d) && !count_number(d)) ||
            scalar_text(d, in->shape[in->ndim], sizeof in->shape[0]))
            return bad(x, key, "shape entries must be expressions (strings of at most 63 characters) or whole "
                               "numbers from 0 to 2^53", NULL);
        in->ndim++;
    }
    char storage[16] = "f32";
    snprintf(in->fill, sizeof in->fill, "normal");
    if (field(x, v, "storage", storage, sizeof storage, F_STRING, key) ||
        field(x, v, "fill", in->fill, sizeof in->fill, F_STRING, key) ||
        field(x, v, "scale", in->scale, sizeof in->scale, F_STRING | F_NUMBER, key) ||
        field(x, v, "dtype", in->dtype, sizeof in->dtype, F_STRING, key) ||
        field(x, v, "edges_format", in->edges_format, sizeof in->edges_format, F_STRING, key) ||
        field(x, v, "zero_blocks", in->zero_blocks, sizeof in->zero_blocks, F_STRING | F_NUMBER | F_COUNT, key) ||
        field(x, v, "at", in->at, sizeof in->at, F_STRING | F_NUMBER, key) ||
        field(x, v, "bits", in->bits, sizeof in->bits, F_STRING | F_NUMBER | F_COUNT, key) ||
        field(x, v, "min", in->min, sizeof in->min, F_STRING | F_NUMBER | F_COUNT, key) ||
        field(x, v, "max", in->max, sizeof in->max, F_STRING | F_NUMBER | F_COUNT, key) ||
        field(x, v, "edges_at", in->edges_at, sizeof in->edges_at, F_STRING, key) ||
        field(x, v, "finite", in->finite, sizeof in->finite, F_STRING | F_NUMBER | F_COUNT, key) ||
        field(x, v, "gain", in->gain, sizeof in->gain, F_STRING | F_NUMBER | F_COUNT, key) ||
        field(x, v, "gain_block", in->gain_block, sizeof in->gain_block, F_STRING | F_NUMBER | F_COUNT, key) ||
        field(x, v, "boundaries", in->boundaries, sizeof in->boundaries, F_STRING, key))
        return 2;
    if (in->boundaries[0] && strcmp(in->boundaries, "quant"))
        return bad(x, key, "unknown boundaries (known: quant, the scale blocks of the instance's quant job)",
                   in->boundaries);
    const cJSON *bits = cJSON_GetObjectItemCaseSensitive(v, "bits");
    if (cJSON_IsNumber(bits) && (bits->valuedouble < 1 || bits->valuedouble > 32)) /* fill_codes' widths */
        return bad(x, key, "\"bits\" must be 1 to 32", in->bits);
    if (!in->min[0] != !in->max[0])
        return bad(x, key, "\"min\" and \"max\" (a range of codes) go together", NULL);
    if (!in->gain[0] != !in->gain_block[0])
        return bad(x, key, "\"gain\" and \"gain_block\" (powers of two over square tiles) go together", NULL);
    if (in->edges_at[0] && strcmp(in->edges_at, "end"))
        return bad(x, key, "unknown edges_at (known: end, the edges in the last elements)", in->edges_at);
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
                   "unknown fill (known: normal uniform loguniform outliers integers bits onehot zeros iota codes, or a "
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
                           "unknown edge (known: nan inf zero subnormal max above_max midpoints tiny huge lowest)",
                           cJSON_IsString(e) ? e->valuestring : "(not a string)");
            if (in->nedges >= QC_MAX_EDGES)
                return bad(x, key, "too many edges", NULL);
            snprintf(in->edges[in->nedges++], sizeof in->edges[0], "%s", e->valuestring);
        }
    }
    return 0;
}

/* "budget": a JSON number in [0, 1] ("nan", a string or 1e999 is refused, not read as 1). */
static int parse_budget(ctx *x, const cJSON *v, const char *key, qc_compare_spec *cmp)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(v, "budget");
    char full[128];
    key_path(full, sizeof full, key, "budget");
    if (!b)
        return bad(x, full, "is required", NULL);
    if (!cJSON_IsNumber(b) || !isfinite(b->valuedouble) || b->valuedouble < 0 || b->valuedouble > 1)
        return bad(x, full, "must be a number in [0, 1] (a fraction of the elements)",
                   cJSON_IsString(b) ? b->valuestring : NULL);
    cmp->budget = b->valuedouble;
    return 0;
}

static int parse_compare(ctx *x, const cJSON *v, qc_compare_spec *cmp)
{
    char key[96];
    memset(cmp, 0, sizeof *cmp);
    snprintf(key, sizeof key, "compare.%.80s", v->string);
    if (!name_ok(v->string, sizeof cmp->output))
        return bad(x, key, "an output name has 1 to 47 letters, digits, '_', '-' or '.' (not first)", v->string);
    snprintf(cmp->output, sizeof cmp->output, "%s", v->string);
    snprintf(cmp->rule, sizeof cmp->rule, "bitexact");
    if (typed(x, v, key, 1) || check_members(x, v, key, compare_keys) ||
        field(x, v, "rule", cmp->rule, sizeof cmp->rule, F_STRING, key) ||
        field(x, v, "why", cmp->why, sizeof cmp->why, F_STRING | F_REQUIRED, key) ||
        field(x, v, "block", cmp->block, sizeof cmp->block, F_STRING | F_NUMBER, key) ||
        field(x, v, "midpoint_input", cmp->midpoint_input, sizeof cmp->midpoint_input, F_STRING, key))
        return 2;
    if (strcmp(cmp->rule, "bitexact") && strcmp(cmp->rule, "budget") && strcmp(cmp->rule, "bound"))
        return bad(x, key, "unknown rule (known: bitexact, budget, bound)", cmp->rule);
    const cJSON *dok = cJSON_GetObjectItemCaseSensitive(v, "degenerate_ok");
    if (dok && !cJSON_IsBool(dok))
        return bad(x, key, "degenerate_ok must be true or false", NULL);
    cmp->degenerate_ok = cJSON_IsTrue(dok);
    cmp->budget_class = -1;
    if (strcmp(cmp->rule, "budget") != 0) {
        if (cJSON_GetObjectItemCaseSensitive(v, "class") || cJSON_GetObjectItemCaseSensitive(v, "budget") ||
            cJSON_GetObjectItemCaseSensitive(v, "coupled_to"))
            return bad(x, key, "class, budget and coupled_to belong to rule budget", cmp->rule);
        return 0;
    }
    char cls[32] = "";
    if (field(x, v, "class", cls, sizeof cls, F_STRING | F_REQUIRED, key) || parse_budget(x, v, key, cmp) ||
        field(x, v, "coupled_to", cmp->coupled_to, sizeof cmp->coupled_to, F_STRING, key))
        return 2;
    for (int i = 0; i < QC_MM_COUNT; i++)
        if (!strcmp(cls, qc_mismatch_class_name((qc_mismatch_class)i)))
            cmp->budget_class = i;
    if (cmp->budget_class < 0 && strcmp(cls, "scale_coupled"))
        return bad(x, key, "unknown budget class (known: tie_flip one_ulp nan_policy zero_sign wrong_block padding other)", cls);
    if (cmp->coupled_to[0] && !cmp->block[0])
        return bad(x, key, "coupled_to needs \"block\": the block length that one scale covers", NULL);
    return 0;
}

/* "vectors" names a table inside the cases folder: a relative path without '..' components
 * (a case file must not read /etc/passwd or a file beside the repository). */
static int vectors_path_ok(const char *file)
{
    if (!file[0] || file[0] == '/')
        return 0;
    for (const char *s = file; *s; s = strchr(s, '/') ? strchr(s, '/') + 1 : s + strlen(s))
        if (!strncmp(s, "..", 2) && (s[2] == '/' || s[2] == '\0'))
            return 0;
    return 1;
}

/* One hex field of a vector table: 1 to 8 hex digits, nothing else. */
static int parse_hex32(const char *s, uint32_t *out)
{
    size_t n = strlen(s);
    if (n == 0 || n > 8 || strspn(s, "0123456789abcdefABCDEF") != n)
        return -1;
    *out = (uint32_t)strtoul(s, NULL, 16);
    return 0;
}

static int vector_line(ctx *x, const char *path, int lineno, const char *line, qc_vector *v)
{
    char in[16], ex[16];
    if (sscanf(line, "%15[^\t]\t%95[^\t]\t%15[^\t]\t%15[^\t]\t%127[^\n]", v->format, v->policy, in, ex,
               v->source) < 4) {
        snprintf(x->err, x->errlen, "%s:%d: expected format, policy, input hex, expected hex, source", path, lineno);
        return 2;
    }
    if (parse_hex32(in, &v->input) || parse_hex32(ex, &v->expected)) {
        snprintf(x->err, x->errlen, "%s:%d: bad hex value '%s' or '%s' (1 to 8 hex digits)", path, lineno, in, ex);
        return 2;
    }
    return 0;
}

static int load_vectors(ctx *x, const char *dir, const char *file, qc_case *c)
{
    char path[600];
    if (!vectors_path_ok(file))
        return bad(x, "vectors", "must name a file inside the cases folder (a relative path without '..')", file);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    struct stat st;
    FILE *f = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "r") : NULL;
    if (!f)
        return bad(x, "vectors", "cannot open the vector table (a regular file)", path);
    c->vectors = calloc(QC_MAX_VECTORS, sizeof *c->vectors);
    char line[512];
    int lineno = 0, rc = c->vectors ? 0 : bad(x, "vectors", "out of memory", NULL);
    while (!rc && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(x->err, x->errlen, "%s:%d: line longer than %zu characters", path, lineno, sizeof line - 2);
            rc = 2;
        } else if (line[0] == '#' || line[0] == '\n') {
            continue;
        } else if (c->nvectors >= QC_MAX_VECTORS) {
            snprintf(x->err, x->errlen, "%s:%d: more than %d vectors", path, lineno, QC_MAX_VECTORS);
            rc = 2;
        } else {
            rc = vector_line(x, path, lineno, line, &c->vectors[c->nvectors]);
            c->nvectors += !rc;
        }
    }
    fclose(f);
    return rc;
}

static int parse_tiers(ctx *x, const cJSON *root, qc_case *c)
{
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
    return 0;
}

/* params, tier_params (quick, full, bringup only) and constraints. A tier's own keys count
 * towards the 24 parameters an instance may have. */
static int parse_sweeps(ctx *x, const cJSON *root, qc_case *c)
{
    static const char *const tier_keys[] = {"quick", "full", "bringup", NULL};
    if (parse_sweep(x, cJSON_GetObjectItemCaseSensitive(root, "params"), &c->params, "params"))
        return 2;
    const cJSON *tp = cJSON_GetObjectItemCaseSensitive(root, "tier_params");
    if (typed(x, tp, "tier_params", 1) || (tp && check_members(x, tp, "tier_params", tier_keys)))
        return 2;
    for (int i = 0; i < 3; i++) {
        char key[32];
        snprintf(key, sizeof key, "tier_params.%s", tier_names[i]);
        if (parse_sweep(x, tp ? cJSON_GetObjectItemCaseSensitive(tp, tier_names[i]) : NULL, &c->tier_params[i], key))
            return 2;
        int n = c->params.n;
        for (int j = 0; j < c->tier_params[i].n; j++) {
            int known = 0;
            for (int k = 0; k < c->params.n; k++)
                known |= !strcmp(c->tier_params[i].key[j], c->params.key[k]);
            n += !known;
        }
        if (n > QC_MAX_PARAMS)
            return bad(x, key, "with params, more than 24 parameters", NULL);
    }
    const cJSON *cons = cJSON_GetObjectItemCaseSensitive(root, "constraints"), *e;
    if (typed(x, cons, "constraints", 0))
        return 2;
    cJSON_ArrayForEach(e, cons) {
        if (!cJSON_IsString(e) || c->nconstraints >= QC_MAX_CONSTRAINTS ||
            strlen(e->valuestring) >= sizeof c->constraints[0])
            return bad(x, "constraints", "must be a list of at most 8 expression strings of at most 159 characters",
                       NULL);
        snprintf(c->constraints[c->nconstraints++], sizeof c->constraints[0], "%s", e->valuestring);
    }
    return 0;
}

/* One expression of the case: its syntax and names (qc_expr_check), at load. */
static int expr_ok(ctx *x, const qc_params *names, const char *key, const char *expr)
{
    char why[400];
    return expr[0] && qc_expr_check(expr, names, why, sizeof why) ? bad(x, key, why, NULL) : 0;
}

/* Every expression of a generated case, checked when the file is loaded: a typo in a constraint or
 * a shape is an error of the file, not of whichever instance first evaluates it. The names are the
 * case's parameters (its base sweep and every tier's). */
static int check_expressions(ctx *x, const qc_case *c)
{
    qc_params names = {0};
    const qc_sweep *sweeps[4] = {&c->params, &c->tier_params[0], &c->tier_params[1], &c->tier_params[2]};
    for (int t = 0; t < 4; t++)
        for (int k = 0; k < sweeps[t]->n; k++)
            if (!qc_param(&names, sweeps[t]->key[k]) && qc_params_set(&names, sweeps[t]->key[k], "1"))
                return bad(x, "params", "more distinct parameters than fit an instance", sweeps[t]->key[k]);
    char key[160];
    for (int i = 0; i < c->nconstraints; i++) {
        snprintf(key, sizeof key, "constraints[%d]", i);
        if (expr_ok(x, &names, key, c->constraints[i]))
            return 2;
    }
    for (int i = 0; i < c->ninputs; i++) {
        const qc_input_spec *in = &c->inputs[i];
        const struct {
            const char *name, *expr;
        } fields[] = {{"zero_blocks", in->zero_blocks}, {"at", in->at},     {"bits", in->bits},
                      {"min", in->min},                 {"max", in->max},   {"finite", in->finite},
                      {"gain", in->gain},               {"gain_block", in->gain_block}};
        for (int d = 0; d < in->ndim; d++) {
            snprintf(key, sizeof key, "inputs.%s.shape[%d]", in->name, d);
            if (expr_ok(x, &names, key, in->shape[d]))
                return 2;
        }
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
            snprintf(key, sizeof key, "inputs.%s.%s", in->name, fields[f].name);
            if (expr_ok(x, &names, key, fields[f].expr))
                return 2;
        }
    }
    for (int i = 0; i < c->ncompares; i++) {
        snprintf(key, sizeof key, "compare.%s.block", c->compares[i].output);
        if (expr_ok(x, &names, key, c->compares[i].block))
            return 2;
    }
    return 0;
}

static int parse_case(ctx *x, const cJSON *root, const char *dir, qc_case *c)
{
    if (!cJSON_IsObject(root))
        return bad(x, "(top level)", "must be a JSON object", NULL);
    if (check_members(x, root, NULL, top_keys) ||
        field(x, root, "name", c->name, sizeof c->name, F_STRING | F_REQUIRED, NULL) ||
        field(x, root, "op", c->op, sizeof c->op, F_STRING | F_REQUIRED, NULL) ||
        field(x, root, "doc", c->doc, sizeof c->doc, F_STRING | F_REQUIRED, NULL))
        return 2;
    if (!name_ok(c->name, sizeof c->name))
        return bad(x, "name", "a case name has 1 to 63 letters, digits, '_', '-' or '.' (not first): it names "
                              "golden folders", c->name);
    if (!qc_op_find(c->op))
        return bad(x, "op", "unknown op (qcheck list ops)", c->op);
    if (parse_tiers(x, root, c) || parse_sweeps(x, root, c))
        return 2;
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs"), *v;
    if (typed(x, inputs, "inputs", 1) || (inputs && check_members(x, inputs, "inputs", NULL)))
        return 2;
    cJSON_ArrayForEach(v, inputs) {
        if (c->ninputs >= QC_MAX_INPUTS || parse_input(x, v, &c->params, &c->inputs[c->ninputs]))
            return c->ninputs >= QC_MAX_INPUTS ? bad(x, "inputs", "more than 8 inputs", NULL) : 2;
        c->ninputs++;
    }
    const cJSON *cmps = cJSON_GetObjectItemCaseSensitive(root, "compare");
    if (!cJSON_IsObject(cmps) || cJSON_GetArraySize(cmps) == 0)
        return bad(x, "compare", "is required: one rule (with its \"why\") per output", NULL);
    if (check_members(x, cmps, "compare", NULL))
        return 2;
    cJSON_ArrayForEach(v, cmps) {
        if (c->ncompares >= QC_MAX_COMPARES || parse_compare(x, v, &c->compares[c->ncompares]))
            return c->ncompares >= QC_MAX_COMPARES ? bad(x, "compare", "more than 8 outputs", NULL) : 2;
        c->ncompares++;
    }
    char vecfile[128] = "";
    if (field(x, root, "vectors", vecfile, sizeof vecfile, F_STRING, NULL))
        return 2;
    if (vecfile[0] && load_vectors(x, dir, vecfile, c))
        return 2;
    if (!vecfile[0] && c->ninputs == 0)
        return bad(x, "inputs", "is required (or \"vectors\": a table of inputs and expected outputs)", NULL);
    return vecfile[0] ? 0 : check_expressions(x, c); /* a table's params are its columns' */
}

int qc_case_parse(const char *path, const char *dir, const char *text, size_t len, qc_case *c, char *err,
                  size_t errlen)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    ctx x = {path, err, errlen};
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    while (root && end && (size_t)(end - text) < len && isspace((unsigned char)*end))
        end++;
    if (root && end && (size_t)(end - text) < len) { /* text after the object */
        cJSON_Delete(root);
        root = NULL;
    }
    if (!root) {
        int line = 1;
        for (const char *s = text; end && s < end; s++)
            line += *s == '\n';
        size_t at = end && end >= text && (size_t)(end - text) < len ? (size_t)(end - text) : len;
        int shown = (int)(len - at < 20 ? len - at : 20); /* text need not end in a NUL */
        snprintf(err, errlen, "%s:%d: malformed JSON near '%.*s'", path, line, shown, text + at);
        return 2;
    }
    int rc = parse_case(&x, root, dir, c);
    cJSON_Delete(root);
    return rc;
}

/* Case files are small (the largest is a few KB): a bigger one, or a folder, is refused before
 * anything of its claimed size is allocated. */
#define QC_CASE_MAX_BYTES (1 << 20)

int qc_case_load(const char *path, const char *dir, qc_case *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size > QC_CASE_MAX_BYTES) { /* a FIFO would block fopen */
        snprintf(err, errlen, "%s: cannot open%s", path, stat(path, &st) ? "" : " (not a regular file of at most 1 MiB)");
        return 2;
    }
    FILE *f = fopen(path, "rb");
    if (!f || fstat(fileno(f), &st) || st.st_size > QC_CASE_MAX_BYTES) {
        snprintf(err, errlen, "%s: cannot open", path);
        if (f)
            fclose(f);
        return 2;
    }
    size_t size = (size_t)st.st_size;
    char *text = malloc(size + 1);
    size_t got = text ? fread(text, 1, size, f) : 0;
    fclose(f);
    if (!text || got != size) {
        free(text);
        snprintf(err, errlen, "%s: cannot read", path);
        return 2;
    }
    text[size] = '\0';
    if (strlen(text) != size) {
        free(text);
        snprintf(err, errlen, "%s: holds a NUL byte: not a JSON text", path);
        return 2;
    }
    int rc = qc_case_parse(path, dir, text, size, c, err, errlen);
    free(text);
    return rc;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

#define QC_MAX_CASE_FILES 256

/* The sorted NAME.json files of d; 0, or 2 when there are more than QC_MAX_CASE_FILES (never a
 * silent cut) or memory runs out. */
static int case_files(DIR *d, const char *dir, char **names, int *n, char *err, size_t errlen)
{
    struct dirent *e;
    *n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        if (*n >= QC_MAX_CASE_FILES || !(names[*n] = strdup(e->d_name))) {
            snprintf(err, errlen, "%s: more than %d case files, or out of memory", dir, QC_MAX_CASE_FILES);
            return 2;
        }
        (*n)++;
    }
    qsort(names, (size_t)*n, sizeof names[0], by_name);
    return 0;
}

int qc_case_in_list(const char *name, const char *list)
{
    size_t n = strlen(name);
    for (const char *s = list; s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL)
        if (!strncmp(s, name, n) && (s[n] == ',' || s[n] == '\0'))
            return 1;
    return 0;
}

int qc_case_list_known(const qc_case *cases, int n, const char *list, char *err, size_t errlen)
{
    for (const char *s = list; s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL) {
        size_t len = strchr(s, ',') ? (size_t)(strchr(s, ',') - s) : strlen(s);
        int known = 0;
        for (int c = 0; c < n && !known; c++)
            known = strlen(cases[c].name) == len && !strncmp(cases[c].name, s, len);
        if (!known) {
            snprintf(err, errlen, "unknown case '%.*s' (qcheck list cases)", (int)(len < 200 ? len : 200), s);
            return 2;
        }
    }
    return 0;
}

int qc_cases_load_dir(const char *dir, qc_case **cases, int *ncases, char *err, size_t errlen)
{
    *cases = NULL; /* qc_cases_free(*cases, *ncases) is right whatever this returns */
    *ncases = 0;
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cannot open the cases folder '%s': %s (set QCHECK_CASES)", dir, strerror(errno));
        return 2;
    }
    char *names[QC_MAX_CASE_FILES];
    int n = 0;
    int rc = case_files(d, dir, names, &n, err, errlen);
    closedir(d);
    if (!rc && n == 0) {
        snprintf(err, errlen, "the cases folder '%s' holds no case file (NAME.json; set QCHECK_CASES)", dir);
        rc = 2;
    }
    *cases = rc ? NULL : calloc((size_t)(n ? n : 1), sizeof **cases);
    if (!rc && !*cases) {
        snprintf(err, errlen, "out of memory loading %d case files", n);
        rc = 2;
    }
    for (int i = 0; i < n; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (!rc)
            rc = qc_case_load(path, dir, &(*cases)[(*ncases)++], err, errlen);
        for (int j = 0; !rc && j < *ncases - 1; j++) /* one name, one folder of goldens */
            if (!strcmp((*cases)[j].name, (*cases)[*ncases - 1].name)) {
                snprintf(err, errlen, "%s: key 'name': '%s' is also the name of %s", path, (*cases)[j].name,
                         (*cases)[j].path);
                rc = 2;
            }
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
        if (*cap > INT_MAX / 2 / (int)sizeof **inst)
            return -1; /* the count itself would overflow */
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

static uint64_t max_instances = QC_MAX_INSTANCES_DEFAULT;

void qc_cases_set_max_instances(uint64_t n) { max_instances = n; }
uint64_t qc_cases_max_instances(void) { return max_instances; }

/* The product of the sweep's value counts, before one combination is built: a sweep larger than
 * the limit is an error naming it, not gigabytes of instances (64^4 values once took 6.8 GB). */
static int check_count(const qc_case *c, int tier, const qc_sweep *const *src, const int *idx, int nkeys, char *err,
                       size_t errlen)
{
    uint64_t n = 1;
    char dims[256] = "";
    size_t at = 0;
    for (int k = 0; k < nkeys; k++) {
        uint64_t v = (uint64_t)src[k]->nvals[idx[k]];
        n = n > UINT64_MAX / v ? UINT64_MAX : n * v; /* saturates: 64^24 is still "too many" */
        if (v > 1 && at < sizeof dims)
            at += (size_t)snprintf(dims + at, sizeof dims - at, "%s%s %llu", at ? " x " : "", src[k]->key[idx[k]],
                                   (unsigned long long)v);
    }
    if (n <= max_instances)
        return 0;
    snprintf(err, errlen, "%s: tier %s sweeps %llu%s combinations (%s), more than the limit of %llu (--max-instances N "
             "raises it; docs/cases.md \"params\")", c->path, tier == QC_TIER_QUICK ? "quick" : tier == QC_TIER_FULL ? "full" : "bringup",
             (unsigned long long)n, n == UINT64_MAX ? " or more" : "", dims, (unsigned long long)max_instances);
    return 2;
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
    if (check_count(c, tier, src, idx, nkeys, err, errlen))
        return 2;
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
