/* params.h: the parameters of one case instance (an ordered key=value list, as the sweep made
 * it) and the small integer expressions that case files use for shapes and constraints. */
#ifndef QC_PARAMS_H
#define QC_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#define QC_MAX_PARAMS 24
#define QC_PARAM_LEN 96

typedef struct qc_params {
    int n;
    char key[QC_MAX_PARAMS][32];
    char val[QC_MAX_PARAMS][QC_PARAM_LEN];
} qc_params;

int qc_params_set(qc_params *p, const char *key, const char *val); /* -1 when full or too long */
const char *qc_param(const qc_params *p, const char *key);         /* NULL when absent */
const char *qc_param_or(const qc_params *p, const char *key, const char *fallback);

/* "k=v,k=v" in insertion order: the instance id suffix and the --params syntax. */
void qc_params_format(const qc_params *p, char *out, size_t len);
int qc_params_parse(qc_params *p, const char *text, char *err, size_t errlen);

/* Evaluates an integer expression over the params: integers, parameter names, + - * / %,
 * comparisons, && || !, parentheses, and cdiv(a,b), pad(a,b), min(a,b), max(a,b).
 * Returns 0 and *out, or -1 with err naming what is wrong. */
int qc_eval(const char *expr, const qc_params *p, int64_t *out, char *err, size_t errlen);

/* The syntax of expr and its names, without values: 0, or -1 with err naming the first unknown
 * parameter (one not among names' keys) or syntax error. What only values decide (a division by
 * zero, an overflow, a value that is no integer) is left to qc_eval. */
int qc_expr_check(const char *expr, const qc_params *names, char *err, size_t errlen);

#endif
