/* params.c: instance parameters and the integer expression evaluator of case files. */
#include "params.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qc_checked.h"

int qc_params_set(qc_params *p, const char *key, const char *val)
{
    if (strlen(key) >= sizeof p->key[0] || strlen(val) >= sizeof p->val[0])
        return -1; /* never truncated: a cut value would be another value */
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->key[i], key) == 0) {
            snprintf(p->val[i], sizeof p->val[i], "%s", val);
            return 0;
        }
    if (p->n >= QC_MAX_PARAMS)
        return -1;
    snprintf(p->key[p->n], sizeof p->key[0], "%s", key);
    snprintf(p->val[p->n], sizeof p->val[0], "%s", val);
    p->n++;
    return 0;
}

const char *qc_param(const qc_params *p, const char *key)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->key[i], key) == 0)
            return p->val[i];
    return NULL;
}

const char *qc_param_or(const qc_params *p, const char *key, const char *fallback)
{
    const char *v = qc_param(p, key);
    return v ? v : fallback;
}

void qc_params_format(const qc_params *p, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < p->n && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%s=%s", i ? "," : "", p->key[i], p->val[i]);
}

int qc_params_parse(qc_params *p, const char *text, char *err, size_t errlen)
{
    char buf[2048];
    if (strlen(text) >= sizeof buf) {
        snprintf(err, errlen, "parameters '%.40s...' are longer than %zu characters", text, sizeof buf - 1);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL;
    qc_params seen = {0};
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            snprintf(err, errlen, "parameter '%s' is not key=value", tok);
            return -1;
        }
        *eq = '\0';
        if (qc_param(&seen, tok)) { /* k=1,k=2: which one was meant? */
            snprintf(err, errlen, "parameter '%s' given twice", tok);
            return -1;
        }
        if (qc_params_set(&seen, tok, "") || qc_params_set(p, tok, eq + 1)) {
            snprintf(err, errlen, "more than %d parameters", QC_MAX_PARAMS);
            return -1;
        }
    }
    return 0;
}

/* Recursive descent: or -> and -> cmp -> sum -> term -> unary -> atom. */
typedef struct parser {
    const char *s, *expr;
    const qc_params *p;
    char *err;
    size_t errlen;
    int failed;
    int depth;    /* nesting of parentheses, calls and unary operators */
    int names_only; /* qc_expr_check: the syntax and the names; every parameter stands for 1 */
} parser;

/* Deeper nesting is an error, not a stack overflow (no case needs more than a few levels). */
#define QC_EVAL_MAX_DEPTH 64

static void fail(parser *ps, const char *what)
{
    if (!ps->failed)
        snprintf(ps->err, ps->errlen, "in expression '%s' at '%s': %s", ps->expr, ps->s, what);
    ps->failed = 1;
}

static void skip(parser *ps)
{
    while (isspace((unsigned char)*ps->s))
        ps->s++;
}

static int eat(parser *ps, const char *tok)
{
    skip(ps);
    size_t n = strlen(tok);
    if (strncmp(ps->s, tok, n) != 0)
        return 0;
    ps->s += n;
    return 1;
}

static int64_t parse_or(parser *ps);

/* Every operation is exact or an error: a result outside int64_t (INT64_MIN / -1, 2^62 * 4,
 * cdiv near INT64_MAX) fails naming the expression instead of wrapping (undefined behaviour). */
static int64_t checked(parser *ps, int64_t v, const int *overflow)
{
    if (*overflow && ps->names_only)
        return 1;
    if (*overflow)
        fail(ps, "the result does not fit a 64-bit integer");
    return *overflow ? 0 : v;
}

static int64_t call2(parser *ps, const char *fn, int64_t a, int64_t b)
{
    int overflow = 0;
    if (ps->names_only)
        return 1;
    if ((strcmp(fn, "cdiv") == 0 || strcmp(fn, "pad") == 0) && b <= 0) {
        fail(ps, "cdiv/pad need a positive divisor");
        return 0;
    }
    if ((strcmp(fn, "cdiv") == 0 || strcmp(fn, "pad") == 0) && a < 0) {
        fail(ps, "cdiv/pad need a non-negative dividend");
        return 0;
    }
    if (strcmp(fn, "cdiv") == 0)
        return checked(ps, qc_ck_cdiv(a, b, &overflow), &overflow);
    if (strcmp(fn, "pad") == 0)
        return checked(ps, qc_ck_pad(a, b, &overflow), &overflow);
    if (strcmp(fn, "min") == 0)
        return a < b ? a : b;
    return a > b ? a : b;
}

