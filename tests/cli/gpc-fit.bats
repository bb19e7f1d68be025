#!/usr/bin/env bats
# gpc-fit: fit a binary GP classifier, write a model file.

load test_helper

setup() {
    require_tools gpc-fit gpc-evidence
    common_setup
    P8='0.5,-1,-1,-1,-1,-1,-1,-1'   # ard on 7 columns: log_v0, log_w1..log_w7
}

# The "name value" hyperparameter lines of a model file.
model_params() {
    awk '$1 == "hyperparameters" { n = $2; next } n > 0 { print; n-- }' "$1"
}

@test "gpc-fit --help lists every option and exits 0" {
    check_help gpc-fit kernel likelihood params params-file optimize prior-mean prior-sd \
        restarts seed max-iter model params-out verbose quiet help version
    check_help_covers_source gpc-fit
}

@test "gpc-fit --version prints name, package and version" {
    check_version gpc-fit
}

# ---- the model file ---------------------------------------------------------------

@test "gpc-fit -O none writes a complete, versioned model" {
    run --separate-stderr gpc-fit -O none -p "$P8" Xz.txt y.txt
    assert_success
    gpc-fit -q -O none -p "$P8" Xz.txt y.txt > m.txt
    assert_line --index 0 "gpc-model 1"
    assert_line --index 1 "method laplace"
    assert_line --index 2 "likelihood logistic"
    assert_line --index 3 "classes -1 1"
    assert_line --index 4 "kernel ard"
    assert_line --index 5 "dim 7"
    assert_line --index 6 "hyperparameters 8"
    assert_line "fit none"
    assert_line "training 40"
    assert_line --regexp '^log_evidence -[0-9.]+(e[-+][0-9]+)?$'
    # one line per training case after the comment: label, latent mode, 7 inputs
    run awk 'seen { n++; if (NF != 9 || ($1 != 1 && $1 != -1)) { print "bad: " $0; exit 1 } }
             /^# / { seen = 1 } END { if (n != 40) { print n " training lines"; exit 1 } }' m.txt
    assert_success
    # the labels in the model are the given ones
    awk '/^# /{ s = 1; next } s { print $1 }' m.txt > ym.txt
    assert_files_equal ym.txt y.txt
}

@test "gpc-fit -O none keeps the hyperparameters given with -p exactly" {
    gpc-fit -q -O none -p "$P8" -m m.txt Xz.txt y.txt
    run model_params m.txt
    assert_output "$(printf 'log_v0 0.5\nlog_w1 -1\nlog_w2 -1\nlog_w3 -1\nlog_w4 -1\nlog_w5 -1\nlog_w6 -1\nlog_w7 -1')"
    gpc-fit -q -O none -k ard+bias -p 'log_v0=0.25,log_w3=-0.125,log_bias=-2.5' -m m2.txt Xz.txt y.txt
    run model_params m2.txt
    assert_output "$(printf 'log_v0 0.25\nlog_w1 -2\nlog_w2 -2\nlog_w3 -0.125\nlog_w4 -2\nlog_w5 -2\nlog_w6 -2\nlog_w7 -2\nlog_bias -2.5')"
}

@test "gpc-fit -O none: the model's log_evidence equals gpc-evidence at the same point" {
    gpc-fit -q -O none -p "$P8" -m m.txt Xz.txt y.txt
    gpc-evidence -n -p "$P8" Xz.txt y.txt > e.txt
    model_value m.txt log_evidence > me.txt
    assert_matrices_close me.txt e.txt 1e-10
}

@test "gpc-fit -O ml raises the log evidence above the starting point" {
    gpc-evidence -n -p "$P8" Xz.txt y.txt > start.txt
    gpc-fit -q -O ml -p "$P8" -m m.txt Xz.txt y.txt
    assert_equal "$(model_value m.txt fit)" ml
    num_lt "$(cat start.txt)" "$(model_value m.txt log_evidence)" ||
        fail "log evidence did not rise: start $(cat start.txt), fitted $(model_value m.txt log_evidence)"
    # default -O is ml
    gpc-fit -q -p "$P8" -m m2.txt Xz.txt y.txt
    assert_files_equal m.txt m2.txt
}

