# CLI contract (docs/spec/cli.md): error handling, --help/--version, e2m1 packing, empty inputs
# (tests/test_cli.py, standard library only). Without a Python 3 interpreter the test is still
# registered and reports SKIPPED with the reason.

if(NOT COMMAND qc_skip_test)
  # A test that only says why it cannot run and exits with the skip code.
  function(qc_skip_test name label reason)
    qc_test(${name} ${label} /bin/sh -c "echo 'SKIP: ${reason}' && exit ${QC_SKIP}")
  endfunction()
endif()

if(Python3_Interpreter_FOUND OR Python3_FOUND)
  qc_test(cli_errors quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_cli.py --qcheck ${QC_QCHECK})
  set_tests_properties(cli_errors PROPERTIES TIMEOUT 300)
else()
  qc_skip_test(cli_errors quick "no Python 3 interpreter found at configure time (cmake/QcOptional.cmake)")
endif()
