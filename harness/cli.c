/* cli.c: option parsing, raw file I/O and error messages shared by every command. */
#include "cli.h"

#include "cases.h"
#include "qc_checked.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"

void qc_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "qcheck %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int is_flag(const char *key, const char *const *flags)
{
    for (; flags && *flags; flags++)
        if (strcmp(*flags, key) == 0)
            return 1;
    return 0;
}

/* --max-instances N belongs to every command that expands case files (docs/spec/cli.md "General
 * rules"): parsed here once, so that each of them takes it the same way; elsewhere it stays an
 * unknown option. */
static int max_instances_option(qc_args *a)
{
    static const char *const expanding[] = {"run", "list", "golden generate", "export", NULL};
    int takes = 0;
    for (const char *const *c = expanding; *c; c++)
        takes |= !strcmp(a->cmd, *c);
    for (int i = 0; takes && i < a->nopt; i++) {
        uint64_t n;
        if (strcmp(a->key[i], "max-instances"))
            continue;
        a->used[i] = 1;
        if (qc_parse_u64(a->val[i], QC_MAX_INSTANCES_LIMIT, &n) || n == 0) {
            qc_error(a->cmd, "--max-instances '%s' is not an integer in [1, %d]", a->val[i] ? a->val[i] : "",
                     QC_MAX_INSTANCES_LIMIT);
            return QC_EXIT_USAGE;
        }
        qc_cases_set_max_instances(n);
    }
    return QC_EXIT_OK;
}

/* An option given twice is refused: the second would silently replace the first (`--case a --case b`
 * runs b alone). --param is the one that repeats by design (quant, layout: one key=value each). */
static int repeated_option(const qc_args *a)
{
    for (int i = 0; i < a->nopt; i++)
        for (int j = i + 1; j < a->nopt && strcmp(a->key[i], "param"); j++)
            if (!strcmp(a->key[i], a->key[j])) {
                int list = !strcmp(a->key[i], "case") || !strcmp(a->key[i], "backend");
                qc_error(a->cmd, "option --%s is given twice ('%s' and '%s'): give it once%s%s%s", a->key[i],
                         a->val[i] ? a->val[i] : "", a->val[j] ? a->val[j] : "", list ? " (a list takes commas: --" : "",
                         list ? a->key[i] : "", list ? " A,B)" : "");
                return QC_EXIT_USAGE;
            }
    return QC_EXIT_OK;
}

int qc_parse_args(qc_args *a, const char *cmd, int argc, char **argv, const char *const *flags)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    for (int i = 0; i < argc; i++) {
        const char *s = strcmp(argv[i], "-v") ? argv[i] : "--verbose"; /* a flag of the commands that take it */
        if (strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0) {
            a->help = 1;
            continue;
        }
        if (a->nopt >= QC_MAX_ARGS || a->npos >= QC_MAX_ARGS) {
            qc_error(cmd, "too many arguments");
            return QC_EXIT_USAGE;
        }
        if (strncmp(s, "--", 2) != 0 || s[2] == '\0') {
            a->pos[a->npos++] = s;
            continue;
        }
        const char *eq = strchr(s, '=');
        static char keybuf[QC_MAX_ARGS][64];
        size_t klen = eq ? (size_t)(eq - s - 2) : strlen(s + 2);
        if (klen >= sizeof keybuf[0]) {
            qc_error(cmd, "option '%s' is too long", s);
            return QC_EXIT_USAGE;
        }
        memcpy(keybuf[a->nopt], s + 2, klen);
        keybuf[a->nopt][klen] = '\0';
        const char *key = keybuf[a->nopt];
        const char *val = NULL;
        if (eq) {
            val = eq + 1;
        } else if (!is_flag(key, flags)) {
            if (i + 1 >= argc) {
                qc_error(cmd, "option --%s needs a value", key);
                return QC_EXIT_USAGE;
            }
            val = argv[++i];
        }
        a->key[a->nopt] = key;
        a->val[a->nopt] = val;
        a->nopt++;
    }
    return repeated_option(a) || max_instances_option(a) ? QC_EXIT_USAGE : QC_EXIT_OK;
}

