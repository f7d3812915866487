/* report_html.c: index.html of `qcheck run --report DIR`, one self-contained file that opens
 * offline: plotly.js inlined (the plotting library, docs/DECISIONS.md says why this one), the
 * run's data as JSON in a <script type="application/json">, and the page's code (report_html.js,
 * embedded at build time). Every '<' of the data is written as \u003c, so no text a backend
 * printed can end the script element; the page builds its DOM with textContent only. */
#include "report_html.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_html_js.h" /* qc_report_js: report_html.js as a C string (generated) */
#include "report_plots.h"

enum { HTML_ITEMS = 100 };        /* failing items drawn; the table lists every item */
#define PLOTLY_MAX (64u << 20)    /* a plotly.min.js is about 5 MB */

#ifndef QC_PLOTLY_JS
#define QC_PLOTLY_JS ""
#endif

/* The plotly.js file: $QCHECK_PLOTLY_JS, else the one CMake found (pip's plotly package). NULL
 * with note saying why when there is none usable. */
static char *read_plotly(char *note, size_t cap)
{
    const char *env = getenv("QCHECK_PLOTLY_JS"), *path = env && *env ? env : QC_PLOTLY_JS;
    if (!*path) {
        snprintf(note, cap, "No plots: this qcheck was built without plotly.js (pip install plotly==6.5.0, "
                            "then reconfigure, or set QCHECK_PLOTLY_JS to a plotly.min.js).");
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long size = -1;
    if (f && !fseek(f, 0, SEEK_END) && (size = ftell(f)) > 0 && (unsigned long)size < PLOTLY_MAX && !fseek(f, 0, SEEK_SET) &&
        (text = malloc((size_t)size + 1)) && fread(text, 1, (size_t)size, f) == (size_t)size) {
        text[size] = '\0';
        if (strlen(text) == (size_t)size && !strstr(text, "</script") && !strstr(text, "<!--")) {
            fclose(f);
            return text;
        }
    }
    snprintf(note, cap, "No plots: %s is not a usable plotly.min.js (unreadable, empty, over 64 MB, or it would end "
                        "its script element).", path);
    if (f)
        fclose(f);
    free(text);
    return NULL;
}

static int add_text(cJSON *o, const char *key, const char *s, size_t cap)
{
    char *t = qc_report_text(s, cap);
    int ok = t && cJSON_AddStringToObject(o, key, t);
    free(t);
    return ok;
}

static int add_head(cJSON *root, const qc_run_info *in, const qc_result *r, int n, const char *note)
{
    cJSON *k = cJSON_AddObjectToObject(root, "counts");
    int count[QC_VERDICT_COUNT] = {0};
    for (int i = 0; i < n; i++)
        count[r[i].verdict]++;
    int ok = k && add_text(root, "qcheck_version", in->qcheck_version, sizeof in->qcheck_version) &&
             add_text(root, "git_revision", in->git_revision, sizeof in->git_revision) &&
             add_text(root, "suite", in->suite, sizeof in->suite) && add_text(root, "started", in->started, sizeof in->started) &&
             add_text(root, "command", in->command, sizeof in->command) &&
             cJSON_AddNumberToObject(root, "seconds", in->seconds) && cJSON_AddNumberToObject(k, "total", n) &&
             cJSON_AddStringToObject(root, "plotly_note", note);
    for (int v = 0; ok && v < QC_VERDICT_COUNT; v++)
        ok = cJSON_AddNumberToObject(k, qc_verdict_name((qc_verdict)v), count[v]) != NULL;
    return ok;
}

/* rows: [verdict, id, backend, figures] per item; items: the first HTML_ITEMS failing ones whole. */
static int add_results(cJSON *root, const qc_result *r, int n)
{
    cJSON *rows = cJSON_AddArrayToObject(root, "rows"), *items = cJSON_AddArrayToObject(root, "items");
    int shown = 0;
    for (int i = 0; rows && items && i < n; i++) {
        cJSON *row = cJSON_CreateArray(), *s;
        if (!row || !cJSON_AddItemToArray(rows, row) ||
            !cJSON_AddItemToArray(row, cJSON_CreateString(qc_verdict_name(r[i].verdict))))
            return 0;
        const char *cols[] = {r[i].case_id, r[i].backend, r[i].figures};
        const size_t caps[] = {sizeof r[i].case_id, sizeof r[i].backend, sizeof r[i].figures};
        for (int c = 0; c < 3; c++) {
            char *t = qc_report_text(cols[c], caps[c]);
            if (!t || !(s = cJSON_CreateString(t)) || !cJSON_AddItemToArray(row, s))
                return free(t), 0;
            free(t);
        }
        if (!qc_verdict_failing(r[i].verdict) || shown++ >= HTML_ITEMS)
            continue;
        cJSON *it = cJSON_CreateObject();
        if (!it || !cJSON_AddItemToArray(items, it) ||
            !cJSON_AddStringToObject(it, "verdict", qc_verdict_name(r[i].verdict)) ||
            !add_text(it, "case_id", r[i].case_id, sizeof r[i].case_id) ||
            !add_text(it, "backend", r[i].backend, sizeof r[i].backend) ||
            !add_text(it, "figures", r[i].figures, sizeof r[i].figures) ||
            !add_text(it, "repro", r[i].repro, sizeof r[i].repro) ||
            !add_text(it, "detail", r[i].detail, sizeof r[i].detail) || !qc_plots_to_json(it, &r[i].plots))
            return 0;
    }
    return rows && items;
}

/* s with every '<' as \u003c (valid inside JSON strings, where alone a '<' can appear). */
static char *script_safe(const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++)
        n += *p == '<' ? 6 : 1;
    char *out = malloc(n + 1), *o = out;
    for (const char *p = s; out && *p; p++)
        if (*p == '<')
            memcpy(o, "\\u003c", 6), o += 6;
        else
            *o++ = *p;
    if (out)
        *o = '\0';
    return out;
}

