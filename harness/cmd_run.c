/* cmd_run.c: `qcheck run` and `qcheck list`. Until the case-file harness exists (issue #5) the
 * suite is the element-format conformance suite of the `ref` backend:
 *   cast_edges.FMT.POLICY  the hand-written edge vectors of cases/cast_edges.tsv (spec §10, §11, §3.2)
 *   roundtrip.FMT.PROFILE  encode(decode(c)) == c for every non-NaN code
 * Each case prints one verdict line with a REPRO command; the last line is the summary. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef QC_CASES_DIR
#define QC_CASES_DIR "cases"
#endif

#define MAX_EDGES 4096
#define MAX_GROUPS 512
#define SHOW_MISMATCHES 5

typedef struct edge {
    char format[16], policy[96], source[128];
    uint32_t input, expected;
    int line;
} edge;

typedef struct run_opts {
    const char *cases[64];
    int ncases;
    regex_t filter;
    int has_filter;
    int list_only; /* qcheck list cases: print the ids, run nothing */
    int passed, failed;
} run_opts;

static int selected(run_opts *o, const char *id)
{
    if (o->ncases) {
        int hit = 0;
        for (int i = 0; i < o->ncases; i++)
            hit |= strcmp(o->cases[i], id) == 0;
        if (!hit)
            return 0;
    }
    return !o->has_filter || regexec(&o->filter, id, 0, NULL, 0) == 0;
}

static void verdict(run_opts *o, int ok, const char *id, const char *figures)
{
    printf("%s  %s  ref  %s  REPRO: qcheck run --case %s\n", ok ? "PASS" : "FAIL", id, figures, id);
    if (ok)
        o->passed++;
    else
        o->failed++;
}

/* A policy column "profile[,key=value...]" resolved through the same code as the CLI flags. */
static int policy_from_column(const char *column, qc_format f, qc_cast_policy *p)
{
    static char profile_flag[] = "--profile";
    char buf[96], opt[16][64];
    char *argv[32];
    int argc = 0, nopt = 0;
    snprintf(buf, sizeof buf, "%s", column);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok && nopt < 16; tok = strtok_r(NULL, ",", &save)) {
        if (strchr(tok, '=')) {
            snprintf(opt[nopt], sizeof opt[0], "--%s", tok);
            argv[argc++] = opt[nopt++];
        } else {
            argv[argc++] = profile_flag;
            argv[argc++] = tok;
        }
    }
    qc_args a;
    if (qc_parse_args(&a, "run", argc, argv, NULL))
        return QC_EXIT_USAGE;
    return qc_policy_from_args(&a, f, p) || qc_check_all_used(&a);
}

static int load_edges(const char *path, edge *e, int *n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        qc_error("run", "cannot open the edge-vector table '%s' (set QCHECK_CASES to the cases/ folder)", path);
        return QC_EXIT_USAGE;
    }
    char line[512];
    int lineno = 0;
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        edge *x = &e[*n];
        char in[16], ex[16];
        x->source[0] = '\0';
        if (*n >= MAX_EDGES ||
            sscanf(line, "%15[^\t]\t%95[^\t]\t%15[^\t]\t%15[^\t]\t%127[^\n]", x->format, x->policy, in, ex,
                   x->source) < 4) {
            qc_error("run", "%s:%d: expected format, policy, input hex, expected hex, source", path, lineno);
            fclose(f);
            return QC_EXIT_USAGE;
        }
        char *end1, *end2;
        x->input = (uint32_t)strtoul(in, &end1, 16);
        x->expected = (uint32_t)strtoul(ex, &end2, 16);
        if (*end1 || *end2) {
            qc_error("run", "%s:%d: bad hex value '%s' or '%s'", path, lineno, in, ex);
            fclose(f);
            return QC_EXIT_USAGE;
        }
        x->line = lineno;
        (*n)++;
    }
    fclose(f);
    return QC_EXIT_OK;
}

