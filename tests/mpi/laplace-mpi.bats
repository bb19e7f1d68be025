#!/usr/bin/env bats
# The binary Laplace approximation with its matrices spread over a process
# grid of MPI ranks (ScaLAPACK): the log evidence and gradient at n = 6000
# on 1x1, 1x2, 2x1 and 2x2 grids equal the plain tool's to 1e-10; ML-II,
# HMC and predictions over the grid agree with the plain tool's; errors
# end every rank with one message and the documented status.

load ../cli/test_helper

MPI_BIN="$REPO/bin/mpi"

setup() {
    require_tools gpc-fit gpc-evidence gpc-hmc gpc-predict
    [ -x "$MPI_BIN/gpc-evidence" ] || fail "$MPI_BIN/gpc-evidence is not built: run make MPI=1"
    common_setup
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
}

# Tool $2 of the MPI build on $1 ranks with the remaining arguments.
ranks() {
    local R=$1 tool=$2
    shift 2
    mpirun --oversubscribe -np "$R" "$MPI_BIN/$tool" "$@"
}

# The numbers of files $1 and $2 (words that are not numbers must be
# equal) within a relative $3 of the largest number of their line.
assert_numbers_close() {
    run /usr/bin/python3 -c '
import sys
tol = float(sys.argv[3])
a, b = (open(f).read().splitlines() for f in sys.argv[1:3])
if len(a) != len(b): sys.exit("%d lines against %d" % (len(a), len(b)))
worst = 0.0
for la, lb in zip(a, b):
    wa, wb = la.split(), lb.split()
    if len(wa) != len(wb): sys.exit("%r against %r" % (la, lb))
    nums = []
    for x, y in zip(wa, wb):
        try: nums.append((float(x), float(y)))
        except ValueError:
            if x != y: sys.exit("%s against %s" % (x, y))
    scale = max([abs(u) for u, v in nums] + [1e-300])
    for u, v in nums: worst = max(worst, abs(u - v) / scale)
print("worst %.3g" % worst)
sys.exit(0 if worst <= tol else 1)' "$1" "$2" "$3"
    assert_success
}

@test "mpi laplace: at n = 6000 the log evidence and gradient on 1x1, 1x2, 2x1 and 2x2 grids equal the plain tool's to 1e-10" {
    binary_data 6000 3
    gpc-evidence -k ard+jitter Xb.txt yb.txt > plain.txt
    local spec R grid
    for spec in 1:1x1 2:1x2 2:2x1 4:2x2; do
        R=${spec%%:*} grid=${spec#*:}
        # 6000 is no multiple of 64: the last block is partial
        run ranks "$R" gpc-evidence -k ard+jitter --process-grid "$grid" --block-size 64 \
            -o "g$grid.txt" Xb.txt yb.txt
        assert_success
        # the evidence apart, then the gradient relative to its largest entry
        awk '{ print $1 }' plain.txt > e0.txt
        awk '{ print $1 }' "g$grid.txt" > e1.txt
        assert_numbers_close e0.txt e1.txt 1e-10
        cut -d' ' -f2- plain.txt > d0.txt
        cut -d' ' -f2- "g$grid.txt" > d1.txt
        assert_numbers_close d0.txt d1.txt 1e-10
    done
}

@test "mpi laplace: ML-II on a 2x2 grid reaches the plain tool's optimum, and predictions on 2 ranks are the plain ones" {
    binary_data 300 4
    gpc-fit -q -O ml -k ard+jitter --params-out p0.txt -m m0.txt Xb.txt yb.txt
    run ranks 4 gpc-fit -q -O ml -k ard+jitter --block-size 32 --params-out p4.txt \
        -m m4.txt Xb.txt yb.txt
    assert_success
    # log_jitter lies on a flat direction; every value within 1e-6 of its size
    assert_numbers_close p0.txt p4.txt 1e-6
    assert_equal "$(grep -c . p4.txt)" 5
    head -n 20 Xb.txt > Xt.txt
    gpc-predict -m m0.txt Xt.txt > pr0.txt
    run ranks 2 gpc-predict -m m0.txt -o pr2.txt Xt.txt
    assert_success
    assert_numbers_close pr0.txt pr2.txt 1e-10
}

@test "mpi laplace: HMC over a 1x2 grid samples the plain tool's chain" {
    binary_data 100 5
    gpc-hmc -q -n 6 -S 3 -o c0.txt Xb.txt yb.txt
    run ranks 2 gpc-hmc -q -n 6 -S 3 --block-size 16 -o c2.txt Xb.txt yb.txt
    assert_success
    # a trajectory's rounding grows along it: 1e-6 after 6 iterations
    assert_numbers_close c0.txt c2.txt 1e-6
    assert_equal "$(grep -vc '^#' c2.txt)" 7
}

@test "mpi laplace: a grid that does not fit the ranks, a gram kernel, and ranks given other inputs each end every rank with one message" {
    binary_data 200 6
    run ranks 2 gpc-evidence --process-grid 2x2 Xb.txt yb.txt
    assert_failure 2
    [ "$(grep -c 'a 2x2 process grid needs 4 ranks, and this run has 2' <<< "$output")" -eq 1 ] ||
        fail "$output"
    gpc-kernel Xb.txt > G.txt
    paste -d' ' <(awk '{ print $NR }' G.txt) G.txt > Xg.txt
    run ranks 2 gpc-evidence -k gram Xg.txt yb.txt
    assert_failure 2
    [ "$(grep -c 'gram term cannot be spread' <<< "$output")" -eq 1 ] || fail "$output"
    head -n 150 Xb.txt > X150.txt
    head -n 150 yb.txt > y150.txt
    run mpirun --oversubscribe -np 1 "$MPI_BIN/gpc-fit" -m m.txt Xb.txt yb.txt : \
        -np 1 "$MPI_BIN/gpc-fit" -m m.txt X150.txt y150.txt
    assert_failure 2
    [ "$(grep -c 'rank 1: other inputs, labels or hyperparameters than rank 0'"'"'s' <<< "$output")" -eq 1 ] ||
        fail "$output"
    [ ! -e m.txt ] || fail "a model was written"
    # a rank that cannot read its inputs
    run mpirun --oversubscribe -np 1 "$MPI_BIN/gpc-fit" -m m.txt Xb.txt yb.txt : \
        -np 1 "$MPI_BIN/gpc-fit" -m m.txt missing.txt yb.txt
    assert_failure 3
    [ "$(grep -c 'missing.txt' <<< "$output")" -eq 1 ] || fail "$output"
    [ ! -e m.txt ] || fail "a model was written"
}
