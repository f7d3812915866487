#!/usr/bin/env python3
"""Harness self-tests: sweep expansion, determinism across --jobs, shards, isolation of crashing
and hanging backends, validation errors naming file/key/value (--part runner), and the mutant
gate (--part mutants: every mutant must FAIL somewhere). Expected counts are worked out by hand
from the case files written here, never taken from qcheck's own output.

usage: test_harness.py --qcheck PATH --cases DIR --part runner|mutants
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(qcheck, args, cases=None, env_extra=None):
    env = dict(os.environ)
    if cases:
        env["QCHECK_CASES"] = cases
    env.update(env_extra or {})
    p = subprocess.run([qcheck] + args, capture_output=True, text=True, env=env, timeout=1200)  # generous: harness_cli runs 3-6 min under ASan on 2 cores
    return p.returncode, p.stdout, p.stderr


def summary(out):
    m = re.search(r"^(\d+) passed, (\d+) failed, (\d+) skipped, (\d+) mistrusted$", out, re.M)
    return tuple(int(g) for g in m.groups()) if m else None


def write_case(d, name, obj):
    with open(os.path.join(d, name + ".json"), "w") as f:
        json.dump(obj, f)


def base_case(name, params, constraints=()):
    return {
        "name": name, "op": "cast", "doc": "self-test", "tiers": ["quick"],
        "params": params, "constraints": list(constraints),
        "inputs": {"x": {"shape": ["n"], "fill": "normal", "scale": 10}},
        "compare": {"y": {"rule": "bitexact", "why": "self-test"}},
    }


def test_sweep(qcheck):
    with tempfile.TemporaryDirectory() as d:
        # to: 2 values; n: range(1, 10, 4) = 1, 5, 9; k: pow2 [2, 16] = 2, 4, 8, 16 -> 24 combinations;
        # the constraint k <= n keeps (n=5: k=2,4), (n=9: k=2,4,8) per format -> 2 * 5 = 10
        write_case(d, "sweep", base_case("sweep", {"to": ["e4m3fn", "e5m2"], "profile": "ptx",
                                                  "n": {"range": [1, 10, 4]}, "k": {"pow2": [2, 16]}},
                                         ["k <= n"]))
        # --backend ref: the default also runs every other available backend (cpu-avx512 here)
        rc, out, err = run(qcheck, ["run", "--quiet", "--backend", "ref"], d)
        check(rc == 0 and summary(out) == (10, 0, 0, 0), f"sweep + constraint expand to 10 instances: {summary(out)} {err}")
        rc, out, _ = run(qcheck, ["run", "--params", "to=e5m2,n=9", "--backend", "ref"], d)
        check(summary(out) == (3, 0, 0, 0), f"--params selects the 3 instances with to=e5m2, n=9: {summary(out)}")
        rc, out, _ = run(qcheck, ["run", "--filter", r"k=16"], d)
        check(rc == 2, "a filter that matches nothing is a usage error, not a silent pass")
        # the default backends: every one that can run here; each one that cannot is named once
        # with its reason (and runs no instance)
        _, listing, _ = run(qcheck, ["list", "backends"], d)
        absent = [l.split()[0] for l in listing.splitlines()
                  if "[unavailable:" in l and " group mutants " not in l and " group selftest " not in l]
        rc, out, _ = run(qcheck, ["run", "--quiet"], d)
        named = re.findall(r"^not run: backend (\S+) cannot run here: .+", out, re.M)
        check(rc == 0 and sorted(named) == sorted(absent) and summary(out)[2] == 0,
              f"default run names the unavailable backends {absent} once each: {named}, {summary(out)}")



def test_determinism_and_shards(qcheck, cases):
    args = ["run", "--case", "cast_fp8", "--backend", "mutant:e4m3-overflow-at-448", "-v", "--seed", "7"]
    _, one, _ = run(qcheck, args + ["--jobs", "1"], cases)
    _, two, _ = run(qcheck, args + ["--jobs", "2"], cases)
    check(one == two and len(one) > 0, "same seed -> identical output for --jobs 1 and --jobs 2")
    _, other, _ = run(qcheck, args[:-1] + ["8"], cases)
    check(other != one, "a different seed gives different inputs")
    lines = set(l for l in one.splitlines() if "REPRO:" in l)
    shard_lines = []
    for i in (1, 2, 3):
        _, out, _ = run(qcheck, args + ["--shard", f"{i}/3"], cases)
        shard_lines.append([l for l in out.splitlines() if "REPRO:" in l])
    union = [l for s in shard_lines for l in s]
    check(len(union) == len(set(union)) and set(union) == lines,
          f"3 shards cover every instance exactly once ({len(union)} lines vs {len(lines)})")
    check(all(shard_lines), "every shard got some instances")


def test_output(qcheck, cases):
    """Like a test runner: the failing items with REPRO and the summary; -v every item; progress
    on stderr, live on a terminal, a line a minute (QCHECK_PROGRESS_EVERY) in a log."""
    args = ["run", "--case", "cast_fp8", "--backend", "mutant:e4m3-overflow-at-448,ref"]
    rc, out, err = run(qcheck, args, cases)
    s = summary(out)
    lines = out.splitlines()
    fails = [l for l in lines if l.startswith("FAIL ")]
    check(s and s[0] > 0 and not [l for l in lines if l.startswith(("PASS", "SKIPPED"))] and len(fails) == s[1] and
          all("REPRO: qcheck run --case cast_fp8 --params '" in l for l in fails),
          f"default: every failing item with its REPRO, no PASS or SKIPPED line ({s}, {len(fails)} FAIL lines)")
    _, out_v, _ = run(qcheck, args + ["-v"], cases)
    check(summary(out_v) == s and len([l for l in out_v.splitlines() if l.startswith("PASS ")]) == s[0],
          "-v: a line for every passing item")
    rc, out_q, err_q = run(qcheck, ["run", "--case", "cast_half", "--params", "n=7", "--backend", "selftest",
                                    "--timeout", "3", "--jobs", "2"], cases,
                           {"QCHECK_SELFTEST": "1", "QCHECK_PROGRESS_EVERY": "1"})
    ticks = re.findall(r"^qcheck: \[(\d+)/(\d+)\] \d+ items/s, ETA \d+ s, \d+ failed$", err_q, re.M)
    check(len(ticks) >= 2 and all(int(t) == summary(out_q)[0] + summary(out_q)[1] + summary(out_q)[2] for _, t in ticks),
          f"not a terminal: a progress line per interval with done/total, rate and ETA ({len(ticks)} lines)")
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([qcheck] + ["run", "--case", "cast_half", "--params", "n=7", "--backend", "selftest",
                                     "--timeout", "3", "--jobs", "2"],
                         stdout=subprocess.DEVNULL, stderr=slave, env=dict(os.environ, QCHECK_CASES=cases, QCHECK_SELFTEST="1"))
    os.close(slave)
    tty = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        tty += chunk
    p.wait()
    os.close(master)
    check(b"\r\x1b[K[" in tty and b"items/s, ETA" in tty, "a terminal: one live progress line, rewritten in place")


def test_shard_partition_and_auto(qcheck, cases):
    """For N = 1..16 the shards of `list instances --shard I/N` (the selection of run --shard) are
    disjoint and their union is the whole quick tier; --shard auto reads each scheduler's variables
    (base 0 or 1, Slurm's first task id and step) and is exit 2 without any."""
    env0 = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "CI_NODE", "BUILDKITE_", "JOB_COMPLETION"))}

    def ids(extra_args, env=None):
        p = subprocess.run([qcheck, "list", "instances", "--suite", "quick"] + extra_args, capture_output=True,
                           text=True, env=dict(env0, QCHECK_CASES=cases, **(env or {})), timeout=120)
        return p.returncode, [l.split("\t")[1] for l in p.stdout.splitlines()], p.stderr

    _, everything, _ = ids([])
    ok = len(everything) == len(set(everything)) > 0
    for n in range(1, 17):
        parts = [ids(["--shard", "%d/%d" % (i, n)])[1] for i in range(1, n + 1)]
        union = [x for part in parts for x in part]
        ok &= len(union) == len(set(union)) and set(union) == set(everything)
    check(ok, "N = 1..16: the shards are disjoint and cover the %d quick instances" % len(everything))
    want = ids(["--shard", "3/4"])[1]
    for name, env in (("Slurm", {"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "3",
                                 "SLURM_ARRAY_TASK_STEP": "2"}),
                      ("GitLab", {"CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "4"}),
                      ("Buildkite", {"BUILDKITE_PARALLEL_JOB": "2", "BUILDKITE_PARALLEL_JOB_COUNT": "4"}),
                      ("Kubernetes", {"JOB_COMPLETION_INDEX": "2", "QCHECK_SHARD_COUNT": "4"})):
        rc, got, err = ids(["--shard", "auto"], env)
        check(rc == 0 and got == want and "3/4" in err, "--shard auto under %s is shard 3/4 (rc %d: %s)"
              % (name, rc, err.strip()))
    rc, _, err = ids(["--shard", "auto"])
    check(rc == 2 and "SLURM_ARRAY_TASK_ID" in err, "--shard auto with no scheduler variable is exit 2 naming them")
    rc, _, err = ids(["--shard", "auto"], {"CI_NODE_INDEX": "5", "CI_NODE_TOTAL": "4"})
    check(rc == 2 and "CI_NODE_INDEX=5" in err, "an index past the count is exit 2 naming the variables")
    for var, value in (("SLURM_ARRAY_TASK_STEP", "abc"), ("SLURM_ARRAY_TASK_STEP", "0"), ("SLURM_ARRAY_TASK_MIN", "x")):
        rc, _, err = ids(["--shard", "auto"], {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4", var: value})
        check(rc == 2 and "SLURM_ARRAY_TASK_ID" in err, "%s=%s is exit 2 (it had been read as %s)"
              % (var, value, "0" if var.endswith("MIN") else "1"))
    rc, _, err = run(qcheck, ["run", "--shard", "0/3"], cases)
    check(rc == 2 and "--shard" in err, "run --shard 0/3 is exit 2")


def test_report_merge(qcheck, cases):
    """qcheck report merge of the 3 shard reports of a run equals the unsharded run's report (results
    in order with their seeds, figures and details; counts; coverage), and refuses a missing, a
    repeated or a foreign shard, naming it."""
    with tempfile.TemporaryDirectory() as d:
        args = ["run", "--case", "cast_fp8,quant_mx", "--backend", "ref,mutant:e4m3-overflow-at-448", "--quiet"]
        for i in (1, 2, 3):
            run(qcheck, args + ["--shard", "%d/3" % i, "--report", os.path.join(d, "s%d" % i)], cases)
        run(qcheck, args + ["--report", os.path.join(d, "whole")], cases)
        rc, out, err = run(qcheck, ["report", "merge"] + [os.path.join(d, s) for s in ("s3", "s1", "s2")] +
                           ["--out", os.path.join(d, "merged")], cases)
        keys = ("case_id", "backend", "verdict", "seed_text", "figures", "repro", "detail", "position")
        whole, merged = (json.load(open(os.path.join(d, x, "summary.json"))) for x in ("whole", "merged"))
        same = [tuple(r[k] for k in keys) for r in whole["results"]] == [tuple(r[k] for k in keys) for r in merged["results"]]
        fails = sum(r["verdict"] == "FAIL" for r in merged["results"])
        check(rc == 0 and same and whole["counts"] == merged["counts"] and whole["coverage"] == merged["coverage"]
              and fails > 0, "report merge of 3 shards equals the unsharded report (%d results, %d mutant failures; "
              "rc %d %s)" % (len(merged["results"]), fails, rc, err.strip()))
        for dirs, what, text in ((["s1", "s3"], "a missing shard", "shard 2/3 is missing"),
                                 (["s1", "s2", "s2", "s3"], "a repeated shard", "both shard 2/3"),
                                 (["s1", "whole"], "a report of another sharding", "another shard count")):
            rc, _, err = run(qcheck, ["report", "merge"] + [os.path.join(d, x) for x in dirs] +
                             ["--out", os.path.join(d, "bad")], cases)
            check(rc == 2 and text in err, "report merge refuses %s: %s" % (what, err.strip()))
        rc, _, err = run(qcheck, ["report", "merge", os.path.join(d, "nonexistent"), "--out", os.path.join(d, "bad")], cases)
        check(rc == 2 and "nonexistent" in err, "report merge of a folder without summary.json is exit 2 naming it")
        # an edited shard: one result moved onto another's position (the counts still add up), or to 3.5
        for edit, text in (("twice", "do not hold position"), ("fraction", "s1")):
            shutil.rmtree(os.path.join(d, "s1e"), ignore_errors=True)
            shutil.copytree(os.path.join(d, "s1"), os.path.join(d, "s1e"))
            path = os.path.join(d, "s1e", "summary.json")
            rep = json.load(open(path))
            rep["results"][0]["position"] = rep["results"][1]["position"] if edit == "twice" else 3.5
            json.dump(rep, open(path, "w"))
            rc, _, err = run(qcheck, ["report", "merge"] + [os.path.join(d, x) for x in ("s1e", "s2", "s3")] +
                             ["--out", os.path.join(d, "bad-" + edit)], cases)
            check(rc == 2 and text in err, "report merge refuses a shard with a position %s: %s" % (edit, err.strip()))
        # exit 1 where the unsharded run exits 1: a planted bug the selection does not catch, or
        # nothing checked (merge had exit 0 for both)
        for what, sel, text in (("an escaped mutant", ["--case", "cast_fp8", "--backend", "mutant:e2m1-ties-away"],
                                 "NOT CAUGHT"),
                                ("nothing checked", ["--case", "fp8_rowwise_gemm", "--backend", "cpu-amx"],
                                 "NOTHING CHECKED")):
            tag = what.replace(" ", "-")
            for i in (1, 2):
                run(qcheck, ["run", "--quiet"] + sel + ["--shard", "%d/2" % i, "--report", os.path.join(d, tag + str(i))],
                    cases)
            whole_rc, whole_out, _ = run(qcheck, ["run", "--quiet"] + sel, cases)
            rc, out, err = run(qcheck, ["report", "merge", os.path.join(d, tag + "1"), os.path.join(d, tag + "2"),
                                        "--out", os.path.join(d, tag + "-merged")], cases)
            check(whole_rc == 1 and text in whole_out and rc == 1 and text in out,
                  "report merge of %s exits 1 as the unsharded run does (run %s, merge %s: %s)"
                  % (what, whole_rc, rc, (out + err).strip()[-300:]))


def test_isolation(qcheck, cases):
    rc, out, _ = run(qcheck, ["run", "--case", "fp4_pack", "--backend", "selftest", "--timeout", "2", "--jobs", "4"],
                     cases, {"QCHECK_SELFTEST": "1"})
    # fp4_pack has 14 instances but the self-test backends implement only cast -> no work
    check(rc == 2, "backends that implement none of the selected ops give a usage error")
    rc, out, _ = run(qcheck, ["run", "--case", "cast_half", "--params", "n=7", "--backend", "selftest,ref",
                              "--timeout", "2", "--jobs", "4", "-v"], cases, {"QCHECK_SELFTEST": "1"})
    crash = [l for l in out.splitlines() if l.startswith("ERROR") and "selftest:crash" in l]
    hang = [l for l in out.splitlines() if l.startswith("ERROR") and "selftest:hang" in l]
    refuse = [l for l in out.splitlines() if l.startswith("ERROR") and "selftest:refuse" in l]
    ref = [l for l in out.splitlines() if l.startswith("PASS") and "  ref  " in l]
    # cast_half with n=7: to 2 x profile 3 x dist 2 = 12 instances per backend
    # "signal 11" natively; under AddressSanitizer its SEGV handler aborts the child (signal 6)
    check(len(crash) == 12 and all("crashed: signal" in l for l in crash),
          f"a segfaulting backend is ERROR per item ({len(crash)})")
    check(len(hang) == 12 and all("timeout" in l for l in hang), f"a hanging backend is ERROR after --timeout ({len(hang)})")
    check(len(refuse) == 12, f"a refusing backend is ERROR ({len(refuse)})")
    check(len(ref) == 12, f"the run goes on: ref still passes all 12 ({len(ref)})")
    check(rc == 1 and summary(out) == (12, 36, 0, 0), f"summary counts errors as failed: {summary(out)}")


def test_validation(qcheck):
    bad = [
        ("malformed", '{"name": "x", "op": "cast",', r"malformed\.json:1: malformed JSON"),
        ("unknown_op", json.dumps({**base_case("u", {"to": "e4m3fn"}), "op": "gemm.nope"}), r"key 'op': unknown op.*'gemm\.nope'"),
        ("bad_fill", json.dumps({**base_case("b", {"to": "e4m3fn"}), "inputs": {"x": {"shape": ["n"], "fill": "gauss"}}}),
         r"key 'inputs\.x': unknown fill.*'gauss'"),
        ("bad_edge", json.dumps({**base_case("e", {"to": "e4m3fn"}), "inputs": {"x": {"shape": [4], "edges": ["nan", "qnan"]}}}),
         r"key 'inputs\.x': unknown edge.*'qnan'"),
        ("no_why", json.dumps({**base_case("w", {"to": "e4m3fn"}), "compare": {"y": {"rule": "bitexact"}}}),
         r"key 'compare\.y\.why': is required"),
        ("bad_tier", json.dumps({**base_case("t", {"to": "e4m3fn"}), "tiers": ["nightly"]}), r"key 'tiers': unknown tier.*'nightly'"),
        ("bad_constraint", json.dumps(base_case("c", {"to": "e4m3fn", "n": 4}, ["n %% 0"])), r"constraints\[0\]"),
        # expressions are checked when the file loads, not when an instance first evaluates them
        ("typo_shape", json.dumps({**base_case("s", {"to": "e4m3fn", "n": 4}), "inputs": {"x": {"shape": ["nn"]}}}),
         r"key 'inputs\.x\.shape\[0\]': in expression 'nn' .*unknown parameter 'nn'"),
        ("typo_tier_constraint", json.dumps({**base_case("k", {"to": "e4m3fn", "n": 4}, ["n > 0", "n <= limt"]),
                                             "tier_params": {"quick": {"limit": 8}}}),
         r"key 'constraints\[1\]': in expression 'n <= limt' .*unknown parameter 'limt'"),
        ("typo_block", json.dumps({**base_case("b", {"to": "e4m3fn", "n": 4}),
                                   "compare": {"y": {"rule": "bitexact", "why": "t", "block": "cdiv(n, 2"}}}),
         r"key 'compare\.y\.block': in expression 'cdiv\(n, 2'.*expected '\)'"),
    ]
    for name, text, pattern in bad:
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, name + ".json"), "w") as f:
                f.write(text)
            rc, out, err = run(qcheck, ["run"], d)
            check(rc == 2 and re.search(pattern, err) and name + ".json" in err,
                  f"{name}: exit 2 naming file/key/value ({rc}: {err.strip()[:160]})")
    with tempfile.TemporaryDirectory() as d:
        write_case(d, "badparam", base_case("badparam", {"to": "e9m9", "n": 4}))
        rc, out, err = run(qcheck, ["run"], d)
        check(rc == 1 and "unknown format 'e9m9'" in out, "an instance the reference refuses is ERROR naming the value")
    # a selection that matches nothing says why: the value with the case's values, or the backend's ops
    with tempfile.TemporaryDirectory() as d:
        write_case(d, "sel", base_case("sel", {"to": ["e4m3fn", "e5m2"], "n": 4}))
        rc, out, err = run(qcheck, ["run", "--case", "sel", "--params", "to=e4m3fnn", "--backend", "ref"], d)
        check(rc == 2 and "no selected instance has to=e4m3fnn (the values there: e4m3fn, e5m2;" in err,
              f"a misspelt --params value lists the values ({rc}: {err.strip()[:160]})")
        rc, out, err = run(qcheck, ["run", "--case", "sel", "--params", "tp=e4m3fn", "--backend", "ref"], d)
        check(rc == 2 and "case sel has no parameter 'tp' (its parameters: to n)" in err,
              f"an unknown --params key lists the keys ({rc}: {err.strip()[:160]})")
        rc, out, err = run(qcheck, ["run", "--case", "quant_nvfp4", "--backend", "mutant:e2m1-ties-away"])
        check(rc == 2 and "backend mutant:e2m1-ties-away implements op cast, and no selected case is one of them "
              "(case quant_nvfp4 is op quant)" in err, f"a backend without the case's op says so ({rc}: {err.strip()[:160]})")


def test_mutants(qcheck, cases):
    _, listing, _ = run(qcheck, ["list", "backends"], cases)
    names = re.findall(r"^(mutant:\S+)", listing, re.M)
    check(len(names) >= 12, f"at least 12 mutants registered ({len(names)})")
    rc, out, _ = run(qcheck, ["run", "--backend", "mutants", "--quiet", "--show", "0"], cases)
    caught = re.findall(r"^MUTANT (\S+) caught", out, re.M)
    missed = re.findall(r"^MUTANT (\S+) NOT CAUGHT", out, re.M)
    check(rc == 0 and f"mutants: all {len(names)} caught" in out,
          f"a health check of the gate exits 0 when every mutant is caught (exit {rc})")
    check(sorted(caught) == sorted(names) and not missed, f"every mutant FAILs and is named (missed: {missed})")


def test_mutant_escapes_and_declines(qcheck, cases):
    # bf16 truncation cannot show in an fp8 cast: the mutant escapes there, and the run says so
    rc, out, _ = run(qcheck, ["run", "--backend", "mutant:bf16-truncates", "--case", "cast_fp8", "--quiet"], cases)
    check(rc == 1 and "mutants: 1 of 1 escaped the gate: mutant:bf16-truncates" in out,
          f"an escaped mutant fails the run and is named (exit {rc}): {out[-300:]!r}")
    # a mutant of one format or map declines the others (it would be the reference there: no PASS)
    for backend, case, why in (("mutant:bf16-truncates", "cast_fp8", "the bug is in to=bf16; this instance has to=e4m3fn"),
                               ("mutant:sf128x4-unpadded-rows", "layout_w13", "the bug is in the sf128x4 map; this instance maps w13"),
                               ("mutant:nan-sign-dropped", "cast_e8m0", "e8m0 has no NaN of either sign")):
        rc, out, _ = run(qcheck, ["run", "--backend", backend, "--case", case, "-v"], cases)
        s = summary(out)
        check(s[0] == 0 and s[1] == 0 and s[2] > 0 and why in out,
              f"{backend} declines every {case} instance, saying why ({s}): {out[:300]!r}")


def test_goldens(qcheck, cases):
    import filecmp
    try:
        import h5py
        import numpy as np
    except ImportError:
        print("skip goldens: h5py/numpy missing")
        return
    env = {"SOURCE_DATE_EPOCH": "0"}
    with tempfile.TemporaryDirectory() as d:
        g1, g2 = os.path.join(d, "g1"), os.path.join(d, "g2")
        rc1, out1, _ = run(qcheck, ["golden", "generate", "--case", "cast_fp8", "--out", g1, "--jobs", "1"], cases, env)
        rc2, _, _ = run(qcheck, ["golden", "generate", "--case", "cast_fp8", "--out", g2, "--jobs", "2"], cases, env)
        files = sorted(os.listdir(os.path.join(g1, "cast_fp8")))
        same = all(filecmp.cmp(os.path.join(g1, "cast_fp8", f), os.path.join(g2, "cast_fp8", f), shallow=False)
                   for f in files)
        # cast_fp8 quick: to 4 x profile 3 x dist 3 x scale 2 x n 4 = 288 instances
        check(rc1 == 0 and rc2 == 0 and len(files) == 288 and same,
              f"golden generate: 288 cast_fp8 goldens, byte-identical for --jobs 1 and 2 ({len(files)})")
        rc, out, _ = run(qcheck, ["golden", "verify"] + [os.path.join(g1, "cast_fp8", f) for f in files[:20]], cases)
        check(rc == 0 and out.count("PASS") == 20, "golden verify re-runs the reference bit-exactly")

        # export -> an external runner (h5py here) writes outputs -> verify with the case's rules
        gold = os.path.join(d, "inst.h5")
        params = "to=e4m3fn,profile=ptx,dist=normal,scale=300,n=1000"
        rc, _, err = run(qcheck, ["export", "--case", "cast_fp8", "--params", params, "--out", gold], cases)
        check(rc == 0, f"export writes one instance ({err.strip()})")
        with h5py.File(gold, "r") as f:
            x = f["inputs/x"][()]
            y = f["outputs/y"][()]
            check(f.attrs["case"].decode() == "cast_fp8" and x.dtype == np.float32 and y.dtype == np.uint8,
                  "the exported file holds f32 inputs and uint8 codes")
        import ml_dtypes
        # the external runner: e4m3fn under ptx = saturating RNE, NaN -> 0x7F (docs/spec/formats.md §13)
        xs = np.clip(np.nan_to_num(x, nan=0.0, posinf=448, neginf=-448), -448, 448)
        ours = xs.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).copy()
        ours[np.isnan(x)] = 0x7F
        outs = os.path.join(d, "outs.h5")
        with h5py.File(outs, "w") as f:
            f["outputs/y"] = ours
        rc, out, err = run(qcheck, ["verify", "--golden", gold, "--outputs", outs], cases)
        check(rc == 0 and out.startswith("PASS"), f"verify: an independent ml_dtypes runner matches ({out.strip()[:80]})")
        ours[5] ^= 1
        with h5py.File(outs, "w") as f:
            f["outputs/y"] = ours
        rc, out, _ = run(qcheck, ["verify", "--golden", gold, "--outputs", outs], cases)
        check(rc == 1 and "y (5)" in out, "verify: one flipped code is a FAIL naming its coordinate")
        with open(outs, "wb") as f:
            f.write(b"not hdf5 at all")
        rc, _, err = run(qcheck, ["verify", "--golden", gold, "--outputs", outs], cases)
        check(rc == 2 and "not an HDF5 file" in err, f"verify: a non-HDF5 outputs file is exit 2 ({err.strip()[:80]})")

        # the judge takes bounds and masks from the golden: an edited golden is never a pass
        gemm = os.path.join(d, "gemm.h5")
        rc, _, err = run(qcheck, ["export", "--case", "fp8_rowwise_gemm", "--out", gemm, "--params",
                                  "kind=fp8_rowwise,dist=normal,out=f32,bias=0,m=5,n=64,k=200"], cases)
        with h5py.File(gemm, "r") as f:
            c = f["outputs/c"][()]
        with h5py.File(outs, "w") as f:
            f["outputs/c"] = c
        rc0, out0, _ = run(qcheck, ["verify", "--golden", gemm, "--outputs", outs], cases)
        check(rc0 == 0 and out0.startswith("PASS"), f"verify: the golden's own c passes ({out0.strip()[:80]})")
        c[0, 0] += 1000
        with h5py.File(gemm, "r+") as f:
            f["outputs/c"][...] = c
            f["outputs/c.bound"][...] = 1e300
        with h5py.File(outs, "w") as f:
            f["outputs/c"] = c
        rc1, out1, _ = run(qcheck, ["golden", "verify", gemm], cases)
        rc2, _, err2 = run(qcheck, ["verify", "--golden", gemm, "--outputs", outs], cases)
        check(rc1 == 1 and "its output 'c' differs" in out1,
              f"golden verify: a golden whose c and c.bound were edited FAILs ({rc1}: {out1.strip()[:120]})")
        check(rc2 == 2 and "not the reference's golden" in err2,
              f"verify: against an edited golden is exit 2 ({rc2}: {err2.strip()[:120]})")
        rc5, _, err5 = run(qcheck, ["golden", "verify", "--backend", "ref", gemm], cases)
        check(rc5 == 2 and "its output 'c.bound' differs" in err5,
              f"golden verify --backend: an edited bound is exit 2 ({rc5}: {err5.strip()[:120]})")
        with h5py.File(gemm, "r+") as f:
            del f["outputs/c.bound"]
        rc3, _, err3 = run(qcheck, ["golden", "verify", gemm], cases)
        check(rc3 == 2 and "lacks the output 'c.bound'" in err3,
              f"golden verify: a golden without an output is exit 2 ({rc3}: {err3.strip()[:120]})")
        # a MoE golden keeps its stage tensors under /stages; the case compares stage.route.ids
        moe = os.path.join(d, "moe")
        rc, _, _ = run(qcheck, ["golden", "generate", "--case", "bf16_moe", "--out", moe], cases)
        moes = [os.path.join(r, f) for r, _, fs in os.walk(moe) for f in fs]
        rc4, out4, _ = run(qcheck, ["golden", "verify"] + moes, cases)
        check(rc == 0 and moes and rc4 == 0 and out4.count("PASS") == len(moes),
              f"golden verify: {len(moes)} bf16_moe goldens pass, their stages joined ({rc4}: {out4.strip()[:160]})")

        # --keep-failing saves the failing instance with the backend's outputs as a stage; --report
        kf, rep = os.path.join(d, "kf"), os.path.join(d, "rep")
        rc, out, _ = run(qcheck, ["run", "--case", "cast_edges", "--backend", "mutant:e2m1-ties-away",
                                  "--keep-failing", kf, "--report", rep, "--quiet"], cases)
        saved = [os.path.join(r, f) for r, _, fs in os.walk(kf) for f in fs]
        ok = len(saved) > 0
        for path in saved:
            with h5py.File(path, "r") as f:
                ok &= not np.array_equal(f["outputs/y"][()], f["stages/backend/y"][()])
        # the mutant is caught, so the run itself succeeds (a health check), and its failures are kept
        check(rc == 0 and ok, f"--keep-failing saved {len(saved)} goldens whose stage 'backend' differs (exit {rc})")
        import xml.etree.ElementTree as ET
        root = ET.parse(os.path.join(rep, "junit.xml")).getroot()
        fails = sum(int(s.get("failures")) for s in root.iter("testsuite"))
        nfail = int(re.search(r"(\d+) passed, (\d+) failed", out).group(2))
        check(fails == nfail and fails > 0, f"--report junit.xml counts the {nfail} failures ({fails})")
        summary_json = json.load(open(os.path.join(rep, "summary.json")))
        check(isinstance(summary_json, dict), "--report summary.json parses")


def test_instance_ids(qcheck, cases):
    """Every instance of every tier has its own id and golden file, however long its params (ids
    used to be cut at 150 characters: deepseek_v3_moe's 24 quick instances shared 4 files)."""
    rc, out, err = run(qcheck, ["list", "instances"], cases)
    rows = [l.split("\t") for l in out.splitlines()]
    check(rc == 0 and len(rows) > 1000 and all(len(r) == 3 for r in rows), "list instances: %d rows %s" % (len(rows), err))
    for tier in ("quick", "full", "bringup"):
        ids = [r[1] for r in rows if r[0] == tier]
        files = [r[2] for r in rows if r[0] == tier]
        check(len(set(ids)) == len(ids), "%s: %d instance ids, all distinct" % (tier, len(ids)))
        check(len(set(files)) == len(files), "%s: %d golden files, all distinct" % (tier, len(files)))
    moe = [r[1] for r in rows if r[0] == "quick" and r[1].startswith("deepseek_v3_moe[")]
    check(len(moe) == 24 and all(i.endswith("]") for i in moe), "deepseek_v3_moe: 24 complete quick ids (%d)" % len(moe))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qcheck", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--part", choices=("runner", "mutants"), required=True,
                    help="runner: everything but the mutant gate; mutants: the gate over the quick tier "
                         "(two CTests, harness_cli and mutant_gate, so that they run side by side)")
    a = ap.parse_args()
    if a.part == "mutants":
        test_mutants(a.qcheck, a.cases)
        print(f"{len(FAILS)} mutant gate checks failed" if FAILS else "all mutant gate checks passed")
        return 1 if FAILS else 0
    test_sweep(a.qcheck)
    test_instance_ids(a.qcheck, a.cases)
    test_determinism_and_shards(a.qcheck, a.cases)
    test_output(a.qcheck, a.cases)
    test_shard_partition_and_auto(a.qcheck, a.cases)
    test_report_merge(a.qcheck, a.cases)
    test_isolation(a.qcheck, a.cases)
    test_validation(a.qcheck)
    test_mutant_escapes_and_declines(a.qcheck, a.cases)
    test_goldens(a.qcheck, a.cases)
    print(f"{len(FAILS)} harness checks failed" if FAILS else "all harness checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