static int run_edge_group(run_opts *o, const edge *e, int n, const char *path)
{
    qc_format f;
    qc_cast_policy p;
    if (qc_format_or_die("run", e[0].format, &f) || policy_from_column(e[0].policy, f, &p)) {
        qc_error("run", "%s:%d: bad format or policy", path, e[0].line);
        return QC_EXIT_USAGE;
    }
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += qcref_encode(f, qc_f32_from_bits(e[i].input), &p) != e[i].expected;
    char id[160], fig[64];
    snprintf(id, sizeof id, "cast_edges.%.15s.%.95s", e[0].format, e[0].policy);
    snprintf(fig, sizeof fig, "vectors=%d mismatches=%d", n, bad);
    verdict(o, bad == 0, id, fig);
    for (int i = 0, shown = 0; i < n && shown < SHOW_MISMATCHES; i++) {
        uint32_t got = qcref_encode(f, qc_f32_from_bits(e[i].input), &p);
        if (got != e[i].expected) {
            printf("    input 0x%08X (%.9g): expected 0x%02X got 0x%02X  [%s, %s:%d]\n", e[i].input,
                   (double)qc_f32_from_bits(e[i].input), e[i].expected, got, e[i].source, path, e[i].line);
            shown++;
        }
    }
    return QC_EXIT_OK;
}

static int run_edges(run_opts *o, const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/cast_edges.tsv", dir);
    static edge e[MAX_EDGES];
    int n;
    if (load_edges(path, e, &n))
        return QC_EXIT_USAGE;
    /* group by (format, policy) in first-appearance order */
    static int done[MAX_EDGES];
    memset(done, 0, sizeof done);
    for (int i = 0; i < n; i++) {
        if (done[i])
            continue;
        static edge group[MAX_EDGES];
        int g = 0;
        for (int j = i; j < n; j++)
            if (!done[j] && strcmp(e[j].format, e[i].format) == 0 && strcmp(e[j].policy, e[i].policy) == 0) {
                group[g++] = e[j];
                done[j] = 1;
            }
        char id[160];
        snprintf(id, sizeof id, "cast_edges.%.15s.%.95s", e[i].format, e[i].policy);
        if (!selected(o, id))
            continue;
        if (o->list_only)
            puts(id);
        else if (run_edge_group(o, group, g, path))
            return QC_EXIT_USAGE;
    }
    return QC_EXIT_OK;
}

/* Codes an encoder can produce from their own value: every finite code, and +-Inf unless the
 * policy saturates (under satfinite +-Inf encodes to +-max by definition). NaN codes are many to one. */
static int round_trips(qc_format f, uint32_t c, const qc_cast_policy *p)
{
    uint32_t bits = qc_f32_bits(qcref_decode(f, c, p));
    if (qc_bits_is_nan(bits))
        return 0;
    return !qc_bits_is_inf(bits) || p->overflow == QC_OVERFLOW_NAN;
}

static void run_roundtrips(run_opts *o)
{
    for (int fi = 0; fi < QC_FORMAT_COUNT; fi++) {
        qc_format f = (qc_format)fi;
        if (f == QC_F32)
            continue;
        for (int pi = 0; pi < qc_cast_profile_count(); pi++) {
            const qc_cast_profile *prof = qc_cast_profile_at(pi);
            char id[96];
            snprintf(id, sizeof id, "roundtrip.%s.%s", qc_format_name(f), prof->name);
            if (!selected(o, id))
                continue;
            if (o->list_only) {
                puts(id);
                continue;
            }
            qc_cast_policy p = qc_cast_profile_policy(prof, f);
            uint32_t n = 1u << qcref_format_bits(f), checked = 0, bad = 0, first_bad = 0;
            for (uint32_t c = 0; c < n; c++) {
                if (!round_trips(f, c, &p))
                    continue;
                checked++;
                if (qcref_encode(f, qcref_decode(f, c, &p), &p) != c && bad++ == 0)
                    first_bad = c;
            }
            char fig[96];
            snprintf(fig, sizeof fig, "codes=%u mismatches=%u", checked, bad);
            verdict(o, bad == 0, id, fig);
            if (bad)
                printf("    first: code 0x%X decodes to %.9g and encodes back to 0x%X\n", first_bad,
                       (double)qcref_decode(f, first_bad, &p),
                       qcref_encode(f, qcref_decode(f, first_bad, &p), &p));
        }
    }
}

