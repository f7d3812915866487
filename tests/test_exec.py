#!/usr/bin/env python3
"""The exec backend (harness/exec.c, docs/exec.md) with small outside processes written here.

  python3 tests/test_exec.py QCHECK

- a correct kernel (ml_dtypes casts, an independent implementation) PASSes, the instances it does
  not do are SKIPPED as declined, and the REPRO / --report lines are those of any backend;
- a kernel that writes ties-away e2m1 FAILs with the tie class;
- a crash, a hang past --timeout, a missing output, an output of the wrong size, an error file
  and a nonzero exit are ERROR for the items concerned, with the process's stderr tail;
- the expected outputs are never in the process's reach (zeros written everywhere never pass), two
  outcomes for one item are ERROR, a FIFO as an outcome is ERROR at once, a process the command
  leaves running is killed, a MoE case passes without stage tensors, a TMPDIR with a quote works,
  the folder a kill -9 left is removed by the next exec run.
Exit 77 when h5py, numpy or ml_dtypes is missing.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

try:
    import h5py  # noqa: F401
    import ml_dtypes  # noqa: F401
    import numpy  # noqa: F401
except ImportError as e:
    print("SKIP: %s" % e)
    sys.exit(77)

failures = []

KERNEL = r'''
import json, os, sys, h5py, numpy as np, ml_dtypes
MODE = sys.argv[1]
m = sys.argv[2]
d = os.path.dirname(m)
names = {"e4m3fn": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz",
         "e5m2fnuz": "float8_e5m2fnuz", "e2m1": "float4_e2m1fn", "e2m3": "float6_e2m3fn", "e3m2": "float6_e3m2fn"}
print("kernel stderr: mode", MODE, file=sys.stderr)
if MODE == "crash":
    os.kill(os.getpid(), 11)
if MODE == "hang":
    import time
    time.sleep(3600)
if MODE == "reference":  # the reference's own outputs, through qcheck export: a correct kernel of any op
    import subprocess
    for it in json.load(open(m))["items"]:
        params = ",".join("%s=%s" % kv for kv in it["params"].items())
        ref = os.path.join(d, "ref.h5")
        subprocess.run([os.environ["QC_TEST_QCHECK"], "export", "--case", it["case"], "--params", params, "--out",
                        ref], check=True, stdout=subprocess.DEVNULL)
        with h5py.File(ref, "r") as f, h5py.File(os.path.join(d, it["outputs"]), "w") as g:
            for name, v in f["outputs"].items():
                if not name.endswith((".bound", ".mask")):
                    g["outputs/" + name] = v[...]
    sys.exit(0)
if MODE == "background":  # a process left running: its pid for the test to look at
    import subprocess
    bg = subprocess.Popen(["sleep", "120"])
    open(os.environ["QC_TEST_BG"], "w").write(str(bg.pid))
for i, it in enumerate(json.load(open(m))["items"]):
    p = it["params"]
    out = os.path.join(d, it["outputs"])
    if MODE == "fifo" and i > 0:  # a FIFO named as the outcome: nobody ever writes it
        os.mkfifo(os.path.join(d, it["declined"]))
        continue
    if it["op"] != "cast" or p.get("profile") != "ml_dtypes" or p["to"] not in names:
        open(os.path.join(d, it["declined"]), "w").write("only ml_dtypes casts")
        continue
    if MODE == "error":
        open(os.path.join(d, it["error"]), "w").write("planted error for item %d" % i)
        continue
    if MODE == "nothing":
        continue
    with h5py.File(os.path.join(d, it["inputs"]), "r") as f:
        x = f["inputs/x"][...]
    y = x.astype(getattr(ml_dtypes, names[p["to"]])).view(np.uint8)
    if MODE == "ties_away" and p["to"] == "e2m1":
        a = np.abs(x.astype(np.float64))
        mids = {0.25: 1, 0.75: 2, 1.25: 3, 1.75: 4, 2.5: 5, 3.5: 6, 5.0: 7}
        for v, code in mids.items():
            y = np.where(a == v, (y & 8) | code, y).astype(np.uint8)
    if MODE == "short":
        y = y[:-1]
    if MODE == "forge":  # zeros as the output, and zeros as any expected output in reach
        y = np.zeros_like(y)
        for root, _, files in os.walk(d):
            for name in files:
                if name.endswith(".h5") and os.path.basename(root) not in ("in", "out"):
                    with h5py.File(os.path.join(root, name), "r+") as f:
                        for v in f.get("outputs", {}).values():
                            v[...] = 0
    if MODE == "both":
        open(os.path.join(d, it["declined"]), "w").write("declined as well")
    with h5py.File(out + ".tmp", "w") as f:
        f["outputs/y"] = y
    os.replace(out + ".tmp", out)
if MODE == "exit3":
    sys.exit(3)
'''


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def summary(out):
    m = re.search(r"^(\d+) passed, (\d+) failed, (\d+) skipped, (\d+) mistrusted$", out, re.M)
    return tuple(int(g) for g in m.groups()) if m else None


def run(qcheck, kernel, mode, case, extra=(), env=None, timeout=250):
    cmd = [qcheck, "run", "--case", case, "--backend", "exec:%s %s %s" % (sys.executable, kernel, mode)] + list(extra)
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           env=dict(os.environ, QC_TEST_QCHECK=qcheck, **(env or {})), timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "killed after %d s" % timeout
    return r.returncode, r.stdout, r.stderr


def alive(pid):
    try:
        stat = open("/proc/%d/stat" % pid).read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def main():
    qcheck = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        kernel = os.path.join(d, "kernel.py")
        with open(kernel, "w") as f:
            f.write(KERNEL)
        rep = os.path.join(d, "report")
        rc, out, err = run(qcheck, kernel, "ok", "cast_fp8", ["--report", rep, "-v"])
        s = summary(out)
        check(rc == 0 and s and s[0] == 96 and s[1] == 0 and s[2] == 192,
              "ml_dtypes casts through exec: 96 pass, the rest declined %s %s" % (s, err[-300:]))
        check(re.search(r"^192 of the skipped were declined", out, re.M) is not None, "the declined count is printed")
        lines = [l for l in out.splitlines() if l.startswith(("PASS", "SKIPPED"))]
        check(lines and all(("--backend 'exec:%s %s ok'" % (sys.executable, kernel)) in l for l in lines),
              "REPRO lines name the exec command")
        summ = json.load(open(os.path.join(rep, "summary.json")))
        check(len(open(os.path.join(rep, "junit.xml")).read()) > 0 and summ is not None, "--report writes the report files")

        rc, out, _ = run(qcheck, kernel, "ties_away", "cast_fp4_fp6")
        s = summary(out)
        check(rc == 1 and s and s[1] > 0 and "tie_flip" in out, "e2m1 ties away fails with tie_flip: %s" % (s,))

        rc, out, _ = run(qcheck, kernel, "crash", "cast_fp8", ["--params", "profile=ml_dtypes,to=e4m3fn"])
        s = summary(out)
        check(rc == 1 and s and s[0] == 0 and s[1] == 24 and "signal 11" in out and "kernel stderr: mode crash" in out,
              "a crash is ERROR for every item of its batch, with the signal and stderr: %s" % (s,))

        rc, out, _ = run(qcheck, kernel, "hang", "cast_fp8", ["--params", "profile=ml_dtypes,to=e4m3fn,n=7", "--timeout", "1"])
        s = summary(out)
        check(rc == 1 and s and s[1] == 6 and "killed after" in out, "a hang past --timeout is ERROR: %s" % (s,))

        rc, out, _ = run(qcheck, kernel, "nothing", "cast_fp8", ["--params", "profile=ml_dtypes,to=e4m3fn,n=7"])
        s = summary(out)
        check(rc == 1 and s and s[1] == 6 and "no output" in out and "kernel stderr: mode nothing" in out,
              "a missing output is ERROR with the stderr tail: %s" % (s,))

        rc, out, _ = run(qcheck, kernel, "error", "cast_fp8", ["--params", "profile=ml_dtypes,to=e4m3fn,n=7"])
        s = summary(out)
        check(rc == 1 and s and s[1] == 6 and "planted error for item" in out, "an error file is ERROR with its text")

        rc, out, _ = run(qcheck, kernel, "short", "cast_fp8", ["--params", "profile=ml_dtypes,to=e4m3fn,n=1000"])
        s = summary(out)
        check(rc == 1 and s and s[0] == 0 and s[1] == 6, "an output of the wrong size never passes: %s" % (s,))

        rc, out, _ = run(qcheck, kernel, "exit3", "cast_fp8", ["--params", "profile=ml_dtypes,to=e4m3fn,n=7"])
        s = summary(out)
        check(rc == 0 and s and s[0] == 6, "outputs written before a nonzero exit are still judged: %s" % (s,))

        one = ["--params", "profile=ml_dtypes,to=e4m3fn,n=7"]
        rc, out, _ = run(qcheck, kernel, "forge", "cast_fp8", one)
        s = summary(out)
        check(rc == 1 and s and s[0] == 0, "zeros pass nowhere, whatever the process edits in its folder: %s" % (s,))

        rc, out, _ = run(qcheck, kernel, "both", "cast_fp8", one)
        s = summary(out)
        check(rc == 1 and s and s[0] == 0 and s[1] == 6 and "more than one outcome" in out,
              "outputs and declined for one item are ERROR: %s" % (s,))

        rc, out, err = run(qcheck, kernel, "fifo", "cast_fp8", one + ["--timeout", "5"], timeout=40)
        s = summary(out)
        check(rc == 1 and s and s[0] == 1 and s[1] == 5 and "not a regular file" in out,
              "a FIFO as the declined file is ERROR, at once, and the batch's other results stand: %s %s"
              % (s, err[-200:]))

        pidfile = os.path.join(d, "bg.pid")
        rc, out, _ = run(qcheck, kernel, "background", "cast_fp8", one, env={"QC_TEST_BG": pidfile})
        pid = int(open(pidfile).read()) if os.path.exists(pidfile) else 0
        check(rc == 0 and pid and not alive(pid), "a process the command left running ends with it (pid %d, alive %s)"
              % (pid, pid and alive(pid)))
        if pid and alive(pid):
            os.kill(pid, 9)

        moe = "recipe=bf16,route=llama4,experts=4,top_k=1,weight_on_input=1,act=relu2,tokens=1,hidden=48,inter=58"
        rc, out, err = run(qcheck, kernel, "reference", "bf16_moe", ["--params", moe])
        s = summary(out)
        check(rc == 0 and s and s[0] == 1, "a MoE case passes through exec with the reference's outputs, no stage "
              "tensors: %s %s" % (s, (out + err)[-300:]))

        tmp = os.path.join(d, "it's $(here)")
        os.makedirs(tmp)
        rc, out, err = run(qcheck, kernel, "ok", "cast_fp8", one, env={"TMPDIR": tmp})
        s = summary(out)
        check(rc == 0 and s and s[0] == 6 and os.listdir(tmp) == [], "a TMPDIR with a quote: the batch folder is "
              "made and removed (%s, left %s, %s)" % (s, os.listdir(tmp), err[-200:]))

        check_killed_runs_leave_nothing(qcheck, kernel, d, one)
    return 1 if failures else 0


def check_killed_runs_leave_nothing(qcheck, kernel, d, one):
    """A batch folder whose owner was killed (kill -9 of qcheck takes its workers with it) stays
    until the next exec run, which removes it; a live process's folder is kept."""
    tmp = os.path.join(d, "killed")
    os.makedirs(tmp)
    env = dict(os.environ, TMPDIR=tmp, QC_TEST_QCHECK=qcheck)
    cmd = [qcheck, "run", "--case", "cast_fp8", "--backend", "exec:%s %s hang" % (sys.executable, kernel),
           "--timeout", "60"] + one
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.time() + 60
    while time.time() < deadline and not any(n.startswith("qcheck_exec.") for n in os.listdir(tmp)):
        time.sleep(0.1)
    time.sleep(0.5)  # the batch's inputs being written
    p.kill()
    p.wait()
    time.sleep(1.0)  # PR_SET_PDEATHSIG: the worker and the command's group go
    stale = [n for n in os.listdir(tmp) if n.startswith("qcheck_exec.")]
    check(len(stale) == 1, "kill -9 during an exec batch leaves its folder (%s)" % stale)
    live = os.path.join(tmp, "qcheck_exec.%d.abcdef" % os.getpid())  # this process's: alive
    os.makedirs(live)
    rc, out, err = run(qcheck, kernel, "ok", "cast_fp8", one, env={"TMPDIR": tmp})
    s = summary(out)
    left = sorted(os.listdir(tmp))
    check(rc == 0 and s and s[0] == 6 and left == [os.path.basename(live)],
          "the next exec run removes the killed run's folder and keeps a live process's (%s, left %s, %s)"
          % (s, left, err[-200:]))


if __name__ == "__main__":
    sys.exit(main())
