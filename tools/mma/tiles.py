#!/usr/bin/env python3
"""tiles.py: writes the FP8 tiles kernels/cuda/mma_probe.cu runs through the tensor cores.

    tiles.py OUT [--random N] [--seed S]

A tile is A [64][32] codes, B [8][32] codes and C [64][8] fp32 (mma_probe.cu has the layout). The
first tiles carry the probe vectors (one dot product per spec, A row s with B column s of a tile,
s < 8; the other rows are zero), built to separate the hypotheses of docs/notes/mma_sm90.md:
how far below the largest term a product is still seen (alignment width), whether what falls off
is cut toward zero or toward -inf, which positions are summed together (group size and order),
how the result is rounded into fp32, subnormal and special inputs. Then N random tiles per format
pair over several exponent spreads. Every value is checked to be exact in its format.
"""
import argparse
import functools
import struct

import ml_dtypes
import numpy as np

FMT = {0: ml_dtypes.float8_e4m3fn, 1: ml_dtypes.float8_e5m2}
PAIRS = [(0, 0), (1, 1), (0, 1), (1, 0)]
TM, TN, TK = 64, 8, 32


def code(v, f):
    """The code of v in format f; v must be exact there."""
    return code_of_bits(int(np.array([v], dtype=np.float32).view(np.uint32)[0]), f)


@functools.lru_cache(maxsize=None)  # keyed by the bits: 0.0 == -0.0 would share one entry
def code_of_bits(u, f):
    v = float(np.array([u], dtype=np.uint32).view(np.float32)[0])
    x = np.array([v], dtype=np.float32).astype(FMT[f])
    back = float(x.astype(np.float32)[0])
    if not (back == v or (np.isnan(back) and np.isnan(v))):
        raise ValueError(f"{v} is not exact in format {f}")
    return int(x.view(np.uint8)[0])


@functools.lru_cache(maxsize=None)
def split(p, fa, fb):
    """a, b exact in fa, fb with a * b == p: a power of two times one of them, the rest in the other."""
    if p == 0:
        return 0.0, 0.0
    for ea in range(-20, 20):
        for a in (2.0**ea, p / 2.0**(-ea)):
            b = p / a
            try:
                code(a, fa), code(b, fb)
                return a, b
            except ValueError:
                continue
    raise ValueError(f"no split of {p} in formats {fa}, {fb}")


class Spec:
    def __init__(self, fa, fb, c, prods=None, a=None, b=None):
        self.fa, self.fb, self.c = fa, fb, np.float32(c)
        if prods is not None:
            a, b = [0.0] * TK, [0.0] * TK
            for k, p in prods.items():
                a[k], b[k] = split(p, fa, fb)
        self.a = [code(v, fa) if not isinstance(v, str) else int(v, 16) for v in a]
        self.b = [code(v, fb) if not isinstance(v, str) else int(v, 16) for v in b]


def probe_specs():
    specs = []
    for fa, fb in PAIRS:
        # Alignment width and cut direction: c = +-2^s, one product +-2^(s-j) at position k.
        for j in range(0, 40):
            for k in (0, 5, 16, 31):
                for sc, sp in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
                    for s in (0, 12):
                        try:
                            specs.append(Spec(fa, fb, sc * 2.0**s, {k: sp * 2.0 ** (s - j) * (1.0 if j % 2 else 1.5)}))
                        except ValueError:
                            pass
        # The same among products (c = 0): 2^0 at k1, -+2^-j at k2: which pairs are summed together.
        for j in (12, 14, 16, 20):
            for k1 in range(TK):
                for k2 in range(TK):
                    if k1 == k2:
                        continue
                    for sp in (1, -1) if j == 14 else (1,):
                        try:
                            specs.append(Spec(fa, fb, 0.0, {k1: 1.0, k2: sp * 2.0**-j}))
                        except ValueError:
                            pass
        # Many small products below the cut: do their dropped parts add up (carries)?
        for j in range(10, 30):
            for cnt in (2, 3, 4, 8, 16, 31):
                for sp in (1, -1):
                    try:
                        prods = {k: sp * 2.0**-j * 1.5 for k in range(1, 1 + cnt)}
                        prods[0] = 1.0
                        specs.append(Spec(fa, fb, 0.0, prods))
                        specs.append(Spec(fa, fb, 1.0, {k: v for k, v in prods.items() if k}))
                    except ValueError:
                        pass
        # Rounding into fp32: c = 2^24 .. 2^26 plus small integers (ties and non-ties).
        for s in (23, 24, 25, 26):
            for v in range(-12, 13):
                for k in (0, 17):
                    try:
                        specs.append(Spec(fa, fb, 2.0**s, {k: float(v) / 2}))
                        specs.append(Spec(fa, fb, -(2.0**s), {k: float(v) / 2}))
                    except ValueError:
                        pass
        # Subnormal accumulators and results; signed zeros.
        for c in (2.0**-149, 2.0**-130, -(2.0**-127), 2.0**-126, 1.5 * 2.0**-126, -0.0, 0.0):
            specs.append(Spec(fa, fb, c, {}))
            specs.append(Spec(fa, fb, c, {3: 2.0 ** -(18 if fa + fb == 0 else 25 if fa + fb == 1 else 32)}))
        for sa, sb in ((1, 1), (1, -1), (-1, 1), (-1, -1)):
            specs.append(Spec(fa, fb, -0.0, a=[sa * 0.0] * TK, b=[sb * 0.0] * TK))
            specs.append(Spec(fa, fb, 0.0, a=[sa * 0.0] * TK, b=[sb * 0.0] * TK))
            specs.append(Spec(fa, fb, -0.0, {0: 1.0, 1: -1.0}))
        # Specials: NaN codes, Inf (e5m2), Inf * 0, Inf - Inf, Inf or NaN in c, fp32 overflow.
        nan_a = "7f" if fa == 0 else "7e"
        base = [0.0] * TK
        specs.append(Spec(fa, fb, 1.0, a=[nan_a] + base[1:], b=[1.0] + base[1:]))
        specs.append(Spec(fa, fb, 1.0, a=["ff" if fa == 0 else "fe"] + base[1:], b=[0.0] * TK))
        if fa == 1:
            specs.append(Spec(fa, fb, 1.0, a=["7c"] + base[1:], b=[1.0] + base[1:]))
            specs.append(Spec(fa, fb, 1.0, a=["7c"] + base[1:], b=[0.0] * TK))
            specs.append(Spec(fa, fb, 1.0, a=["7c", "fc"] + base[2:], b=[1.0, 1.0] + base[2:]))
            specs.append(Spec(fa, fb, float("-inf"), a=["7c"] + base[1:], b=[1.0] + base[1:]))
        for c in (float("inf"), float("-inf"), float("nan"), 3.4e38, -3.4e38):
            specs.append(Spec(fa, fb, c, {}))
            specs.append(Spec(fa, fb, c, {0: 1.0}))
        big = 448.0 if fa == 0 else 57344.0
        bigb = 448.0 if fb == 0 else 57344.0
        specs.append(Spec(fa, fb, 3.4e38, a=[big] * TK, b=[bigb] * TK))
        specs.append(Spec(fa, fb, 3.4028e38, a=[big] * TK, b=[bigb] * TK))
    return specs


