#!/usr/bin/env bats
# gpc-hmc -M gibbs: the multinomial probit Gibbs sampler's chains (their
# format, exact extension, summaries, determinism, refusals) and
# gpc-predict --chain over them through a variational Bayes model.

load test_helper

setup() {
    require_tools gpc-fit gpc-predict gpc-hmc
    common_setup
    iris_fixtures
}

@test "gibbs: the chain names its method, has no leapfrog settings and ends each row in y" {
    gpc-hmc -q -M gibbs -k se -n 5 -o c.txt X3.txt y3.txt
    run grep -c '^# method gibbs$' c.txt
    assert_output 1
    run grep -c '^# likelihood mprobit$' c.txt
    assert_output 1
    run grep -c '^# leapfrog\|^# persistence' c.txt
    assert_output 0
    # iteration, log_v0, log_w, potential, log_p_y, accepted, step, then 3 x 30 values of y
    run awk '!/^#/ { print NF }' c.txt
    assert_output "$(printf '97\n97\n97\n97\n97\n97')"
    run awk '!/^#/ { print $1, $2, $4, $5, $6, $8, $97; exit }' c.txt
    assert_output "iteration log_v0 potential log_p_y accepted y1.1 y3.30"
}

@test "gibbs: y stays in each case's cone: its own class's value is the largest" {
    gpc-hmc -q -M gibbs -k se -n 5 -o c.txt X3.txt y3.txt
    run awk -v n=30 'NR == FNR { cls[FNR] = $1 == "setosa" ? 1 : $1 == "versicolor" ? 2 : 3; next }
        /^#/ || $1 == "iteration" { next }
        { for (i = 1; i <= n; i++) for (c = 1; c <= 3; c++)
              if (c != cls[i] && $(7 + (c - 1) * n + i) >= $(7 + (cls[i] - 1) * n + i)) {
                  print "row " $1 ", case " i ": class " c " beats " cls[i]; exit 1 } }' y3.txt c.txt
    assert_success
}

@test "gibbs: a chain extended in place, or copied with -o, equals one longer run" {
    gpc-hmc -q -M gibbs -k se -n 12 -o long.txt X3.txt y3.txt
    gpc-hmc -q -M gibbs -k se -n 6 -o short.txt X3.txt y3.txt
    gpc-hmc -q -x short.txt -n 3 -o copy.txt X3.txt y3.txt
    gpc-hmc -q -x copy.txt -n 3 X3.txt y3.txt
    gpc-hmc -q -x short.txt -n 6 X3.txt y3.txt
    assert_files_equal short.txt long.txt
    assert_files_equal copy.txt long.txt
}

@test "gibbs: per-class hyperparameters sample, and extend exactly" {
    gpc-hmc -q -M gibbs -k se --per-class -n 8 -o long.txt X3.txt y3.txt
    run awk '$1 == "iteration" { print $2, $3, $4, $5, $6, $7, $8; exit }' long.txt
    assert_output "log_v0.c1 log_w.c1 log_v0.c2 log_w.c2 log_v0.c3 log_w.c3 potential"
    gpc-hmc -q -M gibbs -k se --per-class -n 4 -o short.txt X3.txt y3.txt
    gpc-hmc -q -x short.txt -n 4 X3.txt y3.txt
    assert_files_equal short.txt long.txt
}

@test "gibbs --fix: at fixed hyperparameters no proposals are made, and extension is exact" {
    gpc-hmc -q -M gibbs -k se -n 8 -p log_v0=1,log_w=-1 --fix=log_w,log_v0 -o long.txt X3.txt y3.txt
    run grep -c '^# fixed log_v0,log_w$' long.txt
    assert_output 1
    run awk '!/^#/ && !/^iteration/ { seen[$2 " " $3 " " $6] = 1 } END { for (k in seen) print k }' long.txt
    assert_output "1 -1 0"
    gpc-hmc -q -M gibbs -k se -n 4 -p log_v0=1,log_w=-1 --fix=log_v0,log_w -o short.txt X3.txt y3.txt
    gpc-hmc -q -x short.txt -n 4 X3.txt y3.txt
    assert_files_equal long.txt short.txt
    # one fixed of two: the other moves
    gpc-hmc -q -M gibbs -k se -n 20 --fix=log_w -o one.txt X3.txt y3.txt
    run awk '!/^#/ && !/^iteration/ { w[$3] = 1; v[$2] = 1 } END { a = 0; b = 0; for (k in w) a++; for (k in v) b++; print a, (b > 1) }' one.txt
    assert_output "1 1"
}

@test "gibbs: the same seed gives the same chain, another seed another" {
    gpc-hmc -q -M gibbs -k se -n 5 -o a.txt X3.txt y3.txt
    gpc-hmc -q -M gibbs -k se -n 5 -o b.txt X3.txt y3.txt
    gpc-hmc -q -M gibbs -k se -n 5 -S 2 -o c.txt X3.txt y3.txt
    assert_files_equal a.txt b.txt
    run cmp -s a.txt c.txt
    assert_failure
}

@test "gibbs: two classes are a multinomial probit chain of two latent functions" {
    gpc-hmc -q -M gibbs -k se -n 3 -o c.txt X2.txt y2.txt
    run awk '!/^#/ { print NF; exit }' c.txt
    assert_output 47
}

