#!/usr/bin/env bats
# gpc-plot: reliability diagrams, chain traces and decision surfaces drawn by
# gnuplot; the pictures themselves are looked at (PNG size and colours, SVG
# text, marks and points), and so are the error paths.

load test_helper

setup() {
    require_tools gpc-plot gpc-fit gpc-hmc gpc-predict
    common_setup
    # temporary directories go here, to check that none is left behind
    mkdir tmp
    export TMPDIR="$BATS_TEST_TMPDIR/tmp"
    # hand-made binary predictions and labels for 2 bins:
    #   [0, 0.5): p 0.1, 0.15 with y -1, +1: mean 0.125, observed 1/2, 2 cases
    #   [0.5, 1]: p 0.8, 0.9, 0.95 with y +1, +1, -1: mean 0.88333, observed 2/3
    # ECE = 2/5 |0.125 - 0.5| + 3/5 |0.88333 - 0.66667| = 0.15 + 0.13 = 0.28
    printf '0.1\n0.15\n0.8\n0.9\n0.95\n' > pred.txt
    printf -- '-1\n1\n1\n1\n-1\n' > lab.txt
}

teardown() {
    # the small file system of the full-disk test
    if mountpoint -q "$BATS_TEST_TMPDIR/small" 2>/dev/null; then
        umount "$BATS_TEST_TMPDIR/small"
    fi
}

# PNG width and height from the IHDR chunk (bytes 17-24, big-endian).
png_size() {
    local w h
    w=$(od -An -tu1 -j16 -N4 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
    h=$(od -An -tu1 -j20 -N4 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')
    echo "$w $h"
}

# The number of distinct colours of an 8-bit RGB or RGBA PNG (pngcairo's),
# decoded independently: zlib, then the five scanline filters undone.
png_colours() {
    /usr/bin/python3 - "$1" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat = 8, b''
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6), 'unexpected PNG type %d/%d' % (depth, ctype)
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, colours, i = bytearray(stride), set(), 0
for y in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    colours.update(bytes(line[k:k + 3]) for k in range(0, stride, bpp))
    prev = line
print(len(colours))
PY
}

# How many <text> elements of an SVG say exactly TEXT.
svg_texts() {
    grep -c "<text>$2</text>" "$1" || true
}

# "x y" of each point mark of an SVG drawn in colour "R, G, B" (gnuplot's
# <use ... transform='translate(x,y) ...' color='rgb(R, G, B)'>), one a line.
svg_point_xy() {
    grep -Eo "<use xlink:href='#gpPt[0-9]+' transform='translate\([0-9.,]+\) scale\([0-9.]+\)' color='rgb\( *$2, *$3, *$4\)'" "$1" |
        sed 's/.*translate(\([0-9.]*\),\([0-9.]*\)).*/\1 \2/'
}

# How many points an SVG draws in colour "R, G, B".
svg_points() {
    svg_point_xy "$@" | wc -l
}

# "left right" of each panel's border (gnuplot draws it as one closed path
# M x0,y0 L x0,y1 L x1,y1 L x1,y0 L x0,y0 Z), in drawing order.
svg_borders() {
    sed -n "s/.*d='M\([0-9.]*\),[0-9.]* L\1,[0-9.]* L\([0-9.]*\),[0-9.]* L\2,[0-9.]* L\1,[0-9.]* Z.*/\1 \2/p" "$1"
}

assert_no_plot_dirs() {
    local left
    left="$(ls -A tmp)"
    [ -z "$left" ] || fail "temporary directories left behind: $left"
}

# A model on the first two standardised columns (se kernel, fixed
# hyperparameters: quick), and its labels' counts.
surface_model() {
    cut -d' ' -f1-2 Xz.txt > X2.txt
    run gpc-fit -q -k se -O none -p log_v0=0,log_w=0 -m m2.model X2.txt y.txt
    assert_success
}

@test "gpc-plot --help lists every option and exits 0" {
    check_help gpc-plot output format title width height bins model column burn grid margin \
        axes at scale table quiet verbose help version
    check_help_covers_source gpc-plot
}

@test "gpc-plot --version" {
    check_version gpc-plot
}

# ---- reliability -------------------------------------------------------------------

@test "gpc-plot reliability: SVG with title, axis labels and the hand-computed ECE" {
    run --separate-stderr gpc-plot reliability --bins=2 -o out/r.svg pred.txt lab.txt
    assert_success
    [ -z "$output" ]
    run head -c 5 out/r.svg
    assert_output "<?xml"
    [ "$(svg_texts out/r.svg 'reliability of pred.txt against lab.txt')" -eq 1 ]
    [ "$(svg_texts out/r.svg 'predicted p(y = +1)')" -eq 2 ]
    [ "$(svg_texts out/r.svg 'observed frequency of y = +1')" -eq 1 ]
    [ "$(svg_texts out/r.svg 'cases')" -eq 1 ]
    [ "$(svg_texts out/r.svg 'perfect calibration')" -eq 1 ]
    [ "$(svg_texts out/r.svg 'observed (ECE 0.2800, 2 bins, 5 cases)')" -eq 1 ]
    # the same ECE as gpc-score's
    run gpc-score -a --bins=2 pred.txt lab.txt
    assert_output --partial "expected calibration error 0.2800 (2 bins)"
    assert_no_plot_dirs
}

@test "gpc-plot reliability: the curve's points are the bins' means (mean p, observed)" {
    gpc-plot reliability --bins=2 -W 600 -H 700 -o out/r.svg pred.txt lab.txt
    # the two marks of the curve (its key sample is the third), in pixels; the
    # plot's x axis maps [0, 1] onto the border's width, so the second point
    # lies (0.88333 - 0.125) / 1 of the border's width right of the first
    run svg_point_xy out/r.svg 192 57 43
    assert_success
    [ "${#lines[@]}" -eq 3 ]
    x1=${lines[0]% *} x2=${lines[1]% *}
    # the top panel's border, left and right
    read -r left right < <(svg_borders out/r.svg | head -n 1)
    run awk -v a="$x1" -v b="$x2" -v l="$left" -v r="$right" 'BEGIN {
        got = (b - a) / (r - l); want = 0.883333333 - 0.125
        if (got - want > 0.01 || want - got > 0.01) { print got, want; exit 1 } }'
    assert_success
}

