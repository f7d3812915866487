/* result.c: the verdict words of docs/DESIGN.md "Concepts", shared by the console lines and the reports,
 * and the appending printf of their detail text. */
#include "result.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const verdict_names[QC_VERDICT_COUNT] = {
    [QC_PASS] = "PASS", [QC_FAIL] = "FAIL", [QC_MISTRUSTED] = "MISTRUSTED", [QC_SKIPPED] = "SKIPPED",
    [QC_ERROR] = "ERROR",
};

const char *qc_verdict_name(qc_verdict v) { return (unsigned)v < QC_VERDICT_COUNT ? verdict_names[v] : "?"; }

int qc_nothing_checked(const qc_result *r, int n)
{
    int skipped = 0;
    for (int i = 0; i < n; i++)
        skipped += r[i].verdict == QC_SKIPPED;
    return n > 0 && skipped == n;
}

void qc_backend_tally(const qc_result *r, int n, const char *backend, int *tried, int *failed, int *skipped,
                      int *declined)
{
    *tried = *failed = *skipped = *declined = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(r[i].backend, backend)) {
            ++*tried;
            *failed += r[i].verdict == QC_FAIL;
            *skipped += r[i].verdict == QC_SKIPPED;
            *declined += r[i].verdict == QC_SKIPPED && !strncmp(r[i].figures, "declined:", 9);
        }
}

void qc_appendf(char *buf, size_t len, const char *fmt, ...)
{
    size_t at = strlen(buf);
    if (at + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
}

void qc_detail_seal(char *buf, size_t len)
{
    static const char more[] = "  ... (cut: the rest did not fit the item's report)\n";
    size_t n = strlen(buf);
    if (n + 1 < len || n == 0 || buf[n - 1] == '\n')
        return;
    size_t keep = n > sizeof more ? n - sizeof more : 0;
    while (keep > 0 && buf[keep - 1] != '\n')
        keep--;
    snprintf(buf + keep, len - keep, "%s", more);
}
