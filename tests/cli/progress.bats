#!/usr/bin/env bats
# Progress lines of the long runs (gpc-hmc's samplers, the importance sampler
# of gpc-fit -O is, exact leave-one-out refits): "iteration 10 of 200, 2.1 s
# elapsed, about 40 s left" before what the line said already; how many of
# them, which counts and targets they name, that the estimate agrees with the
# time elapsed, that -q silences them and that they never touch stdout.

load test_helper

setup() {
    require_tools gpc-hmc gpc-fit gpc-predict
    common_setup
    iris_fixtures
}

# A duration as the tools print it: 2.1 s, 45 s, 3 min 20 s, 2 h 05 min.
DUR='([0-9]+\.[0-9] s|[0-9]+ s|[0-9]+ min [0-9]{2} s|[0-9]+ h [0-9]{2} min)'
# The head of a line: what, count, target, elapsed, and the estimate if any.
head_re() {
    echo "$1 [0-9]+ of ${2:-}[0-9]+, $DUR elapsed(, ${2:-}about $DUR left|, stopping at the time limit( in about $DUR)?)?"
}
NUM='-?[0-9.]+(e[-+][0-9]+)?'
HMC_LINE="^gpc-hmc: $(head_re iteration); log evidence $NUM, acceptance [01]\.[0-9]{2}, [0-9.]+(e[-+][0-9]+)? ms per leapfrog step\$"
GIBBS_LINE="^gpc-hmc: $(head_re iteration); log p\(y\) $NUM, acceptance [01]\.[0-9]{2}, [0-9]+\.[0-9]{3} s per iteration\$"
IS_LINE="^gpc-fit: $(head_re 'importance update' 'at most '); bound $NUM, largest move of a log hyperparameter $NUM, effective sample size [0-9]+ of 1000\$"
LOO_LINE="^gpc-predict: $(head_re 'leave-one-out refit')\$"

# Every line of FILE that names WHAT matches RE (and there is at least one).
all_lines_match() {
    local file=$1 what=$2 re=$3
    run grep -c "$what" "$file"
    assert_success
    run grep "$what" "$file"
    assert_success
    run grep -Ev "$re" <<< "$output"
    assert_failure 1 # grep -v found no line outside the pattern
}

# "COUNT TARGET" of each progress line of FILE, one a line.
counts() { sed -n 's/^[^:]*: [a-z -]* \([0-9][0-9]*\) of \(at most \)\{0,1\}\([0-9][0-9]*\),.*/\1 \3/p' "$1"; }

# The lines "K N" for K = FROM..TO (step STEP) and target N.
expected_counts() { seq "$1" "${4:-1}" "$2" | sed "s/\$/ $3/"; }

# Every estimate "about L left" of FILE against the elapsed time E on the
# same line (both read from one clock): after K of N steps, K0 of them
# before this run, L = E (N - K) / (K - K0), to the rounding of the printed
# values (a tenth below 10 s, a second below an hour).  Lines without an
# estimate are the last (K = N) only.  Prints the lines that disagree.
check_estimates() {
    awk -v k0="$2" '
        function secs(s, tol,   f) { # value of a printed duration; tol gets its half unit
            split(s, f, " ")
            if (f[2] == "h") { tol[0] = 30; return f[1] * 3600 + f[3] * 60 }
            if (f[2] == "min") { tol[0] = 0.5; return f[1] * 60 + f[3] }
            tol[0] = s ~ /\./ ? 0.05 : 0.5
            return f[1]
        }
        / of [0-9]+, / {
            sub(/;.*/, ""); sub(/^[^:]*: /, "")
            n = split($0, part, ", ")
            split(part[1], w, " of "); k = w[1]; sub(/.* /, "", k); N = w[2] + 0
            e = secs(substr(part[2], 1, length(part[2]) - 8), te)
            if (n < 3) { if (k != N) { print "no estimate before the end: " $0; bad = 1 }; next }
            l = part[3]; sub(/^about /, "", l); sub(/ left$/, "", l)
            l = secs(l, tl); r = (N - k) / (k - k0); checked++
            if (l - tl[0] > (e + te[0]) * r + 1e-9 || l + tl[0] < (e - te[0]) * r - 1e-9) {
                print "estimate off: " $0 " (expected " e " x " r ")"; bad = 1
            }
        }
        END { if (!checked) print "no estimate checked"; exit bad || !checked }' "$1"
}

