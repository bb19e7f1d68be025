#!/usr/bin/env bats
# Inputs whose fault a message could not show by quoting it: bytes that are
# invisible or print as something else are named with their line and column.

load test_helper

setup() {
    require_tools gpc-kernel gpc-fit
    common_setup
}

@test "inputs: a UTF-8 byte-order mark at the start of a matrix is named" {
    printf '\xef\xbb\xbf0 0\n1 0\n' > bom.txt
    run gpc-kernel -o out/K.txt bom.txt
    assert_failure 3
    assert_output "gpc-kernel: bom.txt:1: a UTF-8 byte-order mark at the start; save the file without it (as plain UTF-8 or ASCII)"
    assert_dir_empty out
}

@test "inputs: a byte-order mark at the start of labels is named" {
    { printf '\xef\xbb\xbf'; cat y.txt; } > ybom.txt
    run gpc-fit -q -O none -m out/m.txt Xz.txt ybom.txt
    assert_failure 3
    assert_output --partial "ybom.txt:1: a UTF-8 byte-order mark at the start"
    assert_dir_empty out
}

@test "inputs: a NUL byte is named with its line and column" {
    printf '0 0\n1 0\n0 2\0\n' > nul.txt
    run gpc-kernel -o out/K.txt nul.txt
    assert_failure 3
    assert_output "gpc-kernel: nul.txt:3: a NUL byte at column 4; the file looks binary (a matrix is text or .npy)"
    assert_dir_empty out
}

@test "inputs: a NUL byte in a CSV field or header is named, not taken as the field's end" {
    printf 'a,b,c\n1,2\0xyz,3\n' > field.csv
    run gpc-kernel -o out/K.txt field.csv
    assert_failure 3
    assert_output "gpc-kernel: field.csv:2: a NUL byte at column 4; the file looks binary (a matrix is text or .npy)"
    printf '1,2\0xyz\n3,4\n' > bare.csv
    run gpc-kernel -o out/K.txt bare.csv
    assert_failure 3
    assert_output --partial "bare.csv:1: a NUL byte at column 4"
    printf 'a\0q,b\n1,2\n3,4\n' > header.csv
    run gpc-kernel -o out/K.txt header.csv
    assert_failure 3
    assert_output --partial "header.csv:1: a NUL byte at column 2"
    printf '1 1:2\0 2:3\n-1 1:1 # \0\n' > nul.svm
    run gpc-kernel -o out/K.txt nul.svm
    assert_failure 3
    assert_output "gpc-kernel: nul.svm:1: a NUL byte at column 6; the file looks binary (a LIBSVM file is text)"
    assert_dir_empty out
}

@test "inputs: a NUL byte in a parameter file (-H) is named with its line, a file of NULs at once" {
    printf 'log_v0 1\nlog_w1 -3\0 junk\n' > p.txt
    run gpc-fit -q -O none -k ard+bias -H p.txt -m out/m.txt Xz.txt y.txt
    assert_failure 3
    assert_output "gpc-fit: p.txt:2: a NUL byte at column 10; the file looks binary (a parameter file is text, 'name value' lines)"
    # 64 MB of NULs, one endless line: refused at its first byte, not read whole
    head -c 67108864 /dev/zero > zeros.txt
    run timeout 20 gpc-fit -q -O none -k ard+bias -H zeros.txt -m out/m.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "zeros.txt:1: a NUL byte at column 1"
    assert_dir_empty out
    # in a comment, as in a matrix, any byte goes
    printf 'log_v0 1 # \0\n' > c.txt
    run gpc-kernel -k ard+bias -H c.txt -L Xz.txt
    assert_success
    assert_line --index 0 "log_v0 1"
}

@test "inputs: a binary file that is not .npy reads as text with a NUL named" {
    printf '\x7fELF\x02\x01\x01\0\0\0' > bin.txt
    run gpc-kernel -o out/K.txt bin.txt
    assert_failure 3
    assert_output --partial "bin.txt:1: a control character (byte 0x7f) at column 1"
}

