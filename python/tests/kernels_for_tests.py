"""Kernels for test_runner.py: each exercises one path of the runner."""
import numpy as np

import qcheck


@qcheck.kernel("double")
def double(inputs, params):
    """f32 in, f32 out, plain arrays: y = 2x."""
    return {"y": inputs["x"] * np.float32(2)}


@qcheck.kernel("tobf16")
def tobf16(inputs, params):
    """uint16 codes with a qc_dtype attribute; bf16 by truncation, good enough for a test."""
    bits = inputs["x"].astype(np.float32).view(np.uint32)
    return {"y": qcheck.Tensor((bits >> 16).astype(np.uint16), qc_dtype="bf16")}


@qcheck.kernel("half")
def half(inputs, params):
    """numpy float16 is written as its uint16 codes with qc_dtype f16."""
    return {"y": inputs["x"].astype(np.float16)}


@qcheck.kernel("tell_dtype")
def tell_dtype(inputs, params):
    """Declines with what it saw, so that the test can read it from the declined file."""
    raise qcheck.Declined("x is %s / %s, storage %s, shape %s, case %s"
                          % (qcheck.dtype_of("x"), inputs.qc_dtype["x"], inputs["x"].dtype,
                             list(inputs["x"].shape), inputs.meta["case"]))


@qcheck.kernel("boom")
def boom(inputs, params):
    return helper_that_fails(params["n"])


def helper_that_fails(n):
    raise ValueError("planted failure with n=%s" % n)


@qcheck.kernel("not_a_dict")
def not_a_dict(inputs, params):
    return [inputs["x"]]


@qcheck.kernel("int64_out")
def int64_out(inputs, params):
    return {"ok": np.zeros(3, np.uint8), "y": np.arange(3)}  # int64: qcheck cannot read it


# Filters: the most specific kernel wins; a list means any of its values.
@qcheck.kernel("pick")
def pick_any(inputs, params):
    return {"which": np.array([0], np.uint8)}


@qcheck.kernel("pick", mode="b")
def pick_b(inputs, params):
    return {"which": np.array([1], np.uint8)}


@qcheck.kernel("pick", mode=["c", "d"], group=128)
def pick_cd_128(inputs, params):
    return {"which": np.array([2], np.uint8)}


@qcheck.kernel("pick", mode=lambda v: v.startswith("z"))
def pick_z(inputs, params):
    return {"which": np.array([3], np.uint8)}


# Two kernels with one filter each that both match mode=b,flavor=x: ambiguous for that item.
@qcheck.kernel("tie", mode="b")
def tie_mode(inputs, params):
    return {"y": np.zeros(1, np.uint8)}


@qcheck.kernel("tie", flavor="x")
def tie_flavor(inputs, params):
    return {"y": np.ones(1, np.uint8)}


@qcheck.kernel("only_filtered", recipe="token")
def only_filtered(inputs, params):
    return {"y": np.zeros(1, np.uint8)}
