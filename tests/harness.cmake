# Harness self-tests (issue #5): comparator classes (C), and sweep/determinism/shards/isolation/
# validation/mutant gate through the CLI (Python).
add_executable(test_compare test_compare.c)
target_link_libraries(test_compare PRIVATE qcharness)
qc_test(harness_compare quick $<TARGET_FILE:test_compare>)
if(Python3_FOUND)
  qc_test(harness_cli quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_harness.py
          --qcheck ${QC_QCHECK} --cases ${PROJECT_SOURCE_DIR}/cases --part runner)
  # The mutant gate: every deliberately broken kernel over the quick tier. Label mutants besides
  # quick: ci/sanitize.sh leaves it out (docs/DECISIONS.md "The mutant gate is not rerun under the
  # sanitizers").
  qc_test(mutant_gate quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_harness.py
          --qcheck ${QC_QCHECK} --cases ${PROJECT_SOURCE_DIR}/cases --part mutants)
  set_property(TEST mutant_gate APPEND PROPERTY LABELS mutants)
  # The two longest quick tests (about 1.5 and 1 min on 2 cores; harness_cli 3-6 min under ASan):
  # COST starts them first, side by side, so that neither is the last one running.
  set_tests_properties(harness_cli PROPERTIES COST 1000 TIMEOUT 1500)
  set_tests_properties(mutant_gate PROPERTIES COST 900 TIMEOUT 1200)
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
