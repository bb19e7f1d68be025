#!/usr/bin/env bats
# gpc-folds: stratified folds, and files cut by them; gpc-cv: the fits and
# predictions of every fold, pooled in the cases' order.

load test_helper

FGL="$REPO/data/fgl"

setup() {
    require_tools gpc-folds
    common_setup
}

# "fold count" lines of a folds file's column (default 1), sorted by fold.
fold_sizes() {
    awk -v c="${2:-1}" '{ n[$c]++ } END { for (f in n) print f, n[f] }' "$1" | sort -n
}

# "folds smallest largest": the number of folds in column 1 and their sizes.
size_range() {
    fold_sizes "$1" | awk 'NR == 1 || $2 < lo { lo = $2 } $2 > hi { hi = $2 } END { print NR, lo, hi }'
}

spread() { # FOLDS LABELS: "class min max" per class over all K folds, K from FOLDS
    awk 'NR == FNR { f[FNR] = $1; if ($1 > K) K = $1; next }
         { n[$1, f[FNR]]++; cls[$1] = 1 }
         END { for (c in cls) { lo = 1e9; hi = 0
                   for (k = 1; k <= K; k++) { x = n[c, k] + 0; if (x < lo) lo = x; if (x > hi) hi = x }
                   print c, lo, hi } }' "$1" "$2" | sort
}

@test "gpc-folds --help lists every option and exits 0" {
    check_help gpc-folds folds seed repeats no-stratify select test train column output format
    check_help_covers_source gpc-folds
}

@test "gpc-folds --version prints name, package and version" {
    check_version gpc-folds
}

# ---- assignments ----------------------------------------------------------------------------

@test "gpc-folds: one fold number 1..K per case, sizes and each class's counts within one" {
    run --separate-stderr gpc-folds -K 10 -S 1 "$FGL/y.txt"
    assert_success
    [ -z "$stderr" ]
    printf '%s\n' "$output" > f.txt
    [ "$(wc -l < f.txt)" -eq 214 ]
    # every line one whole number from 1 to 10
    run awk '!($0 ~ /^[0-9]+$/ && $1 >= 1 && $1 <= 10)' f.txt
    assert_success
    assert_output ""
    # 214 = 4 x 22 + 6 x 21: four folds of 22, six of 21
    run sh -c "fold_sizes() { awk '{ n[\$1]++ } END { for (f in n) print n[f] }' \"\$1\" | sort | uniq -c; }; fold_sizes f.txt"
    assert_output "$(printf '      6 21\n      4 22')"
    # each class (70 WinF, 76 WinNF, 17 Veh, 13 Con, 9 Tabl, 29 Head) spread within one
    spread f.txt "$FGL/y.txt" > sp.txt
    run awk '$3 - $2 > 1' sp.txt
    assert_output ""
    # classes smaller than 10 are in 0 or 1 case per fold: Tabl (9) misses one fold
    run grep '^Tabl ' sp.txt
    assert_output "Tabl 0 1"
    run grep '^WinNF ' sp.txt
    assert_output "WinNF 7 8"
}

@test "gpc-folds: the same seed gives byte-identical folds, another seed others" {
    gpc-folds -K 5 -S 7 "$FGL/y.txt" > a.txt
    gpc-folds --folds=5 --seed=7 < "$FGL/y.txt" > b.txt
    gpc-folds -K 5 -S 8 "$FGL/y.txt" > c.txt
    assert_files_equal a.txt b.txt
    ! cmp -s a.txt c.txt
}

