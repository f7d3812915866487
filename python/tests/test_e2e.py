"""End to end with the real qcheck binary: `qcheck export` gives instances with their expected
outputs, the exec batch gets their /inputs only, the runner runs the example kernels, and
`qcheck verify` judges every outputs file.

The binary: $QCHECK_BIN (run_tests.py --qcheck sets it; then a missing binary is a failure),
else REPO/build/harness/qcheck (when absent the tests are skipped)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import batch  # noqa: E402

EXAMPLES = os.path.join(batch.PYTHON_DIR, "examples")
# the values exactly between two e2m1 codes, where ties-to-even and ties-away differ
E2M1_TIES = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], dtype=np.float32)

try:
    import ml_dtypes  # noqa: F401
    HAVE_ML_DTYPES = True
except ImportError:
    HAVE_ML_DTYPES = False


def qcheck_bin():
    path = os.environ.get("QCHECK_BIN")
    if path:
        if not os.access(path, os.X_OK):
            raise AssertionError("QCHECK_BIN=%s is not an executable" % path)
        return path
    path = os.path.join(batch.REPO, "build", "harness", "qcheck")
    if not os.access(path, os.X_OK):
        raise unittest.SkipTest("no qcheck binary (set QCHECK_BIN or build %s)" % path)
    return path


def qc(*args, check=True):
    proc = subprocess.run([qcheck_bin()] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError("qcheck %s: exit %d\n%s" % (" ".join(args), proc.returncode, proc.stdout))
    return proc


def instances(case, params):
    """The --params of every instance of CASE (quick tier) whose params include PARAMS, from the
    REPRO lines of `qcheck run --backend ref`."""
    out = qc("run", "--case", case, "--params", params, "--backend", "ref").stdout
    found = re.findall(r"REPRO: qcheck run --case %s --params '([^']*)'" % re.escape(case), out)
    if not found:
        raise AssertionError("no instance of %s with %s:\n%s" % (case, params, out))
    return found


def parse_params(text):
    return dict(kv.split("=", 1) for kv in text.split(","))


class ExportedBatch(unittest.TestCase):
    """A temp folder with `golden/NNNN.h5` exports and the exec batch `b/` built from them."""

    def setUp(self):
        qcheck_bin()
        self.dir = tempfile.mkdtemp(prefix="qcheck_e2e.")
        self.addCleanup(shutil.rmtree, self.dir)

    def run_kernels(self, selections, *modules):
        """selections: (case, params filter) pairs. Exports them, runs the runner; returns a list
        of (params dict, golden path, outcome kind, outcome path)."""
        os.makedirs(os.path.join(self.dir, "golden"))
        items = []
        for case, params in selections:
            for p in instances(case, params):
                golden = os.path.join(self.dir, "golden", "%04d.h5" % len(items))
                qc("export", "--case", case, "--params", p, "--out", golden)
                items.append({"id": "%s[%s]" % (case, p), "golden": golden})
        folder = os.path.join(self.dir, "b")
        manifest, entries = batch.make_batch(folder, items)
        with h5py.File(os.path.join(folder, entries[0]["inputs"]), "r") as f:
            self.assertNotIn("outputs", f, "the exec input file has no expected outputs")
        proc = batch.run_exec(batch.runner_cmd(*modules), manifest)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        results = []
        for it, entry in zip(items, entries):
            kind, path = batch.outcome(folder, entry)
            results.append((entry["params"], it["golden"], kind, path))
        return results

    def verify(self, golden, outputs):
        return qc("verify", "--golden", golden, "--outputs", outputs, check=False)

    def assert_pass(self, golden, outputs, what):
        proc = self.verify(golden, outputs)
        self.assertEqual(proc.returncode, 0, "%s should PASS:\n%s" % (what, proc.stdout))
        self.assertTrue(proc.stdout.startswith("PASS"), proc.stdout)


@unittest.skipUnless(HAVE_ML_DTYPES, "ml_dtypes is not installed: the ml_dtypes cast kernels are skipped")
class CastMlDtypesTest(ExportedBatch):
    def test_correct_kernel_passes_every_ml_dtypes_cast(self):
        sel = [(c, "profile=ml_dtypes") for c in ("cast_fp8", "cast_fp4_fp6", "cast_half", "cast_edges")]
        results = self.run_kernels(sel, os.path.join(EXAMPLES, "cast_mldtypes.py"))
        passed = declined = 0
        for params, golden, kind, path in results:
            if params.get("ties", "even") != "even":
                self.assertEqual(kind, "declined", params)
                self.assertIn("ml_dtypes astype has no policy ties=%s" % params["ties"], batch.read_text(path))
                declined += 1
                continue
            self.assertEqual(kind, "outputs", "%s: %s" % (params, batch.read_text(path) if kind != "outputs" else ""))
            self.assert_pass(golden, path, "cast %s" % params)
            passed += 1
        self.assertGreaterEqual(passed, 100)
        self.assertEqual(declined, 24)  # cast_fp4_fp6: 3 formats x ties zero/away x 2 dists x 2 lengths

    def test_planted_tie_bug_fails_as_tie_flip(self):
        sel = [("cast_fp4_fp6", "to=e2m1,profile=ml_dtypes,ties=even"), ("cast_half", "profile=ml_dtypes,to=bf16")]
        results = self.run_kernels(sel, os.path.join(EXAMPLES, "cast_buggy.py"))
        failed = 0
        for params, golden, kind, path in results:
            if params["to"] != "e2m1":
                self.assertEqual(kind, "declined")
                self.assertIn("no kernel for op cast (params to=bf16, profile=ml_dtypes", batch.read_text(path))
                continue
            self.assertEqual(kind, "outputs")
            proc = self.verify(golden, path)
            with h5py.File(golden, "r") as f:
                x = f["inputs/x"][()]
            if not np.isin(np.abs(x), E2M1_TIES).any():  # (n=7 holds only NaN, Inf, zeros and max)
                self.assertEqual(proc.returncode, 0, "no tie in the input, nothing to flip:\n" + proc.stdout)
                continue
            self.assertEqual(proc.returncode, 1, "the planted bug must FAIL:\n" + proc.stdout)
            self.assertTrue(proc.stdout.startswith("FAIL"), proc.stdout)
            classes = re.findall(r"\[(\w+)(?:, within budget)?\]", proc.stdout)
            self.assertTrue(classes, proc.stdout)
            self.assertEqual(set(classes), {"tie_flip"}, "every mismatch is a tie flip:\n" + proc.stdout)
            self.assertIn("tie_flip=", proc.stdout)  # the per-output class summary
            failed += 1
        self.assertEqual(failed, 2)  # n=1000 with both distributions


class QuantTokenGroupTest(ExportedBatch):
    def test_numpy_token_group_matches_sgl_kernel_sm100(self):
        if not HAVE_ML_DTYPES:
            self.skipTest("ml_dtypes is not installed (the kernel casts with it)")
        results = self.run_kernels([("quant_token_group", "profile=sgl-kernel-sm100")],
                                   os.path.join(EXAMPLES, "quant_token_group.py"))
        passed = 0
        for params, golden, kind, path in results:
            if params["ue8m0"] != "0" or params["scale_layout"] != "row":
                self.assertEqual(kind, "declined", params)
                self.assertIn("not implemented", batch.read_text(path))
                continue
            self.assertEqual(kind, "outputs", params)
            self.assert_pass(golden, path, "quant %s" % params)
            passed += 1
        self.assertEqual(passed, 4)  # group 32/128 x rows 1/9

        # Control: the same outputs with one scale byte changed must FAIL (verify really judges).
        params, golden, kind, path = next(r for r in results if r[2] == "outputs")
        broken = os.path.join(self.dir, "broken.h5")
        shutil.copy(path, broken)
        with h5py.File(broken, "r+") as f:
            f["outputs/scale"][0] ^= 1
        proc = self.verify(golden, broken)
        self.assertEqual(proc.returncode, 1, proc.stdout)


class ExecBackendTest(unittest.TestCase):
    """`qcheck run --backend exec:...` itself, once the binary has the exec backend."""

    def run_exec_backend(self, case, params, module):
        if not HAVE_ML_DTYPES:
            self.skipTest("ml_dtypes is not installed")
        cmd = batch.runner_cmd(os.path.join(EXAMPLES, module))
        return subprocess.run([qcheck_bin(), "run", "--case", case, "--params", params, "--backend", "exec:" + cmd],
                              env=batch.runner_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=600)

    def test_correct_kernel_passes(self):
        proc = self.run_exec_backend("cast_fp8", "profile=ml_dtypes,to=e4m3fn", "cast_mldtypes.py")
        self.assertEqual(proc.returncode, 0, proc.stdout)
        self.assertIn("PASS", proc.stdout)

    def test_planted_bug_fails_as_tie_flip(self):
        proc = self.run_exec_backend("cast_fp4_fp6", "to=e2m1,profile=ml_dtypes,ties=even,n=1000",
                                     "cast_buggy.py")
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertIn("tie_flip", proc.stdout)
        self.assertNotIn("one_ulp", proc.stdout)


if __name__ == "__main__":
    unittest.main()
