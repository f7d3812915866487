# Quantized GEMM reference (tests/test_gemm.c): hand-worked values, MPFR soundness and tightness
# of the bound, exact-by-construction cases, a wrong scale block outside the bound.
add_executable(test_gemm ${CMAKE_CURRENT_SOURCE_DIR}/test_gemm.c)
target_link_libraries(test_gemm PRIVATE qcharness)
qc_test(gemm quick $<TARGET_FILE:test_gemm>)
set_tests_properties(gemm PROPERTIES TIMEOUT 120)
# The GEMM / MoE benchmark (figures, not a test): bench_gemm gemm [M N K [kind]] | moe T H I E K [recipe].
add_executable(bench_gemm ${PROJECT_SOURCE_DIR}/bench/bench_gemm.c)
target_link_libraries(bench_gemm PRIVATE qcharness)
