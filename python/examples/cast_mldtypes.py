"""A correct kernel for op "cast" under the ml_dtypes profile: numpy + ml_dtypes astype.

qcheck's ml_dtypes cast profile is, by definition, what ml_dtypes' astype does (qcheck list
profiles), so this kernel passes every such instance. Items with a policy override (for example
cast_fp4_fp6's ties=away) are declined rather than computed wrongly.

    qcheck run --case cast_fp8 --params profile=ml_dtypes \\
        --backend exec:'python3 -m qcheck_runner python/examples/cast_mldtypes.py'
"""
import ml_dtypes
import numpy as np

import qcheck

# qcheck format name -> the numpy dtype whose astype rounds like the ml_dtypes profile
TARGETS = {
    "e4m3fn": ml_dtypes.float8_e4m3fn, "e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "e5m2": ml_dtypes.float8_e5m2, "e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "e8m0": ml_dtypes.float8_e8m0fnu, "bf16": ml_dtypes.bfloat16, "f16": np.float16,
    "e2m1": ml_dtypes.float4_e2m1fn, "e2m3": ml_dtypes.float6_e2m3fn, "e3m2": ml_dtypes.float6_e3m2fn,
}

# the cast policy keys of `qcheck cast --help`; any of them changes the profile's behaviour
POLICY_KEYS = ("overflow", "nan", "nan-code", "ties", "nonan", "zero-sign",
               "e8m0", "e8m0-emax", "e8m0-mbits", "e8m0-decode")


@qcheck.kernel("cast", profile="ml_dtypes")
def cast_ml_dtypes(inputs, params):
    to = params.get("to")
    if to not in TARGETS:
        raise qcheck.Declined("cast to %s: not an ml_dtypes target" % to)
    overrides = [k for k in POLICY_KEYS if k in params and not (k == "ties" and params[k] == "even")]
    if overrides:
        raise qcheck.Declined("ml_dtypes astype has no policy %s" % ", ".join(
            "%s=%s" % (k, params[k]) for k in overrides))
    if qcheck.dtype_of("x") != "f32":
        raise qcheck.Declined("input x is %s, this kernel casts from f32" % qcheck.dtype_of("x"))
    # An ml_dtypes array: the runner writes its codes (uint8, or uint16 for bf16/f16).
    return {"y": inputs["x"].astype(TARGETS[to])}
