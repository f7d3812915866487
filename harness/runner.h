/* runner.h: every case instance x backend in an isolated child process with a timeout (a crash
 * or a hang is ERROR for that item alone and the run goes on), --jobs children at a time,
 * deterministic seeds and shards. */
#ifndef QC_RUNNER_H
#define QC_RUNNER_H

#include "cases.h"
#include "registry.h"
#include "result.h"

typedef struct qc_run_config {
    int jobs;
    double timeout;       /* seconds per item */
    int shard_index;      /* 0-based */
    int shard_count;      /* 1 = no sharding */
    const char *keep_failing; /* folder for failing instances' goldens, or NULL */
    int show;             /* mismatches listed per output */
    int progress;         /* a progress line on stderr */
    int quiet_pass;       /* do not print PASS lines */
} qc_run_config;

typedef struct qc_work {
    const qc_instance *inst;
    const qc_backend *backend;
} qc_work;

/* Which shard an instance belongs to: a hash of its id, so that adding cases never reshuffles
 * the others and every instance lands in exactly one shard. */
int qc_shard_of(const qc_instance *inst, int shard_count);

/* Runs the work list; results[i] belongs to work[i]. Prints one line per item as it completes
 * (in work order). */
void qc_run_work(const qc_work *work, int n, const qc_run_config *cfg, qc_result *results);

/* Runs one item in the current process (what the child does). */
void qc_run_one(const qc_work *w, const qc_run_config *cfg, qc_result *r);

void qc_print_result(const qc_result *r, int quiet_pass);

#endif