@test "gpc-plot reliability: PNG of the size asked for, not blank" {
    run gpc-plot reliability -W 500 -H 420 -o out/r.png pred.txt lab.txt
    assert_success
    [ "$(png_size out/r.png)" = "500 420" ]
    n=$(png_colours out/r.png)
    [ "$n" -gt 20 ] || fail "only $n colours"
}

@test "gpc-plot reliability: multiclass top-label confidence from a header line" {
    # top classes: a (0.6, right), b (0.7, wrong), c (0.9, right), a (0.4, wrong)
    printf '# p.a p.b p.c label\n0.6 0.3 0.1 1\n0.2 0.7 0.1 2\n0.05 0.05 0.9 3\n0.4 0.3 0.3 1\n' > mp.txt
    printf 'a\nc\nc\nb\n' > my.txt
    # 2 bins: [0, .5): 0.4 wrong -> |0.4 - 0| = 0.4, 1 case;
    # [.5, 1]: 0.6, 0.7, 0.9 with right, wrong, right -> |0.7333 - 0.6667| = 0.0667, 3 cases
    # ECE = 0.4 / 4 + 3 / 4 * 0.06667 = 0.15
    run gpc-plot reliability --bins=2 -o out/m.svg mp.txt my.txt
    assert_success
    [ "$(svg_texts out/m.svg 'observed (ECE 0.1500, 2 bins, 4 cases)')" -eq 1 ]
    [ "$(svg_texts out/m.svg 'confidence of the top class')" -eq 2 ]
    [ "$(svg_texts out/m.svg 'accuracy of the top class')" -eq 1 ]
}

@test "gpc-plot reliability: multiclass rows that do not sum to one are refused as gpc-score refuses them" {
    printf '# p.a p.b p.c label\n0.6 0.3 0.1 1\n0.2 0.6 0.1 2\n' > mp.txt
    printf 'a\nb\n' > my.txt
    run --separate-stderr gpc-plot reliability -o out/m.svg mp.txt my.txt
    [ "$status" -eq 3 ] || fail "status $status"
    [[ "$stderr" == *"mp.txt: row 2: the 3 class probabilities from column 1 sum to 0.9, not 1"* ]] ||
        fail "$stderr"
    assert_dir_empty out
}

@test "gpc-plot reliability: --title, standard output, png by default, same bytes twice" {
    gpc-plot reliability --title "it's calibrated" pred.txt lab.txt > a.png
    run head -c 4 a.png
    assert_output $'\x89PNG'
    gpc-plot reliability --title "it's calibrated" -o b.png pred.txt lab.txt
    assert_files_equal a.png b.png
    gpc-plot reliability --title "it's calibrated" -F svg -o c.out pred.txt lab.txt
    gpc-plot reliability --title "it's calibrated" -o d.svg pred.txt lab.txt
    assert_files_equal c.out d.svg
    [ "$(svg_texts d.svg "it's calibrated")" -eq 1 ]
}

@test "gpc-plot reliability: rows and labels that do not match, a probability above 1" {
    printf -- '-1\n1\n' > short.txt
    run gpc-plot reliability -o out/r.png pred.txt short.txt
    [ "$status" -eq 3 ]
    assert_output --partial "short.txt has 2 labels but pred.txt has 5 rows"
    printf '0.1\n1.5\n0.8\n0.9\n0.95\n' > bad.txt
    run gpc-plot reliability -o out/r.png bad.txt lab.txt
    [ "$status" -eq 3 ]
    assert_output --partial "bad.txt"
    assert_output --partial "1.5"
    assert_dir_empty out
    assert_no_plot_dirs
}

# ---- trace -------------------------------------------------------------------------

@test "gpc-plot trace: one titled panel per hyperparameter, burn-in marked in each" {
    # ard on 7 columns: log_v0 and log_w1 .. log_w7, 8 hyperparameters
    run gpc-hmc -q -k ard -n 9 -L 3 --adapt=4 -o c1.txt Xz.txt y.txt
    assert_success
    run gpc-plot trace -o out/t.svg c1.txt
    assert_success
    for name in log_v0 log_w1 log_w2 log_w3 log_w4 log_w5 log_w6 log_w7; do
        # the panel's title and its y label
        [ "$(svg_texts out/t.svg "$name")" -eq 2 ] || fail "$name: $(svg_texts out/t.svg "$name") texts"
    done
    [ "$(svg_texts out/t.svg log_w8)" -eq 0 ]
    [ "$(svg_texts out/t.svg iteration)" -eq 8 ]
    [ "$(svg_texts out/t.svg burn-in)" -eq 8 ]
    [ "$(grep -c "fill = 'rgb(230, 230, 230)'" out/t.svg)" -eq 8 ]
    # the default burn-in is the step's warm-up of 4, longer than a third of
    # the 9 iterations, as gpc-hmc --summary's
    [ "$(svg_texts out/t.svg 'hyperparameters along c1.txt (burn-in 4 of 9 iterations)')" -eq 1 ]
    run gpc-hmc --summary c1.txt
    assert_output --partial "iterations 5..9"
    gpc-hmc -q -k ard -n 9 -L 3 --adapt=none -o c2.txt Xz.txt y.txt
    gpc-plot trace -o out/t2.svg c2.txt
    [ "$(svg_texts out/t2.svg 'hyperparameters along c2.txt (burn-in 3 of 9 iterations)')" -eq 1 ]
}

@test "gpc-plot trace: panels of a chain run on named columns are titled by column" {
    { echo 'pregnancies,plasma glucose,bp,skin,bmi,pedigree,age'; tr ' ' ',' < Xz.txt; } > x.csv
    run gpc-hmc -q -k 'ard@"plasma glucose",bmi' -n 6 -L 3 -o c1.txt x.csv y.txt
    assert_success
    run gpc-plot trace -o out/t.svg c1.txt
    assert_success
    for name in log_v0 log_w.plasma_glucose log_w.bmi; do
        [ "$(svg_texts out/t.svg "$name")" -eq 2 ] || fail "$name: $(svg_texts out/t.svg "$name") texts"
    done
    [ "$(svg_texts out/t.svg log_w2)" -eq 0 ]
}

@test "gpc-plot trace: the shading ends between the burn-in and the first kept iteration" {
    run gpc-hmc -q -k se -n 11 -L 3 -o c1.txt Xz.txt y.txt
    assert_success
    run gpc-plot trace --burn=4 -o out/t.svg c1.txt
    assert_success
    # x runs over iterations 1..11 exactly (xfix); the shading ends at 4.5,
    # a fraction (4.5 - 1) / (11 - 1) = 0.35 of the panel's width
    read -r l r < <(grep "fill = 'rgb(230, 230, 230)'" out/t.svg | head -n 1 |
        awk -F"'" '{ split($4, p, "[ ,]+"); print p[1], p[3] }')
    read -r left right < <(svg_borders out/t.svg | head -n 1)
    run awk -v l="$l" -v r="$r" -v a="$left" -v b="$right" 'BEGIN {
        if (l != a) { print "shading starts at", l, "not", a; exit 1 }
        f = (r - a) / (b - a); if (f < 0.345 || f > 0.355) { print "fraction", f; exit 1 } }'
    assert_success
    run gpc-plot trace --burn=0 -o out/t0.svg c1.txt
    assert_success
    [ "$(svg_texts out/t0.svg burn-in)" -eq 0 ]
}

