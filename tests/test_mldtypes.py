#!/usr/bin/env python3
"""Oracle test: the qcheck CLI's ml_dtypes profiles against ml_dtypes itself (and numpy.float16).

ml_dtypes is an independent implementation and, for the ml_dtypes cast profiles, the definition.
Releases differ (0.7.0 rounds fp32 subnormals into e8m0 by value, 0.5-0.6 rounded them up), so the
profile under test is the one qcheck names for the installed release (`qcheck list profiles --for
ml_dtypes==VERSION`); a release no profile names is a failure that says so. Every expected value
below comes from ml_dtypes / numpy; qcheck is only ever the thing under test.

  python3 tests/test_mldtypes.py --qcheck build/harness/qcheck          quick (< ~60 s on 2 cores)
  python3 tests/test_mldtypes.py --qcheck build/harness/qcheck --full   + all 2^32 fp32 inputs for
                                                                        the 8-bit formats and e8m0
  ... --profile P        test profile P instead of the one selected by the installed version
  ... --every-profile    test every ml_dtypes profile and report which match (the drift check)

Exit status: 0 no mismatch anywhere, 1 a mismatch (or qcheck failed, or no profile names the
installed release), 77 numpy/ml_dtypes missing.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77

try:
    import numpy as np
except ImportError as exc:  # pragma: no cover - depends on the machine
    print("SKIP: numpy is not importable (%s)" % exc)
    sys.exit(SKIP)
try:
    import ml_dtypes
except ImportError as exc:  # pragma: no cover
    print("SKIP: ml_dtypes is not importable (%s)" % exc)
    sys.exit(SKIP)


def _dtype(name):
    if name == "float16":
        return np.dtype(np.float16)
    t = getattr(ml_dtypes, name, None)
    return None if t is None else np.dtype(t)


# qcheck format -> (numpy dtype name, bits of the code, bytes per code in qcheck's files)
FORMATS = [
    ("e4m3fn", "float8_e4m3fn", 8, 1),
    ("e4m3fnuz", "float8_e4m3fnuz", 8, 1),
    ("e5m2", "float8_e5m2", 8, 1),
    ("e5m2fnuz", "float8_e5m2fnuz", 8, 1),
    ("e8m0", "float8_e8m0fnu", 8, 1),
    ("e2m1", "float4_e2m1fn", 4, 1),
    ("e2m3", "float6_e2m3fn", 6, 1),
    ("e3m2", "float6_e3m2fn", 6, 1),
    ("bf16", "bfloat16", 16, 2),
    ("f16", "float16", 16, 2),
]
FULL_FORMATS = ["e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e8m0"]

SEED = 20260101
N_UNIFORM = 1 << 22   # uniform over all 2^32 fp32 bit patterns (>= 10^6)
N_NEAR = 1 << 21      # per format, drawn near that format's range, midpoints and max
FULL_CHUNK = 1 << 26


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Qcheck:
    def __init__(self, path, workdir, profile):
        self.path = path
        self.dir = workdir
        self.profile = profile
        self.serial = 0

    def _tmp(self, tag):
        self.serial += 1
        return os.path.join(self.dir, "%s_%d.bin" % (tag, self.serial))

    def run(self, args):
        r = subprocess.run([self.path] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise RuntimeError("qcheck %s exited %d: %s" % (" ".join(args), r.returncode,
                                                             r.stderr.decode(errors="replace").strip()))

    def decode(self, fmt):
        out = self._tmp("dec")
        self.run(["decode", "--format", fmt, "--profile", self.profile, out])
        got = np.fromfile(out, dtype="<u4")
        os.unlink(out)
        return got

    def cast_args(self, fmt, inp, out):
        return ["cast", "--from", "f32", "--to", fmt, "--profile", self.profile, inp, out]

    def cast(self, fmt, bits_u32):
        inp, out = self._tmp("in"), self._tmp("out")
        bits_u32.astype("<u4").tofile(inp)
        self.run(self.cast_args(fmt, inp, out))
        width = 2 if fmt in ("bf16", "f16") else 1
        got = np.fromfile(out, dtype="<u2" if width == 2 else np.uint8)
        os.unlink(inp)
        os.unlink(out)
        return got


def expected_encode(dt, bits_u32):
    """The ml_dtypes (numpy for float16) cast of fp32 bit patterns, as unsigned codes."""
    with np.errstate(all="ignore"):
        y = bits_u32.view(np.float32).astype(dt)
    return y.view(np.uint16 if dt.itemsize == 2 else np.uint8)


class Tally:
    """Mismatches of one format: count and the first 10 examples."""

    def __init__(self, fmt):
        self.fmt = fmt
        self.checked = 0
        self.bad = 0
        self.examples = []
        self.notes = []

    def compare(self, what, inputs, expected, got, in_width=8, out_width=2):
        self.checked += len(expected)
        if len(got) != len(expected):
            self.bad += max(len(expected), 1)
            self.notes.append("%s: qcheck wrote %d values, expected %d" % (what, len(got), len(expected)))
            return
        idx = np.nonzero(expected != got)[0]
        self.bad += len(idx)
        for i in idx[: max(0, 10 - len(self.examples))]:
            self.examples.append((what, "%0*x" % (in_width, int(inputs[i])),
                                  "%0*x" % (out_width, int(expected[i])), "%0*x" % (out_width, int(got[i]))))

    def report(self, seconds):
        status = "ok" if self.bad == 0 else "FAIL"
        took = "" if seconds is None else " (%.1f s)" % seconds
        print("%-13s %-4s %12d values checked, %d mismatches%s" % (self.fmt, status, self.checked, self.bad, took))
        for n in self.notes:
            print("    note: %s" % n)
        if self.bad:
            print("    %s: %d mismatches; first %d (set, input, expected ml_dtypes, got qcheck):"
                  % (self.fmt, self.bad, len(self.examples)))
            for e in self.examples:
                print("      %-10s in=0x%s expected=0x%s got=0x%s" % e)


# ---------------------------------------------------------------------------------------------
# Decode tables

def check_decode(q, fmt, dt, bits, tally):
    n = 1 << bits
    codes = np.arange(n, dtype=np.uint16 if bits == 16 else np.uint8)
    with np.errstate(all="ignore"):
        expected = codes.view(dt).astype(np.float32).view(np.uint32)
    got = q.decode(fmt)
    if len(got) != n:
        tally.bad += n
        tally.notes.append("decode wrote %d values, expected %d" % (len(got), n))
        return
    diff = np.nonzero(expected != got)[0]
    if len(diff):
        ef = expected.view(np.float32)[diff]
        gf = got.view(np.float32)[diff]
        payload_only = np.isnan(ef) & np.isnan(gf)
        if payload_only.all():
            tally.notes.append("decode differs ONLY in NaN bits for %d NaN codes (not hidden: counted "
                               "as mismatches)" % len(diff))
        elif payload_only.any():
            tally.notes.append("decode: %d of the %d differences are NaN-bits-only"
                               % (int(payload_only.sum()), len(diff)))
    tally.compare("decode", np.arange(n), expected, got, in_width=4 if bits == 16 else 2, out_width=8)


# ---------------------------------------------------------------------------------------------
# Encode input sets

def f32_bits(values_f64):
    with np.errstate(over="ignore"):  # values beyond fp32 max become +-Inf on purpose
        return np.asarray(values_f64, dtype=np.float64).astype(np.float32).view(np.uint32)


def step_ulps(bits_u32, k):
    """Move fp32 bit patterns by k ulps away from zero (k < 0: towards zero), staying in the same
    sign half; patterns that would cross zero or leave the finite range are clamped."""
    mag = (bits_u32 & np.uint32(0x7FFFFFFF)).astype(np.int64) + np.asarray(k, dtype=np.int64)
    mag = np.clip(mag, 0, 0x7F7FFFFF).astype(np.uint32)
    return (bits_u32 & np.uint32(0x80000000)) | mag


def code_values(dt, bits):
    """Sorted distinct non-negative finite values of the format (ml_dtypes' own decode)."""
    n = 1 << bits
    codes = np.arange(n, dtype=np.uint16 if bits == 16 else np.uint8)
    with np.errstate(all="ignore"):
        v = codes.view(dt).astype(np.float64)
    v = v[np.isfinite(v)]
    return np.unique(np.abs(v))


def set_codes_and_midpoints(fmt, dt, bits):
    """Every code's exact value, the midpoints between neighbours (and one fp32 ulp either side),
    the overflow boundary above max and, for e8m0, the pseudo-codes below 2^-127; both signs."""
    v = code_values(dt, bits)
    vmax = v[-1]
    if fmt == "e8m0":
        beyond = 2.0 * vmax
        below = [v[0] / 2.0 ** k for k in range(1, 23)]  # fp32 subnormal powers of two
        v_ext = np.concatenate([np.array(below[::-1]), v, [beyond]])
    else:
        beyond = vmax + (vmax - v[-2])
        v_ext = np.concatenate([v, [beyond]])
    mids = (v_ext[:-1] + v_ext[1:]) / 2.0
    parts = [f32_bits(v), f32_bits(v_ext)]
    mb = f32_bits(mids)
    for k in (-2, -1, 0, 1, 2):
        parts.append(step_ulps(mb, k))
    vb = f32_bits(v[v > 0])
    for k in (-1, 1):
        parts.append(step_ulps(vb, k))
    pos = np.unique(np.concatenate(parts))
    return np.concatenate([pos, pos | np.uint32(0x80000000)])


def set_bf16_patterns():
    return (np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)).astype(np.uint32)


