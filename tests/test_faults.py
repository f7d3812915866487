#!/usr/bin/env python3
"""Faults (issue 19): what a killed run, a full disk and a read-only folder leave behind.

  --part kill   kill -9 (the whole process group) at seeded random moments of `golden generate`,
                `run --report` and `run --keep-failing`: no file under a final name is partial
                (every golden verifies, every report parses), and the next complete run removes
                the temporaries the killed ones left (core/tempfile.h); kill -9 of qcheck alone
                (not its group) while an item hangs: its worker dies with it (runner.h qc_fork).
  --part disk   a tmpfs too small for the output: exit 2 (never a crash: golden generate once ended
                in SIGSEGV after its ENOSPC message), no temporary left, nothing partial under a
                final name (goldens, reports, raw outputs); the same tmpfs read-only: exit 2 naming the folder. Needs mount(8)
                (root); SKIPPED with exit 77 where mounting is not permitted.

usage: test_faults.py --qcheck PATH --cases DIR --part kill|disk [--seed N]
"""
import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

FAILS = []
CRASH = {-signal.SIGSEGV, -signal.SIGBUS, -signal.SIGFPE, -signal.SIGABRT, -signal.SIGILL, 139, 134, 136, 135}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def env_for(cases):
    env = dict(os.environ)
    env["QCHECK_CASES"] = cases
    env["SOURCE_DATE_EPOCH"] = "0"
    return env


def run(args, cases, timeout=300):
    p = subprocess.run([QCHECK] + args, capture_output=True, text=True, env=env_for(cases), timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def killed_run(args, cases, delay):
    """Starts args in a session of its own and kill -9s the whole group (workers included) after
    delay seconds; returns when every process of it is gone."""
    p = subprocess.Popen([QCHECK] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=env_for(cases), start_new_session=True)
    time.sleep(delay)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()
    deadline = time.time() + 10
    while time.time() < deadline and group_alive(p.pid):  # forked workers are reparented: wait for them too
        time.sleep(0.01)


def group_alive(pgid, field=2):
    """1 while a process of group pgid runs (a zombie does not: a container's init may never reap);
    field=3: of session pgid instead"""
    return bool(members(pgid, field))


def members(pgid, field=2):
    """the pids of the running processes of group (field 2) or session (field 3) pgid"""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open("/proc/%s/stat" % pid).read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[field]) == pgid and fields[0] != "Z":
            found.append(int(pid))
    return found


def has_child(pid):
    return any(open("/proc/%s/stat" % q).read().split(") ")[1].split()[1] == str(pid)
               for q in filter(str.isdigit, os.listdir("/proc")) if os.path.exists("/proc/%s/stat" % q))


def orphans_left(args, cases, ready=None):
    """Starts args (an item that hangs) in a session of its own, kill -9s qcheck alone once its
    worker runs (and ready() holds, when given), as a CI timeout that signals one pid does; True
    when a process of the session still runs 5 s later (a worker, or a process an exec backend's
    command started, outliving qcheck)."""
    env = dict(env_for(cases), QCHECK_SELFTEST="1")
    p = subprocess.Popen([QCHECK] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                         start_new_session=True)
    deadline = time.time() + 10
    while time.time() < deadline and not (has_child(p.pid) and (ready is None or ready())):
        time.sleep(0.05)  # until a child of qcheck (the worker) exists
    p.kill()
    p.wait()
    deadline = time.time() + 5
    while time.time() < deadline and group_alive(p.pid, field=3):
        time.sleep(0.05)
    left = members(p.pid, field=3)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return bool(left)


def files(root, pattern):
    out = []
    for d, _, names in os.walk(root):
        out += [os.path.join(d, n) for n in names if re.search(pattern, n)]
    return sorted(out)


TEMP = r"\.tmp\.\d+\.\d+$"


def verify(paths, cases):
    """golden verify over paths, in batches; (all passed, how many)"""
    ok = True
    for i in range(0, len(paths), 200):
        rc, out, err = run(["golden", "verify"] + paths[i:i + 200], cases)
        ok &= rc == 0
        if rc:
            print((out + err)[-600:])
    return ok, len(paths)


def changed_since(paths, t0):
    return [p for p in paths if os.path.getmtime(p) >= t0 - 1]


def reports_parse(d):
    try:
        if os.path.exists(os.path.join(d, "summary.json")):
            json.load(open(os.path.join(d, "summary.json")))
        if os.path.exists(os.path.join(d, "junit.xml")):
            ET.parse(os.path.join(d, "junit.xml"))
        md = os.path.join(d, "summary.md")
        return not os.path.exists(md) or os.path.getsize(md) > 0
    except (ValueError, ET.ParseError):
        return False


def duration(args, cases):
    t0 = time.time()
    run(args, cases)
    return time.time() - t0


