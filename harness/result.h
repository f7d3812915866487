/* result.h: one verdict of one case instance x backend, as the runner, the console lines and the
 * report writers see it (docs/DESIGN.md "Data flow": verdict + mismatch report + REPRO line). */
#ifndef QC_RESULT_H
#define QC_RESULT_H

#include <stddef.h>
#include <stdint.h>

typedef enum qc_verdict {
    QC_PASS,
    QC_FAIL,
    QC_MISTRUSTED, /* the output is too degenerate to prove anything (all zeros, all saturated) */
    QC_SKIPPED,    /* the backend cannot run here (reason in detail) */
    QC_ERROR,      /* crash, hang, or a backend that refused valid input */
    QC_VERDICT_COUNT
} qc_verdict;

const char *qc_verdict_name(qc_verdict v);

/* printf onto the end of the text in buf[len] (a result's detail): what does not fit is dropped. */
void qc_appendf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

typedef struct qc_result {
    char case_id[512];  /* instance id (cases.h QC_ID_LEN): case name + params, e.g. cast_fp8[to=e4m3fn,...] */
    char case_name[64]; /* the case file's name, e.g. cast_fp8 */
    char op[64];
    char backend[256]; /* plugin: and exec: names carry a path or a command */
    qc_verdict verdict;
    uint64_t seed;
    double seconds;
    char figures[256]; /* key figures: "n=4096 mismatches=0" */
    char repro[4096];  /* a command that reruns exactly this instance */
    char detail[4096]; /* mismatch report (first N with coordinates, hex, decoded, class) or reason */
    int unsaved;       /* --keep-failing could not save this item's golden: the run fails (nothing lost quietly) */
    int64_t position;  /* the item's place in the unsharded selection (instance, then backend): merge order */
} qc_result;

/* What a report says about the run as a whole. */
typedef struct qc_run_info {
    char command[512]; /* the qcheck command line */
    char suite[16];
    char qcheck_version[32];
    char git_revision[64];
    char started[32]; /* ISO 8601 UTC */
    double seconds;
    const struct qc_coverage_line *coverage; /* the quant instances' boundary classes (coverage.h) */
    int ncoverage;
    int shard_index, shard_count; /* 1-based; 1 of 1 for a whole run */
    char selection[24];           /* hex digest of every item (instance id, backend) of the unsharded selection */
    int64_t selection_items;      /* how many items that selection has */
} qc_run_info;

/* One recipe x profile of the report's coverage: class names, space-separated. */
typedef struct qc_coverage_line {
    char key[96];
    int instances;
    char reached[192], missing[192], required[192]; /* missing: required and not reached */
} qc_coverage_line;

#endif
