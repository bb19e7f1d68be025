#!/bin/sh
# Girolami & Zhong (2007), as shown in Girolami's talk on data integration:
# handwritten digits (UCI mfeat) from four representations, Fourier (76
# columns), Karhunen-Loeve (64), pixel averages (240) and Zernike moments
# (47); 200 training and 1800 test characters, resampled.
#
# Protocol: SPLITS random splits (default 10, seeds 1..SPLITS), 20 training
# characters per digit and the other 1800 for testing; each representation
# standardised with its training statistics.  Every classifier is
# variational Bayes multinomial probit (gpc-fit -M vb) with the
# hyperparameters at their MAP under the default priors, on the variational
# bound as in the paper (OBJECTIVE=bound, the default here; OBJECTIVE=laplace
# for gpc-fit's own default, the Laplace evidence at the variational mode):
#   single     one representation, kernel se with its signal variance fixed
#              at 1 (the bound drives a free one to zero; Girolami & Rogers'
#              covariance has none);
#   sum, product  gpc-combine's rules over the four singles' probabilities;
#   composite  the four representations pasted side by side, kernel
#              se@1-76+se@77-140+se@141-380+se@381-427:simplex, so that
#              the weights beta_t^2 sum to one in place of the signal
#              variance, under their Dirichlet prior;
#   gibbs      the same composite with its weights and length scales
#              sampled (gpc-hmc -M gibbs, ITER iterations, default 600,
#              from the singles' length scales), predictions averaged over
#              every 20th iteration after the first third.
# Per split: the test error in percent and the mean log predictive
# probability of the true class; the composite's weights.  The table gives
# mean +- sd over the splits, and mfeat.png pictures the errors and weights.
set -eu
cd "$(dirname "$0")/.."
PATH="$PWD/bin:$PATH"
. repro/common.sh
OBJECTIVE=${OBJECTIVE:-bound}
out=repro/out/mfeat
mkdir -p "$out/data"
SPLITS=${SPLITS:-10}
ITER=${ITER:-600}
VIEWS="fou kar pix zer"
SPEC='se@1-76+se@77-140+se@141-380+se@381-427:simplex'

for v in $VIEWS; do
    gzip -dc "data/mfeat/X-$v.txt.gz" > "$out/data/X-$v.txt"
done

score() { # NAME PRED: 'NAME error% mean-log-probability'
    gpc-score --precise -t "$2" "$tag-yte.txt" | awk -v m="$1" '{ printf "%s %.17g %.17g\n", m, 100 * $3, $4 }'
}

run_split() { # SEED
    tag=$out/split-$1
    awk -v seed="$1" 'BEGIN { srand(seed) } { print rand(), NR, $1 }' data/mfeat/y.txt |
        sort -k3,3n -k1,1g |
        awk -v train="$tag-train.rows" -v test="$tag-test.rows" \
            '{ print $2 > (++seen[$3] <= 20 ? train : test) }'
    sort -n -o "$tag-train.rows" "$tag-train.rows"
    sort -n -o "$tag-test.rows" "$tag-test.rows"
    pick "$tag-train.rows" data/mfeat/y.txt > "$tag-ytr.txt"
    pick "$tag-test.rows" data/mfeat/y.txt > "$tag-yte.txt"
    for v in $VIEWS; do
        pick "$tag-train.rows" "$out/data/X-$v.txt" | gpc-scale -s "$tag-$v.stats" > "$tag-$v-Xtr.txt"
        pick "$tag-test.rows" "$out/data/X-$v.txt" | gpc-scale -r "$tag-$v.stats" > "$tag-$v-Xte.txt"
        gpc-fit -q -M vb --objective="$OBJECTIVE" -k se -p log_v0=0 --fix log_v0 -O map -m "$tag-$v.model" \
            "$tag-$v-Xtr.txt" "$tag-ytr.txt"
        gpc-predict -q -m "$tag-$v.model" -c p "$tag-$v-Xte.txt" > "$tag-$v.pred"
    done
    paste -d' ' "$tag-fou-Xtr.txt" "$tag-kar-Xtr.txt" "$tag-pix-Xtr.txt" "$tag-zer-Xtr.txt" \
        > "$tag-all-Xtr.txt"
    paste -d' ' "$tag-fou-Xte.txt" "$tag-kar-Xte.txt" "$tag-pix-Xte.txt" "$tag-zer-Xte.txt" \
        > "$tag-all-Xte.txt"
    gpc-fit -q -M vb --objective="$OBJECTIVE" -k "$SPEC" -O map -m "$tag-composite.model" "$tag-all-Xtr.txt" \
        "$tag-ytr.txt"
    gpc-predict -q -m "$tag-composite.model" -c p "$tag-all-Xte.txt" > "$tag-composite.pred"
    start=$(for v in $VIEWS; do awk '$1 == "log_w" { print $2 }' "$tag-$v.model"; done |
        awk '{ printf "%st%d.log_w=%s", (NR > 1 ? "," : ""), NR, $1 }')
    gpc-hmc -q -M gibbs -k "$SPEC" -p "$start" -n "$ITER" -S "$1" -o "$tag-gibbs.chain" \
        "$tag-all-Xtr.txt" "$tag-ytr.txt"
    gpc-fit -q -M vb -O none -k "$SPEC" -m "$tag-vb0.model" "$tag-all-Xtr.txt" "$tag-ytr.txt"
    gpc-predict -q -m "$tag-vb0.model" --chain "$tag-gibbs.chain" --burn $((ITER / 3)) \
        --thin 20 -c p "$tag-all-Xte.txt" > "$tag-gibbs.pred"
    awk -v burn=$((ITER / 3)) '!/^#/ && $1 != "iteration" && $1 > burn {
            mx = $2; for (j = 4; j <= 8; j += 2) if ($j > mx) mx = $j
            s = 0; for (j = 2; j <= 8; j += 2) s += exp($j - mx)
            for (j = 2; j <= 8; j += 2) w[j] += exp($j - mx) / s; n++ }
        END { printf "%.17g %.17g %.17g %.17g\n", w[2] / n, w[4] / n, w[6] / n, w[8] / n }' \
        "$tag-gibbs.chain" > "$tag.gibbs-weights"
    for rule in sum product; do
        gpc-combine -q -r "$rule" -c p "$tag-fou.pred" "$tag-kar.pred" "$tag-pix.pred" \
            "$tag-zer.pred" > "$tag-$rule.pred"
    done
    for m in $VIEWS sum product composite gibbs; do
        score "$m" "$tag-$m.pred"
    done > "$tag.scores"
    awk '$1 ~ /^t[1-4]\.log_weight$/ { printf "%s%.17g", n++ ? " " : "", exp($2) } END { print "" }' \
        "$tag-composite.model" > "$tag.weights"
}

