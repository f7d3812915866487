/* cmd_run.c: `qcheck run` (docs/spec/cli.md "Suite commands"): expand the case files of a tier into
 * instances, run every selected backend on each in an isolated child, print one verdict line
 * per instance x backend with a REPRO command, and end with the summary line. */
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "coverage.h"
#include "generate.h"
#include "golden_io.h"
#include "report.h"
#include "qc_checked.h"
#include "runner.h"

#ifndef QC_CASES_DIR
#define QC_CASES_DIR "cases"
#endif

const char *qc_cases_dir(void)
{
    const char *env = getenv("QCHECK_CASES");
    return env && *env ? env : QC_CASES_DIR;
}

static void run_help(void)
{
    printf("usage: qcheck run [--case NAME[,NAME..]] [--suite quick|full|bringup] [--backend B[,B..]]\n"
           "                  [--filter REGEX] [--params k=v,..] [--seed S] [--jobs N] [--shard I/N|auto]\n"
           "                  [--timeout SEC] [--show N] [-v|--quiet] [--report DIR] [--keep-failing DIR]\n"
           "                  [--batch N] [--device N | --devices A,B,..]\n"
           "Expands the case files (%s, or $QCHECK_CASES) of one tier into instances and runs\n"
           "every selected backend on each, in a child process with a timeout: a crash or hang is\n"
           "ERROR for that item alone. Each failing item (FAIL, ERROR, MISTRUSTED) gets a line:\n"
           "verdict, instance id, backend, figures, REPRO command, then its mismatches with\n"
           "coordinates, hex, decoded values and class; -v prints every item so (PASS and SKIPPED\n"
           "with its reason too). Progress (done/total, rate, ETA) goes to stderr: a live line on a\n"
           "terminal, a line a minute otherwise. The last line is 'N passed, N failed, N skipped,\n"
           "N mistrusted' (ERROR counts as failed). Exit 0 when everything passed, 1 otherwise, 2\n"
           "on bad usage.\n"
           "qcheck --case NAME ... is short for qcheck run --case NAME ...\n"
           "  --case NAMES     only these case files (qcheck list cases)\n"
           "  --suite TIER     quick (default), full, bringup\n"
           "  --backend B      backends or groups (qcheck list backends); default: every backend\n"
           "                   that can run here except the mutants (one line names each one that\n"
           "                   cannot, and why; asked for by name it is SKIPPED on every instance).\n"
           "                   `mutants` runs the deliberately broken kernels, a health check of the\n"
           "                   gate: each must FAIL somewhere; their failures do not fail the run,\n"
           "                   a mutant that escapes does (exit 1, named on the 'mutants:' line).\n"
           "                   plugin:PATH.so[:NAME] loads a backend library (include/qcheck/qcheck.h);\n"
           "                   exec:COMMAND runs an outside process over the items (docs/exec.md),\n"
           "                   and takes the rest of the argument, commas included\n"
           "  --filter REGEX   only instances whose id matches (POSIX extended)\n"
           "  --params k=v,..  only instances with these parameter values (REPRO uses it)\n"
           "  --seed S         base seed [0]; each instance's seed is a hash of its id and S\n"
           "  --jobs N         children at a time [1]\n"
           "  --shard I/N      run the I-th of N deterministic shards (1-based); auto takes I and N\n"
           "                   from Slurm, GitLab, Buildkite or Kubernetes (docs/spec/cli.md)\n"
           "  --timeout SEC    per item [60]\n"
           "  --show N         mismatches listed per output [8]\n"
           "  -v, --verbose    a line for every item, PASS and SKIPPED included\n"
           "  --quiet          no progress: the failing items and the summary\n"
           "  --report DIR     write DIR/summary.json, junit.xml and summary.md\n"
           "  --keep-failing DIR  save every failing instance as an HDF5 golden (inputs, reference\n"
           "                   outputs, and the backend's outputs as stage 'backend')\n"
           "  --batch N        exec backends: items per process [256]\n"
           "  --device N       the GPU handed to GPU backends [0]\n"
           "  --devices A,B,.. spread the items over these GPUs: one worker per GPU for backends\n"
           "                   with persistent workers (cuda), items handed to the GPUs in turn\n",
           QC_CASES_DIR);
}

typedef struct selection {
    const char *names[64];
    int n;
} selection;

/* --backend's list, split at commas, but an exec:COMMAND entry takes the rest of the argument,
 * commas included (a command line may hold them), so it comes last. */
