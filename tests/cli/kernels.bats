#!/usr/bin/env bats
# Every kernel term, sums, products and nested products of sums: gpc-kernel
# against an independent reference, tests/ref/kernel_reference.py, written in
# plain numpy from the formulas and naming rule in src/lib/kernels/kernel.h
# and sharing no code with src/lib/kernels/kernel.c.  It runs under Debian's
# /usr/bin/python3 with python3-numpy (installed by scripts/deps.sh); the
# tests are skipped only if those are missing.
#
# A case is a directory holding its spec; the reference writes its
# hyperparameters (CASE/theta), gpc-kernel reads them (--params-file) and
# writes its --list, K(X, X), K(X, XS) and --diag there, and one run of the
# reference checks all cases: names and order as the reference lays them
# out, every matrix within 1e-12 of the largest |entry| of the reference's,
# and K(X, X) positive semi-definite (smallest eigenvalue >= -1e-10 times
# the largest).  Inputs: 30 rows of 4 continuous columns and one of small
# integers (for :discrete), with rows 7, 14, 21, 28 repeating rows 4, 11,
# 18, 25 so that zero distances occur; XS has 10 rows, two of them rows of X.

load test_helper

PY=/usr/bin/python3

setup() {
    require_tools gpc-kernel
    [ -x "$PY" ] || skip "no $PY (apt-get install python3-numpy)"
    "$PY" -c 'import numpy' 2>/dev/null || skip "no numpy for $PY (apt-get install python3-numpy)"
    common_setup
    REF="$REPO/tests/ref/kernel_reference.py"
    # rows: 4 columns uniform on (-1.5, 1.5) with 6 decimals, and 0, 1 or 2
    awk 'BEGIN { srand(20261128)
        for (i = 1; i <= 30; i++) {
            if (i % 7 == 0) { row[i] = row[i - 3] } else {
                row[i] = ""
                for (j = 1; j <= 4; j++) row[i] = row[i] sprintf("%.6f ", 3 * rand() - 1.5)
                row[i] = row[i] int(3 * rand())
            }
            print row[i] } }' > X.txt
    { awk 'BEGIN { srand(7)
        for (i = 1; i <= 8; i++) {
            for (j = 1; j <= 4; j++) printf "%.6f ", 3 * rand() - 1.5
            print int(3 * rand()) } }'
      sed -n '5p;14p' X.txt; } > XS.txt
    assert_shape X.txt 30 5
    assert_shape XS.txt 10 5
    CASES=()
}

# add_case SPEC [WORD]...: a case directory for SPEC; the words go to the
# reference's params command (BASE=VALUE sets every hyperparameter of that
# base name, e.g. log_w=12 for log_w, log_w3, t2.log_w; "fd" adds the
# perturbed sets for finite differences).
add_case() {
    local d="case${#CASES[@]}"
    mkdir "$d"
    printf '%s\n' "$1" > "$d/spec"
    shift
    echo "$*" > "$d/set"
    CASES+=("$d")
}

# gpc_cases: the reference's hyperparameters for every case, then
# gpc-kernel's list, K, cross matrix and diagonal at them; a failing
# gpc-kernel leaves no CASE/K and its message in CASE/err, for the check.
gpc_cases() {
    local d spec
    "$PY" "$REF" params X.txt "${CASES[@]}" || fail "the reference refused a spec"
    for d in "${CASES[@]}"; do
        spec="$(cat "$d/spec")"
        if ! { gpc-kernel -k "$spec" -H "$d/theta" -L X.txt > "$d/list" 2> "$d/err" &&
               gpc-kernel -k "$spec" -H "$d/theta" X.txt XS.txt > "$d/Ks" 2>> "$d/err" &&
               gpc-kernel -k "$spec" -H "$d/theta" -d X.txt > "$d/diag" 2>> "$d/err" &&
               gpc-kernel -k "$spec" -H "$d/theta" X.txt > "$d/K" 2>> "$d/err"; }; then
            rm -f "$d/K"
        fi
    done
}

# check_cases: all cases against the reference, every failure listed.
check_cases() {
    gpc_cases
    run "$PY" "$REF" check X.txt XS.txt "${CASES[@]}"
    assert_success
}

