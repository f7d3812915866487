#!/usr/bin/env python3
"""`qcheck golden verify --backend` can fail (tests/conformance.sh runs it on golden/real/): copies of
recorded files with one output byte flipped through h5py (which rewrites the chunk and its
fletcher32, so the file stays readable and only the value changes) must FAIL for cpu-avx512, exit 1,
naming the file, the backend, the output and the coordinate with the hex of both values; the
untouched copies PASS. A file the backend declines is SKIPPED, never PASS, and a backend that
skipped every file is NOT CHECKED; an unknown backend and a truncated file are exit 2 naming them.
A file whose output says nan_payload = "any" passes with its NaNs of other payloads counted, fails
without the attribute, and still fails for a NaN turned into a number or a number one ulp off.

Exit 77 (SKIPPED) without h5py/numpy, or after the reference's checks when cpu-avx512 cannot run
here (qcheck list backends names why).

usage: test_golden_backend.py --qcheck PATH --cases DIR --real golden/real
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

FAILS = []
SKIP = 77


def check(cond, what, out=""):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)
        print(out[-2000:])


def run(qcheck, cases, args):
    env = dict(os.environ, QCHECK_CASES=cases)
    p = subprocess.run([qcheck] + args, capture_output=True, text=True, env=env, timeout=300)
    return p.returncode, p.stdout, p.stderr


def flip(h5py, path, name, index, mask):
    """XORs element `index` of /outputs/NAME with mask; returns (before, after)."""
    with h5py.File(path, "r+") as f:
        d = f["outputs/" + name]
        before = int(d[index])
        d[index] = before ^ mask
        return before, before ^ mask


def avx512_unavailable(qcheck, cases):
    rc, out, _ = run(qcheck, cases, ["list", "backends"])
    line = next((l for l in out.splitlines() if l.startswith("cpu-avx512 ")), "")
    if not line:
        return "cpu-avx512 is not in this build (qcheck list backends)"
    m = re.search(r"\[unavailable: (.*)\]", line)
    return m.group(1) if m else None


def flipped_fails(qcheck, cases, backend, path, pattern, what):
    args = ["golden", "verify"] + (["--backend", backend] if backend else []) + [path]
    rc, out, err = run(qcheck, cases, args)
    head = r"^FAIL +%s %s +n=\d+ mismatches=1$" % (re.escape(path), re.escape(backend)) if backend else \
        r"^FAIL +%s +n=\d+ mismatches=1$" % re.escape(path)
    check(rc == 1 and re.search(head, out, re.M) and re.search(pattern, out, re.M),
          "%s: one flipped byte is exit 1 naming the file%s, output and coordinate (%s)" %
          (what, " and " + backend if backend else "", pattern), out + err)
    if backend:
        check(out.rstrip().splitlines()[-1] == "0 passed, 1 failed, 0 skipped",
              "%s: the summary counts the FAIL" % what, out)


def nan_payload_checks(h5py, q, cases, real, tmp):
    """nan_payload = "any" (golden/README.md) lets a NaN match a NaN of another payload, and nothing
    else: without it the same file fails; a NaN against a number, a changed number and an unknown
    value of the attribute still fail."""
    import numpy as np
    src = os.path.join(real, "microxcaling-7bc4195", "quantize_mx-e4m3fn-cpu.h5")

    def copy(name, change):
        path = os.path.join(tmp, name)
        shutil.copy(src, path)
        with h5py.File(path, "r+") as f:
            change(f["outputs/y"])
        return path

    def verify(path):
        return run(q, cases, ["golden", "verify", path])

    rc, out, err = verify(src)
    check(rc == 0 and re.search(r"^PASS .* nan-any-payload=\d+$", out, re.M),
          "nan_payload any: the recorded file passes and its line counts the NaNs matched", out + err)

    def drop(d):
        del d.attrs["nan_payload"]
    rc, out, err = verify(copy("no-attr.h5", drop))
    check(rc == 1 and "nan_policy=" in out, "without nan_payload the NaN payloads are mismatches", out + err)

    def nan_to_number(d):  # (0, 32): a block holding +Inf, every y NaN
        y = d[...]
        assert np.isnan(y[0, 32])
        y[0, 32] = 0.0
        d[...] = y
    rc, out, err = verify(copy("nan-number.h5", nan_to_number))
    check(rc == 1 and re.search(r"^  y \(0, 32\): expected 0x00000000", out, re.M),
          "nan_payload any: a number where the library wrote NaN still fails", out + err)

    def bump(d):
        y = d[...]
        y.view(np.uint32)[0, 0] ^= 1
        d[...] = y
    rc, out, err = verify(copy("number.h5", bump))
    check(rc == 1 and "mismatches=1" in out, "nan_payload any: a finite value one ulp off still fails", out + err)

    def bogus(d):
        d.attrs["nan_payload"] = np.bytes_("some")
    path = copy("bogus.h5", bogus)
    rc, out, err = verify(path)
    check(rc == 2 and "nan_payload" in err and path in err, "an unknown nan_payload is exit 2 naming it", out + err)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qcheck", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--real", required=True)
    a = ap.parse_args()
    try:
        import h5py  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print("SKIPPED: %s (h5py and numpy write the flipped copies)" % e)
        return SKIP
    q, cases = a.qcheck, a.cases
    tmp = tempfile.mkdtemp(prefix="qc-golden-backend-")
    try:
        cast = os.path.join(tmp, "cast-e4m3fn-cpu.h5")
        mx = os.path.join(tmp, "to_mx-fp4-even-cpu.h5")
        cuda = os.path.join(tmp, "to_mx-fp4-even-cuda.h5")
        shutil.copy(os.path.join(a.real, "torch-2.11.0", "cast-e4m3fn-cpu.h5"), cast)
        shutil.copy(os.path.join(a.real, "torchao-0.18.0", "to_mx-fp4-even-cpu.h5"), mx)
        shutil.copy(os.path.join(a.real, "torchao-0.18.0", "to_mx-fp4-even-cuda.h5"), cuda)
        good_cast, good_mx = cast + ".good.h5", mx + ".good.h5"
        shutil.copy(cast, good_cast)
        shutil.copy(mx, good_mx)
        # y[777]: low bit of one e4m3fn code; q byte 1234: the high nibble, FP4 element 2469 of a
        # [24, 256] tensor (two per byte, even element low): row 9, col 165
        y0, y1 = flip(h5py, cast, "y", 777, 0x01)
        b0, b1 = flip(h5py, mx, "q", 1234, 0x10)
        e0, e1 = b0 >> 4, b1 >> 4
        cast_at = r"^  y \(777\): expected 0x%02X .*got 0x%02X " % (y1, y0)
        mx_at = r"^  q \(row 9, col 165\).*expected 0x%X .*got 0x%X " % (e1, e0)

        # the reference (no --backend, as before) and ref through the registry fail on them too
        flipped_fails(q, cases, None, cast, cast_at, "reference, cast")
        flipped_fails(q, cases, "ref", mx, mx_at, "ref, mx")

        rc, out, err = run(q, cases, ["golden", "verify", "--backend", "no-such-backend", good_cast])
        check(rc == 2 and "no-such-backend" in err, "an unknown backend is exit 2 naming it", out + err)
        trunc = os.path.join(tmp, "truncated.h5")
        with open(good_cast, "rb") as f, open(trunc, "wb") as g:
            g.write(f.read(3000))
        rc, out, err = run(q, cases, ["golden", "verify", "--backend", "ref", trunc, good_cast])
        check(rc == 2 and trunc in err and re.search(r"^PASS .*%s ref " % re.escape(good_cast), out, re.M)
              and out.rstrip().endswith("1 passed, 0 failed, 0 skipped, 1 unreadable"),
              "a truncated file is exit 2 naming it; the others are still verified", out + err)

        nan_payload_checks(h5py, q, cases, a.real, tmp)

        why = avx512_unavailable(q, cases)
        if why:
            print("SKIPPED: cpu-avx512 cannot run here: %s" % why)
            return 1 if FAILS else SKIP
        flipped_fails(q, cases, "cpu-avx512", cast, cast_at, "cpu-avx512, cast")
        flipped_fails(q, cases, "cpu-avx512", mx, mx_at, "cpu-avx512, mx")
        rc, out, err = run(q, cases, ["golden", "verify", "--backend", "cpu-avx512", good_cast, good_mx])
        check(rc == 0 and out.count("PASS") == 2 and out.rstrip().endswith("2 passed, 0 failed, 0 skipped"),
              "cpu-avx512: the untouched copies PASS", out + err)
        # a -cuda profile (the GPU's NaN bits) cpu-avx512 declines: SKIPPED with why, and the backend
        # line says it checked nothing
        rc, out, err = run(q, cases, ["golden", "verify", "--backend", "cpu-avx512", cuda])
        check(rc == 0 and "PASS" not in out and
              re.search(r"^SKIPPED %s cpu-avx512: declined: .+" % re.escape(cuda), out, re.M) and
              re.search(r"^cpu-avx512: 0 passed, 0 failed, 1 skipped of 1 files: NOT CHECKED", out, re.M),
              "a declined file is SKIPPED with the reason, and a backend that skipped all is NOT CHECKED", out + err)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d checks failed" % len(FAILS) if FAILS else "all checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
