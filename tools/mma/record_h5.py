#!/usr/bin/env python3
"""record_h5.py: the tensor-core recording CI checks reference/arith/mma_sm90.h against.

    record_h5.py TILES D OUT.h5 --device "..." --driver "..." --date YYYY-MM-DD [--random-tiles N]

TILES (tools/mma/tiles.py, with its .specs.npy) and D (kernels/cuda/mma_probe.cu's output for
those tiles on the GPU) become one dot product per row: every probe spec, then every output of the
first N random tiles. Datasets: a, b [n, 32] uint8 codes; fa, fb [n] uint8 (0 e4m3fn, 1 e5m2);
c [n] float32 (the accumulator in); d_wgmma, d_mma_sync [n] float32 (what each instruction wrote).
Attributes: provenance (device, driver, toolkit, date, programs, instructions).
"""
import argparse
import struct

import h5py
import numpy as np

TM, TN, TK = 64, 8, 32
REC = np.dtype([("fa", "u1"), ("fb", "u1"), ("pad", "u1", 2), ("a", "u1", (TM, TK)), ("b", "u1", (TN, TK)),
                ("c", "<f4", (TM, TN))])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tiles")
    ap.add_argument("d")
    ap.add_argument("out")
    ap.add_argument("--device", required=True)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--toolkit", default="CUDA 13.0 (nvcc 13.0, sm_90a)")
    ap.add_argument("--date", required=True)
    ap.add_argument("--random-tiles", type=int, default=32)
    args = ap.parse_args()
    raw = open(args.tiles, "rb").read()
    if raw[:4] != b"QCMT":
        raise SystemExit(f"{args.tiles}: not a tile file")
    n = struct.unpack("<I", raw[4:8])[0]
    tiles = np.frombuffer(raw[8:], dtype=REC, count=n)
    draw = open(args.d, "rb").read()
    if draw[:4] != b"QCMD" or struct.unpack("<I", draw[4:8])[0] != n:
        raise SystemExit(f"{args.d}: not the output for {n} tiles")
    d = np.frombuffer(draw[8:], dtype="<f4").reshape(n, 2, TM, TN)
    where = [tuple(w) for w in np.load(args.tiles + ".specs.npy")]
    first_random = max(w[0] for w in where) + 1
    rand = range(first_random, n)
    step = max(1, len(rand) // args.random_tiles)
    where += [(t, i, j) for t in list(rand)[::step][: args.random_tiles] for i in range(TM) for j in range(TN)]
    t, i, j = (np.array(x) for x in zip(*where))
    with h5py.File(args.out, "w") as f:
        kw = dict(compression="gzip", compression_opts=9, shuffle=True)
        f.create_dataset("a", data=tiles["a"][t, i], **kw)
        f.create_dataset("b", data=tiles["b"][t, j], **kw)
        f.create_dataset("fa", data=tiles["fa"][t], **kw)
        f.create_dataset("fb", data=tiles["fb"][t], **kw)
        f.create_dataset("c", data=tiles["c"][t, i, j], **kw)
        f.create_dataset("d_wgmma", data=d[t, 1, i, j], **kw)
        f.create_dataset("d_mma_sync", data=d[t, 0, i, j], **kw)
        f.attrs.update({
            "device": args.device, "driver": args.driver, "toolkit": args.toolkit, "date": args.date,
            "programs": "kernels/cuda/mma_probe.cu on tools/mma/tiles.py --seed 1 (probe specs, random tiles)",
            "instructions": "d_wgmma: wgmma.mma_async.sync.aligned.m64n8k32.f32.<fa>.<fb> (A registers, B shared, "
                            "no swizzle); d_mma_sync: mma.sync.aligned.m16n8k32.row.col.f32.<fa>.<fb>.f32",
            "probe_specs": len(where) - args.random_tiles * TM * TN, "random_tiles": args.random_tiles,
        })
    print(f"{args.out}: {len(where)} dot products")


if __name__ == "__main__":
    main()
