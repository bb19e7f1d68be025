#!/usr/bin/env bats
# Malformed chain files, as a table: every reader of chains (gpc-hmc --extend
# in place and into -o, gpc-hmc --summary, gpc-predict --chain) refuses each
# with status 3 and a message naming the file and line, leaves the chain as
# it was and writes no output.

load test_helper

setup() {
    require_tools gpc-hmc gpc-fit gpc-predict
    common_setup
    # lines: 1 gpc-chain, 2 method, 3 likelihood, 4 kernel, 5 dim, 6 training,
    # 7 prior, 8 step, 9 leapfrog, 10 persistence, 11 seed, 12 columns, 13- rows
    # (a fixed step: the chain of every version; an adapted one is below)
    gpc-hmc -k se -L 5 -q -n 6 --adapt=none -o c.txt Xz.txt y.txt
    gpc-fit -q -k se -O none -m m.txt Xz.txt y.txt
}

# refused_by_all FILE MESSAGE: every reader exits 3 with MESSAGE, FILE is
# unchanged, out/ stays empty and no temporary file is left.
refused_by_all() {
    local f="$1" msg="$2"
    cp "$f" before.txt
    run gpc-hmc -q -x "$f" -n 1 Xz.txt y.txt
    assert_failure 3
    assert_output --partial "$msg"
    run gpc-hmc -q -x "$f" -n 1 -o out/c.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "$msg"
    run gpc-hmc --summary --burn 0 "$f"
    assert_failure 3
    assert_output --partial "$msg"
    run gpc-predict -q -m m.txt --chain "$f" -o out/p.txt Xtz.txt
    assert_failure 3
    assert_output --partial "$msg"
    assert_files_equal "$f" before.txt
    assert_dir_empty out
    assert_no_tmp_files
}

# One case per line: a sed script that breaks c.txt, a tab, the message.
CASES="$(cat <<'EOF'
s/^# step .*/# step nan/	bad.txt:8: bad 'step' setting: expected a positive number
s/^# step .*/# step 0/	bad.txt:8: bad 'step' setting
s/^# step .*/# step -1/	bad.txt:8: bad 'step' setting
s/^# step .*/# step 0.1x/	bad.txt:8: bad 'step' setting
s/^# step .*/# step/	bad.txt:8: bad 'step' setting
s/^# step .*/# step 0.1 0.2/	bad.txt:8: bad 'step' setting
s/^# step .*/# step inf/	bad.txt:8: bad 'step' setting
s/^# leapfrog .*/# leapfrog 0/	bad.txt:9: bad 'leapfrog' setting: expected a whole number from 1 to 100000
s/^# leapfrog .*/# leapfrog 100001/	bad.txt:9: bad 'leapfrog' setting
s/^# leapfrog .*/# leapfrog 2.5/	bad.txt:9: bad 'leapfrog' setting
s/^# leapfrog .*/# leapfrog 5x/	bad.txt:9: bad 'leapfrog' setting
s/^# prior .*/# prior normal -3 0/	bad.txt:7: bad 'prior' setting: expected normal MEAN SD, with SD > 0
s/^# prior .*/# prior normal -3 -1/	bad.txt:7: bad 'prior' setting
s/^# prior .*/# prior normal nan 3/	bad.txt:7: bad 'prior' setting
s/^# prior .*/# prior cauchy -3 3/	bad.txt:7: bad 'prior' setting
s/^# prior .*/# prior normal -3/	bad.txt:7: bad 'prior' setting
s/^# seed .*/# seed -1/	bad.txt:11: bad 'seed' setting: expected a whole number from 0 to 4294967295
s/^# seed .*/# seed 4294967296/	bad.txt:11: bad 'seed' setting
s/^# seed .*/# seed 1e3/	bad.txt:11: bad 'seed' setting
s/^# persistence .*/# persistence 1/	bad.txt:10: bad 'persistence' setting: expected a number in [0, 1)
s/^# persistence .*/# persistence -0.1/	bad.txt:10: bad 'persistence' setting
s/^# likelihood .*/# likelihood tanh/	bad.txt:3: bad 'likelihood' setting: expected logistic, probit, step, softmax or mprobit
s/^# likelihood .*/# likelihood step/	bad.txt:3: method laplace with likelihood step: a gibbs chain is for mprobit, an ep chain for probit, step or mprobit, a laplace chain for the others
s/^# method .*/# method ep/	bad.txt:3: method ep with likelihood logistic
s/^# method .*/# method bogus/	bad.txt:2: bad 'method' setting: expected laplace, ep or gibbs
s/^# dim .*/# dim 0/	bad.txt:5: bad 'dim' setting
s/^# dim .*/# dim -7/	bad.txt:5: bad 'dim' setting
s/^# training .*/# training 0 0x1/	bad.txt:6: bad 'training' setting
s/^# training \([0-9]*\) .*/# training \1 1234/	bad.txt:6: bad 'training' setting
s/^# training \([0-9]*\) .*/# training \1/	bad.txt:6: bad 'training' setting
s/^# kernel .*/# kernel bogus/	bad.txt: bad kernel setting
/^# gpc-chain/d	bad.txt:1: not a gpc chain file (it should start with '# gpc-chain 1')
1i# made by hand	bad.txt:1: not a gpc chain file
1s/.*/# gpc-chain 2/	bad.txt:1: chain file version 2 is not supported
/^# seed/d	bad.txt: no '# seed' line in the header (before line 11)
/^# method/d	bad.txt: no '# method' line in the header
/^# step/p	bad.txt:9: 'step' is set again (first on line 8)
/^# seed/a# colour red	bad.txt:12: unknown chain setting 'colour'
s/^iteration log_v0/iteration log_v9/	bad.txt:12: expected the columns 'iteration log_v0 log_w potential log_evidence accepted step'
s/^iteration .*/& p.log_v0 p.log_w/	bad.txt:12: expected the columns
/^iteration/,$d	bad.txt: no column line after the header
13s/^1 \([^ ]* [^ ]* [^ ]* [^ ]*\) [01] /1 \1 2 /	bad.txt:13: the accepted column holds 2; expected 0 or 1
13s/^1 /0 /	bad.txt:13: expected an iteration number (1 or more)
13s/^1 /1.5 /	bad.txt:13: expected an iteration number
13s/$/ 7/	bad.txt:13: expected 7 numbers
13s/ [^ ]*$//	bad.txt:13: expected 7 numbers
13s/^1 [^ ]*/1 nan/	bad.txt:13: expected 7 numbers
14s/^2 /5 /	bad.txt:14: iteration 5 does not follow 1
15i# a comment among the rows	bad.txt:15: expected an iteration number
EOF
)"

