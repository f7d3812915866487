#!/usr/bin/env python3
"""The HTML report in a real browser (issue 20, item 5): `qcheck run --report DIR` of a failing
mutant MoE run writes DIR/index.html, which must be self-contained (no external reference) and,
loaded offline in headless Chromium, finish without a console error and draw one plot per plot the
data holds (checked against summary.json, read here with Python's json): the mismatch heatmap,
the error / bound histogram, the stage bars and the error along K. A screenshot must show them
(many colours, not a blank page). SKIPPED (77) without Chromium; ci/deps.sh installs it.
usage: test_html.py --qcheck QCHECK --cases CASES [--screenshot PNG]"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def browser():
    for name in ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def chrome(exe, page, *extra):
    args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=20000",
            "--enable-logging=stderr", "--v=0",
            "--host-resolver-rules=MAP * ~NOTFOUND", *extra, "file://" + page]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def expected_plots(summary):
    """Plots the page must draw: per failing item (the first 100), one per kind of data it holds."""
    n = 0
    items = [r for r in summary["results"] if r["verdict"] in ("FAIL", "ERROR", "MISTRUSTED")][:100]
    for r in items:
        p = r.get("plots", {})
        n += ("map" in p) + ("ratio" in p) + bool(p.get("stages")) + ("along_k" in p)
    return n, items


def png_colours(path):
    """Distinct RGB triples of a PNG's pixels (8-bit RGB or RGBA, filters undone)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + size]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            bpp = {2: 3, 6: 4}[ctype]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + size
    raw, stride, prev, colours = zlib.decompress(idat), w * bpp, bytearray(w * bpp), set()
    for y in range(0, len(raw) // (stride + 1)):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 4 == 0:
            colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp * 4))
        prev = line
    return len(colours)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qcheck", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--screenshot", help="also keep the screenshot here (docs/)")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="qcheck_html.")
    try:
        rep = os.path.join(tmp, "report")
        env = dict(os.environ, QCHECK_CASES=a.cases)
        run = subprocess.run([a.qcheck, "run", "--case", "nvfp4_moe", "--backend", "mutant:moe-scale-block-off-by-one",
                              "--quiet", "--report", rep], capture_output=True, text=True, env=env, timeout=600)
        check(run.returncode == 0, "a mutant run that is caught exits 0 (%d): %s" % (run.returncode, run.stdout[-300:]))
        page = os.path.join(rep, "index.html")
        check(os.path.exists(page), "--report writes index.html beside summary.json")
        html = open(page, encoding="utf-8").read()
        markup = re.sub(r"(?s)(<script[^>]*>).*?</script>", r"\1</script>", html)  # the tags, not plotly's strings
        check(not re.search(r"""(src|href)\s*=""", markup) and "<link" not in markup,
              "index.html loads nothing from outside it (no src, href or link in its markup)")
        with open(os.path.join(rep, "summary.json")) as f:
            summary = json.load(f)
        want, items = expected_plots(summary)
        check(items and all("map" in r.get("plots", {}) and r["plots"].get("stages") for r in items),
              "every failing MoE item carries its mismatch map and stage table (%d items)" % len(items))
        check(any(r["plots"].get("first_stage", -1) >= 0 and "along_k" in r["plots"] for r in items),
              "the first diverging stage and its error along K are in the data")
        data = json.loads(re.search(r'<script id="qc-data" type="application/json">(.*?)</script>', html, re.S).group(1))
        check(len(data["rows"]) == summary["counts"]["total"], "the page's table has every item")
        exe = browser()
        if not exe:
            print("SKIPPED: no headless Chromium (apt install chromium-headless-shell); the page was not loaded")
            return 1 if failures else 77
        dom = chrome(exe, page, "--dump-dom")
        check(dom.returncode == 0, "Chromium loads the page (%d): %s" % (dom.returncode, dom.stderr[-500:]))
        errors = [l for l in dom.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
        check(not errors, "the console is clean: %s" % errors[:3])
        check('data-done="1"' in dom.stdout, "the page's script ran to its end")
        got = re.search(r'data-plots="(\d+)"', dom.stdout)
        check(got and int(got.group(1)) == want and want > 0,
              "the page draws every plot of its data (%s of %d)" % (got.group(1) if got else None, want))
        check(dom.stdout.count('class="main-svg"') >= want, "each plot is an SVG drawn by plotly.js")
        check(re.search(r'<pre id="qc-errors">\s*</pre>', dom.stdout), "no script error was caught on the page")
        shot = os.path.join(tmp, "shot.png")
        s = chrome(exe, page, "--window-size=1200,2600", "--screenshot=" + shot)
        check(s.returncode == 0 and os.path.exists(shot), "Chromium takes a screenshot")
        if os.path.exists(shot):
            n = png_colours(shot)
            check(n > 200, "the screenshot shows the plots (%d colours)" % n)
            if a.screenshot:
                shutil.copy(shot, a.screenshot)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("PASS: 0 failing checks" if not failures else "%d failing checks" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
