#!/bin/sh
# The cuda backend's tensor-core kernels (gemm_wgmma.cu: the gemm slot and the MoE's grouped expert
# GEMMs; moe_kernels.cu; the runtime's moe slot) through the CPU emulation, where wgmma is the model
# it equals on the H200 (kernels/cuda/wgmma.cuh): every instance of the four wgmma cases must pass
# bit for bit, none skipped (a backend that declined everything would otherwise pass).
#   cuda_emu_wgmma.sh QCHECK PLUGIN MIN_PASSED
qcheck=$1 plugin=$2 min=$3
out=$("$qcheck" run --case fp8_wgmma_gemm,fp8_block_wgmma_gemm,fp8_tensor_wgmma_moe,fp8_block_wgmma_moe \
      --backend "plugin:$plugin" --jobs 2 --quiet 2>&1)
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
echo "PASS: $passed instances bit for bit through the emulated wgmma kernels"
