#!/usr/bin/env bats
# Variational Bayes multinomial probit (-M vb, likelihood mprobit) through
# gpc-fit, gpc-predict and gpc-evidence.  Expected numbers come from other
# paths: the binary probit Laplace fit (two classes), finite differences of
# gpc-evidence's own bound, the model's stored bound, invariants.

load test_helper

HP='log_v0=1,log_w=-1'
CLASSES='setosa versicolor virginica'

setup() {
    require_tools gpc-fit gpc-predict gpc-evidence gpc-kernel gpc-hmc
    common_setup
    iris_fixtures
}

# Columns 1..C of every data row are probabilities summing to 1 (1e-10).
assert_probs() {
    run awk -v C="$2" '
        /^#/ { next }
        { n++; s = 0
          for (c = 1; c <= C; c++) {
              if ($c < 0 || $c > 1) { printf "row %d: column %d is %s\n", n, c, $c; exit 1 }
              s += $c
          }
          if (s - 1 > 1e-10 || 1 - s > 1e-10) { printf "row %d: sum %.17g\n", n, s; exit 1 } }
        END { if (!n) { print "no rows"; exit 1 } }' "$1"
    assert_success
}

@test "vb: three word classes give a vb model whose state is one ybar column per class" {
    run --separate-stderr gpc-fit -M vb -O none -k se -p "$HP" -m m.txt X3.txt y3.txt
    assert_success
    [[ "$stderr" == *"gpc-fit: Laplace evidence -"*" factors of the 90 x 90 system), variational bound -"*"sweeps (3 classes)"* ]] || fail "stderr: $stderr"
    assert_equal "$(model_value m.txt method)" vb
    assert_equal "$(model_value m.txt likelihood)" mprobit
    run grep -x "classes $CLASSES" m.txt
    assert_success
    run grep -x '# y ybar1 ybar2 ybar3 x1..x4' m.txt
    assert_success
}

@test "vb: predictions are probabilities that sum to one, the label their argmax" {
    gpc-fit -q -M vb -O none -k se -p "$HP" -m m.txt X3.txt y3.txt
    gpc-predict -m m.txt -c p,label Xt3.txt > p.txt
    assert_equal "$(head -n 1 p.txt)" "# p.setosa p.versicolor p.virginica label"
    assert_probs p.txt 3
    run awk 'BEGIN { split("setosa versicolor virginica", name) }
             /^#/ { next } { n++; k = 1; for (c = 2; c <= 3; c++) if ($c > $k) k = c
                             if ($4 != name[k]) { print "row " n ": label " $4 ", argmax " k; exit 1 } }' p.txt
    assert_success
    gpc-predict -m m.txt -c plugin Xt3.txt > q.txt
    assert_probs q.txt 3
}

# With two classes y_1 - y_2 = (f_1 - f_2) + N(0, 2), so h = (f_1 - f_2) /
# sqrt 2 is a binary probit GP with kernel K, and the VB means are its
# Laplace mode (tests/unit/test_vb.c): the plug-in probabilities agree.
@test "vb: with two classes the plug-in probabilities are binary probit Laplace's" {
    gpc-fit -q -M vb -O none -k se -p "$HP" -m v.txt X2.txt y2.txt
    gpc-fit -q -M laplace -l probit -O none -k se -p "$HP" -m l.txt X2.txt y2.txt
    gpc-predict -m v.txt -c plugin X3.txt | grep -v '^#' | cut -d' ' -f2 > pv.txt
    gpc-predict -m l.txt -c plugin X3.txt > pl.txt
    assert_shape pv.txt 30 1
    assert_matrices_close pv.txt pl.txt 1e-7
}

@test "vb: the model's log evidence equals gpc-evidence -M vb at its hyperparameters, Laplace's and the bound" {
    gpc-fit -q -M vb -O none -k se -p "$HP" -m m.txt X3.txt y3.txt
    gpc-evidence -q -M vb -k se -p "$HP" -n X3.txt y3.txt > e.txt
    assert_close "$(model_value m.txt log_evidence)" "$(cat e.txt)" 1e-12
    assert_equal "$(grep '^fit ' m.txt)" "fit none, laplace evidence"
    gpc-fit -q -M vb -O none --objective=bound -k se -p "$HP" -m b.txt X3.txt y3.txt
    gpc-evidence -q -M vb --objective=bound -k se -p "$HP" -n X3.txt y3.txt > eb.txt
    assert_close "$(model_value b.txt log_evidence)" "$(cat eb.txt)" 1e-12
    assert_equal "$(grep '^fit ' b.txt)" "fit none, variational bound"
    # the bound lies below the Laplace evidence by 1/2 [C log|I + K| - log|I + W K|] > 0
    run awk -v l="$(cat e.txt)" -v b="$(cat eb.txt)" 'BEGIN { exit !(b < l) }'
    assert_success
}

