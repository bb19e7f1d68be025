#!/usr/bin/env bats
# gpc-evidence: approximate log evidence and its gradient, at one point or a grid.

load test_helper

setup() {
    require_tools gpc-evidence
    common_setup
    P8='0.5,-1,-1,-1,-1,-1,-1,-1'
    printf '0.5 -1 -1 -1 -1 -1 -1 -1\n0 -2 -2 -2 -2 -2 -2 -2\n1 -0.5 -1 -1.5 -1 -1 -1 -1\n' > grid.txt
}

@test "gpc-evidence --help lists every option and exits 0" {
    check_help gpc-evidence kernel likelihood params params-file grid no-gradient output format \
        quiet verbose help version
    check_help_covers_source gpc-evidence
}

@test "gpc-evidence --version prints name, package and version" {
    check_version gpc-evidence
}

# ---- values -------------------------------------------------------------------------------

@test "gpc-evidence: one row, log evidence then one gradient entry per hyperparameter" {
    gpc-evidence -p "$P8" Xz.txt y.txt > e.txt
    assert_shape e.txt 1 9
    gpc-evidence -k ard+bias+jitter Xz.txt y.txt > e2.txt
    assert_shape e2.txt 1 11
    run awk '{ exit !($1 < 0) }' e.txt
    assert_success
}

@test "gpc-evidence -n prints the log evidence only, the same number" {
    gpc-evidence -p "$P8" Xz.txt y.txt > e.txt
    gpc-evidence -n -p "$P8" Xz.txt y.txt > n.txt
    gpc-evidence --no-gradient -p "$P8" Xz.txt y.txt > n2.txt
    assert_shape n.txt 1 1
    assert_equal "$(cat n.txt)" "$(cut -d' ' -f1 e.txt)"
    assert_files_equal n.txt n2.txt
}

@test "gpc-evidence --grid with 3 rows gives 3 rows; the first equals a single run" {
    gpc-evidence -g grid.txt Xz.txt y.txt > g.txt
    assert_shape g.txt 3 9
    gpc-evidence -p "$P8" Xz.txt y.txt > one.txt
    assert_equal "$(sed -n 1p g.txt)" "$(cat one.txt)"
}

@test "gpc-evidence --grid: every row agrees with a single run at its parameters" {
    gpc-evidence --grid=grid.txt Xz.txt y.txt > g.txt
    for r in 1 2 3; do
        gpc-evidence -p "$(sed -n "${r}p" grid.txt | tr ' ' ,)" Xz.txt y.txt
    done > singles.txt
    assert_matrices_close g.txt singles.txt 1e-8
}

@test "gpc-evidence --grid -n gives one column" {
    gpc-evidence -n -g grid.txt Xz.txt y.txt > g.txt
    assert_shape g.txt 3 1
}

@test "gpc-evidence: the gradient matches central finite differences" {
    h=1e-5
    awk -v h="$h" 'BEGIN { split("0.5 -1 -0.7 -1.2 -1 -0.8 -1.1 -0.9", t, " ")
        line = ""; for (j = 1; j <= 8; j++) line = line (j > 1 ? " " : "") t[j]; print line
        for (k = 1; k <= 8; k++) for (s = -1; s <= 1; s += 2) {
            line = ""; for (j = 1; j <= 8; j++) line = line (j > 1 ? " " : "") (j == k ? t[j] + s * h : t[j]); print line } }' > fd_grid.txt
    gpc-evidence -g fd_grid.txt Xz.txt y.txt > out.txt
    run awk -v h="$h" 'NR == 1 { for (j = 2; j <= NF; j++) g[j - 1] = $j; next }
        { k = int((NR - 2) / 2) + 1; if ((NR - 2) % 2 == 0) lo = $1; else {
              fd = ($1 - lo) / (2 * h); d = fd - g[k]; if (d < 0) d = -d
              if (d > 1e-4 * (1 + (g[k] < 0 ? -g[k] : g[k]))) { print "param " k ": gradient " g[k] ", finite difference " fd; exit 1 } } }' out.txt
    assert_success
}