@test "gpc-fit -O ml: the model's log_evidence is the evidence at its own hyperparameters" {
    gpc-fit -q -k ard+bias -m m.txt -P p.txt Xz.txt y.txt
    gpc-evidence -n -k ard+bias -H p.txt Xz.txt y.txt > e.txt
    model_value m.txt log_evidence > me.txt
    assert_matrices_close me.txt e.txt 1e-9
}

@test "gpc-fit -O ml ends near a stationary point (small evidence gradient)" {
    gpc-fit -q -k ard -m m.txt -P p.txt Xz.txt y.txt
    gpc-evidence -k ard -H p.txt Xz.txt y.txt > eg.txt
    run awk '{ for (j = 2; j <= NF; j++) if ($j > 1e-2 || $j < -1e-2) { print "gradient " j - 1 ": " $j; exit 1 } }' eg.txt
    assert_success
}

@test "gpc-fit -O map records the prior and differs from ml" {
    gpc-fit -q -O map -k ard+bias -m map.txt Xz.txt y.txt
    gpc-fit -q -O ml -k ard+bias -m ml.txt Xz.txt y.txt
    assert_equal "$(model_value map.txt fit) $(awk '$1 == "fit" { print $3, $4, $5 }' map.txt)" "map normal -3 3"
    gpc-fit -q -O map --prior-mean=-1.5 --prior-sd 0.5 -k ard+bias -m map2.txt Xz.txt y.txt
    run grep '^fit ' map2.txt
    assert_output "fit map normal -1.5 0.5"
    ! cmp -s map.txt ml.txt || fail "MAP and ML gave the same model"
    ! cmp -s map.txt map2.txt || fail "the prior had no effect"
}

@test "gpc-fit -O map with a tight prior keeps the hyperparameters near the prior mean" {
    gpc-fit -q -O map --prior-mean=-1 --prior-sd=0.01 -m m.txt Xz.txt y.txt
    model_params m.txt > p.txt
    run awk '{ if ($2 > -0.9 || $2 < -1.1) { print; exit 1 } }' p.txt
    assert_success
}

@test "gpc-fit -l probit writes a probit model" {
    gpc-fit -q -O none -l probit -p "$P8" -m m.txt Xz.txt y.txt
    assert_equal "$(model_value m.txt likelihood)" probit
    gpc-fit -q -O none --likelihood=logistic -p "$P8" -m m2.txt Xz.txt y.txt
    assert_equal "$(model_value m2.txt likelihood)" logistic
    ! cmp -s m.txt m2.txt
}

@test "gpc-fit -P writes the fitted hyperparameters, and -H reads them back" {
    gpc-fit -q -k ard+bias -m m.txt -P p.txt Xz.txt y.txt
    model_params m.txt > mp.txt
    assert_files_equal mp.txt p.txt
    gpc-fit -q -O none -k ard+bias -H p.txt -m m2.txt Xz.txt y.txt
    model_params m2.txt > mp2.txt
    assert_files_equal p.txt mp2.txt
}

@test "gpc-fit: -p overrides -H for the names it gives" {
    printf 'log_v0 1\nlog_w2 -0.5\n' > h.txt
    gpc-fit -q -O none -H h.txt -p log_v0=2 -m m.txt Xz.txt y.txt
    assert_equal "$(model_value m.txt log_v0)" 2
    assert_equal "$(model_value m.txt log_w2)" -0.5
}

@test "gpc-fit: labels coded 0/1 give the same model as -1/+1 but for the classes' names" {
    gpc-fit -q -O none -p "$P8" Xz.txt y.txt > a.txt
    gpc-fit -q -O none -p "$P8" Xz.txt y01.txt > b.txt
    assert_equal "$(grep '^classes' b.txt)" "classes 0 1"
    sed 's/^classes 0 1$/classes -1 1/' b.txt > b1.txt
    assert_files_equal a.txt b1.txt
}

