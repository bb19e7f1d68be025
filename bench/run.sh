#!/bin/sh
# Speed and memory of the Laplace evidence with gradient, measured against one
# BLAS Cholesky of the same size on this machine.  Report: bench/out/report.txt.
set -eu
cd "$(dirname "$0")/.."
mkdir -p bench/out
report=bench/out/report.txt
{
    echo "# gpc bench, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores"
    echo "# $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
    for n in 200 1000 4000; do
        echo "## evidence + gradient, ARD SE, logistic, n = $n, d = 8"
        build/bench-laplace "$n" 8 "$([ "$n" -le 1000 ] && echo 50 || echo 5)"
        build/bench-laplace "$n" 8 0
    done
    for n in 1000 2000; do
        echo "## EP (probit) to convergence with gradient, ARD SE, n = $n, d = 8"
        build/bench-ep "$n" 8
    done
} | tee "$report"
echo "report written to $report"
