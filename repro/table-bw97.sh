#!/bin/sh
# Barber & Williams (1997), Table 1, Pima and Crabs: test errors with GP-HMC
# (predictions averaged over the chain after a burn-in of a third) and GP-MAP,
# with the paper's settings: ARD squared exponential, logistic likelihood,
# priors N(-3, 3^2) on the log hyperparameters, step 0.1, 20 leapfrog steps,
# 200 iterations.  Writes repro/out/ and a trace plot of the log
# hyperparameters per data set (PNG, gnuplot).
set -eu
cd "$(dirname "$0")/.."
PATH="$PWD/bin:$PATH"
out=repro/out
mkdir -p "$out"

secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

row() { # DATA METHOD PRED SECONDS PUBLISHED
    gpc-score -t "$3" "data/$1/y-test.txt" | {
        read -r errors cases rate mlpp _brier
        printf '%-6s %-8s %4s of %-4s %9.4f %7s s   %s\n' "$1" "$2" "$errors" "$cases" \
            "$mlpp" "$4" "$5"
    }
}

table() { # DATA HMC-PUBLISHED MAP-PUBLISHED
    d=$1 tag=$out/$1
    gpc-scale -s "$tag-stats.txt" -o "$tag-X-train.txt" "data/$d/X-train.txt"
    gpc-scale -r "$tag-stats.txt" -o "$tag-X-test.txt" "data/$d/X-test.txt"
    t0=$(date +%s.%N)
    gpc-hmc -q -o "$tag-chain.txt" "$tag-X-train.txt" "data/$d/y-train.txt"
    gpc-fit -q -O none -m "$tag-none.model" "$tag-X-train.txt" "data/$d/y-train.txt"
    gpc-predict -q -m "$tag-none.model" --chain "$tag-chain.txt" -o "$tag-hmc.pred" \
        "$tag-X-test.txt"
    t1=$(date +%s.%N)
    gpc-fit -q -O map -m "$tag-map.model" "$tag-X-train.txt" "data/$d/y-train.txt"
    gpc-predict -m "$tag-map.model" -o "$tag-map.pred" "$tag-X-test.txt"
    t2=$(date +%s.%N)
    row "$d" GP-HMC "$tag-hmc.pred" "$(secs "$t0" "$t1")" "$2"
    row "$d" GP-MAP "$tag-map.pred" "$(secs "$t1" "$t2")" "$3"
}

echo "Barber & Williams (1997), Table 1: test errors, ours beside theirs"
printf '%-6s %-8s %12s %9s %9s   %s\n' data method errors mlpp time published
table pima "68 of 332" "69 of 332"
table crabs "3 of 120 (their split)" "3 of 120 (their split)"
echo "mlpp: mean log predictive probability of the test labels."
for d in pima crabs; do
    gpc-hmc --summary "$out/$d-chain.txt" > "$out/$d-summary.txt"
done
echo "Chain summaries: $out/pima-summary.txt, $out/crabs-summary.txt"

if command -v gnuplot >/dev/null 2>&1; then
    for d in pima crabs; do
        cols=$(awk '!/^#/ { for (i = 2; i <= NF; i++) if ($i == "potential") { print i - 1; exit } }' \
            "$out/$d-chain.txt")
        gnuplot <<PLOT
set terminal pngcairo size 900,500 noenhanced
set output "$out/$d-trace.png"
set title "$d: log hyperparameters along the HMC chain"
set xlabel "iteration"
set key outside right autotitle columnhead
plot for [c=2:$cols] "$out/$d-chain.txt" using 1:c with lines
PLOT
    done
    echo "Trace plots: $out/pima-trace.png, $out/crabs-trace.png"
fi
