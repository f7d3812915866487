"""Records what torch writes for the per-token-group FP8 quantization that sglang and vLLM use as
their torch-native reference (native_per_token_group_quant_fp8 in their tests; docs/spec/formats.md §6.2),
as qcheck goldens (golden/real/README.md). That function is a chain of torch calls:

    amax = x.abs().amax(-1).clamp(min=1e-10); s = amax / 448 (a Python float); q = (x / s).clamp(-448, 448).to(e4m3fn)

so what is recorded is torch's own arithmetic for each of them, on the CPU (profile torch-native-cpu:
IEEE division by the Python float) and on the GPU (profile torch-native: multiplication by
fl32(1/448), formats.md §13). Groups of 128 and 32 over realdata.edge_inputs().

    python3 tools/record/torch_token_group.py --out golden/real/torch-2.11.0 --date 2026-12-02"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata  # noqa: E402

CALL = ("g = x.view(rows, -1, group); amax = g.abs().amax(-1, keepdim=True).clamp(min=1e-10); s = amax / 448.0; "
        "q = (g / s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)")


def record(device, group, out, prov):
    x = realdata.edge_inputs(group)
    g = torch.from_numpy(x).to(device).view(x.shape[0], -1, group)
    amax = g.abs().amax(-1, keepdim=True).clamp(min=1e-10)
    s = amax / 448.0
    q = (g / s).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    codes = q.contiguous().view(torch.uint8).cpu().numpy().reshape(-1)
    scales = s.contiguous().cpu().numpy().astype(np.float32).reshape(-1)
    profile = "torch-native" if device == "cuda" else "torch-native-cpu"
    params = {"recipe": "token_group", "profile": profile, "group": group, "scale_layout": "row",
              "rows": x.shape[0], "cols": x.shape[1]}
    realdata.write(os.path.join(out, "token_group-g%d-%s.h5" % (group, device)), params, x,
                   {"q": ("e4m3fn", codes), "scale": ("u8", scales.view(np.uint8))},  # fp32 scales as their bytes
                   dict(prov, function="torch.per_token_group_quant_ops",
                        arguments=CALL.replace("group", str(group)), device=realdata.device_name(device),
                        where=device))


def main():
    a, prov, devices = realdata.command_line(__doc__, "torch", torch.__version__.split("+")[0])
    for device in devices:
        for group in (128, 32):
            record(device, group, a.out, prov)
    print("recorded into %s" % a.out)


if __name__ == "__main__":
    main()
