# The GPU reciprocal's delta table (rcp_approx_core.h): stored compact as rcp_table.tar.xz
# (the 2 MiB table of 2-bit codes recorded by rcp_probe.cu on an H200), extracted at configure
# time by CMake's own archive support and turned into const C data at build time.
set(QC_RCP_TABLE_ARCHIVE ${CMAKE_CURRENT_LIST_DIR}/rcp_table.tar.xz)
set(QC_RCP_TABLE_DIR ${CMAKE_CURRENT_BINARY_DIR}/rcp_table)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${QC_RCP_TABLE_ARCHIVE})
file(ARCHIVE_EXTRACT INPUT ${QC_RCP_TABLE_ARCHIVE} DESTINATION ${QC_RCP_TABLE_DIR})
set(QC_RCP_TABLE_BIN ${QC_RCP_TABLE_DIR}/rcp_table.bin CACHE INTERNAL "rcp.approx delta table")

add_executable(qc_rcp_table_gen ${CMAKE_CURRENT_LIST_DIR}/rcp_table_gen.c)
add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/rcp_table.c
  COMMAND qc_rcp_table_gen ${QC_RCP_TABLE_BIN} ${CMAKE_CURRENT_BINARY_DIR}/rcp_table.c
  DEPENDS qc_rcp_table_gen ${QC_RCP_TABLE_BIN}
  COMMENT "Generating rcp_table.c (rcp.approx.ftz.f32 deltas)")
target_sources(qcref PRIVATE ${CMAKE_CURRENT_LIST_DIR}/rcp_approx.c ${CMAKE_CURRENT_BINARY_DIR}/rcp_table.c)
target_include_directories(qcref PRIVATE ${CMAKE_CURRENT_LIST_DIR})
