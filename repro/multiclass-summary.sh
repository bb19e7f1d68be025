#!/bin/sh
# The README's comparison of the multiclass methods, from the recorded
# scores of make table-gr06 and make table-calibration (repro/results/,
# where their provenance is): per method and data set the mean over the
# splits of the predictive likelihood (the sum over the test cases of the
# log probability of their class), the test error and the seconds of a fit
# with its predictions; then the mean log predictive probability of the
# averaged and plug-in probabilities at each method's ML-II hyperparameters,
# with their test errors.
#
#   sh repro/multiclass-summary.sh [DIR]     DIR: default repro/results
set -eu
dir=${1:-$(dirname "$0")/results}

# mean of column COL over the rows of FILE whose fields match the pattern
mean_where() { # FILE AWK-CONDITION COL DECIMALS
    grep -v '^#' "$1" | awk -v c="$3" -v d="$4" "$2"' { s += $c; n++ }
        END { if (n) printf "%.*f", d, s / n; else printf "-" }'
}

echo "| method | gpc-fit | Iris | Thyroid | Wine | Glass | seconds, Glass |"
echo "|---|---|---|---|---|---|---|"
for row in "laplace|softmax Laplace|-O map" "ep|nested EP|-M ep -O map" \
    "vb|VB|-M vb -O map" "gibbs|Gibbs sampling|gpc-hmc -M gibbs" \
    "ovr|one-vs-rest EP|-M ep --multiclass=ovr -O map"; do
    m=${row%%|*} rest=${row#*|}
    title=${rest%%|*} how=${rest#*|}
    line="| $title | \`$how\` |"
    for set in iris thyroid wine fgl; do
        like=$(mean_where "$dir/gr06.txt" "\$1 == \"$set\" && \$3 == \"$m\"" 6 2)
        err=$(mean_where "$dir/gr06.txt" "\$1 == \"$set\" && \$3 == \"$m\"" 5 1)
        line="$line $like ($err%) |"
    done
    secs=$(mean_where "$dir/gr06.txt" "\$1 == \"fgl\" && \$3 == \"$m\"" 7 2)
    echo "$line $secs |"
done
echo
echo "| method | averaged / plug-in | Iris | Wine | Thyroid | Glass | digits |"
echo "|---|---|---|---|---|---|---|"
for row in "laplace|softmax Laplace" "ep|nested EP" "vb|VB"; do
    m=${row%%|*} title=${row#*|}
    for kind in avg plug; do
        [ "$kind" = avg ] && k=averaged || k=plug-in
        line="| $title | $k |"
        for set in iris wine thyroid fgl digits; do
            where="\$1 == \"$set\" && \$3 == \"$m\" && \$4 == \"$kind\""
            mlpp=$(mean_where "$dir/calibration.txt" "$where" 6 3)
            err=$(mean_where "$dir/calibration.txt" "$where" 5 1)
            [ "$mlpp" = - ] && line="$line - |" || line="$line $mlpp ($err%) |"
        done
        echo "$line"
    done
done
