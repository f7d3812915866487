/* cmd_golden.c: `qcheck golden generate|verify`, `qcheck export`, `qcheck verify` (docs/spec/cli.md).
 * A golden is one case instance in HDF5: its inputs, the reference's outputs, its params. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stages.h"
#include "cli.h"
#include "coverage.h"
#include "generate.h"
#include "golden_io.h"
#include "qc_checked.h"
#include "runner.h"

const char *qc_cases_dir(void);

static int load_cases(const char *cmd, qc_case **cases, int *n)
{
    char err[1024];
    if (qc_cases_load_dir(qc_cases_dir(), cases, n, err, sizeof err)) {
        qc_error(cmd, "%s", err);
        qc_cases_free(*cases, *n);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

/* --case's names, when given, must all be loaded cases: 0, or 2 after an error naming the first
 * that is not (the cases are freed then). */
static int known_cases(const char *cmd, qc_case *cases, int n, const char *case_arg)
{
    char err[512];
    if (case_arg && qc_case_list_known(cases, n, case_arg, err, sizeof err)) {
        qc_error(cmd, "%s", err);
        qc_cases_free(cases, n);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

static const qc_case *find_case(const qc_case *cases, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(cases[i].name, name))
            return &cases[i];
    return NULL;
}

/* Writes one instance's golden to path; 0 or 2 with a message. */
static int write_instance(const char *cmd, const qc_instance *in, const char *path)
{
    qc_tensor_set inputs = {0}, expected = {0};
    char err[1024];
    int rc = qc_instance_expected(in, 1, &inputs, &expected, err, sizeof err);
    if (rc) {
        qc_error(cmd, "%s: %s", in->id, err);
    } else {
        qc_golden_meta m;
        qc_instance_meta(in, "ref", &m);
        static qc_tensor_set split[QC_MAX_TENSORS]; /* stage.<s>.<t> -> /stages/<s>/<t> (stages.h) */
        static char snames[QC_MAX_TENSORS][QC_NAME_LEN];
        const qc_tensor_set *stages[QC_MAX_TENSORS];
        const char *names[QC_MAX_TENSORS];
        qc_tensor_set plain;
        int ns = qc_stage_split(&expected, NULL, &plain, split, snames, QC_MAX_TENSORS);
        for (int i = 0; i < ns; i++)
            stages[i] = &split[i], names[i] = snames[i];
        if (qc_golden_write(path, &m, &inputs, &plain, stages, names, ns, err, sizeof err)) {
            qc_error(cmd, "%s", err);
            rc = QC_EXIT_USAGE;
        }
    }
    qc_set_free(&inputs);
    qc_set_free(&expected);
    return rc ? QC_EXIT_USAGE : QC_EXIT_OK;
}

/* Writes instance i in worker i % jobs: each file depends only on its instance, so the files are
 * the same bytes for any --jobs. */
static int write_all(const char *cmd, const qc_instance *inst, int n, const char *dir, int jobs)
{
    pid_t pids[64];
    int started = 0, rc = QC_EXIT_OK;
    for (int w = 0; w < jobs; w++) {
        pid_t pid = jobs == 1 ? 0 : qc_fork();
        if (pid == 0) {
            int wrc = QC_EXIT_OK;
            for (int i = w; i < n && wrc == QC_EXIT_OK; i += jobs) {
                char path[1024];
                qc_golden_path(dir, &inst[i], "ref", path, sizeof path);
                wrc = write_instance(cmd, &inst[i], path);
            }
            if (jobs == 1)
                return wrc;
            _exit(wrc);
        }
        if (pid < 0) {
            qc_error(cmd, "cannot fork");
            rc = QC_EXIT_USAGE;
            break;
        }
        pids[started++] = pid;
    }
    for (int w = 0; w < started; w++) {
        int status;
        waitpid(pids[w], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status))
            rc = QC_EXIT_USAGE;
    }
    return rc;
}

