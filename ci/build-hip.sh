#!/usr/bin/env bash
# Compiles the device build of the reference codecs (reference/formats/device.cu, the same source
# nvcc builds for sm_90) with hipcc for AMD GPUs: gfx90a (MI200) and gfx940 (MI300), or the
# architectures in HIP_ARCHS. It checks that the codecs are valid HIP device code; nothing runs.
# Then the cuda backend's sources (kernels/cuda: kernels.cu, moe_kernels.cu, layout_kernels.cu, gemm_int8.cu, gemm_simt.cu,
# runtime.cu, bench_cuda_quant.cu, through kernels/cuda/gpu.h) for gfx90a and gfx942, or CUDA_HIP_ARCHS;
# a hipcc too old to know gfx942 (Debian's 5.2) builds gfx940, the same MI300 ISA family, and says so.
# Without hipcc (Debian package `hipcc`, or /opt/rocm/bin/hipcc; QC_WITH_HIP=1 ci/deps.sh installs
# it) it says so and exits 0. Objects go to $BUILD_DIR/hip (default build/hip).
set -euo pipefail
cd "$(dirname "$0")/.."

HIPCC=${HIPCC:-}
if [ -z "$HIPCC" ]; then
  HIPCC=$(command -v hipcc || true)
  [ -z "$HIPCC" ] && [ -x /opt/rocm/bin/hipcc ] && HIPCC=/opt/rocm/bin/hipcc
fi
if [ -z "$HIPCC" ]; then
  echo "hipcc not found: HIP build skipped"
  exit 0
fi

out=${BUILD_DIR:-build}/hip
mkdir -p "$out"
# -x hip: the source keeps its .cu name; -ffp-contract=off as for libqcref (no fused multiply-add).
for arch in ${HIP_ARCHS:-gfx90a gfx940}; do
  obj="$out/device_$arch.o"
  "$HIPCC" -x hip --offload-arch="$arch" -std=c++17 -O2 -ffp-contract=off -Wall -Wextra -Werror \
    -Ireference -c reference/formats/device.cu -o "$obj"
  # The offload bundle names its target; a compiler that silently dropped the arch fails here.
  if ! grep -aq "amdgcn-amd-amdhsa--$arch" "$obj"; then
    echo "ci/build-hip.sh: $obj holds no device code for $arch" >&2
    exit 1
  fi
  echo "hip: reference/formats/device.cu -> $obj ($arch)"
done

# The cuda backend (kernels/cuda/gpu.h maps the CUDA runtime to HIP; the PTX-only instructions are
# behind QCK_PTX with their software paths, docs/notes/cuda.md "HIP").
probe="$out/arch_probe.cu"
printf '#include <hip/hip_runtime.h>\n__global__ void qck_probe(int *p) { *p = 1; }\n' > "$probe"
for arch in ${CUDA_HIP_ARCHS:-gfx90a gfx942}; do
  if ! "$HIPCC" -x hip --offload-arch="$arch" -c "$probe" -o "$probe.o" 2> /dev/null; then
    if [ "$arch" = gfx942 ]; then
      echo "hip: this hipcc does not know gfx942; building kernels/cuda for gfx940 (MI300) instead"
      arch=gfx940
    else
      echo "ci/build-hip.sh: hipcc rejects --offload-arch=$arch" >&2
      exit 1
    fi
  fi
  for src in kernels moe_kernels layout_kernels gemm_int8 gemm_simt runtime bench_cuda_quant; do
    obj="$out/cuda_${src}_$arch.o"
    "$HIPCC" -x hip --offload-arch="$arch" -std=c++17 -O2 -ffp-contract=off -Wall -Wextra -Werror \
      -Iinclude -Ireference -Ikernels/cuda -c "kernels/cuda/$src.cu" -o "$obj"
    # runtime.cu is host code (the runtime API, no kernels): no offload bundle to look for
    if [ "$src" != runtime ] && ! grep -aq "amdgcn-amd-amdhsa--$arch" "$obj"; then
      echo "ci/build-hip.sh: $obj holds no device code for $arch" >&2
      exit 1
    fi
    echo "hip: kernels/cuda/$src.cu -> $obj ($arch)"
  done
done
