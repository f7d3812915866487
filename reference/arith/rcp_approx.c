/* rcp_approx.c: the host entry points of the arithmetic helpers (arith.h). The reciprocal's
 * table is generated at build time from rcp_table.tar.xz (rcp_table_gen.c). */
#include <string.h>

#include "arith.h"

float qcref_rcp_approx_ftz(float x) { return qcref_rcp_approx_ftz_with(x, qcref_rcp_table()); }

float qcref_div(float a, float b, qc_div_mode mode)
{
    switch (mode) {
    case QC_DIV_FAST: return qcref_fl32_mul_ftz(a, qcref_rcp_approx_ftz(b));
    case QC_DIV_FULL: return qcref_fl32_mul(a, qcref_rcp_approx_ftz(b));
    default:          return qcref_fl32_div(a, b);
    }
}

float qcref_recip(float b, qc_div_mode mode)
{
    return mode == QC_DIV_IEEE ? qcref_fl32_div(1.0f, b) : qcref_rcp_approx_ftz(b);
}

static const char *const div_names[] = {"ieee", "fast", "full"};

const char *qc_div_mode_name(int m) { return m >= 0 && m < 3 ? div_names[m] : "?"; }

int qc_div_mode_from_name(const char *s)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(div_names[i], s) == 0)
            return i;
    return -1;
}
