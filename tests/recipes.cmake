# Recipes, recipe profiles, transforms and the rcp.approx emulation (tests/test_recipes.c), and the
# GPU proof of the emulation on all 2^32 inputs (reference/arith/rcp_probe.cu, label gpu).

add_executable(test_recipes ${CMAKE_CURRENT_SOURCE_DIR}/test_recipes.c)
target_include_directories(test_recipes PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(test_recipes PRIVATE qcref)
qc_test(recipes quick $<TARGET_FILE:test_recipes>)
set_tests_properties(recipes PROPERTIES TIMEOUT 120)

if(NOT COMMAND qc_skip_test)
  function(qc_skip_test name label reason)
    qc_test(${name} ${label} /bin/sh -c "echo 'SKIP: ${reason}' && exit ${QC_SKIP}")
  endfunction()
endif()

# nvcc is driven directly (no enable_language(CUDA)), so this needs nothing of tests/cuda_host.cmake.
# The probe links the table generated from rcp_table.tar.xz, so the GPU proves the table of the repo.
if(QC_NVCC)
  set(QC_RCP_PROBE ${CMAKE_CURRENT_BINARY_DIR}/rcp_probe)
  add_custom_command(OUTPUT ${QC_RCP_PROBE}
    COMMAND ${QC_NVCC} -O2 --gpu-architecture=compute_80 --gpu-code=sm_90,compute_80
            -I${PROJECT_SOURCE_DIR}/reference ${PROJECT_SOURCE_DIR}/reference/arith/rcp_probe.cu
            ${PROJECT_BINARY_DIR}/reference/rcp_table.c -o ${QC_RCP_PROBE}
    DEPENDS qcref ${PROJECT_SOURCE_DIR}/reference/arith/rcp_probe.cu
            ${PROJECT_SOURCE_DIR}/reference/arith/rcp_approx_core.h ${PROJECT_SOURCE_DIR}/reference/arith/arith.h
    COMMENT "Building rcp_probe with nvcc")
  add_custom_target(rcp_probe ALL DEPENDS ${QC_RCP_PROBE})
  qc_test(rcp_approx_gpu_proof gpu ${QC_RCP_PROBE} prove)
  set_tests_properties(rcp_approx_gpu_proof PROPERTIES TIMEOUT 300)
else()
  qc_skip_test(rcp_approx_gpu_proof gpu "nvcc not found at configure time (cmake/QcOptional.cmake)")
endif()
