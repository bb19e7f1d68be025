#!/bin/sh
# Barber & Williams (1997), Tables 1 and 2, and Neal's three-class data.
#
# Table 1, Pima and Crabs: test errors with GP-HMC (predictions averaged over
# the chain after a burn-in of a third) and GP-MAP, with the paper's settings:
# ARD squared exponential, logistic likelihood, priors N(-3, 3^2) on the log
# hyperparameters, the fixed step 0.1 (--adapt=none), 20 leapfrog steps,
# 200 iterations.
#
# Table 2, forensic glass (data/fgl, 6 classes): 10-fold cross-validation over
# the fixed folds of data/fgl/folds.txt, inputs standardised per fold with the
# training fold's statistics, ARD kernel, multiclass Laplace with the softmax
# likelihood, hyperparameters by MAP under the same prior or sampled by HMC
# with the same settings; errors over all 214 cases.
#
# Neal's three-class data (data/neal3): 400 training cases, the same two fits,
# scored on test cases 401-1000 (the first 600 of the test set, the ones FBM
# and GPstuff report on) and on all 1000 (401-1400).
#
# Writes repro/out/ and a trace plot of the log hyperparameters per data set
# (PNG, gnuplot).  JOBS folds run at a time (default 2, one per core); HMC
# chains HMC_JOBS at a time (default 1, on all cores).
set -eu
cd "$(dirname "$0")/.."
self=$PWD/repro/table-bw97.sh
PATH="$PWD/bin:$PATH"
out=repro/out
mkdir -p "$out"

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f\n", b - a }'; }

# ---- Table 1: binary, one split ------------------------------------------

row() { # DATA METHOD PRED SECONDS PUBLISHED
    gpc-score --precise -t "$3" "data/$1/y-test.txt" | {
        read -r errors cases rate mlpp _brier
        printf '%-6s %-8s %4s of %-4s %9.4f %7s s   %s\n' "$1" "$2" "$errors" "$cases" \
            "$mlpp" "$4" "$5"
    }
}

table() { # DATA HMC-PUBLISHED MAP-PUBLISHED
    d=$1 tag=$out/$1
    gpc-scale -s "$tag-stats.txt" -o "$tag-X-train.txt" "data/$d/X-train.txt"
    gpc-scale -r "$tag-stats.txt" -o "$tag-X-test.txt" "data/$d/X-test.txt"
    t0=$(now)
    gpc-hmc -q --adapt=none -o "$tag-chain.txt" "$tag-X-train.txt" "data/$d/y-train.txt"
    gpc-fit -q -O none -m "$tag-none.model" "$tag-X-train.txt" "data/$d/y-train.txt"
    gpc-predict -q -m "$tag-none.model" --chain "$tag-chain.txt" -o "$tag-hmc.pred" \
        "$tag-X-test.txt"
    t1=$(now)
    gpc-fit -q -O map -m "$tag-map.model" "$tag-X-train.txt" "data/$d/y-train.txt"
    gpc-predict -m "$tag-map.model" -o "$tag-map.pred" "$tag-X-test.txt"
    t2=$(now)
    row "$d" GP-HMC "$tag-hmc.pred" "$(secs "$t0" "$t1")" "$2"
    row "$d" GP-MAP "$tag-map.pred" "$(secs "$t1" "$t2")" "$3"
}

# ---- Multiclass: methods, splits, cross-validation -----------------------
#
# A split is a path prefix TAG with TAG-X-train.txt, TAG-y-train.txt,
# TAG-X-test.txt and TAG-y-test.txt.  A method NAME is a function method_NAME
# that fits on the training part of TAG and writes the class probabilities of
# the test cases to TAG-NAME.pred and the model they come from (whose class
# order they follow) to TAG-NAME.model.

method_map() { # TAG: hyperparameters by MAP
    gpc-fit -O map -m "$1-map.model" "$1-X-train.txt" "$1-y-train.txt"
    gpc-predict -m "$1-map.model" -c p -o "$1-map.pred" "$1-X-test.txt"
}

method_mappc() { # TAG: MAP with each class's process its own hyperparameters
    gpc-fit -O map --per-class -m "$1-mappc.model" "$1-X-train.txt" "$1-y-train.txt"
    gpc-predict -m "$1-mappc.model" -c p -o "$1-mappc.pred" "$1-X-test.txt"
}

