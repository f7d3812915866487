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
/* FAIL, ERROR and MISTRUSTED fail a run (and get a line of their own without -v). */
static inline int qc_verdict_failing(qc_verdict v) { return v == QC_FAIL || v == QC_ERROR || v == QC_MISTRUSTED; }

/* printf onto the end of the text in buf[len] (a result's detail): what does not fit is dropped. */
void qc_appendf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A text that filled its buffer ends mid-line: cut it after its last whole line and say so. */
void qc_detail_seal(char *buf, size_t len);

/* Where an output's mismatches sit, for the HTML report: counts over a grid of bins of its logical
 * [rows, cols] (batches stacked as rows; cols in blocks when the output has them). */
enum { QC_HEAT_ROWS = 16, QC_HEAT_COLS = 32, QC_RATIO_BINS = 24 };
typedef struct qc_mismatch_map {
    char output[48];
    int64_t rows, cols; /* the grid the bins cover */
    int64_t per_batch;  /* rows of one batch */
    int64_t block;      /* elements per col of the grid (1: cols are elements) */
    int brows, bcols;   /* bins used: min(rows, QC_HEAT_ROWS) x min(cols, QC_HEAT_COLS) */
    int64_t mismatches; /* of the output (padding outside the grid included) */
    uint32_t count[QC_HEAT_ROWS * QC_HEAT_COLS];
} qc_mismatch_map;

/* Rule bound: |got - expected| / bound per element, in half-decade bins from 1e-6 (bin 0: below,
 * bin 23: 1e5 and above); zero counts the elements equal to the reference. */
typedef struct qc_ratio_hist {
    char output[48];
    int64_t zero;
    uint32_t bins[QC_RATIO_BINS];
} qc_ratio_hist;

enum { QC_PLOT_STAGES = 10, QC_PLOT_K = 64 };
typedef struct qc_stage_row {
    char name[40];
    int64_t bad, n;
    double maxerr;
} qc_stage_row;

/* What the HTML report draws for a failing item: the mismatch map of the output with the most
 * mismatches, the error / bound histogram of the bound output that came closest to its bound, and
 * for ops with stage tensors the stage table and the error mass along K (the last dimension) of
 * the first stage that differs, in at most QC_PLOT_K bins. */
typedef struct qc_plots {
    int has_map, has_ratio;
    qc_mismatch_map map;
    qc_ratio_hist ratio;
    double ratio_tightness;   /* the worst error / bound of that output */
    int nstages, first_stage; /* first_stage: index into stages, -1 when every stage agrees */
    qc_stage_row stages[QC_PLOT_STAGES];
    int64_t k_cols;           /* columns of the first differing stage (0: no profile) */
    int k_bins;
    float along_k[QC_PLOT_K];
} qc_plots;

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
    int planted;       /* its backend is a planted bug (group mutants): a FAIL is the gate working */
    int64_t position;  /* the item's place in the unsharded selection (instance, then backend): merge order */
    qc_plots plots;    /* for the HTML report (filled for failing items) */
} qc_result;

/* A gate that compared nothing must not read as green: 1 when n > 0 and every result is SKIPPED
 * (qcheck run and report merge print NOTHING CHECKED and exit 1). */
int qc_nothing_checked(const qc_result *r, int n);
/* backend's results in r: *tried of them, *failed FAIL, *skipped SKIPPED (*declined of those by
 * the backend itself; the others: it could not run here). */
void qc_backend_tally(const qc_result *r, int n, const char *backend, int *tried, int *failed, int *skipped,
                      int *declined);

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
