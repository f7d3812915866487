"""The exec command of qcheck (docs/exec.md, protocol version 1).

    python -m qcheck_runner MODULE [MODULE...] MANIFEST

imports every MODULE (a module name, or the path of a .py file), whose @qcheck.kernel functions
register themselves, then runs every item of MANIFEST (B/manifest.json, written by
`qcheck run --backend exec:...`; the last argument, or $QCHECK_EXEC_MANIFEST when the last
argument is not a .json file). For each item it writes exactly one of:

    outputs   HDF5 file, one dataset /outputs/NAME per array the kernel returned
    declined  text: the kernel raised qcheck.Declined, or no kernel matches the item
    error     text: the kernel raised another exception (with the traceback's last lines),
              returned something that is not a dict of arrays, or the inputs could not be read

Every file is written under a temporary name in the same folder and renamed when complete.

Exit status: 0 when every item got its file (whatever the verdicts will be), 1 when a module
failed to import (every item then gets an error file) or a file could not be written, 2 on bad
usage or a manifest this runner does not understand.
"""
import importlib
import importlib.util
import json
import os
import sys
import traceback

import numpy as np

import qcheck

PROTOCOL = "qcheck-exec"
VERSION = 1
TRACEBACK_LINES = 20  # the last lines of a traceback that go into an error file

# HDF5 storage types qcheck reads (golden/golden.c storage_of): anything else is unreadable there
STORAGE = {np.dtype(t): name for t, name in [(np.uint8, "u8"), (np.uint16, "u16"), (np.int32, "i32"),
                                             (np.uint32, "u32"), (np.float32, "f32"), (np.float64, "f64")]}

# numpy dtypes whose values qcheck stores as their codes: dtype name -> (code storage, qc_dtype).
# ml_dtypes arrays (x.astype(ml_dtypes.float8_e4m3fn)) and numpy float16 are written this way.
CODES = {
    "float8_e4m3fn": (np.uint8, "e4m3fn"), "float8_e4m3fnuz": (np.uint8, "e4m3fnuz"),
    "float8_e5m2": (np.uint8, "e5m2"), "float8_e5m2fnuz": (np.uint8, "e5m2fnuz"),
    "float8_e8m0fnu": (np.uint8, "e8m0"), "float4_e2m1fn": (np.uint8, "e2m1"),
    "float6_e2m3fn": (np.uint8, "e2m3"), "float6_e3m2fn": (np.uint8, "e3m2"),
    "bfloat16": (np.uint16, "bf16"), "float16": (np.uint16, "f16"),
}


class ItemError(Exception):
    """Something about one item that goes into its error file (not a kernel exception)."""


# ---- small helpers -------------------------------------------------------------------------------

def _text(v):
    """An HDF5 attribute as Python text (h5py gives bytes for qcheck's fixed-length strings)."""
    if isinstance(v, (bytes, np.bytes_)):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray) and v.shape == ():
        return _text(v[()])
    return v


def write_atomic(path, write):
    """write(tmp_path) creates the file; it is renamed to PATH only when write returns."""
    folder, base = os.path.split(path)
    tmp = os.path.join(folder, ".%s.%d.tmp" % (base, os.getpid()))
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def write_text(path, text):
    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    write_atomic(path, write)


# ---- inputs and outputs --------------------------------------------------------------------------

def read_inputs(path):
    """The /inputs datasets of an item's file as qcheck.Inputs."""
    import h5py
    try:
        with h5py.File(path, "r") as f:
            meta = {k: _text(v) for k, v in f.attrs.items()}
            arrays, dtypes, attrs = {}, {}, {}
            group = f.get("inputs")
            if group is None:
                raise ItemError("%s: no /inputs group" % path)
            for name, ds in group.items():
                arrays[name] = ds[()]
                attrs[name] = {k: _text(v) for k, v in ds.attrs.items()}
                if "qc_dtype" in attrs[name]:
                    dtypes[name] = attrs[name]["qc_dtype"]
    except (OSError, KeyError) as e:
        raise ItemError("cannot read the inputs %s: %s" % (path, e)) from None
    return qcheck.Inputs(arrays, qc_dtype=dtypes, attrs=attrs, meta=meta)