@test "inputs: a Unicode minus sign is named as a non-ASCII byte" {
    printf '0 0\n1 \xe2\x88\x921\n' > minus.txt
    run gpc-kernel -o out/K.txt minus.txt
    assert_failure 3
    assert_output --partial "minus.txt:2: a non-ASCII byte 0xe2 at column 3"
}

@test "inputs: NUL bytes and byte-order marks inside comments are ignored" {
    printf '0 0 # \0 \xef\xbb\xbf\n1 0\n0 2\n' > cmt.txt
    run gpc-kernel -o out/K1.txt cmt.txt
    assert_success
    gpc-kernel -o out/K2.txt S.txt
    assert_files_equal out/K1.txt out/K2.txt
}

@test "inputs: lone CRs (old Mac line ends) end lines in matrices, CSV, LIBSVM, labels and -H" {
    tr '\n' '\r' < Xz.txt > Xmac.txt
    tr '\n' '\r' < y.txt > ymac.txt
    gpc-fit -q -O none -k ard+bias -m lf.model Xz.txt y.txt
    run gpc-fit -q -O none -k ard+bias -m mac.model Xmac.txt ymac.txt
    assert_success
    assert_files_equal mac.model lf.model
    printf 'a,b\r1,2\r3,4\r' > mac.csv
    printf 'a,b\n1,2\n3,4\n' > lf.csv
    printf '1 1:1\r-1 2:1 # two\r1 1:3\r' > mac.svm
    printf '1 1:1\n-1 2:1\n1 1:3\n' > lf.svm
    for f in csv svm; do
        run gpc-kernel -o K-mac.txt "mac.$f"
        assert_success
        gpc-kernel -o K-lf.txt "lf.$f"
        assert_files_equal K-mac.txt K-lf.txt
    done
    # line numbers count the CRs, CRLF still ends a line once
    printf '0 0\r1 0\r\n0 x\r' > bad.txt
    run gpc-kernel -o out/K.txt bad.txt
    assert_failure 3
    assert_output "gpc-kernel: bad.txt:3: 'x' is not a number"
    printf 'log_v0 1\rlog_w1 -3 # a comment\r\nlog_w2 -4\r' > p.txt
    run gpc-kernel -k ard+bias -H p.txt -L Xz.txt
    assert_success
    assert_line --index 0 "log_v0 1"
    assert_line --index 1 "log_w1 -3"
    assert_line --index 2 "log_w2 -4"
}

@test "inputs: a matrix wider than 2^20 columns is status 3 where its width shows" {
    printf '1\n-1\n' > y2.txt
    awk 'BEGIN { for (i = 0; i < 2; i++) { for (j = 0; j <= 1048576; j++) printf "0 "; print "" } }' > wide.txt
    run gpc-fit -q -O none -k se -m out/m.txt wide.txt y2.txt
    assert_failure 3
    assert_output "gpc-fit: wide.txt:1: more than 1048576 columns, the most a matrix may have; keep the columns to be used (e.g. with cut)"
    tr ' ' ',' < wide.txt | sed 's/,$//' > wide.csv
    run gpc-fit -q -O none -k se -m out/m.txt wide.csv y2.txt
    assert_failure 3
    assert_output --partial "wide.csv:1: more than 1048576 columns"
    npy_header '<f8' '(2, 1048577)' > wide.npy
    run gpc-fit -q -O none -k se -m out/m.txt wide.npy y2.txt
    assert_failure 3
    assert_output "gpc-fit: wide.npy: 1048577 columns, more than the 1048576 a matrix may have; keep the columns to be used"
    assert_dir_empty out
}

@test "inputs: a kernel spec too long to keep whole is a usage error" {
    # 1205 characters, more than a model file keeps
    local spec=ard@1 i
    for i in $(seq 1 600); do spec="$spec,1"; done
    run gpc-kernel -k "$spec" -o out/K.txt S.txt
    assert_failure 2
    assert_output --partial "gpc-kernel: kernel spec too long (more than 1023 characters)"
    assert_dir_empty out
}
