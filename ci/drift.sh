#!/usr/bin/env bash
# The drift check: installs the NEWEST releases of the oracle libraries (ml_dtypes, numpy; not the
# pins of ci/constraints.txt) into a throwaway venv and runs the ml_dtypes oracle test against
# every ml_dtypes profile. It prints which profiles still match the new release and which do not,
# with the first differing inputs, and fails when no profile names the new release or that
# profile no longer matches: that is how qcheck notices a library changing its numerics before
# its users do. Needs PyPI; not part of .ci/run (CTest label `drift`: LABELS=drift ci/test.sh).
#   ci/drift.sh                     BUILD_DIR (default build) must hold a built qcheck
#   DRIFT_PACKAGES="ml_dtypes==0.8.0 numpy" ci/drift.sh    try given releases instead of the newest
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
qcheck=$BUILD_DIR/harness/qcheck
[ -x "$qcheck" ] || { echo "ci/drift.sh: $qcheck not built (run ci/build.sh)" >&2; exit 1; }
venv=$(mktemp -d "${TMPDIR:-/tmp}/qc_drift.XXXXXX")
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
# shellcheck disable=SC2086
if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check --upgrade ${DRIFT_PACKAGES:-ml_dtypes numpy}; then
  echo "SKIP: could not install the newest oracle releases from PyPI (no network?)"
  exit 77
fi
"$venv/bin/python" -c "import importlib.metadata as m; print('drift: newest releases:', ', '.join(p + ' ' + m.version(p) for p in ('ml_dtypes', 'numpy')))"
"$venv/bin/python" tests/test_mldtypes.py --qcheck "$qcheck" --every-profile
