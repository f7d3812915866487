/* report.c: summary.json, junit.xml and summary.md of one run (docs/spec/cli.md `--report DIR`).
 *
 * Results carry arbitrary text from kernels and comparators (mismatch reports, crash messages),
 * so every string passes through one UTF-8 filter first: invalid sequences become U+FFFD (the
 * Unicode replacement rule, Unicode 15 section 3.9 "U+FFFD Substitution"), and XML gets only the
 * characters XML 1.0 section 2.2 allows (#x9 #xA #xD, #x20-#xD7FF, #xE000-#xFFFD, #x10000-#x10FFFF).
 * A report must parse, whatever a backend printed. */
#include "report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report_html.h"
#include "report_plots.h"
#include "files.h"
#include "tempfile.h"

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return 2;
}

/* ---- a growable text buffer --------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (k > 0)
        sb_put(b, tmp, (size_t)k < sizeof tmp ? (size_t)k : sizeof tmp - 1);
}

/* ---- UTF-8 -------------------------------------------------------------------------------- */

/* One step of UTF-8 decoding by Unicode 15 Table 3-7 (well-formed byte sequences: no overlongs,
 * no surrogates, nothing above U+10FFFF). Returns the bytes consumed; *ok is 0 for an ill-formed
 * sequence, which then consumes its maximal valid prefix (at least one byte), the practice of
 * section 3.9 that Python's errors="replace" follows: one U+FFFD per maximal subpart. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp, int *ok)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    size_t len;
    *ok = 0;
    if (c < 0x80) {
        *cp = c, *ok = 1;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
        return 1;
    uint32_t v = c & (0x7Fu >> len);
    for (size_t i = 1; i < len; i++) {
        if (i >= n || s[i] < lo || s[i] > hi)
            return i;
        v = (v << 6) | (s[i] & 0x3Fu);
        lo = 0x80, hi = 0xBF;
    }
    *cp = v, *ok = 1;
    return len;
}

enum esc { ESC_NONE, ESC_XML_TEXT, ESC_XML_ATTR };

static int xml_char_ok(uint32_t c)
{
    return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
           (c >= 0xE000 && c <= 0xFFFD) || c >= 0x10000;
}

/* Appends the first strnlen(s, cap) bytes of s, valid UTF-8, escaped for the context.
 * In attributes \t \n \r are character references: attribute-value normalization (XML 1.0
 * section 3.3.3) would otherwise turn them into spaces. \r in text likewise, against end-of-line
 * normalization (section 2.11). */
static void sb_text(sbuf *b, const char *s, size_t cap, enum esc mode)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strnlen(s, cap);
    for (size_t i = 0; i < n;) {
        uint32_t c = 0;
        int ok;
        size_t len = utf8_next(u + i, n - i, &c, &ok);
        if (!ok || (mode != ESC_NONE && !xml_char_ok(c))) {
            sb_puts(b, "\xEF\xBF\xBD"); /* U+FFFD */
            i += len;
            continue;
        }
        const char *rep = NULL;
        if (mode != ESC_NONE) {
            rep = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '\r' ? "&#13;"
                                                                                       : NULL;
            if (mode == ESC_XML_ATTR && !rep)
                rep = c == '"' ? "&quot;" : c == '\'' ? "&apos;" : c == '\n' ? "&#10;"
                    : c == '\t' ? "&#9;" : NULL;
        }
        if (rep)
            sb_puts(b, rep);
        else
            sb_put(b, s + i, len);
        i += len;
    }
}

#define TXT(field) (field), sizeof(field)

/* The first line of s, as a NUL-terminated copy in out (for JUnit message attributes). */
static void first_line(const char *s, size_t cap, char *out, size_t outcap)
{
    size_t n = strnlen(s, cap), k = 0;
    while (k < n && s[k] != '\n' && k + 1 < outcap)
        k++;
    memcpy(out, s, k);
    out[k] = '\0';
}

/* ---- counting ----------------------------------------------------------------------------- */

typedef struct counts {
    int n[QC_VERDICT_COUNT];
    int total;
    double seconds;
} counts;

static void count(counts *c, const qc_result *r)
{
    c->n[r->verdict]++;
    c->total++;
    c->seconds += r->seconds;
}

/* ---- summary.json ------------------------------------------------------------------------- */

/* cJSON copies the string; the copy here is only the UTF-8 repair (cJSON escapes controls). */
char *qc_report_text(const char *s, size_t cap)
{
    sbuf b = {0};
    sb_text(&b, s, cap, ESC_NONE);
    if (!b.oom && !b.p)
        b.p = calloc(1, 1);
    if (b.oom)
        free(b.p), b.p = NULL;
    return b.p;
}