static int golden_generate(int argc, char **argv)
{
    qc_args a;
    if (qc_parse_args(&a, "golden generate", argc, argv, NULL))
        return QC_EXIT_USAGE;
    if (a.help) {
        printf("usage: qcheck golden generate [--case NAME[,NAME..]] [--suite quick|full|bringup] [--seed S]\n"
               "                              [--out DIR] [--jobs N] [--max-instances N]\n"
               "Writes one HDF5 golden per instance: DIR/<case>/<params>.h5 (default DIR: golden/data).\n"
               "Same seed -> byte-identical files (set SOURCE_DATE_EPOCH to pin the 'created' attribute).\n");
        return QC_EXIT_OK;
    }
    const char *out = qc_opt(&a, "out"), *case_arg = qc_opt(&a, "case"), *suite = qc_opt(&a, "suite");
    const char *seed_arg = qc_opt(&a, "seed"), *jobs_arg = qc_opt(&a, "jobs");
    uint64_t jobs = 1, seed = 0;
    if (qc_check_all_used(&a) || qc_positionals_at_most(&a, 0))
        return QC_EXIT_USAGE;
    if (jobs_arg && (qc_parse_u64(jobs_arg, 64, &jobs) || jobs < 1)) {
        qc_error(a.cmd, "--jobs must be an integer in [1, 64], got '%s'", jobs_arg);
        return QC_EXIT_USAGE;
    }
    if (seed_arg && qc_parse_u64(seed_arg, UINT64_MAX, &seed)) {
        qc_error(a.cmd, "--seed must be a decimal integer in [0, 2^64), got '%s'", seed_arg);
        return QC_EXIT_USAGE;
    }
    int tier = qc_tier_from_name(suite ? suite : "quick");
    if (tier < 0) {
        qc_error(a.cmd, "unknown suite '%s'", suite);
        return QC_EXIT_USAGE;
    }
    qc_case *cases;
    int ncases, rc = QC_EXIT_OK, written = 0;
    if (load_cases(a.cmd, &cases, &ncases) || known_cases(a.cmd, cases, ncases, case_arg))
        return QC_EXIT_USAGE;
    char err[1024];
    for (int c = 0; c < ncases && rc == QC_EXIT_OK; c++) {
        if (case_arg && !qc_case_in_list(cases[c].name, case_arg))
            continue;
        qc_instance *inst = NULL;
        int n = 0, cap = 0;
        if (qc_case_expand(&cases[c], tier, seed, &inst, &n, &cap, err, sizeof err)) {
            qc_error(a.cmd, "%s", err);
            rc = QC_EXIT_USAGE;
        }
        char folder[1024];
        snprintf(folder, sizeof folder, "%s/%s", out ? out : "golden/data", cases[c].name);
        if (n && qc_mkdirs(folder)) {
            qc_error(a.cmd, "cannot create '%s'", folder);
            rc = QC_EXIT_USAGE;
        }
        if (rc == QC_EXIT_OK)
            rc = write_all(a.cmd, inst, n, out ? out : "golden/data", (int)jobs);
        written += rc == QC_EXIT_OK ? n : 0;
        free(inst);
    }
    qc_cases_free(cases, ncases);
    if (rc == QC_EXIT_OK)
        printf("%d goldens written under %s\n", written, out ? out : "golden/data");
    return rc;
}

/* A golden read for verify: its stored inputs and outputs, and the instance they are of, whose case
 * is relaxed (a stored golden proves what it reproduces, degenerate or not) and, when its case
 * file is gone (every golden/real/ file: case real:<library>.<function>), compares every stored
 * output bit for bit. */
typedef struct stored_golden {
    qc_golden_meta m;
    qc_tensor_set inputs, outputs;
    const qc_op *op;
    qc_case relaxed;
    qc_instance in;
} stored_golden;

static void stored_free(stored_golden *g)
{
    qc_set_free(&g->inputs);
    qc_set_free(&g->outputs);
}

