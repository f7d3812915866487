"""torch's own kernels under the gate, on the GPU (issue: outside kernels): run with

    qcheck run --case cast_fp8,cast_e8m0 --backend exec:'python3 -m qcheck_runner python/examples/torch_kernels.py'
    qcheck run --case fp8_rowwise_gemm,fp8_block_gemm --backend exec:'python3 -m qcheck_runner python/examples/torch_kernels.py'

- cast: `x.to(torch.float8_e4m3fn)` / float8_e5m2 / float8_e4m3fnuz / float8_e5m2fnuz / float8_e8m0fnu
  on the device, for the items whose profile is `torch` (qcheck's claim about torch's casts).
- gemm: `torch._scaled_mm` (cuBLASLt FP8) on the quantized operands the instance carries
  (a.codes, a.scale, b.codes, b.scale): kind fp8_tensor (tensorwise scales), fp8_rowwise
  (rowwise, [m, 1] x [1, n]) and fp8_block (1x128 x 128x128 block scales, where this torch
  accepts them on this GPU). What torch refuses is declined with torch's own message.
Everything runs on torch.cuda.current_device(); QCHECK_TORCH_DEVICE=cpu runs the casts on the CPU.
"""
import os

import numpy as np

import qcheck

DEVICE = os.environ.get("QCHECK_TORCH_DEVICE", "cuda")
FP8 = {"e4m3fn": "float8_e4m3fn", "e5m2": "float8_e5m2", "e4m3fnuz": "float8_e4m3fnuz",
       "e5m2fnuz": "float8_e5m2fnuz", "e8m0": "float8_e8m0fnu"}


def _torch():
    import torch  # imported here: the runner starts without it
    return torch


# The params that override one rule of a profile (qcheck cast --help): torch has only its own.
POLICY_KEYS = ("overflow", "nan", "nan-code", "ties", "nonan", "zero-sign", "e8m0", "e8m0-emax", "e8m0-mbits",
               "e8m0-decode")


@qcheck.kernel("cast", profile="torch", to=tuple(FP8))
def cast(inputs, params):
    torch = _torch()
    changed = [k for k in POLICY_KEYS if k in params]
    if changed:
        raise qcheck.Declined("the item changes %s of the torch profile; torch's cast has only its own rules" % changed)
    x = torch.from_numpy(np.ascontiguousarray(inputs["x"])).to(DEVICE)
    y = x.to(getattr(torch, FP8[params["to"]]))
    return {"y": qcheck.Tensor(y.view(torch.uint8).cpu().numpy(), qc_dtype=params["to"])}


def _out_dtype(torch, out):
    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[out]


def _scales(torch, inputs, kind, m, n, k):
    sa = torch.from_numpy(np.ascontiguousarray(inputs["a.scale"], dtype=np.float32)).to(DEVICE)
    sb = torch.from_numpy(np.ascontiguousarray(inputs["b.scale"], dtype=np.float32)).to(DEVICE)
    if kind == "fp8_tensor":
        return sa.reshape(()), sb.reshape(())
    if kind == "fp8_rowwise":
        return sa.reshape(m, 1), sb.reshape(1, n)
    # fp8_block (docs/spec/formats.md §9.4): a's [m, k/128] 1x128 scales M-major (strides (1, m));
    # b's 128x128 scales are checked on b.t() = [n, k]: scale_b.t() is the row-major [n/128, k/128] grid
    kb = (k + 127) // 128
    return sa.reshape(m, kb).t().contiguous().t(), sb.reshape(-1, kb).t()


@qcheck.kernel("gemm", kind=("fp8_tensor", "fp8_rowwise", "fp8_block"))
def scaled_mm(inputs, params):
    torch = _torch()
    kind, out = params["kind"], params.get("out", "bf16")
    if params.get("model", "exact") not in ("exact", "grouped"):
        raise qcheck.Declined("model %s is another kernel's rounding (sgl-kernel's CPU path)" % params["model"])
    m, n, k = (int(params[x]) for x in ("m", "n", "k"))
    if params.get("bias", "0") != "0":
        raise qcheck.Declined("bias: the cases add it in fp32 before the output rounding; _scaled_mm takes it in the out dtype")
    if qcheck.dtype_of("a.codes", inputs) != "e4m3fn" or qcheck.dtype_of("b.codes", inputs) != "e4m3fn":
        raise qcheck.Declined("operands other than e4m3fn")
    if m == 0 or n % 16 or k % 16:
        raise qcheck.Declined("torch._scaled_mm needs n and k multiples of 16 and m > 0 (m=%d n=%d k=%d)" % (m, n, k))
    a = torch.from_numpy(np.ascontiguousarray(inputs["a.codes"])).to(DEVICE).view(torch.float8_e4m3fn)
    b = torch.from_numpy(np.ascontiguousarray(inputs["b.codes"])).to(DEVICE).view(torch.float8_e4m3fn)
    sa, sb = _scales(torch, inputs, kind, m, n, k)
    mp = m
    if kind == "fp8_block" and m % 4:  # cuBLASLt's 1x128 scales want M padded to 4 (docs/spec/formats.md §9.4)
        mp = m + 4 - m % 4
        a = torch.cat([a, torch.zeros(mp - m, k, dtype=a.dtype, device=a.device)])
        sa = torch.cat([sa, torch.ones(mp - m, sa.shape[1], device=sa.device)]).t().contiguous().t()
    try:
        c = torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=_out_dtype(torch, out))[:m]
    except (RuntimeError, TypeError, NotImplementedError) as e:
        raise qcheck.Declined("torch %s _scaled_mm refuses kind %s: %s" % (torch.__version__, kind, str(e).splitlines()[0][:200]))
    c = c.contiguous()
    codes = c.view(torch.uint16) if out != "f32" else c
    return {"c": qcheck.Tensor(codes.cpu().numpy(), qc_dtype=out)}
