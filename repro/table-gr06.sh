#!/bin/sh
# Girolami & Rogers (2006), as tabulated in Girolami's talk on data
# integration: Laplace (softmax), variational Bayes and Gibbs sampling
# (multinomial probit), and beside them nested EP (multinomial probit,
# Riihimaki, Jylanki & Vehtari 2013), on Toy (Neal's three-class rule with two redundant
# features, noise-free: data/neal3-toy), Iris, Thyroid (New Thyroid, three
# classes), Wine and Forensic Glass.
#
# Protocol (the talk does not state one; SETS picks data sets): SPLITS random splits of each data
# set (default 10, seeds 1..SPLITS), stratified by class, half of each class
# for training and the rest for testing (Toy: about 400 of its 1400 cases
# for training, in proportion to the classes, as in Neal's split, the other
# 1000 or so for testing); inputs
# standardised with the training half's statistics; one isotropic squared
# exponential kernel shared by the classes ('se', as in the talk's Wine
# experiment).  Laplace: hyperparameters by MAP under N(-3, 3^2) on each
# log; VB: MAP under the same prior on its default objective, the Laplace
# evidence at the variational mode (gpc-fit -M vb -O map), and as in the
# talk, posterior means by the importance sampler on the bound's weights
# (gpc-fit -O is); Gibbs: gpc-hmc -M gibbs, ITER iterations (default 1000)
# from the same prior, predictions averaged over the last two thirds
# through a vb model; nested EP: MAP under the same prior (gpc-fit -M ep
# -O map); one-vs-rest: three binary probit EP classifiers by MAP, their
# probabilities normalised (gpc-fit -M ep --multiclass=ovr -O map).
# Besides, the approximations are compared at the same hyperparameters,
# Laplace's MAP: VB and nested EP at them (-O none), and Gibbs at them held
# fixed (--fix), the gold standard for all three.
#
# REPORT_ONLY=1 prints the tables from an earlier run's score files.
#
# Per split: the marginal likelihood (Laplace: its log evidence; VB: its
# objective; Gibbs: none is estimated), the test error in percent, the
# predictive likelihood, the sum over the test cases of the log probability
# of their class, and the seconds the fit and the predictions took.  The
# table gives mean +- sd over the splits.
set -eu
cd "$(dirname "$0")/.."
PATH="$PWD/bin:$PATH"
. repro/common.sh
out=repro/out/gr06
mkdir -p "$out"
SPLITS=${SPLITS:-10}
ITER=${ITER:-1000}
SETS=${SETS:-toy iris thyroid wine fgl}

# ---- data: NAME X Y, the labels as words or numbers ------------------------

prepare() {
    d=$out/data
    mkdir -p "$d"
    cat data/neal3-toy/X-clean-train.txt data/neal3-toy/X-clean-test.txt > "$d/toy-X.txt"
    cat data/neal3-toy/y-train.txt data/neal3-toy/y-test.txt > "$d/toy-y.txt"
    cp data/iris/X.txt "$d/iris-X.txt"
    cp data/iris/y.txt "$d/iris-y.txt"
    cp data/thyroid/X.txt "$d/thyroid-X.txt"
    awk '{ print NR <= 150 ? "normal" : NR <= 185 ? "hyper" : "hypo" }' data/thyroid/X.txt \
        > "$d/thyroid-y.txt"
    cp data/wine/X.txt "$d/wine-X.txt"
    cp data/wine/y.txt "$d/wine-y.txt"
    cp data/fgl/X.txt "$d/fgl-X.txt"
    cp data/fgl/y.txt "$d/fgl-y.txt"
}

# split NAME SEED: TAG-train.rows and TAG-test.rows, stratified halves, or
# for toy 400 training rows drawn in proportion to the classes
split() {
    split_rows "$out/data/$1-y.txt" "$2" "$out/$1-$2" "$([ "$1" = toy ] && echo 400)"
}

# timed TAG M COMMAND...: run COMMAND, adding its wall-clock seconds to
# method M's in TAG.times
timed() {
    tt=$1 tm=$2
    shift 2
    ts=$(date +%s.%N)
    "$@"
    awk -v m="$tm" -v a="$ts" -v b="$(date +%s.%N)" 'BEGIN { printf "%s %.3f\n", m, b - a }' \
        >> "$tt.times"
}

