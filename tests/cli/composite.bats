#!/usr/bin/env bats
# Composite kernels: gram terms that read a precomputed Gram matrix from the
# inputs (checked against the kernel that made the matrix, and their bad
# inputs), and terms weighted on the simplex (the printed weights against
# the model's, the gradient against finite differences, a Gibbs chain over
# them, the clause's errors).

load test_helper

HP='log_v0=0.5,log_w=-1'

setup() {
    require_tools gpc-fit gpc-predict gpc-evidence gpc-kernel gpc-hmc
    common_setup
    iris_fixtures
}

# Gtr.txt (30 x 31) and Gte.txt (30 x 31): the se kernel's Gram matrices of
# the training cases and of the test cases against them, each row led by
# the case's similarity to itself.
make_gram() {
    gpc-kernel -k se -p "$HP" X3.txt > Ktr.txt
    gpc-kernel -k se -p "$HP" --diag X3.txt > dtr.txt
    paste -d' ' dtr.txt Ktr.txt > Gtr.txt
    gpc-kernel -k se -p "$HP" Xt3.txt X3.txt > Kte.txt
    gpc-kernel -k se -p "$HP" --diag Xt3.txt > dte.txt
    paste -d' ' dte.txt Kte.txt > Gte.txt
}

@test "gram: a Gram matrix made by se predicts exactly as se does (VB and softmax Laplace)" {
    make_gram
    for m in vb softmax; do
        opt="-M vb" && [ "$m" = softmax ] && opt="-l softmax"
        gpc-fit -q $opt -O none -k se -p "$HP" -m se.txt X3.txt y3.txt
        gpc-predict -q -m se.txt Xt3.txt > p-se.txt
        gpc-fit -q $opt -O none -k gram@1-31 -p log_v=0 -m gram.txt Gtr.txt y3.txt
        gpc-predict -q -m gram.txt Gte.txt > p-gram.txt
        assert_files_equal p-se.txt p-gram.txt
        assert_equal "$(model_value se.txt log_evidence)" "$(model_value gram.txt log_evidence)"
    done
}

@test "gram: its amplitude's gradient matches finite differences, beside another term" {
    make_gram
    paste -d' ' Gtr.txt X3.txt > GX.txt
    evidence_fd GX.txt y3.txt 'gram@1-31+ard@32-35' 'log_v=-0.3' -M vb
}

@test "gram: training rows that do not fit its columns, or an asymmetric matrix, exit 3" {
    make_gram
    head -n 29 Gtr.txt > short.txt
    head -n 29 y3.txt > short-y.txt
    run --separate-stderr gpc-fit -q -M vb -k gram@1-31 -m m.txt short.txt short-y.txt
    assert_failure 3
    [[ "$stderr" == *"needs 30 training cases, not 29"* ]] || fail "stderr: $stderr"
    awk 'NR == 4 { $7 = $7 + 0.01 } { print }' Gtr.txt > asym.txt
    run --separate-stderr gpc-fit -q -M vb -k gram@1-31 -m m.txt asym.txt y3.txt
    assert_failure 3
    [[ "$stderr" == *"not symmetric: case 6 to 4"* ]] || fail "stderr: $stderr"
    [ ! -e m.txt ]
}

@test "gram: a model whose Gram block was edited is refused as gpc-fit refuses the matrix" {
    make_gram
    gpc-fit -q -M vb -O none -k gram@1-31 -m gram.txt Gtr.txt y3.txt
    # training case 4's similarity to case 6: column 7 of its 31 inputs,
    # which end each training line of the model, and of Gtr.txt's row 4
    edit() { # FILE ROW DELTA
        awk -v row="$2" -v d="$3" -v CONVFMT=%.17g -v OFMT=%.17g '
            FILENAME ~ /gram/ && /^# y/ { t = 1; print; next }
            (FILENAME !~ /gram/ || t) && !/^#/ && ++n == row { $(NF - 31 + 7) += d } { print }' "$1"
    }
    edit Gtr.txt 4 0.01 > asym.txt
    edit gram.txt 4 0.01 > asym-model.txt
    run --separate-stderr gpc-fit -q -M vb -O none -k gram@1-31 -m m.txt asym.txt y3.txt
    assert_failure 3
    fit_msg="${stderr#gpc-fit: }"
    [[ "$fit_msg" == "gram term 1: the training Gram matrix is not symmetric: case 6 to 4"* ]] ||
        fail "gpc-fit: $stderr"
    run --separate-stderr gpc-predict -m asym-model.txt -o p.txt Gte.txt
    assert_failure 3
    [[ "$stderr" == "gpc-predict: asym-model.txt: gram term 1: the training Gram matrix is not symmetric: case 6 to 4"* ]] ||
        fail "gpc-predict: $stderr"
    [[ "$stderr" == *"fit the model again"* ]] || fail "gpc-predict: $stderr"
    [ ! -e p.txt ]
    # within the fit's tolerance (1e-10 of the largest diagonal value) both read it
    edit Gtr.txt 4 1e-13 > near.txt
    edit gram.txt 4 1e-13 > near-model.txt
    ! cmp -s gram.txt near-model.txt || fail "the edit changed nothing"
    run gpc-fit -q -M vb -O none -k gram@1-31 -m m.txt near.txt y3.txt
    assert_success
    run gpc-predict -q -m near-model.txt -o p.txt Gte.txt
    assert_success
}

