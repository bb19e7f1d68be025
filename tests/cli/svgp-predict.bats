#!/usr/bin/env bats
# gpc-predict with a model of inducing inputs (-M svgp) written to a file:
# the test inputs are read and predicted a block of 2048 cases at a time
# (a .npy file where it lies, text through a scratch copy), the results
# written as they come.  They are the bytes the whole-file path writes to
# standard output, across blocks, binary and multiclass, for every column
# kind; inputs whose columns need matching by name take the whole-file
# path; a NaN part way leaves no output file; and the peak memory does not
# grow with the number of test cases.

load test_helper

setup() {
    require_tools gpc-fit gpc-predict gpc-scale
    common_setup
    binary_data 600 5
    gpc-fit -q -M svgp --inducing 20 --batch 100 --epochs 2 -m bin.txt Xb.txt yb.txt
    awk '{ print ($1 > 0.3 ? "hi" : $1 < -0.3 ? "lo" : "mid") }' Xb.txt > y3.txt
    gpc-fit -q -M svgp --inducing 20 --batch 100 --epochs 2 -m mc.txt Xb.txt y3.txt
    # 5000 test cases: two whole blocks and part of a third
    awk 'BEGIN { srand(9); for (i = 0; i < 5000; i++) printf "%.6f %.6f %.6f\n", 2 * rand() - 1, 2 * rand() - 1, 2 * rand() - 1 }' > Xt.txt
    printf '0 0 0\n1 1 1\n' > id3.txt
    gpc-scale -r id3.txt -F npy -o Xt.npy Xt.txt
}

@test "svgp-predict: predictions by blocks into a file are the whole-file path's bytes, binary and multiclass, text and .npy inputs" {
    local model cols input
    for model in bin.txt mc.txt; do
        for cols in "" "-c p,plugin,mean,var,cov,label" "-c label,p"; do
            gpc-predict -m "$model" $cols Xt.txt > whole.txt
            assert_equal "$(grep -vc "^#" whole.txt)" 5000
            for input in Xt.txt Xt.npy; do
                run gpc-predict -m "$model" $cols -o blocks.txt "$input"
                assert_success
                assert_files_equal whole.txt blocks.txt
            done
        done
    done
}

@test "svgp-predict: inputs with named columns in another order are matched by name, as the whole-file reader does" {
    gpc-fit -q -M svgp --inducing 20 --batch 100 --epochs 2 -m named.txt <(awk 'BEGIN { print "a,b,c" } { print $1 "," $2 "," $3 }' Xb.txt) yb.txt
    awk 'BEGIN { print "c,a,b" } { print $3 "," $1 "," $2 }' Xt.txt > shuffled.csv
    awk 'BEGIN { print "a,b,c" } { print $1 "," $2 "," $3 }' Xt.txt > ordered.csv
    run gpc-predict -m named.txt -o a.txt shuffled.csv
    assert_success
    run gpc-predict -m named.txt -o b.txt ordered.csv
    assert_success
    assert_files_equal a.txt b.txt
    gpc-predict -m named.txt ordered.csv > whole.txt
    assert_files_equal whole.txt b.txt
}

@test "svgp-predict: a NaN in the third block is refused naming its row, and no output file is left" {
    /usr/bin/python3 -c '
import numpy as np
X = np.load("Xt.npy"); X[4500, 1] = np.nan; np.save("nan.npy", X)'
    run gpc-predict -m bin.txt -o out/p.txt nan.npy
    assert_failure 3
    assert_output --partial "4501"
    assert_dir_empty out
}

@test "svgp-predict: peak memory does not grow with the number of test cases (200000 against 20000)" {
    local n peak
    for n in 20000 200000; do
        awk -v n="$n" 'BEGIN { srand(4); for (i = 0; i < n; i++) printf "%.6f %.6f %.6f\n", 2 * rand() - 1, 2 * rand() - 1, 2 * rand() - 1 }' > big.txt
        run /usr/bin/time -f 'peak %M' gpc-predict -m mc.txt -c p,cov,label -o p.txt big.txt
        assert_success
        assert_equal "$(grep -vc "^#" p.txt)" "$n"
        peak[$n]="$(awk '$1 == "peak" { print $2 }' <<< "$output")"
    done
    # read whole, the 180000 more cases would take some 40 MB more (their
    # inputs, probabilities, means and 3 x 3 covariances)
    (( peak[200000] <= peak[20000] + 2048 )) ||
        fail "peak RSS ${peak[200000]} KB at 200000 cases, ${peak[20000]} KB at 20000"
}