def planted_writers(gen, out, cases):
    """A temporary whose writer is a zombie is stale, one whose writer lives is not: a container
    whose init never reaps keeps each killed worker a zombie, and kill(pid, 0) succeeds on it."""
    zombie = os.fork()
    if zombie == 0:
        os._exit(0)
    while open("/proc/%d/stat" % zombie).read().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.01)
    golden = files(out, r"\.h5$")[0]
    of_zombie, of_live = "%s.tmp.%d.0" % (golden, zombie), "%s.tmp.%d.0" % (golden, os.getpid())
    for name in (of_zombie, of_live):
        open(name, "w").close()
    rc, _, _ = run(gen + ["--out", out], cases)
    os.waitpid(zombie, 0)
    check(rc == 0 and not os.path.exists(of_zombie) and os.path.exists(of_live),
          "golden generate removes the temporary of a zombie writer and keeps a live writer's (rc %s, zombie's %s, "
          "live one's %s)" % (rc, "left" if os.path.exists(of_zombie) else "removed",
                              "kept" if os.path.exists(of_live) else "removed"))
    os.remove(of_live) if os.path.exists(of_live) else None


def part_kill(tmp, cases, rng):
    gen = ["golden", "generate", "--case", "cast_fp8,decode_fp6", "--jobs", "2"]
    out = os.path.join(tmp, "gen")
    t = duration(gen + ["--out", os.path.join(tmp, "probe")], cases)
    all_ok, checked, left = True, 0, 0
    for trial in range(6):
        t0 = time.time()
        killed_run(gen + ["--out", out], cases, rng.uniform(0.01, t))
        ok, n = verify(changed_since(files(out, r"\.h5$"), t0), cases)
        all_ok &= ok
        checked += n
        left = len(files(out, TEMP))
    check(all_ok, "kill -9 of golden generate (6 trials, up to %.1f s): the %d goldens written under final names "
          "all verify" % (t, checked))
    print("     %d temporaries left by the killed runs" % left)
    rc, _, err = run(gen + ["--out", out], cases)
    check(rc == 0 and not files(out, TEMP), "the next golden generate removes every temporary the killed ones left "
          "(%d left, rc %s)" % (len(files(out, TEMP)), rc))
    planted_writers(gen, out, cases)

    hang = ["--backend", "selftest:hang", "--timeout", "100"]
    inst = "to=e4m3fn,profile=ml_dtypes,dist=normal,scale=1,n=7"
    check(not orphans_left(["run", "--case", "cast_fp8", "--params", inst] + hang, cases),
          "kill -9 of qcheck run alone: its worker (an item that hangs) dies with it")
    gold = os.path.join(tmp, "hang.h5")
    run(["export", "--case", "cast_fp8", "--params", inst, "--out", gold], cases)
    check(not orphans_left(["golden", "verify", "--backend", "selftest:hang", gold], cases),
          "kill -9 of qcheck golden verify --backend alone: its child (an item that hangs) dies with it")

    started = os.path.join(tmp, "exec-started")
    script = os.path.join(tmp, "exec-hang.sh")
    with open(script, "w") as f:  # a runner that starts a process of its own and waits for it
        f.write("#!/bin/sh\nsleep 100 &\necho $! > %s\nwait\n" % started)
    os.chmod(script, 0o755)
    check(not orphans_left(["run", "--case", "cast_fp8", "--params", inst, "--backend", "exec:" + script,
                            "--timeout", "100"], cases, ready=lambda: os.path.exists(started)),
          "kill -9 of qcheck run alone: an exec backend's command and the process it started die with it")

    rep = os.path.join(tmp, "rep")
    runr = ["run", "--case", "cast_fp8,quant_mx", "--backend", "ref", "--quiet", "--report", rep]
    t = duration(runr, cases)
    all_ok = True
    for trial in range(6):
        killed_run(runr, cases, rng.uniform(0.01, t * 1.1))
        all_ok &= reports_parse(rep)
    check(all_ok, "kill -9 of run --report (6 trials, up to %.1f s): summary.json and junit.xml always parse, "
          "summary.md is never empty" % t)
    rc, _, _ = run(runr, cases)
    check(rc == 0 and reports_parse(rep) and not files(rep, TEMP), "the next --report leaves no temporary (rc %s)" % rc)

    kf = os.path.join(tmp, "kf")
    runk = ["run", "--case", "cast_fp8", "--backend", "mutant:e4m3-overflow-at-448", "--quiet", "--jobs", "2",
            "--keep-failing", kf]
    t = duration(runk, cases)
    all_ok, checked = True, 0
    for trial in range(6):
        t0 = time.time()
        killed_run(runk, cases, rng.uniform(0.01, t))
        ok, n = verify(changed_since(files(kf, r"\.h5$"), t0), cases)
        all_ok &= ok
        checked += n
    check(all_ok, "kill -9 of run --keep-failing (6 trials): the %d saved goldens all verify" % checked)
    rc, _, _ = run(runk, cases)
    check(rc == 0 and not files(kf, TEMP), "the next --keep-failing leaves no temporary (rc %s, 0: the mutant is caught)"
          % rc)


