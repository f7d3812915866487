"""Records what sglang's own FP8 quantizers write on the GPU, as qcheck goldens (golden/real/README.md):

- its Triton kernels of sglang/kernels/ops/quantization/fp8_kernel.py, through sglang's own
  launcher _per_token_group_quant_8bit_raw (row-major fp32 scales: profile triton-row; column-major:
  triton-col, with and without the UE8M0 rounding of the colmajor kernel);
- the torch fallbacks of the same file for ROCm without aiter (_native_dynamic_per_tensor_quant_fp8,
  _native_dynamic_per_token_quant_fp8: profile sglang-native), run here on the H200;
- input_to_float8 of sglang/srt/layers/quantization/fp8_utils.py (profile input-to-float8; the
  function alone is taken from the file, by name, and run: the module's imports are not loadable
  without sglang's dependencies) and bf16_to_block_fp8_128 of mxfp8_block_convert.py (sglang-native
  of block);
- its CUDA JIT kernels (sglang/kernels/jit/csrc/gemm/per_token_group_quant.cuh,
  per_tensor_quant_fp8.cuh, per_token_quant_fp8.cuh), compiled unchanged by
  tools/record/build_sglang_jit.sh with the flags sglang's JIT loader gives them (profiles sgl-kernel:
  sglang moved sgl-kernel's quantizers into these JIT kernels).

sglang's code is loaded from an unpacked wheel (--sglang ROOT: the directory holding `sglang/`) and run,
never copied: fp8_kernel.py is executed as its module, with the few sglang modules it imports at the
top replaced by stand-ins (platform flags, the aiter switch, decorators). The wheel is not a qcheck
dependency; see golden/real/README.md for how to fetch it.

    python3 tools/record/sglang_quant.py --sglang ROOT --jit DIR --out golden/real/sglang-0.5.23 --date D"""
import ast
import importlib.util
import os
import sys
import types

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata  # noqa: E402

QUANT_DIR = "sglang/kernels/ops/quantization"


def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


class _Flag:
    def __init__(self, value):
        self.value = value

    def get(self):
        return self.value


def _unavailable(name):
    def call(*_a, **_k):
        raise RuntimeError("%s is not loaded by this recorder" % name)
    return call


def load_fp8_kernel(root, hip):
    """sglang's fp8_kernel.py executed as its module; hip selects its ROCm branch (the torch
    fallbacks are defined only there)."""
    for name in list(sys.modules):
        if name == "sglang" or name.startswith("sglang."):
            del sys.modules[name]
    for pkg in ("sglang", "sglang.kernels", "sglang.kernels.jit", "sglang.kernels.ops", "sglang.srt",
                "sglang.srt.utils"):
        _module(pkg).__path__ = []
    cap = torch.cuda.get_device_capability(0)
    _module("sglang.kernels.jit.utils", is_arch_support_pdl=lambda: False,  # PDL: launch scheduling only
            get_jit_cuda_arch=lambda: types.SimpleNamespace(major=cap[0], minor=cap[1]),
            is_hip_runtime=lambda: False, is_musa_runtime=lambda: False)
    _module("sglang.srt.environ", envs=types.SimpleNamespace(SGLANG_USE_AITER=_Flag(False)))
    sys.modules["sglang.srt.utils"].__dict__.update(
        ceil_align=lambda x, a: (x + a - 1) // a * a, is_cuda=lambda: not hip, is_hip=lambda: hip,
        is_musa=lambda: False, is_xpu=lambda: False)
    _module("sglang.srt.utils.patch_torch", register_fake_if_exists=lambda *_a, **_k: (lambda f: f))
    q = _module("sglang.kernels.ops.quantization", sgl_per_token_quant_fp8=_unavailable("sgl_per_token_quant_fp8"))
    q.__path__ = []
    _module(q.__name__ + ".per_tensor_quant_fp8", per_tensor_quant_fp8=_unavailable("per_tensor_quant_fp8"))
    _module(q.__name__ + ".per_token_group_quant", per_token_group_quant=_unavailable("per_token_group_quant"))
    _exec(root, q.__name__ + ".fp8_utils", "fp8_utils.py")
    props = torch.cuda.get_device_properties
    if hip and not hasattr(props(0), "gcnArchName"):  # is_fp8_fnuz() reads it: not an MI300
        torch.cuda.get_device_properties = lambda i: types.SimpleNamespace(gcnArchName="none")
    try:
        return _exec(root, q.__name__ + ".fp8_kernel", "fp8_kernel.py")
    finally:
        torch.cuda.get_device_properties = props


