/* cmd_bringup.c: `qcheck bringup [--backend B] [--report DIR]`: characterise a device against the
 * reference. Each backend with a bringup slot (include/qcheck/qcheck.h) runs, in a child process
 * of its own (a GPU driver never starts in this one), every check it knows: a conversion
 * instruction on all inputs of its domain against the reference's codec under the profile it
 * claims, an approximate instruction against the reference's emulation of it. qcheck prints one
 * line per instruction, "matches" or "differs on N of M inputs" with the first examples, and with
 * --report writes bringup.md and bringup.json. Exit 0 when every instruction matches, 1 when one
 * differs or a backend failed, 2 on bad usage or when no selected backend can run here. */
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "golden_io.h"
#include "registry.h"
#include "runner.h"
#include "files.h"

#define QC_MAX_FINDINGS 64

typedef struct outcome {
    qcheck_bringup_args args;
    qcheck_finding findings[QC_MAX_FINDINGS];
    int status;        /* the slot's qcheck_status, or -1: the child died */
    char message[512]; /* why, when status != QCHECK_OK */
} outcome;

static void bringup_help(void)
{
    printf("usage: qcheck bringup [--backend B[,B..]] [--report DIR] [--device N] [--timeout SEC]\n"
           "Characterises a device against the reference: every conversion instruction the backend's\n"
           "device offers for qcheck's formats on all of its inputs (2^32 fp32 patterns), and its\n"
           "approximate instructions (rcp.approx.ftz, ...) against the reference's emulations, each\n"
           "compared on the device. One line per instruction: matches, or differs on N inputs with the\n"
           "first examples. --report DIR writes DIR/bringup.md and DIR/bringup.json.\n"
           "  --backend B   backends with a bringup slot (default: every one that can run here);\n"
           "                plugin:PATH.so[:NAME] as for qcheck run\n"
           "  --timeout SEC per backend [600]\n"
           "Exit 0 every instruction matches, 1 one differs (or a backend failed), 2 bad usage or no\n"
           "selected backend can run here.\n");
}

