#!/usr/bin/env bats
# LIBSVM's sparse format ("label index:value ...") as an input: the same
# results as the dense text files it was converted from, labels taken from
# it, short test files padded, and its errors.

load test_helper

setup() {
    require_tools gpc-fit gpc-predict gpc-score gpc-evidence gpc-hmc gpc-scale gpc-kernel
    common_setup
}

# to_svm Y X: the labels and inputs as LIBSVM lines, zeros left out (so the
# file is sparse), the other values as written in X.
to_svm() {
    paste -d' ' "$1" "$2" |
        awk '{ printf "%s", $1; for (i = 2; i <= NF; i++) if ($i != 0) printf " %d:%s", i - 1, $i; printf "\n" }'
}

# to_svm0 Y X: the same numbered from 0, as scikit-learn's dump_svmlight_file
# writes by default.
to_svm0() {
    paste -d' ' "$1" "$2" |
        awk '{ printf "%s", $1; for (i = 2; i <= NF; i++) if ($i != 0) printf " %d:%s", i - 2, $i; printf "\n" }'
}

# The same rows written by scikit-learn (tests/cli/data/pima0.py).
copy_sklearn() {
    cp "$REPO/tests/cli/data/pima-train0.svm" train0.svm
    cp "$REPO/tests/cli/data/pima-test0.svm" test0.svm
}

# The fixtures' first 40 training and 20 test rows of Pima, raw (npreg is 0
# for some women, so some lines have no 1:).
make_svm() {
    to_svm y.txt X.txt > train.svm
    to_svm yt.txt Xt.txt > test.svm
    [ "$(wc -l < train.svm)" -eq 40 ] || fail "train.svm: $(wc -l < train.svm) lines"
    [ "$(grep -vc ' 1:' train.svm)" -gt 0 ] || fail "train.svm has no zero left out"
}

@test "libsvm: a sparse file reads as the dense matrix it came from" {
    make_svm
    # gpc-scale with identity statistics writes its input back as read
    run gpc-scale -r id7.txt -o out/dense.txt X.txt
    assert_success
    run gpc-scale -r id7.txt -o out/sparse.txt train.svm
    assert_success
    assert_files_equal out/sparse.txt out/dense.txt
}

@test "libsvm: fit | predict | score on .svm files equals the dense text files" {
    make_svm
    gpc-fit -q -k ard X.txt y.txt | gpc-predict -m - Xt.txt | gpc-score - yt.txt > dense.txt
    run --separate-stderr bash -o pipefail -c \
        'gpc-fit -q -k ard train.svm | gpc-predict -m - test.svm | gpc-score - test.svm'
    assert_success
    [ -n "$output" ] || fail "no score"
    [ "$output" = "$(cat dense.txt)" ] || fail "sparse: $output / dense: $(cat dense.txt)"
}

@test "libsvm: the model from the .svm file alone is the model from X Y, by file or stdin" {
    make_svm
    gpc-fit -q -O none -m dense.m X.txt y.txt
    run gpc-fit -q -O none -m out/file.m train.svm
    assert_success
    assert_files_equal out/file.m dense.m
    run bash -c 'gpc-fit -q -O none -m out/stdin.m - < train.svm'
    assert_success
    assert_files_equal out/stdin.m dense.m
    # the .svm file as labels Y: its first tokens
    run gpc-fit -q -O none -m out/twice.m train.svm train.svm
    assert_success
    assert_files_equal out/twice.m dense.m
}

@test "libsvm: gpc-evidence and gpc-hmc take the .svm file alone" {
    make_svm
    gpc-evidence -q X.txt y.txt > dense.txt
    run --separate-stderr gpc-evidence -q train.svm
    assert_success
    [ "$output" = "$(cat dense.txt)" ] || fail "evidence: $output vs $(cat dense.txt)"
    run --separate-stderr bash -c 'gpc-evidence -q - < train.svm'
    assert_success
    [ "$output" = "$(cat dense.txt)" ] || fail "evidence from stdin: $output"
    gpc-hmc -q -n 3 -L 3 -o dense.chain X.txt y.txt
    run gpc-hmc -q -n 3 -L 3 -o out/sparse.chain train.svm
    assert_success
    assert_files_equal out/sparse.chain dense.chain
}

