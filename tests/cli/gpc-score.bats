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

@test "gpc-score --precise -t prints errors, cases, rate, mlpp and Brier score as numbers" {
    run --separate-stderr gpc-score --precise -t pred.txt lab.txt
    assert_success
    read -r e n r m b <<< "$output"
    assert_equal "$e $n $r" "1 4 0.25"
    echo "$m $b" > got.txt
    echo "$MLPP $BRIER" > want.txt
    assert_matrices_close got.txt want.txt 1e-15
}

@test "gpc-score -t: four decimals for people, the same numbers as the line; --precise every digit" {
    run --separate-stderr gpc-score -t pred.txt lab.txt
    assert_success
    assert_output "1 4 0.2500 $(printf '%.4f %.4f' "$MLPP" "$BRIER")"
    assert_output "1 4 0.2500 -0.4845 0.1650"
    run --separate-stderr gpc-score -a -t --bins=2 pred.txt lab.txt
    assert_success
    assert_output --regexp '^1 4 0\.2500 -0\.4845 0\.1650 [01]\.[0-9]{4} [01]\.[0-9]{4}$'
    run --separate-stderr gpc-score --precise -t pred.txt lab.txt
    read -r e n r m b <<< "$output"
    [ "${#m}" -ge 17 ] || fail "--precise printed $m"
    run --separate-stderr gpc-score -r --bins=4 pred.txt lab.txt
    assert_success
    assert_line --index 2 --regexp '^0 0\.25 (nan|[01]\.[0-9]{4}) (nan|[01]\.[0-9]{4}) [0-9]+$'
}

@test "gpc-score: labels coded 0/1 give the same result" {
    gpc-score --precise -t pred.txt lab.txt > a.txt
    gpc-score --precise -t pred.txt lab01.txt > b.txt
    assert_files_equal a.txt b.txt
}

@test "gpc-score: all right and all wrong" {
    printf '0.75\n0.25\n' > p.txt
    printf -- '1\n-1\n' > y.txt
    run gpc-score --precise -t p.txt y.txt
    assert_success
    assert_output --regexp '^0 2 0 -0\.287682072451780[0-9]* 0\.0625$'
    printf -- '-1\n1\n' > yw.txt
    run gpc-score --precise -t p.txt yw.txt
    assert_output --regexp '^2 2 1 -1\.386294361119890[0-9]* 0\.5625$'
}

@test "gpc-score --column picks the probability column" {
    awk '{ print 7, $1 }' pred.txt > pred2.txt
    gpc-score --precise -t pred.txt lab.txt > a.txt
    gpc-score --precise -t --column 2 pred2.txt lab.txt > b.txt
    gpc-score --precise -t --column=2 pred2.txt lab.txt > c.txt
    assert_files_equal a.txt b.txt
    assert_files_equal a.txt c.txt
}

@test "gpc-score: comments and blank lines in the prediction file are skipped" {
    { echo "# p other"; sed -n 1,2p pred.txt; echo; sed -n 3,4p pred.txt; } > pc.txt
    gpc-score --precise -t pred.txt lab.txt > a.txt
    gpc-score --precise -t pc.txt lab.txt > b.txt
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
    run gpc-score --precise -t p.npy y.npy
    assert_success
    assert_output --regexp '^0 3 0 -0\.231049060186648[0-9]* 0\.083333333333333[0-9]*$'
    gpc-score --precise -t p.txt y.txt > a.txt
    gpc-score --precise -t p.npy y.txt > b.txt
    cat p.npy | gpc-score --precise -t - y.npy > c.txt
    assert_files_equal a.txt b.txt
    assert_files_equal a.txt c.txt
}

