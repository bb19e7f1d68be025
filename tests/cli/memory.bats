#!/usr/bin/env bats
# Problems too large for the machine: labels where most classes have one case
# (an ID column given as the labels) are refused at once, and a workspace that
# would take more memory than the process may use is refused before it is
# allocated, with the sizes and what to try, never killed for want of memory.

load test_helper

setup() {
    require_tools gpc-fit gpc-evidence gpc-hmc gpc-cv gpc-predict
    common_setup
}

# Run a command with its memory capped at about 2 GB, so that a tool that
# tried to allocate a workspace too large would fail the test rather than
# bring the out-of-memory killer onto the machine.  AddressSanitizer
# reserves terabytes of address space, so under it the cap is its own limit
# on the resident memory, past which malloc returns NULL.
capped() {
    if [ "$(cat "$REPO/bin/.flavour" 2>/dev/null)" = sanitize ]; then
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1:soft_rss_limit_mb=2000" \
            "$@"
    else
        (ulimit -v 2000000 && exec "$@")
    fi
}

# N rows of two inputs in [0, 1), the same every time.
inputs() {
    awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++) printf "%.4f %.4f\n", (i * 37 % 101) / 101, (i * 53 % 97) / 97 }'
}

# Seconds since $1 (an $EPOCHREALTIME), below $2.
assert_quick() {
    awk -v t0="$1" -v t1="$EPOCHREALTIME" -v max="$2" 'BEGIN { exit !(t1 - t0 < max) }' ||
        fail "took more than $2 s"
}

# ---- labels where most classes have one case ------------------------------------------

@test "labels: an ID column is refused at once by every tool that fits, exit 3, nothing left" {
    inputs 1500 > X1500.txt
    seq 1 1500 > id.txt
    for tool in "gpc-fit -m out/m.txt" "gpc-evidence -o out/e.txt" "gpc-hmc -o out/c.txt" \
                "gpc-cv -o out/p.txt"; do
        t0=$EPOCHREALTIME
        run -3 --separate-stderr capped $tool X1500.txt id.txt
        assert_quick "$t0" 1
        [[ "$stderr" == *"${tool%% *}: id.txt: 1500 classes for 1500 cases, and 1500 of the cases are the only one of their class"*"give the column of class labels"* ]] ||
            fail "$tool: $stderr"
    done
    # a LIBSVM file's labels too
    paste -d' ' id.txt <(awk '{ print "1:" $1, "2:" $2 }' X1500.txt) > id.svm
    run -3 --separate-stderr capped gpc-fit -m out/m.txt id.svm
    [[ "$stderr" == *"id.svm: 1500 classes for 1500 cases"* ]] || fail "$stderr"
    assert_dir_empty out
    assert_no_tmp_files
}

@test "labels: more than half of the cases alone in three or more classes is refused, half is not" {
    inputs 5 > X5.txt
    # 4 classes of 5 cases, 3 of them alone in their class: refused
    printf 'a\na\nb\nc\nd\n' > y5.txt
    run -3 --separate-stderr capped gpc-fit -q -O none -m out/m.txt X5.txt y5.txt
    assert_equal "$stderr" "gpc-fit: y5.txt: 4 classes for 5 cases, and 3 of the cases are the only one of their class: is this a column of IDs or of measurements? give the column of class labels (three or more classes with more than half of the cases alone in their class are refused)"
    assert_dir_empty out
    # 3 classes of 4 cases, 2 of them alone: fitted
    printf 'yes\nno\nmaybe\nyes\n' > y4.txt
    head -n 4 X5.txt > X4.txt
    capped gpc-fit -q -O none -m out/m.txt X4.txt y4.txt
    assert_equal "$(grep '^classes' out/m.txt)" "classes maybe no yes"
    # two classes of one case each: a binary problem, fitted
    printf -- '-1\n1\n' > y2.txt
    head -n 2 X5.txt > X2.txt
    capped gpc-fit -q -O none -m out/m2.txt X2.txt y2.txt
}

# ---- workspaces larger than the memory ------------------------------------------------

# The message of a refused multiclass workspace: program $1, method $2, the
# sizes (the needed one in unit $3, against the machine's memory or, with
# $4 "limit", what ulimit -v leaves), and what to try.
assert_refused() {
    local against="this machine's * of memory"
    [ "${4:-}" = limit ] && against="the * that the address-space limit (ulimit -v) leaves"
    # shellcheck disable=SC2053
    [[ "$stderr" == "$1: the workspace of $2 for "*" cases of 3 classes would take "*" $3, more than "$against"; use fewer cases (a random subset of them), fewer classes, or a machine with more memory" ]] ||
        fail "expected '$1: the workspace of $2 ... $3, more than $against; use fewer cases ...', got: $stderr"
}

