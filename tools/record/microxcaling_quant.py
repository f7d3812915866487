"""Records what Microsoft's microxcaling library (the OCP MX v1.0 emulation, mx/mx_ops.py) computes,
as qcheck goldens (golden/real/README.md): profile ocp of mxfp8, mxfp6 (e2m3, e3m2) and mxfp4.

microxcaling emulates MX in float32 ("fake quantization"): _quantize_mx returns each element
already multiplied back by its block's scale, never the codes and scale bytes. What it computes is
therefore recorded as op dequant (docs/spec/cli.md: reference quant, then dequant, in fp32), output
y: the check is that qcheck's quant bytes of profile ocp decode to exactly these floats (NaN
payloads aside: NAN_ANY below).

The package is loaded from a checkout of github.com/microsoft/microxcaling (--mx ROOT, the
directory holding `mx/`) and run, never copied; its Python path is used (custom_cuda=False: the
C++/CUDA extension is a faster copy of the same arithmetic that needs a build), on the CPU and on
the GPU.

    python3 tools/record/microxcaling_quant.py --mx ROOT --commit 7bc4195 --out DIR --date D"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata  # noqa: E402

# A block with an Inf or NaN gets microxcaling's NaN shared exponent, so all of its y are NaN; their
# payload is what torch's arithmetic on that device makes of a NaN (0xFFFFFFFF on the x86 CPU,
# 0x7FFFFFFF on the GPU), which no MX byte encodes: a NaN matches any NaN (golden/README.md).
NAN_ANY = (("nan_payload", "any"),)

# qcheck recipe and element <- microxcaling's elem_format name
FORMATS = (("mxfp8", "e4m3fn", "fp8_e4m3"), ("mxfp8", "e5m2", "fp8_e5m2"), ("mxfp6", "e2m3", "fp6_e2m3"),
           ("mxfp6", "e3m2", "fp6_e3m2"), ("mxfp4", "e2m1", "fp4_e2m1"))


def main():
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--mx", required=True, help="directory holding microxcaling's mx/")
    pre.add_argument("--commit", required=True, help="the checkout's commit, e.g. 7bc4195")
    known, rest = pre.parse_known_args()
    sys.argv = [sys.argv[0]] + rest
    a, prov, devices = realdata.command_line(__doc__, "microxcaling", known.commit)
    sys.path.insert(0, known.mx)
    from mx.mx_ops import _quantize_mx
    x = realdata.edge_inputs(32)
    for device in devices:
        for recipe, elem, mx_name in FORMATS:
            y = _quantize_mx(torch.from_numpy(x).to(device), 8, mx_name, shared_exp_method="max", axes=[-1],
                             block_size=32, round="nearest", flush_fp32_subnorms=False, custom_cuda=False)
            params = {"recipe": recipe, "profile": "ocp", "rows": x.shape[0], "cols": x.shape[1]}
            if recipe != "mxfp4":  # mxfp4 has one element format
                params["elem"] = elem
            name = "quantize_mx-%s-%s" % (elem, device)
            realdata.write(os.path.join(a.out, name + ".h5"), params, x,
                           {"y": ("f32", y.contiguous().cpu().numpy(), NAN_ANY)},
                           dict(prov, function="mx.mx_ops._quantize_mx",
                                arguments="_quantize_mx(x, 8, '%s', shared_exp_method='max', axes=[-1], block_size=32, "
                                          "round='nearest', flush_fp32_subnorms=False, custom_cuda=False) (x f32 [%d, %d])"
                                          % ((mx_name,) + x.shape),
                                device=realdata.device_name(device), where=device), op="dequant")
            print("recorded", name)
    print("recorded into %s" % a.out)


if __name__ == "__main__":
    main()
