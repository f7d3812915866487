/* runner.c: isolation, timeouts, jobs, shards; the child computes, the parent only schedules. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "runner.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compare.h"
#include "stages.h"
#include "files.h"
#include "formats/formats.h"

qc_result *qc_results_alloc(int n)
{
    size_t bytes = sizeof(qc_result) * (size_t)(n > 0 ? n : 1);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p; /* zero-filled */
}

void qc_results_free(qc_result *r, int n)
{
    if (r)
        munmap(r, sizeof(qc_result) * (size_t)(n > 0 ? n : 1));
}

double qc_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

pid_t qc_fork(void)
{
    const pid_t parent = getpid();
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
#if defined(__linux__)
    /* the parent may have died between fork and prctl: then getppid is no longer it */
    if (pid == 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent))
        _exit(126);
#endif
    return pid;
}

int qc_shard_of(const qc_instance *inst, int shard_count)
{
    return shard_count > 1 ? (int)(qc_hash(inst->id, 0) % (uint64_t)shard_count) : 0;
}

/* s in single quotes for a POSIX shell ('\'' for a quote inside). */
static void shell_quote(const char *s, char *out, size_t len)
{
    size_t at = 0;
    if (len < 3)
        return;
    out[at++] = '\'';
    for (; *s && at + 5 < len; s++) {
        if (*s == '\'')
            at += (size_t)snprintf(out + at, len - at, "'\\''");
        else
            out[at++] = *s;
    }
    out[at++] = '\'';
    out[at] = '\0';
}

static void set_repro(const qc_work *w, qc_result *r)
{
    char ps[QC_MAX_PARAMS * (QC_PARAM_LEN + 34)], qp[sizeof ps + 64], qb[600];
    qc_params_format(&w->inst->params, ps, sizeof ps);
    shell_quote(ps, qp, sizeof qp);
    shell_quote(w->backend->name, qb, sizeof qb);
    snprintf(r->repro, sizeof r->repro, "qcheck run --case %.64s --params %.3300s --backend %.600s", w->inst->c->name, qp, qb);
}

/* Inputs from the case's generators, or from its vector table. */
static int make_inputs(const qc_instance *in, qc_tensor_set *inputs, qc_tensor *table_expected, char *err,
                       size_t errlen)
{
    const qc_case *c = in->c;
    if (c->nvectors) {
        int64_t n = in->vec_count;
        qc_tensor x;
        qc_format f;
        if (qc_params_get_format(&in->params, "to", &f, err, errlen))
            return 2;
        if (qc_tensor_alloc(&x, "x", QC_ST_F32, "f32", 1, &n) ||
            qc_tensor_alloc(table_expected, "y", qc_format_storage(f), qc_format_name(f), 1, &n))
            return 2;
        for (int64_t i = 0, j = in->vec_first; i < n; j++) {
            const qc_vector *v = &c->vectors[j];
            if (strcmp(v->format, c->vectors[in->vec_first].format) || strcmp(v->policy, c->vectors[in->vec_first].policy))
                continue;
            ((float *)x.data)[i] = qc_f32_from_bits(v->input);
            if (table_expected->storage == QC_ST_U8)
                ((uint8_t *)table_expected->data)[i] = (uint8_t)v->expected;
            else
                ((uint16_t *)table_expected->data)[i] = (uint16_t)v->expected;
            i++;
        }
        qc_set_add(inputs, &x);
        return 0;
    }
    for (int i = 0; i < c->ninputs; i++) {
        qc_tensor t;
        if (qc_generate(&c->inputs[i], &in->params, in->seed, &t, err, errlen))
            return 2;
        qc_set_add(inputs, &t);
    }
    return 0;
}

static int call(const qc_backend *b, const qc_instance *in, const qc_tensor_set *inputs, qc_tensor_set *out,
                char *err, size_t errlen, int device)
{
    qc_op_call c = {&in->params, inputs, out, err, errlen, device};
    return qc_backend_call(b, in->c->op, &c);
}

