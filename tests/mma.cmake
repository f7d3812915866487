# The tensor-core model (reference/arith/mma_sm90.h) against the H200's recorded wgmma outputs
# (golden/tensor-core/, docs/notes/mma_sm90.md); SKIPPED without HDF5. The 1.3e9-dot-product proof
# runs on the GPU itself: `qcheck bringup --backend cuda` (kernels/cuda/bringup_mma.cu).
if(HDF5_FOUND)
  add_executable(test_mma_sm90 ${CMAKE_CURRENT_SOURCE_DIR}/test_mma_sm90.c)
  target_link_libraries(test_mma_sm90 PRIVATE qcref)
  target_compile_definitions(test_mma_sm90 PRIVATE ${HDF5_DEFINITIONS})
  target_include_directories(test_mma_sm90 SYSTEM PRIVATE ${HDF5_INCLUDE_DIRS})
  if(HDF5_C_LIBRARIES)
    target_link_libraries(test_mma_sm90 PRIVATE ${HDF5_C_LIBRARIES})
  else()
    target_link_libraries(test_mma_sm90 PRIVATE ${HDF5_LIBRARIES})
  endif()
  qc_test(mma_sm90 quick $<TARGET_FILE:test_mma_sm90> ${PROJECT_SOURCE_DIR}/golden/tensor-core/h200-fp8-mma.h5
          ${PROJECT_SOURCE_DIR}/golden/tensor-core/h200-fp8-gemm-schedules.h5
          ${PROJECT_SOURCE_DIR}/golden/tensor-core/h200-cublaslt-rowwise.h5
          ${PROJECT_SOURCE_DIR}/golden/tensor-core/h200-cublaslt-block.h5)
else()
  qc_test(mma_sm90 quick sh -c "echo 'SKIPPED: HDF5 not found (libhdf5-dev)'; exit 77")
endif()