t0=$(date +%s)
s=1
while [ "$s" -le "$SPLITS" ]; do
    run_split "$s"
    s=$((s + 1))
done
t1=$(date +%s)

scores=$(ls "$out"/split-*.scores)
echo "Girolami & Zhong (2007): mfeat digits, 200 training / 1800 test, $SPLITS splits"
echo "(variational Bayes multinomial probit at MAP hyperparameters, the gibbs row sampled;"
echo " mean +- sd over the splits)"
printf '%-10s %17s %17s %17s %17s\n' classifier "test error %" "mean log prob" "weight" \
    "gibbs weight"
for m in $VIEWS sum product composite gibbs; do
    w="" gw=""
    case $m in
    fou) i=1 ;; kar) i=2 ;; pix) i=3 ;; zer) i=4 ;; *) i=0 ;;
    esac
    if [ "$i" -gt 0 ]; then
        w=$(cat "$out"/split-*.weights | mean_sd "$i" |
            awk '{ printf "%8.3f +- %5.3f", $1, $2 }')
        gw=$(cat "$out"/split-*.gibbs-weights | mean_sd "$i" |
            awk '{ printf "%8.3f +- %5.3f", $1, $2 }')
    fi
    printf '%-10s %s %s %s %s\n' "$m" "$(stats "$m" 2 2 $scores)" "$(stats "$m" 3 2 $scores)" \
        "$w" "$gw"
done
echo "Weight: the composite kernel's beta_t^2 of the representation, at the MAP of the"
echo "variational bound, and its posterior mean in the Gibbs chain.  The talk shows"
echo "its results as a figure only, so no published numbers stand beside ours."
echo "Time: $((t1 - t0)) s for all fits ($out)."

if command -v gnuplot >/dev/null 2>&1; then
    for m in $VIEWS sum product composite gibbs; do
        printf '%s %s\n' "$m" "$(cat $scores | mean_sd 2 "$m")"
    done > "$out/errors.dat"
    for i in 1 2 3 4; do
        set -- $VIEWS
        eval "v=\${$i}"
        vb=$(cat "$out"/split-*.weights | mean_sd "$i")
        gb=$(cat "$out"/split-*.gibbs-weights | mean_sd "$i")
        echo "$v $vb $gb"
    done > "$out/weights.dat"
    gnuplot <<PLOT
set terminal pngcairo size 1000,450 noenhanced
set output "$out/mfeat.png"
set multiplot layout 1,2 title "mfeat digits, splits: $SPLITS, each 200 training / 1800 test (mean +- sd)"
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.6 border -1
set yrange [0:*]
set key off
set xtics rotate by -30
set title "test error of each classifier"
set ylabel "test error %"
plot "$out/errors.dat" using 2:3:xtic(1)
set title "composite kernel: weight of each representation"
set ylabel "weight beta^2"
set yrange [0:1]
set key top left
plot "$out/weights.dat" using 2:3:xtic(1) title "VB, MAP of the bound", \
     "" using 4:5 title "Gibbs, posterior mean"
unset multiplot
PLOT
    echo "Picture: $out/mfeat.png"
fi
