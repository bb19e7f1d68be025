#!/usr/bin/env bats
# CSV inputs as pandas writes them: headers, names in kernel specs, test
# columns matched to the model's by name, and the refusals that say what
# would work.  The files are written by Debian's python3 with pandas
# (python3-pandas, installed by scripts/deps.sh).

load test_helper

PY=/usr/bin/python3

setup() {
    require_tools gpc-kernel gpc-fit gpc-predict gpc-score
    common_setup
    "$PY" -c 'import pandas' || fail "no pandas for $PY (apt-get install python3-pandas)"
}

# Pima's standardised columns as data frames: train.csv / test.csv with a
# header, labels as Series (header 'diabetes'), and the same test frame with
# its columns shuffled and one extra column.
write_frames() {
    "$PY" - <<'PY'
import pandas as pd
cols = ["npreg", "glu", "bp", "skin", "bmi", "ped", "age"]
tr = pd.read_csv("Xz.txt", sep=" ", header=None, names=cols)
te = pd.read_csv("Xtz.txt", sep=" ", header=None, names=cols)
tr.to_csv("train.csv", index=False)
te.to_csv("test.csv", index=False)
pd.read_csv("y.txt", header=None, names=["diabetes"])["diabetes"].to_csv("y.csv", index=False)
pd.read_csv("yt.txt", header=None, names=["diabetes"])["diabetes"].to_csv("yt.csv", index=False)
shuffled = te[["age", "bmi", "npreg", "glu", "ped", "skin", "bp"]].copy()
shuffled.insert(2, "id", range(len(te)))
shuffled.to_csv("test-shuffled.csv", index=False)
tr.to_csv("train-index.csv")                                  # with pandas' index
pd.DataFrame(tr.values).to_csv("train-numbered.csv", index=False)  # header 0,1,...,6
PY
}

@test "csv: pandas frames go through fit, predict and score as the text files do" {
    write_frames
    run head -n 2 train.csv
    assert_output --partial "npreg,glu,bp,skin,bmi,ped,age"
    run gpc-fit -q -k 'ard+bias' -m text.model Xz.txt y.txt
    assert_success
    run gpc-fit -q -k 'ard+bias' -m csv.model train.csv y.csv
    assert_success
    grep -qx 'columns npreg glu bp skin bmi ped age' csv.model || fail "no columns line: $(head -12 csv.model)"
    # apart from the names, the same model to the last digit
    diff <(grep -v '^columns ' csv.model) text.model || fail "the models differ"
    run gpc-predict -m text.model -o text.pred Xtz.txt
    assert_success
    run gpc-predict -m csv.model -o csv.pred test.csv
    assert_success
    assert_files_equal csv.pred text.pred
    run gpc-score csv.pred yt.csv
    assert_success
    [ "$output" = "$(gpc-score text.pred yt.txt)" ] || fail "scores differ: $output"
}

@test "csv: a kernel spec names columns, and --list shows the names" {
    write_frames
    run gpc-fit -q -O none -k 'ard@glu,bmi-age+bias' -m named.model train.csv y.csv
    assert_success
    run gpc-fit -q -O none -k 'ard@2,5-7+bias' -m numbered.model Xz.txt y.txt
    assert_success
    grep -qx 'kernel ard@2,5-7+bias' named.model || fail "$(grep '^kernel' named.model)"
    diff <(grep -v '^columns ' named.model) numbered.model || fail "the models differ"
    run gpc-kernel -k 'ard@glu,bmi+bias' --list train.csv
    assert_success
    assert_output "log_v0 0
log_w.glu -2  # also log_w2
log_w.bmi -2  # also log_w5
log_bias -3"
    # the list is a valid hyperparameter file
    gpc-kernel -k 'ard@glu,bmi+bias' --list -p log_w5=1 train.csv > p.txt
    run gpc-kernel -k 'ard@glu,bmi+bias' -H p.txt --list train.csv
    assert_success
    assert_line "log_w.bmi 1  # also log_w5"
}

@test "csv: test columns are matched to the model's by name, in any order" {
    write_frames
    run gpc-fit -q -k 'ard+bias' -m m.model train.csv y.csv
    assert_success
    run gpc-predict -m m.model -o in-order.pred test.csv
    assert_success
    run gpc-predict -m m.model -o shuffled.pred test-shuffled.csv
    assert_success
    assert_files_equal shuffled.pred in-order.pred
    # without names, position decides: the shuffled file's columns are others
    "$PY" -c 'import pandas as pd; pd.read_csv("test-shuffled.csv").drop(columns="id").to_csv("unnamed.txt", sep=" ", header=False, index=False)'
    run gpc-predict -m m.model -o unnamed.pred unnamed.txt
    assert_success
    ! cmp -s unnamed.pred in-order.pred || fail "unnamed columns were matched by name"
}

