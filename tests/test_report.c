/* test_report.c: writes a report of seven crafted results (every verdict, two case names, text
 * full of XML/JSON/Markdown specials, invalid UTF-8) into DIR for tests/test_report.py to parse
 * with Python's own json and xml.etree, and checks here what needs no parser: the files exist,
 * no temporary file is left, DIR is created with its parents, and bad arguments are refused.
 * usage: test_report DIR. Exit 0 pass, 1 fail. The strings must match test_report.py. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"


#include "check.h"

static const char D_FAIL[] = "mismatch at [3,7]: got 0x7f <NaN> & want 0x7e \"quoted\" 'single'\n"
                             "line2: caf\xc3\xa9 \xe2\x80\x94 \xe6\xb8\xac\xe8\xa9\xa6 \xe2\x9c\x93\n"
                             "\ttabbed\r\nend";
static const char D_ERR[] = "crash: signal 11 \x01\x7f bytes \xff\xfe end \xe2\x82";
static const char D_MIS[] = "all outputs zero (n=4096)";
static const char D_SKIP[] = "no GPU: cudaGetDeviceCount returned 100";
static const char D_FAIL2[] = "contains ``` fences ```` and `ticks`\n<script>alert(1)</script>";

static void set(qc_result *r, const char *id, const char *cname, const char *backend,
                qc_verdict v, const char *detail, double seconds)
{
    memset(r, 0, sizeof *r);
    snprintf(r->case_id, sizeof r->case_id, "%s", id);
    snprintf(r->case_name, sizeof r->case_name, "%s", cname);
    snprintf(r->op, sizeof r->op, "%s", strcmp(cname, "cast_fp8") ? "moe.nvfp4" : "cast");
    snprintf(r->backend, sizeof r->backend, "%s", backend);
    r->verdict = v;
    r->seed = 18446744073709551557ull;
    r->seconds = seconds;
    snprintf(r->figures, sizeof r->figures, "n=1024 mismatches=%d", v == QC_FAIL ? 3 : 0);
    snprintf(r->repro, sizeof r->repro, "qcheck run --case %s --backend %s --filter '%s'", cname,
             backend, id);
    snprintf(r->detail, sizeof r->detail, "%s", detail);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_report DIR\n");
        return 2;
    }
    qc_result r[7];
    set(&r[0], "cast.e4m3fn[profile=ptx,n=1024]", "cast_fp8", "ref", QC_PASS, "", 0.5);
    set(&r[1], "cast.e4m3fn[profile=ptx,n=1024]", "cast_fp8", "cuda", QC_FAIL, D_FAIL, 0.25);
    set(&r[2], "moe[a=\"x\"&b<2]", "nvfp4_moe", "cpu-avx512", QC_ERROR, D_ERR, 1.0);
    set(&r[3], "cast.e5m2[n=0]", "cast_fp8", "mutants", QC_MISTRUSTED, D_MIS, 0.125);
    set(&r[4], "moe[a=\"x\"&b<2]", "nvfp4_moe", "cuda", QC_SKIPPED, D_SKIP, 0.0);
    set(&r[5], "moe[e=8]", "nvfp4_moe", "ref", QC_FAIL, D_FAIL2, 2.0);
    set(&r[6], "cast.e5m2[n=0]", "cast_fp8", "ref", QC_PASS, "", 0.0625);
    qc_run_info info = {.seconds = 3.9375};
    snprintf(info.command, sizeof info.command, "qcheck run --report %s", argv[1]);
    snprintf(info.suite, sizeof info.suite, "quick");
    snprintf(info.qcheck_version, sizeof info.qcheck_version, "0.1.0");
    snprintf(info.git_revision, sizeof info.git_revision, "596e623");
    snprintf(info.started, sizeof info.started, "2025-06-01T12:00:00Z");

    char dir[1024], err[1024] = "";
    snprintf(dir, sizeof dir, "%s/nested/report", argv[1]); /* parents missing: mkdir -p */
    CHECK(qc_report_write(dir, &info, r, 7, err, sizeof err) == 0, "write: %s", err);
    CHECK(qc_report_write(dir, &info, r, 7, err, sizeof err) == 0, "rewrite: %s", err);
    CHECK(count_entries(dir) == 4, "%d entries in %s, expected the 4 reports only",
          count_entries(dir), dir);

    char file[1100];
    snprintf(file, sizeof file, "%s/summary.json", dir);
    CHECK(qc_report_write(file, &info, r, 7, err, sizeof err) == 2 && strstr(err, "not a directory"),
          "a file as DIR: '%s'", err);
    r[3].verdict = (qc_verdict)9;
    CHECK(qc_report_write(dir, &info, r, 7, err, sizeof err) == 2 && strstr(err, "verdict 9"),
          "bad verdict: '%s'", err);
    r[3].verdict = QC_MISTRUSTED;
    CHECK(qc_report_write(dir, &info, r, -1, err, sizeof err) == 2, "n = -1 accepted");
    CHECK(qc_report_write("", &info, r, 7, err, sizeof err) == 2, "empty DIR accepted");
    memset(r[5].detail, 'x', sizeof r[5].detail); /* unterminated: must not read past it */
    char dir2[1100];
    snprintf(dir2, sizeof dir2, "%s/unterminated", argv[1]);
    CHECK(qc_report_write(dir2, &info, r, 7, err, sizeof err) == 0, "unterminated detail: %s", err);
    if (failures)
        fprintf(stderr, "test_report: %d checks failed\n", failures);
    return failures ? 1 : 0;
}
