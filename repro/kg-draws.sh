#!/bin/sh
# Kim & Ghahramani's synthetic experiment (their Table 1) repeated over many
# draws of the same generator: 1000 points uniform on [-1, 1]^2 (rounded to 6
# decimals), label +1 iff x1^2 + x2^2 > 0.5, the first 40 for training with
# the labels of 2 of them, chosen at random, flipped; the other 960 for
# testing.  Each draw is fitted with plain GPC (eps = 0) and robust GPC (eps
# by EM) in the paper's setting (v0 = 1, v1 = 1e-8, w1 = w2 = 0.5 fixed, v2
# learnt).  One draw (data/kg-synth, made with R) cannot show how often the
# paper's outcome -- robust GPC with the higher evidence and the lower test
# error -- is to be expected; these draws can.  The draws come from a
# Park-Miller generator in awk arithmetic (exact in doubles, the same under
# any awk), seeded 1..DRAWS.
#
# Usage: sh repro/kg-draws.sh [DRAWS]  (default 30, about 12 s).  The report
# goes to stdout and repro/out/kg/draws.txt, the per-draw lines to
# repro/out/kg/draws/results.txt.
set -eu
cd "$(dirname "$0")/.."
PATH="$PWD/bin:$PATH"
draws=${1:-30}
out=repro/out/kg
dd=$out/draws
rm -rf "$dd"
mkdir -p "$dd"

lnv() { awk -v x="$1" 'BEGIN { printf "%.17g", log(x) }'; }
P="log_v0=0,log_w1=$(lnv 0.5),log_w2=$(lnv 0.5),log_bias=$(lnv 1e-8)"
FIX=log_v0,log_w1,log_w2,log_bias

# draw SEED: Xtr, ytr (2 labels flipped), Xte, yte in $dd, and the radii of
# the two flipped points on stdout.
draw() {
    awk -v seed="$1" -v dir="$dd" '
        function u() { x = (16807 * x) % 2147483647; return x / 2147483647 }
        BEGIN { x = (seed * 48271) % 2147483646 + 1
            for (i = 0; i < 20; i++) u()
            for (i = 1; i <= 1000; i++) {
                a[i] = sprintf("%.6f", 2 * u() - 1); b[i] = sprintf("%.6f", 2 * u() - 1)
                y[i] = (a[i] * a[i] + b[i] * b[i] > 0.5) ? 1 : -1
            }
            f1 = int(u() * 40) + 1
            do f2 = int(u() * 40) + 1; while (f2 == f1)
            for (i = 1; i <= 1000; i++) {
                t = i <= 40 ? "tr" : "te"
                print a[i], b[i] > (dir "/X" t)
                print (i == f1 || i == f2) ? -y[i] : y[i] > (dir "/y" t)
            }
            printf "%.3f %.3f\n", sqrt(a[f1]^2 + b[f1]^2), sqrt(a[f2]^2 + b[f2]^2) }'
}

# fit LABEL-NOISE: "log-ev eps err%" of that fit on the current draw, or "nan
# nan nan" if gpc-fit fails.
fit() {
    if gpc-fit -q -M ep -l step -k ard+bias+jitter --label-noise="$1" -p "$P" --fix="$FIX" \
        -O ml -m "$dd/model" "$dd/Xtr" "$dd/ytr" 2>>"$dd/fits.log"; then
        ev=$(awk '$1 == "log_evidence" { print $2 }' "$dd/model")
        eps=$(awk '$1 == "likelihood" { print ($3 == "" ? 0 : $3) }' "$dd/model")
        err=$(gpc-predict -q -m "$dd/model" -c p "$dd/Xte" | gpc-score --precise -t - "$dd/yte" |
            awk '{ printf "%.4f", 100 * $3 }')
        echo "$ev $eps $err"
    else
        echo "nan nan nan"
    fi
}

echo "kg-draws: $draws draws x {GPC, robust GPC}" >&2
# results: seed r1 r2 | plain log-ev eps err | robust log-ev eps err
for s in $(seq 1 "$draws"); do
    echo "$s $(draw "$s") $(fit 0) $(fit em)"
done >"$dd/results.txt"

{
    echo "Kim & Ghahramani's synthetic experiment over $draws draws of its generator"
    echo "(2 of 40 training labels flipped at random, 960 test points; v0 = 1, v1 = 1e-8,"
    echo "w1 = w2 = 0.5 fixed, v2 learnt; paper, one draw: GPC -26.96 / 7.08 %,"
    echo "robust GPC -25.31 / 2.40 %)"
    awk '$4 == "nan" || $7 == "nan" { failed++; next }
        { n++; e0 += $6; e1 += $9; q0 += $6 ^ 2; q1 += $9 ^ 2
          ev = $7 > $4; er = $9 < $6
          hi += ev; lo += er; both += ev && er; sel += ev ? $9 : $6
          if (ev) { nsel++; gain += $6 - $9 } }
        function sd(s, q) { return n > 1 ? sqrt((q - s * s / n) / (n - 1)) : 0 }
        END {
            if (n == 0) { print "every fit failed"; exit }
            printf "  test error %%, mean (sd) over draws: GPC %.2f (%.2f), robust GPC %.2f (%.2f), MS-robust %.2f\n",
                e0 / n, sd(e0, q0), e1 / n, sd(e1, q1), sel / n
            printf "  robust GPC has the higher log evidence in %d of %d draws, the lower test\n", hi, n
            printf "  error in %d, both (the paper'"'"'s outcome) in %d\n", lo, both
            if (nsel) printf "  where the evidence picks robust GPC its test error is lower by %.2f points on average\n", gain / nsel
            if (failed) printf "  draws with a failed fit (left out): %d\n", failed }' "$dd/results.txt"
    echo "  per draw (seed, radii of the flipped points, then log-ev eps err% for GPC"
    echo "  and robust GPC): $dd/results.txt; the boundary is at radius 0.707"
} | tee "$out/draws.txt"
