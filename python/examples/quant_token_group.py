"""Op "quant", recipe token_group, profile sgl-kernel-sm100, in numpy float32 (bit-exact).

The profile (qcheck list profiles) is sgl-kernel's per_token_group_quant_8bit built with precise
math: per group of `group` columns of a row,

    amax  = max |x| over the group, NaN ignored (fmaxf), floored at 1e-10
    scale = amax * fl32(1/448)            (written as float32 bytes)
    q     = e4m3fn(x * (448 / amax))      satfinite: +-Inf and overflow -> +-448, NaN -> 0x7F

numpy float32 * and / are IEEE round-to-nearest-even, as the GPU's precise-math ops are.
Declined: ue8m0=1, scale layouts other than row, fp8 targets other than e4m3fn.
"""
import ml_dtypes
import numpy as np

import qcheck

F32 = np.float32


@qcheck.kernel("quant", recipe="token_group", profile="sgl-kernel-sm100")
def token_group_sgl_sm100(inputs, params):
    for key, allowed in (("ue8m0", "0"), ("scale_layout", "row"), ("fp8", "e4m3fn")):
        if params.get(key, allowed) != allowed:
            raise qcheck.Declined("%s=%s not implemented (only %s)" % (key, params[key], allowed))
    for key in ("eps", "fp8_max", "static_scale"):
        if key in params:
            raise qcheck.Declined("param %s not implemented" % key)
    x = inputs["x"].astype(F32, copy=False)
    rows, cols = x.shape
    group = int(params.get("group", "128"))
    g = x.reshape(rows, cols // group, group)
    with np.errstate(all="ignore"):
        amax = np.nanmax(np.abs(g), axis=2, initial=F32(0))  # fmaxf: a NaN never wins
        amax = np.maximum(amax, F32(1e-10))
        scale = amax * (F32(1) / F32(448))
        y = g * (F32(448) / amax)[:, :, None]
    nan = np.isnan(y)
    q = np.clip(y, F32(-448), F32(448)).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    q[nan] = 0x7F  # PTX cvt.satfinite: every NaN -> 0x7F
    # Storage as `qcheck quant --help` / `qcheck list ops` define it: q one e4m3fn code per
    # element, scale the float32 scales (row-major [rows, cols/group]) as little-endian bytes.
    return {"q": qcheck.Tensor(q.reshape(-1), qc_dtype="e4m3fn"),
            "scale": scale.astype("<f4").reshape(-1).view(np.uint8)}
