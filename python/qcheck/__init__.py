"""The kernel API of qcheck's exec backend (docs/exec.md).

A kernel is a plain function decorated with ``@qcheck.kernel(OP, **filters)``:

    import qcheck

    @qcheck.kernel("quant", recipe="token_group")
    def my_quant(inputs, params):
        x = inputs["x"]                  # numpy array, the HDF5 storage dtype (float32 here)
        if params["scale_layout"] != "row":
            raise qcheck.Declined("only the row scale layout")
        ...
        return {"q": q_codes_uint8, "scale": scale_bytes_uint8}

``python -m qcheck_runner MODULE... MANIFEST`` imports the modules (which registers their kernels)
and calls, for every item of the manifest, the kernel whose op and filters match the item.

Only numpy is imported here; torch is imported by to_torch / from_torch when they are called.
"""

__all__ = ["kernel", "Declined", "Tensor", "Inputs", "dtype_of", "find_kernel", "registered",
           "to_torch", "from_torch"]

__version__ = "0.1.0"


class Declined(Exception):
    """Raise it from a kernel that does not implement this item: the item is SKIPPED with the
    message as its reason (never PASS)."""


class Tensor:
    """An output array with its logical qcheck dtype, e.g. ``Tensor(codes, qc_dtype="e4m3fn")``.

    A kernel may return plain numpy arrays instead: then the runner writes no qc_dtype attribute
    and qcheck reads the dataset with the dtype of the expected output of the same name."""

    __slots__ = ("array", "qc_dtype")

    def __init__(self, array, qc_dtype=None):
        self.array = array
        self.qc_dtype = qc_dtype

    def __repr__(self):
        return "Tensor(%r, qc_dtype=%r)" % (self.array, self.qc_dtype)


class Inputs(dict):
    """The inputs of one item: a dict name -> numpy array, with what the file says about them.

    qc_dtype  dict name -> logical dtype of that input ("f32", "bf16", "e4m3fn", ...)
    attrs     dict name -> every attribute of the dataset (qc_dtype, shape, layout), as str/numpy
    meta      the root attributes of the input file (case, op, params, seed, profile, ...)
    """

    def __init__(self, arrays=(), qc_dtype=None, attrs=None, meta=None):
        super().__init__(arrays)
        self.qc_dtype = dict(qc_dtype or {})
        self.attrs = dict(attrs or {})
        self.meta = dict(meta or {})


# The inputs of the item whose kernel is running, for dtype_of(name); set by the runner.
_current_inputs = None


def dtype_of(name, inputs=None):
    """The qc_dtype attribute of input NAME (of ``inputs``, default: the item being run)."""
    src = inputs if inputs is not None else _current_inputs
    if src is None:
        raise RuntimeError("qcheck.dtype_of(%r): no item is being run and no inputs were given" % name)
    try:
        return src.qc_dtype[name]
    except KeyError:
        raise KeyError("input %r has no qc_dtype (inputs: %s)" % (name, ", ".join(sorted(src)))) from None


# ---- the registry -------------------------------------------------------------------------------

class _Kernel:
    """One registered function: its op, its parameter filters and where it came from."""

    def __init__(self, fn, op, filters):
        self.fn = fn
        self.op = op
        self.filters = filters
        self.name = "%s.%s" % (getattr(fn, "__module__", "?"), getattr(fn, "__qualname__", repr(fn)))

    def matches(self, op, params):
        return op == self.op and all(key in params and _filter_ok(want, params[key])
                                     for key, want in self.filters.items())

    def describe(self):
        if not self.filters:
            return self.name
        return "%s (%s)" % (self.name, ", ".join("%s=%s" % kv for kv in sorted(self.filters.items())))


def _filter_ok(want, value):
    """A filter is a value (compared as text, so group=128 matches "128"), a list/tuple/set of
    values (any of them), or a function of the parameter's text returning true or false."""
    if callable(want):
        return bool(want(value))
    if isinstance(want, (list, tuple, set, frozenset)):
        return any(str(w) == value for w in want)
    return str(want) == value


_registry = []


def kernel(op, **filters):
    """Decorator: register ``fn(inputs, params) -> {name: array}`` for items of op OP whose params
    match every keyword filter. The function is returned unchanged (it can still be called)."""
    if not isinstance(op, str) or not op:
        raise TypeError("qcheck.kernel: the op must be a non-empty string, e.g. @qcheck.kernel('quant')")

    def register(fn):
        if not callable(fn):
            raise TypeError("qcheck.kernel(%r) decorates a function, not %r" % (op, fn))
        _registry.append(_Kernel(fn, op, dict(filters)))
        return fn

    return register


def registered():
    """The registered kernels, in registration order."""
    return list(_registry)


class AmbiguousKernel(Exception):
    """Two kernels with as many filters match one item: which one to run is not decided."""


def find_kernel(op, params):
    """The kernel for an item, or None. When several match, the one with the most filters wins
    (``@kernel("quant", recipe="token")`` over ``@kernel("quant")``); a tie raises AmbiguousKernel."""
    found = [k for k in _registry if k.matches(op, params)]
    if not found:
        return None
    best = max(len(k.filters) for k in found)
    top = [k for k in found if len(k.filters) == best]
    if len(top) > 1:
        raise AmbiguousKernel("%d kernels match op %s equally: %s"
                              % (len(top), op, "; ".join(k.describe() for k in top)))
    return top[0]


# ---- torch helpers (torch is imported only when one of them is called) ---------------------------

def to_torch(array, qc_dtype=None, device=None):
    """A torch tensor viewing the codes of ARRAY as the matching torch dtype (see qcheck/_torch.py)."""
    from . import _torch
    return _torch.to_torch(array, qc_dtype, device)


def from_torch(tensor):
    """The numpy array of a torch tensor's codes: uint8 for 8-bit formats, uint16 for bf16/f16."""
    from . import _torch
    return _torch.from_torch(tensor)
