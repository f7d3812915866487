/* emu_mutants.c: the planted cuda backends (cuda_mutants.c) for the CPU emulation's plugin, named
 * cuda-emu-mutant-* (no ':', so that `--backend plugin:PATH.so:NAME` can name one). */
#define QCK_MUTANT_PREFIX "cuda-emu-mutant-"
#define QCK_MUTANT_DOC_PREFIX "[CPU emulation of kernels/cuda] "
#include "cuda_mutants.c"
