# Helpers the table scripts share; sourced by repro/table-*.sh.

pick() { # ROWS FILE: the rows of FILE listed in ROWS
    awk 'NR == FNR { want[$1] = 1; next } want[FNR]' "$1" "$2"
}

# split_rows Y SEED TAG [TRAIN]: TAG-train.rows and TAG-test.rows (row
# numbers of the labels file Y), stratified by class: half of each class
# (rounded up) for training, or TRAIN rows in all drawn in proportion to
# the classes; the draw is awk's rand() seeded with SEED
split_rows() {
    awk -v seed="$2" 'BEGIN { srand(seed) } { print rand(), NR, $1 }' "$1" |
        sort -k3,3 -k1,1g |
        awk -v want_total="${4-}" -v total="$(wc -l < "$1")" -v train="$3-train.rows" \
            -v test="$3-test.rows" '
            { cls[NR] = $3; row[NR] = $2; count[$3]++ }
            END { for (i = 1; i <= NR; i++) {
                      c = cls[i]; seen[c]++
                      want = want_total != "" ? int(count[c] * want_total / total + 0.5) : int((count[c] + 1) / 2)
                      print row[i] > (seen[c] <= want ? train : test) } }'
    sort -n -o "$3-train.rows" "$3-train.rows"
    sort -n -o "$3-test.rows" "$3-test.rows"
}

# "mean sd" of column COL of the rows on standard input (only those whose
# first field is M, if M is given), entries '-' skipped; "- -" if none.
mean_sd() { # COL [M]
    awk -v c="$1" -v m="${2-}" '
        (m == "" || $1 == m) && $c != "-" { n++; s += $c; ss += $c * $c }
        END { if (!n) { print "- -"; exit }
              mean = s / n; sd = n > 1 ? sqrt((ss - n * mean * mean) / (n - 1)) : 0
              printf "%.17g %.17g\n", mean, sd }'
}

# "mean +- sd" of column COL of method M's rows in FILES, to DEC decimals in
# a field of 17 characters ('-' if there are none).
stats() { # M COL DEC FILE...
    m=$1 col=$2 dec=$3
    shift 3
    cat "$@" | mean_sd "$col" "$m" | awk -v d="$dec" '
        $1 == "-" { printf "%17s", "-"; next }
        { printf "%9.*f +- %5.*f", d, $1, d, $2 }'
}