@test "gpc-evidence: probit differs from logistic" {
    gpc-evidence -n -p "$P8" Xz.txt y.txt > a.txt
    gpc-evidence -n -l probit -p "$P8" Xz.txt y.txt > b.txt
    ! cmp -s a.txt b.txt
}

@test "gpc-evidence: -H gives what -p gives; -p overrides -H" {
    printf 'log_v0 0.5\nlog_w1 -1\nlog_w2 -1\nlog_w3 -1\nlog_w4 -1\nlog_w5 -1\nlog_w6 -1\nlog_w7 -1\n' > h.txt
    gpc-evidence -p "$P8" Xz.txt y.txt > a.txt
    gpc-evidence -H h.txt Xz.txt y.txt > b.txt
    assert_files_equal a.txt b.txt
    gpc-evidence -H h.txt -p log_v0=0 Xz.txt y.txt > c.txt
    gpc-evidence -p 0,-1,-1,-1,-1,-1,-1,-1 Xz.txt y.txt > d.txt
    assert_files_equal c.txt d.txt
}

@test "gpc-evidence: 0/1 labels give the same numbers as -1/+1" {
    gpc-evidence -p "$P8" Xz.txt y.txt > a.txt
    gpc-evidence -p "$P8" Xz.txt y01.txt > b.txt
    assert_files_equal a.txt b.txt
}

@test "gpc-evidence: a one-case problem has the exact Laplace evidence" {
    # n = 1, k(x,x) = v: mode f solves f = v * dlog sigma(f) = v (1 - sigma(f)) for y = +1,
    # log q = log sigma(f) - f^2 / (2 v) - 1/2 log(1 + v sigma(f)(1 - sigma(f)))
    printf '0\n' > x1.txt
    printf '1\n' > y1.txt
    gpc-evidence -n -k ard -p log_v0=0.7,log_w1=0 x1.txt y1.txt > e.txt
    awk 'BEGIN { v = exp(0.7); f = 0
        for (i = 0; i < 200; i++) { s = 1 / (1 + exp(-f)); g = f - v * (1 - s); f -= g / (1 + v * s * (1 - s)) }
        s = 1 / (1 + exp(-f))
        printf "%.17g\n", log(s) - f * f / (2 * v) - 0.5 * log(1 + v * s * (1 - s)) }' > want.txt
    assert_matrices_close e.txt want.txt 1e-9
}

# ---- streams, formats, -o, determinism ----------------------------------------------------------

@test "gpc-evidence reads X, y and the grid from '-' and pipes" {
    gpc-evidence -g grid.txt Xz.txt y.txt > file.txt
    gpc-evidence -g grid.txt - y.txt < Xz.txt > a.txt
    cat y.txt | gpc-evidence -g grid.txt Xz.txt - > b.txt
    cat grid.txt | gpc-evidence -g - Xz.txt y.txt > c.txt
    assert_files_equal file.txt a.txt
    assert_files_equal file.txt b.txt
    assert_files_equal file.txt c.txt
}

@test "gpc-evidence -F npy writes a (3, 9) .npy; a .npy grid reads like the text one" {
    require_tools gpc-scale
    gpc-evidence -F npy -g grid.txt Xz.txt y.txt > g.npy
    assert_npy g.npy "(3, 9)"
    gpc-evidence -g grid.txt Xz.txt y.txt > g.txt
    gpc-scale -r <(printf '0 0 0 0 0 0 0 0 0\n1 1 1 1 1 1 1 1 1\n') g.npy > back.txt
    assert_files_equal g.txt back.txt
    gpc-scale -r <(printf '0 0 0 0 0 0 0 0\n1 1 1 1 1 1 1 1\n') -F npy grid.txt > grid.npy
    gpc-evidence -g grid.npy Xz.txt y.txt > g2.txt
    assert_files_equal g.txt g2.txt
}

@test "gpc-evidence -o writes the file and nothing to stdout" {
    run --separate-stderr gpc-evidence -p "$P8" -o out/e.txt Xz.txt y.txt
    assert_success
    assert_output ""
    gpc-evidence -p "$P8" Xz.txt y.txt > e.txt
    assert_files_equal e.txt out/e.txt
    assert_no_tmp_files
}

