#!/usr/bin/env bats
# The batch examples in examples/ (doc/methods.md: Batch use and clusters): the
# GNU parallel grid and cross-validation and the make -j table run on small
# data, and give what the same work gives run serially, one tool at a time,
# by commands written out here.  The Slurm examples run under `make
# check-slurm` (a scheduler of its own, as root), not here.

load test_helper

EX="$REPO/examples"

setup() {
    require_tools gpc-fit gpc-predict gpc-evidence gpc-scale gpc-score gpc-folds
    command -v parallel >/dev/null || fail "GNU parallel is not installed (sh scripts/deps.sh)"
    common_setup
}

# ---- grid.sh: a hyperparameter grid by GNU parallel ----------------------------

@test "batch: grid.sh's table is the grid run serially, point by point" {
    export LOG_V0="-1 0 1" LOG_W="-2 -1"
    JOBS=2 run --separate-stderr "$EX/grid.sh" --precise Xz.txt y.txt Xtz.txt yt.txt
    assert_success
    printf '%s\n' "$output" > par.txt
    # The same six points serially, in the grid's order (log_v0 slowest):
    # the evidence by one gpc-evidence --grid run, the scores one by one.
    printf '%s\n' '-1 -2' '-1 -1' '0 -2' '0 -1' '1 -2' '1 -1' > grid.txt
    run gpc-evidence -q -n -k se -g grid.txt Xz.txt y.txt
    assert_success
    printf '%s\n' "$output" > ev.txt
    echo "# log_v0 log_w log_evidence errors cases rate mlpp brier" > ser.txt
    while read -r a b; do
        gpc-fit -q -O none -k se -p "log_v0=$a,log_w=$b" -m m.txt Xz.txt y.txt
        gpc-predict -q -m m.txt -c p -o p.txt Xtz.txt
        printf '%s %s %s\n' "$a" "$b" "$(gpc-score -q --precise -t p.txt yt.txt)"
    done < grid.txt | paste -d' ' - ev.txt |
        awk '{ print $1, $2, $8, $3, $4, $5, $6, $7 }' >> ser.txt
    assert_shape ser.txt 6 8
    # The scores agree exactly; the evidence to rounding, as gpc-evidence
    # --grid starts each point's mode search from the last point's mode.
    cut -d' ' -f1,2,4- par.txt > par-scores.txt
    cut -d' ' -f1,2,4- ser.txt > ser-scores.txt
    assert_files_equal par-scores.txt ser-scores.txt
    grep -v '^#' par.txt | cut -d' ' -f3 > par-ev.txt
    assert_matrices_close par-ev.txt ev.txt 1e-12
}

@test "batch: grid.sh prints four decimals for people, --precise every digit" {
    export LOG_V0="0" LOG_W="-2 -1"
    JOBS=1 run --separate-stderr "$EX/grid.sh" Xz.txt y.txt Xtz.txt yt.txt
    assert_success
    printf '%s\n' "$output" > human.txt
    JOBS=1 run --separate-stderr "$EX/grid.sh" --precise Xz.txt y.txt Xtz.txt yt.txt
    assert_success
    printf '%s\n' "$output" > precise.txt
    assert_shape human.txt 2 8
    # every non-integer field has exactly four decimals, and is the precise
    # table's number rounded
    grep -v '^#' human.txt | awk '{ for (j = 3; j <= 8; j++)
        if (j != 4 && j != 5 && $j !~ /^-?[0-9]+\.[0-9][0-9][0-9][0-9]$/) exit 1 }' ||
        fail "not four decimals: $(cat human.txt)"
    grep -v '^#' precise.txt | awk '{ printf "%s %s %.4f %s %s %.4f %.4f %.4f\n",
        $1, $2, $3, $4, $5, $6, $7, $8 }' > rounded.txt
    grep -v '^#' human.txt > human-rows.txt
    assert_files_equal human-rows.txt rounded.txt
    grep -v '^#' precise.txt | awk '{ exit length($3) < 15 }' ||
        fail "--precise gave a short evidence: $(cat precise.txt)"
}

