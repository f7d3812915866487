"""What every recorder shares: the edge inputs, the provenance and the golden writer
(golden/README.md format 1, plus the real_* provenance attributes of golden/real/README.md)."""
import argparse
import json
import os
import platform
import subprocess
import sys
import traceback

import h5py
import numpy as np

STORAGE = {"f32": "<f4", "e8m0": "u1", "e4m3fn": "u1", "e4m3fnuz": "u1", "e5m2": "u1", "e5m2fnuz": "u1",
           "e2m3": "u1", "e3m2": "u1", "e2m1x2": "u1", "e2m1": "u1", "u8": "u1", "bf16": "<u2", "f16": "<u2"}


def _block(kind, n, rng):
    """One block of n float32 values of an edge class (docs/spec/formats.md §5, §4)."""
    x = rng.standard_normal(n)
    if kind == "zero":
        x[:] = 0
    elif kind in ("+inf", "-inf", "nan"):
        x[rng.randint(n)] = {"+inf": np.inf, "-inf": -np.inf, "nan": np.nan}[kind]
    elif kind == "all_inf":
        x[:] = np.inf
    elif kind == "subnormal":  # amax below 2^-126: e8m0 of the amax underflows
        x *= 2.0 ** -140
    elif kind == "tiny":
        x *= 2.0 ** -120
    elif kind == "huge":  # amax near the f32 max: the scale's exponent saturates
        x = x / np.abs(x).max() * 3.0e38
    elif kind == "pow2":  # amax exactly a power of two: FLOOR and CEIL agree, RCEIL differs
        x = x / np.abs(x).max() * 4.0
    elif kind == "below_pow2":  # amax's mantissa all ones: CEIL and EVEN round up
        x = x / np.abs(x).max() * np.float32(np.nextafter(np.float32(8), np.float32(0)))
    elif kind == "grid":  # multiples of 2^-4 of the amax: midpoints of e2m1, e2m3, e3m2 after the scale
        x = np.round(x * 4) / 16
        x[0] = 6.0
    elif kind == "single":
        x[:] = 0
        x[rng.randint(n)] = rng.standard_normal() * 100
    elif kind == "outlier":
        x[rng.randint(n)] *= 1000
    elif kind.startswith("above_pow2_"):
        # amax / M just above 2^-20 for the element max M: ceil(log2) of the exact descale is -19,
        # of a float log2 that rounds to -20 it is -20 (RCEIL)
        m = np.float32(float(kind[len("above_pow2_"):]) * 2.0 ** -20)
        x = (x / np.abs(x).max() * m).astype(np.float32)
        x[np.argmax(np.abs(x))] = np.copysign(np.nextafter(m, np.float32(np.inf)), 1.0)
    return x.astype(np.float32)


KINDS = ["normal", "zero", "+inf", "-inf", "nan", "all_inf", "subnormal", "tiny", "huge", "pow2", "below_pow2",
         "grid", "single", "outlier", "normal", "grid", "above_pow2_448", "above_pow2_57344", "above_pow2_6",
         "above_pow2_7.5", "above_pow2_28"]
NONFINITE = ("+inf", "-inf", "nan", "all_inf")


def kind_at(r, b, finite=False):
    """The class of block b of row r (the analysis of a mismatch names it)."""
    k = KINDS[(r + b * 5) % len(KINDS)]
    return "normal" if finite and k in NONFINITE else k


def edge_inputs(block, rows=24, blocks_per_row=8, seed=20261202, finite=False):
    """rows x (blocks_per_row * block) float32: every KINDS class in several positions; finite:
    the non-finite classes replaced by normal blocks (a per-tensor amax that is a number)."""
    rng = np.random.RandomState(seed)
    out = np.empty((rows, blocks_per_row * block), dtype=np.float32)
    for r in range(rows):
        for b in range(blocks_per_row):
            out[r, b * block:(b + 1) * block] = _block(kind_at(r, b, finite), block, rng)
    return out


