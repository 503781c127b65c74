# Sourced by the Slurm tests (test_slurm_sweep.sh, test_slurm_multinode.sh): a private Slurm started
# as root in a temporary directory, from a generated slurm.conf, with every daemon stopped on exit
# (also on failure). Debian's slurm-wlm and munge, installed by scripts/deps.sh.
#
# What Slurm needed in a container (no systemd, no cgroups, another munged maybe running):
#   - its own munged with its own key and socket (AuthInfo=socket=...), so nothing in /etc is touched;
#   - ProctrackType=proctrack/linuxproc, TaskPlugin=task/none, JobAcctGatherType=jobacct_gather/none:
#     the cgroup plugins need a writable cgroup tree the container does not give;
#   - every state, spool, pid and log file in the temporary directory (per node: %n), free ports
#     picked at start, an empty plugstack.conf (the package's one includes /etc/slurm/plugstack.conf.d);
#   - SlurmUser=root (the daemons run as the test's root), ReturnToService=2 (a node comes back up
#     on its own), MpiDefault=none, KillWait=5 (scancel's SIGKILL comes soon after SIGTERM);
#   - the daemons in the foreground (-D) as the script's own children, slurmctld with -c (no state).
# No accounting (no slurmdbd), so sacct has nothing: --status tells a lost task's runs from the
# files and squeue, as it does on a cluster without accounting.
#
# Without root or the programs a test says what is missing and exits 77 (CTest's skip), unless
# KVSCOPE_REQUIRE_SLURM=1 (CI, which runs as root after scripts/deps.sh): then that is a failure.
#
# Use: slurm_require PROGRAM...; slurm_start_munged; slurm_ports N (sets `ports`); write
# "$tmp/slurm.conf" from slurm_common_conf plus node and partition lines; slurm_start_ctld;
# slurm_start_slurmd NODE...; slurm_wait_idle NODE.... A test may define slurm_before_cleanup.

skip() {
  echo "SKIP: $*" >&2
  if [ "${KVSCOPE_REQUIRE_SLURM:-0}" = 1 ]; then
    echo "FAIL: KVSCOPE_REQUIRE_SLURM=1, and Slurm cannot be started here (install it with scripts/deps.sh, run as root)" >&2
    exit 1
  fi
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

slurm_require() {  # the programs the test needs besides Slurm's daemons and munged
  local missing=() p
  [ "$(id -u)" -eq 0 ] || missing+=("root (to start munged, slurmctld and slurmd)")
  for p in munged slurmctld slurmd sbatch squeue scancel sinfo python3 "$@"; do
    command -v "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] || skip "missing: ${missing[*]} (Debian: apt-get install slurm-wlm munge)"
}

tmp=$(mktemp -d)
chmod 755 "$tmp"
pids=()
declare -A slurmd_pid
slurm_cleanup() {
  # Jobs first, so no slurmstepd outlives its slurmd; then the daemons this script started, by pid.
  if [ -n "${SLURM_CONF:-}" ] && [ -n "${ctld_pid:-}" ] && kill -0 "$ctld_pid" 2>/dev/null; then
    scancel --quiet --user root 2>/dev/null
    for _ in $(seq 1 50); do
      [ -z "$(squeue -h 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  declare -F slurm_before_cleanup >/dev/null && slurm_before_cleanup
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [ -f "$tmp/munged.pid" ]; then
    local munge_pid
    munge_pid=$(cat "$tmp/munged.pid")
    kill "$munge_pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$munge_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  if [ "${keep:-0}" = 1 ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap slurm_cleanup EXIT
trap 'exit 1' INT TERM

show_logs() {
  local f
  for f in "$tmp"/munged.log "$tmp"/slurmctld.log "$tmp"/slurmd-*.log; do
    [ -f "$f" ] && { echo "--- $f (last lines)" >&2; grep -v -E 'pmix|MPI' "$f" | tail -n 25 >&2; }
  done
}
startup_failed() {
  show_logs
  if [ "${KVSCOPE_REQUIRE_SLURM:-0}" = 1 ]; then fail "$*"; fi
  skip "$* (set KVSCOPE_REQUIRE_SLURM=1 to make this a failure)"
}

slurm_start_munged() {  # a fresh key and socket of our own
  dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 status=none
  chmod 400 "$tmp/munge.key"
  mkdir -p "$tmp/munge"
  chmod 700 "$tmp/munge"
  munged --force --key-file="$tmp/munge.key" --socket="$tmp/munge/munge.socket" --pid-file="$tmp/munged.pid" \
    --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" ||
    startup_failed "munged did not start"
}

slurm_ports() {  # N free TCP ports on loopback, into the array `ports`
  read -r -a ports < <(python3 -c '
import socket, sys
s = [socket.socket() for _ in range(int(sys.argv[1]))]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])' "$1")
}

host=$(hostname -s)
slurm_common_conf() {  # CTLD_PORT, AUTH_EXTRA (e.g. ",cred_expire=10"): the lines every test's slurm.conf shares
  mkdir -p "$tmp/state" "$tmp/spool"
  : >"$tmp/plugstack.conf"
  cat <<EOF
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$1
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket$2
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd-%n.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd-%n.log
PlugStackConfig=$tmp/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
KillWait=5
MaxArraySize=1001
EOF
}

slurm_start_ctld() {
  export SLURM_CONF="$tmp/slurm.conf"
  slurmctld -D -c -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
  ctld_pid=$!
  pids+=("$ctld_pid")
}
slurm_start_slurmd() {  # node names
  local n
  for n in "$@"; do
    mkdir -p "$tmp/spool/$n"
    slurmd -D -N "$n" -f "$SLURM_CONF" >>"$tmp/slurmd-$n.out" 2>&1 &
    slurmd_pid[$n]=$!
    pids+=("$!")
  done
}
node_state() { sinfo -h -N -n "$1" -o %T 2>/dev/null | head -n1; }
slurm_wait_idle() {  # node names: until sinfo shows each idle
  local want states pid
  want=$(printf '%s=idle ' $(printf '%s\n' "$@" | sort))
  for _ in $(seq 1 150); do
    states=$(sinfo -h -N -o "%N=%T" 2>/dev/null | sort | tr '\n' ' ')
    [ "$states" = "$want" ] && return 0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || { cat "$tmp"/slurm*.out >&2; startup_failed "a Slurm daemon exited"; }; done
    sleep 0.2
  done
  startup_failed "the nodes never all became idle (sinfo: ${states:-no answer})"
}

wait_queue_empty() {  # job id, seconds
  for _ in $(seq 1 $(($2 * 5))); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  show_logs
  fail "job $1 still queued after $2 s: $(squeue -h -j "$1")"
}
job_of() { sed -n 's/.*submitted Slurm job \([0-9][0-9]*\).*/\1/p' <<<"$1"; }