@test "batch: grid.sh gives the same table one process at a time and two" {
    export LOG_V0="0 1" LOG_W="-3 -2 -1"
    JOBS=1 run --separate-stderr "$EX/grid.sh" Xz.txt y.txt Xtz.txt yt.txt
    assert_success
    printf '%s\n' "$output" > j1.txt
    JOBS=2 run --separate-stderr "$EX/grid.sh" Xz.txt y.txt Xtz.txt yt.txt
    assert_success
    printf '%s\n' "$output" > j2.txt
    assert_shape j1.txt 6 8
    assert_files_equal j1.txt j2.txt
}

@test "batch: grid.sh runs every tool with one OpenMP and one OpenBLAS thread" {
    # Stand-ins for the tools that print the thread settings they were given
    # (--precise: the table passes them on as they are, not as numbers).
    mkdir stub
    printf '#!/bin/sh\necho "$OMP_NUM_THREADS/$OPENBLAS_NUM_THREADS"\n' > stub/gpc-evidence
    printf '#!/bin/sh\ncat >/dev/null; echo 1 2 3 4 5\n' > stub/gpc-score
    printf '#!/bin/sh\ncat >/dev/null 2>&1; echo x\n' > stub/gpc-predict
    printf '#!/bin/sh\necho x\n' > stub/gpc-fit
    chmod +x stub/*
    PATH="$PWD/stub:$PATH" LOG_V0=0 LOG_W=0 run --separate-stderr "$EX/grid.sh" --precise a b c d
    assert_success
    assert_line --index 1 "0 0 1/1 1 2 3 4 5"
    # A setting of the caller's own is kept.
    OMP_NUM_THREADS=2 PATH="$PWD/stub:$PATH" LOG_V0=0 LOG_W=0 run --separate-stderr "$EX/grid.sh" --precise a b c d
    assert_success
    assert_line --index 1 "0 0 2/1 1 2 3 4 5"
}

@test "batch: grid.sh fails when a point fails, and says which file" {
    LOG_V0="0 1" LOG_W="-2" run --separate-stderr "$EX/grid.sh" Xz.txt missing.txt Xtz.txt yt.txt
    [ "$status" -ne 0 ] || fail "grid.sh succeeded on a missing labels file"
    [[ "$stderr" == *"missing.txt"* ]] || fail "no message naming missing.txt: $stderr"
    refute_output --partial "0 -2 "
}

@test "batch: grid.sh and grid-point.sh refuse the wrong number of arguments" {
    run --separate-stderr "$EX/grid.sh" Xz.txt y.txt
    [ "$status" -eq 2 ]
    [[ "$stderr" == "usage: grid.sh [--precise] X Y XT YT" ]]
    run --separate-stderr "$EX/grid-point.sh" 0 0 Xz.txt
    [ "$status" -eq 2 ]
    [[ "$stderr" == "usage: grid-point.sh [--precise] LOG_V0 LOG_W X Y XT YT" ]]
}

# ---- the make -j table ----------------------------------------------------------

# Two small data sets in the layout of data/: 40 and 30 training cases.
make_sets() {
    mkdir -p sets/pima sets/crabs
    head -n 40 "$REPO/data/pima/X-train.txt" > sets/pima/X-train.txt
    head -n 40 "$REPO/data/pima/y-train.txt" > sets/pima/y-train.txt
    head -n 30 "$REPO/data/pima/X-test.txt" > sets/pima/X-test.txt
    head -n 30 "$REPO/data/pima/y-test.txt" > sets/pima/y-test.txt
    awk 'NR % 3 == 1' "$REPO/data/crabs/X-train.txt" > sets/crabs/X-train.txt
    awk 'NR % 3 == 1' "$REPO/data/crabs/y-train.txt" > sets/crabs/y-train.txt
    awk 'NR % 4 == 1' "$REPO/data/crabs/X-test.txt" > sets/crabs/X-test.txt
    awk 'NR % 4 == 1' "$REPO/data/crabs/y-test.txt" > sets/crabs/y-test.txt
}

@test "batch: make -j2 over the data sets gives make -j1's summary, and each row is the set's score" {
    make_sets
    run make -s -C "$EX" -j2 SETS="pima crabs" DATA="$PWD/sets" OUT="$PWD/j2"
    assert_success
    run make -s -C "$EX" -j1 SETS="pima crabs" DATA="$PWD/sets" OUT="$PWD/j1"
    assert_success
    assert_files_equal j1/summary.txt j2/summary.txt
    # Each row again by the tools in a pipe, without make or its files.
    echo "# set errors cases rate mlpp brier" > expect.txt
    for s in pima crabs; do
        gpc-scale -q -s st.txt -o tr.txt "sets/$s/X-train.txt"
        gpc-scale -q -r st.txt "sets/$s/X-test.txt" > te.txt
        gpc-fit -q tr.txt "sets/$s/y-train.txt" | gpc-predict -q -m - te.txt |
            gpc-score -q -t - "sets/$s/y-test.txt" > row.txt
        echo "$s $(cat row.txt)" >> expect.txt
    done
    assert_files_equal j2/summary.txt expect.txt
    # Nothing is left to do: the intermediate files were kept.
    run make -q -C "$EX" SETS="pima crabs" DATA="$PWD/sets" OUT="$PWD/j2"
    assert_success
}

@test "batch: make over a set without data fails and leaves no summary" {
    make_sets
    run make -s -C "$EX" -j2 SETS="pima nosuch" DATA="$PWD/sets" OUT="$PWD/o"
    [ "$status" -ne 0 ]
    assert_output --partial "nosuch"
    [ ! -e o/summary.txt ] || fail "summary.txt written although a set failed"
}

# ---- cv.sh: cross-validation folds by GNU parallel --------------------------------

@test "batch: cv.sh scores every case once, as the folds fitted one by one do" {
    JOBS=2 run --separate-stderr "$EX/cv.sh" 4 X.txt y.txt cv -t
    assert_success
    printf '%s\n' "$output" > par.txt
    # Every case is held out exactly once: the out-of-fold labels are y's.
    assert_shape cv/oof.pred 40 4
    [ "$(sort cv/oof.y | uniq -c)" = "$(sort y.txt | uniq -c)" ] || fail "oof.y is not y.txt's labels"
    cut -d' ' -f1 cv/folds.txt | sort | uniq -c | awk '{ print $1 }' > sizes.txt
    [ "$(tr '\n' ' ' < sizes.txt)" = "10 10 10 10 " ] || fail "fold sizes $(cat sizes.txt)"
    # The folds serially, rows picked by awk from folds.txt (not gpc-folds
    # --select), predictions concatenated in fold order.
    : > oof.txt; : > yoof.txt
    for f in 1 2 3 4; do
        for side in train test; do
            awk -v f="$f" -v s="$side" 'NR == FNR { k[FNR] = $1; next }
                (s == "test") == (k[FNR] == f)' cv/folds.txt X.txt > "X$side.txt"
            awk -v f="$f" -v s="$side" 'NR == FNR { k[FNR] = $1; next }
                (s == "test") == (k[FNR] == f)' cv/folds.txt y.txt > "y$side.txt"
        done
        gpc-scale -q -s st.txt -o Ztr.txt Xtrain.txt
        gpc-scale -q -r st.txt -o Zte.txt Xtest.txt
        gpc-fit -q -m m.txt Ztr.txt ytrain.txt
        gpc-predict -q -m m.txt Zte.txt >> oof.txt
        cat ytest.txt >> yoof.txt
    done
    run gpc-score -q -t oof.txt yoof.txt
    assert_success
    assert_output "$(cat par.txt)"
    # and one process at a time gives the same
    JOBS=1 run --separate-stderr "$EX/cv.sh" 4 X.txt y.txt cv1 -t
    assert_success
    assert_output "$(cat par.txt)"
}

@test "batch: cv-collect.sh names a fold without predictions, exit 3" {
    JOBS=2 run --separate-stderr "$EX/cv.sh" 3 X.txt y.txt cv
    assert_success
    rm cv/fold-2.pred cv/oof.pred
    run --separate-stderr "$EX/cv-collect.sh" 3 cv
    [ "$status" -eq 3 ]
    [[ "$stderr" == "cv-collect.sh: fold 2 has no predictions in cv (run cv-fold.sh 2)" ]]
    [ ! -e cv/oof.pred ] || fail "oof.pred written although a fold was missing"
}

@test "batch: cv-fold.sh leaves nothing behind when its fit fails" {
    gpc-folds -q -K 2 y.txt > folds.txt
    mkdir o
    run --separate-stderr "$EX/cv-fold.sh" 1 folds.txt X.txt nosuch.txt o
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"nosuch.txt"* ]]
    assert_dir_empty o
}
