#!/usr/bin/env bats
# gpc-score: test error and mean log predictive probability.

load test_helper

setup() {
    require_tools gpc-score
    common_setup
    # hand-made predictions: p(y=+1) with a second column, and true labels
    printf '0.9 7\n0.2 7\n0.6 7\n0.5 7\n' > pred.txt
    printf -- '1\n-1\n-1\n1\n' > lab.txt
    printf '1\n0\n0\n1\n' > lab01.txt
    # errors: only row 3 (p = 0.6 >= 1/2 but y = -1); p = 0.5 counts as +1
    MLPP=$(awk 'BEGIN { printf "%.17g", (log(0.9) + log(0.8) + log(0.4) + log(0.5)) / 4 }')
}

@test "gpc-score --help lists every option and exits 0" {
    check_help gpc-score model column table quiet verbose help version
    check_help_covers_source gpc-score
}

@test "gpc-score --version prints name, package and version" {
    check_version gpc-score
}

# ---- values ------------------------------------------------------------------------------

@test "gpc-score: hand-made case gives 1 error of 4 and the exact mean log probability" {
    run --separate-stderr gpc-score pred.txt lab.txt
    assert_success
    assert_output "errors 1 of 4 (25.0%), mean log predictive probability $(printf '%.4f' "$MLPP")"
    assert_output "errors 1 of 4 (25.0%), mean log predictive probability -0.4845"
}

@test "gpc-score -t prints errors, cases, rate and mlpp as numbers" {
    run --separate-stderr gpc-score -t pred.txt lab.txt
    assert_success
    read -r e n r m <<< "$output"
    assert_equal "$e $n $r" "1 4 0.25"
    echo "$m" > got.txt
    echo "$MLPP" > want.txt
    assert_matrices_close got.txt want.txt 1e-15
}

@test "gpc-score: labels coded 0/1 give the same result" {
    gpc-score -t pred.txt lab.txt > a.txt
    gpc-score -t pred.txt lab01.txt > b.txt
    assert_files_equal a.txt b.txt
}

@test "gpc-score: all right and all wrong" {
    printf '0.75\n0.25\n' > p.txt
    printf -- '1\n-1\n' > y.txt
    run gpc-score -t p.txt y.txt
    assert_success
    assert_output --regexp '^0 2 0 -0\.287682072451780[0-9]*$'
    printf -- '-1\n1\n' > yw.txt
    run gpc-score -t p.txt yw.txt
    assert_output --regexp '^2 2 1 -1\.386294361119890[0-9]*$'
}

@test "gpc-score --column picks the probability column" {
    awk '{ print 7, $1 }' pred.txt > pred2.txt
    gpc-score -t pred.txt lab.txt > a.txt
    gpc-score -t --column 2 pred2.txt lab.txt > b.txt
    gpc-score -t --column=2 pred2.txt lab.txt > c.txt
    assert_files_equal a.txt b.txt
    assert_files_equal a.txt c.txt
}

@test "gpc-score: comments and blank lines in the prediction file are skipped" {
    { echo "# p other"; sed -n 1,2p pred.txt; echo; sed -n 3,4p pred.txt; } > pc.txt
    gpc-score -t pred.txt lab.txt > a.txt
    gpc-score -t pc.txt lab.txt > b.txt
    assert_files_equal a.txt b.txt
}

# ---- streams, formats, determinism -----------------------------------------------------------

@test "gpc-score reads predictions or labels from '-' and pipes" {
    gpc-score pred.txt lab.txt > file.txt
    gpc-score - lab.txt < pred.txt > a.txt
    cat lab.txt | gpc-score pred.txt - > b.txt
    cat pred.txt | gpc-score - lab.txt > c.txt
    assert_files_equal file.txt a.txt
    assert_files_equal file.txt b.txt
    assert_files_equal file.txt c.txt
}

@test "gpc-score reads hand-made .npy predictions and labels" {
    { npy_header '<f8' '(3,)'; f8 1 0 0.5; } > p.npy
    { npy_header '<f8' '(3,)'; f8 1 -1 1; } > y.npy
    printf '1\n0\n0.5\n' > p.txt
    printf -- '1\n-1\n1\n' > y.txt
    run gpc-score -t p.npy y.npy
    assert_success
    assert_output --regexp '^0 3 0 -0\.231049060186648[0-9]*$'
    gpc-score -t p.txt y.txt > a.txt
    gpc-score -t p.npy y.txt > b.txt
    cat p.npy | gpc-score -t - y.npy > c.txt
    assert_files_equal a.txt b.txt
    assert_files_equal a.txt c.txt
}

@test "gpc-score reads a 2-D .npy prediction file, column by column" {
    { npy_header '<f8' '(3, 2)'; f8 2 1 2 0 2 0.5; } > p.npy
    printf -- '1\n-1\n1\n' > y.txt
    run gpc-score -t --column=2 p.npy y.txt
    assert_success
    assert_output --regexp '^0 3 0 -0\.231049060186648[0-9]*$'
    run gpc-score p.npy y.txt
    assert_failure 3
    assert_output --partial "p.npy"
}

@test "gpc-score is deterministic" {
    gpc-score pred.txt lab.txt > a.txt
    gpc-score pred.txt lab.txt > b.txt
    assert_files_equal a.txt b.txt
}

# ---- input errors (status 3) -------------------------------------------------------------------