@test "gpc-fit: progress goes to stderr, -q silences it, stdout is only the model" {
    run --separate-stderr gpc-fit -k ard Xz.txt y.txt
    assert_success
    assert_line --index 0 "gpc-model 1"
    [ -n "$stderr" ] || fail "no progress on standard error"
    [[ "$stderr" == *"log evidence"* ]] || fail "progress does not mention the log evidence: $stderr"
    normal=$(printf '%s\n' "$stderr" | wc -l)
    run --separate-stderr gpc-fit -q -k ard Xz.txt y.txt
    assert_success
    [ -z "$stderr" ] || fail "-q still wrote: $stderr"
    run --separate-stderr gpc-fit -v -k ard Xz.txt y.txt
    assert_success
    verbose=$(printf '%s\n' "$stderr" | wc -l)
    [ "$verbose" -gt "$normal" ] || fail "-v did not add progress lines ($verbose vs $normal)"
}

@test "gpc-fit: -v and -q do not change the model" {
    gpc-fit -q Xz.txt y.txt > a.txt
    gpc-fit -v Xz.txt y.txt > b.txt 2>/dev/null
    assert_files_equal a.txt b.txt
}

# ---- streams, -m, determinism ----------------------------------------------------------

@test "gpc-fit reads X and y from '-' and from pipes" {
    gpc-fit -q -O none -p "$P8" Xz.txt y.txt > file.txt
    gpc-fit -q -O none -p "$P8" - y.txt < Xz.txt > a.txt
    cat y.txt | gpc-fit -q -O none -p "$P8" Xz.txt - > b.txt
    cat Xz.txt | gpc-fit -q -O none -p "$P8" - y.txt > c.txt
    assert_files_equal file.txt a.txt
    assert_files_equal file.txt b.txt
    assert_files_equal file.txt c.txt
}

@test "gpc-fit reads .npy inputs and labels" {
    require_tools gpc-scale
    gpc-scale -r id7.txt -F npy Xz.txt > Xz.npy
    gpc-scale -r <(printf '0\n1\n') -F npy y.txt > y.npy
    assert_npy Xz.npy "(40, 7)"
    gpc-fit -q -O none -p "$P8" Xz.txt y.txt > a.txt
    gpc-fit -q -O none -p "$P8" Xz.npy y.npy > b.txt
    assert_files_equal a.txt b.txt
    cat Xz.npy | gpc-fit -q -O none -p "$P8" - y.npy > c.txt
    assert_files_equal a.txt c.txt
}

@test "gpc-fit reads a hand-made 1-D .npy of labels" {
    printf '1 0\n0 1\n1 1\n-1 0\n' > X4.txt
    { npy_header '<f8' '(4,)'; f8 1 -1 1 -1; } > y4.npy
    printf '1\n-1\n1\n-1\n' > y4.txt
    gpc-fit -q -O none X4.txt y4.txt > a.txt
    gpc-fit -q -O none X4.txt y4.npy > b.txt
    assert_files_equal a.txt b.txt
}

@test "gpc-fit -m writes the file and nothing to stdout; -m - is stdout" {
    run --separate-stderr gpc-fit -q -O none -p "$P8" -m out/m.txt Xz.txt y.txt
    assert_success
    assert_output ""
    gpc-fit -q -O none -p "$P8" Xz.txt y.txt > a.txt
    assert_files_equal a.txt out/m.txt
    gpc-fit -q -O none -p "$P8" --model=- Xz.txt y.txt > b.txt
    assert_files_equal a.txt b.txt
    assert_no_tmp_files
}

@test "gpc-fit is deterministic, also with random restarts" {
    gpc-fit -q -k ard+bias Xz.txt y.txt > a.txt
    gpc-fit -q -k ard+bias Xz.txt y.txt > b.txt
    assert_files_equal a.txt b.txt
    gpc-fit -q -R 1 -S 7 Xz.txt y.txt > c.txt
    gpc-fit -q --restarts=1 --seed=7 Xz.txt y.txt > d.txt
    assert_files_equal c.txt d.txt
}

