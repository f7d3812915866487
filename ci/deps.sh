#!/usr/bin/env bash
# Installs what qcheck needs on a Debian machine: the C libraries (apt, as the distribution ships
# them; the configure summary prints their versions) and the Python oracle packages (pip, at the
# exact versions of ci/constraints.txt). Idempotent: when everything is present it prints nothing.
# libclang-rt-14-dev holds libFuzzer (libclang_rt.fuzzer) for clang 14, which ci/fuzz.sh links.
# chromium-headless-shell loads the HTML report in tests/test_html.py; plotly (PyPI) is only the
# source of the plotly.min.js that the report inlines (CMake finds it; no Python at run time).
#   QC_WITH_HIP=1 ci/deps.sh   also installs Debian's hipcc so ci/build-hip.sh can compile for AMD.
#   QC_WITH_SLURM=1 ci/deps.sh also installs Slurm and munge for ci/slurm-cluster.sh (CTest label cluster).
set -euo pipefail

apt_pkgs=(cmake pkg-config libhdf5-dev libcjson-dev libmpfr-dev libgmp-dev libopenblas-dev lcov clang libclang-rt-14-dev
          chromium-headless-shell)
[ "${QC_WITH_HIP:-0}" = 1 ] && apt_pkgs+=(hipcc)
[ "${QC_WITH_SLURM:-0}" = 1 ] && apt_pkgs+=(slurmctld slurmd slurm-client munge) # ci/slurm-cluster.sh
py_pkgs=(ml_dtypes numpy h5py plotly)

missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "ci/deps.sh: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
constraints="$(cd "$(dirname "$0")" && pwd)/constraints.txt"
py_wrong=()
for p in "${py_pkgs[@]}"; do
  want=$(sed -n "s/^$p==//p" "$constraints")
  [ -n "$want" ] || { echo "ci/deps.sh: $p has no pin in $constraints" >&2; exit 1; }
  have=$("$PY" -c "import importlib.metadata as m; print(m.version('$p'))" 2>/dev/null || true)
  [ "$have" = "$want" ] || py_wrong+=("$p==$want")
done
if [ ${#py_wrong[@]} -gt 0 ]; then
  echo "ci/deps.sh: pip installing ${py_wrong[*]}"
  PIP_ROOT_USER_ACTION=ignore "$PY" -m pip install -q --disable-pip-version-check -c "$constraints" "${py_wrong[@]}"
fi
