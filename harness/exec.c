/* exec.c: `--backend exec:'CMD ARGS'`, a kernel in an outside process, driven through HDF5 files
 * in batches (docs/exec.md is the protocol). The runner hands one batch to a child process, which
 * runs qc_exec_batch: it writes every item's inputs, runs the command once, and judges each
 * item's outputs with the case's rules like any backend's. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "golden_io.h"
#include "runner.h"
#include "stages.h"

const qc_backend *qc_exec_backend(const char *spec, char *err, size_t errlen)
{
    const char *cmd = spec + strlen("exec:");
    while (*cmd == ' ')
        cmd++;
    if (!*cmd) {
        snprintf(err, errlen, "--backend %s: expected exec:'COMMAND ARGS' (docs/exec.md)", spec);
        return NULL;
    }
    qc_backend b = {.name = strdup(spec), .group = "exec", .exec_cmd = strdup(cmd),
                    .doc = "an outside process through HDF5 files (docs/exec.md)"};
    return b.name && b.exec_cmd ? qc_backend_add(&b, err, errlen) : NULL;
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static char *read_text(const char *path, size_t max)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(max + 1, 1);
    size_t n = buf ? fread(buf, 1, max, f) : 0;
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

/* The last lines of a file (the process's stderr), at most max bytes. */
static void tail_of(const char *path, char *out, size_t max)
{
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    long from = size > (long)max - 1 ? size - (long)max + 1 : 0;
    fseek(f, from, SEEK_SET);
    size_t n = fread(out, 1, max - 1, f);
    out[n] = '\0';
    fclose(f);
}

typedef struct batch {
    char dir[512];
    int n;
} batch;

/* Item j's file of one kind: in/NNNN.h5, exp/NNNN.h5 (private: the expected outputs), out/NNNN.h5,
 * out/NNNN.declined, out/NNNN.error. */
static void item_path(const batch *b, const char *sub, int j, const char *ext, char *out, size_t len)
{
    snprintf(out, len, "%s/%s/%04d%s", b->dir, sub, j, ext);
}

/* Inputs and expected outputs of item j to the batch folder; 0, or the result's verdict set. */
static int stage_item(const batch *b, int j, const qc_work *w, qc_result *r)
{
    qc_tensor_set inputs = {0}, expected = {0};
    char err[1024], path[1024];
    int rc = qc_instance_expected(w->inst, 1, &inputs, &expected, err, sizeof err);
    qc_golden_meta m;
    qc_instance_meta(w->inst, w->backend->name, &m);
    m.ephemeral = 1;
    if (!rc) {
        qc_tensor_set plain, split[QC_MAX_TENSORS];
        char names[QC_MAX_TENSORS][QC_NAME_LEN];
        qc_stage_split(&expected, NULL, &plain, split, names, QC_MAX_TENSORS);
        item_path(b, "in", j, ".h5", path, sizeof path);
        rc = qc_golden_write(path, &m, &inputs, NULL, NULL, NULL, 0, err, sizeof err);
        item_path(b, "exp", j, ".h5", path, sizeof path);
        rc = rc || qc_golden_write(path, &m, &inputs, &plain, NULL, NULL, 0, err, sizeof err);
    }
    if (rc) {
        r->verdict = QC_ERROR;
        snprintf(r->figures, sizeof r->figures, "inputs not written");
        snprintf(r->detail, sizeof r->detail, "  %s\n", err);
    }
    qc_set_free(&inputs);
    qc_set_free(&expected);
    return rc;
}

