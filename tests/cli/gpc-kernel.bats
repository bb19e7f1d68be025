#!/usr/bin/env bats
# gpc-kernel: covariance matrices, cross-covariances, diagonals, gradients,
# Cholesky factors; formats, streams, errors.

load test_helper

setup() {
    require_tools gpc-kernel gpc-scale
    common_setup
    P0='log_v0=0,log_w1=0,log_w2=0'
}

# ---- --help, --version ------------------------------------------------------

@test "gpc-kernel --help lists every option and exits 0" {
    check_help gpc-kernel kernel params params-file diag grad cholesky list output format \
        quiet verbose help version
    check_help_covers_source gpc-kernel
}

@test "gpc-kernel --version prints name, package and version" {
    check_version gpc-kernel
}

# The CPU's vector units from its flags: AVX-512 (what OpenBLAS's SkylakeX
# kernels need), AVX2 with FMA, or neither.
cpu_vector_units() {
    local f u
    f=" $(grep -m1 '^flags' /proc/cpuinfo) "
    has() { for u in "$@"; do case "$f" in *" $u "*) ;; *) return 1 ;; esac; done; }
    if has avx512f avx512cd avx512dq avx512bw avx512vl; then echo avx512
    elif has avx2 fma; then echo avx2
    else echo none; fi
}

@test "gpc-kernel --version: the BLAS kernels use the CPU's vector units" {
    run --separate-stderr gpc-kernel --version
    assert_success
    # a core the environment names is the user's choice (some machines set
    # one, since older OpenBLAS builds crash on newer CPUs): it stands
    if [ -n "${OPENBLAS_CORETYPE:-}" ]; then
        assert_line --index 1 --regexp " $OPENBLAS_CORETYPE "
        return
    fi
    case "$(cpu_vector_units)" in
    avx512) assert_line --index 1 --regexp ' (SkylakeX|Cooperlake|SapphireRapids) ' ;;
    avx2) assert_line --index 1 --regexp ' (Haswell|Zen|SkylakeX|Cooperlake|SapphireRapids) ' ;;
    *) assert_line --index 1 --regexp '^BLAS: OpenBLAS ' ;;
    esac
}

@test "gpc-kernel --version: OPENBLAS_CORETYPE is the user's choice and stands" {
    OPENBLAS_CORETYPE=Prescott run --separate-stderr gpc-kernel --version
    assert_success
    assert_line --index 1 --regexp ' Prescott '
    refute_output --partial "chosen by gpc"
}

# ---- values -------------------------------------------------------------------

@test "gpc-kernel: K of a 3 x 2 matrix matches exp(-d2/2) within 1e-15" {
    gpc-kernel -k ard -p "$P0" S.txt > K.txt
    awk 'BEGIN { printf "%.17g %.17g %.17g\n%.17g %.17g %.17g\n%.17g %.17g %.17g\n",
                 1, exp(-0.5), exp(-2), exp(-0.5), 1, exp(-2.5), exp(-2), exp(-2.5), 1 }' > want.txt
    assert_matrices_close K.txt want.txt 1e-15
}

@test "gpc-kernel: K is symmetric and its diagonal equals --diag (ard+bias+jitter)" {
    gpc-kernel -k ard+bias+jitter X.txt > K.txt
    gpc-kernel -k ard+bias+jitter --diag X.txt > d.txt
    assert_shape K.txt 40 40
    assert_shape d.txt 40 1
    run awk '{ for (j = 1; j <= NF; j++) a[NR, j] = $j }
             END { for (i = 1; i <= NR; i++) for (j = 1; j < i; j++)
                       if (a[i, j] != a[j, i]) { print "not symmetric at " i "," j; exit 1 } }' K.txt
    assert_success
    awk '{ print $NR }' K.txt > kdiag.txt
    assert_matrices_close kdiag.txt d.txt 1e-15
    # v0 + bias + jitter = 1 + e^-3 + e^-6 with the default hyperparameters
    awk 'BEGIN { for (i = 0; i < 40; i++) printf "%.17g\n", 1 + exp(-3) + exp(-6) }' > want.txt
    assert_matrices_close d.txt want.txt 1e-14
}

