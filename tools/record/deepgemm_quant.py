"""Records what DeepGEMM's torch quantizers write, as qcheck goldens (golden/real/README.md):
per_token_cast_to_fp8 (profile deepgemm-ref of token_group; gran_k 128 and 32, with and without
UE8M0 scales, K a multiple of gran_k and not) and per_block_cast_to_fp8 (deepgemm-ref of block;
partial blocks in both dimensions), from deep_gemm/utils/math.py of a DeepGEMM checkout
(--deepgemm ROOT), run on the GPU as DeepGEMM's tests run them. The file is loaded and run, never
copied; it needs only torch.

    python3 tools/record/deepgemm_quant.py --deepgemm ROOT --commit 54e2261 --out golden/real/deepgemm-54e2261 --date D"""
import argparse
import importlib.util
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import realdata  # noqa: E402


def load_math(root):
    spec = importlib.util.spec_from_file_location("deepgemm_math", os.path.join(root, "deep_gemm", "utils", "math.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def _bytes(t):
    return t.contiguous().view(torch.uint8).cpu().numpy().reshape(-1)


def main():
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--deepgemm", required=True, help="a DeepGEMM checkout (deep_gemm/utils/math.py)")
    pre.add_argument("--commit", required=True, help="its commit, e.g. 54e2261")
    known, rest = pre.parse_known_args()
    sys.argv = [sys.argv[0]] + rest + ["--devices", "cuda"]
    a, prov, devices = realdata.command_line(__doc__, "deepgemm", known.commit)
    if "cuda" not in devices:
        sys.exit("deepgemm_quant.py: DeepGEMM quantizes on the GPU and no GPU is here")
    m = load_math(known.deepgemm)
    where = dict(prov, device=realdata.device_name("cuda"), where="cuda")

    def write(name, params, x, q, s, function, call):
        realdata.write(os.path.join(a.out, name + ".h5"), params, x,
                       {"q": ("e4m3fn", _bytes(q)), "scale": ("u8", _bytes(s.float()))},
                       dict(where, function="deep_gemm.utils.math." + function, arguments=call))
        print("recorded", name)

    for gran in (128, 32):
        full = realdata.edge_inputs(gran)
        for cols in (full.shape[1], full.shape[1] - gran // 2 - 3):  # a partial last group: zero-padded
            x = np.ascontiguousarray(full[:, :cols])
            for ue8m0 in (False, True):
                q, s = m.per_token_cast_to_fp8(torch.from_numpy(x).cuda(), use_ue8m0=ue8m0, gran_k=gran)
                write("per_token-g%d-k%d%s" % (gran, cols, "-ue8m0" if ue8m0 else ""),
                      {"recipe": "token_group", "profile": "deepgemm-ref", "group": gran, "ue8m0": int(ue8m0),
                       "scale_layout": "row", "rows": x.shape[0], "cols": cols}, x, q, s, "per_token_cast_to_fp8",
                      "per_token_cast_to_fp8(x, use_ue8m0=%s, gran_k=%d) (x f32 [%d, %d])" % ((ue8m0, gran) + x.shape))
    x = np.ascontiguousarray(realdata.edge_inputs(128, rows=200)[:, :1000])
    for ue8m0 in (False, True):
        q, s = m.per_block_cast_to_fp8(torch.from_numpy(x).cuda(), use_ue8m0=ue8m0)
        write("per_block-200x1000%s" % ("-ue8m0" if ue8m0 else ""),
              {"recipe": "block", "profile": "deepgemm-ref", "block": "128x128", "ue8m0": int(ue8m0),
               "rows": x.shape[0], "cols": x.shape[1]}, x, q, s, "per_block_cast_to_fp8",
              "per_block_cast_to_fp8(x, use_ue8m0=%s) (x f32 [200, 1000])" % ue8m0)
    print("recorded into %s" % a.out)


if __name__ == "__main__":
    main()