@test "chain: malformed chains are refused by every reader (status 3, file and line)" {
    local n=0 script msg
    while IFS=$'\t' read -r script msg; do
        n=$((n + 1))
        echo "case $n: sed '$script'"
        sed "$script" c.txt > bad.txt
        ! cmp -s bad.txt c.txt || fail "case $n: the sed script changed nothing"
        refused_by_all bad.txt "$msg"
    done <<< "$CASES"
    [ "$n" -ge 45 ]
}

@test "chain: the cases are well formed: the original chain passes every reader" {
    # the table's checks would pass vacuously if the readers refused everything
    gpc-hmc -q -x c.txt -n 1 -o ext.txt Xz.txt y.txt
    gpc-hmc --summary --burn 0 c.txt > /dev/null
    gpc-predict -q -m m.txt --chain c.txt -o p.txt Xtz.txt
    cp c.txt d.txt
    gpc-hmc -q -x d.txt -n 1 Xz.txt y.txt
    assert_files_equal ext.txt d.txt
}

@test "chain: sizes in a chain are checked before they are used" {
    # a huge dim once made every reader allocate by it and crash
    sed 's/^# dim .*/# dim 1000000000/' c.txt > bad.txt
    cp bad.txt before.txt
    run gpc-hmc --summary bad.txt
    assert_failure 3
    assert_output --partial "bad.txt: dim 1000000000 is more than the chain's columns can name"
    run gpc-hmc -q -x bad.txt -n 1 Xz.txt y.txt
    assert_failure 3
    assert_output --partial "bad.txt: the chain was run on inputs with 1000000000 columns, these have 7"
    run gpc-predict -q -m m.txt --chain bad.txt -o out/p.txt Xtz.txt
    assert_failure 3
    assert_output --partial "bad.txt: the chain was run on inputs with 1000000000 columns, these have 7"
    sed 's/^# dim .*/# dim 100000000/' c.txt > big.txt
    run timeout 10 gpc-hmc --summary big.txt
    assert_failure 3
    assert_output --partial "dim 100000000 is more than"
    # a wrong training count is refused before the kernel is built from it
    sed 's/^# training [0-9]*/# training 99999999999/' c.txt > many.txt
    run gpc-hmc -q -x many.txt -n 1 Xz.txt y.txt
    assert_failure 3
    assert_output --partial "many.txt: the chain was run on other training data"
    assert_files_equal bad.txt before.txt
    assert_dir_empty out
    assert_no_tmp_files
}