def set_uniform(rng):
    return rng.integers(0, 1 << 32, size=N_UNIFORM, dtype=np.uint64).astype(np.uint32)


def set_near_range(rng, fmt, dt, bits):
    """Values where the format's rounding decisions are: midpoints +-few ulps, log-uniform over the
    range (and a bit beyond both ends), near max and near the overflow boundary, near min subnormal."""
    v = code_values(dt, bits)
    pos = v[v > 0]
    vmin, vmax = pos[0], v[-1]
    k = N_NEAR // 4
    out = []
    # 1. random neighbour midpoints, moved by a few fp32 ulps (normal distribution, mostly 0, +-1, +-2)
    i = rng.integers(0, len(v) - 1, size=k)
    mids = f32_bits((v[i] + v[i + 1]) / 2.0)
    out.append(step_ulps(mids, np.rint(rng.normal(0.0, 1.5, size=k)).astype(np.int64)))
    # 2. log-uniform magnitudes from vmin/16 to vmax*4 (fp32 range clipped)
    lo, hi = np.log2(max(vmin / 16.0, 2.0 ** -149)), np.log2(min(vmax * 4.0, 3.0e38))
    out.append(f32_bits(np.exp2(rng.uniform(lo, hi, size=k))))
    # 3. lognormal around max: max * exp(N(0, 0.1)), includes the band up to the overflow boundary
    out.append(f32_bits(vmax * rng.lognormal(0.0, 0.1, size=k)))
    # 4. around the smallest subnormal: uniform in [0, 2*vmin], and lognormal around vmin/2 (the tie)
    kk = k // 2
    out.append(f32_bits(rng.uniform(0.0, 2.0 * vmin, size=kk)))
    out.append(f32_bits(vmin / 2.0 * rng.lognormal(0.0, 0.05, size=k - kk)))
    b = np.concatenate(out)
    sign = (rng.integers(0, 2, size=len(b), dtype=np.uint32) << np.uint32(31)).astype(np.uint32)
    return b | sign


