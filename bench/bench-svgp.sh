#!/bin/sh
# The sparse variational method by minibatches on synthetic data (3 inputs,
# labels from sin(3 a) + b c with a little noise; awk's generator, fixed
# seed): one epoch of gpc-fit -M svgp --batch 256 with 100 inducing inputs
# at n = 10^5 and 10^6 (the whole process: reading the text file, k-means++,
# the epoch and the bound over all cases at the end), its seconds, the
# milliseconds per step, the peak resident memory and the bound; then the
# same 10^6 run under load (two busy processes per core throughout).
#
#   bench/bench-svgp.sh DIR        (DIR holds the files it writes)
set -eu
dir=$1
mkdir -p "$dir"
for n in 100000 1000000; do
    [ -s "$dir/X$n.txt" ] || awk -v n="$n" 'BEGIN { srand(3)
        for (i = 0; i < n; i++) {
            a = 2 * rand() - 1; b = 2 * rand() - 1; c = 2 * rand() - 1
            f = sin(3 * a) + b * c + 0.3 * (rand() - 0.5)
            printf "%.6f %.6f %.6f\n", a, b, c > "'"$dir"'/X" n ".txt"
            print (f > 0 ? 1 : -1) > "'"$dir"'/y" n ".txt" } }'
done

# One run: "n N seconds S ms_per_step T peak_rss_mb M bound B", the time
# per step being the whole run's over its steps (reading the file included).
run() {
    n=$1
    shift
    "$@" /usr/bin/time -f '%e %M' -o "$dir/time.txt" \
        bin/gpc-fit -M svgp --inducing 100 --batch 256 --epochs 1 -m "$dir/model$n.txt" \
        "$dir/X$n.txt" "$dir/y$n.txt" 2> "$dir/fit$n.log"
    steps=$(sed -n 's/.*after 1 epochs (\([0-9]*\) steps).*/\1/p' "$dir/fit$n.log")
    bound=$(awk '$1 == "log_evidence" { print $2 }' "$dir/model$n.txt")
    [ -n "$steps" ] && [ -n "$bound" ] || { echo "bench-svgp.sh: no steps or bound for n = $n" >&2; exit 1; }
    awk -v n="$n" -v s="$steps" -v b="$bound" '{
        printf "n %d steps %d seconds %s ms_per_step %.2f peak_rss_mb %.0f bound %.10g\n",
            n, s, $1, 1000 * $1 / s, $2 / 1024, b }' "$dir/time.txt"
}
run 100000
run 1000000
echo "### under load: two busy processes per core throughout"
run 1000000 sh bench/loaded.sh
