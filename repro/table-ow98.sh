#!/bin/sh
# Opper & Winther (1998), Table 1: Sonar (Gorman & Sejnowski's aspect-angle
# dependent split, 104 training and 104 test cases), TAP (= EP) and naive mean
# field with the step likelihood, for their covariance functions
#   (1) the infinite-network kernel (2/pi) asin((1 + sum_i w_i s_i s'_i) /
#       sqrt((1 + sum_i w_i s_i^2)(1 + sum_i w_i s'_i^2)))   = nn with v0 = 1,
#       s0 = 1/2 and s = sigma^2 / (2 N)
#   (2) the RBF kernel exp(-1/2 sum_i w_i (s_i - s'_i)^2)    = se with v0 = 1
# and w_i = sigma^2 / N (N = 60 inputs), inputs standardised on the training
# set.  As in the paper, sigma^2 is chosen to minimise the leave-one-out
# estimate, with the label noise kappa and the diagonal noise v at 0 (the
# paper found these best); ties go to the higher leave-one-out mean log
# predictive probability.  Then the test error, the leave-one-out estimate
# and the exact leave-one-out error (104 refits) at that sigma^2.
set -eu
cd "$(dirname "$0")/.."
PATH="$PWD/bin:$PATH"
out=repro/out/ow98
mkdir -p "$out"
d=data/sonar
gpc-scale -s "$out/stats.txt" -o "$out/X-train.txt" "$d/X-train.txt"
gpc-scale -r "$out/stats.txt" -o "$out/X-test.txt" "$d/X-test.txt"
N=$(awk 'NR == 1 { print NF; exit }' "$d/X-train.txt")

# kernel spec and hyperparameters for covariance function $1 at sigma^2 = $2
spec() { if [ "$1" = 1 ]; then echo nn; else echo se; fi; }
params() {
    awk -v c="$1" -v s2="$2" -v N="$N" 'BEGIN {
        if (c == 1) printf "log_v0=0,log_s0=%.17g,log_s=%.17g", log(0.5), log(s2 / (2 * N))
        else printf "log_v0=0,log_w=%.17g", log(s2 / N) }'
}

fit() { # METHOD COV SIGMA2 MODEL [-v]
    gpc-fit "${5:--q}" -M "$1" -l step -O none -k "$(spec "$2")" -p "$(params "$2" "$3")" \
        -m "$4" "$out/X-train.txt" "$d/y-train.txt"
}

# the Newton steps of a naive fit from its -v report (on standard error)
steps() { sed -n 's/.*naive mean field solved in \([0-9]*\) Newton step.*/\1/p' "$1"; }

# "errors mlpp" of the leave-one-out estimate of a model
loo() { gpc-predict -m "$1" --loo"${2:+=$2}" -c p | gpc-score --precise -t - "$d/y-train.txt"; }

# sigma^2 from 0.1 to 300, 60 values evenly spaced in log
grid=$(awk 'BEGIN { for (k = 0; k < 60; k++) printf "%.4g ", 0.1 * 3000 ^ (k / 59) }')
t0=$(date +%s)
for method in tap naive; do
    for cov in 1 2; do
        best=""
        t1=$(date +%s)
        for s2 in $grid; do
            if ! fit "$method" "$cov" "$s2" "$out/m.txt" -v 2>"$out/err.txt"; then
                echo "$method ($cov) sigma^2 $s2: $(cat "$out/err.txt")" >&2
                continue
            fi
            loo "$out/m.txt" | awk -v s2="$s2" -v k="$(steps "$out/err.txt")" \
                '{ print s2, $1, $4, (k == "" ? "-" : k) }'
        done > "$out/grid-$method-$cov.txt"
        echo "$method $cov $(( $(date +%s) - t1 ))" >> "$out/times.txt.new"
        best=$(sort -k2,2n -k3,3gr "$out/grid-$method-$cov.txt" | head -1 | cut -d' ' -f1)
        fit "$method" "$cov" "$best" "$out/$method-$cov.model"
        echo "$method $cov $best" >> "$out/chosen.txt.new"
        echo "$method ($cov): sigma^2 = $best" >&2
    done
done
mv "$out/chosen.txt.new" "$out/chosen.txt"
mv "$out/times.txt.new" "$out/times.txt"

rate() { awk -v e="$1" -v n="$2" 'BEGIN { printf "%.3f", e / n }'; }
{
    echo "Opper & Winther (1998), Table 1: Sonar, 104 training / 104 test cases"
    echo "step likelihood, kappa = v = 0, sigma^2 minimising the leave-one-out estimate"
    echo
    printf '%-18s %-4s %8s | %6s %6s %6s | %s\n' method cov sigma^2 test loo exact \
        "published test / loo / exact"
    while read -r method cov s2; do
        m=$out/$method-$cov.model
        te=$(gpc-predict -m "$m" -c p "$out/X-test.txt" | gpc-score --precise -t - "$d/y-test.txt" |
             cut -d' ' -f1)
        lo=$(loo "$m" | cut -d' ' -f1)
        ex=$(gpc-predict -q -m "$m" --loo=exact -c p | gpc-score --precise -t - "$d/y-train.txt" |
             cut -d' ' -f1)
        case "$method $cov" in
            "tap 1") pub="0.183 / 0.260 / 0.260" name="TAP mean field" ;;
            "tap 2") pub="0.077 / 0.212 / 0.212" name="TAP mean field" ;;
            "naive 1") pub="0.154 / 0.269 / 0.269" name="naive mean field" ;;
            *) pub="0.077 / 0.221 / 0.221" name="naive mean field" ;;
        esac
        printf '%-18s (%s) %8s | %6s %6s %6s | %s\n' "$name" "$cov" "$s2" "$(rate "$te" 104)" \
            "$(rate "$lo" 104)" "$(rate "$ex" 104)" "$pub"
    done < "$out/chosen.txt"
    echo
    echo "leave-one-out error over the sigma^2 grid (errors of 104), per method and kernel:"
    for f in "$out"/grid-*.txt; do
        printf '%-14s' "$(basename "$f" .txt | sed 's/^grid-//')"
        awk '{ printf " %s:%s", $1, $2 } END { print "" }' "$f" | fold -s -w 100
    done
    echo
    echo "naive mean field's Newton steps over the sigma^2 grid (sigma^2:steps; most, fits):"
    for f in "$out"/grid-naive-*.txt; do
        printf '%-14s' "$(basename "$f" .txt | sed 's/^grid-//')"
        awk '{ printf " %s:%s", $1, $4; if ($4 > most) most = $4 }
             END { printf " (most %d, %d fits)\n", most, NR }' "$f" | fold -s -w 100
    done
    echo
    echo "seconds for the 60 fits and leave-one-out estimates of each grid:"
    awk '{ printf "  %s (%s): %s s\n", $1, $2, $3 }' "$out/times.txt"
    echo
    echo "wall time $(( $(date +%s) - t0 )) s"
} | tee "$out/report.txt"
