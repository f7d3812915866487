"""Exact-sum GEMM probes (issue 17, item 7): in every instance of gemm_exact_probe each fp32
partial sum is exact, so the expected output is the exact product rounded once to nearest and the
bound is 0. Checked here with numpy's float64 product (exact for these integers times powers of
two) and ml_dtypes' RNE, not with qcheck's own GEMM; and the planted bugs that hid under the fp32
bound (a bf16 output rounded toward zero, a weight scale read from the next K block) must FAIL
every instance."""
import os
import re
import sys
import unittest

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_e2e import ExportedBatch, instances, qc  # noqa: E402

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None

CASE = "gemm_exact_probe"


@unittest.skipUnless(ml_dtypes is not None, "ml_dtypes is not installed")
class GemmExactProbeTest(ExportedBatch):
    def test_expected_output_is_the_exact_product_rounded_to_nearest(self):
        found = instances(CASE, "")
        self.assertGreater(len(found), 0)
        for p in found:
            path = os.path.join(self.dir, "g.h5")
            qc("export", "--case", CASE, "--params", p, "--out", path)
            with h5py.File(path, "r") as f:
                a, b = f["inputs/a"][()].astype(np.float64), f["inputs/b"][()].astype(np.float64)
                c, bound = f["outputs/c"][()], f["outputs/c.bound"][()]
            exact = a @ b.T  # integers times 2^+-3 below 2^21: exact in float64
            self.assertTrue(np.all(exact.astype(np.float32).astype(np.float64) == exact), p)
            out = ml_dtypes.bfloat16 if "out=bf16" in p else np.float16
            want = exact.astype(np.float32).astype(out).view(np.uint16)
            self.assertTrue(np.array_equal(want, c.view(np.uint16)), "%s: c is not RN(exact)" % p)
            self.assertTrue(np.all(bound == 0), "%s: the bound is not 0 everywhere" % p)
            self.assertGreater(int(np.sum(exact != want.view(out).astype(np.float64))), 0,
                               "%s: no element needs the output rounding, a rounding bug could hide" % p)

    def test_planted_bugs_fail_every_instance(self):
        # a per-tensor weight has one scale along K: the scale-block bug has no neighbour to read
        one_scale = len([p for p in instances(CASE, "") if "kind=fp8_tensor" in p])
        self.assertGreater(one_scale, 0)
        for mutant, declined in (("gemm-out-toward-zero", 0), ("gemm-scale-block-off-by-one", one_scale)):
            out = qc("run", "--case", CASE, "--backend", "mutant:" + mutant, "--quiet", check=False).stdout
            m = re.search(r"(\d+) passed, (\d+) failed, (\d+) skipped", out)
            self.assertIsNotNone(m, out)
            self.assertEqual((int(m.group(1)), int(m.group(3))), (0, declined), "%s escapes:\n%s" % (mutant, out[-1500:]))
            self.assertEqual(int(m.group(2)), len(instances(CASE, "")) - declined, out[-1500:])


if __name__ == "__main__":
    unittest.main()