def _exec(root, name, filename):
    spec = importlib.util.spec_from_file_location(name, os.path.join(root, QUANT_DIR, filename))
    m = importlib.util.module_from_spec(spec)
    sys.modules[name] = m
    spec.loader.exec_module(m)
    return m


def load_function(root, relpath, name, namespace):
    """The function `name` of sglang's file relpath, compiled from that file's own source and run in
    namespace (the names the function body uses)."""
    path = os.path.join(root, relpath)
    tree = ast.parse(open(path).read(), filename=path)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    exec(compile(ast.Module(body=[node], type_ignores=[]), path, "exec"), namespace)
    return namespace[name]


def _bytes(t):
    return t.contiguous().view(torch.uint8).cpu().numpy().reshape(-1)


def _storage(t):
    """The bytes of a strided tensor in memory order (a column-major scale view as the GEMM reads it)."""
    base = torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage(), t.storage_offset(),
                                                               (t.untyped_storage().nbytes() // t.element_size(),))
    return _bytes(base)


class Recorder:
    def __init__(self, a, prov):
        self.out, self.prov, self.date = a.out, prov, a.date

    def write(self, name, params, x, outputs, function, call):
        realdata.write(os.path.join(self.out, name + ".h5"), params, x, outputs,
                       dict(self.prov, function=function, arguments=call, device=realdata.device_name("cuda"),
                            where="cuda"))
        print("recorded", name)


def inputs(block, dtype, finite=False):
    """The edge inputs as the kernel's dtype, and their f32 values (what the golden stores)."""
    x = torch.from_numpy(realdata.edge_inputs(block, finite=finite)).cuda().to(dtype)
    return x, x.float().cpu().numpy()


DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}


def token_group_params(profile, group, x, dt, ue8m0, layout):
    return {"recipe": "token_group", "profile": profile, "group": group, "ue8m0": int(ue8m0),
            "scale_layout": layout, "in-dtype": dt, "rows": x.shape[0], "cols": x.shape[1]}


def record_triton(rec, k):
    """sglang's Triton per-token-group kernels through its launcher _per_token_group_quant_8bit_raw."""
    for dt, dtype in DTYPES.items():
        for group in (128, 32):
            x, xv = inputs(group, dtype)
            q, s = k._per_token_group_quant_8bit_raw(x, group)
            rec.write("triton-token_group-g%d-%s-row" % (group, dt), token_group_params("triton-row", group, x, dt, 0, "row"),
                      xv, {"q": ("e4m3fn", _bytes(q)), "scale": ("u8", _bytes(s))},
                      "fp8_kernel._per_token_group_quant_8bit_raw",
                      "_per_token_group_quant_8bit_raw(x, %d) (x %s [%d, %d])" % ((group, dt) + tuple(x.shape)))
            # column-major scales; with UE8M0 the launcher then calls deep_gemm's
            # transform_sf_into_required_layout: what is recorded is the kernel's fp32 power of two
            # before that (deep_gemm is not loaded; the stand-in returns the scales as they are)
            for ue8m0 in (False, True):
                sys.modules["deep_gemm"] = _module("deep_gemm", transform_sf_into_required_layout=lambda sf, **_k: sf)
                q, s = k._per_token_group_quant_8bit_raw(x, group, column_major_scales=True, scale_ue8m0=ue8m0)
                rec.write("triton-token_group-g%d-%s-col%s" % (group, dt, "-ue8m0" if ue8m0 else ""),
                          token_group_params("triton-col", group, x, dt, ue8m0, "col"), xv,
                          {"q": ("e4m3fn", _bytes(q)), "scale": ("u8", _storage(s))},
                          "fp8_kernel._per_token_group_quant_8bit_raw",
                          "_per_token_group_quant_8bit_raw(x, %d, column_major_scales=True, scale_ue8m0=%s) (x %s "
                          "[%d, %d]; scales before deep_gemm's transform)" % ((group, ue8m0, dt) + tuple(x.shape)))


