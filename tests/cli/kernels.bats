#!/usr/bin/env bats
# Every kernel term, sum and product of gpc-kernel against an independent
# reference: tests/ref/kernel_reference.py, written in numpy from the formulas
# in the comment of src/lib/kernels/kernel.h and sharing no code with gpc.  For
# each spec: the names and order that `gpc-kernel -L` lists are the
# reference's layout, K(X, X) and K(X, XS) equal the reference's to 1e-12
# relative to the largest |entry| of the reference's matrix, and K's smallest
# eigenvalue is >= -1e-10 times its largest.  Also the scikit-learn forms of
# the one-dimensional terms, and the messages for bad specs.  It runs under
# Debian's /usr/bin/python3 with python3-numpy (installed by scripts/deps.sh);
# the comparisons are skipped only if those are missing.

load test_helper

PY=/usr/bin/python3
REF="$REPO/tests/ref/kernel_reference.py"

setup_file() {
    make_fixtures
    have_numpy || return 0
    # 30 x 4 inputs whose last 5 rows repeat the first 5, and 20 test rows of
    # which 3 are training rows, so that distances of 0 occur in K and in the
    # cross matrix; the first column alone for the one-dimensional checks.
    mkdir -p "$BATS_FILE_TMPDIR/in"
    (cd "$BATS_FILE_TMPDIR/in" && OMP_NUM_THREADS=1 "$PY" -c '
import numpy as np
r = np.random.default_rng(20261128)
X = r.normal(size=(30, 4)); X[25:] = X[:5]
Xs = r.normal(size=(20, 4)); Xs[:3] = X[7:10]
for name, m in (("X", X), ("Xs", Xs), ("X1", X[:, :1]), ("Xs1", Xs[:, :1])):
    np.savetxt(name + ".txt", m, fmt="%.17g")')
}

setup() {
    require_tools gpc-kernel
    common_setup
}

# The reference on one thread: numpy's OpenMP BLAS threads spin for seconds
# over such small matrices on a busy machine.
ref() {
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "$PY" "$REF" "$@"
}

have_numpy() {
    [ -x "$PY" ] && "$PY" -c 'import numpy' 2>/dev/null
}

require_numpy() {
    have_numpy || skip "no numpy for $PY (apt-get install python3-numpy)"
    cp "$BATS_FILE_TMPDIR"/in/* .
}

# Every term alone (poly in degrees 1 to 3), on all columns.
SINGLES=(ard se matern12 matern32 matern52 matern12ard matern32ard matern52ard
         rq rqard periodic periodicard poly1 poly2 poly3 linear nn bias jitter)
# Sums, products and products of sums, on column subsets (also out of order:
# ARD names follow the spec's order), with terms that share names (prefixed
# t<k>.) and terms that do not.
COMPOSITES=('ard+bias+jitter' 'ard@1-2+ard@3-4' 'matern12ard@1,3+rq@2+periodic@4+nn@1-2'
            'rqard@2-4+periodicard@1,3+poly2@1-2+jitter'
            'se*linear' 'matern32*poly2*bias' 'periodicard@2-3*matern12@1*jitter'
            'periodicard@3,1*rqard@4,2'
            '(matern32@1-2+linear@3)*periodic@3' 'bias*(se+poly2)'
            '((se@1*linear@2)+rq@3)*(nn+poly3@4)+jitter'
            'poly1@1*(matern52ard@2-4+(bias*(periodic@1+se)))')

# listing SPEC X: LISTING, the path of `gpc-kernel -k SPEC -L X` (default
# values), made once per file and input: the names do not change with values.
listing() {
    local key="$1"
    key=${key//+/_p}; key=${key//\*/_t}; key=${key//(/_o}; key=${key//)/_c}
    key=${key//@/_a}; key=${key//,/_m}; key=${key//-/_d}
    key="$BATS_FILE_TMPDIR/L.${2%.txt}.$key"
    LISTING="$key"
    [ -f "$key" ] || gpc-kernel -k "$1" -L "$2" > "$key" || { rm -f "$key"; return 1; }
}

# set_params W P A LISTING...: for the i-th listing (name value lines, as
# gpc-kernel -L prints), p<i>.txt with new values: every log_w... W, log_p... P,
# log_alpha A, or where such a value is '-' (and for the other names) an
# ordinary value that differs from name to name, so that a hyperparameter read
# at the wrong place shows.
set_params() {
    awk -v W="$1" -v P="$2" -v A="$3" '
        FNR == 1 { if (out != "") close(out); out = "p" (++i) ".txt" }
        {   n = $1; sub(/^t[0-9]+\./, "", n)
            f = FNR * 0.6180339887 + 0.25; f -= int(f)
            if (n ~ /^log_w/)          v = (W == "-") ? -1.5 + 2 * f : W
            else if (n ~ /^log_p/)     v = (P == "-") ? 0.3 + 1.2 * f : P
            else if (n == "log_alpha") v = (A == "-") ? -1 + 3 * f : A
            else if (n == "log_jitter") v = -4 + 2 * f
            else v = -1 + 2 * f
            printf "%s %.17g\n", $1, v > out }' "${@:4}"
}

# check_specs W P A X XS [REFERENCE OPTION]... -- SPEC...: gpc-kernel's
# K(X, X) and K(X, XS) for each spec at these hyperparameters (set_params),
# all checked with the listings by one run of the reference.
check_specs() {
    local w="$1" p="$2" a="$3" x="$4" xs="$5" i=0 s
    local -a opts=() lists=() cases=()
    shift 5
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    for s in "$@"; do
        listing "$s" "$x" || fail "gpc-kernel -k '$s' -L failed"
        lists+=("$LISTING")
    done
    set_params "$w" "$p" "$a" "${lists[@]}"
    for s in "$@"; do
        i=$((i + 1))
        if ! gpc-kernel -k "$s" -H "p$i.txt" "$x" > "K$i.txt" ||
           ! gpc-kernel -k "$s" -H "p$i.txt" "$x" "$xs" > "Ks$i.txt"; then
            fail "gpc-kernel -k '$s' -H p$i.txt failed: $(cat "p$i.txt")"
        fi
        cases+=("$s" "p$i.txt" "K$i.txt" "Ks$i.txt")
    done
    run ref "${opts[@]}" "$x" "$xs" "${cases[@]}"
    # KERNELS_VERBOSE=1 bats tests/cli/kernels.bats shows every difference
    [ -z "${KERNELS_VERBOSE:-}" ] || echo "$output" >&3
    assert_success
}

# ---- values -------------------------------------------------------------------

# Observed: the worst relative difference of any matrix, at ordinary and
# extreme hyperparameters alike, is 1.6e-15 (periodic; most terms 2e-16 to
# 6e-16, a few units in the last digit); against the scikit-learn forms 1.7e-14
# (rq at alpha e^6 raises 1 + z to the power -alpha); the smallest eigenvalue
# of K is at worst -4e-16 times the largest.  So 1e-12 and -1e-10 leave room
# for other libms and BLAS.

@test "kernels: every term, sum and product equals the reference at ordinary hyperparameters" {
    require_numpy
    check_specs - - - X.txt Xs.txt -- "${SINGLES[@]}" "${COMPOSITES[@]}"
}

# The terms that have a length scale, a period or an alpha, alone and in
# sums and products.
SCALED=(ard se matern12 matern32 matern52 matern12ard matern32ard matern52ard
        rq rqard periodic periodicard
        'matern12ard@1,3+rq@2+periodic@4+nn@1-2' '(matern32@1-2+linear@3)*periodic@3'
        'poly1@1*(matern52ard@2-4+(bias*(periodic@1+se)))')

@test "kernels: ... at length scales e^-6, periods e^6, alpha e^6" {
    require_numpy
    check_specs 12 6 6 X.txt Xs.txt -- "${SCALED[@]}"
}

@test "kernels: ... at length scales e^6, periods e^-1, alpha e^-6" {
    require_numpy
    check_specs -12 -1 -6 X.txt Xs.txt -- "${SCALED[@]}"
}

@test "kernels: ... periodic at length scales e^-6 with periods e^-1, and e^6 with e^6" {
    require_numpy
    check_specs 12 -1 - X.txt Xs.txt -- periodic periodicard
    check_specs -12 6 - X.txt Xs.txt -- periodic periodicard
}

@test "kernels: the one-dimensional terms equal scikit-learn's Matern, RationalQuadratic, ExpSineSquared, DotProduct" {
    require_numpy
    # the reference converts: length_scale = w^-1/2, periodicity = p,
    # sigma_0 = sqrt(c), amplitudes as ConstantKernel
    local sk=(se matern12 matern32 matern52 rq periodic)
    check_specs - - - X1.txt Xs1.txt --sklearn -- "${sk[@]}" poly1 poly2 poly3 linear
    check_specs 12 6 6 X1.txt Xs1.txt --sklearn -- "${sk[@]}"
    check_specs -12 -1 -6 X1.txt Xs1.txt --sklearn -- "${sk[@]}"
}

# ---- the reference can fail --------------------------------------------------

@test "kernels: the reference rejects a K off by 1e-11, a cross matrix of other rows, and names out of order" {
    require_numpy
    gpc-kernel -k 'ard+nn' -L X.txt > L.txt
    set_params - - - L.txt
    mv p1.txt p.txt
    gpc-kernel -k 'ard+nn' -H p.txt X.txt > K.txt
    gpc-kernel -k 'ard+nn' -H p.txt X.txt Xs.txt > Ks.txt
    run ref X.txt Xs.txt 'ard+nn' p.txt K.txt Ks.txt
    assert_success
    awk 'NR == 7 { $7 = sprintf("%.17g", $7 * (1 + 1e-11)) } { print }' K.txt > K2.txt
    run ref X.txt Xs.txt 'ard+nn' p.txt K2.txt Ks.txt
    assert_failure 1
    tac Xs.txt > Xs2.txt
    run ref X.txt Xs2.txt 'ard+nn' p.txt K.txt Ks.txt
    assert_failure 1
    sed '2{h;d};3G' p.txt > p2.txt
    run ref X.txt Xs.txt 'ard+nn' p2.txt K.txt Ks.txt
    assert_failure 2
}

# ---- bad specs ------------------------------------------------------------------

# bad_spec SPEC PLACE: gpc-kernel refuses SPEC on 4-column inputs with status
# 2, a message naming PLACE ('at character N' or 'at its end'), and no output.
bad_spec() {
    printf '0 1 2 3\n1 0 2 4\n' > X4.txt
    run gpc-kernel -k "$1" -o out/K.txt X4.txt
    assert_failure 2
    assert_output --partial "kernel spec '$1'"
    assert_output --partial "$2"
    assert_dir_empty out
}

@test "kernels: a bad spec exits 2 naming the character at fault, and writes nothing" {
    bad_spec 'foo' "unknown kernel term 'foo'"
    bad_spec 'foo' 'at character 1'
    bad_spec 'se+matern42' 'at character 4'
    bad_spec 'ard*' "an empty term after '*', at its end"
    bad_spec 'ard*+se' 'at character 5'
    bad_spec 'se+(ard*)' 'at character 9'
    bad_spec '(ard+se' "the '(' here is not closed, at character 1"
    bad_spec 'ard)' "')' closes no '(', at character 4"
    bad_spec '()' 'empty parentheses, at character 1'
    bad_spec 'ard+()' 'empty parentheses, at character 5'
    bad_spec 'poly0' "polynomial term 'poly0'"
    bad_spec 'poly0' 'at character 1'
    bad_spec 'poly2.5' "not '.', at character 6"
    bad_spec 'poly' "polynomial term 'poly'"
    bad_spec 'se*poly33' 'at character 4'
    bad_spec 'matern32@9' 'columns run from 1 to 4, at character 10'
    bad_spec 'ard(se)' 'at character 4'
}

@test "kernels: a periodic term on a discrete column exits 2 naming the term and the column" {
    bad_spec 'periodic@1+ard:discrete=1' 'term 1 (periodic@1) is periodic in column 1, which is discrete'
    bad_spec 'ard@1-2*periodicard@2-3+se:discrete=3' 'term 2 (periodicard@2-3) is periodic in column 3'
}