@test "chain: an ARD chain of many columns is read whole (no fixed line length)" {
    # 1000 columns: the column line is longer than any fixed buffer it once met
    awk 'BEGIN { srand(3); for (i = 0; i < 12; i++) { l = ""; for (j = 0; j < 1000; j++)
         l = l (j ? " " : "") sprintf("%.3f", rand() - 0.5); print l } }' > W.txt
    head -n 12 y.txt > y12.txt
    gpc-hmc -k ard -L 2 -q -n 2 --adapt=none -o w.txt W.txt y12.txt
    gpc-hmc -q -x w.txt -n 1 W.txt y12.txt
    run gpc-hmc --summary --burn 0 w.txt
    assert_failure 3
    assert_output --partial "3 iterations leave too few"
}

@test "chain: an adapted chain's malformed warm-up is refused by every reader (status 3)" {
    # lines: 8 step, 9 adapt, 13 columns, 14- rows; the warm-up is 3 iterations
    gpc-hmc -k se -L 5 -q -n 6 --adapt=3 -o a.txt Xz.txt y.txt
    sed 's/^# adapt .*/# adapt 3 1/' a.txt > bad.txt
    refused_by_all bad.txt "bad.txt:9: bad 'adapt' setting: expected the warm-up's iterations, from 1 to 100000000, and an acceptance rate in (0, 1)"
    sed 's/^# adapt .*/# adapt 0 0.6/' a.txt > bad.txt
    refused_by_all bad.txt "bad.txt:9: bad 'adapt' setting"
    sed 's/^# adapt .*/# adapt 3/' a.txt > bad.txt
    refused_by_all bad.txt "bad.txt:9: bad 'adapt' setting"
    # the column line names accept_prob, and every row has it, in [0, 1]
    sed 's/ accept_prob$//' a.txt > bad.txt
    refused_by_all bad.txt "bad.txt:13: expected the columns"
    awk 'NR == 15 { $NF = 1.5 } { print }' a.txt > bad.txt
    refused_by_all bad.txt "bad.txt:15: the accept_prob column holds 1.5; expected a number in [0, 1]"
    awk 'NR == 15 { $(NF - 1) = 0 } { print }' a.txt > bad.txt
    refused_by_all bad.txt "bad.txt:15: the step column holds 0; expected a positive number"
    # a gibbs chain keeps its step: an adapt line is not its own
    gpc-hmc -M gibbs -k se -q -n 2 -o g.txt Xz.txt y.txt
    sed 's/^# seed /# adapt 3 0.6\n# seed /' g.txt > bad.txt
    run gpc-hmc --summary --burn 0 bad.txt
    assert_failure 3
    assert_output --partial "a gibbs chain has no 'adapt' setting"
}

@test "chain: an adapted chain whose warm-up rows were changed is not continued" {
    gpc-hmc -k se -L 5 -q -n 6 --adapt=3 -o a.txt Xz.txt y.txt
    # another acceptance probability in the warm-up gives the next row another step
    awk 'NR == 15 { $NF = ($NF > 0.5 ? 0.1 : 0.9) } { print }' a.txt > bad.txt
    cp bad.txt before.txt
    run gpc-hmc -q -x bad.txt -n 1 Xz.txt y.txt
    assert_failure 3
    assert_output --partial "bad.txt: iteration 3 has step "
    assert_output --partial "its rows were changed, and it cannot be continued exactly"
    assert_files_equal bad.txt before.txt
    # a step changed after the warm-up, where it is frozen
    awk 'NR == 18 { $(NF - 1) = 0.25 } { print }' a.txt > bad.txt
    run gpc-hmc -q -x bad.txt -n 1 Xz.txt y.txt
    assert_failure 3
    assert_output --partial "bad.txt: iteration 5 has step 0.25 where"
    # the readers of samples have no need of the replay
    gpc-predict -q -m m.txt --chain bad.txt -o p.txt Xtz.txt
}
