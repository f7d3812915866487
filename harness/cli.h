/* cli.h: what every qcheck command shares: option parsing, raw file I/O, error reporting.
 * Exit codes (docs/spec/cli.md): 0 success, 1 a check failed, 2 bad usage or bad input. */
#ifndef QC_CLI_H
#define QC_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "formats/formats.h"
#include "profiles.h"

enum { QC_EXIT_OK = 0, QC_EXIT_FAIL = 1, QC_EXIT_USAGE = 2 };

/* Prints "qcheck CMD: message" to stderr. */
void qc_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A parsed command line: "--key value" / "--key=value" options and positional arguments. */
#define QC_MAX_ARGS 1024
typedef struct qc_args {
    const char *cmd;
    int nopt, npos;
    const char *key[QC_MAX_ARGS];
    const char *val[QC_MAX_ARGS]; /* NULL for a flag */
    int used[QC_MAX_ARGS];
    const char *pos[QC_MAX_ARGS];
    int help;
} qc_args;

/* flags: NULL-terminated list of option names that take no value. Returns 0 or prints and returns 2. */
int qc_parse_args(qc_args *a, const char *cmd, int argc, char **argv, const char *const *flags);
const char *qc_opt(qc_args *a, const char *key); /* NULL when absent; marks it used */
int qc_flag(qc_args *a, const char *key);
int qc_check_all_used(qc_args *a); /* 2 with a message naming an unknown option, else 0 */
int qc_positionals_at_most(qc_args *a, int n); /* 2 with a message naming the first extra argument, else 0 */
/* The integer value v of option --key in [lo, hi], strictly (qc_parse_i64: no blanks, no '+', no
 * saturation): 0 with *out, or 2 after an error naming the option, the range and v. */
int qc_opt_int(const char *cmd, const char *key, const char *v, long lo, long hi, long *out);

/* --shard: "I/N" (1 <= I <= N), or "auto": I and N from the scheduler's environment (Slurm job
 * arrays, GitLab parallel, Buildkite parallelism, Kubernetes indexed Jobs; docs/spec/cli.md),
 * named on stderr. 0 with *index (0-based) and *count, or 2 after an error naming what is wrong. */
int qc_parse_shard(const char *cmd, const char *arg, int *index, int *count);

/* Whole-file raw I/O; 0 or 2 (message printed). qc_write_file publishes path (core/tempfile.h
 * qc_publish: a temporary renamed onto it, so that a full disk leaves no partial output; a link, a
 * FIFO or /dev/stdout written through in place). An output that is a file this
 * process read (qc_read_file; by device and inode, so ./x and a link to x count) is refused before
 * anything is written: it would overwrite its own input. qc_read_file reads at most max bytes (what
 * the shape needs; /dev/zero is not read until memory runs out): a longer input is exit 2. */
int qc_read_file(const char *cmd, const char *path, size_t max, uint8_t **data, size_t *size);
int qc_write_file(const char *cmd, const char *path, const void *data, size_t size);
/* 2 after an error when path is a file this process read, else 0 (a command writing several
 * outputs checks them all first). */
int qc_output_clobbers(const char *cmd, const char *path);
/* Whether two paths name one existing file or folder (device and inode). */
int qc_same_path(const char *a, const char *b);

/* "--name" must be one of the names of a table: prints the known names on failure. */
int qc_name_or_die(const char *cmd, const char *what, const char *value, int found, const char *known);

/* Resolves --profile plus explicit policy flags into the policy for format f (through the
 * params parser of policy_args.c, qc_policy_from_params in registry.h). */
int qc_policy_from_args(qc_args *a, qc_format f, qc_cast_policy *out);
int qc_format_or_die(const char *cmd, const char *value, qc_format *out);

int cmd_decode(int argc, char **argv);
int cmd_cast(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_quant(int argc, char **argv);
int cmd_dequant(int argc, char **argv);
int cmd_golden(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_identify(int argc, char **argv);
int cmd_coverage(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_layout(int argc, char **argv);
int cmd_bringup(int argc, char **argv);

#endif
