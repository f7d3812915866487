# The element-format reference against a slow second implementation written from
# docs/spec/formats.md (tests/slow_formats.c). formats_quick: every format x every policy
# combination over bf16 patterns, format values/midpoints, specials and seeded random fp32
# (well under a minute on 2 cores); formats_full: all 2^32 fp32 patterns into the 8-bit
# formats and e8m0 (minutes; label full).
find_package(Threads REQUIRED)
add_executable(test_formats ${CMAKE_CURRENT_SOURCE_DIR}/test_formats.c ${CMAKE_CURRENT_SOURCE_DIR}/slow_formats.c)
target_link_libraries(test_formats PRIVATE qcref Threads::Threads m)
target_compile_definitions(test_formats PRIVATE _POSIX_C_SOURCE=200809L)

qc_test(formats_quick quick $<TARGET_FILE:test_formats> --threads 2)
set_tests_properties(formats_quick PROPERTIES TIMEOUT 300)
qc_test(formats_full full $<TARGET_FILE:test_formats> --full --threads 2)
set_tests_properties(formats_full PROPERTIES TIMEOUT 7200)
