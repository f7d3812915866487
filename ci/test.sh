#!/usr/bin/env bash
# Runs the CTest suite. LABELS is a CTest label regex: "quick|gpu" by default (gpu tests report
# SKIPPED with the reason on a machine without a GPU); "full" runs the exhaustive tier.
# Writes JUnit XML to $BUILD_DIR/junit.xml.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
ctest --test-dir "$BUILD_DIR" -L "${LABELS:-quick|gpu}" -j "$(nproc)" --output-on-failure \
  --output-junit "$PWD/$BUILD_DIR/junit.xml" "$@"
