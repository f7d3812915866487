# libqcexact (reference/exact): the fp64 GEMM through OpenBLAS and the MPFR certificate; the only
# part of the reference that may link them (docs/DESIGN.md). Without OpenBLAS dgemm is a plain loop,
# without MPFR qcx_have_mpfr() is 0 and the MPFR tests report SKIPPED.
add_library(qcexact STATIC ${CMAKE_CURRENT_LIST_DIR}/dgemm.c ${CMAKE_CURRENT_LIST_DIR}/dot_mpfr.c)
target_include_directories(qcexact PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_compile_options(qcexact PRIVATE -ffp-contract=off)
target_link_libraries(qcexact PUBLIC m)
if(QC_OPENBLAS_LIB AND QC_OPENBLAS_INCLUDE)
  target_compile_definitions(qcexact PRIVATE QC_HAVE_OPENBLAS=1)
  target_include_directories(qcexact SYSTEM PRIVATE ${QC_OPENBLAS_INCLUDE})
  target_link_libraries(qcexact PUBLIC ${QC_OPENBLAS_LIB})
endif()
if(QC_MPFR_LIB AND QC_MPFR_INCLUDE AND QC_GMP_LIB)
  target_compile_definitions(qcexact PRIVATE QC_HAVE_MPFR=1)
  target_include_directories(qcexact SYSTEM PRIVATE ${QC_MPFR_INCLUDE})
  target_link_libraries(qcexact PUBLIC ${QC_MPFR_LIB} ${QC_GMP_LIB})
endif()