static void split_backends(char *s, selection *sel)
{
    while (s && *s && sel->n < 64) {
        char *comma = strncmp(s, "exec:", 5) ? strchr(s, ',') : NULL;
        if (comma)
            *comma = '\0';
        if (*s)
            sel->names[sel->n++] = s;
        s = comma ? comma + 1 : NULL;
    }
}

static int listed(const selection *sel, const char *name)
{
    for (int i = 0; i < sel->n; i++)
        if (!strcmp(sel->names[i], name))
            return 1;
    return 0;
}

/* Backends by name or group; with no --backend every available one but the mutants, and one line
 * for each backend left out because it cannot run here (asked for by name, an unavailable backend
 * reports SKIPPED with the reason on every instance instead). Also `golden verify --backend`. */
int qc_select_backends(const char *cmd, const char *arg, const qc_backend **out, int *n)
{
    static char buf[4096];
    selection sel = {{0}, 0};
    char err[1024];
    if (arg) {
        snprintf(buf, sizeof buf, "%s", arg);
        split_backends(buf, &sel);
        for (int i = 0; i < sel.n; i++) {
            int known = 0;
            const qc_backend *made = NULL;
            if (!strncmp(sel.names[i], "plugin:", 7) && !(made = qc_plugin_load(sel.names[i], err, sizeof err))) {
                qc_error(cmd, "%s", err);
                return QC_EXIT_USAGE;
            }
            if (!strncmp(sel.names[i], "exec:", 5) && !(made = qc_exec_backend(sel.names[i], err, sizeof err))) {
                qc_error(cmd, "%s", err);
                return QC_EXIT_USAGE;
            }
            for (int b = 0; b < qc_backend_count(); b++)
                known |= !strcmp(qc_backend_at(b)->name, sel.names[i]) || !strcmp(qc_backend_at(b)->group, sel.names[i]);
            if (!known) {
                qc_error(cmd, "unknown backend '%s' (qcheck list backends)", sel.names[i]);
                return QC_EXIT_USAGE;
            }
        }
    }
    *n = 0;
    for (int b = 0; b < qc_backend_count(); b++) {
        const qc_backend *be = qc_backend_at(b);
        int take = arg ? listed(&sel, be->name) || listed(&sel, be->group)
                       : strcmp(be->group, "mutants") != 0 && strcmp(be->group, "selftest") != 0;
        const char *why = take && !arg ? qc_backend_unavailable(be) : NULL;
        if (why) {
            printf("not run: backend %s cannot run here: %s (--backend %s lists it as SKIPPED)\n", be->name, why,
                   be->name);
            take = 0;
        }
        if (take)
            out[(*n)++] = be;
    }
    return QC_EXIT_OK;
}

static int params_match(const qc_params *want, const qc_params *have)
{
    for (int i = 0; i < want->n; i++) {
        const char *v = qc_param(have, want->key[i]);
        if (!v || strcmp(v, want->val[i]))
            return 0;
    }
    return 1;
}

/* Why --params selected nothing: the first wanted value that no instance of the selected cases
 * has, with the values they do have (a misspelt profile or dist, a size outside the sweep). */
static void class_names(unsigned bits, char *out, size_t cap)
{
    out[0] = 0;
    for (int k = 0, at = 0; k < QC_COV_COUNT; k++)
        if (bits >> k & 1 && at < (int)cap)
            at += snprintf(out + at, cap - (size_t)at, "%s%s", at ? " " : "", qc_coverage_names[k]);
}

/* The boundary classes of the run's quant instances, each counted once however many backends ran
 * it, as the report's lines (coverage.h). 0, or 2 after naming the instance whose inputs failed. */
static int quant_coverage(const char *cmd, const qc_work *work, int nw, qc_coverage_line *lines, int cap,
                          qc_run_info *info)
{
    char err[1024];
    qc_coverage_row rows[256];
    int n = 0;
    for (int w = 0; w < nw; w++) {
        const qc_instance *in = work[w].inst;
        if (strcmp(in->c->op, "quant") || (w > 0 && work[w - 1].inst == in))
            continue;
        if (qc_coverage_add(in, rows, &n, cap < 256 ? cap : 256, err, sizeof err)) {
            qc_error(cmd, "--report: the coverage of %s: %s", in->id, err);
            return 2;
        }
    }
    for (int i = 0; i < n; i++) {
        memcpy(lines[i].key, rows[i].key, sizeof lines[i].key); /* both 96 bytes, terminated */
        lines[i].instances = rows[i].instances;
        class_names(rows[i].hit, lines[i].reached, sizeof lines[i].reached);
        class_names(qc_coverage_missing(&rows[i]), lines[i].missing, sizeof lines[i].missing);
        class_names(rows[i].need, lines[i].required, sizeof lines[i].required);
    }
    qsort(lines, (size_t)n, sizeof *lines, qc_coverage_line_cmp); /* an order shard reports can be merged into */
    info->coverage = lines;
    info->ncoverage = n;
    return 0;
}

