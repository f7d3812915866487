/* report_html.h: index.html, the report people look at (report_html.c), and the text filter the
 * report writers share. */
#ifndef QC_REPORT_HTML_H
#define QC_REPORT_HTML_H

#include <stddef.h>

#include "result.h"

/* The self-contained page of n results (malloc'd), or NULL out of memory. */
char *qc_html_report(const qc_run_info *in, const qc_result *r, int n);

/* s (at most cap bytes, NUL or not) as valid UTF-8, invalid sequences as U+FFFD (malloc'd; NULL
 * out of memory): report.c's filter, for every text a report carries. */
char *qc_report_text(const char *s, size_t cap);

#endif
