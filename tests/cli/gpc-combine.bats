#!/usr/bin/env bats
# gpc-combine: the sum and product rules over prediction files, against the
# rules worked out with awk, labels, formats and refusals.

load test_helper

setup() {
    require_tools gpc-combine gpc-fit gpc-predict gpc-score
    common_setup
    # hand-made multiclass predictions of three cases, words as classes
    printf '# p.a p.b p.c label\n# label: 1 a, 2 b, 3 c\n0.7 0.2 0.1 1\n0.1 0.1 0.8 3\n0.3 0.4 0.3 2\n' > p1.txt
    printf '# p.a p.b p.c label\n# label: 1 a, 2 b, 3 c\n0.5 0.4 0.1 1\n0.3 0.3 0.4 3\n0.1 0.2 0.7 3\n' > p2.txt
    # the same with numbers as classes
    sed 's/p\.a/p.2/; s/p\.b/p.5/; s/p\.c/p.7/; /^# label:/d' p1.txt > n1.txt
    sed 's/p\.a/p.2/; s/p\.b/p.5/; s/p\.c/p.7/; /^# label:/d' p2.txt > n2.txt
}

@test "gpc-combine --help lists every option and exits 0" {
    check_help gpc-combine rule columns output format quiet verbose help version
    check_help_covers_source gpc-combine
}

@test "gpc-combine --version prints name, package and version" {
    check_version gpc-combine
}

# Columns 1-3 of the data rows of A and B (without labels).
probs() {
    grep -v '^#' "$1" | cut -d' ' -f1-3
}

@test "gpc-combine: the sum rule is the mean, the product rule the normalised product" {
    gpc-combine p1.txt p2.txt > sum.txt
    gpc-combine -r product p1.txt p2.txt > prod.txt
    paste -d' ' <(probs p1.txt) <(probs p2.txt) |
        awk '{ printf "%.17g %.17g %.17g\n", ($1 + $4) / 2, ($2 + $5) / 2, ($3 + $6) / 2 }' > want-sum.txt
    paste -d' ' <(probs p1.txt) <(probs p2.txt) |
        awk '{ z = $1 * $4 + $2 * $5 + $3 * $6
               printf "%.17g %.17g %.17g\n", $1 * $4 / z, $2 * $5 / z, $3 * $6 / z }' > want-prod.txt
    probs sum.txt > got-sum.txt
    probs prod.txt > got-prod.txt
    assert_matrices_close got-sum.txt want-sum.txt 1e-15
    assert_matrices_close got-prod.txt want-prod.txt 1e-14
}

@test "gpc-combine: the header names the classes, the label is the most probable class" {
    run gpc-combine -r product p1.txt p2.txt
    assert_success
    assert_line --index 0 "# p.a p.b p.c label"
    assert_line --index 1 "# label: 1 a, 2 b, 3 c"
    # case 3: sum (0.2 0.3 0.5) picks c, product (0.03 0.08 0.21)/z picks c
    run awk '!/^#/ { print $4 }' <(gpc-combine p1.txt p2.txt)
    assert_output "$(printf 'a\nc\nc')"
    # numeric classes are their own labels
    run awk '!/^#/ { print $4 }' <(gpc-combine n1.txt n2.txt)
    assert_output "$(printf '2\n7\n7')"
    run gpc-combine -c label n1.txt n2.txt
    assert_line --index 0 "# label"
}

@test "gpc-combine: binary files of p(y=+1) combine with their complements" {
    printf '0.9\n0.2\n' > b1.txt
    printf '0.6\n0.3\n' > b2.txt
    run gpc-combine -r product b1.txt b2.txt
    assert_success
    want=$(awk 'BEGIN { printf "%.17g 1\n%.17g -1", 0.54 / (0.54 + 0.04), 0.06 / (0.06 + 0.56) }')
    gpc-combine -r product b1.txt b2.txt > got.txt
    printf '%s\n' "$want" > want.txt
    assert_matrices_close got.txt want.txt 1e-15
}

@test "gpc-combine: classifiers of two feature sets of iris, combined, are scored like one" {
    iris_fixtures
    cut -d' ' -f1,2 X3.txt > Xa.txt
    cut -d' ' -f3,4 X3.txt > Xb.txt
    cut -d' ' -f1,2 Xt3.txt > Xta.txt
    cut -d' ' -f3,4 Xt3.txt > Xtb.txt
    gpc-fit -q -O none -k se -p log_v0=1,log_w=-1 -m a.model Xa.txt y3.txt
    gpc-fit -q -O none -k se -p log_v0=1,log_w=-1 -m b.model Xb.txt y3.txt
    gpc-predict -m a.model Xta.txt > pa.txt
    gpc-predict -m b.model Xtb.txt > pb.txt
    run gpc-combine -r product -o comb.txt pa.txt pb.txt
    assert_success
    assert_output ""
    # 30 cases whose combined probabilities sum to one, scored as predictions
    run awk '/^#/ { next } { n++; s = $1 + $2 + $3; if (s > 1 + 1e-12 || s < 1 - 1e-12) { print "row " n ": " s; exit 1 } }
             END { if (n != 30) { print n " rows"; exit 1 } }' comb.txt
    assert_success
    run gpc-score comb.txt yt3.txt
    assert_success
    assert_output --regexp '^errors [0-9]+ of 30 '
}

