#!/usr/bin/env bats
# gpc-hmc: chains written, extended exactly, summarised; errors and exit codes.

load test_helper

setup() {
    require_tools gpc-hmc gpc-fit gpc-predict
    common_setup
    RUN=(-k se -n 6 -L 5 -q --adapt=none) # a fixed step: the format of every version
}

# Rows of a chain (lines that are neither '#' lines nor the column line).
rows() { awk '!/^#/ && !/^iteration/' "$1" | wc -l; }

@test "gpc-hmc --help lists every option and exits 0" {
    check_help gpc-hmc kernel likelihood params params-file iterations step leapfrog \
        persistence adapt target-accept prior-mean prior-sd fix seed time-limit extend summary \
        burn output verbose \
        quiet help version
    check_help_covers_source gpc-hmc
}

@test "gpc-hmc --version" {
    check_version gpc-hmc
}

@test "gpc-hmc writes the settings, the column line and one row per iteration" {
    run gpc-hmc "${RUN[@]}" -o out/c.txt Xz.txt y.txt
    assert_success
    run head -n 1 out/c.txt
    assert_output "# gpc-chain 1"
    run grep -c '^# ' out/c.txt
    assert_output 11
    run grep '^iteration' out/c.txt
    assert_output "iteration log_v0 log_w potential log_evidence accepted step"
    [ "$(rows out/c.txt)" -eq 6 ]
    run awk '!/^#/ && !/^iteration/ { print $1 }' out/c.txt
    assert_output "$(seq 1 6)"
}

@test "gpc-hmc: -o and standard output give the same chain; same seed, same chain" {
    gpc-hmc "${RUN[@]}" -o a.txt Xz.txt y.txt
    gpc-hmc "${RUN[@]}" Xz.txt y.txt > b.txt
    assert_files_equal a.txt b.txt
    gpc-hmc "${RUN[@]}" -S 2 -o c.txt Xz.txt y.txt
    run cmp -s a.txt c.txt
    assert_failure
}

@test "gpc-hmc: a chain extended by 4 equals one run of 10, byte for byte" {
    gpc-hmc -k se -L 5 -q -n 10 -o long.txt Xz.txt y.txt
    gpc-hmc -k se -L 5 -q -n 6 -o short.txt Xz.txt y.txt
    run gpc-hmc -q -x short.txt -n 4 Xz.txt y.txt
    assert_success
    assert_files_equal long.txt short.txt
}

@test "gpc-hmc: with persistent momenta the momenta are recorded and extension is exact" {
    gpc-hmc -k se -L 5 -q -a 0.5 -n 8 -o long.txt Xz.txt y.txt
    gpc-hmc -k se -L 5 -q -a 0.5 -n 5 -o short.txt Xz.txt y.txt
    gpc-hmc -q -x short.txt -n 3 -o ext.txt Xz.txt y.txt
    assert_files_equal long.txt ext.txt
    run grep '^iteration' long.txt
    assert_output --partial "step accept_prob p.log_v0 p.log_w"
}

@test "gpc-hmc --extend refuses settings options (status 2)" {
    gpc-hmc "${RUN[@]}" -o c.txt Xz.txt y.txt
    cp c.txt before.txt
    run gpc-hmc -x c.txt -e 0.2 -n 2 Xz.txt y.txt
    assert_failure 2
    assert_output --partial "--extend takes its settings"
    assert_files_equal c.txt before.txt
}

@test "gpc-hmc --extend on other data is status 3 and leaves the chain alone" {
    gpc-hmc "${RUN[@]}" -o c.txt Xz.txt y.txt
    cp c.txt before.txt
    head -n 39 Xz.txt > X39.txt
    head -n 39 y.txt > y39.txt
    run gpc-hmc -q -x c.txt -n 2 X39.txt y39.txt
    assert_failure 3
    assert_output --partial "c.txt: the chain was run on other training data"
    assert_files_equal c.txt before.txt
    assert_no_tmp_files .
}

@test "gpc-hmc: malformed chains are status 3 with file and line" {
    gpc-hmc "${RUN[@]}" -o c.txt Xz.txt y.txt
    sed '1s/.*/# gpc-chain 7/' c.txt > v.txt
    run gpc-hmc -q -x v.txt -n 1 Xz.txt y.txt
    assert_failure 3
    assert_output --partial "v.txt:1: chain file version 7"
    sed 's/^iteration log_v0/iteration log_v9/' c.txt > cols.txt
    run gpc-hmc -q -x cols.txt -n 1 Xz.txt y.txt
    assert_failure 3
    assert_output --partial "cols.txt:12: expected the columns"
    sed '14s/^2 [^ ]*/2 abc/' c.txt > num.txt
    run gpc-hmc -q -x num.txt -n 1 Xz.txt y.txt
    assert_failure 3
    assert_output --partial "num.txt:14: expected"
    sed '14s/^2 /5 /' c.txt > gap.txt
    run gpc-hmc -q -x gap.txt -n 1 Xz.txt y.txt
    assert_failure 3
    assert_output --partial "gap.txt:14: iteration 5 does not follow 1"
    run gpc-hmc -q -x X.txt -n 1 Xz.txt y.txt
    assert_failure 3
    assert_output --partial "X.txt:1: not a gpc chain file"
}

