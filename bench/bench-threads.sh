#!/bin/sh
# Tool runs on the bundled data sets, on one thread (OMP_NUM_THREADS=1
# OPENBLAS_NUM_THREADS=1) against the default (at most one thread per core,
# fewer while other processes keep the cores busy): the whole process, the
# best of at least five runs each, the two taken in turn so that a change in
# the machine's load touches both.  With "loaded", two busy processes per
# core run for the whole time (started here and stopped at exit), as on a
# shared node under make -j: the default must then take no longer than one
# thread.  Short runs are
# repeated until the one-thread runs add up to 3 s (at most 25 times): the
# best of five 50 ms runs moved by up to 20 % between reports on a shared
# machine.  Prints one line per run with both times, their ratio and the
# number of runs.
#
#   bench/bench-threads.sh DIR [loaded]    (DIR holds the files it writes)
set -eu
dir=$1
mkdir -p "$dir"
export PATH="$PWD/bin:$PATH" # gpc-cv runs gpc-fit and gpc-predict
busy=
stop_load() {
    [ -z "$busy" ] || kill $busy 2>/dev/null || true
}
trap stop_load EXIT
trap 'exit 130' INT TERM
if [ "${2:-}" = loaded ]; then
    for k in $(seq $((2 * $(nproc)))); do
        sh -c 'while :; do :; done' &
        busy="$busy $!"
    done
fi
bin/gpc-scale -s "$dir/pima.stats" -o "$dir/pima.X" data/pima/X-train.txt
bin/gpc-scale -s "$dir/fgl.stats" -o "$dir/fgl.X" data/fgl/X.txt
gzip -dc data/mfeat/X-fou.txt.gz > "$dir/mfeat-fou.X"
# a binary problem of 1000 cases: every other mfeat digit, 0-4 against 5-9
gzip -dc data/mfeat/X-fou.txt.gz | awk 'NR % 2 == 1' > "$dir/digits1000.raw"
bin/gpc-scale -o "$dir/digits1000.X" "$dir/digits1000.raw"
awk 'NR % 2 == 1 { print ($1 < 5 ? -1 : 1) }' data/mfeat/y.txt > "$dir/digits1000.y"

seconds() { # COMMAND...: its wall time
    t0=$(date +%s.%N)
    "$@" > /dev/null
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}

run() { # NAME COMMAND...: the best of the runs, one and two threads in turn
    name=$1
    shift
    one= two= runs=0 total=0
    while [ "$runs" -lt 5 ] || { [ "$runs" -lt 25 ] && awk -v t="$total" 'BEGIN { exit !(t < 3) }'; }; do
        a=$(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 seconds "$@")
        b=$(seconds "$@")
        one=$(awk -v a="$a" -v m="$one" 'BEGIN { print (m == "" || a < m) ? a : m }')
        two=$(awk -v a="$b" -v m="$two" 'BEGIN { print (m == "" || a < m) ? a : m }')
        total=$(awk -v a="$a" -v t="$total" 'BEGIN { print t + a }')
        runs=$((runs + 1))
    done
    awk -v n="$name" -v a="$one" -v b="$two" -v r="$runs" 'BEGIN {
        printf "%s one_thread %.3f two_threads %.3f two_over_one %.2f runs %d\n", n, a, b, b / a, r }'
}

run wine_fit_map_se bin/gpc-fit -q -k se -O map -m "$dir/m8" data/wine/X.txt data/wine/y.txt
run iris_fit_map_se bin/gpc-fit -q -k se -O map -m "$dir/m9" data/iris/X.txt data/iris/y.txt
run iris_cv_j1 bin/gpc-cv -q -j 1 -o "$dir/cv" data/iris/X.txt \
    data/iris/y.txt -- -k se -O map
run digits1000_binary_fit_ml bin/gpc-fit -q -k se -O ml -m "$dir/m10" "$dir/digits1000.X" \
    "$dir/digits1000.y"
run pima_fit_ml bin/gpc-fit -q -O ml -m "$dir/m1" "$dir/pima.X" data/pima/y-train.txt
run pima_fit_ep_ml bin/gpc-fit -q -M ep -O ml -m "$dir/m2" "$dir/pima.X" data/pima/y-train.txt
run pima_hmc_40 bin/gpc-hmc -q -n 40 --adapt=none -o "$dir/chain" "$dir/pima.X" data/pima/y-train.txt
run sonar_fit_tap_ml bin/gpc-fit -q -M tap -O ml -k se -m "$dir/m3" data/sonar/X-train.txt \
    data/sonar/y-train.txt
run fgl_fit_map_softmax bin/gpc-fit -q -O map -m "$dir/m4" "$dir/fgl.X" data/fgl/y.txt
run neal3_fit_map_softmax bin/gpc-fit -q -O map -m "$dir/m5" data/neal3/X-train.txt \
    data/neal3/y-train.txt
run neal3_fit_vb bin/gpc-fit -q -M vb -O none -m "$dir/m6" data/neal3/X-train.txt \
    data/neal3/y-train.txt
run mfeat_fou_fit_vb bin/gpc-fit -q -M vb -O none -m "$dir/m7" "$dir/mfeat-fou.X" data/mfeat/y.txt