@test "gpc-folds --repeats: R columns, each a stratified assignment, the first as with R=1" {
    run gpc-folds -K 4 -S 3 -R 3 "$FGL/y.txt" -o r.txt
    assert_success
    assert_shape r.txt 214 3
    gpc-folds -K 4 -S 3 "$FGL/y.txt" > one.txt
    cut -d ' ' -f 1 r.txt > first.txt
    assert_files_equal first.txt one.txt
    for c in 1 2 3; do
        cut -d ' ' -f "$c" r.txt > col.txt
        run awk '$3 - $2 > 1' <(spread col.txt "$FGL/y.txt")
        assert_output ""
        # 214 = 2 x 54 + 2 x 53
        run size_range col.txt
        assert_output "4 53 54"
    done
    # the repeats are different shuffles
    ! cmp -s <(cut -d ' ' -f 1 r.txt) <(cut -d ' ' -f 2 r.txt)
}

@test "gpc-folds --no-stratify: plain k-fold, sizes within one" {
    run gpc-folds -K 3 --no-stratify "$FGL/y.txt"
    assert_success
    printf '%s\n' "$output" > f.txt
    # 214 = 72 + 71 + 71, in some order of the folds
    run size_range f.txt
    assert_output "3 71 72"
    [ "$(wc -l < f.txt)" -eq 214 ]
}

@test "gpc-folds: binary labels from a pipe, and -F npy as numpy reads it" {
    gpc-folds -K 3 -F npy < y.txt > f.npy
    run /usr/bin/python3 -c "
import numpy as np
f = np.load('f.npy'); y = np.loadtxt('y.txt')
assert f.shape == (40, 1), f.shape
for c in (-1, 1):
    n = [int(np.sum((f[:, 0] == k) & (y == c))) for k in (1, 2, 3)]
    assert max(n) - min(n) <= 1, n
print('ok')"
    assert_success
    assert_output ok
}

# ---- cutting files ------------------------------------------------------------------------------

@test "gpc-folds --select: test and train rows of every fold are the file's rows, each once" {
    gpc-folds -K 4 -S 2 y.txt > f.txt
    # number the rows so that equal rows stay apart
    awk '{ print NR, $0 }' X.txt > Xn.txt
    : > all.txt
    for k in 1 2 3 4; do
        run gpc-folds --select=$k --test f.txt Xn.txt -o test$k.txt
        assert_success
        run gpc-folds -s $k -T f.txt Xn.txt -o train$k.txt
        assert_success
        # the fold's rows, found independently by awk
        awk -v k=$k 'NR == FNR { f[FNR] = $1; next } f[FNR] == k' f.txt Xn.txt > want.txt
        assert_files_equal test$k.txt want.txt
        cat test$k.txt train$k.txt | sort -n > both.txt
        assert_files_equal both.txt Xn.txt
        cat test$k.txt >> all.txt
    done
    sort -n all.txt > all-sorted.txt
    assert_files_equal all-sorted.txt Xn.txt
}

@test "gpc-folds --select: labels, a CSV header and comment lines go to both sides" {
    printf '1\n2\n1\n' > f.txt
    printf '# glass\nRI,Na\n1.5,13\n1.6,14\n\n1.7,12\n' > X.csv
    printf 'type\nWinF\nHead\nWinF\n' > y.txt
    run gpc-folds -s 1 -t f.txt X.csv
    assert_success
    assert_output "$(printf '# glass\nRI,Na\n1.5,13\n\n1.7,12')"
    run gpc-folds -s 1 -T f.txt X.csv
    assert_output "$(printf '# glass\nRI,Na\n1.6,14\n')"
    run gpc-folds -s 2 --test f.txt y.txt
    assert_output "$(printf 'type\nHead')"
}

@test "gpc-folds --select: fold numbers from 0 as in data/fgl/folds.txt" {
    run gpc-folds -s 0 -t "$FGL/folds.txt" "$FGL/y.txt"
    assert_success
    # fold 0 holds the rows whose folds.txt line is 0
    [ "${#lines[@]}" -eq "$(grep -c '^0$' "$FGL/folds.txt")" ]
}

