/* report.h: the report files of `qcheck run --report DIR` (docs/spec/cli.md "Suite commands"). */
#ifndef QC_REPORT_H
#define QC_REPORT_H

#include <stddef.h>

#include "result.h"

/* Writes DIR/summary.json, DIR/junit.xml and DIR/summary.md for n results, creating DIR (and its
 * parents) when missing. Each file is written to a temporary file in DIR and renamed, so a reader
 * never sees half a report. Text is made valid UTF-8 (invalid bytes become U+FFFD) and, in XML,
 * characters XML 1.0 cannot carry become U+FFFD too. Returns 0, or 2 with err naming the file. */
int qc_report_write(const char *dir, const qc_run_info *info, const qc_result *results, int n,
                    char *err, size_t errlen);

/* A report read back (report_read.c): its run info, coverage lines and results (owned). */
typedef struct qc_report_data {
    qc_run_info info;
    qc_coverage_line *coverage;
    int ncoverage;
    qc_result *results;
    int n;
} qc_report_data;

/* Reads DIR/summary.json. 0, or 2 with err naming the file and what is wrong with it. */
int qc_report_read(const char *dir, qc_report_data *d, char *err, size_t errlen);
void qc_report_data_free(qc_report_data *d);

#endif