@test "gpc-plot trace: several chains overlaid in their own colours, PNG sized by panels" {
    gpc-hmc -q -k se -n 6 -L 3 -o c1.txt Xz.txt y.txt
    gpc-hmc -q -k se -n 6 -L 3 -S 2 -o c2.txt Xz.txt y.txt
    gpc-hmc -q -k se -n 6 -L 3 -S 3 -o c3.txt Xz.txt y.txt
    run gpc-plot trace -o out/t.svg c1.txt c2.txt c3.txt
    assert_success
    # the key (first panel) names each chain once
    for c in c1.txt c2.txt c3.txt; do
        [ "$(svg_texts out/t.svg "$c")" -eq 1 ]
    done
    # 2 panels x 3 chains in 3 colours: each colour's line in both panels
    for rgb in 'rgb( 31,  95, 168)' 'rgb(192,  57,  43)' 'rgb( 46, 139,  58)'; do
        n=$(grep -c "stroke='$rgb'" out/t.svg || true)
        [ "$n" -ge 2 ] || fail "colour $rgb drawn $n times"
    done
    run gpc-plot trace -o out/t.png c1.txt c2.txt
    assert_success
    # 2 panels: a 1 x 2 grid of 320 x 240 pixels each, 40 for the title
    [ "$(png_size out/t.png)" = "640 280" ]
    n=$(png_colours out/t.png)
    [ "$n" -gt 20 ] || fail "only $n colours"
}

@test "gpc-plot trace: chains of different training data are refused (status 3)" {
    gpc-hmc -q -k se -n 6 -L 3 -o c1.txt Xz.txt y.txt
    head -n 30 Xz.txt > X30.txt
    head -n 30 y.txt > y30.txt
    gpc-hmc -q -k se -n 6 -L 3 -o c2.txt X30.txt y30.txt
    run gpc-plot trace -o out/t.svg c1.txt c2.txt
    [ "$status" -eq 3 ]
    assert_output --partial "c2.txt: training data '30 cases of 7 columns"
    assert_output --partial "differs from c1.txt's '40 cases of 7 columns"
    assert_dir_empty out
}

@test "gpc-plot trace: chains of different kernels, a burn-in past the end" {
    gpc-hmc -q -k se -n 6 -L 3 -o c1.txt Xz.txt y.txt
    gpc-hmc -q -k linear -n 6 -L 3 -o c2.txt Xz.txt y.txt
    run gpc-plot trace -o out/t.png c1.txt c2.txt
    [ "$status" -eq 3 ]
    assert_output --partial "c2.txt: kernel 'linear' differs from c1.txt's 'se'"
    run gpc-plot trace --burn=6 -o out/t.png c1.txt
    [ "$status" -eq 3 ]
    assert_output --partial "a burn-in of 6 leaves none of its 6 iterations"
    assert_dir_empty out
    assert_no_plot_dirs
}

@test "gpc-plot trace: two chains on standard input are a usage error (status 2)" {
    gpc-hmc -q -k se -n 6 -L 3 -o c1.txt Xz.txt y.txt
    run gpc-plot trace -o out/t.png - - < c1.txt
    assert_failure 2
    assert_output --partial "chain 1 and chain 2 cannot both be standard input ('-')"
    run gpc-plot trace -o out/t.png c1.txt - c1.txt - < c1.txt
    assert_failure 2
    assert_output --partial "chain 2 and chain 4 cannot both be standard input"
    assert_dir_empty out
    assert_no_plot_dirs
    # one of them is fine
    run gpc-plot trace -o out/t.svg c1.txt - < c1.txt
    assert_success
    [ "$(svg_texts out/t.svg c1.txt)" -eq 1 ]
}

