# Document references (tests/check_refs.py, standard library only): every path through a spec
# folder names a file of the folder docs/spec, and every section reference (NAME.md, the section
# sign, a number) names a repository markdown file with a heading of that number
# (docs/spec/README.md "How to cite"). Without a Python 3 interpreter the test is still registered
# and reports SKIPPED with the reason.

if(NOT COMMAND qc_skip_test)
  # A test that only says why it cannot run and exits with the skip code.
  function(qc_skip_test name label reason)
    qc_test(${name} ${label} /bin/sh -c "echo 'SKIP: ${reason}' && exit ${QC_SKIP}")
  endfunction()
endif()

if(Python3_Interpreter_FOUND OR Python3_FOUND)
  qc_test(check_refs quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_refs.py ${PROJECT_SOURCE_DIR})
  set_tests_properties(check_refs PROPERTIES TIMEOUT 120)
else()
  qc_skip_test(check_refs quick "no Python 3 interpreter found at configure time (cmake/QcOptional.cmake)")
endif()
