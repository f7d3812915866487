#!/usr/bin/env bash
# Packs what the lent H200 host runs (ci/h200-run.sh) into $BUILD_DIR/gpu-bundle.tar.xz: the
# qcheck binary (with every backend this build has, cuda and cublaslt included when nvcc was
# found), the CPU and GPU tests and benchmarks, the plugins, and the shared libraries they need
# that are not glibc's (the host's image has none of our Debian libraries). Built on Debian 12
# (glibc 2.36), they run on the host's newer glibc. cuBLASLt is not carried: the cublaslt backend
# loads the host's own at run time.
#   BUILD_DIR=build ci/gpu-bundle.sh        then carry build/gpu-bundle.tar.xz with the tree
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
OUT=$BUILD_DIR/gpu-bundle
want="harness/qcheck tests/test_cpu_avx512 tests/test_cpu_amx tests/test_gemm bench/bench_amx bench/bench_cpu
      bench/bench_golden_io kernels/libqcheck_cpu.so examples/libqcheck_example.so"
bins=$(find "$BUILD_DIR/kernels" -maxdepth 2 -type f -perm -u+x -name 'bench_*' 2>/dev/null || true)
for b in $want; do [ -e "$BUILD_DIR/$b" ] && bins="$bins $BUILD_DIR/$b"; done
ci/bundle.sh "$OUT" $bins