@test "gpc-score reads a 2-D .npy prediction file, column by column" {
    { npy_header '<f8' '(3, 2)'; f8 2 1 2 0 2 0.5; } > p.npy
    printf -- '1\n-1\n1\n' > y.txt
    run gpc-score --precise -t --column=2 p.npy y.txt
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

@test "gpc-score: a probability just above 1 is shown to the last digit, so the message says why" {
    printf '0.9\n1.0000001\n0.6\n0.5\n' > P.txt
    run gpc-score P.txt lab.txt
    assert_failure 3
    assert_output "gpc-score: P.txt: row 2: 1.0000001000000001 is not a probability"
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
    run bash -c "gpc-score --precise -t pred.txt lab.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
}

# ---- multiclass --------------------------------------------------------------------------

@test "gpc-score: multiclass hand-made case: errors, mean log probability, Brier score, confusion" {
    # classes 3 5 7 (numbers sort by value); the third row's argmax is a tie
    # of classes 5 and 7, which goes to the first (5)
    printf '0.7 0.2 0.1\n0.1 0.3 0.6\n0.2 0.4 0.4\n0.5 0.25 0.25\n' > p3.txt
    printf '3\n7\n7\n5\n' > y3.txt
    run --separate-stderr gpc-score --precise -t p3.txt y3.txt
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
    # the same predictions as one p(+1) column and as two class columns
    # named by a header: the binary score is (p - o)^2, the sum over
    # both classes twice that
    printf '0.9\n0.2\n0.6\n0.45\n' > p1.txt
    run --separate-stderr gpc-score --precise -t p1.txt lab.txt
    read -r e n r m b <<< "$output"
    { echo '# p.-1 p.1'; awk '{ print 1 - $1, $1 }' p1.txt; } > p2.txt
    run --separate-stderr gpc-score --precise -t p2.txt lab.txt
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
    run --separate-stderr gpc-score --precise -t -c p.txt y.txt
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

# ---- AUC, calibration, reliability table -----------------------------------------------------
# The setup's case: p 0.9 0.2 0.6 0.5 for y + - - +.
#   AUC: positives {0.9, 0.5} against negatives {0.2, 0.6}: 0.9 beats both,
#     0.5 beats 0.2 only: 3 of 4 pairs, 0.75.
#   ECE, 10 bins: every case alone in its bin: (|0.9-1| + |0.2-0| + |0.6-0| + |0.5-1|) / 4
#     = 1.4 / 4 = 0.35.  3 bins: {0.2} {0.6, 0.5} {0.9}: (0.2 + 2 |0.55 - 0.5| + 0.1) / 4 = 0.1.
#     1 bin: |mean p - mean o| = |2.2/4 - 2/4| = 0.05.
# Case A (tie.txt, ytie.txt): p 0.9 0.7 0.7 0.3 0.1 for y + + - - +.
#   Brier (0.01 + 0.09 + 0.49 + 0.09 + 0.81) / 5 = 0.298.
#   AUC: 0.9 beats both negatives (2), 0.7 ties 0.7 and beats 0.3 (1.5), 0.1 none: 3.5 / 6.
#   2 bins: [0, 0.5) {0.3, 0.1}: mean 0.2, observed 1/2, count 2;
#           [0.5, 1] {0.9, 0.7, 0.7}: mean 2.3/3, observed 2/3, count 3;
#           ECE 2/5 * 0.3 + 3/5 * 0.1 = 0.18.
#   5 bins: {0.1} {0.3} {} {0.7, 0.7} {0.9}: ECE (0.9 + 0.3 + 0.4 + 0.1) / 5 = 0.34.

make_tie_case() {
    printf '0.9\n0.7\n0.7\n0.3\n0.1\n' > tie.txt
    printf -- '1\n1\n-1\n-1\n1\n' > ytie.txt
}

# Fields 6 and 7 of a -a -t line against the wanted AUC and ECE.
assert_auc_ece() {
    read -r e n r m b auc ece extra <<< "$1"
    [ -z "$extra" ] || fail "more than 7 fields: $1"
    echo "$auc $ece" > got.txt
    echo "$2 $3" > want.txt
    assert_matrices_close got.txt want.txt 1e-14
}

@test "gpc-score --help names --all, --bins and --reliability" {
    check_help gpc-score all bins reliability confusion
    run gpc-score --help
    assert_output --partial "-a, --all"
    assert_output --partial "-r, --reliability"
}

@test "gpc-score -a: binary AUC and ECE on the hand-made case, on the same line" {
    run --separate-stderr gpc-score -a pred.txt lab.txt
    assert_success
    assert_output "errors 1 of 4 (25.0%), mean log predictive probability -0.4845, Brier score 0.1650, AUC 0.7500, expected calibration error 0.3500 (10 bins)"
    [ -z "$stderr" ] || fail "stderr: $stderr"
    run --separate-stderr gpc-score --precise --all -t pred.txt lab.txt
    assert_success
    assert_auc_ece "$output" 0.75 0.35
    run --separate-stderr gpc-score --precise -a -t --bins=3 pred.txt lab.txt
    assert_success
    assert_auc_ece "$output" 0.75 0.1
    run --separate-stderr gpc-score --precise -a -t --bins 1 pred.txt lab.txt
    assert_success
    assert_auc_ece "$output" 0.75 0.05
    run --separate-stderr gpc-score -a --bins=1 pred.txt lab.txt
    assert_output --partial "expected calibration error 0.0500 (1 bin)"
}

@test "gpc-score -a: a tie counts one half in the AUC; Brier and ECE of case A" {
    make_tie_case
    run --separate-stderr gpc-score --precise -a -t --bins=2 tie.txt ytie.txt
    assert_success
    read -r e n r m b auc ece <<< "$output"
    assert_equal "$e $n" "2 5"
    echo "$b $auc $ece" > got.txt
    awk 'BEGIN { printf "%.17g %.17g %.17g\n", 0.298, 3.5 / 6, 0.18 }' > want.txt
    assert_matrices_close got.txt want.txt 1e-14
    run --separate-stderr gpc-score --precise -a -t --bins=5 tie.txt ytie.txt
    assert_success
    assert_auc_ece "$output" "$(awk 'BEGIN { printf "%.17g", 3.5 / 6 }')" 0.34
    # reversing the probabilities reverses the ranking: AUC 1 - 7/12
    awk '{ printf "%.17g\n", 1 - $1 }' tie.txt > rev.txt
    run --separate-stderr gpc-score --precise -a -t rev.txt ytie.txt
    assert_success
    read -r e n r m b auc ece <<< "$output"
    assert_close "$auc" "$(awk 'BEGIN { printf "%.17g", 2.5 / 6 }')" 1e-14
}

@test "gpc-score -a and --bins leave the five scores as they were" {
    gpc-score --precise -t pred.txt lab.txt > five.txt
    gpc-score --precise -a -t pred.txt lab.txt | cut -d ' ' -f 1-5 > first5.txt
    assert_files_equal five.txt first5.txt
    gpc-score pred.txt lab.txt > plain.txt
    gpc-score --bins=7 pred.txt lab.txt > bins.txt
    assert_files_equal plain.txt bins.txt
}

@test "gpc-score -a: AUC undefined when a class is absent, and the run still succeeds" {
    printf '1\n1\n1\n1\n' > pos.txt
    run --separate-stderr gpc-score -a pred.txt pos.txt
    assert_success
    # ECE still defined: (0.1 + 0.8 + 0.4 + 0.5) / 4 = 0.45 against all o = 1
    assert_output "errors 1 of 4 (25.0%), mean log predictive probability -0.7297, Brier score 0.2650, AUC undefined (no case of class -1), expected calibration error 0.4500 (10 bins)"
    printf '0\n0\n0\n0\n' > neg.txt
    run --separate-stderr gpc-score -a pred.txt neg.txt
    assert_success
    assert_output --partial "AUC undefined (no case of class 1),"
    # table: nan in the AUC column, said on stderr, not with -q
    run --separate-stderr gpc-score --precise -a -t pred.txt pos.txt
    assert_success
    read -r e n r m b auc ece <<< "$output"
    assert_equal "$auc" "nan"
    assert_close "$ece" 0.45 1e-14
    [[ "$stderr" == *"no case of class -1"*"AUC is undefined"* ]] || fail "stderr: $stderr"
    run --separate-stderr gpc-score -q -a -t pred.txt pos.txt
    assert_success
    [ -z "$stderr" ] || fail "-q: stderr: $stderr"
}

@test "gpc-score -a: multiclass top-label ECE, no AUC" {
    # classes 3 5 7; the top labels are 3 (0.7, right), 7 (0.6, right),
    # 5 (0.4, first of the tie, wrong: y = 7), 3 (0.5, wrong: y = 5).
    # 10 bins, every case alone: (0.3 + 0.4 + 0.4 + 0.5) / 4 = 0.4.
    # 2 bins: [0, 0.5) {0.4}: 0.4; [0.5, 1] {0.7, 0.6, 0.5}: mean 0.6,
    # accuracy 2/3: (0.4 + 3 * (2/3 - 0.6)) / 4 = 0.15.
    printf '0.7 0.2 0.1\n0.1 0.3 0.6\n0.2 0.4 0.4\n0.5 0.25 0.25\n' > p3.txt
    printf '3\n7\n7\n5\n' > y3.txt
    run --separate-stderr gpc-score -a p3.txt y3.txt
    assert_success
    assert_output --regexp '^errors 2 of 4 \(50\.0%\), .*, Brier score [0-9.]+, expected calibration error 0\.4000 \(10 bins\)$'
    refute_output --partial "AUC"
    run --separate-stderr gpc-score --precise -a -t --bins=2 p3.txt y3.txt
    assert_success
    read -r e n r m b auc ece <<< "$output"
    assert_equal "$auc" "nan"
    assert_close "$ece" 0.15 1e-14
}

@test "gpc-score -r: the reliability table, binary, with an empty bin" {
    make_tie_case
    run --separate-stderr gpc-score --precise -r --bins=2 tie.txt ytie.txt
    assert_success
    [ "${#lines[@]}" -eq 4 ] || fail "expected 4 lines, got ${#lines[@]}: $output"
    assert_line --index 0 --partial "errors 2 of 5"
    assert_line --index 1 "# lo hi mean_pred observed count"
    sed -n '3,$p' <<< "$output" > got.txt
    awk 'BEGIN { printf "0 0.5 0.2 0.5 2\n0.5 1 %.17g %.17g 3\n", 2.3 / 3, 2 / 3 }' > want.txt
    assert_matrices_close got.txt want.txt 1e-14
    run --separate-stderr gpc-score --precise --reliability --bins=5 tie.txt ytie.txt
    assert_success
    [ "${#lines[@]}" -eq 7 ] || fail "expected 7 lines, got ${#lines[@]}: $output"
    # the empty bin [0.4, 0.6): nan means, count 0
    echo "${lines[4]}" | awk '{ exit !(NF == 5 && $1 - 0.4 < 1e-15 && 0.4 - $1 < 1e-15 &&
                                        $2 - 0.6 < 1e-15 && 0.6 - $2 < 1e-15 &&
                                        $3 == "nan" && $4 == "nan" && $5 == "0") }' ||
        fail "empty bin row: ${lines[4]}"
    grep -v nan <<< "$output" | sed -n '3,$p' > got.txt
    printf '0 0.2 0.1 1 1\n0.2 0.4 0.3 0 1\n0.6 0.8 0.7 0.5 2\n0.8 1 0.9 1 1\n' > want.txt
    assert_matrices_close got.txt want.txt 1e-14
}

