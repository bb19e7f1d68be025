#!/usr/bin/env bats
# Nested EP for the multinomial probit likelihood (-M ep with three or more
# classes) through gpc-fit, gpc-predict and gpc-evidence.  Expected numbers
# come from other paths: binary probit EP (two classes), finite differences
# of gpc-evidence's own value, explicit refits without each case,
# invariants; never from a copy of an output.

load test_helper

HP='log_v0=1,log_w=-1'
PC='log_v0.c1=1,log_w.c1=-1,log_v0.c2=0.5,log_w.c2=-1.5,log_v0.c3=1.5,log_w.c3=-0.5'
CLASSES='setosa versicolor virginica'

# Each row of an 'se' chain has gpc-evidence -M ep's log evidence at its
# hyperparameters (1e-9).  Usage: rows_have_ep_evidence CHAIN X Y
rows_have_ep_evidence() {
    awk '$1 == "iteration" { for (j = 1; j <= NF; j++) col[$j] = j; next }
         !/^#/ { printf "%s %s %s\n", $col["log_v0"], $col["log_w"], $col["log_evidence"] }' "$1" > rows.txt
    cut -d' ' -f1,2 rows.txt > grid.txt
    gpc-evidence -q -M ep -k se -n -g grid.txt "$2" "$3" > ev.txt
    run awk 'NR == FNR { e[NR] = $3; next }
             { d = $1 - e[FNR]; if (d > 1e-9 || d < -1e-9) { print FNR ": " $1 " vs " e[FNR]; exit 1 } }
             END { if (FNR != NR - FNR || FNR == 0) { print "rows and evidences differ in number"; exit 1 } }' rows.txt ev.txt
    assert_success
}

setup() {
    require_tools gpc-fit gpc-predict gpc-evidence gpc-kernel gpc-score
    common_setup
    iris_fixtures
}

@test "nested EP: -M ep with three classes is nested EP (mprobit), says so; the state is each case's inner sites" {
    run --separate-stderr gpc-fit -M ep -O none -k se -p "$HP" -m m.txt X3.txt y3.txt
    assert_success
    [[ "$stderr" == *"3 classes (setosa versicolor virginica): nested EP with the multinomial probit likelihood"* ]] ||
        fail "stderr: $stderr"
    [[ "$stderr" == *"nested EP sweeps ("*", 3 classes)"* ]] || fail "stderr: $stderr"
    assert_equal "$(model_value m.txt method)" ep
    assert_equal "$(model_value m.txt likelihood)" mprobit
    run grep -x -e "classes $CLASSES" -e '# y alpha1 beta1 alpha2 beta2 alpha3 beta3 x1..x4' m.txt
    assert_success
    assert_equal "${#lines[@]}" 2
    # a case's own class has no site (0 0); the rivals' precisions are positive
    run awk '/^# y alpha1/ { on = 1; next } on && NF == 11 {
                 y = $1; n++
                 for (c = 1; c <= 3; c++) {
                     a = $(2 * c); b = $(2 * c + 1)
                     if (c == y && (a != 0 || b != 0)) { print "case " n ": own class " a " " b; exit 1 }
                     if (c != y && !(a > 0)) { print "case " n ": class " c " alpha " a; exit 1 } } }
             END { if (n != 30) { print n " cases"; exit 1 } }' m.txt
    assert_success
}

@test "nested EP: gpc-predict writes probabilities summing to 1 under a header, plug-in too; var is the diagonal of cov" {
    gpc-fit -q -M ep -O none -k se -p "$HP" -m m.txt X3.txt y3.txt
    gpc-predict -m m.txt Xt3.txt > p.txt
    assert_equal "$(head -n 1 p.txt)" "# p.setosa p.versicolor p.virginica label"
    assert_probs p.txt 3 30
    # mostly right on held-out iris
    run gpc-score p.txt yt3.txt
    assert_success
    run awk '{ if ($2 > 3) { print; exit 1 } }' <<< "$output"
    assert_success
    # plug-in probabilities too, and the covariance's diagonal is var
    gpc-predict -m m.txt -c plugin,var,cov Xt3.txt > q.txt
    assert_probs q.txt 3 30
    run awk '/^#/ { next } { for (c = 0; c < 3; c++) { v = $(4 + c); d = $(7 + 4 * c) - v
             if (d > 1e-15 || d < -1e-15 || !(v > 0)) { print NR ": " v " vs " $(7 + 4 * c); exit 1 } } }' q.txt
    assert_success
}