static void explain_no_match(const char *cmd, const qc_instance *inst, int ninst, const qc_params *want,
                             const qc_backend *const *backends, int nb)
{
    for (int k = 0; k < want->n; k++) {
        const char *seen[32];
        int nseen = 0, found = 0, more = 0;
        for (int i = 0; i < ninst && !found; i++) {
            const char *v = qc_param(&inst[i].params, want->key[k]);
            found = v && !strcmp(v, want->val[k]);
            int dup = !v;
            for (int j = 0; j < nseen && !dup; j++)
                dup = !strcmp(seen[j], v);
            if (!dup && nseen < 32)
                seen[nseen++] = v;
            more |= !dup && nseen == 32 && strcmp(seen[31], v);
        }
        if (found)
            continue;
        char err[1024];
        if (!nseen && ninst && qc_case_check_keys(inst[0].c, want, err, sizeof err)) {
            qc_error(cmd, "%s", err);
            return;
        }
        char list[1024] = "";
        size_t at = 0;
        for (int j = 0; j < nseen && at < sizeof list; j++)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", j ? ", " : "", seen[j]);
        qc_error(cmd, "no selected instance has %s=%s (%s%s%s; qcheck list cases)", want->key[k], want->val[k],
                 nseen ? "the values there: " : "no selected case sweeps it", list, more ? ", ..." : "");
        return;
    }
    for (int b = 0; b < nb; b++) { /* a backend that implements none of the selected cases' ops */
        int any = 0;
        for (int i = 0; i < ninst && !any; i++)
            any = qc_backend_implements(backends[b], inst[i].c->op);
        if (any || !ninst)
            continue;
        char ops[512] = "";
        size_t at = 0;
        for (int o = 0; o < qc_op_count() && at < sizeof ops; o++)
            if (qc_backend_implements(backends[b], qc_op_at(o)->name))
                at += (size_t)snprintf(ops + at, sizeof ops - at, "%s%s", at ? ", " : "", qc_op_at(o)->name);
        qc_error(cmd, "backend %s implements op%s %s, and no selected case is one of them (case %s is op %s)",
                 backends[b]->name, strchr(ops, ',') ? "s" : "", ops[0] ? ops : "none", inst[0].c->name,
                 inst[0].c->op);
        return;
    }
    qc_error(cmd, "no instance matched the selection (qcheck list cases)");
}

#ifndef QC_VERSION
#define QC_VERSION "0.0.0"
#endif
#ifndef QC_GIT_REVISION
#define QC_GIT_REVISION "unknown"
#endif

