# Hostile input and faults (issue 19). test_hostile.py: every defect the issue lists (sizes that
# overflow, corrupt HDF5, undefined behaviour in the evaluator and the sweeps, unbounded sweeps,
# stale temporaries, case files that must be refused, unknown dtypes), each failing on the code
# before the fix. test_faults.py: kill -9 at random moments, a full tmpfs, a read-only folder
# (SKIPPED, exit 77, where a tmpfs cannot be mounted).
if(Python3_FOUND)
  qc_test(hostile_input quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_hostile.py
          --qcheck ${QC_QCHECK} --cases ${PROJECT_SOURCE_DIR}/cases --corpus ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus)
  foreach(part kill disk)
    qc_test(faults_${part} quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_faults.py
            --qcheck ${QC_QCHECK} --cases ${PROJECT_SOURCE_DIR}/cases --part ${part})
  endforeach()
else()
  qc_test(hostile_input quick sh -c "echo 'SKIPPED: python3 not found'; exit 77")
  qc_test(faults_kill quick sh -c "echo 'SKIPPED: python3 not found'; exit 77")
  qc_test(faults_disk quick sh -c "echo 'SKIPPED: python3 not found'; exit 77")
endif()
