#!/usr/bin/env bats
# gpc-hmc's step adapted over a warm-up and then frozen: the chain records
# it, extends exactly across the warm-up's end, and no sample is drawn in
# the warm-up; gpc-predict pooling several chains.

load test_helper

setup() {
    require_tools gpc-hmc gpc-fit gpc-predict gpc-scale
    common_setup
}

# The rows of a chain.
rows() { awk '!/^#/ && !/^iteration/' "$1"; }

# The acceptance rate after the default burn-in, from the summary's first line.
acceptance() { gpc-hmc --summary "$1" | sed -n '1s/.*acceptance rate \([0-9.]*\).*/\1/p'; }

@test "hmc-adapt: the warm-up is recorded, the step frozen after it, and -x continues exactly" {
    gpc-hmc -k se -L 5 -q -n 10 --adapt=4 -o long.txt Xz.txt y.txt
    run grep -x '# adapt 4 0.59999999999999998' long.txt
    assert_success
    run grep '^iteration' long.txt
    assert_output "iteration log_v0 log_w potential log_evidence accepted step accept_prob"
    # the first step is --step's; the last six are one step, another than the first
    run awk '!/^#/ && !/^iteration/ { print $7 }' long.txt
    assert_line --index 0 0.10000000000000001
    frozen=$(rows long.txt | awk 'NR == 5 { print $7 }')
    [ "$(rows long.txt | awk -v s="$frozen" 'NR > 4 && $7 != s' | wc -l)" -eq 0 ]
    [ "$frozen" != 0.10000000000000001 ]
    # within the warm-up, at its end and after it
    for n in 2 4 7; do
        gpc-hmc -k se -L 5 -q -n "$n" --adapt=4 -o short.txt Xz.txt y.txt
        gpc-hmc -q -x short.txt -n $((10 - n)) Xz.txt y.txt
        assert_files_equal long.txt short.txt
    done
    # and with persistent momenta, whose columns follow accept_prob
    gpc-hmc -k se -L 5 -q -a 0.5 -n 8 --adapt=3 -o plong.txt Xz.txt y.txt
    gpc-hmc -k se -L 5 -q -a 0.5 -n 2 --adapt=3 -o pshort.txt Xz.txt y.txt
    gpc-hmc -q -x pshort.txt -n 6 Xz.txt y.txt
    assert_files_equal plong.txt pshort.txt
    run grep '^iteration' plong.txt
    assert_output --partial "step accept_prob p.log_v0 p.log_w"
}

@test "hmc-adapt: --summary reports the frozen step and discards the warm-up" {
    gpc-hmc -k se -L 5 -q -n 12 --adapt=6 -S 1 -o a.txt Xz.txt y.txt
    gpc-hmc -k se -L 5 -q -n 12 --adapt=6 -S 2 -o b.txt Xz.txt y.txt
    sa=$(rows a.txt | awk 'NR == 12 { printf "%.4g", $7 }')
    sb=$(rows b.txt | awk 'NR == 12 { printf "%.4g", $7 }')
    run gpc-hmc --summary a.txt
    assert_success
    assert_line --index 0 --regexp "^# 1 chain, iterations 7\.\.12 of each \(6 kept\), acceptance rate [0-9.]+, step $sa \(adapted\)$"
    run gpc-hmc --summary a.txt b.txt
    assert_line --index 0 --partial ", steps $sa, $sb (adapted)"
    run gpc-hmc --summary --burn 5 a.txt
    assert_failure 3
    assert_output --partial "a.txt: a burn-in of 5 would keep iterations of the step's warm-up (the first 6, with the step still changing); give --burn=6 or more"
    # a fixed step's line is as it always was
    gpc-hmc -k se -L 5 -q -n 6 --adapt=none -o f.txt Xz.txt y.txt
    run gpc-hmc --summary --burn 0 f.txt
    assert_line --index 0 --regexp "^# 1 chain, iterations 1\.\.6 of each \(6 kept\), acceptance rate [0-9.]+$"
    [ "$(grep -c '^# adapt' f.txt)" -eq 0 ]
}

@test "hmc-adapt: bad --adapt and --target-accept are usage errors (status 2)" {
    for bad in "--adapt=0" "--adapt=x" "--adapt=-1" "--target-accept=0" "--target-accept=1" \
               "--adapt=none --target-accept=0.7" "-M gibbs --adapt=5" "-M gibbs --adapt=none" \
               "-M gibbs --target-accept=0.7"; do
        run gpc-hmc -k se -n 2 $bad -o out/c.txt Xz.txt y.txt
        assert_failure 2
    done
    run gpc-hmc -k se -n 2 --adapt=x -o out/c.txt Xz.txt y.txt
    assert_output --partial "--adapt: 'x' is not none or a number of iterations"
    gpc-hmc -k se -L 5 -q -n 2 -o c.txt Xz.txt y.txt
    run gpc-hmc -q -x c.txt --adapt=none -n 1 Xz.txt y.txt
    assert_failure 2
    assert_output --partial "--extend takes its settings"
    assert_dir_empty out
}

