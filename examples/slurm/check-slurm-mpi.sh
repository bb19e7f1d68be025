# The MPI jobs of make check-slurm, sourced by check-slurm.sh once its
# cluster is up (it provides T, repo, here, fail and say, and stops the
# daemons).  Each gpc-fit run under fit-mpi.sbatch runs on 4 ranks started by
# srun; this machine has fewer cores, so the jobs are submitted with
# --overcommit (4 tasks on one CPU) and Open MPI is told to yield when idle.
#   mpi_job_resume NAME "OPTIONS": a job whose time limit stops it mid-run
#     ends with a checkpoint and no model; the same job submitted again
#     (and again, until the fit is done) continues and ends in the model of the plain tool run uninterrupted with
#     OPTIONS, to 1e-10 (relative) on every number.
#   mpi_job_error NAME "OPTIONS": a job given a missing label file ends every
#     rank with gpc-fit's one message and the job with status 3, well within
#     its time limit.
# shellcheck disable=SC2154  # repo, here: check-slurm.sh's
MPI_FIT=$repo/bin/mpi/gpc-fit
[ -x "$MPI_FIT" ] || fail "$MPI_FIT is not built (make MPI=1 mpi-all)"
export GPC_FIT=$MPI_FIT OMPI_MCA_mpi_yield_when_idle=1
M=$T/mpi
mkdir -p "$M"

# Binary data of N cases and 3 inputs with seed S, as X-N.txt and y-N.txt.
mpi_data() {
    awk -v n="$1" -v seed="$2" -v x="$M/X-$1.txt" -v y="$M/y-$1.txt" 'BEGIN { srand(seed)
        for (i = 0; i < n; i++) {
            a = 2 * rand() - 1; b = 2 * rand() - 1; c = 2 * rand() - 1
            f = sin(3 * a) + b * c + 0.3 * (rand() - 0.5)
            printf "%.6f %.6f %.6f\n", a, b, c > x; print (f > 0 ? 1 : -1) > y } }'
}

# The job's line in the completion log.
jobcomp_line() { grep "^JobId=$1 " "$T/log/jobcomp.txt"; }

# Two model files with the same words, their numbers within 1e-10 relative
# (to the larger of 1 and the first's magnitude).
models_close() {
    /usr/bin/python3 - "$1" "$2" <<'PY'
import sys
a, b = (open(f).read().split() for f in sys.argv[1:3])
if len(a) != len(b):
    sys.exit("%d words against %d" % (len(a), len(b)))
worst = 0.0
for x, y in zip(a, b):
    try:
        u, v = float(x), float(y)
    except ValueError:
        if x != y:
            sys.exit("'%s' against '%s'" % (x, y))
        continue
    worst = max(worst, abs(u - v) / max(1.0, abs(u)))
print("%d words, largest relative difference %.3g" % (len(a), worst))
sys.exit(0 if worst <= 1e-10 else "differences above 1e-10")
PY
}


