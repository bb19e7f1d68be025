#!/usr/bin/env bats
# One CSV of inputs and target, as pandas' df.to_csv(index=False) writes it:
# --label-column takes the labels from it, and the same file predicts.

load test_helper

setup() {
    require_tools gpc-fit gpc-predict gpc-score gpc-cv gpc-folds gpc-evidence
    common_setup
    # the fixture as one CSV: two named inputs and a word target between them
    paste -d' ' Xz.txt y.txt | awk 'BEGIN { print "x1,target,x2" }
        { printf "%s,%s,%s\n", $1, ($NF > 0 ? "yes" : "no"), $2 }' > d.csv
    awk '{ print $1, $2 }' Xz.txt > X2.txt
    awk '{ print ($1 > 0) ? "yes" : "no" }' y.txt > yw.txt
}

@test "labelcolumn: by name or number the fit equals that of separate inputs and labels" {
    gpc-fit -q -O none -k se -m out/a.txt --label-column=target d.csv
    gpc-fit -q -O none -k se -m out/b.txt --label-column=2 d.csv
    cut -d, -f1,3 d.csv > x.csv
    gpc-fit -q -O none -k se -m out/c.txt x.csv yw.txt
    assert_files_equal out/a.txt out/c.txt
    assert_files_equal out/b.txt out/c.txt
    run grep -x 'columns x1 x2' out/a.txt
    assert_success
}

@test "labelcolumn: the same CSV predicts, its label column left out by name, words back" {
    gpc-fit -q -O none -k se -m out/a.txt --label-column=target d.csv
    gpc-predict -m out/a.txt d.csv > p.txt
    cut -d, -f1,3 d.csv > x.csv
    gpc-predict -m out/a.txt x.csv > q.txt
    assert_files_equal p.txt q.txt
    gpc-predict -m out/a.txt -c label d.csv | grep -v '^#' > l.txt
    wrong=$(paste l.txt yw.txt | awk '$1 != $2' | wc -l)
    assert_equal "$(gpc-score -t p.txt yw.txt | cut -d' ' -f1)" "$wrong"
}

@test "labelcolumn: unnamed inputs drop the label column by number; a width one too many names the option" {
    paste -d' ' Xz.txt | awk '{ print $1, ($NF > 0 ? 1 : 0), $2 }' > d.txt
    awk '{ print $1, $2 }' Xz.txt > x.txt
    gpc-fit -q -O none -k se -m out/a.txt --label-column=2 d.txt
    gpc-predict -m out/a.txt --label-column=2 d.txt > p.txt
    gpc-predict -m out/a.txt x.txt > q.txt
    assert_files_equal p.txt q.txt
    run gpc-predict -m out/a.txt d.txt
    assert_failure 3
    assert_output --partial "give --label-column=N"
}

@test "labelcolumn: gpc-cv, gpc-evidence and gpc-folds take it too" {
    run --separate-stderr gpc-cv -q -K 3 --label-column=target d.csv
    assert_success
    echo "$output" > cv.txt
    run gpc-score cv.txt yw.txt
    assert_success
    run gpc-evidence -q -k se --label-column=target d.csv
    assert_success
    gpc-folds -K 3 --label-column=target d.csv > f1.txt
    gpc-folds -K 3 yw.txt > f2.txt
    assert_files_equal f1.txt f2.txt
}

@test "labelcolumn: errors name the file and what to do, status 2 or 3, no output" {
    run gpc-fit -q -m out/m.txt --label-column=nope d.csv
    assert_failure 3
    assert_output "gpc-fit: d.csv: --label-column=nope: no column has that name (the columns are x1, target, x2)"
    run gpc-fit -q -m out/m.txt --label-column=4 d.csv
    assert_failure 3
    assert_output "gpc-fit: d.csv:2: --label-column=4, but the file has 3 columns"
    sed '5s/,yes,/,,/; 5s/,no,/,,/' d.csv > gap.csv
    run gpc-fit -q -m out/m.txt --label-column=target gap.csv
    assert_failure 3
    assert_output --partial "gap.csv:5: the label (column 2, target) is empty"
    run gpc-fit -q -m out/m.txt --label-column=target d.csv yw.txt
    assert_failure 2
    assert_output --partial "give X alone, without a labels file"
    run gpc-cv -q --label-column=target d.csv yw.txt
    assert_failure 2
    run gpc-folds --label-column=target -s 1 -t f.txt d.csv
    assert_failure 2
    assert_dir_empty out
}

@test "labelcolumn: a one-word header above word labels is found without --header" {
    { echo class; cat yw.txt; } > yh.txt
    run --separate-stderr gpc-fit -O none -k se -m out/m.txt X2.txt yh.txt
    assert_success
    [[ "$stderr" == *"'class' is taken as the column's name (pass --no-header if it is a label)"* ]]
    run grep -x 'classes no yes' out/m.txt
    assert_success
}
