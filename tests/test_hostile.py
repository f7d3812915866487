#!/usr/bin/env python3
"""Hostile input (issue 19): every defect the issue lists, each as a check that fails on the code
before the fix (commit 84cdac4: a crash, a wrong exit status, or a silent acceptance) and passes
now. A check passes only on exit 2 with a message that names the file, key or value at fault;
a signal (a crash) is always a failure.

  defect 1  sizes overflow (quant/dequant --shape, layout --rows/--cols, a case shape of 2^62+1)
  defect 3  corrupt HDF5 files crash the reader (the reproducers in tests/fuzz/corpus/golden,
            a file that claims 64 GiB, a FIFO)
  defect 4  undefined behaviour in the evaluator and the sweeps (INT64_MIN / -1, % -1, * + -
            overflow, 1e300, range/pow2 near 2^63)
  defect 5  sweeps expanded without a limit (64^4 combinations; --max-instances)
  defect 6  stale temporaries never removed (golden generate, --report)
  defect 7  case files that should be refused (a string "constraints", "budget": "nan", a
            fractional range, a misspelt "parms", "vectors" outside cases/)
  defect 8  an unknown qc_dtype ("e9m9") verifies as PASS
  numbers   (an audit of 2026-12-06) a NaN, infinite, zero or negative fp8_max, a negative or NaN
            eps, both gscale forms, an input scale of nan: accepted, every output NaN or zero (a
            runtime scale may be anything: real code gets NaN global scales); an option given
            twice (the second silently replaced the first); an output that is its own input
            (overwritten, exit 0), a report written over a shard's or into the cases folder; an
            argument too many (ignored), a quant prefix naming no file (hidden .q / .scale); a
            verify outputs file that lacks an output, stores it otherwise or holds another (ERROR,
            FAIL or ignored: exit 1 or 0)
(Defect 2, ids cut at 150 characters, is test_harness.py's test_instance_ids; full disks and
kill -9 are test_faults.py's.)

usage: test_hostile.py --qcheck PATH --cases DIR --corpus tests/fuzz/corpus
"""
import argparse
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def limit_memory():
    """4 GiB of address space: a reader that tries to allocate what a shape claims fails fast
    instead of swapping (the old code's 6.8 GB sweep, a 64 GiB dataset)."""
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def run(args, cases=None, timeout=60, cwd=None):
    env = dict(os.environ)
    if cases:
        env["QCHECK_CASES"] = cases
    sanitized = "ASAN_OPTIONS" in env or "UBSAN_OPTIONS" in env  # ASan reserves terabytes of address space
    try:
        p = subprocess.run([QCHECK] + args, capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd,
                           preexec_fn=None if sanitized else limit_memory)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def run_python(code, args, cases, timeout=120):
    """python3 -c code args..., under the same memory limit as run()"""
    env = dict(os.environ, QCHECK_CASES=cases)
    sanitized = "ASAN_OPTIONS" in env or "UBSAN_OPTIONS" in env
    try:
        p = subprocess.run([sys.executable, "-c", code] + args, capture_output=True, text=True, env=env,
                           timeout=timeout, preexec_fn=None if sanitized else limit_memory)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def refused(rc, err, *words):
    """exit 2 (not a signal, not 0/1) and a message holding every word"""
    return rc == 2 and all(w in err for w in words)


def show(rc, err):
    return "rc=%s: %s" % (rc, err.strip().replace("\n", " | ")[:200])


def write_case(d, obj):
    with open(os.path.join(d, obj["name"] + ".json"), "w") as f:
        json.dump(obj, f)


def cast_case(name, **extra):
    c = {"name": name, "op": "cast", "doc": "hostile", "tiers": ["quick"],
         "params": {"to": "e4m3fn", "profile": "ptx", "n": 8},
         "inputs": {"x": {"shape": ["n"], "fill": "normal", "scale": 10}},
         "compare": {"y": {"rule": "bitexact", "why": "hostile"}}}
    c.update(extra)
    return c


