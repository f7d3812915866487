/* cmd_report.c: `qcheck report merge DIR... --out DIR`: one report from the reports of the shards of
 * one run (qcheck run --shard I/N --report DIR each), equal to what the unsharded run writes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "coverage.h"
#include "generate.h"
#include "report.h"

/* The shards agree on what was run: the same qcheck, suite, selection and shard count, each
 * index once. 0, or 2 after naming the shard that does not fit (or the missing index). */
static int check_shards(const char *cmd, char **dirs, const qc_report_data *d, int n)
{
    const qc_run_info *a = &d[0].info;
    for (int i = 0; i < n; i++) {
        const qc_run_info *b = &d[i].info;
        const char *what = strcmp(a->qcheck_version, b->qcheck_version) || strcmp(a->git_revision, b->git_revision)
                               ? "another qcheck version or revision"
                           : strcmp(a->suite, b->suite) ? "another suite"
                           : strcmp(a->selection, b->selection) || a->selection_items != b->selection_items
                               ? "another selection (case files, --case, --filter, --params, --backend or --seed)"
                           : a->shard_count != b->shard_count ? "another shard count"
                                                              : NULL;
        if (what) {
            qc_error(cmd, "%s: %s than %s (%s %s, selection %s, shard %d/%d)", dirs[i], what, dirs[0],
                     b->qcheck_version, b->git_revision, b->selection, b->shard_index, b->shard_count);
            return 2;
        }
        for (int j = 0; j < i; j++)
            if (d[j].info.shard_index == b->shard_index) {
                qc_error(cmd, "%s and %s are both shard %d/%d", dirs[j], dirs[i], b->shard_index, b->shard_count);
                return 2;
            }
    }
    for (int s = 1; s <= a->shard_count; s++) {
        int found = 0;
        for (int i = 0; i < n; i++)
            found |= d[i].info.shard_index == s;
        if (!found) {
            qc_error(cmd, "shard %d/%d is missing (%d of %d shard reports given)", s, a->shard_count, n, a->shard_count);
            return 2;
        }
    }
    return 0;
}

static int by_position(const void *x, const void *y)
{
    int64_t a = ((const qc_result *)x)->position, b = ((const qc_result *)y)->position;
    return (a > b) - (a < b);
}

/* 1 when the space-separated list holds name. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

/* The coverage rows of every shard, one per recipe x profile (sorted by it, as qcheck run writes
 * them): instances added, classes united, in the order of generate.h. */
static int merge_coverage(const qc_report_data *d, int n, qc_coverage_line *out, int cap)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < d[i].ncoverage; k++) {
            const qc_coverage_line *l = &d[i].coverage[k];
            int at = 0;
            while (at < m && strcmp(out[at].key, l->key))
                at++;
            if (at == m && m == cap)
                continue;
            if (at == m) {
                out[m++] = *l;
                continue;
            }
            out[at].instances += l->instances;
            for (int c = 0; c < QC_COV_COUNT; c++)
                if (listed(l->reached, qc_coverage_names[c]) && !listed(out[at].reached, qc_coverage_names[c]))
                    qc_appendf(out[at].reached, sizeof out[at].reached, " %s", qc_coverage_names[c]);
        }
    for (int i = 0; i < m; i++) { /* canonical order; missing = required and reached by no shard */
        char reached[sizeof out[i].reached] = "";
        out[i].missing[0] = 0;
        for (int c = 0; c < QC_COV_COUNT; c++) {
            const char *name = qc_coverage_names[c];
            if (listed(out[i].reached, name))
                qc_appendf(reached, sizeof reached, "%s%s", reached[0] ? " " : "", name);
            else if (listed(out[i].required, name))
                qc_appendf(out[i].missing, sizeof out[i].missing, "%s%s", out[i].missing[0] ? " " : "", name);
        }
        memcpy(out[i].reached, reached, sizeof reached);
    }
    qsort(out, (size_t)m, sizeof *out, qc_coverage_line_cmp);
    return m;
}

/* The first position of 0..n-1 that results sorted by position do not hold exactly once, -1 when
 * each does (two results at one position had merged into a report missing another). */
static int64_t first_gap(const qc_result *sorted, int n)
{
    for (int i = 0; i < n; i++)
        if (sorted[i].position != i)
            return sorted[i].position > i ? i : sorted[i].position;
    return -1;
}

/* The planted bugs of the merged run, as qcheck run judges them: one whose items ran and none
 * FAILed escaped the gate (a line each); one whose every item was skipped, none declined, could
 * not run where the shards ran. Returns how many escaped. */
static int escaped_mutants(const qc_result *all, int total)
{
    int escaped = 0;
    for (int i = 0; i < total; i++) {
        int first = all[i].planted; /* the first item of each planted backend: a scan only for those */
        for (int j = 0; j < i && first; j++)
            first = strcmp(all[j].backend, all[i].backend) != 0;
        if (!first)
            continue;
        int tried, failed, skipped, declined;
        qc_backend_tally(all, total, all[i].backend, &tried, &failed, &skipped, &declined);
        const char *state = failed ? "caught" : skipped == tried && !declined ? "NOT RUN" : "NOT CAUGHT";
        printf("MUTANT %s %s (%d of %d instances failed)\n", all[i].backend, state, failed, tried);
        escaped += !failed && (skipped < tried || declined);
    }
    return escaped;
}