run_split() { # NAME SEED
    d=$out/data tag=$out/$1-$2
    rm -f "$tag.times"
    split "$1" "$2"
    pick "$tag-train.rows" "$d/$1-X.txt" | gpc-scale -s "$tag-stats.txt" > "$tag-Xtr.txt"
    pick "$tag-test.rows" "$d/$1-X.txt" | gpc-scale -r "$tag-stats.txt" > "$tag-Xte.txt"
    pick "$tag-train.rows" "$d/$1-y.txt" > "$tag-ytr.txt"
    pick "$tag-test.rows" "$d/$1-y.txt" > "$tag-yte.txt"
    timed "$tag" laplace gpc-fit -q -k se -O map -m "$tag-laplace.model" -P "$tag-map.par" \
        "$tag-Xtr.txt" "$tag-ytr.txt"
    timed "$tag" laplace sh -c 'gpc-predict -m "$1" -c p "$2" > "$3"' - "$tag-laplace.model" \
        "$tag-Xte.txt" "$tag-laplace.pred"
    # VB and Gibbs at Laplace's hyperparameters
    gpc-fit -q -M vb -k se -O none -H "$tag-map.par" -m "$tag-vbmap.model" "$tag-Xtr.txt" \
        "$tag-ytr.txt"
    gpc-predict -m "$tag-vbmap.model" -c p "$tag-Xte.txt" > "$tag-vbmap.pred"
    gpc-hmc -q -M gibbs -k se -n "$ITER" -S "$2" -H "$tag-map.par" --fix=log_v0,log_w \
        -o "$tag-gibbsmap.chain" "$tag-Xtr.txt" "$tag-ytr.txt"
    gpc-predict -q -m "$tag-vbmap.model" --chain "$tag-gibbsmap.chain" -c p "$tag-Xte.txt" \
        > "$tag-gibbsmap.pred"
    timed "$tag" vb gpc-fit -q -M vb -k se -O map -m "$tag-vb.model" "$tag-Xtr.txt" \
        "$tag-ytr.txt"
    timed "$tag" vb sh -c 'gpc-predict -m "$1" -c p "$2" > "$3"' - "$tag-vb.model" \
        "$tag-Xte.txt" "$tag-vb.pred"
    timed "$tag" vbis gpc-fit -q -M vb -k se -O is -m "$tag-vbis.model" "$tag-Xtr.txt" \
        "$tag-ytr.txt" 2> /dev/null
    timed "$tag" vbis sh -c 'gpc-predict -m "$1" -c p "$2" > "$3"' - "$tag-vbis.model" \
        "$tag-Xte.txt" "$tag-vbis.pred"
    timed "$tag" gibbs gpc-hmc -q -M gibbs -k se -n "$ITER" -S "$2" -o "$tag-gibbs.chain" \
        "$tag-Xtr.txt" "$tag-ytr.txt"
    gpc-fit -q -M ep -k se -O none -H "$tag-map.par" -m "$tag-epmap.model" "$tag-Xtr.txt" \
        "$tag-ytr.txt"
    gpc-predict -m "$tag-epmap.model" -c p "$tag-Xte.txt" > "$tag-epmap.pred"
    timed "$tag" ep gpc-fit -q -M ep -k se -O map -m "$tag-ep.model" "$tag-Xtr.txt" \
        "$tag-ytr.txt"
    timed "$tag" ep sh -c 'gpc-predict -m "$1" -c p "$2" > "$3"' - "$tag-ep.model" \
        "$tag-Xte.txt" "$tag-ep.pred"
    timed "$tag" ovr gpc-fit -q -M ep --multiclass=ovr -k se -O map -m "$tag-ovr.model" \
        "$tag-Xtr.txt" "$tag-ytr.txt"
    timed "$tag" ovr sh -c 'gpc-predict -m "$1" -c p "$2" > "$3"' - "$tag-ovr.model" \
        "$tag-Xte.txt" "$tag-ovr.pred"
    gpc-fit -q -M vb -k se -O none -m "$tag-vb0.model" "$tag-Xtr.txt" "$tag-ytr.txt"
    timed "$tag" gibbs sh -c 'gpc-predict -q -m "$1" --chain "$2" -c p "$3" > "$4"' - \
        "$tag-vb0.model" "$tag-gibbs.chain" "$tag-Xte.txt" "$tag-gibbs.pred"
    for m in laplace vb vbis gibbs vbmap gibbsmap ep epmap ovr; do
        ml=- secs=$(awk -v m="$m" '$1 == m { s += $2; n++ } END { if (n) printf "%.3f", s; else print "-" }' "$tag.times")
        case $m in gibbs*) ;; *) ml=$(awk '$1 == "log_evidence" { print $2 }' "$tag-$m.model") ;; esac
        gpc-score --precise -t "$tag-$m.pred" "$tag-yte.txt" |
            awk -v m="$m" -v ml="$ml" -v t="$secs" '{ printf "%s %s %.17g %.17g %s\n", m, ml, 100 * $3, $4 * $2, t }'
    done > "$tag.scores"
}