def set_specials(rng):
    pos = [0x00000000, 0x7F800000,                          # +0, +Inf
           0x7F800001, 0x7F800002, 0x7F800100, 0x7F801FFF, 0x7F802000, 0x7F803FFF,
           0x7F804000, 0x7F810000, 0x7FA00000, 0x7FBFFFFF,  # signalling NaNs, several payloads
           0x7FC00000, 0x7FC00001, 0x7FC02000, 0x7FD00000, 0x7FE00000, 0x7FFFE000,
           0x7FFFFFFF,                                      # quiet NaNs
           0x00000001, 0x00000002, 0x00000003, 0x000FFFFF, 0x001FFFFF, 0x00200000,
           0x003FFFFF, 0x00400000, 0x00400001, 0x005FFFFF, 0x00600000, 0x007FFFFF,  # fp32 subnormals
           0x00800000, 0x00800001, 0x7F7FFFFF, 0x7F7FFFFE, 0x7F000000, 0x7EFFFFFF,  # min normal, max
           0x3F800000, 0x3FC00000, 0x3FBFFFFF, 0x3FC00001]                      # 1, 1.5, neighbours
    p = np.array(pos, dtype=np.uint32)
    sub = rng.integers(1, 0x00800000, size=1 << 15, dtype=np.uint32)   # random fp32 subnormals
    nan = rng.integers(0x7F800001, 0x80000000, size=1 << 12, dtype=np.uint64).astype(np.uint32)
    allp = np.concatenate([p, sub, nan])
    return np.concatenate([allp, allp | np.uint32(0x80000000)])


