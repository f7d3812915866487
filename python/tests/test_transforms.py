"""The checkpoint converters as ops (issue 17, item 8): every quick-tier instance of their cases is
exported, and its expected outputs are checked against numpy + ml_dtypes implementations written
here from docs/spec/formats.md §7.2-§8.3 (not from qcheck's C code), then fed to `qcheck verify`.
The mutants of these ops must fail every instance they can act on."""
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

F32 = np.float32


def e4m3(codes):
    return np.asarray(codes, np.uint8).view(ml_dtypes.float8_e4m3fn).astype(F32)


def to_e4m3(x):
    """torch's fp32 -> float8_e4m3fn: RNE, NaN for |x| past the overflow threshold (ml_dtypes agrees)."""
    return np.asarray(x, F32).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)


def to_bf16(x):
    return np.asarray(x, F32).astype(ml_dtypes.bfloat16).astype(F32)


def e8m0_torch(b):
    """torch float8_e8m0fnu: 2^(b - 127), 0xFF NaN (formats.md §2.3)."""
    b = np.asarray(b, np.int64)
    return np.where(b == 255, F32(np.nan), np.ldexp(F32(1), b - 127).astype(F32)).astype(F32)


def e8m0_byte_of_pow2(v):
    """The e8m0 byte of a power of two or NaN; an fp32 below 2^-127 gives byte 0 (formats.md §8.1)."""
    out = np.zeros(v.shape, np.uint8)
    finite = np.isfinite(v) & (v >= F32(2.0 ** -127))
    out[finite] = (np.log2(v[finite].astype(np.float64)) + 127).astype(np.uint8)
    out[np.isnan(v)] = 255
    return out


def static_fp8_quant(dq, inv):
    """scaled_fp8_quant with a static scale: clamp(dq * inv, +-448) with fminf/fmaxf (NaN -> 448)."""
    v = (dq.astype(F32) * inv).astype(F32)
    v = np.where(np.isnan(v), F32(448), np.clip(v, F32(-448), F32(448)))
    return to_e4m3(v)


def requantize(w, scales, widths, intermediate):
    max_s = F32(np.max(scales))
    if not scales[-1] > F32(-448):  # the loader's sentinel: fused on disk, nothing to do
        return w.copy(), max_s
    inv = F32(1) / max_s
    out, row = w.copy(), 0
    for s, width in zip(scales, widths):
        dq = (e4m3(w[row:row + width]) * F32(s)).astype(F32)
        if intermediate == "fp16":
            with np.errstate(over="ignore"):  # |W| s past 65504 is Inf in fp16, as in torch
                dq = dq.astype(np.float16).astype(F32)  # W.to(fp16) * s is an fp16 tensor
        out[row:row + width] = static_fp8_quant(dq, inv)
        row += width
    return out, max_s


E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], F32)