const char *qc_opt(qc_args *a, const char *key)
{
    const char *v = NULL;
    for (int i = 0; i < a->nopt; i++)
        if (strcmp(a->key[i], key) == 0) {
            a->used[i] = 1;
            v = a->val[i] ? a->val[i] : "";
        }
    return v; /* at most one (repeated_option) */
}

int qc_flag(qc_args *a, const char *key) { return qc_opt(a, key) != NULL; }

int qc_check_all_used(qc_args *a)
{
    for (int i = 0; i < a->nopt; i++)
        if (!a->used[i]) {
            qc_error(a->cmd, "unknown option --%s (see qcheck %s --help)", a->key[i], a->cmd);
            return QC_EXIT_USAGE;
        }
    return QC_EXIT_OK;
}

int qc_positionals_at_most(qc_args *a, int n)
{
    if (a->npos <= n)
        return QC_EXIT_OK;
    qc_error(a->cmd, "unexpected argument '%s' (see qcheck %s --help)", a->pos[n], a->cmd);
    return QC_EXIT_USAGE;
}

/* The files qc_read_file read, so that no output overwrites one (a command reads at most 3). */
static struct {
    dev_t dev;
    ino_t ino;
    char path[256];
} inputs_read[16];
static int ninputs_read;

int qc_same_path(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int qc_output_clobbers(const char *cmd, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return QC_EXIT_OK; /* a new file: no input is one */
    for (int i = 0; i < ninputs_read; i++)
        if (inputs_read[i].dev == st.st_dev && inputs_read[i].ino == st.st_ino) {
            qc_error(cmd, "output '%s' is the input '%s': it would overwrite it (give another name)", path,
                     inputs_read[i].path);
            return QC_EXIT_USAGE;
        }
    return QC_EXIT_OK;
}

int qc_read_file(const char *cmd, const char *path, size_t max, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        qc_error(cmd, "cannot open input '%s': %s", path, strerror(errno));
        return QC_EXIT_USAGE;
    }
    struct stat st;
    if (ninputs_read < (int)(sizeof inputs_read / sizeof inputs_read[0]) && fstat(fileno(f), &st) == 0) {
        inputs_read[ninputs_read].dev = st.st_dev, inputs_read[ninputs_read].ino = st.st_ino;
        snprintf(inputs_read[ninputs_read++].path, sizeof inputs_read[0].path, "%s", path);
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) { /* at most max + 1 bytes: one more than max says the input is too long (a FIFO has no size) */
        if (!buf) {
            fclose(f);
            qc_error(cmd, "out of memory reading '%s'", path);
            return QC_EXIT_USAGE;
        }
        size_t room = (max < SIZE_MAX ? max + 1 : max) - n;
        n += fread(buf + n, 1, cap - n < room ? cap - n : room, f);
        if (n < cap || n > max)
            break;
        cap = cap > max / 2 ? max + 1 : cap * 2;
        uint8_t *grown = realloc(buf, cap);
        if (!grown)
            free(buf);
        buf = grown;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad || n > max) {
        free(buf);
        if (bad)
            qc_error(cmd, "error reading '%s'", path);
        else
            qc_error(cmd, "input '%s' holds more than %zu bytes, the most this command reads from it", path, max);
        return QC_EXIT_USAGE;
    }
    *data = buf;
    *size = n;
    return QC_EXIT_OK;
}

int qc_write_file(const char *cmd, const char *path, const void *data, size_t size)
{
    const char *step;
    if (qc_output_clobbers(cmd, path))
        return QC_EXIT_USAGE;
    int err = qc_publish(path, NULL, data, size, 0, &step);
    if (err)
        qc_error(cmd, "output '%s': cannot %s: %s", path, step, strerror(err));
    return err ? QC_EXIT_USAGE : QC_EXIT_OK;
}

int qc_name_or_die(const char *cmd, const char *what, const char *value, int found, const char *known)
{
    if (found >= 0)
        return QC_EXIT_OK;
    qc_error(cmd, "unknown %s '%s' (known: %s)", what, value, known);
    return QC_EXIT_USAGE;
}

/* ---- --shard I/N | auto ---- */

