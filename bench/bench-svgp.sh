#!/bin/sh
# The sparse variational method by minibatches on synthetic data (3 inputs,
# labels from sin(3 a) + b c with a little noise; awk's generator, fixed
# seed): one epoch of gpc-fit -M svgp --batch 256 with 100 inducing inputs
# at n = 10^5 and 10^6 (the whole process: reading the text file, k-means++,
# the epoch and the bound over all cases at the end), its seconds, the
# milliseconds per step, the peak resident memory and the bound; then the
# same 10^6 run under load (two busy processes per core throughout); then
# the same data as .npy files, which the fit reads a batch at a time, at
# both sizes: the peak memory should not grow with n.
#
#   bench/bench-svgp.sh DIR        (DIR holds the files it writes)
set -eu
dir=$1
mkdir -p "$dir"
for n in 100000 1000000; do
    [ -s "$dir/X$n.npy" ] && continue
    awk -v n="$n" 'BEGIN { srand(3)
        for (i = 0; i < n; i++) {
            a = 2 * rand() - 1; b = 2 * rand() - 1; c = 2 * rand() - 1
            f = sin(3 * a) + b * c + 0.3 * (rand() - 0.5)
            printf "%.6f %.6f %.6f\n", a, b, c > "'"$dir"'/X" n ".txt"
            print (f > 0 ? 1 : 0) > "'"$dir"'/y" n ".txt" } }'
    printf '0 0 0\n1 1 1\n' > "$dir/id3.txt"
    printf '0\n1\n' > "$dir/id1.txt"
    bin/gpc-scale -r "$dir/id3.txt" -F npy -o "$dir/X$n.npy" "$dir/X$n.txt"
    bin/gpc-scale -r "$dir/id1.txt" -F npy -o "$dir/y$n.npy" "$dir/y$n.txt"
done

# One run on the files of suffix SUF (txt or npy): "n N input SUF steps K
# seconds S ms_per_step T peak_rss_mb M bound B", the time per step being
# the whole run's over its steps (reading the file included).
run() {
    n=$1 suf=$2
    shift 2
    "$@" /usr/bin/time -f '%e %M' -o "$dir/time.txt" \
        bin/gpc-fit -M svgp --inducing 100 --batch 256 --epochs 1 -m "$dir/model$n.txt" \
        "$dir/X$n.$suf" "$dir/y$n.$suf" 2> "$dir/fit$n.log"
    steps=$(sed -n 's/.*after 1 epochs (\([0-9]*\) steps).*/\1/p' "$dir/fit$n.log")
    bound=$(awk '$1 == "log_evidence" { print $2 }' "$dir/model$n.txt")
    [ -n "$steps" ] && [ -n "$bound" ] || { echo "bench-svgp.sh: no steps or bound for n = $n" >&2; exit 1; }
    awk -v n="$n" -v f="$suf" -v s="$steps" -v b="$bound" '{
        printf "n %d input %s steps %d seconds %s ms_per_step %.2f peak_rss_mb %.0f bound %.10g\n",
            n, f, s, $1, 1000 * $1 / s, $2 / 1024, b }' "$dir/time.txt"
}
run 100000 txt
run 1000000 txt
echo "### under load: two busy processes per core throughout"
run 1000000 txt sh bench/loaded.sh
echo "### .npy inputs, read a batch at a time"
run 100000 npy
run 1000000 npy
