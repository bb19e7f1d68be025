#!/bin/sh
# One point of a hyperparameter grid: the Laplace log evidence of the
# isotropic squared-exponential kernel at LOG_V0, LOG_W on the training data,
# and the test-set score of the classifier fitted there (no optimisation).
# Prints one row:  log_v0 log_w log_evidence errors cases rate mlpp brier
# with four decimals, or 17 significant digits with --precise.
#
# Usage: grid-point.sh [--precise] LOG_V0 LOG_W X Y XT YT
set -eu
precise=
if [ "${1:-}" = --precise ]; then precise=--precise; shift; fi
[ $# -eq 6 ] || { echo "usage: grid-point.sh [--precise] LOG_V0 LOG_W X Y XT YT" >&2; exit 2; }
v0=$1 w=$2 X=$3 Y=$4 XT=$5 YT=$6
p="log_v0=$v0,log_w=$w"
ev=$(gpc-evidence -q -n -k se -p "$p" "$X" "$Y")
# gpc-evidence writes a matrix, every digit; the table rounds it for people
[ -n "$precise" ] || ev=$(printf '%.4f' "$ev")
# The model goes through a pipe: nothing is left on disk for a point.
score=$(gpc-fit -q -O none -k se -p "$p" "$X" "$Y" |
        gpc-predict -q -m - -c p "$XT" |
        gpc-score -q -t $precise - "$YT")
# set -e does not see a failure inside a pipeline, so check the result's shape.
[ "$(echo "$score" | wc -w)" -eq 5 ] || { echo "grid-point.sh: no score at $p" >&2; exit 1; }
echo "$v0 $w $ev $score"
