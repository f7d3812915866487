"""Test helpers: build an exec batch directory exactly as docs/exec.md describes it, and run
the runner on it the way qcheck does (/bin/sh -c 'CMD "$1"' qcheck B/manifest.json)."""
import json
import os
import shlex
import subprocess
import sys

import h5py
import numpy as np

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../python
REPO = os.path.dirname(PYTHON_DIR)
# root attributes the protocol says an input file has (the golden store's, less outputs)
ROOT_ATTRS = ("case", "op", "params", "seed", "profile", "qcheck_version", "format_version")


def _attr_text(text):
    return np.bytes_(text.encode())  # qcheck writes fixed-length strings: h5py reads them as bytes


def write_input_file(path, case, op, params, inputs, seed=1, profile=""):
    """inputs: dict name -> (array, qc_dtype). Root and dataset attributes as golden/golden.h."""
    with h5py.File(path, "w") as f:
        f.attrs["case"] = _attr_text(case)
        f.attrs["op"] = _attr_text(op)
        f.attrs["params"] = _attr_text(json.dumps(params, separators=(",", ":")))
        f.attrs["seed"] = np.uint64(seed)
        f.attrs["profile"] = _attr_text(profile)
        f.attrs["qcheck_version"] = _attr_text("0.1.0")
        f.attrs["format_version"] = np.int32(1)
        g = f.create_group("inputs")
        for name, (array, qc_dtype) in inputs.items():
            ds = g.create_dataset(name, data=array)
            ds.attrs["qc_dtype"] = _attr_text(qc_dtype)
            ds.attrs["shape"] = np.asarray(array.shape, dtype=np.int64)
            ds.attrs["layout"] = _attr_text("row_major")


def copy_inputs_of_golden(golden, path):
    """An exec input file from a `qcheck export` file: its root attributes and /inputs, no /outputs."""
    with h5py.File(golden, "r") as src, h5py.File(path, "w") as dst:
        for k in ROOT_ATTRS:
            if k in src.attrs:
                dst.attrs[k] = src.attrs[k]
        src.copy(src["inputs"], dst, name="inputs")
        return json.loads(src.attrs["params"]), src.attrs["case"].decode(), src.attrs["op"].decode()


def make_batch(folder, items):
    """items: dicts with id, case, op, params and either `inputs` (name -> (array, qc_dtype)) or
    `golden` (a qcheck export file). Writes folder/in/NNNN.h5, an empty folder/out and
    folder/manifest.json; returns the manifest's path and its items."""
    os.makedirs(os.path.join(folder, "in"))
    os.makedirs(os.path.join(folder, "out"))
    entries = []
    for i, it in enumerate(items):
        n = "%04d" % i
        inp = os.path.join(folder, "in", n + ".h5")
        if "golden" in it:
            params, case, op = copy_inputs_of_golden(it["golden"], inp)
            it = dict(it, params=params, case=case, op=op)
        else:
            write_input_file(inp, it["case"], it["op"], it["params"], it["inputs"])
        entries.append({"id": it.get("id", "%s[%d]" % (it["case"], i)), "case": it["case"], "op": it["op"],
                        "params": it["params"], "inputs": "in/%s.h5" % n, "outputs": "out/%s.h5" % n,
                        "declined": "out/%s.declined" % n, "error": "out/%s.error" % n})
    manifest = os.path.join(folder, "manifest.json")
    with open(manifest, "w") as f:
        json.dump({"protocol": "qcheck-exec", "version": 1, "items": entries}, f, indent=1)
    return manifest, entries


def runner_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = PYTHON_DIR + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_exec(cmd, manifest, cwd=None, env=None):
    """Runs CMD as qcheck's exec backend does: /bin/sh -c 'CMD "$1"' qcheck MANIFEST, with
    QCHECK_EXEC_MANIFEST set. Returns the CompletedProcess (text stdout/stderr)."""
    env = dict(env or runner_env())
    env["QCHECK_EXEC_MANIFEST"] = manifest
    return subprocess.run(["/bin/sh", "-c", cmd + ' "$1"', "qcheck", manifest], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600)


def runner_cmd(*modules):
    """The exec command line: this interpreter, -m qcheck_runner, the modules."""
    return " ".join([shlex.quote(sys.executable), "-m", "qcheck_runner"] + [shlex.quote(m) for m in modules])


def outcome(folder, entry):
    """(kind, path) of the one outcome file of an item; AssertionError when there are 0 or 2+."""
    found = [(k, os.path.join(folder, entry[k])) for k in ("outputs", "declined", "error")
             if os.path.exists(os.path.join(folder, entry[k]))]
    assert len(found) == 1, "item %s: outcome files %s (exactly one expected)" % (entry["id"], found)
    return found[0]


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()
