/* report_plots.h: a result's plot data (result.h qc_plots) as the "plots" object of its entry in
 * summary.json, and back (report.c writes it, report_read.c reads it for `qcheck report merge`). */
#ifndef QC_REPORT_PLOTS_H
#define QC_REPORT_PLOTS_H

#include <cjson/cJSON.h>

#include "result.h"

/* Adds "plots" to result when p holds any (1), 0 out of memory. */
int qc_plots_to_json(cJSON *result, const qc_plots *p);
/* Reads result's "plots" into p (cleared; absent is fine): 1, or 0 when it is malformed. */
int qc_plots_from_json(const cJSON *result, qc_plots *p);

#endif
