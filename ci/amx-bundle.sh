#!/usr/bin/env bash
# Packs the AMX binaries (qcheck, test_cpu_amx, test_gemm, bench_amx, bench_cpu) with the shared libraries
# they need that are not glibc into $BUILD_DIR/amx-bundle.tar.xz, so that they run on a machine
# with AMX whose image lacks our apt libraries (cJSON, OpenBLAS, MPFR, HDF5): build here, carry the
# tarball there. Binaries built on Debian 12 (glibc 2.36) run on a newer glibc (Ubuntu 24.04: 2.39).
#
#   BUILD_DIR=build-amx ci/build.sh && BUILD_DIR=build-amx ci/amx-bundle.sh
#
# On the AMX machine, in the repository root, with build-amx/amx-bundle.tar.xz carried there:
#
#   tar xJf build-amx/amx-bundle.tar.xz -C /tmp && B=/tmp/amx-bundle && export LD_LIBRARY_PATH=$B/lib \
#     QCHECK_CASES=$PWD/cases && $B/test_cpu_amx && $B/qcheck run --backend cpu-amx --jobs 8 && $B/bench_amx
#
# test_cpu_amx exits 0 (PASS), 1 (FAIL) or 77 (SKIPPED: the reason is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-amx}
OUT=$BUILD_DIR/amx-bundle
bins="$BUILD_DIR/harness/qcheck $BUILD_DIR/tests/test_cpu_amx $BUILD_DIR/tests/test_gemm $BUILD_DIR/bench/bench_amx $BUILD_DIR/bench/bench_cpu"
ci/bundle.sh "$OUT" $bins