@test "nested EP: two classes with -l mprobit are binary probit EP on (f1 - f2) / sqrt 2 (evidence, gradient, p, loo)" {
    gpc-evidence -q -M ep -k se -p "$HP" --tol=1e-12 X2.txt y2.txt > b.txt
    gpc-evidence -q -M ep -l mprobit -k se -p "$HP" --tol=1e-12 X2.txt y2.txt > n.txt
    assert_equal "$(awk '{ print NF }' n.txt)" 3
    for j in 1 2 3; do
        assert_close "$(cut -d' ' -f$j n.txt)" "$(cut -d' ' -f$j b.txt)" 1e-8
    done
    gpc-fit -q -M ep -O none -k se -p "$HP" --tol=1e-12 -m b.model X2.txt y2.txt
    gpc-fit -q -M ep -l mprobit -O none -k se -p "$HP" --tol=1e-12 -m n.model X2.txt y2.txt
    assert_equal "$(model_value n.model method)" ep
    assert_equal "$(model_value n.model likelihood)" mprobit
    for how in "Xt3.txt" "--loo"; do
        gpc-predict -m b.model -c p $how > pb.txt
        gpc-predict -m n.model -c p $how > pn.txt
        run awk '/^#/ { next } { d = $1 - $2; if (d > 1e-8 || d < -1e-8) { print NR ": " $0; exit 1 } }' \
            <(paste pb.txt pn.txt)
        assert_success
    done
}

@test "nested EP gpc-evidence: the gradient agrees with central differences (se, ard, per class)" {
    evidence_fd X3.txt y3.txt se "$HP" -M ep --tol=1e-12
    evidence_fd X3.txt y3.txt ard 'log_v0=0.5,log_w1=-1.5,log_w2=-2.5,log_w3=-1,log_w4=-0.5' -M ep --tol=1e-12
    evidence_fd X3.txt y3.txt se:per-class=3 "$PC" -M ep --tol=1e-12
}

@test "nested EP --loo: the cavities' predictions are close to refits without each case" {
    gpc-fit -q -M ep -O none -k se -p "$HP" -m m.txt X3.txt y3.txt
    gpc-predict -m m.txt --loo > cav.txt
    gpc-predict -m m.txt --loo=exact > ex.txt
    assert_probs cav.txt 3 30
    assert_probs ex.txt 3 30
    run awk '/^#/ { next } { for (c = 1; c <= 3; c++) { d = $c - $(c + 4)
             if (d > 0.02 || d < -0.02) { print NR ": " $0; exit 1 } } }' <(paste -d' ' cav.txt ex.txt)
    assert_success
}

@test "nested EP: ML-II raises the evidence and stops at a zero gradient; MAP runs" {
    # overlapping classes, a fifth relabelled at random (separable ones send
    # the signal variance to infinity)
    angle_data 60 7
    awk 'BEGIN { srand(7) } { k = $1; if (rand() < 0.2) k = int(3 * rand()) + 1; print k }' yp.txt > yn.txt
    mv yn.txt yp.txt
    run --separate-stderr gpc-fit -M ep -k se -m m.txt Xp.txt yp.txt
    assert_success
    [[ "$stderr" != *"stopped before"* ]] || fail "stderr: $stderr"
    gpc-evidence -q -M ep -k se -p "$HP" Xp.txt yp.txt > start.txt
    num_lt "$(cut -d' ' -f1 start.txt)" "$(model_value m.txt log_evidence)"
    gpc-evidence -q -M ep -k se -H <(model_params m.txt) Xp.txt yp.txt > opt.txt
    run awk '{ for (j = 2; j <= NF; j++) if ($j > 1e-3 || $j < -1e-3) { print; exit 1 } }' opt.txt
    assert_success
    gpc-fit -q -M ep -k se -O map -m map.txt Xp.txt yp.txt
    assert_equal "$(model_value map.txt method)" ep
}

@test "nested EP errors: --damping out of (0, 1], -l softmax with -M ep; status 2, nothing written" {
    run gpc-fit -q -M ep -O none -k se --damping=0 -m out/m.txt X3.txt y3.txt
    assert_failure 2
    assert_output --partial "--damping must be in (0, 1]"
    run gpc-evidence -q -M ep -l softmax -k se -o out/e.txt X3.txt y3.txt
    assert_failure 2
    assert_output --partial "or -l mprobit: nested EP, any number of classes"
    assert_dir_empty out
}

