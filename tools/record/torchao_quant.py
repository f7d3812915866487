"""Records what torchao's own quantizers write, as qcheck goldens (golden/real/README.md).

Runs torchao's code (never a copy of it) on the inputs of realdata.edge_inputs() and writes one
file per call into OUT/: the inputs, the bytes torchao returned in qcheck's byte forms, the
qcheck recipe/profile/params that must reproduce them, and where they came from. `qcheck golden
verify` then re-runs the reference on each (tests/conformance.cmake).

    python3 tools/record/torchao_quant.py --out golden/real/torchao-0.18.0 --date 2026-12-02

Functions recorded:
  to_mx(x, elem, 32, scaling_mode)   elem e4m3fn e5m2 fp6_e2m3 fp6_e3m2 fp4; FLOOR CEIL EVEN RCEIL
  nvfp4_quantize(x, 16, per_tensor_scale)   None (torchao's default) and per_tensor_amax_to_scale(amax)
on the CPU and, where there is one, on the GPU (eager mode)."""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata  # noqa: E402

import torchao  # noqa: E402
from torchao.prototype.mx_formats.config import ScaleCalculationMode  # noqa: E402
from torchao.prototype.mx_formats.mx_tensor import to_mx  # noqa: E402
from torchao.prototype.mx_formats.nvfp4_tensor import nvfp4_quantize, per_tensor_amax_to_scale  # noqa: E402

# torchao's element dtype -> (qcheck recipe, its elem param, the qc_dtype of the codes)
ELEMS = {
    "e4m3fn": (torch.float8_e4m3fn, "mxfp8", "e4m3fn", "e4m3fn"),
    "e5m2": (torch.float8_e5m2, "mxfp8", "e5m2", "e5m2"),
    "fp6_e2m3": ("fp6_e2m3", "mxfp6", "e2m3", "e2m3"),
    "fp6_e3m2": ("fp6_e3m2", "mxfp6", "e3m2", "e3m2"),
    "fp4": (torch.float4_e2m1fn_x2, "mxfp4", None, "e2m1x2"),
}
MODES = {"FLOOR": "torchao-floor", "CEIL": "torchao-ceil", "EVEN": "torchao-even", "RCEIL": "torchao-rceil"}


def u8(t):
    """The bytes of a torch tensor of any 1-byte dtype, as numpy uint8."""
    return t.contiguous().view(torch.uint8).cpu().numpy()


def profile_on(profile, recipe, device):
    """On a CUDA tensor the fp4/fp6 casts read the GPU's canonical NaN: the -cuda profiles."""
    return profile + "-cuda" if device == "cuda" and recipe in ("mxfp6", "mxfp4", "nvfp4") else profile


def record_mx(x, device, name, out, prov):
    elem, recipe, elem_param, qc_dtype = ELEMS[name]
    for mode, profile in MODES.items():
        profile = profile_on(profile, recipe, device)
        scale, data = to_mx(torch.from_numpy(x).to(device), elem, 32, ScaleCalculationMode[mode])
        codes = u8(data).reshape(x.shape[0], -1)
        if recipe == "mxfp6" and codes.max(initial=0) >= 64:
            raise SystemExit("fp6 codes above 6 bits: torchao changed its unpacked form")
        params = {"recipe": recipe, "profile": profile, "rows": x.shape[0], "cols": x.shape[1]}
        if elem_param:
            params["elem"] = elem_param
        call = "to_mx(x, %s, 32, ScaleCalculationMode.%s)" % (name, mode)
        realdata.write(os.path.join(out, "to_mx-%s-%s-%s.h5" % (name, mode.lower(), device)), params, x,
                       {"q": (qc_dtype, codes.reshape(-1)), "scale": ("e8m0", u8(scale).reshape(-1))},
                       dict(prov, function="torchao.prototype.mx_formats.mx_tensor.to_mx", arguments=call,
                            device=realdata.device_name(device), where=device))


def record_nvfp4(device, out, prov):
    """per_tensor_scale None (the default), given from the amax of a finite tensor, and from the
    amax of the edge tensor (NaN: every element's code comes from a NaN)."""
    for kind, x in (("none", realdata.edge_inputs(16)), ("amax", realdata.edge_inputs(16, finite=True)),
                    ("amax_nan", realdata.edge_inputs(16))):
        xt = torch.from_numpy(x).to(device)
        params = {"recipe": "nvfp4", "profile": profile_on("torchao", "nvfp4", device), "rows": x.shape[0],
                  "cols": x.shape[1]}
        if kind == "none":
            scale, data = nvfp4_quantize(xt, 16, None)
            gscale, call = np.float32(1), "nvfp4_quantize(x, 16, per_tensor_scale=None)"
        else:
            pts = per_tensor_amax_to_scale(torch.amax(torch.abs(xt)).float())
            scale, data = nvfp4_quantize(xt, 16, pts)
            gscale = np.float32(pts.item())
            call = "nvfp4_quantize(x, 16, per_tensor_amax_to_scale(amax(|x|)))"
            params["gscale_decode"] = float(gscale).hex()
        realdata.write(os.path.join(out, "nvfp4_quantize-%s-%s.h5" % (kind, device)), params, x,
                       {"q": ("e2m1x2", u8(data).reshape(-1)), "scale": ("e4m3fn", u8(scale).reshape(-1)),
                        "gscale": ("f32", np.array([gscale], dtype=np.float32))},
                       dict(prov, function="torchao.prototype.mx_formats.nvfp4_tensor.nvfp4_quantize",
                            arguments=call, device=realdata.device_name(device), where=device))


def main():
    a, prov, devices = realdata.command_line(__doc__, "torchao", torchao.__version__)
    for device in devices:
        mx = realdata.edge_inputs(32)
        for name in ELEMS:
            record_mx(mx, device, name, a.out, prov)
        record_nvfp4(device, a.out, prov)
    print("recorded into %s" % a.out)


if __name__ == "__main__":
    main()