def record_native(rec, k):
    """sglang's torch fallbacks (its ROCm branch without aiter), on the H200."""
    for dt, dtype in DTYPES.items():
        for finite in (True, False):
            x, xv = inputs(128, dtype, finite=finite)
            tag = "finite" if finite else "edges"
            out = torch.empty(x.shape, device="cuda", dtype=torch.float8_e4m3fn)
            s = torch.empty(1, device="cuda", dtype=torch.float32)
            k._native_dynamic_per_tensor_quant_fp8(out, x, s)
            rec.write("native-tensor-%s-%s" % (dt, tag),
                      {"recipe": "tensor", "profile": "sglang-native", "in-dtype": dt, "rows": x.shape[0], "cols": x.shape[1]},
                      xv, {"q": ("e4m3fn", _bytes(out)), "scale": ("u8", _bytes(s))},
                      "fp8_kernel._native_dynamic_per_tensor_quant_fp8",
                      "_native_dynamic_per_tensor_quant_fp8(out, x, scale) (x %s [%d, %d])" % ((dt,) + tuple(x.shape)))
            s = torch.empty((x.shape[0], 1), device="cuda", dtype=torch.float32)
            k._native_dynamic_per_token_quant_fp8(out, x, s)
            rec.write("native-token-%s-%s" % (dt, tag),
                      {"recipe": "token", "profile": "sglang-native", "in-dtype": dt, "rows": x.shape[0], "cols": x.shape[1]},
                      xv, {"q": ("e4m3fn", _bytes(out)), "scale": ("u8", _bytes(s))},
                      "fp8_kernel._native_dynamic_per_token_quant_fp8",
                      "_native_dynamic_per_token_quant_fp8(out, x, scale) (x %s [%d, %d])" % ((dt,) + tuple(x.shape)))


def record_torch_paths(rec, root):
    """input_to_float8 and bf16_to_block_fp8_128: sglang's torch quantizers, on the H200."""
    from typing import Optional, Tuple
    itf = load_function(root, "sglang/srt/layers/quantization/fp8_utils.py", "input_to_float8",
                        {"torch": torch, "Optional": Optional, "Tuple": Tuple, "fp8_dtype": torch.float8_e4m3fn,
                         "_is_fp8_fnuz": False, "fp8_max": 448.0})
    spec = importlib.util.spec_from_file_location("mxfp8_block_convert", os.path.join(
        root, "sglang/srt/layers/quantization/mxfp8_block_convert.py"))
    conv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conv)
    for dt, dtype in DTYPES.items():
        for finite in (True, False):
            tag = "finite" if finite else "edges"
            x, xv = inputs(128, dtype, finite=finite)
            q, s = itf(x)
            rec.write("input_to_float8-%s-%s" % (dt, tag),
                      {"recipe": "tensor", "profile": "input-to-float8", "in-dtype": dt, "rows": x.shape[0],
                       "cols": x.shape[1]}, xv, {"q": ("e4m3fn", _bytes(q)), "scale": ("u8", _bytes(s.reshape(1)))},
                      "fp8_utils.input_to_float8", "input_to_float8(x) (x %s [%d, %d])" % ((dt,) + tuple(x.shape)))
            x = torch.from_numpy(realdata.edge_inputs(128, rows=200, finite=finite)[:, :1000].copy()).cuda().to(dtype)
            q, s = conv.bf16_to_block_fp8_128(x)
            rec.write("bf16_to_block_fp8_128-%s-%s" % (dt, tag),
                      {"recipe": "block", "profile": "sglang-native", "block": "128x128", "in-dtype": dt,
                       "rows": x.shape[0], "cols": x.shape[1]}, x.float().cpu().numpy(),
                      {"q": ("e4m3fn", _bytes(q)), "scale": ("u8", _bytes(s))},
                      "mxfp8_block_convert.bf16_to_block_fp8_128",
                      "bf16_to_block_fp8_128(x) (x %s [200, 1000])" % dt)


