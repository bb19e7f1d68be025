#!/bin/bash
# make check-slurm: the Slurm examples on a real scheduler.  Starts a
# one-node Slurm cluster on this machine (munged, slurmctld and slurmd with a
# configuration in a temporary directory), submits the cross-validation
# array with its collecting job, and a job array of HMC chains whose jobs
# have a time limit of seconds, so that each chain runs as several chained
# jobs; waits for them; and checks that
#   - every job completed (the scheduler's job completion log),
#   - the collected CV score is the score of the same folds fitted serially,
#   - each chained HMC chain is byte for byte one long serial run, and was
#     written by more than one job,
#   - the summary across chains is gpc-hmc --summary of the serial chains;
# then runs the MPI jobs of check-slurm-mpi.sh (a sparse fit on 4 ranks
# stopped by its job's time limit and continued by the same job submitted
# again, against the plain tool; a job with an error).
# Stops the daemons and removes the directory on any exit.  Needs root (the
# daemons run as root), the tools on PATH or in ../../bin, and the MPI build
# in ../../bin/mpi (make MPI=1 mpi-all).
#
# Usage: check-slurm.sh
# Environment: CHECK_TIMEOUT, seconds to wait for the jobs (default 600).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export PATH="$repo/bin:$PATH" LC_ALL=C
[ "$(id -u)" = 0 ] || { echo "check-slurm: needs root (it starts munged, slurmctld and slurmd)" >&2; exit 2; }
for t in gpc-fit gpc-predict gpc-scale gpc-score gpc-folds gpc-hmc; do
    command -v "$t" >/dev/null || { echo "check-slurm: $t is not built (make all)" >&2; exit 2; }
done
[ -x "$repo/bin/mpi/gpc-fit" ] || { echo "check-slurm: bin/mpi/gpc-fit is not built (make MPI=1 mpi-all)" >&2; exit 2; }
start=$(date +%s)
T=$(mktemp -d /tmp/gpc-slurm.XXXXXX)
chmod 755 "$T"
pids=()
cleanup() {
    local status=$? p
    if [ "$status" -ne 0 ] && [ -d "$T" ]; then
        echo "check-slurm: FAILED (status $status); the daemons' logs:" >&2
        tail -n 20 "$T"/log/*.log >&2 2>/dev/null || true
    fi
    # the daemons in the reverse order of their start
    for (( i = ${#pids[@]} - 1; i >= 0; i-- )); do
        p=${pids[i]}
        kill "$p" 2>/dev/null && { for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; }
        kill -9 "$p" 2>/dev/null || true
    done
    rm -rf "$T"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() { echo "check-slurm: FAIL: $*" >&2; exit 1; }
# The rows chain I in DIR had after each of its jobs, in the jobs' order.
rows_after_jobs() {
    (cd "$1" && ls chain-"$2"-*.log | sort -t- -k3 -n | xargs grep -h 'has [0-9]* of') |
        sed 's/.*has \([0-9]*\) of.*/\1/' | paste -sd' '
}
say() { printf 'check-slurm: %s (%d s)\n' "$*" $(( $(date +%s) - start )); }

# ---- a one-node cluster ---------------------------------------------------------
mkdir -p "$T/state" "$T/spool" "$T/log" "$T/munge"
chmod 700 "$T/munge"
mungekey -c -k "$T/munge/munge.key"
munged -F --force --key-file="$T/munge/munge.key" --socket="$T/munge/munge.socket" \
       --pid-file="$T/munge/munged.pid" --log-file="$T/log/munged.log" \
       --seed-file="$T/munge/munged.seed" > "$T/log/munged.out" 2>&1 &
pids+=($!)

# This machine's CPUs and memory as slurmd sees them, under the name localhost.
node=$(slurmd -C | sed -n 's/^NodeName=[^ ]* /NodeName=localhost NodeAddr=127.0.0.1 /p')
[ -n "$node" ] || fail "slurmd -C did not describe this machine"
cat > "$T/slurm.conf" <<CONF
ClusterName=gpccheck
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/munge.socket
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$T/log/jobcomp.txt
MinJobAge=600
$node State=UNKNOWN
PartitionName=check Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$T/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" > "$T/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N localhost -f "$SLURM_CONF" > "$T/log/slurmd.out" 2>&1 &
pids+=($!)

state=
for _ in $(seq 60); do
    state=$(sinfo -h -n localhost -o %t 2>/dev/null || true)
    [ "$state" = idle ] && break
    sleep 1
done
[ "$state" = idle ] || fail "the node is not idle after 60 s (state '$state')"
say "node localhost idle: $(sinfo -h -o '%c CPUs, %m MB')"

# ---- the data: Pima, standardised with the training set's statistics -----------
D=$T/data
mkdir -p "$D"
gpc-scale -q -s "$D/st.txt" -o "$D/X.txt" "$repo/data/pima/X-train.txt"
cp "$repo/data/pima/y-train.txt" "$D/y.txt"