@test "gpc-folds --select: .npy in gives .npy out, -F text gives text" {
    gpc-folds -K 3 y.txt > f.txt
    gpc-scale -r id7.txt -F npy X.txt > X.npy
    gpc-folds -s 2 -t f.txt X.npy > t.npy
    gpc-folds -s 2 -t -F text f.txt X.npy > t.txt
    awk 'NR == FNR { f[FNR] = $1; next } f[FNR] == 2' f.txt X.txt > want.txt
    run /usr/bin/python3 -c "
import numpy as np
a = np.load('t.npy'); b = np.loadtxt('want.txt', ndmin=2); c = np.loadtxt('t.txt', ndmin=2)
assert a.dtype == np.float64 and a.shape == b.shape, (a.dtype, a.shape, b.shape)
assert (a == b).all() and (c == b).all()
print('ok')"
    assert_success
    assert_output ok
}

@test "gpc-folds --select --column: cuts by a repeat's column" {
    gpc-folds -K 2 -R 2 y.txt > r.txt
    run gpc-folds -s 1 -t -c 2 r.txt y.txt
    assert_success
    [ "$output" = "$(awk 'NR == FNR { f[FNR] = $2; next } f[FNR] == 1' r.txt y.txt)" ]
}

# ---- errors ----------------------------------------------------------------------------------

@test "gpc-folds: usage errors exit 2 and say what to do" {
    run --separate-stderr gpc-folds -K 1 y.txt
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--folds: '1' is not a whole number from 2"* ]]
    run --separate-stderr gpc-folds -K 41 y.txt
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"-K 41 is more folds than the 40 cases of y.txt; use at most 40"* ]]
    [ -z "$output" ]
    run --separate-stderr gpc-folds -S -3 y.txt
    [ "$status" -eq 2 ]
    printf '1\n2\n3\n' > f.txt
    printf '7\n8\n9\n' > z.txt
    run --separate-stderr gpc-folds -s 4 -t f.txt z.txt
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--select=4: no case of f.txt is in fold 4 (its folds run from 1 to 3)"* ]]
    run --separate-stderr gpc-folds -s 1 f.txt z.txt
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--select needs --test"* ]]
    run --separate-stderr gpc-folds -s 1 -t -T f.txt z.txt
    [ "$status" -eq 2 ]
    run --separate-stderr gpc-folds -t y.txt
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--test and --train need --select"* ]]
    run --separate-stderr gpc-folds -s 1 -t -K 3 f.txt z.txt
    [ "$status" -eq 2 ]
    run --separate-stderr gpc-folds -s 1 -t -c 2 f.txt z.txt
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"--column=2, but f.txt has 1 column"* ]]
    run --separate-stderr gpc-folds -s 1 -t f.txt - - < z.txt
    [ "$status" -eq 2 ]
    run --separate-stderr gpc-folds y.txt y.txt
    [ "$status" -eq 2 ]
}

@test "gpc-folds: input errors exit 3 with the file and line, and leave no output" {
    printf '1\n2\n1.5\n' > f.txt
    printf '7\n8\n9\n' > z.txt
    run --separate-stderr gpc-folds -s 1 -t -o out/t.txt f.txt z.txt
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"f.txt:3: 1.5 is not a fold number"* ]]
    assert_dir_empty out
    printf '1\n2\n1\n' > f.txt
    printf '7\n8\n' > z.txt
    run --separate-stderr gpc-folds -s 1 -t -o out/t.txt f.txt z.txt
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"z.txt: 2 rows, but the folds are of 3 cases"* ]]
    assert_dir_empty out
    run --separate-stderr gpc-folds -s 1 -t f.txt missing.txt
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"missing.txt"* ]]
    printf 'a\n\nb\n' > bad.txt
    run --separate-stderr gpc-folds -K 2 -o out/f.txt bad.txt
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"bad.txt:2"* ]]
    assert_dir_empty out
    run --separate-stderr gpc-folds -K 2 -o /dev/full y.txt
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"write error"* ]]
}

# ---- gpc-cv ---------------------------------------------------------------------------------