@test "gpc-kernel: cross K(X, X) equals K(X, X) without the jitter" {
    gpc-kernel -k ard+bias X.txt > K_nojit.txt
    gpc-kernel -k ard+bias+jitter X.txt X.txt > Kx.txt
    gpc-kernel -k ard+bias+jitter X.txt > K_jit.txt
    assert_matrices_close Kx.txt K_nojit.txt 1e-14
    # and the jitter term adds exp(log_jitter) = e^-6 on the diagonal only
    run awk 'NR == FNR { for (j = 1; j <= NF; j++) a[FNR, j] = $j; next }
             { for (j = 1; j <= NF; j++) {
                   d = $j - a[FNR, j]; want = (j == FNR) ? exp(-6) : 0
                   if (d - want > 1e-15 || want - d > 1e-15) { print FNR, j, d; exit 1 } } }' \
        K_nojit.txt K_jit.txt
    assert_success
}

@test "gpc-kernel: cross-covariance X against XS has rows(X) x rows(XS)" {
    run gpc-kernel -k se X.txt Xt.txt
    assert_success
    gpc-kernel -k se X.txt Xt.txt > Ks.txt
    assert_shape Ks.txt 40 20
}

@test "gpc-kernel --grad log_v0 of a pure ard kernel equals K" {
    gpc-kernel -k ard -p "$P0" --grad log_v0 S.txt > G.txt
    gpc-kernel -k ard -p "$P0" S.txt > K.txt
    assert_matrices_close G.txt K.txt 1e-15
}

@test "gpc-kernel --grad matches a central finite difference" {
    gpc-kernel -k ard -p 'log_v0=0.3,log_w1=-0.5,log_w2=0.2' --grad log_w2 S.txt > G.txt
    gpc-kernel -k ard -p 'log_v0=0.3,log_w1=-0.5,log_w2=0.200001' S.txt > Kp.txt
    gpc-kernel -k ard -p 'log_v0=0.3,log_w1=-0.5,log_w2=0.199999' S.txt > Km.txt
    paste -d' ' Kp.txt Km.txt | awk '{ n = NF / 2; line = ""
        for (j = 1; j <= n; j++) line = line (j > 1 ? " " : "") sprintf("%.17g", ($j - $(j + n)) / 2e-6)
        print line }' > fd.txt
    assert_matrices_close G.txt fd.txt 1e-6
}

@test "gpc-kernel -D is the short form of --grad" {
    gpc-kernel -k ard+bias -D log_bias S.txt > a.txt
    gpc-kernel -k ard+bias --grad=log_bias S.txt > b.txt
    assert_files_equal a.txt b.txt
    # d/d log_bias of b = exp(log_bias) everywhere
    awk 'BEGIN { for (i = 0; i < 3; i++) printf "%.17g %.17g %.17g\n", exp(-3), exp(-3), exp(-3) }' > want.txt
    assert_matrices_close a.txt want.txt 1e-15
}

@test "gpc-kernel --cholesky gives a lower-triangular L with L L' = K" {
    gpc-kernel -k ard+jitter -p 'log_v0=0,log_w1=0,log_w2=0,log_jitter=-6' S.txt > K.txt
    gpc-kernel -k ard+jitter -p 'log_v0=0,log_w1=0,log_w2=0,log_jitter=-6' -C S.txt > L.txt
    assert_shape L.txt 3 3
    awk '{ for (j = 1; j <= NF; j++) L[NR, j] = $j; n = NF }
         END { for (i = 1; i <= n; i++) { line = ""
                 for (j = 1; j <= n; j++) { s = 0; for (k = 1; k <= n; k++) s += L[i, k] * L[j, k]
                                             line = line (j > 1 ? " " : "") sprintf("%.17g", s) }
                 print line } }' L.txt > LLt.txt
    assert_matrices_close LLt.txt K.txt 1e-14
    run awk '{ for (j = NR + 1; j <= NF; j++) if ($j != 0) { print "L[" NR "," j "] = " $j; exit 1 } }' L.txt
    assert_success
}

@test "gpc-kernel --cholesky with repeated rows and no jitter fails with status 1 and suggests jitter" {
    printf '1 2\n3 4\n1 2\n' > D.txt
    run gpc-kernel -k ard --cholesky -o out/L.txt D.txt
    assert_failure 1
    assert_output --partial "gpc-kernel: "
    assert_output --partial "positive definite"
    assert_output --partial "jitter"
    assert_dir_empty out
    assert_no_tmp_files
}

@test "gpc-kernel --cholesky with repeated rows and ard+jitter succeeds" {
    printf '1 2\n3 4\n1 2\n' > D.txt
    run gpc-kernel -k ard+jitter --cholesky -o out/L.txt D.txt
    assert_success
    assert_shape out/L.txt 3 3
}