@test "gpc-hmc --fix keeps a hyperparameter at its start, says so in the chain, extends exactly" {
    gpc-hmc -k se -L 5 -q -n 8 --adapt=2 -p log_v0=0.5 --fix=log_v0 -o long.txt Xz.txt y.txt
    run grep -c '^# fixed log_v0$' long.txt
    assert_output 1
    run awk '!/^#/ && !/^iteration/ { print $2 }' long.txt
    assert_output "$(yes 0.5 | head -n 8)"
    # log_w moves
    run awk '!/^#/ && !/^iteration/ { w[$3] = 1 } END { n = 0; for (k in w) n++; print (n > 1) }' long.txt
    assert_output 1
    gpc-hmc -k se -L 5 -q -n 5 --adapt=2 -p log_v0=0.5 --fix=log_v0 -o short.txt Xz.txt y.txt
    gpc-hmc -q -x short.txt -n 3 Xz.txt y.txt
    assert_files_equal long.txt short.txt
    # the summary has no mixing figures for a constant column
    run gpc-hmc --summary long.txt
    assert_success
    assert_line --regexp '^log_v0 +0.5 +0 +- +-$'
}

@test "gpc-hmc --fix: unknown names and fixing all are usage errors; a bad fixed line is status 3" {
    run gpc-hmc "${RUN[@]}" --fix=log_x Xz.txt y.txt
    assert_failure 2
    assert_output --partial "--fix: kernel 'se' has no hyperparameter 'log_x'"
    run gpc-hmc "${RUN[@]}" --fix=log_w,log_v0 -o c.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "HMC has nothing to sample"
    [ ! -e c.txt ]
    gpc-hmc "${RUN[@]}" --fix=log_v0 -o c.txt Xz.txt y.txt
    run gpc-hmc -q -x c.txt -n 1 --fix=log_w Xz.txt y.txt
    assert_failure 2
    sed 's/^# fixed log_v0$/# fixed log_v9/' c.txt > bad.txt
    run gpc-hmc -q -x bad.txt -n 1 Xz.txt y.txt
    assert_failure 3
    assert_output --partial "fixed hyperparameter 'log_v9' is not one of the kernel's"
    sed 's/^# fixed log_v0$/# fixed log_w,log_v0/' c.txt > order.txt
    run gpc-hmc --summary order.txt
    assert_failure 3
    assert_output --partial "'log_v0' is out of the kernel's order"
}

@test "gpc-hmc --time-limit stops with a chain that can be extended" {
    run gpc-hmc -k se -L 5 -n 1000 -T 0.000001 -o c.txt Xz.txt y.txt
    assert_success
    assert_output --partial "time limit reached after 1 iterations"
    [ "$(rows c.txt)" -eq 1 ]
    gpc-hmc -q -x c.txt -n 2 Xz.txt y.txt
    [ "$(rows c.txt)" -eq 3 ]
}

@test "gpc-hmc --summary reports acceptance, mean, sd, ess and rhat per hyperparameter" {
    gpc-hmc -k se -L 5 -q --adapt=none -n 12 -S 1 -o a.txt Xz.txt y.txt
    gpc-hmc -k se -L 5 -q --adapt=none -n 12 -S 2 -o b.txt Xz.txt y.txt
    run gpc-hmc --summary a.txt b.txt
    assert_success
    assert_line --index 0 --partial "# 2 chains, iterations 5..12 of each (8 kept), acceptance rate"
    assert_line --index 1 --regexp '^name +mean +sd +ess +rhat$'
    assert_line --index 2 --regexp '^log_v0 '
    assert_line --index 3 --regexp '^log_w '
    assert_line --index 4 --regexp '^log_evidence '
    run gpc-hmc --summary --burn 10 a.txt
    assert_failure 3
    assert_output --partial "too few after a burn-in of 10"
}