@test "gpc-score -r: probabilities 0 and 1 go in the first and the last bin" {
    printf '0\n1\n1\n0\n0.5\n' > p01.txt
    printf -- '-1\n1\n1\n-1\n1\n' > y01c.txt
    run --separate-stderr gpc-score --precise -r -t --bins=4 p01.txt y01c.txt
    assert_success
    assert_line --index 1 "# lo hi mean_pred observed count"
    assert_line --index 2 "0 0.25 0 0 2"
    assert_line --index 3 "0.25 0.5 nan nan 0"
    assert_line --index 4 "0.5 0.75 0.5 1 1"
    assert_line --index 5 "0.75 1 1 1 2"
}

@test "gpc-score -r: multiclass bins of the top-label probability, after the confusion matrix" {
    printf '0.7 0.2 0.1\n0.1 0.3 0.6\n0.2 0.4 0.4\n0.5 0.25 0.25\n' > p3.txt
    printf '3\n7\n7\n5\n' > y3.txt
    run --separate-stderr gpc-score --precise -c -r --bins=2 p3.txt y3.txt
    assert_success
    [ "${#lines[@]}" -eq 8 ] || fail "expected 8 lines, got ${#lines[@]}: $output"
    assert_line --index 1 '# true\predicted 3 5 7'
    assert_line --index 5 "# lo hi mean_pred observed count"
    sed -n '7,$p' <<< "$output" > got.txt
    awk 'BEGIN { printf "0 0.5 0.4 0 1\n0.5 1 0.6 %.17g 3\n", 2 / 3 }' > want.txt
    assert_matrices_close got.txt want.txt 1e-14
}

