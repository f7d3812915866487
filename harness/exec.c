/* exec.c: `--backend exec:'CMD ARGS'`, a kernel in an outside process, driven through HDF5 files
 * in batches (docs/exec.md is the protocol). The runner hands one batch to a child process, which
 * runs qc_exec_batch: it writes every item's inputs, runs the command once, and judges each
 * item's outputs with the case's rules like any backend's. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "golden_io.h"
#include "runner.h"

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

/* Item j's file of one kind: in/NNNN.h5, out/NNNN.h5, out/NNNN.declined, out/NNNN.error. */
static void item_path(const batch *b, const char *sub, int j, const char *ext, char *out, size_t len)
{
    snprintf(out, len, "%s/%s/%04d%s", b->dir, sub, j, ext);
}

/* The inputs of item j to the batch folder; 0, or the result's verdict set. The expected outputs
 * never reach the disk: the judge computes them after the process ends, so a process can neither
 * read nor edit them (a copy of them would pass, an edit would make any output pass). */
static int stage_item(const batch *b, int j, const qc_work *w, qc_result *r)
{
    qc_tensor_set inputs = {0};
    char err[1024], path[1024];
    qc_golden_meta m;
    qc_instance_meta(w->inst, w->backend->name, &m);
    m.ephemeral = 1;
    item_path(b, "in", j, ".h5", path, sizeof path);
    int rc = qc_instance_inputs(w->inst, 1, &inputs, err, sizeof err) ||
             qc_golden_write(path, &m, &inputs, NULL, NULL, NULL, 0, err, sizeof err);
    if (rc) {
        r->verdict = QC_ERROR;
        snprintf(r->figures, sizeof r->figures, "inputs not written");
        snprintf(r->detail, sizeof r->detail, "  %s\n", err);
    }
    qc_set_free(&inputs);
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

static volatile sig_atomic_t command_pid; /* in the leader: the command, and so its process group */

static void end_command(int sig)
{
    if (command_pid > 0)
        kill(-(pid_t)command_pid, SIGKILL);
    _exit(128 + sig);
}

/* The leader of an exec batch's command (never returns). The command runs as its child in a process
 * group of its own, with everything it starts; the leader ends as the command ended (its exit code,
 * or the signal that killed it), so the worker's wait status is the command's. The group is killed
 * when the command ends (what it left running in the background), on SIGTERM (the worker's timeout)
 * and when the worker dies (qcheck killed, Ctrl-C: PR_SET_PDEATHSIG, which itself reaches only a
 * direct child, so `sh -c` and what the command started would outlive qcheck). Until the command
 * is reaped its pid holds the group's id, so the kill cannot reach a group that reused it. */
static void lead_command(char *const argv[])
{
    const pid_t worker = getppid(), leader = getpid();
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &old); /* until command_pid is known */
    signal(SIGTERM, end_command);
#if defined(__linux__)
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != worker)
        _exit(126);
#endif
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
#if defined(__linux__)
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != leader)
            _exit(126);
