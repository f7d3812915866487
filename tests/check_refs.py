#!/usr/bin/env python3
"""Every document reference in the repository resolves inside the repository.

Scans the tracked text files (git ls-files) for two kinds of reference:

(a) a path through a folder named "spec": it must be the folder docs/spec of this repository
    followed by the name of a file there (nothing outside the repository may be cited);
(b) a section sign (or its \\u escape, as JSON strings write it) followed by a number
    N[.M...]: the nearest "NAME.md" token before it on the same line names the document; that
    must be a markdown file of the repository (looked up as NAME.md in docs/spec, in docs, then
    the path as written, from the repository root or from the citing file's folder) with a
    heading for that number ("## 2." for 2, "### 2.2" for 2.2).
    Sections of documents outside the repository are written "section 6.3", without the sign.

Exit status 0 when every reference resolves, 1 otherwise, each failure as
file:line: reference: why.

Usage: check_refs.py [REPO_ROOT] [FILE...]  (default: the repository holding this script, all
tracked files; FILE... restricts the scan, paths relative to REPO_ROOT).
Standard library only. The sign and the folder name are spelled indirectly below so that this
file itself contains no reference.
"""
import os
import re
import subprocess
import sys

SIGN = chr(0xA7)
SPEC_DIR = "spec" + "/"
DOCS_SPEC = "docs/" + SPEC_DIR

SPEC_RE = re.compile(r"(?<![A-Za-z0-9_-])" + re.escape(SPEC_DIR))
PATH_CHARS = re.compile(r"[A-Za-z0-9_./-]")
# the sign itself, or its \u escape as JSON and C sources may spell it
SECTION_RE = re.compile("(?:" + SIGN + r"|\\u00[aA]7)\s*(\d+(?:\.\d+)*)?")
MD_RE = re.compile(r"[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md(?![A-Za-z0-9_])")
ESCAPED = re.compile(r"\\u00[aA]7")
HEADING_RE = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)\.?(?=\s|$)")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
        return [p for p in out.decode("utf-8", "replace").split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".git", "build"))]
            files += [os.path.relpath(os.path.join(d, n), root) for n in names]
        return sorted(files)


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


_headings = {}


def headings(path):
    """Section numbers of the headings of a markdown file (outside fenced code blocks)."""
    if path not in _headings:
        nums, fenced = set(), False
        for line in (read_text(path) or "").splitlines():
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            m = None if fenced else HEADING_RE.match(line)
            if m:
                nums.add(m.group(1))
        _headings[path] = nums
    return _headings[path]


def resolve_md(root, citing, token):
    """The repository markdown file a NAME.md token names, or None."""
    here = os.path.dirname(citing)
    cands = []
    if "/" not in token:
        cands += [os.path.join("docs", "spec", token), os.path.join("docs", token)]
    cands += [token, os.path.join(here, token)]
    for c in cands:
        p = os.path.normpath(os.path.join(root, c))
        if not p.startswith(os.path.abspath(root) + os.sep):
            continue
        if os.path.isfile(p):
            return p
    return None


def path_token(line, start, end):
    while start > 0 and PATH_CHARS.match(line[start - 1]):
        start -= 1
    while end < len(line) and PATH_CHARS.match(line[end]):
        end += 1
    return line[start:end].rstrip(".")


def check_line(root, rel, line):
    errs = []
    for m in SPEC_RE.finditer(line):
        tok = path_token(line, m.start(), m.end())
        name = tok[len(DOCS_SPEC):] if tok.startswith(DOCS_SPEC) else None
        if name is None:
            errs.append((tok, "a spec path must read " + DOCS_SPEC + "NAME"))
        elif not name or "/" in name or not os.path.isfile(os.path.join(root, DOCS_SPEC, name)):
            errs.append((tok, "no such file in " + DOCS_SPEC))
    for m in SECTION_RE.finditer(line):
        ref = line[m.start():m.end()].strip()
        num = m.group(1)
        if not num:
            errs.append((ref, "no section number after the sign"))
            continue
        mds = [t for t in MD_RE.finditer(line) if t.end() <= m.start()]
        if not mds:
            errs.append((ref, "no NAME.md before it on the line (bare section, or a document "
                              "outside the repository: write 'section " + num + "')"))
            continue
        tok = mds[-1].group(0)
        path = resolve_md(root, rel, tok)
        if path is None:
            errs.append((tok + " " + ref, tok + " is not a markdown file of the repository"))
        elif num not in headings(path):
            errs.append((tok + " " + ref, "%s has no heading numbered %s"
                         % (os.path.relpath(path, root), num)))
    return errs


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(argv[1]) if len(argv) > 1 else os.path.dirname(here)
    files = argv[2:] or tracked_files(root)
    failures = 0
    for rel in files:
        text = read_text(os.path.join(root, rel))
        if text is None or (SIGN not in text and SPEC_DIR not in text and not ESCAPED.search(text)):
            continue
        for no, line in enumerate(text.splitlines(), 1):
            for ref, why in check_line(root, rel, line):
                print("%s:%d: %s: %s" % (rel, no, ref, why))
                failures += 1
    if failures:
        print("check_refs: %d reference(s) do not resolve inside the repository" % failures)
        return 1
    print("check_refs: every reference resolves (%d files scanned)" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