# The out-of-fold predictions made by hand: the folds of f.txt (column 1),
# each cut by awk, fitted and predicted with the given gpc-fit options, the
# rows put back in the cases' order by awk.  Also each fold's 'gpc-score -t'.
manual_cv() { # FOLDS X Y FIT-OPTION...
    local folds="$1" x="$2" y="$3" k
    shift 3
    for k in $(sort -nu "$folds"); do
        awk -v k="$k" 'NR == FNR { f[FNR] = $1; next } f[FNR] != k' "$folds" "$x" > m-Xtr$k
        awk -v k="$k" 'NR == FNR { f[FNR] = $1; next } f[FNR] != k' "$folds" "$y" > m-ytr$k
        awk -v k="$k" 'NR == FNR { f[FNR] = $1; next } f[FNR] == k' "$folds" "$x" > m-Xte$k
        awk -v k="$k" 'NR == FNR { f[FNR] = $1; next } f[FNR] == k' "$folds" "$y" > m-yte$k
        gpc-fit -q "$@" -m m-model$k m-Xtr$k m-ytr$k || return 1
        gpc-predict -q -m m-model$k -o m-pred$k m-Xte$k || return 1
        echo "$k $(gpc-score -t -m m-model$k m-pred$k m-yte$k)" >> m-scores
    done
    # case i is the next unused row of its fold's predictions
    awk 'FNR == 1 { file++ } file == 1 { f[FNR] = $1; next }
         /^#/ { next }
         { split(FILENAME, a, "m-pred"); row[a[2], ++n[a[2]]] = $0 }
         END { for (i = 1; i in f; i++) print row[f[i], ++u[f[i]]] }' "$folds" m-pred*
}

@test "gpc-cv --help lists every option and exits 0" {
    require_tools gpc-cv
    check_help gpc-cv folds seed no-stratify fold-file column scale predict-option jobs \
        per-fold precise output
    check_help_covers_source gpc-cv
}

@test "gpc-cv --version prints name, package and version" {
    require_tools gpc-cv
    check_version gpc-cv
}

@test "gpc-cv: out-of-fold predictions and per-fold scores equal the folds fitted by hand" {
    require_tools gpc-cv gpc-fit gpc-predict gpc-score
    mkdir tmp
    export TMPDIR="$PWD/tmp"
    run --separate-stderr gpc-cv -K 4 -S 3 --per-fold=out/scores.txt -o out/cv.pred \
        Xz.txt y.txt -- -k ard
    assert_success
    [[ "$stderr" == *"fold 4 of 4, "*" elapsed"* ]]
    [[ "$stderr" == *"fold 1 of 4, "* ]]
    gpc-folds -K 4 -S 3 y.txt > f.txt
    manual_cv f.txt Xz.txt y.txt -k ard > want.pred
    [ "$(wc -l < want.pred)" -eq 40 ]
    grep -v '^#' out/cv.pred > body.pred
    assert_files_equal body.pred want.pred
    { echo '# fold errors cases rate mlpp brier'; cat m-scores; } > want-scores.txt
    assert_files_equal out/scores.txt want-scores.txt
    # the pooled predictions score as the whole cross-validation
    run gpc-score -t out/cv.pred y.txt
    assert_success
    [ "$(echo "$output" | cut -d ' ' -f 1)" = "$(awk '{ s += $2 } END { print s }' m-scores)" ]
    assert_dir_empty tmp
    # two folds at a time give the same bytes
    run gpc-cv -q -j 2 -K 4 -S 3 -o out/cv2.pred Xz.txt y.txt -- -k ard
    assert_success
    grep -v '^#' out/cv2.pred > body.pred
    assert_files_equal body.pred want.pred
    assert_dir_empty tmp
}