#endif
        signal(SIGTERM, SIG_DFL);
        sigprocmask(SIG_SETMASK, &old, NULL);
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid > 0)
        setpgid(pid, pid); /* as the child does: whichever runs first */
    command_pid = pid;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0)
        _exit(127);
    siginfo_t ended;
    while (waitid(P_PID, (id_t)pid, &ended, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(status)) {
        signal(WTERMSIG(status), SIG_DFL);
        kill(getpid(), WTERMSIG(status));
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 126);
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
        setpgid(0, 0); /* out of qcheck's group: a Ctrl-C reaches qcheck, which ends the command */
        setenv("QCHECK_EXEC_MANIFEST", manifest, 1);
        lead_command((char *[]){"/bin/sh", "-c", script, "qcheck", manifest, NULL});
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
            kill(pid, SIGTERM); /* the leader kills the command's group and ends */
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

/* Control characters (a newline among them) as spaces: a process's text stays on its verdict's line
 * and cannot print lines that read as verdicts. */
static char *one_line(char *text)
{
    for (char *c = text; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7F)
            *c = ' ';
    return text;
}

static void item_error(qc_result *r, const char *figures, const char *detail)
{
    r->verdict = QC_ERROR;
    snprintf(r->figures, sizeof r->figures, "%s", figures);
    snprintf(r->detail, sizeof r->detail, "  %s\n", detail);
}

/* The outputs file of item j judged against the reference's outputs, computed now. */
static void judge_outputs(const char *path, const qc_work *w, const qc_run_config *cfg, qc_result *r)
{
    qc_tensor_set inputs = {0}, expected = {0}, got = {0};
    char err[1024];
    if (qc_golden_read_outputs(path, &got, err, sizeof err))
        item_error(r, "unreadable output file", err);
    else if (qc_instance_expected(w->inst, 1, &inputs, &expected, err, sizeof err))
        item_error(r, "no expected outputs", err);
    else if (qc_outputs_fit(&got, &expected, err, sizeof err))
        item_error(r, "outputs do not fit the op", err);
    else if (qc_outputs_adopt_dtypes(&got, &expected, err, sizeof err))
        item_error(r, "wrong output dtype", err);
    else {
        qc_judge(w->inst->c, &w->inst->params, &inputs, &expected, &got, cfg->show, r);
        if (cfg->keep_failing && r->verdict == QC_FAIL)
            qc_keep_failing(cfg->keep_failing, w->inst, w->backend->name, &inputs, &expected, &got, r);
    }
    qc_set_free(&inputs);
    qc_set_free(&expected);
    qc_set_free(&got);
}

/* Item j's outcome from the files the process left: exactly one of outputs, declined, error. */
static void judge_item(const batch *b, int j, const qc_work *w, const qc_run_config *cfg, const char *exit_note,
                       const char *stderr_tail, qc_result *r)
{
    static const char *const ext[3] = {".h5", ".declined", ".error"};
    char path[3][1024], err[2048], figures[256];
    int left = 0;
    struct stat st;
    for (int k = 0; k < 3; k++) {
        item_path(b, "out", j, ext[k], path[k], sizeof path[k]);
        left |= lstat(path[k], &st) == 0 ? 1 << k : 0;
    }
    if (!left) {
        snprintf(err, sizeof err, "%s wrote none of outputs, declined, error for this item; its stderr ends:\n%s",
                 w->backend->name, stderr_tail);
        snprintf(figures, sizeof figures, "no output (%.200s)", exit_note);
        item_error(r, figures, err);
        return;
    }
    if (left & (left - 1)) { /* a declined or an error beside outputs says the outputs are not to be trusted */
        snprintf(err, sizeof err, "%s wrote%s%s%s for this item; docs/exec.md asks for exactly one", w->backend->name,
                 left & 1 ? " outputs" : "", left & 2 ? " declined" : "", left & 4 ? " error" : "");
        item_error(r, "more than one outcome", err);
        return;
    }
    if (left == 1) {
        judge_outputs(path[0], w, cfg, r);
        return;
    }
    int k = left == 2 ? 1 : 2;
    size_t size;
    char *text = qc_read_regular(path[k], 1 << 16, &size);
    if (!text) {
        snprintf(err, sizeof err, "%.1024s: %s", path[k], errno == EINVAL ? "not a regular file"
                                                   : errno == EFBIG ? "more than 64 KiB of text" : strerror(errno));
        item_error(r, k == 1 ? "unreadable declined file" : "unreadable error file", err);
    } else if (k == 1) {
        r->verdict = QC_SKIPPED;
        snprintf(r->figures, sizeof r->figures, "declined: %.200s", text[0] ? one_line(text) : "(no reason given)");
    } else {
        item_error(r, "the process reported an error", one_line(text));
    }
    free(text);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path) != 0 && errno != ENOENT;
}

/* The batch folder and all it holds, links removed as links (FTW_PHYS), never through a shell:
 * the folder's name comes from TMPDIR, which may hold any character. */
static void remove_tree(const char *dir)
{
    if (getenv("QCHECK_EXEC_KEEP")) /* debugging: leave the batch folder */
        return;
    if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "qcheck: could not remove %s: %s\n", dir, strerror(errno));
}

static const char *batch_root(void)
{
    const char *tmp = getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
}

/* Whether process pid has ended: no such process, or (Linux) a zombie its new parent has not
 * reaped yet, as a worker killed with qcheck stays for a while. */
static int process_gone(long pid)
{
    if (kill((pid_t)pid, 0) != 0)
        return errno == ESRCH;
    char path[64], line[256] = "";
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    const char *close_paren = strrchr(line, ')'); /* the state follows the command's name */
    return close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
}

/* A batch folder is named after the process that makes and removes it, qcheck_exec.<pid>.XXXXXX,
 * so that the folder of one that was SIGKILLed (the runner's deadline, or qcheck itself killed:
 * PR_SET_PDEATHSIG takes its workers with it) can be told from a live one's. pid > 0: that
 * process's folders (the runner has reaped it); 0: those of every process that is gone,
 * at the start of a run with an exec backend. Only this user's folders, never through a link. */
void qc_exec_sweep(pid_t pid)
{
    DIR *d = opendir(batch_root());
    if (!d)
        return;
    const struct dirent *e;
    while ((e = readdir(d))) {
        long owner = 0;
        int end = 0;
        if (sscanf(e->d_name, "qcheck_exec.%ld.%n", &owner, &end) != 1 || !end || strlen(e->d_name + end) != 6 ||
            owner <= 0)
            continue;
        if (pid > 0 ? owner != pid : !process_gone(owner))
            continue;
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", batch_root(), e->d_name);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid())
            remove_tree(path);
    }
    closedir(d);
}

void qc_exec_batch(const qc_work *work, const int *idx, int n, const qc_run_config *cfg, qc_result *results)
{
    const qc_backend *be = work[idx[0]].backend;
    batch b = {.n = n};
    snprintf(b.dir, sizeof b.dir, "%s/qcheck_exec.%ld.XXXXXX", batch_root(), (long)getpid());
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
    static const char *const subs[] = {"in", "out"};
    for (int k = 0; k < 2; k++) {
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
