#!/usr/bin/env bats
# The Matern, rational quadratic, periodic and polynomial terms and product
# kernels through every method and tool, as a user runs them: gradients of
# every evidence against central differences (at ordinary and at extreme
# hyperparameters), fits and predictions of every method, HMC and Gibbs
# chains, column names in products, models read back and cross-validation.
# Expected numbers come from other runs of the tools (finite differences,
# refits at the fitted hyperparameters, one longer chain) or from invariants.

load test_helper

# Product kernels over the first three columns (so the same specs fit Pima's
# seven and iris's four), each as 'spec|hyperparameters' (the others keep
# their defaults).  Amplitudes of two factors differ so that a mix-up of the
# product rule's factors shows.
PRODUCTS=(
    'matern32ard@1-2*periodic@3|t1.log_v0=0.5,t1.log_w1=-1,t1.log_w2=-1.5,t2.log_v0=-0.3,t2.log_w=-0.5,t2.log_p=0.8'
    '(matern52@1-2+linear@3)*rq@3|t1.log_v0=0.3,t1.log_w=-1,log_v=-1,t3.log_v0=0.2,t3.log_w=-0.5,t3.log_alpha=0.3'
    'bias*(se+poly2)|log_bias=0.2,log_v0=0.4,log_w=-1,log_v=-1.5,log_c=0.3'
)
# Deeper nesting, a term twice, and a factor that is zero for some pairs
# (linear on a column with zeros: the product rule must not divide by it).
NESTED=(
    'se@1*(rq@2*(periodic@3+bias))*linear@1|t1.log_w=-1,t2.log_alpha=0.4,t3.log_p=0.6,log_bias=-1,log_v=-0.5'
    'linear@1*matern32@2-3|log_v=0.3,log_w=-1'
    'matern12@1*matern12@2+poly1@3*periodicard@1,3|t1.log_w=-0.5,t2.log_v0=0.2,log_c=0.7,t4.log_p1=0.3,t4.log_p3=1.1'
)
# Every new term alone.
TERMS=(
    'matern12|log_v0=0.5,log_w=-1'
    'matern32|log_v0=0.3,log_w=-1.5'
    'matern52|log_v0=0.7,log_w=-0.5'
    'matern12ard@1-3|log_w1=-1,log_w2=-0.5,log_w3=-2'
    'matern32ard@1-3|log_v0=0.4,log_w1=-2,log_w2=-1,log_w3=-0.5'
    'matern52ard@1-3|log_w1=-0.5,log_w2=-1.5,log_w3=-1'
    'rq|log_v0=0.5,log_w=-1,log_alpha=0.5'
    'rqard@1-3|log_w1=-1,log_w2=-1.5,log_w3=-0.5,log_alpha=-0.5'
    'periodic@1-2|log_v0=0.5,log_w=-0.5,log_p=0.7'
    'periodicard@1-2|log_w1=-0.5,log_w2=-1,log_p1=0.5,log_p2=1.2'
    'poly2|log_v=-6,log_c=0.5'
    'poly3@1-2|log_v=-8,log_c=0.5'
)
# One of each family (Matern, rational quadratic, periodic, polynomial), for
# the methods after the first, which has checked every term: a method sees a
# term only through K and dK, the same for every method.
FEW=("${TERMS[0]}" "${TERMS[7]}" "${TERMS[9]}" "${TERMS[11]}")
# Length scales of e^6 and e^-6 (log_w = -12 and 12), a period of e^3 far
# beyond the data, a nearly squared-exponential rq.
EXTREME=(
    'matern32ard@1-2*periodic@3|t1.log_w1=12,t1.log_w2=-12,t2.log_w=-1,t2.log_p=6'
    '(matern52@1-2+linear@3)*rq@3|t1.log_w=-12,t3.log_w=12,t3.log_alpha=3'
    'matern12|log_w=12'
    'matern52ard@1-2|log_w1=-12,log_w2=12'
    'rqard@1-2|log_w1=-12,log_w2=-1,log_alpha=6'
    'periodicard@1-2|log_w1=-12,log_p1=6,log_p2=-1'
)
# The products at their extremes.
EXTREME_FEW=("${EXTREME[0]}" "${EXTREME[1]}")

