"""End to end with the real qcheck binary: `qcheck export` gives instances with their expected
outputs, the exec batch gets their /inputs only, the runner runs the example kernels, and
`qcheck verify` judges every outputs file.

The binary: $QCHECK_BIN (run_tests.py --qcheck sets it; then a missing binary is a failure),
else REPO/build/harness/qcheck (when absent the tests are skipped)."""
import json
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
    import ml_dtypes
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
    out = qc("run", "--case", case, *(["--params", params] if params else []), "--backend", "ref", "-v").stdout
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


@unittest.skipUnless(HAVE_ML_DTYPES, "ml_dtypes is not installed: the moe weight bytes are not checked")
class MoeWeightOperandsTest(ExportedBatch):
    """A moe instance carries its expert weights as the kernel consumes them (w13.codes, w13.scale,
    w2.codes, w2.scale, *.gscale): the bytes are checked here against numpy and ml_dtypes from the
    recipes' rules (docs/spec/formats.md, layouts.md §9.4), not against qcheck's quantizer."""

    def exported(self, case, params):
        path = os.path.join(self.dir, "%s.h5" % case)
        qc("export", "--case", case, "--params", params, "--out", path)
        with h5py.File(path, "r") as f:
            return {k: (v[()], v.attrs["qc_dtype"].decode() if isinstance(v.attrs["qc_dtype"], bytes)
                        else v.attrs["qc_dtype"]) for k, v in f["inputs"].items()}

    def check_nearest(self, w, got, unit, grid, what):
        """Each code's value (got) is the format value nearest w / unit, ties to the even code: the
        quotient's own fp32 rounding (x / s, x * (1/s), rcp.approx) may move a value across a
        midpoint only within 1e-6 of it; beyond the format's max it saturates."""
        q = np.clip(np.abs(w.astype(np.float64) / unit), 0, grid.max())
        d = np.abs(np.abs(got) - q)
        best = np.abs(grid[None, :] - q.reshape(-1, 1)).min(axis=1).reshape(q.shape)
        far = d > best + 1e-6 * q + 1e-30
        self.assertFalse(far.any(), "%s: %d codes are not the nearest (first at %s)" %
                         (what, int(far.sum()), np.argwhere(far)[:1].tolist()))
        sign = (np.signbit(got) == (w < 0)) | (got == 0)
        self.assertTrue(sign.all(), "%s: %d signs differ" % (what, int((~sign).sum())))

    def check_e4m3(self, w, codes, scale, block, scale_of, what):
        """fp32 scales, one per block (rows x cols) as scale_of(amax) gives it; e4m3fn codes nearest
        w / scale."""
        e, rows, cols = w.shape
        br, bc = block
        self.assertEqual(scale.shape, (e, -(-rows // br), -(-cols // bc)))
        unit = np.repeat(np.repeat(scale.astype(np.float64), br, axis=1), bc, axis=2)[:, :rows, :cols]
        for x in range(e):
            for i in range(scale.shape[1]):
                for j in range(scale.shape[2]):
                    amax = np.float32(np.abs(w[x, i * br:(i + 1) * br, j * bc:(j + 1) * bc]).max())
                    self.assertTrue(scale_of(amax, scale[x, i, j]), "%s: expert %d block (%d, %d): scale %r, amax %r"
                                    % (what, x, i, j, scale[x, i, j], amax))
        grid = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
        grid = np.unique(np.abs(grid[np.isfinite(grid)]))
        got = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
        self.check_nearest(w, got, unit, grid, what)

    def check_e2m1(self, w, packed, unit, what):
        """FP4 codes two per byte, the even element in the low nibble (formats.md)."""
        codes = np.stack([packed & 15, packed >> 4], axis=-1).reshape(w.shape)
        grid = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float64)
        got = np.where(codes >> 3 == 1, -1.0, 1.0) * grid[codes & 7]
        self.check_nearest(w, got, unit, grid, what)

    def test_fp8_block_weights_are_128x128_e4m3fn(self):
        t = self.exported("fp8_block_moe", "tokens=7,shared=1,rsf_in_weights=1")
        for name in ("w13", "w2"):
            codes, dt = t[name + ".codes"]
            self.assertEqual(dt, "e4m3fn")
            self.assertEqual(t[name + ".scale"][1], "f32")
            # DeepGEMM per_block_cast_to_fp8, the block recipe's default profile: amax.clamp(1e-4),
            # s = amax / 448 as torch computes it on the GPU, amax * fl32(1/448) (formats.md §13)
            self.check_e4m3(t[name][0], codes, t[name + ".scale"][0], (128, 128),
                            lambda amax, s: s == max(amax, np.float32(1e-4)) * np.float32(1 / 448), name)
        self.assertEqual(t["w13.codes"][0].shape, (17, 256, 128))

    def test_fp8_tensor_weights_have_one_scale_per_expert(self):
        t = self.exported("fp8_tensor_moe", instances("fp8_tensor_moe", "tokens=7")[0])
        for name in ("w13", "w2"):
            w = t[name][0]
            # sgl-kernel's per-tensor quant (the tensor recipe's default profile), fast-math build:
            # s = amax / 448 by div.approx, within 2 ulp of the quotient
            self.check_e4m3(w, t[name + ".codes"][0], t[name + ".scale"][0], w.shape[1:],
                            lambda amax, s: abs(float(s) - float(amax) / 448) <= 2 * float(np.spacing(s)), name)

    def test_mxfp4_weights_are_e2m1_with_e8m0_floor_scales(self):
        t = self.exported("mxfp4_moe", instances("mxfp4_moe", "tokens=7")[0])
        for name in ("w13", "w2"):
            w, (packed, dt), (scale, sdt) = t[name][0], t[name + ".codes"], t[name + ".scale"]
            self.assertEqual((dt, sdt), ("e2m1x2", "e8m0"))
            e, rows, cols = w.shape
            blocks = np.abs(w).reshape(e, rows, cols // 32, 32).max(axis=-1)
            # OCP MX v1.0 section 6.3: X = 2^(floor(log2 amax) - emax_elem), e2m1's emax is 2
            want = np.where(blocks > 0, np.floor(np.log2(blocks.astype(np.float64))) - 2 + 127, 0)
            self.assertTrue(np.array_equal(scale.astype(np.int64), want.astype(np.int64)),
                            "%s: %d scale bytes differ" % (name, int((scale != want).sum())))
            unit = np.repeat(np.exp2(scale.astype(np.float64) - 127), 32, axis=-1).reshape(w.shape)
            self.check_e2m1(w, packed, unit, name)

    def test_nvfp4_weights_are_e2m1_with_e4m3_block_and_global_scales(self):
        t = self.exported("nvfp4_moe", instances("nvfp4_moe", "tokens=7")[0])
        for name in ("w13", "w2"):
            w, (packed, dt), (scale, sdt) = t[name][0], t[name + ".codes"], t[name + ".scale"]
            gscale, gdt = t[name + ".gscale"]
            self.assertEqual((dt, sdt, gdt), ("e2m1x2", "e4m3fn", "f32"))
            e, rows, cols = w.shape
            self.assertEqual(gscale.shape, (e,))
            block = scale.view(ml_dtypes.float8_e4m3fn).astype(np.float64) * gscale.reshape(e, 1, 1)
            amax = np.abs(w).reshape(e, rows, cols // 16, 16).max(axis=-1).astype(np.float64)
            # the block's dequant scale brings its amax near e2m1's max 6 (e4m3 rounding: 2^-4 relative)
            ratio = amax[amax > 0] / block[amax > 0]
            self.assertTrue(np.all((ratio > 6 / (1 + 2 ** -3)) & (ratio < 6 * (1 + 2 ** -3))),
                            "%s: block scales off: ratio %g..%g" % (name, ratio.min(), ratio.max()))
            self.check_e2m1(w, packed, np.repeat(block, 16, axis=-1).reshape(w.shape), name)

    def test_bf16_weights_are_rounded_to_nearest(self):
        t = self.exported("bf16_moe", instances("bf16_moe", "tokens=7")[0])
        for name in ("w13", "w2"):
            codes, dt = t[name + ".codes"]
            self.assertEqual(dt, "bf16")
            self.assertTrue(np.array_equal(codes, t[name][0].astype(ml_dtypes.bfloat16).view(np.uint16)))
            self.assertNotIn(name + ".scale", t)

    def test_moe_cpu_instances_carry_fused_experts_cpu_arguments(self):
        params = instances("fp8_w8a16_moe", "tokens=7")[0]
        t = self.exported("fp8_w8a16_moe", params)
        self.assertTrue(np.array_equal(t["x.bf16"][0], t["x"][0].astype(ml_dtypes.bfloat16).view(np.uint16)))
        self.assertEqual((t["topk_ids"][1], t["topk_weights"][1]), ("i32", "f32"))
        with h5py.File(os.path.join(self.dir, "fp8_w8a16_moe.h5"), "r") as f:  # the routing that is compared
            self.assertTrue(np.array_equal(t["topk_ids"][0], f["stages/route/ids"][()]))
        for name in ("w13", "w2"):
            self.check_e4m3(t[name][0], t[name + ".codes"][0], t[name + ".scale"][0], (128, 128),
                            lambda amax, s: s == max(amax, np.float32(1e-4)) * np.float32(1 / 448), name)

    def test_generated_weights_are_not_exported(self):
        params = instances("deepseek_v3_moe", "tokens=1")[0]
        t = self.exported("deepseek_v3_moe", params)
        self.assertNotIn("w13.codes", t, "weights=generate: " + params)


def sf128x4_offset(r, c, cp):
    """docs/spec/layouts.md §1: the byte of scale (r, c) in the 128x4 swizzle (one batch)."""
    return (r // 128) * (cp // 4) * 512 + (c // 4) * 512 + (r % 32) * 16 + ((r % 128) // 32) * 4 + c % 4


class MismatchClassesTest(ExportedBatch):
    """Outputs that numpy breaks in one known way: `qcheck verify` must name the bug's class, print
    the values in their dtype and the place in the op's own coordinates (issue 17, item 4)."""

    def export(self, case, params):
        golden = os.path.join(self.dir, "g.h5")
        qc("export", "--case", case, "--params", params, "--out", golden)
        with h5py.File(golden, "r") as f:
            outs = {k: f["outputs"][k][()] for k in f["outputs"]}
            x = f["inputs/x"][()]
        return golden, x, outs

    def verify_broken(self, golden, outs):
        path = os.path.join(self.dir, "mine.h5")
        with h5py.File(path, "w") as f:
            for k, v in outs.items():
                if not k.endswith(".mask"):
                    f["outputs/" + k] = v
        proc = self.verify(golden, path)
        self.assertEqual(proc.returncode, 1, proc.stdout)
        return proc.stdout

    def test_swapped_bytes_of_a_128x4_layout_are_misplaced(self):
        golden, x, outs = self.export("layout_sf128x4", "map=sf128x4,batch=1,rows=129,cols=5")
        y, cp = outs["y"].copy(), 8
        r1, c1, r2, c2 = 3, 1, 70, 2  # one 512-byte atom
        a, b = sf128x4_offset(r1, c1, cp), sf128x4_offset(r2, c2, cp)
        self.assertEqual(y[a], x[0, r1, c1])
        self.assertNotEqual(y[a], y[b], "the case's codes at the two places must differ")
        y[a], y[b] = y[b], y[a]
        out = self.verify_broken(golden, dict(outs, y=y))
        self.assertIn("misplaced=2", out)
        self.assertNotIn("one_ulp", out)
        self.assertIn("y (batch 0, row %d, col %d): expected 0x%02X" % (r1, c1, x[0, r1, c1]), out)
        self.assertIn("[misplaced] the value belongs at (batch 0, row %d, col %d)" % (r2, c2), out)

    def test_a_one_ulp_fp32_scale_in_col_tma_bytes_is_printed_as_fp32(self):
        golden, x, outs = self.export(
            "quant_token_group", "recipe=token_group,profile=vllm-cpp,group=128,ue8m0=0,scale_layout=col_tma,"
            "rows=9,cols=256")
        scales = outs["scale"].view(np.float32)  # [groups, round_up(rows, 4)] fp32, column-major
        mp = 12
        finite = [(r, g) for g in range(2) for r in range(9) if 0 < scales[g * mp + r] < np.inf]
        row, group = finite[len(finite) // 2]
        words = outs["scale"].view(np.uint32).copy()
        words[group * mp + row] += 1
        out = self.verify_broken(golden, dict(outs, scale=words.view(np.uint8)))
        self.assertIn("scale (row %d, block %d): expected 0x%08X (%.9g) got 0x%08X" % (
            row, group, words[group * mp + row] - 1, scales[group * mp + row], words[group * mp + row]), out)
        self.assertIn("[one_ulp]", out)
        self.assertIn("1 of 24 elements differ", out)  # fp32 values, not bytes

    def test_exchanged_nibbles_of_nvfp4_codes_are_nibble_swap(self):
        golden, x, outs = self.export("quant_nvfp4", "recipe=nvfp4,profile=sgl-kernel,dist=normal,rows=3,cols=64")
        q = outs["q"].copy()
        k = int(np.flatnonzero((q & 0x7) != ((q >> 4) & 0x7))[0])  # not +0/-0, which is zero_sign
        q[k] = ((q[k] & 0xF) << 4) | (q[k] >> 4)
        out = self.verify_broken(golden, dict(outs, q=q))
        self.assertIn("nibble_swap=2", out)
        row, col = divmod(2 * k, 64)
        self.assertIn("q (row %d, col %d) block %d: expected 0x%X" % (row, col, col // 16, outs["q"][k] & 0xF), out)

    def test_nan_for_the_clamped_max_is_saturation(self):
        golden, x, outs = self.export("quant_fp8", "recipe=tensor,profile=sgl-kernel,dist=normal,rows=5,cols=256")
        q = outs["q"].copy()
        at = np.flatnonzero((q & 0x7F) == 0x7E)  # +-448: the amax element of a per-tensor quant
        self.assertTrue(at.size, "the per-tensor amax element is +-448")
        q[at] |= 0x7F  # NaN of the same sign (0x7F, 0xFF): what a kernel without the clamp writes
        out = self.verify_broken(golden, dict(outs, q=q))
        self.assertIn("saturation=%d" % at.size, out)
        self.assertNotIn("nan_policy", out)
        self.assertNotIn("one_ulp", out)


class BoundaryTest(ExportedBatch):
    """"boundaries": "quant" (harness/boundary.c) places elements on the rounding boundaries of each
    scale block after its scale. Checked here with numpy's IEEE fp32 arithmetic and ml_dtypes' e4m3
    grid, not with the reference that placed them, and through the gate: the mutants these inputs
    exist for must fail every instance they can act on (issue 17, items 1 and 2)."""

    export = MismatchClassesTest.export

    @unittest.skipUnless(HAVE_ML_DTYPES, "ml_dtypes is the independent e4m3 grid")
    def test_token_group_blocks_hold_ties_and_values_where_division_and_reciprocal_part(self):
        golden, x, outs = self.export(
            "quant_token_group", "recipe=token_group,profile=vllm-cpp,group=32,ue8m0=0,scale_layout=row,rows=9,cols=512")
        s = outs["scale"].view(np.float32).reshape(9, 16)  # vllm-cpp: x / s in IEEE fp32, s = amax / 448
        grid = np.unique(np.abs(np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float32)))
        grid = grid[np.isfinite(grid)]
        mids = (grid[:-1] + grid[1:]) / 2
        e4m3 = lambda v: np.clip(v, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
        parted = 0
        for r in range(9):
            for g in range(0, 16, 2):  # the even blocks are the normal ones
                xb, sb = x[r, 32 * g:32 * g + 32], s[r, g]
                q = xb / sb
                self.assertGreaterEqual(np.isin(np.abs(q), mids).sum(), 7, "block (%d, %d) has ties" % (r, g))
                parted += int((e4m3(q) != e4m3(xb * (np.float32(1) / sb))).any())
        self.assertGreater(parted, 36, "x / s and x * fl32(1/s) round to different codes in most blocks")
        self.assertEqual(x[0, 32:64].tolist(), [0.0] * 32, "block 1 is all zero")
        self.assertTrue(np.isnan(x[0, 96:128]).any(), "block 3 holds a NaN")

    QUANT_CASES = ("quant_fp8", "quant_mx", "quant_nvfp4", "quant_nvfp4_static", "quant_block", "quant_token_group",
                   "quant_token_group_partial", "quant_token_group_native")
    QUANT_MUTANTS = ("quant-ties-away", "quant-mul-by-reciprocal", "quant-no-saturation", "quant-eps-dropped",
                     "quant-e8m0-ceil-for-floor", "quant-zero-block-byte", "quant-nibbles-swapped",
                     "clamp-swallows-nan", "zero-block-nan")

    def mutant_run(self, cases, mutant):
        out = qc("run", "--case", ",".join(cases), "--backend", "mutant:" + mutant, "--jobs", "2", "-v").stdout
        m = re.search(r"(\d+) passed, (\d+) failed, (\d+) skipped", out)
        self.assertIsNotNone(m, out[-2000:])
        return out, [int(g) for g in m.groups()]

    def test_every_quant_mutant_fails_every_instance_it_can_act_on(self):
        # an instance is declined only with the reason the input cannot tell the mutant from its
        # profile (an eps no amax falls below, no element past the range, ...): never PASS
        for mutant in self.QUANT_MUTANTS:
            out, (passed, failed, _) = self.mutant_run(self.QUANT_CASES, mutant)
            self.assertEqual(passed, 0, "%s escapes on:\n%s" %
                             (mutant, "\n".join(l for l in out.splitlines() if l.startswith("PASS"))[:3000]))
            self.assertGreater(failed, 0, mutant)

    def test_every_moe_mutant_fails_every_instance_it_can_act_on(self):
        # masked-groups-zero declines a token draw where no chosen expert has a negative biased
        # score (the reference's own routing says so), the others rules the op's params decide
        cases = ("deepseek_v3_moe", "fp8_block_moe", "nvfp4_moe", "mxfp4_moe", "fp8_tensor_moe", "deepseek_v2_moe")
        for mutant in ("moe-gate-up-swapped", "moe-rsf-twice", "moe-swiglu-no-clamp", "moe-masked-groups-zero",
                       "moe-scale-block-off-by-one"):
            out, (passed, failed, _) = self.mutant_run(cases, mutant)
            self.assertEqual(passed, 0, "%s escapes on:\n%s" %
                             (mutant, "\n".join(l for l in out.splitlines() if l.startswith("PASS"))[:3000]))
            self.assertGreater(failed, 0, mutant)

    @unittest.skipUnless(HAVE_ML_DTYPES, "ml_dtypes is the independent e4m3 grid")
    def test_a_tiny_tensor_reads_the_eps_and_the_eps_mutant_fails_it(self):
        # sglang-native per tensor: amax.clamp(1e-12), s = amax * fl32(1/448) (formats.md §13), x / s
        params = "recipe=tensor,profile=sglang-native,dist=tiny,rows=5,cols=256"
        golden, x, outs = self.export("quant_fp8", params)
        self.assertLess(float(np.nanmax(np.abs(x))), 1e-12, "the tiny fill is below the eps")
        s = np.float32(np.float32(1e-12) * (np.float32(1) / np.float32(448)))
        self.assertEqual(outs["scale"].view(np.float32).tolist(), [s], "the scale is the eps's, not the amax's")
        q = np.clip(x / s, -448, 448).astype(ml_dtypes.float8_e4m3fn).view(np.uint8).ravel()
        self.assertTrue(np.array_equal(q, outs["q"].ravel()), "q = x / s with the eps scale")
        out = qc("run", "--case", "quant_fp8", "--params", params, "--backend", "mutant:quant-eps-dropped").stdout
        self.assertRegex(out, r"0 passed, 1 failed")

    def test_coverage_requires_the_ties_that_only_boundaries_place(self):
        proc = qc("coverage", "--suite", "quick", check=False)
        self.assertEqual(proc.returncode, 0, proc.stdout)
        self.assertRegex(proc.stdout, r"token_group vllm-cpp +16  ties .*nan_inf zero_block")
        self.assertRegex(proc.stdout, r"mxfp8 torchao-floor +\d+  ties saturation")
        bare = os.path.join(self.dir, "cases")
        shutil.copytree(os.environ.get("QCHECK_CASES", os.path.join(batch.REPO, "cases")), bare)
        path = os.path.join(bare, "quant_token_group.json")
        with open(path) as f:
            text = f.read().replace(', "boundaries": "quant"', "")
        with open(path, "w") as f:
            f.write(text)
        proc = subprocess.run([qcheck_bin(), "coverage", "--case", "quant_token_group"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True, env=dict(os.environ, QCHECK_CASES=bare))
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertRegex(proc.stdout, r"token_group vllm-cpp +16 .*\*ties")
        # the run report aggregates the same classes (summary.json "coverage", summary.md)
        for cases, missing in ((os.environ.get("QCHECK_CASES", os.path.join(batch.REPO, "cases")), []),
                               (bare, ["ties"])):
            rep = os.path.join(self.dir, "rep%d" % len(missing))
            subprocess.run([qcheck_bin(), "run", "--case", "quant_token_group", "--backend", "ref", "--quiet",
                            "--report", rep], stdout=subprocess.DEVNULL, env=dict(os.environ, QCHECK_CASES=cases),
                           check=True)
            with open(os.path.join(rep, "summary.json")) as f:
                rows = {r["recipe_profile"]: r for r in json.load(f)["coverage"]}
            self.assertEqual(rows["token_group vllm-cpp"]["instances"], 16)
            row = rows["token_group vllm-cpp"]
            if missing:
                self.assertIn("ties", row["required_not_reached"])
            else:
                self.assertEqual(row["required_not_reached"], [])
            self.assertEqual("ties" in row["reached"], not missing)
            with open(os.path.join(rep, "summary.md")) as f:
                self.assertIn("| token_group vllm-cpp | 16 |", f.read())

class IdentifyTest(ExportedBatch):
    """`qcheck identify` names the profile a kernel was written to (issue 17, item 5)."""

    export = MismatchClassesTest.export
    PARAMS = "recipe=token_group,profile=vllm-cpp,group=128,ue8m0=0,scale_layout=row,rows=9,cols=512"

    def identify(self, golden, outs):
        path = os.path.join(self.dir, "mine.h5")
        with h5py.File(path, "w") as f:
            for k, v in outs.items():
                f["outputs/" + k] = v
        return qc("identify", "--golden", golden, "--outputs", path, check=False)

    def numpy_vllm_cpp(self, x, reciprocal=False):
        """vLLM's C++ per_token_group_quant in numpy fp32: y_s = fmaxf(amax / 448, 1e-10) with the
        amax an fmaxf reduction (NaN ignored), q = x / y_s, fminf/fmaxf clamp (NaN -> +448), RNE."""
        g = x.reshape(9, 4, 128)
        with np.errstate(all="ignore"):
            amax = np.fmax.reduce(np.abs(g), axis=2)
            ys = np.fmax(amax / np.float32(448), np.float32(1e-10)).astype(np.float32)
            q = g * (np.float32(1) / ys[..., None]) if reciprocal else g / ys[..., None]
        q = np.fmax(np.fmin(q, np.float32(448)), np.float32(-448))
        return {"q": q.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).reshape(-1),
                "scale": ys.astype(np.float32).view(np.uint8).reshape(-1)}

    @unittest.skipUnless(HAVE_ML_DTYPES, "ml_dtypes is the e4m3 cast of the numpy kernel")
    def test_a_numpy_kernel_written_to_vllm_cpp_is_named_vllm_cpp(self):
        golden, x, outs = self.export("quant_token_group", self.PARAMS)
        proc = self.identify(golden, self.numpy_vllm_cpp(x))
        self.assertEqual(proc.returncode, 0, proc.stdout)
        self.assertRegex(proc.stdout, r"match, bit for bit, profile[^\n]* vllm-cpp")
        self.assertRegex(proc.stdout, r"sgl-kernel +FAIL")

    @unittest.skipUnless(HAVE_ML_DTYPES, "ml_dtypes is the e4m3 cast of the numpy kernel")
    def test_multiplying_by_the_reciprocal_matches_no_profile(self):
        golden, x, outs = self.export("quant_token_group", self.PARAMS)
        proc = self.identify(golden, self.numpy_vllm_cpp(x, reciprocal=True))
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertIn("no profile matches; the nearest is", proc.stdout)

    @unittest.skipUnless(HAVE_ML_DTYPES, "ml_dtypes is the e4m3 cast of the numpy kernel")
    def test_a_textbook_ieee_kernel_is_named_torch_native_cpu(self):
        """scale = max(amax, eps) / 448, x / scale, clip, cast, all IEEE in numpy: sglang's torch
        reference as it runs on the CPU (on the GPU torch multiplies by fl32(1/448) instead)."""
        params = "recipe=token_group,profile=torch-native-cpu,group=128,scale_layout=row,rows=9,cols=512"
        golden, x, _ = self.export("quant_token_group_native", params)
        g = x.reshape(9, 4, 128)
        with np.errstate(all="ignore"):
            amax = np.maximum(np.max(np.abs(g), axis=2), np.float32(1e-10))  # a NaN propagates
            s = (amax / np.float32(448)).astype(np.float32)
            q = np.clip(g / s[..., None], np.float32(-448), np.float32(448))
        outs = {"q": q.astype(ml_dtypes.float8_e4m3fn).view(np.uint8).reshape(-1),
                "scale": s.view(np.uint8).reshape(-1)}
        proc = self.identify(golden, outs)
        self.assertEqual(proc.returncode, 0, proc.stdout)
        self.assertRegex(proc.stdout, r"match, bit for bit, profile[^\n]* torch-native-cpu\b")
        self.assertRegex(proc.stdout, r"torch-native +FAIL")

    def test_each_profiles_outputs_are_named_for_it(self):
        for profile in ("triton-row", "sgl-kernel", "sgl-kernel-sm100", "deepgemm-ref", "vllm-cpp"):
            golden, x, outs = self.export("quant_token_group", self.PARAMS.replace("vllm-cpp", profile))
            proc = self.identify(golden, outs)
            self.assertEqual(proc.returncode, 0, proc.stdout)
            self.assertRegex(proc.stdout, r"match, bit for bit, profile[^\n]* %s\b" % re.escape(profile))


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
        self.assertRegex(proc.stdout, r"(?m)^[1-9]\d* passed, 0 failed, 0 skipped, 0 mistrusted$")

    def test_planted_bug_fails_as_tie_flip(self):
        proc = self.run_exec_backend("cast_fp4_fp6", "to=e2m1,profile=ml_dtypes,ties=even,n=1000",
                                     "cast_buggy.py")
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertIn("tie_flip", proc.stdout)
        self.assertNotIn("one_ulp", proc.stdout)


if __name__ == "__main__":
    unittest.main()
