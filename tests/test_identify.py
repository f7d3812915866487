#!/usr/bin/env python3
"""qcheck identify: which profile of a quant recipe a kernel's outputs match.

- a golden's own outputs match the golden's profile (exit 0, the profile named);
- the same outputs with one code changed match no profile, and the nearest is one of those that
  matched, one element off (exit 1);
- the outputs `qcheck quant --profile P` writes from the golden's inputs (another command, the
  same inputs) match P, by --golden and by --case/--params;
- --params that select several instances, and a missing --outputs, are usage errors (exit 2)
  that say what is wrong.

usage: test_identify.py --qcheck PATH
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"SKIPPED: {e}")
    sys.exit(77)

FAILS = []
CASE = "quant_token_group"
PARAMS = "recipe=token_group,profile=triton-row,group=128,ue8m0=0,scale_layout=row,rows=4,cols=512"


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(qcheck, *args):
    r = subprocess.run([qcheck] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def matched(out):
    m = re.search(r"^the outputs match, bit for bit, profile (.*)$", out, re.M)
    return m.group(1).split() if m else []


def write_outputs(path, q, scale):
    with h5py.File(path, "w") as f:
        f["outputs/q"] = q
        f["outputs/scale"] = scale


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qcheck", required=True)
    qcheck = ap.parse_args().qcheck
    with tempfile.TemporaryDirectory() as d:
        golden = os.path.join(d, "g.h5")
        rc, out, err = run(qcheck, "export", "--case", CASE, "--params", PARAMS, "--out", golden)
        if rc != 0:
            print("FAIL export: %s" % err)
            return 1
        with h5py.File(golden, "r") as f:
            x = f["inputs/x"][...]
            q = f["outputs/q"][...]
            scale = f["outputs/scale"][...]

        rc, out, err = run(qcheck, "identify", "--golden", golden, "--outputs", golden)
        same = matched(out)
        check(rc == 0 and "triton-row" in same, "the golden's outputs match its profile (%d, %s)" % (rc, same))

        bad = q.copy()
        bad[7] ^= 0x01  # one code, one step away
        mine = os.path.join(d, "bad.h5")
        write_outputs(mine, bad, scale)
        rc, out, err = run(qcheck, "identify", "--golden", golden, "--outputs", mine)
        m = re.search(r"^no profile matches; the nearest is (\S+):", out, re.M)
        line = m and re.search(r"^\s+%s\s+FAIL\s+.*mismatches=(\d+)" % re.escape(m.group(1)), out, re.M)
        check(rc == 1 and m and m.group(1) in same and line and line.group(1) == "1",
              "one changed code: no match, the nearest one element off (%d, %s)" % (rc, m and m.group(0)))

        raw = os.path.join(d, "x.f32")
        x.astype("<f4").tofile(raw)
        prefix = os.path.join(d, "sgl")
        rc, out, err = run(qcheck, "quant", "--recipe", "token_group", "--profile", "sgl-kernel", "--shape",
                           "%dx%d" % x.shape, "--param", "group=128", raw, prefix)
        check(rc == 0, "qcheck quant --profile sgl-kernel on the golden's inputs (%d, %s)" % (rc, err.strip()))
        sq = np.fromfile(prefix + ".q", dtype=np.uint8)
        ss = np.fromfile(prefix + ".scale", dtype=np.uint8)
        check(sq.size == q.size and ss.size == scale.size and (sq != q).any(),
              "sgl-kernel's codes differ from triton-row's on these inputs (else the next check proves nothing)")
        write_outputs(mine, sq, ss)
        rc, out, err = run(qcheck, "identify", "--golden", golden, "--outputs", mine)
        got = matched(out)
        check(rc == 0 and "sgl-kernel" in got and "triton-row" not in got,
              "qcheck quant's sgl-kernel outputs are identified as sgl-kernel (%d, %s)" % (rc, got))
        rc, out, err = run(qcheck, "identify", "--case", CASE, "--params", PARAMS, "--outputs", mine)
        check(rc == 0 and "sgl-kernel" in matched(out), "the same by --case and --params (%d, %s)" % (rc, err.strip()))

        rc, out, err = run(qcheck, "identify", "--case", CASE, "--params", "recipe=token_group", "--outputs", mine)
        check(rc == 2 and "selects" in err and CASE in err and "give more params" in err,
              "--params that select several instances: exit 2, told to give more (%d, %s)" % (rc, err.strip()))
        rc, out, err = run(qcheck, "identify", "--golden", golden)
        check(rc == 2 and "--outputs" in err, "no --outputs: exit 2 naming it (%d, %s)" % (rc, err.strip()))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