# ---- submit: 5 CV folds, 2 HMC chains of 100 rows in jobs of seconds, and a
# chain whose first job is stopped by SIGTERM, as at the end of a time limit --
K=5 C=2 N=100
read -r cv_folds cv_collect < <(SEED=3 "$here/submit-cv.sh" "$K" "$D/X.txt" "$D/y.txt" "$T/cv" -t)
say "submitted CV folds (array job $cv_folds) and their collection (job $cv_collect)"
# A limit of one minute (Slurm's least), of which each job uses about 1 s:
# -T is the time left less 59 s (a chain of 100 rows takes about 2 s).
hmc=$(SBATCH_TIMELIMIT=1 HMC_MARGIN=59 "$here/submit-hmc.sh" "$C" "$N" "$D/X.txt" "$D/y.txt" "$T/hmc")
say "submitted $C HMC chains of $N iterations (array job $hmc)"
# The chain of seed 1 again, in jobs whose -T is far off: the first is sent
# SIGTERM, as the scheduler does at a job's time limit, once it has 20 rows.
term=$(HMC_SECONDS=600 "$here/submit-hmc.sh" 1 "$N" "$D/X.txt" "$D/y.txt" "$T/term")
for _ in $(seq 120); do
    [ "$(grep -c '^[0-9]' "$T/term/chain-1.txt" 2>/dev/null || echo 0)" -ge 20 ] && break
    sleep 0.5
done
scancel --full --signal=TERM "$term"
say "submitted a chain (array job $term) and sent it SIGTERM at row $(grep -c '^[0-9]' "$T/term/chain-1.txt")"

# ---- wait --------------------------------------------------------------------------
timeout=${CHECK_TIMEOUT:-600}
while :; do
    [ -s "$T/cv/score.txt" ] && [ -s "$T/hmc/summary.txt" ] && [ -s "$T/term/summary.txt" ] &&
        [ -z "$(squeue -h -o %i)" ] && break
    [ $(( $(date +%s) - start )) -lt "$timeout" ] ||
        { squeue >&2; fail "the jobs did not finish within $timeout s"; }
    sleep 1
done
say "all jobs done"

# ---- check --------------------------------------------------------------------------
# Every job ran to completion with status 0.
jobs=$(grep -c . "$T/log/jobcomp.txt")
bad=$(grep -v 'JobState=COMPLETED' "$T/log/jobcomp.txt" || true)
[ -z "$bad" ] || fail "jobs that did not complete: $bad"
grep -q 'ExitCode=0:0' "$T/log/jobcomp.txt" || fail "no exit codes in the completion log"
! grep -v 'ExitCode=0:0' "$T/log/jobcomp.txt" || fail "a job exited with a nonzero status"
say "$jobs jobs, all COMPLETED with exit code 0"

# The CV score against the same folds fitted serially in this shell, the rows
# picked by awk from the fold file rather than by gpc-folds --select.
S=$T/serial
mkdir -p "$S"
for f in $(seq "$K"); do
    for side in train test; do
        for v in X y; do
            awk -v f="$f" -v s="$side" 'NR == FNR { k[FNR] = $1; next } (s == "test") == (k[FNR] == f)' \
                "$T/cv/folds.txt" "$D/$v.txt" > "$S/$v$side.txt"
        done
    done
    gpc-scale -q -s "$S/st.txt" -o "$S/Ztr.txt" "$S/Xtrain.txt"
    gpc-scale -q -r "$S/st.txt" -o "$S/Zte.txt" "$S/Xtest.txt"
    gpc-fit -q -m "$S/m.txt" "$S/Ztr.txt" "$S/ytrain.txt"
    gpc-predict -q -m "$S/m.txt" "$S/Zte.txt" >> "$S/oof.pred"
    cat "$S/ytest.txt" >> "$S/oof.y"
done
gpc-score -q -t "$S/oof.pred" "$S/oof.y" > "$S/score.txt"
cmp "$T/cv/score.txt" "$S/score.txt" || fail "CV score $(cat "$T/cv/score.txt"), serially $(cat "$S/score.txt")"
say "CV score over $K folds (errors cases rate mlpp brier): $(cat "$T/cv/score.txt"), the same serially"
gpc-score -q "$T/cv/oof.pred" "$T/cv/oof.y"

# Each chain against one long run with its seed; the number of jobs it took.
serial=()
for i in $(seq "$C"); do
    gpc-hmc -q -S "$i" -n "$N" -o "$S/chain-$i.txt" "$D/X.txt" "$D/y.txt"
    cmp "$T/hmc/chain-$i.txt" "$S/chain-$i.txt" || fail "chain $i differs from one long run"
    n=$(ls "$T/hmc/chain-$i-"*.log | wc -l)
    [ "$n" -ge 2 ] || fail "chain $i was written by $n job; the time limit did not cut it: $(cat "$T/hmc/chain-$i-"*.log)"
    say "chain $i: $N rows in $n jobs ($(rows_after_jobs "$T/hmc" "$i") rows after each), byte for byte one long run"
    serial+=("$S/chain-$i.txt")
done
cmp "$T/term/chain-1.txt" "$S/chain-1.txt" || fail "the chain stopped by SIGTERM and extended differs from one long run"
first=$T/term/$(cd "$T/term" && ls chain-1-*.log | sort -t- -k3 -n | head -n 1)
grep -q 'hmc-chain: SIGTERM' "$first" || fail "the first job of the signalled chain did not see SIGTERM"
grep -q 'gpc-hmc: .*SIGTERM\|signal' "$first" || fail "gpc-hmc did not report the signal: $(cat "$first")"
say "chain stopped by SIGTERM: $(ls "$T/term/"chain-1-*.log | wc -l) jobs ($(rows_after_jobs "$T/term" 1) rows after each), byte for byte one long run"
gpc-hmc -q --summary "${serial[@]}" > "$S/summary.txt"
cmp "$T/hmc/summary.txt" "$S/summary.txt" || fail "the summary differs from the serial chains'"
say "summary across chains, the same as the serial chains':"
cat "$T/hmc/summary.txt"

# ---- MPI jobs ------------------------------------------------------------------------
. "$here/check-slurm-mpi.sh"
say "PASS"