@test "progress: gpc-hmc -v names every iteration of N with the time elapsed and left" {
    gpc-hmc -k se -L 5 -n 12 --adapt=4 -v -o c.txt Xz.txt y.txt 2> err.txt
    all_lines_match err.txt "gpc-hmc: iteration " "$HMC_LINE"
    run counts err.txt
    assert_output "$(expected_counts 1 12 12)"
    # the estimate on every line but the last, none on the last
    run grep -c ' left; ' err.txt
    assert_output 11
    run grep -c '^gpc-hmc: iteration 12 of 12, [^,]* elapsed; log evidence' err.txt
    assert_output 1
    # the lines on stderr are the progress lines and the run's summary only
    run grep -vc '^gpc-hmc: iteration \|^gpc-hmc: 12 iterations, acceptance ' err.txt
    assert_output 0
}

@test "progress: gpc-hmc's estimates agree with the time elapsed, for a new and an extended chain" {
    # the full Pima training set and long trajectories: iterations slow
    # enough (about 0.1 s) for the printed tenths to tell the rate of this
    # run from the rate over the whole chain
    gpc-hmc -k se -L 40 -n 4 -v -o c.txt "$DATA/X-train.txt" "$DATA/y-train.txt" 2> new.txt
    run check_estimates new.txt 0
    assert_success
    gpc-hmc -x c.txt -n 4 -v "$DATA/X-train.txt" "$DATA/y-train.txt" 2> ext.txt
    run counts ext.txt
    assert_output "$(expected_counts 5 8 8)"
    run check_estimates ext.txt 4
    assert_success
}

@test "progress: every tenth iteration of the chain by default, its target counted for an extended chain" {
    gpc-hmc -k se -L 5 -n 25 -o c.txt Xz.txt y.txt 2> err.txt
    all_lines_match err.txt "gpc-hmc: iteration " "$HMC_LINE"
    run counts err.txt
    assert_output "$(expected_counts 10 20 25 10)"
    # 12 rows, then 13 more: the chain's target is 25, its tenths 20
    gpc-hmc -k se -L 5 -n 12 -q -o e.txt Xz.txt y.txt
    gpc-hmc -x e.txt -n 13 Xz.txt y.txt 2> ext.txt
    run counts ext.txt
    assert_output "20 25"
    gpc-hmc -x e.txt -n 5 -v Xz.txt y.txt 2> ext2.txt
    all_lines_match ext2.txt "gpc-hmc: iteration " "$HMC_LINE"
    run counts ext2.txt
    assert_output "$(expected_counts 26 30 30)"
    # the runs together are the chain one run of 30 gives
    gpc-hmc -k se -L 5 -n 30 -q -o long.txt Xz.txt y.txt
    assert_files_equal e.txt long.txt
}

@test "progress: gpc-hmc -M gibbs, new and extended, names iterations of N" {
    gpc-hmc -M gibbs -k se -n 6 -v -o c.txt X3.txt y3.txt 2> new.txt
    all_lines_match new.txt "gpc-hmc: iteration " "$GIBBS_LINE"
    run counts new.txt
    assert_output "$(expected_counts 1 6 6)"
    gpc-hmc -x c.txt -n 5 -v X3.txt y3.txt 2> ext.txt
    all_lines_match ext.txt "gpc-hmc: iteration " "$GIBBS_LINE"
    run counts ext.txt
    assert_output "$(expected_counts 7 11 11)"
    run grep -c ' left; ' ext.txt
    assert_output 4
    gpc-hmc -x c.txt -n 9 X3.txt y3.txt 2> ext2.txt
    run counts ext2.txt
    assert_output "20 20"
}

@test "progress: with a time limit that passes, the line says the run stops there" {
    # the limit passes during the first iteration: that one is the last
    run --separate-stderr gpc-hmc -k se -L 5 -n 1000 -T 0.000001 -v -o c.txt Xz.txt y.txt
    assert_success
    run grep '^gpc-hmc: iteration' <<< "$stderr"
    assert_output --regexp '^gpc-hmc: iteration 1 of 1000, [^,]* elapsed, stopping at the time limit; log evidence '
    assert_equal "$(grep -c '^gpc-hmc: iteration' <<< "$stderr")" 1
    # a limit far beyond the end changes nothing: the run ends by finishing
    gpc-hmc -k se -L 5 -n 12 -T 1000 -v -o d.txt Xz.txt y.txt 2> err.txt
    run grep -c ' left; ' err.txt
    assert_output 11
    run grep -c 'time limit' err.txt
    assert_output 0
}

