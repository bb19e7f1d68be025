# Shared set-up for the gpc command-line tests (Bats, with bats-support and
# bats-assert from Debian).  Every .bats file starts with
#     load test_helper
# and gets: the built tools first on PATH, $REPO and $DATA, a fresh working
# directory per test ($BATS_TEST_TMPDIR, which is also the cwd), small fixture
# files in it, and the helpers below.

bats_require_minimum_version 1.5.0

load '/usr/lib/bats/bats-support/load'
load '/usr/lib/bats/bats-assert/load'

REPO="$(cd "$BATS_TEST_DIRNAME/../.." && pwd)"
DATA="$REPO/data/pima"
PATH="$REPO/bin:$PATH"
export PATH LC_ALL=C
# The tools take no more threads than the machine has idle cores, so the suite
# runs with their defaults, as users do, busy machine or not.  A test that
# compares thread counts calls fixed_threads.
VERSION="$(cat "$REPO/VERSION")"

# Fixtures, made once per file (setup_file) and copied into each test's own
# directory (all tiny):
#   X.txt y.txt      first 40 training rows of Pima (7 columns) and labels -1/+1
#   y01.txt          the same labels coded 0/1
#   Xt.txt yt.txt    first 20 test rows of Pima and their labels
#   Xz.txt Xtz.txt   X.txt and Xt.txt standardised with X.txt's column means and
#                    sds (by awk, %.6f), for fitting: raw Pima makes K nearly I
#   S.txt            3 x 2 matrix 0 0 / 1 0 / 0 2
#   id7.txt id2.txt  identity scaling statistics (means 0, sds 1) for 7 / 2 columns:
#                    `gpc-scale -r id7.txt` copies a matrix, e.g. to convert formats
#   out/             an empty directory for outputs whose absence is checked
FIXTURES="$BATS_FILE_TMPDIR/fixtures"

# Keep OMP_NUM_THREADS whatever the load, so that a test comparing one thread
# with two really runs on two; passive waiting keeps that fast on a busy
# machine and changes no result.
fixed_threads() {
    export GPC_THREAD_POLICY=fixed OMP_WAIT_POLICY=passive
}

make_fixtures() {
    mkdir -p "$FIXTURES"
    (
        cd "$FIXTURES" || exit 1
        head -n 40 "$DATA/X-train.txt" > X.txt
        head -n 40 "$DATA/y-train.txt" > y.txt
        awk '{ print ($1 > 0) ? 1 : 0 }' y.txt > y01.txt
        head -n 20 "$DATA/X-test.txt" > Xt.txt
        head -n 20 "$DATA/y-test.txt" > yt.txt
        awk 'NR == FNR { n++; for (j = 1; j <= NF; j++) { s[j] += $j; q[j] += $j * $j }; next }
             FNR == 1 && !done { for (j in s) { m[j] = s[j] / n; sd[j] = sqrt((q[j] - n * m[j] ^ 2) / (n - 1)) }
                                 done = 1 }
             { line = ""; for (j = 1; j <= NF; j++) line = line (j > 1 ? " " : "") sprintf("%.6f", ($j - m[j]) / sd[j])
               print line > (FILENAME == "X.txt" ? "Xz.txt" : "Xtz.txt") }' X.txt X.txt Xt.txt
        printf '0 0\n1 0\n0 2\n' > S.txt
        printf '0 0 0 0 0 0 0\n1 1 1 1 1 1 1\n' > id7.txt
        printf '0 0\n1 1\n' > id2.txt
    )
}

setup_file() {
    make_fixtures
}