# ---- surface -----------------------------------------------------------------------

@test "gpc-plot surface: every training point drawn, by class, with labels and title" {
    surface_model
    neg=$(grep -c -- '^-1' y.txt)
    pos=$(grep -c '^1' y.txt)
    [ $((neg + pos)) -eq 40 ]
    run gpc-plot surface --grid=30 -o out/s.svg m2.model
    assert_success
    # each point once in its class colour, plus one in the key
    [ "$(svg_points out/s.svg 11 42 107)" -eq $((neg + 1)) ]
    [ "$(svg_points out/s.svg 122 10 10)" -eq $((pos + 1)) ]
    [ "$(svg_texts out/s.svg "class -1 ($neg)")" -eq 1 ]
    [ "$(svg_texts out/s.svg "class 1 ($pos)")" -eq 1 ]
    [ "$(svg_texts out/s.svg 'x1')" -eq 1 ]
    [ "$(svg_texts out/s.svg 'x2')" -eq 1 ]
    [ "$(svg_texts out/s.svg 'p(y = 1 | x)')" -eq 1 ]
    [ "$(svg_texts out/s.svg 'p = 0.5')" -eq 1 ]
    [ "$(svg_texts out/s.svg 'p(y = 1 | x) of m2.model (laplace, logistic, kernel se)')" -eq 1 ]
    grep -q '<image ' out/s.svg || fail "no heat map"
    assert_no_plot_dirs
}

@test "gpc-plot surface: the grid covers the inputs with the margin; PNG not blank" {
    surface_model
    run gpc-plot surface --grid=20 --margin=0.5 -W 500 -H 400 -o out/s.png m2.model
    assert_success
    [ "$(png_size out/s.png)" = "500 400" ]
    n=$(png_colours out/s.png)
    [ "$n" -gt 50 ] || fail "only $n colours"
    # with --margin=0.5 the x axis spans twice the inputs' range: the points'
    # extreme marks are a quarter of the border's width in from its edges
    gpc-plot surface --grid=20 --margin=0.5 -o out/s.svg m2.model
    { svg_point_xy out/s.svg 11 42 107; svg_point_xy out/s.svg 122 10 10; } > xy.txt
    [ "$(wc -l < xy.txt)" -eq 42 ]
    read -r lo hi < <(sort -k2,2g xy.txt | head -n -2 | sort -g |
        awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo, hi }')
    read -r left right < <(svg_borders out/s.svg | head -n 1)
    run awk -v lo="$lo" -v hi="$hi" -v l="$left" -v r="$right" 'BEGIN {
        a = (lo - l) / (r - l); b = (r - hi) / (r - l)
        if (a < 0.24 || a > 0.26 || b < 0.24 || b > 0.26) { print a, b, lo, hi, l, r; exit 1 } }'
    assert_success
}

# The table's first D columns (the grid's inputs, without its header) as
# gpc-predict's inputs, and its columns D+1.. D+P as the probabilities
# gpc-predict must give there.
table_inputs() {
    awk -v d="$2" 'NR > 1 { s = $1; for (j = 2; j <= d; j++) s = s " " $j; print s }' "$1"
}
table_probs() {
    awk -v d="$2" -v p="$3" 'NR > 1 { s = $(d + 1); for (j = 2; j <= p; j++) s = s " " $(d + j)
        print s }' "$1"
}

# iris with a header and word labels: 30 training rows, 10 of each species.
iris_csv() {
    iris_fixtures
    { echo "sepal_length,sepal_width,petal_length,petal_width"; tr ' ' , < X3.txt; } > iris.csv
    run gpc-fit -q -k se -O none -p log_v0=1,log_w=0 -m iris.model iris.csv y3.txt
    assert_success
}

@test "gpc-plot surface: a slice of a 7-input model gives gpc-predict's probabilities, the others at their means" {
    run gpc-fit -q -k se -O none -p log_v0=0,log_w=1 -m m7.model Xz.txt y.txt
    assert_success
    run --separate-stderr gpc-plot surface --axes=3,2 --grid=6 --table=t.txt -o out/s.svg m7.model
    assert_success
    assert_shape t.txt 36 8
    head -n 1 t.txt | grep -qx '# x1 x2 x3 x4 x5 x6 x7 p' || fail "header: $(head -n 1 t.txt)"
    table_inputs t.txt 7 > G.txt
    gpc-predict -m m7.model -c p G.txt > p.txt
    table_probs t.txt 7 1 > tp.txt
    assert_matrices_close tp.txt p.txt 1e-12
    # column 3 runs across (slowest), column 2 up; the held ones are the means
    # of the training inputs, the same on every row
    [ "$(cut -d' ' -f3 G.txt | sort -u | wc -l)" -eq 6 ]
    [ "$(cut -d' ' -f2 G.txt | sort -u | wc -l)" -eq 6 ]
    [ "$(sed -n 1p G.txt | cut -d' ' -f3)" = "$(sed -n 6p G.txt | cut -d' ' -f3)" ]
    run awk 'NR == FNR { for (j = 1; j <= NF; j++) s[j] += $j; n++; next }
        { for (j = 1; j <= NF; j++) if (j != 2 && j != 3) {
            d = $j - s[j] / n; if (d > 1e-12 || d < -1e-12) { print FNR, j, $j, s[j] / n; exit 1 } } }' \
        Xz.txt G.txt
    assert_success
    # the title says where the plane lies
    [ "$(svg_texts out/s.svg 'the other inputs: all 5 at their training means')" -eq 1 ]
    [ "$(svg_texts out/s.svg 'x3')" -eq 1 ]
    [ "$(svg_texts out/s.svg 'x2')" -eq 1 ]
    # every training point, projected on the plane
    neg=$(grep -c -- '^-1' y.txt)
    [ "$(svg_points out/s.svg 11 42 107)" -eq $((neg + 1)) ]
    [ "$(svg_points out/s.svg 122 10 10)" -eq $((40 - neg + 1)) ]
    assert_no_plot_dirs
}

