#!/usr/bin/env python3
"""A golden written by qcheck (tests/golden_writer.c) read by h5py, as a Python/torch user does.

The expected values are the formulas listed in golden_writer.c, recomputed here with numpy; the
dtypes are what docs/DESIGN.md "Golden store" promises (uint8 for every byte format, little-endian).
usage: test_golden_h5py.py GOLDEN_WRITER TMPDIR. Exit 0 pass, 1 fail, 77 skipped (reason printed).
"""
import json
import os
import subprocess
import sys

SKIP = 77

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"SKIPPED: h5py/numpy not importable ({e}); pip install h5py")
    sys.exit(SKIP)

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def expected():
    def i(n):
        return np.arange(n, dtype=np.uint64)

    return {
        "/inputs/codes": ("e4m3fn", "<u1", (3, 5, 7), ((37 * i(105) + 11) % 256).astype("<u1")),
        "/inputs/bits": ("bf16", "<u2", (4, 6), ((40503 * i(24) + 7) % 65536).astype("<u2")),
        "/inputs/idx": ("i32", "<i4", (10,), (7919 * np.arange(10, dtype=np.int64) - 40000).astype("<i4")),
        "/inputs/hash": ("u32", "<u4", (2, 2, 2, 2), ((2654435761 * i(16)) % 2**32).astype("<u4")),
        "/inputs/x": ("f32", "<f4", (8, 9), np.arange(72) / 4 - 5),
        "/inputs/acc": ("f64", "<f8", (5,), np.arange(5) / 8 - 1000),
        "/inputs/none": ("e8m0", "<u1", (0, 4), np.zeros(0)),
        "/outputs/q": ("e2m1x2", "<u1", (16, 8), ((13 * i(128)) % 256).astype("<u1")),
        "/outputs/s": ("e8m0", "<u1", (16,), (127 + i(16) % 3).astype("<u1")),
        "/stages/experts/routed": ("i32", "<i4", (4, 2), np.arange(8) % 3),
    }


def text(v):
    """Fixed-length string attributes come back as numpy bytes; decode as UTF-8."""
    return v.decode("utf-8") if isinstance(v, (bytes, np.bytes_)) else v


def check_root(f):
    a = f.attrs
    check(text(a["qcheck_version"]) == "0.1.0", f"qcheck_version {a['qcheck_version']!r}")
    check(int(a["format_version"]) == 1, f"format_version {a['format_version']!r}")
    check(text(a["case"]) == "cast_fp8", f"case {a['case']!r}")
    check(text(a["op"]) == "cast", f"op {a['op']!r}")
    params = json.loads(text(a["params"]))
    check(params == {"to": "e4m3fn", "profile": "ptx", "n": 105, "note": "\u00e9 <&>"},
          f"params {params!r}")
    check(a["seed"].dtype == np.uint64 and int(a["seed"]) == 18446744073709551557,
          f"seed {a['seed']!r} ({a['seed'].dtype})")
    for k, v in {"profile": "ptx", "backend": "ref", "git_revision": "0123456789abcdef",
                 "created": "2025-06-01T12:00:00Z"}.items():
        check(text(a[k]) == v, f"{k} {a[k]!r}")


def check_dataset(f, path, dtype, storage, shape, values):
    ds = f[path]
    check(ds.dtype == np.dtype(storage), f"{path}: stored as {ds.dtype}, expected {storage}")
    check(ds.shape == shape, f"{path}: shape {ds.shape}, expected {shape}")
    check(text(ds.attrs["qc_dtype"]) == dtype, f"{path}: qc_dtype {ds.attrs['qc_dtype']!r}")
    check(tuple(int(x) for x in ds.attrs["shape"]) == shape,
          f"{path}: shape attribute {ds.attrs['shape']!r}")
    want_layout = "sf128x4" if path == "/outputs/q" else "row_major"
    check(text(ds.attrs["layout"]) == want_layout, f"{path}: layout {ds.attrs['layout']!r}")
    data = ds[()]
    check(np.array_equal(data.reshape(-1), np.asarray(values).reshape(-1).astype(storage)),
          f"{path}: values differ from the formula")
    if data.size:
        check(ds.compression == "gzip" and ds.fletcher32 and ds.chunks is not None,
              f"{path}: filters {ds.compression}, fletcher32={ds.fletcher32}, chunks={ds.chunks}")
    else:
        check(ds.chunks is None, f"{path}: an empty dataset must be contiguous")