@test "gpc-evidence is deterministic" {
    gpc-evidence -g grid.txt -k ard Xz.txt y.txt > a.txt
    gpc-evidence -g grid.txt -k ard Xz.txt y.txt > b.txt
    assert_files_equal a.txt b.txt
}

@test "gpc-evidence -q writes nothing to stderr" {
    run --separate-stderr gpc-evidence -q -g grid.txt Xz.txt y.txt
    assert_success
    [ -z "$stderr" ] || fail "stderr: $stderr"
}

# ---- input errors (status 3) ------------------------------------------------------------------

@test "gpc-evidence: grid of the wrong width is status 3 naming the file" {
    cut -d' ' -f1-5 grid.txt > g5.txt
    run gpc-evidence -g g5.txt -o out/e.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "gpc-evidence: g5.txt"
    assert_output --partial "5 columns"
    assert_output --partial "8"
    assert_dir_empty out
}

@test "gpc-evidence: missing, empty, ragged or NaN grid is status 3" {
    run gpc-evidence -g nosuch.txt -o out/e.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "nosuch.txt"
    : > E.txt
    run gpc-evidence -g E.txt -o out/e.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "E.txt"
    { head -n 2 grid.txt; echo "1 2 3"; } > R.txt
    run gpc-evidence -g R.txt -o out/e.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "R.txt:3: expected 8 columns, found 3"
    sed '2s/^0 /nan /' grid.txt > N.txt
    run gpc-evidence -g N.txt -o out/e.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "N.txt:2"
    assert_dir_empty out
}

@test "gpc-evidence: missing X or y is status 3" {
    run gpc-evidence -o out/e.txt nosuch.txt y.txt
    assert_failure 3
    assert_output --partial "gpc-evidence: nosuch.txt"
    run gpc-evidence -o out/e.txt Xz.txt nosuch.txt
    assert_failure 3
    assert_output --partial "gpc-evidence: nosuch.txt"
    assert_dir_empty out
}

@test "gpc-evidence: unreadable y is status 3" {
    cp y.txt locked.txt
    chmod 000 locked.txt
    run without_dac_override gpc-evidence -o out/e.txt Xz.txt locked.txt
    assert_failure 3
    assert_output --partial "locked.txt"
    assert_dir_empty out
}

@test "gpc-evidence: empty X is status 3" {
    run gpc-evidence -o out/e.txt - y.txt < /dev/null
    assert_failure 3
    assert_output --partial "<stdin>"
    assert_output --partial "empty"
    assert_dir_empty out
}

@test "gpc-evidence: ragged, non-numeric, NaN, Inf X are status 3 with file:line" {
    { head -n 9 Xz.txt; sed -n 10p Xz.txt | cut -d' ' -f1-3; sed -n '11,40p' Xz.txt; } > R.txt
    run gpc-evidence -o out/e.txt R.txt y.txt
    assert_failure 3
    assert_output --partial "gpc-evidence: R.txt:10: expected 7 columns, found 3"
    sed '11s/ [^ ]*$/ 0,5/' Xz.txt > B.txt
    run gpc-evidence -o out/e.txt B.txt y.txt
    assert_failure 3
    assert_output --partial "B.txt:11"
    sed '12s/^[^ ]*/-nan/' Xz.txt > N.txt
    run gpc-evidence -o out/e.txt N.txt y.txt
    assert_failure 3
    assert_output --partial "N.txt:12"
    sed '13s/^[^ ]*/+Inf/' Xz.txt > I.txt
    run gpc-evidence -o out/e.txt I.txt y.txt
    assert_failure 3
    assert_output --partial "I.txt:13"
    assert_dir_empty out
}

@test "gpc-evidence: a third class with a binary method is status 2, a bad label line status 3" {
    sed '2s/.*/3/' y.txt > yb.txt
    run gpc-evidence -M ep -l probit -o out/e.txt Xz.txt yb.txt
    assert_failure 2
    assert_output --partial "gpc-evidence: the labels have 3 classes (-1 1 3), but EP with the probit likelihood is binary; use -l mprobit (nested EP)"
    sed '2s/.*/-1 1/' y.txt > yb2.txt
    run gpc-evidence -o out/e.txt Xz.txt yb2.txt
    assert_failure 3
    assert_output --partial "yb2.txt:2: expected one label"
    assert_dir_empty out
}