@test "gpc-combine -F npy writes the probabilities and labels as a (3, 4) array" {
    gpc-combine -F npy -o c.npy p1.txt p2.txt
    assert_npy c.npy "(3, 4)"
}

@test "gpc-combine: files that do not match are input errors, bad options usage errors" {
    run gpc-combine p1.txt
    assert_failure 2
    assert_output --partial "expected two or more prediction files"
    run gpc-combine -r max p1.txt p2.txt
    assert_failure 2
    assert_output --partial "unknown rule 'max' (use sum or product)"
    run gpc-combine -c p,cov p1.txt p2.txt
    assert_failure 2
    sed 's/p\.b/p.x/' p2.txt > other.txt
    run gpc-combine p1.txt other.txt
    assert_failure 3
    assert_output --partial "names class 2 'x', p1.txt 'b'"
    head -n 4 p2.txt > short.txt
    run gpc-combine p1.txt short.txt
    assert_failure 3
    assert_output --partial "short.txt has 2 cases, p1.txt has 3"
    printf '0.9\n0.2\n0.5\n' > bin.txt
    run gpc-combine p1.txt bin.txt
    assert_failure 3
    sed 's/^0.7 /1.7 /' p1.txt > big.txt
    run gpc-combine big.txt p2.txt
    assert_failure 3
    assert_output --partial "is not a probability"
    printf '# p.a p.b p.c\n0 1 0\n' > z1.txt
    printf '# p.a p.b p.c\n1 0 0\n' > z2.txt
    run gpc-combine -r product z1.txt z2.txt
    assert_failure 1
    assert_output --partial "case 1: under the product rule every class has probability 0"
}

@test "gpc-combine: multiclass rows that do not sum to one are refused as gpc-score refuses them" {
    # row 2 of the second file sums to 0.9: both rules would turn it into a
    # row of the combination
    sed 's/^0.3 0.3 0.4 3$/0.3 0.3 0.3 3/' p2.txt > short.txt
    for rule in sum product; do
        run gpc-combine -r "$rule" -o out/c.txt p1.txt short.txt
        assert_failure 3
        assert_output "gpc-combine: short.txt: row 2: the 3 class probabilities from column 1 sum to 0.9, not 1; give gpc-predict's p columns"
        assert_dir_empty out
    done
    # the same tolerance and words as gpc-score's
    run gpc-score short.txt <(printf 'a\nb\nc\n')
    assert_failure 3
    assert_output --partial "short.txt: row 2: the 3 class probabilities from column 1 sum to 0.9, not 1"
    # one that sums to 1.2, in the columns the header names after a first one
    printf '# id p.a p.b p.c\n1 0.7 0.2 0.1\n2 0.5 0.5 0.2\n3 0.3 0.4 0.3\n' > over.txt
    run gpc-combine over.txt p1.txt
    assert_failure 3
    assert_output --partial "over.txt: row 2: the 3 class probabilities from column 2 sum to 1.2, not 1"
    # rounding well within the tolerance passes
    printf '# p.a p.b p.c\n0.3333333 0.3333333 0.3333333\n1 0 0\n0 0 1\n' > third.txt
    run gpc-combine -o out/c.txt third.txt p1.txt
    assert_success
}

@test "gpc-combine: two files on standard input are a usage error (status 2)" {
    run gpc-combine - - < p1.txt
    assert_failure 2
    assert_output --partial "prediction file 1 and prediction file 2 cannot both be standard input ('-')"
    run gpc-combine p2.txt - p1.txt - < p1.txt
    assert_failure 2
    assert_output --partial "prediction file 2 and prediction file 4 cannot both be standard input"
    # one of them is fine
    gpc-combine p1.txt p2.txt > want.txt
    gpc-combine - p2.txt < p1.txt > got.txt
    assert_files_equal want.txt got.txt
}

@test "gpc-combine: a write error on standard output (/dev/full) is status 3" {
    run bash -c "gpc-combine p1.txt p2.txt > /dev/full"
    assert_failure 3
}
