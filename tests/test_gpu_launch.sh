#!/bin/sh
# tests/gpu_launch.sh hands a test the GPU CTest chose for it (CTEST_RESOURCE_GROUP_0_GPUS), and
# leaves CUDA_VISIBLE_DEVICES alone without a resource spec; ci/gpu-resources.sh N lists N GPUs.
here=$(dirname "$0")
fail=0
got=$(CTEST_RESOURCE_GROUP_0_GPUS=id:3,slots:1 "$here/gpu_launch.sh" sh -c 'echo "$CUDA_VISIBLE_DEVICES"')
[ "$got" = 3 ] || { echo "FAIL: CTest's gpu 3 became CUDA_VISIBLE_DEVICES=$got"; fail=1; }
got=$(env -u CTEST_RESOURCE_GROUP_0_GPUS CUDA_VISIBLE_DEVICES=7 "$here/gpu_launch.sh" sh -c 'echo "$CUDA_VISIBLE_DEVICES"')
[ "$got" = 7 ] || { echo "FAIL: without a resource spec CUDA_VISIBLE_DEVICES=7 became $got"; fail=1; }
spec=$("$here/../ci/gpu-resources.sh" 2)
python3 -c "import json,sys; d=json.loads(sys.argv[1]); assert d['local'][0]['gpus']==[{'id':'0','slots':1},{'id':'1','slots':1}]" "$spec" ||
  { echo "FAIL: ci/gpu-resources.sh 2 printed $spec"; fail=1; }
[ $fail = 0 ] && echo "PASS: 3 checks"
exit $fail
