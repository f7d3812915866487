#!/usr/bin/env bash
# Runs the AMX validation on a machine with AMX from the bundle of ci/amx-bundle.sh (carried to
# $BUILD_DIR/amx-bundle.tar.xz): test_cpu_amx, the quick tier on cpu-amx, the full-tier instances
# cpu-amx implements itself (int8_rowwise, fp8_block model=sgl-cpu, moe_cpu), bench_amx (with the
# blocking sweep when AMX_SWEEP=1) and bench_cpu (the AVX-512 kernels on this host's cores). Logs
# go to ${OUT:-/tmp}.
# Exit status: the first failing check's (benchmarks never fail).
#
#   BUILD_DIR=build ci/amx-bundle.sh    # here, then on the AMX machine:  ci/amx-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
out=${OUT:-/tmp}
tar xJf "$BUILD_DIR/amx-bundle.tar.xz" -C /tmp
B=/tmp/amx-bundle
export LD_LIBRARY_PATH=$B/lib QCHECK_CASES=$PWD/cases
jobs=$(( $(nproc) > 2 ? $(nproc) - 2 : 1 ))
status=0
step() { # name command...: runs it with its output in $out/name.log, prints the tail and the time
  local name=$1 t0=$SECONDS rc
  shift
  "$@" > "$out/$name.log" 2>&1
  rc=$?
  echo "== $name: rc $rc in $((SECONDS - t0)) s"
  tail -n "${TAIL:-3}" "$out/$name.log"
  [ "$rc" -ne 0 ] && [ "$status" -eq 0 ] && status=$rc
  return 0
}
lscpu | grep -E "Model name|^CPU\(s\)"
grep -o -w 'amx_tile\|amx_bf16\|amx_int8\|avx512_bf16' /proc/cpuinfo | sort | uniq -c
step test_cpu_amx "$B/test_cpu_amx"
step quick_cpu_amx "$B/qcheck" run --backend cpu-amx --jobs "$jobs" --quiet
step full_cpu_amx timeout 330 "$B/qcheck" run --suite full --backend cpu-amx --case int8_gemm,fp8_block_gemm,fp8_w8a16_moe \
  --filter 'int8_rowwise|sgl-cpu|fp8_w8a16' --jobs "$jobs" --timeout 300 --quiet
TAIL=60 step bench_amx "$B/bench_amx" ${AMX_SWEEP:+--sweep}
TAIL=14 step bench_cpu "$B/bench_cpu" --threads "$(nproc)" --mib 4096
exit $status