@test "progress: a time limit before the end: 'stopping at the time limit in about' the time to it" {
    # 100000 iterations of about a millisecond cannot end within 0.3 s
    gpc-hmc -M gibbs -k se -n 100000 -T 0.3 -v -o c.txt X3.txt y3.txt 2> err.txt
    all_lines_match err.txt "gpc-hmc: iteration " "$GIBBS_LINE"
    last=$(awk '!/^#/ && $1 != "iteration" { r = $1 } END { print r }' c.txt)
    run tail -n 3 err.txt
    assert_line --index 0 --regexp "^gpc-hmc: iteration $last of 100000, [^,]* elapsed, stopping at the time limit; "
    assert_line --index 1 "gpc-hmc: time limit reached after $last iterations; extend the chain to go on"
    # before it, the time to the limit: 0.3 s - E, to the end of the
    # iteration running then (up to E / K more), to the printed tenths
    run awk '/in about/ {
            k = $3; e = $6; x = $0; sub(/.*in about /, "", x); x += 0
            if (x - 0.05 > 0.3 - (e - 0.05) + (e + 0.05) / k || x + 0.05 < 0.3 - (e + 0.05)) {
                print "off: " $0; bad = 1 }
            n++
        }
        END { exit bad || n + 1 != '"$last"' }' err.txt
    assert_success
}

@test "progress: -q prints nothing; -v changes no byte of the chain" {
    run --separate-stderr gpc-hmc -k se -L 5 -n 12 -q -o q.txt Xz.txt y.txt
    assert_success
    assert_equal "$stderr" ""
    gpc-hmc -k se -L 5 -n 12 -q Xz.txt y.txt > q-stdout.txt 2> q-err.txt
    gpc-hmc -k se -L 5 -n 12 -v Xz.txt y.txt > v-stdout.txt 2> v-err.txt
    gpc-hmc -k se -L 5 -n 12 Xz.txt y.txt > d-stdout.txt 2> d-err.txt
    [ ! -s q-err.txt ] || fail "-q printed: $(cat q-err.txt)"
    [ "$(grep -c '^gpc-hmc: iteration' v-err.txt)" -eq 12 ]
    [ "$(grep -c '^gpc-hmc: iteration' d-err.txt)" -eq 1 ]
    assert_files_equal q-stdout.txt v-stdout.txt
    assert_files_equal q-stdout.txt d-stdout.txt
    assert_files_equal q-stdout.txt q.txt
    # extended, and Gibbs
    cp q.txt x.txt
    run --separate-stderr gpc-hmc -x x.txt -n 3 -q Xz.txt y.txt
    assert_success
    assert_equal "$stderr" ""
    gpc-hmc -M gibbs -k se -n 4 -q X3.txt y3.txt > gq.txt 2> gq-err.txt
    gpc-hmc -M gibbs -k se -n 4 -v X3.txt y3.txt > gv.txt 2> gv-err.txt
    [ ! -s gq-err.txt ] || fail "-q printed: $(cat gq-err.txt)"
    [ "$(grep -c '^gpc-hmc: iteration' gv-err.txt)" -eq 4 ]
    assert_files_equal gq.txt gv.txt
}

@test "progress: the importance sampler counts its updates of at most 50, none estimated once converged" {
    gpc-fit -v -M vb -O is -k se -m a.txt X3.txt y3.txt 2> err.txt
    all_lines_match err.txt 'importance update ' "$IS_LINE"
    k=$(grep -c 'importance update ' err.txt)
    run counts err.txt
    assert_output "$(expected_counts 1 "$k" 50)"
    # converged at update k: an estimate on each update before, none on it
    run grep -c 'at most about .* left; ' err.txt
    assert_output "$((k - 1))"
    run grep -c "importance update $k of at most 50, [^,]* elapsed; bound" err.txt
    assert_output 1
    # -q leaves only the warning that the sampler shares the bound's preference
    run --separate-stderr gpc-fit -q -M vb -O is -k se -m b.txt X3.txt y3.txt
    assert_success
    [[ "$stderr" == "gpc-fit: importance sampling weighs the draws as the variational bound does "* ]] ||
        fail "stderr: $stderr"
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || fail "more than the warning: $stderr"
    assert_files_equal a.txt b.txt
}

