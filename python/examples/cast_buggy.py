"""A PLANTED BUG, for the tests: fp32 -> e2m1 rounding ties away from zero instead of to even.

Everything else is the correct ml_dtypes kernel (cast_mldtypes.py). On values exactly between
two e2m1 codes (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5: qcheck injects them) the result is one code
off, and qcheck classifies those mismatches as tie_flip.
"""
import ml_dtypes
import numpy as np

import qcheck

# the 8 non-negative e2m1 values, code 0..7
E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=np.float32)


@qcheck.kernel("cast", profile="ml_dtypes", to="e2m1")
def cast_e2m1_ties_away(inputs, params):
    if params.get("ties", "even") != "even":
        raise qcheck.Declined("ties=%s" % params["ties"])
    x = inputs["x"]
    codes = x.astype(ml_dtypes.float4_e2m1fn).view(np.uint8).copy()  # correct (ties to even)
    a = np.abs(x)
    lo = np.searchsorted(E2M1, a, side="right") - 1        # code just below |x|
    tie = np.zeros(a.shape, dtype=bool)
    ok = (lo >= 0) & (lo < 7)
    idx = np.where(ok, lo, 0)
    tie[ok] = a[ok] == (E2M1[idx[ok]] + E2M1[idx[ok] + 1]) / 2
    codes[tie] = (idx[tie] + 1) | (np.signbit(x[tie]).astype(np.uint8) << 3)  # the bug: away from zero
    # qc_dtype says the bytes are e2m1 codes. (`qcheck verify` reads a dataset without qc_dtype as
    # plain u8 and then calls these mismatches one_ulp; the exec backend takes the expected dtype.)
    return {"y": qcheck.Tensor(codes, qc_dtype="e2m1")}