static int merge(const char *cmd, char **dirs, int n, const char *out_dir)
{
    qc_report_data *d = calloc((size_t)n, sizeof *d);
    char err[4096];
    int rc = d ? 0 : 2, total = 0;
    for (int i = 0; i < n && !rc; i++)
        if (qc_report_read(dirs[i], &d[i], err, sizeof err))
            qc_error(cmd, "%s", err), rc = 2;
    rc = rc ? rc : check_shards(cmd, dirs, d, n);
    for (int i = 0; i < n && !rc; i++)
        total += d[i].n;
    qc_result *all = rc ? NULL : calloc((size_t)total + 1, sizeof *all);
    static qc_coverage_line coverage[256];
    if (!rc && all) {
        qc_run_info info = d[0].info;
        int at = 0;
        for (int i = 0; i < n; i++) {
            memcpy(all + at, d[i].results, sizeof *all * (size_t)d[i].n);
            at += d[i].n;
            info.seconds = d[i].info.seconds > info.seconds ? d[i].info.seconds : info.seconds; /* shards run side by side */
            if (strcmp(d[i].info.started, info.started) < 0)
                snprintf(info.started, sizeof info.started, "%s", d[i].info.started);
        }
        qsort(all, (size_t)total, sizeof *all, by_position);
        info.shard_index = info.shard_count = 1;
        info.coverage = coverage;
        info.ncoverage = merge_coverage(d, n, coverage, 256);
        size_t len = (size_t)snprintf(info.command, sizeof info.command, "qcheck report merge");
        for (int i = 0; i < n && len < sizeof info.command; i++)
            len += (size_t)snprintf(info.command + len, sizeof info.command - len, " %s", dirs[i]);
        int count[QC_VERDICT_COUNT] = {0}, failing = 0;
        for (int i = 0; i < total; i++) {
            count[all[i].verdict]++;
            /* as in qcheck run: a mutant's failures are the gate working, not a failure of the run */
            failing += qc_verdict_failing(all[i].verdict) && !(all[i].planted && all[i].verdict == QC_FAIL);
        }
        int64_t gap = total == info.selection_items ? first_gap(all, total) : -1;
        if (total != info.selection_items)
            qc_error(cmd, "the shards hold %d items, the selection %lld", total, (long long)info.selection_items), rc = 2;
        else if (gap >= 0)
            qc_error(cmd, "the shards' results do not hold position %lld of the selection once (one twice, or out of "
                          "0..%d): edited or mixed reports", (long long)gap, total - 1), rc = 2;
        else if (qc_report_write(out_dir, &info, all, total, err, sizeof err))
            qc_error(cmd, "--out: %s", err), rc = 2;
        else {
            failing += escaped_mutants(all, total);
            printf("%d shards merged: %d passed, %d failed, %d skipped, %d mistrusted\nreport: %s/summary.json, "
                   "junit.xml, summary.md\n", n, count[QC_PASS], count[QC_FAIL] + count[QC_ERROR], count[QC_SKIPPED],
                   count[QC_MISTRUSTED], out_dir);
            if (qc_nothing_checked(all, total))
                printf("NOTHING CHECKED: every item was skipped (no backend compared an output; not a pass)\n");
            rc = failing || qc_nothing_checked(all, total) ? QC_EXIT_FAIL : QC_EXIT_OK;
        }
    } else if (!rc) {
        qc_error(cmd, "out of memory"), rc = 2;
    }
    for (int i = 0; d && i < n; i++)
        qc_report_data_free(&d[i]);
    free(d), free(all);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    qc_args a;
    if (qc_parse_args(&a, "report", argc, argv, NULL))
        return QC_EXIT_USAGE;
    if (a.help) {
        printf("usage: qcheck report merge DIR... --out DIR\n"
               "One report (summary.json, junit.xml, summary.md) from the --report folders of the shards of one\n"
               "run (qcheck run --shard I/N --report DIR, for I = 1..N): results in the order of the unsharded\n"
               "run, coverage united. Exit 2 naming the shard that is missing, given twice, or from another\n"
               "qcheck version, suite or selection; 1 as the unsharded run: an item failed (FAIL, ERROR,\n"
               "MISTRUSTED; a planted bug's FAIL is the gate working), a planted bug escaped, or nothing\n"
               "was checked (every item skipped); 0 otherwise.\n");
        return QC_EXIT_OK;
    }
    const char *out = qc_opt(&a, "out");
    if (qc_check_all_used(&a))
        return QC_EXIT_USAGE;
    if (a.npos < 1 || strcmp(a.pos[0], "merge")) {
        qc_error(a.cmd, "usage: qcheck report merge DIR... --out DIR");
        return QC_EXIT_USAGE;
    }
    if (a.npos < 2 || !out) {
        qc_error(a.cmd, "merge needs the shard report folders and --out DIR");
        return QC_EXIT_USAGE;
    }
    for (int i = 1; i < a.npos; i++)
        if (qc_same_path(out, a.pos[i])) { /* its report would replace the shard's */
            qc_error(a.cmd, "--out %s is the shard folder %s: give a new folder", out, a.pos[i]);
            return QC_EXIT_USAGE;
        }
    return merge(a.cmd, (char **)a.pos + 1, a.npos - 1, out);
}