@test "gpc-kernel --list names the hyperparameters with their default values" {
    run gpc-kernel --list S.txt
    assert_success
    assert_output "$(printf 'log_v0 0\nlog_w1 -2\nlog_w2 -2')"
    run gpc-kernel -k 'ard@1+se@2+bias+jitter' --list S.txt
    assert_success
    assert_output "$(printf 't1.log_v0 0\nt1.log_w1 -2\nt2.log_v0 0\nt2.log_w -2\nlog_bias -3\nlog_jitter -6')"
}

@test "gpc-kernel: -p by name, -p by position and -H give the same matrix" {
    gpc-kernel -k ard+bias -p 'log_w2=-1,log_bias=-2' S.txt > a.txt
    gpc-kernel -k ard+bias -p '0,-2,-1,-2' S.txt > b.txt
    printf '# a params file\nlog_w2 -1\n\nlog_bias -2   # comment\n' > h.txt
    gpc-kernel -k ard+bias -H h.txt S.txt > c.txt
    assert_files_equal a.txt b.txt
    assert_files_equal a.txt c.txt
    run gpc-kernel -k ard+bias -H h.txt --list S.txt
    assert_output "$(printf 'log_v0 0\nlog_w1 -2\nlog_w2 -1\nlog_bias -2')"
}

@test "gpc-kernel -H - reads the hyperparameters from standard input" {
    printf 'log_w1 0\nlog_w2 0\n' > h.txt
    gpc-kernel -H h.txt S.txt > a.txt
    gpc-kernel -H - S.txt < h.txt > b.txt
    assert_files_equal a.txt b.txt
}

@test "gpc-kernel: --list output read back with -H reproduces the parameters" {
    gpc-kernel -k nn+bias -p 'log_v0=0.25,log_s0=-1,log_s=0.5,log_bias=-4' --list -o p.txt S.txt
    gpc-kernel -k nn+bias -H p.txt --list S.txt > p2.txt
    assert_files_equal p.txt p2.txt
}

@test "gpc-kernel: linear kernel is v x.x'" {
    run gpc-kernel -k linear -p log_v=0 S.txt
    assert_success
    assert_output "$(printf '0 0 0\n0 1 0\n0 0 4')"
}

@test "gpc-kernel: ard:discrete=2 uses the 0/1 mismatch in column 2 (Kim & Ghahramani eq. 12)" {
    # column 2 differs by 2 between rows 1 and 3: squared difference 4, mismatch 1
    printf '0.5 1\n1.5 1\n0.5 3\n' > D.txt
    gpc-kernel -k 'ard:discrete=2' -p 'log_v0=0,log_w1=0,log_w2=0' D.txt > K.txt
    awk 'BEGIN { printf "%.17g %.17g %.17g\n%.17g %.17g %.17g\n%.17g %.17g %.17g\n",
                 1, exp(-0.5), exp(-0.5), exp(-0.5), 1, exp(-1), exp(-0.5), exp(-1), 1 }' > want.txt
    assert_matrices_close K.txt want.txt 1e-15
    # the cross-covariance and --grad use the same distance: dK/dlog_w2 = -1/2 w2 [x2 != x2'] k
    gpc-kernel -k 'ard : discrete = 2' -p 'log_v0=0,log_w1=0,log_w2=0' D.txt D.txt > Kx.txt
    assert_matrices_close Kx.txt want.txt 1e-15
    gpc-kernel -k 'ard:discrete=2' -p 'log_v0=0,log_w1=0,log_w2=0' -D log_w2 D.txt > G.txt
    awk 'BEGIN { printf "%.17g %.17g %.17g\n%.17g %.17g %.17g\n%.17g %.17g %.17g\n",
                 0, 0, -0.5 * exp(-0.5), 0, 0, -0.5 * exp(-1), -0.5 * exp(-0.5), -0.5 * exp(-1), 0 }' > want.txt
    assert_matrices_close G.txt want.txt 1e-15
}

