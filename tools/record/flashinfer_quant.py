"""Runs flashinfer's CUDA quantizers (the TRT-LLM kernels of csrc/nv_internal/cpp/kernels/quantization.cu,
built by tools/record/build_flashinfer_jit.py with flashinfer's own JIT) on the GPU, called as
flashinfer/quantization/fp8_quantization.py and fp4_quantization.py call them (their output
buffers, linear scale layout), and says what they wrote.

These kernels compute only on sm_100 and newer: below it cvt_warp_fp16_to_mxfp8 and the e2m1
packers of quantization_utils.cuh compile to `return 0` (an `#if __CUDA_ARCH__ >= 1000` with an
empty #else), so on an H200 mxfp8_quantize and fp4_quantize return zero codes without an error.
This script measures that there; it writes goldens only on a GPU where the kernels compute, so the
flashinfer-fast profiles stay "from source reading only" until it runs on a Blackwell GPU.

    python3 tools/record/flashinfer_quant.py --jit DIR --version 0.7.2 --out DIR --date D"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata  # noqa: E402


def run(jit, x):
    """(mxfp8 q, mxfp8 sf, mxfp4 q, mxfp4 sf, nvfp4 q, nvfp4 sf) of a bf16 [m, k] tensor, linear layout."""
    import tvm_ffi
    cap = torch.cuda.get_device_capability(0)
    fp8 = tvm_ffi.load_module(os.path.join(jit, "mxfp8_quantization_sm100.so"))
    fp4 = tvm_ffi.load_module(os.path.join(jit, "fp4_quantization_%d%d.so" % cap))
    m, k = x.shape
    out = []
    q = torch.zeros((m, k), dtype=torch.float8_e4m3fn, device="cuda")
    sf = torch.full((m * k // 32,), 0xA5, dtype=torch.uint8, device="cuda")  # a canary: was it written?
    fp8.mxfp8_quantize(x, q, sf, 2, 32, False)  # SfLayout.layout_linear = 2 (tllm_enums.py), alignment 32, no PDL
    out += [q.view(torch.uint8), sf]
    for vec, ue8m0, gs in ((32, True, None), (16, False, torch.tensor([1.0], device="cuda"))):
        q = torch.zeros((m, k // 2), dtype=torch.uint8, device="cuda")
        sf = torch.full((((m + 15) // 16 * 16) * k // vec,), 0xA5, dtype=torch.uint8, device="cuda")
        fp4.fp4_quantize(x, gs, q, sf, vec, ue8m0, False, False, False, False, 0)
        out += [q, sf[:m * k // vec]]
    torch.cuda.synchronize()
    return out


def main():
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--jit", required=True, help="directory of build_flashinfer_jit.py's modules")
    pre.add_argument("--version", required=True)
    known, rest = pre.parse_known_args()
    sys.argv = [sys.argv[0]] + rest + ["--devices", "cuda"]
    a, prov, devices = realdata.command_line(__doc__, "flashinfer", known.version)
    if "cuda" not in devices:
        sys.exit("flashinfer_quant.py: no GPU here")
    x = torch.from_numpy(realdata.edge_inputs(32, finite=True)).cuda().to(torch.bfloat16)
    names = ("mxfp8 q", "mxfp8 scale", "mxfp4 q", "mxfp4 scale", "nvfp4 q", "nvfp4 scale")
    outs = run(known.jit, x)
    for name, t in zip(names, outs):
        t = t.cpu()
        print("%-12s %6d bytes: %d nonzero, %d still the 0xA5 canary" % (name, t.numel(), int((t != 0).sum()),
                                                                        int((t == 0xA5).sum())))
    cap = torch.cuda.get_device_capability(0)
    if cap < (10, 0):
        print("sm_%d%d: flashinfer's quantization.cu computes only on sm_100+ (quantization_utils.cuh); "
              "nothing recorded" % cap)
        return
    sys.exit("recording on sm_100+ is not written yet: the counts above are what this GPU gives")


if __name__ == "__main__":
    main()
