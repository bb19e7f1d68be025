#!/usr/bin/env bats
# Labels of any kind: words or any two numbers make the same binary problem
# as -1/+1, and the tools speak the user's labels back.

load test_helper

P8='0.5,-1,-1,-1,-1,-1,-1,-1'

setup() {
    require_tools gpc-fit gpc-predict gpc-score
    common_setup
    # the fixture labels recoded: -1 -> no / 1 / 0, +1 -> yes / 2 / 1
    for f in y yt; do
        awk '{ print ($1 > 0) ? "yes" : "no" }' $f.txt > $f-words.txt
        awk '{ print ($1 > 0) ? 2 : 1 }' $f.txt > $f-12.txt
        awk '{ print ($1 > 0) ? 1 : 0 }' $f.txt > $f-01.txt
    done
}

# Fit on training labels $1, predict the test inputs, score against test
# labels $2; prints the score table.
fit_predict_score() {
    gpc-fit -q -O none -p "$P8" -m out/m.txt Xz.txt "$1" &&
        gpc-predict -m out/m.txt -c p Xtz.txt > out/p.txt &&
        gpc-score -t out/p.txt "$2"
}

@test "labels: yes/no, 1/2 and 0/1 give the same scores as -1/+1" {
    want=$(fit_predict_score y.txt yt.txt)
    # the reference scores all 20 test cases
    [ "$(echo "$want" | cut -d' ' -f2)" = 20 ]
    for code in words 12 01; do
        run fit_predict_score y-$code.txt yt-$code.txt
        assert_success
        assert_output "$want"
    done
}

@test "labels: the positive class is the later one, so swapping the words flips the fit" {
    awk '{ print ($1 > 0) ? "a" : "b" }' y.txt > yab.txt
    gpc-fit -q -O none -p "$P8" -m out/m1.txt Xz.txt y.txt
    gpc-fit -q -O none -p "$P8" -m out/m2.txt Xz.txt yab.txt
    gpc-predict -m out/m1.txt -c p Xtz.txt > p1.txt
    gpc-predict -m out/m2.txt -c p Xtz.txt > p2.txt
    # 'b' (the later) is positive: p2 = 1 - p1 up to rounding
    run awk '/^#/ { next } NR == FNR { p[NR] = $1; next }
             { d = $1 - (1 - p[FNR]); if (d > 1e-12 || d < -1e-12) { print FNR ": " $1; exit 1 } }' p1.txt p2.txt
    assert_success
}

@test "labels: comment lines among the labels are skipped" {
    { echo '# diabetes: yes or no'; head -n 20 y-words.txt; echo '# second half'; tail -n 20 y-words.txt; } > yc.txt
    gpc-fit -q -O none -p "$P8" -m out/m1.txt Xz.txt y-words.txt
    gpc-fit -q -O none -p "$P8" -m out/m2.txt Xz.txt yc.txt
    assert_files_equal out/m1.txt out/m2.txt
}

@test "labels: a third class with a binary likelihood is status 2 naming the classes, no output left" {
    sed '7s/.*/maybe/' y-words.txt > y3.txt
    for tool in "gpc-fit -q -O none -l probit -m out/m.txt" "gpc-evidence -q -M ep -l probit -o out/e.txt" \
                "gpc-hmc -q -n 2 -l logistic -o out/c.txt"; do
        run $tool Xz.txt y3.txt
        assert_failure 2
        assert_output --partial "the labels have 3 classes (maybe no yes), but"
        assert_output --partial "is binary; use "
    done
    assert_dir_empty out
}

@test "labels: a blank line is status 3 naming the line, no output left" {
    sed '9s/.*//' y-words.txt > yb.txt
    run gpc-fit -q -O none -m out/m.txt Xz.txt yb.txt
    assert_failure 3
    assert_output --partial "gpc-fit: yb.txt:9: blank line"
    assert_dir_empty out
}

