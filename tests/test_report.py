#!/usr/bin/env python3
"""Parses the reports tests/test_report.c writes with Python's own json and xml.etree and checks
counts, grouping and that every special character survives (or is replaced as documented in
harness/report.h: invalid UTF-8 and XML-illegal characters become U+FFFD).
usage: test_report.py TEST_REPORT_EXE TMPDIR. Exit 0 pass, 1 fail. Strings match test_report.c."""
import json
import re
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

D_FAIL = ("mismatch at [3,7]: got 0x7f <NaN> & want 0x7e \"quoted\" 'single'\n"
          "line2: caf\u00e9 \u2014 \u6e2c\u8a66 \u2713\n\ttabbed\r\nend")
D_ERR_JSON = "crash: signal 11 \x01\x7f bytes \ufffd\ufffd end \ufffd"  # \x01 is legal JSON
D_ERR_XML = "crash: signal 11 \ufffd\x7f bytes \ufffd\ufffd end \ufffd"  # not legal XML 1.0
D_MIS = "all outputs zero (n=4096)"
D_SKIP = "no GPU: cudaGetDeviceCount returned 100"
D_FAIL2 = "contains ``` fences ```` and `ticks`\n<script>alert(1)</script>"
MOE = 'moe[a="x"&b<2]'

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def counts(e):
    return tuple(int(e.get(k)) for k in ("tests", "failures", "errors", "skipped"))


def check_junit(path):
    root = ET.parse(path).getroot()
    check(root.tag == "testsuites", f"root {root.tag}")
    check(counts(root) == (7, 2, 1, 2), f"testsuites counts {counts(root)}")
    suites = root.findall("testsuite")
    check([s.get("name") for s in suites] == ["cast_fp8", "nvfp4_moe"],
          f"suites {[s.get('name') for s in suites]}")
    check(counts(suites[0]) == (4, 1, 0, 1) and counts(suites[1]) == (3, 1, 1, 1),
          f"suite counts {[counts(s) for s in suites]}")
    check(abs(float(suites[0].get("time")) - 0.9375) < 1e-9, f"suite time {suites[0].get('time')}")
    cases = {(c.get("name"), c.get("classname")): c for c in root.iter("testcase")}
    check(len(cases) == 7, f"{len(cases)} distinct testcases")
    for c in cases.values():
        float(c.get("time"))
    f = cases[("cast.e4m3fn[profile=ptx,n=1024]", "cuda")].find("failure")
    check(f is not None and f.text.startswith(D_FAIL) and "REPRO: qcheck run" in f.text,
          f"failure text {f.text if f is not None else None!r}")
    check(f is not None and f.get("message") == D_FAIL.split("\n")[0],
          f"failure message {f.get('message') if f is not None else None!r}")
    e = cases[(MOE, "cpu-avx512")].find("error")
    check(e is not None and e.text.startswith(D_ERR_XML), f"error text {e.text if e is not None else None!r}")
    m = cases[("cast.e5m2[n=0]", "mutants")].find("skipped")
    check(m is not None and m.get("message") == "MISTRUSTED: " + D_MIS, "mistrusted message")
    s = cases[(MOE, "cuda")].find("skipped")
    check(s is not None and s.get("message") == D_SKIP, "skipped message")
    p = cases[("cast.e4m3fn[profile=ptx,n=1024]", "ref")]
    check(not [x for x in p if x.tag in ("failure", "error", "skipped")], "PASS with an outcome")
    check(p.find("system-out") is None, "a PASS has no system-out (an all-pass junit.xml stays small)")
    out = cases[(MOE, "cpu-avx512")].find("system-out")
    check(out is not None and "REPRO:" in out.text, "a non-PASS keeps its figures, seed and REPRO in system-out")


def check_json(path):
    with open(path, encoding="utf-8") as fh:
        j = json.load(fh)
    check(j["counts"] == {"total": 7, "PASS": 2, "FAIL": 2, "MISTRUSTED": 1, "SKIPPED": 1, "ERROR": 1},
          f"counts {j['counts']}")
    check(j["suite"] == "quick" and j["seconds"] == 3.9375 and j["report_format"] == 1, "run info")
    r = j["results"]
    check(len(r) == 7, f"{len(r)} results")
    check(r[1]["detail"] == D_FAIL, f"detail 1 {r[1]['detail']!r}")
    check(r[2]["detail"] == D_ERR_JSON, f"detail 2 {r[2]['detail']!r}")
    check(r[2]["case_id"] == MOE and r[5]["detail"] == D_FAIL2, "case_id / detail 5")
    check(all(x["seed"] == 18446744073709551557 for x in r), f"seed {r[0]['seed']}")
    check([x["verdict"] for x in r] == ["PASS", "FAIL", "ERROR", "MISTRUSTED", "SKIPPED", "FAIL", "PASS"],
          "verdicts")


def check_md(path):
    with open(path, encoding="utf-8") as fh:
        md = fh.read()
    for v, n in (("PASS", 2), ("FAIL", 2), ("MISTRUSTED", 1), ("SKIPPED", 1), ("ERROR", 1), ("total", 7)):
        check(f"| {v} | {n} |" in md, f"md table row {v}")
    check("```\nREPRO: qcheck run --case cast_fp8 --backend cuda" in md, "md REPRO block")
    # the longest backtick run inside is 4, so the fence must be 5 backticks
    check("`````\n" + D_FAIL2 + "\n`````" in md, "md fence around backticks")
    check("## Failures and errors" in md and md.index("moe[e=8]") < md.index("## Mistrusted"),
          "md sections")


def check_html(path):
    """The page's data is the run's, and no text a result carries becomes markup."""
    html = open(path, encoding="utf-8").read()
    m = re.search(r'<script id="qc-data" type="application/json">(.*?)</script>', html, re.S)
    check(m is not None, "index.html holds its data in one script element")
    if not m:
        return
    data = json.loads(m.group(1))
    check(len(data["rows"]) == 7 and [r[0] for r in data["rows"]] ==
          ["PASS", "FAIL", "ERROR", "MISTRUSTED", "SKIPPED", "FAIL", "PASS"], "html rows in order")
    details = [it["detail"] for it in data["items"]]
    check(D_FAIL in details and D_FAIL2 in details, "html items keep the details, special characters and all")
    check("<script>alert(1)" not in html and "\\u003cscript>alert(1)" in m.group(1),
          "a detail's <script> is data (\\u003c), never markup")


def main():
    exe, tmp = sys.argv[1], sys.argv[2]
    shutil.rmtree(tmp, ignore_errors=True)
    r = subprocess.run([exe, tmp])
    check(r.returncode == 0, f"test_report exited {r.returncode}")
    d = os.path.join(tmp, "nested", "report")
    check(sorted(os.listdir(d)) == ["index.html", "junit.xml", "summary.json", "summary.md"], f"files {os.listdir(d)}")
    check_html(os.path.join(d, "index.html"))
    check_junit(os.path.join(d, "junit.xml"))
    check_json(os.path.join(d, "summary.json"))
    check_md(os.path.join(d, "summary.md"))
    for name in ("junit.xml", "summary.json"):  # the unterminated-detail report parses too
        p = os.path.join(tmp, "unterminated", name)
        (ET.parse if name.endswith("xml") else lambda q: json.load(open(q, encoding="utf-8")))(p)
    print(f"test_report: {'FAILED' if failures else 'passed'} ({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
