#!/bin/sh
# The cross-validation score from the K folds' out-of-fold predictions in
# OUTDIR (as cv-fold.sh writes them): the predictions and labels of folds
# 1..K, concatenated in fold order into OUTDIR/oof.pred and OUTDIR/oof.y,
# scored by gpc-score (its options, e.g. -t, follow OUTDIR).  Every case is
# predicted once, by the model that did not see it.
#
# Usage: cv-collect.sh K OUTDIR [GPC-SCORE OPTION]...
set -eu
[ $# -ge 2 ] || { echo "usage: cv-collect.sh K OUTDIR [GPC-SCORE OPTION]..." >&2; exit 2; }
K=$1 out=$2
shift 2
f=1
: > "$out/oof.pred.tmp"
: > "$out/oof.y.tmp"
while [ "$f" -le "$K" ]; do
    [ -f "$out/fold-$f.pred" ] && [ -f "$out/fold-$f.y" ] ||
        { echo "cv-collect.sh: fold $f has no predictions in $out (run cv-fold.sh $f)" >&2; exit 3; }
    # One header line (a multiclass model names its columns) is enough.
    if [ "$f" -eq 1 ]; then cat "$out/fold-$f.pred"; else grep -v '^#' "$out/fold-$f.pred"; fi \
        >> "$out/oof.pred.tmp"
    cat "$out/fold-$f.y" >> "$out/oof.y.tmp"
    f=$((f + 1))
done
mv "$out/oof.pred.tmp" "$out/oof.pred"
mv "$out/oof.y.tmp" "$out/oof.y"
gpc-score -q "$@" "$out/oof.pred" "$out/oof.y"
