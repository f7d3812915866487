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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compare.h"
#include "stages.h"
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
    snprintf(r->repro, sizeof r->repro, "qcheck run --case %.64s --params %s --backend %s", w->inst->c->name, qp, qb);
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

int qc_instance_expected(const qc_instance *in, qc_tensor_set *inputs, qc_tensor_set *expected, char *err,
                         size_t errlen)
{
    qc_tensor table = {0};
    if (make_inputs(in, inputs, &table, err, errlen)) {
        qc_tensor_free(&table);
        return 2;
    }
    if (in->c->nvectors) {
        qc_set_add(expected, &table); /* an independent oracle: the vector table */
        return 0;
    }
    const qc_op *op = qc_op_find(in->c->op);
    qc_op_call dc = {&in->params, inputs, inputs, err, errlen, 0};
    if (op->derived_inputs && op->derived_inputs(&dc))
        return 2;
    char why[1024];
    if (call(reference(), in, inputs, expected, why, sizeof why, 0)) {
        snprintf(err, errlen, "reference refused the instance: %s", why);
        return 3;
    }
    return 0;
}

/* Outputs coupled to another are compared after it, so that its budget map exists. */
void qc_judge(const qc_case *c, const qc_params *p, const qc_tensor_set *inputs, qc_tensor_set *expected,
              qc_tensor_set *got, int show, qc_result *r)
{
    int64_t n = 0, bad = 0, degenerate = 0, skipped = 0, allowed = 0;
    double tight = 0;
    int bounded = 0;
    uint8_t *maps[QC_MAX_COMPARES] = {0};
    r->verdict = QC_ERROR;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < c->ncompares; i++) {
            const qc_compare_spec *s = &c->compares[i];
            if ((pass == 0) != (s->coupled_to[0] == '\0'))
                continue;
            qc_tensor *e = qc_set_find(expected, s->output), *g = qc_set_find(got, s->output);
            if (!e || !g) {
                snprintf(r->figures, sizeof r->figures, "output '%s' missing", s->output);
                snprintf(r->detail + strlen(r->detail), sizeof r->detail - strlen(r->detail),
                         "  output '%s' missing from the %s\n", s->output, e ? "backend" : "reference");
                goto done;
            }
            char name[QC_NAME_LEN + 8];
            qc_compare_extra x = {0};
            snprintf(name, sizeof name, "%s.mask", s->output);
            x.mask = qc_set_find(expected, name);
            snprintf(name, sizeof name, "%s.bound", s->output);
            x.bound = qc_set_find(expected, name);
            maps[i] = calloc((size_t)qc_tensor_numel(e) + 1, 1);
            x.budget_map = maps[i];
            for (int k = 0; k < c->ncompares && s->coupled_to[0]; k++)
                if (!strcmp(c->compares[k].output, s->coupled_to) && qc_set_find(expected, s->coupled_to)) {
                    x.coupled_bad = maps[k];
                    x.coupled_n = qc_tensor_numel(qc_set_find(expected, s->coupled_to));
                }
            qc_compare_out o;
            qc_compare(s, p, inputs, e, g, &x, show, &o, r->detail, sizeof r->detail);
            n += o.n;
            bad += o.mismatches < 0 ? o.n + 1 : o.mismatches;
            degenerate += o.degenerate;
            skipped += o.skipped;
            allowed += o.allowed;
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
    if (bounded) /* how close the worst element came to its bound: a bound far above every error hides bugs */
        snprintf(r->figures + strlen(r->figures), sizeof r->figures - strlen(r->figures), " tightness=%.3g", tight);
    r->verdict = bad ? QC_FAIL : degenerate == c->ncompares ? QC_MISTRUSTED : QC_PASS;
    if (r->verdict == QC_MISTRUSTED)
        snprintf(r->detail, sizeof r->detail, "  every expected output is one repeated value: proves nothing\n");
done:
    for (int i = 0; i < QC_MAX_COMPARES; i++)
        free(maps[i]);
}