# REPORT_ONLY=1 prints the tables from the score files already there
t0=$(date +%s)
if [ -z "${REPORT_ONLY-}" ]; then
    prepare
    for name in $SETS; do
        s=1
        while [ "$s" -le "$SPLITS" ]; do
            run_split "$name" "$s"
            s=$((s + 1))
        done
    done
fi
t1=$(date +%s)

published() {
    case "$1 $2" in
    "toy 2") echo "-169.27 +- 4.27   -232.00 +- 17.13  -94.07 +- 11.26" ;;
    "toy 3") echo "3.97 +- 2.00      3.65 +- 1.95      3.49 +- 1.69" ;;
    "toy 4") echo "-98.90 +- 8.22    -72.27 +- 9.25    -73.44 +- 7.67" ;;
    "iris 2") echo "-143.87 +- 1.17   -202.98 +- 1.37   -45.27 +- 6.17" ;;
    "iris 3") echo "4.12 +- 2.14      4.08 +- 2.16      4.08 +- 2.16" ;;
    "iris 4") echo "-10.41 +- 1.28    -7.35 +- 1.27     -7.26 +- 1.40" ;;
    "thyroid 2") echo "-158.52 +- 1.83   -246.24 +- 1.63   -68.82 +- 8.29" ;;
    "thyroid 3") echo "4.08 +- 2.26      3.86 +- 2.04      3.94 +- 2.02" ;;
    "thyroid 4") echo "-18.75 +- 2.47    -14.62 +- 2.70    -14.47 +- 2.39" ;;
    "wine 2") echo "-152.22 +- 1.29   -253.90 +- 1.52   -68.65 +- 6.19" ;;
    "wine 3") echo "3.08 +- 2.16      2.65 +- 1.87      2.78 +- 2.07" ;;
    "wine 4") echo "-14.61 +- 1.29    -10.16 +- 1.47    -10.47 +- 1.41" ;;
    "fgl 2") echo "-275.11 +- 2.87   -776.79 +- 5.75   -268.21 +- 5.46" ;;
    "fgl 3") echo "36.54 +- 4.74     32.79 +- 4.57     34.00 +- 4.62" ;;
    "fgl 4") echo "-90.38 +- 3.25    -77.60 +- 3.91    -79.86 +- 4.80" ;;
    esac
}
# rows NAME M...: the three figures of one data set, Laplace's beside the
# given methods' (with the published Laplace / VB / Gibbs figures)
rows() {
    name=$1
    shift
    for col in 2 3 4; do
        case $col in
        2) fig="marginal likelihood" ;;
        3) fig="predictive error %" ;;
        4) fig="predictive likelihood" ;;
        esac
        files=$(ls "$out/$name"-*.scores)
        line=$(printf '%-8s %-22s %s' "$name" "$fig" "$(stats laplace "$col" 2 $files)")
        for m in "$@"; do
            line="$line $(stats "$m" "$col" 2 $files)"
        done
        printf '%s   published: %s\n' "$line" "$(published "$name" "$col")"
    done
}