setup() {
    require_tools gpc-fit gpc-predict gpc-evidence gpc-kernel gpc-hmc gpc-cv gpc-score gpc-folds gpc-plot
    common_setup
    # iris: X3.txt y3.txt (30 cases, 3 species), Xt3.txt (30 test cases)
    iris_fixtures
}

# ---- helpers ---------------------------------------------------------------------------

# evidence_fd over 'spec|params' entries on inputs X and labels Y, the
# options after '--' going to every gpc-evidence run; the failing spec is
# named.  Usage: fd_each X Y ENTRY... -- OPTION...
fd_each() {
    local X="$1" Y="$2" entries=() e
    shift 2
    while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
        entries+=("$1")
        shift
    done
    shift
    for e in "${entries[@]}"; do
        evidence_fd "$X" "$Y" "${e%%|*}" "${e#*|}" "$@" ||
            fail "spec '${e%%|*}' at ${e#*|} ($*): $output"
    done
}

# The shared hyperparameters 'a=1,b=2' as three classes' copies
# 'a.c1=0.75,b.c1=1.75,a.c2=1,...' (each class shifted, so they differ).
per_class_params() {
    awk -v p="$1" 'BEGIN { n = split(p, kv, ",")
        for (c = 1; c <= 3; c++) for (i = 1; i <= n; i++) {
            split(kv[i], a, "=")
            printf "%s%s.c%d=%.17g", (c + i > 2 ? "," : ""), a[1], c, a[2] + 0.25 * (c - 2) } }'
}

# A model's hyperparameters as the 'name=value,...' list -p takes, digits
# as stored.
params_of() {
    model_params "$1" | awk '{ printf "%s%s=%s", (NR > 1 ? "," : ""), $1, $2 }'
}

# Every value in the hyperparameter columns (2..NP+1) of a chain's rows is a
# finite number.  Usage: assert_chain_finite CHAIN NP
assert_chain_finite() {
    run awk -v np="$2" '/^#/ || $1 == "iteration" { next }
        { r++; for (j = 2; j <= np + 1; j++)
              if ($j !~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/) { print "row " r ": column " j " is " $j; exit 1 } }
        END { if (!r) { print "no rows"; exit 1 } }' "$1"
    assert_success
}

# Fit with the given options (spec SPEC; binary data Xz/y or multiclass
# X3/y3 by NCLASS), by ML-II (or by each optimiser FIT_O lists, e.g. "ml
# map"), then: the model records the spec, the method and the optimiser,
# gpc-predict reads it back and writes probabilities, and a refit with
# -O none at the model's hyperparameters gives the same log evidence.
# Usage: fit_predict_check NCLASS METHOD SPEC [FIT-OPTION]...
fit_predict_check() {
    local nclass="$1" method="$2" spec="$3" X Y XT NT O m k meth fit ev
    shift 3
    if [ "$nclass" = 2 ]; then X=Xz.txt Y=y.txt XT=Xtz.txt NT=20; else X=X3.txt Y=y3.txt XT=Xt3.txt NT=30; fi
    for O in ${FIT_O:-ml}; do
        m="m-$O.txt"
        rm -f "$m" p.txt refit.txt
        run gpc-fit -q -O "$O" -k "$spec" "$@" -m "$m" "$X" "$Y"
        [ "$status" -eq 0 ] || fail "gpc-fit -O $O -k '$spec' $*: status $status: $output"
        read -r k meth ev < <(awk '{ v[$1] = $2 } END { print v["kernel"], v["method"], v["log_evidence"] }' "$m")
        case "$*" in
            *--per-class*) assert_equal "$k" "$spec:per-class=3" ;;
            *) assert_equal "$k" "$spec" ;;
        esac
        assert_equal "$meth" "$method"
        assert_equal "$(awk '$1 == "fit" { sub(/,$/, "", $2); print $2 }' "$m")" "$O"
        # vb says which objective chose them
        if [ "$method" = vb ]; then
            [[ "$(grep '^fit ' "$m")" == *", laplace evidence" ]] || fail "$(grep '^fit ' "$m")"
        fi
        run gpc-predict -m "$m" -c p -o p.txt "$XT"
        [ "$status" -eq 0 ] || fail "gpc-predict on the '$spec' $* model: $output"
        if [ "$nclass" = 2 ]; then assert_probs p.txt 1 "$NT"; else assert_probs p.txt 3 "$NT"; fi
        # the fit's log evidence is the evidence at its hyperparameters
        run gpc-fit -q -O none -k "$k" -p "$(params_of "$m")" $(opts_without_per_class "$@") -m refit.txt "$X" "$Y"
        [ "$status" -eq 0 ] || fail "refit of the '$spec' $* model: $output"
        assert_close "$ev" "$(model_value refit.txt log_evidence)" 1e-10
    done
}

