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
    run gpc-fit -q -m out/m.txt zero.svm
    assert_failure 3
    assert_output --partial "gpc-fit: zero.svm:5: '0:"
    assert_output --partial "index 0, but LIBSVM indices start at 1"
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