def run_steps(steps, out):
    """Runs each (name, function) of a recorder; one part that cannot run does not stop the others.
    Exits 1 naming the failed parts, 0 when all ran."""
    failed = []
    for name, step in steps:
        try:
            step()
        except Exception:
            traceback.print_exc()
            failed.append(name)
    print("recorded into %s%s" % (out, "; FAILED: " + ", ".join(failed) if failed else ""))
    sys.exit(1 if failed else 0)


def command_line(doc, library, version):
    """The recorders' arguments (--out, --date, --devices): the parsed args, the provenance and the
    devices that are there (cuda skipped, with a note, where torch sees no GPU)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--date", required=True, help="the recording's date (YYYY-MM-DD): same date, same bytes")
    ap.add_argument("--devices", default="cpu,cuda", help="cuda is skipped when torch sees no GPU")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    devices = [d for d in a.devices.split(",") if d != "cuda" or _have_gpu()]
    if len(devices) < len(a.devices.split(",")):
        print("no GPU: cuda skipped")
    return a, provenance(library, version, a.date), devices


def _have_gpu():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def device_name(device):
    if device == "cpu":
        return "cpu: %s" % (platform.processor() or platform.machine())
    import torch
    return "cuda: %s (sm_%d%d)" % ((torch.cuda.get_device_name(0),) + torch.cuda.get_device_capability(0))


def provenance(library, version, date):
    p = {"library": library, "version": version, "date": date, "torch": "none", "toolkit": "none",
         "numpy": np.__version__, "driver": "none"}
    try:
        import torch
        p["torch"], p["toolkit"] = torch.__version__, "cuda %s" % torch.version.cuda
    except ImportError:
        pass
    try:
        p["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                     capture_output=True, text=True, timeout=30).stdout.strip() or "none"
    except (OSError, subprocess.SubprocessError):
        pass
    return p


def _dataset(group, name, qc_dtype, values, attrs=()):
    data = np.ascontiguousarray(values, dtype=STORAGE[qc_dtype])
    big = data.nbytes > 65536  # deflate where it pays; HDF5's deflate is deterministic
    d = group.create_dataset(name, data=data, track_times=False, **(dict(compression="gzip", shuffle=True) if big else {}))
    d.attrs["qc_dtype"] = np.bytes_(qc_dtype)
    d.attrs["shape"] = np.array(data.shape, dtype=np.int64)
    d.attrs["layout"] = np.bytes_("row_major")
    for k, v in attrs:
        d.attrs[k] = np.bytes_(v)


def write(path, params, x, outputs, prov, op="quant"):
    """One golden: /inputs/x, /outputs/NAME (qc_dtype, values[, ((attribute, value), ..)]), root attributes of format 1 with
    case "real:<library>.<function>" and backend "<library>-<version>@<cpu|cuda>" (what `qcheck list
    profiles` names), and the provenance as real_<key> attributes."""
    tmp = path + ".tmp"
    with h5py.File(tmp, "w", track_order=True) as f:
        a = f.attrs
        for k, v in (("qcheck_version", "0.1.0"), ("case", "real:%s.%s" % (prov["library"],
                     prov["function"].rsplit(".", 1)[1])), ("op", op),
                     ("params", json.dumps({k: str(v) for k, v in params.items()}, separators=(",", ":"))),
                     ("profile", params["profile"]), ("backend", "%s-%s@%s" % (prov["library"], prov["version"], prov["where"])), ("git_revision", "none"),
                     ("created", prov["date"])):
            a[k] = np.bytes_(v)
        a["format_version"] = np.int32(1)
        a["seed"] = np.uint64(0)
        for k, v in sorted(prov.items()):
            a["real_" + k] = np.bytes_(str(v))
        _dataset(f.create_group("inputs", track_order=True), "x", "f32", x)
        g = f.create_group("outputs", track_order=True)
        for name, (qc_dtype, values, *attrs) in outputs.items():
            _dataset(g, name, qc_dtype, values, attrs[0] if attrs else ())
    os.replace(tmp, path)