# The options without --per-class (the model's kernel line carries it).
opts_without_per_class() {
    local o
    for o in "$@"; do
        [ "$o" = --per-class ] || printf '%s\n' "$o"
    done
}

# ---- 1. gradients of every evidence against central differences -------------------------------

@test "kernel methods: -M laplace -l logistic gradients match central differences (products, new terms, extremes)" {
    fd_each Xz.txt y.txt "${PRODUCTS[@]}" "${NESTED[@]}" "${TERMS[@]}" "${EXTREME[@]}" -- -M laplace -l logistic
}

@test "kernel methods: -M laplace -l probit gradients match central differences (products, new terms, extremes)" {
    fd_each Xz.txt y.txt "${PRODUCTS[@]}" "${FEW[@]}" "${EXTREME_FEW[@]}" -- -M laplace -l probit
}

@test "kernel methods: -M ep gradients match central differences (products, new terms, extremes)" {
    fd_each Xz.txt y.txt "${PRODUCTS[@]}" "${FEW[@]}" "${EXTREME_FEW[@]}" -- -M ep --tol=1e-12
}

@test "kernel methods: multiclass softmax gradients match central differences (products, new terms, extremes)" {
    fd_each X3.txt y3.txt "${PRODUCTS[@]}" "${NESTED[@]}" "${FEW[@]}" "${EXTREME[@]}" -- -l softmax
}

