#!/bin/sh
# The dense Laplace approximation over a process grid: one log evidence
# with its gradient,
#     gpc-evidence -k ard+jitter X y
# at n = 8000 and 16000 (binary synthetic data, 3 columns), by the plain
# tool with the machine's threads (one rank: plain matrices) and with one
# thread (one rank as an MPI job runs it, a core per rank), and by the
# MPI build (bin/mpi) on 1 rank on a 1x1 grid (ScaLAPACK, with the
# machine's threads), 2 ranks (1x2) and 4 ranks (2x2, oversubscribed on
# fewer cores) of one thread each.  For each: the
# seconds (the whole command), the same in units of one LAPACK Cholesky of
# the same n with the machine's threads (bench-chol), the largest resident
# memory of one process, the log evidence (the same to rounding), and the
# ratio of the time to the plain tool's.  Then, at the smaller n, the
# plain tool and 2 ranks again with two busy processes per core
# (bench/loaded.sh), with their ratios to idle.
#
#   bench/bench-mpi-dense.sh DIR BUILD     (BUILD holds bench-chol)
#
# SMALL=1 runs it at n = 1000 and 2000, to check it.
set -eu
dir=$1 build=$2
mkdir -p "$dir"
sizes="8000 16000"
[ "${SMALL:-0}" = 1 ] && sizes="1000 2000"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GPC_THREAD_POLICY=fixed
cores=$(nproc)

# n cases uniform on [-1, 1]^3, labelled by the sign of sin(3 a) + b c
# plus noise (the tests' binary_data).
data() {
    awk -v n="$1" -v seed=3 -v X="$dir/X$1.txt" -v Y="$dir/y$1.txt" 'BEGIN { srand(seed)
        for (i = 0; i < n; i++) {
            a = 2 * rand() - 1; b = 2 * rand() - 1; c = 2 * rand() - 1
            f = sin(3 * a) + b * c + 0.3 * (rand() - 0.5)
            printf "%.6f %.6f %.6f\n", a, b, c > X; print (f > 0 ? 1 : -1) > Y } }'
}

# The command given (its tool wrapped in /usr/bin/time on every rank) on n
# cases: "seconds maxrss_MB log_evidence".
evidence() {
    n=$1
    shift
    t0=$(date +%s.%N)
    "$@" -k ard+jitter -o "$dir/ev.txt" "$dir/X$n.txt" "$dir/y$n.txt" 2> "$dir/err.txt"
    t1=$(date +%s.%N)
    mb=$(grep -o 'maxrss_kb [0-9]*' "$dir/err.txt" | cut -d' ' -f2 | sort -n | tail -n 1)
    echo "$t0 $t1 ${mb:-0} $(cut -d' ' -f1 "$dir/ev.txt")" |
        awk '{ printf "%.1f %.0f %s\n", $2 - $1, $3 / 1024, $4 }'
}

for n in $sizes; do
    data "$n"
    chol=$(OMP_NUM_THREADS=$cores "$build/bench-chol" "$n")
    echo "n $n cholesky_s $chol threads $cores"
    one=
    for R in 1 1t 1x1 2 4; do
        if [ "$R" = 1 ] || [ "$R" = 1t ]; then
            threads=$cores
            [ "$R" = 1t ] && threads=1
            set -- $(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads evidence "$n" \
                     /usr/bin/time -f 'maxrss_kb %M' bin/gpc-evidence)
            what="ranks 1 threads $threads plain"
            [ "$R" = 1 ] && one=$1
        else
            np=${R%x1} threads=1 grid=
            [ "$R" = 1x1 ] && threads=$cores grid="--process-grid 1x1"
            set -- $(OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads evidence "$n" \
                     mpirun --oversubscribe --bind-to none -np "$np" \
                     /usr/bin/time -f 'maxrss_kb %M' bin/mpi/gpc-evidence $grid)
            what="ranks $np threads $threads grid $(echo "$R" | sed 's/^2$/1x2/; s/^4$/2x2/')"
        fi
        line="n $n $what seconds $1 cholesky_units $(awk -v a="$1" -v c="$chol" 'BEGIN { printf "%.1f", a / c }') max_rank_MB $2 log_evidence $3"
        [ "$R" != 1 ] && line="$line ratio_to_plain $(awk -v a="$1" -v o="$one" 'BEGIN { printf "%.2f", a / o }')"
        echo "$line"
        if [ "$n" = "${sizes%% *}" ]; then
            [ "$R" = 1 ] && idle_plain=$1
            [ "$R" = 2 ] && idle_two=$1
        fi
    done
done

# Under load: the smaller n, the plain tool and 2 ranks as above.
n=${sizes%% *}
echo "### under load: two busy processes per core throughout, n $n"
set -- $(OMP_NUM_THREADS=$cores evidence "$n" sh bench/loaded.sh \
         /usr/bin/time -f 'maxrss_kb %M' bin/gpc-evidence)
echo "n $n ranks 1 threads $cores plain loaded seconds $1 ratio_to_idle $(awk -v a="$1" -v o="$idle_plain" 'BEGIN { printf "%.2f", a / o }')"
set -- $(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 evidence "$n" sh bench/loaded.sh \
         mpirun --oversubscribe --bind-to none -np 2 /usr/bin/time -f 'maxrss_kb %M' bin/mpi/gpc-evidence)
echo "n $n ranks 2 threads 1 grid 1x2 loaded seconds $1 ratio_to_idle $(awk -v a="$1" -v o="$idle_two" 'BEGIN { printf "%.2f", a / o }')"
