#!/usr/bin/env bash
# The exec backend's figures (docs/exec.md), measured in one run:
#  1. overhead per instance beyond the kernel: the quick tier of cast_fp8 (288 instances) through
#     `python3 -m qcheck_runner python/examples/cast_mldtypes.py` in one batch, against the same
#     instances on the built-in ref backend; (exec - ref) / instances, with and without the
#     Python start-up (numpy, h5py, ml_dtypes imports), measured on its own;
#  2. the HDF5 path on a large tensor against a plain file (bench/bench_golden_io.c).
#   ci/bench-exec.sh          BUILD_DIR (default build), MIB (default 512)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${BUILD_DIR:-build}
q=$B/harness/qcheck
export PYTHONPATH=$PWD/python
t() { local t0; t0=$(date +%s.%N); "$@" > /dev/null || true; echo "$(date +%s.%N) - $t0" | bc; }
ref=$(t "$q" run --case cast_fp8 --backend ref --quiet)
ex=$(t "$q" run --case cast_fp8 --batch 1000 --quiet --backend "exec:python3 -m qcheck_runner python/examples/cast_mldtypes.py")
start=$(t python3 -c "import numpy, h5py, ml_dtypes, qcheck, qcheck_runner")
n=$("$q" list instances --suite quick | grep -c "^quick.cast_fp8\[")
echo "exec overhead: $n instances, ref $ref s, exec $ex s, python start-up $start s"
echo "  per instance beyond the kernel: $(echo "($ex - $ref) * 1000 / $n" | bc -l | cut -c1-6) ms;" \
     "without the start-up: $(echo "($ex - $ref - $start) * 1000 / $n" | bc -l | cut -c1-6) ms"
"$B/bench/bench_golden_io" "${MIB:-512}"