@test "gpc-plot surface: --at the means is the default slice; --at moves it" {
    run gpc-fit -q -k se -O none -p log_v0=0,log_w=1 -m m7.model Xz.txt y.txt
    assert_success
    gpc-plot surface --axes=1,7 --grid=5 --table=t.txt -o out/s.png m7.model
    # the held values as the table writes them (%.17g: the same doubles)
    at=$(sed -n 2p t.txt | awk '{ printf "2=%s,3=%s,4=%s", $2, $3, $4 }')
    at2=$(sed -n 2p t.txt | awk '{ printf "5=%s,6=%s", $5, $6 }')
    gpc-plot surface --axes=1,7 --grid=5 --table=t2.txt --at="$at" --at "$at2" -o out/s2.png m7.model
    assert_files_equal t.txt t2.txt
    # another value moves the plane, and gpc-predict agrees there too
    gpc-plot surface --axes=1,7 --grid=5 --table=t3.txt --at=4=2.5,5=-1 -o out/s3.svg m7.model
    [ "$(tail -n +2 t3.txt | cut -d' ' -f4 | sort -u)" = "2.5" ]
    [ "$(tail -n +2 t3.txt | cut -d' ' -f5 | sort -u)" = "-1" ]
    table_inputs t3.txt 7 > G.txt
    gpc-predict -m m7.model -c p G.txt > p.txt
    table_probs t3.txt 7 1 > tp.txt
    assert_matrices_close tp.txt p.txt 1e-12
    [ "$(svg_texts out/s3.svg 'at x4 = 2.5, x5 = -1; the other 3 at their training means')" -eq 1 ]
}

@test "gpc-plot surface: --scale draws in the original units what the model sees standardised" {
    gpc-scale -s st.txt -o Xs.txt X.txt
    run gpc-fit -q -k se -O none -p log_v0=0,log_w=1 -m ms.model Xs.txt y.txt
    assert_success
    gpc-plot surface --scale=st.txt --axes=2,6 --grid=7 --table=orig.txt -o out/o.svg ms.model
    gpc-plot surface --axes=2,6 --grid=7 --table=std.txt -o out/z.svg ms.model
    # the original-unit grid spans the raw inputs (plasma glucose, 2nd column)
    run awk 'NR > 1 && ($2 < 40 || $2 > 250) { print; exit 1 }' orig.txt
    assert_success
    # standardised as gpc-scale -r would, the grid gives gpc-predict's numbers
    table_inputs orig.txt 7 > G.txt
    gpc-scale -r st.txt G.txt | gpc-predict -m ms.model -c p > p.txt
    table_probs orig.txt 7 1 > tp.txt
    assert_matrices_close tp.txt p.txt 1e-12
    # and its points are those of the plot in standardised units, with the
    # same probabilities
    gpc-scale -r st.txt G.txt > Gz.txt
    table_inputs std.txt 7 > Gs.txt
    assert_matrices_close Gz.txt Gs.txt 1e-9
    table_probs std.txt 7 1 > sp.txt
    assert_matrices_close tp.txt sp.txt 1e-9
    # the training points, in original units, lie within the axes
    [ "$(svg_points out/o.svg 11 42 107)" -eq "$(svg_points out/z.svg 11 42 107)" ]
    # held values in original units
    gpc-plot surface --scale=st.txt --axes=2,6 --grid=3 --at=1=4 --table=at.txt -o out/a.png ms.model
    [ "$(tail -n +2 at.txt | cut -d' ' -f1 | sort -u)" = "4" ]
}