@test "gpc-cv --per-fold: four decimals for people, every digit with --precise" {
    require_tools gpc-cv gpc-score
    run gpc-cv -q -K 3 -S 2 --per-fold=human.txt -o cv.pred Xz.txt y.txt -- -k se
    assert_success
    run gpc-cv -q -K 3 -S 2 --precise --per-fold=precise.txt -o cv.pred Xz.txt y.txt -- -k se
    assert_success
    assert_shape human.txt 3 6
    grep -v '^#' human.txt | awk '{ for (j = 4; j <= 6; j++)
        if ($j !~ /^-?[0-9]+\.[0-9][0-9][0-9][0-9]$/) exit 1 }' ||
        fail "not four decimals: $(cat human.txt)"
    grep -v '^#' precise.txt | awk '{ printf "%s %s %s %.4f %.4f %.4f\n", $1, $2, $3, $4, $5, $6 }' \
        > rounded.txt
    grep -v '^#' human.txt > human-rows.txt
    assert_files_equal human-rows.txt rounded.txt
    grep -v '^#' precise.txt | awk '{ exit length($5) < 15 }' ||
        fail "--precise gave a short mlpp: $(cat precise.txt)"
}

@test "gpc-cv --scale and --fold-file: folds from a file counting from 0, inputs scaled per fold" {
    require_tools gpc-cv gpc-scale
    gpc-folds -K 3 -S 5 y.txt | awk '{ print $1 - 1 }' > f0.txt
    run gpc-cv -q -s -f f0.txt -p --columns=p,label -o cv.pred X.txt y.txt -- -k ard
    assert_success
    # by hand: each fold's training inputs scaled by their own statistics
    for k in 0 1 2; do
        awk -v k=$k 'NR == FNR { f[FNR] = $1; next } f[FNR] != k' f0.txt X.txt > tr$k
        awk -v k=$k 'NR == FNR { f[FNR] = $1; next } f[FNR] == k' f0.txt X.txt > te$k
        awk -v k=$k 'NR == FNR { f[FNR] = $1; next } f[FNR] != k' f0.txt y.txt > ytr$k
        gpc-scale -q -s st$k -o trs$k tr$k
        gpc-scale -q -r st$k -o tes$k te$k
        gpc-fit -q -k ard -m model$k trs$k ytr$k
        gpc-predict -q -m model$k -c p,label -o pred$k tes$k
    done
    awk 'FNR == 1 { file++ } file == 1 { f[FNR] = $1; next }
         /^#/ { next } { row[file - 2, ++n[file - 2]] = $0 }
         END { for (i = 1; i in f; i++) print row[f[i], ++u[f[i]]] }' f0.txt pred0 pred1 pred2 > want.pred
    grep -v '^#' cv.pred > body.pred
    assert_files_equal body.pred want.pred
    assert_shape cv.pred 40 2
}

@test "gpc-cv: word labels of three classes (multiclass, fixed hyperparameters)" {
    require_tools gpc-cv
    # three classes by glucose (column 2), as words
    awk '{ print ($2 < 100) ? "low" : ($2 < 140) ? "mid" : "high" }' X.txt > y3.txt
    run gpc-cv -q -K 3 -o cv3.pred Xz.txt y3.txt -- -O none
    assert_success
    run head -n 1 cv3.pred
    assert_output --partial "p.high p.low p.mid"
    gpc-folds -K 3 -S 1 y3.txt > f.txt
    manual_cv f.txt Xz.txt y3.txt -O none > want.pred
    grep -v '^#' cv3.pred > got.pred
    assert_files_equal got.pred want.pred
    run gpc-score cv3.pred y3.txt
    assert_success
}

