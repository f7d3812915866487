"""Records what the sglang-kernel wheel's own quantizers write on the GPU, as qcheck goldens
(golden/real/README.md):

- the ahead-of-time CUDA library sgl_kernel/sm90/common_ops.abi3.so (the build the wheel's
  load_utils.py picks for compute capability 9.x), its ops registered with torch and called as the
  wheel's gemm.py calls them: sgl_per_token_group_quant_8bit_v2 (what sgl_per_token_group_quant_8bit
  runs for groups 16, 32, 64, 128), the older sgl_per_token_group_quant_8bit (enable_v2=False) and
  sgl_per_token_quant_fp8; scale buffers as sglang's create_per_token_group_quant_fp8_output_scale
  allocates them (row-major f32, column-major TMA-aligned f32, column-major int32-packed UE8M0);
- the triton_kernels package the same wheel carries: numerics_details.mxfp.downcast_to_mxfp, as
  sglang's mxfp8_group_quantize calls it (axis=1, ROUND_UP) for e4m3fn, and with the FP4 output
  (torch.uint8) for MXFP4 (one name it imports from a newer triton is supplied: triton_shim).

The wheel's code is run, never copied: --wheel ROOT is the directory holding the unpacked wheel's
sgl_kernel/ and triton_kernels/ (sgl_kernel's Python package is not imported: its __init__ loads
every extension of the wheel; only common_ops is loaded, with torch.ops.load_library). --sglang
ROOT (the unpacked sglang wheel, as for sglang_quant.py) supplies sglang's scale allocator.

    python3 tools/record/sglkernel_quant.py --wheel ROOT --sglang ROOT --version 0.4.10 --out DIR --date D"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata  # noqa: E402
import sglang_quant  # noqa: E402
from sglang_quant import DTYPES, _bytes, _storage, inputs, token_group_params  # noqa: E402

DTYPES = dict(DTYPES, f16=torch.float16)


def scale_buffer(k, x, group, layout):
    """The scale tensor sglang allocates for a layout of qcheck (row, col_tma, packed_ue8m0)."""
    col, ue8m0 = layout != "row", layout == "packed_ue8m0"
    if layout == "row":
        return torch.empty((x.shape[0], x.shape[1] // group), device="cuda", dtype=torch.float32)
    return k.create_per_token_group_quant_fp8_output_scale(x_shape=x.shape, device=x.device, group_size=group,
                                                           column_major_scales=col, scale_tma_aligned=True,
                                                           scale_ue8m0=ue8m0)


def record_aot(rec, k):
    ops = torch.ops.sgl_kernel
    for version, op in (("v2", "sgl_per_token_group_quant_8bit_v2"), ("v1", "sgl_per_token_group_quant_8bit")):
        for dt, dtype in DTYPES.items():
            for group in (128, 32):
                x, xv = inputs(group, dtype)
                for layout, ue8m0 in (("row", False), ("row", True), ("col_tma", False), ("packed_ue8m0", True)):
                    q = torch.empty(x.shape, device="cuda", dtype=torch.float8_e4m3fn)
                    s = scale_buffer(k, x, group, layout)
                    args = (x, q, s, group, 1e-10, -448.0, 448.0, ue8m0) + ((False, None) if version == "v2" else ())
                    name = "aot-token_group-%s-g%d-%s-%s%s" % (version, group, dt, layout, "-ue8m0" if ue8m0 and layout == "row" else "")
                    try:
                        getattr(ops, op).default(*args)
                        torch.cuda.synchronize()
                    except Exception as e:  # the op refuses this input type or layout: say so, go on
                        print("not recorded %s: %s" % (name, str(e).splitlines()[0]))
                        continue
                    profile = "sgl-kernel-v2" if version == "v2" else "sgl-kernel"
                    rec.write(name, token_group_params(profile, group, x, dt, ue8m0, layout), xv,
                              {"q": ("e4m3fn", _bytes(q)), "scale": ("u8", _storage(s))}, "common_ops." + op,
                              "torch.ops.sgl_kernel.%s(x, q, s, %d, 1e-10, -448, 448, scale_ue8m0=%s%s) (x %s [%d, %d]; "
                              "s %s, sglang's allocator)" % (op, group, ue8m0, ", False, None" if version == "v2" else "",
                                                             dt, x.shape[0], x.shape[1], layout))
    for dt, dtype in DTYPES.items():
        for finite in (True, False):
            x, xv = inputs(128, dtype, finite=finite)
            q = torch.empty(x.shape, device="cuda", dtype=torch.float8_e4m3fn)
            s = torch.empty((x.shape[0], 1), device="cuda", dtype=torch.float32)
            name = "aot-token-%s-%s" % (dt, "finite" if finite else "edges")
            try:
                ops.sgl_per_token_quant_fp8.default(x, q, s)
                torch.cuda.synchronize()
            except Exception as e:
                print("not recorded %s: %s" % (name, str(e).splitlines()[0]))
                continue
            rec.write(name, {"recipe": "token", "profile": "sgl-kernel", "in-dtype": dt, "rows": x.shape[0],
                             "cols": x.shape[1]}, xv, {"q": ("e4m3fn", _bytes(q)), "scale": ("u8", _bytes(s))},
                      "common_ops.sgl_per_token_quant_fp8",
                      "torch.ops.sgl_kernel.sgl_per_token_quant_fp8(x, q, s) (x %s [%d, %d])" % ((dt,) + tuple(x.shape)))


def triton_shim():
    """The wheel's triton_kernels imports is_hip_gfx1250 from triton.language.target_info, which
    triton 3.6 (the H200's) does not have yet: on a CUDA GPU it is False; nothing else is added."""
    import triton
    import triton.language.target_info as ti
    if not hasattr(ti, "is_hip_gfx1250"):
        def is_hip_gfx1250():
            return False
        ti.is_hip_gfx1250 = triton.constexpr_function(is_hip_gfx1250)
        print("triton %s: target_info.is_hip_gfx1250 added (False: a CUDA GPU)" % triton.__version__)


def record_triton_kernels(rec, root):
    triton_shim()
    sys.path.insert(0, root)
    from triton_kernels.numerics_details.mxfp import downcast_to_mxfp
    for recipe, out_dtype, qdt in (("mxfp8", torch.float8_e4m3fn, "e4m3fn"), ("mxfp4", torch.uint8, "e2m1x2")):
        for dt, dtype in DTYPES.items():
            x, xv = inputs(32, dtype)
            q, s = downcast_to_mxfp(x, out_dtype, axis=1)
            torch.cuda.synchronize()
            rec.write("triton_kernels-%s-%s" % (recipe, dt),
                      {"recipe": recipe, "profile": "triton-kernels", "in-dtype": dt, "rows": x.shape[0], "cols": x.shape[1]},
                      xv, {"q": (qdt, _bytes(q)), "scale": ("e8m0", _bytes(s))},
                      "triton_kernels.numerics_details.mxfp.downcast_to_mxfp",
                      "downcast_to_mxfp(x, %s, axis=1) (ROUND_UP, the default; x %s [%d, %d])"
                      % ((str(out_dtype), dt) + tuple(x.shape)))


def main():
    import argparse
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--wheel", required=True, help="directory holding the unpacked sglang-kernel wheel")
    pre.add_argument("--sglang", required=True, help="directory holding the unpacked sglang wheel's sglang/")
    pre.add_argument("--version", required=True, help="the sglang-kernel wheel's version, e.g. 0.4.10")
    pre.add_argument("--parts", default="aot,triton_kernels", help="what to record: aot, triton_kernels")
    known, rest = pre.parse_known_args()
    sys.argv = [sys.argv[0]] + rest + ["--devices", "cuda"]
    a, prov, devices = realdata.command_line(__doc__, "sglang-kernel", known.version)
    if "cuda" not in devices:
        sys.exit("sglkernel_quant.py: these are GPU kernels and no GPU is here")
    rec = sglang_quant.Recorder(a, prov)

    def aot():
        torch.ops.load_library(os.path.join(known.wheel, "sgl_kernel", "sm90", "common_ops.abi3.so"))
        record_aot(rec, sglang_quant.load_fp8_kernel(known.sglang, hip=False))

    steps = {"aot": aot, "triton_kernels": lambda: record_triton_kernels(rec, known.wheel)}
    realdata.run_steps([(p, steps[p]) for p in known.parts.split(",")], a.out)


if __name__ == "__main__":
    main()