method_hmc() { # TAG: hyperparameters sampled by HMC; the chain's own time in TAG-chain.time
    t0=$(now)
    gpc-hmc --adapt=none -o "$1-chain.txt" "$1-X-train.txt" "$1-y-train.txt"
    secs "$t0" "$(now)" > "$1-chain.time"
    gpc-fit -O none -m "$1-hmc.model" "$1-X-train.txt" "$1-y-train.txt"
    gpc-predict -m "$1-hmc.model" --chain "$1-chain.txt" -c p -o "$1-hmc.pred" \
        "$1-X-test.txt"
}

method_ovr() { # TAG: one-vs-rest, a binary logistic Laplace classifier per class,
               # each with its own hyperparameters by MAP (scikit-learn's default
               # multiclass scheme, with the same prior as the others)
    gpc-fit -O map --multiclass=ovr --per-class -m "$1-ovr.model" "$1-X-train.txt" \
        "$1-y-train.txt"
    gpc-predict -m "$1-ovr.model" -c p -o "$1-ovr.pred" "$1-X-test.txt"
}

run_one() { # METHOD TAG: one method on one split, its messages in TAG-METHOD.log,
            # its seconds in TAG-METHOD.time; the log is shown if it fails
    log=$2-$1.log
    exec 3>&2 2>"$log"
    trap 'st=$?; [ "$st" -eq 0 ] || { echo "table-bw97: $log:" >&3; cat "$log" >&3; }' EXIT
    t0=$(now)
    "method_$1" "$2"
    secs "$t0" "$(now)" > "$2-$1.time"
}

run_method() { # JOBS METHOD TAG...: the method on every split, JOBS at a time,
                # each on one thread when several run (threads of two runs
                # fighting over the cores slow both down several times)
    jobs=$1 m=$2 threads=
    shift 2
    if [ "$jobs" -gt 1 ]; then
        threads="OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1"
    fi
    printf '%s\n' "$@" | env $threads xargs -n 1 -P "$jobs" sh "$self" run-one "$m"
}

standardise() { # TAG: inputs scaled with the training part's statistics
    gpc-scale -q -s "$1-stats.txt" -o "$1-X-train.txt" "$1-X-train.raw"
    gpc-scale -q -r "$1-stats.txt" -o "$1-X-test.txt" "$1-X-test.raw"
}

rows() { # FOLDS K in|out FILE: the rows of FILE whose fold is K (in) or is not (out)
    if [ "$3" = in ]; then
        gpc-folds --select="$2" --test "$1" "$4"
    else
        gpc-folds --select="$2" --train "$1" "$4"
    fi
}

folds() { # DATA: the split of every fold of data/DATA/folds.txt
    for k in $(sort -nu "data/$1/folds.txt"); do
        echo "$out/$1-fold$k"
    done
}

