#!/usr/bin/env bash
# `kvscope-cli sweep --executor slurm` end to end against a real single-node Slurm (Debian's
# slurm-wlm and munge, installed by scripts/deps.sh): this script starts munged, slurmctld and slurmd
# as root from a generated slurm.conf in a temporary directory, submits a small sweep as a job array,
# cancels one running task with scancel, checks that --status reports its unfinished runs, that
# --resume resubmits exactly those, and that the summary the last task writes is byte for byte the
# local executor's for the same grid. Every daemon it started is stopped on exit, also on failure.
#
# Without root or the Slurm/munge programs it says what is missing and exits 77 (CTest's skip), unless
# KVSCOPE_REQUIRE_SLURM=1 (CI, which runs as root after scripts/deps.sh): then that is a failure.
#
# The daemons and what they needed here: slurm_cluster.sh.
# Usage: test_slurm_sweep.sh KVSCOPE_CLI
set -uo pipefail
cli=$(realpath "${1:?usage: test_slurm_sweep.sh KVSCOPE_CLI}")
here=$(dirname "$(realpath "$0")")
# shellcheck source=slurm_cluster.sh
. "$here/slurm_cluster.sh"
slurm_require
slurm_start_munged
slurm_ports 2
{
  echo "ClusterName=kvscopetest"
  slurm_common_conf "${ports[0]}" ""
  echo "NodeName=$host NodeHostname=$host NodeAddr=127.0.0.1 Port=${ports[1]} CPUs=$(nproc) State=UNKNOWN"
  echo "PartitionName=kvscope Nodes=$host Default=YES MaxTime=INFINITE State=UP"
} >"$tmp/slurm.conf"
slurm_start_ctld
slurm_start_slurmd "$host"
slurm_wait_idle "$host"
echo "slurm up: node $host idle, $(nproc) CPUs"

# 2 points x 4 seeds = 8 runs dealt to 2 array tasks of 4 runs each, one run at a time per task.
# Runs of 64 D (about 0.6 s each here): with e3-load-floor's 0.15-s runs a loaded machine let
# task 0 finish all four between the poll that saw it running and the scancel, leaving nothing
# to resume.
grid=(--scenario many-workers --grid K=0,200 --seeds 4 --duration 600)
out="$tmp/sweep"
sub=$("$cli" sweep "${grid[@]}" --out "$out" --executor slurm --tasks 2 --cpus-per-task 1 --time 10:00) ||
  fail "submitting failed: $sub"
echo "$sub"
job=$(job_of "$sub")
[ -n "$job" ] || fail "no job id in: $sub"
[ -f "$out/sweep.json" ] && [ -f "$out/slurm/submit-1.sbatch" ] && grep -q "^1 $job$" "$out/slurm/jobs" ||
  fail "the sweep directory lacks sweep.json, the script or the job id"
grep -q '^#SBATCH --array=0-1$' "$out/slurm/submit-1.sbatch" || fail "not a 2-task array: $(cat "$out/slurm/submit-1.sbatch")"
# While the array is queued or running, --status has squeue's word for the runs not done.
early=$("$cli" sweep --status "$out") || fail "--status failed: $early"
echo "$early"
grep -qE '^(running|pending) ' <<<"$early" || fail "--status shows no run running or pending just after the submission: $early"
grep -q "Slurm jobs: $job (submission 1)" <<<"$early" || fail "--status does not name job $job: $early"

# Cancel task 0 while it runs, once the first run of the sweep has landed.
share0=$(head -n1 "$out/slurm/submit-1.runs")
cancelled=0
for _ in $(seq 1 300); do
  st=$(squeue -h -r -j "${job}_0" -o %T 2>/dev/null)
  [ -z "$st" ] && break
  # Once task 0 runs, --status says its unfinished runs are running (or waiting in it).
  if [ "$st" = RUNNING ] && [ -z "${mid:-}" ]; then
    mid=$("$cli" sweep --status "$out") || fail "--status failed: $mid"
    grep -qE "^(running|pending) .* task ${job}_0" <<<"$mid" ||
      { [ -z "$(squeue -h -j "${job}_0")" ] || fail "--status shows no run of the running task ${job}_0: $mid"; }
    grep -E "^running " <<<"$mid" | head -n 2
  fi
  # Once one of the sweep's runs is in place while the task still runs.
  if [ "$st" = RUNNING ] && ls "$out" | grep -q 'seed[0-9]*\.json$'; then
    scancel "${job}_0" && cancelled=1
    break
  fi
  sleep 0.1
done
[ $cancelled = 1 ] || fail "task ${job}_0 ended before it could be cancelled (its runs took too little time)"
echo "scancel ${job}_0 (its runs: $share0)"
wait_queue_empty "$job" 120

status=$("$cli" sweep --status "$out") || fail "--status failed: $status"
echo "$status"
done_count=$(sed -n '1s/.* \([0-9]*\) done,.*/\1/p' <<<"$status")
unfinished=$(grep -cE '^(missing|failed) ' <<<"$status")
[ "$unfinished" -ge 1 ] || fail "--status shows no missing or failed run after the scancel"
[ $((done_count + unfinished)) -eq 8 ] || fail "--status: $done_count done + $unfinished missing/failed != 8 runs"
grep -q "summary: not yet" <<<"$status" || fail "--status should say the summary is not written yet"
[ ! -f "$out/summary.json" ] || fail "a summary was written with runs missing"
# Only runs of the cancelled task can be unfinished.
while read -r state stem _; do
  case "$state" in missing | failed) grep -q "task ${job}_0" <<<"$(grep " $stem " <<<"$status")" ||
    fail "$stem is $state but was not in the cancelled task" ;;
  esac
done <<<"$status"

res=$("$cli" sweep "${grid[@]}" --out "$out" --executor slurm --resume --cpus-per-task 1) || fail "--resume failed: $res"
echo "$res"
grep -q ": $unfinished runs in [0-9]* array tasks" <<<"$res" || fail "--resume should resubmit exactly the $unfinished unfinished runs"
grep -q -- '--resume$' "$out/slurm/submit-2.sbatch" || fail "the resumed submission's tasks should skip done runs"
job2=$(job_of "$res")
[ -n "$job2" ] && grep -q "^2 $job2$" "$out/slurm/jobs" || fail "the second job id is not recorded"
wait_queue_empty "$job2" 120

final=$("$cli" sweep --status "$out") || fail "--status failed: $final"
echo "$final"
grep -q "8 runs: 8 done" <<<"$final" || { cat "$out"/slurm/*.log >&2; fail "not every run is done after --resume"; }
grep -q "summary: written" <<<"$final" || fail "the last task did not write the summary"
again=$("$cli" sweep "${grid[@]}" --out "$out" --executor slurm --resume) || fail "a second --resume failed"
grep -q "every one of 8 runs is done" <<<"$again" || fail "a second --resume should submit nothing: $again"

# The local executor on the same grid gives the same summaries.
"$cli" sweep "${grid[@]}" --out "$tmp/local" --quiet >/dev/null || fail "the local sweep failed"
for f in summary.md summary.csv summary.json; do
  cmp -s "$out/$f" "$tmp/local/$f" || { diff "$out/$f" "$tmp/local/$f" | head -20 >&2; fail "$f differs from the local executor's"; }
done
echo "PASS: submitted, cancelled ${job}_0, --status showed $unfinished unfinished, --resume resubmitted them as job $job2, summaries equal the local ones"