static const char style[] =
    "body{font:13px system-ui,sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;width:100%}"
    "td,th{border-bottom:1px solid #ddd;padding:2px 6px;text-align:left;font-family:monospace;font-size:12px}"
    "tr.FAIL td:first-child,tr.ERROR td:first-child{color:#c0392b;font-weight:bold}tr.PASS td:first-child{color:#2e7d32}"
    "tr.SKIPPED td:first-child,tr.MISTRUSTED td:first-child{color:#8a6d00}#scroll{max-height:24em;overflow:auto}"
    "section.item{border-top:2px solid #c0392b;margin-top:1.5em}pre{white-space:pre-wrap;font-size:11px;background:#f7f7f7;"
    "padding:6px}.plot{width:100%;max-width:1100px}#qc-errors{color:#c0392b}.note{color:#8a6d00}";

char *qc_html_report(const qc_run_info *in, const qc_result *r, int n)
{
    char note[512] = "";
    char *plotly = read_plotly(note, sizeof note), *json = NULL, *safe = NULL, *html = NULL;
    cJSON *root = cJSON_CreateObject();
    if (root && add_head(root, in, r, n, note) && add_results(root, r, n))
        json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    safe = json ? script_safe(json) : NULL;
    const char *parts[] = {"<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>qcheck report</title><style>", style,
                           "</style>\n<script>", plotly ? plotly : "", "</script>\n<script id=\"qc-data\" type=\"application/json\">",
                           safe ? safe : "", "</script>\n</head><body>\n<h1>qcheck report</h1><div id=\"meta\"></div>\n"
                           "<pre id=\"qc-errors\"></pre>\n<p>verdict <select id=\"f-verdict\"><option value=\"all\">all</option>"
                           "<option value=\"failing\" selected>failing</option><option>PASS</option><option>FAIL</option>"
                           "<option>ERROR</option><option>MISTRUSTED</option><option>SKIPPED</option></select> "
                           "filter <input id=\"f-text\" placeholder=\"case, params or backend\" size=\"40\"> "
                           "<span id=\"f-count\"></span></p>\n<div id=\"scroll\"><table id=\"results\"><thead><tr><th>verdict"
                           "</th><th>instance</th><th>backend</th><th>figures</th></tr></thead><tbody></tbody></table></div>\n"
                           "<h2>Failing items</h2><div id=\"items\"></div>\n<script>", qc_report_js, "</script>\n</body></html>\n"};
    size_t len = 1;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        len += strlen(parts[i]);
    if (safe && (html = malloc(len))) {
        html[0] = '\0';
        for (size_t i = 0, at = 0; i < sizeof parts / sizeof parts[0]; i++) {
            size_t k = strlen(parts[i]);
            memcpy(html + at, parts[i], k + 1);
            at += k;
        }
    }
    free(plotly);
    cJSON_free(json);
    free(safe);
    return html;
}
