# libFuzzer targets (tests/fuzz/, docs/notes/fuzz.md): the case loader and its expressions, the raw-
# tensor commands and their shape parsers, the HDF5 golden reader and `qcheck verify`'s outputs
# reader. With -DQC_FUZZ=ON (clang; ci/fuzz.sh) each is a fuzzer; otherwise each is built with
# tests/fuzz/replay.c instead of libFuzzer, and the quick tests run it over its corpus
# (tests/fuzz/corpus/NAME: the seeds and every reproducer a fuzzer ever found), with any compiler
# and under ci/sanitize.sh's sanitizers.
option(QC_FUZZ "build the libFuzzer targets (clang, CMAKE_C_FLAGS with -fsanitize=fuzzer-no-link,...)" OFF)
set(QC_FUZZ_TARGETS case expr cli golden outputs)
set(QC_FUZZ_EXTRA_cli ${PROJECT_SOURCE_DIR}/harness/cmd_quant.c ${PROJECT_SOURCE_DIR}/harness/cmd_layout.c
                      ${PROJECT_SOURCE_DIR}/harness/cmd_codec.c)
foreach(t ${QC_FUZZ_TARGETS})
  if(QC_FUZZ)
    set(exe fuzz_${t})
    add_executable(${exe} fuzz/fuzz_${t}.c ${QC_FUZZ_EXTRA_${t}})
    target_link_options(${exe} PRIVATE -fsanitize=fuzzer)
  else()
    set(exe fuzz_${t}_replay)
    add_executable(${exe} fuzz/fuzz_${t}.c fuzz/replay.c ${QC_FUZZ_EXTRA_${t}})
    qc_test(fuzz_corpus_${t} quick $<TARGET_FILE:${exe}> ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${t})
  endif()
  target_link_libraries(${exe} PRIVATE qcharness)
  target_compile_definitions(${exe} PRIVATE QC_CASES_DIR="${PROJECT_SOURCE_DIR}/cases")
endforeach()
