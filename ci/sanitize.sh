#!/usr/bin/env bash
# The quick tests under AddressSanitizer + UndefinedBehaviorSanitizer (docs/DESIGN.md "Conventions":
# sanitizers clean). Builds into build-asan; any report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# -O1, as AddressSanitizer's documentation advises: the checks are the same as at -O0 and the quick
# tests run about twice as fast (CI runs this script; .ci/run).
SAN="-O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
# Device code is not instrumented (nvcc takes no sanitizer) and no GPU test runs here: compute_90 PTX
# alone (a GPU would compile it when loaded), so ptxas does not run (about a minute of kernels.cu).
BUILD_DIR=build-asan BUILD_TYPE=Debug ci/build.sh -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" \
  -DCMAKE_EXE_LINKER_FLAGS="$SAN" -DCMAKE_SHARED_LINKER_FLAGS="$SAN" -DCMAKE_CUDA_ARCHITECTURES=90-virtual > /dev/null
# -LE mutants: the mutant gate runs in ci/test.sh only (docs/DECISIONS.md "The mutant gate is not
# rerun under the sanitizers").
ctest --test-dir build-asan -L quick -LE mutants -j "$(nproc)" --output-on-failure "$@"
