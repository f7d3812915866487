"""The runner against batch directories built by hand as docs/exec.md says (no qcheck needed)."""
import json
import os
import shutil
import sys
import tempfile
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import batch  # noqa: E402

TESTS = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(TESTS, "kernels_for_tests.py")
X = np.array([[1.0, -2.5, 0.0], [3.0, np.inf, -0.0]], dtype=np.float32)


def item(op, params=None, x=X, qc_dtype="f32", case=None):
    return {"case": case or "case_" + op, "op": op, "params": params or {}, "inputs": {"x": (x, qc_dtype)}}


class RunnerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="qcheck_runner_test.")
        self.addCleanup(shutil.rmtree, self.dir)

    def run_batch(self, items, modules=(KERNELS,), expect_rc=0, cmd=None):
        manifest, entries = batch.make_batch(self.dir, items)
        proc = batch.run_exec(cmd or batch.runner_cmd(*modules), manifest)
        self.assertEqual(proc.returncode, expect_rc, "runner exit status; stderr:\n" + proc.stderr)
        leftovers = [n for n in os.listdir(os.path.join(self.dir, "out")) if n.endswith(".tmp")]
        self.assertEqual(leftovers, [], "temporary files left in out/")
        return entries, proc

    def outcome(self, entry):
        return batch.outcome(self.dir, entry)

    def read_outputs(self, path):
        with h5py.File(path, "r") as f:
            return {name: (ds[()], ds.attrs.get("qc_dtype")) for name, ds in f["outputs"].items()}

    # ---- outputs -------------------------------------------------------------------------------

    def test_plain_array_output(self):
        entries, _ = self.run_batch([item("double")])
        kind, path = self.outcome(entries[0])
        self.assertEqual(kind, "outputs")
        out = self.read_outputs(path)
        self.assertEqual(list(out), ["y"])
        y, qc_dtype = out["y"]
        self.assertEqual(y.dtype, np.float32)
        self.assertEqual(y.shape, X.shape)
        np.testing.assert_array_equal(y, X * 2)
        self.assertTrue(np.signbit(y[1, 2]), "-0.0 * 2 keeps its sign")
        self.assertIsNone(qc_dtype, "a plain array gets no qc_dtype attribute")

    def test_tensor_with_qc_dtype(self):
        entries, _ = self.run_batch([item("tobf16")])
        kind, path = self.outcome(entries[0])
        self.assertEqual(kind, "outputs")
        y, qc_dtype = self.read_outputs(path)["y"]
        self.assertEqual(y.dtype, np.uint16)
        self.assertEqual(qc_dtype, "bf16")
        self.assertEqual(int(y[0, 0]), 0x3F80)  # bf16 1.0
        self.assertEqual(int(y[1, 1]), 0x7F80)  # bf16 +Inf

    def test_float16_written_as_codes(self):
        entries, _ = self.run_batch([item("half")])
        y, qc_dtype = self.read_outputs(self.outcome(entries[0])[1])["y"]
        self.assertEqual((y.dtype, qc_dtype), (np.uint16, "f16"))
        self.assertEqual(int(y[0, 1]), 0xC100)  # f16 -2.5

    def test_inputs_dtype_and_meta_seen_by_the_kernel(self):
        codes = np.arange(6, dtype=np.uint8).reshape(2, 3)
        entries, _ = self.run_batch([item("tell_dtype", x=codes, qc_dtype="e4m3fn", case="mycase")])
        kind, path = self.outcome(entries[0])
        self.assertEqual(kind, "declined")
        self.assertEqual(batch.read_text(path).strip(),
                         "x is e4m3fn / e4m3fn, storage uint8, shape [2, 3], case mycase")

    # ---- declined and error --------------------------------------------------------------------

    def test_no_kernel_for_op_declines(self):
        entries, _ = self.run_batch([item("nosuchop", {"a": "1", "b": "two"})])
        kind, path = self.outcome(entries[0])
        self.assertEqual(kind, "declined")
        self.assertEqual(batch.read_text(path).strip(), "no kernel for op nosuchop (params a=1, b=two)")

    def test_filters_that_do_not_match_decline(self):
        entries, _ = self.run_batch([item("only_filtered", {"recipe": "block"}),
                                     item("only_filtered", {"recipe": "token"})])
        kind, path = self.outcome(entries[0])
        self.assertEqual(kind, "declined")
        self.assertIn("no kernel for op only_filtered (params recipe=block)", batch.read_text(path))
        self.assertEqual(self.outcome(entries[1])[0], "outputs")

    def test_kernel_exception_is_error_with_traceback(self):
        entries, proc = self.run_batch([item("boom", {"n": "7"}), item("double")])
        kind, path = self.outcome(entries[0])
        self.assertEqual(kind, "error")
        text = batch.read_text(path)
        first = text.split("\n", 1)[0]
        self.assertIn("kernels_for_tests.boom raised ValueError: planted failure with n=7", first)
        self.assertIn("helper_that_fails", text, "the traceback's last lines name the failing function")
        self.assertIn("ValueError: planted failure with n=7", text.strip().split("\n")[-1])
        self.assertEqual(self.outcome(entries[1])[0], "outputs", "the batch goes on after an error")
        self.assertIn("planted failure", proc.stderr)

    def test_bad_returns_are_errors(self):
        entries, _ = self.run_batch([item("not_a_dict"), item("int64_out")])
        kind, path = self.outcome(entries[0])
        self.assertEqual(kind, "error")
        self.assertIn("returned list, not a dict", batch.read_text(path))
        kind, path = self.outcome(entries[1])
        self.assertEqual(kind, "error", "no outputs file at all, not one without y")
        self.assertIn("'y' has numpy dtype int64", batch.read_text(path))

    def test_unreadable_inputs_are_errors(self):
        manifest, entries = batch.make_batch(self.dir, [item("double")])
        with open(os.path.join(self.dir, entries[0]["inputs"]), "wb") as f:
            f.write(b"not hdf5")
        proc = batch.run_exec(batch.runner_cmd(KERNELS), manifest)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        kind, path = self.outcome(entries[0])
        self.assertEqual(kind, "error")
        self.assertIn("cannot read the inputs", batch.read_text(path))

    # ---- kernel selection ----------------------------------------------------------------------

    def test_most_specific_filter_wins(self):
        cases = [({"mode": "a"}, 0), ({"mode": "b"}, 1), ({"mode": "c", "group": "128"}, 2),
                 ({"mode": "d", "group": "128"}, 2), ({"mode": "c", "group": "32"}, 0), ({"mode": "zz"}, 3)]
        entries, _ = self.run_batch([item("pick", p) for p, _ in cases])
        for (params, want), entry in zip(cases, entries):
            kind, path = self.outcome(entry)
            self.assertEqual(kind, "outputs", params)
            self.assertEqual(int(self.read_outputs(path)["which"][0][0]), want, params)

    def test_equally_specific_kernels_are_an_error(self):
        entries, _ = self.run_batch([item("tie", {"mode": "b", "flavor": "x"}), item("tie", {"mode": "b"})])
        kind, path = self.outcome(entries[0])
        self.assertEqual(kind, "error")
        self.assertIn("2 kernels match op tie equally", batch.read_text(path))
        self.assertEqual(self.outcome(entries[1])[0], "outputs")

    # ---- the command line ----------------------------------------------------------------------

    def test_module_by_name_and_several_modules(self):
        # by name, found through the working directory (qcheck runs the command in its own)
        extra = os.path.join(self.dir, "extra_kernels.py")
        with open(extra, "w") as f:
            f.write("import numpy as np, qcheck\n"
                    "@qcheck.kernel('triple')\n"
                    "def triple(inputs, params):\n    return {'y': inputs['x'] * np.float32(3)}\n")
        shutil.copy(KERNELS, os.path.join(self.dir, "kernels_for_tests.py"))
        manifest, entries = batch.make_batch(os.path.join(self.dir, "b"), [item("triple"), item("double")])
        proc = batch.run_exec(batch.runner_cmd("kernels_for_tests", "extra_kernels"), manifest, cwd=self.dir)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        folder = os.path.join(self.dir, "b")
        for entry, factor in zip(entries, (3, 2)):
            kind, path = batch.outcome(folder, entry)
            self.assertEqual(kind, "outputs", proc.stderr)
            np.testing.assert_array_equal(self.read_outputs(path)["y"][0], X * factor)

    def test_manifest_from_the_environment(self):
        manifest, entries = batch.make_batch(self.dir, [item("double")])
        env = batch.runner_env()
        env["QCHECK_EXEC_MANIFEST"] = manifest
        import subprocess
        proc = subprocess.run([sys.executable, "-m", "qcheck_runner", KERNELS], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.outcome(entries[0])[0], "outputs")

    def test_import_failure_makes_every_item_an_error(self):
        bad = os.path.join(self.dir, "broken_kernels.py")
        with open(bad, "w") as f:
            f.write("import qcheck\nraise RuntimeError('this module is broken')\n")
        entries, proc = self.run_batch([item("double"), item("boom")], modules=(KERNELS, bad), expect_rc=1)
        for entry in entries:
            kind, path = self.outcome(entry)
            self.assertEqual(kind, "error")
            text = batch.read_text(path)
            self.assertIn("importing %s failed" % bad, text)
            self.assertIn("this module is broken", text)

    def test_unknown_protocol_version_is_refused(self):
        manifest, entries = batch.make_batch(self.dir, [item("double")])
        with open(manifest) as f:
            m = json.load(f)
        m["version"] = 2
        with open(manifest, "w") as f:
            json.dump(m, f)
        proc = batch.run_exec(batch.runner_cmd(KERNELS), manifest)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("protocol version 2", proc.stderr)
        self.assertEqual(os.listdir(os.path.join(self.dir, "out")), [], "no outcome for a batch not understood")

    def test_params_fall_back_to_the_input_file(self):
        manifest, entries = batch.make_batch(self.dir, [item("nosuchop", {"k": "v"})])
        with open(manifest) as f:
            m = json.load(f)
        del m["items"][0]["params"], m["items"][0]["op"]
        with open(manifest, "w") as f:
            json.dump(m, f)
        proc = batch.run_exec(batch.runner_cmd(KERNELS), manifest)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("no kernel for op nosuchop (params k=v)", batch.read_text(self.outcome(entries[0])[1]))