def mount_tmpfs(where, size):
    os.makedirs(where, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", where],
                          capture_output=True).returncode == 0


def umount(where):
    subprocess.run(["umount", "-l", where], capture_output=True)


def part_disk(tmp, cases):
    full = os.path.join(tmp, "full")
    if not mount_tmpfs(full, "256k"):
        print("SKIPPED: cannot mount a tmpfs here (not root, or mount not permitted)")
        return 77
    try:
        for jobs in ("1", "2"):
            out = os.path.join(full, "g" + jobs)
            rc, _, err = run(["golden", "generate", "--case", "cast_fp8", "--jobs", jobs, "--out", out], cases)
            check(rc == 2 and rc not in CRASH and "No space left" in err,
                  "full tmpfs: golden generate --jobs %s is exit 2 naming ENOSPC, no crash (rc %s: %s)"
                  % (jobs, rc, err.strip()[-160:]))
            check(not files(out, TEMP), "full tmpfs: golden generate --jobs %s leaves no temporary" % jobs)
            ok, n = verify(files(out, r"\.h5$"), cases)
            check(ok, "full tmpfs: the %d goldens under final names all verify" % n)
            subprocess.run(["rm", "-rf", out])
        fill = os.path.join(full, "filler")
        with open(fill, "wb") as f:  # leave a few KB: the report of 288 results does not fit
            try:
                f.write(b"\0" * (250 << 10))
            except OSError:
                pass
        rep = os.path.join(full, "rep")
        rc, out, err = run(["run", "--case", "cast_fp8", "--backend", "ref", "--quiet", "--report", rep], cases)
        check(rc == 2 and "No space left" in err, "full tmpfs: run --report is exit 2 naming ENOSPC (rc %s: %s)"
              % (rc, err.strip()[-160:]))
        check(not files(full, TEMP) and reports_parse(rep), "full tmpfs: no report temporary, nothing partial")
        kf = os.path.join(full, "kf")
        rc, out, err = run(["run", "--case", "cast_fp8", "--backend", "mutant:e4m3-overflow-at-448", "--quiet",
                            "--keep-failing", kf], cases)
        check(rc == 1 and "could not save" in out, "full tmpfs: --keep-failing reports each golden it could not "
              "save and the run goes on (rc %s)" % rc)
        check(not files(full, TEMP), "full tmpfs: --keep-failing leaves no temporary")
        src = os.path.join(tmp, "x.f32")  # 64 KiB of fp32 in, 16 KiB of codes out: more than the few KB left
        with open(src, "wb") as f:
            f.write(b"\0" * (64 << 10))
        raw = os.path.join(full, "raw.e4m3")
        rc, _, err = run(["cast", "--from", "f32", "--to", "e4m3fn", src, raw], cases)
        left = [n for n in os.listdir(full) if n.startswith("raw.e4m3")]
        check(rc == 2 and "No space left" in err and not left,
              "full tmpfs: cast is exit 2 naming ENOSPC and leaves neither a partial output nor a temporary "
              "(rc %s, left %s: %s)" % (rc, left, err.strip()[-120:]))
    finally:
        umount(full)
    ro = os.path.join(tmp, "ro")
    if not mount_tmpfs(ro, "1m"):
        return 77
    try:
        subprocess.run(["mount", "-o", "remount,ro", ro], check=True)
        for what, args in [("golden generate", ["golden", "generate", "--case", "cast_fp8", "--out", ro + "/g"]),
                           ("run --report", ["run", "--case", "cast_fp8", "--backend", "ref", "--quiet", "--report",
                                             ro + "/r"]),
                           ("run --keep-failing", ["run", "--case", "cast_fp8", "--backend", "ref", "--keep-failing",
                                                   ro + "/k"]),
                           ("export", ["export", "--case", "cast_fp8", "--params", "to=e4m3fn,profile=ptx,"
                                       "dist=normal,scale=300,n=7", "--out", ro + "/x.h5"])]:
            rc, _, err = run(args, cases)
            check(rc == 2 and ro in err, "read-only folder: %s is exit 2 naming it (rc %s: %s)"
                  % (what, rc, err.strip()[-160:]))
    finally:
        umount(ro)
    return 0


def main():
    global QCHECK
    ap = argparse.ArgumentParser()
    ap.add_argument("--qcheck", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--part", choices=["kill", "disk"], required=True)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("QC_FAULT_SEED", "19")))
    a = ap.parse_args()
    QCHECK = a.qcheck
    print("seed %d (--seed or QC_FAULT_SEED replays the same kill moments)" % a.seed)
    # /dev/shm where there is one: a golden is fsync'ed before its rename, and on a disk the kill
    # trials would spend their time in fsync
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(dir=shm) as tmp:
        rc = part_kill(tmp, a.cases, random.Random(a.seed)) if a.part == "kill" else part_disk(tmp, a.cases)
    if rc == 77:
        return 77
    print("%d checks failed" % len(FAILS) if FAILS else "all fault checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