@test "gpc-score: AUC and ECE of random tied data against pair counts and bins by awk" {
    # 150 cases, p = k/20 (many ties) from a fixed LCG, y +1 with a
    # probability rising with p.  The reference: AUC over all pairs, and
    # 10 bins by integer arithmetic on k (bin floor(k/2), k = 20 in the last).
    awk 'BEGIN { s = 12345; for (i = 0; i < 150; i++) {
                     s = (s * 69069 + 1) % 4294967296; k = int(s / 65536) % 21
                     s = (s * 69069 + 1) % 4294967296; u = s / 4294967296
                     print k, (u < 0.2 + 0.03 * k) ? 1 : -1 } }' > ky.txt
    awk '{ printf "%.17g\n", $1 / 20 }' ky.txt > pr.txt
    cut -d ' ' -f 2 ky.txt > yr.txt
    awk '{ k[NR] = $1; y[NR] = $2; n = NR }
         END {
             for (i = 1; i <= n; i++) for (j = 1; j <= n; j++)
                 if (y[i] == 1 && y[j] == -1) { pairs++; w += (k[i] > k[j]) ? 1 : (k[i] == k[j]) ? 0.5 : 0 }
             for (i = 1; i <= n; i++) { b = int(k[i] / 2); if (b > 9) b = 9
                                        c[b]++; sp[b] += k[i] / 20; so[b] += (y[i] == 1) }
             for (b = 0; b < 10; b++) if (c[b]) { d = sp[b] / c[b] - so[b] / c[b]; ece += c[b] / n * (d < 0 ? -d : d) }
             printf "%.17g %.17g\n", w / pairs, ece }' ky.txt > want.txt
    run --separate-stderr gpc-score --precise -a -t pr.txt yr.txt
    assert_success
    read -r e n r m b auc ece <<< "$output"
    echo "$auc $ece" > got.txt
    assert_matrices_close got.txt want.txt 1e-12
}

