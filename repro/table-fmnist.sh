#!/bin/sh
# Fashion-MNIST (Xiao, Rasul & Vollgraf 2017; Debian's dataset-fashion-mnist):
# 60000 training and 10000 test images of 784 pixels (scaled to [0, 1]) in
# 10 classes, by the sparse variational method with the softmax likelihood
# (gpc-fit -M svgp -l softmax, one latent function per class) through M
# inducing inputs (default 500), started by k-means and moved with the
# hyperparameters, the squared exponential kernel with a length scale per
# pixel (ARD; KERNEL=se for one), the length scales started from the
# inducing inputs' median distance, minibatches of 1000 for EPOCHS epochs
# (default 40, about 20 minutes), the images read a batch at a time from
# .npy files.  Prints the test errors, the mean log predictive probability
# of the true class, the bound over the training images, the time of the
# fit, per epoch and of the predictions; then, when scikit-learn is
# installed, multinomial logistic regression and a 2000-component Nystrom
# RBF feature map with logistic regression on the same split
# (repro/fmnist-baselines.py).  The epochs' lines, with the held-out score
# of the first 1000 test images after each, are in repro/out/fmnist/fit.log.
set -eu
cd "$(dirname "$0")/.."
PATH="$PWD/bin:$PATH"
out=repro/out/fmnist
mkdir -p "$out"
M=${M:-500}
EPOCHS=${EPOCHS:-40}
KERNEL=${KERNEL:-ard}
BATCH=${BATCH:-1000}
[ -s "$out/X-test.npy" ] || /usr/bin/python3 repro/fmnist-npy.py "$out" > /dev/null
# the first 1000 test images, for the epochs' held-out lines
/usr/bin/python3 -c '
import numpy as np, sys
d = sys.argv[1]
np.save(d + "/X-val.npy", np.load(d + "/X-test.npy")[:1000])
np.save(d + "/y-val.npy", np.load(d + "/y-test.npy")[:1000])' "$out"

t0=$(date +%s.%N)
gpc-fit -M svgp -l softmax -k "$KERNEL" --inducing "$M" --batch "$BATCH" --epochs "$EPOCHS" \
    --validation "$out/X-val.npy" --validation-labels "$out/y-val.npy" \
    --checkpoint "$out/fit.ckpt" -m "$out/model.txt" \
    "$out/X-train.npy" "$out/y-train.npy" 2> "$out/fit.log"
t1=$(date +%s.%N)
gpc-predict -q -m "$out/model.txt" -o "$out/pred.txt" "$out/X-test.npy"
t2=$(date +%s.%N)
score=$(gpc-score "$out/pred.txt" "$out/y-test.npy")
bound=$(awk '$1 == "log_evidence" { print $2 }' "$out/model.txt")
echo "Fashion-MNIST, -M svgp -l softmax, $KERNEL kernel, $M inducing inputs, batches of $BATCH, $EPOCHS epochs"
echo "test: $score"
awk -v b="$bound" -v a="$t0" -v f="$t1" -v p="$t2" -v e="$EPOCHS" 'BEGIN {
    printf "bound over the 60000 training images %.6g; fit %.0f s (%.0f s an epoch), predictions of 10000 images %.0f s\n",
        b, f - a, (f - a) / e, p - f }'
if /usr/bin/python3 repro/fmnist-baselines.py "$out"; then :; else
    echo "(scikit-learn is not installed: no comparison rows)"
fi
