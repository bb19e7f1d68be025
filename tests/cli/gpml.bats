#!/usr/bin/env bats
# gpc-evidence's Laplace approximation against GPML 4.2 (infLaplace, meanZero)
# on data/pima: the log evidence and every gradient component, for the ard,
# matern32ard and matern52ard kernels with the logistic and probit
# likelihoods, at three hyperparameter settings each.  The reference values
# and how they were made: tests/ref/gpml/README.

load test_helper

REF="$REPO/tests/ref/gpml"
# Relative tolerance on every number.  The agreement measured is 6e-13 at
# worst (gradient components of the 'iso' setting, sums with cancellation)
# and 1e-14 typically; the margin is for other BLAS builds and thread counts.
TOL=1e-11

setup() {
    require_tools gpc-evidence
    common_setup
}

# GPML's hyp.cov (log ell_1..log ell_D, log sf) as gpc's -p list
# (log_v0 = 2 log sf, then log_w_l = -2 log ell_l), every digit kept.
gpml_params() {
    awk '$1 == "hyp.cov" { printf "%.17g", 2 * $NF
                           for (i = 2; i < NF; i++) printf ",%.17g", -2 * $i
                           print ""; found = 1 }
         END { exit !found }' "$1"
}

# GPML's numbers as gpc's output row: log evidence = -nlZ, then the gradient
# in log_v0 (= -dnlZ/dlog sf / 2) and log_w_l (= dnlZ/dlog ell_l / 2).
gpml_expected() {
    awk '$1 == "nlZ" { z = -$2; nz++ }
         $1 == "dnlZ.cov" { g = sprintf("%.17g", -$NF / 2)
                            for (i = 2; i < NF; i++) g = g sprintf(" %.17g", $i / 2); ng++ }
         END { if (nz != 1 || ng != 1) exit 1; printf "%.17g %s\n", z, g }' "$1"
}

# Row-by-row relative agreement, |a - b| <= tol * max(|a|, |b|), with the
# first entry that fails named (1 is the log evidence, then the gradient).
assert_rows_close() {
    run awk -v tol="$3" '
        function abs(x) { return x < 0 ? -x : x }
        NR == FNR { n = NF; for (j = 1; j <= NF; j++) a[j] = $j; next }
        { if (NF != n) { print "gpc gives " n " numbers, GPML " NF; bad = 1; exit 1 }
          for (j = 1; j <= NF; j++) {
              s = abs(a[j]) > abs($j) ? abs(a[j]) : abs($j)
              if (abs(a[j] - $j) > tol * s) {
                  printf "entry %d: gpc %.17g, GPML %.17g (relative %.3g > %g)\n", j, a[j], $j,
                         abs(a[j] - $j) / s, tol
                  bad = 1; exit 1 } } }
        END { if (!bad && FNR != 1) { print "GPML row missing"; exit 1 } }' "$1" "$2"
    assert_success
}

# One stored case: its kernel and likelihood from the file, gpc-evidence at
# the converted hyperparameters on the full training set, compared.
check_case() {
    local ref="$1" tol="$2" kernel lik params
    kernel="$(awk '$1 == "kernel" { print $2 }' "$ref")"
    lik="$(awk '$1 == "likelihood" { print $2 }' "$ref")"
    [ -n "$kernel" ] && [ -n "$lik" ] || { fail "$ref: no kernel or likelihood line"; return 1; }
    run gpml_params "$ref"
    assert_success || return 1
    params="$output"
    run gpml_expected "$ref"
    assert_success || return 1
    printf '%s\n' "$output" > gpml.txt
    run gpc-evidence -q -k "$kernel" -l "$lik" -p "$params" "$DATA/X-train.txt" "$DATA/y-train.txt"
    assert_success || return 1
    printf '%s\n' "$output" > gpc.txt
    assert_rows_close gpc.txt gpml.txt "$tol" || fail "$ref: gpc-evidence -k $kernel -l $lik -p $params"
}

check_all() {
    local kernel="$1" lik="$2" setting n=0
    for setting in iso scaled varied; do
        check_case "$REF/laplace_pima_${kernel}_${lik}_${setting}.txt" "$TOL" || return 1
        n=$((n + 1))
    done
    [ "$n" -eq 3 ]
}

@test "gpml: the reference holds 18 cases, each with 8 hyperparameters and 8 gradient entries" {
    run bash -c "ls '$REF'/laplace_pima_*.txt | wc -l"
    assert_success
    assert_output 18
    for f in "$REF"/laplace_pima_*.txt; do
        run awk '$1 == "hyp.cov" { h = NF - 1 } $1 == "dnlZ.cov" { g = NF - 1 }
                 END { exit !(h == 8 && g == 8) }' "$f"
        assert_success
    done
}

@test "gpml: ard, logistic: log evidence and gradient agree with GPML" {
    check_all ard logistic
}

@test "gpml: ard, probit: log evidence and gradient agree with GPML" {
    check_all ard probit
}

@test "gpml: matern32ard, logistic: log evidence and gradient agree with GPML" {
    check_all matern32ard logistic
}

@test "gpml: matern32ard, probit: log evidence and gradient agree with GPML" {
    check_all matern32ard probit
}

@test "gpml: matern52ard, logistic: log evidence and gradient agree with GPML" {
    check_all matern52ard logistic
}

@test "gpml: matern52ard, probit: log evidence and gradient agree with GPML" {
    check_all matern52ard probit
}

# The comparison can fail: one gradient entry of a stored case moved by one
# part in 1e9 (far below what a wrong formula would give) is caught, and so
# is the log evidence moved the same way.
@test "gpml: a reference value perturbed by 1e-9 relative is rejected" {
    local ref="$REF/laplace_pima_matern52ard_logistic_scaled.txt"
    awk '$1 == "dnlZ.cov" { $4 = sprintf("%.17g", $4 * (1 + 1e-9)) } { print }' "$ref" > bad.txt
    run ! cmp -s "$ref" bad.txt
    run check_case bad.txt "$TOL"
    assert_failure
    assert_output --partial "entry 5:"
    awk '$1 == "nlZ" { $2 = sprintf("%.17g", $2 * (1 + 1e-9)) } { print }' "$ref" > bad2.txt
    run check_case bad2.txt "$TOL"
    assert_failure
    assert_output --partial "entry 1:"
    run check_case "$ref" "$TOL"
    assert_success
}