@test "vb: gpc-evidence's gradient of the Laplace evidence and of the bound match central differences, shared kernel" {
    evidence_fd X3.txt y3.txt ard "log_v0=1,log_w1=-1,log_w2=-2,log_w3=-0.5,log_w4=-1.5" -M vb
    evidence_fd X3.txt y3.txt ard "log_v0=1,log_w1=-1,log_w2=-2,log_w3=-0.5,log_w4=-1.5" -M vb --objective=bound
}

@test "vb: gpc-evidence's gradient of the Laplace evidence and of the bound match central differences, per class" {
    evidence_fd X3.txt y3.txt se:per-class=3 "log_v0.c1=1,log_w.c1=-1,log_v0.c2=0.5,log_w.c2=-1.5,log_v0.c3=1.5,log_w.c3=-0.5" -M vb
    evidence_fd X3.txt y3.txt se:per-class=3 "log_v0.c1=1,log_w.c1=-1,log_v0.c2=0.5,log_w.c2=-1.5,log_v0.c3=1.5,log_w.c3=-0.5" -M vb --objective=bound
}

@test "vb: with two classes the Laplace evidence and its gradient are binary probit Laplace's" {
    gpc-evidence -q -M vb -k ard -p "log_v0=1.5,log_w1=-1,log_w3=-2" X2.txt y2.txt > v.txt
    gpc-evidence -q -M laplace -l probit -k ard -p "log_v0=1.5,log_w1=-1,log_w3=-2" X2.txt y2.txt > l.txt
    assert_shape v.txt 1 6
    assert_matrices_close v.txt l.txt 1e-8
}

@test "vb: gpc-fit -O ml ends where the gradient of its objective vanishes, the Laplace evidence or the bound" {
    local obj
    for obj in laplace bound; do
        run --separate-stderr gpc-fit -q -M vb -O ml --objective="$obj" -k se -m m.txt X3.txt y3.txt
        assert_success
        if [ "$obj" = bound ]; then
            [[ "$stderr" == *"the variational bound prefers weak kernels"* ]] || fail "stderr: $stderr"
        else
            [ -z "$stderr" ] || fail "stderr: $stderr"
        fi
        model_params m.txt | awk '{ printf "%s%s=%.17g", (NR > 1 ? "," : ""), $1, $2 }' > p.txt
        gpc-evidence -q -M vb --objective="$obj" -k se -p "$(cat p.txt)" X3.txt y3.txt > eg.txt
        run awk '{ for (j = 2; j <= NF; j++) if ($j > 1e-4 || $j < -1e-4) { print "gradient " $j; exit 1 } }' eg.txt
        assert_success
    done
}

@test "vb: --objective takes laplace or bound, with -M vb only; the bound warns only where it chooses" {
    run gpc-fit -M vb --objective=elbo -O none -k se X3.txt y3.txt
    assert_failure 2
    assert_output --partial "--objective: 'elbo' is not laplace or bound"
    run gpc-evidence -M ep --objective=bound -k se X3.txt y3.txt
    assert_failure 2
    assert_output --partial "--objective applies to -M vb"
    run gpc-fit -M laplace --objective=laplace -O none -k se X3.txt y3.txt
    assert_failure 2
    assert_output --partial "--objective applies to -M vb"
    # at given hyperparameters the bound chooses nothing: no warning
    run --separate-stderr gpc-fit -q -M vb --objective=bound -O none -k se -p "$HP" -m m.txt X3.txt y3.txt
    assert_success
    [ -z "$stderr" ] || fail "stderr: $stderr"
    run --separate-stderr gpc-fit -q -M vb --objective=bound -O map -k se -m m.txt X3.txt y3.txt
    assert_success
    [[ "$stderr" == *"gpc-fit: the variational bound prefers weak kernels"* ]] || fail "stderr: $stderr"
}

@test "vb: --tol sets the convergence of the updates; a looser one moves the bound a little" {
    gpc-evidence -q -M vb -k se -p "$HP" -n X3.txt y3.txt > tight.txt
    gpc-evidence -q -M vb --tol=1e-3 -k se -p "$HP" -n X3.txt y3.txt > loose.txt
    assert_close "$(cat tight.txt)" "$(cat loose.txt)" 1e-4
    run gpc-evidence -q -M vb --tol=2 -k se -p "$HP" X3.txt y3.txt
    assert_failure 2
}