def test_sizes(tmp):
    empty = os.path.join(tmp, "empty.f32")
    open(empty, "wb").close()
    rc, _, err = run(["quant", "--recipe", "tensor", "--shape", "4294967296x4294967296", empty,
                      os.path.join(tmp, "out")])
    check(refused(rc, err, "4294967296"), "defect 1: quant --shape 4294967296x4294967296 on a 0-byte file is "
          "exit 2 naming the shape (%s)" % show(rc, err))
    rc, _, err = run(["quant", "--recipe", "tensor", "--shape", "-1x5", empty, os.path.join(tmp, "out")])
    check(refused(rc, err, "-1"), "defect 1: --shape -1x5 is refused, not read as 2^64-1 x 5 (%s)" % show(rc, err))
    rc, _, err = run(["dequant", "--recipe", "tensor", "--shape", "1099511627776x1", os.path.join(tmp, "nothing"),
                      os.path.join(tmp, "out")])
    check(refused(rc, err, "nothing"), "defect 1: dequant of a 2^40-element shape checks its files before "
          "allocating, naming the missing one (%s)" % show(rc, err))
    rc, _, err = run(["layout", "apply", "--map", "sf128x4", "--rows", "2147483648", "--cols", "2147483648", empty,
                      os.path.join(tmp, "out")])
    check(refused(rc, err, "2147483648"), "defect 1: layout apply --rows 2147483648 --cols 2147483648 is exit 2 "
          "naming the shape (%s)" % show(rc, err))
    rc, _, err = run(["layout", "apply", "--map", "w13_pad", "--rows", "2", "--cols", "1099511627", "--param",
                      "align=1099511627776", empty, os.path.join(tmp, "out")])
    check(refused(rc, err, "w13_pad"), "defect 1: a padding parameter that overflows the grid is exit 2 (%s)"
          % show(rc, err))
    out = os.path.join(tmp, "rows")
    rc, _, err = run(["quant", "--recipe", "tensor", "--shape", "1099511627776x0", empty, out], timeout=30)
    check(rc == 0 and os.path.getsize(out + ".scale") == 4 and os.path.getsize(out + ".q") == 0,
          "fuzz_cli: quant --recipe tensor of 2^40 rows of nothing is one scale at once, no walk over the "
          "empty rows (%s)" % show(rc, err))
    rc, _, err = run(["quant", "--recipe", "token", "--shape", "1099511627776x0", empty, out], timeout=30)
    check(refused(rc, err, "1099511627776 scales", "more than this machine has"), "fuzz_cli: a per-token quant "
          "whose 2^40 scales cannot fit in memory is refused before it allocates (%s)" % show(rc, err))
    d = os.path.join(tmp, "bigcase")
    os.mkdir(d)
    write_case(d, cast_case("big", inputs={"x": {"shape": ["4611686018427387905"], "fill": "normal"}}))
    rc, _, err = run(["export", "--case", "big", "--out", os.path.join(tmp, "big.h5")], d)
    check(refused(rc, err, "'x'", "2^40"), "defect 1: export of a case whose shape is 2^62+1 is exit 2 naming "
          "the input (%s)" % show(rc, err))
    rc, _, err = run(["golden", "generate", "--case", "big", "--out", os.path.join(tmp, "bigout")], d)
    check(refused(rc, err, "'x'", "2^40"), "defect 1: golden generate of that case is exit 2 (%s)" % show(rc, err))


def h5py_or_none():
    try:
        import h5py
        import numpy
        return h5py, numpy
    except ImportError:
        return None, None


def export_one(tmp, cases, name, case, params):
    path = os.path.join(tmp, name)
    rc, _, err = run(["export", "--case", case, "--params", params, "--out", path], cases)
    return path if rc == 0 else None


