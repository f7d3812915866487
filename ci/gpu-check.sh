#!/usr/bin/env bash
# Builds and runs the GPU checks on a machine with an NVIDIA GPU and nvcc but none of qcheck's
# other dependencies (no CMake configure needed): the device build of the codecs against the host
# reference and against the hardware cvt instructions (tests/qc_device_check.cu), the device build
# of reference/arith's exp, 2^x, erf and tanh against the host build (tests/qc_device_functions.cu),
# and the proof of the rcp.approx.ftz emulation table on all 2^32 inputs (reference/arith/rcp_probe.cu).
# Logs go to ${OUT:-build/gpu}. Exit status: the first failing check's.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/gpu}
d=$(mktemp -d)
mkdir -p "$out"
tar -xJf reference/arith/rcp_table.tar.xz -C "$d"
cc -O2 -o "$d/rcp_table_gen" reference/arith/rcp_table_gen.c
"$d/rcp_table_gen" "$d/rcp_table.bin" "$d/rcp_table.c"
# libqcref: every C source of reference/ plus the generated table (as reference/CMakeLists.txt builds it)
for f in $(find reference -name '*.c' ! -name rcp_table_gen.c) "$d/rcp_table.c"; do
  cc -std=c11 -O2 -ffp-contract=off -Ireference -Ireference/arith -c "$f" -o "$d/$(echo "$f" | tr / _).o"
done
ar rcs "$d/libqcref.a" "$d"/*.o
nvcc -arch=sm_90 -O2 --fmad=false -std=c++17 -Ireference reference/formats/device.cu tests/qc_device_check.cu \
  "$d/libqcref.a" -o "$d/qc_device_check"
nvcc -arch=sm_90 -O2 --fmad=false -std=c++17 -Xcompiler=-ffp-contract=off -Ireference tests/qc_device_functions.cu \
  -o "$d/qc_device_functions"
nvcc -O2 --gpu-architecture=compute_80 --gpu-code=sm_90,compute_80 -Ireference reference/arith/rcp_probe.cu \
  "$d/rcp_table.c" -o "$d/rcp_probe"
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
fi
"$d/qc_device_check" 2>&1 | tee "$out/device_check.log"
"$d/qc_device_functions" 2>&1 | tee "$out/device_functions.log"
"$d/rcp_probe" prove 2>&1 | tee "$out/rcp_prove.log"
