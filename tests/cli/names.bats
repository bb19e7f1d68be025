#!/usr/bin/env bats
# Column names as scikit-learn writes them ("worst radius"): quoted in kernel
# specs, kept by models, chains and scaling statistics, and naming the ARD
# length scales (log_w.worst_radius) in hyperparameter lists, --summary and
# the trace plot, where the numbered names (log_w2) stay accepted.

load test_helper

setup() {
    require_tools gpc-kernel gpc-fit gpc-predict gpc-hmc gpc-scale gpc-evidence
    common_setup
    # Pima's first columns under names with blanks, a quote and a comma
    {
        echo 'pregnancies,plasma glucose,"blood ""bp"", mm",skin,bmi,pedigree,age'
        tr ' ' ',' < Xz.txt
    } > train.csv
    {
        echo 'age,pedigree,bmi,skin,"blood ""bp"", mm",plasma glucose,pregnancies'
        awk '{ print $7 "," $6 "," $5 "," $4 "," $3 "," $2 "," $1 }' Xtz.txt
    } > test.csv
    SPEC='ard@"plasma glucose","blood ""bp"", mm",bmi+bias'
}

@test "names: a quoted spec fits the model the numbered one does, and predicts by name" {
    run gpc-fit -q -O none -k "$SPEC" -m named.model train.csv y.txt
    assert_success
    run gpc-fit -q -O none -k 'ard@2,3,5+bias' -m numbered.model Xz.txt y.txt
    assert_success
    grep -qx 'kernel ard@2,3,5+bias' named.model || fail "$(grep '^kernel' named.model)"
    # the model names its columns, blanks and all, and its hyperparameters by number
    grep -qx 'columns pregnancies plasma%20glucose blood%20"bp",%20mm skin bmi pedigree age' \
        named.model || fail "$(grep '^columns' named.model)"
    diff <(grep -v '^columns ' named.model) numbered.model || fail "the models differ"
    # the test file's columns in another order are matched by their names
    run gpc-predict -m named.model -o named.pred test.csv
    assert_success
    run gpc-predict -m numbered.model -o numbered.pred Xtz.txt
    assert_success
    assert_files_equal named.pred numbered.pred
}

@test "names: --list and -P name the length scales after their columns, both names read back" {
    run gpc-kernel -k "$SPEC" --list train.csv
    assert_success
    assert_output "log_v0 0
log_w.plasma_glucose -2  # also log_w2, column 'plasma glucose'
log_w.blood__bp___mm -2  # also log_w3, column 'blood \"bp\", mm'
log_w.bmi -2  # also log_w5
log_bias -3"
    # -p, --fix and hyperparameter files take either name
    run gpc-kernel -k "$SPEC" -p 'log_w.plasma_glucose=1,log_w5=2' --list train.csv
    assert_success
    assert_line "log_w.plasma_glucose 1  # also log_w2, column 'plasma glucose'"
    assert_line "log_w.bmi 2  # also log_w5"
    printf 'log_w2 0.5\nlog_w.bmi 0.25\n' > p.txt
    run gpc-fit -q -O ml --fix=log_w.plasma_glucose,log_w5 -H p.txt -k "$SPEC" -m m.model \
        -P params.txt train.csv y.txt
    assert_success
    grep -qx 'log_w.plasma_glucose 0.5' params.txt || fail "$(cat params.txt)"
    grep -qx 'log_w.bmi 0.25' params.txt || fail "$(cat params.txt)"
    grep -qx 'log_w2 0.5' m.model || fail "the model keeps the numbered names"
    # the written list reads back, named or numbered, into the evidence
    run gpc-evidence -k "$SPEC" -H params.txt train.csv y.txt
    assert_success
    named="$output"
    sed 's/^log_w\.plasma_glucose/log_w2/; s/^log_w\.blood__bp___mm/log_w3/; s/^log_w\.bmi/log_w5/' \
        params.txt > numbered.txt
    run gpc-evidence -k 'ard@2,3,5+bias' -H numbered.txt Xz.txt y.txt
    assert_success
    [ "$output" = "$named" ] || fail "named: $named; numbered: $output"
    # without column names only the numbered names exist
    run gpc-evidence -k 'ard@2,3,5+bias' -H params.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "has no hyperparameter 'log_w.plasma_glucose'"
}

