#!/usr/bin/env python3
"""Runs the qcheck-runner tests (python/tests/test_*.py) with the stdlib unittest.

    python3 python/tests/run_tests.py [--qcheck PATH] [-v]

--qcheck PATH  the qcheck binary for the end-to-end tests (a missing one is then a failure;
               without it, REPO/build/harness/qcheck is used when it exists, else they skip)
Exit 0 all passed (some may be skipped), 1 a test failed, 77 (CTest SKIPPED) when numpy or h5py
is missing. The package is found from this folder, so nothing needs to be installed."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def main(argv):
    verbosity = 1
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--qcheck" and args:
            os.environ["QCHECK_BIN"] = os.path.abspath(args.pop(0))
        elif a == "-v":
            verbosity = 2
        else:
            print("usage: run_tests.py [--qcheck PATH] [-v]", file=sys.stderr)
            return 2
    missing = []
    for mod in ("numpy", "h5py"):
        try:
            __import__(mod)
        except ImportError:
            missing.append(mod)
    if missing:
        print("SKIP: the Python runner needs %s (pip install %s)" % (" and ".join(missing), " ".join(missing)))
        return SKIP
    python_dir = os.path.dirname(HERE)
    sys.path.insert(0, python_dir)
    # the runner subprocesses find the package the same way
    os.environ["PYTHONPATH"] = python_dir + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py", top_level_dir=HERE)
    result = unittest.TextTestRunner(verbosity=verbosity, stream=sys.stdout).run(suite)
    for test, reason in result.skipped:
        print("skipped: %s: %s" % (test.id(), reason))
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
