#!/usr/bin/env bash
# Runs the cuda backend's validation on a machine with an NVIDIA GPU (an H200: sm_90), from the
# bundle of kernels/cuda/bundle.sh: a directory B with B/qcheck, B/bench_cuda_quant,
# B/qc_device_functions and B/lib (or the tarball of it). Needs the driver (libcuda.so.1) and nothing
# of our Debian libraries; nvcc and python are not used. Run it from the repository checkout (the case files are read from it).
#
#   kernels/cuda/run-on-gpu.sh build/cuda-bundle.tar.xz     # or build/cuda-bundle
#
# Steps (logs in ${OUT:-/tmp/cuda-run}, a summary of each on stdout; about 4-6 minutes):
#   gpu            nvidia-smi -L and the driver version
#   list           qcheck list backends: the cuda line must not say unavailable
#   quick_cuda     qcheck run --backend cuda --jobs 1 -v: the quick tier (cases/)
#   extra_cuda     the extra cases of kernels/cuda/cases (every profile and scale layout)
#   planted        the bugs planted in these kernels (cuda_mutants.c, `--backend cuda-mutant:*`)
#                  over the cases where they show: each must be caught (its MUTANT line)
#   functions      qc_device_functions: reference/arith's exp, 2^x, erf and tanh (the MoE's) built for
#                  the device give the host build's bits (all 2^32 inputs on the GPU, a host sample)
#   bench          bench_cuda_quant: GB/s of token_group, mxfp8 and nvfp4 (sf128x4) against a copy,
#                  and its bf16 == fp32 byte check
#   bringup        qcheck bringup --backend cuda --report $OUT/bringup (bringup.md, bringup.json)
# Exit status: the first failing step's (the benchmark figures themselves never fail).
# QCK_BACKEND (default cuda) runs another backend through the same steps: with
# QCK_BACKEND=plugin:build/kernels/cuda/libqcheck_cuda_emu.so the script runs without a GPU.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
B=${1:?usage: kernels/cuda/run-on-gpu.sh BUNDLE_DIR_OR_TARBALL}
out=${OUT:-/tmp/cuda-run}
mkdir -p "$out"
if [ -f "$B" ]; then
  t=$(mktemp -d)
  tar -xJf "$B" -C "$t" || { echo "cannot extract $B"; exit 1; }
  B=$t/cuda-bundle
fi
B=$(cd "$B" && pwd)
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export QCHECK_CASES="$repo/cases"
backend=${QCK_BACKEND:-cuda}
status=0
step() { # name timeout command...: output in $out/name.log, a summary, the time
  local name=$1 limit=$2 t0=$SECONDS rc
  shift 2
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  rc=$?
  echo "== $name: rc $rc in $((SECONDS - t0)) s (log: $out/$name.log)"
  [ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
  return 0
}
summary() { # the verdict line, the decline reasons by count, the first failures
  tail -n 1 "$out/$1.log"
  grep -E '^(FAIL|ERROR|MISTRUSTED)' "$out/$1.log" | cut -c1-400 | head -n 15
  grep -E '^SKIPPED' "$out/$1.log" | sed -E 's/.*declined: not implemented by [^:]*: //; s/ with [0-9]+-bit elements.*//; s/  REPRO.*//' |
    sort | uniq -c | sort -rn | head -n 8
}

echo "bundle $B (revision $(cat "$B/REVISION" 2> /dev/null || echo unknown)), repository $repo"
step gpu 60 sh -c 'nvidia-smi -L && nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader'
cat "$out/gpu.log"
step list 60 "$B/qcheck" list backends
grep '^cuda ' "$out/list.log" | grep -o '\[unavailable: .*\]' || echo "cuda backend: available"

if [ "$backend" = cuda ] && ! grep '^cuda ' "$out/list.log" | grep -vq unavailable; then
  echo "the cuda backend is unavailable here; stopping"
  exit 1
fi
step quick_cuda 300 "$B/qcheck" run --backend "$backend" --jobs 1 -v
summary quick_cuda
step extra_cuda 300 env QCHECK_CASES="$here/cases" "$B/qcheck" run --backend "$backend" --jobs 1 -v
summary extra_cuda
if [ "$backend" = cuda ]; then
  planted=$(grep -o '^cuda-mutant:[^ ]*' "$out/list.log" | paste -sd, -)
  step planted 600 "$B/qcheck" run --backend "$planted" --jobs 1 --quiet --show 0 \
    --case quant_fp8,cast_fp8,fp8_wgmma_gemm,gemm_exact_probe,fp8_tensor_wgmma_moe,fp8_block_wgmma_moe,fp8_tensor_moe
  grep -E '^(MUTANT|mutants:)' "$out/planted.log" | cut -c1-160
fi
if [ "$backend" = cuda ]; then
  step functions 600 "$B/qc_device_functions"
  tail -n 9 "$out/functions.log"
fi
step bench 180 "$B/bench_cuda_quant"
cat "$out/bench.log"
if [ "$backend" = cuda ]; then
  step bringup 300 "$B/qcheck" bringup --backend cuda --report "$out/bringup"
  grep -vE '^  matches  wgmma' "$out/bringup.log" | cut -c1-200
fi
exit $status
