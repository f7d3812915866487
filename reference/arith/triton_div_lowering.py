"""Prints the PTX instructions Triton emits for the fp32 divisions of sglang's per-token-group
quant kernel (docs/spec/formats.md §6.2, §13: the lowering is to be confirmed in the PTX Triton generates):
amax / 448.0, 1.0 / s and x / s. Needs a GPU and triton; run by hand (docs/notes/rcp_approx.md)."""
import re

import torch
import triton
import triton.language as tl


@triton.jit
def group_quant(x_ptr, q_row_ptr, q_col_ptr, s_ptr, rcp_ptr):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    s = tl.max(tl.abs(x)) / 448.0
    r = 1.0 / s
    tl.store(s_ptr, s)
    tl.store(rcp_ptr, r)
    tl.store(q_row_ptr + offs, x * r)
    tl.store(q_col_ptr + offs, x / s)


def main():
    x = torch.randn(128, device="cuda")
    outs = [torch.empty(128, device="cuda") for _ in range(2)] + [torch.empty(1, device="cuda") for _ in range(2)]
    k = group_quant[(1,)](x, *outs)
    ptx = k.asm["ptx"]
    print("triton", triton.__version__, "division-like PTX instructions:")
    for line in ptx.splitlines():
        if re.search(r"\b(div|rcp)\.", line):
            print("  ", line.strip())


if __name__ == "__main__":
    main()