/* `ref` (the reference op itself), for the expected outputs. */
static const qc_backend *reference(void) { return qc_backend_at(0); }

/* The inputs (and with_derived, what they imply: qc_instance_expected); a vector case's expected
 * outputs, its table, into table. */
static int inputs_of(const qc_instance *in, int with_derived, qc_tensor_set *inputs, qc_tensor *table, char *err,
                     size_t errlen)
{
    if (make_inputs(in, inputs, table, err, errlen))
        return 2;
    const qc_op *op = qc_op_find(in->c->op);
    qc_op_call dc = {&in->params, inputs, inputs, err, errlen, 0};
    return !in->c->nvectors && with_derived && op->derived_inputs && op->derived_inputs(&dc) ? 2 : 0;
}

int qc_instance_inputs(const qc_instance *in, int with_derived, qc_tensor_set *inputs, char *err, size_t errlen)
{
    qc_tensor table = {0};
    int rc = inputs_of(in, with_derived, inputs, &table, err, errlen);
    qc_tensor_free(&table);
    return rc;
}

int qc_instance_expected(const qc_instance *in, int with_derived, qc_tensor_set *inputs, qc_tensor_set *expected,
                         char *err, size_t errlen)
{
    qc_tensor table = {0};
    if (inputs_of(in, with_derived, inputs, &table, err, errlen)) {
        qc_tensor_free(&table);
        return 2;
    }
    if (in->c->nvectors) {
        qc_set_add(expected, &table); /* an independent oracle: the vector table */
        return 0;
    }
    char why[1024];
    if (call(reference(), in, inputs, expected, why, sizeof why, 0)) {
        snprintf(err, errlen, "reference refused the instance: %s", why);
        return 3;
    }
    return 0;
}

/* The mismatch map of the output with the most mismatches, the histogram of the bound output
 * closest to its bound. */
static void keep_plots(const qc_compare_out *o, qc_plots *pl)
{
    if (o->mismatches > 0 && (!pl->has_map || o->mismatches > pl->map.mismatches))
        pl->map = o->map, pl->has_map = 1;
    if (o->has_bound && (!pl->has_ratio || o->tightness > pl->ratio_tightness))
        pl->ratio = o->ratio, pl->has_ratio = 1, pl->ratio_tightness = o->tightness;
}