def test_hdf5(tmp, cases, corpus):
    crashers = sorted(f for f in os.listdir(os.path.join(corpus, "golden")) if f.startswith("crash-"))
    check(len(crashers) >= 3, "defect 3: the corpus keeps libhdf5's crash reproducers (%d)" % len(crashers))
    good = export_one(tmp, cases, "good.h5", "cast_fp8", "to=e4m3fn,profile=ptx,dist=normal,scale=300,n=7")
    for f in crashers:
        p = os.path.join(corpus, "golden", f)
        rc, _, err = run(["golden", "verify", p], cases)
        check(refused(rc, err, f), "defect 3: golden verify %s is exit 2 naming the file (%s)" % (f, show(rc, err)))
        if good:  # the lenient outputs reader reads /outputs only: intact there, it is a comparison (exit 1)
            rc, _, err = run(["verify", "--golden", good, "--outputs", p], cases)
            check(rc == 1 or refused(rc, err, f), "defect 3: verify --outputs %s is exit 1 or 2 naming the file, "
                  "never a crash (%s)" % (f, show(rc, err)))
    oom = os.path.join(corpus, "golden", "oom-libhdf5-chunk.h5")  # libhdf5 allocates for a chunk it claims
    probe = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
             "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); print(p.stderr)")
    rc, out, err = run_python(probe, [QCHECK, "golden", "verify", oom], cases)
    words = out.split()
    ok = rc == 0 and len(words) >= 2 and words[0] == "2" and int(words[1]) < (512 << 10) and "oom-libhdf5" in out
    check(ok, "defect 3: a file that makes libhdf5 allocate without bound is exit 2 and its reader stays under "
          "512 MiB (it may grow by 64 MiB + 2 x 1032 x its size; rc, max RSS in KiB: %s)" % " ".join(words[:2]))
    fifo = os.path.join(tmp, "fifo.h5")
    os.mkfifo(fifo)
    rc, _, err = run(["golden", "verify", fifo], cases, timeout=20)
    check(refused(rc, err, "fifo.h5"), "defect 3: a FIFO is refused, not waited on (%s)" % show(rc, err))
    h5py, np = h5py_or_none()
    if not h5py or not good:
        print("skip the 64 GiB file: h5py/numpy missing or export failed")
        return
    huge = os.path.join(tmp, "huge.h5")
    shutil.copy(good, huge)
    with h5py.File(huge, "r+") as f:  # a dataset that claims 2^36 bytes, never written: the file stays small
        del f["outputs/y"]
        ds = f["outputs"].create_dataset("y", shape=(1 << 36,), dtype="u1", chunks=(1 << 20,))
        ds.attrs["qc_dtype"] = np.bytes_("e4m3fn")
        ds.attrs["shape"] = np.array([1 << 36], dtype="<i8")
        ds.attrs["layout"] = np.bytes_("row_major")
    size = os.path.getsize(huge)
    rc, _, err = run(["golden", "verify", huge], cases)
    check(refused(rc, err, "huge.h5", "cannot come from a file of %d bytes" % size),
          "defect 3: a %d-byte file claiming 64 GiB is refused before any allocation (%s)" % (size, show(rc, err)))


def test_ub(tmp):
    bad = [
        ("div_min", cast_case("div_min", constraints=["(-9223372036854775807 - 1) / -1 > 0"]), "does not fit"),
        ("mod_min", cast_case("mod_min", constraints=["(-9223372036854775807 - 1) % -1 == 1"]), None),
        ("mul", cast_case("mul", constraints=["4611686018427387904 * 2 > 0"]), "does not fit"),
        ("add", cast_case("add", constraints=["9223372036854775807 + 1 > 0"]), "does not fit"),
        ("sub", cast_case("sub", constraints=["-9223372036854775807 - 2 < 0"]), "does not fit"),
        ("neg", cast_case("neg", constraints=["-(-9223372036854775807 - 1) > 0"]), "does not fit"),
        ("literal", cast_case("literal", constraints=["9223372036854775808 > 0"]), "does not fit"),
        ("big_value", cast_case("big_value", params={"to": "e4m3fn", "profile": "ptx", "n": 1e300}), "'params.n'"),
        ("pow2_2p63", cast_case("pow2_2p63", params={"to": "e4m3fn", "profile": "ptx",
                                                     "n": {"pow2": [4611686018427387904, 9223372036854775807]}}),
         "2^53"),
        ("range_2p63", cast_case("range_2p63", params={"to": "e4m3fn", "profile": "ptx",
                                                       "n": {"range": [9223372036854775000, 9223372036854775807, 300]}}),
         "2^53"),
    ]
    for name, obj, word in bad:
        d = os.path.join(tmp, "ub_" + name)
        os.mkdir(d)
        write_case(d, obj)
        rc, out, err = run(["list", "cases"], d)
        if word is None:  # INT64_MIN % -1 is 0: exact, and no trap (x86 idiv faults on it)
            check(rc == 0 and "quick:0" in out, "defect 4: %s: INT64_MIN %% -1 is 0, no SIGFPE (%s)"
                  % (name, show(rc, err)))
        else:
            check(refused(rc, err, name + ".json", word), "defect 4: %s: exit 2 naming file and value (%s)"
                  % (name, show(rc, err)))


