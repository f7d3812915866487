#!/usr/bin/env bash
# On the lent H200 host (16 Xeon cores with AVX-512 and AMX, one H200, torch 2.11, no Debian
# libraries of ours), from the repository root with build/gpu-bundle.tar.xz carried
# (ci/gpu-bundle.sh). Logs and reports go to $OUT (default /tmp/h200). Steps, each with its log:
#   cpu     test_cpu_avx512, test_cpu_amx, the quick tier on cpu-avx512 and cpu-amx
#   plugin  the quick tier on cpu-avx512 built in and loaded as a plugin, interleaved, timed
#   oracle  the ml_dtypes oracle test against the host's ml_dtypes release
#   torch   torch's casts and torch._scaled_mm through the exec backend (python/examples/torch_kernels.py)
#   cuda    the cuda and cublaslt backends, their benchmarks, qcheck bringup (when built)
#   STEPS="cpu plugin" ci/h200-run.sh   runs a subset
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/h200}
mkdir -p "$out"
tar xJf build/gpu-bundle.tar.xz -C /tmp
B=/tmp/gpu-bundle
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} QCHECK_CASES=$PWD/cases PYTHONPATH=$PWD/python
jobs=$(( $(nproc) > 2 ? $(nproc) - 2 : 1 ))
failed=""
step() { # name command...: output in $out/name.log; prints rc, seconds and the tail
  local name=$1 t0 rc
  t0=$(date +%s%N)
  shift
  "$@" > "$out/$name.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || failed="$failed $name"
  printf '== %s: rc %d in %d ms\n' "$name" "$rc" $(( ($(date +%s%N) - t0) / 1000000 ))
  tail -n "${TAIL:-2}" "$out/$name.log"
}
has() { [[ " ${STEPS:-cpu plugin oracle torch cuda} " == *" $1 "* ]]; }
lscpu | grep -E "Model name|^CPU\(s\)"; nvidia-smi -L 2>/dev/null
python3 -c "import torch, ml_dtypes, numpy, h5py; print('torch', torch.__version__, 'ml_dtypes', ml_dtypes.__version__, 'numpy', numpy.__version__, 'h5py', h5py.__version__)"
if has cuda; then
  "$B/qcheck" list backends | grep -E "^(cuda|cublaslt) " > "$out/gpu_backends.txt"
  TAIL=4 step cuda_quick "$B/qcheck" run --backend cuda --quiet --timeout 120 --report "$out/cuda_quick"
  TAIL=4 step cuda_extra env QCHECK_CASES=$PWD/kernels/cuda/cases "$B/qcheck" run --backend cuda --quiet --timeout 120
  TAIL=4 step cublaslt_gemm "$B/qcheck" run --backend cublaslt --quiet --timeout 120 --report "$out/cublaslt"
  TAIL=40 step bringup "$B/qcheck" bringup --report "$out/bringup"
  for b in "$B"/bench_cuda_quant "$B"/bench_cublaslt; do [ -x "$b" ] && TAIL=20 step "$(basename "$b")" "$b"; done
  [ -f kernels/cublaslt/bench_scaled_mm.py ] && TAIL=10 step bench_scaled_mm python3 kernels/cublaslt/bench_scaled_mm.py
fi
if has cpu; then
  step test_cpu_avx512 "$B/test_cpu_avx512"
  step test_cpu_amx "$B/test_cpu_amx"
  TAIL=3 step quick_cpu "$B/qcheck" run --backend cpu-avx512,cpu-amx --jobs "$jobs" --quiet --report "$out/quick_cpu"
fi
if has plugin; then
  for r in 1 2; do
    step "builtin_$r" "$B/qcheck" run --backend cpu-avx512 --jobs "$jobs" --quiet
    step "plugin_$r" "$B/qcheck" run --backend "plugin:$B/libqcheck_cpu.so:cpu-avx512" --jobs "$jobs" --quiet
  done
fi
has oracle && step oracle python3 tests/test_mldtypes.py --qcheck "$B/qcheck"
if has torch; then
  ex="exec:python3 -m qcheck_runner python/examples/torch_kernels.py"
  TAIL=3 step torch_cast "$B/qcheck" run --case cast_fp8,cast_e8m0 --backend "$ex" --report "$out/torch_cast"
  TAIL=3 step torch_gemm "$B/qcheck" run --case fp8_rowwise_gemm,fp8_block_gemm --backend "$ex" \
    --report "$out/torch_gemm"
  # shapes _scaled_mm takes (n, k multiples of 16): full-tier instances of one shape each
  TAIL=3 step torch_gemm_full_block "$B/qcheck" run --suite full --case fp8_block_gemm --params m=7,n=2112,k=2048,model=exact \
    --jobs 4 --backend "$ex" --report "$out/torch_gemm_full_block"
  TAIL=3 step torch_gemm_full_row "$B/qcheck" run --suite full --case fp8_rowwise_gemm --params m=1,n=2880,k=2880 \
    --jobs 4 --backend "$ex" --report "$out/torch_gemm_full_row"
fi
# a step that failed fails the script, naming it (the tails above say how)
[ -z "$failed" ] || { echo "h200-run: failed steps:$failed"; exit 1; }
exit 0