@test "gpc-kernel: a discrete column leaves linear on the raw values and keeps the names" {
    printf '0.5 1\n1.5 1\n0.5 3\n' > D.txt
    gpc-kernel -k 'ard@1+se@2+linear:discrete=2' -p '0,0,0,0,0' D.txt > K.txt
    # k = exp(-1/2 dx1^2) + exp(-1/2 [x2 != x2']) + x.x'
    awk '{ x[NR] = $1; y[NR] = $2 }
         END { for (i = 1; i <= 3; i++) { line = ""
                 for (j = 1; j <= 3; j++) line = line (j > 1 ? " " : "") sprintf("%.17g",
                     exp(-0.5 * (x[i] - x[j]) ^ 2) + exp(-0.5 * (y[i] != y[j])) + x[i] * x[j] + y[i] * y[j])
                 print line } }' D.txt > want.txt
    assert_matrices_close K.txt want.txt 1e-15
    run gpc-kernel -k 'ard+bias:discrete=2' -L D.txt
    assert_success
    assert_output "$(printf 'log_v0 0\nlog_w1 -2\nlog_w2 -2\nlog_bias -3')"
}

@test "gpc-kernel: a bad discrete clause is status 2 saying what is wrong" {
    run gpc-kernel -k 'ard:discrete=3' -o out/K.txt S.txt
    assert_failure 2
    assert_output --partial "gpc-kernel: "
    assert_output --partial "columns run from 1 to 2"
    run gpc-kernel -k 'ard+linear@2:discrete=2' S.txt
    assert_success
    run gpc-kernel -k 'ard@1+linear@2:discrete=2' -o out/K.txt S.txt
    assert_failure 2
    assert_output --partial "discrete column 2 is read by no ard, se, matern or rq term"
    assert_output --partial "no effect"
    run gpc-kernel -k 'ard:discrete=1,1' S.txt
    assert_failure 2
    assert_output --partial "column 1 appears twice"
    run gpc-kernel -k 'ard:categorical=1' S.txt
    assert_failure 2
    assert_output --partial "unknown clause 'categorical'"
    assert_output --partial "discrete="
    run gpc-kernel -k 'ard:' S.txt
    assert_failure 2
    run gpc-kernel -k 'ard:discrete=' S.txt
    assert_failure 2
    assert_dir_empty out
}

# ---- inputs: files, pipes, '-' ------------------------------------------------

@test "gpc-kernel reads X from '-' and from a pipe" {
    gpc-kernel X.txt > file.txt
    gpc-kernel - < X.txt > dash.txt
    cat X.txt | gpc-kernel - > pipe.txt
    assert_files_equal file.txt dash.txt
    assert_files_equal file.txt pipe.txt
}

@test "gpc-kernel reads XS from a pipe" {
    gpc-kernel X.txt Xt.txt > file.txt
    cat Xt.txt | gpc-kernel X.txt - > pipe.txt
    assert_files_equal file.txt pipe.txt
}

@test "gpc-kernel: text with comments, blank lines, tabs and CRLF reads like plain text" {
    printf '# header\n0 0\n\n1\t0   # trailing comment\n  0 2  \n' > C.txt
    printf '0 0\r\n1 0\r\n0 2\r\n' > W.txt
    gpc-kernel S.txt > a.txt
    gpc-kernel C.txt > b.txt
    assert_files_equal a.txt b.txt
    run gpc-kernel W.txt
    # CRLF: either read like plain text or rejected cleanly with status 3
    if [ "$status" -eq 0 ]; then
        assert_output "$(cat a.txt)"
    else
        assert_failure 3
        assert_output --partial "W.txt:1"
    fi
}

# ---- npy ------------------------------------------------------------------------

@test "gpc-kernel -F npy writes .npy 1.0 <f8 with the right shape and the same numbers" {
    gpc-kernel -F npy X.txt > K.npy
    assert_npy K.npy "(40, 40)"
    header=$(( $(wc -c < K.npy) - 40 * 40 * 8 ))
    [ $(( header % 16 )) -eq 0 ] || fail "data do not start at a multiple of 16 (header $header bytes)"
    gpc-kernel X.txt > K.txt
    gpc-scale -r <(awk 'BEGIN { for (r = 0; r < 2; r++) { for (j = 1; j <= 40; j++) printf "%d%s", r, j < 40 ? " " : "\n" } }') \
        K.npy > back.txt
    assert_files_equal K.txt back.txt
    run gpc-kernel --format=npy --output=out/K.npy X.txt
    assert_success
    assert_files_equal K.npy out/K.npy
}

@test "gpc-kernel -F text is the default" {
    gpc-kernel X.txt > a.txt
    gpc-kernel -F text X.txt > b.txt
    assert_files_equal a.txt b.txt
}