@test "libsvm: a test file whose largest index is smaller is padded with zero columns" {
    make_svm
    # the test inputs with age (column 7) 0: its LIBSVM lines stop at index 6
    awk '{ $7 = 0; print }' Xt.txt > Xt0.txt
    to_svm yt.txt Xt0.txt > short.svm
    ! grep -q ' 7:' short.svm || fail "short.svm has index 7"
    gpc-fit -q -O none -m m.txt train.svm
    gpc-predict -m m.txt Xt0.txt > dense.txt
    run gpc-predict -m m.txt -o out/p.txt short.svm
    assert_success
    assert_files_equal out/p.txt dense.txt
    # a dense file one column short is still an error
    cut -d' ' -f1-6 Xt.txt > Xt6.txt
    run gpc-predict -m m.txt -o out/p6.txt Xt6.txt
    assert_failure 3
    assert_output "gpc-predict: Xt6.txt: has 6 columns, but the model's inputs has 7"
    [ ! -e out/p6.txt ] || fail "out/p6.txt written"
}

@test "libsvm: a test file with an index past the model's columns is an error" {
    make_svm
    gpc-fit -q -O none -m m.txt train.svm
    sed '3s/$/ 9:1/' test.svm > wide.svm
    run gpc-predict -m m.txt -o out/p.txt wide.svm
    assert_failure 3
    assert_output "gpc-predict: wide.svm: its largest index is 9, but the model's inputs has 7 columns; leave out the features past index 7, which the fit never saw"
    assert_dir_empty out
}

@test "libsvm: an index past 2^20, the most columns a matrix has, is status 3 with file:line" {
    printf '1 1:1 1048577:3\n-1 2:1\n' > w.svm
    run gpc-fit -q -O none -m out/m.txt w.svm
    assert_failure 3
    assert_output "gpc-fit: w.svm:1: index 1048577 is beyond the 1048576 columns gpc can hold (inputs are held densely, a column for every index up to the largest); renumber the features that occur as 1, 2, 3, ..."
    run gpc-scale -o out/z.txt w.svm
    assert_failure 3
    assert_output --partial "w.svm:1: index 1048577 is beyond the 1048576 columns"
    assert_dir_empty out
    # the limit itself is read, and is the one gpc-formats(5) states
    printf '1 1:1 1048576:3\n-1 2:1\n' > edge.svm
    run gpc-scale -q -o out/z.txt edge.svm
    assert_success
    grep -qF '2\(ha20 = 1\|048\|576 columns' "$REPO/man/gpc-formats.5" ||
        fail "gpc-formats(5) does not state the limit"
}

@test "libsvm: a bad line stops gpc-fit with file:line and no model" {
    make_svm
    sed '5s/ 2:/ 0:/' train.svm > zero.svm
    run gpc-fit -q --one-based -m out/m.txt zero.svm
    assert_failure 3
    assert_output --partial "gpc-fit: zero.svm:5: '0:"
    assert_output --partial "index 0 in a file read as numbered from 1 (--one-based); leave the option out, or give --zero-based, to read index 0 as the first column"
    sed '7s/^\([^ ]*\) /\1 qid:2 /' train.svm > qid.svm
    run gpc-fit -q -m out/m.txt -P out/p.txt qid.svm
    assert_failure 3
    assert_output "gpc-fit: qid.svm:7: 'qid:2': qid marks ranking data (SVMrank), and gpc classifies; remove the qid:N tokens, e.g. with sed 's/ qid:[^ ]*//'"
    sed '9s/.*/1 0.5 0.25/' train.svm > mixed.svm
    run gpc-fit -q -m out/m.txt mixed.svm
    assert_failure 3
    assert_output "gpc-fit: mixed.svm:9: '0.5' is not index:value: a line of plain numbers, but line 1 is LIBSVM 'label index:value ...'; write every line in one format"
    sed '4s/ 3:[^ ]* 4:/ 4:3 3:/' train.svm > order.svm
    run gpc-fit -q -m out/m.txt order.svm
    assert_failure 3
    assert_output --partial "gpc-fit: order.svm:4: index 3 after index 4; indices must be strictly ascending"
    assert_dir_empty out
}

@test "libsvm: a bad .svm test file stops gpc-predict and gpc-score with file:line" {
    make_svm
    gpc-fit -q -O none -m m.txt train.svm
    sed '6s/ 2:[^ ]*/ 2:nan/' test.svm > nan.svm
    run gpc-predict -m m.txt -o out/p.txt nan.svm
    assert_failure 3
    assert_output --partial "gpc-predict: nan.svm:6: '2:nan': the value is not a finite number"
    gpc-predict -m m.txt test.svm > p.txt
    sed '2s/^[^ ]*/1:0/' test.svm > nolabel.svm
    run gpc-score p.txt nolabel.svm
    assert_failure 3
    assert_output --partial "gpc-score: nolabel.svm:2: the line starts with '1:0', not a label"
    assert_dir_empty out
}