@test "memory: a multiclass fit larger than the machine is refused before allocating, exit 3" {
    # 300000 cases of 3 classes: terabytes for every method, in n x n
    # matrices of 720 GB each, which Linux may grant one by one unbacked
    inputs 300000 > Xbig.txt
    awk 'BEGIN { for (i = 0; i < 300000; i++) print i % 3 }' > ybig.txt
    run -3 --separate-stderr gpc-fit -q -m out/m Xbig.txt ybig.txt
    assert_refused gpc-fit "multiclass Laplace" TB
    run -3 --separate-stderr gpc-fit -q -M vb -m out/m Xbig.txt ybig.txt
    assert_refused gpc-fit "variational Bayes (multinomial probit)" TB
    run -3 --separate-stderr gpc-fit -q -M ep --multiclass=ovr -m out/m Xbig.txt ybig.txt
    assert_refused gpc-fit "one-vs-rest EP" TB
    run -3 --separate-stderr gpc-evidence -q -n -o out/e Xbig.txt ybig.txt
    assert_refused gpc-evidence "multiclass Laplace" TB
    run -3 --separate-stderr gpc-hmc -q -M gibbs -o out/c Xbig.txt ybig.txt
    assert_refused gpc-hmc "the Gibbs sampler" TB
    assert_dir_empty out
    assert_no_tmp_files
}

@test "memory: under ulimit -v a multiclass problem larger than the limit is refused, exit 3" {
    if [ "$(cat "$REPO/bin/.flavour" 2>/dev/null)" = sanitize ]; then
        skip "AddressSanitizer reserves terabytes of address space: ulimit -v cannot apply"
    fi
    # the same limit lets a small multiclass fit and its predictions run
    iris_fixtures
    capped gpc-fit -q -O none -m out/iris.model X3.txt y3.txt
    capped gpc-predict -m out/iris.model -o out/iris.pred Xt3.txt
    assert_shape out/iris.pred 30 4
    rm out/iris.model out/iris.pred
    # 8000 cases of 3 classes: 2.56 GB for multiclass Laplace, 5.12 GB with
    # the gradient's scratch, past the 2 GB limit less what is mapped
    inputs 8000 > X8k.txt
    awk 'BEGIN { for (i = 0; i < 8000; i++) print i % 3 }' > y8k.txt
    local fits=("-O none:multiclass Laplace" "-O ml:multiclass Laplace"
                "-M vb:variational Bayes (multinomial probit)"
                "-M laplace --multiclass=ovr:one-vs-rest Laplace")
    for fit in "${fits[@]}"; do
        # shellcheck disable=SC2086
        run -3 --separate-stderr capped gpc-fit -q ${fit%%:*} -m out/m X8k.txt y8k.txt
        assert_refused gpc-fit "${fit#*:}" GB limit
    done
    run -3 --separate-stderr capped gpc-evidence -q -o out/e X8k.txt y8k.txt
    assert_refused gpc-evidence "multiclass Laplace" GB limit
    run -3 --separate-stderr capped gpc-hmc -q -o out/c X8k.txt y8k.txt
    assert_refused gpc-hmc "multiclass Laplace" GB limit
    run -3 --separate-stderr capped gpc-hmc -q -M gibbs -o out/c X8k.txt y8k.txt
    assert_refused gpc-hmc "the Gibbs sampler" GB limit
    # a model of 8000 cases (its mode written as zeros), refused where it
    # is loaded to predict
    { printf 'gpc-model 1\nmethod laplace\nlikelihood softmax\nclasses 0 1 2\nkernel ard\n'
      printf 'dim 2\nhyperparameters 3\nlog_v0 0\nlog_w1 -2\nlog_w2 -2\nfit none\n'
      printf 'log_evidence 0\ntraining 8000\n# y f1 f2 f3 x1..x2\n'
      paste -d' ' <(awk '{ print $1 + 1, 0, 0, 0 }' y8k.txt) X8k.txt; } > big.model
    head -n 6 X8k.txt > X6.txt
    run -3 --separate-stderr capped gpc-predict -m big.model -o out/p X6.txt
    assert_refused gpc-predict "multiclass Laplace" GB limit
    assert_dir_empty out
    assert_no_tmp_files
}

@test "memory: vb's Laplace evidence on a Cn system larger than the limit is refused before anything is fitted, exit 3" {
    if [ "$(cat "$REPO/bin/.flavour" 2>/dev/null)" = sanitize ]; then
        skip "AddressSanitizer reserves terabytes of address space: ulimit -v cannot apply"
    fi
    # 5000 cases of 3 classes: the variational fit's n x n matrices fit in
    # the 2 GB limit, the Laplace evidence's two 15000 x 15000 ones (3.6 GB) not
    inputs 5000 > X5k.txt
    awk 'BEGIN { for (i = 0; i < 5000; i++) print i % 3 }' > y5k.txt
    local t0=$EPOCHREALTIME
    run -3 --separate-stderr capped gpc-evidence -q -M vb -k se -o out/e X5k.txt y5k.txt
    assert_refused gpc-evidence "variational Bayes (multinomial probit)" GB limit
    assert_quick "$t0" 20
    assert_dir_empty out
}