/* Outputs coupled to another are compared after it, so that its budget map exists. */
void qc_judge(const qc_case *c, const qc_params *p, const qc_tensor_set *inputs, qc_tensor_set *expected,
              qc_tensor_set *got, int show, qc_result *r)
{
    int64_t n = 0, bad = 0, degenerate = 0, skipped = 0, allowed = 0, nan_matched = 0;
    double tight = 0;
    int bounded = 0;
    uint8_t *maps[QC_MAX_COMPARES] = {0};
    int64_t elements[QC_MAX_COMPARES] = {0}; /* of each output, as the comparator counts them */
    const qc_op *op = qc_op_find(c->op);
    r->verdict = QC_ERROR;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < c->ncompares; i++) {
            const qc_compare_spec *s = &c->compares[i];
            if ((pass == 0) != (s->coupled_to[0] == '\0'))
                continue;
            qc_tensor *e = qc_set_find(expected, s->output), *g = qc_set_find(got, s->output);
            if (e && !g && !strncmp(s->output, "stage.", 6)) { /* an intermediate a vendor kernel does not expose */
                qc_appendf(r->detail, sizeof r->detail, "  %s: not produced by the backend (a stage tensor, optional)\n",
                           s->output);
                continue;
            }
            if (!e || !g) {
                snprintf(r->figures, sizeof r->figures, "output '%s' missing", s->output);
                snprintf(r->detail + strlen(r->detail), sizeof r->detail - strlen(r->detail),
                         "  output '%s' missing from the %s\n", s->output, e ? "backend" : "reference");
                goto done;
            }
            char name[QC_NAME_LEN + 8];
            qc_compare_extra x = {0};
            qc_output_view view;
            if (op && op->view && !op->view(p, s->output, &view))
                x.view = &view;
            snprintf(name, sizeof name, "%s.mask", s->output);
            x.mask = qc_set_find(expected, name);
            snprintf(name, sizeof name, "%s.bound", s->output);
            x.bound = qc_set_find(expected, name);
            elements[i] = qc_compare_elements(e, x.view);
            maps[i] = calloc((size_t)elements[i] + 1, 1);
            x.budget_map = maps[i];
            for (int k = 0; k < c->ncompares && s->coupled_to[0]; k++)
                if (!strcmp(c->compares[k].output, s->coupled_to) && maps[k]) { /* compared in pass 0 */
                    x.coupled_bad = maps[k];
                    x.coupled_n = elements[k];
                }
            qc_compare_out o;
            qc_compare(s, p, inputs, e, g, &x, show, &o, r->detail, sizeof r->detail);
            keep_plots(&o, &r->plots);
            n += o.n;
            bad += o.mismatches < 0 ? o.n + 1 : o.mismatches;
            degenerate += o.degenerate;
            skipped += o.skipped;
            allowed += o.allowed;
            nan_matched += o.nan_matched;
            bounded |= o.has_bound;
            tight = o.has_bound && o.tightness > tight ? o.tightness : tight;
        }
    snprintf(r->figures, sizeof r->figures, "n=%lld mismatches=%lld", (long long)n, (long long)bad);
    if (allowed)
        snprintf(r->figures + strlen(r->figures), sizeof r->figures - strlen(r->figures), " within-budget=%lld",
                 (long long)allowed);
    if (skipped)
        snprintf(r->figures + strlen(r->figures), sizeof r->figures - strlen(r->figures),
                 " undefined-padding-skipped=%lld", (long long)skipped);
    if (nan_matched) /* the golden's nan_payload = "any": shown, so a NaN-heavy pass is visible */
        snprintf(r->figures + strlen(r->figures), sizeof r->figures - strlen(r->figures),
                 " nan-any-payload=%lld", (long long)nan_matched);
    if (bounded) /* how close the worst element came to its bound: a bound far above every error hides bugs */
        snprintf(r->figures + strlen(r->figures), sizeof r->figures - strlen(r->figures), " tightness=%.3g", tight);
    r->verdict = bad ? QC_FAIL : degenerate == c->ncompares ? QC_MISTRUSTED : QC_PASS;
    if (r->verdict == QC_MISTRUSTED)
        snprintf(r->detail, sizeof r->detail, "  every expected output is one repeated value: proves nothing\n");
done:
    for (int i = 0; i < QC_MAX_COMPARES; i++)
        free(maps[i]);
}

int qc_run_backend(const qc_instance *in, const qc_backend *b, const qc_run_config *cfg, const qc_tensor_set *inputs,
                   qc_tensor_set *expected, qc_result *r)
{
    qc_tensor_set got = {0};
    char err[1024] = "";
    r->verdict = QC_ERROR;
    int rc = call(b, in, inputs, &got, err, sizeof err, cfg->device);
    if (rc == QC_OP_DECLINED) { /* never run through the reference: the backend said it does not do this */
        r->verdict = QC_SKIPPED;
        snprintf(r->figures, sizeof r->figures, "declined: %.200s", err);
    } else if (rc) {
        snprintf(r->figures, sizeof r->figures, "backend refused (status %d)", rc);
        snprintf(r->detail, sizeof r->detail, "  backend %s refused the instance: %s\n", b->name, err);
    } else {
        qc_judge(in->c, &in->params, inputs, expected, &got, cfg->show, r);
        if (r->verdict == QC_FAIL) /* ops with stage tensors: where the backend first parts (stages.h) */
            qc_stage_report(&in->params, expected, &got, r->detail, sizeof r->detail, &r->plots);
        qc_detail_seal(r->detail, sizeof r->detail);
        if (cfg->keep_failing && r->verdict == QC_FAIL)
            qc_keep_failing(cfg->keep_failing, in, b->name, inputs, expected, &got, r);
    }
    qc_set_free(&got);
    return rc;
}

