/* coverage.h: which boundary classes (generate.h QC_COV_*) the quant instances of a run reach,
 * per recipe x profile: `qcheck coverage` prints it, `qcheck run --report` writes it. */
#ifndef QC_COVERAGE_H
#define QC_COVERAGE_H

#include <stddef.h>

#include "cases.h"

typedef struct qc_coverage_row {
    char key[96];       /* "recipe profile" */
    unsigned hit, need; /* bit QC_COV_k: reached; required (qc_quant_coverage_required) */
    int instances;
} qc_coverage_row;

/* Adds the classes quant instance inst reaches to its row of rows[*n] (a new row when its recipe x
 * profile has none yet). 0, or 2 with err (inputs that cannot be generated, more than cap rows). */
int qc_coverage_add(const qc_instance *inst, qc_coverage_row *rows, int *n, int cap, char *err, size_t errlen);

/* qsort order of the report's coverage lines (result.h): by recipe x profile, so that the lines of
 * a run and of its merged shards come out the same. */
int qc_coverage_line_cmp(const void *a, const void *b);

/* The required classes of row not reached. */
static inline unsigned qc_coverage_missing(const qc_coverage_row *row) { return row->need & ~row->hit; }

#endif