/* "I/N", 1 <= I <= N: 0 and *index (0-based), *count; -1 when text is not that. */
static int shard_text(const char *text, int *index, int *count)
{
    char first[24];
    const char *slash = strchr(text, '/');
    int64_t i = 0, n = 0;
    if (!slash || slash - text >= (ptrdiff_t)sizeof first)
        return -1;
    snprintf(first, sizeof first, "%.*s", (int)(slash - text), text);
    if (qc_parse_i64(first, 1, INT32_MAX, &i) || qc_parse_i64(slash + 1, 1, INT32_MAX, &n) || i > n)
        return -1;
    *index = (int)i - 1, *count = (int)n;
    return 0;
}

/* An integer environment variable, or -1 when unset; -2 when set but not an integer >= 0. */
static int64_t env_int(const char *name)
{
    const char *v = getenv(name);
    int64_t x;
    if (!v)
        return -1;
    return qc_parse_i64(v, 0, INT32_MAX, &x) ? -2 : x;
}

/* The schedulers whose variables `--shard auto` reads (docs/spec/cli.md): the shard's index
 * (base 0 or 1) and the shard count, or for Slurm the array's first task id and step. */
typedef struct scheduler {
    const char *name, *index_var, *count_var;
    int base; /* the index of the first shard */
} scheduler;

static const scheduler schedulers[] = {
    {"Slurm job array", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", -1},
    {"GitLab CI parallel", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1},
    {"Buildkite parallelism", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0},
    {"Kubernetes indexed Job", "JOB_COMPLETION_INDEX", "QCHECK_SHARD_COUNT", 0},
};

/* Slurm: task ids MIN, MIN + STEP, ... (SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_STEP; unset: 0 and
 * 1). -1 when either is set but no integer (STEP >= 1), or id is not one of them. */
static int64_t slurm_position(int64_t id)
{
    int64_t lo = env_int("SLURM_ARRAY_TASK_MIN"), step = env_int("SLURM_ARRAY_TASK_STEP");
    lo = lo == -1 ? 0 : lo;
    step = step == -1 ? 1 : step;
    if (lo < 0 || step < 1)
        return -1;
    return id < lo || (id - lo) % step ? -1 : (id - lo) / step;
}

int qc_parse_shard(const char *cmd, const char *arg, int *index, int *count)
{
    if (strcmp(arg, "auto") != 0) {
        if (shard_text(arg, index, count) == 0)
            return 0;
        qc_error(cmd, "--shard must be I/N with 1 <= I <= N, or auto, got '%s'", arg);
        return 2;
    }
    for (size_t s = 0; s < sizeof schedulers / sizeof schedulers[0]; s++) {
        const scheduler *sc = &schedulers[s];
        int64_t at = env_int(sc->index_var), n = env_int(sc->count_var);
        if (at == -1)
            continue;
        int64_t pos = at < 0 ? -1 : sc->base < 0 ? slurm_position(at) : at - sc->base;
        if (n < 1 || pos < 0 || pos >= n) {
            qc_error(cmd, "--shard auto: %s: %s=%s and %s=%s are not a shard index and a count", sc->name,
                     sc->index_var, getenv(sc->index_var), sc->count_var,
                     getenv(sc->count_var) ? getenv(sc->count_var) : "(unset)");
            return 2;
        }
        *index = (int)pos, *count = (int)n;
        fprintf(stderr, "qcheck %s: --shard auto: shard %d/%d from %s (%s=%lld, %s=%lld)\n", cmd, *index + 1, *count,
                sc->name, sc->index_var, (long long)at, sc->count_var, (long long)n);
        return 0;
    }
    qc_error(cmd, "--shard auto: no scheduler variables set (SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, "
                  "CI_NODE_INDEX/CI_NODE_TOTAL, BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT, "
                  "JOB_COMPLETION_INDEX/QCHECK_SHARD_COUNT); give --shard I/N");
    return 2;
}

int qc_opt_int(const char *cmd, const char *key, const char *v, long lo, long hi, long *out)
{
    int64_t r;
    if (qc_parse_i64(v, lo, hi, &r)) { /* strict: no blanks, no '+', no saturation (qc_checked.h) */
        qc_error(cmd, "--%s must be an integer in [%ld, %ld], got '%s'", key, lo, hi, v);
        return QC_EXIT_USAGE;
    }
    *out = (long)r;
    return QC_EXIT_OK;
}
