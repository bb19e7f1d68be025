#!/usr/bin/env bats
# Naive mean field (-M naive) and leave-one-out predictions (gpc-predict
# --loo): from the cavities and by exact refits.

load test_helper

setup() {
    require_tools gpc-fit gpc-predict gpc-evidence gpc-kernel gpc-score
    common_setup
}

@test "gpc-fit -M naive -O none: a naive model without evidence, predictions with the prior variance" {
    run gpc-fit -q -M naive -l step -O none -k se -m m.txt Xz.txt y.txt
    assert_success
    run grep -E '^(method|likelihood|log_evidence) ' m.txt
    assert_output $'method naive\nlikelihood step\nlog_evidence none'
    run grep -c '^# y x x1' m.txt
    assert_output 1
    gpc-predict -m m.txt -c p,var Xtz.txt | grep -v '^#' > pred.txt
    gpc-kernel -k se -d Xtz.txt > prior.txt
    run awk 'NR == FNR { v[FNR] = $1; next }
             { d = $2 - v[FNR]; if (d < 0) d = -d; if (d > 1e-12 || $1 < 0 || $1 > 1) bad++ }
             END { print FNR, bad + 0 }' prior.txt pred.txt
    assert_output "20 0"
}

@test "naive mean field has no evidence: -O ml and gpc-evidence -M naive are usage errors" {
    run gpc-fit -M naive -l probit -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "-O none"
    run gpc-evidence -M naive -l probit Xz.txt y.txt
    assert_failure 2
    assert_output --partial "no evidence"
    run gpc-fit -M naive -O none --label-noise=em -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_dir_empty out
}

@test "gpc-predict --loo: one row per training case, probabilities, cavity and exact close for EP" {
    gpc-fit -q -M ep -k se -O none -m m.txt Xz.txt y.txt
    # the numbers only, without the column-name line
    gpc-predict -m m.txt --loo -c p,mean,var | grep -v '^#' > cav.txt
    gpc-predict -q -m m.txt --loo=exact -c p,mean,var | grep -v '^#' > ex.txt
    run awk 'NR == FNR { p[FNR] = $1; next }
             { d = $1 - p[FNR]; if (d < 0) d = -d; if (d > 0.05 || $1 < 0 || $1 > 1 || $3 <= 0) bad++ }
             END { print FNR, bad + 0 }' cav.txt ex.txt
    assert_output "40 0"
    a=$(gpc-score -t cav.txt y.txt | cut -d' ' -f1)
    b=$(gpc-score -t ex.txt y.txt | cut -d' ' -f1)
    run awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; print (d <= 1 && d >= -1) }'
    assert_output 1
}

@test "gpc-predict --loo works for Laplace and naive models and from a model on standard input" {
    gpc-fit -q -k se -O none -m lap.txt Xz.txt y.txt
    run sh -c 'gpc-predict -m - --loo -c p < lap.txt | grep -vc "^#"'
    assert_output 40
    gpc-fit -q -M naive -k se -O none -m nv.txt Xz.txt y.txt
    run sh -c 'gpc-predict -m nv.txt --loo=exact -c label | grep -v "^#" | sort -u | tr "\n" " "'
    assert_success
    assert_output --regexp '^(-1 1 |-1 |1 )$'
}

@test "gpc-predict --loo: inputs, --chain or an unknown mode are usage errors" {
    gpc-fit -q -M ep -k se -O none -m m.txt Xz.txt y.txt
    run gpc-predict -m m.txt --loo -o out/p.txt Xtz.txt
    assert_failure 2
    assert_output --partial "--loo predicts the model's own training cases"
    run gpc-predict -m m.txt --loo=twice -o out/p.txt
    assert_failure 2
    assert_output --partial "not cavity or exact"
    run gpc-predict -m m.txt --loo --chain=c.txt -o out/p.txt
    assert_failure 2
    assert_dir_empty out
}

@test "gpc-predict --loo for naive mean field: by linear response, close to the refits" {
    # the solution's own cavities (the former estimate) missed the others'
    # response to losing a case; linear response keeps it to first order
    for lik in probit step; do
        gpc-fit -q -M naive -l "$lik" -k se -O none -m m.txt Xz.txt y.txt
        run sh -c 'gpc-predict -m m.txt --loo -c p,mean,var > cav0.txt && grep -v "^#" cav0.txt > cav.txt'
        assert_success
        run sh -c 'gpc-predict -q -m m.txt --loo=exact -c p,mean,var > ex0.txt && grep -v "^#" ex0.txt > ex.txt'
        assert_success
        # the same variances (the prior's, up to rounding), labels that
        # agree, p within 0.05 (measured: 0.002 probit, 0.037 step)
        run awk 'NR == FNR { p[FNR] = $1; v[FNR] = $3; next }
                 { d = $1 - p[FNR]; if (d < 0) d = -d; if (d > w) w = d
                   if (($1 >= 0.5) != (p[FNR] >= 0.5)) lab++
                   d = $3 - v[FNR]; if (d < 0) d = -d; if (d > 1e-12 * $3) var++ }
                 END { print FNR, lab + 0, var + 0, (w <= 0.05) }' cav.txt ex.txt
        assert_output "40 0 0 1"
    done
}
