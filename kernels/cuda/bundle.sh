#!/usr/bin/env bash
# Packs what kernels/cuda/run-on-gpu.sh needs on a GPU machine whose image lacks our apt
# libraries (as ci/amx-bundle.sh does for the AMX machine): qcheck (with the cuda backend linked
# in, static CUDA runtime), bench_cuda_quant and qc_device_functions, plus every shared library they resolve to here
# except glibc's own, into $BUILD_DIR/cuda-bundle/ and $BUILD_DIR/cuda-bundle.tar.xz (the tarball
# is what to carry: the directory is larger than a device call carries, OpenBLAS alone is 36 MB).
# Binaries built on Debian 12 (glibc 2.36) run on a newer glibc.
#
#   BUILD_DIR=build ci/build.sh && BUILD_DIR=build kernels/cuda/bundle.sh
#   # on the GPU machine, in the repository root:
#   kernels/cuda/run-on-gpu.sh build/cuda-bundle.tar.xz
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
OUT=$BUILD_DIR/cuda-bundle
bins="$BUILD_DIR/harness/qcheck $BUILD_DIR/kernels/cuda/bench_cuda_quant $BUILD_DIR/tests/qc_device_functions"
for b in $bins; do
  [ -x "$b" ] || { echo "kernels/cuda/bundle.sh: $b not built (is nvcc found? BUILD_DIR=$BUILD_DIR)" >&2; exit 1; }
done
# the listing is captured first: grep -q would close the pipe early, which pipefail reports
backends=$("$BUILD_DIR/harness/qcheck" list backends)
grep -q '^cuda ' <<< "$backends" ||
  { echo "kernels/cuda/bundle.sh: $BUILD_DIR/harness/qcheck has no cuda backend" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/lib"
cp $bins "$OUT/"
# every resolved library but glibc's own (libc, libm, libpthread, libdl, librt, libresolv, the loader)
ldd $bins | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux-x86-64)\.so' |
  while read -r lib; do cp -L "$lib" "$OUT/lib/"; done
git rev-parse --short=12 HEAD > "$OUT/REVISION" 2> /dev/null || echo unknown > "$OUT/REVISION"
# xz -9e: its 64 MiB dictionary spans OpenBLAS whole (25.7 MB against 37 MB at xz's default -6)
tar -C "$BUILD_DIR" -cf - cuda-bundle | xz -9e -T2 > "$BUILD_DIR/cuda-bundle.tar.xz"
ls -l "$BUILD_DIR/cuda-bundle.tar.xz"
