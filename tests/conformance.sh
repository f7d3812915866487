#!/bin/sh
# The recorded real-library outputs (golden/real/, golden/real/README.md) against the reference:
# `qcheck golden verify` re-runs the recipe/profile/params each file names on its inputs and
# compares every byte. No files is a failure, not a pass.
# usage: conformance.sh QCHECK REAL_DIR
set -eu
qcheck=$1 dir=$2
files=$(find "$dir" -name '*.h5' | sort)
[ -n "$files" ] || { echo "no recorded files under $dir"; exit 1; }
# shellcheck disable=SC2086
"$qcheck" golden verify $files > conformance.out 2>&1 && rc=0 || rc=$?
grep -v '^PASS' conformance.out || true
echo "$(grep -c '^PASS' conformance.out) of $(echo "$files" | wc -l) recorded files reproduced bit for bit (exit $rc)"
# qcheck list profiles says what backs each profile: the recorded ones and the others
"$qcheck" list profiles > profiles.out 2>&1 || rc=1
awk '/^torchao-floor \(recipe mxfp8\)/ {p = 1} p && /backed by:/ {print; exit}' profiles.out |
  grep -q "files recorded from torchao-0.18.0@" || { echo "list profiles: torchao-floor (mxfp8) not backed by its recordings"; rc=1; }
awk '/^ptx \(cast\)/ {p = 1} p && /backed by:/ {print; exit}' profiles.out |
  grep -q "from source reading only" || { echo "list profiles: ptx (cast) should say 'from source reading only'"; rc=1; }
exit $rc