@test "gram: exact leave-one-out refits are refused with a reason (exit 2)" {
    make_gram
    gpc-fit -q -M vb -O none -k gram@1-31 -m gram.txt Gtr.txt y3.txt
    run --separate-stderr gpc-predict -m gram.txt --loo=exact
    assert_failure 2
    [[ "$stderr" == *"columns of a gram term cannot follow"* ]] || fail "stderr: $stderr"
}

@test "simplex: gpc-fit prints the weights, which are the exponentials of the stored log weights" {
    run --separate-stderr gpc-fit -M vb -O map -k 'se@1-2+se@3-4:simplex' -m m.txt X3.txt y3.txt
    assert_success
    line=$(printf '%s\n' "$stderr" | grep '^gpc-fit: weights: ')
    [ -n "$line" ] || fail "no weights line: $stderr"
    w1=$(model_value m.txt t1.log_weight)
    w2=$(model_value m.txt t2.log_weight)
    run awk -v a="$w1" -v b="$w2" 'BEGIN { s = exp(a) + exp(b); if (s < 1 - 1e-12 || s > 1 + 1e-12) { print s; exit 1 }
                                            printf "gpc-fit: weights: se@1-2 %.4g, se@3-4 %.4g\n", exp(a), exp(b) }'
    assert_success
    assert_equal "$line" "$output"
}

@test "simplex: the bound's and the Laplace evidence's gradients match finite differences" {
    evidence_fd X3.txt y3.txt 'se@1-2+se@3-4+jitter:simplex' 't1.log_weight=0.3,t2.log_w=-1' -M vb
    evidence_fd X3.txt y3.txt 'se@1-2+se@3-4:simplex' 't1.log_weight=-0.4' -l softmax
}

@test "simplex: a Gibbs chain samples the log weights and predicts through a vb model" {
    gpc-hmc -q -M gibbs -k 'se@1-2+se@3-4:simplex' -n 20 -o c.txt X3.txt y3.txt
    run awk '!/^#/ { print $2, $3, $4, $5; exit }' c.txt
    assert_output "t1.log_weight t1.log_w t2.log_weight t2.log_w"
    gpc-fit -q -M vb -O none -k 'se@1-2+se@3-4:simplex' -m vb.txt X3.txt y3.txt
    gpc-predict -q -m vb.txt --chain c.txt -c p Xt3.txt > p.txt
    run awk '/^#/ { next } { n++; s = $1 + $2 + $3; if (s > 1 + 1e-9 || s < 1 - 1e-9) { print "row " n ": " s; exit 1 } }
             END { if (n != 30) { print n " rows"; exit 1 } }' p.txt
    assert_success
}

@test "simplex: one weighted term, or a hyperprior that is not positive, is a usage error" {
    run --separate-stderr gpc-kernel -k 'se+jitter:simplex' X3.txt
    assert_failure 2
    [[ "$stderr" == *"simplex weights two or more terms"* ]] || fail "stderr: $stderr"
    run --separate-stderr gpc-fit -k 'se@1-2+se@3-4:simplex=0,1' -m m.txt X3.txt y3.txt
    assert_failure 2
    [[ "$stderr" == *"both positive"* ]] || fail "stderr: $stderr"
    [ ! -e m.txt ]
}

@test "simplex: terms over overlapping columns, or columns beyond the inputs, are usage errors" {
    run --separate-stderr gpc-fit -M vb -k 'se@1-3+se@3-4:simplex' -m m.txt X3.txt y3.txt
    assert_failure 2
    [[ "$stderr" == *"terms 1 and 2 both read column 3"* ]] || fail "stderr: $stderr"
    run --separate-stderr gpc-fit -M vb -k 'se@1-2+se@3-5:simplex' -m m.txt X3.txt y3.txt
    assert_failure 2
    [[ "$stderr" == *"columns run from 1 to 4"* ]] || fail "stderr: $stderr"
    [ ! -e m.txt ]
}

@test "simplex: per-class weights, one line per class, each class's summing to one" {
    run --separate-stderr gpc-fit -M vb -O map --per-class -k 'se@1-2+se@3-4:simplex' -m m.txt X3.txt y3.txt
    assert_success
    lines=$(printf '%s\n' "$stderr" | grep -c '^gpc-fit: weights of class [123]: se@1-2 [0-9.e-]*, se@3-4 [0-9.e-]*$')
    assert_equal "$lines" 3
    for c in 1 2 3; do
        run awk -v c="$c" '$1 == "t1.log_weight.c" c { a = $2 } $1 == "t2.log_weight.c" c { b = $2 }
            END { s = exp(a) + exp(b); if (s < 1 - 1e-12 || s > 1 + 1e-12) { print "class " c ": " s; exit 1 } }' m.txt
        assert_success
    done
}