void qc_run_one(const qc_work *w, const qc_run_config *cfg, qc_result *r)
{
    qc_tensor_set inputs = {0}, expected = {0};
    char err[1024] = "";
    int rc = qc_instance_expected(w->inst, 0, &inputs, &expected, err, sizeof err);
    if (rc) {
        r->verdict = QC_ERROR;
        snprintf(r->figures, sizeof r->figures, rc == 2 ? "bad inputs" : "reference refused");
        snprintf(r->detail, sizeof r->detail, "  %s\n", err);
    } else {
        qc_run_backend(w->inst, w->backend, cfg, &inputs, &expected, r);
    }
    qc_set_free(&inputs);
    qc_set_free(&expected);
}

void qc_print_result(const qc_result *r, int verbosity)
{
    if (verbosity < QC_VERBOSE && !qc_verdict_failing(r->verdict))
        return;
    printf("%-10s %s  %s  %s  REPRO: %s\n", qc_verdict_name(r->verdict), r->case_id, r->backend, r->figures,
           r->repro);
    if (r->verdict != QC_PASS && r->detail[0])
        fputs(r->detail, stdout);
}

/* A unit of work for one child process: one item, or a batch of an exec backend's items. */
typedef struct unit {
    int first, n;  /* its items are idx[first .. first + n) */
    int exec;
    int worker;    /* -1, or the persistent worker (QCHECK_BACKEND_PERSISTENT) that runs it */
    int device;    /* the GPU its items are handed (--devices spreads the units over them) */
} unit;

typedef struct slot {
    pid_t pid;
    int fd, unit;
    double deadline;
    size_t got, want;
    qc_result *buf; /* what the child sends; the parent keeps the identity fields it set */
} slot;

void qc_exec_batch(const qc_work *work, const int *idx, int n, const qc_run_config *cfg, qc_result *results);
void qc_exec_sweep(pid_t pid);

static void start_unit(const qc_work *work, const int *idx, const unit *u, const qc_run_config *cfg, slot *s)
{
    int fds[2];
    s->want = sizeof(qc_result) * (size_t)u->n;
    s->buf = calloc((size_t)u->n, sizeof(qc_result));
    if (!s->buf || pipe(fds) != 0) {
        free(s->buf);
        s->buf = NULL;
        s->pid = -1;
        return;
    }
    pid_t pid = qc_fork();
    if (pid == 0) {
        close(fds[0]);
        qc_run_config mine = *cfg;
        mine.device = u->device;
        if (u->exec)
            qc_exec_batch(work, idx + u->first, u->n, &mine, s->buf);
        else
            qc_run_one(&work[idx[u->first]], &mine, s->buf);
        _exit(qc_write_all(fds[1], s->buf, s->want) ? 3 : 0);
    }
    close(fds[1]);
    s->pid = pid;
    s->fd = fds[0];
    s->got = 0;
    /* an exec batch: the process has timeout x items; making the inputs and judging get as much again */
    s->deadline = qc_now() + cfg->timeout * u->n * (u->exec ? 2 : 1) + (u->exec ? 60 : 0);
}

