#!/usr/bin/env python3
"""The one-way dependencies of docs/DESIGN.md, checked on every #include of the tree.

  reference/  includes only reference/ (and system headers)
  core/       only core/
  golden/     only golden/ and core/ (never harness/)
  kernels/    only its own folder, include/qcheck/ and reference/ (never harness/ or core/)
  include/    only include/ and reference/
  examples/   only its own folder, include/ and reference/

One header is allowed everywhere: reference/qc_checked.h, the freestanding checked arithmetic and
strict parsing that every layer sizes its buffers with (header-only, the C library only; issue 19).

A quoted include must resolve in one of the allowed folders (the including file's own folder,
then the allowed roots); anything else fails with file:line. Exit 0 when the tree obeys, else 1.
"""
import os
import re
import subprocess
import sys

RULES = {
    "reference": ["reference"],
    "core": ["core"],
    "golden": ["golden", "core"],
    "kernels": ["include", "reference"],
    "include": ["include", "reference"],
    "examples": ["include", "reference"],
}
EVERYWHERE = {"reference/qc_checked.h"}  # included by its bare name ("qc_checked.h")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def inside(top, root, name):
    """name resolves to a file under top/root (a '..' may not climb out of it)."""
    path = os.path.normpath(os.path.join(top, root, name))
    return os.path.isfile(path) and os.path.relpath(path, top).split("/")[0] == root


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    files = subprocess.run(["git", "ls-files"], cwd=top, stdout=subprocess.PIPE, universal_newlines=True,
                           check=True).stdout.split()
    bad = 0
    checked = 0
    for f in files:
        root = f.split("/")[0]
        if root not in RULES or not f.endswith((".c", ".h", ".cu", ".cpp", ".cuh", ".hip")):
            continue
        here = os.path.dirname(os.path.join(top, f))
        for n, line in enumerate(open(os.path.join(top, f), errors="replace"), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            checked += 1
            name = m.group(1)
            own = os.path.normpath(os.path.join(here, name))
            if os.path.isfile(own) and os.path.relpath(own, top).split("/")[0] == root:
                continue
            if any(inside(top, r, name) for r in RULES[root]):
                continue
            if any(name == os.path.basename(e) and os.path.isfile(os.path.join(top, e)) for e in EVERYWHERE):
                continue
            print("%s:%d: #include \"%s\" does not resolve in %s (its own folder or %s): %s may not depend on it"
                  % (f, n, name, root, ", ".join(RULES[root]), root))
            bad += 1
    print("%d includes checked, %d break the layering" % (checked, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
