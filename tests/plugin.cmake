# The outside backends. The plugin ABI end to end: the example plugin (examples/plugin), its ABI-99 and ties-away copies,
# and kernels/cpu built as a plugin (tests/test_plugin.py).
add_library(qcheck_persistent_test SHARED persistent_plugin.c)
target_include_directories(qcheck_persistent_test PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/reference)
add_library(qcheck_bringup_test SHARED bringup_plugin.c)
target_include_directories(qcheck_bringup_test PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/reference)
add_library(qcheck_hostile_test SHARED hostile_plugin.c)
target_include_directories(qcheck_hostile_test PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/reference)
qc_test(plugin quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_plugin.py ${QC_QCHECK}
        $<TARGET_FILE:qcheck_example> $<TARGET_FILE:qcheck_example_abi99> $<TARGET_FILE:qcheck_example_ties_away>
        $<TARGET_FILE:qcheck_cpu> $<TARGET_FILE:qcheck_persistent_test> $<TARGET_FILE:qcheck_bringup_test>
        $<TARGET_FILE:qcheck_hostile_test>)

# The exec backend with small outside processes (tests/test_exec.py; 77 without h5py/ml_dtypes).
qc_test(exec_backend quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_exec.py ${QC_QCHECK})
set_tests_properties(exec_backend PROPERTIES TIMEOUT 300)