@test "hmc-adapt: a chain still in its warm-up says so, and has no samples to predict from" {
    run gpc-hmc -k se -L 5 -n 3 -o c.txt Xz.txt y.txt
    assert_success
    assert_output --partial "the step adapts until iteration 50"
    gpc-fit -q -k se -O none -m m.txt Xz.txt y.txt
    run gpc-predict -q -m m.txt --chain c.txt -o out/p.txt Xtz.txt
    assert_failure 3
    assert_output --partial "c.txt: no samples left after a burn-in of 3 (extend the chain past its warm-up)"
    run gpc-predict -q -m m.txt --chain c.txt --burn 1 -o out/p.txt Xtz.txt
    assert_failure 3
    assert_output --partial "c.txt: a burn-in of 1 would keep iterations of the step's warm-up"
    assert_dir_empty out
}

@test "hmc-adapt: gpc-predict --chain a --chain b averages every kept sample of both" {
    gpc-hmc -k se -L 5 -q -n 9 --adapt=3 -S 1 -o a.txt Xz.txt y.txt
    gpc-hmc -k se -L 5 -q -n 14 --adapt=2 -S 2 -o b.txt Xz.txt y.txt
    gpc-fit -q -k se -O none -m m.txt Xz.txt y.txt
    cols=p,plugin,mean
    # default burn-in per chain: a's warm-up of 3 (more than 9/3), b's third (4 > 2)
    # (the numbers only: each file opens with its column names)
    gpc-predict -q -m m.txt --chain a.txt -c $cols Xtz.txt | grep -v '^#' > pa.txt
    gpc-predict -q -m m.txt --chain b.txt -c $cols Xtz.txt | grep -v '^#' > pb.txt
    gpc-predict -q -m m.txt --chain a.txt --chain b.txt -c $cols Xtz.txt | grep -v '^#' > pab.txt
    paste pa.txt pb.txt | awk '{ for (j = 1; j <= 3; j++) printf "%.17g%s", (6 * $j + 10 * $(j + 3)) / 16, j < 3 ? " " : "\n" }' > want.txt
    assert_matrices_close want.txt pab.txt 1e-12
    # --burn and --thin apply to each chain: rows 4, 6, 8 of a and 4, 6, ..., 14 of b
    gpc-predict -q -m m.txt --chain a.txt --burn 3 --thin 2 -c p Xtz.txt | grep -v '^#' > ta.txt
    gpc-predict -q -m m.txt --chain b.txt --burn 3 --thin 2 -c p Xtz.txt | grep -v '^#' > tb.txt
    gpc-predict -q -m m.txt --chain b.txt --chain a.txt --burn 3 --thin 2 -c p Xtz.txt |
        grep -v '^#' > tab.txt
    paste ta.txt tb.txt | awk '{ printf "%.17g\n", (3 * $1 + 6 * $2) / 9 }' > twant.txt
    assert_matrices_close twant.txt tab.txt 1e-12
}

@test "hmc-adapt: gpc-predict refuses chains of different posteriors, naming both (status 3)" {
    gpc-hmc -k se -L 5 -q -n 6 --adapt=none -o a.txt Xz.txt y.txt
    gpc-hmc -k se -L 5 -q -n 6 --adapt=none --prior-mean=-2 -o b.txt Xz.txt y.txt
    gpc-fit -q -k se -O none -m m.txt Xz.txt y.txt
    run gpc-predict -q -m m.txt --chain a.txt --chain b.txt -o out/p.txt Xtz.txt
    assert_failure 3
    assert_output --partial "b.txt: prior 'normal -2 3' differs from a.txt's 'normal -3 3'"
    # another step, seed or warm-up samples the same posterior
    gpc-hmc -k se -L 4 -e 0.2 -q -n 6 --adapt=2 -S 3 -o c.txt Xz.txt y.txt
    gpc-predict -q -m m.txt --chain a.txt --chain c.txt -o out/p.txt Xtz.txt
    run gpc-predict -q -m m.txt --chain - --chain - -o out/q.txt Xtz.txt < a.txt
    assert_failure 2
    assert_output --partial "cannot both be standard input"
}

@test "hmc-adapt: the acceptance rate after the warm-up is in [0.6, 0.9] on Pima (8 hyperparameters)" {
    gpc-scale -s stats.txt -o X.txt "$REPO/data/pima/X-train.txt"
    gpc-hmc -q -n 150 -o c.txt X.txt "$REPO/data/pima/y-train.txt"
    a=$(acceptance c.txt)
    echo "acceptance $a"
    awk -v a="$a" 'BEGIN { exit !(a >= 0.6 && a <= 0.9) }'
    # the fixed step of 0.1 accepts nearly everything
    gpc-hmc -q -n 60 --adapt=none -o f.txt X.txt "$REPO/data/pima/y-train.txt"
    awk -v a="$(acceptance f.txt)" 'BEGIN { exit !(a > 0.95) }'
}

@test "hmc-adapt: the acceptance rate after the warm-up is in [0.6, 0.9] with 31 hyperparameters" {
    # ARD over Sonar's first 30 columns
    cut -d ' ' -f 1-30 "$REPO/data/sonar/X-train.txt" | gpc-scale -s stats.txt > X.txt
    gpc-hmc -q -n 150 -o c.txt X.txt "$REPO/data/sonar/y-train.txt"
    [ "$(grep '^iteration' c.txt | wc -w)" -eq $((1 + 31 + 5)) ]
    a=$(acceptance c.txt)
    echo "acceptance $a"
    awk -v a="$a" 'BEGIN { exit !(a >= 0.6 && a <= 0.9) }'
}
