#!/usr/bin/env python3
"""record_schedules.py: FP8 GEMM outputs of real kernels on the H200, to find their K schedule
against the tensor-core model (reference/arith/mma_sm90.h, tools/mma/fit_schedules.c).

    record_schedules.py OUT.npz

Runs, on e4m3fn A [M, K] and B [N, K] with unit scales and fp32 output:
  - torch._scaled_mm (cuBLASLt) with tensorwise scales, use_fast_accum False and True;
  - two Triton kernels written here: `acc = tl.dot(a, b, acc)` (the accumulator stays in the
    tensor core across K) and `acc += tl.dot(a, b)` (an fp32 add per BLOCK_K, the pattern of
    sglang's w8a8 block kernel), BLOCK_K 128.
and torch._scaled_mm with scales, for the epilogue: tensorwise (random fp32 scale_a, scale_b; fp32
and bf16 output) and rowwise (scale_a [M, 1], scale_b [1, N]; bf16 output), fast accumulation off
and on.
Saves a, b (uint8 codes), and one [M, N] array per kernel (fp32, or bf16 bits as uint16), keyed
shape_kernel; the scales; plus versions.
"""
import sys

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def mm_in_core(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + rn[None, :] * K + (k + rk)[:, None])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def mm_promoted(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + rn[None, :] * K + (k + rk)[:, None])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


def main():
    out = sys.argv[1]
    dev = "cuda"
    g = torch.Generator(device="cpu").manual_seed(7)
    res = {"torch": np.array(torch.__version__), "triton": np.array(triton.__version__),
           "device": np.array(torch.cuda.get_device_name())}
    one = torch.ones((), device=dev, dtype=torch.float32)
    for m, n, k in ((64, 64, 256), (64, 64, 1024), (128, 128, 4096), (256, 256, 2048)):
        tag = f"{m}x{n}x{k}"
        a = (torch.randn(m, k, generator=g) * 2.0).to(torch.float8_e4m3fn)
        b = (torch.randn(n, k, generator=g) * 2.0).to(torch.float8_e4m3fn)
        res[tag + "_a"] = a.view(torch.uint8).numpy()
        res[tag + "_b"] = b.view(torch.uint8).numpy()
        ad, bd = a.to(dev), b.to(dev)
        for fast in (False, True):
            d = torch._scaled_mm(ad, bd.t(), scale_a=one, scale_b=one, out_dtype=torch.float32, use_fast_accum=fast)
            res[f"{tag}_scaled_mm_fast{int(fast)}"] = d.cpu().numpy()
        for name, kern in (("triton_in_core", mm_in_core), ("triton_promoted", mm_promoted)):
            c = torch.empty(m, n, device=dev, dtype=torch.float32)
            kern[(m // 64, n // 64)](ad, bd, c, m, n, k, BM=64, BN=64, BK=128)
            res[f"{tag}_{name}"] = c.cpu().numpy()
    for m, n, k in ((64, 64, 1024), (128, 128, 4096)):
        tag = f"{m}x{n}x{k}"
        ad = torch.from_numpy(res[tag + "_a"]).view(torch.float8_e4m3fn).to(dev)
        bd = torch.from_numpy(res[tag + "_b"]).view(torch.float8_e4m3fn).to(dev)
        sa = (torch.rand((), generator=g) * 3 + 0.01).to(torch.float32)
        sb = (torch.rand((), generator=g) * 3 + 0.01).to(torch.float32)
        ra = (torch.rand(m, 1, generator=g) * 3 + 0.01).to(torch.float32)
        rb = (torch.rand(1, n, generator=g) * 3 + 0.01).to(torch.float32)
        res[tag + "_tensor_sa"], res[tag + "_tensor_sb"] = sa.numpy(), sb.numpy()
        res[tag + "_row_sa"], res[tag + "_row_sb"] = ra.numpy(), rb.numpy()
        for fast in (False, True):
            for od, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
                d = torch._scaled_mm(ad, bd.t(), scale_a=sa.to(dev), scale_b=sb.to(dev), out_dtype=od,
                                     use_fast_accum=fast)
                res[f"{tag}_tensor_{name}_fast{int(fast)}"] = d.cpu().view(torch.int16 if od == torch.bfloat16
                                                                              else torch.float32).numpy()
            d = torch._scaled_mm(ad, bd.t(), scale_a=ra.to(dev), scale_b=rb.to(dev), out_dtype=torch.bfloat16,
                                 use_fast_accum=fast)
            res[f"{tag}_row_bf16_fast{int(fast)}"] = d.cpu().view(torch.int16).numpy()
    np.savez_compressed(out, **res)
    print(f"{out}: {sorted(k for k in res if not k.endswith(('_a', '_b')))}")


if __name__ == "__main__":
    main()
