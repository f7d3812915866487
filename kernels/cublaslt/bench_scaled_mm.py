#!/usr/bin/env python3
"""torch._scaled_mm on the shapes of bench_cublaslt.c, for the adapter/torch ratio (not a test).

Times, with CUDA events around each of --iters calls after --warmup, the median and the minimum of
  fp8_tensor   torch._scaled_mm(a, b.t(), scale_a=[], scale_b=[])           (use_fast_accum False,
               the adapter's setting; then True, for information only)
  fp8_rowwise  torch._scaled_mm(a, b.t(), scale_a=[M, 1], scale_b=[1, N])
  fp8_block    1x128 activations x 128x128 weights: scale_a [M, K/128] M-major (stride (1, M)),
               scale_b [L4, N/128] K-block-major (the weights' [N/128, L4] scales transposed, L4 =
               K/128 rounded up to 4), through torch._scaled_mm, else torch.nn.functional.scaled_mm
               with ScalingType.BlockWise1x128 / BlockWise128x128 (torch >= 2.10 on sm_90 with
               cuBLAS >= 12.9); whichever ran, or why neither did, is printed.
Before the block timing a small problem is checked against a float64 dequantized product, so the
scale layouts above are confirmed as torch reads them: the cublaslt backend hands cuBLASLt the same
memory layouts (kernels/cublaslt/lt_pack.h).

  python3 bench_scaled_mm.py [--m 4096] [--n 7168] [--k 7168] [--iters 50] [--warmup 10]

Lines starting "RESULT" are for run-on-gpu.sh:
  RESULT torch <kind> <M> <N> <K> bf16 <median ms> <TFLOP/s>
"""
import argparse
import sys


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def timed(torch, fn, warmup, iters):
    for _ in range(warmup):
        fn()
    ms = []
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(iters):
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        ms.append(e0.elapsed_time(e1))
    return median(ms), min(ms)


def report(name, m, n, k, med, best, iters, extra=""):
    tflops = 2.0 * m * n * k / (med * 1e-3) / 1e12
    print("torch    %-22s M=%d N=%d K=%d out=bf16: median %.4f ms, min %.4f ms over %d, %.1f TFLOP/s%s"
          % (name, m, n, k, med, best, iters, tflops, extra))
    print("RESULT torch %s %d %d %d bf16 %.5f %.2f" % (name, m, n, k, med, tflops))


def block_scales(torch, m, n, k, dev):
    """Scales as the block path wants them: (scale_a [m, L] with stride (1, m), scale_b [L4, nb])."""
    L, nb = (k + 127) // 128, (n + 127) // 128
    L4 = (L + 3) // 4 * 4
    sa = (torch.rand(L, m, device=dev) + 0.5).t()  # [m, L], M-major
    sw = torch.zeros(nb, L4, device=dev)
    sw[:, :L] = torch.rand(nb, L, device=dev) + 0.5
    return sa, sw.t()  # [L4, nb], K-block-major in memory


def block_mm(torch, a, b, sa, sb):
    """The 1x128 x 128x128 product through whichever entry point this torch has: (out, how)."""
    errs = []
    try:
        return torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16), "torch._scaled_mm"
    except Exception as e:  # noqa: BLE001 - report whatever torch says
        errs.append("torch._scaled_mm: %s" % str(e).splitlines()[0][:200])
    try:
        F = torch.nn.functional
        out = F.scaled_mm(a, b.t(), sa, F.ScalingType.BlockWise1x128, sb, F.ScalingType.BlockWise128x128,
                          output_dtype=torch.bfloat16)
        return out, "torch.nn.functional.scaled_mm"
    except Exception as e:  # noqa: BLE001
        errs.append("torch.nn.functional.scaled_mm: %s" % str(e).splitlines()[0][:200])
    raise RuntimeError("; ".join(errs))