class ApiTest(unittest.TestCase):
    def test_decorator_returns_the_function_and_torch_is_not_imported(self):
        import qcheck
        import qcheck_runner  # noqa: F401

        @qcheck.kernel("api_test_op", group=128)
        def f(inputs, params):
            return {"y": inputs["x"]}

        self.assertEqual(f({"x": 1}, {}), {"y": 1})
        self.assertIs(qcheck.find_kernel("api_test_op", {"group": "128"}).fn, f)
        self.assertIsNone(qcheck.find_kernel("api_test_op", {"group": "32"}))
        self.assertIsNone(qcheck.find_kernel("api_test_op", {}))
        if "torch" not in sys.modules:  # nothing else in this process imports torch
            self.assertNotIn("torch", sys.modules)

    def test_dtype_of(self):
        import qcheck
        inputs = qcheck.Inputs({"x": np.zeros(2, np.uint8)}, qc_dtype={"x": "e8m0"})
        self.assertEqual(qcheck.dtype_of("x", inputs), "e8m0")
        with self.assertRaises(KeyError):
            qcheck.dtype_of("w", inputs)
        with self.assertRaises(RuntimeError):
            qcheck.dtype_of("x")  # no item is running


def _torch_available():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


@unittest.skipUnless(_torch_available(), "torch is not installed: the to_torch/from_torch tests are skipped")
class TorchTest(unittest.TestCase):
    def test_round_trip_of_codes(self):
        import torch
        import qcheck
        codes = np.array([0x00, 0x38, 0x7E, 0x7F, 0x80, 0xFE], np.uint8)
        t = qcheck.to_torch(codes, "e4m3fn")
        self.assertEqual(t.dtype, torch.float8_e4m3fn)
        self.assertEqual(t.float()[1].item(), 1.0)  # 0x38 is 1.0
        back = qcheck.from_torch(t)
        self.assertEqual(back.dtype, np.uint8)
        np.testing.assert_array_equal(back, codes)
        bf = np.array([0x3F80, 0xC020, 0x7FC0], np.uint16)
        tb = qcheck.to_torch(bf, "bf16")
        self.assertEqual(tb.dtype, torch.bfloat16)
        self.assertEqual(tb.float()[1].item(), -2.5)
        np.testing.assert_array_equal(qcheck.from_torch(tb), bf)
        self.assertEqual(qcheck.from_torch(qcheck.to_torch(bf, "bf16")).dtype, np.uint16)
        with self.assertRaises(ValueError):
            qcheck.to_torch(codes, "bf16")  # 1-byte codes cannot be bf16

    def test_runner_writes_torch_tensors_as_codes(self):
        import torch
        from qcheck_runner import to_output
        a, qc_dtype = to_output("q", torch.tensor([1.0, -2.0]).to(torch.float8_e4m3fn))
        self.assertEqual((a.dtype, qc_dtype), (np.uint8, "e4m3fn"))
        np.testing.assert_array_equal(a, [0x38, 0xC0])


if __name__ == "__main__":
    unittest.main()
