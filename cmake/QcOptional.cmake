# Detection of every optional part, with one summary at the end of configure.
include(CheckCSourceCompiles)
find_package(PkgConfig QUIET)
find_package(Python3 COMPONENTS Interpreter QUIET)

# GPU compilers: CI compiles the device build of the codecs wherever a compiler exists.
find_program(QC_NVCC nvcc PATHS /usr/local/cuda/bin)
find_program(QC_HIPCC hipcc PATHS /opt/rocm/bin)
find_path(QC_CUDA_INCLUDE cuda_fp8.h PATHS /usr/local/cuda/include)

# The cuda backend (kernels/cuda, docs/notes/cuda.md) is device code linked into the qcheck binary,
# so CUDA is enabled here, at the top level (enable_language must be called in the highest
# directory common to every target that links CUDA objects). Architectures: sm_90 (SASS and
# compute_90 PTX), plus sm_100a where this nvcc accepts it; -DCMAKE_CUDA_ARCHITECTURES=... overrides.
# -DQC_WITH_CUDA=OFF leaves the backend out. Without nvcc nothing of this runs.
option(QC_WITH_CUDA "build the cuda backend (kernels/cuda) when nvcc is found" ON)
set(QC_HAVE_CUDA OFF)
if(QC_NVCC AND QC_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER ${QC_NVCC})
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(qc_probe ${CMAKE_BINARY_DIR}/qc_sm100a_probe.cu)
    file(WRITE ${qc_probe} "__global__ void qc_probe_kernel(int *p) { *p = 1; }\n")
    execute_process(COMMAND ${CMAKE_CUDA_COMPILER} -arch=sm_100a -c ${qc_probe} -o ${qc_probe}.o
                    RESULT_VARIABLE qc_sm100a OUTPUT_QUIET ERROR_QUIET)
    if(qc_sm100a EQUAL 0)
      set(CMAKE_CUDA_ARCHITECTURES "90;100a")
    else()
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    enable_language(CXX) # the backend's CPU-emulation test plugin (kernels/cuda/emu.h) is C++
    find_package(CUDAToolkit QUIET)
    if(TARGET CUDA::cudart_static)
      set(QC_HAVE_CUDA ON)
    endif()
  endif()
endif()

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

# The version of a Debian package as the distribution ships it ("" when dpkg does not know it):
# ci/deps.sh installs the distribution's packages unpinned, so the summary records what was used.
function(qc_debian_version pkg out)
  set(v "")
  find_program(QC_DPKG_QUERY dpkg-query)
  if(QC_DPKG_QUERY AND pkg)
    execute_process(COMMAND ${QC_DPKG_QUERY} -W -f=\${Version} ${pkg} OUTPUT_VARIABLE v ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

# label | variable that says it was found | Debian package it comes from
function(qc_report_optional_parts)
  message(STATUS "qcheck optional parts (Debian package versions as installed):")
  foreach(part "CUDA (nvcc)|QC_NVCC|" "HIP (hipcc)|QC_HIPCC|hipcc" "CUDA fp8/fp4/fp6 headers|QC_CUDA_INCLUDE|"
               "MPFR|QC_MPFR_LIB|libmpfr-dev" "OpenBLAS|QC_OPENBLAS_LIB|libopenblas-dev" "HDF5|HDF5_FOUND|libhdf5-dev"
               "cJSON|QC_CJSON_FOUND|libcjson-dev" "Python3|Python3_FOUND|" "AVX-512 (compiler)|QC_HAVE_AVX512|"
               "AMX (compiler)|QC_HAVE_AMX|")
    string(REPLACE "|" ";" pair "${part}")
    list(GET pair 0 label)
    list(GET pair 1 var)
    list(GET pair 2 pkg)
    qc_found_word(${var} word)
    qc_debian_version("${pkg}" ver)
    if(${var} AND ver)
      set(word "found (${pkg} ${ver})")
    endif()
    message(STATUS "  ${label}: ${word}")
  endforeach()
  message(STATUS "  C compiler: ${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}; build type ${CMAKE_BUILD_TYPE}")
  if(Python3_FOUND)
    execute_process(COMMAND ${Python3_EXECUTABLE} -c
      "import importlib.metadata as m\nfor p in ('ml_dtypes','numpy','h5py'):\n  try: print(p, m.version(p))\n  except Exception: print(p, 'missing')"
      OUTPUT_VARIABLE pyv ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    string(REPLACE "\n" ", " pyv "${pyv}")
    message(STATUS "  Python ${Python3_VERSION} oracles (pinned in ci/constraints.txt): ${pyv}")
  endif()
endfunction()
