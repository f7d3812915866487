# qcheck quant/dequant composed with layouts (--layout) and the nvfp4 UE8M0 branch (sf=ue8m0),
# against numpy + ml_dtypes (tests/test_quant_cli.py); qcheck identify (tests/test_identify.py).
if(Python3_FOUND)
  qc_test(quant_cli quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_quant_cli.py --qcheck ${QC_QCHECK})
  qc_test(identify quick ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/test_identify.py --qcheck ${QC_QCHECK})
else()
  qc_test(quant_cli quick sh -c "echo 'SKIPPED: python3 not found'; exit 77")
  qc_test(identify quick sh -c "echo 'SKIPPED: python3 not found'; exit 77")
endif()