common_setup() {
    cd "$BATS_TEST_TMPDIR" || return 1
    [ -f "$FIXTURES/Xz.txt" ] || make_fixtures
    cp "$FIXTURES"/* .
    mkdir out
}

# Tests fail with one clear message when a tool has not been built (a skip
# would count as a pass in tests/run.sh); `make all` builds them.
require_tools() {
    local t
    for t in "$@"; do
        [ -x "$REPO/bin/$t" ] || fail "$REPO/bin/$t is not built (run 'make -C $REPO all')"
    done
}

# Run a command without the capabilities that let root read and search any
# file whatever its mode (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so that a
# file made unreadable with chmod is unreadable to it too, as it would be to
# any other user: the unreadable-input tests then run, and mean the same, as
# root (CI) and as anyone else.  Dropped from the inheritable and bounding
# sets, they are gone from the command's permitted set after exec.
without_dac_override() {
    if [ "$(id -u)" = 0 ]; then
        setpriv --inh-caps=-dac_override,-dac_read_search \
                --bounding-set=-dac_override,-dac_read_search -- "$@"
    else
        "$@"
    fi
}

# ---- assertions -------------------------------------------------------------

# The directory (default out/) is empty: no output file and no temporary
# file was left behind by a failed run.
assert_dir_empty() {
    local d="${1:-out}" left
    left="$(ls -A "$d")"
    [ -z "$left" ] || fail "expected $d/ to be empty after a failure, found: $left"
}

# No file matching *.tmp* anywhere under the per-test directory.
assert_no_tmp_files() {
    local left
    left="$(find "$BATS_TEST_TMPDIR" -name '*.tmp*' 2>/dev/null)"
    [ -z "$left" ] || fail "temporary files left behind: $left"
}

assert_files_equal() {
    cmp -s "$1" "$2" || fail "$(printf 'files differ: %s %s\n--- %s\n%s\n--- %s\n%s' \
        "$1" "$2" "$1" "$(head -c 600 "$1")" "$2" "$(head -c 600 "$2")")"
}

# Two text matrices with the same shape whose entries agree within an
# absolute-or-relative tolerance (default 1e-10).
assert_matrices_close() {
    local a="$1" b="$2" tol="${3:-1e-10}" msg
    msg="$(awk -v tol="$tol" '
        function abs(x) { return x < 0 ? -x : x }
        FNR == 1 { f++ }
        /^[ \t]*(#|$)/ { next }
        f == 1 { r1++; n1[r1] = NF; for (j = 1; j <= NF; j++) a[r1, j] = $j; next }
        f == 2 { r2++; n2[r2] = NF; for (j = 1; j <= NF; j++) b[r2, j] = $j }
        END {
            if (r1 != r2) { print "row counts differ: " r1 " vs " r2; exit 1 }
            for (i = 1; i <= r1; i++) {
                if (n1[i] != n2[i]) { print "row " i ": " n1[i] " vs " n2[i] " columns"; exit 1 }
                for (j = 1; j <= n1[i]; j++) {
                    x = a[i, j] + 0; y = b[i, j] + 0; s = abs(x) > abs(y) ? abs(x) : abs(y)
                    if (abs(x - y) > tol * (s > 1 ? s : 1)) {
                        printf "entry (%d,%d): %.17g vs %.17g\n", i, j, x, y; exit 1
                    }
                }
            }
        }' "$a" "$b")" || fail "matrices $a and $b differ: $msg"
}

# Shape of a text matrix: "ROWS COLS" (fails if rows are ragged).
matrix_shape() {
    awk '/^[ \t]*(#|$)/ { next }
         { r++; if (c && NF != c) { print "ragged"; exit 1 } c = NF }
         END { print r + 0, c + 0 }' "$1"
}

assert_shape() {
    local got
    got="$(matrix_shape "$1")"
    [ "$got" = "$2 $3" ] || fail "$1: expected shape $2 x $3, found $got"
}

# Value of a "key value" line of a model file.
model_value() {
    awk -v k="$2" '$1 == k { print $2; exit }' "$1"
}

# Is x < y as numbers?
num_lt() {
    awk -v x="$1" -v y="$2" 'BEGIN { exit !(x + 0 < y + 0) }'
}

# ---- --help and --version ------------------------------------------------------

# --help exits 0, writes to stdout, and names every given long option.
check_help() {
    local tool="$1" opt
    shift
    run --separate-stderr "$tool" --help
    assert_success
    assert_output --partial "Usage: $tool"
    [ -z "$stderr" ] || fail "--help wrote to standard error: $stderr"
    for opt in "$@"; do
        assert_output --partial -- "--$opt"
    done
    run "$tool" -h
    assert_success
    assert_output --partial "Usage: $tool"
}

# Every long option in the tool's getopt_long table (read from its source,
# with the options every tool shares from src/lib/cli/cli.h) is in --help and in
# its man page, so neither can silently fall behind.
check_help_covers_source() {
    local tool="$1" src="$REPO/src/$1.c" man="$REPO/man/$1.1" opt help page
    [ -f "$src" ] || fail "no source $src"
    help="$("$tool" --help)"
    page="$(sed 's/\\-/-/g' "$man")"
    for opt in $(cat "$src" "$REPO/src/lib/cli/cli.h" |
                 grep -o '{"[a-z][a-z-]*", *[a-z_]*argument' | sed 's/{"\([^"]*\)".*/\1/'); do
        # cli.h's --label-column and grid options belong to the tools whose
        # table takes them
        [ "$opt" != label-column ] || grep -q GPC_CLI_LABEL_COLUMN_OPTION "$src" || continue
        case "$opt" in process-grid | block-size)
            grep -q GPC_CLI_PROCESS_GRID_OPTIONS "$src" || continue ;;
        esac
        case "$help" in *"--$opt"*) ;; *) fail "--help does not mention --$opt" ;; esac
        case "$page" in *"--$opt"*) ;; *) fail "$man does not mention --$opt" ;; esac
    done
}

