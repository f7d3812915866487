#!/usr/bin/env bash
# A real cluster run (issue 20): starts a single-node Slurm cluster from Debian's packages
# (slurmctld, slurmd, slurm-client, munge) in a private folder on this machine, submits the
# full-tier formats suite and one MoE case as a job array of 4 shards (`qcheck run --shard auto`,
# which reads SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT), waits, merges the shards' reports
# (`qcheck report merge`), and checks that the merged report gives every item the verdict, seed
# and figures of an unsharded run of the same selection. Stops the daemons whatever happens.
#
#   ci/slurm-cluster.sh [BUILD_DIR]      (default build; QCHECK=path overrides; CTest label `cluster`:
#                                          cd build && ctest -L cluster, about 3 minutes on 2 cores)
#   QC_CLUSTER_CASES=...  QC_CLUSTER_SHARDS=4   override the selection and the array size
# Exit 0 pass, 1 fail, 77 SKIPPED when the Slurm or munge binaries are missing (ci/deps.sh
# installs them with QC_WITH_SLURM=1). Needs no root: everything runs as the calling user, on
# ports 16817/16818 of this host, with its state under a temporary folder.
#
# On a real multi-node cluster with GPUs the same job is one task per GPU: submit
#   sbatch --array=1-N --gres=gpu:1 --wrap 'qcheck run --backend cuda --shard auto --report out/$SLURM_ARRAY_TASK_ID'
# Slurm sets CUDA_VISIBLE_DEVICES for the task's GPU, which the cuda backend's --device 0 then is;
# the reports land on a shared file system and `qcheck report merge out/* --out merged` runs once
# all tasks ended (sbatch --dependency=afterok:JOBID). docs/cluster.md says the rest.
set -uo pipefail
cd "$(dirname "$0")/.."
qcheck=${QCHECK:-$PWD/${1:-build}/harness/qcheck}
cases=${QC_CLUSTER_CASES:-cast_e8m0,cast_edges,cast_fp4_fp6,cast_fp8,cast_half,cast_half_torch,decode,decode_e2m1,decode_e8m0,decode_fp6,fp8_block_moe}
shards=${QC_CLUSTER_SHARDS:-4}
for t in slurmctld slurmd sbatch squeue sinfo munged; do
  command -v "$t" > /dev/null || { echo "SKIPPED: $t not found (QC_WITH_SLURM=1 ci/deps.sh installs slurmctld slurmd slurm-client munge)"; exit 77; }
done
[ -x "$qcheck" ] || { echo "ci/slurm-cluster.sh: no $qcheck (build first)" >&2; exit 1; }

work=$(mktemp -d /tmp/qcheck-slurm.XXXXXX)
host=$(hostname -s)
user=$(id -un)
pids=()
stop() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
  sleep 1
  for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null; done
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap stop EXIT
fail() { echo "ci/slurm-cluster.sh: $*" >&2; for f in "$work"/log/*.log; do echo "== $f"; tail -n 20 "$f"; done >&2; exit 1; }
mkdir -p "$work"/{munge,state,spool,log,out}
chmod 700 "$work/munge"

# munge: a fresh key, our own socket (the cluster's authentication; nothing leaves this host)
head -c 1024 /dev/urandom > "$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"
munged --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.socket" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/log/munged.log" --seed-file="$work/munge/seed" ||
  fail "munged did not start"
pids+=("$(cat "$work/munge/munged.pid")")

cat > "$work/slurm.conf" << EOF
ClusterName=qcheck
SlurmctldHost=$host
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=qc Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
for _ in $(seq 50); do [ -s "$work/slurmctld.pid" ] && break; sleep 0.2; done
pids+=("$(cat "$work/slurmctld.pid")")
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 50); do [ -s "$work/slurmd.pid" ] && break; sleep 0.2; done
pids+=("$(cat "$work/slurmd.pid")")
for _ in $(seq 100); do sinfo -h -o %T 2> /dev/null | grep -qE '^idle' && break; sleep 0.3; done
sinfo -h -o "%P %D %T %C" | grep -q idle || fail "the node did not come up idle ($(sinfo -h 2>&1))"
echo "slurm: $(sinfo -h -o '%P: %D node %T, %C CPUs (alloc/idle/other/total)') on $host"

# the job array: one shard per task, each with its own report
t0=$(date +%s)
sbatch --parsable --wait --array=1-"$shards" --cpus-per-task=1 --output="$work/log/task-%a.log" \
  --chdir="$PWD" --export=ALL,QCHECK_CASES="$PWD/cases" \
  --wrap "$qcheck run --suite full --case $cases --shard auto --quiet --report $work/out/\$SLURM_ARRAY_TASK_ID" \
  > "$work/jobid" || fail "the job array failed (sbatch --wait exit $?)"
echo "slurm: job $(cat "$work/jobid"), $shards array tasks in $(( $(date +%s) - t0 )) s"
for i in $(seq "$shards"); do
  grep -q "^qcheck run: --shard auto: shard $i/$shards from Slurm job array (SLURM_ARRAY_TASK_ID=$i," "$work/log/task-$i.log" ||
    fail "task $i did not take its shard from Slurm's variables: $(head -n 3 "$work/log/task-$i.log")"
done

"$qcheck" report merge "$work"/out/* --out "$work/merged" > "$work/log/merge.log" 2>&1 || fail "report merge failed"
QCHECK_CASES=$PWD/cases "$qcheck" run --suite full --case "$cases" --quiet --jobs "$(nproc)" --report "$work/whole" \
  > "$work/log/whole.log" 2>&1
python3 - "$work/merged/summary.json" "$work/whole/summary.json" << 'EOF' || fail "the merged report differs from the unsharded run"
import json, sys
merged, whole = (json.load(open(p)) for p in sys.argv[1:3])
key = lambda r: (r["case_id"], r["backend"], r["verdict"], r["seed_text"], r["figures"], r["detail"])
m, w = [key(r) for r in merged["results"]], [key(r) for r in whole["results"]]
print("merged: %d items %s; unsharded: %d items %s" % (len(m), merged["counts"], len(w), whole["counts"]))
same = m == w and merged["counts"] == whole["counts"] and merged["coverage"] == whole["coverage"]
for a, b in zip(m, w):
    if a != b:
        print("first difference:\n  merged    %s\n  unsharded %s" % (a[:4], b[:4]))
        break
sys.exit(0 if same and len(m) > 0 else 1)
EOF
echo "PASS: $shards Slurm array tasks merged into the unsharded run's report ($work/merged)"