/* 0, or 2 after an error naming the file (unreadable, corrupt, an unknown op, bad params). */
static int stored_read(const char *cmd, const char *path, const qc_case *cases, int ncases, stored_golden *g)
{
    char err[1024];
    memset(g, 0, sizeof *g);
    if (qc_golden_read_joined(path, &g->m, &g->inputs, &g->outputs, err, sizeof err) ||
        qc_check_dtypes(path, "/inputs", &g->inputs, err, sizeof err) ||
        qc_check_dtypes(path, "/outputs", &g->outputs, err, sizeof err)) {
        qc_error(cmd, "%s", err);
        return QC_EXIT_USAGE;
    }
    if (!(g->op = qc_op_find(g->m.op))) {
        qc_error(cmd, "%s: unknown op '%s'", path, g->m.op);
        return QC_EXIT_USAGE;
    }
    const qc_case *c = find_case(cases, ncases, g->m.case_name);
    qc_case *r = &g->relaxed;
    if (c) {
        *r = *c;
    } else { /* the case file is gone: compare every stored output bit for bit */
        snprintf(r->name, sizeof r->name, "%s", g->m.case_name);
        snprintf(r->op, sizeof r->op, "%s", g->m.op);
        for (int i = 0; i < g->outputs.n && i < QC_MAX_COMPARES; i++) {
            snprintf(r->compares[i].output, QC_NAME_LEN, "%s", g->outputs.t[i].name);
            snprintf(r->compares[i].rule, sizeof r->compares[i].rule, "bitexact");
        }
        r->ncompares = g->outputs.n < QC_MAX_COMPARES ? g->outputs.n : QC_MAX_COMPARES;
    }
    for (int i = 0; i < r->ncompares; i++)
        r->compares[i].degenerate_ok = 1;
    g->in.c = r;
    if (qc_params_from_json(g->m.params_json, &g->in.params, err, sizeof err)) {
        qc_error(cmd, "%s: %s", path, err);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

/* Re-runs the reference on a golden's inputs and compares with its outputs bit for bit. */
static int verify_one(const char *cmd, const char *path, const qc_case *cases, int ncases, int show)
{
    stored_golden g;
    qc_tensor_set now = {0};
    char err[1024];
    int rc = stored_read(cmd, path, cases, ncases, &g);
    qc_op_call call = {&g.in.params, &g.inputs, &now, err, sizeof err, 0};
    if (!rc && g.op->reference(&call)) {
        qc_error(cmd, "%s: the reference refuses the stored instance: %s", path, err);
        rc = QC_EXIT_USAGE;
    }
    int differs = rc ? 0 : qc_outputs_identical(&g.outputs, &now, 0, err, sizeof err);
    if (differs == 2) {
        qc_error(cmd, "%s: %s", path, err);
        rc = QC_EXIT_USAGE;
    }
    if (!rc) { /* the case's rules say where; every output, bounds and masks too, must match bit for bit */
        qc_result r = {0};
        qc_judge(&g.relaxed, &g.in.params, &g.inputs, &g.outputs, &now, show, &r);
        if (differs && r.verdict == QC_PASS) /* within the case's rules, but not the reference's bits */
            r.verdict = QC_FAIL, qc_appendf(r.figures, sizeof r.figures, " golden-not-reference");
        if (differs)
            qc_appendf(r.detail, sizeof r.detail, "  the golden: %s\n", err);
        printf("%-6s %s  %s\n", qc_verdict_name(r.verdict), path, r.figures);
        if (r.verdict != QC_PASS)
            fputs(r.detail, stdout);
        rc = r.verdict == QC_PASS ? QC_EXIT_OK : QC_EXIT_FAIL;
    }
    stored_free(&g);
    qc_set_free(&now);
    return rc;
}

/* Per backend of --backend: how its files went. */
typedef struct tally {
    int passed, failed, skipped;
} tally;

/* Backend b on the golden's stored inputs, judged against its stored outputs (the runner's
 * qc_run_backend, so the backend gets the op as `qcheck run --backend` hands it), in a child
 * process: a crash or a hang is ERROR for this file and backend, and the rest goes on. *status is
 * the backend's QC_OP_* status. */
static void backend_isolated(stored_golden *g, const qc_backend *b, int show, qc_result *r, int *status)
{
    qc_run_config cfg = {.jobs = 1, .timeout = 60, .show = show};
    qc_result *shared = qc_results_alloc(1);
    pid_t pid = shared ? qc_fork() : -1;
    if (pid == 0) {
        alarm((unsigned)cfg.timeout);
        _exit(qc_run_backend(&g->in, b, &cfg, &g->inputs, &g->outputs, shared));
    }
    int st = 0;
    if (pid > 0)
        waitpid(pid, &st, 0);
    if (pid > 0 && WIFEXITED(st)) {
        *r = *shared;
        *status = WEXITSTATUS(st);
    } else {
        r->verdict = QC_ERROR;
        *status = QC_OP_FAILED;
        if (pid < 0)
            snprintf(r->figures, sizeof r->figures, "cannot fork");
        else if (WTERMSIG(st) == SIGALRM)
            snprintf(r->figures, sizeof r->figures, "timeout after %.0f s", cfg.timeout);
        else
            snprintf(r->figures, sizeof r->figures, "crashed: signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    }
    qc_results_free(shared, 1);
}

/* One file x backend: a verdict line naming both; SKIPPED with the reason when the backend cannot
 * run here or declines the item (never a PASS). 0, 1 (FAIL or ERROR) or 2 (the stored params do
 * not fit the op). */
static int verify_backend(const char *cmd, const char *path, stored_golden *g, const qc_backend *b, int show,
                          tally *t)
{
    qc_result r = {0};
    int status = QC_OP_OK;
    const char *why = qc_backend_unavailable(b); /* what the runner asks first (runner.c prepare) */
    if (why) {
        r.verdict = QC_SKIPPED;
        snprintf(r.figures, sizeof r.figures, "cannot run here: %s", why);
    } else {
        backend_isolated(g, b, show, &r, &status);
    }
    if (status == QC_OP_BAD) {
        qc_error(cmd, "%s: the stored params or inputs do not fit op %s:\n%s", path, g->m.op, r.detail);
        return QC_EXIT_USAGE;
    }
    if (r.verdict == QC_SKIPPED) {
        printf("SKIPPED %s %s: %s\n", path, b->name, r.figures);
        t->skipped++;
        return QC_EXIT_OK;
    }
    printf("%-6s %s %s  %s\n", qc_verdict_name(r.verdict), path, b->name, r.figures);
    if (r.verdict != QC_PASS)
        fputs(r.detail, stdout);
    t->passed += r.verdict == QC_PASS;
    t->failed += r.verdict != QC_PASS;
    return r.verdict == QC_PASS ? QC_EXIT_OK : QC_EXIT_FAIL;
}

/* A line per backend, then the totals. A backend that skipped every file it was given checked
 * nothing: its line says so, and it is not a pass (the exit status is that of the others). */
static void backend_summary(const qc_backend *const *bs, const tally *t, int nb, int files, int unreadable)
{
    tally all = {0};
    for (int k = 0; k < nb; k++) {
        printf("%s: %d passed, %d failed, %d skipped of %d files", bs[k]->name, t[k].passed, t[k].failed,
               t[k].skipped, files);
        if (t[k].skipped && !t[k].passed && !t[k].failed)
            printf(": NOT CHECKED, every file skipped (no file compared; not a pass of %s)", bs[k]->name);
        printf("\n");
        all.passed += t[k].passed, all.failed += t[k].failed, all.skipped += t[k].skipped;
    }
    printf("%d passed, %d failed, %d skipped", all.passed, all.failed, all.skipped);
    if (unreadable)
        printf(", %d unreadable", unreadable);
    printf("\n");
}

/* 0 when the golden's stored outputs (aids_only: its bounds and masks alone) are the reference's on
 * its stored inputs (qc_outputs_identical: the judge takes the bounds and masks from the golden),
 * else 2 after an error naming the file and what differs. */
static int golden_intact(const char *cmd, const char *path, const qc_op *op, const qc_params *p,
                         const qc_tensor_set *inputs, const qc_tensor_set *stored, int aids_only)
{
    qc_tensor_set now = {0};
    char err[1024] = "";
    qc_op_call call = {p, inputs, &now, err, sizeof err, 0};
    int rc = op->reference(&call) ? 3 : qc_outputs_identical(stored, &now, aids_only, err, sizeof err);
    if (rc == 3)
        qc_error(cmd, "%s: the reference refuses the stored instance: %s", path, err);
    else if (rc)
        qc_error(cmd, "%s: not the reference's golden: %s (edited, or written by another version; qcheck golden "
                 "verify %s says where)", path, err, path);
    qc_set_free(&now);
    return rc ? QC_EXIT_USAGE : QC_EXIT_OK;
}

/* --backend: each file read once, then every selected backend on it. */
static int verify_backends(qc_args *a, const char *backend_arg, const qc_case *cases, int ncases)
{
    const qc_backend *bs[128];
    tally t[128] = {{0}};
    int nb = 0, worst = QC_EXIT_OK, unreadable = 0;
    if (qc_select_backends(a->cmd, backend_arg, bs, &nb))
        return QC_EXIT_USAGE;
    if (!nb) {
        qc_error(a->cmd, "--backend '%s' names no backend (qcheck list backends)", backend_arg);
        return QC_EXIT_USAGE;
    }
    for (int k = 0; k < nb; k++)
        if (bs[k]->exec_cmd) { /* it takes batches of exported instances in a process of its own (exec.c) */
            qc_error(a->cmd, "--backend %s: an exec: backend runs through qcheck run, not golden verify", bs[k]->name);
            return QC_EXIT_USAGE;
        }
    for (int i = 0; i < a->npos; i++) {
        stored_golden g;
        int rc = stored_read(a->cmd, a->pos[i], cases, ncases, &g);
        if (rc == QC_EXIT_OK)
            rc = golden_intact(a->cmd, a->pos[i], g.op, &g.in.params, &g.inputs, &g.outputs, 1);
        unreadable += rc != QC_EXIT_OK;
        for (int k = 0; k < nb && rc == QC_EXIT_OK; k++) {
            int one = verify_backend(a->cmd, a->pos[i], &g, bs[k], 8, &t[k]);
            worst = one > worst ? one : worst;
            unreadable += one == QC_EXIT_USAGE;
            if (one == QC_EXIT_USAGE)
                break; /* the file itself is bad: no backend can be judged on it */
        }
        worst = rc > worst ? rc : worst;
        stored_free(&g);
    }
    backend_summary(bs, t, nb, a->npos, unreadable);
    return worst;
}

static int golden_verify(int argc, char **argv)
{
    qc_args a;
    if (qc_parse_args(&a, "golden verify", argc, argv, NULL))
        return QC_EXIT_USAGE;
    if (a.help || a.npos == 0) {
        printf("usage: qcheck golden verify [--backend B[,B..]] FILE.h5 [FILE.h5 ..]\n"
               "Re-runs the reference on each golden's inputs and compares with its stored outputs\n"
               "bit for bit. Exit 0 all match, 1 a mismatch, 2 a corrupt or unreadable file.\n"
               "  --backend B   instead of the reference, run these backends or groups (qcheck list\n"
               "                backends; `ref` is the reference) on each file's stored inputs with its\n"
               "                op and params, as `qcheck run --backend` does, each in a child process,\n"
               "                and compare their outputs with the stored ones: bit for bit, or by the\n"
               "                case's rules where its case file exists. A line per file x backend: PASS/FAIL/\n"
               "                ERROR <file> <backend> figures, or SKIPPED <file> <backend>: why (the\n"
               "                backend cannot run here or declines the item; never a pass). Then a line\n"
               "                per backend, NOT CHECKED when it skipped every file, and the summary\n"
               "                N passed, N failed, N skipped. Exit 1 a FAIL or ERROR, 2 a bad file, an\n"
               "                unknown backend or an exec: one (those run through qcheck run).\n");
        return a.help ? QC_EXIT_OK : QC_EXIT_USAGE;
    }
    const char *backend_arg = qc_opt(&a, "backend");
    if (qc_check_all_used(&a))
        return QC_EXIT_USAGE;
    qc_case *cases;
    int ncases, worst = QC_EXIT_OK;
    if (load_cases(a.cmd, &cases, &ncases))
        return QC_EXIT_USAGE;
    if (backend_arg)
        worst = verify_backends(&a, backend_arg, cases, ncases);
    for (int i = 0; i < a.npos && !backend_arg; i++) {
        int rc = verify_one(a.cmd, a.pos[i], cases, ncases, 8);
        worst = rc > worst ? rc : worst;
    }
    qc_cases_free(cases, ncases);
    return worst;
}

int cmd_golden(int argc, char **argv)
{
    if (argc >= 1 && !strcmp(argv[0], "generate"))
        return golden_generate(argc - 1, argv + 1);
    if (argc >= 1 && !strcmp(argv[0], "verify"))
        return golden_verify(argc - 1, argv + 1);
    int help = argc >= 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"));
    fprintf(help ? stdout : stderr, "usage: qcheck golden generate|verify ... (--help on each)\n");
    return help ? QC_EXIT_OK : QC_EXIT_USAGE;
}

/* The instances --params selects: every instance of any tier whose params include them; when
 * none does, the one instance made from the case's first instance with --params in place of its
 * values (any value, not only swept ones; the constraints still hold). *inst is malloc'd. */
static int select_instances(qc_args *a, const qc_case *c, qc_instance **inst, int *n)
{
    const char *params_arg = qc_opt(a, "params");
    char err[1024];
    qc_params want = {0};
    if ((params_arg && qc_params_parse(&want, params_arg, err, sizeof err)) ||
        qc_case_check_keys(c, &want, err, sizeof err)) {
        qc_error(a->cmd, "--params: %s", err);
        return QC_EXIT_USAGE;
    }
    qc_instance *all = NULL;
    int na = 0, cap = 0;
    for (int t = 1; t <= QC_TIER_BRINGUP; t <<= 1)
        if (qc_case_expand(c, t, 0, &all, &na, &cap, err, sizeof err)) {
            qc_error(a->cmd, "%s", err);
            free(all);
            return QC_EXIT_USAGE;
        }
    *inst = calloc((size_t)(na ? na : 1), sizeof **inst);
    *n = 0;
    for (int i = 0; *inst && i < na; i++) {
        int match = 1, seen = 0;
        for (int k = 0; k < want.n && match; k++) {
            const char *v = qc_param(&all[i].params, want.key[k]);
            match = v && !strcmp(v, want.val[k]);
        }
        for (int j = 0; j < *n && !seen; j++) /* an instance of several tiers once */
            seen = !strcmp((*inst)[j].id, all[i].id);
        if (match && !seen)
            (*inst)[(*n)++] = all[i];
    }
    if (*inst && !*n && c->nvectors) {
        qc_error(a->cmd, "--params: no instance of %s (a table of vectors: qcheck list instances) has them", c->name);
        free(all);
        return QC_EXIT_USAGE;
    }
    if (*inst && !*n && na) {
        qc_params p = all[0].params;
        for (int k = 0; k < want.n; k++)
            qc_params_set(&p, want.key[k], want.val[k]);
        if (qc_instance_from_params(c, &p, 0, &(*inst)[0], err, sizeof err)) {
            qc_error(a->cmd, "--params: %s", err);
            free(all);
            return QC_EXIT_USAGE;
        }
        *n = 1;
        printf("no swept instance has these params: made %s from them\n", (*inst)[0].id);
        fflush(stdout); /* before any error of the instance's own, on stderr */
    }
    free(all);
    if (!*n) {
        qc_error(a->cmd, "case %s has no instance to export", c->name);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && !strcmp(s + n - t, tail);
}

int cmd_export(int argc, char **argv)
{
    qc_args a;
    if (qc_parse_args(&a, "export", argc, argv, NULL))
        return QC_EXIT_USAGE;
    if (a.help) {
        printf("usage: qcheck export --case NAME [--params k=v,...] --out FILE.h5|DIR\n"
               "Writes case instances (inputs, expected outputs, params; for gemm and moe also the quantized\n"
               "operands and expert weights the kernel consumes, docs/backends.md) for an external runner, whose outputs `qcheck verify` then checks with\n"
               "the case's rules. --params selects every instance of any tier that has those values; when\n"
               "none has, it makes the one instance of these values (others from the case's first instance).\n"
               "--out FILE.h5 takes exactly one instance; --out DIR writes DIR/<case>/<params>.h5 for each.\n");
        return QC_EXIT_OK;
    }
    const char *out = qc_opt(&a, "out"), *case_arg = qc_opt(&a, "case");
    qc_case *cases;
    int ncases, n = 0, rc;
    qc_instance *inst = NULL;
    if (!out || !case_arg) {
        qc_error(a.cmd, "--case and --out are required");
        return QC_EXIT_USAGE;
    }
    if (load_cases(a.cmd, &cases, &ncases))
        return QC_EXIT_USAGE;
    const qc_case *c = find_case(cases, ncases, case_arg);
    if (!c) {
        qc_error(a.cmd, "unknown case '%s' (qcheck list cases)", case_arg);
        rc = QC_EXIT_USAGE;
    } else {
        rc = select_instances(&a, c, &inst, &n) || qc_check_all_used(&a) || qc_positionals_at_most(&a, 0)
                 ? QC_EXIT_USAGE
                 : QC_EXIT_OK;
    }
    if (!rc && ends_with(out, ".h5") && n != 1) {
        qc_error(a.cmd, "--params selects %d instances of %s: give --out DIR to write each, or more params", n, c->name);
        rc = QC_EXIT_USAGE;
    }
    if (!rc && ends_with(out, ".h5")) {
        rc = write_instance(a.cmd, &inst[0], out);
        if (!rc)
            printf("exported %s to %s\n", inst[0].id, out);
    } else if (!rc) {
        char path[2048], folder[1024];
        snprintf(folder, sizeof folder, "%s/%s", out, c->name);
        if (qc_mkdirs(folder)) {
            qc_error(a.cmd, "--out: cannot create %s", folder);
            rc = QC_EXIT_USAGE;
        }
        for (int i = 0; !rc && i < n; i++) {
            qc_golden_path(out, &inst[i], "ref", path, sizeof path);
            rc = write_instance(a.cmd, &inst[i], path);
        }
        if (!rc)
            printf("exported %d instance%s of %s to %s/\n", n, n == 1 ? "" : "s", c->name, folder);
    }
    free(inst);
    qc_cases_free(cases, ncases);
    return rc;
}

int cmd_verify(int argc, char **argv)
{
    qc_args a;
    if (qc_parse_args(&a, "verify", argc, argv, NULL))
        return QC_EXIT_USAGE;
    if (a.help) {
        printf("usage: qcheck verify --golden FILE.h5 --outputs OUTPUTS.h5\n"
               "Compares outputs produced elsewhere (HDF5 datasets /outputs/NAME with the golden's\n"
               "names, e.g. written with h5py) against the golden with the case's rules.\n"
               "Exit 0 match, 1 mismatch, 2 unreadable or mismatching files.\n");
        return QC_EXIT_OK;
    }
    const char *golden = qc_opt(&a, "golden"), *outputs = qc_opt(&a, "outputs");
    if (qc_check_all_used(&a) || qc_positionals_at_most(&a, 0))
        return QC_EXIT_USAGE;
    if (!golden || !outputs) {
        qc_error(a.cmd, "--golden and --outputs are required");
        return QC_EXIT_USAGE;
    }
    qc_golden_meta m;
    qc_tensor_set inputs = {0}, expected = {0}, got = {0};
    char err[1024];
    qc_case *cases;
    int ncases, rc = QC_EXIT_USAGE;
    if (qc_golden_read_joined(golden, &m, &inputs, &expected, err, sizeof err) ||
        qc_check_dtypes(golden, "/inputs", &inputs, err, sizeof err) ||
        qc_check_dtypes(golden, "/outputs", &expected, err, sizeof err) ||
        qc_golden_read_outputs(outputs, &got, err, sizeof err) ||
        qc_check_dtypes(outputs, "/outputs", &got, err, sizeof err)) {
        qc_error(a.cmd, "%s", err);
        goto done;
    }
    if (load_cases(a.cmd, &cases, &ncases))
        goto done;
    const qc_case *c = find_case(cases, ncases, m.case_name);
    qc_params p;
    if (!c || qc_params_from_json(m.params_json, &p, err, sizeof err)) {
        qc_error(a.cmd, c ? "%s" : "the golden's case '%s' has no case file", c ? err : m.case_name);
    } else {
        qc_result r = {0};
        if (qc_outputs_adopt_dtypes(&got, &expected, err, sizeof err)) {
            qc_error(a.cmd, "%s: %s", outputs, err);
            qc_cases_free(cases, ncases);
            goto done;
        }
        if (qc_outputs_fit(&got, &expected, err, sizeof err)) {
            qc_error(a.cmd, "%s: %s", outputs, err);
            qc_cases_free(cases, ncases);
            goto done;
        }
        if (golden_intact(a.cmd, golden, qc_op_find(c->op), &p, &inputs, &expected, 0)) {
            qc_cases_free(cases, ncases);
            goto done;
        }
        qc_judge(c, &p, &inputs, &expected, &got, 8, &r);
        printf("%s  %s vs %s  %s\n", qc_verdict_name(r.verdict), golden, outputs, r.figures);
        if (r.verdict != QC_PASS)
            fputs(r.detail, stdout);
        rc = r.verdict == QC_PASS ? QC_EXIT_OK : QC_EXIT_FAIL;
    }
    qc_cases_free(cases, ncases);
done:
    qc_set_free(&inputs);
    qc_set_free(&expected);
    qc_set_free(&got);
    return rc;
}

/* ---- qcheck identify: which recipe profile a kernel's outputs match ---- */

typedef struct ranked {
    const char *profile;
    long mismatches; /* -1: the profile cannot take the instance */
    qc_result r;
} ranked;

static int by_mismatches(const void *a, const void *b)
{
    long x = ((const ranked *)a)->mismatches, y = ((const ranked *)b)->mismatches;
    x = x < 0 ? __LONG_MAX__ : x, y = y < 0 ? __LONG_MAX__ : y;
    return (x > y) - (x < y);
}

/* The reference under profile `name` on the given inputs, judged against got with the case's rules. */
static void judge_profile(const qc_case *c, const qc_params *p, const char *name, const qc_tensor_set *inputs,
                          qc_tensor_set *got, ranked *out)
{
    qc_params q = *p;
    qc_tensor_set expected = {0};
    char err[1024] = "";
    qc_params_set(&q, "profile", name);
    qc_op_call call = {&q, inputs, &expected, err, sizeof err, 0};
    memset(out, 0, sizeof *out);
    out->profile = name;
    if (qc_op_find(c->op)->reference(&call) != QC_OP_OK || qc_outputs_adopt_dtypes(got, &expected, err, sizeof err)) {
        out->mismatches = -1;
        snprintf(out->r.detail, sizeof out->r.detail, "%s", err);
    } else {
        qc_judge(c, &q, inputs, &expected, got, 4, &out->r);
        const char *m = strstr(out->r.figures, "mismatches=");
        out->mismatches = out->r.verdict == QC_PASS ? 0 : m ? strtol(m + 11, NULL, 10) : __LONG_MAX__ - 1;
        if (out->r.verdict != QC_PASS && out->mismatches == 0)
            out->mismatches = 1; /* failed on something the figures do not count (a shape, a NaN budget) */
    }
    qc_set_free(&expected);
}

/* The inputs of --golden FILE (what the kernel read), or of --case C --params P made as export makes them. */
static int identify_inputs(qc_args *a, const qc_case *cases, int ncases, const qc_case **c, qc_params *p,
                           qc_tensor_set *inputs)
{
    const char *golden = qc_opt(a, "golden"), *case_arg = qc_opt(a, "case"), *params = qc_opt(a, "params");
    char err[1024];
    if (golden) {
        qc_golden_meta m;
        qc_tensor_set expected = {0};
        int bad = qc_golden_read(golden, &m, inputs, &expected, err, sizeof err) ||
                  qc_params_from_json(m.params_json, p, err, sizeof err);
        qc_set_free(&expected);
        if (bad || !(*c = find_case(cases, ncases, m.case_name))) {
            qc_error(a->cmd, bad ? "%s" : "the golden's case '%s' has no case file", bad ? err : m.case_name);
            return QC_EXIT_USAGE;
        }
        return QC_EXIT_OK;
    }
    if (!case_arg || !params || !(*c = find_case(cases, ncases, case_arg))) {
        qc_error(a->cmd, case_arg && params ? "unknown case '%s' (qcheck list cases)" : "give --golden FILE.h5, or --case NAME and --params k=v,...", case_arg);
        return QC_EXIT_USAGE;
    }
    qc_instance *inst = NULL;
    qc_tensor_set expected = {0};
    int n = 0, rc = select_instances(a, *c, &inst, &n);
    if (!rc && n != 1) {
        qc_error(a->cmd, "--params selects %d instances of %s: give more params (qcheck list instances)", n,
                 (*c)->name);
        rc = QC_EXIT_USAGE;
    }
    if (!rc && qc_instance_expected(&inst[0], 0, inputs, &expected, err, sizeof err)) {
        qc_error(a->cmd, "%s", err);
        rc = QC_EXIT_USAGE;
    }
    if (!rc)
        *p = inst[0].params;
    qc_set_free(&expected);
    free(inst);
    return rc;
}

static int identify_rank(const char *cmd, const qc_case *c, const qc_params *p, const qc_tensor_set *inputs,
                         qc_tensor_set *got)
{
    const char *rname = qc_param(p, "recipe");
    int r = rname ? qc_recipe_from_name(rname) : -1;
    if (strcmp(c->op, "quant") || r < 0) {
        qc_error(cmd, "identify ranks the profiles of a quant recipe; case %s is op %s%s", c->name, c->op,
                 r < 0 && !strcmp(c->op, "quant") ? " without a known recipe param" : "");
        return QC_EXIT_USAGE;
    }
    ranked *rk = calloc((size_t)qc_recipe_profile_count(), sizeof *rk);
    int n = 0;
    for (int i = 0; rk && i < qc_recipe_profile_count(); i++)
        if (qc_recipe_profile_at(i)->recipe == (qc_recipe)r)
            judge_profile(c, p, qc_recipe_profile_at(i)->name, inputs, got, &rk[n++]);
    if (!rk) {
        qc_error(cmd, "out of memory");
        return QC_EXIT_USAGE;
    }
    qsort(rk, (size_t)n, sizeof *rk, by_mismatches);
    printf("%s profiles of %s, nearest first (inputs of %s):\n", rname, c->name, qc_param_or(p, "profile", "?"));
    for (int i = 0; i < n; i++)
        if (rk[i].mismatches < 0)
            printf("  %-22s cannot take this instance: %s\n", rk[i].profile, rk[i].r.detail);
        else
            printf("  %-22s %s  %s\n", rk[i].profile, rk[i].mismatches ? "FAIL " : "MATCH", rk[i].r.figures);
    int matched = n && rk[0].mismatches == 0;
    if (matched) { /* profiles with the same numerics for this instance all match */
        printf("the outputs match, bit for bit, profile");
        for (int i = 0; i < n && rk[i].mismatches == 0; i++)
            printf(" %s", rk[i].profile);
        printf("\n");
    } else if (n && rk[0].mismatches > 0)
        printf("no profile matches; the nearest is %s:\n%s", rk[0].profile, rk[0].r.detail);
    free(rk);
    return matched ? QC_EXIT_OK : QC_EXIT_FAIL;
}

int cmd_identify(int argc, char **argv)
{
    qc_args a;
    if (qc_parse_args(&a, "identify", argc, argv, NULL))
        return QC_EXIT_USAGE;
    if (a.help) {
        printf("usage: qcheck identify (--golden FILE.h5 | --case NAME --params k=v,...) --outputs MINE.h5\n"
               "Which profile of the recipe a quant kernel's outputs match: runs the reference under every\n"
               "profile of the instance's recipe on the same inputs (the golden's, or the instance's made as\n"
               "export makes them) and ranks them by mismatching elements, with the case's rules. Prints the\n"
               "exact match, or the first differences of the nearest. Exit 0 a profile matches, 1 none does,\n"
               "2 unreadable files or an instance that is not a quant recipe's.\n");
        return QC_EXIT_OK;
    }
    const char *outputs = qc_opt(&a, "outputs");
    qc_case *cases;
    int ncases, rc;
    qc_params p;
    const qc_case *c = NULL;
    qc_tensor_set inputs = {0}, got = {0};
    char err[1024];
    if (!outputs) {
        qc_error(a.cmd, "--outputs is required");
        return QC_EXIT_USAGE;
    }
    if (load_cases(a.cmd, &cases, &ncases))
        return QC_EXIT_USAGE;
    rc = identify_inputs(&a, cases, ncases, &c, &p, &inputs);
    if (!rc && (qc_check_all_used(&a) || qc_positionals_at_most(&a, 0)))
        rc = QC_EXIT_USAGE;
    if (!rc && (qc_golden_read_outputs(outputs, &got, err, sizeof err) ||
                qc_check_dtypes(outputs, "/outputs", &got, err, sizeof err))) {
        qc_error(a.cmd, "%s", err);
        rc = QC_EXIT_USAGE;
    }
    if (!rc)
        rc = identify_rank(a.cmd, c, &p, &inputs, &got);
    qc_set_free(&inputs);
    qc_set_free(&got);
    qc_cases_free(cases, ncases);
    return rc;
}

/* ---- qcheck coverage: the boundary classes the quant cases of a tier reach ---- */

static int print_coverage(const qc_coverage_row *cv, int n)
{
    int missing = 0;
    printf("%-34s %5s  %s\n", "recipe profile", "inst", "classes reached (*: required and not reached)");
    for (int i = 0; i < n; i++) {
        printf("%-34s %5d ", cv[i].key, cv[i].instances);
        for (int k = 0; k < QC_COV_COUNT; k++)
            if (cv[i].hit >> k & 1)
                printf(" %s", qc_coverage_names[k]);
            else if (cv[i].need >> k & 1)
                printf(" *%s", qc_coverage_names[k]), missing++;
        printf("\n");
    }
    return missing;
}

int cmd_coverage(int argc, char **argv)
{
    qc_args a;
    if (qc_parse_args(&a, "coverage", argc, argv, NULL))
        return QC_EXIT_USAGE;
    if (a.help) {
        printf("usage: qcheck coverage [--case NAME[,NAME..]] [--suite quick|full|bringup]\n"
               "Which boundaries the inputs of the quant cases reach, per recipe x profile: an element on a\n"
               "rounding midpoint after its scale (ties), a finite element at or past the overflow threshold\n"
               "after it (saturation), NaN/Inf elements, all-zero blocks, subnormal scales, zero scales of nonzero\n"
               "blocks (underflow), Inf/NaN scales of finite blocks (overflow), blocks shorter than the\n"
               "recipe's. Exit 1 naming the classes a recipe x profile must reach and does not (docs/cases.md).\n");
        return QC_EXIT_OK;
    }
    const char *case_arg = qc_opt(&a, "case"), *suite = qc_opt(&a, "suite");
    int tier = qc_tier_from_name(suite ? suite : "quick");
    if (qc_check_all_used(&a) || qc_positionals_at_most(&a, 0))
        return QC_EXIT_USAGE;
    if (tier < 0) {
        qc_error(a.cmd, "unknown suite '%s'", suite);
        return QC_EXIT_USAGE;
    }
    qc_case *cases;
    int ncases, rc = QC_EXIT_OK, ncov = 0;
    qc_coverage_row cv[256];
    char err[1024];
    if (load_cases(a.cmd, &cases, &ncases) || known_cases(a.cmd, cases, ncases, case_arg))
        return QC_EXIT_USAGE;
    for (int c = 0; c < ncases && !rc; c++) {
        if (strcmp(cases[c].op, "quant") || (case_arg && !qc_case_in_list(cases[c].name, case_arg)))
            continue;
        qc_instance *inst = NULL;
        int n = 0, cap = 0;
        if (qc_case_expand(&cases[c], tier, 0, &inst, &n, &cap, err, sizeof err))
            qc_error(a.cmd, "%s", err), rc = QC_EXIT_USAGE;
        for (int i = 0; i < n && !rc; i++)
            if (qc_coverage_add(&inst[i], cv, &ncov, 256, err, sizeof err))
                qc_error(a.cmd, "%s: %s", inst[i].id, err), rc = QC_EXIT_USAGE;
        free(inst);
    }
    qc_cases_free(cases, ncases);
    if (!rc && ncov == 0) { /* an empty table checked nothing: not a pass */
        qc_error(a.cmd, "no instance of a quant case in the selection (--case %s, --suite %s): coverage reads the "
                 "inputs of quant cases (qcheck list cases)", case_arg ? case_arg : "(all)", suite ? suite : "quick");
        return QC_EXIT_USAGE;
    }
    if (!rc && print_coverage(cv, ncov))
        rc = QC_EXIT_FAIL;
    return rc;
}
