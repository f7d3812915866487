/* runner.h: every case instance x backend in an isolated child process with a timeout (a crash
 * or a hang is ERROR for that item alone and the run goes on), --jobs children at a time,
 * deterministic seeds and shards. */
#ifndef QC_RUNNER_H
#define QC_RUNNER_H

#include <sys/types.h>

#include "cases.h"
#include "registry.h"
#include "result.h"

enum { QC_QUIET, QC_DEFAULT, QC_VERBOSE };
enum { QC_MAX_DEVICES = 16 };
/* A live line on a terminal, a line a minute in a log (CI), or none. */
enum { QC_PROGRESS_NONE, QC_PROGRESS_LIVE, QC_PROGRESS_MINUTE };

typedef struct qc_run_config {
    int jobs;
    double timeout;       /* seconds per item */
    int shard_index;      /* 0-based */
    int shard_count;      /* 1 = no sharding */
    const char *keep_failing; /* folder for failing instances' goldens, or NULL */
    int show;             /* mismatches listed per output */
    int progress;         /* QC_PROGRESS_*: how progress reaches stderr */
    int verbosity;        /* QC_QUIET: failing items; QC_DEFAULT: and progress; QC_VERBOSE: every item */
    int batch;            /* exec backends: items per process [256] */
    int device;           /* --device N: the GPU an ABI backend is handed (qcheck_ctx.device) */
    int devices[QC_MAX_DEVICES]; /* --devices A,B,..: items spread over these GPUs (ndevices 0: device alone) */
    int ndevices;
} qc_run_config;

typedef struct qc_work {
    const qc_instance *inst;
    const qc_backend *backend;
} qc_work;

/* Which shard an instance belongs to: a hash of its id, so that adding cases never reshuffles
 * the others and every instance lands in exactly one shard. */
int qc_shard_of(const qc_instance *inst, int shard_count);

/* The results array of n items in shared anonymous memory: fork(2) does not copy the page tables
 * of a shared mapping, so a child per item stays cheap however many items a run has (a private
 * calloc of 10^4 results made every fork copy ~70 MB of page-table entries). */
qc_result *qc_results_alloc(int n);
void qc_results_free(qc_result *r, int n);

/* --backend B[,B..] of `qcheck run` and `golden verify`: names, groups, plugin:PATH.so[:NAME] and
 * exec:COMMAND (last); arg NULL: every backend but the mutants and self-tests that can run here.
 * out holds every backend of the table (128). 0, or 2 after naming an unknown backend. */
int qc_select_backends(const char *cmd, const char *arg, const qc_backend **out, int *n);

/* Runs the work list; results[i] belongs to work[i]. Prints one line per item as it completes
 * (in work order). */
void qc_run_work(const qc_work *work, int n, const qc_run_config *cfg, qc_result *results);

/* Runs one item in the current process (what the child does). */
void qc_run_one(const qc_work *w, const qc_run_config *cfg, qc_result *r);

/* What qc_run_one does once the inputs and expected outputs are made: backend b on inputs (the
 * case's generators, or a golden's stored tensors), its outputs judged against expected with
 * in->c's rules. A declined item is SKIPPED, a refusal ERROR. Returns the backend's QC_OP_* status
 * (registry.h), so that a caller can tell a file whose params do not fit the op (QC_OP_BAD). */
int qc_run_backend(const qc_instance *in, const qc_backend *b, const qc_run_config *cfg, const qc_tensor_set *inputs,
                   qc_tensor_set *expected, qc_result *r);

/* Prints r's line (and the mismatch details of a non-PASS) when verbosity asks for it: every item
 * under QC_VERBOSE, else only those that fail the run (FAIL, ERROR, MISTRUSTED). */
void qc_print_result(const qc_result *r, int verbosity);
double qc_now(void); /* monotonic seconds */

/* fork() for every child qcheck starts (workers, isolated items, exec batches, bring-up), after
 * flushing stdout and stderr: the child is killed when qcheck dies, however it dies (SIGKILL to
 * qcheck alone, a CI timeout that signals one pid), so that no worker outlives the run (Linux
 * PR_SET_PDEATHSIG; elsewhere a plain fork). */
pid_t qc_fork(void);

/* The inputs of an instance and its expected outputs (its vector table, or the reference).
 * with_derived: also what the inputs imply that the kernel consumes (registry.h derived_inputs:
 * gemm's quantized operands, moe's expert weights), for an instance that leaves the process
 * (export, golden files, the exec backend); in-process backends get those through the ABI.
 * 0, 2 when the inputs cannot be made, 3 when the reference refuses; err says why.
 * qc_instance_inputs: the same inputs alone (0 or 2), for a process that must not see the
 * expected outputs (the exec backend's command). */
int qc_instance_inputs(const qc_instance *in, int with_derived, qc_tensor_set *inputs, char *err, size_t errlen);
int qc_instance_expected(const qc_instance *in, int with_derived, qc_tensor_set *inputs, qc_tensor_set *expected,
                         char *err, size_t errlen);

/* Compares every output the case names and sets verdict, figures and detail. */
void qc_judge(const qc_case *c, const qc_params *p, const qc_tensor_set *inputs, qc_tensor_set *expected,
              qc_tensor_set *got, int show, qc_result *r);

/* golden_io.c: writes DIR/<case>/<instance>__<backend>.h5 with the inputs, the reference's outputs
 * and the backend's outputs as stage "backend"; notes the path in r->detail. */
void qc_keep_failing(const char *dir, const qc_instance *in, const char *backend, const qc_tensor_set *inputs,
                     const qc_tensor_set *expected, const qc_tensor_set *got, qc_result *r);

#endif