def to_output(name, value):
    """(array, qc_dtype or None) for one returned value: a numpy array, a qcheck.Tensor, an
    ml_dtypes / float16 array (written as its codes) or a torch tensor (through from_torch)."""
    qc_dtype = None
    if isinstance(value, qcheck.Tensor):
        value, qc_dtype = value.array, value.qc_dtype
    if type(value).__module__.split(".")[0] == "torch":  # torch is already imported then
        from qcheck import _torch
        qc_dtype = qc_dtype or _torch.qc_dtype_of_torch(value.dtype)
        value = _torch.from_torch(value)
    a = np.asarray(value)
    if a.dtype.name in CODES:
        storage, code_dtype = CODES[a.dtype.name]
        a, qc_dtype = a.view(storage), qc_dtype or code_dtype
    if a.dtype.newbyteorder("<") in STORAGE and a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    if a.dtype not in STORAGE:
        raise ItemError("output %r has numpy dtype %s, which qcheck cannot read: use one of %s "
                        "(e.g. .astype(np.uint8) for codes)" % (name, a.dtype, ", ".join(
                            str(d) for d in STORAGE)))
    if qc_dtype is not None and not isinstance(qc_dtype, str):
        raise ItemError("output %r: qc_dtype must be a string, not %r" % (name, qc_dtype))
    return a, qc_dtype


def write_outputs(path, result):
    """The kernel's result (a dict name -> array) as /outputs/NAME datasets in PATH."""
    import h5py
    if not isinstance(result, dict):
        raise ItemError("the kernel returned %s, not a dict of output name -> array" % type(result).__name__)
    outputs = []
    for name, value in result.items():
        if not isinstance(name, str) or not name or "/" in name:
            raise ItemError("output name %r: must be a non-empty string without '/'" % (name,))
        try:
            outputs.append((name,) + to_output(name, value))
        except ItemError:
            raise
        except Exception as e:  # np.asarray of something that is not an array
            raise ItemError("output %r: cannot make an array of %s: %s" % (name, type(value).__name__, e)) from None

    def write(tmp):
        with h5py.File(tmp, "w") as f:
            group = f.create_group("outputs")
            for name, array, qc_dtype in outputs:
                ds = group.create_dataset(name, data=array)
                if qc_dtype:
                    ds.attrs["qc_dtype"] = qc_dtype
    try:
        write_atomic(path, write)
    except (OSError, TypeError, ValueError) as e:
        raise ItemError("cannot write the outputs %s: %s" % (path, e)) from None


# ---- one item ------------------------------------------------------------------------------------

def _params_text(params):
    return ", ".join("%s=%s" % kv for kv in params.items()) or "none"


def _exception_text(kernel_name, exc):
    """First line: what was raised; then the traceback's last lines."""
    lines = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip("\n").split("\n")
    head = "%s raised %s: %s" % (kernel_name, type(exc).__name__, exc)
    return head + "\n" + "\n".join(lines[-TRACEBACK_LINES:]) + "\n"


def run_item(item, base):
    """Runs one manifest item; returns ("outputs" | "declined" | "error", text for the log)."""
    path = {key: os.path.join(base, item[key]) for key in ("inputs", "outputs", "declined", "error")}
    kernel = None
    try:
        inputs = read_inputs(path["inputs"])
        op = item.get("op") or inputs.meta.get("op")
        params = item.get("params")
        if params is None:
            params = json.loads(inputs.meta.get("params") or "{}")
        params = {str(k): str(v) for k, v in params.items()}
        try:
            kernel = qcheck.find_kernel(op, params)
        except qcheck.AmbiguousKernel as e:
            raise ItemError(str(e)) from None
        if kernel is None:
            raise qcheck.Declined("no kernel for op %s (params %s)" % (op, _params_text(params)))
        qcheck._current_inputs = inputs
        try:
            result = kernel.fn(inputs, params)
        finally:
            qcheck._current_inputs = None
        write_outputs(path["outputs"], result)
        return "outputs", kernel.name
    except qcheck.Declined as e:
        reason = str(e) or "declined by %s" % (kernel.name if kernel else "the runner")
        write_text(path["declined"], reason)
        return "declined", reason
    except ItemError as e:
        write_text(path["error"], str(e))
        return "error", str(e)
    except Exception as e:  # the kernel's own failure: the item is ERROR, the batch goes on
        text = _exception_text(kernel.name if kernel else "qcheck_runner", e)
        write_text(path["error"], text)
        return "error", text.split("\n", 1)[0]