@test "gpc-plot surface: columns by name; wrong names, axes and statistics are refused" {
    { echo "a,b,c,d,e,f,g"; tr ' ' , < Xz.txt; } > Xn.csv
    run gpc-fit -q -k se -O none -m mn.model Xn.csv y.txt
    assert_success
    run gpc-plot surface --axes=c,a --at=b=0.5 --grid=4 --table=t.txt -o out/s.svg mn.model
    assert_success
    head -n 1 t.txt | grep -qx '# a b c d e f g p' || fail "header: $(head -n 1 t.txt)"
    [ "$(svg_texts out/s.svg c)" -eq 1 ]
    [ "$(tail -n +2 t.txt | cut -d' ' -f2 | sort -u)" = "0.5" ]
    rm -f out/* t.txt
    run gpc-plot surface --axes=c,nosuch -o out/s.svg mn.model
    assert_failure 2
    assert_output --partial "option --axes: 'nosuch' is not an input column of mn.model; its columns are a, b, ..."
    run gpc-plot surface --axes=c,3 -o out/s.svg mn.model
    assert_failure 2
    assert_output --partial "option --axes: 'c,3' names column 3 twice"
    run gpc-plot surface --axes=a -o out/s.svg mn.model
    assert_failure 2
    assert_output --partial "option --axes: expected two columns A,B, not 'a'"
    run gpc-plot surface --axes=1,8 -o out/s.svg mn.model
    assert_failure 2
    assert_output --partial "option --axes: column 8: mn.model has input columns 1 to 7"
    run gpc-plot surface --axes=a,b --at=b=1 -o out/s.svg mn.model
    assert_failure 2
    assert_output --partial "option --at: b is an axis of the picture; hold only the other inputs"
    run gpc-plot surface --at=c=1 --at=3=2 -o out/s.svg mn.model
    assert_failure 2
    assert_output --partial "option --at: c is given twice"
    run gpc-plot surface --at=c -o out/s.svg mn.model
    assert_failure 2
    assert_output --partial "option --at: expected NAME=VALUE, not 'c'"
    run gpc-plot surface --at=c=x -o out/s.svg mn.model
    assert_failure 2
    run gpc-plot surface --at= -o out/s.svg mn.model
    assert_failure 2
    assert_output --partial "option --at: expected NAME=VALUE[,NAME=VALUE]..., not nothing"
    run gpc-plot surface --at=zz=1 -o out/s.svg mn.model
    assert_failure 2
    assert_output --partial "'zz' is not an input column of mn.model"
    # a model without names takes numbers only
    run gpc-fit -q -k se -O none -m m7.model Xz.txt y.txt
    run gpc-plot surface --axes=x1,x2 -o out/s.svg m7.model
    assert_failure 2
    assert_output --partial "'x1': m7.model has no column names (it was fitted without a header line); give its columns by number, 1 to 7"
    # statistics of the wrong width, or not statistics
    run gpc-plot surface --scale=id2.txt --table=t.txt -o out/s.svg mn.model
    assert_failure 3
    assert_output --partial "id2.txt: expected 2 rows of 7 statistics (means, standard deviations, as gpc-scale --save writes them for the model's training inputs), found 2 x 2"
    printf '0 0 0 0 0 0 0\n1 1 -1 1 1 1 1\n' > neg.txt
    run gpc-plot surface --scale=neg.txt -o out/s.svg mn.model
    assert_failure 3
    assert_output --partial "neg.txt: column 3: mean 0 and standard deviation -1"
    run gpc-plot surface --scale=nosuch.txt -o out/s.svg mn.model
    assert_failure 3
    assert_output --partial "nosuch.txt"
    # surface options with another picture
    run gpc-plot reliability --axes=a,b -o out/r.png pred.txt lab.txt
    assert_failure 2
    assert_output --partial "--axes is an option of 'surface', not of 'reliability'"
    run gpc-plot trace --scale=st.txt -o out/t.png pred.txt
    assert_failure 2
    assert_output --partial "--scale is an option of 'surface', not of 'trace'"
    run gpc-plot surface --table=- mn.model
    assert_failure 2
    assert_output --partial "--table - needs the picture elsewhere (-o FILE)"
    assert_dir_empty out
    [ ! -e t.txt ] || fail "a table was left behind"
    assert_no_plot_dirs
}

@test "gpc-plot surface: a model of one input column is refused clearly" {
    cut -d' ' -f1 Xz.txt > X1.txt
    gpc-fit -q -k se -O none -m m1.model X1.txt y.txt
    run gpc-plot surface -o out/s.png m1.model
    [ "$status" -eq 3 ]
    assert_output --partial "m1.model: the model has 1 input column; a surface needs two"
    assert_dir_empty out
    assert_no_plot_dirs
}

@test "gpc-plot surface: multiclass, the most probable class and its probability as gpc-predict's" {
    iris_csv
    run --separate-stderr gpc-plot surface --axes=petal_length,petal_width --grid=8 \
        --table=t.txt -o out/i.svg iris.model
    assert_success
    head -n 1 t.txt | grep -qx '# sepal_length sepal_width petal_length petal_width p.setosa p.versicolor p.virginica top p.top' ||
        fail "header: $(head -n 1 t.txt)"
    table_inputs t.txt 4 > G.txt
    gpc-predict -m iris.model -c p G.txt > p.txt
    table_probs t.txt 4 3 > tp.txt
    assert_matrices_close tp.txt p.txt 1e-12
    # the top class and its probability: gpc-predict's largest, each p in [0, 1]
    run awk 'NR == FNR { if (FNR == 1) for (c = 2; c <= NF; c++) name[c - 1] = substr($c, 3); next }
        FNR == 1 { next }
        { best = 1; for (c = 1; c <= 3; c++) { if ($c < 0 || $c > 1) { print "p", $c; exit 1 }
                                               if ($c > $best) best = c }
          getline row < "t.txt"; if (!hdr++) getline row < "t.txt"
          split(row, t, " ")
          if (t[8] != name[best] || t[9] + 0 != $best + 0) { print FNR, t[8], name[best], t[9], $best; exit 1 }
          s = $1 + $2 + $3; if (s < 1 - 1e-9 || s > 1 + 1e-9) { print "sum", s; exit 1 } }' p.txt p.txt
    assert_success
    # more than one class wins somewhere on this plane
    [ "$(tail -n +2 t.txt | cut -d' ' -f8 | sort -u | wc -l)" -ge 2 ]
    # the colour box and the key name the classes by the user's labels;
    # every training point is drawn in its class's colour
    for c in setosa versicolor virginica; do
        [ "$(svg_texts out/i.svg "$c")" -eq 1 ] || fail "$c in the colour box"
        [ "$(svg_texts out/i.svg "class $c (10)")" -eq 1 ] || fail "$c in the key"
    done
    [ "$(svg_points out/i.svg 17 65 99)" -eq 11 ]
    [ "$(svg_points out/i.svg 140 70 8)" -eq 11 ]
    [ "$(svg_points out/i.svg 24 88 24)" -eq 11 ]
    [ "$(svg_texts out/i.svg 'most probable class of iris.model (laplace, softmax, kernel se)')" -eq 1 ]
    grep -q '<image ' out/i.svg || fail "no heat map"
    tail -c 8 out/i.svg | grep -q '</svg>' || fail "SVG not whole"
    # PNG, whole and coloured
    run gpc-plot surface --axes=3,4 --grid=20 -o out/i.png iris.model
    assert_success
    tail -c 8 out/i.png | od -c | grep -q 'I   E   N   D' || fail "PNG without IEND"
    n=$(png_colours out/i.png)
    [ "$n" -gt 50 ] || fail "only $n colours"
    assert_no_plot_dirs
}

@test "gpc-plot surface: a multiclass model fitted on gpc-scale's output, drawn in original units" {
    iris_fixtures
    gpc-scale -s st.txt -o Xs.txt X3.txt
    run gpc-fit -q -k se -O none -p log_v0=1,log_w=0 -m is.model Xs.txt y3.txt
    assert_success
    gpc-plot surface --scale=st.txt --grid=5 --at=4=1.3 --table=t.txt -o out/i.png is.model
    [ "$(tail -n +2 t.txt | cut -d' ' -f4 | sort -u)" = "1.3" ]
    table_inputs t.txt 4 > G.txt
    gpc-scale -r st.txt G.txt | gpc-predict -m is.model -c p > p.txt
    table_probs t.txt 4 3 > tp.txt
    assert_matrices_close tp.txt p.txt 1e-12
}

# fakebin/gnuplot: a gnuplot that starts the picture, tells its process id
# (in $GNUPLOT_PID_FILE) and then takes its time.
fake_gnuplot_slow() {
    mkdir -p fakebin
    cat > fakebin/gnuplot <<'SH'
#!/bin/sh
out=$(sed -n "s/^set output '\(.*\)'\$/\1/p" "$2")
printf '\211PNG\r\n\032\n' > "$out"
echo $$ > "$GNUPLOT_PID_FILE"
exec sleep 60
SH
    chmod +x fakebin/gnuplot
}

@test "gpc-plot: SIGTERM, SIGINT or SIGHUP while gnuplot draws leaves no directory and no gnuplot" {
    fake_gnuplot_slow
    export GNUPLOT_PID_FILE="$BATS_TEST_TMPDIR/gnuplot.pid"
    for sig in TERM INT HUP; do
        rm -f gnuplot.pid
        # a job of its own (set -m): a background job's SIGINT would be ignored
        set -m
        PATH="$BATS_TEST_TMPDIR/fakebin:$PATH" gpc-plot reliability -o out/r.png pred.txt \
            lab.txt 3>&- &
        pid=$!
        set +m
        for _ in $(seq 100); do
            [ -s gnuplot.pid ] && break
            sleep 0.1
        done
        [ -s gnuplot.pid ] || fail "gnuplot did not start"
        [ -n "$(ls -A tmp)" ] || fail "no temporary directory while gnuplot draws"
        kill -s "$sig" "$pid"
        st=0
        wait "$pid" || st=$?
        [ "$st" -eq $((128 + $(kill -l "$sig"))) ] || fail "SIG$sig: exit status $st"
        assert_no_plot_dirs
        assert_dir_empty out
        # gnuplot is stopped with it, not left to write into the directory
        gp=$(cat gnuplot.pid)
        if kill -0 "$gp" 2>/dev/null; then
            kill "$gp"
            fail "SIG$sig: gnuplot still runs"
        fi
    done
}

# ---- errors common to every picture -------------------------------------------------

@test "gpc-plot: a missing input is exit 3, naming it, and leaves nothing" {
    run gpc-plot surface -o out/s.png nosuch.model
    [ "$status" -eq 3 ]
    assert_output --partial "nosuch.model"
    run gpc-plot reliability -o out/r.png pred.txt nosuch.txt
    [ "$status" -eq 3 ]
    assert_output --partial "nosuch.txt"
    run gpc-plot trace -o out/t.png nosuch.txt
    [ "$status" -eq 3 ]
    assert_output --partial "nosuch.txt"
    assert_dir_empty out
    assert_no_plot_dirs
}

@test "gpc-plot: bad formats, kinds and options are usage errors" {
    run gpc-plot reliability -F pdf -o out/r.pdf pred.txt lab.txt
    [ "$status" -eq 2 ]
    assert_output --partial "unknown picture format 'pdf' (use png or svg)"
    run gpc-plot reliability -o out/r.pdf pred.txt lab.txt
    [ "$status" -eq 2 ]
    assert_output --partial "cannot tell the picture format from 'out/r.pdf'"
    run gpc-plot histogram pred.txt
    [ "$status" -eq 2 ]
    assert_output --partial "unknown picture 'histogram' (use reliability, trace or surface)"
    run gpc-plot
    [ "$status" -eq 2 ]
    run gpc-plot trace --grid=10 -o out/t.png pred.txt
    [ "$status" -eq 2 ]
    assert_output --partial "--grid is an option of 'surface', not of 'trace'"
    run gpc-plot reliability -o out/r.png pred.txt
    [ "$status" -eq 2 ]
    assert_output --partial "expected two files"
    run gpc-plot surface --grid=1 -o out/s.png m.model
    [ "$status" -eq 2 ]
    run gpc-plot reliability -W 10 -o out/r.png pred.txt lab.txt
    [ "$status" -eq 2 ]
    assert_dir_empty out
    assert_no_plot_dirs
}

@test "gpc-plot: an unwritable output is exit 3 and leaves nothing behind" {
    run gpc-plot reliability -o nosuchdir/r.png pred.txt lab.txt
    [ "$status" -eq 3 ]
    assert_output --partial "nosuchdir/r.png"
    mkdir out/ro
    chmod 555 out/ro
    run without_dac_override gpc-plot reliability -o out/ro/r.png pred.txt lab.txt
    [ "$status" -eq 3 ]
    assert_output --partial "out/ro/r.png"
    assert_dir_empty out/ro
    run gpc-plot reliability -o /dev/full pred.txt lab.txt
    [ "$status" -eq 3 ]
    assert_output "gpc-plot: /dev/full: write error: No space left on device"
    assert_no_plot_dirs
}

# fakebin/gnuplot: a gnuplot whose write of the picture fails half-way, as
# on a full disk, and that exits 0 all the same, as gnuplot 5.4 does.
fake_gnuplot_cut_short() {
    mkdir -p fakebin
    cat > fakebin/gnuplot <<'SH'
#!/bin/sh
# gnuplot -d head.gp plot.gp: the picture is head.gp's 'set output'
out=$(sed -n "s/^set output '\(.*\)'\$/\1/p" "$2")
case "$out" in
*.png) printf '\211PNG\r\n\032\n\0\0\0\rIHDR\0\0\2\200' > "$out" ;;
*) printf '<?xml version="1.0" encoding="utf-8"?>\n<svg width="640">\n<g>\n' > "$out" ;;
esac
exit 0
SH
    chmod +x fakebin/gnuplot
}

@test "gpc-plot: a picture gnuplot cut short is exit 3, and none of it is written" {
    fake_gnuplot_cut_short
    for fmt in png svg; do
        run env PATH="$BATS_TEST_TMPDIR/fakebin:$PATH" gpc-plot reliability -o "out/r.$fmt" \
            pred.txt lab.txt
        [ "$status" -eq 3 ]
        assert_output --regexp "gnuplot's picture in .*/tmp/gpc-plot\.[^ ]* is cut short \([0-9]+ bytes, without the end of a ${fmt^^} file\)"
        assert_output --partial "set TMPDIR to a directory with room"
        assert_dir_empty out
        # standard output, which cannot be taken back, gets none of it either
        run --separate-stderr env PATH="$BATS_TEST_TMPDIR/fakebin:$PATH" gpc-plot reliability \
            -F "$fmt" pred.txt lab.txt
        [ "$status" -eq 3 ]
        [ -z "$output" ] || fail "a cut-short picture on standard output: $(printf %s "$output" | head -c 40 | od -c)"
    done
    assert_no_plot_dirs
}