@test "gpc-kernel reads a hand-made .npy input like the text one" {
    { npy_header '<f8' '(3, 2)'; f8 0 0 1 0 0 2; } > S.npy
    gpc-kernel S.txt > a.txt
    gpc-kernel S.npy > b.txt
    assert_files_equal a.txt b.txt
    gpc-kernel - < S.npy > c.txt
    assert_files_equal a.txt c.txt
    cat S.npy | gpc-kernel S.txt - > d.txt
    gpc-kernel S.txt S.txt > e.txt
    assert_files_equal d.txt e.txt
}

@test "gpc-kernel reads a 1-D .npy as one column" {
    { npy_header '<f8' '(3,)'; f8 0 1 2; } > v.npy
    printf '0\n1\n2\n' > v.txt
    gpc-kernel v.txt > a.txt
    gpc-kernel v.npy > b.txt
    assert_files_equal a.txt b.txt
}

@test "gpc-kernel: .npy written by -F npy reads back as input" {
    gpc-scale -r id7.txt -F npy X.txt > X.npy
    gpc-kernel X.txt > a.txt
    gpc-kernel X.npy > b.txt
    assert_files_equal a.txt b.txt
}

# ---- -o and determinism ------------------------------------------------------------

@test "gpc-kernel -o writes the file and nothing to stdout" {
    run --separate-stderr gpc-kernel -o out/K.txt X.txt
    assert_success
    assert_output ""
    gpc-kernel X.txt > K.txt
    assert_files_equal K.txt out/K.txt
    assert_no_tmp_files
}

@test "gpc-kernel -o replaces an existing file" {
    echo old > out/K.txt
    gpc-kernel -o out/K.txt S.txt
    gpc-kernel S.txt > K.txt
    assert_files_equal K.txt out/K.txt
}

@test "gpc-kernel -o - writes to standard output" {
    gpc-kernel -o - S.txt > a.txt
    gpc-kernel S.txt > b.txt
    assert_files_equal a.txt b.txt
}

@test "gpc-kernel is deterministic" {
    gpc-kernel -k ard+bias+jitter X.txt > a.txt
    gpc-kernel -k ard+bias+jitter X.txt > b.txt
    assert_files_equal a.txt b.txt
    gpc-kernel -F npy -k nn X.txt Xt.txt > a.npy
    gpc-kernel -F npy -k nn X.txt Xt.txt > b.npy
    assert_files_equal a.npy b.npy
}

# ---- input errors (status 3) --------------------------------------------------------

@test "gpc-kernel: missing file is status 3 naming the file" {
    run gpc-kernel -o out/K.txt nosuch.txt
    assert_failure 3
    assert_output --partial "gpc-kernel: "
    assert_output --partial "nosuch.txt"
    assert_output --partial "No such file"
    assert_dir_empty out
}

@test "gpc-kernel: missing XS is status 3 naming it" {
    run gpc-kernel -o out/K.txt X.txt nosuch.txt
    assert_failure 3
    assert_output --partial "nosuch.txt"
    assert_dir_empty out
}

@test "gpc-kernel: unreadable file is status 3" {
    cp S.txt locked.txt
    chmod 000 locked.txt
    run without_dac_override gpc-kernel -o out/K.txt locked.txt
    assert_failure 3
    assert_output --partial "locked.txt"
    assert_output --partial "Permission denied"
    assert_dir_empty out
}

@test "gpc-kernel: a directory as input is status 3" {
    mkdir d
    run gpc-kernel -o out/K.txt d
    assert_failure 3
    assert_output --partial "gpc-kernel: d:"
    assert_dir_empty out
}

@test "gpc-kernel: empty input is status 3" {
    : > E.txt
    run gpc-kernel -o out/K.txt E.txt
    assert_failure 3
    assert_output --partial "E.txt"
    assert_output --partial "empty"
    assert_dir_empty out
    printf '# only a comment\n\n' > C.txt
    run gpc-kernel C.txt
    assert_failure 3
    assert_output --partial "C.txt"
    assert_output --partial "empty"
}

@test "gpc-kernel: empty standard input is status 3 naming <stdin>" {
    run gpc-kernel -o out/K.txt - < /dev/null
    assert_failure 3
    assert_output --partial "<stdin>"
    assert_output --partial "empty"
    assert_dir_empty out
}

