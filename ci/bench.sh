#!/usr/bin/env bash
# Builds the benchmarks with the reference's flags and runs them on one core.
#   ci/bench.sh [bench_formats args...]     BUILD_DIR (build-bench), BUILD_TYPE (Release), BENCH_CPU (0),
#                                           BENCH_CPU_THREADS (2, for bench_cpu)
# Needs `add_subdirectory(bench)` in the top-level CMakeLists.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! grep -q '^[[:space:]]*add_subdirectory(bench)' CMakeLists.txt; then
  echo "ci/bench.sh: the top-level CMakeLists.txt does not add_subdirectory(bench)" >&2
  exit 2
fi
build=${BUILD_DIR:-build-bench}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" >/dev/null
cmake --build "$build" --target bench_formats -j"$(nproc)" >/dev/null

exe="$build/bench/bench_formats"
echo "ci/bench.sh: $(uname -m), $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //'), build type ${BUILD_TYPE:-Release}"
# bench_cpu (kernels/cpu/): the exhaustive AVX-512 fp32 -> e4m3fn check and each quantize kernel's
# share of the memory bandwidth measured in the same run, on BENCH_CPU_THREADS threads (default 2,
# not pinned). Not built where the compiler cannot emit AVX-512; says SKIPPED on a CPU without it.
if cmake --build "$build" --target bench_cpu -j"$(nproc)" >/dev/null 2>&1; then
  "$build/bench/bench_cpu" --threads "${BENCH_CPU_THREADS:-2}"
else
  echo "ci/bench.sh: bench_cpu not built (no AVX-512 compiler support: QC_HAVE_AVX512 off)"
fi
if command -v taskset >/dev/null 2>&1; then
  exec taskset -c "${BENCH_CPU:-0}" "$exe" "$@"
fi
exec "$exe" "$@"
