#!/usr/bin/env bats
# gpc-scale: standardise columns, save and restore the statistics.

load test_helper

setup() {
    require_tools gpc-scale
    common_setup
    printf '1 10\n3 20\n5 30\n' > T.txt     # means 3 20, sds 2 10
}

# Column means and sample sds (n - 1) of a text matrix, one "mean sd" line per column.
col_stats() {
    awk '{ n++; for (j = 1; j <= NF; j++) { s[j] += $j; a[n, j] = $j }; d = NF }
         END { for (j = 1; j <= d; j++) { m = s[j] / n; q = 0
                   for (i = 1; i <= n; i++) q += (a[i, j] - m) ^ 2
                   printf "%.17g %.17g\n", m, sqrt(q / (n - 1)) } }' "$1"
}

@test "gpc-scale --help lists every option and exits 0" {
    check_help gpc-scale save restore output format quiet verbose help version
    check_help_covers_source gpc-scale
}

@test "gpc-scale --version prints name, package and version" {
    check_version gpc-scale
}

# ---- values -------------------------------------------------------------------------------

@test "gpc-scale: a small matrix scales to exact values" {
    run gpc-scale T.txt
    assert_success
    assert_output "$(printf -- '-1 -1\n0 0\n1 1')"
}

@test "gpc-scale: output columns have mean ~0 and sd ~1" {
    gpc-scale X.txt > Z.txt
    assert_shape Z.txt 40 7
    col_stats Z.txt > st.txt
    run awk '{ m = $1 < 0 ? -$1 : $1; d = $2 - 1; if (d < 0) d = -d
               if (m > 1e-12 || d > 1e-12) { print "column " NR ": mean " $1 ", sd " $2; exit 1 } }' st.txt
    assert_success
}

@test "gpc-scale --save writes the means and sample sds" {
    gpc-scale -s st.txt T.txt > /dev/null
    run cat st.txt
    assert_output "$(printf '3 20\n2 10')"
    gpc-scale --save=st7.txt X.txt > /dev/null
    assert_shape st7.txt 2 7
    col_stats X.txt | awk '{ m = m (NR > 1 ? " " : "") $1; s = s (NR > 1 ? " " : "") $2 } END { print m; print s }' > want.txt
    assert_matrices_close st7.txt want.txt 1e-12
}

@test "gpc-scale --restore with the saved statistics on the same file gives identical output" {
    gpc-scale -s st.txt X.txt > a.txt
    gpc-scale -r st.txt X.txt > b.txt
    assert_files_equal a.txt b.txt
    gpc-scale --restore=st.txt -o c.txt X.txt
    assert_files_equal a.txt c.txt
}

@test "gpc-scale --restore applies the training statistics to a test set" {
    gpc-scale -s st.txt T.txt > /dev/null
    printf '7 0\n3 25\n' > U.txt
    run gpc-scale -r st.txt U.txt
    assert_success
    assert_output "$(printf -- '2 -2\n0 0.5')"
}

@test "gpc-scale: a constant column is centred only, with a message that -q silences" {
    printf '4 1\n4 2\n4 3\n' > C.txt
    run --separate-stderr gpc-scale C.txt
    assert_success
    assert_output "$(printf -- '0 -1\n0 0\n0 1')"
    [[ "$stderr" == *"column 1"* ]] || fail "no message about column 1: $stderr"
    run --separate-stderr gpc-scale -q C.txt
    assert_success
    [ -z "$stderr" ] || fail "-q still wrote: $stderr"
}

@test "gpc-scale: constant columns are named up to five, then counted" {
    printf '1 1:1 2000:3\n-1 2:1 2000:4\n' > wide.svm
    run --separate-stderr gpc-scale -o out/z.txt wide.svm
    assert_success
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 6 ] || fail "expected 6 lines: $stderr"
    [[ "$stderr" == *"gpc-scale: column 7 is constant: centred, not scaled"* ]] || fail "$stderr"
    [[ "$stderr" == *"gpc-scale: and 1992 more columns are constant: centred, not scaled" ]] || fail "$stderr"
    run --separate-stderr gpc-scale -q -o out/z.txt wide.svm
    [ -z "$stderr" ] || fail "-q still wrote: $stderr"
}

@test "gpc-scale: a single row is centred to zeros" {
    printf '3 4 5\n' > one.txt
    run gpc-scale -q one.txt
    assert_success
    assert_output "0 0 0"
}

@test "gpc-scale: statistics round-trip exactly through the text file" {
    gpc-scale -s st.txt Xz.txt > a.txt
    gpc-scale -r st.txt Xz.txt > b.txt
    assert_files_equal a.txt b.txt
}

# ---- streams, formats, -o, determinism ------------------------------------------------------