@test "gpc-hmc --summary refuses chains of other data or settings (status 3), naming both files" {
    gpc-hmc -k se -L 5 -q --adapt=none -n 12 -S 1 -o a.txt Xz.txt y.txt
    # another seed, step and leapfrog count sample the same posterior
    gpc-hmc -k se -L 4 -e 0.05 -q --adapt=none -n 12 -S 2 -o same.txt Xz.txt y.txt
    run gpc-hmc --summary a.txt same.txt
    assert_success
    head -n 30 Xz.txt > X30.txt
    head -n 30 y.txt > y30.txt
    gpc-hmc -k se -L 5 -q --adapt=none -n 12 -o fewer.txt X30.txt y30.txt
    run gpc-hmc --summary a.txt fewer.txt
    assert_failure 3
    assert_output --partial "fewer.txt: training data '30 cases of 7 columns, hash 0x"
    assert_output --partial "differs from a.txt's '40 cases of 7 columns, hash 0x"
    assert_output --partial "the chains sample different posteriors"
    awk '{ print ($1 > 0) ? -1 : 1 }' y.txt > yflip.txt
    gpc-hmc -k se -L 5 -q --adapt=none -n 12 -o flip.txt Xz.txt yflip.txt
    run gpc-hmc --summary a.txt flip.txt
    assert_failure 3
    assert_output --partial "flip.txt: training data '40 cases of 7 columns"
    gpc-hmc -k se -L 5 -q --adapt=none -n 12 -l probit -o probit.txt Xz.txt y.txt
    run gpc-hmc --summary a.txt probit.txt
    assert_failure 3
    assert_output --partial "probit.txt: likelihood 'probit' differs from a.txt's 'logistic'"
    gpc-hmc -k se -L 5 -q --adapt=none -n 12 --prior-mean=-2 -o prior.txt Xz.txt y.txt
    run gpc-hmc --summary a.txt prior.txt
    assert_failure 3
    assert_output --partial "prior.txt: prior 'normal -2 3' differs from a.txt's 'normal -3 3'"
    gpc-hmc -k se -L 5 -q --adapt=none -n 12 --fix=log_w -o fix.txt Xz.txt y.txt
    run gpc-hmc --summary fix.txt a.txt
    assert_failure 3
    assert_output --partial "a.txt: list of fixed hyperparameters 'none' differs from fix.txt's 'log_w'"
    # the third of three is checked too, and so is a chain from standard input
    run gpc-hmc --summary a.txt same.txt - < fewer.txt
    assert_failure 3
    assert_output --partial "<stdin>: training data '30 cases"
}

@test "gpc-hmc: bad option values are status 2" {
    for bad in "-e 0" "-e -1" "-a 1" "-a -0.1" "-T -1" "--prior-sd 0" "-n x" "-L 0"; do
        run gpc-hmc $bad -o out/c.txt Xz.txt y.txt
        assert_failure 2
    done
    run gpc-hmc --summary
    assert_failure 2
    assert_dir_empty out
}

@test "gpc-hmc: missing files are status 3 and leave no output" {
    run gpc-hmc "${RUN[@]}" -o out/c.txt nope.txt y.txt
    assert_failure 3
    assert_output --partial "nope.txt: cannot open"
    run gpc-hmc -q -x nope.txt -n 1 Xz.txt y.txt
    assert_failure 3
    run gpc-hmc --summary nope.txt
    assert_failure 3
    assert_dir_empty out
}

@test "gpc-predict --chain averages over the samples: probabilities in [0,1]" {
    gpc-hmc -k se -L 5 -q --adapt=none -n 9 -o c.txt Xz.txt y.txt
    gpc-fit -q -k se -O none -m m.txt Xz.txt y.txt
    run gpc-predict -q -m m.txt --chain c.txt --thin 2 -c p,label Xtz.txt
    assert_success
    run awk '/^#/ { next } { n++ } $1 < 0 || $1 > 1 || ($1 >= 0.5) != ($2 == 1) { bad++ } END { print n, bad + 0 }' \
        <<< "$output"
    assert_output "20 0"
}

@test "gpc-predict --chain over a one-row chain equals the model at that row" {
    gpc-hmc -k se -L 5 -q --adapt=none -n 1 -o c.txt Xz.txt y.txt
    p=$(awk '!/^#/ && !/^iteration/ { printf "log_v0=%s,log_w=%s", $2, $3 }' c.txt)
    gpc-fit -q -k se -O none -p "$p" -m at.txt Xz.txt y.txt
    gpc-fit -q -k se -O none -m m.txt Xz.txt y.txt
    gpc-predict -m at.txt -c p,plugin,mean,var Xtz.txt > one.txt
    gpc-predict -q -m m.txt --chain c.txt --burn 0 -c p,plugin,mean,var Xtz.txt > avg.txt
    assert_matrices_close one.txt avg.txt 1e-9
}

@test "gpc-predict --chain refuses a chain of another kernel (status 3), --burn alone (2)" {
    gpc-hmc -k se -L 5 -q -n 3 -o c.txt Xz.txt y.txt
    gpc-fit -q -k ard -O none -m m.txt Xz.txt y.txt
    run gpc-predict -m m.txt --chain c.txt -o out/p.txt Xtz.txt
    assert_failure 3
    assert_output --partial "c.txt: the chain is not for this model"
    run gpc-predict -m m.txt --burn 1 -o out/p.txt Xtz.txt
    assert_failure 2
    assert_dir_empty out
}

