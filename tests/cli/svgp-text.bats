#!/usr/bin/env bats
# A minibatch fit (-M svgp --batch) of text inputs: read once, a line at a
# time, into a scratch file of doubles and then a batch at a time, so that
# memory does not grow with the number of cases; the model is the one the
# same numbers give as .npy files, byte for byte, whether X is whitespace
# text, CSV with a header or standard input; bad text is refused as the
# whole-file reader refuses it, naming the file and line, with no model.

load test_helper

setup() {
    require_tools gpc-fit gpc-scale
    common_setup
    binary_data 500 11
    printf '0 0 0\n1 1 1\n' > id3.txt
    gpc-scale -r id3.txt -F npy -o Xb.npy Xb.txt
    mkdir tmp
    export TMPDIR="$PWD/tmp"
}

fit() {
    gpc-fit -q -M svgp --inducing 12 --batch 50 --epochs 2 "$@"
}

@test "svgp-text: text X gives the .npy file's model byte for byte, and leaves nothing in TMPDIR" {
    run fit -m npy.txt Xb.npy yb.txt
    assert_success
    run fit -m text.txt Xb.txt yb.txt
    assert_success
    assert_files_equal npy.txt text.txt
    assert_dir_empty tmp
}

@test "svgp-text: CSV with a header gives the same model, its columns named in it and in the kernel" {
    fit -m npy.txt Xb.npy yb.txt
    { echo 'a,b,"c d"'; tr ' ' , < Xb.txt; } > Xb.csv
    run fit -m csv.txt Xb.csv yb.txt
    assert_success
    assert_equal "$(grep '^columns' csv.txt)" "columns a b c%20d"
    grep -v '^columns' csv.txt > csv-nocols.txt
    assert_files_equal npy.txt csv-nocols.txt
    # the spec and --fix may name the columns, as when X was read whole
    run fit -k 'ard@a,b' --fix=log_w.a -P p.txt -m named.txt Xb.csv yb.txt
    assert_success
    assert_equal "$(awk '$1 == "log_w.a" { print $2 }' p.txt)" -2
    assert_equal "$(awk 'END { print NR }' p.txt)" 3
}

@test "svgp-text: X from standard input, text or .npy, through a pipe or a redirection" {
    fit -m text.txt Xb.txt yb.txt
    run fit -m a.txt - yb.txt < Xb.txt
    assert_success
    assert_files_equal text.txt a.txt
    run bash -c 'cat Xb.txt | gpc-fit -q -M svgp --inducing 12 --batch 50 --epochs 2 -m b.txt - yb.txt'
    assert_success
    assert_files_equal text.txt b.txt
    # what only the whole-file reader reads is given to it whole, from the start
    run bash -c 'cat Xb.npy | gpc-fit -q -M svgp --inducing 12 --batch 50 --epochs 2 -m c.txt - yb.txt'
    assert_success
    assert_files_equal text.txt c.txt
    # a LIBSVM file whose first cases are labels alone shows at its first pair
    { echo '+1'; echo '-1'; awk '{ printf "%s 1:%s 3:%s\n", ($1 > 0 ? "+1" : "-1"), $1, $3 }' Xb.txt; } |
        head -n 500 > z.svm
    run fit -m svm.txt z.svm yb.txt
    assert_success
    run bash -c 'cat z.svm | gpc-fit -q -M svgp --inducing 12 --batch 50 --epochs 2 -m svm-pipe.txt - yb.txt'
    assert_success
    assert_files_equal svm.txt svm-pipe.txt
    { echo '# made by awk'; echo; cat Xb.txt; } > commented.txt
    run bash -c 'gpc-fit -q -M svgp --inducing 12 --batch 50 --epochs 2 -m d.txt - yb.txt < commented.txt'
    assert_success
    assert_files_equal text.txt d.txt
    assert_dir_empty tmp
}

@test "svgp-text: a bad number on line k is refused naming the file and line k, with no model" {
    awk 'NR == 137 { $2 = "0.5x" } { print }' Xb.txt > bad.txt
    run gpc-fit -M svgp --batch 50 --epochs 2 -m out/m.txt bad.txt yb.txt
    assert_failure 3
    assert_output --partial "bad.txt:137: '0.5x' is not a number"
    assert_dir_empty out
    assert_dir_empty tmp
    awk 'NR == 250 { $3 = "1e999" } { print }' Xb.txt > inf.txt
    run gpc-fit -M svgp --batch 50 --epochs 2 -m out/m.txt - yb.txt < inf.txt
    assert_failure 3
    assert_output --partial "<stdin>:250: non-finite value '1e999'"
    assert_dir_empty out
    { echo 'a,b,c'; tr ' ' , < Xb.txt | awk 'NR == 40 { $0 = $0 "," } { print }'; } > hole.csv
    run gpc-fit -M svgp --batch 50 --epochs 2 -m out/m.txt hole.csv yb.txt
    assert_failure 3
    assert_output --partial "hole.csv:41: expected 3 columns, found 4"
    assert_dir_empty out
}