@test "gpc-evidence: label count different from X rows is status 3" {
    head -n 30 y.txt > y30.txt
    run gpc-evidence -o out/e.txt Xz.txt y30.txt
    assert_failure 3
    assert_output --partial "y30.txt has 30 labels but Xz.txt has 40 rows"
    assert_dir_empty out
}

@test "gpc-evidence: truncated .npy X is status 3" {
    require_tools gpc-scale
    gpc-scale -r id7.txt -F npy Xz.txt > Xz.npy
    head -c 1200 Xz.npy > T.npy
    run gpc-evidence -o out/e.txt T.npy y.txt
    assert_failure 3
    assert_output --partial "T.npy"
    assert_output --partial "truncated"
    assert_dir_empty out
}

# ---- usage errors (status 2) ---------------------------------------------------------------------

@test "gpc-evidence: unknown option is status 2" {
    run gpc-evidence --gradient -o out/e.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "gradient"
    assert_output --partial "Try 'gpc-evidence --help'"
    assert_dir_empty out
}

@test "gpc-evidence: wrong number of files is status 2" {
    run gpc-evidence Xz.txt
    assert_failure 2
    run gpc-evidence Xz.txt y.txt grid.txt
    assert_failure 2
}

@test "gpc-evidence: --grid with --params or --params-file is status 2" {
    run gpc-evidence -g grid.txt -p "$P8" -o out/e.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "either"
    echo 'log_v0 0' > h.txt
    run gpc-evidence -g grid.txt -H h.txt -o out/e.txt Xz.txt y.txt
    assert_failure 2
    assert_dir_empty out
}

@test "gpc-evidence: unknown kernel, likelihood or format is status 2" {
    run gpc-evidence -k ard+noise -o out/e.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "noise"
    run gpc-evidence -l student -o out/e.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "student"
    run gpc-evidence -F hdf5 -o out/e.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "hdf5"
    assert_dir_empty out
}

@test "gpc-evidence: unknown hyperparameter or wrong count is status 2" {
    run gpc-evidence -p log_w8=0 -o out/e.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "log_w8"
    run gpc-evidence -p 1,2 -o out/e.txt Xz.txt y.txt
    assert_failure 2
    assert_output --partial "2 given"
    run gpc-evidence -p log_v0=x -o out/e.txt Xz.txt y.txt
    assert_failure 2
    assert_dir_empty out
}

@test "gpc-evidence: X and y both on standard input is status 2" {
    run gpc-evidence -o out/e.txt - - < Xz.txt
    assert_failure 2
    assert_output --partial "standard input"
    assert_dir_empty out
}

# ---- numerical failure, output errors --------------------------------------------------------------

@test "gpc-evidence: hyperparameters that overflow fail with status 1, not NaN output" {
    run gpc-evidence -p log_v0=800 -o out/e.txt Xz.txt y.txt
    assert_failure 1
    assert_output --partial "gpc-evidence: "
    assert_dir_empty out
}

@test "gpc-evidence: a grid row that fails is status 1 naming the grid file and row" {
    { head -n 1 grid.txt; echo "800 -2 -2 -2 -2 -2 -2 -2"; } > g2.txt
    run gpc-evidence -g g2.txt -o out/e.txt Xz.txt y.txt
    assert_failure 1
    assert_output --partial "g2.txt: row 2"
    assert_dir_empty out
}

@test "gpc-evidence: output never contains nan or inf" {
    run gpc-evidence -p log_v0=709 Xz.txt y.txt
    if [ "$status" -eq 0 ]; then
        refute_output --regexp '[Nn]a[Nn]|[Ii]nf'
    else
        assert_failure 1
    fi
}

@test "gpc-evidence: write error on standard output (/dev/full) is status 3" {
    run bash -c "gpc-evidence -p '$P8' Xz.txt y.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
}

@test "gpc-evidence: -o into a missing directory is status 3" {
    run gpc-evidence -o nodir/e.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "nodir/e.txt"
}
