# The Python side of the exec backend (python/, docs/exec.md): the qcheck-runner package's own
# tests on hand-built batches, and end to end against this qcheck (export, the runner on the
# example kernels in python/examples/, verify). python/tests/run_tests.py exits 77 (SKIPPED)
# when numpy or h5py is missing; PYTHONPATH points at python/, so nothing is installed.

if(NOT COMMAND qc_skip_test)
  # A test that only says why it cannot run and exits with the skip code.
  function(qc_skip_test name label reason)
    qc_test(${name} ${label} /bin/sh -c "echo 'SKIP: ${reason}' && exit ${QC_SKIP}")
  endfunction()
endif()

set(QC_PYRUNNER_DIR ${PROJECT_SOURCE_DIR}/python)
if(Python3_Interpreter_FOUND OR Python3_FOUND)
  qc_test(python_runner quick ${Python3_EXECUTABLE} ${QC_PYRUNNER_DIR}/tests/run_tests.py --qcheck ${QC_QCHECK})
  # about 1.5 min, 2.5-5 under ASan on 2 cores: started early (COST), after harness_cli and mutant_gate
  set_tests_properties(python_runner PROPERTIES COST 800 TIMEOUT 900 ENVIRONMENT "PYTHONPATH=${QC_PYRUNNER_DIR}")
else()
  qc_skip_test(python_runner quick "no Python 3 interpreter found at configure time (cmake/QcOptional.cmake)")
endif()
