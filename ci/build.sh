#!/usr/bin/env bash
# Configures and builds qcheck. BUILD_DIR (default build), BUILD_TYPE (default: the project's
# default, RelWithDebInfo, as a plain `cmake -S . -B b` gets it), CC (gcc or clang; both must
# build clean under -Werror: .ci/run builds with both). Extra cmake arguments pass through.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" ${BUILD_TYPE:+-DCMAKE_BUILD_TYPE="$BUILD_TYPE"} "$@" > "$BUILD_DIR.configure.log" 2>&1 ||
  { cat "$BUILD_DIR.configure.log"; exit 1; }
grep -A13 "qcheck optional parts" "$BUILD_DIR.configure.log" | sed 's/^-- //'
cmake --build "$BUILD_DIR" -j "$(nproc)"
