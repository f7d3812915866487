/* coverage.c: the boundary classes the quant instances reach, per recipe x profile (coverage.h). */
#include "coverage.h"

#include <stdio.h>
#include <string.h>

#include "generate.h"
#include "result.h"
#include "runner.h"

static qc_coverage_row *row_of(const qc_params *p, qc_coverage_row *rows, int *n, int cap)
{
    char key[96];
    snprintf(key, sizeof key, "%s %s", qc_param_or(p, "recipe", "?"), qc_param_or(p, "profile", "(default)"));
    for (int i = 0; i < *n; i++)
        if (!strcmp(rows[i].key, key))
            return &rows[i];
    if (*n == cap)
        return NULL;
    qc_coverage_row *r = &rows[(*n)++];
    memset(r, 0, sizeof *r);
    snprintf(r->key, sizeof r->key, "%s", key);
    r->need = qc_quant_coverage_required(p);
    return r;
}

int qc_coverage_add(const qc_instance *inst, qc_coverage_row *rows, int *n, int cap, char *err, size_t errlen)
{
    qc_tensor_set inputs = {0}, expected = {0};
    const qc_tensor *x;
    unsigned hit = 0;
    int rc = qc_instance_expected(inst, 0, &inputs, &expected, err, errlen);
    if (!rc && !(x = qc_set_find(&inputs, "x"))) {
        snprintf(err, errlen, "a quant instance without the input x");
        rc = 2;
    }
    if (!rc)
        rc = qc_quant_coverage(&inst->params, x->data, qc_tensor_numel(x), &hit, err, errlen);
    qc_set_free(&inputs);
    qc_set_free(&expected);
    if (rc)
        return 2;
    qc_coverage_row *r = row_of(&inst->params, rows, n, cap);
    if (!r) {
        snprintf(err, errlen, "more than %d recipe x profile rows", cap);
        return 2;
    }
    r->hit |= hit;
    r->instances++;
    return 0;
}

int qc_coverage_line_cmp(const void *a, const void *b)
{
    return strcmp(((const qc_coverage_line *)a)->key, ((const qc_coverage_line *)b)->key);
}
