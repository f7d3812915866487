# MoE routing and activations against hand-worked values (tests/test_moe.c).
add_executable(test_moe ${CMAKE_CURRENT_SOURCE_DIR}/test_moe.c)
target_link_libraries(test_moe PRIVATE qcref)
qc_test(moe quick $<TARGET_FILE:test_moe>)