# ---------------------------------------------------------------------------------------------

def check_encode_sets(q, fmt, dt, bits, tally, sets):
    width = 4 if bits == 16 else 2
    for name, x in sets:
        x = np.ascontiguousarray(x, dtype=np.uint32)
        expected = expected_encode(dt, x)
        got = q.cast(fmt, x)
        tally.compare(name, x, expected, got, in_width=8, out_width=width)


def full_sweep(q, tallies, dts):
    """All 2^32 fp32 bit patterns through every format of FULL_FORMATS, chunk by chunk. qcheck runs
    for every format of a chunk in parallel with numpy computing the expectations."""
    nchunks = (1 << 32) // FULL_CHUNK
    inp = os.path.join(q.dir, "full_in.bin")
    t0 = time.time()
    for c in range(nchunks):
        start = c * FULL_CHUNK
        x = (np.arange(FULL_CHUNK, dtype=np.uint64) + np.uint64(start)).astype(np.uint32)
        x.tofile(inp)
        procs = []
        # two qcheck processes at a time (2 cores), numpy fills the gaps
        pending = list(FULL_FORMATS)
        running = []
        expected = {}

        def launch():
            fmt = pending.pop(0)
            out = os.path.join(q.dir, "full_out_%s.bin" % fmt)
            p = subprocess.Popen([q.path] + q.cast_args(fmt, inp, out), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            running.append((fmt, out, p))

        while pending and len(running) < 2:
            launch()
        for fmt in FULL_FORMATS:
            expected[fmt] = expected_encode(dts[fmt], x)
        while running:
            fmt, out, p = running.pop(0)
            err = p.communicate()[1]
            if pending:
                launch()
            if p.returncode != 0:
                raise RuntimeError("qcheck cast --to %s on chunk %d exited %d: %s"
                                   % (fmt, c, p.returncode, err.decode(errors="replace").strip()))
            got = np.fromfile(out, dtype=np.uint8)
            os.unlink(out)
            tallies[fmt].compare("full", x, expected[fmt], got, in_width=8, out_width=2)
            procs.append(fmt)
        el = time.time() - t0
        log("full: chunk %d/%d done (inputs up to 0x%08x), %.0f s elapsed, ~%.0f s left"
            % (c + 1, nchunks, start + FULL_CHUNK - 1, el, el / (c + 1) * (nchunks - c - 1)))
    os.unlink(inp)


def selected_profile(qcheck):
    """The cast profile qcheck names for the installed ml_dtypes release, or None (with why)."""
    r = subprocess.run([qcheck, "list", "profiles", "--for", "ml_dtypes==" + ml_dtypes.__version__],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return r.stdout.strip(), None


def ml_dtypes_profiles(qcheck):
    """Every cast profile whose library is ml_dtypes, from `qcheck list profiles`."""
    r = subprocess.run([qcheck, "list", "profiles"], stdout=subprocess.PIPE, universal_newlines=True, check=True)
    names, last = [], None
    for line in r.stdout.splitlines():
        if line.endswith(" (cast)"):
            last = line[:-len(" (cast)")]
        elif last and line.strip().startswith("library: ml_dtypes "):
            names.append(last)
    return names


def check_profile(args, dts, profile):
    """Runs every set against one profile; returns (mismatches, values checked)."""
    base = args.tmpdir or ("/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None)
    workdir = tempfile.mkdtemp(prefix="qc_mldtypes_", dir=base)
    q = Qcheck(args.qcheck, workdir, profile)
    selected = [f for f in FORMATS if not args.format or f[0] in args.format]
    tallies = {}
    t_all = time.time()
    print("profile %s:" % profile)
    try:
        rng = np.random.default_rng(SEED)
        uniform = set_uniform(rng)
        bf16pat = set_bf16_patterns()
        specials = set_specials(rng)
        for fmt, tname, bits, _ in selected:
            t0 = time.time()
            dt = dts[fmt]
            tally = tallies[fmt] = Tally(fmt)
            frng = np.random.default_rng([SEED, bits, len(fmt), sum(map(ord, fmt))])
            check_decode(q, fmt, dt, bits, tally)
            sets = [("bf16pat", bf16pat), ("uniform", uniform),
                    ("near", set_near_range(frng, fmt, dt, bits)),
                    ("codes+mid", set_codes_and_midpoints(fmt, dt, bits)),
                    ("specials", specials)]
            check_encode_sets(q, fmt, dt, bits, tally, sets)
            tally.report(time.time() - t0)
        if args.full:
            full = [f for f in FULL_FORMATS if f in tallies]
            if full:
                t0 = time.time()
                ft = {f: Tally(f) for f in full}
                saved = FULL_FORMATS[:]
                FULL_FORMATS[:] = full
                try:
                    full_sweep(q, ft, dts)
                finally:
                    FULL_FORMATS[:] = saved
                print("full sweep (all 2^32 fp32 inputs): %.1f s" % (time.time() - t0))
                for f in full:
                    ft[f].fmt = f + "/all"
                    ft[f].report(None)
                    tallies[f + "/all"] = ft[f]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    total_bad = sum(t.bad for t in tallies.values())
    total = sum(t.checked for t in tallies.values())
    print("summary (%s): %d values checked over %d formats, %d mismatches (%.1f s)"
          % (profile, total, len(selected), total_bad, time.time() - t_all))
    return total_bad, total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qcheck", required=True, help="path of the qcheck binary")
    ap.add_argument("--full", action="store_true", help="also all 2^32 fp32 inputs (8-bit formats, e8m0)")
    ap.add_argument("--format", action="append", help="only these formats (repeatable)")
    ap.add_argument("--tmpdir", default=None, help="scratch directory (default: /dev/shm if present)")
    ap.add_argument("--profile", help="the profile to test (default: the one named for the installed release)")
    ap.add_argument("--every-profile", action="store_true",
                    help="test every ml_dtypes profile; exit 0 only when the installed release's own profile "
                         "exists and matches (the drift check)")
    args = ap.parse_args()

    if not (os.path.isfile(args.qcheck) and os.access(args.qcheck, os.X_OK)):
        print("ERROR: qcheck binary not found or not executable: %s" % args.qcheck)
        return 1

    dts = {}
    for fmt, tname, _, _ in FORMATS:
        dt = _dtype(tname)
        if dt is None:
            print("SKIP: ml_dtypes %s lacks %s (need ml_dtypes >= 0.5)" % (ml_dtypes.__version__, tname))
            return SKIP
        dts[fmt] = dt
    print("oracle: numpy %s, ml_dtypes %s" % (np.__version__, ml_dtypes.__version__))
    own, why = selected_profile(args.qcheck)
    try:
        if args.every_profile:
            return drift(args, dts, own, why)
        if args.profile is None and own is None:
            print("FAIL: the installed ml_dtypes %s is not reproduced by any qcheck profile: %s"
                  % (ml_dtypes.__version__, why))
            print("      (run the drift check, ci/drift.sh, to see which profile comes nearest)")
            return 1
        bad, _ = check_profile(args, dts, args.profile or own)
    except RuntimeError as exc:
        print("ERROR: %s" % exc)
        return 1
    return 0 if bad == 0 else 1


def drift(args, dts, own, why):
    """Every ml_dtypes profile against the installed release: which still match, which do not."""
    results = [(p, check_profile(args, dts, p)) for p in ml_dtypes_profiles(args.qcheck)]
    print("drift: ml_dtypes %s (numpy %s)" % (ml_dtypes.__version__, np.__version__))
    for p, (bad, n) in results:
        print("  %-16s %s" % (p, "matches (%d values)" % n if bad == 0 else "DIFFERS on %d of %d values" % (bad, n)))
    if own is None:
        print("  no profile names ml_dtypes %s: %s" % (ml_dtypes.__version__, why))
        return 1
    own_bad = dict((p, r[0]) for p, r in results).get(own)
    print("  the release's own profile: %s, %s" % (own, "matches" if own_bad == 0 else "DIFFERS"))
    return 0 if own_bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