@test "gpc-score: missing files are status 3" {
    run gpc-score nosuch.txt lab.txt
    assert_failure 3
    assert_output --partial "gpc-score: nosuch.txt"
    run gpc-score pred.txt nosuch.txt
    assert_failure 3
    assert_output --partial "gpc-score: nosuch.txt"
}

@test "gpc-score: unreadable file is status 3" {
    cp pred.txt locked.txt
    chmod 000 locked.txt
    run without_dac_override gpc-score locked.txt lab.txt
    assert_failure 3
    assert_output --partial "locked.txt"
}

@test "gpc-score: empty predictions or labels are status 3" {
    : > E.txt
    run gpc-score E.txt lab.txt
    assert_failure 3
    assert_output --partial "E.txt"
    assert_output --partial "empty"
    run gpc-score pred.txt E.txt
    assert_failure 3
    assert_output --partial "E.txt"
    run gpc-score - lab.txt < /dev/null
    assert_failure 3
    assert_output --partial "<stdin>"
}

@test "gpc-score: ragged, non-numeric, NaN, Inf predictions are status 3 with file:line" {
    printf '0.9 1\n0.2\n0.6 1\n0.5 1\n' > R.txt
    run gpc-score R.txt lab.txt
    assert_failure 3
    assert_output --partial "gpc-score: R.txt:2: expected 2 columns, found 1"
    printf '0.9\n0.2\nhigh\n0.5\n' > B.txt
    run gpc-score B.txt lab.txt
    assert_failure 3
    assert_output --partial "B.txt:3"
    assert_output --partial "high"
    printf '0.9\nnan\n0.6\n0.5\n' > N.txt
    run gpc-score N.txt lab.txt
    assert_failure 3
    assert_output --partial "N.txt:2"
    printf '0.9\n0.2\n0.6\ninf\n' > I.txt
    run gpc-score I.txt lab.txt
    assert_failure 3
    assert_output --partial "I.txt:4"
}

@test "gpc-score: a probability outside [0,1] is status 3 naming the file and row" {
    printf '0.9\n1.5\n0.6\n0.5\n' > P.txt
    run gpc-score P.txt lab.txt
    assert_failure 3
    assert_output --regexp 'gpc-score: P\.txt(:2|: row 2)'
    assert_output --partial "1.5"
    printf '0.9\n0.2\n-0.1\n0.5\n' > Q.txt
    run gpc-score Q.txt lab.txt
    assert_failure 3
    assert_output --regexp 'Q\.txt(:3|: row 3)'
}

@test "gpc-score: an out-of-range probability after a comment names its line" {
    printf '# predictions\n0.9\n1.5\n0.6\n0.5\n' > P.txt
    run gpc-score P.txt lab.txt
    assert_failure 3
    assert_output --regexp 'P\.txt(:3|: row 2)'
}

@test "gpc-score: labels of a third class are status 3 naming the classes" {
    printf -- '1\n-1\n2\n1\n' > L.txt
    run gpc-score pred.txt L.txt
    assert_failure 3
    assert_output --partial "gpc-score: L.txt: 3 classes (-1 1 2): multiclass"
    printf '1\n0\n-1\n1\n' > M.txt
    run gpc-score pred.txt M.txt
    assert_failure 3
    assert_output --partial "M.txt: 3 classes (-1 0 1)"
    printf '1\n0\nnan\n1\n' > N.txt
    run gpc-score pred.txt N.txt
    assert_failure 3
    assert_output --partial "N.txt: 3 classes (0 1 nan)"
}

@test "gpc-score: label count different from prediction rows is status 3" {
    head -n 3 lab.txt > l3.txt
    run gpc-score pred.txt l3.txt
    assert_failure 3
    assert_output --partial "l3.txt has 3 labels but pred.txt has 4 rows"
}

@test "gpc-score: a column beyond the width is status 3" {
    run gpc-score --column=3 pred.txt lab.txt
    assert_failure 3
    assert_output --partial "pred.txt"
    assert_output --partial "no column 3"
}

@test "gpc-score: truncated .npy predictions are status 3" {
    { npy_header '<f8' '(4,)'; f8 1 0 0.5; } > T.npy
    run gpc-score T.npy lab.txt
    assert_failure 3
    assert_output --partial "T.npy"
    assert_output --partial "truncated"
}

# ---- usage errors (status 2) ---------------------------------------------------------------------

@test "gpc-score: unknown option is status 2" {
    run gpc-score --auc pred.txt lab.txt
    assert_failure 2
    assert_output --partial "auc"
    assert_output --partial "Try 'gpc-score --help'"
}

@test "gpc-score: wrong number of files is status 2" {
    run gpc-score pred.txt
    assert_failure 2
    run gpc-score pred.txt lab.txt lab.txt
    assert_failure 2
}

@test "gpc-score: bad --column is status 2" {
    for bad in 0 -1 two 1.5 ""; do
        run gpc-score --column="$bad" pred.txt lab.txt
        [ "$status" -eq 2 ] || fail "--column='$bad' gave status $status: $output"
    done
}

@test "gpc-score: predictions and labels both on stdin is status 2" {
    run gpc-score - - < pred.txt
    assert_failure 2
    assert_output --partial "standard input"
}

# ---- output errors --------------------------------------------------------------------------------

@test "gpc-score: write error on standard output (/dev/full) is status 3" {
    run bash -c "gpc-score pred.txt lab.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
    run bash -c "gpc-score -t pred.txt lab.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
}
