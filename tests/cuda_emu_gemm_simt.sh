#!/bin/sh
# The cuda backend's CUDA-core GEMM (kernels/cuda/gemm_simt.cu: the gemm op's bound models exact,
# grouped and sgl-cpu of the FP8, MX and NVFP4 kinds) through the CPU emulation: every instance of
# the bound-model gemm cases must pass within its bound (bit for bit where the bound is 0), none
# skipped (a backend that declined everything would otherwise pass).
#   cuda_emu_gemm_simt.sh QCHECK PLUGIN MIN_PASSED
qcheck=$1 plugin=$2 min=$3
out=$("$qcheck" run --case fp8_block_gemm,fp8_rowwise_gemm,gemm_exact_probe,gemm_onehot_probe,mxfp8_gemm,nvfp4_gemm \
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
echo "PASS: $passed instances within their bounds through the emulated CUDA-core GEMM"
