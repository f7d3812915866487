#!/usr/bin/env python3
"""schedules_h5.py: tools/mma/record_schedules.py's npz (from the H200) as the HDF5 recording that
tests/test_mma_sm90.c reads: per shape a group /MxNxK with a, b (uint8 codes, [rows, K]) and one
fp32 [rows_a, rows_b] dataset per kernel, cropped to the first ROWS rows of a and b (every output
of the crop is a whole K-long dot product, so the K schedule is all there).

    schedules_h5.py IN.npz OUT.h5 --date YYYY-MM-DD [--rows 32]
"""
import argparse

import h5py
import numpy as np

KERNELS = {
    "scaled_mm_fast0": "torch._scaled_mm(a, b.t(), 1, 1, out_dtype=float32, use_fast_accum=False) (cuBLASLt)",
    "scaled_mm_fast1": "torch._scaled_mm(..., use_fast_accum=True) (cuBLASLt)",
    "triton_in_core": "Triton: acc = tl.dot(a, b, acc), BLOCK 64x64x128 (tools/mma/record_schedules.py)",
    "triton_promoted": "Triton: acc += tl.dot(a, b), BLOCK 64x64x128 (tools/mma/record_schedules.py)",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("npz")
    ap.add_argument("out")
    ap.add_argument("--date", required=True)
    ap.add_argument("--rows", type=int, default=32)
    args = ap.parse_args()
    z = np.load(args.npz)
    shapes = sorted({k.split("_")[0] for k in z.files if k.endswith("_a")})
    kw = dict(compression="gzip", compression_opts=9, shuffle=True)
    with h5py.File(args.out, "w") as f:
        f.attrs.update({"torch": str(z["torch"]), "triton": str(z["triton"]), "device": str(z["device"]),
                        "driver": "580.159.04 (CUDA 13.0)", "date": args.date,
                        "inputs": "e4m3fn, torch.randn * 2 cast, seed 7; unit scales, fp32 output"})
        for s in shapes:
            g = f.create_group(s)
            r = args.rows
            g.create_dataset("a", data=z[s + "_a"][:r], **kw)
            g.create_dataset("b", data=z[s + "_b"][:r], **kw)
            for k, what in KERNELS.items():
                d = g.create_dataset(k, data=z[f"{s}_{k}"][:r, :r], **kw)
                d.attrs["kernel"] = what
    print(f"{args.out}: {shapes}")


if __name__ == "__main__":
    main()