static int write_manifest(const batch *b, const qc_work *work, const int *idx, const int *staged)
{
    cJSON *root = cJSON_CreateObject(), *items = cJSON_CreateArray();
    cJSON_AddStringToObject(root, "protocol", "qcheck-exec");
    cJSON_AddNumberToObject(root, "version", 1);
    cJSON_AddItemToObject(root, "items", items);
    for (int j = 0; j < b->n; j++) {
        if (!staged[j])
            continue;
        const qc_instance *in = work[idx[j]].inst;
        cJSON *it = cJSON_CreateObject(), *params = cJSON_CreateObject();
        char rel[64];
        cJSON_AddStringToObject(it, "id", in->id);
        cJSON_AddStringToObject(it, "case", in->c->name);
        cJSON_AddStringToObject(it, "op", in->c->op);
        for (int k = 0; k < in->params.n; k++)
            cJSON_AddStringToObject(params, in->params.key[k], in->params.val[k]);
        cJSON_AddItemToObject(it, "params", params);
        static const char *const keys[4] = {"inputs", "outputs", "declined", "error"};
        static const char *const forms[4] = {"in/%04d.h5", "out/%04d.h5", "out/%04d.declined", "out/%04d.error"};
        for (int k = 0; k < 4; k++) {
            snprintf(rel, sizeof rel, forms[k], j);
            cJSON_AddStringToObject(it, keys[k], rel);
        }
        cJSON_AddItemToArray(items, it);
    }
    char *text = cJSON_Print(root), path[1024];
    cJSON_Delete(root);
    snprintf(path, sizeof path, "%s/manifest.json", b->dir);
    int rc = !text || write_text(path, text);
    free(text);
    return rc;
}

static void end_group(int sig)
{
    (void)sig;
    kill(0, SIGKILL);
}

/* The leader of the command's process group (never returns): runs argv as its child and ends as the
 * child ended (its exit code, or the signal that killed it), so the worker's wait status is the
 * command's. PR_SET_PDEATHSIG reaches only a direct child: when the worker dies (qcheck killed,
 * Ctrl-C), the leader gets SIGTERM and kills its whole group, so that `sh -c` and every process the
 * command started die with qcheck; it stays alive until then, so the group's id cannot be reused. */
static void lead_group(char *const argv[])
{
    const pid_t worker = getppid();
    signal(SIGTERM, end_group);
#if defined(__linux__)
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != worker)
        _exit(126);
#endif
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid > 0 && WIFSIGNALED(status)) {
        signal(WTERMSIG(status), SIG_DFL);
        kill(getpid(), WTERMSIG(status));
    }
    _exit(pid < 0 ? 127 : WIFEXITED(status) ? WEXITSTATUS(status) : 126);
}

/* Runs CMD with the manifest as its last argument, stdout and stderr into the batch folder, for
 * at most seconds; the wait status, or -1 when it could not start; *timed_out when it was killed. */
static int run_command(const batch *b, const char *cmd, double seconds, int *timed_out)
{
    char manifest[1024], out[1024], script[8192];
    snprintf(manifest, sizeof manifest, "%s/manifest.json", b->dir);
    snprintf(out, sizeof out, "%s/stderr.txt", b->dir);
    snprintf(script, sizeof script, "%s \"$1\"", cmd);
    *timed_out = 0;
    pid_t pid = qc_fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1), dup2(fd, 2);
            close(fd);
        }
        setpgid(0, 0); /* its own process group, so that a timeout kills its children too */
        setenv("QCHECK_EXEC_MANIFEST", manifest, 1);
        lead_group((char *[]){"/bin/sh", "-c", script, "qcheck", manifest, NULL});
    }
    double end = qc_now() + seconds;
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            return status;
        if (w < 0 && errno != EINTR)
            return -1;
        if (qc_now() > end) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            *timed_out = 1;
            return status;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

