"""Records what numpy's float16 cast writes (np.asarray(x, float32).astype(np.float16)) as a qcheck
golden (golden/real/README.md). ml_dtypes has no float16 of its own; its cast profiles state that
f16 is numpy.float16 (NaN sign kept, payload truncated), and this recording is what backs that claim.
The inputs are mldtypes_cast.py's: every bf16 bit pattern widened to fp32, random fp32 bit patterns,
every midpoint of neighbouring f16 codes with its fp32 neighbours. Runs wherever numpy does.

    python3 tools/record/numpy_cast.py --out golden/real/numpy-2.4.6 --date 2026-12-05 --devices cpu"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mldtypes_cast  # noqa: E402
import realdata  # noqa: E402


def main():
    a, prov, _ = realdata.command_line(__doc__, "numpy", np.__version__)
    x = mldtypes_cast.inputs(np.float16)
    with np.errstate(all="ignore"):
        y = x.astype(np.float16)
    realdata.write(os.path.join(a.out, "cast-f16-cpu.h5"), {"to": "f16", "profile": "ml_dtypes", "n": x.size}, x,
                   {"y": ("f16", y.view(np.uint16))},
                   dict(prov, function="numpy.ndarray.astype", arguments="x.astype(numpy.float16)",
                        device=realdata.device_name("cpu"), where="cpu"), op="cast")
    print("recorded into %s" % a.out)


if __name__ == "__main__":
    main()
