#!/bin/sh
# Compiles sglang's JIT quantization kernels (sglang/kernels/jit/csrc/gemm/*.cuh of an unpacked
# sglang wheel) into tvm-ffi modules for sm_90a, with the flags sglang's own JIT loader uses
# (sglang/kernels/jit/utils/arch.py get_default_target_flags, compile/toolchain.py,
# compile/spec.py's export wrapper, and each op's extra_cuda_cflags: --use_fast_math for the
# three quantizers). The kernels are sglang's, compiled unchanged; only the one-line export
# wrapper that sglang generates at run time is generated here. tools/record/sglang_quant.py loads
# the modules on the GPU machine.
#
#   build_sglang_jit.sh SGLANG_ROOT TVM_FFI_ROOT OUT_DIR
# SGLANG_ROOT: where `sglang/` of the wheel is unpacked; TVM_FFI_ROOT: where `tvm_ffi/` of the
# apache-tvm-ffi wheel is unpacked (its headers and libtvm_ffi.so).
set -eu
src=$1/sglang/kernels/jit tvm=$2/tvm_ffi out=$3
mkdir -p "$out"
nvcc=${NVCC:-nvcc}
flags="-Xcompiler -fPIC -gencode=arch=compute_90a,code=sm_90a -DSGL_CUDA_ARCH=900 -std=c++20 -O3
       --expt-relaxed-constexpr -I$src/include -I$tvm/include -I$tvm/include/dlpack"

# module NAME MATH CUH EXPORT KERNEL: one tvm-ffi module exporting KERNEL as EXPORT; MATH is
# fast (--use_fast_math, as the op's loader passes it on sm_90) or precise (no extra flag)
module() {
    name=$1 math=$2 cuh=$3 export=$4 kernel=$5
    [ -s "$out/$name.so" ] && return 0
    extra=""
    [ "$math" = fast ] && extra=--use_fast_math
    cat > "$out/$name.cu" <<WRAP
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include "$src/csrc/$cuh"
namespace sglang {
TVM_FFI_DLL_EXPORT_TYPED_FUNC($export, ($kernel));
}
WRAP
    # shellcheck disable=SC2086
    $nvcc $flags $extra -c "$out/$name.cu" -o "$out/$name.o"
    g++ "$out/$name.o" -shared -L"$tvm/lib" -ltvm_ffi -L"${CUDA_HOME:-/usr/local/cuda}/lib64" -lcudart -o "$out/$name.so"
    rm -f "$out/$name.o"
    echo "built $out/$name.so"
}

# per_token_group_quant (ops/quantization/per_token_group_quant.py, --use_fast_math):
# PerTokenGroupQuantFlatKernel<in, out, group, ue8m0, row_major, aligned, fuse_silu, use_pdl>.
# use_pdl is launch scheduling only (the kernel's own comment); false here.
for in in fp32 bf16; do
    for g in 128 32; do
        for lay in "f32 false true" "f32col false false" "ue8m0 true true" "ue8m0col true false"; do
            set -- $lay
            module "ptgq-$in-g$g-$1" fast gemm/per_token_group_quant.cuh per_token_group_quant \
                "PerTokenGroupQuantFlatKernel<${in}_t, fp8_e4m3_t, $g, $2, $3, true, false, false>::run"
        done
    done
    # per_tensor_quant_fp8<is_static, dtype> (no fast math: per_tensor_quant_fp8.py passes no flag)
    module "ptq-$in-dynamic" precise gemm/per_tensor_quant_fp8.cuh per_tensor_quant_fp8 "per_tensor_quant_fp8<false, ${in}_t>"
    module "ptq-$in-static" precise gemm/per_tensor_quant_fp8.cuh per_tensor_quant_fp8 "per_tensor_quant_fp8<true, ${in}_t>"
    # per_token_quant_fp8<dtype> (--use_fast_math on sm_90: per_token_quant_fp8.py)
    module "ptok-$in" fast gemm/per_token_quant_fp8.cuh per_token_quant_fp8 "per_token_quant_fp8<${in}_t>"
done
