#!/usr/bin/env bash
# Runs the cublaslt backend's checks and figures on an NVIDIA H200 (sm_90) from a bundle built on
# another machine: B holds qcheck, bench_cublaslt and lib/ (the shared libraries that are not
# glibc's; ci/gpu-bundle.sh makes one). cuBLASLt is the host's own, found at run time
# (lt_gemm.h qc_lt_load: $QCHECK_CUBLASLT, LD_LIBRARY_PATH, /usr/local/cuda/lib64, python3's
# nvidia wheels). From the repository root (the cases are read from ./cases):
#
#   tar xJf build/gpu-bundle.tar.xz -C /tmp && kernels/cublaslt/run-on-gpu.sh /tmp/gpu-bundle
#
# Steps, each with its log in $OUT (default /tmp/cublaslt-run) and a short summary here:
#   1. qcheck list backends: is cublaslt available, and if not why
#   2. the quick tier of every cases/*gemm*.json on --backend cublaslt (what it declines is SKIPPED
#      with the reason; the reasons are counted below); REPORT=1 adds --report $OUT/report
#   3. bench_cublaslt: the adapter's matmul at 4096 x 7168 x 7168, tensorwise / rowwise / block
#   4. bench_scaled_mm.py: torch._scaled_mm on the same shapes, then the adapter / torch ratios
# FULL=1 adds the full tier of fp8_block_gemm and fp8_rowwise_gemm (large shapes; beyond the
# ~6 minutes of the default steps). Exit status: step 2's (0 when nothing failed).
set -uo pipefail
B=${1:?usage: kernels/cublaslt/run-on-gpu.sh BUNDLE_DIR (with qcheck, bench_cublaslt, lib/)}
B=$(cd "$B" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT:-/tmp/cublaslt-run}
mkdir -p "$out"
# keep the host's own library path (the driver's libcuda may be found through it) after the bundle's
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" QCHECK_CASES="$root/cases"
status=0

step() { # name timeout command...: output to $out/name.log; rc and seconds printed
  local name=$1 limit=$2 t0=$SECONDS rc
  shift 2
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  rc=$?
  echo "== $name: rc $rc in $((SECONDS - t0)) s ($out/$name.log)"
  return $rc
}

command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
step backends 60 "$B/qcheck" list backends
grep -E '^cublaslt ' "$out/backends.log" | sed -n 's/.*\[unavailable: \(.*\)\]$/   cublaslt unavailable: \1/p;t;s/.*/   cublaslt available/p'

cases=$(for f in "$root"/cases/*gemm*.json; do basename "$f" .json; done | paste -sd, -)
echo "   cases: $cases"
step quick 300 "$B/qcheck" run --backend cublaslt --case "$cases" -v --timeout 120 ${REPORT:+--report "$out/report"}
status=$?
grep -E '^[0-9]+ passed, ' "$out/quick.log" | tail -n 1 | sed 's/^/   /'
echo "   SKIPPED, by reason:"
sed -n 's/^SKIPPED  *[^ ]*  cublaslt  \(.*\)  REPRO:.*/\1/p' "$out/quick.log" | cut -c1-220 | sort | uniq -c |
  sort -rn | head -12 | sed 's/^/    /'
echo "   FAIL / ERROR, by case and kind:"
grep -E '^(FAIL|ERROR)' "$out/quick.log" | sed -n 's/^\([A-Z]*\)  *\([a-z0-9_]*\)\[kind=\([a-z0-9_]*\),.*/\1 \2 \3/p' |
  sort | uniq -c | sed 's/^/    /'
grep -E '^(FAIL|ERROR)' "$out/quick.log" | head -n 3 | cut -c1-600 | sed 's/^/    first: /'
if grep -q "output 'stage.dequant.b' missing" "$out/quick.log"; then
  echo "    note: gemm_onehot_probe's ERRORs \"output 'stage.dequant.b' missing\" are the harness's: it compares a"
  echo "    stage tensor that the ABI's gemm slot cannot return (every ABI backend gets them), not a cublaslt result"
fi

step bench_cublaslt 240 "$B/bench_cublaslt"
grep -vE '^RESULT' "$out/bench_cublaslt.log" | cut -c1-300 | sed 's/^/   /'
step bench_scaled_mm 240 python3 "$here/bench_scaled_mm.py"
grep -vE '^RESULT' "$out/bench_scaled_mm.log" | cut -c1-300 | sed 's/^/   /'

echo "   adapter / torch._scaled_mm (median matmul time; target <= 1.05):"
awk '$1 == "RESULT" { key = $3 " " $4 "x" $5 "x" $6; t[$2 " " key] = $8; tf[$2 " " key] = $9; keys[key] = 1 }
     END { for (k in keys) if (("cublaslt " k) in t) {
             if (("torch " k) in t)
               printf "    %-30s cublaslt %.4f ms (%.0f TFLOP/s)  torch %.4f ms (%.0f TFLOP/s)  ratio %.3f\n", k,
                      t["cublaslt " k], tf["cublaslt " k], t["torch " k], tf["torch " k], t["cublaslt " k] / t["torch " k]
             else
               printf "    %-30s cublaslt %.4f ms (%.0f TFLOP/s)  torch: not run\n", k, t["cublaslt " k], tf["cublaslt " k] } }' \
  "$out/bench_cublaslt.log" "$out/bench_scaled_mm.log" | sort

if [ "${FULL:-0}" = 1 ]; then
  step full 900 "$B/qcheck" run --suite full --backend cublaslt --case fp8_block_gemm,fp8_rowwise_gemm --quiet \
    --timeout 600
  grep -E '^[0-9]+ passed, ' "$out/full.log" | tail -n 1 | sed 's/^/   /'
fi
exit $status
