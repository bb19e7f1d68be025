#!/bin/sh
# Prediction speed, side by side: gpc-predict as a whole process (reading the
# model and the test inputs, writing the probabilities) against
# scikit-learn's predict_proba on a fitted GaussianProcessClassifier at the
# same hyperparameters (bench-predict-sklearn.py), for 1000 test points from
# a model of n = 2000 training cases, d = 8, ARD squared exponential with
# signal variance 1 and every inverse squared length scale e^-2 (gpc's
# defaults), logistic likelihood.  Each time is the best of three runs.
#
#   bench/bench-predict.sh DIR        (DIR holds the data it writes)
set -eu
dir=$1
mkdir -p "$dir"
# inputs N(0, 1) by Box-Muller, labels from the sign of a smooth function
# plus noise, so that the problem is neither trivial nor separable
awk -v seed=7 -v n=3000 -v d=8 -v X="$dir/X.txt" -v Y="$dir/y.txt" 'BEGIN {
    srand(seed)
    for (i = 1; i <= n; i++) {
        f = 0
        for (l = 1; l <= d; l++) {
            x[l] = sqrt(-2 * log(1 - rand())) * cos(6.283185307179586 * rand())
            printf "%.17g%s", x[l], (l < d ? " " : "\n") > X
        }
        f = sin(x[1]) + x[2] * x[3] / 2 + x[4] + sqrt(-2 * log(1 - rand())) * cos(6.283185307179586 * rand()) / 2
        print (f > 0 ? 1 : -1) > Y
    } }'
head -n 2000 "$dir/X.txt" > "$dir/Xtr.txt"
head -n 2000 "$dir/y.txt" > "$dir/ytr.txt"
tail -n 1000 "$dir/X.txt" > "$dir/Xte.txt"
bin/gpc-fit -q -k ard -O none -m "$dir/model.txt" "$dir/Xtr.txt" "$dir/ytr.txt"
best=
for _ in 1 2 3; do
    t0=$(date +%s.%N)
    bin/gpc-predict -q -m "$dir/model.txt" -c p "$dir/Xte.txt" > "$dir/gpc.pred"
    t1=$(date +%s.%N)
    best=$(awk -v a="$t0" -v b="$t1" -v best="$best" 'BEGIN { t = b - a
        print (best == "" || t < best) ? t : best }')
done
echo "n 2000"
echo "test_points 1000"
echo "seconds_gpc_predict_process $best"
if /usr/bin/python3 -c 'import sklearn' 2>/dev/null; then
    /usr/bin/python3 bench/bench-predict-sklearn.py "$dir" "$best"
else
    echo "sklearn skipped: no scikit-learn for /usr/bin/python3 (apt-get install python3-sklearn)"
fi
