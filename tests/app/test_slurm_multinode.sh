#!/usr/bin/env bash
# `kvscope-cli sweep --executor slurm` on a three-node Slurm that loses a node mid-sweep (issue 32
# item 5). Like test_slurm_sweep.sh it starts munged, slurmctld and the slurmds as root from a
# generated slurm.conf in a temporary directory; here three slurmd daemons run on this one machine
# under the node names n1, n2 and n3 (Slurm's "multiple slurmd" setup: one NodeName line each, the
# same NodeHostname and NodeAddr, a port each, started as `slurmd -N nK`; Debian's slurm-wlm 22.05
# supports it). Each node has one CPU, so the 4 array tasks are spread over the nodes.
#
# The sweep loses the node that runs a task caught between its runs (some done, some not). Under
# Slurm's default (JobRequeue=1) slurmctld requeues the lost task and it runs again on another node,
# skipping the runs it had done (the script's ${SLURM_RESTART_COUNT:+--resume}), so the sweep
# finishes on its own; a --resume while the task waits to be requeued submits nothing (its runs are
# still queued). It ends with every run file once, no temporary left, a summary that counts each
# seed once per point, and summaries byte for byte the local executor's. (A cancelled task, whose
# runs --resume resubmits, is test_slurm_sweep.sh's case.)
#
# A node is "lost" by stopping (SIGSTOP) and then killing (SIGKILL) its slurmd, the slurmstepd of
# every job on it and every process of those jobs, so nothing on it answers or writes again: killing
# only slurmd would leave the task running (slurmstepd is not slurmd's child).
#
# What node loss needed here (besides what slurm_cluster.sh lists):
#   - SlurmdTimeout=10: slurmctld sets the node DOWN about 25-30 s after it stops answering (it was
#     25-30 s with SlurmdTimeout=5 or 10 alike; with the default 300 s it would take minutes);
#   - AuthInfo=...,cred_expire=10: a requeued job may start again only after cred_expire + 1 s
#     (default 120 s); SchedulerParameters=sched_interval=2: sched/builtin starts a job that just
#     became eligible at its next periodic pass (default every 60 s).
# Usage: test_slurm_multinode.sh KVSCOPE_CLI
set -uo pipefail
cli=$(realpath "${1:?usage: test_slurm_multinode.sh KVSCOPE_CLI}")
here=$(dirname "$(realpath "$0")")
# shellcheck source=slurm_cluster.sh
. "$here/slurm_cluster.sh"
slurm_require scontrol pgrep
nodes=(n1 n2 n3)
frozen=()
# A node stopped (SIGSTOP) but not yet killed when the script failed: its processes go too.
slurm_before_cleanup() { [ ${#frozen[@]} -gt 0 ] && kill -KILL "${frozen[@]}" 2>/dev/null; }
slurm_start_munged
slurm_ports 4
{
  echo "ClusterName=kvscopemulti"
  slurm_common_conf "${ports[0]}" ",cred_expire=10"
  echo "SchedulerParameters=sched_interval=2"
  echo "SlurmdTimeout=10"
  for i in 1 2 3; do
    echo "NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=${ports[$i]} CPUs=1 State=UNKNOWN"
  done
  echo "PartitionName=kvscope Nodes=n[1-3] Default=YES MaxTime=INFINITE State=UP"
} >"$tmp/slurm.conf"
slurm_start_ctld
slurm_start_slurmd "${nodes[@]}"
slurm_wait_idle "${nodes[@]}"
echo "slurm up: nodes ${nodes[*]} idle, one CPU each, on $host"


# The processes that make NODE up: its slurmd, the slurmstepd of each job on it, and every process of
# those jobs (found by SLURM_JOB_ID and this cluster's SLURM_CONF in their environment: the job's
# processes are not slurmd's descendants).
node_processes() {
  local id
  echo "${slurmd_pid[$1]}"
  for id in $(squeue -h -w "$1" -o %A 2>/dev/null); do
    pgrep -f "^slurmstepd: \[$id\."
    grep -lzx "SLURM_JOB_ID=$id" /proc/[0-9]*/environ 2>/dev/null |
      xargs -r grep -lzx "SLURM_CONF=$SLURM_CONF" 2>/dev/null | sed 's|^/proc/\([0-9]*\)/environ$|\1|'
  done
}

# 2 points x 8 seeds = 16 runs dealt to 4 array tasks of 4 runs each, one run at a time per task
# (about 0.6 s each): a task is between its first and its last run for about 2 s, time enough to
# catch it there even on a loaded machine (with 2 runs a task the window was one run, and was missed).
grid=(--scenario many-workers --grid K=0,200 --seeds 8 --duration 600)
runs_total=16
summary_counts_each_run_once() {  # sweep directory
  python3 - "$1/summary.json" "$runs_total" <<'EOF' || fail "$1/summary.json counts some run twice or misses one"
import json, sys
s = json.load(open(sys.argv[1]))
seeds, total = s["seeds"], 0
for p in s["points"]:
    got = [r["seed"] for r in p["runs"]]
    assert sorted(got) == sorted(seeds) and len(set(got)) == len(got), (p["label"], got)
    assert all(r["done"] for r in p["runs"]) and p["runs_done"] == len(seeds), p["label"]
    for key, m in p["metrics"].items():
        assert m["n"] == len(m["values"]) <= len(seeds), (p["label"], key, m["n"])
    total += p["runs_done"]
assert total == int(sys.argv[2]), total
EOF
}
run_files_once() {  # sweep directory: each run's .json and .kvrec, nothing half-written left
  local n_json n_rec partial
  n_json=$(ls "$1" | grep -c -- '-seed[0-9]*\.json$')
  n_rec=$(ls "$1" | grep -c -- '-seed[0-9]*\.kvrec$')
  partial=$(ls -A "$1" | grep '\.partial$')
  [ "$n_json" -eq $runs_total ] && [ "$n_rec" -eq $runs_total ] ||
    fail "$1: $n_json run summaries and $n_rec recordings, not $runs_total of each: $(ls "$1")"
  [ -z "$partial" ] || fail "$1: temporaries left behind: $partial"
}

# One sweep that loses a node. Sets victim (the node), victim_task (JOB_T), victim_done (the stems of
# its runs done before the loss), victim_inodes, job.
sweep_losing_a_node() {  # sweep directory
  local out=$1 sub early t stem st node done_n size seen
  sub=$("$cli" sweep "${grid[@]}" --out "$out" --executor slurm --tasks 4 --cpus-per-task 1 --time 10:00) ||
    fail "submitting failed: $sub"
  echo "$sub"
  job=$(job_of "$sub")
  [ -n "$job" ] || fail "no job id in: $sub"
  grep -q '^#SBATCH --array=0-3$' "$out/slurm/submit-1.sbatch" || fail "not a 4-task array: $(cat "$out/slurm/submit-1.sbatch")"
  # Which task runs which runs, from --status ("pending STEM  task JOB_T  ...").
  early=$("$cli" sweep --status "$out") || fail "--status failed: $early"
  declare -A task_stems=()
  while read -r _ stem word t _; do
    [ "$word" = task ] && task_stems[${t#*_}]+="$stem "
  done <<<"$(tail -n +2 <<<"$early")"
  [ ${#task_stems[@]} -eq 4 ] || fail "--status does not name 4 tasks: $early"

  # Catch a task with some but not all of its runs done (the run files say so, polled without
  # starting a process: a run takes well under a second); stop its node at once (so the count cannot
  # change under us), count again, and kill the node if the task is still mid-share.
  victim=""
  local deadline=$((SECONDS + 120)) polls=0
  while [ -z "$victim" ] && [ $SECONDS -lt $deadline ]; do
    for t in "${!task_stems[@]}"; do
      size=0 done_n=0
      for stem in ${task_stems[$t]}; do
        size=$((size + 1))
        [ -f "$out/$stem.json" ] && done_n=$((done_n + 1))
      done
      [ "$done_n" -ge 1 ] && [ "$done_n" -lt "$size" ] || continue
      st="" node=""
      read -r st node < <(squeue -h -j "${job}_$t" -o "%T %N" 2>/dev/null)
      [ "$st" = RUNNING ] || continue
      mapfile -t frozen < <(node_processes "$node")
      kill -STOP "${frozen[@]}" 2>/dev/null
      victim_done=()
      for stem in ${task_stems[$t]}; do [ -f "$out/$stem.json" ] && victim_done+=("$stem"); done
      if [ ${#victim_done[@]} -lt "$size" ]; then
        victim=$node victim_task=${job}_$t
        break
      fi
      kill -CONT "${frozen[@]}" 2>/dev/null  # it finished its share meanwhile: let it go, look again
      frozen=()
    done
    [ -n "$victim" ] && break
    polls=$((polls + 1))
    [ $((polls % 50)) -eq 0 ] && [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
    sleep 0.02
  done
  [ -n "$victim" ] || fail "no task was caught with part of its runs done (the runs took too little time?)"
  # Where the tasks ran so far, from slurmctld's "sched: Allocate JobId=J_T(ID) NodeList=N ...".
  seen=$(sed -n "s/.*Allocate JobId=${job}_[0-9]*([0-9]*) NodeList=\([^ ]*\) .*/\1/p" "$tmp/slurmctld.log" | sort -u | tr '\n' ' ')
  [ "$(wc -w <<<"$seen")" -ge 2 ] || fail "the tasks ran on one node only ($seen): no spread to lose a node from"
  victim_inodes=$(cd "$out" && stat -c %i "${victim_done[@]/%/.json}")
  disown "${slurmd_pid[$victim]}" 2>/dev/null  # no "Killed" notice from bash; cleanup still has its pid
  kill -KILL "${frozen[@]}" 2>/dev/null
  frozen=()
  lost_at=$(date +%s)
  echo "lost node $victim (processes killed) while task $victim_task had ${#victim_done[@]} of its runs done (${victim_done[*]}); tasks ran on: $seen"
}

# Until slurmctld has set the lost node DOWN; prints how long that took.
wait_node_down() {
  for _ in $(seq 1 600); do
    case "$(node_state "$victim")" in down*) echo "node $victim DOWN $(($(date +%s) - lost_at)) s after its loss"; return 0 ;; esac
    sleep 0.2
  done
  show_logs
  fail "node $victim is not DOWN 120 s after its loss: $(node_state "$victim")"
}

# Slurm requeues the lost task; the sweep finishes without --resume.
out1="$tmp/requeued"
sweep_losing_a_node "$out1"
job1=$job
wait_node_down
grep -q "Requeuing JobId=$victim_task(" "$tmp/slurmctld.log" ||
  { show_logs; fail "slurmctld did not requeue $victim_task after losing $victim"; }
# While it waits to run again (BeginTime: cred_expire), its runs are queued: --resume submits nothing.
st=$(squeue -h -r -j "$victim_task" -o "%T %r" 2>/dev/null)
mid=$("$cli" sweep --status "$out1") || fail "--status failed: $mid"
echo "$victim_task after the requeue: ${st:-gone}"
grep -E "task $victim_task" <<<"$mid"
if [ -n "$st" ]; then
  grep -E "task $victim_task" <<<"$mid" | grep -qE '^(missing|failed) ' &&
    fail "--status calls the runs of the requeued task $victim_task missing or failed: $mid"
  res=$("$cli" sweep "${grid[@]}" --out "$out1" --executor slurm --resume --cpus-per-task 1) || fail "--resume failed: $res"
  echo "$res"
  grep -q "submitted Slurm job" <<<"$res" && fail "--resume submitted again runs Slurm had requeued: $res"
fi
wait_queue_empty "$job1" 240
final=$("$cli" sweep --status "$out1") || fail "--status failed: $final"
echo "$final"
grep -q "$runs_total runs: $runs_total done" <<<"$final" || { cat "$out1"/slurm/*.log >&2; fail "the requeued sweep did not finish"; }
grep -q "summary: written" <<<"$final" || fail "the last task did not write the summary"
[ "$(awk '{print $2}' "$out1/slurm/jobs" | sort -u | wc -l)" -eq 1 ] || fail "more than one submission: $(cat "$out1/slurm/jobs")"
again=$("$cli" sweep "${grid[@]}" --out "$out1" --executor slurm --resume) || fail "--resume failed: $again"
grep -q "every one of $runs_total runs is done" <<<"$again" || fail "--resume should submit nothing: $again"
now_inodes=$(cd "$out1" && stat -c %i "${victim_done[@]/%/.json}")
redone1=no
[ "$now_inodes" = "$victim_inodes" ] || redone1=yes
[ $redone1 = no ] ||
  fail "the requeued $victim_task ran again its runs done before the loss (${victim_done[*]}): a requeued task must skip them"
lost1=$victim

# Every run once, each counted once, and the local executor's summaries.
"$cli" sweep "${grid[@]}" --out "$tmp/local" --quiet >/dev/null || fail "the local sweep failed"
for out in "$out1"; do
  run_files_once "$out"
  summary_counts_each_run_once "$out"
  for f in summary.md summary.csv summary.json; do
    cmp -s "$out/$f" "$tmp/local/$f" || { diff "$out/$f" "$tmp/local/$f" | head -20 >&2; fail "$out/$f differs from the local executor's"; }
  done
done
echo "PASS: lost $lost1 mid-sweep (job $job1: requeued, skipped its done runs, finished on its own); every run once, summaries equal the local ones"