@test "vb: a method, likelihood or option it does not take is a usage error" {
    run gpc-fit -M vb -l softmax -O none -k se X3.txt y3.txt
    assert_failure 2
    assert_output --partial "variational Bayes takes the multinomial probit likelihood (-l mprobit)"
    run gpc-fit -M vb --multiclass=ovr -O none -k se X3.txt y3.txt
    assert_failure 2
    assert_output --partial "one-vs-rest takes a binary method"
    run gpc-fit -M vb --multiclass=softmax -O none -k se X3.txt y3.txt
    assert_failure 2
    assert_output --partial "is multiclass itself: leave --multiclass out"
    run gpc-fit -M laplace -l mprobit -O none -k se X2.txt y2.txt
    assert_failure 2
    assert_output --partial "the multinomial probit is nested EP, -M ep, or variational Bayes, -M vb"
    run gpc-hmc -l mprobit -n 1 X2.txt y2.txt
    assert_failure 2
    assert_output --partial "gpc-fit -M vb takes mprobit"
    gpc-fit -q -M vb -O none -k se -p "$HP" -m m.txt X3.txt y3.txt
    run gpc-predict -m m.txt --loo
    assert_failure 2
    assert_output --partial "use --loo=exact"
}

@test "vb: exact leave-one-out refits give one probability row per training case" {
    gpc-fit -q -M vb -O none -k se -p "$HP" -m m.txt X3.txt y3.txt
    gpc-predict -q -m m.txt --loo=exact -c p > loo.txt
    assert_probs loo.txt 3
    assert_equal "$(grep -vc '^#' loo.txt)" 30
}

@test "vb: -O is sets the hyperparameters to importance-sampled posterior means, the same for the same seed" {
    run --separate-stderr gpc-fit -M vb -O is -k se -m a.txt X3.txt y3.txt
    assert_success
    [[ "$stderr" == *"by importance sampling (1000 draws per update)"* ]] || fail "stderr: $stderr"
    [[ "$stderr" == *"importance update "*"effective sample size"* ]] || fail "stderr: $stderr"
    [[ "$stderr" == *"importance sampling weighs the draws as the variational bound does"* ]] || fail "stderr: $stderr"
    run grep -x "fit is exponential gamma 1e-06 1e-06 samples 1000 seed 1, laplace evidence" a.txt
    assert_success
    gpc-fit -q -M vb -O is -k se -m b.txt X3.txt y3.txt
    assert_files_equal a.txt b.txt
    gpc-fit -q -M vb -O is -S 2 --samples 500 -k se -m c.txt X3.txt y3.txt
    [ "$(model_params a.txt)" != "$(model_params c.txt)" ] || fail "another seed gave the same hyperparameters"
    # the model's log evidence is the Laplace evidence at the sampled hyperparameters
    model_params a.txt | awk '{ printf "%s%s=%.17g", (NR > 1 ? "," : ""), $1, $2 }' > p.txt
    gpc-evidence -q -n -M vb -k se -p "$(cat p.txt)" X3.txt y3.txt > e.txt
    assert_close "$(model_value a.txt log_evidence)" "$(cat e.txt)" 1e-9
}

@test "vb: -O is is for -M vb only, and takes no --fix, label noise or stray --samples" {
    run gpc-fit -O is -k se X3.txt y3.txt
    assert_failure 2
    assert_output --partial "-O is (Girolami & Rogers' importance sampler) is for -M vb"
    run gpc-fit -M vb -O is --fix=log_v0 -k se X3.txt y3.txt
    assert_failure 2
    assert_output --partial "--fix and label noise do not apply"
    run gpc-fit -M vb -O ml --samples=10 -k se X3.txt y3.txt
    assert_failure 2
    assert_output --partial "--samples is for -O is"
    run gpc-fit -M vb -O is --samples=0 -k se X3.txt y3.txt
    assert_failure 2
}

# The cases' integrals, in the sweeps and in the predictions, run on OpenMP
# threads from VB_PARALLEL_MIN_WORK = n C (src/lib/methods/vb.h), each case by one
# thread and the logs summed in case order, so the results do not depend on
# the number of threads.  The problem is sized from the source so that the
# test cannot go vacuous (and predicted in one block of at most 512 rows).
@test "vb: results do not depend on the number of OpenMP threads" {
    local work n t f
    work="$(sed -n 's/^#define VB_PARALLEL_MIN_WORK \([0-9][0-9]*\).*/\1/p' "$REPO/src/lib/methods/vb.h")"
    [ -n "$work" ] || fail "no VB_PARALLEL_MIN_WORK in src/lib/methods/vb.h"
    n=$(( work / 3 + 10 ))
    [ "$n" -le 512 ] || fail "n = $n exceeds gpc-predict's block of 512 rows"
    angle_data "$n" 7
    export OPENBLAS_NUM_THREADS=1
    fixed_threads
    for t in 1 2; do
        mkdir "t$t"
        export OMP_NUM_THREADS=$t
        gpc-evidence -M vb -k se -p "$HP" Xp.txt yp.txt > "t$t/e.txt"
        gpc-fit -q -M vb -O none -k se -p "$HP" -m "t$t/m.txt" Xp.txt yp.txt
        gpc-predict -m "t$t/m.txt" -c p,mean Xp.txt > "t$t/p.txt"
    done
    for f in e m p; do
        assert_files_equal "t1/$f.txt" "t2/$f.txt"
    done
}
