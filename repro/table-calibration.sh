#!/bin/sh
# How well calibrated each multiclass method's probabilities are, as a user
# gets them: every method with its default kernel (ard) and its own type-II
# maximum likelihood hyperparameters, predictions averaged over the latent
# posterior (gpc-predict's default) and at the latent mean (--plugin).
#
# Data: Iris, Wine, New Thyroid and Forensic Glass (data/), and
# scikit-learn's digits (1797 8x8 images, 10 classes; exported from
# python3-sklearn's bundled copy).  SPLITS stratified random halves
# (default 5, seeds 1..SPLITS; digits DIGITS_SPLITS, default 1), inputs
# standardised with the training half's statistics.  Methods: softmax
# Laplace (gpc-fit's default), nested EP (-M ep) and variational Bayes on
# its Laplace evidence (-M vb); on digits DIGITS_METHODS (default laplace
# and ep: VB's Laplace evidence factors a 9000 x 9000 matrix per step, so
# DIGITS_METHODS=vb runs it on its own) with the kernel DIGITS_KERNEL
# (default se: with ard's 65 hyperparameters on the 64 pixels, nested EP's
# ML-II took over an hour).
#
# Per method and set: test errors in percent, the mean log predictive
# probability and the expected calibration error (10 bins of the top
# class's probability) of the averaged and the plug-in probabilities, and
# the seconds of the fit and its predictions; mean over the splits.
# REPORT_ONLY=1 prints the table from an earlier run's score files.
set -eu
cd "$(dirname "$0")/.."
PATH="$PWD/bin:$PATH"
. repro/common.sh
out=repro/out/calibration
mkdir -p "$out/data"
SPLITS=${SPLITS:-5}
DIGITS_SPLITS=${DIGITS_SPLITS:-1}
SETS=${SETS:-iris wine thyroid fgl digits}
METHODS=${METHODS:-laplace ep vb}
DIGITS_METHODS=${DIGITS_METHODS:-laplace ep}
DIGITS_KERNEL=${DIGITS_KERNEL:-se}

prepare() {
    d=$out/data
    for name in iris wine fgl; do
        cp "data/$name/X.txt" "$d/$name-X.txt"
        cp "data/$name/y.txt" "$d/$name-y.txt"
    done
    cp data/thyroid/X.txt "$d/thyroid-X.txt"
    awk '{ print NR <= 150 ? "normal" : NR <= 185 ? "hyper" : "hypo" }' data/thyroid/X.txt \
        > "$d/thyroid-y.txt"
    case " $SETS " in
    *" digits "*)
        /usr/bin/python3 - "$d/digits-X.txt" "$d/digits-y.txt" <<'EOF'
import sys
import numpy as np
from sklearn.datasets import load_digits
d = load_digits()
np.savetxt(sys.argv[1], d.data, fmt="%.17g")
np.savetxt(sys.argv[2], d.target, fmt="%d")
EOF
        ;;
    esac
}

fit_args() { # METHOD NAME: gpc-fit's options for it on data set NAME
    case $1 in
    laplace) ;;
    ep) echo "-M ep" ;;
    vb) echo "-M vb" ;;
    esac
    [ "$2" = digits ] && echo "-k $DIGITS_KERNEL"
    return 0
}