def record_jit(rec, jit):
    """sglang's CUDA JIT quantizers (the modules of build_sglang_jit.sh), called as sglang's Python
    wrappers call them (ops/quantization/per_token_group_quant.py, per_tensor_quant_fp8.py,
    per_token_quant_fp8.py), with the output buffers they allocate."""
    import tvm_ffi
    k = load_fp8_kernel(rec.sglang_root, hip=False)

    def mod(name):
        return tvm_ffi.load_module(os.path.join(jit, name + ".so"))

    for dt, dtype in DTYPES.items():
        jdt = {"f32": "fp32"}.get(dt, dt)  # build_sglang_jit.sh names modules by sglang's C++ type
        for group in (128, 32):
            x, xv = inputs(group, dtype)
            rows, cols = x.shape
            for lay, ue8m0, layout in (("f32", False, "row"), ("f32col", False, "col_tma"), ("ue8m0col", True, "packed_ue8m0")):
                q = torch.empty(x.shape, device="cuda", dtype=torch.float8_e4m3fn)
                if lay == "f32":
                    s = torch.empty((rows, cols // group), device="cuda", dtype=torch.float32)
                else:  # sglang's allocator for column-major scales (TMA-aligned; int32-packed for UE8M0)
                    s = k.create_per_token_group_quant_fp8_output_scale(
                        x_shape=x.shape, device=x.device, group_size=group, column_major_scales=True,
                        scale_tma_aligned=True, scale_ue8m0=ue8m0)
                mod("ptgq-%s-g%d-%s" % (jdt, group, lay)).per_token_group_quant(x, q, s)
                rec.write("jit-token_group-g%d-%s-%s" % (group, dt, lay),
                          token_group_params("sglang-jit", group, x, dt, ue8m0, layout), xv,
                          {"q": ("e4m3fn", _bytes(q)), "scale": ("u8", _storage(s))},
                          "jit.per_token_group_quant",
                          "per_token_group_quant(x, q, s): PerTokenGroupQuantFlatKernel<%s, fp8_e4m3_t, %d, ue8m0=%s, "
                          "row_major=%s, aligned> --use_fast_math, sm_90a (x [%d, %d])"
                          % (dt, group, ue8m0, lay == "f32", rows, cols))
        for finite in (True, False):
            x, xv = inputs(128, dtype, finite=finite)
            tag = "finite" if finite else "edges"
            q = torch.empty(x.shape, device="cuda", dtype=torch.float8_e4m3fn)
            s = torch.zeros(1, device="cuda", dtype=torch.float32)  # scaled_fp8_quant zero-fills it
            mod("ptq-%s-dynamic" % jdt).per_tensor_quant_fp8(x.view(-1), q.view(-1), s.view(-1))
            rec.write("jit-tensor-%s-%s" % (dt, tag),
                      {"recipe": "tensor", "profile": "sgl-kernel-sm100", "in-dtype": dt, "rows": x.shape[0], "cols": x.shape[1]},
                      xv, {"q": ("e4m3fn", _bytes(q)), "scale": ("u8", _bytes(s))}, "jit.per_tensor_quant_fp8",
                      "per_tensor_quant_fp8<is_static=false, %s> (no fast math), sm_90a" % dt)
            s = torch.empty((x.shape[0], 1), device="cuda", dtype=torch.float32)
            mod("ptok-%s" % jdt).per_token_quant_fp8(x, q, s)
            rec.write("jit-token-%s-%s" % (dt, tag),
                      {"recipe": "token", "profile": "sgl-kernel", "in-dtype": dt, "rows": x.shape[0], "cols": x.shape[1]},
                      xv, {"q": ("e4m3fn", _bytes(q)), "scale": ("u8", _bytes(s))}, "jit.per_token_quant_fp8",
                      "per_token_quant_fp8<%s> --use_fast_math, sm_90a" % dt)


def main():
    import argparse
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--sglang", required=True, help="directory holding the unpacked wheel's sglang/")
    pre.add_argument("--version", required=True, help="the wheel's version, e.g. 0.5.23")
    pre.add_argument("--jit", help="directory of build_sglang_jit.sh's modules (needs tvm_ffi)")
    known, rest = pre.parse_known_args()
    sys.argv = [sys.argv[0]] + rest + ["--devices", "cuda"]
    a, prov, devices = realdata.command_line(__doc__, "sglang", known.version)
    if "cuda" not in devices:
        sys.exit("sglang_quant.py: these are GPU kernels and no GPU is here")
    rec = Recorder(a, prov)
    rec.sglang_root = known.sglang
    steps = [("triton", lambda: record_triton(rec, load_fp8_kernel(known.sglang, hip=False))),
             ("native", lambda: record_native(rec, load_fp8_kernel(known.sglang, hip=True))),
             ("torch paths", lambda: record_torch_paths(rec, known.sglang))]
    if known.jit:
        steps.append(("jit", lambda: record_jit(rec, known.jit)))
    realdata.run_steps(steps, a.out)


if __name__ == "__main__":
    main()