@test "gpc-hmc --summary of chains of 4 to 6 rows: every ESS in (0, rows]" {
    for n in 4 5 6; do
        gpc-hmc -k se -L 5 -q --adapt=none -S 1 -n "$n" -o s.txt Xz.txt y.txt
        run gpc-hmc --summary --burn 0 s.txt
        assert_success
        run awk -v n="$n" 'NR > 2 && !($4 > 0 && $4 <= n) { print "ess", $4, "of", n, "rows: " $0 }' \
            <<< "$output"
        assert_output ""
    done
}

@test "gpc-hmc --summary to a full disk is status 3 with a write error" {
    gpc-hmc "${RUN[@]}" -o c.txt Xz.txt y.txt
    run bash -c "gpc-hmc --summary --burn 0 c.txt > /dev/full"
    assert_failure 3
    assert_output --partial "<stdout>: write error"
    run bash -c "gpc-hmc ${RUN[*]} Xz.txt y.txt > /dev/full"
    assert_failure 3
    assert_output --partial "<stdout>: write error"
}

@test "gpc-hmc -l step is a usage error: the Laplace evidence takes logistic, probit or softmax" {
    run gpc-hmc -l step "${RUN[@]}" -o out/c.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "the sampler uses the Laplace evidence, which takes logistic, probit or softmax"
    gpc-hmc -l probit "${RUN[@]}" -o c.txt Xz.txt y.txt
    run grep -x '# likelihood probit' c.txt
    assert_success
    assert_dir_empty out
}

@test "gpc-hmc: two inputs on standard input are a usage error (status 2)" {
    gpc-hmc "${RUN[@]}" -o c.txt Xz.txt y.txt
    printf 'log_v0 0\n' > h.txt
    for args in "-H - - y.txt" "-H - Xz.txt -" "- -" "-x - - y.txt" "-x - Xz.txt -"; do
        run gpc-hmc -q -n 1 $args -o out/c.txt < Xz.txt
        assert_failure 2
        assert_output --partial "cannot both be standard input"
    done
    run gpc-hmc --summary - - < c.txt
    assert_failure 2
    assert_dir_empty out
}

@test "gpc-hmc: '-' reads a chain or the data from standard input" {
    gpc-hmc "${RUN[@]}" -o c.txt Xz.txt y.txt
    gpc-hmc --summary --burn 0 c.txt > want.txt
    gpc-hmc --summary --burn 0 - < c.txt > got.txt
    assert_files_equal want.txt got.txt
    gpc-hmc "${RUN[@]}" -o std.txt - y.txt < Xz.txt
    assert_files_equal c.txt std.txt
    printf 'log_v0 0\nlog_w -2\n' > h.txt
    gpc-hmc "${RUN[@]}" -H - -o h.out Xz.txt y.txt < h.txt
    assert_files_equal c.txt h.out
}

@test "gpc-predict --chain -: the chain from standard input, not with the inputs" {
    gpc-hmc "${RUN[@]}" -o c.txt Xz.txt y.txt
    gpc-fit -q -k se -O none -m m.txt Xz.txt y.txt
    gpc-predict -q -m m.txt --chain c.txt Xtz.txt > want.txt
    gpc-predict -q -m m.txt --chain - Xtz.txt < c.txt > got.txt
    assert_files_equal want.txt got.txt
    run gpc-predict -q -m m.txt --chain - -o out/p.txt < c.txt
    assert_failure 2
    assert_output --partial "cannot both be standard input"
    assert_dir_empty out
}

@test "gpc-predict --chain refuses a model of another method, likelihood or label noise" {
    gpc-hmc "${RUN[@]}" -o c.txt Xz.txt y.txt
    gpc-fit -q -k se -M ep -O none -m ep.txt Xz.txt y.txt
    gpc-fit -q -k se -l probit -O none -m probit.txt Xz.txt y.txt
    for m in ep.txt probit.txt; do
        run gpc-predict -q -m "$m" --chain c.txt -o out/p.txt Xtz.txt
        assert_failure 3
        assert_output --partial \
            "c.txt: the chain was sampled under the Laplace evidence with the logistic likelihood"
        assert_output --partial "fit it with -M laplace -l logistic"
    done
    gpc-hmc -l probit "${RUN[@]}" -o cp.txt Xz.txt y.txt
    gpc-fit -q -k se -M ep -l probit --label-noise 0.1 -O none -m noisy.txt Xz.txt y.txt
    run gpc-predict -q -m noisy.txt --chain cp.txt -o out/p.txt Xtz.txt
    assert_failure 3
    assert_output --partial "with label noise"
    assert_dir_empty out
}