def check_views(f):
    """Byte formats are plain uint8, so a dtype library views them without conversion."""
    try:
        import ml_dtypes
    except ImportError:
        print("note: ml_dtypes missing, view check skipped")
        return
    codes = f["/inputs/codes"][()].reshape(-1)
    decoded = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    # element 1 is code 48 = 0x30: e4m3fn 0.0110.000 = 2^(6-7) = 0.5
    check(codes[1] == 0x30 and decoded[1] == 0.5, f"e4m3fn view: code {codes[1]} -> {decoded[1]}")


def fnv1a(b):
    h = 0xcbf29ce484222325
    for x in b:
        h = ((h ^ x) * 0x100000001b3) % 2**64
    return f"{h:016x}"


def check_external(writer, path):
    """An external runner's outputs file, written the plain h5py way (no qcheck attributes but
    one, a variable-length str as h5py writes it) must be readable by qc_golden_read_outputs."""
    q = ((13 * np.arange(128)) % 256).astype(np.uint8).reshape(16, 8)
    s = np.array([0.5, -2.0, 3.25], dtype=np.float32)
    with h5py.File(path, "w") as f:
        f["outputs/q"] = q
        f["outputs/s"] = s
        f["outputs/s"].attrs["qc_dtype"] = "f32"
    r = subprocess.run([writer, "--read-outputs", path], capture_output=True, text=True)
    want = sorted([f"q u8 u8 row_major [16,8] {fnv1a(q.tobytes())}",
                   f"s f32 f32 row_major [3] {fnv1a(s.tobytes())}"])
    got = sorted(r.stdout.split("\n")[:-1])
    check(r.returncode == 0 and got == want, f"read_outputs of an h5py file: {r.stdout!r} want {want!r}")
    with h5py.File(path, "a") as f:
        f["outputs/s"].attrs["qc_dtype"] = "bf16"  # cannot be float32 storage
    r = subprocess.run([writer, "--read-outputs", path], capture_output=True, text=True)
    check(r.returncode == 2 and "/outputs/s" in r.stdout and "bf16" in r.stdout,
          f"a bf16 qc_dtype on float32 data was accepted: {r.stdout!r}")
    os.remove(path)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    writer, tmp = sys.argv[1], sys.argv[2]
    os.makedirs(tmp, exist_ok=True)
    path = os.path.join(tmp, "h5py_check.h5")
    r = subprocess.run([writer, path], capture_output=True, text=True)
    if r.returncode == SKIP:
        print(r.stdout.strip() or "SKIPPED: qcheck built without HDF5")
        return SKIP
    if r.returncode != 0:
        print("golden_writer failed:", r.returncode, r.stdout, r.stderr)
        return 1
    with h5py.File(path, "r") as f:
        check_root(f)
        check(list(f.keys()) == ["inputs", "outputs", "stages"], f"top groups {list(f.keys())}")
        # creation order (tracked by the store; h5py iterates in it), not alphabetical
        check(list(f["inputs"].keys()) == ["codes", "bits", "idx", "hash", "x", "acc", "none"],
              f"inputs {list(f['inputs'].keys())}")
        for p, (dtype, storage, shape, values) in expected().items():
            check_dataset(f, p, dtype, storage, shape, values)
        check_views(f)
    os.remove(path)
    check_external(writer, os.path.join(tmp, "external.h5"))
    print(f"test_golden_h5py: {'FAILED' if failures else 'passed'} ({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
