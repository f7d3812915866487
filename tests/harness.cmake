# Harness self-tests (issue #5): comparator classes (C), and sweep/determinism/shards/isolation/
# validation/mutant gate through the CLI (Python).
add_executable(test_compare test_compare.c)
target_link_libraries(test_compare PRIVATE qcharness)
qc_test(harness_compare quick $<TARGET_FILE:test_compare>)
if(Python3_FOUND)
  qc_test(harness_cli quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_harness.py
          --qcheck ${QC_QCHECK} --cases ${PROJECT_SOURCE_DIR}/cases)
  # The longest quick test: about 4 min, 11-13 under ASan on 2 cores.
  set_tests_properties(harness_cli PROPERTIES TIMEOUT 1500)
  # index.html in headless Chromium (SKIPPED without a browser; ci/deps.sh installs one)
  qc_test(html_report quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_html.py
          --qcheck ${QC_QCHECK} --cases ${PROJECT_SOURCE_DIR}/cases)
  # a real Slurm cluster on this machine: 4 array tasks, merged, against an unsharded run
  qc_test(slurm_cluster cluster env QCHECK=${QC_QCHECK} bash ${PROJECT_SOURCE_DIR}/ci/slurm-cluster.sh)
else()
  qc_test(harness_cli quick sh -c "echo 'SKIPPED: python3 not found'; exit 77")
endif()

# The one-way dependencies (docs/DESIGN.md): kernels/ sees include/qcheck and reference/ only,
# golden/ never includes harness/ (tests/check_layering.py).
qc_test(layering quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_layering.py ${PROJECT_SOURCE_DIR})