static void finish_unit(slot *s, const unit *u, const int *idx, qc_result *results, int timed_out,
                        const qc_run_config *cfg, double started)
{
    int status = 0;
    if (timed_out)
        kill(s->pid, SIGKILL);
    waitpid(s->pid, &status, 0);
    close(s->fd);
    if (u->exec && s->got != s->want) /* killed or crashed before it removed its batch folder */
        qc_exec_sweep(s->pid);
    for (int j = 0; j < u->n; j++) {
        qc_result *r = &results[idx[u->first + j]];
        r->seconds = (qc_now() - started) / u->n;
        if (s->got == s->want) {
            r->verdict = s->buf[j].verdict;
            memcpy(r->figures, s->buf[j].figures, sizeof r->figures);
            memcpy(r->detail, s->buf[j].detail, sizeof r->detail);
            r->unsaved = s->buf[j].unsaved;
            r->plots = s->buf[j].plots;
        } else if (timed_out) {
            r->verdict = QC_ERROR;
            snprintf(r->figures, sizeof r->figures, "timeout after %.0f s", cfg->timeout);
            snprintf(r->detail, sizeof r->detail, "  killed: no result within --timeout %.0f s\n", cfg->timeout);
        } else {
            r->verdict = QC_ERROR;
            if (WIFSIGNALED(status))
                snprintf(r->figures, sizeof r->figures, "crashed: signal %d (%s)", WTERMSIG(status),
                         strsignal(WTERMSIG(status)));
            else
                snprintf(r->figures, sizeof r->figures, "child exited %d without a result", WEXITSTATUS(status));
            snprintf(r->detail, sizeof r->detail, "  the item's process died; the run goes on\n");
        }
    }
    free(s->buf);
    s->buf = NULL;
    s->pid = 0;
}

/* Seconds between the progress lines of a log: 60, or $QCHECK_PROGRESS_EVERY. */
static double log_interval(void)
{
    const char *e = getenv("QCHECK_PROGRESS_EVERY");
    double v = e ? strtod(e, NULL) : 0;
    return v > 0 ? v : 60.0;
}

/* done/total, rate and ETA: live on a terminal (after 2 s), or one line a minute in a log. */
static void progress(int done, int n, int failed, double started, int mode, double *last)
{
    double now = qc_now(), t = now - started, rate = t > 0 ? done / t : 0;
    if (mode == QC_PROGRESS_NONE || t < 2.0 || (mode == QC_PROGRESS_MINUTE && now - *last < log_interval()))
        return;
    *last = now;
    char eta[32] = "?";
    if (rate > 0)
        snprintf(eta, sizeof eta, "%.0f s", (n - done) / rate);
    fprintf(stderr, "%s[%d/%d] %.0f items/s, ETA %s, %d failed%s", mode == QC_PROGRESS_LIVE ? "\r\033[K" : "qcheck: ",
            done, n, rate, eta, failed, mode == QC_PROGRESS_LIVE ? " " : "\n");
}

/* The identity fields of result i, and SKIPPED when its backend cannot run here (1). */
static int prepare(const qc_work *w, qc_result *r)
{
    snprintf(r->case_id, sizeof r->case_id, "%s", w->inst->id);
    snprintf(r->case_name, sizeof r->case_name, "%s", w->inst->c->name);
    snprintf(r->op, sizeof r->op, "%s", w->inst->c->op);
    snprintf(r->backend, sizeof r->backend, "%s", w->backend->name);
    r->planted = !strcmp(w->backend->group, "mutants");
    r->seed = w->inst->seed;
    set_repro(w, r);
    const char *why = qc_backend_unavailable(w->backend);
    if (!why)
        return 0;
    r->verdict = QC_SKIPPED;
    snprintf(r->figures, sizeof r->figures, "%s", why);
    return 1;
}

/* A persistent worker (QCHECK_BACKEND_PERSISTENT): one long-lived child per backend, forked from
 * this process before the backend touches its device, that runs item after item; results go
 * straight into the shared results array (qc_results_alloc) and an ack comes back. A crash or a
 * timeout costs the item that was running; the next item starts a fresh worker. */
typedef struct worker {
    const qc_backend *backend;
    int device;    /* the GPU it is handed: one worker per backend and device (--devices) */
    pid_t pid;
    int to, from;  /* item indices in, acks out */
    int item;      /* the work index it runs, -1 when idle */
    int next_unit; /* where its search for work goes on */
    double deadline, began;
} worker;

static int persistent(const qc_backend *b) { return b->abi && (b->abi->flags & QCHECK_BACKEND_PERSISTENT); }

#define QC_MAX_WORKERS 16