def rand_codes(rng, f, shape, spread):
    """Random finite codes; spread = how many binades around 1 (None: all finite codes)."""
    if spread is None:
        c = rng.integers(0, 256, size=shape, dtype=np.uint8)
        bad = (c & 0x7F) == 0x7F if f == 0 else (c & 0x7C) == 0x7C
        c[bad] &= 0xF3 if f == 1 else 0xF7
        return c
    v = rng.standard_normal(shape) * np.exp2(rng.integers(-spread, spread + 1, size=shape))
    lim = 448.0 if f == 0 else 57344.0
    return np.clip(v, -lim, lim).astype(np.float32).astype(FMT[f]).view(np.uint8)


def random_tiles(rng, n):
    tiles = []
    for fa, fb in PAIRS:
        for i in range(n):
            spread = (None, 0, 2, 4, 8)[i % 5]
            a = rand_codes(rng, fa, (TM, TK), spread)
            b = rand_codes(rng, fb, (TN, TK), spread)
            mode = (i // 5) % 4
            if mode == 0:
                c = np.zeros((TM, TN), np.float32)
            else:
                ad = a.view(FMT[fa]).astype(np.float64)
                bd = b.view(FMT[fb]).astype(np.float64)
                ref = np.abs(ad) @ np.abs(bd).T
                scale = (1.0, 2.0**-10, 2.0**10)[mode - 1]
                c = (rng.standard_normal((TM, TN)) * (ref + 1e-30) * scale).astype(np.float32)
            tiles.append((fa, fb, a, b, c))
    return tiles


def spec_tiles(specs, rng):
    """Tiles holding the specs, and where each spec's dot product is: (tile, row, column)."""
    tiles, where = [], []
    by_pair = {}
    for s in specs:
        by_pair.setdefault((s.fa, s.fb), []).append(s)
    for (fa, fb), lst in by_pair.items():
        for i in range(0, len(lst), TN):
            chunk = lst[i : i + TN]
            a = np.zeros((TM, TK), np.uint8)  # zero filler: the random tiles carry the random data
            b = np.zeros((TN, TK), np.uint8)
            c = np.zeros((TM, TN), np.float32)
            for j, s in enumerate(chunk):
                a[j] = s.a
                b[j] = s.b
                c[j, j] = s.c
                where.append((len(tiles), j, j))
            tiles.append((fa, fb, a, b, c))
    return tiles, where


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--random", type=int, default=500, help="random tiles per format pair")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    specs = probe_specs()
    tiles, where = spec_tiles(specs, rng)
    first_random = len(tiles)
    tiles += random_tiles(rng, args.random)
    np.save(args.out + ".specs.npy", np.array(where, dtype=np.int32))
    with open(args.out, "wb") as f:
        f.write(b"QCMT" + struct.pack("<I", len(tiles)))
        for fa, fb, a, b, c in tiles:
            f.write(bytes([fa, fb, 0, 0]))
            f.write(np.ascontiguousarray(a, np.uint8).tobytes())
            f.write(np.ascontiguousarray(b, np.uint8).tobytes())
            f.write(np.ascontiguousarray(c, "<f4").tobytes())
    print(f"{args.out}: {len(specs)} probe specs in tiles 0..{first_random - 1}, {len(tiles)} tiles, "
          f"{len(tiles) * TM * TN} dot products")


if __name__ == "__main__":
    main()
