"""torch <-> numpy by the bytes: the codes of qcheck's formats as torch dtypes and back.

qcheck stores every 8-bit format as uint8 (one code per byte) and bf16/f16 as uint16; torch has
a dtype for most of them. to_torch views those bytes as the torch dtype (no rounding happens);
from_torch gives the bytes back. Imported only when used, so torch is never needed otherwise.
"""
import numpy as np

# qc_dtype -> the torch dtype's attribute name (torch releases without one raise a clear error)
TORCH_NAMES = {
    "f32": "float32", "f64": "float64", "bf16": "bfloat16", "f16": "float16",
    "e4m3fn": "float8_e4m3fn", "e4m3fnuz": "float8_e4m3fnuz",
    "e5m2": "float8_e5m2", "e5m2fnuz": "float8_e5m2fnuz",
    "e8m0": "float8_e8m0fnu", "e2m1x2": "float4_e2m1fn_x2",
    "u8": "uint8", "i32": "int32", "u32": "uint32",
}

# storage qcheck uses for the codes of a torch dtype that numpy cannot hold
_CODE_VIEW = {1: (np.uint8, "uint8"), 2: (np.uint16, "int16")}


def _torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("qcheck.to_torch / from_torch need torch (pip install torch): %s" % e) from None
    return torch


def torch_dtype(qc_dtype):
    """The torch dtype of a qcheck dtype name, e.g. "e4m3fn" -> torch.float8_e4m3fn."""
    torch = _torch()
    name = TORCH_NAMES.get(qc_dtype)
    if name is None:
        raise ValueError("no torch dtype for qc_dtype %r (known: %s)" % (qc_dtype, ", ".join(sorted(TORCH_NAMES))))
    if not hasattr(torch, name):
        raise ValueError("this torch (%s) has no torch.%s for qc_dtype %r" % (torch.__version__, name, qc_dtype))
    return getattr(torch, name)


def qc_dtype_of_torch(dtype):
    """The qcheck dtype name of a torch dtype, or None when it has none."""
    text = str(dtype).replace("torch.", "")
    for qc, name in TORCH_NAMES.items():
        if name == text:
            return qc
    return None


def to_torch(array, qc_dtype=None, device=None):
    """A torch tensor of ARRAY's bytes as the torch dtype of QC_DTYPE (default: the array's own
    dtype), on DEVICE ("cuda", "cpu", ...; default: where torch.from_numpy puts it, the CPU).

    uint8 codes of e4m3fn become torch.float8_e4m3fn, uint16 codes of bf16 torch.bfloat16, ...;
    the element size must match (a uint8 array cannot be viewed as bf16)."""
    torch = _torch()
    a = np.ascontiguousarray(array)
    if a.dtype == np.uint16:  # torch.from_numpy has no uint16 before torch 2.3: go through int16
        t = torch.from_numpy(a.view(np.int16))
    else:
        t = torch.from_numpy(a)
    if qc_dtype is not None:
        want = torch_dtype(qc_dtype)
        if want != t.dtype:
            if t.element_size() != torch.empty((), dtype=want).element_size():
                raise ValueError("cannot view %s elements as %s (qc_dtype %r): element sizes differ"
                                 % (a.dtype, want, qc_dtype))
            t = t.view(want)
    return t.to(device) if device is not None else t


def from_torch(tensor):
    """The numpy array of TENSOR's codes (moved to the CPU): float8/float4 dtypes as uint8,
    bfloat16/float16 as uint16, dtypes numpy has (float32, int32, uint8, ...) as themselves."""
    torch = _torch()
    t = tensor.detach().cpu().contiguous()
    plain = {torch.float32, torch.float64, torch.int32, torch.uint8, torch.int64, torch.int8, torch.bool}
    if t.dtype in plain:
        return t.numpy()
    size = t.element_size()
    if size not in _CODE_VIEW:
        raise ValueError("from_torch: no byte view for %s" % t.dtype)
    np_type, torch_name = _CODE_VIEW[size]
    return t.view(getattr(torch, torch_name)).numpy().view(np_type)