static int worker_of(worker *w, int *nw, const qc_backend *b, int device)
{
    for (int i = 0; i < *nw; i++)
        if (w[i].backend == b && w[i].device == device)
            return i;
    if (*nw == QC_MAX_WORKERS)
        return -1; /* more persistent backends than workers: the rest run a child per item */
    w[*nw] = (worker){.backend = b, .device = device, .item = -1};
    return (*nw)++;
}

static void worker_loop(const qc_work *work, const qc_run_config *cfg, int device, qc_result *results, int in, int out)
{
    int i;
    qc_run_config mine = *cfg;
    mine.device = device;
    while (read(in, &i, sizeof i) == (ssize_t)sizeof i) {
        qc_result r;
        memset(&r, 0, sizeof r);
        qc_run_one(&work[i], &mine, &r);
        results[i].verdict = r.verdict;
        memcpy(results[i].figures, r.figures, sizeof r.figures);
        memcpy(results[i].detail, r.detail, sizeof r.detail);
        results[i].unsaved = r.unsaved;
        results[i].plots = r.plots;
        if (write(out, &i, sizeof i) != (ssize_t)sizeof i)
            _exit(3);
    }
    _exit(0);
}

/* others[0 .. nothers): the workers already running, whose pipe ends the new child must not keep
 * (a worker sees EOF, its cue to exit, only once every copy of its input's write end is closed). */
static int worker_start(worker *w, const worker *others, int nothers, const qc_work *work, const qc_run_config *cfg,
                        qc_result *results)
{
    int down[2], up[2];
    if (pipe(down))
        return -1;
    if (pipe(up)) {
        close(down[0]), close(down[1]);
        return -1;
    }
    pid_t pid = qc_fork();
    if (pid == 0) {
        close(down[1]), close(up[0]);
        for (int k = 0; k < nothers; k++)
            if (others[k].pid > 0 && &others[k] != w)
                close(others[k].to), close(others[k].from);
        worker_loop(work, cfg, w->device, results, down[0], up[1]);
    }
    close(down[0]), close(up[1]);
    if (pid < 0) {
        close(down[1]), close(up[0]);
        return -1;
    }
    w->pid = pid, w->to = down[1], w->from = up[0];
    return 0;
}

