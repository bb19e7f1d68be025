#!/bin/sh
# One fold of a cross-validation: fit on the cases that fold F leaves in, and
# predict the cases it holds out.  The inputs are standardised with the
# statistics of the fold's training cases alone, so nothing of the held-out
# cases leaks into the fit.  Writes, in OUTDIR:
#   fold-F.pred   gpc-predict's predictions of the held-out cases, in data order
#   fold-F.y      their labels, in the same order
# FOLDS is a fold number per case, as `gpc-folds -K K Y` writes it.
#
# Usage: cv-fold.sh F FOLDS X Y OUTDIR
# Environment: FIT_FLAGS, options for gpc-fit (default -q: hyperparameters
# by maximum likelihood).
set -eu
[ $# -eq 5 ] || { echo "usage: cv-fold.sh F FOLDS X Y OUTDIR" >&2; exit 2; }
f=$1 folds=$2 X=$3 Y=$4 out=$5
tmp=$(mktemp -d "$out/.fold-$f.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
gpc-folds -q -s "$f" --train -o "$tmp/Xtr" "$folds" "$X"
gpc-folds -q -s "$f" --train -o "$tmp/ytr" "$folds" "$Y"
gpc-folds -q -s "$f" --test -o "$tmp/Xte" "$folds" "$X"
gpc-folds -q -s "$f" --test -o "$tmp/yte" "$folds" "$Y"
gpc-scale -q -s "$tmp/stats" -o "$tmp/Ztr" "$tmp/Xtr"
gpc-scale -q -r "$tmp/stats" -o "$tmp/Zte" "$tmp/Xte"
# shellcheck disable=SC2086
gpc-fit ${FIT_FLAGS:--q} -m "$tmp/model" "$tmp/Ztr" "$tmp/ytr"
gpc-predict -q -m "$tmp/model" -o "$tmp/pred" "$tmp/Zte"
# The two results appear together or not at all (a rerun redoes the fold).
mv "$tmp/yte" "$out/fold-$f.y"
mv "$tmp/pred" "$out/fold-$f.pred"