/* The backend's bringup in a child, its outcome through a pipe. */
static void run_child(const qc_backend *b, int device, double timeout, outcome *o)
{
    int fds[2];
    memset(o, 0, sizeof *o);
    o->status = -1;
    if (pipe(fds)) {
        snprintf(o->message, sizeof o->message, "cannot make a pipe");
        return;
    }
    pid_t pid = qc_fork();
    if (pid == 0) {
        close(fds[0]);
        static outcome mine;
        memset(&mine, 0, sizeof mine);
        mine.args.findings = mine.findings, mine.args.max = QC_MAX_FINDINGS;
        qcheck_ctx ctx = {mine.message, sizeof mine.message, device};
        mine.status = b->abi->bringup(&mine.args, &ctx);
        _exit(qc_write_all(fds[1], &mine, sizeof mine) ? 3 : 0);
    }
    close(fds[1]);
    size_t got = 0;
    double end = qc_now() + timeout;
    while (got < sizeof *o && qc_now() < end) {
        ssize_t k = read(fds[0], (char *)o + got, sizeof *o - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    int status = 0;
    if (got < sizeof *o)
        kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    close(fds[0]);
    if (got == sizeof *o) {
        o->args.findings = o->findings;
        return;
    }
    memset(o, 0, sizeof *o);
    o->status = -1;
    if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
        snprintf(o->message, sizeof o->message, "bring-up crashed: signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(o->message, sizeof o->message, "bring-up gave no result within %.0f s", timeout);
}

static void example_text(const qcheck_finding *f, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < f->nexamples && i < 4 && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s0x%08X -> 0x%X (expected 0x%X)", i ? "; " : "", f->example_input[i],
                               f->example_got[i], f->example_expected[i]);
}

static void print_outcome(const qc_backend *b, const outcome *o)
{
    if (o->status != QCHECK_OK) {
        printf("%-10s %s: %s\n", o->status == QCHECK_DECLINED ? "SKIPPED" : "ERROR", b->name, o->message);
        return;
    }
    printf("bringup %s on %s (driver %s, toolkit %s)\n", b->name, o->args.device, o->args.driver, o->args.toolkit);
    for (int i = 0; i < o->args.n; i++) {
        const qcheck_finding *f = &o->findings[i];
        char ex[400];
        example_text(f, ex, sizeof ex);
        if (f->mismatches)
            printf("  DIFFERS  %-34s vs %s: %llu of %llu inputs (%.1f ms); first: %s\n", f->what, f->against,
                   (unsigned long long)f->mismatches, (unsigned long long)f->inputs, f->device_ms, ex);
        else
            printf("  matches  %-34s vs %s: %llu inputs (%.1f ms)\n", f->what, f->against,
                   (unsigned long long)f->inputs, f->device_ms);
    }
}

static cJSON *outcome_json(const qc_backend *b, const outcome *o)
{
    cJSON *j = cJSON_CreateObject(), *list = cJSON_CreateArray();
    cJSON_AddStringToObject(j, "backend", b->name);
    cJSON_AddStringToObject(j, "status", o->status == QCHECK_OK ? "ok" : o->status == QCHECK_DECLINED ? "skipped" : "error");
    if (o->status != QCHECK_OK)
        cJSON_AddStringToObject(j, "message", o->message);
    cJSON_AddStringToObject(j, "device", o->args.device);
    cJSON_AddStringToObject(j, "driver", o->args.driver);
    cJSON_AddStringToObject(j, "toolkit", o->args.toolkit);
    for (int i = 0; i < o->args.n; i++) {
        const qcheck_finding *f = &o->findings[i];
        cJSON *x = cJSON_CreateObject(), *ex = cJSON_CreateArray();
        cJSON_AddStringToObject(x, "instruction", f->what);
        cJSON_AddStringToObject(x, "against", f->against);
        cJSON_AddNumberToObject(x, "inputs", (double)f->inputs);
        cJSON_AddNumberToObject(x, "mismatches", (double)f->mismatches);
        cJSON_AddStringToObject(x, "verdict", f->mismatches ? "differs" : "matches");
        cJSON_AddNumberToObject(x, "device_ms", f->device_ms);
        for (int k = 0; k < f->nexamples && k < 4; k++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "input", f->example_input[k]);
            cJSON_AddNumberToObject(e, "got", f->example_got[k]);
            cJSON_AddNumberToObject(e, "expected", f->example_expected[k]);
            cJSON_AddItemToArray(ex, e);
        }
        cJSON_AddItemToObject(x, "first_mismatches", ex);
        cJSON_AddItemToArray(list, x);
    }
    cJSON_AddItemToObject(j, "findings", list);
    return j;
}

static void outcome_md(FILE *f, const qc_backend *b, const outcome *o)
{
    fprintf(f, "## %s\n\n", b->name);
    if (o->status != QCHECK_OK) {
        fprintf(f, "%s: %s\n\n", o->status == QCHECK_DECLINED ? "SKIPPED" : "ERROR", o->message);
        return;
    }
    fprintf(f, "Device %s, driver %s, toolkit %s.\n\n| instruction | compared with | inputs | verdict | device ms |\n"
               "|---|---|---|---|---|\n", o->args.device, o->args.driver, o->args.toolkit);
    for (int i = 0; i < o->args.n; i++) {
        const qcheck_finding *x = &o->findings[i];
        char ex[400], verdict[520];
        example_text(x, ex, sizeof ex);
        if (x->mismatches)
            snprintf(verdict, sizeof verdict, "differs on %llu inputs; first: %s", (unsigned long long)x->mismatches, ex);
        else
            snprintf(verdict, sizeof verdict, "matches");
        fprintf(f, "| `%s` | %s | %llu | %s | %.1f |\n", x->what, x->against, (unsigned long long)x->inputs, verdict,
                x->device_ms);
    }
    fprintf(f, "\n");
}

static int write_report(const char *dir, const qc_backend *const *bs, const outcome *os, int n)
{
    char path[2048];
    if (qc_mkdirs(dir))
        return -1;
    cJSON *root = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(root, outcome_json(bs[i], &os[i]));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    snprintf(path, sizeof path, "%s/bringup.json", dir);
    FILE *f = fopen(path, "w");
    int rc = !f || !text || fputs(text, f) < 0;
    rc |= f && fclose(f) != 0;
    free(text);
    snprintf(path, sizeof path, "%s/bringup.md", dir);
    f = rc ? NULL : fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "# qcheck bringup\n\n");
    for (int i = 0; i < n; i++)
        outcome_md(f, bs[i], &os[i]);
    return fclose(f) ? -1 : 0;
}