@test "gpc-cv: usage errors exit 2 before any fold runs" {
    require_tools gpc-cv
    mkdir tmp
    export TMPDIR="$PWD/tmp"
    run --separate-stderr gpc-cv -K 41 -o out/cv.pred Xz.txt y.txt
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"-K 41 is more folds than the 40 cases of y.txt"* ]]
    run --separate-stderr gpc-cv -K 3 - - < Xz.txt
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"X and Y cannot both be standard input"* ]]
    run --separate-stderr gpc-cv -K 3 -f - Xz.txt - < y.txt
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"cannot both be standard input"* ]]
    run --separate-stderr gpc-cv -f y.txt -K 3 Xz.txt y.txt
    [ "$status" -eq 2 ]
    run --separate-stderr gpc-cv -c 2 Xz.txt y.txt
    [ "$status" -eq 2 ]
    run --separate-stderr gpc-cv Xz.txt y.txt y.txt
    [ "$status" -eq 2 ]
    yes 1 | head -n 40 > one.txt
    run --separate-stderr gpc-cv -f one.txt Xz.txt y.txt
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"every case is in fold 1"* ]]
    assert_dir_empty out
    assert_dir_empty tmp
}

@test "gpc-cv: a failing fit stops the run with its status, shows its messages, leaves nothing" {
    require_tools gpc-cv
    mkdir tmp
    export TMPDIR="$PWD/tmp"
    run --separate-stderr gpc-cv -K 3 -o out/cv.pred --per-fold=out/s.txt Xz.txt y.txt -- --bogus
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"fold 1: gpc-fit: unrecognized option '--bogus'"* ]]
    [[ "$stderr" == *"cross-validation stopped at fold"* ]]
    [ -z "$output" ]
    assert_dir_empty out
    assert_dir_empty tmp
    # input errors: X of other length, a fold file of other length, a missing file
    head -n 39 Xz.txt > X39.txt
    run --separate-stderr gpc-cv -K 3 -o out/cv.pred X39.txt y.txt
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"y.txt has 40 labels but X39.txt has 39 rows"* ]]
    head -n 39 y.txt > f39.txt
    run --separate-stderr gpc-cv -f f39.txt -o out/cv.pred Xz.txt y.txt
    [ "$status" -eq 3 ]
    [[ "$stderr" == *"f39.txt: 39 rows, but y.txt has 40 cases"* ]]
    run --separate-stderr gpc-cv -o out/cv.pred Xz.txt missing.txt
    [ "$status" -eq 3 ]
    assert_dir_empty out
    assert_dir_empty tmp
}

@test "gpc-cv: a LIBSVM file whose largest index is in one case: every fold has all its columns" {
    require_tools gpc-cv
    # Xz.txt as LIBSVM, feature 7 written only in case 9 (0 elsewhere)
    paste -d' ' y.txt Xz.txt | awk '{ line = $1
        for (j = 2; j <= 8; j++) if (j < 8 || NR == 9) line = line " " (j - 1) ":" $j
        print line }' > s.svm
    awk '{ if (NR != 9) $7 = 0; print }' Xz.txt > Xd.txt
    mkdir tmp
    export TMPDIR="$PWD/tmp"
    run --separate-stderr gpc-cv -q -K 4 -o out/svm.pred s.svm -- -k ard -O none
    assert_success
    # the same numbers held densely give the same bytes
    gpc-cv -q -K 4 -o out/dense.pred Xd.txt y.txt -- -k ard -O none
    assert_files_equal out/svm.pred out/dense.pred
    assert_shape out/svm.pred 40 4
    assert_dir_empty tmp
}