@test "gpc-kernel: ragged rows are status 3 with file:line and both widths" {
    printf '1 2 3\n4 5 6\n# comment\n7 8\n' > R.txt
    run gpc-kernel -o out/K.txt R.txt
    assert_failure 3
    assert_output --partial "gpc-kernel: R.txt:4: "
    assert_output --partial "3 columns"
    assert_output --partial "2"
    assert_dir_empty out
    assert_no_tmp_files
}

@test "gpc-kernel: ragged rows on standard input name <stdin>:line" {
    run gpc-kernel - < <(printf '1 2\n3 4 5\n')
    assert_failure 3
    assert_output --partial "<stdin>:2"
    run bash -c "printf '1 2\n3 4 5\n' | gpc-kernel -"
    assert_failure 3
    assert_output --partial "<stdin>:2"
}

@test "gpc-kernel: a non-numeric token is status 3 with file:line and the token" {
    printf '1 2\n3 abc\n' > B.txt
    run gpc-kernel -o out/K.txt B.txt
    assert_failure 3
    assert_output --partial "gpc-kernel: B.txt:2: "
    assert_output --partial "abc"
    assert_dir_empty out
    printf '1 2\n3 4x\n' > B2.txt
    run gpc-kernel B2.txt
    assert_failure 3
    assert_output --partial "B2.txt:2"
    assert_output --partial "4x"
}

@test "gpc-kernel: a comma-separated file is read as CSV, not misread" {
    printf '1,2\n3,4\n' > csv.txt
    printf '1 2\n3 4\n' > ws.txt
    run gpc-kernel -o K-csv.txt csv.txt
    assert_success
    run gpc-kernel -o K-ws.txt ws.txt
    assert_success
    assert_files_equal K-csv.txt K-ws.txt
    printf '1,2\n3;4\n' > semi.txt
    run gpc-kernel -o out/K.txt semi.txt
    assert_failure 3
    assert_output --partial "semi.txt:2: expected 2 columns, found 1"
    assert_dir_empty out
}

@test "gpc-kernel: NaN is status 3 with file:line" {
    printf '1 2\n3 4\nnan 5\n' > N.txt
    run gpc-kernel -o out/K.txt N.txt
    assert_failure 3
    assert_output --partial "gpc-kernel: N.txt:3: "
    assert_dir_empty out
    printf '1 NaN\n' > N2.txt
    run gpc-kernel N2.txt
    assert_failure 3
    assert_output --partial "N2.txt:1"
}

@test "gpc-kernel: Inf is status 3 with file:line" {
    printf '1 2\ninf 4\n' > I.txt
    run gpc-kernel -o out/K.txt I.txt
    assert_failure 3
    assert_output --partial "gpc-kernel: I.txt:2: "
    assert_dir_empty out
    printf '1 2\n3 -Infinity\n' > I2.txt
    run gpc-kernel I2.txt
    assert_failure 3
    assert_output --partial "I2.txt:2"
}

@test "gpc-kernel: a number that overflows to Inf (1e999) is status 3 with file:line" {
    printf '1 2\n3 1e999\n' > O.txt
    run gpc-kernel -o out/K.txt O.txt
    assert_failure 3
    assert_output --partial "O.txt:2"
    assert_dir_empty out
}

@test "gpc-kernel: NaN or Inf in a .npy input is status 3" {
    { npy_header '<f8' '(2, 2)'; f8 0 1 nan 2; } > N.npy
    run gpc-kernel -o out/K.txt N.npy
    assert_failure 3
    assert_output --partial "N.npy"
    assert_dir_empty out
    { npy_header '<f8' '(2, 2)'; f8 0 1 2 inf; } > I.npy
    run gpc-kernel I.npy
    assert_failure 3
    assert_output --partial "I.npy"
}

@test "gpc-kernel: XS narrower than X is status 3 naming both" {
    cut -d' ' -f1-6 Xt.txt > Xt6.txt
    run gpc-kernel -o out/K.txt X.txt Xt6.txt
    assert_failure 3
    assert_output --partial "Xt6.txt"
    assert_output --partial "6 columns"
    assert_output --partial "X.txt"
    assert_dir_empty out
}

@test "gpc-kernel: truncated .npy data is status 3" {
    gpc-scale -r id7.txt -F npy X.txt > X.npy
    head -c 300 X.npy > T.npy
    run gpc-kernel -o out/K.txt T.npy
    assert_failure 3
    assert_output --partial "gpc-kernel: T.npy"
    assert_dir_empty out
    assert_no_tmp_files
}