run_split() { # NAME SEED METHOD...
    name=$1 seed=$2 d=$out/data tag=$out/$1-$2
    shift 2
    split_rows "$d/$name-y.txt" "$seed" "$tag"
    pick "$tag-train.rows" "$d/$name-X.txt" | gpc-scale -q -s "$tag-stats.txt" > "$tag-Xtr.txt"
    pick "$tag-test.rows" "$d/$name-X.txt" | gpc-scale -q -r "$tag-stats.txt" > "$tag-Xte.txt"
    pick "$tag-train.rows" "$d/$name-y.txt" > "$tag-ytr.txt"
    pick "$tag-test.rows" "$d/$name-y.txt" > "$tag-yte.txt"
    for m in "$@"; do
        start=$(date +%s.%N)
        # shellcheck disable=SC2046 # the options are words
        gpc-fit -q $(fit_args "$m" "$name") -m "$tag-$m.model" "$tag-Xtr.txt" "$tag-ytr.txt"
        gpc-predict -m "$tag-$m.model" -c p "$tag-Xte.txt" > "$tag-$m.avg"
        gpc-predict -m "$tag-$m.model" --plugin -c p "$tag-Xte.txt" > "$tag-$m.plug"
        secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
        for kind in avg plug; do
            gpc-score -t -a "$tag-$m.$kind" "$tag-yte.txt" |
                awk -v m="$m" -v k="$kind" -v t="$secs" \
                    '{ printf "%s %s %.17g %.17g %.17g %s\n", m, k, 100 * $3, $4, $7, t }'
        done
    done > "$tag.scores"
}

# REPORT_ONLY=1 prints the table from the score files already there
t0=$(date +%s)
if [ -z "${REPORT_ONLY-}" ]; then
    prepare
    for name in $SETS; do
        splits=$SPLITS methods=$METHODS
        [ "$name" = digits ] && splits=$DIGITS_SPLITS methods=$DIGITS_METHODS
        s=1
        while [ "$s" -le "$splits" ]; do
            # shellcheck disable=SC2086 # the methods are words
            run_split "$name" "$s" $methods
            s=$((s + 1))
        done
    done
fi
t1=$(date +%s)

# mean of column COL of the rows of method M and kind K over NAME's splits
mean_of() { # NAME M K COL
    cat "$out/$1"-*.scores | awk -v m="$2" -v k="$3" -v c="$4" '
        $1 == m && $2 == k { s += $c; n++ } END { if (n) printf "%.4f", s / n; else printf "-" }'
}

echo "Calibration of the multiclass methods' probabilities: each method with its own"
echo "ML-II hyperparameters (kernel ard; digits $DIGITS_KERNEL); mean over $SPLITS splits (digits"
echo "$DIGITS_SPLITS)"
echo
printf '%-8s %-8s %8s %12s %12s %10s %10s %9s\n' data method "error %" "mlpp avg" \
    "mlpp plug" "ECE avg" "ECE plug" seconds
for name in $SETS; do
    methods=$METHODS
    [ "$name" = digits ] && methods=$DIGITS_METHODS
    for m in $methods; do
        printf '%-8s %-8s %8s %12s %12s %10s %10s %9s\n' "$name" "$m" \
            "$(mean_of "$name" "$m" avg 3)" "$(mean_of "$name" "$m" avg 4)" \
            "$(mean_of "$name" "$m" plug 4)" "$(mean_of "$name" "$m" avg 5)" \
            "$(mean_of "$name" "$m" plug 5)" "$(mean_of "$name" "$m" avg 6)"
    done
done
echo
echo "Nested EP's averaged probabilities against softmax Laplace's averaged ones"
echo "(mean log predictive probability; at least as good is the aim):"
for name in $SETS; do
    lap=$(mean_of "$name" laplace avg 4)
    ep=$(mean_of "$name" ep avg 4)
    if [ "$lap" = - ] || [ "$ep" = - ]; then
        printf '%-8s not measured (nested EP %s, softmax Laplace %s)\n' "$name" "$ep" "$lap"
        continue
    fi
    awk -v n="$name" -v l="$lap" -v e="$ep" 'BEGIN {
        printf "%-8s nested EP %.4f, softmax Laplace %.4f: %s\n", n, e, l,
               (e >= l ? "at least as good" : "WORSE") }'
done
echo
echo "mlpp: mean over the test cases of the log probability of their class;"
echo "ECE: expected calibration error of the top class's probability, 10 bins."
if [ -z "${REPORT_ONLY-}" ]; then
    echo "Time: $((t1 - t0)) s ($out)."
else
    echo "From the score files of an earlier run ($out)."
fi