static void record_run(qc_run_info *info, int argc, char **argv, const char *suite)
{
    size_t at = (size_t)snprintf(info->command, sizeof info->command, "qcheck run");
    for (int i = 0; i < argc && at < sizeof info->command; i++)
        at += (size_t)snprintf(info->command + at, sizeof info->command - at, " %s", argv[i]);
    snprintf(info->suite, sizeof info->suite, "%s", suite);
    snprintf(info->qcheck_version, sizeof info->qcheck_version, "%s", QC_VERSION);
    snprintf(info->git_revision, sizeof info->git_revision, "%s", QC_GIT_REVISION);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(info->started, sizeof info->started, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void summarize(const qc_result *res, int n, const qc_backend *const *backends, int nb, int whole_suite,
                      int *exit_code)
{
    int count[QC_VERDICT_COUNT] = {0}, expected_fail = 0, mutants = 0, escaped = 0, not_run = 0;
    char escaped_names[1024] = "";
    for (int i = 0; i < n; i++)
        count[res[i].verdict]++;
    for (int b = 0; b < nb; b++) {
        if (strcmp(backends[b]->group, "mutants"))
            continue;
        const char *why = qc_backend_unavailable(backends[b]);
        if (why) { /* a bug planted in kernels that cannot run here (a GPU's): no verdict either way */
            printf("MUTANT %s NOT RUN here: %s\n", backends[b]->name, why);
            not_run++;
            continue;
        }
        mutants++;
        int tried, failed, skipped, declined;
        qc_backend_tally(res, n, backends[b]->name, &tried, &failed, &skipped, &declined);
        expected_fail += failed; /* a mutant is meant to FAIL: its failures are the gate working */
        /* A mutant that no selected case exercises is a hole in the suite when the whole suite ran;
         * with --case/--filter/--params it only means the selection does not reach it. */
        const char *state = failed ? "caught" : tried ? "NOT CAUGHT" : "NOT EXERCISED";
        printf("MUTANT %s %s (%d of %d instances failed): %s\n", backends[b]->name, state, failed, tried,
               backends[b]->doc);
        if (!failed && (tried || whole_suite)) {
            *exit_code = QC_EXIT_FAIL;
            escaped++;
            snprintf(escaped_names + strlen(escaped_names), sizeof escaped_names - strlen(escaped_names), " %s",
                     backends[b]->name);
        }
    }
    if (mutants && escaped)
        printf("mutants: %d of %d escaped the gate:%s\n", escaped, mutants, escaped_names);
    else if (mutants)
        printf("mutants: all %d caught (their failures are the gate working; they do not fail this run)\n", mutants);
    if (not_run)
        printf("mutants: %d not run here (their kernels need a device this machine lacks)\n", not_run);
    int declined = 0;
    for (int i = 0; i < n; i++)
        declined += res[i].verdict == QC_SKIPPED && !strncmp(res[i].figures, "declined:", 9);
    if (declined)
        printf("%d of the skipped were declined by their backend (not implemented there; never run through the "
               "reference)\n", declined);
    if (count[QC_ERROR])
        printf("%d errors (crash, hang or refused instance) are counted as failed\n", count[QC_ERROR]);
    printf("%d passed, %d failed, %d skipped, %d mistrusted\n", count[QC_PASS], count[QC_FAIL] + count[QC_ERROR],
           count[QC_SKIPPED], count[QC_MISTRUSTED]);
    int unsaved = 0;
    for (int i = 0; i < n; i++)
        unsaved += res[i].unsaved;
    if (unsaved)
        printf("%d failing items could not be saved by --keep-failing (the run fails)\n", unsaved);
    if (count[QC_FAIL] - expected_fail + count[QC_ERROR] + count[QC_MISTRUSTED] + unsaved)
        *exit_code = QC_EXIT_FAIL;
    if (qc_nothing_checked(res, n)) {
        printf("NOTHING CHECKED: every item was skipped (no backend compared an output; not a pass)\n");
        *exit_code = QC_EXIT_FAIL;
    }
}

/* --devices A,B,..: distinct GPU indices in [0, 1023], at most QC_MAX_DEVICES. */
static int parse_devices(const char *cmd, const char *list, qc_run_config *cfg)
{
    char buf[256], *save;
    snprintf(buf, sizeof buf, "%s", list);
    cfg->ndevices = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long v;
        if (cfg->ndevices == QC_MAX_DEVICES) {
            qc_error(cmd, "--devices '%s': at most %d GPUs", list, QC_MAX_DEVICES);
            return 1;
        }
        if (qc_opt_int(cmd, "devices", t, 0, 1023, &v) != QC_EXIT_OK)
            return 1;
        for (int k = 0; k < cfg->ndevices; k++)
            if (cfg->devices[k] == v) {
                qc_error(cmd, "--devices '%s': GPU %ld twice", list, v);
                return 1;
            }
        cfg->devices[cfg->ndevices++] = (int)v;
    }
    if (!cfg->ndevices) {
        qc_error(cmd, "--devices '%s': no GPU index", list);
        return 1;
    }
    cfg->device = cfg->devices[0];
    return 0;
}

int cmd_run(int argc, char **argv)
{
    static const char *const flags[] = {"quiet", "verbose", NULL};
    qc_args a;
    if (qc_parse_args(&a, "run", argc, argv, flags))
        return QC_EXIT_USAGE;
    if (a.help) {
        run_help();
        return QC_EXIT_OK;
    }
    const char *case_arg = qc_opt(&a, "case"), *suite = qc_opt(&a, "suite"), *backend_arg = qc_opt(&a, "backend");
    const char *filter = qc_opt(&a, "filter"), *params_arg = qc_opt(&a, "params");
    const char *seed_arg = qc_opt(&a, "seed"), *jobs_arg = qc_opt(&a, "jobs"), *shard = qc_opt(&a, "shard");
    const char *timeout_arg = qc_opt(&a, "timeout"), *show_arg = qc_opt(&a, "show");
    const char *report_dir = qc_opt(&a, "report"), *batch_arg = qc_opt(&a, "batch"), *device_arg = qc_opt(&a, "device");
    const char *devices_arg = qc_opt(&a, "devices");
    qc_run_config cfg = {.jobs = 1, .timeout = 60, .shard_count = 1, .show = 8};
    cfg.verbosity = qc_flag(&a, "verbose") ? QC_VERBOSE : qc_flag(&a, "quiet") ? QC_QUIET : QC_DEFAULT;
    cfg.progress = cfg.verbosity == QC_QUIET      ? QC_PROGRESS_NONE
                   : isatty(STDERR_FILENO)        ? QC_PROGRESS_LIVE
                                                  : QC_PROGRESS_MINUTE;
    cfg.keep_failing = qc_opt(&a, "keep-failing");
    long v;
    if (qc_check_all_used(&a))
        return QC_EXIT_USAGE;
    if (a.npos) {
        qc_error(a.cmd, "unexpected argument '%s' (see qcheck run --help)", a.pos[0]);
        return QC_EXIT_USAGE;
    }
    if (report_dir && qc_same_path(report_dir, qc_cases_dir())) { /* its summary.json would be read as a case */
        qc_error(a.cmd, "--report %s is the cases folder: give another folder", report_dir);
        return QC_EXIT_USAGE;
    }
    int tier = qc_tier_from_name(suite ? suite : "quick");
    if (tier < 0) {
        qc_error(a.cmd, "unknown suite '%s' (known: quick, full, bringup)", suite);
        return QC_EXIT_USAGE;
    }
    if (cfg.keep_failing && qc_mkdirs(cfg.keep_failing)) {
        qc_error(a.cmd, "--keep-failing: cannot create '%s'", cfg.keep_failing);
        return QC_EXIT_USAGE;
    }
    uint64_t seed = 0;
    if (seed_arg && qc_parse_u64(seed_arg, UINT64_MAX, &seed)) { /* "-1" is not 2^64 - 1 */
        qc_error(a.cmd, "--seed must be a decimal integer in [0, 2^64), got '%s'", seed_arg);
        return QC_EXIT_USAGE;
    }
    if (jobs_arg && qc_opt_int(a.cmd, "jobs", jobs_arg, 1, 64, &v) == QC_EXIT_OK)
        cfg.jobs = (int)v;
    else if (jobs_arg)
        return QC_EXIT_USAGE;
    if (timeout_arg && qc_opt_int(a.cmd, "timeout", timeout_arg, 1, 86400, &v) == QC_EXIT_OK)
        cfg.timeout = (double)v;
    else if (timeout_arg)
        return QC_EXIT_USAGE;
    if (show_arg && qc_opt_int(a.cmd, "show", show_arg, 0, 1000, &v) == QC_EXIT_OK)
        cfg.show = (int)v;
    else if (show_arg)
        return QC_EXIT_USAGE;
    if (batch_arg && qc_opt_int(a.cmd, "batch", batch_arg, 1, 100000, &v) == QC_EXIT_OK)
        cfg.batch = (int)v;
    else if (batch_arg)
        return QC_EXIT_USAGE;
    if (device_arg && qc_opt_int(a.cmd, "device", device_arg, 0, 1023, &v) == QC_EXIT_OK)
        cfg.device = (int)v;
    else if (device_arg)
        return QC_EXIT_USAGE;
    if (devices_arg && device_arg) {
        qc_error(a.cmd, "--device and --devices: give one of them");
        return QC_EXIT_USAGE;
    }
    if (devices_arg && parse_devices(a.cmd, devices_arg, &cfg))
        return QC_EXIT_USAGE;
    if (shard && qc_parse_shard(a.cmd, shard, &cfg.shard_index, &cfg.shard_count))
        return QC_EXIT_USAGE;
    qc_params want = {0};
    char err[1024];
    if (params_arg && qc_params_parse(&want, params_arg, err, sizeof err)) {
        qc_error(a.cmd, "--params: %s", err);
        return QC_EXIT_USAGE;
    }
    regex_t re;
    if (filter && regcomp(&re, filter, REG_EXTENDED | REG_NOSUB)) {
        qc_error(a.cmd, "bad --filter regex '%s'", filter);
        return QC_EXIT_USAGE;
    }
    const qc_backend *backends[128]; /* every backend of the table (qc_select_backends) */
    int nb;
    if (qc_select_backends(a.cmd, backend_arg, backends, &nb))
        return QC_EXIT_USAGE;

    qc_case *cases = NULL;
    int ncases = 0, exit_code = QC_EXIT_USAGE, nw = 0;
    qc_instance *inst = NULL;
    qc_work *work = NULL;
    int64_t *position = NULL;
    qc_result *res = NULL;
    if (qc_cases_load_dir(qc_cases_dir(), &cases, &ncases, err, sizeof err)) {
        qc_error(a.cmd, "%s", err);
        goto out;
    }
    if (case_arg && qc_case_list_known(cases, ncases, case_arg, err, sizeof err)) {
        qc_error(a.cmd, "%s", err);
        goto out;
    }
    int ninst = 0, cap = 0;
    for (int c = 0; c < ncases; c++) {
        if (case_arg && !qc_case_in_list(cases[c].name, case_arg))
            continue;
        /* --case runs a case whatever its tiers: in --suite's tier when it has it, else its first */
        int t = case_arg && !(cases[c].tiers & tier) ? cases[c].tiers & -cases[c].tiers : tier;
        if (qc_case_expand(&cases[c], t, seed, &inst, &ninst, &cap, err, sizeof err)) {
            qc_error(a.cmd, "%s", err);
            goto out;
        }
    }
    if ((size_t)ninst * (size_t)nb > INT_MAX / 2) {
        qc_error(a.cmd, "%d instances x %d backends is more work items than one run takes (--max-instances)", ninst, nb);
        goto out;
    }
    work = malloc(sizeof *work * ((size_t)ninst * (size_t)nb + 1));
    position = malloc(sizeof *position * ((size_t)ninst * (size_t)nb + 1));
    uint64_t digest = 0;
    int64_t items = 0;
    for (int i = 0; work && position && i < ninst; i++) {
        if ((filter && regexec(&re, inst[i].id, 0, NULL, 0)) || !params_match(&want, &inst[i].params))
            continue;
        int mine = qc_shard_of(&inst[i], cfg.shard_count) == cfg.shard_index;
        for (int b = 0; b < nb; b++)
            if (qc_backend_implements(backends[b], inst[i].c->op)) {
                digest = qc_hash(backends[b]->name, qc_hash(inst[i].id, digest)); /* the selection, every shard */
                if (mine)
                    position[nw] = items, work[nw++] = (qc_work){&inst[i], backends[b]};
                items++;
            }
    }
    if (nw == 0) {
        explain_no_match(a.cmd, inst, ninst, &want, backends, nb);
        goto out;
    }
    res = qc_results_alloc(nw);
    qc_run_info info = {.shard_index = cfg.shard_index + 1, .shard_count = cfg.shard_count, .selection_items = items};
    snprintf(info.selection, sizeof info.selection, "%016llx", (unsigned long long)digest);
    record_run(&info, argc, argv, suite ? suite : "quick");
    double t0 = qc_now();
    qc_run_work(work, nw, &cfg, res);
    info.seconds = qc_now() - t0;
    for (int w = 0; w < nw; w++)
        res[w].position = position[w];
    exit_code = QC_EXIT_OK;
    summarize(res, nw, backends, nb, !case_arg && !filter && !params_arg && cfg.shard_count == 1, &exit_code);
    static qc_coverage_line coverage[256];
    if (report_dir && quant_coverage(a.cmd, work, nw, coverage, 256, &info))
        exit_code = QC_EXIT_USAGE;
    if (report_dir && exit_code != QC_EXIT_USAGE) {
        if (qc_report_write(report_dir, &info, res, nw, err, sizeof err)) {
            qc_error(a.cmd, "--report: %s", err);
            exit_code = QC_EXIT_USAGE;
        } else {
            printf("report: %s/summary.json, junit.xml, summary.md\n", report_dir);
        }
    }
out:
    qc_results_free(res, nw);
    free(work);
    free(position);
    free(inst);
    qc_cases_free(cases, ncases);
    if (filter)
        regfree(&re);
    return exit_code;
}
