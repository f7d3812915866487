#!/bin/sh
# Cases the cuda backend must pass in full through the CPU emulation (kernels/cuda/emu.h): every
# instance passes (bit for bit, or within its bound where the op has one), none skipped (a backend
# that declined everything would otherwise pass), and at least MIN_PASSED of them. CTest runs it on
# the tensor-core kernels (gemm_wgmma.cu, the moe slot: wgmma is there the model it equals on the
# H200, kernels/cuda/wgmma.cuh) and on the CUDA-core GEMM of the bound models (gemm_simt.cu).
#   cuda_emu_all_pass.sh QCHECK PLUGIN MIN_PASSED CASE[,CASE...]
qcheck=$1 plugin=$2 min=$3 cases=$4
out=$("$qcheck" run --case "$cases" --backend "plugin:$plugin" --jobs 2 --quiet 2>&1)
rc=$?
printf '%s\n' "$out" | tail -n 20
line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' | tail -n 1)
passed=${line%% passed*}
case "$line" in
  *" 0 failed, 0 skipped, 0 mistrusted") ;;
  *) echo "FAIL: not every instance passed: $line"; exit 1 ;;
esac
[ "$rc" -eq 0 ] || { echo "FAIL: qcheck run exited $rc"; exit 1; }
[ "${passed:-0}" -ge "$min" ] || { echo "FAIL: $passed instances passed, expected at least $min"; exit 1; }
echo "PASS: $passed instances of $cases through the emulated kernels"
