# ml_dtypes oracle: the CLI's ml_dtypes cast profiles and decode tables against the installed ml_dtypes / numpy
# (tests/test_mldtypes.py). The script itself exits 77 (SKIPPED) when numpy or ml_dtypes is missing;
# without a Python 3 interpreter the tests are still registered and report SKIPPED with the reason.

if(NOT COMMAND qc_skip_test)
  # A test that only says why it cannot run and exits with the skip code.
  function(qc_skip_test name label reason)
    qc_test(${name} ${label} /bin/sh -c "echo 'SKIP: ${reason}' && exit ${QC_SKIP}")
  endfunction()
endif()

set(QC_MLDTYPES_SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/test_mldtypes.py)
if(Python3_Interpreter_FOUND OR Python3_FOUND)
  qc_test(mldtypes_quick quick ${Python3_EXECUTABLE} ${QC_MLDTYPES_SCRIPT} --qcheck ${QC_QCHECK})
  set_tests_properties(mldtypes_quick PROPERTIES TIMEOUT 600)
  # All 2^32 fp32 inputs for the 8-bit formats and e8m0: about 8 minutes on 2 cores.
  qc_test(mldtypes_full full ${Python3_EXECUTABLE} ${QC_MLDTYPES_SCRIPT} --qcheck ${QC_QCHECK} --full)
  set_tests_properties(mldtypes_full PROPERTIES TIMEOUT 7200)
else()
  qc_skip_test(mldtypes_quick quick "no Python 3 interpreter found at configure time (cmake/QcOptional.cmake)")
  qc_skip_test(mldtypes_full full "no Python 3 interpreter found at configure time (cmake/QcOptional.cmake)")
endif()

# The drift check (ci/drift.sh): the newest ml_dtypes / numpy from PyPI against every ml_dtypes
# profile. Needs the network, so it has its own label and is not part of .ci/run.
qc_test(drift_mldtypes drift /usr/bin/env BUILD_DIR=${CMAKE_BINARY_DIR} ${PROJECT_SOURCE_DIR}/ci/drift.sh)
set_tests_properties(drift_mldtypes PROPERTIES TIMEOUT 900)