@test "names: the spec's quoting errors name what is wrong (status 2)" {
    run gpc-fit -q -k 'ard@"plasma glucose+bias' train.csv y.txt
    assert_failure 2
    assert_output --partial "unterminated quote in '\"plasma glucose+bias'"
    run gpc-fit -q -k 'ard@""+bias' train.csv y.txt
    assert_failure 2
    assert_output --partial "empty column name"
    run gpc-fit -q -k 'ard@"plasma  glucose"' train.csv y.txt
    assert_failure 2
    assert_output --partial "has no column named 'plasma  glucose'"
    run gpc-fit -q -k 'ard@plasma glucose' train.csv y.txt
    assert_failure 2
    assert_output --partial "no column named 'plasma' (its columns: 'pregnancies', 'plasma glucose'"
    assert_output --partial 'write a name with blanks or other signs in double quotes'
    run gpc-fit -q -k 'ard@"bmi"' Xz.txt y.txt
    assert_failure 2
    assert_output --partial "names a column, 'bmi', but Xz.txt has no header line"
}

@test "names: a chain records the columns; --summary and -x keep the names, old chains read" {
    run gpc-hmc -q -n 6 -L 3 --adapt=none -k "$SPEC" -o c.txt train.csv y.txt
    assert_success
    grep -qx '# columns pregnancies plasma%20glucose blood%20"bp",%20mm skin bmi pedigree age' \
        c.txt || fail "$(grep '^# columns' c.txt)"
    grep -q '^iteration log_v0 log_w2 log_w3 log_w5 log_bias ' c.txt || fail "$(grep '^it' c.txt)"
    run gpc-hmc --summary --burn=1 c.txt
    assert_success
    assert_line --regexp '^log_w\.plasma_glucose +-?[0-9]'
    assert_line --regexp '^log_w\.blood__bp___mm +-?[0-9]'
    assert_line --regexp '^log_w\.bmi +-?[0-9]'
    # extending gives the chain one run of all the iterations gives
    run gpc-hmc -q -x c.txt -n 3 -o c2.txt train.csv y.txt
    assert_success
    run gpc-hmc -q -n 9 -L 3 --adapt=none -k "$SPEC" -o c9.txt train.csv y.txt
    assert_success
    assert_files_equal c2.txt c9.txt
    # the same chain without the columns line, as older chains are: numbered names
    grep -v '^# columns' c.txt > old.txt
    run gpc-hmc --summary --burn=1 old.txt
    assert_success
    assert_line --regexp '^log_w2 +-?[0-9]'
    # the samples are the same, named either way
    diff <(gpc-hmc --summary --burn=1 c.txt | awk '{ $1 = ""; print }') \
         <(gpc-hmc --summary --burn=1 old.txt | awk '{ $1 = ""; print }') || fail "summaries differ"
    # --fix by column name
    run gpc-hmc -q -n 3 -L 3 -k "$SPEC" --fix=log_w.bmi -o f.txt train.csv y.txt
    assert_success
    grep -qx '# fixed log_w5' f.txt || fail "$(grep '^# fixed' f.txt)"
}

@test "names: a damaged columns line is refused with its line (status 3)" {
    run gpc-hmc -q -n 3 -L 3 -k "$SPEC" -o c.txt train.csv y.txt
    assert_success
    sed 's/^# columns pregnancies /# columns /' c.txt > short.txt
    run gpc-hmc --summary short.txt
    assert_failure 3
    assert_output --partial "short.txt: the 'columns' line names 6 columns, dim is 7"
    sed 's/^# columns pregnancies /# columns preg%zz /' c.txt > bad.txt
    run gpc-hmc --summary bad.txt
    assert_failure 3
    assert_output --partial "bad.txt:13: bad column name 'preg%zz'"
    sed 's/^# columns pregnancies plasma%20glucose /# columns bmi plasma%20glucose /' c.txt > twice.txt
    run gpc-hmc --summary twice.txt
    assert_failure 3
    assert_output --partial "column 5 has the name of column 1, 'bmi'"
    awk '{ print } /^# columns/ { print }' c.txt > again.txt
    run gpc-hmc --summary again.txt
    assert_failure 3
    assert_output --partial "again.txt:14: 'columns' is set again"
}

@test "names: gpc-scale saves named statistics under their header and restores them by name" {
    run gpc-scale -s st.csv -o z.csv train.csv
    assert_success
    run head -n 1 st.csv
    assert_output 'pregnancies,plasma glucose,"blood ""bp"", mm",skin,bmi,pedigree,age'
    # the test columns in another order get their own column's statistics
    gpc-scale -r st.csv -o zt.csv test.csv
    gpc-scale -r st.csv -o ztz.txt Xtz.txt
    awk -F, 'NR > 1 { print $7, $6, $5, $4, $3, $2, $1 }' zt.csv > zt-reordered.txt
    assert_matrices_close zt-reordered.txt ztz.txt 1e-15
    # a column the statistics lack is named
    printf 'age,weight\n1,2\n' > other.csv
    run gpc-scale -r st.csv other.csv
    assert_failure 3
    assert_output --partial "st.csv has no column named 'weight'"
}