def test_sweep_limit(tmp):
    d = os.path.join(tmp, "sweep")
    os.mkdir(d)
    params = {"to": "e4m3fn", "profile": "ptx", "n": 8}
    params.update({k: {"range": [0, 64]} for k in "abcd"})
    write_case(d, cast_case("wide", params=params))
    rc, out, err = run(["list", "cases"], d, timeout=30)
    check(refused(rc, err, "wide.json", "16777216", "--max-instances") and "quick:" not in out,
          "defect 5: a 64^4 sweep is counted before expansion: exit 2 naming the count and the limit, no count "
          "printed (%s)" % show(rc, err))
    d2 = os.path.join(tmp, "sweep2")
    os.mkdir(d2)
    params = {"to": "e4m3fn", "profile": "ptx", "n": 8, "a": {"range": [0, 64]}, "b": {"range": [0, 64]}}
    write_case(d2, cast_case("mid", params=params))
    rc, out, err = run(["list", "cases", "--max-instances", "1000"], d2)
    check(refused(rc, err, "4096", "1000"), "defect 5: --max-instances 1000 refuses a 4096-combination sweep (%s)"
          % show(rc, err))
    rc, out, err = run(["list", "cases", "--max-instances", "5000"], d2)
    check(rc == 0 and "quick:4096" in out, "defect 5: --max-instances 5000 lets it expand to 4096 (%s)"
          % show(rc, err))
    rc, out, err = run(["list", "cases", "--max-instances", "-1"], d2)
    check(refused(rc, err, "-1"), "defect 5: --max-instances -1 is refused (%s)" % show(rc, err))


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_temporaries(tmp, cases):
    out = os.path.join(tmp, "gen")
    folder = os.path.join(out, "decode_e2m1")
    os.makedirs(folder)
    dead, live = dead_pid(), os.getpid()
    stale = os.path.join(folder, "x.h5.tmp.%d.0" % dead)
    alive = os.path.join(folder, "y.h5.tmp.%d.3" % live)
    other = os.path.join(folder, "notes.txt.tmp.%d.0" % dead)
    for p in (stale, alive, other):
        open(p, "w").write("partial")
    rc, _, err = run(["golden", "generate", "--case", "decode_e2m1", "--out", out], cases)
    check(rc == 0 and not os.path.exists(stale), "defect 6: golden generate removes a stale .h5.tmp.PID.K of a "
          "dead writer (%s)" % show(rc, err))
    check(os.path.exists(alive) and os.path.exists(other),
          "defect 6: a live writer's temporary and a file of another kind are left alone")
    rep = os.path.join(tmp, "report")
    os.makedirs(rep)
    stale_rep = os.path.join(rep, ".summary.json.tmp.%d.0" % dead)
    open(stale_rep, "w").write("{")
    rc, _, err = run(["run", "--case", "decode_e2m1", "--backend", "ref", "--report", rep], cases)
    check(rc == 0 and not os.path.exists(stale_rep), "defect 6: --report removes a stale report temporary (%s)"
          % show(rc, err))


def test_schema(tmp):
    bad = [
        ("parms", lambda c: c.update(parms=c.pop("params")), "'parms'"),
        ("constraints_string", lambda c: c.update(constraints="n > 4"), "'constraints'"),
        ("budget_nan", lambda c: c["compare"].update(
            y={"rule": "budget", "class": "tie_flip", "budget": "nan", "why": "x"}), "'compare.y.budget'"),
        ("range_fraction", lambda c: c["params"].update(n={"range": [1, 10.5, 1]}), "'params.n'"),
        ("vectors_escape", lambda c: c.update(vectors="../../../etc/passwd"), "'vectors'"),
        ("input_key_typo", lambda c: c["inputs"]["x"].update(shap=["n"]), "'inputs.x.shap'"),
        ("degenerate_string", lambda c: c["compare"]["y"].update(degenerate_ok="yes"), "'compare.y'"),
        ("name_path", lambda c: c.update(name="../../etc"), "'name'"),
        ("duplicate_key", None, "appears twice"),
        # an audit of 2026-12-06: these had loaded, and every instance became an ERROR (exit 1)
        ("shape_fraction", lambda c: c["inputs"]["x"].update(shape=[2.5]), "shape entries"),
        ("shape_negative", lambda c: c["inputs"]["x"].update(shape=[-256]), "shape entries"),
        ("bits_99", lambda c: c["inputs"]["x"].update(bits=99, storage="u8"), "\"bits\" must be 1 to 32"),
        ("zero_blocks_fraction", lambda c: c["inputs"]["x"].update(zero_blocks=1.5), "'inputs.x.zero_blocks'"),
    ]
    for name, edit, word in bad:
        d = os.path.join(tmp, "schema_" + name)
        os.mkdir(d)
        c = cast_case(name)
        if edit:
            edit(c)
            text = json.dumps(c)
        else:
            text = json.dumps(c)[:-1] + ', "doc": "twice"}'
        with open(os.path.join(d, name + ".json"), "w") as f:
            f.write(text)
        rc, _, err = run(["list", "cases"], d)
        check(refused(rc, err, name + ".json", word), "defect 7: %s: exit 2 naming file and key (%s)"
              % (name, show(rc, err)))


