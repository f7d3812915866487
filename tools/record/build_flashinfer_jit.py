"""Builds flashinfer's JIT quantization modules for sm_90a with flashinfer's own JIT machinery
(flashinfer/jit/*.py of an unpacked flashinfer-python wheel: its gen_jit_spec, its ninja file, its
flags), on a machine without a GPU and without torch. flashinfer's build code asks torch four things
(the C++ ABI flag, the CUDA version when nvcc is absent, the host compiler, the device's
capability); a stand-in answers them as torch 2.11 on the H200 would (CXX11 ABI; the capability
comes from FLASHINFER_CUDA_ARCH_LIST=9.0a, flashinfer's own setting). Nothing of flashinfer is
changed. tools/record/flashinfer_quant.py loads the modules on the GPU machine.

    python3 build_flashinfer_jit.py --flashinfer ROOT --out DIR
ROOT: the directory holding the wheel's flashinfer/; needs apache-tvm-ffi, ninja, filelock,
packaging in the Python that runs it, and nvcc on PATH or CUDA_HOME."""
import argparse
import os
import shutil
import sys
import types


class _Placeholder:
    """A name flashinfer's modules mention at import (dtypes as dict keys, decorators); calling one
    fails loudly, so nothing built can depend on it."""
    def __init__(self, name):
        self.name = name

    def __call__(self, *_a, **_k):
        raise RuntimeError("torch stand-in: torch.%s was called while building" % self.name)

    def __getattr__(self, attr):
        return _Placeholder(self.name + "." + attr)


class _Torch(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Placeholder(name)


def torch_standin():
    """The four answers flashinfer's build asks torch for; every other name is a placeholder."""
    t = _Torch("torch")
    t._C = types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=True)
    t.version = types.SimpleNamespace(cuda="13.0")
    t.cuda = types.SimpleNamespace(is_available=lambda: False, device_count=lambda: 0)
    ext = types.ModuleType("torch.utils.cpp_extension")
    ext.get_cxx_compiler = lambda: os.environ.get("CXX", "c++")
    ext.check_compiler_is_gcc = lambda _c: True
    utils = types.ModuleType("torch.utils")
    utils.cpp_extension = ext
    t.utils = utils
    sys.modules.update({"torch": t, "torch.utils": utils, "torch.utils.cpp_extension": ext})


def load_jit(root):
    """The two generators, without flashinfer/__init__.py and flashinfer/jit/__init__.py (which
    import every kernel and its dependencies)."""
    for name in ("flashinfer", "flashinfer.jit"):
        pkg = types.ModuleType(name)
        pkg.__path__ = [os.path.join(root, *name.split("."))]
        sys.modules[name] = pkg
    import importlib
    return (importlib.import_module("flashinfer.jit.fp8_quantization"),
            importlib.import_module("flashinfer.jit.fp4_quantization"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flashinfer", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.environ.setdefault("FLASHINFER_CUDA_ARCH_LIST", "9.0a")
    os.environ["FLASHINFER_WORKSPACE_BASE"] = os.path.abspath(a.out + ".work")
    import tvm_ffi  # noqa: F401  (before the stand-in: tvm_ffi binds to a torch it finds loaded)
    torch_standin()
    fp8, fp4 = load_jit(os.path.abspath(a.flashinfer))
    os.makedirs(a.out, exist_ok=True)
    for spec in (fp8.gen_mxfp8_quantization_sm100_module(), fp4.gen_fp4_quantization_sm90_module()):
        spec.build(verbose=True)
        so = str(spec.get_library_path())
        shutil.copy(so, os.path.join(a.out, os.path.basename(so)))
        print("built", os.path.join(a.out, os.path.basename(so)), flush=True)
    ninja = os.path.join(os.path.dirname(str(spec.get_library_path())), "build.ninja")
    print("flags: see", ninja)


if __name__ == "__main__":
    main()