@test "gpc-scale reads from a file, '-', a pipe and default standard input" {
    gpc-scale X.txt > file.txt
    gpc-scale - < X.txt > dash.txt
    cat X.txt | gpc-scale > pipe.txt
    gpc-scale < X.txt > def.txt
    assert_files_equal file.txt dash.txt
    assert_files_equal file.txt pipe.txt
    assert_files_equal file.txt def.txt
}

@test "gpc-scale reads the statistics from a pipe" {
    gpc-scale -s st.txt X.txt > a.txt
    cat st.txt | { gpc-scale -r - X.txt > b.txt; }
    assert_files_equal a.txt b.txt
}

@test "gpc-scale -F npy: .npy 1.0 with the same numbers, read back exactly" {
    gpc-scale -F npy X.txt > Z.npy
    assert_npy Z.npy "(40, 7)"
    gpc-scale X.txt > Z.txt
    gpc-scale -r id7.txt Z.npy > back.txt
    assert_files_equal Z.txt back.txt
    cat Z.npy | gpc-scale -r id7.txt - > back2.txt
    assert_files_equal Z.txt back2.txt
}

@test "gpc-scale: .npy input gives the same result as text input" {
    gpc-scale -r id7.txt -F npy X.txt > X.npy
    gpc-scale -s st1.txt X.txt > a.txt
    gpc-scale -s st2.txt X.npy > b.txt
    assert_files_equal a.txt b.txt
    assert_files_equal st1.txt st2.txt
}

@test "gpc-scale: hand-made .npy (2-D and 1-D) read correctly" {
    { npy_header '<f8' '(3, 2)'; f8 0 0 1 0 2 2; } > a.npy
    run gpc-scale -q -r id2.txt a.npy
    assert_success
    assert_output "$(printf '0 0\n1 0\n2 2')"
    { npy_header '<f8' '(3,)'; f8 -1 0.5 2; } > v.npy
    run gpc-scale -r <(printf '0\n1\n') v.npy
    assert_success
    assert_output "$(printf -- '-1\n0.5\n2')"
}

@test "gpc-scale: the statistics file is always text" {
    gpc-scale -F npy -s st.txt X.txt > /dev/null
    assert_shape st.txt 2 7
}

@test "gpc-scale -o writes the file and nothing to stdout" {
    run --separate-stderr gpc-scale -o out/Z.txt X.txt
    assert_success
    assert_output ""
    gpc-scale X.txt > Z.txt
    assert_files_equal Z.txt out/Z.txt
    assert_no_tmp_files
}

@test "gpc-scale is deterministic" {
    gpc-scale -s s1.txt X.txt > a.txt
    gpc-scale -s s2.txt X.txt > b.txt
    assert_files_equal a.txt b.txt
    assert_files_equal s1.txt s2.txt
    gpc-scale -F npy X.txt > a.npy
    gpc-scale -F npy X.txt > b.npy
    assert_files_equal a.npy b.npy
}

# ---- input errors (status 3) -----------------------------------------------------------------

@test "gpc-scale: missing file is status 3" {
    run gpc-scale -s out/st.txt -o out/Z.txt nosuch.txt
    assert_failure 3
    assert_output --partial "gpc-scale: nosuch.txt"
    assert_dir_empty out
    run gpc-scale -r nostats.txt -o out/Z.txt X.txt
    assert_failure 3
    assert_output --partial "nostats.txt"
    assert_dir_empty out
}

@test "gpc-scale: unreadable file is status 3" {
    cp X.txt locked.txt
    chmod 000 locked.txt
    run without_dac_override gpc-scale -s out/st.txt -o out/Z.txt locked.txt
    assert_failure 3
    assert_output --partial "locked.txt"
    assert_dir_empty out
}

@test "gpc-scale: empty input is status 3" {
    : > E.txt
    run gpc-scale -s out/st.txt -o out/Z.txt E.txt
    assert_failure 3
    assert_output --partial "E.txt"
    assert_output --partial "empty"
    run gpc-scale -o out/Z.txt < /dev/null
    assert_failure 3
    assert_output --partial "<stdin>"
    assert_dir_empty out
}

@test "gpc-scale: ragged rows are status 3 with file:line; no output or stats file" {
    printf '1 2\n3 4\n\n# c\n5 6 7\n' > R.txt
    run gpc-scale -s out/st.txt -o out/Z.txt R.txt
    assert_failure 3
    assert_output --partial "gpc-scale: R.txt:5: expected 2 columns, found 3"
    assert_dir_empty out
    assert_no_tmp_files
}

@test "gpc-scale: non-numeric, NaN and Inf are status 3 with file:line" {
    printf '1 2\n3 4\n5 six\n' > B.txt
    run gpc-scale -s out/st.txt -o out/Z.txt B.txt
    assert_failure 3
    assert_output --partial "B.txt:3"
    assert_output --partial "six"
    printf '1 2\nnan 4\n' > N.txt
    run gpc-scale -s out/st.txt -o out/Z.txt N.txt
    assert_failure 3
    assert_output --partial "N.txt:2"
    printf '1 2\n3 4\n5 inf\n' > I.txt
    run gpc-scale -s out/st.txt -o out/Z.txt I.txt
    assert_failure 3
    assert_output --partial "I.txt:3"
    assert_dir_empty out
}

