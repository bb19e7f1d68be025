#!/bin/sh
# The sparse variational method by minibatches at a million cases: synthetic
# binary data of 8 inputs (labels from sin(3 a) + b c + d/2 - e^2/2 with a
# little noise; awk's generator, fixed seed), one epoch of
#     gpc-fit -M svgp --inducing 500 --batch 1000 --epochs 1
# at n = 10^5 and 10^6, the inputs as .npy files read a batch at a time
# (then as text at 10^6, and the .npy run again under load).  For each: the
# epoch's seconds (from its progress line: the steps alone, not the choice
# of the inducing inputs or the bound over all cases after it), the whole
# process's seconds and peak resident memory; then the epoch's dense
# floating-point work, counted by the formula of gpc(7) (SPARSE VARIATIONAL
# METHOD, Cost), over the machine's matrix-multiply rate at m = 500
# measured in the same run (bench-gemm), and the ratio of the epoch's time
# to that.
#
#   bench/bench-svgp.sh DIR        (DIR holds the files it writes)
#
# SMALL=1 runs it at n = 2000 and 20000 with m = 50 and b = 100, to check it.
set -eu
dir=$1
m=500 b=1000 d=8 small=2000 big=1000000
[ "${SMALL:-0}" = 1 ] && m=50 b=100 small=2000 big=20000
[ "${SMALL:-0}" = 1 ] || small=100000
sh bench/svgp-data.sh "$dir" $small $big
rate=$(build/bench-gemm "$m" | awk '{ print $2 }')
echo "gemm_gflops_$m $rate"

# The seconds of "1 min 23 s" or "45.3 s".
seconds() {
    awk '{ s = 0; for (i = 1; i < NF; i += 2) s += $i * ($(i + 1) == "h" ? 3600 : $(i + 1) == "min" ? 60 : 1); print s }'
}

# One run on the files of suffix SUF (txt or npy), printing "n N input SUF
# steps K epoch_s E total_s T peak_rss_mb M dense_gflop F dense_s D
# ratio E/D bound B".
run() {
    n=$1 suf=$2
    shift 2
    "$@" /usr/bin/time -f '%e %M' -o "$dir/time.txt" \
        bin/gpc-fit -M svgp --inducing "$m" --batch "$b" --epochs 1 -m "$dir/model$n.txt" \
        "$dir/X$n.$suf" "$dir/y$n.$suf" 2> "$dir/fit$n.log"
    steps=$(sed -n 's/.*after 1 epochs (\([0-9]*\) steps).*/\1/p' "$dir/fit$n.log")
    epoch=$(sed -n 's/.*epoch 1 of 1, \(.*\) elapsed.*/\1/p' "$dir/fit$n.log" | seconds)
    bound=$(awk '$1 == "log_evidence" { print $2 }' "$dir/model$n.txt")
    [ -n "$steps" ] && [ -n "$epoch" ] && [ -n "$bound" ] ||
        { echo "bench-svgp.sh: no steps, epoch time or bound for n = $n" >&2; exit 1; }
    awk -v n="$n" -v f="$suf" -v s="$steps" -v e="$epoch" -v bd="$bound" -v m="$m" -v b="$b" \
        -v d="$d" -v rate="$rate" '{
        C = 1
        # per step: the shard O(m^2 b) and the global part O(m^3) (gpc(7), Cost)
        step = (2 + 4 * C) * m * m * b + 6 * m * b * d + 6 * C * m * b \
               + (16 / 3 + 4 * C) * m * m * m + 10 * m * m * d
        flops = s * step
        dense = flops / (rate * 1e9)
        printf "n %d input %s steps %d epoch_s %.1f total_s %s peak_rss_mb %.0f dense_gflop %.0f dense_s %.1f ratio %.2f bound %.10g\n",
            n, f, s, e, $1, $2 / 1024, flops / 1e9, dense, e / dense, bd }' "$dir/time.txt"
}
run $small npy
run $big npy
echo "### text inputs"
run $big txt
echo "### under load: two busy processes per core throughout"
run $big npy sh bench/loaded.sh
