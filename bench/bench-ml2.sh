#!/bin/sh
# Type-II maximum likelihood on standardised Pima (200 cases, ARD squared
# exponential with signal variance, logistic Laplace), side by side: the
# whole gpc-fit -O ml process (best of three; its evidence evaluations and
# the log evidence it reaches) against scikit-learn's
# GaussianProcessClassifier with its own optimiser on the same inputs
# (bench-ml2-sklearn.py), whose model is the same.
#
#   bench/bench-ml2.sh DIR        (DIR holds the files it writes)
set -eu
dir=$1
mkdir -p "$dir"
bin/gpc-scale -s "$dir/pima.stats" -o "$dir/pima.X" data/pima/X-train.txt
best=
for _ in 1 2 3; do
    t0=$(date +%s.%N)
    bin/gpc-fit -v -O ml -m "$dir/model.txt" "$dir/pima.X" data/pima/y-train.txt 2> "$dir/fit.log"
    t1=$(date +%s.%N)
    best=$(awk -v a="$t0" -v b="$t1" -v best="$best" 'BEGIN { t = b - a
        print (best == "" || t < best) ? t : best }')
done
evals=$(sed -n 's/.* after \([0-9]*\) evaluations$/\1/p' "$dir/fit.log" | tail -n 1)
lev=$(awk '$1 == "log_evidence" { print $2 }' "$dir/model.txt")
[ -n "$evals" ] && [ -n "$lev" ] || { echo "bench-ml2.sh: no evaluation count or log evidence" >&2; exit 1; }
echo "evidence_evaluations $evals"
echo "allowed_evaluations 150"
echo "log_evidence $lev"
echo "seconds_gpc_fit_process $best"
if /usr/bin/python3 -c 'import sklearn' 2>/dev/null; then
    /usr/bin/python3 bench/bench-ml2-sklearn.py "$dir/pima.X" data/pima/y-train.txt "$best" "$lev"
else
    echo "sklearn skipped: no scikit-learn for /usr/bin/python3 (apt-get install python3-sklearn)"
fi