@test "gibbs: --summary gives each hyperparameter and log_p_y" {
    gpc-hmc -q -M gibbs -k se -n 30 -o a.txt X3.txt y3.txt
    gpc-hmc -q -M gibbs -k se -n 30 -S 2 -o b.txt X3.txt y3.txt
    run gpc-hmc --summary a.txt b.txt
    assert_success
    assert_line --index 0 --partial "# 2 chains, iterations 11..30 of each (20 kept)"
    assert_line --index 2 --regexp '^log_v0 '
    assert_line --index 3 --regexp '^log_w '
    assert_line --index 4 --regexp '^log_p_y '
}

@test "gibbs: --summary and gpc-plot trace refuse a gibbs chain beside a Laplace one (status 3)" {
    require_tools gpc-plot
    gpc-hmc -q -M gibbs -k se -n 12 -o g.txt X3.txt y3.txt
    gpc-hmc -q -l softmax -k se -L 3 -n 12 -o l.txt X3.txt y3.txt
    run gpc-hmc --summary l.txt g.txt
    assert_failure 3
    assert_output --partial "g.txt: method 'gibbs' differs from l.txt's 'laplace'"
    run gpc-plot trace -o t.svg g.txt l.txt
    assert_failure 3
    assert_output --partial "l.txt: method 'laplace' differs from g.txt's 'gibbs'"
    [ ! -e t.svg ]
}

@test "gibbs: gpc-predict --chain averages through a vb model: probabilities summing to one" {
    gpc-hmc -q -M gibbs -k se -n 30 -o c.txt X3.txt y3.txt
    gpc-fit -q -M vb -O none -k se -m vb.txt X3.txt y3.txt
    gpc-predict -q -m vb.txt --chain c.txt -c p,label Xt3.txt > p.txt
    assert_equal "$(head -n 1 p.txt)" "# p.setosa p.versicolor p.virginica label"
    run awk '/^#/ { next } { n++; s = $1 + $2 + $3; if (s > 1 + 1e-9 || s < 1 - 1e-9) { print "row " n ": " s; exit 1 } }
             END { if (n != 30) { print n " rows"; exit 1 } }' p.txt
    assert_success
    # the average of the rows' own predictions: the last 20 rows one at a time
    for r in $(seq 11 30); do
        awk -v r="$r" '/^#/ || $1 == "iteration" { print; next } $1 == r' c.txt > one.txt
        gpc-predict -q -m vb.txt --chain one.txt --burn 0 -c p Xt3.txt | grep -v '^#' > "p$r.txt"
    done
    paste p1[1-9].txt p2[0-9].txt p30.txt | awk '{ for (c = 1; c <= 3; c++) { s = 0; for (k = c; k <= NF; k += 3) s += $k; printf "%s%.17g", (c > 1 ? " " : ""), s / 20 } print "" }' > avg.txt
    grep -v '^#' p.txt | cut -d' ' -f1-3 > pc.txt
    assert_matrices_close avg.txt pc.txt 1e-12
}

@test "gibbs: a chain of a Laplace model, or the wrong model for a gibbs chain, is refused" {
    gpc-hmc -q -M gibbs -k se -n 3 -o c.txt X3.txt y3.txt
    gpc-fit -q -O none -k se -m lap.txt X3.txt y3.txt
    run gpc-predict -m lap.txt --chain c.txt Xt3.txt
    assert_failure 3
    assert_output --partial "a gibbs chain predicts through a model of the same data fitted with -M vb"
}

@test "gibbs: options it does not take are usage errors" {
    run gpc-hmc -M gibbs -L 5 -k se X3.txt y3.txt
    assert_failure 2
    assert_output --partial "--leapfrog, --persistence, --adapt and --target-accept are for -M laplace"
    run gpc-hmc -M gibbs -l softmax -k se X3.txt y3.txt
    assert_failure 2
    assert_output --partial "-M gibbs samples the multinomial probit model: -l mprobit"
    run gpc-hmc -M metropolis -k se X3.txt y3.txt
    assert_failure 2
    assert_output --partial "'metropolis' is not laplace, ep or gibbs"
    gpc-hmc -q -M gibbs -k se -n 2 -o c.txt X3.txt y3.txt
    run gpc-hmc -x c.txt -M gibbs -n 2 X3.txt y3.txt
    assert_failure 2
}

@test "gibbs: malformed gibbs chains are input errors naming the line" {
    gpc-hmc -q -M gibbs -k se -n 3 -o c.txt X3.txt y3.txt
    # a column of y missing from the column line
    sed 's/ y3\.30$//' c.txt > short.txt
    run gpc-hmc --summary short.txt
    assert_failure 3
    assert_output --partial "short.txt:10:"
    # a leapfrog line in a gibbs chain
    sed 's/^# seed 1$/# leapfrog 20\n# seed 1/' c.txt > lf.txt
    run gpc-hmc --summary lf.txt
    assert_failure 3
    assert_output --partial "a gibbs chain has no 'leapfrog' setting"
    # method gibbs with another likelihood
    sed 's/^# likelihood mprobit$/# likelihood softmax/' c.txt > lik.txt
    run gpc-hmc --summary lik.txt
    assert_failure 3
    assert_output --partial "a gibbs chain is for mprobit"
    # extended on other labels
    awk '{ print ($1 == "setosa") ? "versicolor" : $1 }' y3.txt > y2c.txt
    run gpc-hmc -x c.txt -n 1 X3.txt y2c.txt
    assert_failure 3
}