def e2m1_to_e4m3(packed, scale, tile, zero8_negative):
    rows, cols = packed.shape[0], packed.shape[1] * 2
    codes = np.empty((rows, cols), np.uint8)
    codes[:, 0::2], codes[:, 1::2] = packed & 0xF, packed >> 4
    table = np.concatenate([E2M1, -E2M1])
    table[8] = F32(-0.0) if zero8_negative else F32(0.0)
    v = table[codes]
    s = e8m0_torch(scale)
    w = np.empty((rows, cols), np.uint8)
    tr, tc = -(-rows // tile), -(-cols // tile)
    ts = np.empty((tr, tc), np.uint8)
    for i in range(tr):
        for j in range(tc):
            sub = s[i * tile:(i + 1) * tile, j * tile // 32:(j + 1) * tile // 32]
            tile_scale = F32(np.nan) if np.isnan(sub).any() else F32(sub.max() / F32(64))
            ts[i, j] = e8m0_byte_of_pow2(np.array([tile_scale], F32))[0]
            offset = np.repeat((sub / tile_scale).astype(F32), 32, axis=1)
            blk = v[i * tile:(i + 1) * tile, j * tile:(j + 1) * tile]
            w[i * tile:(i + 1) * tile, j * tile:(j + 1) * tile] = to_e4m3(blk * offset[:, :blk.shape[1]])
    return w, ts


def gpu_nan(v):
    """These converters run in torch on the GPU, where any fp32 operation that yields NaN gives the
    canonical 0x7FFFFFFF (formats.md §13): a NaN's sign does not survive (numpy's would)."""
    v = np.asarray(v, F32)
    return np.where(np.isnan(v), np.uint32(0x7FFFFFFF).view(F32), v).astype(F32)


def block_fp8(x, amax_floor, scale_of, div):
    """128x128 tiles of the zero-padded x: (codes, fp32 scales)."""
    n, k = x.shape
    nb, kb = -(-n // 128), -(-k // 128)
    pad = np.zeros((nb * 128, kb * 128), F32)
    pad[:n, :k] = x
    q = np.empty_like(pad, dtype=np.uint8)
    scales = np.empty((nb, kb), F32)
    for i in range(nb):
        for j in range(kb):
            t = pad[i * 128:(i + 1) * 128, j * 128:(j + 1) * 128]
            amax = F32(np.max(np.abs(t)))  # a NaN propagates, as torch's amax
            amax = amax if np.isnan(amax) else max(amax, F32(amax_floor))
            s = gpu_nan(scale_of(amax))  # a NaN amax's scale is the GPU's NaN (golden/real/sglang-0.5.23)
            scales[i, j] = s
            q[i * 128:(i + 1) * 128, j * 128:(j + 1) * 128] = to_e4m3(gpu_nan(div(t, s)))
    return q[:n, :k], scales


def mxfp8_to_block(w, scale):
    descale = (scale.astype(np.uint32) << 23).view(F32)  # byte 0 -> +0, 255 -> +Inf
    dq = to_bf16(e4m3(w) * np.repeat(descale, 32, axis=1))
    # amax / 448 with a Python float: torch on CUDA multiplies by fl32(1/448) (formats.md §13)
    return block_fp8(dq, 1e-4, lambda amax: F32(amax * (F32(1) / F32(448))), lambda t, s: (t / s).astype(F32))


def ceil_to_ue8m0(v):
    """2^ceil(log2 v) from the bits (sglang #29954), the exponent clamped to [1, 254]: a NaN amax
    (0x7FFFFFFF on the GPU) gives exponent 256, clamped to 2^127."""
    bits = np.array([gpu_nan(np.array([v], F32))[0]], F32).view(np.uint32)[0]
    if np.isnan(v):
        bits = np.uint32(0x7FFFFFFF)
    e = int(bits >> 23) & 0xFF
    e += 1 if bits & 0x7FFFFF else 0
    return np.ldexp(F32(1), min(max(e, 1), 254) - 127).astype(F32)


def requant_ue8m0(w, scale_inv):
    n, k = w.shape
    s = np.repeat(np.repeat(scale_inv, 128, axis=0), 128, axis=1)[:n, :k]
    dq = to_bf16(e4m3(w) * s)
    q, scales = block_fp8(dq, 1e-4, lambda amax: ceil_to_ue8m0(F32(amax * (F32(1) / F32(448)))),
                          lambda t, s: (t * (F32(1) / s)).astype(F32))
    kb = scales.shape[1]
    rows = np.repeat(scales, 128, axis=0)[:n]  # every row of N carries its tile row's scales
    nb4, kb4 = -(-n // 4) * 4, -(-kb // 4)
    byte = np.zeros((kb4 * 4, nb4), np.uint8)  # K block j of row r: byte j % 4 of word [j / 4, r]
    byte[:kb, :n] = e8m0_byte_of_pow2(rows.T.copy())
    words = byte.reshape(kb4, 4, nb4).transpose(0, 2, 1).copy().view("<u4").reshape(kb4, nb4)
    return q, words.view(np.int32)


@unittest.skipUnless(ml_dtypes is not None, "ml_dtypes is not installed")
class TransformOracleTest(ExportedBatch):
    def exported(self, case, params):
        path = os.path.join(self.dir, "g.h5")
        qc("export", "--case", case, "--params", params, "--out", path)
        with h5py.File(path, "r") as f:
            ins = {k: f["inputs"][k][()] for k in f["inputs"]}
            outs = {k: f["outputs"][k][()] for k in f["outputs"] if not k.endswith(".mask")}
        return path, ins, outs

    def check_case(self, case, oracle):
        """oracle(params dict, inputs) -> expected outputs; each must equal the golden's bytes, and
        the numpy outputs must PASS `qcheck verify`."""
        checked = 0
        for p in instances(case, ""):
            path, ins, outs = self.exported(case, p)
            params = dict(kv.split("=", 1) for kv in p.split(","))
            mine = oracle(params, ins)
            for name, v in mine.items():
                want = np.asarray(v).reshape(outs[name].shape)
                self.assertEqual(want.tobytes(), outs[name].tobytes(),
                                 "%s[%s] %s: numpy and the reference differ at %s" %
                                 (case, p, name, np.argwhere(want.view(np.uint8) != outs[name].view(np.uint8))[:4]))
            mine_path = os.path.join(self.dir, "mine.h5")
            with h5py.File(mine_path, "w") as f:
                for name, v in mine.items():
                    f["outputs/" + name] = np.asarray(v).reshape(outs[name].shape).astype(outs[name].dtype)
            self.assert_pass(path, mine_path, "%s[%s] numpy" % (case, p))
            checked += 1
        self.assertGreater(checked, 0)

    @staticmethod
    def widths(params):
        return [int(params[k]) for k in ("w0", "w1", "w2", "w3") if k in params]

    def test_requantize_with_max_scale(self):
        def oracle(p, ins):
            w, m = requantize(ins["w"], ins["scale"], self.widths(p), p["intermediate"])
            return {"w_requant": w, "max_scale": np.array([m], F32)}
        for case in ("requantize_with_max_scale", "requantize_fused_on_disk"):
            self.check_case(case, oracle)

    def test_fp16_intermediate_overflows_where_fp32_does_not(self):
        """The case reaches what separates the two profiles: |W| s past fp16's 65504."""
        p = instances("requantize_with_max_scale", "intermediate=fp16,nan_bytes=0,w0=64,k=33")[0]
        _, ins, outs = self.exported("requantize_with_max_scale", p)
        w32, _ = requantize(ins["w"], ins["scale"], [64, 5, 5], "fp32")
        self.assertGreater(int(np.sum(w32 != outs["w_requant"])), 0)

    def test_convert_to_channelwise(self):
        self.check_case("convert_to_channelwise",
                        lambda p, ins: {"scale_channel": np.repeat(ins["scale"], self.widths(p)).astype(F32)})

    def test_cast_e2m1fn_to_e4m3fn(self):
        def oracle(p, ins):
            w, ts = e2m1_to_e4m3(ins["packed"], ins["scale"], int(p["tile"]), p["zero8_negative"] == "1")
            return {"w": w, "tile_scale": ts}
        self.check_case("cast_e2m1fn_to_e4m3fn", oracle)

    def test_convert_mxfp8_weight_to_block_fp8(self):
        def oracle(p, ins):
            w, s = mxfp8_to_block(ins["w"], ins["scale"])
            return {"w_block": w, "scale_block": s}
        self.check_case("convert_mxfp8_weight_to_block_fp8", oracle)

    def test_requant_weight_ue8m0(self):
        def oracle(p, ins):
            w, packed = requant_ue8m0(ins["w"], ins["scale_inv"])
            return {"w_ue8m0": w, "packed": packed}
        self.check_case("requant_weight_ue8m0", oracle)

    def assert_caught_where_observable(self, case, mutant, right, wrong):
        """mutant FAILs exactly the instances where numpy's wrong(params, inputs) gives other bytes
        than right(params, inputs), and there is at least one."""
        out = qc("run", "--case", case, "--backend", "mutant:" + mutant, "-v", check=False).stdout
        verdicts = dict((p, v) for v, p in re.findall(r"^(PASS|FAIL)\s+%s\[([^\]]*)\]" % re.escape(case), out, re.M))
        self.assertEqual(len(verdicts), len(instances(case, "")), out[-1500:])
        observable = 0
        for p, verdict in verdicts.items():
            _, ins, _ = self.exported(case, p)
            params = dict(kv.split("=", 1) for kv in p.split(","))
            a, b = right(params, ins), wrong(params, ins)
            differs = any(np.asarray(a[k]).tobytes() != np.asarray(b[k]).tobytes() for k in a)
            observable += differs
            self.assertEqual(verdict, "FAIL" if differs else "PASS", "%s on %s[%s]" % (mutant, case, p))
        self.assertGreater(observable, 0, "%s: no instance of %s where the bug shows" % (mutant, case))

    def test_mutants_fail_every_instance_where_the_bug_shows(self):
        def req(mid):
            return lambda p, ins: {"w": requantize(ins["w"], ins["scale"], self.widths(p), mid(p))[0]}
        self.assert_caught_where_observable("requantize_with_max_scale", "requantize-other-intermediate",
                                            req(lambda p: p["intermediate"]),
                                            req(lambda p: "fp32" if p["intermediate"] == "fp16" else "fp16"))

        def cast(tile, neg):
            return lambda p, ins: dict(zip(("w", "tile_scale"), e2m1_to_e4m3(ins["packed"], ins["scale"], tile(p), neg(p))))
        right = cast(lambda p: int(p["tile"]), lambda p: p["zero8_negative"] == "1")
        self.assert_caught_where_observable("cast_e2m1fn_to_e4m3fn", "e2m1-zero8-sign-swapped", right,
                                            cast(lambda p: int(p["tile"]), lambda p: p["zero8_negative"] != "1"))
        self.assert_caught_where_observable("cast_e2m1fn_to_e4m3fn", "e2m1-tile-swapped", right,
                                            cast(lambda p: 160 - int(p["tile"]), lambda p: p["zero8_negative"] == "1"))

if __name__ == "__main__":
    unittest.main()