@test "gpc-plot: a full TMPDIR is exit 3 with 'No space left on device', no output" {
    mkdir small
    mount -t tmpfs -o size=64k tmpfs small 2>/dev/null ||
        skip "cannot mount a small tmpfs here (needs root and a mount namespace that allows it)"
    # gnuplot exits 0 after it fails to write a PNG of about 100 kB into 64 kB
    run env TMPDIR="$BATS_TEST_TMPDIR/small" gpc-plot reliability -W 2000 -H 2000 \
        -o out/r.png pred.txt lab.txt
    [ "$status" -eq 3 ]
    assert_output --regexp "gnuplot could not write the whole picture in .*/small/gpc-plot\.[^ ]*: No space left on device"
    assert_dir_empty out
    assert_dir_empty small
    # our own script and data, on a disk with no room even for them
    umount small
    mount -t tmpfs -o size=4k tmpfs small
    run env TMPDIR="$BATS_TEST_TMPDIR/small" gpc-plot reliability -o out/r.png pred.txt lab.txt
    [ "$status" -eq 3 ]
    assert_output --regexp "cannot write (the gnuplot script|gnuplot's data) in .*/small/gpc-plot\.[^ ]*: No space left on device"
    assert_dir_empty out
    assert_dir_empty small
    # and a full disk under the output itself
    umount small
    mount -t tmpfs -o size=16k tmpfs small
    run gpc-plot reliability -o small/r.png pred.txt lab.txt
    [ "$status" -eq 3 ]
    assert_output "gpc-plot: small/r.png: write error: No space left on device"
    assert_dir_empty small
    assert_no_plot_dirs
}