static int add_str(cJSON *o, const char *key, const char *s, size_t cap)
{
    sbuf b = {0};
    sb_text(&b, s, cap, ESC_NONE);
    int ok = !b.oom && cJSON_AddStringToObject(o, key, b.p ? b.p : "") != NULL;
    free(b.p);
    return ok;
}

/* Seeds are uint64; a JSON number through a double would lose bits above 2^53, so the decimal
 * digits go in raw (RFC 8259 section 6 allows any precision; Python's json reads them exactly). */
static int add_u64(cJSON *o, const char *key, uint64_t v)
{
    char digits[24], text_key[64];
    snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    snprintf(text_key, sizeof text_key, "%s_text", key); /* the same digits as a string: a reader through
                                                            doubles (cJSON's) gets every bit back */
    return cJSON_AddRawToObject(o, key, digits) != NULL && cJSON_AddStringToObject(o, text_key, digits) != NULL;
}

static int json_result(cJSON *arr, const qc_result *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o))
        return (cJSON_Delete(o), 0);
    return add_str(o, "case_id", TXT(r->case_id)) && add_str(o, "case", TXT(r->case_name)) &&
           add_str(o, "op", TXT(r->op)) && add_str(o, "backend", TXT(r->backend)) &&
           cJSON_AddBoolToObject(o, "planted", r->planted) &&
           cJSON_AddStringToObject(o, "verdict", qc_verdict_name(r->verdict)) &&
           add_u64(o, "seed", r->seed) && cJSON_AddNumberToObject(o, "seconds", r->seconds) &&
           add_str(o, "figures", TXT(r->figures)) && add_str(o, "repro", TXT(r->repro)) &&
           add_str(o, "detail", TXT(r->detail)) && cJSON_AddNumberToObject(o, "position", (double)r->position) &&
           qc_plots_to_json(o, &r->plots);
}

/* "shard": {"index", "count"}, "selection": {"digest", "items"}: what `qcheck report merge` checks. */
static int json_selection(cJSON *root, const qc_run_info *in)
{
    cJSON *sh = cJSON_AddObjectToObject(root, "shard"), *sel = cJSON_AddObjectToObject(root, "selection");
    return sh && sel && cJSON_AddNumberToObject(sh, "index", in->shard_index > 0 ? in->shard_index : 1) &&
           cJSON_AddNumberToObject(sh, "count", in->shard_count > 0 ? in->shard_count : 1) &&
           add_str(sel, "digest", TXT(in->selection)) &&
           cJSON_AddNumberToObject(sel, "items", (double)in->selection_items);
}

static int json_head(cJSON *root, const qc_run_info *in, const counts *c)
{
    cJSON *k = cJSON_AddObjectToObject(root, "counts");
    int ok = cJSON_AddNumberToObject(root, "report_format", 1) &&
             add_str(root, "qcheck_version", TXT(in->qcheck_version)) &&
             add_str(root, "git_revision", TXT(in->git_revision)) &&
             add_str(root, "command", TXT(in->command)) && add_str(root, "suite", TXT(in->suite)) &&
             add_str(root, "started", TXT(in->started)) &&
             cJSON_AddNumberToObject(root, "seconds", in->seconds) && k &&
             cJSON_AddNumberToObject(k, "total", c->total) && json_selection(root, in);
    for (int v = 0; ok && v < QC_VERDICT_COUNT; v++)
        ok = cJSON_AddNumberToObject(k, qc_verdict_name(v), c->n[v]) != NULL;
    return ok;
}

/* The space-separated names of list as a JSON array under key. */
static int json_names(cJSON *o, const char *key, const char *list, size_t cap)
{
    cJSON *arr = cJSON_AddArrayToObject(o, key);
    char names[256];
    snprintf(names, sizeof names, "%.*s", (int)strnlen(list, cap), list);
    for (char *save, *t = strtok_r(names, " ", &save); arr && t; t = strtok_r(NULL, " ", &save))
        if (!cJSON_AddItemToArray(arr, cJSON_CreateString(t)))
            return 0;
    return arr != NULL;
}