@test "gpc-kernel: truncated .npy on a pipe is status 3 naming <stdin>" {
    gpc-scale -r id7.txt -F npy X.txt > X.npy
    run bash -c "head -c 1000 X.npy | gpc-kernel -"
    assert_failure 3
    assert_output --partial "<stdin>"
}

@test "gpc-kernel: truncated .npy header is status 3" {
    gpc-scale -r id7.txt -F npy X.txt > X.npy
    head -c 20 X.npy > T.npy
    run gpc-kernel -o out/K.txt T.npy
    assert_failure 3
    assert_output --partial "T.npy"
    assert_dir_empty out
    head -c 8 X.npy > T8.npy
    run gpc-kernel T8.npy
    assert_failure 3
    assert_output --partial "T8.npy"
}

@test "gpc-kernel: an unsupported .npy dtype or dimension is status 3" {
    # (float32, big-endian, integers and Fortran order are read: npy.bats)
    { npy_header '<c16' '(2, 2)'; head -c 64 /dev/zero; } > c16.npy
    { npy_header '<U3' '(2, 2)'; head -c 48 /dev/zero; } > u3.npy
    { npy_header '<f8' '(2, 2, 1)'; head -c 32 /dev/zero; } > d3.npy
    for f in c16.npy u3.npy d3.npy; do
        run gpc-kernel -o out/K.txt "$f"
        assert_failure 3
        assert_output --partial "$f"
        assert_dir_empty out
    done
}

@test "gpc-kernel: a .npy with zero rows is status 3 (empty input)" {
    { npy_header '<f8' '(0, 2)'; } > z.npy
    run gpc-kernel -o out/K.txt z.npy
    assert_failure 3
    assert_output --partial "z.npy"
    assert_dir_empty out
}

@test "gpc-kernel: a bad params file is status 3 with file:line" {
    printf 'log_v0 0\nlog_w1\n' > h1.txt
    run gpc-kernel -H h1.txt -o out/K.txt S.txt
    assert_failure 3
    assert_output --partial "gpc-kernel: h1.txt:2: "
    printf 'log_v0 0\n\nlog_nope 1\n' > h2.txt
    run gpc-kernel -H h2.txt -o out/K.txt S.txt
    assert_failure 3
    assert_output --partial "h2.txt:3"
    assert_output --partial "log_nope"
    printf 'log_v0 nan\n' > h3.txt
    run gpc-kernel -H h3.txt S.txt
    assert_failure 3
    assert_output --partial "h3.txt:1"
    run gpc-kernel -H nosuch.txt S.txt
    assert_failure 3
    assert_output --partial "nosuch.txt"
    assert_dir_empty out
}

# ---- usage errors (status 2) ----------------------------------------------------------

@test "gpc-kernel: unknown option is status 2 with a hint" {
    run gpc-kernel --bogus -o out/K.txt S.txt
    assert_failure 2
    assert_output --partial "bogus"
    assert_output --partial "Try 'gpc-kernel --help'"
    assert_dir_empty out
    run gpc-kernel -Z S.txt
    assert_failure 2
}

@test "gpc-kernel: missing argument to an option is status 2" {
    run gpc-kernel S.txt -k
    assert_failure 2
    assert_output --partial "Try 'gpc-kernel --help'"
}

@test "gpc-kernel: no input or three inputs is status 2" {
    run gpc-kernel
    assert_failure 2
    assert_output --partial "gpc-kernel: "
    run gpc-kernel S.txt S.txt S.txt
    assert_failure 2
}

@test "gpc-kernel: unknown kernel is status 2 naming it" {
    run gpc-kernel -k gauss -o out/K.txt S.txt
    assert_failure 2
    assert_output --partial "gauss"
    assert_output --partial "ard"
    assert_dir_empty out
    run gpc-kernel -k 'ard+' S.txt
    # a dangling '+' is either ignored or a usage error, never a crash
    [ "$status" -eq 0 ] || [ "$status" -eq 2 ]
    run gpc-kernel -k '' S.txt
    assert_failure 2
}

@test "gpc-kernel: kernel columns out of range or malformed are status 2" {
    run gpc-kernel -k 'ard@3' -o out/K.txt S.txt
    assert_failure 2
    assert_output --partial "columns run from 1 to 2"
    run gpc-kernel -k 'ard@0' S.txt
    assert_failure 2
    run gpc-kernel -k 'ard@x' S.txt
    assert_failure 2
    run gpc-kernel -k 'ard@2-1' S.txt
    assert_failure 2
    assert_dir_empty out
}

