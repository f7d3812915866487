# kernels/cpu: the cpu-avx512 and cpu-amx backends, compiled into libqcharness (included from
# harness/CMakeLists.txt). Only the kernel files get the AVX-512 flags; the registration file
# checks cpuid at run time, so the build runs on any x86-64 CPU. QC_HAVE_AVX512 (cmake/QcOptional)
# says whether the compiler can emit AVX-512; without it only the registration file is built and
# the backend reports SKIPPED with the reason. amx_gemm.c (the cpu-amx backend) needs QC_HAVE_AMX
# as well (AMX-TILE/BF16/INT8 + AVX512-BF16); the CPU's support is checked by cpuid at run time.
set(QC_CPU_DIR ${PROJECT_SOURCE_DIR}/kernels/cpu)
target_sources(qcharness PRIVATE ${QC_CPU_DIR}/cpu_backend.c)
target_include_directories(qcharness PUBLIC ${QC_CPU_DIR})
if(QC_HAVE_AVX512)
  set(QC_CPU_AVX512_SOURCES ${QC_CPU_DIR}/cast_avx512.c ${QC_CPU_DIR}/quant_avx512.c ${QC_CPU_DIR}/swizzle_avx512.c
      ${QC_CPU_DIR}/transform_avx512.c)
  target_sources(qcharness PRIVATE ${QC_CPU_AVX512_SOURCES})
  # -ffp-contract=off: the scale chain is one IEEE operation per fl32() of the spec, as in libqcref.
  set_source_files_properties(${QC_CPU_AVX512_SOURCES} PROPERTIES
    COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-ffp-contract=off")
  set_source_files_properties(${QC_CPU_DIR}/cpu_backend.c PROPERTIES COMPILE_DEFINITIONS QC_CPU_AVX512_BUILT=1)
endif()
if(QC_HAVE_AVX512 AND QC_HAVE_AMX)
  target_sources(qcharness PRIVATE ${QC_CPU_DIR}/amx_gemm.c ${QC_CPU_DIR}/amx_moe.c)
  # -ffp-contract=off: the int8 epilogue is sgl-kernel's op order (mul, mul or an explicit fmadd);
  # amx_moe.c's activation is silu_and_mul_stub's (div, mul: no fused multiply-add).
  set_source_files_properties(${QC_CPU_DIR}/amx_gemm.c ${QC_CPU_DIR}/amx_moe.c PROPERTIES COMPILE_OPTIONS
    "-mamx-tile;-mamx-bf16;-mamx-int8;-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512bf16;-ffp-contract=off")
  set_property(SOURCE ${QC_CPU_DIR}/cpu_backend.c APPEND PROPERTY COMPILE_DEFINITIONS QC_CPU_AMX_BUILT=1)
endif()