def exported_cast(tmp, cases, name, what):
    """(h5py, numpy, an exported cast_fp8 instance), or None after saying why `what` is skipped"""
    h5py, np = h5py_or_none()
    good = export_one(tmp, cases, name, "cast_fp8", "to=e4m3fn,profile=ptx,dist=normal,scale=300,n=7")
    if not h5py or not good:
        print("skip %s: h5py/numpy missing or export failed" % what)
        return None
    return h5py, np, good


def test_overflow_bound(tmp, cases):
    """A GEMM whose f16 output overflows (outliers): each expected +-Inf is met by the same Inf or a
    value within its bound of the threshold, never by 0 or the other Inf (an Inf bound had passed
    any value but NaN)."""
    h5py, np = h5py_or_none()
    gold = export_one(tmp, cases, "ov.h5", "fp8_rowwise_gemm", "kind=fp8_tensor,dist=outliers,out=f16,bias=1,m=7,n=64,k=200")
    if not h5py or not gold:
        print("skip overflow bound: h5py/numpy missing or export failed")
        return
    with h5py.File(gold, "r") as f:
        c = f["outputs/c"][...].view(np.uint16)
    value = c.view(np.float16).astype(np.float32)
    inf = np.isinf(value)
    check(inf.any(), "overflow bound: the instance has +-Inf outputs (%d)" % inf.sum())
    for what, replace, verdict in (("0", lambda v: 0, "FAIL"), ("the other Inf", lambda v: np.where(v > 0, 0xFC00, 0x7C00), "FAIL"),
                                   ("the largest finite of its sign", lambda v: np.where(v > 0, 0x7BFF, 0xFBFF), "PASS")):
        y = c.copy()
        y[inf] = replace(value[inf])
        outs = os.path.join(tmp, "ov-outs.h5")
        with h5py.File(outs, "w") as f:
            f["outputs/c"] = y
        rc, out, err = run(["verify", "--golden", gold, "--outputs", outs], cases)
        check(out.startswith(verdict) and rc == (0 if verdict == "PASS" else 1),
              "overflow bound: an expected +-Inf met by %s is %s (%s)" % (what, verdict, show(rc, out + err)))


def test_unknown_dtype(tmp, cases):
    got = exported_cast(tmp, cases, "dt.h5", "defect 8")
    if not got:
        return
    h5py, np, good = got
    with h5py.File(good, "r+") as f:
        del f["outputs/y"].attrs["qc_dtype"]
        f["outputs/y"].attrs["qc_dtype"] = np.bytes_("e9m9")
    rc, out, err = run(["golden", "verify", good], cases)
    check(refused(rc, err, "dt.h5", "e9m9") and "PASS" not in out,
          "defect 8: a golden whose qc_dtype is 'e9m9' is exit 2 naming it, not PASS (%s)" % show(rc, err))


def test_numbers(tmp, cases):
    x = os.path.join(tmp, "x128.f32")
    with open(x, "wb") as f:
        f.write(bytes(128 * 128 * 4))
    out = os.path.join(tmp, "numbers")
    for recipe, params, words in (
            ("token", ["fp8_max=nan"], ["fp8_max=nan", "> 0"]),
            ("token", ["fp8_max=0"], ["fp8_max=0", "> 0"]),
            ("tensor", ["fp8_max=-448"], ["fp8_max=-448"]),
            ("tensor", ["static_scale=x"], ["static_scale=x", "not a number"]),
            ("token_group", ["eps=-1"], ["eps=-1", ">= 0"]),
            ("token_group", ["eps=nan"], ["eps=nan"]),
            ("nvfp4", ["gscale_encode=2", "gscale_decode=0.5"], ["give one"])):
        args = ["quant", "--recipe", recipe, "--shape", "128x128"]
        for prm in params:
            args += ["--param", prm]
        rc, _, err = run(args + [x, out])
        check(refused(rc, err, *words), "numbers: quant %s %s is exit 2 naming it (%s)" % (recipe, params, show(rc, err)))
    for recipe, prm in (("token_group", "eps=0"), ("nvfp4", "gscale_decode=nan"), ("tensor", "static_scale=0")):
        rc, _, err = run(["quant", "--recipe", recipe, "--shape", "128x128", "--param", prm, x, out])
        check(rc == 0, "numbers: quant %s %s is taken (a setting at its edge, or a runtime scale) (%s)"
              % (recipe, prm, show(rc, err)))
    rc, _, err = run(["export", "--case", "cast_fp8", "--out", os.path.join(tmp, "nan.h5"), "--params",
                      "scale=nan,to=e4m3fn,profile=ml_dtypes,dist=normal,n=7"], cases)
    check(refused(rc, err, "scale 'nan'", "not a finite number"),
          "numbers: an input scale of nan is exit 2 naming it (%s)" % show(rc, err))