check_version() {
    local tool="$1"
    run --separate-stderr "$tool" --version
    assert_success
    assert_line --index 0 "$tool (gpc) $VERSION"
    assert_line --index 1 --regexp '^BLAS: OpenBLAS [0-9]'
    assert_line --index 2 --regexp '^Threads: [0-9]+ now, at most [0-9]+ '
    [ "${#lines[@]}" -eq 3 ]
    run "$tool" -V
    assert_success
    assert_line --index 0 "$tool (gpc) $VERSION"
}

# ---- .npy fixtures by hand -----------------------------------------------------

# npy_header DESCR SHAPE [FORTRAN]: the magic, version 1.0 and a header dict
# padded with blanks so that the data start at a multiple of 64 bytes.
npy_header() {
    local dict="{'descr': '$1', 'fortran_order': ${3:-False}, 'shape': $2, }"
    local len=$((${#dict} + 1))
    local pad=$(((64 - (10 + len) % 64) % 64))
    local hlen=$((len + pad))
    printf '\x93NUMPY\x01\x00'
    printf "\\x$(printf %02x $((hlen & 255)))\\x$(printf %02x $((hlen >> 8)))"
    printf '%s%*s\n' "$dict" "$pad" ''
}

# Little-endian float64 bytes of a few exactly representable numbers.
f8() {
    local x
    for x in "$@"; do
        case "$x" in
        0) printf '\0\0\0\0\0\0\0\0' ;;
        1) printf '\0\0\0\0\0\0\xf0\x3f' ;;
        -1) printf '\0\0\0\0\0\0\xf0\xbf' ;;
        2) printf '\0\0\0\0\0\0\x00\x40' ;;
        0.5) printf '\0\0\0\0\0\0\xe0\x3f' ;;
        nan) printf '\0\0\0\0\0\0\xf8\x7f' ;;
        inf) printf '\0\0\0\0\0\0\xf0\x7f' ;;
        *) echo "f8: no bytes for $x" >&2; return 1 ;;
        esac
    done
}

# Is the file a .npy version 1.0 file of little-endian float64 with the given
# shape ("(40, 7)")?
assert_npy() {
    local f="$1" shape="$2" magic head
    magic="$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')"
    [ "$magic" = "934e554d50590100" ] || fail "$f: not .npy 1.0 (first bytes $magic)"
    head="$(head -c 4096 "$f" | tr -d '\000' | sed -n '1p')"
    case "$head" in *"'descr': '<f8'"*) ;; *) fail "$f: descr is not '<f8': $head" ;; esac
    case "$head" in *"'fortran_order': False"*) ;; *) fail "$f: not C order: $head" ;; esac
    if [ -n "$shape" ]; then
        case "$head" in *"'shape': $shape"*) ;; *) fail "$f: shape is not $shape: $head" ;; esac
    fi
}

# The hyperparameters of a model file as 'name value' lines.
model_params() {
    awk '$1 == "hyperparameters" { n = $2; next } n > 0 { print; n-- }' "$1"
}

# Relative agreement of two numbers: |a - b| <= tol * max(|a|, |b|, 1).
assert_close() {
    run awk -v a="$1" -v b="$2" -v tol="$3" 'BEGIN {
        d = a - b; if (d < 0) d = -d; s = (a < 0 ? -a : a); t = (b < 0 ? -b : b); if (t > s) s = t; if (s < 1) s = 1
        if (d > tol * s) { printf "%.17g vs %.17g (tolerance %g)\n", a, b, tol; exit 1 } }'
    assert_success
}

