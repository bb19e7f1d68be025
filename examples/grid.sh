#!/bin/sh
# A grid of hyperparameters evaluated by GNU parallel, one process per point,
# collected into one table on standard output (rows in grid order, whatever
# order the points finish in):
#   # log_v0 log_w log_evidence errors cases rate mlpp brier
# with four decimals, as people read them (gpc(7), NUMBERS), or with
# --precise 17 significant digits, which read back as the same doubles.
#
# Usage: grid.sh [--precise] X Y XT YT
# Environment: LOG_V0 and LOG_W, the grid's values (default "-1 0 1 2" and
# "-3 -2 -1 0 1"); JOBS, the processes at once (default: one per core).
set -eu
precise=
if [ "${1:-}" = --precise ]; then precise=--precise; shift; fi
[ $# -eq 4 ] || { echo "usage: grid.sh [--precise] X Y XT YT" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
# Each tool spreads its kernel loops over OpenMP threads and its Cholesky
# factors over OpenBLAS threads, one per core by default.  With one process
# per core already, more threads only compete for the same cores (and spin
# while they wait), so every process gets one thread of each.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
echo "# log_v0 log_w log_evidence errors cases rate mlpp brier"
# -k: output in input order; --halt now,fail=1: the first failed point stops
# the run, and parallel's exit status is not 0.
# shellcheck disable=SC2086
parallel -k --halt now,fail=1 -j "${JOBS:-100%}" \
    "$here/grid-point.sh" $precise {1} {2} "$1" "$2" "$3" "$4" \
    ::: ${LOG_V0:--1 0 1 2} ::: ${LOG_W:--3 -2 -1 0 1}