def test_repeated_options(tmp, cases):
    for args, key in ((["run", "--case", "decode", "--case", "quant_fp8"], "--case"),
                      (["run", "--case", "decode", "--jobs", "1", "--jobs=2"], "--jobs"),
                      (["golden", "verify", "--backend", "ref", "--backend", "cpu", "x.h5"], "--backend"),
                      (["decode", "--format", "e4m3fn", "--format", "e5m2", os.path.join(tmp, "t.bin")], "--format")):
        rc, _, err = run(args, cases)
        check(refused(rc, err, key, "given twice"), "repeated options: %s is exit 2 naming %s (%s)"
              % (" ".join(args[:6]), key, show(rc, err)))
    for args, key in ((["run", "--case", "cast_fp8", "--params", "n=7,n=1"], "parameter 'n' given twice"),
                      (["quant", "--recipe", "token_group", "--shape", "8x32", "--param", "group=8", "--param", "group=4",
                        os.path.join(tmp, "x.f32"), os.path.join(tmp, "q")], "--param group given twice"),
                      (["layout", "apply", "--map", "sf128x4", "--rows", "8", "--cols", "8", "--param", "a=1", "--param",
                        "a=2", os.path.join(tmp, "x"), os.path.join(tmp, "y")], "--param a given twice")):
        rc, _, err = run(args, cases)
        check(refused(rc, err, key), "repeated keys: %s is exit 2 naming the key (had taken the last; %s)"
              % (" ".join(args[:6]), show(rc, err)))
    rc, _, err = run(["export", "--case", "quant_fp8", "--params", "recipe=tensor,profile=sgl-kernel,dist=bogus,rows=5,"
                      "cols=7", "--out", os.path.join(tmp, "bogus.h5")], cases)
    check(refused(rc, err, "fill 'bogus' names no generator"), "a swept fill named by --params must be a generator "
          "(dist=bogus had drawn normal values; %s)" % show(rc, err))
    for args in (["coverage", "--case", "cast_fp8"], ["coverage", "--case", "quant_fp8", "--suite", "bringup"]):
        rc, out, err = run(args, cases)
        check(refused(rc, err, "no instance of a quant case"), "%s: an empty coverage table is exit 2, not 0 (%s)"
              % (" ".join(args), show(rc, err)))
    # a long --case list: every name in it runs (run had kept the first 64 names and dropped the rest)
    rc, out, err = run(["run", "--case", "decode," * 64 + "cast_e8m0", "--backend", "ref", "--verbose"], cases)
    check(rc == 0 and "cast_e8m0" in out, "a --case list of 65 names runs the 65th (%s)" % show(rc, err))


def test_nothing_checked(tmp, cases):
    rc, out, err = run(["run", "--case", "fp8_rowwise_gemm", "--backend", "cpu-amx", "--quiet"], cases)  # declined or cannot run
    env_cases = os.path.join(tmp, "empty-cases")
    os.makedirs(env_cases, exist_ok=True)
    check(rc == 1 and "NOTHING CHECKED" in out, "nothing checked: a run whose every item was skipped is exit 1 (%s)"
          % show(rc, out + err))
    for args in (["golden", "generate", "--case", "nonexist", "--out", os.path.join(tmp, "g")],
                 ["coverage", "--case", "nonexist"], ["run", "--case", "decode,nonexist"]):
        rc, _, err = run(args, cases)
        check(refused(rc, err, "unknown case 'nonexist'"), "nothing checked: %s is exit 2 naming the case (%s)"
              % (" ".join(args[:3]), show(rc, err)))
    for args in (["list", "cases"], ["golden", "generate", "--out", os.path.join(tmp, "g")], ["coverage"]):
        rc, _, err = run(args, env_cases)
        check(refused(rc, err, "holds no case file"), "nothing checked: %s on an empty cases folder is exit 2 (%s)"
              % (" ".join(args[:2]), show(rc, err)))