@test "csv: a test file without a column of the model names it" {
    write_frames
    run gpc-fit -q -O none -m m.model train.csv y.csv
    assert_success
    cut -d, -f1-4,6- test.csv > nobmi.csv
    run gpc-predict -m m.model -o out/p.txt nobmi.csv
    assert_failure 3
    assert_output "gpc-predict: nobmi.csv has no column named 'bmi', which the model was trained on (its columns: 'npreg', 'glu', 'bp', 'skin', 'ped', 'age')"
    assert_dir_empty out
}

@test "csv: pandas' index column is refused with the fix" {
    write_frames
    run gpc-fit -q -m out/m.model train-index.csv y.csv
    assert_failure 3
    assert_output "gpc-fit: train-index.csv:1: column 1 has no name (pandas writes its index so: save with index=False, or name the column)"
    assert_dir_empty out
}

@test "csv: a header of numbers needs --header, which every reader takes" {
    write_frames
    run gpc-fit -q -O none -m out/m.model train-numbered.csv y.csv
    assert_failure 3
    assert_output "gpc-fit: y.csv has 40 labels but train-numbered.csv has 41 rows; they must match"
    run gpc-fit -q -O none --header -k 'ard@1-2+bias' -m m.model train-numbered.csv y.csv
    assert_success
    grep -qx 'columns 0 1 2 3 4 5 6' m.model || fail "$(grep '^columns' m.model)"
    run gpc-fit -q -O none --no-header -m out/m.model train.csv y.csv
    assert_failure 3
    assert_output "gpc-fit: train.csv:1: 'npreg' is not a number"
}

@test "csv: a labels header is dropped above numbers, and above words of classes seen twice" {
    write_frames
    run sed -n 1,2p y.csv
    assert_output "diabetes
-1"
    awk 'NR == 1 { print "outcome"; next } { print ($1 > 0 ? "yes" : "no") }' y.csv > words.csv
    run gpc-fit -O none -m out/m.model Xz.txt words.csv
    assert_success
    assert_line "gpc-fit: words.csv:1: 'outcome' is taken as the column's name (pass --no-header if it is a label)"
    run gpc-fit -q -O none --no-header -m out/n.model Xz.txt words.csv
    assert_failure 3
    run gpc-fit -q -O none --header -m m.model Xz.txt words.csv
    assert_success
    grep -qx 'classes no yes' m.model || fail "$(grep '^classes' m.model)"
}

@test "csv: a missing value and a ragged row are named with their line" {
    printf 'a,b\n1,2\n3,\n' > gap.csv
    run gpc-kernel -o out/K.txt gap.csv
    assert_failure 3
    assert_output "gpc-kernel: gap.csv:3: column 2 (b) is empty; every value is needed (drop or fill in missing values first, e.g. df.dropna() in pandas)"
    printf 'a,b\n1,2\n3,4,5\n' > ragged.csv
    run gpc-kernel -o out/K.txt ragged.csv
    assert_failure 3
    assert_output "gpc-kernel: ragged.csv:3: expected 2 columns, found 3"
    printf 'a,b\n1,2\n' > ok.csv
    run gpc-kernel -k 'se@c' -o out/K.txt ok.csv
    assert_failure 2
    assert_output --partial "ok.csv has no column named 'c' (its columns: 'a', 'b')"
    assert_dir_empty out
}

# A CSV file of 2 rows under a header of 200 000 names c1, c2, ...; the
# name of column SAME (if given) is that of column 7.
wide_csv() {
    awk -v n=200000 -v same="${1:-0}" 'BEGIN {
        for (j = 1; j <= n; j++) printf "%sc%d", (j > 1 ? "," : ""), (j == same ? 7 : j); print ""
        for (i = 1; i <= 2; i++) { for (j = 1; j <= n; j++) printf "%s%d", (j > 1 ? "," : ""), (i * j) % 7; print "" } }'
}

@test "csv: a header of 200 000 names is checked in seconds, a name given twice still named" {
    wide_csv > wide.csv
    run --separate-stderr timeout 20 gpc-scale -q wide.csv
    assert_success
    [ "${lines[0]}" = "$(head -n 1 wide.csv)" ] || fail "the header did not come through"
    wide_csv 150000 > twice.csv
    run timeout 20 gpc-scale -q -o out/z.csv twice.csv
    assert_failure 3
    assert_output "gpc-scale: twice.csv:1: columns 7 and 150000 are both named 'c7'; names must differ"
    assert_dir_empty out
}

