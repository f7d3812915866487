#!/usr/bin/env python3
"""The plugin ABI end to end (include/qcheck/qcheck.h, harness/plugin.c).

  python3 tests/test_plugin.py QCHECK EXAMPLE.so EXAMPLE_ABI99.so EXAMPLE_TIES_AWAY.so CPU_PLUGIN.so

- the example plugin (examples/plugin, written from the format's definition, no qcheck code) PASSes
  the instances it implements and every other instance is SKIPPED as declined, never PASS;
- the same source with ties rounded away from zero FAILs, with the tie class named;
- a plugin built for another ABI version is refused with exit 2 naming both versions;
- a missing file, a missing entry point and an unknown backend name are exit 2 naming them;
- the cpu backends built as a plugin (kernels/cpu as libqcheck_cpu.so) load, and run or say why not.
"""
import os
import re
import subprocess
import sys

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(qcheck, args):
    r = subprocess.run([qcheck] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return r.returncode, r.stdout, r.stderr


def summary(out):
    m = re.search(r"^(\d+) passed, (\d+) failed, (\d+) skipped, (\d+) mistrusted$", out, re.M)
    return tuple(int(g) for g in m.groups()) if m else None


def main():
    qcheck, example, abi99, ties_away, cpu, persistent, bringup, hostile = sys.argv[1:9]
    rc, out, err = run(qcheck, ["run", "--case", "cast_fp8", "--backend", "plugin:" + example, "-v"])
    s = summary(out)
    lines = [l for l in out.splitlines() if l.split()[:1] and l.split()[0] in ("PASS", "SKIPPED", "FAIL", "ERROR")]
    passed = [l for l in lines if l.startswith("PASS")]
    check(rc == 0 and s is not None and s[0] > 0 and s[1] == 0, "example plugin passes what it implements: %s %s" % (s, err))
    check(all("to=e4m3fn" in l and "profile=ptx" in l for l in passed), "only e4m3fn/ptx instances pass")
    skipped = [l for l in lines if l.startswith("SKIPPED")]
    check(len(skipped) == s[2] and skipped and all("declined: not implemented by example-e4m3" in l for l in skipped),
          "every other instance is SKIPPED as declined, with the reason (%d)" % len(skipped))
    check(re.search(r"^%d of the skipped were declined" % s[2], out, re.M) is not None,
          "the summary counts the declined items apart")
    check(all("REPRO: qcheck run --case cast_fp8 --params '" in l and "--backend 'plugin:" in l for l in lines),
          "every line has a REPRO that names the plugin")

    rc, out, _ = run(qcheck, ["run", "--case", "cast_fp8", "--backend", "plugin:" + ties_away])
    s = summary(out)
    check(rc == 1 and s is not None and s[1] > 0, "a plugin with ties rounded away fails: %s" % (s,))
    check("tie_flip" in out, "and the mismatch class names the tie flip")

    rc, _, err = run(qcheck, ["run", "--case", "cast_fp8", "--backend", "plugin:" + abi99])
    check(rc == 2 and "ABI version 99" in err and "version 3" in err, "an ABI mismatch is exit 2 naming both: " + err.strip())
    rc, _, err = run(qcheck, ["run", "--backend", "plugin:/nonexistent/libx.so"])
    check(rc == 2 and "/nonexistent/libx.so" in err, "a missing plugin file is exit 2 naming it")
    rc, _, err = run(qcheck, ["run", "--backend", "plugin:" + example + ":no-such"])
    check(rc == 2 and "no-such" in err and "example-e4m3" in err, "an unknown NAME is exit 2 listing the plugin's backends")
    rc, _, err = run(qcheck, ["run", "--backend", "plugin:/lib/x86_64-linux-gnu/libm.so.6"])
    check(rc == 2 and "qcheck_plugin_backends_v1" in err, "a library without the entry point is exit 2 naming it")

    rc, out, err = run(qcheck, ["run", "--case", "cast_fp8", "--quiet", "--backend", "plugin:" + cpu + ":cpu-avx512"])
    s = summary(out)
    check(s is not None and s[1] == 0 and (s[0] > 0 or s[2] > 0), "the cpu backends load as a plugin: %s %s" % (s, err.strip()))
    test_persistent(qcheck, persistent)
    test_bringup(qcheck, bringup)
    test_hostile(qcheck, hostile)
    return 1 if failures else 0


def test_hostile(qcheck, plugin):
    """A plugin whose entry misbehaves is exit 2 naming it: never a crash of qcheck, never exit 0."""
    for mode, words in (("huge", "returned 1073741824 backends"), ("null", "backend 1 of 2 is NULL"),
                        ("unnamed", "no usable name"), ("comma", "no usable name ('a,b'"),
                        ("exit", "ended the process while loading or in its entry (exit status 0)"),
                        ("crash", "crashed: signal 11")):
        env = dict(os.environ, HOSTILE_PLUGIN=mode)
        p = subprocess.run([qcheck, "run", "--case", "cast_fp8", "--backend", "plugin:" + plugin], capture_output=True,
                           text=True, env=env, timeout=120)
        if mode == "crash" and "ASAN_OPTIONS" in os.environ:  # AddressSanitizer turns the SIGSEGV into an abort
            words = "crashed: signal 6" if "crashed: signal 6" in p.stderr else "ended the process"
        check(p.returncode == 2 and words in p.stderr and plugin in p.stderr,
              "a plugin whose entry gives '%s' is exit 2 naming it (%d: %s)" % (mode, p.returncode, p.stderr.strip()[:160]))
    p = subprocess.run([qcheck, "run", "--case", "cast_fp8", "--quiet", "--backend", "plugin:" + plugin],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 1 and "NOTHING CHECKED" in p.stdout,
          "the same plugin behaving loads, declines all and checks nothing: exit 1 (%d)" % p.returncode)


def test_persistent(qcheck, plugin):
    """QCHECK_BACKEND_PERSISTENT: one worker serves many items; a crash and a hang cost one item each."""
    rc, out, _ = run(qcheck, ["run", "--case", "cast_fp8", "--timeout", "2", "-v", "--backend", "plugin:" + plugin])
    s = summary(out)
    calls = [(int(p), int(c)) for p, c in re.findall(r"pid (\d+) call (\d+)", out)]
    check(calls and max(c for _, c in calls) > 10 and len({p for p, _ in calls}) < len(calls),
          "one worker process serves many items (%d declined items, %d processes)" % (len(calls), len({p for p, _ in calls})))
    crashed = [l for l in out.splitlines() if l.startswith("ERROR") and "n=7]" in l]
    hung = [l for l in out.splitlines() if l.startswith("ERROR") and "n=1]" in l]
    passed = [l for l in out.splitlines() if l.startswith("PASS")]
    # "signal 11" natively; under AddressSanitizer its SEGV handler aborts the worker (signal 6)
    check(len(crashed) == 6 and all(re.search(r"crashed: signal (11|6)\b", l) for l in crashed),
          "a crash is ERROR for its item (%d)" % len(crashed))
    check(len(hung) == 6 and all("timeout" in l for l in hung), "a hang is ERROR after --timeout (%d)" % len(hung))
    check(len(passed) == 12 and s and s[1] == 12, "every other item still passes after the restarts: %s" % (s,))
    # --devices: one worker per GPU, the items handed to the GPUs in turn (ctx.device in the reason)
    rc, out, _ = run(qcheck, ["run", "--case", "cast_fp8", "--timeout", "2", "-v", "--jobs", "3", "--devices", "0,2,5",
                              "--backend", "plugin:" + plugin])
    seen = re.findall(r"pid (\d+) call \d+ device (\d+)", out)
    per = {d: sum(1 for _, x in seen if x == d) for d in ("0", "2", "5")}
    pids = {d: {p for p, x in seen if x == d} for d in per}
    check(set(x for _, x in seen) == {"0", "2", "5"} and max(per.values()) - min(per.values()) <= 2,
          "--devices 0,2,5 spreads the items evenly over the three GPUs: %s" % per)
    check(not (pids["0"] & pids["2"]) and not (pids["0"] & pids["5"]) and not (pids["2"] & pids["5"]),
          "each GPU has workers of its own: %s" % pids)
    check(summary(out) == s, "the same verdicts as on one device: %s %s" % (summary(out), s))
    for bad, why in (("0,0", "GPU 0 twice"), ("0,x", "devices"), ("", "no GPU index")):
        rc, _, err = run(qcheck, ["run", "--case", "cast_fp8", "--devices", bad])
        check(rc == 2 and why in err, "--devices '%s' is a usage error naming it (%d: %s)" % (bad, rc, err.strip()))
    rc, _, err = run(qcheck, ["run", "--case", "cast_fp8", "--devices", "0,1", "--device", "1"])
    check(rc == 2 and "give one of them" in err, "--device with --devices is refused (%d)" % rc)


def test_bringup(qcheck, plugin):
    """qcheck bringup: one line per instruction, the report files, a crash costs its backend only."""
    import json
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        rc, out, err = run(qcheck, ["bringup", "--report", d, "--backend",
                                    "plugin:%s:bringup-test,plugin:%s:bringup-crash" % (plugin, plugin)])
        check(rc == 1, "a difference makes bringup exit 1 (%d) %s" % (rc, err.strip()))
        check(re.search(r"matches +e4m3fn satfinite by the bits +vs the same by a table search: \d+ inputs", out)
              is not None, "a matching instruction is one 'matches' line")
        check("DIFFERS  planted.difference" in out and "3 of 1000 inputs" in out and
              "0x40000000 -> 0x1 (expected 0x2)" in out, "a difference names its count and first examples")
        # signal 6 under AddressSanitizer, as for the worker above
        check(re.search(r"^ERROR +plugin:.*bringup-crash: bring-up crashed: signal (11|6)\b", out, re.M) is not None,
              "a crashing bring-up is ERROR for that backend alone")
        rep = json.load(open(os.path.join(d, "bringup.json")))
        verdicts = [f["verdict"] for r in rep for f in r["findings"]]
        check(verdicts == ["matches", "differs"] and rep[1]["status"] == "error", "bringup.json: %s" % verdicts)
        md = open(os.path.join(d, "bringup.md")).read()
        check("| `planted.difference` |" in md and "differs on 3 inputs" in md, "bringup.md has the table")
    for opt, value, why in (("--device", "-1", "[0, 1023]"), ("--device", "1e3", "[0, 1023]"),
                            ("--timeout", "0", "[1, 86400]"), ("--timeout", "abc", "[1, 86400]")):
        rc, _, err = run(qcheck, ["bringup", opt, value, "--backend", "plugin:%s:bringup-test" % plugin])
        check(rc == 2 and ("%s must be an integer in %s, got '%s'" % (opt, why, value)) in err,
              "bringup %s %s is exit 2 naming the option (%d: %s)" % (opt, value, rc, err.strip()))


if __name__ == "__main__":
    sys.exit(main())