/* "coverage": [{"recipe_profile", "instances", "reached": [...], "required_not_reached": [...]}] */
static int json_coverage(cJSON *root, const qc_run_info *in)
{
    cJSON *arr = cJSON_AddArrayToObject(root, "coverage");
    for (int i = 0; arr && i < in->ncoverage; i++) {
        const qc_coverage_line *row = &in->coverage[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o) || !add_str(o, "recipe_profile", TXT(row->key)) ||
            !cJSON_AddNumberToObject(o, "instances", row->instances) || !json_names(o, "reached", TXT(row->reached)) ||
            !json_names(o, "required", TXT(row->required)) ||
            !json_names(o, "required_not_reached", TXT(row->missing)))
            return 0;
    }
    return arr != NULL;
}

/* {"report_format":1, run info, "counts":{"total","PASS",...}, "coverage":[...], "results":[...]} */
static char *json_report(const qc_run_info *in, const qc_result *r, int n, const counts *c)
{
    cJSON *root = cJSON_CreateObject();
    int ok = root && json_head(root, in, c) && json_coverage(root, in);
    cJSON *arr = ok ? cJSON_AddArrayToObject(root, "results") : NULL;
    ok = ok && arr;
    for (int i = 0; ok && i < n; i++)
        ok = json_result(arr, &r[i]);
    char *text = ok ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    return text;
}

/* ---- junit.xml ---------------------------------------------------------------------------- */

static void xml_attr(sbuf *b, const char *name, const char *s, size_t cap)
{
    sb_printf(b, " %s=\"", name);
    sb_text(b, s, cap, ESC_XML_ATTR);
    sb_puts(b, "\"");
}

/* FAIL -> <failure>, ERROR -> <error>, SKIPPED and MISTRUSTED -> <skipped> (a mistrusted output
 * proves nothing, so it is not reported as a pass; its message says why). The element text is
 * the detail and the REPRO line. */
static void xml_outcome(sbuf *b, const qc_result *r)
{
    static const char *const tag[QC_VERDICT_COUNT] = {
        [QC_FAIL] = "failure", [QC_ERROR] = "error", [QC_SKIPPED] = "skipped",
        [QC_MISTRUSTED] = "skipped"};
    const char *t = tag[r->verdict];
    char msg[sizeof r->detail + 16], line[sizeof r->detail];
    if (!t)
        return;
    first_line(TXT(r->detail), line, sizeof line);
    snprintf(msg, sizeof msg, "%s%s", r->verdict == QC_MISTRUSTED ? "MISTRUSTED: " : "", line);
    sb_printf(b, "      <%s", t);
    xml_attr(b, "message", TXT(msg));
    sb_printf(b, " type=\"%s\">", qc_verdict_name(r->verdict));
    sb_text(b, TXT(r->detail), ESC_XML_TEXT);
    sb_puts(b, "\n\nREPRO: ");
    sb_text(b, TXT(r->repro), ESC_XML_TEXT);
    sb_printf(b, "</%s>\n", t);
}

static void xml_case(sbuf *b, const qc_result *r)
{
    sb_puts(b, "    <testcase");
    xml_attr(b, "name", TXT(r->case_id));
    xml_attr(b, "classname", TXT(r->backend));
    sb_printf(b, " time=\"%.6f\">\n", r->seconds);
    xml_outcome(b, r);
    if (r->verdict != QC_PASS) { /* a pass needs no output: an all-pass junit.xml stays small */
        sb_puts(b, "      <system-out>");
        sb_text(b, TXT(r->figures), ESC_XML_TEXT);
        sb_printf(b, "\nseed=%llu\nREPRO: ", (unsigned long long)r->seed);
        sb_text(b, TXT(r->repro), ESC_XML_TEXT);
        sb_puts(b, "</system-out>\n");
    }
    sb_puts(b, "    </testcase>\n");
}

static void xml_counts(sbuf *b, const counts *c, double seconds)
{
    sb_printf(b, " tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.6f\"",
              c->total, c->n[QC_FAIL], c->n[QC_ERROR], c->n[QC_SKIPPED] + c->n[QC_MISTRUSTED],
              seconds);
}

static int same_case(const qc_result *a, const qc_result *b)
{
    return strncmp(a->case_name, b->case_name, sizeof a->case_name) == 0;
}

/* One <testsuite> per case name, in order of first appearance. */
static void xml_suite(sbuf *b, const qc_run_info *in, const qc_result *r, int n, int first)
{
    counts c = {0};
    for (int i = first; i < n; i++)
        if (same_case(&r[i], &r[first]))
            count(&c, &r[i]);
    sb_puts(b, "  <testsuite");
    xml_attr(b, "name", TXT(r[first].case_name));
    xml_counts(b, &c, c.seconds);
    xml_attr(b, "timestamp", TXT(in->started));
    sb_puts(b, ">\n");
    for (int i = first; i < n; i++)
        if (same_case(&r[i], &r[first]))
            xml_case(b, &r[i]);
    sb_puts(b, "  </testsuite>\n");
}

