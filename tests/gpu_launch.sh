#!/bin/sh
# Runs a gpu-labelled test on the GPU CTest gave it: under `ctest --resource-spec-file F` (with
# ci/gpu-resources.sh > F) each such test asks for one slot of a "gpus" resource (RESOURCE_GROUPS
# gpus:1, tests/CMakeLists.txt) and CTest sets CTEST_RESOURCE_GROUP_0_GPUS=id:N,slots:1; the test
# then sees that GPU alone, as device 0. Without a resource spec nothing changes.
case "${CTEST_RESOURCE_GROUP_0_GPUS:-}" in
  id:*) id=${CTEST_RESOURCE_GROUP_0_GPUS#id:}; CUDA_VISIBLE_DEVICES=${id%%,*}; export CUDA_VISIBLE_DEVICES ;;
esac
exec "$@"
