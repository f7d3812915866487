# The cpu-avx512 kernels against the reference (kernels/cpu/). SKIPPED (77) with the reason when
# the compiler cannot emit AVX-512 (nothing to link) or the CPU lacks it (the program says so).
if(QC_HAVE_AVX512)
  add_executable(test_cpu_avx512 test_cpu_avx512.c)
  target_link_libraries(test_cpu_avx512 PRIVATE qcharness m)
  qc_test(cpu_avx512 quick $<TARGET_FILE:test_cpu_avx512>)
else()
  qc_test(cpu_avx512 quick sh -c "echo 'SKIPPED: the compiler cannot emit AVX-512 (QC_HAVE_AVX512 off)'; exit 77")
endif()
