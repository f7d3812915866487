# MoE routing and activations against hand-worked values, the weights=generate generator and the
# streamed op bit for bit against the same weights as inputs (tests/test_moe.c).
add_executable(test_moe ${CMAKE_CURRENT_SOURCE_DIR}/test_moe.c)
target_link_libraries(test_moe PRIVATE qcharness)
qc_test(moe quick $<TARGET_FILE:test_moe>)
# op moe_cpu (sgl-kernel fused_experts_cpu fp8 w8a16): a second implementation within out.bound,
# mutants outside it, the exp budget (tests/test_moe_cpu.c).
add_executable(test_moe_cpu ${CMAKE_CURRENT_SOURCE_DIR}/test_moe_cpu.c)
target_link_libraries(test_moe_cpu PRIVATE qcharness m)
qc_test(moe_cpu quick $<TARGET_FILE:test_moe_cpu>)