/* The worker's child is gone (a crash) or overdue (killed): its item is ERROR. */
static void worker_lost(worker *w, qc_result *results, int timed_out, double timeout)
{
    int status = 0;
    if (timed_out)
        kill(w->pid, SIGKILL);
    waitpid(w->pid, &status, 0);
    close(w->to), close(w->from);
    qc_result *r = &results[w->item];
    r->verdict = QC_ERROR;
    if (timed_out) {
        snprintf(r->figures, sizeof r->figures, "timeout after %.0f s", timeout);
        snprintf(r->detail, sizeof r->detail, "  killed: no result within --timeout %.0f s; the backend's worker "
                 "is restarted for the next item\n", timeout);
    } else {
        if (WIFSIGNALED(status))
            snprintf(r->figures, sizeof r->figures, "crashed: signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
        else
            snprintf(r->figures, sizeof r->figures, "worker exited %d without a result", WEXITSTATUS(status));
        snprintf(r->detail, sizeof r->detail, "  the backend's worker died on this item; it is restarted and the run "
                 "goes on\n");
    }
    w->pid = 0;
}

/* The GPU of the k-th unit: --devices in turn (one persistent worker per backend and device, so
 * each GPU gets its share of the items), else --device. */
static int device_of(const qc_run_config *cfg, int k)
{
    return cfg->ndevices > 0 ? cfg->devices[k % cfg->ndevices] : cfg->device;
}

/* The units: each exec backend's items in batches of cfg->batch (work order inside a batch), then
 * every other item alone. Items SKIPPED here get no unit. idx lists the items unit by unit. */
static int make_units(const qc_work *work, int n, const qc_run_config *cfg, qc_result *results, int *idx, unit *units,
                      char *finished, worker *workers, int *nw)
{
    int nu = 0, ni = 0, batch = cfg->batch > 0 ? cfg->batch : 256, spread = 0;
    for (int i = 0; i < n; i++)
        finished[i] = (char)prepare(&work[i], &results[i]);
    for (int i = 0; i < n; i++) { /* the first item of each exec backend gathers all of that backend's */
        const qc_backend *be = work[i].backend;
        int first = 1;
        for (int e = 0; e < i && first; e++)
            first = work[e].backend != be;
        if (!be->exec_cmd || !first)
            continue;
        for (int e = i; e < n; e++) {
            if (work[e].backend != be || finished[e])
                continue;
            if (!nu || !units[nu - 1].exec || work[idx[units[nu - 1].first]].backend != be || units[nu - 1].n >= batch)
                units[nu++] = (unit){ni, 0, 1, -1, device_of(cfg, spread++)};
            units[nu - 1].n++;
            idx[ni++] = e;
        }
    }
    for (int i = 0; i < n; i++)
        if (!work[i].backend->exec_cmd && !finished[i]) {
            int d = device_of(cfg, spread++);
            units[nu++] = (unit){ni, 1, 0, persistent(work[i].backend) ? worker_of(workers, nw, work[i].backend, d) : -1, d};
            idx[ni++] = i;
        }
    return nu;
}

/* The scheduler's state: fork slots for one-off units, persistent workers, and what is done. */
typedef struct sched {
    const qc_work *work;
    const qc_run_config *cfg;
    qc_result *results;
    int n, nu, jobs, nw, next, done;
    int *idx;
    unit *units;
    slot *slots;
    double *began;
    worker workers[QC_MAX_WORKERS];
    char *finished;
} sched;

static void mark_done(sched *s, const unit *u)
{
    for (int q = 0; q < u->n; q++)
        s->finished[s->idx[u->first + q]] = 1;
    s->done += u->n;
}

/* Fills idle fork slots with the next units no worker takes. */
static void fill_slots(sched *s)
{
    for (int j = 0; j < s->jobs; j++) {
        while (s->next < s->nu && s->units[s->next].worker >= 0)
            s->next++;
        if (s->slots[j].pid || s->next >= s->nu)
            continue;
        unit *u = &s->units[s->next];
        start_unit(s->work, s->idx, u, s->cfg, &s->slots[j]);
        s->slots[j].unit = s->next++;
        s->began[j] = qc_now();
        if (s->slots[j].pid < 0) {
            s->slots[j].pid = 0;
            for (int k = 0; k < u->n; k++) {
                qc_result *r = &s->results[s->idx[u->first + k]];
                r->verdict = QC_ERROR;
                snprintf(r->figures, sizeof r->figures, "cannot fork: %s", strerror(errno));
            }
            mark_done(s, u);
        }
    }
}

/* Hands each idle worker its next unit (starting the worker when it is not running). */
static void feed_workers(sched *s)
{
    for (int w = 0; w < s->nw; w++) {
        worker *k = &s->workers[w];
        if (k->item >= 0)
            continue;
        while (k->next_unit < s->nu && s->units[k->next_unit].worker != w)
            k->next_unit++;
        if (k->next_unit >= s->nu)
            continue;
        int i = s->idx[s->units[k->next_unit].first];
        if ((!k->pid && worker_start(k, s->workers, s->nw, s->work, s->cfg, s->results)) ||
            write(k->to, &i, sizeof i) != (ssize_t)sizeof i) {
            qc_result *r = &s->results[i];
            r->verdict = QC_ERROR;
            snprintf(r->figures, sizeof r->figures, "cannot start the backend's worker: %s", strerror(errno));
            mark_done(s, &s->units[k->next_unit++]);
            continue;
        }
        k->item = i;
        k->began = qc_now();
        k->deadline = k->began + s->cfg->timeout;
    }
}

static void wait_and_collect(sched *s)
{
    struct pollfd pfd[96];
    int map[96], np = 0;
    for (int j = 0; j < s->jobs && np < 64; j++)
        if (s->slots[j].pid) {
            pfd[np] = (struct pollfd){.fd = s->slots[j].fd, .events = POLLIN};
            map[np++] = j;
        }
    for (int w = 0; w < s->nw; w++)
        if (s->workers[w].item >= 0) {
            pfd[np] = (struct pollfd){.fd = s->workers[w].from, .events = POLLIN};
            map[np++] = -1 - w;
        }
    if (np)
        poll(pfd, (nfds_t)np, 100);
    for (int k = 0; k < np; k++) {
        int ready = pfd[k].revents & (POLLIN | POLLHUP);
        if (map[k] < 0) {
            worker *w = &s->workers[-1 - map[k]];
            int ack, timed_out = !ready && qc_now() > w->deadline;
            if (!ready && !timed_out)
                continue;
            if (!ready || read(w->from, &ack, sizeof ack) != (ssize_t)sizeof ack)
                worker_lost(w, s->results, timed_out, s->cfg->timeout);
            s->results[w->item].seconds = qc_now() - w->began;
            mark_done(s, &s->units[w->next_unit++]);
            w->item = -1;
            continue;
        }
        slot *sl = &s->slots[map[k]];
        const unit *u = &s->units[sl->unit];
        if (ready) {
            ssize_t got = read(sl->fd, (char *)sl->buf + sl->got, sl->want - sl->got);
            if (got > 0 && (sl->got += (size_t)got) < sl->want)
                continue;
            finish_unit(sl, u, s->idx, s->results, 0, s->cfg, s->began[map[k]]);
        } else if (qc_now() > sl->deadline) {
            finish_unit(sl, u, s->idx, s->results, 1, s->cfg, s->began[map[k]]);
        } else {
            continue;
        }
        mark_done(s, u);
    }
}

void qc_run_work(const qc_work *work, int n, const qc_run_config *cfg, qc_result *results)
{
    sched s = {.work = work, .cfg = cfg, .results = results, .n = n};
    s.jobs = cfg->jobs > 0 ? (cfg->jobs < 64 ? cfg->jobs : 64) : 1;
    s.slots = calloc((size_t)s.jobs, sizeof *s.slots);
    s.began = calloc((size_t)s.jobs, sizeof *s.began);
    s.finished = calloc((size_t)(n ? n : 1), 1);
    s.idx = calloc((size_t)(n ? n : 1), sizeof *s.idx);
    s.units = calloc((size_t)(n ? n : 1), sizeof *s.units);
    s.nu = make_units(work, n, cfg, results, s.idx, s.units, s.finished, s.workers, &s.nw);
    for (int k = 0; k < s.nu; k++)
        if (s.units[k].exec) { /* the batch folders that killed runs left (qc_exec_sweep) */
            qc_exec_sweep(0);
            break;
        }
    for (int i = 0; i < n; i++)
        s.done += s.finished[i];
    int printed = 0, failed = 0, live = cfg->progress == QC_PROGRESS_LIVE;
    double started = qc_now(), last = started;
    while (printed < n) {
        fill_slots(&s);
        feed_workers(&s);
        wait_and_collect(&s);
        while (printed < n && s.finished[printed]) {
            if (live)
                fprintf(stderr, "\r\033[K");
            failed += results[printed].verdict == QC_FAIL || results[printed].verdict == QC_ERROR;
            qc_print_result(&results[printed++], cfg->verbosity);
            fflush(stdout);
        }
        progress(s.done, n, failed, started, cfg->progress, &last);
    }
    if (live && qc_now() - started > 2.0)
        fprintf(stderr, "\r\033[K");
    for (int w = 0; w < s.nw; w++) /* an idle worker reads EOF and exits */
        if (s.workers[w].pid) {
            close(s.workers[w].to), close(s.workers[w].from);
            waitpid(s.workers[w].pid, NULL, 0);
        }
    free(s.slots), free(s.began), free(s.finished), free(s.idx), free(s.units);
}
