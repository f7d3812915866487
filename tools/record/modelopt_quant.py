"""Records what NVIDIA ModelOpt's MXFP4 quantizer writes (MXFP4QTensor.quantize of
modelopt/torch/quantization/qtensor/mxfp4_tensor.py, the code sglang's MXFP4QuantizeUtil follows), as
qcheck goldens (golden/real/README.md), on the CPU and on the GPU: profiles modelopt and modelopt-cpu of mxfp4.

The file is loaded from an unpacked nvidia-modelopt wheel (--modelopt ROOT: the directory holding
`modelopt/`) and run, never copied; its one import from modelopt, BaseQuantizedTensor, is replaced by
a stand-in that keeps the constructor's three arguments (the quantizer only constructs it).

    python3 tools/record/modelopt_quant.py --modelopt ROOT --version 0.47.0 --out golden/real/modelopt-0.47.0 --date D"""
import argparse
import importlib.util
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata  # noqa: E402

QTENSOR = "modelopt.torch.quantization.qtensor"


class _QTensor:
    def __init__(self, original_shape, original_dtype, quantized_data):
        self.original_shape, self.original_dtype, self.quantized_data = original_shape, original_dtype, quantized_data


def load_mxfp4(root):
    for pkg in ("modelopt", "modelopt.torch", "modelopt.torch.quantization", QTENSOR):
        m = types.ModuleType(pkg)
        m.__path__ = []
        sys.modules[pkg] = m
    base = types.ModuleType(QTENSOR + ".base_qtensor")
    base.BaseQuantizedTensor = _QTensor
    sys.modules[base.__name__] = base
    path = os.path.join(root, *QTENSOR.split(".")) + "/mxfp4_tensor.py"
    spec = importlib.util.spec_from_file_location(QTENSOR + ".mxfp4_tensor", path)
    m = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = m
    spec.loader.exec_module(m)
    return m.MXFP4QTensor


def main():
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--modelopt", required=True, help="directory holding the unpacked wheel's modelopt/")
    pre.add_argument("--version", required=True, help="the wheel's version, e.g. 0.47.0")
    known, rest = pre.parse_known_args()
    sys.argv = [sys.argv[0]] + rest
    a, prov, devices = realdata.command_line(__doc__, "modelopt", known.version)
    qt = load_mxfp4(known.modelopt)
    x = realdata.edge_inputs(32)
    for device in devices:
        q, e8m0 = qt.quantize(torch.from_numpy(x).to(device), 32)
        # the GPU's and the CPU's float -> uint8 of an Inf exponent differ (profiles modelopt, modelopt-cpu)
        params = {"recipe": "mxfp4", "profile": "modelopt" if device == "cuda" else "modelopt-cpu",
                  "rows": x.shape[0], "cols": x.shape[1]}
        realdata.write(os.path.join(a.out, "mxfp4-%s.h5" % device), params, x,
                       {"q": ("e2m1x2", q.quantized_data.contiguous().cpu().numpy().reshape(-1)),
                        "scale": ("e8m0", e8m0.contiguous().cpu().numpy().reshape(-1))},
                       dict(prov, function="mxfp4_tensor.MXFP4QTensor.quantize",
                            arguments="MXFP4QTensor.quantize(x, 32) (x f32 [%d, %d])" % x.shape,
                            device=realdata.device_name(device), where=device))
        print("recorded mxfp4-%s" % device)
    print("recorded into %s" % a.out)


if __name__ == "__main__":
    main()
