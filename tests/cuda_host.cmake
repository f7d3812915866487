# The reference against CUDA (included by tests/CMakeLists.txt; qc_test and QC_SKIP come from there).
#   cuda_host_quick (quick), cuda_host_full (full): tests/cuda_host_check.cpp, compiled by the host C++
#     compiler with CUDA's headers as host code (their host paths emulate the cvt instructions), so
#     they need the headers (QC_CUDA_INCLUDE) and a C++ compiler, not nvcc and not a GPU.
#   device_codecs (gpu): tests/qc_device_check.cu with reference/formats/device.cu, built by nvcc
#     (QC_NVCC) for sm_90; it reports SKIPPED (77) itself on a machine without a usable GPU.
#   device_functions (gpu): tests/qc_device_functions.cu, reference/arith's exp, 2^x, erf and tanh
#     built for the device against their host build; the same SKIPPED without a GPU.
# A missing part registers the test anyway as one that prints the reason and exits 77.
include(CheckLanguage)

# The reason travels as sh's $0, so that no quoting of it matters; it must not hold a ';' (a CMake
# list separator).
function(qc_skipped_test name label reason)
  qc_test(${name} ${label} sh -c "echo \"SKIPPED: \$0\" && exit ${QC_SKIP}" "${reason}")
endfunction()

find_package(Threads)

# --- host check: g++ + CUDA headers ---
set(qc_cuda_host_reason "")
if(NOT QC_CUDA_INCLUDE)
  set(qc_cuda_host_reason "CUDA headers (cuda_fp8.h) not found: install the CUDA toolkit or pass -DQC_CUDA_INCLUDE=DIR")
else()
  check_language(CXX)
  if(NOT CMAKE_CXX_COMPILER)
    set(qc_cuda_host_reason "no C++ compiler found for tests/cuda_host_check.cpp")
  elseif(NOT Threads_FOUND)
    set(qc_cuda_host_reason "no thread library found for tests/cuda_host_check.cpp")
  endif()
endif()

if(qc_cuda_host_reason STREQUAL "")
  enable_language(CXX)
  add_executable(cuda_host_check cuda_host_check.cpp)
  set_target_properties(cuda_host_check PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  # SYSTEM: -Werror applies to our code, not to warnings inside CUDA's headers.
  target_include_directories(cuda_host_check SYSTEM PRIVATE ${QC_CUDA_INCLUDE})
  target_link_libraries(cuda_host_check PRIVATE qcref Threads::Threads)
  qc_test(cuda_host_quick quick $<TARGET_FILE:cuda_host_check>)
  qc_test(cuda_host_full full $<TARGET_FILE:cuda_host_check> --full --threads 2)
  set_tests_properties(cuda_host_full PROPERTIES TIMEOUT 7200)
else()
  qc_skipped_test(cuda_host_quick quick "${qc_cuda_host_reason}")
  qc_skipped_test(cuda_host_full full "${qc_cuda_host_reason}")
endif()

# --- device check: nvcc, sm_90 ---
set(qc_device_reason "")
if(NOT QC_NVCC)
  set(qc_device_reason "nvcc not found (QC_NVCC): the device build of the codecs was not compiled")
elseif(NOT Threads_FOUND)
  set(qc_device_reason "no thread library found for tests/qc_device_check.cu")
endif()

if(qc_device_reason STREQUAL "")
  if(NOT CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER ${QC_NVCC})
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  add_executable(qc_device_check qc_device_check.cu ${PROJECT_SOURCE_DIR}/reference/formats/device.cu)
  # sm_90 SASS plus compute_90 PTX (newer GPUs JIT it); cudart linked statically, libqcref too.
  set_target_properties(qc_device_check PROPERTIES CUDA_ARCHITECTURES 90 CUDA_STANDARD 17
                        CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF CUDA_RUNTIME_LIBRARY Static)
  # The project's -Wall -Wextra -Werror are gcc flags nvcc rejects: pass them to the host compiler and
  # make every nvcc warning an error. --fmad=false: no contraction, as -ffp-contract=off for libqcref.
  set_property(TARGET qc_device_check PROPERTY COMPILE_OPTIONS "")
  target_compile_options(qc_device_check PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false -Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
  # SYSTEM: nvcc's host pass inlines CUDA's headers, whose unused parameters -Wextra would reject.
  target_include_directories(qc_device_check SYSTEM PRIVATE ${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES})
  target_link_libraries(qc_device_check PRIVATE qcref Threads::Threads)
  qc_test(device_codecs gpu $<TARGET_FILE:qc_device_check>)
  set_tests_properties(device_codecs PROPERTIES TIMEOUT 1800)

  # Header-only functions: the host build in the same binary is the expected side, so it too must not
  # contract (-ffp-contract=off, as libqcref).
  add_executable(qc_device_functions qc_device_functions.cu)
  set_target_properties(qc_device_functions PROPERTIES CUDA_ARCHITECTURES 90 CUDA_STANDARD 17
                        CUDA_STANDARD_REQUIRED ON CUDA_EXTENSIONS OFF CUDA_RUNTIME_LIBRARY Static)
  set_property(TARGET qc_device_functions PROPERTY COMPILE_OPTIONS "")
  target_compile_options(qc_device_functions PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--fmad=false -Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror,-ffp-contract=off>)
  target_include_directories(qc_device_functions PRIVATE ${PROJECT_SOURCE_DIR}/reference)
  target_include_directories(qc_device_functions SYSTEM PRIVATE ${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES})
  target_link_libraries(qc_device_functions PRIVATE Threads::Threads)
  qc_test(device_functions gpu $<TARGET_FILE:qc_device_functions>)
  set_tests_properties(device_functions PROPERTIES TIMEOUT 1800)
else()
  qc_skipped_test(device_codecs gpu "${qc_device_reason}")
  qc_skipped_test(device_functions gpu "${qc_device_reason}")
endif()
