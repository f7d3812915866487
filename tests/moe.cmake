# MoE routing and activations against hand-worked values, the weights=generate generator, the
# streamed op bit for bit against the same weights as inputs, and model sm90-wgmma against a slow
# second implementation (tests/test_moe.c; its fp32 steps must not fuse: -ffp-contract=off).
add_executable(test_moe ${CMAKE_CURRENT_SOURCE_DIR}/test_moe.c)
target_compile_options(test_moe PRIVATE -ffp-contract=off)
target_link_libraries(test_moe PRIVATE qcharness)
qc_test(moe quick $<TARGET_FILE:test_moe>)
# op moe_cpu (sgl-kernel fused_experts_cpu fp8 w8a16): a second implementation within out.bound,
# mutants outside it, the exp budget (tests/test_moe_cpu.c).
add_executable(test_moe_cpu ${CMAKE_CURRENT_SOURCE_DIR}/test_moe_cpu.c)
target_link_libraries(test_moe_cpu PRIVATE qcharness m)
qc_test(moe_cpu quick $<TARGET_FILE:test_moe_cpu>)
# exp, 2^x, erf and tanh correctly rounded (reference/arith/exp_cr.h, exp2_cr.h, erf_cr.h, tanh_cr.h:
# the exp of the MoE routing and activations, the reference of bring-up's ex2.approx row, gelu's erf and
# gelu_tanh's tanh) against MPFR: quick, the undecided inputs and a sample; full, all 2^32 inputs
# (tests/test_exp_cr.c, one function per run).
find_package(Threads REQUIRED)
add_executable(test_exp_cr ${CMAKE_CURRENT_SOURCE_DIR}/test_exp_cr.c)
target_include_directories(test_exp_cr PRIVATE ${PROJECT_SOURCE_DIR}/reference)
target_compile_options(test_exp_cr PRIVATE -ffp-contract=off)
target_link_libraries(test_exp_cr PRIVATE Threads::Threads m)
if(QC_MPFR_LIB AND QC_MPFR_INCLUDE AND QC_GMP_LIB)
  target_compile_definitions(test_exp_cr PRIVATE QC_HAVE_MPFR=1)
  target_include_directories(test_exp_cr SYSTEM PRIVATE ${QC_MPFR_INCLUDE})
  target_link_libraries(test_exp_cr PRIVATE ${QC_MPFR_LIB} ${QC_GMP_LIB})
endif()
foreach(f exp exp2 erf tanh)
  qc_test(${f}_cr quick $<TARGET_FILE:test_exp_cr> ${f})
  qc_test(${f}_cr_full full $<TARGET_FILE:test_exp_cr> ${f} --full)
  set_tests_properties(${f}_cr_full PROPERTIES TIMEOUT 1800)
endforeach()