static int64_t parse_atom(parser *ps)
{
    skip(ps);
    if (eat(ps, "(")) {
        int64_t v = parse_or(ps);
        if (!eat(ps, ")"))
            fail(ps, "expected ')'");
        return v;
    }
    if (isdigit((unsigned char)*ps->s)) {
        char *end;
        errno = 0;
        long long v = strtoll(ps->s, &end, 10);
        if (errno == ERANGE)
            fail(ps, "the number does not fit a 64-bit integer");
        ps->s = end;
        return ps->failed ? 0 : v;
    }
    if (isalpha((unsigned char)*ps->s) || *ps->s == '_') {
        char name[32];
        size_t n = 0;
        while ((isalnum((unsigned char)*ps->s) || *ps->s == '_') && n < sizeof name - 1)
            name[n++] = *ps->s++;
        name[n] = '\0';
        if (eat(ps, "(")) {
            if (strcmp(name, "cdiv") && strcmp(name, "pad") && strcmp(name, "min") && strcmp(name, "max")) {
                fail(ps, "unknown function (known: cdiv, pad, min, max)");
                return 0;
            }
            int64_t a = parse_or(ps);
            if (!eat(ps, ","))
                fail(ps, "expected ','");
            int64_t b = parse_or(ps);
            if (!eat(ps, ")"))
                fail(ps, "expected ')'");
            return ps->failed ? 0 : call2(ps, name, a, b);
        }
        const char *v = qc_param(ps->p, name);
        int64_t r = 1;
        if (!v || (!ps->names_only && qc_parse_i64(v, INT64_MIN, INT64_MAX, &r))) {
            char msg[160];
            snprintf(msg, sizeof msg, v ? "parameter '%s' = '%s' is not a 64-bit integer" : "unknown parameter '%s'",
                     name, v ? v : "");
            fail(ps, msg);
        }
        return r;
    }
    fail(ps, "expected a number, a parameter or '('");
    return 0;
}

static int64_t parse_unary(parser *ps)
{
    int overflow = 0;
    if (++ps->depth > QC_EVAL_MAX_DEPTH) {
        fail(ps, "nested too deeply");
        ps->s += strlen(ps->s); /* stop here: nothing after this is read */
        return 0;
    }
    int64_t v;
    if (eat(ps, "-"))
        v = checked(ps, qc_ck_sub(0, parse_unary(ps), &overflow), &overflow);
    else if (eat(ps, "!"))
        v = !parse_unary(ps);
    else
        v = parse_atom(ps);
    ps->depth--;
    return v;
}

static int64_t parse_term(parser *ps)
{
    int64_t v = parse_unary(ps);
    for (;;) {
        int overflow = 0;
        if (eat(ps, "*")) {
            int64_t r = parse_unary(ps);
            v = checked(ps, qc_ck_mul(v, r, &overflow), &overflow);
        } else if (eat(ps, "/") || eat(ps, "%")) {
            char op = ps->s[-1];
            int64_t d = parse_unary(ps);
            if (d == 0 && ps->names_only)
                continue;
            if (d == 0) {
                fail(ps, "division by zero");
                return 0;
            }
            v = checked(ps, op == '/' ? qc_ck_div(v, d, &overflow) : qc_ck_mod(v, d, &overflow), &overflow);
        } else {
            return v;
        }
    }
}

static int64_t parse_sum(parser *ps)
{
    int64_t v = parse_term(ps);
    for (;;) {
        int overflow = 0;
        if (eat(ps, "+")) {
            int64_t r = parse_term(ps);
            v = checked(ps, qc_ck_add(v, r, &overflow), &overflow);
        } else if (eat(ps, "-")) {
            int64_t r = parse_term(ps);
            v = checked(ps, qc_ck_sub(v, r, &overflow), &overflow);
        } else {
            return v;
        }
    }
}

static int64_t parse_cmp(parser *ps)
{
    int64_t a = parse_sum(ps);
    if (eat(ps, "=="))
        return a == parse_sum(ps);
    if (eat(ps, "!="))
        return a != parse_sum(ps);
    if (eat(ps, "<="))
        return a <= parse_sum(ps);
    if (eat(ps, ">="))
        return a >= parse_sum(ps);
    if (eat(ps, "<"))
        return a < parse_sum(ps);
    if (eat(ps, ">"))
        return a > parse_sum(ps);
    return a;
}

static int64_t parse_and(parser *ps)
{
    int64_t v = parse_cmp(ps);
    while (eat(ps, "&&")) {
        int64_t r = parse_cmp(ps);
        v = v && r;
    }
    return v;
}

static int64_t parse_or(parser *ps)
{
    int64_t v = parse_and(ps);
    while (eat(ps, "||")) {
        int64_t r = parse_and(ps);
        v = v || r;
    }
    return v;
}

static int parse_all(parser *ps, int64_t *out)
{
    int64_t v = parse_or(ps);
    skip(ps);
    if (!ps->failed && *ps->s != '\0')
        fail(ps, "unexpected text");
    if (ps->failed)
        return -1;
    *out = v;
    return 0;
}

int qc_eval(const char *expr, const qc_params *p, int64_t *out, char *err, size_t errlen)
{
    parser ps = {expr, expr, p, err, errlen, 0, 0, 0};
    return parse_all(&ps, out);
}

int qc_expr_check(const char *expr, const qc_params *names, char *err, size_t errlen)
{
    parser ps = {expr, expr, names, err, errlen, 0, 0, 1};
    int64_t v;
    return parse_all(&ps, &v);
}