@test "svgp-text: an empty file, rows of unequal widths and too few rows for the labels are refused" {
    : > empty.txt
    run gpc-fit -M svgp --batch 50 -m out/m.txt empty.txt yb.txt
    assert_failure 3
    assert_output --partial "empty.txt: empty input, no rows"
    printf '# only a comment\n\n' > comments.txt
    run gpc-fit -M svgp --batch 50 -m out/m.txt comments.txt yb.txt
    assert_failure 3
    assert_output --partial "comments.txt: empty input, no rows"
    awk 'NR == 300 { $4 = "1" } { print }' Xb.txt > ragged.txt
    run gpc-fit -M svgp --batch 50 -m out/m.txt ragged.txt yb.txt
    assert_failure 3
    assert_output --partial "ragged.txt:300: expected 3 columns, found 4"
    head -n 499 Xb.txt > short.txt
    run gpc-fit -M svgp --batch 50 -m out/m.txt short.txt yb.txt
    assert_failure 3
    assert_output --partial "yb.txt has 500 labels but short.txt has 499 rows"
    assert_dir_empty out
    assert_dir_empty tmp
}

@test "svgp-text: a scratch directory that cannot be written is named, with what to do" {
    run env TMPDIR="$PWD/none" gpc-fit -M svgp --batch 50 -m out/m.txt Xb.txt yb.txt
    assert_failure 3
    assert_output --partial "cannot make a scratch file in $PWD/none"
    assert_output --partial "set TMPDIR"
    assert_dir_empty out
}

@test "svgp-text: peak memory does not grow with the number of text rows (200000 against 20000)" {
    local n peak
    for n in 20000 200000; do
        awk -v n="$n" 'BEGIN { srand(7)
            for (i = 0; i < n; i++) {
                a = 2 * rand() - 1; b = 2 * rand() - 1; c = rand(); d = rand()
                printf "%.6f %.6f %.6f %.6f\n", a, b, c, d > "X.txt"
                print (a * b > 0 ? 1 : 0) > "y.txt" } }'
        run /usr/bin/time -f 'peak %M' gpc-fit -q -M svgp --batch 256 --epochs 1 --inducing 20 \
            -m m.txt X.txt y.txt
        assert_success
        peak[$n]="$(awk '$1 == "peak" { print $2 }' <<< "$output")"
    done
    # read whole, the 180000 more rows would take some 18 MB more
    (( peak[200000] <= peak[20000] + 2048 )) ||
        fail "peak RSS ${peak[200000]} KB at 200000 rows, ${peak[20000]} KB at 20000"
}

@test "svgp-text: text labels read a line at a time give the classes, their order and the model that labels read whole give" {
    fit -m text.txt Xb.txt yb.txt
    # labels on standard input are read whole
    run fit -m whole.txt Xb.txt - < yb.txt
    assert_success
    assert_files_equal text.txt whole.txt
    # words under a header word, CRLF line ends
    { echo 'outcome'; awk '{ print ($1 > 0 ? "yes" : "no") }' yb.txt; } | sed 's/$/\r/' > yw.txt
    run gpc-fit -M svgp --inducing 12 --batch 50 --epochs 2 -m words.txt Xb.txt yw.txt
    assert_success
    assert_output --partial "yw.txt:1: 'outcome' is taken as the column's name"
    run fit -m words-whole.txt Xb.txt - < yw.txt
    assert_success
    assert_files_equal words.txt words-whole.txt
    assert_equal "$(grep '^classes' words.txt)" "classes no yes"
    # three classes spelt as numbers in several ways: the multinomial probit
    awk 'NR % 5 == 0 { print "2.0"; next } NR % 3 == 0 { print "+1"; next } { print ($1 > 0 ? 1 : 0) }' \
        yb.txt > y3.txt
    run gpc-fit -q -M svgp --inducing 8 --batch 50 --epochs 1 -m three.txt Xb.txt y3.txt
    assert_success
    gpc-fit -q -M svgp --inducing 8 --batch 50 --epochs 1 -m three-whole.txt Xb.txt - < y3.txt
    assert_files_equal three.txt three-whole.txt
    assert_equal "$(model_value three.txt likelihood)" mprobit
    assert_equal "$(grep '^classes' three.txt)" "classes 0 1 2.0"
    # one class of a fixed coding: the other is known
    yes 1 | head -n 500 > y1.txt
    run fit -m one.txt Xb.txt y1.txt
    assert_success
    fit -m one-whole.txt Xb.txt - < y1.txt
    assert_files_equal one.txt one-whole.txt
    assert_dir_empty tmp
}

@test "svgp-text: bad labels are refused in the whole-file reader's words, with no model" {
    awk 'NR == 77 { print ""; next } { print }' yb.txt > blank.txt
    run gpc-fit -M svgp --batch 50 -m out/m.txt Xb.txt blank.txt
    assert_failure 3
    assert_output --partial "blank.txt:77: blank line"
    seq 1 500 > ids.txt
    run gpc-fit -M svgp --batch 50 -m out/m.txt Xb.txt ids.txt
    assert_failure 3
    assert_output --partial "ids.txt: 500 classes for 500 cases"
    yes maybe | head -n 500 > one.txt
    run gpc-fit -M svgp --batch 50 -m out/m.txt Xb.txt one.txt
    assert_failure 3
    assert_output --partial "every one of the 500 labels is 'maybe'"
    head -n 400 yb.txt > short.txt
    run gpc-fit -M svgp --batch 50 -m out/m.txt Xb.txt short.txt
    assert_failure 3
    assert_output --partial "short.txt has 400 labels but Xb.txt has 500 rows"
    assert_dir_empty out
    assert_dir_empty tmp
}
