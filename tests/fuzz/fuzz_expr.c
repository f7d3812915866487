/* fuzz_expr.c: libFuzzer target for the integer expressions of case files (core/params.c
 * qc_eval, qc_expr_check) and the --params syntax (qc_params_parse, qc_params_format). The input
 * is a params list "k=v,k=v", a newline, and an expression over them. An expression that
 * evaluates must pass the load-time check (which leaves values aside): else the check would
 * refuse a case file that runs. */
#include "fuzz_util.h"
#include "params.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char text[4096], err[512], round[4096];
    if (size >= sizeof text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *expr = strchr(text, '\n');
    qc_params p = {0};
    if (expr) {
        *expr++ = '\0';
        if (qc_params_parse(&p, text, err, sizeof err))
            p.n = 0;
    } else {
        expr = text;
    }
    qc_params_format(&p, round, sizeof round);
    int64_t v;
    if (qc_eval(expr, &p, &v, err, sizeof err) == 0 && qc_expr_check(expr, &p, err, sizeof err) != 0)
        __builtin_trap();
    return 0;
}