def test_outputs_fit(tmp, cases):
    got = exported_cast(tmp, cases, "fit.h5", "outputs fit")
    if not got:
        return
    h5py, np, gold = got
    with h5py.File(gold, "r") as f:
        y = f["outputs/y"][()]
    for what, datasets, words in (("no y", {"outputs/z": y}, "no dataset /outputs/y"),
                                  ("y as f32", {"outputs/y": y.astype(np.float32)}, "stored as f32"),
                                  ("an extra dataset", {"outputs/y": y, "outputs/w": y}, "not an output of the op")):
        outs = os.path.join(tmp, "fit-outs.h5")
        with h5py.File(outs, "w") as f:
            for k, v in datasets.items():
                f[k] = v
        rc, out, err = run(["verify", "--golden", gold, "--outputs", outs], cases)
        check(refused(rc, err, words) and "PASS" not in out, "verify: an outputs file with %s is exit 2 (%s)"
              % (what, show(rc, err)))


def test_extra_arguments(tmp, cases):
    for args in (["golden", "generate", "--case", "decode", "--out", os.path.join(tmp, "gx"), "extra"],
                 ["coverage", "extra"], ["list", "cases", "extra"], ["bringup", "extra"],
                 ["verify", "--golden", "a.h5", "--outputs", "b.h5", "extra"]):
        rc, _, err = run(args, cases)
        check(refused(rc, err, "unexpected argument 'extra'"), "extra arguments: %s is exit 2 naming it (%s)"
              % (" ".join(args[:2]), show(rc, err)))
    x = os.path.join(tmp, "px.f32")
    with open(x, "wb") as f:
        f.write(bytes(16 * 16 * 4))
    for prefix in ("", tmp + "/"):
        rc, _, err = run(["quant", "--recipe", "token", "--shape", "16x16", x, prefix], cases)
        check(refused(rc, err, "names no file"), "quant to the prefix '%s' (hidden .q/.scale) is exit 2 (%s)"
              % (prefix, show(rc, err)))


def test_clobber(tmp, cases):
    a = os.path.join(tmp, "a.f32")
    data = bytes(range(16)) * 4
    with open(a, "wb") as f:
        f.write(data)
    link = os.path.join(tmp, "link.f32")
    os.symlink(a, link)
    x = os.path.join(tmp, "x.q")  # a quant input named like the quant's own .q output
    with open(x, "wb") as f:
        f.write(bytes(128 * 128 * 4))
    nv = os.path.join(tmp, "nv")
    run(["quant", "--recipe", "nvfp4", "--shape", "128x128", x, nv])
    with open(nv + ".scale", "rb") as f:
        nv_scale = f.read()
    for what, args, path, before in (
            ("cast a a", ["cast", "--from", "f32", "--to", "e4m3fn", a, a], a, data),
            ("cast a link-to-a", ["cast", "--from", "f32", "--to", "e4m3fn", a, link], a, data),
            ("layout apply a a", ["layout", "apply", "--map", "sf128x4", "--rows", "8", "--cols", "8", a, a], a, data),
            ("quant x.q x", ["quant", "--recipe", "token", "--shape", "128x128", x, os.path.join(tmp, "x")], x,
             bytes(128 * 128 * 4)),
            ("dequant nv nv.scale", ["dequant", "--recipe", "nvfp4", "--shape", "128x128", nv, nv + ".scale"],
             nv + ".scale", nv_scale)):
        rc, _, err = run(args, cases)
        with open(path, "rb") as f:
            kept = f.read() == before
        check(refused(rc, err, "would overwrite") and kept,
              "clobber: %s is exit 2 and the input is kept (%s, kept %s)" % (what, show(rc, err), kept))
    rep = os.path.join(tmp, "rep1")
    run(["run", "--case", "decode", "--backend", "ref", "--quiet", "--report", rep], cases)
    rc, _, err = run(["report", "merge", rep, "--out", rep], cases)
    check(refused(rc, err, "is the shard folder"), "clobber: report merge --out a shard folder is exit 2 (%s)"
          % show(rc, err))
    rc, _, err = run(["run", "--case", "decode", "--backend", "ref", "--report", cases], cases)
    check(refused(rc, err, "is the cases folder"), "clobber: run --report the cases folder is exit 2 (%s)"
          % show(rc, err))
    for args in (["quant", "--recipe", "tensor", "--shape", "8x32", "/dev/zero", os.path.join(tmp, "qz")],
                 ["layout", "apply", "--map", "sf128x4", "--rows", "8", "--cols", "8", "/dev/zero", os.path.join(tmp, "lz")],
                 ["dequant", "--recipe", "tensor", "--shape", "8x32", os.path.join(tmp, "zq"), os.path.join(tmp, "dz")]):
        if args[0] == "dequant":  # its payload and scale read from endless files
            for ext in (".q", ".scale"):
                if not os.path.exists(os.path.join(tmp, "zq" + ext)):
                    os.symlink("/dev/zero", os.path.join(tmp, "zq" + ext))
        rc, _, err = run(args, cases, timeout=20)
        check(refused(rc, err, "holds more than"), "%s reads no more of an endless input than the shape needs (%s)"
              % (args[0], show(rc, err)))
    rep2 = os.path.join(tmp, "rep2")
    for i in (1, 2):
        run(["run", "--case", "decode", "--backend", "ref", "--quiet", "--shard", "%d/2" % i, "--report", rep2 + str(i)],
            cases)
    os.remove(os.path.join(rep2 + "1", "summary.json"))
    os.mkfifo(os.path.join(rep2 + "1", "summary.json"))
    rc, _, err = run(["report", "merge", rep2 + "1", rep2 + "2", "--out", os.path.join(tmp, "rep2m")], cases, timeout=20)
    check(refused(rc, err, "not a regular file"), "report merge of a shard whose summary.json is a FIFO is exit 2 at "
          "once (%s)" % show(rc, err))


