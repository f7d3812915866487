/* cli.c: option parsing, raw file I/O and error messages shared by every command. */
#include "cli.h"

#include "cases.h"
#include "qc_checked.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int qc_parse_args(qc_args *a, const char *cmd, int argc, char **argv, const char *const *flags)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
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
    return max_instances_option(a);
}

const char *qc_opt(qc_args *a, const char *key)
{
    const char *v = NULL;
    for (int i = 0; i < a->nopt; i++)
        if (strcmp(a->key[i], key) == 0) {
            a->used[i] = 1;
            v = a->val[i] ? a->val[i] : "";
        }
    return v; /* the last occurrence wins, as in most CLIs */
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

int qc_read_file(const char *cmd, const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        qc_error(cmd, "cannot open input '%s': %s", path, strerror(errno));
        return QC_EXIT_USAGE;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            qc_error(cmd, "out of memory reading '%s'", path);
            return QC_EXIT_USAGE;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        cap *= 2;
        uint8_t *grown = realloc(buf, cap);
        if (!grown)
            free(buf);
        buf = grown;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        qc_error(cmd, "error reading '%s'", path);
        return QC_EXIT_USAGE;
    }
    *data = buf;
    *size = n;
    return QC_EXIT_OK;
}

int qc_write_file(const char *cmd, const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        qc_error(cmd, "cannot create output '%s': %s", path, strerror(errno));
        return QC_EXIT_USAGE;
    }
    size_t n = size ? fwrite(data, 1, size, f) : 0;
    if (fclose(f) != 0 || n != size) {
        qc_error(cmd, "error writing '%s'", path);
        return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

int qc_name_or_die(const char *cmd, const char *what, const char *value, int found, const char *known)
{
    if (found >= 0)
        return QC_EXIT_OK;
    qc_error(cmd, "unknown %s '%s' (known: %s)", what, value, known);
    return QC_EXIT_USAGE;
}