@test "labels: one class of words is status 3; one class of -1/+1 or 0/1 is a binary problem" {
    printf 'yes\nyes\n' > w1.txt
    printf '0.9\n0.2\n' > p.txt
    run gpc-score p.txt w1.txt
    assert_failure 3
    assert_output --partial "w1.txt: every one of the 2 labels is 'yes'"
    printf '1\n1\n' > one.txt
    run gpc-score -t p.txt one.txt
    assert_success
    assert_output --partial "1 2 0.5000 "
    printf '0\n0\n' > zero.txt
    run gpc-score -t p.txt zero.txt
    assert_success
    assert_output --partial "1 2 0.5000 "
    printf -- '-1\n-1\n' > minus.txt
    run gpc-score -t p.txt minus.txt
    assert_success
    assert_output --partial "1 2 0.5000 "
    # read once, so one class works on a pipe too
    run gpc-score -t p.txt - < one.txt
    assert_success
    assert_output --partial "1 2 0.5000 "
    # training labels of one class of words are refused too
    head -n 40 Xz.txt | head -n 2 > X2.txt
    run gpc-fit -q -O none -m out/m.txt X2.txt w1.txt
    assert_failure 3
    assert_output --partial "w1.txt: every one of the 2 labels is 'yes': a classifier needs cases of at least two classes"
    assert_dir_empty out
}

@test "labels: gpc-score of words takes p as that of the later class" {
    printf '0.9\n0.2\n0.6\n' > p.txt
    printf 'yes\nno\nno\n' > w.txt
    printf 'no\nyes\nyes\n' > v.txt
    run gpc-score -t p.txt w.txt
    assert_success
    assert_output --partial "1 3 "
    run gpc-score -t p.txt v.txt
    assert_success
    assert_output --partial "2 3 "
}

# ---- models record their classes; predictions speak them -------------------------------

@test "labels: the model records its classes after the likelihood, negative first" {
    gpc-fit -q -O none -p "$P8" -m out/m.txt Xz.txt y-words.txt
    assert_equal "$(sed -n 4p out/m.txt)" "classes no yes"
    gpc-fit -q -O none -p "$P8" -m out/m.txt Xz.txt y-12.txt
    assert_equal "$(sed -n 4p out/m.txt)" "classes 1 2"
    gpc-fit -q -O none -p "$P8" -m out/m.txt Xz.txt y.txt
    assert_equal "$(sed -n 4p out/m.txt)" "classes -1 1"
}

@test "labels: a model file without the classes line reads as -1/+1 and predicts the same" {
    gpc-fit -q -O none -p "$P8" -m out/m.txt Xz.txt y.txt
    grep -v '^classes ' out/m.txt > old.txt
    ! grep -q '^classes' old.txt
    gpc-predict -m out/m.txt Xtz.txt > p1.txt
    gpc-predict -m old.txt Xtz.txt > p2.txt
    assert_files_equal p1.txt p2.txt
}

@test "labels: a classes line without two different names is status 3 with file:line" {
    gpc-fit -q -O none -p "$P8" -m out/m.txt Xz.txt y-words.txt
    for bad in 'classes yes' 'classes no yes maybe'; do
        sed "4s/.*/$bad/" out/m.txt > bad.txt
        run gpc-predict -m bad.txt Xtz.txt
        assert_failure 3
        assert_output --partial "bad.txt:4: expected 'classes NEG POS', two different class names"
    done
    sed "4s/.*/classes yes yes/" out/m.txt > bad.txt
    run gpc-predict -m bad.txt Xtz.txt
    assert_failure 3
    assert_output --partial "bad.txt:4: class 'yes' is named twice"
}

@test "labels: the label column writes numeric classes back exactly as the labels spelt them" {
    gpc-fit -q -O none -p "$P8" -m out/m.txt Xz.txt y.txt
    gpc-predict -m out/m.txt -c label Xtz.txt | grep -v '^#' > l.txt
    sed 's/^1$/+1/' y.txt > y-plus.txt
    for code in 12 01 -plus; do
        gpc-fit -q -O none -p "$P8" -m out/m$code.txt Xz.txt y$code.txt 2>/dev/null ||
            gpc-fit -q -O none -p "$P8" -m out/m$code.txt Xz.txt y-$code.txt
        gpc-predict -m out/m$code.txt -c label Xtz.txt | grep -v '^#' > l$code.txt
    done
    # both classes are predicted, so the mapping is checked both ways
    [ "$(sort -u l.txt | tr '\n' ' ')" = "-1 1 " ]
    run awk '{ print ($1 > 0) ? 2 : 1 }' l.txt
    assert_output "$(cat l12.txt)"
    run awk '{ print ($1 > 0) ? 1 : 0 }' l.txt
    assert_output "$(cat l01.txt)"
    run awk '{ print ($1 > 0) ? "+1" : -1 }' l.txt
    assert_output "$(cat l-plus.txt)"
}

