#!/bin/sh
# K-fold cross-validation on a Slurm cluster: stratified folds by gpc-folds,
# a job array of one task per fold (cv-fold.sbatch), and a job that scores
# the out-of-fold predictions when every fold has succeeded
# (cv-collect.sbatch, --dependency=afterok).  Prints the two job ids; the
# score appears in OUT/score.txt, the tasks' logs in OUT/*.log.
#
# Usage: submit-cv.sh K X Y OUT [GPC-SCORE OPTION]...
# Environment: SEED for gpc-folds (default 1); FIT_FLAGS for gpc-fit; SBATCH_*
# for sbatch (e.g. SBATCH_PARTITION, SBATCH_TIMELIMIT).  OUT and the data
# must be on a file system the nodes share.
set -eu
[ $# -ge 4 ] || { echo "usage: submit-cv.sh K X Y OUT [GPC-SCORE OPTION]..." >&2; exit 2; }
K=$1 X=$2 Y=$3 out=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
GPC_EXAMPLES=$(dirname "$here")
export GPC_EXAMPLES
mkdir -p "$out"
gpc-folds -q -K "$K" -S "${SEED:-1}" -o "$out/folds.txt" "$Y"
folds=$(sbatch --parsable --array="1-$K" --output="$out/fold-%a.log" \
        "$here/cv-fold.sbatch" "$out/folds.txt" "$X" "$Y" "$out")
folds=${folds%%;*}
collect=$(sbatch --parsable --dependency="afterok:$folds" --output="$out/collect.log" \
          "$here/cv-collect.sbatch" "$K" "$out" "$@")
echo "${folds} ${collect%%;*}"