@test "gpc-scale: truncated .npy is status 3" {
    gpc-scale -r id7.txt -F npy X.txt > X.npy
    head -c 1000 X.npy > T.npy
    run gpc-scale -s out/st.txt -o out/Z.txt T.npy
    assert_failure 3
    assert_output --partial "gpc-scale: T.npy"
    assert_output --partial "truncated"
    run bash -c "head -c 1000 X.npy | gpc-scale -o out/Z.txt"
    assert_failure 3
    assert_output --partial "<stdin>"
    head -c 5 X.npy > T5.npy
    run gpc-scale -o out/Z.txt T5.npy
    assert_failure 3
    assert_output --partial "T5.npy"
    assert_dir_empty out
}

@test "gpc-scale: statistics of the wrong shape are status 3 naming the file" {
    echo "1 2 3" > st3.txt
    run gpc-scale -r st3.txt -o out/Z.txt X.txt
    assert_failure 3
    assert_output --partial "gpc-scale: st3.txt"
    assert_output --partial "2 rows"
    printf '0 0\n1 1\n2 2\n' > st32.txt
    run gpc-scale -r st32.txt -o out/Z.txt T.txt
    assert_failure 3
    assert_output --partial "st32.txt"
    printf '0 0\n1 1\n' > st22.txt
    run gpc-scale -r st22.txt -o out/Z.txt X.txt
    assert_failure 3
    assert_output --partial "st22.txt"
    assert_dir_empty out
}

@test "gpc-scale: statistics with NaN or a ragged row are status 3 with file:line" {
    printf '0 0\n1 nan\n' > sn.txt
    run gpc-scale -r sn.txt -o out/Z.txt T.txt
    assert_failure 3
    assert_output --partial "sn.txt:2"
    printf '0 0\n1\n' > sr.txt
    run gpc-scale -r sr.txt -o out/Z.txt T.txt
    assert_failure 3
    assert_output --partial "sr.txt:2"
    assert_dir_empty out
}

@test "gpc-scale: a negative standard deviation in restored statistics is status 3" {
    printf '0 0\n-1 1\n' > neg.txt
    run gpc-scale -r neg.txt -o out/Z.txt T.txt
    assert_failure 3
    assert_output --partial "neg.txt"
    assert_dir_empty out
}

# ---- usage errors (status 2) ----------------------------------------------------------------

@test "gpc-scale: unknown option is status 2" {
    run gpc-scale --center -o out/Z.txt X.txt
    assert_failure 2
    assert_output --partial "center"
    assert_output --partial "Try 'gpc-scale --help'"
    assert_dir_empty out
}

@test "gpc-scale: --save with --restore is status 2" {
    gpc-scale -s st.txt X.txt > /dev/null
    run gpc-scale -s out/st.txt -r st.txt -o out/Z.txt X.txt
    assert_failure 2
    assert_output --partial "cannot be combined"
    assert_dir_empty out
}

@test "gpc-scale: two inputs, or statistics and inputs both on stdin, are status 2" {
    run gpc-scale X.txt X.txt
    assert_failure 2
    run gpc-scale -r - < X.txt
    assert_failure 2
    assert_output --partial "standard input"
    run gpc-scale -r - - < X.txt
    assert_failure 2
}

@test "gpc-scale --save - needs -o, and then writes the statistics to stdout" {
    run gpc-scale -s - X.txt
    assert_failure 2
    run gpc-scale -s - -o out/Z.txt T.txt
    assert_success
    assert_output "$(printf '3 20\n2 10')"
}

@test "gpc-scale: bad --format is status 2" {
    run gpc-scale -F npz -o out/Z.txt X.txt
    assert_failure 2
    assert_output --partial "npz"
    assert_dir_empty out
}

# ---- output errors ---------------------------------------------------------------------------

@test "gpc-scale: write error on standard output (/dev/full) is status 3" {
    run bash -c "gpc-scale X.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
}

@test "gpc-scale: --save into a missing directory is status 3, and writes no output" {
    run gpc-scale -s nodir/st.txt -o out/Z.txt X.txt
    assert_failure 3
    assert_output --partial "nodir/st.txt"
    assert_dir_empty out
}

@test "gpc-scale: a failed run leaves existing output and statistics untouched" {
    echo old > out/Z.txt
    echo oldstats > out/st.txt
    printf '1 2\n3\n' > R.txt
    run gpc-scale -s out/st.txt -o out/Z.txt R.txt
    assert_failure 3
    assert_equal "$(cat out/Z.txt)" old
    assert_equal "$(cat out/st.txt)" oldstats
}
