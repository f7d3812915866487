# Profiles proven against the real libraries: every recorded file of golden/real/ (made by the
# recorders in tools/record/ where the library runs) reproduced bit for bit by the reference, and
# by every CPU backend that can run here and does not decline the file (at least the floor of
# files that cpu-avx512 passes, tests/conformance.sh).
qc_test(conformance quick /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/conformance.sh ${QC_QCHECK}
        ${PROJECT_SOURCE_DIR}/golden/real)
# That check can fail: copies with one output byte flipped (h5py) FAIL for cpu-avx512 naming the
# coordinate; a declined file is SKIPPED, never PASS (SKIPPED 77 without h5py, or without AVX-512).
if(Python3_FOUND)
  qc_test(conformance_backend quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_golden_backend.py
          --qcheck ${QC_QCHECK} --cases ${PROJECT_SOURCE_DIR}/cases --real ${PROJECT_SOURCE_DIR}/golden/real)
else()
  qc_test(conformance_backend quick sh -c "echo 'SKIPPED: python3 not found'; exit 77")
endif()
