#!/usr/bin/env python3
"""schedules_h5.py: tools/mma/record_schedules.py's npz (from the H200) as the HDF5 recording that
tests/test_mma_sm90.c reads: per shape a group /MxNxK with a, b (uint8 codes, [rows, K]) and one
fp32 [rows_a, rows_b] dataset per kernel, cropped to the first ROWS rows of a and b (every output
of the crop is a whole K-long dot product, so the K schedule is all there). Where the run has them,
the scaled products too: tensor_sa, tensor_sb (fp32 scalars), row_sa [rows], row_sb [rows], and
tensor_{f32,bf16}_fast{0,1}, row_bf16_fast{0,1} (bf16 as uint16 bits).

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
            if s + "_tensor_sa" in z.files:
                g.create_dataset("tensor_sa", data=np.array([z[s + "_tensor_sa"]], np.float32))
                g.create_dataset("tensor_sb", data=np.array([z[s + "_tensor_sb"]], np.float32))
                g.create_dataset("row_sa", data=z[s + "_row_sa"].reshape(-1)[:r].astype(np.float32))
                g.create_dataset("row_sb", data=z[s + "_row_sb"].reshape(-1)[:r].astype(np.float32))
                for fast in (0, 1):
                    for name in (f"tensor_f32_fast{fast}", f"tensor_bf16_fast{fast}", f"row_bf16_fast{fast}"):
                        v = z[f"{s}_{name}"][:r, :r]
                        g.create_dataset(name, data=v.view(np.uint16) if v.dtype == np.int16 else v, **kw)
    print(f"{args.out}: {shapes}")


if __name__ == "__main__":
    main()