@test "gpc-fit: restarts never end lower than the single start" {
    gpc-fit -q -m one.txt Xz.txt y.txt
    gpc-fit -q -R 1 -S 3 -m more.txt Xz.txt y.txt
    ! num_lt "$(model_value more.txt log_evidence)" "$(model_value one.txt log_evidence)" ||
        fail "restarts lowered the evidence"
}

# ---- input errors (status 3) ---------------------------------------------------------

@test "gpc-fit: missing X or y is status 3 naming the file" {
    run gpc-fit -q -m out/m.txt nosuch.txt y.txt
    assert_failure 3
    assert_output --partial "gpc-fit: nosuch.txt"
    run gpc-fit -q -m out/m.txt Xz.txt nolabels.txt
    assert_failure 3
    assert_output --partial "gpc-fit: nolabels.txt"
    assert_dir_empty out
}

@test "gpc-fit: unreadable X is status 3" {
    cp Xz.txt locked.txt
    chmod 000 locked.txt
    run without_dac_override gpc-fit -q -m out/m.txt locked.txt y.txt
    assert_failure 3
    assert_output --partial "locked.txt"
    assert_dir_empty out
}

@test "gpc-fit: empty X or empty y is status 3" {
    : > E.txt
    run gpc-fit -q -m out/m.txt E.txt y.txt
    assert_failure 3
    assert_output --partial "E.txt"
    assert_output --partial "empty"
    run gpc-fit -q -m out/m.txt Xz.txt E.txt
    assert_failure 3
    assert_output --partial "E.txt"
    assert_dir_empty out
}

@test "gpc-fit: ragged X is status 3 with file:line" {
    { head -n 4 Xz.txt; sed -n 5p Xz.txt | cut -d' ' -f1-6; sed -n '6,40p' Xz.txt; } > R.txt
    run gpc-fit -q -m out/m.txt R.txt y.txt
    assert_failure 3
    assert_output --partial "gpc-fit: R.txt:5: expected 7 columns, found 6"
    assert_dir_empty out
    assert_no_tmp_files
}

@test "gpc-fit: non-numeric, NaN or Inf in X is status 3 with file:line" {
    sed '3s/^[^ ]*/x1/' Xz.txt > B.txt
    run gpc-fit -q -m out/m.txt B.txt y.txt
    assert_failure 3
    assert_output --partial "B.txt:3"
    assert_output --partial "x1"
    sed '7s/^[^ ]*/nan/' Xz.txt > N.txt
    run gpc-fit -q -m out/m.txt N.txt y.txt
    assert_failure 3
    assert_output --partial "N.txt:7"
    sed '8s/ [^ ]*$/ -inf/' Xz.txt > I.txt
    run gpc-fit -q -m out/m.txt I.txt y.txt
    assert_failure 3
    assert_output --partial "I.txt:8"
    assert_dir_empty out
}

@test "gpc-fit: a third class with a binary method or likelihood is status 2 naming the classes" {
    sed '3s/.*/2/' y.txt > y2.txt
    run gpc-fit -q -M ep -l probit -m out/m.txt Xz.txt y2.txt
    assert_failure 2
    assert_output --partial "gpc-fit: the labels have 3 classes (-1 1 2), but EP with the probit likelihood is binary; use -l mprobit (nested EP)"
    run gpc-fit -q -M naive -O none -m out/m.txt Xz.txt y2.txt
    assert_failure 2
    assert_output --partial "but naive mean field with the probit likelihood is binary; use -M laplace -l softmax"
    sed '5s/.*/0.5/' y.txt > yh.txt
    run gpc-fit -q -l logistic -m out/m.txt Xz.txt yh.txt
    assert_failure 2
    assert_output --partial "3 classes (-1 0.5 1), but the Laplace approximation with the logistic likelihood is binary"
    sed '4s/.*/yes/' y.txt > yw.txt
    run gpc-fit -q -M naive -O none -m out/m.txt Xz.txt yw.txt
    assert_failure 2
    assert_output --partial "3 classes (-1 1 yes)"
    sed '6s/.*/nan/' y.txt > yn.txt
    run gpc-fit -q -M ep -l probit -m out/m.txt Xz.txt yn.txt
    assert_failure 2
    assert_output --partial "3 classes (-1 1 nan)"
    assert_dir_empty out
}

