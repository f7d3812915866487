/* result.c: the verdict words of DESIGN.md "Concepts", shared by the console lines and the reports. */
#include "result.h"

static const char *const verdict_names[QC_VERDICT_COUNT] = {
    [QC_PASS] = "PASS", [QC_FAIL] = "FAIL", [QC_MISTRUSTED] = "MISTRUSTED", [QC_SKIPPED] = "SKIPPED",
    [QC_ERROR] = "ERROR",
};

const char *qc_verdict_name(qc_verdict v) { return (unsigned)v < QC_VERDICT_COUNT ? verdict_names[v] : "?"; }
