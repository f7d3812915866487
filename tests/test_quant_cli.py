#!/usr/bin/env python3
"""qcheck quant/dequant options that compose recipes with other parts of qcheck:

- --layout MAP sends PREFIX.scale through a layout map: the bytes equal `qcheck layout apply` of
  the canonical scales, and dequant --layout inverts it (same fp32 output as without the map);
- nvfp4 --param sf=ue8m0 is TRT-LLM's UE8M0 branch (docs/spec/formats.md §4.2 3''): expected bytes
  computed here with numpy + ml_dtypes from the spec's formula, not by qcheck.

usage: test_quant_cli.py --qcheck PATH
"""
import argparse
import os
import subprocess
import sys
import tempfile

try:
    import ml_dtypes
    import numpy as np
except ImportError as e:
    print(f"SKIPPED: {e}")
    sys.exit(77)

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def qc(qcheck, *args):
    p = subprocess.run([qcheck, *args], capture_output=True, text=True)
    return p.returncode, p.stderr


def test_layout(qcheck, d):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((200, 64)).astype(np.float32)
    xf = os.path.join(d, "x.f32")
    x.tofile(xf)
    base, laid = os.path.join(d, "c"), os.path.join(d, "s")
    rc1, _ = qc(qcheck, "quant", "--recipe", "nvfp4", "--shape", "200x64", xf, base)
    rc2, _ = qc(qcheck, "quant", "--recipe", "nvfp4", "--shape", "200x64", "--layout", "sf128x4", xf, laid)
    ref = os.path.join(d, "ref.scale")
    rc3, _ = qc(qcheck, "layout", "apply", "--map", "sf128x4", "--rows", "200", "--cols", "4", base + ".scale", ref)
    same = open(ref, "rb").read() == open(laid + ".scale", "rb").read()
    check(rc1 == rc2 == rc3 == 0 and same and os.path.getsize(laid + ".scale") == 256 * 4,
          "quant --layout sf128x4 writes the 128x4-swizzled scales (256 x 4 bytes for 200 rows)")
    y1, y2 = os.path.join(d, "y1"), os.path.join(d, "y2")
    qc(qcheck, "dequant", "--recipe", "nvfp4", "--shape", "200x64", base, y1)
    rc, _ = qc(qcheck, "dequant", "--recipe", "nvfp4", "--shape", "200x64", "--layout", "sf128x4", laid, y2)
    check(rc == 0 and open(y1, "rb").read() == open(y2, "rb").read(), "dequant --layout inverts it")
    rc, err = qc(qcheck, "quant", "--recipe", "token_group", "--shape", "200x128", "--param", "scale_layout=col",
                 "--layout", "sf128x4", xf, os.path.join(d, "z"))
    check(rc == 2 and "choose one" in err, "scale_layout and --layout together are refused")


def e8m0_ceil_satfinite(v):
    """cvt.rp.satfinite.ue8m0 of a non-negative fp32 (formats.md §2.2): ceil of the exponent, 0 -> 0."""
    b = np.frombuffer(np.float32(v).tobytes(), np.uint32)[0]
    e, f = int(b >> 23) & 0xFF, int(b) & 0x7FFFFF
    if e == 0:
        return 1 if f > 0x400000 else 0
    return min(e + (f != 0), 254)


def test_sf_ue8m0(qcheck, d):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((3, 48)) * rng.choice([0.01, 1.0, 50.0], (3, 48))).astype(np.float32)
    x[1, 16:32] = 0.0  # an all-zero block: vecMax == 0 -> outputScale 0
    xf, out = os.path.join(d, "u.f32"), os.path.join(d, "u")
    x.tofile(xf)
    rc, err = qc(qcheck, "quant", "--recipe", "nvfp4", "--profile", "flashinfer-fast", "--shape", "3x48",
                 "--param", "sf=ue8m0", xf, out)
    check(rc == 0 and not os.path.exists(out + ".gscale"), f"sf=ue8m0 quantizes with no global scale ({err.strip()})")
    rcp6 = np.float32(1.0) / np.float32(6.0)  # rcp.approx(6.0) == fl32(1/6) on the H200 (formats.md §13)
    scales, codes = [], []
    for r in range(3):
        for b in range(3):
            blk = x[r, 16 * b:16 * b + 16]
            vmax = np.float32(np.abs(blk).max())
            e = e8m0_ceil_satfinite(np.float32(vmax * rcp6))
            scales.append(e)
            mult = np.float32(0.0) if vmax == 0 else np.float32(2.0 ** (127 - e)) if e else np.float32(1.0)
            y = np.clip((blk * mult).astype(np.float32), -6, 6)  # cvt.rn.satfinite.e2m1
            codes.extend(y.astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & 0xF)
    codes = np.array(codes, np.uint8)
    packed = (codes[0::2] | (codes[1::2] << 4)).astype(np.uint8)
    got_s = np.fromfile(out + ".scale", np.uint8)
    got_q = np.fromfile(out + ".q", np.uint8)
    check(list(got_s) == scales, f"e8m0 scale per 16 = ceil(vecMax * rcp6): {list(got_s)} vs {scales}")
    check(np.array_equal(got_q, packed), "E2M1 codes of x * 2^(127-E), even element in the low nibble")
    rc, err = qc(qcheck, "quant", "--recipe", "nvfp4", "--profile", "flashinfer-te", "--shape", "3x48",
                 "--param", "sf=ue8m0", xf, out)
    check(rc == 2 and "flashinfer-fast" in err, "sf=ue8m0 names the profile that defines it")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qcheck", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        test_layout(a.qcheck, d)
        test_sf_ue8m0(a.qcheck, d)
    print(f"{len(FAILS)} checks failed" if FAILS else "all quant CLI checks passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
