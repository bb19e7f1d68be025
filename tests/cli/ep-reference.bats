#!/usr/bin/env bats
# gpc-evidence -M ep against an independent reference: tests/ref/ep_reference.py,
# binary EP with the probit likelihood written from Rasmussen & Williams
# (Alg. 3.5, eq. 3.65) in plain numpy, sharing no code with src/lib/methods/ep.c.
# It runs under Debian's /usr/bin/python3 with python3-numpy (installed by
# scripts/deps.sh); the tests are skipped only if those are missing.

load test_helper

PY=/usr/bin/python3

setup() {
    require_tools gpc-scale gpc-evidence
    common_setup
    REF="$REPO/tests/ref/ep_reference.py"
}

require_numpy() {
    [ -x "$PY" ] || skip "no $PY (apt-get install python3-numpy)"
    "$PY" -c 'import numpy' 2>/dev/null || skip "no numpy for $PY (apt-get install python3-numpy)"
}

# gpc_ep X Y V0 W1 ... WD: gpc-evidence -M ep at these hyperparameters, given
# by name so that the order cannot silently differ from the reference's.
gpc_ep() {
    local x="$1" y="$2" p="log_v0=$3" j=1 w
    shift 3
    for w in "$@"; do
        p="$p,log_w$j=$w"
        j=$((j + 1))
    done
    gpc-evidence -q -M ep -k ard -p "$p" -n "$x" "$y"
}

# assert_rel_close A B TOL: |A - B| <= TOL * max(|A|, |B|), with both values
# in the message otherwise.
assert_rel_close() {
    awk -v a="$1" -v b="$2" -v tol="$3" 'BEGIN {
        if (a == "" || b == "") exit 1
        d = a - b; if (d < 0) d = -d
        s = (a < 0 ? -a : a); t = (b < 0 ? -b : b); if (t > s) s = t
        exit !(d <= tol * s) }' ||
        fail "$(printf 'not within %s relative: %s vs %s' "$3" "$1" "$2")"
}

@test "gpc-evidence -M ep agrees with the numpy EP reference on standardised Pima" {
    require_numpy
    gpc-scale -q -s stats.txt "$DATA/X-train.txt" > Xp.txt
    # Observed (200 cases, 7 inputs, both at full convergence): relative
    # differences 7e-16, 1.5e-15 and 3e-16 for the three vectors below, i.e.
    # agreement to the last digit or two; 1e-6 leaves room for other BLAS.
    local theta
    for theta in "0 -2 -2 -2 -2 -2 -2 -2" \
                 "1.5 -1 -3 -2.5 -4 -1.5 -0.5 -3.5" \
                 "3 0 0 0 0 0 0 0"; do
        # shellcheck disable=SC2086
        want=$("$PY" "$REF" Xp.txt "$DATA/y-train.txt" $theta)
        # shellcheck disable=SC2086
        got=$(gpc_ep Xp.txt "$DATA/y-train.txt" $theta)
        assert_rel_close "$want" "$got" 1e-6
    done
}

@test "one case: EP is exact and both give log Phi(0) = log 1/2 for either label" {
    require_numpy
    # The cavity of the single site is the prior N(0, v0), so the tilted
    # normaliser is Phi(0) whatever v0, w and y; the other terms of the EP
    # evidence must cancel exactly.
    printf '0.3 -1.2\n' > X1.txt
    local y theta half
    half=$(awk 'BEGIN { printf "%.17g", log(0.5) }')
    for y in 1 -1; do
        echo "$y" > y1.txt
        for theta in "0 0 0" "2.5 -1 1" "-4 0 0"; do
            # shellcheck disable=SC2086
            ref=$("$PY" "$REF" X1.txt y1.txt $theta)
            assert_rel_close "$ref" "$half" 1e-12
            # shellcheck disable=SC2086
            got=$(gpc_ep X1.txt y1.txt $theta)
            assert_rel_close "$got" "$half" 1e-12
        done
    done
}