@test "progress: exact leave-one-out refits, every 50th of n, and -q silences them" {
    head -n 100 "$DATA/X-train.txt" > X100.txt
    head -n 100 "$DATA/y-train.txt" > y100.txt
    gpc-fit -q -k se -m m.txt X100.txt y100.txt
    gpc-predict -m m.txt --loo=exact -c p > p.txt 2> err.txt
    all_lines_match err.txt 'leave-one-out' "$LOO_LINE"
    run counts err.txt
    assert_output "$(expected_counts 50 100 100 50)"
    run grep -c '^gpc-predict: leave-one-out refit 50 of 100, [^,]* elapsed, about .* left$' err.txt
    assert_output 1
    run grep -c '^gpc-predict: leave-one-out refit 100 of 100, [^,]* elapsed$' err.txt
    assert_output 1
    run --separate-stderr gpc-predict -q -m m.txt --loo=exact -c p
    assert_success
    assert_equal "$stderr" ""
    assert_equal "$output" "$(cat p.txt)"
}

@test "progress: gpc-evidence over a grid and gpc-predict over a chain say how far they are" {
    for i in $(seq 1 200); do echo "0 -2 -2 -2 -2 -2 -2 -2"; done > grid.txt
    run --separate-stderr gpc-evidence -n -g grid.txt -o ev.txt Xz.txt y.txt
    assert_success
    printf '%s\n' "$stderr" > err.txt
    all_lines_match err.txt 'hyperparameter vector' "^gpc-evidence: $(head_re 'hyperparameter vector')\$"
    run counts err.txt
    assert_output "$(expected_counts 100 200 200 100)"
    run --separate-stderr gpc-evidence -q -n -g grid.txt -o ev.txt Xz.txt y.txt
    assert_success
    [ -z "$stderr" ] || fail "-q printed: $stderr"

    run gpc-hmc -q -n 60 -L 5 --adapt=none -o chain.txt Xz.txt y.txt
    assert_success
    run gpc-fit -q -O none -m m.txt Xz.txt y.txt
    assert_success
    run --separate-stderr gpc-predict -m m.txt --chain chain.txt --burn 0 -o p.txt Xtz.txt
    assert_success
    printf '%s\n' "$stderr" > err.txt
    all_lines_match err.txt 'sample' "^gpc-predict: $(head_re sample)\$"
    run counts err.txt
    assert_output "$(expected_counts 20 60 60 20)"
}

EVAL_LINE="^gpc-fit: evaluation [0-9]+ at \\($NUM $NUM\\): log evidence $NUM \\($NUM s\\)\$"
NEP_LINE='^gpc-fit: nested EP: [0-9]+ sweeps, [0-9]+ inner sweeps$'

@test "progress: -vv adds a line per evaluation and per nested EP run, -vvv its sweeps; the model unchanged" {
    fit() { gpc-fit "$@" -M ep -k se -p log_v0=1,log_w=-1 --max-iter=3 X3.txt y3.txt; }
    fit -v -m v.txt 2> v-err.txt
    fit -vv -m vv.txt 2> vv-err.txt
    fit -vvv -m vvv.txt 2> vvv-err.txt
    assert_files_equal v.txt vv.txt
    assert_files_equal v.txt vvv.txt
    run grep -c 'evaluation [0-9]\|nested EP: \|nested EP sweep [0-9]*:' v-err.txt
    assert_output 0
    all_lines_match vv-err.txt 'evaluation ' "$EVAL_LINE"
    all_lines_match vv-err.txt 'nested EP: ' "$NEP_LINE"
    run grep -c 'nested EP sweep [0-9]*:' vv-err.txt
    assert_output 0
    # as many evaluation lines as the optimiser counted, numbered in order
    evals=$(sed -n 's/.*start 1: .* after \([0-9]*\) evaluations.*/\1/p' vv-err.txt)
    run sed -n 's/^gpc-fit: evaluation \([0-9]*\) .*/\1/p' vv-err.txt
    assert_output "$(seq 1 "$evals")"
    # one nested EP run per evaluation, and the final fit's
    run grep -c 'nested EP: ' vv-err.txt
    assert_output "$((evals + 1))"
    # the first is at the starting point: gpc-evidence's value there
    first=$(sed -n 's/^gpc-fit: evaluation 1 at (1 -1): log evidence \([^ ]*\) .*/\1/p' vv-err.txt)
    ev=$(gpc-evidence -q -M ep -k se -p log_v0=1,log_w=-1 X3.txt y3.txt)
    run awk -v a="$first" -v b="$ev" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-9 && d > -1e-9) }'
    assert_success
    # -vvv: before each run's summary, as many sweep lines as it names
    run awk '/nested EP sweep [0-9]+:/{ k++ } /nested EP: [0-9]+ sweeps/{ if (k != $4) { print k " lines, " $4 " sweeps"; exit 1 } k = 0; n++ }
             END { if (!n) { print "no nested EP runs"; exit 1 } }' vvv-err.txt
    assert_success
}