static void describe_exit(int status, int timed_out, double seconds, char *out, size_t len)
{
    if (status == -1)
        snprintf(out, len, "the command could not be started");
    else if (timed_out)
        snprintf(out, len, "the command was killed after %.0f s (--timeout per item x items)", seconds);
    else if (WIFSIGNALED(status))
        snprintf(out, len, "the command died of signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + 65) /* the shell reports a signal so */
        snprintf(out, len, "the command exited %d: signal %d (%s)", WEXITSTATUS(status), WEXITSTATUS(status) - 128,
                 strsignal(WEXITSTATUS(status) - 128));
    else if (WEXITSTATUS(status))
        snprintf(out, len, "the command exited %d", WEXITSTATUS(status));
    else
        snprintf(out, len, "the command exited 0");
}

/* Item j's outcome from the files the process left. */
static void judge_item(const batch *b, int j, const qc_work *w, const qc_run_config *cfg, const char *exit_note,
                       const char *stderr_tail, qc_result *r)
{
    char path[1024], err[1024];
    item_path(b, "out", j, ".declined", path, sizeof path);
    char *text = read_text(path, 512);
    if (text) {
        r->verdict = QC_SKIPPED;
        snprintf(r->figures, sizeof r->figures, "declined: %.200s", text[0] ? text : "(no reason given)");
        free(text);
        return;
    }
    item_path(b, "out", j, ".error", path, sizeof path);
    if ((text = read_text(path, 2048))) {
        r->verdict = QC_ERROR;
        snprintf(r->figures, sizeof r->figures, "the process reported an error");
        snprintf(r->detail, sizeof r->detail, "  %s\n", text);
        free(text);
        return;
    }
    qc_tensor_set inputs = {0}, expected = {0}, got = {0};
    item_path(b, "out", j, ".h5", path, sizeof path);
    if (access(path, F_OK)) {
        r->verdict = QC_ERROR;
        snprintf(r->figures, sizeof r->figures, "no output (%.200s)", exit_note);
        snprintf(r->detail, sizeof r->detail, "  %s wrote none of outputs, declined, error for this item; its "
                 "stderr ends:\n%s\n", w->backend->name, stderr_tail);
        return;
    }
    if (qc_golden_read_outputs(path, &got, err, sizeof err)) {
        r->verdict = QC_ERROR;
        snprintf(r->figures, sizeof r->figures, "unreadable output file");
        snprintf(r->detail, sizeof r->detail, "  %s\n", err);
    } else {
        item_path(b, "exp", j, ".h5", path, sizeof path);
        if (qc_golden_read(path, NULL, &inputs, &expected, err, sizeof err)) {
            r->verdict = QC_ERROR;
            snprintf(r->figures, sizeof r->figures, "expected outputs lost");
            snprintf(r->detail, sizeof r->detail, "  %s\n", err);
        } else {
            if (qc_outputs_adopt_dtypes(&got, &expected, err, sizeof err)) {
                r->verdict = QC_ERROR;
                snprintf(r->figures, sizeof r->figures, "wrong output dtype");
                snprintf(r->detail, sizeof r->detail, "  %s\n", err);
            } else {
                qc_judge(w->inst->c, &w->inst->params, &inputs, &expected, &got, cfg->show, r);
            }
            if (cfg->keep_failing && r->verdict == QC_FAIL)
                qc_keep_failing(cfg->keep_failing, w->inst, w->backend->name, &inputs, &expected, &got, r);
        }
    }
    qc_set_free(&inputs);
    qc_set_free(&expected);
    qc_set_free(&got);
}

static void remove_tree(const char *dir)
{
    char cmd[700];
    if (getenv("QCHECK_EXEC_KEEP")) /* debugging: leave the batch folder */
        return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "qcheck: could not remove %s\n", dir);
}

void qc_exec_batch(const qc_work *work, const int *idx, int n, const qc_run_config *cfg, qc_result *results)
{
    const qc_backend *be = work[idx[0]].backend;
    const char *tmp = getenv("TMPDIR");
    batch b = {.n = n};
    snprintf(b.dir, sizeof b.dir, "%s/qcheck_exec.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int *staged = calloc((size_t)n, sizeof *staged);
    char sub[1024];
    if (!staged || !mkdtemp(b.dir)) {
        for (int j = 0; j < n; j++) {
            results[j].verdict = QC_ERROR;
            snprintf(results[j].figures, sizeof results[j].figures, "cannot make a batch folder: %s", strerror(errno));
        }
        free(staged);
        return;
    }
    static const char *const subs[] = {"in", "exp", "out"};
    for (int k = 0; k < 3; k++) {
        snprintf(sub, sizeof sub, "%s/%s", b.dir, subs[k]);
        mkdir(sub, 0755);
    }
    int any = 0;
    for (int j = 0; j < n; j++)
        any |= staged[j] = !stage_item(&b, j, &work[idx[j]], &results[j]);
    int status = 0, timed_out = 0;
    double seconds = cfg->timeout * n;
    char note[256], stderr_tail[1500];
    if (any && write_manifest(&b, work, idx, staged))
        status = -1;
    else if (any)
        status = run_command(&b, be->exec_cmd, seconds, &timed_out);
    describe_exit(status, timed_out, seconds, note, sizeof note);
    snprintf(sub, sizeof sub, "%s/stderr.txt", b.dir);
    tail_of(sub, stderr_tail, sizeof stderr_tail);
    for (int j = 0; j < n; j++)
        if (staged[j])
            judge_item(&b, j, &work[idx[j]], cfg, note, stderr_tail, &results[j]);
    remove_tree(b.dir);
    free(staged);
}