@test "gpc-score: bad --bins is status 2 with a message and no output" {
    for bad in 0 -1 abc "" 1.5 1000001; do
        run --separate-stderr gpc-score -a --bins="$bad" pred.txt lab.txt
        [ "$status" -eq 2 ] || fail "--bins='$bad' gave status $status: $output"
        [ -z "$output" ] || fail "--bins='$bad' wrote to stdout: $output"
        [[ "$stderr" == *"gpc-score: option --bins: '$bad' is not a whole number from 1 to 1000000"* ]] ||
            fail "--bins='$bad': $stderr"
        [[ "$stderr" == *"Try 'gpc-score --help'"* ]] || fail "--bins='$bad': $stderr"
    done
    run --separate-stderr gpc-score --bins pred.txt lab.txt
    [ "$status" -eq 2 ] || fail "--bins without a value gave $status"
}

@test "gpc-score -a -r: stdout holds only data, messages go to stderr" {
    printf '1\n1\n1\n1\n' > pos.txt
    run --separate-stderr gpc-score --precise -a -t -r --bins=3 pred.txt pos.txt
    assert_success
    [ -n "$stderr" ] || fail "expected the undefined-AUC note on stderr"
    [ "${#lines[@]}" -eq 5 ] || fail "expected 5 lines, got ${#lines[@]}: $output"
    # every line a '#' header or numbers (nan where undefined), 7 fields then 5
    awk 'NR == 1 { if (NF != 7) exit 1 }
         NR > 1 && !/^#/ { if (NF != 5) exit 1 }
         !/^#/ { for (j = 1; j <= NF; j++) if ($j !~ /^(-?[0-9.]+(e[-+]?[0-9]+)?|nan)$/) exit 1 }' <<< "$output" ||
        fail "not data: $output"
    [ "$(grep -c '^#' <<< "$output")" -eq 1 ] || fail "one header line expected: $output"
}

@test "gpc-score -r: write error on standard output (/dev/full) is status 3" {
    run bash -c "gpc-score -a -r --bins=1000 pred.txt lab.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
}

@test "gpc-score -a -r is deterministic" {
    make_tie_case
    gpc-score -a -r -t --bins=4 tie.txt ytie.txt > a.txt
    gpc-score -a -r -t --bins=4 tie.txt ytie.txt > b.txt
    assert_files_equal a.txt b.txt
}
