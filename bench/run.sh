#!/bin/sh
# Speed and memory of the Laplace evidence with gradient, measured against one
# BLAS Cholesky of the same size on this machine (and on one thread against
# two), of each kind of kernel term against ard (idle, on one thread and
# under load), of HMC on Pima, of ML-II on Pima beside scikit-learn's, of
# tool runs on the bundled data on one thread against two, of prediction beside
# scikit-learn's, of EP, of variational Bayes and the Gibbs sampler
# (multinomial probit), of one epoch of the sparse variational method at
# 10^5 and 10^6 cases, and the multiclass Laplace
# beside scikit-learn's one-vs-rest classifier on the same data (Debian's
# python3-sklearn under /usr/bin/python3).  Report: bench/out/report.txt.
set -eu
cd "$(dirname "$0")/.."
mkdir -p bench/out
report=bench/out/report.txt
# The peers (numpy, scikit-learn) run on the same OpenBLAS, with the kernels
# gpc chose (gpc(7), BLAS kernels), so that the comparison is of the code.
blas=$(bin/gpc-kernel --version | sed -n 2p)
core=$(echo "$blas" | awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^MAX_THREADS/) print $(i - 1) }')
export OPENBLAS_CORETYPE="$core"
{
    echo "# gpc bench, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores"
    echo "# $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
    echo "# $blas"
    echo "# peers run with OPENBLAS_CORETYPE=$core"
    echo "## BLAS kernels: gpc's, then OpenBLAS's generic Prescott ones"
    build/bench-blas
    OPENBLAS_CORETYPE=Prescott build/bench-blas
    echo "## HMC: Barber & Williams' default run on Pima (200 iterations of 20 leapfrog steps, n = 200, 8 hyperparameters), whole gpc-hmc process, best of five"
    sh bench/bench-hmc.sh bench/out/hmc
    echo "## ML-II on Pima (n = 200, 8 hyperparameters), whole gpc-fit process against scikit-learn's fit with its optimiser, best of three"
    sh bench/bench-ml2.sh bench/out/ml2
    for n in 200 1000 4000; do
        echo "## evidence + gradient, ARD SE, logistic, n = $n, d = 8"
        build/bench-laplace "$n" 8 "$([ "$n" -le 1000 ] && echo 50 || echo 5)"
        build/bench-laplace "$n" 8 0
    done
    echo "## kernel terms: K and the gradient's contraction, n = 2000, d = 8, best of five; then the evidence + gradient of ard@1-4*ard@5-8 against ard, n = 200 and 1000"
    build/bench-kernels 2000 8 5
    echo "### one thread"
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 build/bench-kernels 2000 8 5
    echo "### under load: two busy processes per core throughout"
    sh bench/loaded.sh build/bench-kernels 2000 8 5
    echo "## evidence + gradient, one thread against two (seconds, best of the repeats)"
    for n in 200 1000 2000 4000; do
        r=$([ "$n" -le 1000 ] && echo 50 || echo 3)
        one=$(OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 build/bench-laplace "$n" 8 "$r" |
            awk '$1 == "seconds_evidence_and_gradient" { print $2 }')
        two=$(OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 GPC_THREAD_POLICY=fixed build/bench-laplace "$n" 8 "$r" |
            awk '$1 == "seconds_evidence_and_gradient" { print $2 }')
        awk -v n="$n" -v a="$one" -v b="$two" 'BEGIN {
            printf "n %d one_thread %s two_threads %s two_over_one %.2f\n", n, a, b, b / a }'
    done
    echo "## tool runs on the bundled data, one thread against the default (seconds, best of 5 to 25 runs, in turn)"
    sh bench/bench-threads.sh bench/out/threads
    echo "## the same under load: two busy processes per core throughout"
    sh bench/bench-threads.sh bench/out/threads loaded
    echo "## prediction: 1000 points from a model of n = 2000, d = 8, whole gpc-predict process against scikit-learn predict_proba"
    sh bench/bench-predict.sh bench/out/predict
    for n in 1000 2000; do
        echo "## EP (probit) to convergence with gradient, ARD SE, n = $n, d = 8"
        build/bench-ep "$n" 8
    done
    echo "## softmax (multiclass) Laplace evidence + gradient from a cold start, shared ARD SE, n = 2000, d = 8, C = 4"
    echo "### one thread"
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 build/bench-softmax 2000 8 4
    echo "### default threads"
    build/bench-softmax 2000 8 4
    echo "## nested EP (multinomial probit) evidence + gradient from zero sites, shared ARD SE, n = 1000, d = 8, C = 4"
    echo "### one thread"
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 build/bench-nested-ep 1000 8 4
    echo "### default threads"
    build/bench-nested-ep 1000 8 4
    echo "## variational Bayes multinomial probit to convergence (tol 1e-9), shared ARD SE, fixed hyperparameters, n = 2000, d = 8, C = 10, one thread"
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 build/bench-vb 2000 8 10 1
    echo "## multinomial probit Gibbs sampler, 1000 sweeps at fixed hyperparameters, shared ARD SE, n = 1000, d = 8, C = 3, one thread"
    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 build/bench-gibbs 1000 8 3 1000
    echo "## sparse variational method by minibatches: one epoch, 500 inducing inputs, batches of 1000, d = 8, 10^5 and 10^6 cases, against its dense work at the measured matrix-multiply rate"
    sh bench/bench-svgp.sh bench/out/svgp
    echo "## scikit-learn GaussianProcessClassifier one-vs-rest (C binary logistic Laplace), same data and hyperparameters"
    build/bench-softmax -w bench/out/softmax 2000 8 4
    if /usr/bin/python3 -c 'import sklearn' 2>/dev/null; then
        echo "### one thread"
        OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 bench/bench-softmax-sklearn.py bench/out/softmax
        echo "### default threads"
        /usr/bin/python3 bench/bench-softmax-sklearn.py bench/out/softmax
    else
        echo "skipped: no scikit-learn for /usr/bin/python3 (apt-get install python3-sklearn)"
    fi
} | tee "$report"
echo "report written to $report"