@test "gpc-fit: a third class makes a multiclass Laplace model, and says so" {
    sed '3s/.*/2/' y.txt > y2.txt
    run --separate-stderr gpc-fit -O none -m out/m.txt Xz.txt y2.txt
    assert_success
    [[ "$stderr" == *"3 classes (-1 1 2): multiclass Laplace with the softmax likelihood"* ]]
    run grep -x -e 'likelihood softmax' -e 'classes -1 1 2' out/m.txt
    assert_success
    assert_equal "${#lines[@]}" 2
}

@test "gpc-fit: labels mixing 0/1 and -1/+1 are three classes, status 2 with a binary method" {
    { echo 0; echo 1; echo -1; tail -n 37 y.txt; } > ym.txt
    run gpc-fit -q -M ep -l probit -m out/m.txt Xz.txt ym.txt
    assert_failure 2
    assert_output --partial "the labels have 3 classes (-1 0 1)"
    assert_dir_empty out
}

@test "gpc-fit: labels with two columns are status 3" {
    paste -d' ' y.txt y.txt > yy.txt
    run gpc-fit -q -m out/m.txt Xz.txt yy.txt
    assert_failure 3
    assert_output --partial "yy.txt"
    assert_output --partial "yy.txt:1: expected one label, found '-1 -1'"
    assert_dir_empty out
}

@test "gpc-fit: fewer or more labels than rows is status 3 naming both files" {
    head -n 39 y.txt > y39.txt
    run gpc-fit -q -m out/m.txt Xz.txt y39.txt
    assert_failure 3
    assert_output --partial "y39.txt has 39 labels but Xz.txt has 40 rows"
    { cat y.txt; echo 1; } > y41.txt
    run gpc-fit -q -m out/m.txt Xz.txt y41.txt
    assert_failure 3
    assert_output --partial "41 labels"
    assert_dir_empty out
}

@test "gpc-fit: a count mismatch with labels on stdin names <stdin>, not '-'" {
    run gpc-fit -q -m out/m.txt Xz.txt - < <(head -n 39 y.txt)
    assert_failure 3
    assert_output --partial "<stdin> has 39 labels"
    assert_dir_empty out
}

@test "gpc-fit: truncated .npy input is status 3" {
    require_tools gpc-scale
    gpc-scale -r id7.txt -F npy Xz.txt > Xz.npy
    head -c 500 Xz.npy > T.npy
    run gpc-fit -q -m out/m.txt T.npy y.txt
    assert_failure 3
    assert_output --partial "gpc-fit: T.npy"
    assert_output --partial "truncated"
    assert_dir_empty out
    assert_no_tmp_files
}

@test "gpc-fit: a bad params file is status 3 with file:line" {
    printf 'log_v0 0\nlog_w9 1\n' > h.txt
    run gpc-fit -q -H h.txt -m out/m.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "h.txt:2"
    assert_output --partial "log_w9"
    run gpc-fit -q -H nosuch.txt -m out/m.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "nosuch.txt"
    assert_dir_empty out
}

# ---- usage errors (status 2) ----------------------------------------------------------

@test "gpc-fit: unknown option is status 2" {
    run gpc-fit --bogus -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "bogus"
    assert_output --partial "Try 'gpc-fit --help'"
    assert_dir_empty out
}

@test "gpc-fit: wrong number of files is status 2" {
    run gpc-fit Xz.txt
    assert_failure 2
    assert_output --partial "gpc-fit: "
    run gpc-fit
    assert_failure 2
    run gpc-fit Xz.txt y.txt y.txt
    assert_failure 2
}

@test "gpc-fit: X and y both on standard input is status 2" {
    run gpc-fit -q -m out/m.txt - - < Xz.txt
    assert_failure 2
    assert_output --partial "standard input"
    assert_dir_empty out
}

