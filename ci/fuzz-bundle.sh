#!/usr/bin/env bash
# Packs the libFuzzer targets that ci/fuzz.sh built (build-fuzz/tests/fuzz_*) with their libraries
# into build-fuzz/fuzz-bundle.tar.xz, for the long runs on a host with more cores and no clang
# (docs/notes/fuzz.md). There, from the repository root:
#   tar -C build-fuzz -xJf build-fuzz/fuzz-bundle.tar.xz && mkdir -p build-fuzz/tests &&
#   cp build-fuzz/fuzz-bundle/fuzz_* build-fuzz/tests/ &&
#   LD_LIBRARY_PATH=$PWD/build-fuzz/fuzz-bundle/lib FUZZ_PREBUILT=1 FUZZ_WORKERS=14 FUZZ_RUNS=... ci/fuzz.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=1 ci/fuzz.sh > /dev/null # builds the targets (and checks that they start)
ci/bundle.sh build-fuzz/fuzz-bundle build-fuzz/tests/fuzz_*
