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
    # Brier: mean of (p - o)^2 with o = 1 for y = +1
    BRIER=$(awk 'BEGIN { printf "%.17g", (0.1^2 + 0.2^2 + 0.6^2 + 0.5^2) / 4 }')
}

@test "gpc-score --help lists every option and exits 0" {
    check_help gpc-score model column table quiet verbose help version
    check_help_covers_source gpc-score
}

@test "gpc-score --version prints name, package and version" {
    check_version gpc-score
}

# ---- values ------------------------------------------------------------------------------

@test "gpc-score: hand-made case gives 1 error of 4, the exact mean log probability and Brier score" {
    run --separate-stderr gpc-score pred.txt lab.txt
    assert_success
    assert_output "errors 1 of 4 (25.0%), mean log predictive probability $(printf '%.4f' "$MLPP"), Brier score $(printf '%.4f' "$BRIER")"
    assert_output "errors 1 of 4 (25.0%), mean log predictive probability -0.4845, Brier score 0.1650"
}

@test "gpc-score -t prints errors, cases, rate, mlpp and Brier score as numbers" {
    run --separate-stderr gpc-score -t pred.txt lab.txt
    assert_success
    read -r e n r m b <<< "$output"
    assert_equal "$e $n $r" "1 4 0.25"
    echo "$m $b" > got.txt
    echo "$MLPP $BRIER" > want.txt
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
    assert_output --regexp '^0 2 0 -0\.287682072451780[0-9]* 0\.0625$'
    printf -- '-1\n1\n' > yw.txt
    run gpc-score -t p.txt yw.txt
    assert_output --regexp '^2 2 1 -1\.386294361119890[0-9]* 0\.5625$'
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
    assert_output --regexp '^0 3 0 -0\.231049060186648[0-9]* 0\.083333333333333[0-9]*$'
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
    assert_output --regexp '^0 3 0 -0\.231049060186648[0-9]* 0\.083333333333333[0-9]*$'
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

@test "gpc-score: labels of a third class against one probability column are status 3" {
    printf -- '1\n-1\n2\n1\n' > L.txt
    run gpc-score pred.txt L.txt
    assert_failure 3
    assert_output --partial "gpc-score: pred.txt has 2 columns, too few for the class probabilities from column 1"
    printf '0.5 0.2 0.2\n0.2 0.6 0.2\n0.2 0.2 0.6\n0.4 0.3 0.3\n' > p3.txt
    run gpc-score p3.txt L.txt
    assert_failure 3
    assert_output --partial "gpc-score: p3.txt: row 1: the 3 class probabilities from column 1 sum to 0.9, not 1"
    printf '0.9\n0.2\n0.6\n0.5\n' > p1.txt
    printf '1\n0\n-1\n1\n' > M.txt
    run gpc-score p1.txt M.txt
    assert_failure 3
    assert_output --partial "gpc-score: p1.txt has 1 columns, too few for the class probabilities from column 1"
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
    assert_output --partial "pred.txt has 2 columns, too few for p(y=+1|x) from column 3"
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

# ---- multiclass --------------------------------------------------------------------------

@test "gpc-score: multiclass hand-made case: errors, mean log probability, Brier score, confusion" {
    # classes 3 5 7 (numbers sort by value); the third row's argmax is a tie
    # of classes 5 and 7, which goes to the first (5)
    printf '0.7 0.2 0.1\n0.1 0.3 0.6\n0.2 0.4 0.4\n0.5 0.25 0.25\n' > p3.txt
    printf '3\n7\n7\n5\n' > y3.txt
    run --separate-stderr gpc-score -t p3.txt y3.txt
    assert_success
    read -r e n r m b <<< "$output"
    assert_equal "$e $n $r" "2 4 0.5"
    awk 'BEGIN { m = (log(0.7) + log(0.6) + log(0.4) + log(0.25)) / 4
                 b = 0.3^2 + 0.2^2 + 0.1^2 + 0.1^2 + 0.3^2 + 0.4^2
                 b += 0.2^2 + 0.4^2 + 0.6^2 + 0.5^2 + 0.75^2 + 0.25^2
                 printf "%.17g %.17g\n", m, b / 4 }' > want.txt
    echo "$m $b" > got.txt
    assert_matrices_close got.txt want.txt 1e-15
    run --separate-stderr gpc-score -c p3.txt y3.txt
    assert_success
    assert_line --index 0 --partial "errors 2 of 4 (50.0%)"
    assert_line --index 1 '# true\predicted 3 5 7'
    assert_line --index 2 '3 1 0 0'
    assert_line --index 3 '5 1 0 0'
    assert_line --index 4 '7 0 1 1'
}

@test "gpc-score: with two classes the Brier score is half the multiclass sum" {
    # the same predictions as one p(+1) column and as two class columns of a
    # two-class softmax model: the binary score is (p - o)^2, the sum over
    # both classes twice that
    printf '0.9\n0.2\n0.6\n0.45\n' > p1.txt
    run --separate-stderr gpc-score -t p1.txt lab.txt
    read -r e n r m b <<< "$output"
    awk '{ print 1 - $1, $1 }' p1.txt > p2.txt
    printf 'gpc-model 1\nmethod laplace\nlikelihood softmax\nclasses -1 1\nkernel bias\ndim 1\nhyperparameters 1\nlog_bias 0\nfit none\nlog_evidence -1\ntraining 2\n1 0 0 0\n2 0 0 1\n' > m2.txt
    run --separate-stderr gpc-score -t -m m2.txt p2.txt lab.txt
    assert_success
    read -r e2 n2 r2 m2 b2 <<< "$output"
    assert_equal "$e2 $n2 $r2" "$e $n $r"
    echo "$m2 $b2" > got.txt
    echo "$m $(awk -v b="$b" 'BEGIN { printf "%.17g", 2 * b }')" > want.txt
    assert_matrices_close got.txt want.txt 1e-15
}

@test "gpc-score -m: a multiclass test set without one of the model's classes" {
    printf 'gpc-model 1\nmethod laplace\nlikelihood softmax\nclasses setosa versicolor virginica\nkernel bias\ndim 1\nhyperparameters 1\nlog_bias 0\nfit none\nlog_evidence -1\ntraining 3\n1 0 0 0 0\n2 0 0 0 1\n3 0 0 0 2\n' > m3.txt
    printf '0.8 0.1 0.1\n0.1 0.1 0.8\n' > p.txt
    printf 'setosa\nvirginica\n' > y.txt
    run --separate-stderr gpc-score -c -m m3.txt p.txt y.txt
    assert_success
    assert_line --index 0 --partial "errors 0 of 2 (0.0%)"
    assert_line --index 1 '# true\predicted setosa versicolor virginica'
    assert_line --index 3 'versicolor 0 0 0'
    printf 'setosa\nsetosa\n' > y1.txt
    run gpc-score -m m3.txt p.txt y1.txt
    assert_success
    printf 'setosa\nrose\n' > yb.txt
    run gpc-score -m m3.txt p.txt yb.txt
    assert_failure 3
    assert_output --partial "yb.txt:2:"
}

@test "gpc-score: the header line of multiclass predictions names the classes and their first column" {
    # gpc-predict -c mean,p of a model of classes a b c; the test set has no b
    printf '# mean.a mean.b mean.c p.a p.b p.c\n' > p.txt
    printf '0 0 0 0.8 0.15 0.05\n0 0 0 0.1 0.3 0.6\n0 0 0 0.2 0.5 0.3\n' >> p.txt
    printf 'a\nc\nc\n' > y.txt
    run --separate-stderr gpc-score -t -c p.txt y.txt
    assert_success
    read -r e n r m b <<< "${lines[0]}"
    assert_equal "$e $n $r" "1 3 0.33333333333333331"
    assert_line --index 1 '# true\predicted a b c'
    assert_line --index 2 'a 1 0 0'
    assert_line --index 3 'b 0 0 0'
    assert_line --index 4 'c 0 1 1'
    awk 'BEGIN { printf "%.17g\n", (log(0.8) + log(0.6) + log(0.3)) / 3 }' > want.txt
    echo "$m" > got.txt
    assert_matrices_close got.txt want.txt 1e-15
    # --column overrides where the header says they start (mean columns are not probabilities)
    run gpc-score --column=1 p.txt y.txt
    assert_failure 3
    assert_output --partial "p.txt: row 1: the 3 class probabilities from column 1 sum to 0"
    # a label the header does not name
    printf 'a\nd\nc\n' > yd.txt
    run gpc-score p.txt yd.txt
    assert_failure 3
    assert_output --partial "yd.txt:2:"
    # without the header, two classes are binary: column 1 is read as p(c)
    grep -v '^#' p.txt > bare.txt
    run gpc-score bare.txt y.txt
    assert_success
    assert_output --partial "errors 2 of 3"
}
