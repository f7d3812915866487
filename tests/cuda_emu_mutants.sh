#!/bin/sh
# The bugs planted in the cuda backend's kernels (kernels/cuda/cuda_mutants.c) through the CPU
# emulation: each must FAIL at least one instance of cases where its bug can show (the run's
# "MUTANT ... caught" line, exit 0), as `qcheck run --backend mutants` requires of every mutant.
#   cuda_emu_mutants.sh QCHECK PLUGIN
qcheck=$1 plugin=$2 bad=0
check() { # mutant cases [params]
  out=$("$qcheck" run --case "$2" ${3:+--params "$3"} --backend "plugin:$plugin:cuda-emu-mutant-$1" --jobs 2 --quiet 2>&1)
  rc=$?
  line=$(printf '%s\n' "$out" | grep -E "^MUTANT .*cuda-emu-mutant-$1 " | head -n 1)
  case "$line" in
    *" caught ("*) [ "$rc" -eq 0 ] && { echo "PASS cuda-emu-mutant-$1 caught: ${line#* caught (}" | cut -c1-150; return; } ;;
  esac
  printf '%s\n' "$out" | tail -n 5
  echo "FAIL: cuda-emu-mutant-$1 on $2 ${3:+($3)}: not caught (exit $rc): $line"
  bad=1
}
check ties-away quant_fp8,cast_fp8
check weight-scale-ulp fp8_wgmma_gemm,fp8_tensor_wgmma_moe
check gemm-out-toward-zero fp8_wgmma_gemm
# the same two bugs in the CUDA-core GEMM (gemm_simt.cu), where every sum is exact and the bound 0
check weight-scale-ulp gemm_exact_probe
check gemm-out-toward-zero gemm_exact_probe
check moe-gate-up-swapped fp8_tensor_wgmma_moe
check moe-combine-reversed fp8_block_wgmma_moe tokens=1,shared=1
check moe-act-libm fp8_tensor_moe
exit $bad