@test "libsvm: scikit-learn's zero-based files fit and predict byte for byte as the one-based files" {
    make_svm
    copy_sklearn
    grep -q '^# Column indices are zero-based' train0.svm || fail "not scikit-learn's file"
    grep -q ' 0:' train0.svm || fail "train0.svm has no index 0"
    # the fixture holds the numbers of X.txt and y.txt, numbered from 0
    grep -v '^#' train0.svm > data0.svm
    to_svm0 y.txt X.txt > hand0.svm
    assert_files_equal data0.svm hand0.svm
    # read as the dense matrix, index 0 the first column
    gpc-scale -r id7.txt -o dense.txt X.txt
    run gpc-scale -r id7.txt -o out/zero.txt train0.svm
    assert_success
    assert_files_equal out/zero.txt dense.txt
    # fit, predict, score
    gpc-fit -q -k ard -m one.m train.svm
    gpc-predict -m one.m test.svm > one.p
    gpc-score one.p test.svm > one.s
    run gpc-fit -q -k ard -m out/zero.m train0.svm
    assert_success
    run gpc-predict -m out/zero.m -o out/zero.p test0.svm
    assert_success
    assert_files_equal out/zero.p one.p
    run --separate-stderr gpc-score out/zero.p test0.svm
    assert_success
    [ "$output" = "$(cat one.s)" ] || fail "score: $output vs $(cat one.s)"
    # the models differ only in the line that records the numbering
    run diff one.m out/zero.m
    assert_failure 1
    [ "$(grep '^[<>]' <<< "$output")" = "> libsvm zero-based" ] || fail "models differ: $output"
}

@test "libsvm: a file written now by scikit-learn, if installed, reads as the fixture" {
    make_svm
    copy_sklearn
    # the conversion by hand is always checked; scikit-learn's own writer
    # too where Debian's python3-sklearn is installed
    to_svm0 y.txt X.txt > fresh.svm
    if /usr/bin/python3 -c 'import sklearn' 2> /dev/null; then
        /usr/bin/python3 -c 'import sys, numpy as np
from sklearn.datasets import dump_svmlight_file
dump_svmlight_file(np.loadtxt("X.txt"), np.loadtxt("y.txt"), "fresh.svm")'
    fi
    gpc-fit -q -O none -m zero.m train0.svm
    run gpc-fit -q -O none -m out/fresh.m fresh.svm
    assert_success
    assert_files_equal out/fresh.m zero.m
}

@test "libsvm: a model fitted zero-based reads its test files zero-based, index 0 or not" {
    make_svm
    copy_sklearn
    gpc-fit -q -O none -m zero.m train0.svm
    gpc-fit -q -O none -m one.m train.svm
    # npreg (index 0) 0 for every test case: no index 0 is left to show the
    # numbering, which the model supplies
    sed 's/ 0:[^ ]*//' test0.svm > no0.svm
    ! grep -q ' 0:' no0.svm || fail "no0.svm has index 0"
    awk '{ $1 = 0; print }' Xt.txt > Xt0.txt
    gpc-predict -m zero.m Xt0.txt > dense.p
    run gpc-predict -m zero.m -o out/no0.p no0.svm
    assert_success
    assert_files_equal out/no0.p dense.p
    # a model fitted one-based needs to be told
    run gpc-predict -m one.m --zero-based -o out/one0.p no0.svm
    assert_success
    gpc-predict -m one.m Xt0.txt > dense1.p
    assert_files_equal out/one0.p dense1.p
    # an option overrides the model: a one-based test file under the
    # zero-based model
    run gpc-predict -m zero.m -o out/p.txt test.svm
    assert_failure 3
    assert_output "gpc-predict: test.svm: its largest index is 7, but the model's inputs has 7 columns; leave out the features past index 6, which the fit never saw (indices read as numbered from 0; --one-based reads them from 1)"
    [ ! -e out/p.txt ] || fail "out/p.txt written"
    gpc-predict -m zero.m Xt.txt > dense.p
    run gpc-predict -m zero.m --one-based -o out/one.p test.svm
    assert_success
    assert_files_equal out/one.p dense.p
}