# Central finite differences of gpc-evidence's own value at its
# hyperparameters theta +- h along each coordinate (one --grid run), against
# its gradient at theta, on inputs X and labels Y (the options go to every
# gpc-evidence run).  Usage: evidence_fd X Y SPEC PARAMS [OPTION]...
evidence_fd() {
    local X="$1" Y="$2" spec="$3" params="$4"
    shift 4
    gpc-kernel -k "$spec" -p "$params" -L "$X" > theta.txt
    gpc-evidence -q -k "$spec" -p "$params" "$@" "$X" "$Y" > eg.txt
    awk -v h=1e-5 '{ th[NR] = $2 }
        END { for (j = 1; j <= NR; j++) for (s = -1; s <= 1; s += 2) {
                  line = ""
                  for (k = 1; k <= NR; k++) line = line (k > 1 ? " " : "") sprintf("%.17g", th[k] + (k == j ? s * h : 0))
                  print line } }' theta.txt > grid.txt
    gpc-evidence -q -k "$spec" -n -g grid.txt "$@" "$X" "$Y" > ev.txt
    run awk -v np="$(wc -l < theta.txt)" '
        function abs(x) { return x < 0 ? -x : x }
        FILENAME == "eg.txt" { if (NF != np + 1) { print "gradient of " NF - 1 " entries, " np " hyperparameters"; exit 1 }
                               for (j = 1; j <= np; j++) g[j] = $(j + 1); next }
        FILENAME == "grid.txt" { j = int((FNR + 1) / 2); x[FNR] = $j; next }
        { v[FNR] = $1 }
        END { if (length(v) != 2 * np) { print "grid gave " length(v) " values"; exit 1 }
              for (j = 1; j <= np; j++) {
                  fd = (v[2 * j] - v[2 * j - 1]) / (x[2 * j] - x[2 * j - 1])
                  if (abs(fd - g[j]) > 1e-6 * (abs(g[j]) > 1 ? abs(g[j]) : 1)) {
                      printf "hyperparameter %d: gradient %.12g, finite difference %.12g\n", j, g[j], fd; exit 1 } } }' \
        eg.txt grid.txt ev.txt
    assert_success
}

# N cases of 2 inputs in 3 classes by angle, with label noise, as Xp.txt
# and yp.txt (classes 1-3), from awk's generator seeded with SEED; checks
# their shape and that all three classes occur.  Usage: angle_data N SEED
angle_data() {
    awk -v n="$1" -v seed="$2" 'BEGIN { srand(seed)
        for (i = 0; i < n; i++) {
            a = 2 * rand() - 1; b = 2 * rand() - 1
            k = (atan2(b, a + 0.3 * (rand() - 0.5)) + 3.15) / 2.1
            printf "%.6f %.6f\n", a, b > "Xp.txt"; print int(k) + 1 > "yp.txt" } }'
    assert_shape Xp.txt "$1" 2
    [ "$(sort -u yp.txt | wc -l)" -eq 3 ] || fail "not three classes: $(sort -u yp.txt | tr '\n' ' ')"
}

# Fisher's iris fixtures from data/iris.txt (60 rows, species then 4
# measurements) in the current directory: rows 1-30 train (10 of each
# species) as X3.txt and y3.txt, rows 31-60 test as Xt3.txt and yt3.txt,
# and the 20 training cases of versicolor and virginica as X2.txt y2.txt.
iris_fixtures() {
    grep -v '^#' "$BATS_TEST_DIRNAME/data/iris.txt" > iris.txt
    head -n 30 iris.txt | cut -d' ' -f2- > X3.txt
    head -n 30 iris.txt | cut -d' ' -f1 > y3.txt
    tail -n +31 iris.txt | cut -d' ' -f2- > Xt3.txt
    tail -n +31 iris.txt | cut -d' ' -f1 > yt3.txt
    head -n 30 iris.txt | awk '$1 != "setosa"' > iris2.txt
    cut -d' ' -f2- iris2.txt > X2.txt
    cut -d' ' -f1 iris2.txt > y2.txt
}

# Columns 1..C of every data row of FILE are probabilities, summing to 1
# within 1e-12 when C > 1; and there are N rows.  Usage: assert_probs FILE C N
assert_probs() {
    run awk -v C="$2" -v N="$3" '
        /^#/ { next }
        { n++; s = 0
          for (c = 1; c <= C; c++) {
              if (!($c >= 0 && $c <= 1)) { printf "row %d: column %d is %s\n", n, c, $c; bad = 1; exit 1 }
              s += $c
          }
          if (C > 1 && (s - 1 > 1e-12 || 1 - s > 1e-12)) { printf "row %d: sum %.17g\n", n, s; bad = 1; exit 1 } }
        END { if (!bad && n != N) { print n " rows, expected " N; exit 1 } }' "$1"
    assert_success
}

# N cases of 3 inputs, labels from a smooth function of them with a few
# flipped, as Xb.txt and yb.txt (awk's generator seeded with SEED).
# Usage: binary_data N SEED
binary_data() {
    awk -v n="$1" -v seed="$2" 'BEGIN { srand(seed)
        for (i = 0; i < n; i++) {
            a = 2 * rand() - 1; b = 2 * rand() - 1; c = 2 * rand() - 1
            f = sin(3 * a) + b * c + 0.3 * (rand() - 0.5)
            printf "%.6f %.6f %.6f\n", a, b, c > "Xb.txt"; print (f > 0 ? 1 : -1) > "yb.txt" } }'
    assert_shape Xb.txt "$1" 3
}
