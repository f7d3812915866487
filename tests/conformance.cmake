# Profiles proven against the real libraries: every recorded file of golden/real/ (made by the
# recorders in tools/record/ where the library runs) reproduced bit for bit by the reference.
qc_test(conformance quick /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/conformance.sh ${QC_QCHECK}
        ${PROJECT_SOURCE_DIR}/golden/real)