def test_links(tmp, cases):
    """An output that is a symbolic link is written through the link: the link stays and its target
    gets the data (a rename onto the link's name had replaced the link with a plain file)."""
    d = os.path.join(tmp, "links")
    data = os.path.join(d, "data")
    os.makedirs(data)

    def linked(link, name, content):
        with open(os.path.join(data, name), "wb") as f:
            f.write(content)
        os.symlink(os.path.relpath(os.path.join(data, name), os.path.dirname(link)), link)
        return link

    one = ["--case", "cast_fp8", "--params", "to=e4m3fn,profile=ptx,dist=normal,scale=300,n=7"]
    generate = ["golden", "generate", "--case", "decode", "--out", d]
    rc, _, err = run(generate, cases)
    goldens = sorted(os.listdir(os.path.join(d, "decode"))) if rc == 0 else []
    check(len(goldens) > 0, "links: golden generate wrote the decode goldens (%s)" % show(rc, err))
    for what, args, link, name in (
            ("decode", ["decode", "--format", "e4m3fn"], os.path.join(d, "table.f32"), "table.f32"),
            ("export", ["export"] + one + ["--out"], os.path.join(d, "one.h5"), "one.h5"),
            ("golden generate", generate, None, goldens[:1])):
        if link is None:  # the golden just written, moved into data/ and linked from its place
            if not name:
                continue
            link = os.path.join(d, "decode", name[0])
            name = name[0]
            os.rename(link, os.path.join(data, name))
            os.symlink(os.path.relpath(os.path.join(data, name), os.path.dirname(link)), link)
        else:
            linked(link, name, b"old")
            args = args + [link]
        rc, _, err = run(args, cases)
        size = os.path.getsize(os.path.join(data, name))
        check(rc == 0 and os.path.islink(link) and size > 3 and (name != "table.f32" or size == 1024),
              "links: %s to a link writes its target and keeps the link (%s, link %s, target %d bytes)"
              % (what, show(rc, err), os.path.islink(link), size))

def main():
    global QCHECK
    ap = argparse.ArgumentParser()
    ap.add_argument("--qcheck", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--corpus", required=True)
    a = ap.parse_args()
    QCHECK = a.qcheck
    with tempfile.TemporaryDirectory() as tmp:
        test_sizes(tmp)
        test_hdf5(tmp, a.cases, a.corpus)
        test_ub(tmp)
        test_sweep_limit(tmp)
        test_temporaries(tmp, a.cases)
        test_schema(tmp)
        test_unknown_dtype(tmp, a.cases)
        test_overflow_bound(tmp, a.cases)
        test_numbers(tmp, a.cases)
        test_repeated_options(tmp, a.cases)
        test_nothing_checked(tmp, a.cases)
        test_clobber(tmp, a.cases)
        test_links(tmp, a.cases)
        test_extra_arguments(tmp, a.cases)
        test_outputs_fit(tmp, a.cases)
    print("%d checks failed" % len(FAILS) if FAILS else "all hostile-input checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
