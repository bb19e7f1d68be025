#!/usr/bin/env bats
# Problems too large for the machine: labels where most classes have one case
# (an ID column given as the labels) are refused at once, and a workspace that
# would take more memory than the process may use is refused before it is
# allocated, with the sizes and what to try, never killed for want of memory.

load test_helper

setup() {
    require_tools gpc-fit gpc-evidence gpc-hmc gpc-cv
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
        [[ "$stderr" == *"${tool%% *}: id.txt: 1500 classes for 1500 cases, and 1500 of the classes have a single case"*"give the column of class labels"* ]] ||
            fail "$tool: $stderr"
    done
    # a LIBSVM file's labels too
    paste -d' ' id.txt <(awk '{ print "1:" $1, "2:" $2 }' X1500.txt) > id.svm
    run -3 --separate-stderr capped gpc-fit -m out/m.txt id.svm
    [[ "$stderr" == *"id.svm: 1500 classes for 1500 cases"* ]] || fail "$stderr"
    assert_dir_empty out
    assert_no_tmp_files
}

@test "labels: more than half of three or more classes with one case is refused, half is not" {
    inputs 6 > X6.txt
    # 3 classes, 2 with one case: refused
    printf 'a\na\na\nb\nc\n' > y5.txt
    head -n 5 X6.txt > X5.txt
    run -3 --separate-stderr capped gpc-fit -q -O none -m out/m.txt X5.txt y5.txt
    assert_equal "$stderr" "gpc-fit: y5.txt: 3 classes for 5 cases, and 2 of the classes have a single case: is this a column of IDs or of measurements? give the column of class labels (more than half of three or more classes with one case each is refused)"
    assert_dir_empty out
    # 4 classes, 2 with one case: fitted
    printf 'a\na\nd\nb\nc\nd\n' > y6.txt
    capped gpc-fit -q -O none -m out/m.txt X6.txt y6.txt
    assert_equal "$(grep '^classes' out/m.txt)" "classes a b c d"
    # two classes of one case each: a binary problem, fitted
    printf -- '-1\n1\n' > y2.txt
    head -n 2 X6.txt > X2.txt
    capped gpc-fit -q -O none -m out/m2.txt X2.txt y2.txt
}
