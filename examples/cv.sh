#!/bin/sh
# K-fold cross-validation with GNU parallel: stratified folds from gpc-folds,
# one process per fold (cv-fold.sh), then the score of the out-of-fold
# predictions (cv-collect.sh), printed on standard output.
#
# Usage: cv.sh K X Y OUTDIR [GPC-SCORE OPTION]...
# Environment: SEED, gpc-folds' seed (default 1); JOBS, the folds at once
# (default: one per core); FIT_FLAGS, as for cv-fold.sh.
set -eu
[ $# -ge 4 ] || { echo "usage: cv.sh K X Y OUTDIR [GPC-SCORE OPTION]..." >&2; exit 2; }
K=$1 X=$2 Y=$3 out=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
# One thread of each kind per process, as in grid.sh: the folds fill the cores.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
mkdir -p "$out"
gpc-folds -q -K "$K" -S "${SEED:-1}" -o "$out/folds.txt" "$Y"
parallel --halt now,fail=1 -j "${JOBS:-100%}" \
    "$here/cv-fold.sh" {} "$out/folds.txt" "$X" "$Y" "$out" ::: $(seq "$K")
"$here/cv-collect.sh" "$K" "$out" "$@"