def block_check(torch, dev):
    """A small block product against float64: the layouts as torch reads them."""
    m, n, k = 40, 272, 640
    a = (torch.randn(m, k, device=dev) * 4).to(torch.float8_e4m3fn)
    b = (torch.randn(n, k, device=dev) * 4).to(torch.float8_e4m3fn)
    sa, sb = block_scales(torch, m, n, k, dev)
    out, how = block_mm(torch, a, b, sa, sb)
    L = (k + 127) // 128
    ea = sa.double().repeat_interleave(128, dim=1)[:, :k]                       # [m, k]
    eb = sb.t()[:, :L].double().repeat_interleave(128, 0).repeat_interleave(128, 1)[:n, :k]  # [n, k]
    ref = (a.double() * ea) @ (b.double() * eb).t()
    mag = (a.double() * ea).abs() @ (b.double() * eb).abs().t()
    err = ((out.double() - ref).abs() / mag.clamp_min(1e-30)).max().item()
    ok = err < 1e-2
    print("torch    fp8_block layout check M=%d N=%d K=%d through %s: max |err| / sum|terms| = %.2e (%s)"
          % (m, n, k, how, err, "ok" if ok else "FAIL: the scale layouts are not what lt_pack.h assumes"))
    return how


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=4096)
    ap.add_argument("--n", type=int, default=7168)
    ap.add_argument("--k", type=int, default=7168)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        print("bench_scaled_mm: no torch: %s" % e)
        return 1
    if not torch.cuda.is_available():
        print("bench_scaled_mm: torch %s sees no CUDA device" % torch.__version__)
        return 1
    dev = "cuda"
    cap = torch.cuda.get_device_capability()
    print("bench_scaled_mm: torch %s (CUDA %s) on %s sm_%d%d"
          % (torch.__version__, torch.version.cuda, torch.cuda.get_device_name(), cap[0], cap[1]))
    m, n, k, w, it = args.m, args.n, args.k, args.warmup, args.iters
    torch.manual_seed(0)
    a = (torch.randn(m, k, device=dev) * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(n, k, device=dev) * 2).to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, device=dev)
    rc = 0

    med, best = timed(torch, lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                                      use_fast_accum=False), w, it)
    report("fp8_tensor", m, n, k, med, best, it)
    med, best = timed(torch, lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                                      use_fast_accum=True), w, it)
    report("fp8_tensor_fastaccum", m, n, k, med, best, it, "  (information: fast accumulation breaks the bound)")

    sa_row = torch.rand(m, 1, device=dev) + 0.5
    sb_row = torch.rand(1, n, device=dev) + 0.5
    try:
        med, best = timed(torch, lambda: torch._scaled_mm(a, b.t(), scale_a=sa_row, scale_b=sb_row,
                                                          out_dtype=torch.bfloat16), w, it)
        report("fp8_rowwise", m, n, k, med, best, it, "  (torch may route rowwise to its own kernel, not cuBLASLt)")
    except Exception as e:  # noqa: BLE001
        print("torch    fp8_rowwise: not run: %s" % str(e).splitlines()[0][:300])

    how = None
    try:
        how = block_check(torch, dev)
    except Exception as e:  # noqa: BLE001
        print("torch    fp8_block layout check (M=40 N=272 K=640): not run: %s" % str(e)[:600])
    try:
        sa, sb = block_scales(torch, m, n, k, dev)
        if how is None:  # which entry point takes the block recipe, on a 128 x 128 x K probe
            pa, pb = block_scales(torch, 128, 128, k, dev)
            how = block_mm(torch, a[:128].contiguous(), b[:128].contiguous(), pa, pb)[1]
        fn = ((lambda: torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16))
              if how == "torch._scaled_mm" else
              (lambda: torch.nn.functional.scaled_mm(
                  a, b.t(), sa, torch.nn.functional.ScalingType.BlockWise1x128, sb,
                  torch.nn.functional.ScalingType.BlockWise128x128, output_dtype=torch.bfloat16)))
        med, best = timed(torch, fn, w, it)
        report("fp8_block", m, n, k, med, best, it, "  (through %s)" % how)
    except Exception as e:  # noqa: BLE001
        print("torch    fp8_block: not supported by this torch on this GPU: %s" % str(e)[:600])
        rc = 0  # a finding, not a failure of the benchmark
    return rc


if __name__ == "__main__":
    sys.exit(main())
