#!/bin/sh
# Run each MPI test binary given on 1, 2 and 4 local ranks (oversubscribed
# where there are fewer cores; as root, with Open MPI's consent), then the
# Bats tests of the tools under mpirun (tests/mpi/*.bats), and print
# one summary line over all of them: "N passed, N failed".  A run that
# exits non-zero without a failing line (a crash, an abort) counts as a
# failure.
cd "$(dirname "$0")/../.." || exit 3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# one thread per rank: the ranks share the cores
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
log=$(mktemp) || exit 3
trap 'rm -f "$log"' EXIT
for t in "$@"; do
    for R in 1 2 4; do
        echo "# $t on $R ranks"
        mpirun --oversubscribe -np "$R" "$t" 2>&1 ||
            echo "not ok - $t on $R ranks exited with status $?"
    done
done | tee -a "$log"
# the tools under mpirun
bats --tap tests/mpi 2>&1 | tee -a "$log"
passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
