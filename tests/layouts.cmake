# Layout maps (reference/layouts, docs/spec/layouts.md): golden vectors, bijection, inverse, padding rules,
# batch strides, one-hot probes and a second formulation per map (tests/test_layouts.c), plus the
# `qcheck layout` command line (tests/test_layout_cli.sh).
add_executable(test_layouts test_layouts.c layout_ref.c)
target_link_libraries(test_layouts PRIVATE qcref)
qc_test(layouts quick $<TARGET_FILE:test_layouts>)
set_tests_properties(layouts PROPERTIES TIMEOUT 120)
qc_test(layout_cli quick /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/test_layout_cli.sh ${QC_QCHECK})