echo "Girolami & Rogers (2006): Laplace, variational Bayes and Gibbs sampling, $SPLITS splits"
echo "(mean +- sd over the splits; published figures from Girolami's talk beside)"
echo
echo "1. The approximations compared at the same hyperparameters: Laplace's MAP"
printf '%-8s %-22s %17s %17s %17s %17s\n' data figure Laplace VB Gibbs "nested EP"
for name in $SETS; do
    rows "$name" vbmap gibbsmap epmap
done
echo
echo "2. Each method with its own hyperparameters: Laplace MAP, VB MAP on its Laplace"
echo "   evidence (the default) and by importance sampling (as in the talk), Gibbs"
echo "   sampling them, nested EP MAP, one-vs-rest binary EP MAP"
printf '%-8s %-22s %17s %17s %17s %17s %17s %17s\n' data figure Laplace VB "VB (IS)" Gibbs \
    "nested EP" "one-vs-rest"
for name in $SETS; do
    rows "$name" vb vbis gibbs ep ovr
done
echo
echo "3. Cost: seconds per split for the fit and the test predictions (part 2's fits)"
printf '%-8s %17s %17s %17s %17s %17s %17s\n' data Laplace VB "VB (IS)" Gibbs "nested EP" \
    "one-vs-rest"
for name in $SETS; do
    files=$(ls "$out/$name"-*.scores)
    line=$(printf '%-8s' "$name")
    for m in laplace vb vbis gibbs ep ovr; do
        line="$line $(stats "$m" 5 2 $files)"
    done
    echo "$line"
done
echo
wins() { # NAME M: the splits where M's predictive likelihood is above Laplace's
    for f in "$out/$1"-*.scores; do
        awk -v m="$2" '{ v[$1] = $4 } END { print (v[m] > v["laplace"]) }' "$f"
    done | awk '{ s += $1 } END { print s }'
}
echo "Predictive likelihood above Laplace's, splits where it is (of $SPLITS), and the published"
echo "ordering (VB and Gibbs better than Laplace in mean) in part 1:"
for name in $SETS; do
    lap=$(cat "$out/$name"-*.scores | mean_sd 4 laplace | cut -d' ' -f1)
    vb=$(cat "$out/$name"-*.scores | mean_sd 4 vbmap | cut -d' ' -f1)
    gi=$(cat "$out/$name"-*.scores | mean_sd 4 gibbsmap | cut -d' ' -f1)
    vbw=$(wins "$name" vbmap)
    giw=$(wins "$name" gibbsmap)
    awk -v n="$name" -v l="$lap" -v v="$vb" -v g="$gi" -v vw="$vbw" -v gw="$giw" 'BEGIN {
        printf "%-8s VB %d, Gibbs %d: %s\n", n, vw, gw, (v > l && g > l) ? "reproduced" : "NOT reproduced" }'
done
echo
echo "VB (MAP on its Laplace evidence) and nested EP (MAP) with their own"
echo "hyperparameters: predictive likelihood against Laplace's (at least as good in"
echo "mean is the aim), splits where each is better:"
for name in $SETS; do
    lap=$(cat "$out/$name"-*.scores | mean_sd 4 laplace | cut -d' ' -f1)
    for m in vb ep; do
        v=$(cat "$out/$name"-*.scores | mean_sd 4 "$m" | cut -d' ' -f1)
        w=$(wins "$name" "$m")
        awk -v n="$name" -v m="$m" -v l="$lap" -v e="$v" -v w="$w" 'BEGIN {
            printf "%-8s %-9s %.2f, Laplace %.2f, better in %d: %s\n", n,
                   m == "vb" ? "VB" : "nested EP", e, l, w,
                   (e >= l ? "at least as good" : "WORSE") }'
    done
done
echo
echo "Marginal likelihood: Laplace's log evidence; VB's objective, its Laplace"
echo "evidence (at Laplace's hyperparameters in part 1, at its MAP and at the"
echo "importance-sampled ones in part 2); no estimate for Gibbs sampling; nested"
echo "EP's approximate log evidence; one-vs-rest's sum of binary log evidences."
echo "Predictive likelihood: the sum over the test cases of the log probability"
echo "of their class."
if [ -z "${REPORT_ONLY-}" ]; then
    echo "Time: $((t1 - t0)) s for all fits ($out)."
else
    echo "From the score files of an earlier run ($out)."
fi
