/* op_util.c: what every op implementation shares: reading numbers, formats and policies from
 * params, and the storage type of a format's codes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "../registry.h"

int qc_op_param_int(qc_op_call *c, const char *key, int64_t dflt, int64_t lo, int64_t hi, int64_t *out)
{
    const char *v = qc_param(c->params, key);
    char *end;
    *out = v ? strtoll(v, &end, 10) : dflt;
    if ((v && (end == v || *end)) || *out < lo || *out > hi) {
        snprintf(c->err, c->errlen, "param %s=%s: an integer in [%lld, %lld]", key, v ? v : "(missing)",
                 (long long)lo, (long long)hi);
        return 2;
    }
    return 0;
}

int qc_op_param_float(qc_op_call *c, const char *key, float dflt, float *out)
{
    const char *v = qc_param(c->params, key);
    char *end;
    *out = v ? strtof(v, &end) : dflt;
    if (v && (end == v || *end)) {
        snprintf(c->err, c->errlen, "param %s=%s is not a number", key, v);
        return 2;
    }
    return 0;
}

const qc_tensor *qc_op_input_f32(qc_op_call *c, const char *name, int64_t numel)
{
    const qc_tensor *t = qc_set_find((qc_tensor_set *)c->in, name);
    if (!t || t->storage != QC_ST_F32 || qc_tensor_numel(t) != numel) {
        snprintf(c->err, c->errlen, "input %s must be f32 with %lld elements%s", name, (long long)numel,
                 t ? "" : " (missing)");
        return NULL;
    }
    return t;
}

int qc_op_optional_f32(qc_op_call *c, const char *name, int64_t numel, const float **out)
{
    const qc_tensor *t = NULL;
    *out = NULL;
    if (qc_set_find((qc_tensor_set *)c->in, name) && !(t = qc_op_input_f32(c, name, numel)))
        return 2;
    *out = t ? t->data : NULL;
    return 0;
}

int qc_op_add_tensor(qc_op_call *c, const char *name, qc_storage st, const char *dtype, int64_t rows, int64_t cols,
                     const void *data)
{
    int64_t shape[2] = {rows, cols};
    qc_tensor t;
    if (qc_tensor_alloc(&t, name, st, dtype, 2, shape)) {
        snprintf(c->err, c->errlen, "out of memory for %s", name);
        return 2;
    }
    if (data && t.nbytes)
        memcpy(t.data, data, t.nbytes);
    if (!qc_set_add(c->out, &t)) {
        snprintf(c->err, c->errlen, "too many outputs at %s", name);
        qc_tensor_free(&t);
        return 2;
    }
    return 0;
}

qc_storage qc_format_storage(qc_format f)
{
    if (f == QC_F32)
        return QC_ST_F32;
    return qcref_format_bits(f) > 8 ? QC_ST_U16 : QC_ST_U8;
}

int qc_params_get_format(const qc_params *p, const char *key, qc_format *out, char *err, size_t errlen)
{
    const char *v = qc_param(p, key);
    int f = v ? qc_format_from_name(v) : -1;
    if (f < 0) {
        snprintf(err, errlen, v ? "param %s: unknown format '%s'" : "param %s is required", key, v ? v : "");
        return 2;
    }
    *out = (qc_format)f;
    return 0;
}

/* The policy keys of params are exactly the CLI's policy flags, so both go through one parser. */
static const char *const policy_keys[] = {"profile", "overflow", "nan", "nan-code", "ties", "nonan",
                                          "zero-sign", "e8m0", "e8m0-emax", "e8m0-mbits", "e8m0-decode"};

int qc_params_policy(const qc_params *p, qc_format f, qc_cast_policy *out, char *err, size_t errlen)
{
    static char flags[QC_MAX_PARAMS][40];
    char *argv[2 * QC_MAX_PARAMS];
    int argc = 0;
    for (int i = 0; i < p->n; i++)
        for (size_t k = 0; k < sizeof policy_keys / sizeof policy_keys[0]; k++)
            if (strcmp(p->key[i], policy_keys[k]) == 0) {
                snprintf(flags[argc / 2], sizeof flags[0], "--%s", p->key[i]);
                argv[argc] = flags[argc / 2];
                argv[argc + 1] = (char *)p->val[i];
                argc += 2;
            }
    qc_args a;
    qc_error_capture(err, errlen);
    int rc = qc_parse_args(&a, "run", argc, argv, NULL) || qc_policy_from_args(&a, f, out) ||
             qc_check_all_used(&a);
    qc_error_capture(NULL, 0);
    return rc ? 2 : 0;
}
