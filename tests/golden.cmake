# Tests of the golden store (golden/) and the report writers (harness/report.c). Without HDF5 the
# golden tests still build and report SKIPPED (exit 77) with the reason; so do the Python checks
# without Python.
set(QC_TEST_TMP ${CMAKE_CURRENT_BINARY_DIR}/tmp)

add_executable(test_golden test_golden.c)
target_link_libraries(test_golden PRIVATE qcgolden)
target_compile_definitions(test_golden PRIVATE _POSIX_C_SOURCE=200809L)
add_executable(golden_writer golden_writer.c)
target_link_libraries(golden_writer PRIVATE qcgolden)
if(HDF5_FOUND)
  # The test corrupts files with the plain HDF5 API, independently of the store.
  target_compile_definitions(test_golden PRIVATE QC_HAVE_HDF5=1 ${HDF5_DEFINITIONS})
  target_include_directories(test_golden SYSTEM PRIVATE ${HDF5_INCLUDE_DIRS})
  if(HDF5_C_LIBRARIES)
    target_link_libraries(test_golden PRIVATE ${HDF5_C_LIBRARIES})
  else()
    target_link_libraries(test_golden PRIVATE ${HDF5_LIBRARIES})
  endif()
else()
  target_compile_definitions(test_golden PRIVATE QC_HAVE_HDF5=0)
endif()
qc_test(golden_store quick $<TARGET_FILE:test_golden>)

add_executable(test_report test_report.c)
target_link_libraries(test_report PRIVATE qcreport)

if(Python3_FOUND)
  qc_test(golden_h5py quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_golden_h5py.py
          $<TARGET_FILE:golden_writer> ${QC_TEST_TMP}/golden_h5py)
  qc_test(report_writers quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_report.py
          $<TARGET_FILE:test_report> ${QC_TEST_TMP}/report)
else()
  qc_test(golden_h5py quick sh -c "echo 'SKIPPED: no Python 3 interpreter found'; exit 77")
  qc_test(report_writers quick $<TARGET_FILE:test_report> ${QC_TEST_TMP}/report) # C checks only
endif()