@test "gpc-cv: malformed inputs are named by the user's file and line, before any fold runs" {
    require_tools gpc-cv
    mkdir tmp
    export TMPDIR="$PWD/tmp"
    sed '5s/^[^ ]*/abc/' Xz.txt > Xbad.txt
    run --separate-stderr gpc-cv -K 3 -o out/cv.pred Xbad.txt y.txt
    [ "$status" -eq 3 ]
    [ "$stderr" = "gpc-cv: Xbad.txt:5: 'abc' is not a number" ] || fail "stderr: $stderr"
    sed '12s/ [^ ]*$//' Xz.txt > Xragged.txt
    run --separate-stderr gpc-cv -K 3 -o out/cv.pred Xragged.txt y.txt
    [ "$status" -eq 3 ]
    [[ "$stderr" == "gpc-cv: Xragged.txt:12: "* ]] || fail "stderr: $stderr"
    { echo 'a,b,c,d,e,f,g'; sed 's/ /,/g; 7s/^[^,]*/x/' Xz.txt; } > Xbad.csv
    run --separate-stderr gpc-cv -K 3 -o out/cv.pred Xbad.csv y.txt
    [ "$status" -eq 3 ]
    [[ "$stderr" == "gpc-cv: Xbad.csv:8: "* ]] || fail "stderr: $stderr"
    sed '3s/.*/-1 1:0.5 1:0.7/' <(paste -d' ' y.txt Xz.txt | awk '{ printf "%s", $1; for (j = 2; j <= NF; j++) printf " %d:%s", j - 1, $j; print "" }') > bad.svm
    run --separate-stderr gpc-cv -K 3 -o out/cv.pred bad.svm
    [ "$status" -eq 3 ]
    [[ "$stderr" == "gpc-cv: bad.svm:3: "* ]] || fail "stderr: $stderr"
    run --separate-stderr gpc-cv -K 3 -o out/cv.pred - y.txt < Xbad.txt
    [ "$status" -eq 3 ]
    [ "$stderr" = "gpc-cv: <stdin>:5: 'abc' is not a number" ] || fail "stderr: $stderr"
    assert_dir_empty out
    assert_dir_empty tmp
}

@test "gpc-cv: X, Y or a LIBSVM file from a pipe give what the files give" {
    require_tools gpc-cv
    mkdir tmp
    export TMPDIR="$PWD/tmp"
    gpc-cv -q -K 3 -o want.pred Xz.txt y.txt -- -k se -O none
    run gpc-cv -q -K 3 -o got1.pred Xz.txt <(cat y.txt) -- -k se -O none
    assert_success
    assert_files_equal want.pred got1.pred
    cat y.txt | gpc-cv -q -K 3 -o got2.pred Xz.txt - -- -k se -O none
    assert_files_equal want.pred got2.pred
    cat Xz.txt | gpc-cv -q -K 3 -o got3.pred - y.txt -- -k se -O none
    assert_files_equal want.pred got3.pred
    gpc-folds -K 3 y.txt > f.txt
    cat f.txt | gpc-cv -q -f - -o got4.pred Xz.txt y.txt -- -k se -O none
    assert_files_equal want.pred got4.pred
    paste -d' ' y.txt Xz.txt | awk '{ printf "%s", $1; for (j = 2; j <= NF; j++) printf " %d:%s", j - 1, $j; print "" }' > s.svm
    gpc-cv -q -K 3 -o want-svm.pred s.svm -- -k se -O none
    cat s.svm | gpc-cv -q -K 3 -o got5.pred - -- -k se -O none
    assert_files_equal want-svm.pred got5.pred
    assert_dir_empty tmp
}

@test "gpc-cv: SIGTERM stops the folds, removes the temporary files, and kills with the signal" {
    require_tools gpc-cv
    mkdir tmp
    export TMPDIR="$PWD/tmp"
    # ten folds of ML fits: long enough to be stopped midway
    gpc-cv -K 10 -o out/cv.pred Xz.txt y.txt -- -k ard 2> err.txt &
    pid=$!
    for i in $(seq 100); do
        [ -n "$(ls tmp)" ] && [ -n "$(ls tmp/* 2>/dev/null | grep log)" ] && break
        sleep 0.05
    done
    [ -n "$(ls tmp)" ] || fail "no temporary directory appeared"
    kill -TERM "$pid"
    status=0
    wait "$pid" || status=$?
    [ "$status" -eq 143 ] || fail "status $status, stderr: $(cat err.txt)"
    assert_dir_empty out
    assert_dir_empty tmp
    # no fold's tool is left running
    sleep 0.2
    run pgrep -f "$BATS_TEST_TMPDIR/tmp/gpc-cv"
    [ "$status" -eq 1 ]
}