@test "csv: a model of 200 000 named columns is read and matched in seconds" {
    wide_csv > wide.csv
    printf '1\n-1\n' > y2.txt
    run timeout 20 gpc-fit -q -O none -k se -m wide.model wide.csv y2.txt
    assert_success
    run --separate-stderr timeout 20 gpc-predict -m wide.model wide.csv
    assert_success
    [ "${#lines[@]}" -eq 3 ] || fail "expected a header line and 2 predictions: $output"
    sed 's/^columns c1 c2 /columns c2 c2 /' wide.model > twice.model
    run timeout 20 gpc-predict -m twice.model -o out/p.txt wide.csv
    assert_failure 3
    assert_output --regexp "twice\.model:[0-9]+: column 'c2' is named twice"
    assert_dir_empty out
}

@test "csv: a single named column is written so that it reads back as CSV" {
    printf '"w"\n1\n2\n4\n' > one.csv
    run --separate-stderr gpc-scale -o one-z.csv one.csv
    assert_success
    [ "$(head -n 1 one-z.csv)" = '"w"' ] || fail "header line: $(head -n 1 one-z.csv)"
    run --separate-stderr gpc-scale -o one-zz.csv one-z.csv
    assert_success
    [ "$(head -n 1 one-zz.csv)" = '"w"' ] || fail "header line: $(head -n 1 one-zz.csv)"
}

@test "csv: names that hold blanks and a ':', or start as .npy does, are written so that they read back" {
    # read back, such a header line looked like LIBSVM's "label index:value"
    # or like a .npy file's magic string
    printf '"x y",b:c\n1,2\n3,5\n' > colon.csv
    printf '"\223NUMPY",b\n1,2\n3,5\n' > magic.csv
    printf 'x 4:9 w,b\n1,2\n3,5\n' > inner.csv
    for f in colon magic inner; do
        run --separate-stderr gpc-scale -o "$f-z.csv" "$f.csv"
        assert_success
        run --separate-stderr gpc-scale -o "$f-zz.csv" "$f-z.csv"
        [ "$status" -eq 0 ] || fail "$f-z.csv does not read back: $stderr"
        [ "$(head -n 1 "$f-zz.csv")" = "$(head -n 1 "$f-z.csv")" ] || fail "the names changed"
    done
}

@test "csv: gpc-scale keeps the names, so the pipeline after it still matches them" {
    write_frames
    printf 'a,"b, ""c""",d\n1,2,4\n3,6,5\n' > q.csv
    run gpc-scale q.csv
    assert_success
    assert_line --index 0 'a,"b, ""c""",d'
    # each column is two values x, y: its first row is (x - (x + y) / 2) / sd,
    # sd = |y - x| / sqrt(2), computed here in the same double arithmetic
    assert_line --index 1 "$(awk 'BEGIN { n = split("1 2 4", x); split("3 6 5", y)
        for (j = 1; j <= n; j++) { m = (x[j] + y[j]) / 2; sd = sqrt(((x[j] - m) ^ 2 + (y[j] - m) ^ 2) / 1)
            printf "%s%.17g", (j > 1 ? "," : ""), (x[j] - m) / sd }; print "" }')"
    run gpc-scale -s stats.txt -o train-z.csv train.csv
    assert_success
    run gpc-scale -r stats.txt -o test-z.csv test-shuffled.csv
    assert_failure 3   # the statistics are by position: a shuffled file is refused by width
    run gpc-scale -r stats.txt -o test-z.csv test.csv
    assert_success
    run gpc-fit -q -O none -k 'ard@glu,bmi+bias' -m m.model train-z.csv y.csv
    assert_success
    grep -qx 'columns npreg glu bp skin bmi ped age' m.model || fail "$(grep '^columns' m.model)"
    run gpc-predict -m m.model -o p.txt test-z.csv
    assert_success
    # the same numbers as text, scaled the same way
    gpc-scale -s stats-txt.txt -o Xs.txt Xz.txt
    gpc-scale -r stats-txt.txt -o Xts.txt Xtz.txt
    run gpc-fit -q -O none -k 'ard@2,5+bias' -m t.model Xs.txt y.txt
    assert_success
    run gpc-predict -m t.model -o pt.txt Xts.txt
    assert_success
    assert_files_equal p.txt pt.txt
}
