#!/bin/sh
# The recorded real-library outputs (golden/real/, golden/real/README.md) against the reference and
# every CPU backend: `qcheck golden verify` re-runs the recipe/profile/params each file names on its
# inputs and compares every byte; `--backend cpu` does the same with each backend of group cpu,
# which reports SKIPPED with the reason where it cannot run here (qc_backend_unavailable, what
# `qcheck run` asks) or where it declines a file. No files is a failure, not a pass; so is a
# cpu-avx512 that can run here and passes fewer files than AVX512_FLOOR.
# usage: conformance.sh QCHECK REAL_DIR
set -eu
qcheck=$1 dir=$2
# cpu-avx512 on the 186 files of 2026-12-05: 98 PASS, 88 SKIPPED (declined by kernels/cpu, never
# run through the reference), 0 FAIL; golden/real/README.md lists the reasons (the GPU's canonical
# NaN bits, torchao-rceil's e8m0 rule, partial token groups, column-major scale layouts, the
# sglang-jit knobs, op dequant). Raise the floor when a kernel learns one of them; a lower count is a backend
# that stopped checking.
AVX512_FLOOR=98
files=$(find "$dir" -name '*.h5' | sort)
[ -n "$files" ] || { echo "no recorded files under $dir"; exit 1; }
# shellcheck disable=SC2086
"$qcheck" golden verify $files > conformance.out 2>&1 && rc=0 || rc=$?
grep -v '^PASS' conformance.out || true
echo "$(grep -c '^PASS' conformance.out) of $(echo "$files" | wc -l) recorded files reproduced bit for bit (exit $rc)"

# shellcheck disable=SC2086
"$qcheck" golden verify --backend cpu $files > conformance-cpu.out 2>&1 && brc=0 || brc=$?
grep -v '^PASS\|^SKIPPED' conformance-cpu.out || true # FAIL/ERROR with their mismatches, the summaries
echo "skipped, by backend and reason:"
sed -n 's/^SKIPPED [^ ]* \([^:]*\): /\1: /p' conformance-cpu.out | sort | uniq -c
[ "$brc" -eq 0 ] || { echo "golden verify --backend cpu: exit $brc"; rc=1; }
"$qcheck" list backends > backends.out 2>&1 || rc=1
if grep '^cpu-avx512 ' backends.out | grep -q '\[unavailable'; then
  echo "cpu-avx512 cannot run here: $(grep '^cpu-avx512 ' backends.out | sed 's/.*\[unavailable: //')"
else
  passed=$(grep -c '^PASS .* cpu-avx512  ' conformance-cpu.out || true)
  [ "$passed" -ge "$AVX512_FLOOR" ] ||
    { echo "cpu-avx512 passed $passed recorded files, fewer than the floor $AVX512_FLOOR"; rc=1; }
fi

# qcheck list profiles says what backs each profile: the recorded ones and the others
"$qcheck" list profiles > profiles.out 2>&1 || rc=1
awk '/^torchao-floor \(recipe mxfp8\)/ {p = 1} p && /backed by:/ {print; exit}' profiles.out |
  grep -q "files recorded from torchao-0.18.0@" || { echo "list profiles: torchao-floor (mxfp8) not backed by its recordings"; rc=1; }
awk '/^ptx \(cast\)/ {p = 1} p && /backed by:/ {print; exit}' profiles.out |
  grep -q "from source reading only" || { echo "list profiles: ptx (cast) should say 'from source reading only'"; rc=1; }
exit $rc
