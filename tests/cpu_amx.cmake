# The cpu-amx kernels (kernels/cpu/amx_gemm.c) against the reference gemm op. SKIPPED (77) with
# the reason when the compiler cannot emit AMX (nothing to link) or the CPU lacks it (the program
# names the missing cpuid feature); ci/amx-bundle.sh runs it on a machine with AMX.
if(QC_HAVE_AVX512 AND QC_HAVE_AMX)
  add_executable(test_cpu_amx test_cpu_amx.c)
  target_link_libraries(test_cpu_amx PRIVATE qcharness m)
  qc_test(cpu_amx quick $<TARGET_FILE:test_cpu_amx>)
  set_tests_properties(cpu_amx PROPERTIES TIMEOUT 300)
else()
  qc_test(cpu_amx quick sh -c "echo 'SKIPPED: the compiler cannot emit AMX + AVX512-BF16 (QC_HAVE_AMX off)'; exit 77")
endif()