static void run_help(void)
{
    printf("usage: qcheck run [--case NAME[,NAME..]] [--filter REGEX] [--suite quick|full|bringup]\n"
           "                  [--backend ref]\n"
           "Runs the element-format conformance suite on the reference backend: the edge vectors\n"
           "of cases/cast_edges.tsv (expected codes copied from shared/spec/formats.md) and the\n"
           "round trip of every code under every cast profile. One line per case with a REPRO\n"
           "command; the last line is 'N passed, N failed'. Exit 1 when any case fails.\n"
           "  --case NAMES        only these cases (qcheck list cases)\n"
           "  --filter REGEX      only cases whose id matches (POSIX extended regex)\n"
           "  --suite TIER        quick (default), full, bringup: the format suite is in every tier\n"
           "  --backend B         ref (the only backend so far)\n"
           "QCHECK_CASES overrides the cases/ folder (default: %s).\n",
           QC_CASES_DIR);
}

static const char *cases_dir(void)
{
    const char *env = getenv("QCHECK_CASES");
    return env && *env ? env : QC_CASES_DIR;
}

int cmd_run(int argc, char **argv)
{
    qc_args a;
    if (qc_parse_args(&a, "run", argc, argv, NULL))
        return QC_EXIT_USAGE;
    if (a.help) {
        run_help();
        return QC_EXIT_OK;
    }
    static run_opts o;
    memset(&o, 0, sizeof o);
    const char *cases = qc_opt(&a, "case"), *filter = qc_opt(&a, "filter");
    const char *suite = qc_opt(&a, "suite"), *backend = qc_opt(&a, "backend");
    static char case_buf[4096];
    if (cases) {
        snprintf(case_buf, sizeof case_buf, "%s", cases);
        char *save = NULL;
        for (char *t = strtok_r(case_buf, ",", &save); t && o.ncases < 64; t = strtok_r(NULL, ",", &save))
            o.cases[o.ncases++] = t;
    }
    if (suite && strcmp(suite, "quick") && strcmp(suite, "full") && strcmp(suite, "bringup")) {
        qc_error(a.cmd, "unknown suite '%s' (known: quick, full, bringup)", suite);
        return QC_EXIT_USAGE;
    }
    if (backend && strcmp(backend, "ref") != 0) {
        qc_error(a.cmd, "unknown backend '%s' (known: ref)", backend);
        return QC_EXIT_USAGE;
    }
    if (filter) {
        if (regcomp(&o.filter, filter, REG_EXTENDED | REG_NOSUB) != 0) {
            qc_error(a.cmd, "bad --filter regex '%s'", filter);
            return QC_EXIT_USAGE;
        }
        o.has_filter = 1;
    }
    if (qc_check_all_used(&a) || (a.npos && (qc_error(a.cmd, "unexpected argument '%s'", a.pos[0]), 1)))
        return QC_EXIT_USAGE;

    if (run_edges(&o, cases_dir()))
        return QC_EXIT_USAGE;
    run_roundtrips(&o);
    if (o.has_filter)
        regfree(&o.filter);
    if (o.passed + o.failed == 0) {
        qc_error(a.cmd, "no case matched (see qcheck list cases)");
        return QC_EXIT_USAGE;
    }
    printf("%d passed, %d failed\n", o.passed, o.failed);
    return o.failed ? QC_EXIT_FAIL : QC_EXIT_OK;
}

int qc_list_cases(void)
{
    static run_opts o;
    memset(&o, 0, sizeof o);
    o.list_only = 1;
    if (run_edges(&o, cases_dir()))
        return QC_EXIT_USAGE;
    run_roundtrips(&o);
    return QC_EXIT_OK;
}
