#!/usr/bin/env bats
# Expectation propagation through the tools: -M ep in gpc-fit and
# gpc-evidence, EP models in gpc-predict.

load test_helper

setup() {
    require_tools gpc-fit gpc-evidence gpc-predict
    common_setup
}

@test "gpc-fit -M ep writes an ep model with site parameters and predicts from it" {
    run gpc-fit -q -M ep -k se -m m.txt Xz.txt y.txt
    assert_success
    run grep -E '^(method|likelihood) ' m.txt
    assert_output $'method ep\nlikelihood probit'
    run grep '^# y tau nu x1' m.txt
    assert_success
    run gpc-predict -m m.txt -c p,mean,var,label Xtz.txt
    assert_success
    assert_line --index 0 '# p mean var label'
    run awk '/^#/ { next } { n++ } $1 < 0 || $1 > 1 || $3 < 0 || ($1 >= 0.5) != ($4 == 1) { bad++ }
             END { print n, bad + 0 }' <<< "$output"
    assert_output "20 0"
}

@test "gpc-fit -M ep: the model's log evidence equals gpc-evidence -M ep at its hyperparameters" {
    gpc-fit -q -M ep -k se -P p.txt -m m.txt Xz.txt y.txt
    want=$(awk '$1 == "log_evidence" { print $2 }' m.txt)
    got=$(gpc-evidence -M ep -k se -H p.txt -n Xz.txt y.txt)
    run awk -v a="$want" -v b="$got" 'BEGIN { d = a - b; if (d < 0) d = -d; print (d < 1e-9) }'
    assert_output 1
}

@test "gpc-fit -M ep -O ml ends where the EP evidence gradient is small" {
    gpc-fit -q -M ep -k se -P p.txt -m m.txt Xz.txt y.txt
    run gpc-evidence -M ep -k se -H p.txt Xz.txt y.txt
    run awk '{ for (j = 2; j <= NF; j++) if ($j > 1e-3 || $j < -1e-3) bad++ } END { print bad + 0 }' \
        <<< "$output"
    assert_output 0
}

@test "EP with the logistic likelihood or an unknown method is a usage error" {
    run gpc-fit -M ep -l logistic -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "EP takes the probit or the step likelihood"
    run gpc-evidence -M gibbs Xz.txt y.txt
    assert_failure 2
    assert_output --partial "unknown method 'gibbs' (use laplace, ep, tap, naive, vb or svgp)"
    assert_dir_empty out
}

@test "an ep model with a missing site column is status 3 with file:line" {
    gpc-fit -q -M ep -k se -O none -m m.txt Xz.txt y.txt
    line=$(grep -n '^# y tau nu' m.txt | cut -d: -f1)
    awk -v l="$((line + 1))" 'NR == l { $2 = ""; } { print }' m.txt > bad.txt
    run gpc-predict -m bad.txt -o out/p.txt Xtz.txt
    assert_failure 3
    assert_output --partial "bad.txt:$((line + 1)): expected"
    assert_dir_empty out
}

@test "--damping changes the path, not the EP fixed point" {
    a=$(gpc-evidence -M ep -k se -n Xz.txt y.txt)
    b=$(gpc-evidence -M ep --damping 0.5 -k se -n Xz.txt y.txt)
    run awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; print (d < 1e-8) }'
    assert_output 1
    run gpc-evidence -M ep --damping 0 Xz.txt y.txt
    assert_failure 2
    assert_output --partial "--damping must be in (0, 1]"
    run gpc-fit --damping 0.5 -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "--damping applies to -M ep"
    assert_dir_empty out
}

@test "--tol sets EP's tolerance in gpc-fit and gpc-evidence; outside (0, 1) or without ep it is a usage error" {
    tight=$(gpc-evidence -M ep -k se -p 1,0 -n --tol=1e-12 Xz.txt y.txt)
    loose=$(gpc-evidence -M ep -k se -p 1,0 -n --tol=1e-3 Xz.txt y.txt)
    run awk -v a="$tight" -v b="$loose" 'BEGIN { d = a - b; if (d < 0) d = -d; print (d < 1e-3) }'
    assert_output 1
    run gpc-fit -q -M ep -k se -O none -p 1,0 --tol=1e-12 Xz.txt y.txt
    assert_success
    run gpc-evidence -k se --tol=1e-6 Xz.txt y.txt
    assert_failure 2
    assert_output --partial "--tol applies to -M ep"
    run gpc-fit -M ep -k se --tol=0 Xz.txt y.txt
    assert_failure 2
    assert_output --partial "--tol must be in (0, 1)"
}
