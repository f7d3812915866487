"""Records what ml_dtypes' casts write, as qcheck goldens (golden/real/README.md).

np.asarray(x, float32).astype(dtype) on the CPU for every low-precision dtype ml_dtypes has that
qcheck knows, over: every bf16 bit pattern widened to fp32, random fp32 bit patterns, and every
midpoint between neighbouring codes of the target with its two fp32 neighbours. Runs wherever
ml_dtypes installs (no GPU, no torch); `qcheck golden verify` re-runs the ml_dtypes cast profile of
the release (`ml_dtypes` for 0.7, `ml_dtypes-0.6` for 0.5-0.6) on each.

    python3 tools/record/mldtypes_cast.py --out golden/real/ml_dtypes-0.7.0 --date 2026-12-02"""
import os
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata  # noqa: E402

# qcheck's format name -> ml_dtypes dtype, code storage
DTYPES = {
    "e4m3fn": ml_dtypes.float8_e4m3fn, "e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "e5m2": ml_dtypes.float8_e5m2,
    "e5m2fnuz": ml_dtypes.float8_e5m2fnuz, "e8m0": ml_dtypes.float8_e8m0fnu, "e2m1": ml_dtypes.float4_e2m1fn,
    "e2m3": ml_dtypes.float6_e2m3fn, "e3m2": ml_dtypes.float6_e3m2fn, "bf16": ml_dtypes.bfloat16,
}


def midpoints(dtype):
    """The fp32 midpoints of neighbouring finite codes of dtype (decoded by ml_dtypes), with their
    fp32 neighbours."""
    wide = np.dtype(dtype).itemsize == 2  # bf16, f16
    codes = np.arange(0, 65536, 16, dtype=np.uint16) if wide else np.arange(256, dtype=np.uint8)
    v = codes.view(dtype).astype(np.float64)
    v = np.unique(v[np.isfinite(v)])
    m = ((v[1:] + v[:-1]) / 2).astype(np.float32)
    return np.concatenate([m, np.nextafter(m, np.float32(np.inf)), np.nextafter(m, np.float32(-np.inf))])


def inputs(dtype):
    rng = np.random.RandomState(20261202)
    bf16 = (np.arange(65536, dtype=np.uint32) << 16).view(np.float32)
    bits = rng.randint(0, 2 ** 32, size=16384, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([bf16, bits, midpoints(dtype)]).astype(np.float32)


def profile_of(version):
    """The qcheck cast profile that names this release (qcheck list profiles --for ml_dtypes==V)."""
    major, minor = (int(p) for p in version.split(".")[:2])
    return "ml_dtypes" if (major, minor) >= (0, 7) else "ml_dtypes-0.6"


def main():
    a, prov, _ = realdata.command_line(__doc__, "ml_dtypes", ml_dtypes.__version__)
    for name, dtype in DTYPES.items():
        x = inputs(dtype)
        with np.errstate(all="ignore"):
            y = x.astype(dtype)
        codes = y.view(np.uint16 if dtype == ml_dtypes.bfloat16 else np.uint8)
        params = {"to": name, "profile": profile_of(ml_dtypes.__version__), "n": x.size}
        realdata.write(os.path.join(a.out, "cast-%s-cpu.h5" % name), params, x, {"y": (name, codes)},
                       dict(prov, function="numpy.ndarray.astype", arguments="x.astype(ml_dtypes.%s)" % dtype.__name__,
                            device=realdata.device_name("cpu"), where="cpu"), op="cast")
    print("recorded into %s" % a.out)


if __name__ == "__main__":
    main()