@test "gpc-fit: unknown kernel or likelihood is status 2" {
    run gpc-fit -k rbf -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "rbf"
    run gpc-fit -l cauchy -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "cauchy"
    assert_output --partial "logistic, probit, step, softmax or mprobit"
    assert_dir_empty out
}

@test "gpc-fit: bad --optimize is status 2" {
    run gpc-fit -O newton -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "newton"
    assert_output --partial "ml, map, none or is"
    run gpc-fit --optimize= Xz.txt y.txt
    assert_failure 2
    assert_dir_empty out
}

@test "gpc-fit: non-positive or non-numeric --prior-sd is status 2" {
    run gpc-fit -O map --prior-sd=-1 -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "prior-sd"
    run gpc-fit -O map --prior-sd=0 -m out/m.txt Xz.txt y.txt
    assert_failure 2
    run gpc-fit -O map --prior-sd=wide -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "'wide' is not a finite number"
    run gpc-fit -O map --prior-mean=abc -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "--prior-mean"
    run gpc-fit -O map --prior-mean=inf -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_dir_empty out
}

@test "gpc-fit: bad --restarts, --seed or --max-iter is status 2" {
    for bad in "-R -1" "-R x" "-R 1.5" "--restarts=" "-S -2" "-S abc" "--seed=99999999999" \
               "--max-iter=-5" "--max-iter=ten"; do
        run gpc-fit $bad -m out/m.txt Xz.txt y.txt
        [ "$status" -eq 2 ] || fail "'$bad' gave status $status: $output"
        assert_output --partial "Try 'gpc-fit --help'"
    done
    assert_dir_empty out
}

@test "gpc-fit: a fit cut short by --max-iter warns so, names the option and writes its model" {
    run --separate-stderr gpc-fit --max-iter=1 -m out/m.txt Xz.txt y.txt
    assert_success
    [ "$(printf '%s\n' "$stderr" | grep -c 'convergence tests were met')" -eq 1 ] ||
        fail "expected one warning: $stderr"
    printf '%s\n' "$stderr" | grep -q '^gpc-fit: the fit stopped before its convergence tests were met: its iterations were used up; .*(try --max-iter)$' ||
        fail "the warning does not give the reason: $stderr"
    grep -q '^fit ml' out/m.txt || fail "no fitted model: $(cat out/m.txt)"
    run --separate-stderr gpc-fit -m out/m2.txt Xz.txt y.txt
    assert_success
    [[ "$stderr" != *"convergence tests"* ]] || fail "a converged fit warned: $stderr"
}

@test "gpc-fit: unknown hyperparameter name is status 2" {
    run gpc-fit -p log_bias=-1 -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "log_bias"
    assert_output --partial "log_v0 log_w1"
    assert_dir_empty out
}

@test "gpc-fit: wrong number of hyperparameters is status 2" {
    run gpc-fit -p 0,0,0 -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "8 hyperparameters"
    assert_output --partial "3 given"
    run gpc-fit -p "$P8,0" -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "9 given"
    assert_dir_empty out
}

@test "gpc-fit: non-numeric hyperparameter value is status 2" {
    run gpc-fit -p log_v0=big -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "big"
    run gpc-fit -p 'log_v0=1,2' -m out/m.txt Xz.txt y.txt
    assert_failure 2
    assert_dir_empty out
}

# ---- numerical failure, output errors ---------------------------------------------------

@test "gpc-fit: hyperparameters that overflow the kernel fail (status 1), no NaN model" {
    run gpc-fit -q -O none -p log_v0=800 -m out/m.txt Xz.txt y.txt
    assert_failure 1
    assert_output --partial "gpc-fit: "
    assert_dir_empty out
}

@test "gpc-fit: a written model never contains nan or inf" {
    run gpc-fit -q -O none -p log_v0=709 -m m.txt Xz.txt y.txt
    if [ "$status" -eq 0 ]; then
        run grep -Ein 'nan|inf' m.txt
        assert_failure
    else
        assert_failure 1
    fi
}

