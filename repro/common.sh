# Helpers the table scripts share; sourced by repro/table-*.sh.

pick() { # ROWS FILE: the rows of FILE listed in ROWS
    awk 'NR == FNR { want[$1] = 1; next } want[FNR]' "$1" "$2"
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