cv_prepare() { # DATA: a split per fold of data/DATA/folds.txt, inputs standardised
    d=$1
    n=$(wc -l < "data/$d/folds.txt")
    for f in X.txt y.txt; do
        [ "$(wc -l < "data/$d/$f")" -eq "$n" ] ||
            { echo "table-bw97: data/$d/$f and folds.txt differ in length" >&2; exit 1; }
    done
    for tag in $(folds "$d"); do
        k=${tag##*-fold}
        rows "data/$d/folds.txt" "$k" out "data/$d/X.txt" > "$tag-X-train.raw"
        rows "data/$d/folds.txt" "$k" out "data/$d/y.txt" > "$tag-y-train.txt"
        rows "data/$d/folds.txt" "$k" in "data/$d/X.txt" > "$tag-X-test.raw"
        rows "data/$d/folds.txt" "$k" in "data/$d/y.txt" > "$tag-y-test.txt"
        standardise "$tag"
    done
}

cv_pool() { # DATA METHOD: after run_method METHOD on every fold, the held-out
            # predictions pooled in fold order into $out/DATA-METHOD.pred, their
            # labels in .y, the folds' seconds added up in .time
    d=$1 m=$2 first=
    pred=$out/$d-$m.pred
    : > "$pred.tmp"
    : > "$out/$d-$m.y"
    for tag in $(folds "$d"); do
        if [ -z "$first" ]; then
            first=$tag
            grep '^#' "$tag-$m.pred" > "$pred.tmp"
        elif [ "$(grep '^classes ' "$tag-$m.model")" != "$(grep '^classes ' "$first-$m.model")" ]
        then
            echo "table-bw97: $tag-$m.model has other classes than $first-$m.model" >&2
            exit 1
        fi
        grep -v '^#' "$tag-$m.pred" >> "$pred.tmp"
        cat "$tag-y-test.txt" >> "$out/$d-$m.y"
    done
    mv "$pred.tmp" "$pred"
    cp "$first-$m.model" "$out/$d-$m.model"
    for tag in $(folds "$d"); do cat "$tag-$m.time"; done |
        awk '{ s += $1 } END { printf "%.1f\n", s }' > "$out/$d-$m.time"
}

split_prepare() { # DATA: data/DATA's training and test sets, inputs standardised
    tag=$out/$1
    cp "data/$1/X-train.txt" "$tag-X-train.raw"
    cp "data/$1/X-test.txt" "$tag-X-test.raw"
    cp "data/$1/y-train.txt" "$tag-y-train.txt"
    cp "data/$1/y-test.txt" "$tag-y-test.txt"
    standardise "$tag"
}

score_row() { # LABEL MODEL PRED Y SECONDS PUBLISHED
    gpc-score --precise -t -m "$2" "$3" "$4" | {
        read -r errors cases rate mlpp brier
        printf '%-22s %4s of %-4s %6.1f %% %9.4f %7.4f %8s s   %s\n' "$1" "$errors" \
            "$cases" "$(awk -v r="$rate" 'BEGIN { print 100 * r }')" "$mlpp" "$brier" "$5" "$6"
    }
}

cv_row() { # DATA METHOD NAME PUBLISHED
    p=$out/$1-$2
    gpc-score -c -m "$p.model" "$p.pred" "$p.y" > "$p-confusion.txt"
    score_row "$1 $3" "$p.model" "$p.pred" "$p.y" "$(cat "$p.time")" "$4"
}

split_row() { # DATA METHOD NAME CASES PUBLISHED: the first CASES test cases, or all
    p=$out/$1-$2 y=$out/$1-y-test.txt
    if [ "$4" = all ]; then
        gpc-score -c -m "$p.model" "$p.pred" "$y" > "$p-confusion.txt"
        score_row "$1 $3 all" "$p.model" "$p.pred" "$y" "$(cat "$p.time")" "$5"
    else
        awk -v n="$4" '/^#/ || ++i <= n' "$p.pred" > "$p-$4.pred"
        head -n "$4" "$y" > "$p-$4.y"
        score_row "$1 $3 $4" "$p.model" "$p-$4.pred" "$p-$4.y" "$(cat "$p.time")" "$5"
    fi
}

fits_short() { # LOG...: how many of these fits stopped before the gradient test
    grep -l 'gradient test not met' "$@" | wc -l | tr -d ' '
}

if [ "${1-}" = run-one ]; then # a worker of run_method
    run_one "$2" "$3"
    exit 0
fi

# ---- Table 1 ---------------------------------------------------------------

echo "Barber & Williams (1997), Table 1: test errors, ours beside theirs"
printf '%-6s %-8s %12s %9s %9s   %s\n' data method errors mlpp time published
table pima "68 of 332" "69 of 332"
table crabs "3 of 120 (their split)" "3 of 120 (their split)"
echo "mlpp: mean log predictive probability of the test labels."

# ---- Multiclass fits ---------------------------------------------------------
# Every split of both data sets goes through each method, JOBS at a time; the
# longest run (Neal's data, 400 cases) first, so that it shares the cores with
# the glass folds instead of running alone at the end.  The HMC chains run
# HMC_JOBS at a time (default 1, each on all cores: a softmax model's classes
# run side by side), so that the time of one chain is what a user waits for.

cv_prepare fgl
split_prepare neal3
for m in map mappc ovr hmc; do
    jobs=${JOBS:-2}
    [ "$m" = hmc ] && jobs=${HMC_JOBS:-1}
    run_method "$jobs" "$m" "$out/neal3" $(folds fgl)
    cv_pool fgl "$m"
done

# ---- Table 2: forensic glass -----------------------------------------------

echo
echo "Barber & Williams (1997), Table 2: forensic glass, 10-fold cross-validation"
printf '%-22s %12s %8s %9s %7s %10s   %s\n' "data method" errors "error" mlpp Brier time published
cv_row fgl hmc GP-HMC "not run"
cv_row fgl map GP-MAP "23.3 %"
cv_row fgl mappc GP-MAP/class "23.3 %"
cv_row fgl ovr OvR-MAP/class "-"
printf 'GP-HMC chain time per fold (s, 200 x 20 leapfrog steps):'
for tag in $(folds fgl); do printf ' %s' "$(cat "$tag-chain.time")"; done
echo
echo "Errors over all 214 cases, each predicted by the model fitted without its fold"
echo "(data/fgl/folds.txt, not the paper's folds, which are unpublished); inputs"
echo "standardised with the training fold's statistics; ARD kernel, softmax Laplace,"
echo "prior N(-3, 3^2) on each log hyperparameter; HMC: 200 iterations of 20 leapfrog"
echo "steps of 0.1, predictions averaged over the last two thirds of the chain."
echo "GP-HMC and GP-MAP: one set of hyperparameters shared by the six classes'"
echo "processes (10: log_v0, log_w1..9); GP-MAP/class: each class its own (60,"
echo "--per-class).  The paper does not say which it used.  OvR-MAP/class: six"
echo "binary logistic Laplace classifiers, class against the rest, each with its"
echo "own hyperparameters by MAP, probabilities normalised (for contrast)."
echo "time: the folds' own times added up (MAP: ${JOBS:-2} runs at a time on one thread" \
    "each, beside Neal's data; HMC: ${HMC_JOBS:-1} at a time)."
for m in map mappc ovr; do
    echo "$m fits that stopped short of the optimiser's gradient test (|g| < 1e-5):" \
        "$(fits_short $(for t in $(folds fgl); do echo "$t-$m.log"; done)) of $(folds fgl | wc -l | tr -d ' ')."
done

# ---- Neal's three-class data -----------------------------------------------

echo
echo "Neal's three-class data (FBM's ex-netgp/cdata): 400 training cases"
printf '%-22s %12s %8s %9s %7s %10s   %s\n' "data method cases" errors "error" mlpp Brier time published
split_row neal3 hmc GP-HMC 600 "13.5 % (FBM, GP by HMC, an earlier draw)"
split_row neal3 hmc GP-HMC all "19.5 % (FBM's recorded run on this file)"
split_row neal3 map GP-MAP 600 "13.3 % (GPstuff, softmax Laplace MAP, an earlier draw)"
split_row neal3 map GP-MAP all "-"
split_row neal3 mappc GP-MAP/class 600 "13.3 % (GPstuff, as above)"
split_row neal3 mappc GP-MAP/class all "-"
split_row neal3 ovr OvR-MAP/class 600 "-"
split_row neal3 ovr OvR-MAP/class all "-"
echo "600: test cases 401-1000 (the first 600 of the test set); all: 401-1400."
echo "Inputs standardised with the training set's statistics; ARD kernel, softmax"
echo "Laplace, prior and HMC settings as for Table 2.  The published 13.5 % and"
echo "13.3 % are on FBM's earlier 1000-case file, a different draw of the same rule;"
echo "FBM's own GP run on this 1400-case file (its ex-netgp/cout.gpp) records 19.5 %"
echo "wrong on all 1000 test cases.  Time: the whole fit and prediction; the chain"
echo "alone took $(cat "$out/neal3-chain.time") s."
echo "MAP fits that stopped short of the optimiser's gradient test:" \
    "$(fits_short "$out/neal3-map.log" "$out/neal3-mappc.log" "$out/neal3-ovr.log") of 3."

for d in pima crabs neal3; do
    gpc-hmc --summary "$out/$d-chain.txt" > "$out/$d-summary.txt"
done
for tag in $(folds fgl); do
    gpc-hmc --summary "$tag-chain.txt" > "$tag-summary.txt"
done
echo
echo "Chain summaries: $out/{pima,crabs,neal3,fgl-fold*}-summary.txt"

if command -v gnuplot >/dev/null 2>&1; then
    # a panel per log hyperparameter, the burn-in gpc-hmc --summary discards shaded
    for d in pima crabs neal3 fgl-fold0; do
        gpc-plot trace -q -o "$out/$d-trace.png" \
            --title "$d: log hyperparameters along the HMC chain" "$out/$d-chain.txt"
    done
    echo "Trace plots: $out/{pima,crabs,neal3,fgl-fold0}-trace.png"
fi