static char *junit_report(const qc_run_info *in, const qc_result *r, int n, const counts *c)
{
    sbuf b = {0};
    sb_puts(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"qcheck\"");
    xml_counts(&b, c, in->seconds);
    sb_puts(&b, ">\n");
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = same_case(&r[j], &r[i]);
        if (!seen)
            xml_suite(&b, in, r, n, i);
    }
    sb_puts(&b, "</testsuites>\n");
    if (b.oom)
        free(b.p), b.p = NULL;
    return b.p;
}

/* ---- summary.md --------------------------------------------------------------------------- */

static size_t longest_backtick_run(const char *s, size_t cap)
{
    size_t n = strnlen(s, cap), run = 0, best = 0;
    for (size_t i = 0; i < n; i++) {
        run = s[i] == '`' ? run + 1 : 0;
        best = run > best ? run : best;
    }
    return best;
}

static void md_fence(sbuf *b, size_t k)
{
    for (size_t i = 0; i < k; i++)
        sb_puts(b, "`");
}

/* A code span or block whose fence is longer than any backtick run inside (CommonMark 0.31
 * sections 6.1, 4.5), so text from a backend cannot close it early. */
static void md_code(sbuf *b, const char *s, size_t cap, int block)
{
    size_t k = longest_backtick_run(s, cap) + 1;
    if (block && k < 3)
        k = 3;
    md_fence(b, k);
    sb_puts(b, block ? "\n" : " ");
    sb_text(b, s, cap, ESC_NONE);
    sb_puts(b, block ? "\n" : " ");
    md_fence(b, k);
    sb_puts(b, block ? "\n\n" : "");
}

static void md_head(sbuf *b, const qc_run_info *in, const counts *c)
{
    sb_puts(b, "# qcheck report\n\n");
    md_code(b, TXT(in->command), 0);
    sb_puts(b, "\n\nsuite ");
    sb_text(b, TXT(in->suite), ESC_NONE);
    sb_puts(b, ", qcheck ");
    sb_text(b, TXT(in->qcheck_version), ESC_NONE);
    sb_puts(b, " (");
    sb_text(b, TXT(in->git_revision), ESC_NONE);
    sb_puts(b, "), started ");
    sb_text(b, TXT(in->started), ESC_NONE);
    sb_printf(b, ", %.1f s\n\n| verdict | count |\n|---|---:|\n", in->seconds);
    for (int v = 0; v < QC_VERDICT_COUNT; v++)
        sb_printf(b, "| %s | %d |\n", qc_verdict_name(v), c->n[v]);
    sb_printf(b, "| total | %d |\n\n", c->total);
}

static void md_result(sbuf *b, const qc_result *r)
{
    sb_printf(b, "### %s ", qc_verdict_name(r->verdict));
    md_code(b, TXT(r->case_id), 0);
    sb_puts(b, " on ");
    md_code(b, TXT(r->backend), 0);
    sb_puts(b, "\n\n");
    if (r->figures[0]) {
        md_code(b, TXT(r->figures), 0);
        sb_puts(b, "\n\n");
    }
    char repro[sizeof r->repro + 8];
    snprintf(repro, sizeof repro, "REPRO: %.*s", (int)strnlen(TXT(r->repro)), r->repro);
    md_code(b, TXT(repro), 1);
    if (r->detail[0])
        md_code(b, TXT(r->detail), 1);
}

/* Every result of the given verdicts under one heading; nothing when there are none. */
static void md_section(sbuf *b, const char *title, const qc_result *r, int n, unsigned verdicts)
{
    int any = 0;
    for (int i = 0; i < n; i++) {
        if (!(verdicts & (1u << r[i].verdict)))
            continue;
        if (!any++)
            sb_printf(b, "## %s\n\n", title);
        md_result(b, &r[i]);
    }
}

/* The quant boundary classes per recipe x profile (docs/cases.md "boundaries"); nothing when the
 * run had no quant instance. */
static void md_coverage(sbuf *b, const qc_run_info *in)
{
    if (!in->ncoverage)
        return;
    sb_puts(b, "## Boundary coverage of the quant instances\n\n| recipe profile | instances | reached | "
               "required, not reached |\n|---|---:|---|---|\n");
    for (int i = 0; i < in->ncoverage; i++) {
        const qc_coverage_line *row = &in->coverage[i];
        sb_puts(b, "| ");
        sb_text(b, TXT(row->key), ESC_NONE);
        sb_printf(b, " | %d | ", row->instances);
        sb_text(b, TXT(row->reached), ESC_NONE);
        sb_puts(b, " | ");
        sb_text(b, TXT(row->missing), ESC_NONE);
        sb_puts(b, " |\n");
    }
    sb_puts(b, "\n");
}