# ---- the manifest and the command line -----------------------------------------------------------

def load_manifest(path):
    """The manifest's items, checked against the protocol (ValueError says what is wrong)."""
    with open(path, encoding="utf-8") as f:
        m = json.load(f)
    if not isinstance(m, dict) or m.get("protocol") != PROTOCOL:
        raise ValueError("%s: not a %s manifest (protocol %r)" % (path, PROTOCOL, m.get("protocol") if isinstance(m, dict) else None))
    if m.get("version") != VERSION:
        raise ValueError("%s: protocol version %r; this runner speaks version %d" % (path, m.get("version"), VERSION))
    items = m.get("items")
    if not isinstance(items, list):
        raise ValueError("%s: 'items' is not a list" % path)
    for i, it in enumerate(items):
        missing = [k for k in ("inputs", "outputs", "declined", "error") if not isinstance(it, dict) or k not in it]
        if missing:
            raise ValueError("%s: item %d has no %s" % (path, i, ", ".join(missing)))
    return items


def import_kernels(spec):
    """Imports a module name ("mykernels", "pkg.kernels") or a .py file path."""
    if spec.endswith(".py") or os.sep in spec:
        path = os.path.abspath(spec)
        name = os.path.splitext(os.path.basename(path))[0]
        folder = os.path.dirname(path)
        if folder not in sys.path:
            sys.path.insert(0, folder)  # so that the file can import its neighbours
        mod_spec = importlib.util.spec_from_file_location(name, path)
        if mod_spec is None:
            raise ImportError("cannot import %s" % path)
        module = importlib.util.module_from_spec(mod_spec)
        sys.modules[name] = module
        mod_spec.loader.exec_module(module)
        return module
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    return importlib.import_module(spec)


USAGE = """usage: python -m qcheck_runner [-v] MODULE [MODULE...] MANIFEST
Imports the modules (names or .py paths) that register @qcheck.kernel functions, then writes
one outputs, declined or error file per item of MANIFEST (docs/exec.md). MANIFEST is the last
argument, or $QCHECK_EXEC_MANIFEST when the last argument is not a .json file.
  -v   one line per item on stderr"""


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = False
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-h", "--help"):
            print(USAGE)
            return 0
        if flag == "-v":
            verbose = True
        else:
            print("qcheck_runner: unknown option %s\n%s" % (flag, USAGE), file=sys.stderr)
            return 2
    if args and args[-1].endswith(".json"):
        manifest = args.pop()
    else:
        manifest = os.environ.get("QCHECK_EXEC_MANIFEST")
    if not manifest or not args:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        items = load_manifest(manifest)
    except (OSError, ValueError) as e:
        print("qcheck_runner: %s" % e, file=sys.stderr)
        return 2
    base = os.path.dirname(os.path.abspath(manifest))

    import_failure = None
    for spec in args:
        try:
            import_kernels(spec)
        except BaseException as e:  # SystemExit from a module is also a failed import
            import_failure = "qcheck_runner: importing %s failed\n%s" % (spec, _exception_text("import", e))
            break

    status = 0
    for item in items:
        label = item.get("id") or item["inputs"]
        try:
            if import_failure:
                write_text(os.path.join(base, item["error"]), import_failure)
                outcome, text = "error", import_failure.split("\n", 1)[0]
            else:
                outcome, text = run_item(item, base)
        except OSError as e:  # the outcome file itself could not be written
            print("qcheck_runner: %s: cannot write its outcome: %s" % (label, e), file=sys.stderr)
            status = 1
            continue
        if verbose or outcome == "error":
            print("qcheck_runner: %s: %s: %s" % (label, outcome, text), file=sys.stderr)
    if import_failure:
        print(import_failure, file=sys.stderr, end="")
        status = 1
    return status