# check_gradients: for each case (added with the word fd), gpc-kernel -D
# for every hyperparameter against central differences of gpc-kernel's own
# K at theta_j +- 1e-5: within 1e-7 of max |dK| plus 1e-9 of max |K|.
check_gradients() {
    local d spec n j name
    "$PY" "$REF" params X.txt "${CASES[@]}" || fail "the reference refused a spec"
    for d in "${CASES[@]}"; do
        spec="$(cat "$d/spec")"
        n=$(wc -l < "$d/theta")
        gpc-kernel -k "$spec" -H "$d/theta" X.txt > "$d/K" 2> "$d/err" || continue
        for j in $(seq 1 "$n"); do
            name="$(sed -n "${j}p" "$d/theta" | cut -d' ' -f1)"
            if ! { gpc-kernel -k "$spec" -H "$d/theta" -D "$name" X.txt > "$d/D.$j" 2>> "$d/err" &&
                   gpc-kernel -k "$spec" -H "$d/plus.$j" X.txt > "$d/Kp.$j" 2>> "$d/err" &&
                   gpc-kernel -k "$spec" -H "$d/minus.$j" X.txt > "$d/Km.$j" 2>> "$d/err"; }; then
                break
            fi
        done
    done
    run "$PY" "$REF" gradcheck "${CASES[@]}"
    assert_success
}

# ---- the reference itself --------------------------------------------------------

@test "kernel reference: closed forms, identities, names and bad specs" {
    run "$PY" "$REF" selftest
    assert_success
    assert_output ''
}

@test "kernel reference: the check fails on a wrong matrix, a wrong name and an indefinite K" {
    add_case 'ard@1-2+se@3-4+bias+jitter'
    gpc_cases
    cp -r case0 case1
    cp -r case0 case2
    cp -r case0 case3
    # one entry off by 1e-11 of the largest
    awk 'NR == 3 { $2 = sprintf("%.17g", $2 + 1e-11 * 3) } { print }' case0/K > case1/K
    sed -i '1s/t1\.log_v0/t1.log_v00/' case2/list
    # a negative eigenvalue of 1e-9 of the largest
    "$PY" -c '
import numpy as np
K = np.loadtxt("case0/K")
w, V = np.linalg.eigh(K)
K -= (w[0] + 1e-9 * w[-1]) * np.outer(V[:, 0], V[:, 0])
np.savetxt("case3/K", K, fmt="%.17g")'
    run "$PY" "$REF" check X.txt XS.txt case0 case1 case2 case3
    assert_failure
    assert_line --index 0 --partial 'ok   case0'
    assert_line --regexp '^FAIL case1 '
    assert_line --partial 'K(X, X): entry (3,2)'
    assert_line --regexp '^FAIL case2 '
    assert_line --partial '--list names t1.log_v00'
    assert_line --regexp '^FAIL case3 '
    assert_line --partial "gpc-kernel's K(X, X) not positive semi-definite"
    assert_line --partial '3 of 4 cases failed'
}

# check_defaults: gpc-kernel --list without values, for every case, against
# the reference's names and documented defaults.
check_defaults() {
    local d
    for d in "${CASES[@]}"; do
        gpc-kernel -k "$(cat "$d/spec")" -L X.txt > "$d/list0" 2> "$d/err" || rm -f "$d/list0"
    done
    run "$PY" "$REF" defaults X.txt "${CASES[@]}"
    assert_success
}

@test "gpc-kernel --list: names, order and defaults of the existing terms in sums" {
    local s
    for s in 'ard+bias+jitter' 'ard@1-3+ard@4-5+jitter' 'se+nn+linear@2-3' 'linear@1+linear@2' \
             'ard:discrete=5' 'jitter+jitter+bias@2'; do
        add_case "$s"
    done
    check_defaults
}

@test "gpc-kernel --list: names, order and defaults of the new terms, in sums and products" {
    local s
    for s in 'matern12+matern32@1-2+matern52ard@3,5' 'matern12ard@2-3*matern32ard@4' \
             'rq@1-2+rqard@3-4' 'periodic@1+periodicard@2-4' 'poly1+poly2@1-2+poly3@3-4+linear' \
             'ard@1-3*periodic@4' '(matern32@1-2+linear@3)*periodic@4' \
             '(ard@1-2+bias)*(rq@3-4+jitter)+jitter' 'poly32@1*nn@2' 'se@1-2*se@3-4'; do
        add_case "$s"
    done
    check_defaults
}

# ---- terms that were there before products ----------------------------------------

@test "ard, se, linear, nn, bias, jitter and their sums agree with the reference" {
    local s
    for s in ard se linear nn bias jitter 'ard+bias+jitter' 'ard@1-2+se@3-4+linear@5+nn+bias+jitter' \
             'se@1,3+se@2,4' 'nn@1-2+linear@3-4' 'ard@4,2,1+jitter@3'; do
        add_case "$s"
    done
    add_case 'ard+se@1-2+nn@3-4' log_w=12 log_s=6 log_s0=-6
    add_case 'ard+se@1-2+nn@3-4+bias' log_w=-12 log_v0=6 log_s=-6 log_bias=6
    add_case 'ard+jitter' log_w=12
    check_cases
}