@test "labels: word classes come back as words, counted wrong by paste and awk as gpc-score counts" {
    gpc-fit -q -O none -p "$P8" -m out/m.txt Xz.txt y.txt
    gpc-fit -q -O none -p "$P8" -m out/mw.txt Xz.txt y-words.txt
    gpc-predict -m out/m.txt Xtz.txt > p.txt
    gpc-predict -m out/mw.txt Xtz.txt > pw.txt
    assert_equal "$(sed -n 1p pw.txt)" "# p mean var label"
    assert_equal "$(sed -n 2p pw.txt)" "# label: -1 no, 1 yes"
    # the same numbers, the classes as words
    assert_equal "$(tail -n +3 pw.txt | sed 's/ no$/ -1/; s/ yes$/ 1/')" "$(tail -n +2 p.txt)"
    assert_equal "$(gpc-score -t pw.txt yt-words.txt)" "$(gpc-score -t p.txt yt.txt)"
    gpc-predict -m out/mw.txt -c label Xtz.txt | grep -v '^#' > lw.txt
    grep -qx yes lw.txt && grep -qx no lw.txt
    wrong=$(paste lw.txt yt-words.txt | awk '$1 != $2' | wc -l)
    assert_equal "$(gpc-score -t pw.txt yt-words.txt | cut -d' ' -f1)" "$wrong"
    # the label line only with a label column; .npy holds the numbers
    gpc-predict -m out/mw.txt -c p,var Xtz.txt > pv.txt
    assert_equal "$(cat pv.txt | grep '^#')" "# p var"
    gpc-predict -m out/mw.txt -F npy Xtz.txt > pw.npy
    gpc-predict -m out/m.txt -F npy Xtz.txt > p.npy
    assert_files_equal pw.npy p.npy
}

@test "labels: multiclass word classes come back as words; gpc-score reads them" {
    grep -v '^#' "$BATS_TEST_DIRNAME/data/iris.txt" | head -n 30 > iris.txt
    awk '{ print $2, $3, $4, $5 }' iris.txt > ix.txt
    awk '{ print $1 }' iris.txt > iw.txt
    gpc-fit -q -O none -m out/mi.txt ix.txt iw.txt
    gpc-predict -m out/mi.txt ix.txt > pi.txt
    assert_equal "$(sed -n 1p pi.txt)" "# p.setosa p.versicolor p.virginica label"
    gpc-predict -m out/mi.txt -c label ix.txt | grep -v '^#' > li.txt
    assert_equal "$(sort -u li.txt | tr '\n' ' ')" "setosa versicolor virginica "
    wrong=$(paste li.txt iw.txt | awk '$1 != $2' | wc -l)
    assert_equal "$(gpc-score -t pi.txt iw.txt | cut -d' ' -f1)" "$wrong"
}

@test "labels: gpc-score -m scores a test set of one class of words by the model's classes" {
    gpc-fit -q -O none -p "$P8" -m out/m.txt Xz.txt y-words.txt
    printf '0.9\n0.2\n' > p.txt
    printf 'yes\nyes\n' > w1.txt
    run gpc-score -t -m out/m.txt p.txt w1.txt
    assert_success
    assert_output --partial "1 2 0.5000 "
    printf 'no\nno\n' > w0.txt
    run gpc-score -t -m out/m.txt p.txt w0.txt
    assert_success
    assert_output --partial "1 2 0.5000 "
    printf 'no\nmaybe\n' > wx.txt
    run gpc-score -m out/m.txt p.txt wx.txt
    assert_failure 3
    assert_output --partial "wx.txt:2: label 'maybe' is not one of the model's classes (no yes)"
}
