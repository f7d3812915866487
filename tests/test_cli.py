#!/usr/bin/env python3
"""CLI contract tests for qcheck (docs/spec/cli.md): error handling, --help/--version, e2m1 packing and
empty inputs.

  python3 tests/test_cli.py --qcheck build/harness/qcheck

Every bad invocation must exit 2 and name the offending value or file on stderr. Expected bytes of
the positive checks are worked out by hand from the e2m1 table (docs/spec/formats.md §3.1), never by
running qcheck. Exit 0 when every check passes, 1 otherwise. Needs only the Python standard library.
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

USAGE_EXIT = 2


class Runner:
    def __init__(self, qcheck, workdir):
        self.qcheck = qcheck
        self.dir = workdir
        self.passed = 0
        self.failed = []

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, data):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def call(self, args):
        r = subprocess.run([self.qcheck] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")

    def ok(self, name):
        self.passed += 1
        print("ok   %s" % name)

    def fail(self, name, why):
        self.failed.append(name)
        print("FAIL %s: %s" % (name, why))

    def expect_usage_error(self, name, args, must_name=(), any_of=()):
        """Exit 2, stderr non-empty and containing every string of must_name (and at least one of
        any_of, case-insensitive, when given)."""
        rc, out, err = self.call(args)
        cmd = "qcheck " + " ".join(args)
        if rc != USAGE_EXIT:
            return self.fail(name, "%s: exit %d, expected %d (stderr: %r)" % (cmd, rc, USAGE_EXIT, err.strip()))
        if not err.strip():
            return self.fail(name, "%s: exit 2 but nothing on stderr" % cmd)
        missing = [s for s in must_name if s not in err]
        if missing:
            return self.fail(name, "%s: stderr does not name %r: %r" % (cmd, missing, err.strip()))
        if any_of and not any(s.lower() in err.lower() for s in any_of):
            return self.fail(name, "%s: stderr mentions none of %r: %r" % (cmd, list(any_of), err.strip()))
        self.ok(name)

    def expect_output(self, name, args, out_name, expected):
        rc, out, err = self.call(args)
        cmd = "qcheck " + " ".join(args)
        if rc != 0:
            return self.fail(name, "%s: exit %d (stderr: %r)" % (cmd, rc, err.strip()))
        if not os.path.exists(self.path(out_name)):
            return self.fail(name, "%s: exit 0 but %s was not written" % (cmd, out_name))
        got = self.read(out_name)
        if got != expected:
            return self.fail(name, "%s: wrote %s, expected %s" % (cmd, got.hex() or "(empty)",
                                                                 expected.hex() or "(empty)"))
        self.ok(name)


def f32le(*values):
    return struct.pack("<%df" % len(values), *values)


# e2m1 (docs/spec/formats.md §3.1): S EE M, codes 0..7 = 0, 0.5, 1, 1.5, 2, 3, 4, 6; 8..15 the negatives.
# Input values and their codes, worked out by hand from that table:
#   1.0 -> 0x2, -0.5 -> 0x9, 6.0 -> 0x7, 0.0 -> 0x0, -3.0 -> 0xD, 2.0 -> 0x4, 1.5 -> 0x3, -6.0 -> 0xF
PACK_VALUES = (1.0, -0.5, 6.0, 0.0, -3.0, 2.0, 1.5, -6.0)
# even element in the low nibble: (0x2 | 0x9<<4), (0x7 | 0x0<<4), (0xD | 0x4<<4), (0x3 | 0xF<<4)
PACK_LOW_EVEN = bytes([0x92, 0x07, 0x4D, 0xF3])
# --swap-nibbles: even element in the high nibble
PACK_SWAPPED = bytes([0x29, 0x70, 0xD4, 0x3F])
# odd count (first 7 values): the tail byte holds code 0x3 in the low nibble, high nibble zero
PACK_ODD = bytes([0x92, 0x07, 0x4D, 0x03])
# odd count with --swap-nibbles: the swap is a per-byte nibble swap of the packing above, so the tail
# byte holds code 0x3 in the high nibble and zero in the low nibble
PACK_ODD_SWAPPED = bytes([0x29, 0x70, 0xD4, 0x30])
# unpacking 0x80 0x8F: codes 0x0, 0x8, 0xF, 0x8 -> +0.0, -0.0, -6.0, -0.0 (bit patterns matter: -0)
UNPACK_SIGNED_ZERO_IN = bytes([0x80, 0x8F])
UNPACK_SIGNED_ZERO_OUT = struct.pack("<4I", 0x00000000, 0x80000000, 0xC0C00000, 0x80000000)


def commands_from_usage(text):
    """Command names listed in `qcheck --help` ("  name   description" lines)."""
    names = []
    for line in text.splitlines():
        m = re.match(r"^  ([a-z][a-z0-9_-]*)\s{2,}\S", line)
        if m:
            names.append(m.group(1))
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--qcheck", required=True, help="path of the qcheck binary")
    args = ap.parse_args()
    if not (os.path.isfile(args.qcheck) and os.access(args.qcheck, os.X_OK)):
        print("ERROR: qcheck binary not found or not executable: %s" % args.qcheck)
        return 1

    workdir = tempfile.mkdtemp(prefix="qc_cli_")
    t = Runner(os.path.abspath(args.qcheck), workdir)
    try:
        run_all(t)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("%d passed, %d failed" % (t.passed, len(t.failed)))
    return 0 if not t.failed else 1


def run_all(t):
    good = t.write("good.f32", f32le(1.0, -2.0, 0.5, 448.0))
    odd6 = t.write("six_bytes.f32", b"\x00\x00\x80\x3f\x00\x00")      # 6 bytes: not a multiple of 4
    odd3 = t.write("three_bytes.bf16", b"\x80\x3f\x00")              # 3 bytes: not a multiple of 2
    odd5 = t.write("five_bytes.f16", b"\x00\x3c\x00\x3c\x00")        # 5 bytes: not a multiple of 2
    empty = t.write("empty.bin", b"")
    out = t.path("out.bin")
    missing = t.path("no_such_input_7f3a.bin")
    no_dir_out = t.path(os.path.join("no_such_dir_51c2", "out.bin"))

    # --- top level ---------------------------------------------------------------------------
    rc, so, se = t.call(["--version"])
    if rc == 0 and re.search(r"qcheck\s+\d+\.\d+", so):
        t.ok("--version")
    else:
        t.fail("--version", "exit %d, stdout %r (want 'qcheck X.Y...')" % (rc, so.strip()))
    rc, top_usage, se = t.call(["--help"])
    if rc == 0 and "usage" in top_usage.lower():
        t.ok("--help (top level)")
    else:
        t.fail("--help (top level)", "exit %d, stdout %r" % (rc, top_usage.strip()))
    t.expect_usage_error("no command", [], any_of=("usage",))
    t.expect_usage_error("unknown command", ["frobnicate-cmd"], must_name=("frobnicate-cmd",))

    # --help on every command: the contract's core tool/suite commands plus whatever --help lists
    commands = ["decode", "cast", "list", "run"]
    for c in commands_from_usage(top_usage):
        if c not in commands:
            commands.append(c)
    for c in commands:
        rc, so, se = t.call([c, "--help"])
        name = "%s --help" % c
        if rc != 0:
            t.fail(name, "exit %d (stderr %r)" % (rc, se.strip()))
        elif "usage" not in so.lower():
            t.fail(name, "exit 0 but no usage on stdout: %r" % so[:200])
        else:
            t.ok(name)

    # --- unknown names -----------------------------------------------------------------------
    t.expect_usage_error("cast unknown --to format", ["cast", "--from", "f32", "--to", "e9m9x", good, out],
                         must_name=("e9m9x",))
    t.expect_usage_error("cast unknown --from format", ["cast", "--from", "f33", "--to", "e4m3fn", good, out],
                         must_name=("f33",))
    t.expect_usage_error("decode unknown format", ["decode", "--format", "fp7wat", out], must_name=("fp7wat",))
    t.expect_usage_error("decode f32 (no table)", ["decode", "--format", "f32", out], must_name=("f32",))
    t.expect_usage_error("cast unknown profile",
                         ["cast", "--from", "f32", "--to", "e4m3fn", "--profile", "notaprofile", good, out],
                         must_name=("notaprofile",))
    t.expect_usage_error("decode unknown profile", ["decode", "--format", "e8m0", "--profile", "notaprofile", out],
                         must_name=("notaprofile",))
    policy_cases = [
        ("overflow", "clampit", "e4m3fn"),
        ("nan", "maybe", "e4m3fn"),
        ("nan-code", "loud", "e5m2"),
        ("ties", "upward", "e4m3fn"),
        ("nonan", "weird", "e2m1"),
        ("zero-sign", "flipped", "e2m1"),
        ("e8m0", "roundy", "e8m0"),
        ("e8m0-decode", "backwards", "e8m0"),
        ("e8m0-emax", "lots", "e8m0"),
        ("e8m0-mbits", "999", "e8m0"),
    ]
    for key, bad, fmt in policy_cases:
        t.expect_usage_error("cast unknown --%s value" % key,
                             ["cast", "--from", "f32", "--to", fmt, "--%s" % key, bad, good, out],
                             must_name=(bad,))
    t.expect_usage_error("cast unknown --overflow value (--key=value form)",
                         ["cast", "--from", "f32", "--to", "e4m3fn", "--overflow=saturate-ish", good, out],
                         must_name=("saturate-ish",))
    t.expect_usage_error("decode unknown --e8m0-decode value",
                         ["decode", "--format", "e8m0", "--e8m0-decode", "backwards", out], must_name=("backwards",))

    # --- unknown options ---------------------------------------------------------------------
    t.expect_usage_error("cast unknown option",
                         ["cast", "--from", "f32", "--to", "e4m3fn", "--frobnicate", "1", good, out],
                         must_name=("frobnicate",))
    t.expect_usage_error("cast unknown option (--key=value)",
                         ["cast", "--from", "f32", "--to", "e4m3fn", "--wibble=3", good, out], must_name=("wibble",))
    t.expect_usage_error("decode unknown option", ["decode", "--format", "e4m3fn", "--frobnicate", "1", out],
                         must_name=("frobnicate",))
    t.expect_usage_error("option without its value", ["cast", "--from", "f32", "--to"], must_name=("--to",))
    t.expect_usage_error("cast missing --to", ["cast", "--from", "f32", good, out], must_name=("--to",))
    t.expect_usage_error("decode missing --format", ["decode", out], must_name=("--format",))
    t.expect_usage_error("--packed on a non-e2m1 cast",
                         ["cast", "--from", "f32", "--to", "e4m3fn", "--packed", good, out], must_name=("packed",))
    t.expect_usage_error("--swap-nibbles without --packed",
                         ["cast", "--from", "f32", "--to", "e2m1", "--swap-nibbles", good, out],
                         must_name=("swap-nibbles",))

    # --- files -------------------------------------------------------------------------------
    t.expect_usage_error("cast missing input file", ["cast", "--from", "f32", "--to", "e4m3fn", missing, out],
                         must_name=(os.path.basename(missing),))
    t.expect_usage_error("cast unwritable output", ["cast", "--from", "f32", "--to", "e4m3fn", good, no_dir_out],
                         must_name=("no_such_dir_51c2",))
    t.expect_usage_error("decode unwritable output", ["decode", "--format", "e4m3fn", no_dir_out],
                         must_name=("no_such_dir_51c2",))
    t.expect_usage_error("f32 input of 6 bytes", ["cast", "--from", "f32", "--to", "e4m3fn", odd6, out],
                         must_name=("six_bytes.f32",))
    t.expect_usage_error("f32 input of 6 bytes (to bf16)", ["cast", "--from", "f32", "--to", "bf16", odd6, out],
                         must_name=("six_bytes.f32",))
    t.expect_usage_error("bf16 input of 3 bytes", ["cast", "--from", "bf16", "--to", "f32", odd3, out],
                         must_name=("three_bytes.bf16",))
    t.expect_usage_error("f16 input of 5 bytes", ["cast", "--from", "f16", "--to", "f32", odd5, out],
                         must_name=("five_bytes.f16",))

    # --- positional arguments ----------------------------------------------------------------
    words = ("argument", "expected", "usage", "IN", "OUT")
    t.expect_usage_error("cast with 1 positional", ["cast", "--from", "f32", "--to", "e4m3fn", good], any_of=words)
    t.expect_usage_error("cast with 0 positionals", ["cast", "--from", "f32", "--to", "e4m3fn"], any_of=words)
    t.expect_usage_error("cast with 3 positionals", ["cast", "--from", "f32", "--to", "e4m3fn", good, out, out],
                         any_of=words)
    t.expect_usage_error("decode with 0 positionals", ["decode", "--format", "e4m3fn"], any_of=words)
    t.expect_usage_error("decode with 2 positionals", ["decode", "--format", "e4m3fn", out, out], any_of=words)

    # --- e2m1 packing ------------------------------------------------------------------------
    vals = t.write("pack.f32", f32le(*PACK_VALUES))
    t.expect_output("cast f32 -> e2m1 (one code per byte)", ["cast", "--from", "f32", "--to", "e2m1", vals, out],
                    "out.bin", bytes([0x2, 0x9, 0x7, 0x0, 0xD, 0x4, 0x3, 0xF]))
    t.expect_output("cast f32 -> e2m1 --packed (even element low)",
                    ["cast", "--from", "f32", "--to", "e2m1", "--packed", vals, out], "out.bin", PACK_LOW_EVEN)
    t.expect_output("cast f32 -> e2m1 --packed --swap-nibbles",
                    ["cast", "--from", "f32", "--to", "e2m1", "--packed", "--swap-nibbles", vals, out], "out.bin",
                    PACK_SWAPPED)
    vals7 = t.write("pack7.f32", f32le(*PACK_VALUES[:7]))
    t.expect_output("cast f32 -> e2m1 --packed, odd count (high nibble of the tail zero)",
                    ["cast", "--from", "f32", "--to", "e2m1", "--packed", vals7, out], "out.bin", PACK_ODD)
    t.expect_output("cast f32 -> e2m1 --packed --swap-nibbles, odd count",
                    ["cast", "--from", "f32", "--to", "e2m1", "--packed", "--swap-nibbles", vals7, out], "out.bin",
                    PACK_ODD_SWAPPED)
    packed = t.write("packed.e2m1", PACK_LOW_EVEN)
    t.expect_output("cast e2m1 --packed -> f32 (inverse)",
                    ["cast", "--from", "e2m1", "--packed", "--to", "f32", packed, out], "out.bin",
                    f32le(*PACK_VALUES))
    swapped = t.write("swapped.e2m1", PACK_SWAPPED)
    t.expect_output("cast e2m1 --packed --swap-nibbles -> f32 (inverse)",
                    ["cast", "--from", "e2m1", "--packed", "--swap-nibbles", "--to", "f32", swapped, out], "out.bin",
                    f32le(*PACK_VALUES))
    sz = t.write("signed_zero.e2m1", UNPACK_SIGNED_ZERO_IN)
    t.expect_output("cast e2m1 --packed -> f32 keeps -0 (code 0x8)",
                    ["cast", "--from", "e2m1", "--packed", "--to", "f32", sz, out], "out.bin", UNPACK_SIGNED_ZERO_OUT)

    # --- empty input -------------------------------------------------------------------------
    for name, argv in [
        ("f32 -> e4m3fn", ["--from", "f32", "--to", "e4m3fn"]),
        ("f32 -> bf16", ["--from", "f32", "--to", "bf16"]),
        ("f32 -> e2m1 --packed", ["--from", "f32", "--to", "e2m1", "--packed"]),
        ("e2m1 --packed -> f32", ["--from", "e2m1", "--packed", "--to", "f32"]),
        ("e8m0 -> f32", ["--from", "e8m0", "--to", "f32"]),
    ]:
        if os.path.exists(out):
            os.unlink(out)
        t.expect_output("empty input, cast %s" % name, ["cast"] + argv + [empty, out], "out.bin", b"")


if __name__ == "__main__":
    sys.exit(main())