@test "discrete columns in ard and se agree with the reference" {
    add_case 'ard:discrete=5'
    add_case 'se@1-2+ard@3-5+bias:discrete=5'
    add_case 'se@5+linear+jitter:discrete=5' log_w=12
    check_cases
}

@test "the existing terms give the same K and cross matrix as before products" {
    # Written by gpc-kernel before the spec grammar had products (the first
    # 12 standardised Pima training rows, cross with rows 20-24); a change
    # of rounding only is allowed.
    head -n 12 Xz.txt > X12.txt
    sed -n 20,24p Xz.txt > Xs5.txt
    local dir="$BATS_TEST_DIRNAME/data/kernels" name spec p
    while read -r name spec p; do
        gpc-kernel -k "$spec" -p "$p" X12.txt > K.txt
        gpc-kernel -k "$spec" -p "$p" X12.txt Xs5.txt > Ks.txt
        assert_matrices_close K.txt "$dir/$name-K.txt" 1e-14
        assert_matrices_close Ks.txt "$dir/$name-Ks.txt" 1e-14
    done <<'EOF'
ardbias ard+bias+jitter 0.5,-1,-2,-0.5,-3,-1.5,-2.5,0,-2,-4
mixed se@1-3+linear@4,5+nn@6-7+jitter 0.3,-1.2,-0.7,0.4,-0.5,0.6,-3
discrete ard@1-4+ard@5-7+bias:discrete=1 0.2,-0.5,-1,-1.5,-2,-0.3,-0.8,-1.3,-1.8,-2.5
EOF
}

@test "gpc-kernel --grad agrees with central differences on sums of the existing terms" {
    add_case 'ard@1-2+se@3-4+linear@5+nn+bias+jitter' fd
    add_case 'se@1-2+ard@3-5:discrete=5' fd
    check_gradients
}

# ---- the Matern, rational quadratic, periodic and polynomial terms -----------------

@test "every new term alone agrees with the reference" {
    local s
    for s in matern12 matern32 matern52 matern12ard matern32ard matern52ard rq rqard \
             periodic periodicard poly1 poly2 poly3 \
             'matern32@2-3' 'matern52ard@4,1' 'rqard@1,3' 'periodic@2' 'periodicard@3-4' 'poly2@1-2'; do
        add_case "$s"
    done
    check_cases
}

@test "new terms at extreme length scales, periods, alphas and offsets agree with the reference" {
    local s v
    for s in matern12 matern32 matern52 rq; do
        for v in 12 -12; do
            add_case "$s" "log_w=$v"
        done
    done
    # both extremes in one ARD term, one per column
    for s in matern12ard matern32ard matern52ard rqard; do
        add_case "$s" log_w1=12 log_w2=-12 log_w3=-12 log_w4=12 log_w5=-12
    done
    for v in 6 -6; do
        add_case rq "log_alpha=$v"
        add_case 'rqard@1-3' "log_alpha=$v" log_w=1
        add_case periodic "log_p=$v"
        add_case periodicard "log_p=$v"
        add_case 'poly1+poly2@1-2+poly3@3-4' "log_c=$v"
    done
    # a long period at a short length scale: the kernel is then nearly
    # se, reached through sin^2 of tiny angles
    add_case 'periodic@1-2' log_p=6 log_w=12
    add_case 'periodicard@3-4' log_p=6 log_w=12
    add_case 'periodic@1' log_w=-12
    add_case 'poly3' log_v=6 log_c=-6
    check_cases
}

@test "the new terms on discrete columns and with jitter agree with the reference" {
    add_case 'matern12@1-2+matern32ard@3-5+jitter:discrete=5'
    add_case 'rq@5+periodic@1-4+poly2@5:discrete=5'
    add_case 'matern52ard+rqard+jitter:discrete=4-5' log_w=-1
    check_cases
}

# ---- products ------------------------------------------------------------------------

@test "products and nested products of sums agree with the reference" {
    local s
    for s in 'ard@1-2*se@3-4' 'se*se' 'linear*linear' 'ard*bias' 'nn@1-2*linear@3' \
             'matern32@1-2*periodic@3' '(matern32@1-2+linear@3)*periodic@4' \
             'ard@1-3*periodic@4' '(ard@1-2+bias)*(rq@3-4+jitter)' \
             '((se@1+linear@2)*matern52@3+poly2@4)*periodicard@1,4' \
             'rqard@1-2*periodicard@3-4+poly3@5*matern12' 'matern12*matern32*matern52*rq' \
             'jitter*ard+bias' '(((ard)))' '(ard+se)*(linear+nn)*(bias+jitter)' \
             'matern12@1-4*ard@5:discrete=5'; do
        add_case "$s"
    done
    add_case '(matern32@1-2+linear@3)*periodic@4' t1.log_w=12
    add_case '(matern32@1-2+linear@3)*periodic@4' log_w=-12 log_p=6
    add_case 'rq@1-2*poly2@3-4' log_alpha=-6 log_c=6
    check_cases
}