@test "nested EP gpc-hmc -M ep: HMC over the EP evidence; 2 iterations extended by 2 equal 4, byte for byte" {
    gpc-hmc -q -M ep -k se -n 4 -L 3 -o out/c4.txt X3.txt y3.txt
    gpc-hmc -q -M ep -k se -n 2 -L 3 -o out/c2.txt X3.txt y3.txt
    run grep -x -e '# method ep' -e '# likelihood mprobit' out/c4.txt
    assert_success
    assert_equal "${#lines[@]}" 2
    assert_equal "$(grep -v '^#' out/c4.txt | grep -vc '^iteration')" 4
    gpc-hmc -q -x out/c2.txt -n 2 X3.txt y3.txt
    assert_files_equal out/c2.txt out/c4.txt
    rows_have_ep_evidence out/c4.txt X3.txt y3.txt
}

@test "nested EP gpc-predict --chain: p is the mean of the samples' nested EP predictions; a Laplace model is refused" {
    gpc-hmc -q -M ep -k se -n 4 -L 3 --adapt=1 -o out/c.txt X3.txt y3.txt
    gpc-fit -q -M ep -k se -O none -m out/m.txt X3.txt y3.txt
    gpc-predict -m out/m.txt --chain out/c.txt -b 2 -c p Xt3.txt > chain.txt
    assert_probs chain.txt 3 30
    for it in 3 4; do
        params=$(awk -v it="$it" '$1 == "iteration" { for (j = 1; j <= NF; j++) col[$j] = j; next }
                                  !/^#/ && $1 == it { printf "log_v0=%s,log_w=%s", $col["log_v0"], $col["log_w"] }' out/c.txt)
        [ -n "$params" ] || fail "no iteration $it in the chain"
        gpc-fit -q -M ep -k se -O none -p "$params" -m "out/m$it.txt" X3.txt y3.txt
        gpc-predict -m "out/m$it.txt" -c p Xt3.txt > "p$it.txt"
    done
    grep -v "^#" p3.txt > a.txt
    grep -v "^#" p4.txt > b.txt
    paste -d' ' a.txt b.txt | awk '{ printf "%.17g %.17g %.17g\n", ($1 + $4) / 2, ($2 + $5) / 2, ($3 + $6) / 2 }' > want.txt
    assert_matrices_close chain.txt want.txt 1e-12
    gpc-fit -q -k se -O none -m out/la.txt X3.txt y3.txt
    run gpc-predict -m out/la.txt --chain out/c.txt Xt3.txt
    assert_failure 3
    assert_output --partial "the chain was sampled under the EP evidence with the mprobit likelihood"
}

@test "nested EP gpc-hmc: -M ep with -l logistic or softmax is status 2; a chain whose header pairs ep with logistic is status 3" {
    for lik in logistic softmax; do
        run gpc-hmc -q -M ep -l "$lik" -k se -n 2 -o out/c.txt X3.txt y3.txt
        assert_failure 2
        assert_output --partial "-M ep takes probit or step (two classes) or mprobit"
    done
    gpc-hmc -q -M ep -k se -n 2 -L 3 -o c.txt X3.txt y3.txt
    sed 's/^# likelihood mprobit$/# likelihood logistic/' c.txt > bad.txt
    run gpc-hmc -q -x bad.txt -n 2 X3.txt y3.txt
    assert_failure 3
    assert_output --partial "an ep chain for probit, step or mprobit"
    assert_dir_empty out
}

@test "gpc-hmc -M ep with two classes: HMC over binary probit EP's evidence, predicted through an ep model" {
    gpc-hmc -q -M ep -k se -n 3 -L 3 --adapt=1 -o out/c.txt X2.txt y2.txt
    run grep -x -e '# method ep' -e '# likelihood probit' out/c.txt
    assert_success
    assert_equal "${#lines[@]}" 2
    rows_have_ep_evidence out/c.txt X2.txt y2.txt
    gpc-fit -q -M ep -k se -O none -m out/m.txt X2.txt y2.txt
    gpc-predict -m out/m.txt --chain out/c.txt Xt3.txt > p.txt
    assert_probs p.txt 1 30
}
