#!/usr/bin/env bats
# The sparse variational method's minibatch fit as MPI ranks
# (mpirun bin/mpi/gpc-fit): one rank is the plain tool, byte for byte; 2
# and 4 ranks give its model to 1e-10 (relative), also when stopped and
# continued on another number of ranks; errors end every rank with one
# message and the documented status; only rank 0 writes.

load ../cli/test_helper

MPI_BIN="$REPO/bin/mpi"

setup() {
    require_tools gpc-fit
    [ -x "$MPI_BIN/gpc-fit" ] || fail "$MPI_BIN/gpc-fit is not built: run make MPI=1"
    common_setup
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
    binary_data 400 5
}

# gpc-fit on $1 ranks with the remaining arguments.
ranks() {
    local R=$1
    shift
    mpirun --oversubscribe -np "$R" "$MPI_BIN/gpc-fit" "$@"
}

# Two model files with the same words and numbers within 1e-10 (relative).
assert_models_close() {
    run /usr/bin/python3 -c '
import sys
a, b = (open(f).read().split() for f in sys.argv[1:3])
if len(a) != len(b): sys.exit("%d words against %d" % (len(a), len(b)))
worst = 0.0
for x, y in zip(a, b):
    try: u, v = float(x), float(y)
    except ValueError:
        if x != y: sys.exit("%s against %s" % (x, y))
        continue
    worst = max(worst, abs(u - v) / max(1.0, abs(u)))
print("worst %.3g" % worst)
sys.exit(0 if worst < 1e-10 else 1)' "$1" "$2"
    assert_success
}

FIT="-M svgp --inducing 12 --batch 50 --epochs 4"

@test "mpi svgp: one rank is the plain tool, byte for byte; two and four ranks give its model to 1e-10" {
    gpc-fit -q $FIT -m plain.txt Xb.txt yb.txt
    run ranks 1 -q $FIT -m r1.txt Xb.txt yb.txt
    assert_success
    assert_files_equal plain.txt r1.txt
    for R in 2 4; do
        run ranks $R $FIT -m r$R.txt Xb.txt yb.txt
        assert_success
        # the progress lines once, from rank 0
        [ "$(grep -c 'epoch 4 of 4' <<< "$output")" -eq 1 ] || fail "progress: $output"
        assert_models_close plain.txt r$R.txt
    done
    # no other rank's temporary left beside the model, and the model on
    # standard output once
    [ -z "$(ls -A | grep '\.tmp')" ] || fail "temporaries: $(ls -A)"
    run ranks 4 -q $FIT -m - Xb.txt yb.txt
    assert_success
    assert_equal "$(grep -c '^log_evidence' <<< "$output")" 1
}

@test "mpi svgp: stopped by the time limit on two ranks and continued on four, it ends in the uninterrupted model" {
    gpc-fit -q $FIT --checkpoint whole.ckpt -m whole.txt Xb.txt yb.txt
    run ranks 2 $FIT -T 1e-9 --checkpoint part.ckpt -m part.txt Xb.txt yb.txt
    assert_success
    assert_output --partial "time limit reached"
    assert_equal "$(awk '$1 == "step" { print $2 }' part.ckpt)" 1
    run ranks 4 $FIT --checkpoint part.ckpt -m part.txt Xb.txt yb.txt
    assert_success
    assert_output --partial "continuing from part.ckpt: epoch 0, step 1"
    assert_models_close whole.txt part.txt
}

@test "mpi svgp: errors end every rank with one message and the documented status" {
    run ranks 4 -M svgp --inducing 0 --batch 50 -m m.txt Xb.txt yb.txt
    assert_failure 2
    [ "$(grep -c 'is not a whole number' <<< "$output")" -eq 1 ] || fail "$output"
    run ranks 2 $FIT -m m.txt Xb.txt missing.txt
    assert_failure 3
    [ "$(grep -c 'missing.txt' <<< "$output")" -eq 1 ] || fail "$output"
    # a checkpoint of other data
    gpc-fit -q $FIT -T 1e-9 --checkpoint c.ckpt -m first.txt Xb.txt yb.txt
    head -n 300 Xb.txt > X300.txt
    head -n 300 yb.txt > y300.txt
    run ranks 2 $FIT --checkpoint c.ckpt -m m.txt X300.txt y300.txt
    assert_failure 3
    assert_output --partial "c.ckpt"
    [ ! -e m.txt ] || fail "a model was written"
    # ranks given other data (one command per rank, MPI's MPMD form)
    run mpirun --oversubscribe -np 1 "$MPI_BIN/gpc-fit" $FIT -m m.txt Xb.txt yb.txt : \
        -np 1 "$MPI_BIN/gpc-fit" $FIT -m m.txt X300.txt y300.txt
    assert_failure 2
    assert_output --partial "the ranks were given other options or data (cases 400 on rank 0, 300 on rank 1)"
    [ "$(grep -c 'other options or data' <<< "$output")" -eq 1 ] || fail "$output"
    [ ! -e m.txt ] || fail "a model was written"
}

@test "mpi svgp: SIGTERM to every rank (as Slurm stops a job) stops them after the same step; continued on one rank it ends in the uninterrupted model" {
    binary_data 3000 7
    local fit="-M svgp --inducing 20 --batch 50 --epochs 60"
    gpc-fit -q $fit -m whole.txt Xb.txt yb.txt
    ranks 2 $fit --checkpoint run.ckpt -m part.txt Xb.txt yb.txt 2> err.txt &
    local pid=$! i
    for i in $(seq 200); do [ -s run.ckpt ] && break; sleep 0.05; done
    pkill -TERM -f "^$MPI_BIN/gpc-fit" || fail "no rank to stop"
    wait "$pid" || true
    [ ! -e part.txt ] || fail "a model was written by a stopped run"
    [ "$(grep -c 'stopped by SIGTERM' err.txt)" -eq 1 ] || fail "$(cat err.txt)"
    local step
    step=$(awk '$1 == "step" { print $2 }' run.ckpt)
    [ "$step" -lt 3600 ] || fail "the run was not stopped (step $step)"
    run ranks 1 $fit --checkpoint run.ckpt -m part.txt Xb.txt yb.txt
    assert_success
    assert_output --partial "continuing from run.ckpt"
    assert_models_close whole.txt part.txt
}