@test "gpc-kernel --grad agrees with central differences on products" {
    add_case '(matern32@1-2+linear@3)*periodic@4' fd
    add_case 'rqard@1-2*periodicard@3-4+poly3@5' fd
    add_case 'matern12@1-2*matern52ard@3-4*nn@5+jitter' fd
    add_case '(ard@1-2+bias)*(rq@3-4+jitter)' fd
    add_case 'se@1-4*ard@5+matern32ard@1-3:discrete=5' fd
    check_gradients
}

@test "ard@1-4*ard@5-8 is ard with the amplitudes multiplied" {
    awk 'BEGIN { srand(5)
        for (i = 1; i <= 20; i++) {
            for (j = 1; j <= 8; j++) printf "%.6f%s", 2 * rand() - 1, j < 8 ? " " : "\n" } }' > X8.txt
    head -n 6 X8.txt | tail -n 3 > Xs8.txt
    # ard's log_v0 = a + b; its weights w1-4 go to the first factor, w5-8
    # to the second
    local w14=-1.5,-0.5,-2,-1 w58=-3,-0.25,-1.25,-2.5 a b v0
    for v0 in "0.5 -1.25" "6 -6"; do
        read -r a b <<< "$v0"
        gpc-kernel -k 'ard@1-4*ard@5-8' -p "$a,$w14,$b,$w58" X8.txt > prod.txt
        gpc-kernel -k 'ard@1-4*ard@5-8' -p "$a,$w14,$b,$w58" X8.txt Xs8.txt > prods.txt
        gpc-kernel -k 'ard@1-4*ard@5-8' -p "$a,$w14,$b,$w58" -d X8.txt > prodd.txt
        v0=$(awk -v a="$a" -v b="$b" 'BEGIN { print a + b }')
        gpc-kernel -k ard -p "$v0,$w14,$w58" X8.txt > ard.txt
        gpc-kernel -k ard -p "$v0,$w14,$w58" X8.txt Xs8.txt > ards.txt
        gpc-kernel -k ard -p "$v0,$w14,$w58" -d X8.txt > ardd.txt
        assert_matrices_close prod.txt ard.txt 1e-13
        assert_matrices_close prods.txt ards.txt 1e-13
        assert_matrices_close prodd.txt ardd.txt 1e-13
    done
}

# ---- bad specs -------------------------------------------------------------------------

@test "bad specs with products, parentheses and the new terms: status 2, the position named" {
    cut -d' ' -f1-4 X.txt > X4.txt
    local s bad=""
    for s in 'foo' 'ard*' 'ard*+se' '(ard+se' 'ard)' '()' 'ard*()' 'poly0' 'poly2.5' 'poly' \
             'poly33' 'matern32@9' 'periodic@1+ard:discrete=1'; do
        run --separate-stderr gpc-kernel -k "$s" X4.txt
        if [ "$status" -ne 2 ]; then
            bad="$bad"$'\n'"'$s': status $status, not 2: $stderr"
        elif [ -n "$output" ]; then
            bad="$bad"$'\n'"'$s': output on standard output: $output"
        else
            # the place: a character, the spec's end, or the term and column
            case "$stderr" in
            *"at character "[0-9]* | *"at its end"* | *"term 1 (periodic@1)"*"column 1"*) ;;
            *) bad="$bad"$'\n'"'$s': the message does not name the place: $stderr" ;;
            esac
        fi
    done
    [ -z "$bad" ] || fail "bad specs:$bad"
}

@test "a spec with a product cannot carry :simplex; redundant parentheses can" {
    run --separate-stderr gpc-kernel -k 'se@1-2*se@3-4+bias:simplex' -L X.txt
    [ "$status" -eq 2 ] || fail "status $status, not 2 ($stderr)"
    [[ "$stderr" == *"simplex weighs a sum of single terms"* ]] || fail "message: $stderr"
    gpc-kernel -k '(se@1-2+se@3-4):simplex' -L X.txt > paren.txt
    gpc-kernel -k 'se@1-2+se@3-4:simplex' -L X.txt > plain.txt
    cmp paren.txt plain.txt
}
