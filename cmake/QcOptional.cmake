# Detection of every optional part, with one summary at the end of configure.
include(CheckCSourceCompiles)
find_package(PkgConfig QUIET)
find_package(Python3 COMPONENTS Interpreter QUIET)

# GPU compilers: CI compiles the device build of the codecs wherever a compiler exists.
find_program(QC_NVCC nvcc PATHS /usr/local/cuda/bin)
find_program(QC_HIPCC hipcc PATHS /opt/rocm/bin)
find_path(QC_CUDA_INCLUDE cuda_fp8.h PATHS /usr/local/cuda/include)

find_library(QC_MPFR_LIB mpfr)
find_path(QC_MPFR_INCLUDE mpfr.h)
find_library(QC_GMP_LIB gmp)
find_library(QC_OPENBLAS_LIB openblas)
find_path(QC_OPENBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas)
find_package(HDF5 QUIET COMPONENTS C)
if(PkgConfig_FOUND)
  pkg_check_modules(QC_CJSON QUIET libcjson)
endif()

# The compiler can emit AVX-512 / AMX; whether this CPU runs them is decided at run time.
set(CMAKE_REQUIRED_FLAGS "-mavx512f -mavx512bw -mavx512vl")
check_c_source_compiles("#include <immintrin.h>
int main(void){__m512 v=_mm512_set1_ps(1.f);return (int)_mm512_reduce_add_ps(v)-16;}" QC_HAVE_AVX512)
set(CMAKE_REQUIRED_FLAGS "-mamx-tile -mamx-int8 -mamx-bf16 -mavx512f -mavx512bf16")
check_c_source_compiles("#include <immintrin.h>
int main(void){__m512 v=_mm512_set1_ps(1.f);__m512bh h=_mm512_cvtne2ps_pbh(v,v);(void)h;_tile_zero(0);_tile_release();return 0;}" QC_HAVE_AMX)
unset(CMAKE_REQUIRED_FLAGS)

function(qc_found_word var out)
  if(${var})
    set(${out} "found" PARENT_SCOPE)
  else()
    set(${out} "not found" PARENT_SCOPE)
  endif()
endfunction()

function(qc_report_optional_parts)
  message(STATUS "qcheck optional parts:")
  foreach(part "CUDA (nvcc)|QC_NVCC" "HIP (hipcc)|QC_HIPCC" "CUDA fp8/fp4/fp6 headers|QC_CUDA_INCLUDE"
               "MPFR|QC_MPFR_LIB" "OpenBLAS|QC_OPENBLAS_LIB" "HDF5|HDF5_FOUND" "cJSON|QC_CJSON_FOUND"
               "Python3|Python3_FOUND" "AVX-512 (compiler)|QC_HAVE_AVX512" "AMX (compiler)|QC_HAVE_AMX")
    string(REPLACE "|" ";" pair "${part}")
    list(GET pair 0 label)
    list(GET pair 1 var)
    qc_found_word(${var} word)
    message(STATUS "  ${label}: ${word}")
  endforeach()
endfunction()