@test "gpc-kernel: bad --format is status 2" {
    run gpc-kernel -F csv -o out/K.txt S.txt
    assert_failure 2
    assert_output --partial "csv"
    assert_dir_empty out
}

@test "gpc-kernel: unknown hyperparameter name is status 2 listing the names" {
    run gpc-kernel -k ard+bias -p log_jitter=1 -o out/K.txt S.txt
    assert_failure 2
    assert_output --partial "log_jitter"
    assert_output --partial "log_v0 log_w1 log_w2 log_bias"
    assert_dir_empty out
}

@test "gpc-kernel: wrong number of hyperparameters is status 2" {
    run gpc-kernel -k ard -p 0,1 -o out/K.txt S.txt
    assert_failure 2
    assert_output --partial "3 hyperparameters"
    assert_output --partial "2 given"
    run gpc-kernel -k ard -p 0,1,2,3 S.txt
    assert_failure 2
    assert_output --partial "4 given"
    assert_dir_empty out
}

@test "gpc-kernel: non-numeric or non-finite hyperparameter is status 2" {
    run gpc-kernel -p log_v0=abc -o out/K.txt S.txt
    assert_failure 2
    assert_output --partial "abc"
    run gpc-kernel -p 0,x,1 S.txt
    assert_failure 2
    assert_output --partial "'x'"
    run gpc-kernel -p log_v0=nan S.txt
    assert_failure 2
    run gpc-kernel -p log_v0=inf S.txt
    assert_failure 2
    run gpc-kernel -p log_v0=1e999 S.txt
    assert_failure 2
    run gpc-kernel -p log_v0= S.txt
    assert_failure 2
    run gpc-kernel -p log_v0=0,2 S.txt
    assert_failure 2
    assert_dir_empty out
}

@test "gpc-kernel: unknown --grad name is status 2" {
    run gpc-kernel --grad log_nope -o out/K.txt S.txt
    assert_failure 2
    assert_output --partial "log_nope"
    assert_dir_empty out
}

@test "gpc-kernel: --diag, --grad, --cholesky with XS or combined are status 2" {
    run gpc-kernel --diag S.txt S.txt
    assert_failure 2
    run gpc-kernel --cholesky S.txt S.txt
    assert_failure 2
    run gpc-kernel --grad log_v0 S.txt S.txt
    assert_failure 2
    run gpc-kernel --diag --cholesky S.txt
    assert_failure 2
    run gpc-kernel --diag --grad log_v0 S.txt
    assert_failure 2
    run gpc-kernel --list S.txt S.txt
    assert_failure 2
}

@test "gpc-kernel: X and XS both standard input is status 2" {
    run gpc-kernel - - < S.txt
    assert_failure 2
    assert_output --partial "standard input"
}

# ---- output errors ------------------------------------------------------------------------

@test "gpc-kernel: write error on standard output (/dev/full) is status 3" {
    run bash -c "gpc-kernel X.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
    run bash -c "gpc-kernel -F npy X.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
    run bash -c "gpc-kernel --list X.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
}

@test "gpc-kernel --version to /dev/full is status 3" {
    run bash -c "gpc-kernel --version > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
}

@test "gpc-kernel: -o into a missing directory is status 3 naming the path" {
    run gpc-kernel -o nodir/K.txt S.txt
    assert_failure 3
    assert_output --partial "nodir/K.txt"
    [ ! -e nodir ] || fail "nodir was created"
}

@test "gpc-kernel: a failed run leaves an existing output file untouched" {
    echo old > out/K.txt
    printf '1 2\n3\n' > R.txt
    run gpc-kernel -o out/K.txt R.txt
    assert_failure 3
    assert_equal "$(cat out/K.txt)" old
    run gpc-kernel -k ard --cholesky -o out/K.txt <(printf '1 1\n1 1\n')
    assert_failure 1
    assert_equal "$(cat out/K.txt)" old
    assert_equal "$(ls -A out)" K.txt
}

@test "gpc-kernel: hyperparameters that overflow K fail instead of printing inf" {
    run gpc-kernel -p log_v0=800 -o out/K.txt S.txt
    [ "$status" -eq 1 ] || [ "$status" -eq 2 ] || fail "status $status; K is $(gpc-kernel -p log_v0=800 S.txt | head -n 1)"
    assert_output --partial "gpc-kernel: "
    assert_dir_empty out
}