# Submit fit-mpi.sbatch on 4 ranks with the given sbatch options before --,
# its arguments after, and wait for the job's line in the completion log
# (polled: sbatch --wait backs off to seconds between looks); prints the
# job id, returns the job's exit status.  The job's own time limit is the
# guard against a hang, and 200 s this wait's.
mpi_submit() {
    local sb=() job line
    while [ "$1" != -- ]; do sb+=("$1"); shift; done
    shift
    job=$(sbatch --parsable --ntasks=4 --overcommit "${sb[@]}" "$here/fit-mpi.sbatch" "$@") || return 99
    job=${job%%;*}
    echo "$job"
    for _ in $(seq 1000); do
        line=$(jobcomp_line "$job") && break
        sleep 0.2
    done
    [ -n "$line" ] || { echo "check-slurm: job $job did not end within 200 s" >&2; return 98; }
    line=${line##*ExitCode=}
    return "${line%%:*}"
}

mpi_job_resume() {
    local name=$1 opts=$2 d=$M/$1 X=$M/X-3000.txt Y=$M/y-3000.txt job status
    mkdir -p "$d"
    # the plain tool, uninterrupted, alongside the first job
    # shellcheck disable=SC2086
    gpc-fit -q $opts -m "$d/plain.txt" "$X" "$Y" 2> "$d/plain.err" &
    local plain=$!
    # A limit of one minute (Slurm's least) and --time-limit 6 s below it.
    # shellcheck disable=SC2086
    job=$(FIT_MARGIN=54 mpi_submit --time=1 --output="$d/job1.log" -- \
          "$d/model.txt" "$d/fit.ckpt" $opts "$X" "$Y") ||
        fail "$name: the first job ended with status $?: $(cat "$d/job1.log")"
    wait "$plain" || fail "$name: the plain run failed: $(cat "$d/plain.err")"
    grep -q -- '--time-limit=[0-9]' "$d/job1.log" || fail "$name: the job set no time limit: $(cat "$d/job1.log")"
    grep -q 'time limit reached' "$d/job1.log" || fail "$name: the first job was not stopped by its time limit: $(cat "$d/job1.log")"
    [ -s "$d/fit.ckpt" ] || fail "$name: the first job wrote no checkpoint"
    [ ! -e "$d/model.txt" ] || fail "$name: the first job, stopped, left a model"
    [ "$(grep -c '^gpc-fit: time limit reached' "$d/job1.log")" -eq 1 ] ||
        fail "$name: the time limit was not said once: $(cat "$d/job1.log")"
    jobcomp_line "$job" | grep -q 'JobState=COMPLETED .*ExitCode=0:0' ||
        fail "$name: job $job: $(jobcomp_line "$job")"
    say "$name: job $job on 4 ranks stopped by its time limit: $(grep '^gpc-fit: time limit reached' "$d/job1.log" | cut -c10-70)..."

    # The same job again until the model appears, each continuing from the
    # checkpoint the one before it left: with a limit of two minutes, which
    # one job is enough for however loaded the machine.
    local i=1
    while [ ! -e "$d/model.txt" ]; do
        i=$((i + 1))
        [ "$i" -le 4 ] || fail "$name: no model after 4 jobs: $(cat "$d/job$((i - 1)).log")"
        # shellcheck disable=SC2086
        job=$(FIT_MARGIN=54 mpi_submit --time=2 --output="$d/job$i.log" -- \
              "$d/model.txt" "$d/fit.ckpt" $opts "$X" "$Y") ||
            fail "$name: job $i ended with status $?: $(cat "$d/job$i.log")"
        grep -q "^gpc-fit: continuing from $d/fit.ckpt" "$d/job$i.log" ||
            fail "$name: job $i did not continue from the checkpoint: $(cat "$d/job$i.log")"
        jobcomp_line "$job" | grep -q 'JobState=COMPLETED .*ExitCode=0:0' ||
            fail "$name: job $job: $(jobcomp_line "$job")"
    done
    ! grep -q 'time limit reached' "$d/job$i.log" || fail "$name: the last job did not finish: $(cat "$d/job$i.log")"
    [ ! -e "$d/model.txt.part" ] || fail "$name: the last job left model.txt.part"
    local close
    close=$(models_close "$d/plain.txt" "$d/model.txt" 2>&1) ||
        fail "$name: the resumed model is not the plain tool's: $close"
    say "$name: $i jobs, each continuing from the last one's checkpoint ($(grep -h '^gpc-fit: continuing from' "$d"/job*.log | sed 's/.*: epoch/epoch/' | paste -sd';'))"
    say "$name: the model is the plain tool's, uninterrupted ($close)"
}

mpi_job_error() {
    local name=$1 opts=$2 d=$M/$1 job status=0
    mkdir -p "$d"
    # shellcheck disable=SC2086
    job=$(mpi_submit --time=1 --output="$d/job.log" -- \
          "$d/model.txt" "$d/fit.ckpt" $opts "$M/X-3000.txt" "$d/missing.txt") || status=$?
    [ "$status" -eq 3 ] || fail "$name: the job's status is $status, not 3: $(cat "$d/job.log")"
    jobcomp_line "$job" | grep -q 'JobState=FAILED .*ExitCode=3:0' ||
        fail "$name: job $job: $(jobcomp_line "$job")"
    [ "$(grep -c "^gpc-fit: $d/missing.txt: " "$d/job.log")" -eq 1 ] ||
        fail "$name: not one message from rank 0: $(cat "$d/job.log")"
    ! grep -q '^gpc-fit (rank' "$d/job.log" || fail "$name: other ranks spoke: $(cat "$d/job.log")"
    [ -z "$(ls -A "$d")" ] || [ "$(ls -A "$d")" = job.log ] || fail "$name: files left: $(ls -A "$d")"
    say "$name: job $job ended with status 3 ($(jobcomp_line "$job" | grep -o 'StartTime=[^ ]* EndTime=[^ ]*')): $(grep "^gpc-fit: $d/missing.txt" "$d/job.log" | sed "s|$d/||")"
}

# The dense Laplace approximation on the 2x2 grid of a job's 4 tasks: an
# HMC chain (hmc-chain.sbatch) in jobs each stopped by -T after a second and
# continued by the next, against the chain of one uninterrupted job of 4
# ranks: byte for byte the same.
mpi_hmc_resume() {
    local d=$M/hmc N=60 launch="srun --mpi=pmix --kill-on-bad-exit=1 $repo/bin/mpi/gpc-hmc"
    [ -x "$repo/bin/mpi/gpc-hmc" ] || fail "$repo/bin/mpi/gpc-hmc is not built"
    mpi_data 300 5
    mkdir -p "$d/cut" "$d/whole"
    local cut whole
    # SBATCH_OVERCOMMIT reaches the successors' sbatch through the job's
    # environment; hmc-chain.sbatch passes the tasks on itself
    export SBATCH_OVERCOMMIT=1
    cut=$(GPC_HMC=$launch HMC_SECONDS=1 sbatch --parsable --array=1 --ntasks=4 \
          --time=2 --output="$d/cut/chain-%a-%j.log" "$here/hmc-chain.sbatch" 1 "$N" \
          "$M/X-300.txt" "$M/y-300.txt" "$d/cut") || fail "hmc: sbatch failed"
    whole=$(GPC_HMC=$launch HMC_SECONDS=600 sbatch --parsable --array=1 --ntasks=4 \
            --time=2 --output="$d/whole/chain-%a-%j.log" "$here/hmc-chain.sbatch" 1 "$N" \
            "$M/X-300.txt" "$M/y-300.txt" "$d/whole") || fail "hmc: sbatch failed"
    for _ in $(seq 600); do
        [ -s "$d/cut/summary.txt" ] && [ -s "$d/whole/summary.txt" ] && break
        sleep 0.5
    done
    [ -s "$d/cut/summary.txt" ] && [ -s "$d/whole/summary.txt" ] ||
        fail "hmc: the chains did not finish within 300 s: $(cat "$d"/*/chain-1-*.log)"
    local jobs
    jobs=$(ls "$d/cut/"chain-1-*.log | wc -l)
    [ "$jobs" -ge 2 ] || fail "hmc: the cut chain took $jobs job; -T did not cut it"
    [ "$(grep -c '^[0-9]' "$d/whole/chain-1.txt")" -eq "$N" ] || fail "hmc: the whole chain is short"
    cmp "$d/cut/chain-1.txt" "$d/whole/chain-1.txt" ||
        fail "hmc: the chain continued over $jobs jobs differs from the uninterrupted one"
    ! grep -h 'JobId=\('"${cut%%;*}"'\|'"${whole%%;*}"'\)' "$T/log/jobcomp.txt" | grep -v 'ExitCode=0:0' ||
        fail "hmc: a job did not end with status 0"
    say "hmc: the dense Laplace chain on 4 ranks (2x2), $N rows in $jobs jobs, byte for byte the uninterrupted job's"
}

mpi_data 3000 7
mpi_job_resume svgp "-M svgp --inducing 20 --batch 50 --epochs 200"
mpi_job_error svgp-error "-M svgp --inducing 20 --batch 50 --epochs 200"
mpi_hmc_resume