/* --backend's list, or every backend with a bringup slot. */
static int pick(const char *arg, const qc_backend **out, int *n)
{
    char err[1024], buf[4096];
    *n = 0;
    if (!arg) {
        for (int i = 0; i < qc_backend_count() && *n < 16; i++)
            if (qc_backend_at(i)->abi && qc_backend_at(i)->abi->bringup)
                out[(*n)++] = qc_backend_at(i);
        return QC_EXIT_OK;
    }
    snprintf(buf, sizeof buf, "%s", arg);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && *n < 16; t = strtok_r(NULL, ",", &save)) {
        const qc_backend *b = !strncmp(t, "plugin:", 7) ? qc_plugin_load(t, err, sizeof err) : qc_backend_find(t);
        if (!b) {
            qc_error("bringup", "%s", !strncmp(t, "plugin:", 7) ? err : "unknown backend (qcheck list backends)");
            return QC_EXIT_USAGE;
        }
        if (!b->abi || !b->abi->bringup) {
            qc_error("bringup", "backend %s has no bring-up checks", b->name);
            return QC_EXIT_USAGE;
        }
        out[(*n)++] = b;
    }
    return QC_EXIT_OK;
}

int cmd_bringup(int argc, char **argv)
{
    qc_args a;
    if (qc_parse_args(&a, "bringup", argc, argv, NULL))
        return QC_EXIT_USAGE;
    if (a.help) {
        bringup_help();
        return QC_EXIT_OK;
    }
    const char *backend = qc_opt(&a, "backend"), *report = qc_opt(&a, "report"), *dev = qc_opt(&a, "device");
    const char *tmo = qc_opt(&a, "timeout");
    long device = 0, timeout = 600;
    const qc_backend *bs[16];
    int n, ran = 0, rc = QC_EXIT_OK;
    if (qc_check_all_used(&a) || qc_positionals_at_most(&a, 0) ||
        (dev && qc_opt_int(a.cmd, "device", dev, 0, 1023, &device)) ||
        (tmo && qc_opt_int(a.cmd, "timeout", tmo, 1, 86400, &timeout)) || pick(backend, bs, &n))
        return QC_EXIT_USAGE;
    static outcome os[16];
    for (int i = 0; i < n; i++) {
        const char *why = qc_backend_unavailable(bs[i]);
        if (why) {
            memset(&os[i], 0, sizeof os[i]);
            os[i].status = QCHECK_DECLINED;
            snprintf(os[i].message, sizeof os[i].message, "cannot run here: %s", why);
        } else {
            run_child(bs[i], device, timeout, &os[i]);
            ran++;
        }
        print_outcome(bs[i], &os[i]);
        for (int k = 0; os[i].status == QCHECK_OK && k < os[i].args.n; k++)
            rc = os[i].findings[k].mismatches ? QC_EXIT_FAIL : rc;
        rc = os[i].status != QCHECK_OK && os[i].status != QCHECK_DECLINED ? QC_EXIT_FAIL : rc;
    }
    if (report && write_report(report, bs, os, n)) {
        qc_error(a.cmd, "--report: cannot write %s/bringup.md and bringup.json", report);
        return QC_EXIT_USAGE;
    }
    if (!ran) {
        qc_error(a.cmd, n ? "no selected backend can run here (see above)" : "no backend has bring-up checks");
        return QC_EXIT_USAGE;
    }
    return rc;
}
