#!/usr/bin/env bash
# The libFuzzer targets (tests/fuzz.cmake; docs/notes/fuzz.md): builds build-fuzz with clang and
# -fsanitize=fuzzer,address,undefined, then runs each target from a copy of its seed corpus
# (tests/fuzz/corpus/TARGET) for FUZZ_SECONDS seconds (default 300), FUZZ_JOBS targets at a time
# (default: the number of cores). The cuda backend is left out (the targets exercise no kernel, and
# clang links them). A crash, a leak, a timeout or any sanitizer report fails the run, and its
# reproducer is kept in build-fuzz/artifacts/TARGET/ (add it to the corpus with the fix).
#   FUZZ_SECONDS=25 ci/fuzz.sh                      the smoke run of .ci/run
#   FUZZ_TARGETS="golden outputs" FUZZ_RUNS=1000000 ci/fuzz.sh   a number of executions instead
#   FUZZ_WORKERS=8 ...      8 fuzzing processes per target sharing its corpus (libFuzzer -jobs);
#                           FUZZ_RUNS is then the executions of each; the line sums them
#   FUZZ_PREBUILT=1 ...     no build: the targets already in build-fuzz/tests (a host without clang,
#                           ci/fuzz-bundle.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${FUZZ_SECONDS:-300}
TARGETS=${FUZZ_TARGETS:-case expr cli golden outputs}
JOBS=${FUZZ_JOBS:-$(nproc)}
B=$PWD/build-fuzz
SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
WORKERS=${FUZZ_WORKERS:-1}
mkdir -p "$B"
[ -n "${FUZZ_PREBUILT:-}" ] || {
cmake -S . -B "$B" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQC_FUZZ=ON -DQC_WITH_CUDA=OFF \
  -DCMAKE_C_FLAGS="$SAN" > "$B.configure.log" 2>&1 || { cat "$B.configure.log"; exit 1; }
cmake --build "$B" -j "$(nproc)" --target $(printf 'fuzz_%s ' $TARGETS) > "$B/fuzz-build.log" 2>&1 ||
  { tail -40 "$B/fuzz-build.log"; exit 1; }
}

# The HDF5 targets fork a reader per file (golden/golden.c): the children's reports must reach the
# log, so their stderr stays open (only fuzz_cli, whose commands print an error per input, closes
# it; libFuzzer keeps its own reports). libhdf5's own overreads are suppressed (tests/fuzz/asan.supp
# says why), a small quarantine keeps the parent small so that each fork copies fewer page tables,
# and LD_BIND_NOW spares every child the lazy binding of libhdf5's symbols.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LD_BIND_NOW=1
fuzz_one() {
  local t=$1 limit asan=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 quiet=
  rm -rf "$B/corpus/$t" "$B/artifacts/$t" && mkdir -p "$B/corpus/$t" "$B/artifacts/$t"
  cp -r tests/fuzz/corpus/"$t"/. "$B/corpus/$t/"
  if [ -n "${FUZZ_RUNS:-}" ]; then limit="-runs=$FUZZ_RUNS"; else limit="-max_total_time=$SECS"; fi
  case $t in
    golden|outputs) asan="$asan:suppressions=$PWD/tests/fuzz/asan.supp:quarantine_size_mb=4:malloc_context_size=8"
      # one allocation over 2 GiB returns NULL (libhdf5 then reports an error) instead of reaching
      # the reader's memory cap (golden.c), where ASan can only die
      asan="$asan:max_allocation_size_mb=2048" ;;
    cli) quiet=-close_fd_mask=3 ;;
  esac
  local start=$SECONDS rc=0 log="$B/fuzz-$t.log" par= wd=.
  # With workers, libFuzzer writes each one's log as fuzz-N.log in the working folder, and copies
  # it into its own log when the worker ends: that one log holds every report and count.
  [ "$WORKERS" -gt 1 ] && { par="-jobs=$WORKERS -workers=$WORKERS" wd=$B/logs-$t; rm -rf "$wd"; mkdir -p "$wd"; }
  (cd "$wd" && ASAN_OPTIONS=$asan "$B/tests/fuzz_$t" "$limit" $par -timeout=60 \
    -rss_limit_mb=4096 -max_len=65536 $quiet -print_final_stats=1 -artifact_prefix="$B/artifacts/$t/" \
    "$B/corpus/$t") > "$log" 2>&1 || rc=$?
  local execs reports
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | awk '{n += $1} END {print n + 0}')
  # A forked HDF5 reader that ASan kills for want of the memory golden.c allows it ("Failed to
  # mmap" after "failed to allocate ...", ENOMEM) is a refused file, which the target
  # reports as an error: not a finding. Every other report counts.
  reports=$(grep -E "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: " "$log" |
    grep -cvE "AddressSanitizer failed to allocate 0x[0-9a-f]+ \([0-9]+\) bytes (of InternalMmapVector \(error code: 12\)|at address [0-9a-f]+ \(errno: 12\))" || true)
  printf '%-8s %10s executions (%d workers) in %4d s, corpus %5d, exit %d, sanitizer/crash reports %d\n' \
    "$t" "$execs" "$WORKERS" $((SECONDS - start)) "$(ls "$B/corpus/$t" | wc -l)" "$rc" "$reports"
  # libFuzzer also keeps a slow-unit-* of any input slower than 10 s: a loaded machine makes
  # those, so they are named but fail nothing; a hang is a timeout-* (-timeout=60), which does.
  local slow
  slow=$(ls "$B/artifacts/$t" | grep -c '^slow-unit-' || true)
  [ "$slow" = 0 ] || echo "$t: $slow input(s) slower than 10 s kept in $B/artifacts/$t (not a failure)"
  [ "$rc" = 0 ] && [ "$reports" = 0 ] && [ -z "$(ls "$B/artifacts/$t" | grep -v '^slow-unit-')" ] ||
    { tail -n 30 "$log"; return 1; }
}
export -f fuzz_one
export B SECS WORKERS
printf '%s\n' $TARGETS | xargs -P "$JOBS" -I{} bash -c 'fuzz_one {}'