void qc_run_one(const qc_work *w, const qc_run_config *cfg, qc_result *r)
{
    const qc_instance *in = w->inst;
    qc_tensor_set inputs = {0}, expected = {0}, got = {0};
    char err[1024] = "";
    r->verdict = QC_ERROR;
    int rc = qc_instance_expected(in, &inputs, &expected, err, sizeof err);
    if (rc) {
        snprintf(r->figures, sizeof r->figures, rc == 2 ? "bad inputs" : "reference refused");
        snprintf(r->detail, sizeof r->detail, "  %s\n", err);
        goto done;
    }
    rc = call(w->backend, in, &inputs, &got, err, sizeof err, cfg->device);
    if (rc == QC_OP_DECLINED) { /* never run through the reference: the backend said it does not do this */
        r->verdict = QC_SKIPPED;
        snprintf(r->figures, sizeof r->figures, "declined: %.200s", err);
        goto done;
    }
    if (rc) {
        snprintf(r->figures, sizeof r->figures, "backend refused (status %d)", rc);
        snprintf(r->detail, sizeof r->detail, "  backend %s refused the instance: %s\n", w->backend->name, err);
        goto done;
    }
    qc_judge(in->c, &in->params, &inputs, &expected, &got, cfg->show, r);
    if (r->verdict == QC_FAIL) /* ops with stage tensors: where the backend first parts (stages.h) */
        qc_stage_report(&in->params, &expected, &got, r->detail, sizeof r->detail);
    if (cfg->keep_failing && r->verdict == QC_FAIL)
        qc_keep_failing(cfg->keep_failing, in, w->backend->name, &inputs, &expected, &got, r);
done:
    qc_set_free(&inputs);
    qc_set_free(&expected);
    qc_set_free(&got);
}

void qc_print_result(const qc_result *r, int quiet_pass)
{
    if (quiet_pass && r->verdict == QC_PASS)
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
} unit;

typedef struct slot {
    pid_t pid;
    int fd, unit;
    double deadline;
    size_t got, want;
    qc_result *buf; /* what the child sends; the parent keeps the identity fields it set */
} slot;

void qc_exec_batch(const qc_work *work, const int *idx, int n, const qc_run_config *cfg, qc_result *results);

