#!/usr/bin/env bash
# Prints a CTest resource specification with one "gpus" entry per GPU of this host (nvidia-smi -L),
# or N of them (ci/gpu-resources.sh N), so that ctest schedules the gpu label across the GPUs:
#   ci/gpu-resources.sh > gpus.json && cd build && ctest -L gpu -j "$(nvidia-smi -L | wc -l)" --resource-spec-file ../gpus.json
# Each gpu test takes one GPU (tests/gpu_launch.sh sets CUDA_VISIBLE_DEVICES from CTest's choice).
set -euo pipefail
n=${1:-$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ' || true)}
[[ "$n" =~ ^[0-9]+$ ]] || { echo "ci/gpu-resources.sh: '$n' is not a GPU count" >&2; exit 2; }
printf '{"version": {"major": 1, "minor": 0}, "local": [{"gpus": ['
for ((i = 0; i < n; i++)); do printf '%s{"id": "%d", "slots": 1}' "$([ "$i" -gt 0 ] && echo ', ')" "$i"; done
printf ']}]}\n'
