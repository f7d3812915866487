#!/usr/bin/env bash
# Line coverage of reference/ by the quick tests (lcov). Builds into build-cov with --coverage.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=build-cov
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="--coverage -fprofile-update=atomic -O0" \
  -DCMAKE_CXX_FLAGS="--coverage -fprofile-update=atomic -O0" -DCMAKE_EXE_LINKER_FLAGS=--coverage > "$BUILD_DIR.configure.log" 2>&1 ||
  { cat "$BUILD_DIR.configure.log"; exit 1; }
cmake --build "$BUILD_DIR" -j "$(nproc)" > /dev/null
find "$BUILD_DIR" -name '*.gcda' -delete
ctest --test-dir "$BUILD_DIR" -L quick -j "$(nproc)" --output-on-failure > "$BUILD_DIR/ctest.log" 2>&1 ||
  { tail -50 "$BUILD_DIR/ctest.log"; exit 1; }
lcov --quiet --capture --directory "$BUILD_DIR" --output-file "$BUILD_DIR/all.info" --rc lcov_branch_coverage=0 \
  2> /dev/null
lcov --quiet --extract "$BUILD_DIR/all.info" "$PWD/reference/*" --output-file "$BUILD_DIR/reference.info"
echo "line coverage of reference/:"
lcov --list "$BUILD_DIR/reference.info" | tail -n +1
lcov --summary "$BUILD_DIR/reference.info" 2>&1 | grep -E "lines"
lcov --quiet --extract "$BUILD_DIR/all.info" "$PWD/reference/formats/*" --output-file "$BUILD_DIR/formats.info"
printf "reference/formats: "
lcov --summary "$BUILD_DIR/formats.info" 2>&1 | grep -E "lines"