static char *md_report(const qc_run_info *in, const qc_result *r, int n, const counts *c)
{
    sbuf b = {0};
    md_head(&b, in, c);
    md_coverage(&b, in);
    if (!c->n[QC_FAIL] && !c->n[QC_ERROR])
        sb_puts(&b, "No failures or errors.\n\n");
    md_section(&b, "Failures and errors", r, n, 1u << QC_FAIL | 1u << QC_ERROR);
    md_section(&b, "Mistrusted (too degenerate to prove anything)", r, n, 1u << QC_MISTRUSTED);
    md_section(&b, "Skipped", r, n, 1u << QC_SKIPPED);
    if (b.oom)
        free(b.p), b.p = NULL;
    return b.p;
}

/* ---- files -------------------------------------------------------------------------------- */

/* mkdir -p: each missing component is created; an existing non-directory is an error. */
static int make_dirs(const char *dir, char *err, size_t errlen)
{
    char p[4096];
    struct stat st;
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return fail(err, errlen, "report directory %s: path too long", dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            return fail(err, errlen, "report directory %s: cannot create %s (%s)", dir, p,
                        strerror(errno));
        *s = '/';
    }
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
        return fail(err, errlen, "report directory %s: cannot create it (%s)", dir,
                    strerror(errno));
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
        return fail(err, errlen, "report directory %s: exists and is not a directory", dir);
    return 0;
}

/* DIR/NAME through DIR/.NAME.tmp.PID.K (core/tempfile.h qc_publish), hidden from a reader that
 * lists DIR, created exclusively (0666 & ~umask) and renamed onto DIR/NAME when complete. */
static int write_atomic(const char *dir, const char *name, const char *text, char *err,
                        size_t errlen)
{
    char path[4200], hidden[4200];
    const char *step;
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path ||
        snprintf(hidden, sizeof hidden, "%s/.%s", dir, name) >= (int)sizeof hidden)
        return fail(err, errlen, "report file %s/%s: path too long", dir, name);
    int e = qc_publish(path, hidden, text, strlen(text), 1, &step);
    return e ? fail(err, errlen, "report file %s: cannot %s (%s)", path, step, strerror(e)) : 0;
}

static int check_results(const qc_result *r, int n, char *err, size_t errlen)
{
    if (n < 0 || (n > 0 && !r))
        return fail(err, errlen, "report: %d results and results %s", n, r ? "given" : "NULL");
    for (int i = 0; i < n; i++)
        if ((unsigned)r[i].verdict >= QC_VERDICT_COUNT)
            return fail(err, errlen, "report: result %d (%.*s) has verdict %d, not a qc_verdict",
                        i, (int)strnlen(TXT(r[i].case_id)), r[i].case_id, (int)r[i].verdict);
    return 0;
}

int qc_report_write(const char *dir, const qc_run_info *info, const qc_result *results, int n,
                    char *err, size_t errlen)
{
    static const qc_run_info none;
    const qc_run_info *in = info ? info : &none;
    if (!dir || !dir[0])
        return fail(err, errlen, "report: no directory given");
    static const char *const reports[] = {".summary.json", ".junit.xml", ".summary.md", ".index.html", NULL};
    int rc = check_results(results, n, err, errlen);
    if (!rc)
        rc = make_dirs(dir, err, errlen);
    if (rc)
        return rc;
    qc_temp_sweep(dir, reports); /* what a killed run left (core/tempfile.h) */
    counts c = {0};
    for (int i = 0; i < n; i++)
        count(&c, &results[i]);
    char *json = json_report(in, results, n, &c);
    char *xml = junit_report(in, results, n, &c);
    char *md = md_report(in, results, n, &c);
    char *html = qc_html_report(in, results, n);
    if (!json || !xml || !md || !html)
        rc = fail(err, errlen, "report %s: out of memory", dir);
    if (!rc)
        rc = write_atomic(dir, "summary.json", json, err, errlen);
    if (!rc)
        rc = write_atomic(dir, "junit.xml", xml, err, errlen);
    if (!rc)
        rc = write_atomic(dir, "summary.md", md, err, errlen);
    if (!rc)
        rc = write_atomic(dir, "index.html", html, err, errlen);
    cJSON_free(json);
    free(xml);
    free(md);
    free(html);
    return rc;
}