@test "kernel methods: softmax --per-class gradients match central differences, every class's copy" {
    local e entries=()
    for e in "${PRODUCTS[@]}" 'matern32ard@1-3|log_w1=-2,log_w2=-1' 'rq|log_alpha=0.5' \
             'periodicard@1-2|log_p1=0.5' 'poly2|log_c=0.5' "${EXTREME[0]}"; do
        entries+=("${e%%|*}:per-class=3|$(per_class_params "${e#*|}")")
    done
    fd_each X3.txt y3.txt "${entries[@]}" -- -l softmax
    # --per-class is the same as the clause
    e="${PRODUCTS[0]}"
    gpc-evidence -q -k "${e%%|*}" --per-class -p "$(per_class_params "${e#*|}")" X3.txt y3.txt > a.txt
    gpc-evidence -q -k "${e%%|*}:per-class=3" -p "$(per_class_params "${e#*|}")" X3.txt y3.txt > b.txt
    assert_files_equal a.txt b.txt
}

@test "kernel methods: -M vb bound gradients match central differences (products, new terms, extremes)" {
    fd_each X3.txt y3.txt "${PRODUCTS[@]}" "${FEW[@]}" "${EXTREME_FEW[@]}" -- -M vb --tol=1e-13
}

@test "kernel methods: --multiclass=ovr gradients match central differences (laplace and ep)" {
    fd_each X3.txt y3.txt "${PRODUCTS[@]}" "${FEW[@]}" "${EXTREME_FEW[@]}" -- --multiclass=ovr
    fd_each X3.txt y3.txt "${PRODUCTS[@]}" "${EXTREME[0]}" -- --multiclass=ovr -M ep --tol=1e-12
}

# Where two cases coincide (r = 0) matern12's derivative in r is infinite;
# its derivatives in the log hyperparameters are not.
@test "kernel methods: on repeated cases the gradients still match central differences (laplace, softmax)" {
    head -n 20 Xz.txt > half.txt
    cat half.txt half.txt > Xd.txt
    head -n 20 y.txt > yhalf.txt
    cat yhalf.txt yhalf.txt > yd.txt
    fd_each Xd.txt yd.txt 'matern12|log_w=-1' 'matern12ard@1-3|log_w1=-1,log_w2=0.5' \
        'matern32ard@1-2*periodic@3|t1.log_w1=-1,t2.log_p=0.5' 'rqard@1-3*matern52@4|t1.log_alpha=-1' \
        'periodicard@1-2*matern12@3|t2.log_w=0.5' -- -l logistic
    # every other iris case (all three species), each twice
    awk 'NR % 2' X3.txt > half.txt
    cat half.txt half.txt > Xd3.txt
    awk 'NR % 2' y3.txt > yhalf.txt
    cat yhalf.txt yhalf.txt > yd3.txt
    [ "$(sort -u yd3.txt | wc -l)" -eq 3 ] || fail "not three species"
    fd_each Xd3.txt yd3.txt 'matern12ard@1-3|log_w1=-1,log_w2=0.5' 'matern32ard@1-2*periodic@3|t1.log_w1=-1' -- -l softmax
}

# ---- 2. fits and predictions of every method ---------------------------------------------------

@test "kernel methods: laplace (logistic, probit) fits by ML-II and MAP, predicts, and its evidence refits" {
    local spec
    FIT_O="ml map" fit_predict_check 2 laplace "${PRODUCTS[0]%%|*}"
    for spec in "${PRODUCTS[1]%%|*}" "${PRODUCTS[2]%%|*}" 'matern52ard@1-3' 'poly2@1-3'; do
        fit_predict_check 2 laplace "$spec"
    done
    fit_predict_check 2 laplace "${PRODUCTS[1]%%|*}" -l probit
}

@test "kernel methods: ep fits by ML-II and MAP, predicts, and its evidence refits" {
    local spec
    FIT_O="ml map" fit_predict_check 2 ep "${PRODUCTS[1]%%|*}" -M ep
    for spec in "${PRODUCTS[0]%%|*}" "${PRODUCTS[2]%%|*}" 'rqard@1-3' 'periodicard@1-2'; do
        fit_predict_check 2 ep "$spec" -M ep
    done
}

@test "kernel methods: naive mean field (-O none) fits and predicts with products and each family of terms" {
    local e spec
    for e in "${PRODUCTS[@]}" "${FEW[@]}"; do
        spec="${e%%|*}"
        rm -f m.txt p.txt
        run gpc-fit -q -M naive -O none -k "$spec" -p "${e#*|}" -m m.txt Xz.txt y.txt
        [ "$status" -eq 0 ] || fail "naive '$spec': $output"
        assert_equal "$(model_value m.txt kernel)" "$spec"
        assert_equal "$(model_value m.txt method)" naive
        run gpc-predict -m m.txt -c p -o p.txt Xtz.txt
        assert_success
        assert_probs p.txt 1 20
    done
}

@test "kernel methods: softmax (shared and --per-class) fits by ML-II and MAP, predicts, and its evidence refits" {
    local spec
    FIT_O="ml map" fit_predict_check 3 laplace "${PRODUCTS[2]%%|*}"
    for spec in "${PRODUCTS[0]%%|*}" "${PRODUCTS[1]%%|*}" 'matern32'; do
        fit_predict_check 3 laplace "$spec"
    done
    FIT_O="ml map" fit_predict_check 3 laplace "${PRODUCTS[0]%%|*}" --per-class
}

@test "kernel methods: vb fits by ML-II and MAP, predicts, and its Laplace evidence refits" {
    local spec
    FIT_O="ml map" fit_predict_check 3 vb "${PRODUCTS[0]%%|*}" -M vb
    for spec in "${PRODUCTS[1]%%|*}" "${PRODUCTS[2]%%|*}" 'periodicard@1-2'; do
        fit_predict_check 3 vb "$spec" -M vb
    done
}

@test "kernel methods: one-vs-rest (laplace, ep) fits by ML-II and MAP, predicts, and its evidence refits" {
    local spec
    FIT_O="ml map" fit_predict_check 3 laplace-ovr "${PRODUCTS[1]%%|*}" --multiclass=ovr
    for spec in "${PRODUCTS[0]%%|*}" "${PRODUCTS[2]%%|*}" 'matern12'; do
        fit_predict_check 3 laplace-ovr "$spec" --multiclass=ovr
    done
    FIT_O="ml map" fit_predict_check 3 ep-ovr "${PRODUCTS[0]%%|*}" -M ep --multiclass=ovr
}

# ---- 3. chains ------------------------------------------------------------------------------------

@test "kernel methods: gpc-hmc samples a product kernel's hyperparameters, extends exactly, predicts from the chain" {
    local spec='matern32ard@1-2*periodic@3' names
    names="$(gpc-kernel -k "$spec" -L Xz.txt | cut -d' ' -f1 | tr '\n' ' ')"
    assert_equal "$names" "t1.log_v0 t1.log_w1 t1.log_w2 t2.log_v0 t2.log_w t2.log_p "
    gpc-hmc -q -k "$spec" -L 3 -n 8 --adapt=none -o long.txt Xz.txt y.txt
    run grep -Fx "# kernel $spec" long.txt
    assert_success
    run grep '^iteration ' long.txt
    assert_output --regexp "^iteration ${names}potential log_evidence accepted "
    assert_chain_finite long.txt 6
    run awk '!/^#/ && $1 != "iteration" { a += $(6 + 4) } END { print (a > 0) }' long.txt
    assert_output 1
    gpc-hmc -q -k "$spec" -L 3 -n 5 --adapt=none -o short.txt Xz.txt y.txt
    gpc-hmc -q -x short.txt -n 3 Xz.txt y.txt
    assert_files_equal short.txt long.txt
    # predictions from the chain, through a Laplace model of the same kernel
    gpc-fit -q -O none -k "$spec" -m m.txt Xz.txt y.txt
    gpc-predict -q -m m.txt --chain long.txt --burn 2 -c p -o p.txt Xtz.txt
    assert_probs p.txt 1 20
    # a one-row chain predicts as the model at that row's hyperparameters
    awk '/^#/ || $1 == "iteration" || $1 == 4' long.txt > one.txt
    p="$(awk '$1 == "iteration" { for (j = 2; j <= 7; j++) n[j] = $j; next }
              !/^#/ { for (j = 2; j <= 7; j++) printf "%s%s=%s", (j > 2 ? "," : ""), n[j], $j }' one.txt)"
    gpc-fit -q -O none -k "$spec" -p "$p" -m at.txt Xz.txt y.txt
    gpc-predict -m at.txt -c p,mean,var Xtz.txt > want.txt
    gpc-predict -q -m m.txt --chain one.txt --burn 0 -c p,mean,var Xtz.txt > got.txt
    assert_matrices_close want.txt got.txt 1e-9
}

@test "kernel methods: multiclass gpc-hmc (softmax, --per-class) with a product kernel extends exactly" {
    local spec='(matern52@1-2+linear@3)*rq@3'
    gpc-hmc -q -k "$spec" --per-class -L 3 -n 4 -o long.txt X3.txt y3.txt
    run grep '^iteration ' long.txt
    assert_output --regexp '^iteration t1\.log_v0\.c1 t1\.log_w\.c1 log_v\.c1 t3\.log_v0\.c1 t3\.log_w\.c1 t3\.log_alpha\.c1 t1\.log_v0\.c2 .* t3\.log_alpha\.c3 potential '
    assert_chain_finite long.txt 18
    gpc-hmc -q -k "$spec" --per-class -L 3 -n 2 -o short.txt X3.txt y3.txt
    gpc-hmc -q -x short.txt -n 2 X3.txt y3.txt
    assert_files_equal short.txt long.txt
}

@test "kernel methods: gpc-hmc -M gibbs samples a product kernel, extends exactly, predicts through a vb model" {
    local spec='matern32ard@1-2*periodic@3'
    gpc-hmc -q -M gibbs -k "$spec" -n 12 -o long.txt X3.txt y3.txt
    run grep '^iteration ' long.txt
    assert_output --regexp '^iteration t1\.log_v0 t1\.log_w1 t1\.log_w2 t2\.log_v0 t2\.log_w t2\.log_p potential log_p_y accepted step y1\.1 '
    assert_chain_finite long.txt 6
    gpc-hmc -q -M gibbs -k "$spec" -n 7 -o short.txt X3.txt y3.txt
    gpc-hmc -q -x short.txt -n 5 X3.txt y3.txt
    assert_files_equal short.txt long.txt
    gpc-fit -q -M vb -O none -k "$spec" -m vb.txt X3.txt y3.txt
    gpc-predict -q -m vb.txt --chain long.txt -c p -o p.txt Xt3.txt
    assert_probs p.txt 3 30
}

# ---- 4. column names in products --------------------------------------------------------------

@test "kernel methods: a product naming CSV columns names its length scales and periods after them" {
    {
        echo 'pregnancies,glucose,blood pressure,skin,bmi,pedigree,age'
        tr ' ' ',' < Xz.txt
    } > train.csv
    {
        echo 'pregnancies,glucose,blood pressure,skin,bmi,pedigree,age,diabetes'
        paste -d' ' Xz.txt y.txt | tr ' ' ','
    } > all.csv
    {
        echo 'age,bmi,blood pressure,glucose,pregnancies,skin,pedigree'
        awk '{ print $7 "," $5 "," $3 "," $2 "," $1 "," $4 "," $6 }' Xtz.txt
    } > test.csv
    local spec='matern32ard@age,bmi*periodicard@"blood pressure"'
    run gpc-kernel -k "$spec" -L train.csv
    assert_success
    assert_output "t1.log_v0 0
t1.log_w.age -2  # also t1.log_w7
t1.log_w.bmi -2  # also t1.log_w5
t2.log_v0 0
t2.log_w.blood_pressure -2  # also t2.log_w3, column 'blood pressure'
t2.log_p.blood_pressure 0  # also t2.log_p3, column 'blood pressure'"
    # the named spec is the numbered one
    gpc-fit -q -O none -k "$spec" -p 't1.log_w.age=-1,t2.log_p.blood_pressure=0.5' -m named.txt train.csv y.txt
    gpc-fit -q -O none -k 'matern32ard@7,5*periodicard@3' -p 't1.log_w7=-1,t2.log_p3=0.5' -m numbered.txt Xz.txt y.txt
    assert_equal "$(model_value named.txt kernel)" 'matern32ard@7,5*periodicard@3'
    diff <(grep -v '^columns ' named.txt) numbered.txt || fail "the models differ"
    # -P writes the names; they read back into the evidence
    gpc-fit -q -k "$spec" -m ml.txt -P params.txt train.csv y.txt
    run cut -d' ' -f1 params.txt
    assert_output "$(printf 't1.log_v0\nt1.log_w.age\nt1.log_w.bmi\nt2.log_v0\nt2.log_w.blood_pressure\nt2.log_p.blood_pressure')"
    gpc-evidence -q -n -k "$spec" -H params.txt train.csv y.txt > e.txt
    assert_close "$(cat e.txt)" "$(model_value ml.txt log_evidence)" 1e-10
    # --fix by name keeps that value
    gpc-fit -q -k "$spec" -p t2.log_p.blood_pressure=0.25 --fix=t2.log_p.blood_pressure -m fixed.txt train.csv y.txt
    assert_equal "$(model_value fixed.txt t2.log_p3)" 0.25
    # the test file's columns in another order are matched by name
    gpc-predict -m named.txt -o byname.txt test.csv
    gpc-predict -m numbered.txt -o bynumber.txt Xtz.txt
    assert_files_equal byname.txt bynumber.txt
    # --label-column: the labels in the same CSV give the same model
    gpc-fit -q -O none -k "$spec" -p 't1.log_w.age=-1,t2.log_p.blood_pressure=0.5' \
        --label-column=diabetes -m lc.txt all.csv
    assert_files_equal lc.txt named.txt
    gpc-fit -q -k "$spec" --label-column=8 -m lc-ml.txt all.csv
    assert_close "$(model_value lc-ml.txt log_evidence)" "$(model_value ml.txt log_evidence)" 1e-12
    # gpc-cv passes the quoted spec and --label-column on to every fold
    run gpc-cv -q -K 3 --label-column=diabetes -o cv-named.txt all.csv -- -k "$spec"
    assert_success
    gpc-cv -q -K 3 -o cv-numbered.txt Xz.txt y.txt -- -k 'matern32ard@7,5*periodicard@3'
    assert_files_equal cv-named.txt cv-numbered.txt
    # a chain over the named product names them in its summary
    gpc-hmc -q -k "$spec" -L 3 -n 6 --adapt=none -o c.txt train.csv y.txt
    run gpc-hmc --summary --burn=1 c.txt
    assert_success
    assert_line --regexp '^t1\.log_w\.age +-?[0-9]'
    assert_line --regexp '^t2\.log_p\.blood_pressure +-?[0-9]'
}

# ---- 5. models read back, cross-validation ----------------------------------------------------------

@test "kernel methods: a product model predicts the same bytes every time, and as its refit does" {
    local e spec
    for e in "${PRODUCTS[@]}"; do
        spec="${e%%|*}"
        gpc-fit -q -k "$spec" -m m.txt Xz.txt y.txt
        gpc-predict -m m.txt -c p,plugin,mean,var,label -o a.txt Xtz.txt
        gpc-predict -m m.txt -c p,plugin,mean,var,label -o b.txt Xtz.txt
        assert_files_equal a.txt b.txt
        # the model copied through standard input predicts the same
        gpc-predict -m - -c p,plugin,mean,var,label Xtz.txt < m.txt > c.txt
        assert_files_equal a.txt c.txt
        # a refit at its hyperparameters predicts the same numbers
        gpc-fit -q -O none -k "$spec" -p "$(params_of m.txt)" -m r.txt Xz.txt y.txt
        gpc-predict -m r.txt -c p,plugin,mean,var -o r.txt.p Xtz.txt
        gpc-predict -m m.txt -c p,plugin,mean,var -o m.txt.p Xtz.txt
        assert_matrices_close m.txt.p r.txt.p 1e-8
    done
    # a multiclass product model too
    gpc-fit -q -M vb -k "${PRODUCTS[1]%%|*}" -m v.txt X3.txt y3.txt
    gpc-predict -m v.txt -o a.txt Xt3.txt
    gpc-predict -m v.txt -o b.txt Xt3.txt
    assert_files_equal a.txt b.txt
}

@test "kernel methods: gpc-cv cross-validates with a product kernel, each fold its own fit" {
    local spec='bias*(se+poly2)' errors
    run gpc-cv -q -K 4 -o cv.txt Xz.txt y.txt -- -k "$spec"
    assert_success
    assert_probs cv.txt 1 40
    # gpc-score counts the errors the labels of the predictions make
    run gpc-score -t cv.txt y.txt
    assert_success
    errors="$(grep -v '^#' cv.txt | paste -d' ' - y.txt | awk '$4 != $5 { e++ } END { print e + 0 }')"
    assert_output --regexp "^$errors 40 "
    # fold 1's predictions are a fit on the other folds: the same by hand
    gpc-folds -K 4 y.txt > folds.txt
    paste -d' ' folds.txt Xz.txt | awk '$1 != 1 { $1 = ""; sub(/^ /, ""); print }' > Xtr.txt
    paste -d' ' folds.txt y.txt | awk '$1 != 1 { print $2 }' > ytr.txt
    paste -d' ' folds.txt Xz.txt | awk '$1 == 1 { $1 = ""; sub(/^ /, ""); print }' > Xte.txt
    gpc-fit -q -k "$spec" -m f1.txt Xtr.txt ytr.txt
    gpc-predict -m f1.txt -o want.txt Xte.txt
    grep -v '^#' cv.txt | paste -d' ' folds.txt - | awk '$1 == 1 { $1 = ""; sub(/^ /, ""); print }' > got.txt
    assert_matrices_close want.txt got.txt 1e-12
    # multiclass, one-vs-rest with EP and a new term beside a product
    run gpc-cv -q -K 3 -o cv3.txt X3.txt y3.txt -- -k 'matern32ard@1-2*periodic@3+rq@4' --multiclass=ovr -M ep
    assert_success
    assert_probs cv3.txt 3 30
}

@test "kernel methods: gpc-plot draws a product model's surface and a product chain's trace" {
    local spec='matern32ard@1-2*periodic@3'
    gpc-fit -q -O none -k "$spec" -m m.txt X3.txt y3.txt
    run gpc-plot surface -q --grid=15 -o s.svg m.txt
    assert_success
    grep -qF "of m.txt (laplace, softmax, kernel $spec)" s.svg || fail "title: $(grep -o 'of m.txt[^<]*' s.svg)"
    gpc-hmc -q -k "$spec" -L 3 -n 6 --adapt=none -o c.txt Xz.txt y.txt
    run gpc-plot trace -q --burn=1 -o t.svg c.txt
    assert_success
    for name in t1.log_v0 t1.log_w1 t1.log_w2 t2.log_v0 t2.log_w t2.log_p; do
        grep -q ">$name<" t.svg || fail "no panel for $name"
    done
}
