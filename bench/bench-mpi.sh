#!/bin/sh
# The sparse variational method by minibatches over MPI ranks: one epoch of
#     gpc-fit -M svgp --inducing 500 --batch 1000 --epochs 1
# on the synthetic data of bench/svgp-data.sh at n = 10^5 and 10^6 (.npy),
# by the plain tool with the machine's threads, and by the MPI build
# (bin/mpi) on 1 rank with as many threads and on 2 ranks of one thread
# each (not bound to cores).  For each: the epoch's seconds (its progress
# line: the steps alone), the bound (the same to rounding), and the ratio
# of the 2 ranks' epoch to the plain tool's; then at n = 10^5 the plain
# tool and the 2 ranks again under load, with their ratios to idle.
#
#   bench/bench-mpi.sh DIR        (DIR holds the files it writes)
#
# SMALL=1 runs it at n = 2000 and 20000 with m = 50 and b = 100, to check it.
set -eu
dir=$1
m=500 b=1000 small=100000 big=1000000
[ "${SMALL:-0}" = 1 ] && m=50 b=100 small=2000 big=20000
sh bench/svgp-data.sh "$dir" $small $big
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GPC_THREAD_POLICY=fixed
cores=$(nproc)

# One epoch on n cases by the command given, printing its seconds and bound.
epoch() {
    n=$1
    shift
    "$@" -M svgp --inducing "$m" --batch "$b" --epochs 1 -m "$dir/model.txt" \
        "$dir/X$n.npy" "$dir/y$n.npy" 2> "$dir/fit.log"
    sed -n 's/.*epoch 1 of 1, \(.*\) elapsed.*/\1/p' "$dir/fit.log" |
        awk '{ s = 0; for (i = 1; i < NF; i += 2) s += $i * ($(i + 1) == "min" ? 60 : 1); printf "%.1f", s }'
    printf ' %s\n' "$(awk '$1 == "log_evidence" { print $2 }' "$dir/model.txt")"
}

small_plain= small_ranks=
for n in $small $big; do
    set -- $(OMP_NUM_THREADS=$cores epoch "$n" bin/gpc-fit)
    plain=$1
    echo "n $n plain threads $cores epoch_s $1 bound $2"
    set -- $(OMP_NUM_THREADS=$cores epoch "$n" mpirun --bind-to none -np 1 bin/mpi/gpc-fit)
    echo "n $n ranks 1 threads $cores epoch_s $1 bound $2"
    set -- $(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
             epoch "$n" mpirun --oversubscribe --bind-to none -np 2 bin/mpi/gpc-fit)
    echo "n $n ranks 2 threads 1 epoch_s $1 bound $2" |
        awk -v p="$plain" '{ printf "%s ratio_to_plain %s\n", $0, (p > 0 ? sprintf("%.2f", $8 / p) : "-") }'
    [ -n "$small_plain" ] || { small_plain=$plain; small_ranks=$1; }
done

# The small runs again with two busy processes per core (bench/loaded.sh),
# the tools choosing their threads as they do by default.
echo "### under load: two busy processes per core throughout, n $small"
unset GPC_THREAD_POLICY
set -- $(epoch "$small" sh bench/loaded.sh bin/gpc-fit)
echo "n $small plain loaded epoch_s $1 bound $2" |
    awk -v i="$small_plain" '{ printf "%s ratio_to_idle %.2f\n", $0, $6 / i }'
lplain=$1
set -- $(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
         epoch "$small" sh bench/loaded.sh mpirun --oversubscribe --bind-to none -np 2 bin/mpi/gpc-fit)
echo "n $small ranks 2 threads 1 loaded epoch_s $1 bound $2" |
    awk -v i="$small_ranks" -v p="$lplain" '{ printf "%s ratio_to_idle %.2f ratio_to_plain %.2f\n", $0, $9 / i, $9 / p }'