@test "gpc-fit: write error on standard output (/dev/full) is status 3" {
    run bash -c "gpc-fit -q -O none -p '$P8' Xz.txt y.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
    run bash -c "gpc-fit -q -O none -p '$P8' -m - Xz.txt y.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
}

@test "gpc-fit: -m into a missing directory is status 3" {
    run gpc-fit -q -O none -m nodir/m.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "nodir/m.txt"
}

@test "gpc-fit: a failed run leaves an existing model untouched" {
    echo old > out/m.txt
    run gpc-fit -q -m out/m.txt Xz.txt <(head -n 10 y.txt)
    assert_failure 3
    assert_equal "$(cat out/m.txt)" old
    assert_equal "$(ls -A out)" m.txt
}

# ---- the optimiser: few evaluations, flat directions named and kept ---------------

# Pima standardised as in the README: type-II ML drives the ARD weights of
# inputs 1, 3 and 4 to 0, where the evidence no longer depends on them.  Its
# supremum is then the optimum of the ARD kernel on the other four inputs
# alone (columns 2, 5, 6 and 7: the same kernel with those weights exactly
# 0), a second problem with nothing flat, fitted on its own; the 7-input fit
# must reach its log evidence to 1e-6 and its hyperparameters, within the
# optimiser's own count of at most 150 evaluations (a count, not a timing).
@test "gpc-fit -O ml on Pima: flat weights named and kept, the optimum reached in at most 150 evaluations" {
    gpc-scale -s stats.txt "$DATA/X-train.txt" > Xs.txt
    run --separate-stderr gpc-fit -k ard -O ml -P all.params -m all.model Xs.txt "$DATA/y-train.txt"
    assert_success
    local n
    n=$(printf '%s\n' "$stderr" | sed -n 's/.*start 1: log evidence .* after \([0-9]*\) evaluations$/\1/p')
    [ -n "$n" ] || fail "no evaluation count in: $stderr"
    [ "$n" -le 150 ] || fail "$n evaluations"
    for j in 1 3 4; do
        [[ "$stderr" == *"log_w$j -> flat: the log evidence hardly depends on feature $j below exp("* ]] ||
            fail "log_w$j not named flat: $stderr"
    done
    [ "$(printf '%s\n' "$stderr" | grep -c -- '-> flat')" -eq 3 ] || fail "other flats: $stderr"
    [[ "$stderr" != *"not met"* ]] || fail "not converged: $stderr"
    cut -d' ' -f2,5,6,7 Xs.txt > X4.txt
    run gpc-fit -q -k ard -O ml -P four.params -m four.model X4.txt "$DATA/y-train.txt"
    assert_success
    assert_close "$(model_value all.model log_evidence)" "$(model_value four.model log_evidence)" 1e-8
    # log_v0 and the weights of inputs 2, 5, 6, 7 against log_v0, log_w1..log_w4 of the 4-input fit
    paste <(sed -n '1p;3p;6,8p' all.params) four.params > both.txt
    run awk '{ d = $2 - $4; if (d < 0) d = -d; if (d > 1e-3) { print; bad = 1 } } END { exit bad }' both.txt
    assert_success
    # and the flat weights far down, where the evidence no longer sees them
    run awk '$1 ~ /^log_w[134]$/ && $2 > -8 { print; bad = 1 } END { exit bad }' all.params
    assert_success
}

@test "gpc-fit -O map on Pima: under the prior no weight is flat; the same bytes twice" {
    gpc-scale -s stats.txt "$DATA/X-train.txt" > Xs.txt
    run --separate-stderr gpc-fit -k ard -O map -m a.model Xs.txt "$DATA/y-train.txt"
    assert_success
    [[ "$stderr" != *"flat"* ]] || fail "a flat direction under the prior: $stderr"
    gpc-fit -q -k ard -O ml -m ml1.model Xs.txt "$DATA/y-train.txt"
    gpc-fit -q -k ard -O ml -m ml2.model Xs.txt "$DATA/y-train.txt"
    assert_files_equal ml1.model ml2.model
}
