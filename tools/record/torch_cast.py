"""Records what torch's own casts write, as qcheck goldens (golden/real/README.md).

x.to(dtype) from float32 on the CPU and, where there is one, on the GPU, for every low-precision
dtype torch has, over: every bf16 bit pattern widened to fp32, random fp32 bit patterns (NaN payloads,
subnormals), and every midpoint between neighbouring codes of the target with its two fp32
neighbours (for bf16 and f16: those of every 16th code). One file per dtype and device; `qcheck golden
verify` re-runs the `torch` cast profile (`torch-cpu` / `torch-cuda` for bf16 and f16) on each (tests/conformance.sh).

    python3 tools/record/torch_cast.py --out golden/real/torch-2.11.0 --date 2026-12-02"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata  # noqa: E402

# qcheck's format name -> torch dtype, code storage
DTYPES = {
    "e4m3fn": (torch.float8_e4m3fn, "u1"), "e4m3fnuz": (torch.float8_e4m3fnuz, "u1"),
    "e5m2": (torch.float8_e5m2, "u1"), "e5m2fnuz": (torch.float8_e5m2fnuz, "u1"),
    "e8m0": (torch.float8_e8m0fnu, "u1"), "bf16": (torch.bfloat16, "<u2"), "f16": (torch.float16, "<u2"),
}


def midpoints(dtype, storage):
    """The fp32 midpoints of neighbouring finite codes of dtype (decoded by torch) and their neighbours."""
    n = 256 if storage == "u1" else 65536
    codes = np.arange(0, n, 1 if n == 256 else 16, dtype=np.uint8 if n == 256 else np.uint16)
    v = torch.from_numpy(codes.view(np.int8 if n == 256 else np.int16)).view(dtype).float().numpy()
    v = np.unique(v[np.isfinite(v)].astype(np.float64))
    m = ((v[1:] + v[:-1]) / 2).astype(np.float32)
    return np.concatenate([m, np.nextafter(m, np.float32(np.inf)), np.nextafter(m, np.float32(-np.inf))])


def inputs(dtype, storage):
    rng = np.random.RandomState(20261202)
    bf16 = (np.arange(65536, dtype=np.uint32) << 16).view(np.float32)
    bits = rng.randint(0, 2 ** 32, size=16384, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([bf16, bits, midpoints(dtype, storage)]).astype(np.float32)


def main():
    a, prov, devices = realdata.command_line(__doc__, "torch", torch.__version__.split("+")[0])
    for device in devices:
        for name, (dtype, storage) in DTYPES.items():
            x = inputs(dtype, storage)
            y = torch.from_numpy(x).to(device).to(dtype).cpu()
            codes = y.view(torch.uint8 if storage == "u1" else torch.int16).numpy().view(storage)
            # bf16/f16 NaNs differ between the CPU's vectorized kernels and the GPU (formats.md §15)
            profile = "torch-%s" % device if name in ("bf16", "f16") else "torch"
            params = {"to": name, "profile": profile, "n": x.size}
            realdata.write(os.path.join(a.out, "cast-%s-%s.h5" % (name, device)), params, x, {"y": (name, codes)},
                           dict(prov, function="torch.Tensor.to", arguments="x.to(torch.%s)" % str(dtype).split(".")[1],
                                device=realdata.device_name(device), where=device), op="cast")
    print("recorded into %s" % a.out)


if __name__ == "__main__":
    main()
