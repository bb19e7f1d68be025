#!/bin/sh
# Run each libFuzzer harness for SECONDS from a corpus seeded with the test
# inputs, one after the other (nice'd: the machine may be shared).
#   fuzz/run.sh BUILDDIR SECONDS HARNESS...
# The corpus grows in BUILDDIR/corpus/<harness>; inputs that crash a harness
# are saved in BUILDDIR/crashes/<harness>/ and listed at the end.  Exit status
# 1 if any harness found one.
#
# The readers run under AddressSanitizer and UndefinedBehaviorSanitizer.  The
# memory limits keep a hostile size field from taking the machine: libFuzzer
# reports a single allocation above -malloc_limit_mb as a finding, and the
# library's own out-of-memory path (gpc_out_of_memory, which exits) shows up
# as "fuzz target exited", also a finding.
cd "$(dirname "$0")/.." || exit 3
build="$1" seconds="$2"
shift 2
[ -x bin/gpc-fit ] || { echo "fuzz: build the tools first (make all)" >&2; exit 3; }
seed="$build/seed"
rm -rf "$seed"
harnesses="matrix labels kernel_spec model chain csv_header params"
for h in $harnesses; do mkdir -p "$seed/$h" || exit 3; done

# Matrices and labels: the committed seeds, the heads of the bundled data sets
# (whole files would only slow every run), the same as .npy, and the
# reference fixtures of the tests.
for h in $harnesses; do
    if [ -d "fuzz/seeds/$h" ]; then cp fuzz/seeds/"$h"/* "$seed/$h/" || exit 3; fi
done
for d in data/*/; do
    n=$(basename "$d")
    for f in "$d"X*.txt; do
        [ -f "$f" ] || continue
        head -n 12 "$f" > "$seed/matrix/$n-$(basename "$f")" || exit 3
        # the same rows as CSV under a header c1,c2,...
        head -n 12 "$f" | awk '!/^[ \t]*(#|$)/ { if (!done) { for (j = 1; j <= NF; j++)
                                      printf "%sc%d", (j > 1 ? "," : ""), j; print ""; done = 1 }
                                  $1 = $1; gsub(/ /, ","); print }' \
            > "$seed/csv_header/$n-$(basename "$f" .txt).csv" || exit 3
        cols=$(awk 'NF { print NF; exit }' "$f")
        awk -v c="$cols" 'BEGIN { for (j = 1; j <= c; j++) printf "0 "; print ""
                                  for (j = 1; j <= c; j++) printf "1 "; print "" }' > "$seed/id.txt"
        head -n 12 "$f" | bin/gpc-scale -r "$seed/id.txt" -F npy > "$seed/matrix/$n-$(basename "$f" .txt).npy" ||
            exit 3
    done
    for f in "$d"y*.txt; do
        [ -f "$f" ] && { head -n 12 "$f" > "$seed/labels/$n-$(basename "$f")" || exit 3; }
    done
done
rm -f "$seed/id.txt"
for f in tests/ref/*; do
    [ -f "$f" ] && [ "$(wc -c < "$f")" -lt 20000 ] && cp "$f" "$seed/matrix/"
done

# Models of each method and a short chain, made by the tools on 30 rows of
# standardised Pima.
head -n 30 data/pima/X-train.txt > "$seed/X.txt" && head -n 30 data/pima/y-train.txt > "$seed/y.txt" &&
    bin/gpc-scale -s "$seed/st.txt" -o "$seed/Xz.txt" "$seed/X.txt" || exit 3
for m in laplace ep naive; do
    bin/gpc-fit -q -M "$m" -O none -k ard+bias -m "$seed/model/$m.txt" "$seed/Xz.txt" "$seed/y.txt" || exit 3
done
bin/gpc-fit -q -O none -k 'se@1-3+linear@4:discrete=2' -m "$seed/model/discrete.txt" \
    "$seed/Xz.txt" "$seed/y.txt" || exit 3
bin/gpc-hmc -q -n 3 -L 3 -k ard+bias -o "$seed/chain/chain.txt" "$seed/Xz.txt" "$seed/y.txt" || exit 3
# Hyperparameter files as gpc-kernel --list writes them, for the kernels of
# fuzz_params (the first byte picks one): ard+bias on 3 columns, ard+bias
# per class on 2.
cut -d' ' -f1-3 "$seed/Xz.txt" > "$seed/X3.txt" && cut -d' ' -f1-2 "$seed/Xz.txt" > "$seed/X2.txt" &&
    { printf '\000'; bin/gpc-kernel -k ard+bias -p log_w2=0.5 -L "$seed/X3.txt"; } \
        > "$seed/params/listed-ard-bias" &&
    { printf '\003'; bin/gpc-kernel -k ard+bias:per-class=3 -L "$seed/X2.txt"; } \
        > "$seed/params/listed-per-class" || exit 3
rm -f "$seed/X.txt" "$seed/y.txt" "$seed/Xz.txt" "$seed/st.txt" "$seed/X3.txt" "$seed/X2.txt"

found=0
for h in "$@"; do
    corpus="$build/corpus/$h" crashes="$build/crashes/$h"
    mkdir -p "$corpus" "$crashes" || exit 3
    echo "fuzz: $h for $seconds s" >&2
    # -fork=1 with -ignore_*: a finding is saved and fuzzing goes on for the
    # whole time, so one shallow bug cannot hide the others.  -timeout: any
    # one input taking 10 s is a finding (a hang).
    nice "$build/fuzz_$h" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
        -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 \
        -artifact_prefix="$crashes/" "$corpus" "$seed/$h" > "$build/$h.log" 2>&1
    st=$?
    grep -E '^#[0-9]+: cov' "$build/$h.log" | tail -n 1 >&2
    # slow-unit-* files are inputs that took over 10 s without failing: noted,
    # not findings (a huge but valid dimension can take that long).
    slow=$(find "$crashes" -name 'slow-unit-*' | wc -l)
    [ "$slow" -eq 0 ] || echo "fuzz: $h: $slow slow inputs (over 10 s) in $crashes/" >&2
    if [ "$st" -ne 0 ] || [ -n "$(find "$crashes" -type f ! -name 'slow-unit-*')" ]; then
        echo "fuzz: $h: FINDINGS (status $st), see $build/$h.log; by first error line:" >&2
        # Each saved input run once more, grouped by what went wrong (a
        # timeout near 10 s may not show again on a quieter machine).
        for c in "$crashes"/*; do
            [ -f "$c" ] || continue
            case "$c" in */slow-unit-*) continue ;; esac
            "$build/fuzz_$h" -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 "$c" 2>&1 |
                grep -m 1 -E 'runtime error|ERROR: |fuzz target exited|out of memory|timeout after' |
                sed -e 's/^==[0-9]*==//' -e 's/0x[0-9a-f]*/0x.../g' -e "s|$(pwd)/||" |
                grep . || echo "no failure on replay: $c"
        done | sort | uniq -c | sort -rn >&2
        found=1
    fi
done
[ "$found" -eq 0 ]