@test "libsvm: a one-based file without index 0 reads as before; --zero-based shifts it" {
    make_svm
    gpc-scale -r id7.txt -o dense.txt X.txt
    run gpc-scale -r id7.txt -o out/auto.txt train.svm
    assert_success
    assert_files_equal out/auto.txt dense.txt
    run gpc-scale -r id7.txt -o out/one.txt --one-based train.svm
    assert_success
    assert_files_equal out/one.txt dense.txt
    # numbered from 0, the same file has an empty first column and 8 in all
    printf '0 0 0 0 0 0 0 0\n1 1 1 1 1 1 1 1\n' > id8.txt
    awk '{ print 0, $0 }' X.txt > X8.txt
    gpc-scale -r id8.txt -o dense8.txt X8.txt
    run gpc-scale -r id8.txt -o out/zero.txt --zero-based train.svm
    assert_success
    assert_files_equal out/zero.txt dense8.txt
}

@test "libsvm: gpc-evidence, gpc-hmc and gpc-cv take the zero-based file as the one-based one" {
    make_svm
    copy_sklearn
    gpc-evidence -q train.svm > one.txt
    run --separate-stderr gpc-evidence -q train0.svm
    assert_success
    [ "$output" = "$(cat one.txt)" ] || fail "evidence: $output vs $(cat one.txt)"
    gpc-hmc -q -n 3 -L 3 -o one.chain train.svm
    run gpc-hmc -q -n 3 -L 3 -o out/zero.chain train0.svm
    assert_success
    assert_files_equal out/zero.chain one.chain
    gpc-cv -K 2 -o one.cv train.svm -- -O none
    run gpc-cv -K 2 -o out/zero.cv train0.svm -- -O none
    assert_success
    assert_files_equal out/zero.cv one.cv
}

@test "libsvm: --one-based refuses index 0, and contradicts --zero-based" {
    copy_sklearn
    run gpc-fit -q --one-based -m out/m.txt train0.svm
    assert_failure 3
    assert_output "gpc-fit: train0.svm:5: '0:5': index 0 in a file read as numbered from 1 (--one-based); leave the option out, or give --zero-based, to read index 0 as the first column"
    run gpc-score --one-based train0.svm train0.svm
    assert_failure 3
    assert_output --partial "train0.svm:5: '0:5': index 0"
    local tool
    for tool in gpc-fit gpc-predict gpc-evidence gpc-hmc gpc-cv gpc-scale gpc-kernel gpc-score gpc-folds; do
        run "$tool" --zero-based --one-based train0.svm
        assert_failure 2
        assert_output --partial "$tool: --zero-based and --one-based contradict each other; give one"
        run "$tool" --help
        assert_output --partial "--zero-based"
        assert_output --partial "--one-based"
    done
    assert_dir_empty out
}

@test "libsvm: X alone must be a LIBSVM file (usage error otherwise)" {
    run gpc-fit -q -m out/m.txt X.txt
    assert_failure 2
    assert_output --partial "gpc-fit: X.txt is not a LIBSVM file ('label index:value ...'), so the labels are needed too: give X Y"
    run bash -c 'gpc-evidence -q - < X.txt'
    assert_failure 2
    assert_output --partial "gpc-evidence: <stdin> is not a LIBSVM file"
    run gpc-fit -q -m out/m.txt
    assert_failure 2
    assert_output --partial "expected two files, the inputs X and the labels Y (or a LIBSVM file X alone, whose lines start with the labels)"
    assert_dir_empty out
}

@test "libsvm: --help says Y may be left out" {
    local tool
    for tool in gpc-fit gpc-evidence gpc-hmc; do
        run "$tool" --help
        assert_success
        assert_output --partial "X [Y]"
        assert_output --partial "LIBSVM"
    done
}

@test "libsvm: gpc-kernel reads XS numbered as X when X is zero-based" {
    make_svm
    copy_sklearn
    sed 's/ 0:[^ ]*//' test0.svm > no0.svm
    awk '{ $1 = 0; print }' Xt.txt > Xt0.txt
    gpc-kernel -k ard -p 0,-5,-5,-5,-5,-5,-5,-5 -o dense.txt X.txt Xt0.txt
    run gpc-kernel -k ard -p 0,-5,-5,-5,-5,-5,-5,-5 -o out/k.txt train0.svm no0.svm
    assert_success
    assert_files_equal out/k.txt dense.txt
}
