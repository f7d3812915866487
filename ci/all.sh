#!/usr/bin/env bash
# All the tests, as CI runs them (.ci/run runs this; the README's second command): the dependencies
# with Debian's hipcc, the gcc build, the clang build (the C and C++ code under clang; its device
# code, identical to the gcc build's, as compute_90 PTX alone: ptxas does not run, the gcc build
# compiles the SASS for sm_90 and sm_100a), the HIP
# compile, the quick and gpu tests, the sanitizers, and a 25 s fuzz smoke per target. Each step
# prints its wall time on stderr ("ci/all.sh: STEP: N s"), so a slow CI run says where it went;
# the first step that fails ends the run with its exit status.
set -euo pipefail
cd "$(dirname "$0")/.."

step() {
  local t0=$SECONDS
  "$@"
  echo "ci/all.sh: $*: $((SECONDS - t0)) s" >&2
}

step env QC_WITH_HIP=1 ci/deps.sh
step ci/build.sh
step env CC=clang BUILD_DIR=build-clang ci/build.sh -DCMAKE_CUDA_ARCHITECTURES=90-virtual
step ci/build-hip.sh
step ci/test.sh
step ci/sanitize.sh
step env FUZZ_SECONDS=25 ci/fuzz.sh
echo "ci/all.sh: all steps passed in $SECONDS s" >&2