static void start_unit(const qc_work *work, const int *idx, const unit *u, const qc_run_config *cfg, slot *s)
{
    int fds[2];
    fflush(stdout);
    fflush(stderr);
    s->want = sizeof(qc_result) * (size_t)u->n;
    s->buf = calloc((size_t)u->n, sizeof(qc_result));
    if (!s->buf || pipe(fds) != 0) {
        free(s->buf);
        s->buf = NULL;
        s->pid = -1;
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        if (u->exec)
            qc_exec_batch(work, idx + u->first, u->n, cfg, s->buf);
        else
            qc_run_one(&work[idx[u->first]], cfg, s->buf);
        const char *p = (const char *)s->buf;
        size_t left = s->want;
        while (left) {
            ssize_t k = write(fds[1], p, left);
            if (k <= 0)
                _exit(3);
            p += k;
            left -= (size_t)k;
        }
        _exit(0);
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
    for (int j = 0; j < u->n; j++) {
        qc_result *r = &results[idx[u->first + j]];
        r->seconds = (qc_now() - started) / u->n;
        if (s->got == s->want) {
            r->verdict = s->buf[j].verdict;
            memcpy(r->figures, s->buf[j].figures, sizeof r->figures);
            memcpy(r->detail, s->buf[j].detail, sizeof r->detail);
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

static void progress(int done, int n, int failed, double started, int enabled)
{
    if (enabled && qc_now() - started > 2.0)
        fprintf(stderr, "\r[%d/%d] %d failed ", done, n, failed);
}

/* The identity fields of result i, and SKIPPED when its backend cannot run here (1). */
static int prepare(const qc_work *w, qc_result *r)
{
    snprintf(r->case_id, sizeof r->case_id, "%s", w->inst->id);
    snprintf(r->case_name, sizeof r->case_name, "%s", w->inst->c->name);
    snprintf(r->op, sizeof r->op, "%s", w->inst->c->op);
    snprintf(r->backend, sizeof r->backend, "%s", w->backend->name);
    r->seed = w->inst->seed;
    set_repro(w, r);
    const char *why = qc_backend_unavailable(w->backend);
    if (!why)
        return 0;
    r->verdict = QC_SKIPPED;
    snprintf(r->figures, sizeof r->figures, "%s", why);
    return 1;
}

/* The units: each exec backend's items in batches of cfg->batch (work order inside a batch), then
 * every other item alone. Items SKIPPED here get no unit. idx lists the items unit by unit. */
static int make_units(const qc_work *work, int n, const qc_run_config *cfg, qc_result *results, int *idx, unit *units,
                      char *finished)
{
    int nu = 0, ni = 0, batch = cfg->batch > 0 ? cfg->batch : 256;
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
                units[nu++] = (unit){ni, 0, 1};
            units[nu - 1].n++;
            idx[ni++] = e;
        }
    }
    for (int i = 0; i < n; i++)
        if (!work[i].backend->exec_cmd && !finished[i]) {
            units[nu++] = (unit){ni, 1, 0};
            idx[ni++] = i;
        }
    return nu;
}

void qc_run_work(const qc_work *work, int n, const qc_run_config *cfg, qc_result *results)
{
    int jobs = cfg->jobs > 0 ? (cfg->jobs < 64 ? cfg->jobs : 64) : 1;
    slot *slots = calloc((size_t)jobs, sizeof *slots);
    char *finished = calloc((size_t)(n ? n : 1), 1);
    int *idx = calloc((size_t)(n ? n : 1), sizeof *idx);
    unit *units = calloc((size_t)(n ? n : 1), sizeof *units);
    double *began = calloc((size_t)jobs, sizeof *began);
    int nu = make_units(work, n, cfg, results, idx, units, finished);
    int next = 0, printed = 0, done = 0, failed = 0;
    for (int i = 0; i < n; i++)
        done += finished[i];
    double started = qc_now();
    while (printed < n) {
        for (int j = 0; j < jobs && next < nu; j++)
            if (!slots[j].pid) {
                start_unit(work, idx, &units[next], cfg, &slots[j]);
                slots[j].unit = next;
                began[j] = qc_now();
                if (slots[j].pid < 0) {
                    slots[j].pid = 0;
                    for (int k = 0; k < units[next].n; k++) {
                        qc_result *r = &results[idx[units[next].first + k]];
                        r->verdict = QC_ERROR;
                        snprintf(r->figures, sizeof r->figures, "cannot fork: %s", strerror(errno));
                        finished[idx[units[next].first + k]] = 1;
                        done++;
                    }
                }
                next++;
            }
        struct pollfd pfd[64];
        int map[64], np = 0;
        for (int j = 0; j < jobs && np < 64; j++)
            if (slots[j].pid) {
                pfd[np].fd = slots[j].fd;
                pfd[np].events = POLLIN;
                map[np++] = j;
            }
        if (np)
            poll(pfd, (nfds_t)np, 100);
        for (int k = 0; k < np; k++) {
            slot *s = &slots[map[k]];
            const unit *u = &units[s->unit];
            int over = qc_now() > s->deadline;
            if (pfd[k].revents & (POLLIN | POLLHUP)) {
                ssize_t got = read(s->fd, (char *)s->buf + s->got, s->want - s->got);
                if (got > 0 && (s->got += (size_t)got) < s->want)
                    continue;
                finish_unit(s, u, idx, results, 0, cfg, began[map[k]]);
            } else if (over) {
                finish_unit(s, u, idx, results, 1, cfg, began[map[k]]);
            } else {
                continue;
            }
            for (int q = 0; q < u->n; q++)
                finished[idx[u->first + q]] = 1;
            done += u->n;
        }
        while (printed < n && finished[printed]) {
            if (cfg->progress)
                fprintf(stderr, "\r\033[K");
            failed += results[printed].verdict == QC_FAIL || results[printed].verdict == QC_ERROR;
            qc_print_result(&results[printed++], cfg->quiet_pass);
            fflush(stdout);
        }
        progress(done, n, failed, started, cfg->progress);
    }
    if (cfg->progress && qc_now() - started > 2.0)
        fprintf(stderr, "\r\033[K");
    free(slots);
    free(finished);
    free(idx);
    free(units);
    free(began);
}