@test "gpc-plot: gnuplot absent is exit 3 with the package to install, no output" {
    mkdir emptybin
    run env PATH="$BATS_TEST_TMPDIR/emptybin" "$REPO/bin/gpc-plot" reliability -o out/r.png \
        pred.txt lab.txt
    [ "$status" -eq 3 ]
    assert_output --partial "cannot run gnuplot: not found on PATH"
    assert_output --partial "apt-get install gnuplot-nox"
    assert_dir_empty out
    assert_no_plot_dirs
}

@test "gpc-plot: gnuplot failing is exit 3 with its message, no output" {
    mkdir fakebin
    printf '#!/bin/sh\necho "\\"plot.gp\\" line 3: simulated failure" >&2\nexit 1\n' > fakebin/gnuplot
    chmod +x fakebin/gnuplot
    run env PATH="$BATS_TEST_TMPDIR/fakebin:$PATH" gpc-plot reliability -o out/r.png pred.txt lab.txt
    [ "$status" -eq 3 ]
    assert_output --partial "gnuplot failed (exit status 1): \"plot.gp\" line 3: simulated failure"
    assert_output --partial "gnuplot-nox"
    assert_dir_empty out
    # a gnuplot that succeeds but draws nothing
    printf '#!/bin/sh\nexit 0\n' > fakebin/gnuplot
    run env PATH="$BATS_TEST_TMPDIR/fakebin:$PATH" gpc-plot reliability -o out/r.png pred.txt lab.txt
    [ "$status" -eq 3 ]
    assert_output --partial "gnuplot drew no picture"
    assert_dir_empty out
    assert_no_plot_dirs
}
