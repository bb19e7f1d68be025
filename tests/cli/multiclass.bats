#!/usr/bin/env bats
# Multiclass classification end to end: the softmax model (shared or
# per-class hyperparameters) and one-vs-rest over any binary method, through
# gpc-fit, gpc-predict, gpc-evidence, gpc-hmc, gpc-kernel and gpc-score.
# Expected numbers come from other paths through the tools (binary fits on
# relabelled data, kernel matrices, finite differences, explicit refits) or
# from invariants computed here with awk, never from a copy of an output.

load test_helper

# Hyperparameters of the kernel 'se' (log_v0, log_w), shared and per class.
HP='log_v0=1,log_w=-1'
PC='log_v0.c1=1,log_w.c1=-1,log_v0.c2=0.5,log_w.c2=-1.5,log_v0.c3=1.5,log_w.c3=-0.5'
# Each class's pair of PC, as the binary tools take it.
PC1='log_v0=1,log_w=-1'
PC2='log_v0=0.5,log_w=-1.5'
PC3='log_v0=1.5,log_w=-0.5'
CLASSES='setosa versicolor virginica'

setup() {
    require_tools gpc-fit gpc-predict gpc-evidence gpc-hmc gpc-kernel gpc-score
    common_setup
    # data/iris.txt: 60 rows of Fisher's iris, species then 4 measurements;
    # rows 1-30 train (10 of each species), rows 31-60 test.
    #   X3.txt y3.txt      training inputs and species (words)
    #   Xt3.txt yt3.txt    test inputs and species
    #   y123.txt y357.txt  the training species coded 1 2 3 and 3 5 7
    #   yb-CLASS.txt       CLASS against the rest, coded +1 / -1
    #   X2.txt y2.txt      the 20 training cases of versicolor and virginica
    iris_fixtures
    awk '{ print ($1 == "setosa") ? 1 : ($1 == "versicolor") ? 2 : 3 }' y3.txt > y123.txt
    awk '{ print ($1 == "setosa") ? 3 : ($1 == "versicolor") ? 5 : 7 }' y3.txt > y357.txt
    for c in $CLASSES; do
        awk -v c="$c" '{ print ($1 == c) ? 1 : -1 }' y3.txt > "yb-$c.txt"
    done
}

# ---- helpers ---------------------------------------------------------------------------

# The rows of a text matrix without its '#' lines.
data_rows() {
    grep -v '^#' "$1"
}

# Columns 1..C of every row of FILE are probabilities summing to 1 (1e-12).
assert_probs() {
    run awk -v C="$2" '
        /^#/ { next }
        { n++; s = 0
          for (c = 1; c <= C; c++) {
              if ($c < 0 || $c > 1) { printf "row %d: column %d is %s\n", n, c, $c; bad = 1; exit 1 }
              s += $c
          }
          if (s - 1 > 1e-12 || 1 - s > 1e-12) { printf "row %d: sum %.17g\n", n, s; bad = 1; exit 1 } }
        END { if (!bad && !n) { print "no rows"; exit 1 } }' "$1"
    assert_success
}

# The last column of every row of FILE is the class (from the list NAMES, in
# the model's order) whose probability in columns 1..C is largest.
assert_label_argmax() {
    run awk -v C="$2" -v names="$3" '
        BEGIN { split(names, nm, " ") }
        /^#/ { next }
        { n++; k = 1
          for (c = 2; c <= C; c++) if ($c > $k) k = c
          if ($NF != nm[k]) { printf "row %d: label %s, most probable %s\n", n, $NF, nm[k]; exit 1 } }' "$1"
    assert_success
}

# The training lines of a model file (after 'training N' and its comment).
model_training() {
    awk '/^training / { t = 1; next } t && !/^#/' "$1"
}

# Normalise the rows of the pasted binary probabilities (one column each).
normalise_rows() {
    awk '{ s = 0; for (j = 1; j <= NF; j++) s += $j
           for (j = 1; j <= NF; j++) printf "%s%.17g", (j > 1 ? " " : ""), $j / s; print "" }' "$@"
}

# ---- fitting: labels and the model file -------------------------------------------------------

@test "multiclass: three word classes fit multiclass Laplace with the softmax likelihood, and say so" {
    # the fixture: 30 training and 30 test cases, 10 of each species in each
    assert_shape X3.txt 30 4
    assert_shape Xt3.txt 30 4
    assert_equal "$(sort y3.txt | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" "setosa:10 versicolor:10 virginica:10 "
    assert_equal "$(sort yt3.txt | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')" "setosa:10 versicolor:10 virginica:10 "
    run --separate-stderr gpc-fit -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    assert_success
    [ -z "$output" ] || fail "data on standard output with -m: $output"
    [[ "$stderr" == *"gpc-fit: 3 classes (setosa versicolor virginica): multiclass Laplace with the softmax likelihood"* ]] ||
        fail "stderr: $stderr"
    assert_equal "$(model_value out/m.txt method)" laplace
    assert_equal "$(model_value out/m.txt likelihood)" softmax
    run grep -x "classes $CLASSES" out/m.txt
    assert_success
    run grep -x '# y f1 f2 f3 x1..x4' out/m.txt
    assert_success
    assert_equal "$(model_value out/m.txt training)" 30
    model_training out/m.txt > tr.txt
    assert_shape tr.txt 30 8
    # y is the class number 1..3 of each label, then the inputs as given
    assert_equal "$(cut -d' ' -f1 tr.txt)" "$(cat y123.txt)"
    cut -d' ' -f5-8 tr.txt > x.txt
    assert_matrices_close x.txt X3.txt 1e-15
}

@test "multiclass: the latent mode in the model solves f = K (y - softmax(f)), with K from gpc-kernel" {
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    gpc-kernel -k se -p "$HP" X3.txt > K.txt
    model_training out/m.txt > tr.txt
    # the stationarity condition of the Laplace mode, class by class; with one
    # kernel for all classes it also makes every row of f sum to 0
    run awk 'function abs(x) { return x < 0 ? -x : x }
        NR == FNR { n++; for (j = 1; j <= NF; j++) K[n, j] = $j; next }
        { i++; y[i] = $1; s = 0; for (c = 1; c <= 3; c++) { f[i, c] = $(1 + c); s += exp($(1 + c)) }
          for (c = 1; c <= 3; c++) a[i, c] = (y[i] == c) - exp(f[i, c]) / s
          if (abs(f[i, 1] + f[i, 2] + f[i, 3]) > 1e-9) { print "row " i ": f sums to " f[i, 1] + f[i, 2] + f[i, 3]; exit 1 } }
        END { if (i != n) { print i " training rows, K is " n " x " n; exit 1 }
              for (r = 1; r <= n; r++) for (c = 1; c <= 3; c++) {
                  g = 0; for (j = 1; j <= n; j++) g += K[r, j] * a[j, c]
                  if (abs(g - f[r, c]) > 1e-9 * (1 + abs(g))) { printf "f[%d,%d] = %.17g, K (y - pi) = %.17g\n", r, c, f[r, c], g; exit 1 } } }' \
        K.txt tr.txt
    assert_success
    # and the evidence in the model is gpc-evidence's at the same point
    run gpc-evidence -q -k se -p "$HP" -n X3.txt y3.txt
    assert_success
    assert_close "$output" "$(model_value out/m.txt log_evidence)" 1e-12
}

@test "multiclass: codes 1..3 or any codes (3 5 7) make the same model as words, but for the classes line" {
    gpc-fit -q -k se -O none -p "$HP" -m out/mw.txt X3.txt y3.txt
    gpc-fit -q -k se -O none -p "$HP" -m out/m1.txt X3.txt y123.txt
    gpc-fit -q -k se -O none -p "$HP" -m out/m3.txt X3.txt y357.txt
    run grep -x 'classes 1 2 3' out/m1.txt
    assert_success
    run grep -x 'classes 3 5 7' out/m3.txt
    assert_success
    grep -v '^classes ' out/mw.txt > a.txt
    grep -v '^classes ' out/m1.txt > b.txt
    grep -v '^classes ' out/m3.txt > c.txt
    assert_files_equal a.txt b.txt
    assert_files_equal a.txt c.txt
    # every line but the classes line was compared
    assert_equal "$(wc -l < a.txt)" "$(($(wc -l < out/mw.txt) - 1))"
}

@test "multiclass: classes sort numbers by value and words by bytes, and the fit does not depend on the order" {
    # setosa, versicolor, virginica renamed so that the order changes
    awk '{ print ($1 == "setosa") ? 10 : ($1 == "versicolor") ? 9 : 100 }' y3.txt > yn.txt
    awk '{ print ($1 == "setosa") ? "b" : ($1 == "versicolor") ? "B" : "a" }' y3.txt > yw.txt
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    gpc-fit -q -k se -O none -p "$HP" -m out/mn.txt X3.txt yn.txt
    gpc-fit -q -k se -O none -p "$HP" -m out/mw.txt X3.txt yw.txt
    run grep -x 'classes 9 10 100' out/mn.txt
    assert_success
    run grep -x 'classes B a b' out/mw.txt
    assert_success
    for m in mn mw; do
        assert_close "$(model_value out/$m.txt log_evidence)" "$(model_value out/m.txt log_evidence)" 1e-10
    done
    # the same latent means and probabilities, in the permuted columns
    gpc-predict -m out/m.txt -c mean,p Xt3.txt > p.txt
    gpc-predict -m out/mn.txt -c mean,p Xt3.txt > pn.txt
    gpc-predict -m out/mw.txt -c mean,p Xt3.txt > pw.txt
    assert_equal "$(head -n 1 pn.txt)" "# mean.9 mean.10 mean.100 p.9 p.10 p.100"
    assert_equal "$(head -n 1 pw.txt)" "# mean.B mean.a mean.b p.B p.a p.b"
    # columns of classes (setosa versicolor virginica) in each order
    data_rows p.txt | cut -d' ' -f1-3 > mean.txt
    data_rows pn.txt | awk '{ print $2, $1, $3 }' > mean-n.txt
    data_rows pw.txt | awk '{ print $3, $1, $2 }' > mean-w.txt
    assert_matrices_close mean.txt mean-n.txt 1e-8
    assert_matrices_close mean.txt mean-w.txt 1e-8
    # p is a quasi-Monte Carlo integral along the covariance's own axes: equal
    # to well within its accuracy
    data_rows p.txt | cut -d' ' -f4-6 > pr.txt
    data_rows pn.txt | awk '{ print $5, $4, $6 }' > pr-n.txt
    data_rows pw.txt | awk '{ print $6, $4, $5 }' > pr-w.txt
    assert_matrices_close pr.txt pr-n.txt 1e-3
    assert_matrices_close pr.txt pr-w.txt 1e-3
}

# ---- predictions ---------------------------------------------------------------------------

@test "multiclass: gpc-predict writes p of each class and the label under a header; rows sum to 1" {
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    run gpc-predict -m out/m.txt Xt3.txt
    assert_success
    echo "$output" > p.txt
    assert_line --index 0 '# p.setosa p.versicolor p.virginica label'
    assert_line --index 1 '# label: 1 setosa, 2 versicolor, 3 virginica'
    assert_shape p.txt 30 4
    assert_probs p.txt 3
    assert_label_argmax p.txt 3 "setosa versicolor virginica"
    # all three classes are predicted, so the label is checked for each
    assert_equal "$(data_rows p.txt | cut -d' ' -f4 | sort -u | tr '\n' ' ')" "setosa versicolor virginica "
    # numeric classes are written as their numbers, without a '# label:' line
    gpc-fit -q -k se -O none -p "$HP" -m out/m357.txt X3.txt y357.txt
    gpc-predict -m out/m357.txt Xt3.txt > p357.txt
    assert_equal "$(head -n 1 p357.txt)" '# p.3 p.5 p.7 label'
    assert_equal "$(grep -c '^#' p357.txt)" 1
    assert_probs p357.txt 3
    assert_label_argmax p357.txt 3 "3 5 7"
}

@test "multiclass: -c p,plugin,mean,var,cov,label: named columns, var the diagonal of cov, plugin softmax(mean)" {
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    gpc-predict -m out/m.txt -c p,plugin,mean,var,cov,label Xt3.txt > all.txt
    want='#'
    for col in p plugin mean var; do
        for c in $CLASSES; do want="$want $col.$c"; done
    done
    for a in $CLASSES; do
        for b in $CLASSES; do want="$want cov.$a.$b"; done
    done
    assert_equal "$(head -n 1 all.txt)" "$want label"
    assert_shape all.txt 30 22
    assert_probs all.txt 3
    assert_label_argmax all.txt 3 "setosa versicolor virginica"
    data_rows all.txt | cut -d' ' -f4-6 > plugin.txt
    assert_probs plugin.txt 3
    run awk 'function abs(x) { return x < 0 ? -x : x }
        /^#/ { next }
        { n++
          # plugin = softmax(mean)
          s = 0; for (c = 1; c <= 3; c++) s += exp($(6 + c))
          for (c = 1; c <= 3; c++) if (abs($(3 + c) - exp($(6 + c)) / s) > 1e-12) { print "row " n ": plugin " c; exit 1 }
          # var = diag(cov) exactly; cov symmetric, its diagonal positive
          for (c = 1; c <= 3; c++) {
              if ($(9 + c) != $(12 + 4 * (c - 1) + 1)) { print "row " n ": var " c " is not cov[" c "," c "]"; exit 1 }
              if ($(9 + c) <= 0) { print "row " n ": var " c " = " $(9 + c); exit 1 }
              for (e = 1; e <= 3; e++) if ($(12 + 3 * (c - 1) + e) != $(12 + 3 * (e - 1) + c)) { print "row " n ": cov not symmetric"; exit 1 }
          } }' all.txt
    assert_success
    # --plugin: p is the plug-in probability, and the label its argmax
    gpc-predict -m out/m.txt --plugin -c p,label Xt3.txt > pl.txt
    data_rows pl.txt | cut -d' ' -f1-3 > pl3.txt
    assert_files_equal pl3.txt plugin.txt
    assert_label_argmax pl.txt 3 "setosa versicolor virginica"
}

@test "multiclass: p is E[softmax(f)] under the latent Gaussian of mean and cov (Monte Carlo here)" {
    # a large signal variance, so that p and the plug-in probability differ
    gpc-fit -q -k se -O none -p log_v0=2,log_w=-1 -m out/m.txt X3.txt y3.txt
    gpc-predict -m out/m.txt -c p,plugin,mean,cov Xt3.txt > all.txt
    data_rows all.txt | sed -n '1p;11p;21p' > rows.txt
    # 60000 draws f = mean + L z (L the Cholesky factor of cov), seeded: the
    # standard error is below 2e-3
    run awk -v N=60000 'function abs(x) { return x < 0 ? -x : x }
        BEGIN { srand(17) }
        { for (c = 1; c <= 3; c++) { p[c] = $c; pl[c] = $(3 + c); mu[c] = $(6 + c); m[c] = 0 }
          for (a = 1; a <= 3; a++) for (b = 1; b <= a; b++) {
              s = $(9 + 3 * (a - 1) + b); for (k = 1; k < b; k++) s -= L[a, k] * L[b, k]
              L[a, b] = (a == b) ? sqrt(s) : s / L[b, b] }
          for (t = 0; t < N; t++) {
              for (k = 1; k <= 3; k++) { u = rand(); while (u == 0) u = rand()
                                         z[k] = sqrt(-2 * log(u)) * cos(6.283185307179586 * rand()) }
              s = 0
              for (a = 1; a <= 3; a++) { f = mu[a]; for (k = 1; k <= a; k++) f += L[a, k] * z[k]; e[a] = exp(f); s += e[a] }
              for (a = 1; a <= 3; a++) m[a] += e[a] / s }
          far = 0
          for (c = 1; c <= 3; c++) {
              if (abs(m[c] / N - p[c]) > 3e-3) { printf "row %d class %d: p %.6f, Monte Carlo %.6f\n", NR, c, p[c], m[c] / N; exit 1 }
              if (abs(pl[c] - p[c]) > 0.02) far = 1 }
          if (!far) { print "row " NR ": plug-in too close to p for the test to tell them apart"; exit 1 } }' rows.txt
    assert_success
}

@test "multiclass: -F npy writes the same numbers without the header lines" {
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    gpc-predict -m out/m.txt Xt3.txt > p.txt
    gpc-predict -m out/m.txt -F npy Xt3.txt > p.npy
    assert_npy p.npy '(30, 4)'
    run grep -c -a 'setosa' p.npy
    assert_failure 1
    # back to text through gpc-scale with identity statistics
    printf '0 0 0 0\n1 1 1 1\n' > id4.txt
    gpc-scale -r id4.txt p.npy > back.txt
    # .npy holds the classes' numbers 1..C where the text names them
    data_rows p.txt | sed 's/ setosa$/ 1/; s/ versicolor$/ 2/; s/ virginica$/ 3/' > want.txt
    assert_matrices_close back.txt want.txt 0
    gpc-predict -m out/m.txt -c cov -F npy Xt3.txt > cov.npy
    assert_npy cov.npy '(30, 9)'
}

@test "multiclass: fits and predictions are deterministic (softmax, per-class, one-vs-rest)" {
    for opts in "" "--per-class" "--multiclass=ovr" "--multiclass=ovr -M ep"; do
        gpc-fit -q -k se --max-iter=3 $opts -m out/a.txt X3.txt y3.txt 2> /dev/null
        gpc-fit -q -k se --max-iter=3 $opts -m out/b.txt X3.txt y3.txt 2> /dev/null
        assert_files_equal out/a.txt out/b.txt
        gpc-predict -m out/a.txt -c p,plugin,mean,cov,label Xt3.txt > pa.txt
        gpc-predict -m out/a.txt -c p,plugin,mean,cov,label Xt3.txt > pb.txt
        assert_files_equal pa.txt pb.txt
        assert_probs pa.txt 3
    done
}

@test "multiclass: --loo=exact equals explicit refits without each case; --loo (cavity) is a usage error" {
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    gpc-predict -m out/m.txt --loo=exact -c p,mean > loo.txt
    assert_shape loo.txt 30 6
    assert_probs loo.txt 3
    for i in $(seq 1 30); do
        awk -v i="$i" 'NR != i' X3.txt > Xi.txt
        awk -v i="$i" 'NR != i' y3.txt > yi.txt
        sed -n "${i}p" X3.txt > xi.txt
        gpc-fit -q -k se -O none -p "$HP" -m out/mi.txt Xi.txt yi.txt
        gpc-predict -m out/mi.txt -c p,mean xi.txt > pi.txt
        data_rows pi.txt
    done > refits.txt
    assert_matrices_close loo.txt refits.txt 1e-10
    # multiclass Laplace has no cavity estimate
    for loo in --loo --loo=cavity; do
        run gpc-predict -m out/m.txt $loo -o out/p.txt
        assert_failure 2
        assert_output --partial "--loo=exact"
    done
    rm out/m.txt out/mi.txt
    assert_dir_empty out
}

# ---- per-class hyperparameters ------------------------------------------------------------------

@test "multiclass --per-class: names log_v0.c1 ..., kernel 'se:per-class=3'; equal values give the shared fit" {
    gpc-kernel -k se:per-class=3 -L X3.txt > names.txt
    assert_equal "$(cut -d' ' -f1 names.txt | tr '\n' ' ')" "log_v0.c1 log_w.c1 log_v0.c2 log_w.c2 log_v0.c3 log_w.c3 "
    same='log_v0.c1=1,log_w.c1=-1,log_v0.c2=1,log_w.c2=-1,log_v0.c3=1,log_w.c3=-1'
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    gpc-fit -q -k se -O none --per-class -p "$same" -m out/mp.txt X3.txt y3.txt
    assert_equal "$(model_value out/mp.txt kernel)" 'se:per-class=3'
    assert_equal "$(model_params out/mp.txt | tr '\n' ' ')" \
        "log_v0.c1 1 log_w.c1 -1 log_v0.c2 1 log_w.c2 -1 log_v0.c3 1 log_w.c3 -1 "
    assert_close "$(model_value out/mp.txt log_evidence)" "$(model_value out/m.txt log_evidence)" 1e-12
    gpc-predict -m out/m.txt -c mean,var,plugin Xt3.txt > p.txt
    gpc-predict -m out/mp.txt -c mean,var,plugin Xt3.txt > pp.txt
    assert_matrices_close p.txt pp.txt 1e-10
    # the spec written directly in -k is the same model
    gpc-fit -q -k 'se:per-class=3' -O none -p "$same" -m out/mk.txt X3.txt y3.txt
    assert_files_equal out/mp.txt out/mk.txt
}

@test "multiclass --per-class: the mode solves f_c = K_c (y_c - pi_c), each class with its own kernel" {
    gpc-fit -q -k se -O none --per-class -p "$PC" -m out/m.txt X3.txt y3.txt
    gpc-kernel -k se -p "$PC1" X3.txt > K1.txt
    gpc-kernel -k se -p "$PC2" X3.txt > K2.txt
    gpc-kernel -k se -p "$PC3" X3.txt > K3.txt
    model_training out/m.txt > tr.txt
    run awk 'function abs(x) { return x < 0 ? -x : x }
        FILENAME ~ /^K/ { k = substr(FILENAME, 2, 1); if (FNR == 1) n = 0; n++; for (j = 1; j <= NF; j++) K[k, n, j] = $j; next }
        { i++; y[i] = $1; s = 0; for (c = 1; c <= 3; c++) { f[i, c] = $(1 + c); s += exp($(1 + c)) }
          for (c = 1; c <= 3; c++) a[i, c] = (y[i] == c) - exp(f[i, c]) / s }
        END { if (i != n) { print i " training rows, K is " n " x " n; exit 1 }
              for (r = 1; r <= n; r++) for (c = 1; c <= 3; c++) {
                  g = 0; for (j = 1; j <= n; j++) g += K[c, r, j] * a[j, c]
                  if (abs(g - f[r, c]) > 1e-9 * (1 + abs(g))) { printf "f[%d,%d] = %.17g, K_c (y - pi) = %.17g\n", r, c, f[r, c], g; exit 1 } } }' \
        K1.txt K2.txt K3.txt tr.txt
    assert_success
}

@test "multiclass --per-class: -p sets one class's value, --fix keeps one while the others are optimised" {
    gpc-kernel -k se:per-class=3 -L X3.txt > defaults.txt
    gpc-fit -q -k se -O none --per-class -p log_v0.c2=1 -m out/m.txt X3.txt y3.txt
    awk '$1 == "log_v0.c2" { $2 = 1 } { print }' defaults.txt > want.txt
    model_params out/m.txt > got.txt
    assert_files_equal got.txt want.txt
    # gpc-kernel -L reads the same setting
    gpc-kernel -k se:per-class=3 -p log_v0.c2=1 -L X3.txt > listed.txt
    assert_files_equal listed.txt want.txt
    # --fix: log_v0.c1 stays at its given value, every other one moves, and
    # the evidence rises
    start='log_v0.c1=0.5,log_w.c1=-1,log_v0.c2=0.5,log_w.c2=-1,log_v0.c3=0.5,log_w.c3=-1'
    gpc-fit -q -k se --per-class -p "$start" --fix=log_v0.c1 --max-iter=3 -P out/fit.txt -m out/mf.txt \
        X3.txt y3.txt 2> /dev/null
    run awk '$1 == "log_v0.c1" && $2 != 0.5 { print "log_v0.c1 moved to " $2; exit 1 }
             $1 != "log_v0.c1" && ($2 == 0.5 || $2 == -1) { print $1 " did not move"; exit 1 }' out/fit.txt
    assert_success
    assert_equal "$(wc -l < out/fit.txt)" 6
    run gpc-evidence -q -k se --per-class -p "$start" -n X3.txt y3.txt
    assert_success
    num_lt "$output" "$(model_value out/mf.txt log_evidence)"
    # the model's evidence is gpc-evidence's at the fitted values
    run gpc-evidence -q -k se --per-class -H out/fit.txt -n X3.txt y3.txt
    assert_success
    assert_close "$output" "$(model_value out/mf.txt log_evidence)" 1e-9
}

@test "multiclass --per-class: gpc-kernel refuses a per-class spec for matrices but lists its names" {
    for args in "" "-d" "-C" "-D log_v0.c1"; do
        run gpc-kernel -k se:per-class=3 $args -o out/K.txt X3.txt
        assert_failure 2
        assert_output --partial "per-class"
    done
    assert_dir_empty out
    run gpc-kernel -k ard:per-class=3 -L X3.txt
    assert_success
    assert_equal "${#lines[@]}" 15
    assert_line --index 0 'log_v0.c1 0'
    assert_line --index 5 'log_v0.c2 0'
    assert_line --index 14 'log_w4.c3 -2'
}

@test "multiclass --per-class: with a binary method or another number of classes it is status 2" {
    for tool in "gpc-fit -q -O none -m out/m.txt" "gpc-evidence -q -o out/e.txt" "gpc-hmc -q -n 2 -L 3 -o out/c.txt"; do
        # two classes with the binary logistic likelihood
        run $tool -k se --per-class -l logistic X2.txt y2.txt
        assert_failure 2
        assert_output --partial "per-class hyperparameters need a multiclass method"
        # three classes, a kernel for four
        run $tool -k se:per-class=4 X3.txt y3.txt
        assert_failure 2
        assert_output --partial "has hyperparameters for 4 classes, the labels have 3"
    done
    run gpc-fit -q -O none -k se --per-class -M ep -l probit -m out/m.txt X3.txt y3.txt
    assert_failure 2
    run gpc-evidence -q -k se:per-class=3 -M ep -l probit -o out/e.txt X3.txt y3.txt
    assert_failure 2
    assert_dir_empty out
}

# ---- one-vs-rest ---------------------------------------------------------------------------

@test "multiclass --multiclass=ovr: the evidence and its gradient are the sums of the binary ones (laplace, ep)" {
    for method in laplace ep; do
        run gpc-evidence -q -k se -p "$HP" -M "$method" --multiclass=ovr X3.txt y3.txt
        assert_success
        echo "$output" > ovr.txt
        assert_shape ovr.txt 1 3
        for c in $CLASSES; do
            gpc-evidence -q -k se -p "$HP" -M "$method" X3.txt "yb-$c.txt"
        done > bin.txt
        assert_shape bin.txt 3 3
        awk '{ for (j = 1; j <= NF; j++) s[j] += $j }
             END { printf "%.17g %.17g %.17g\n", s[1], s[2], s[3] }' bin.txt > sum.txt
        assert_matrices_close ovr.txt sum.txt 1e-10
    done
}

@test "multiclass --multiclass=ovr --per-class: the gradient is the binary gradients one after another" {
    for method in laplace ep; do
        run gpc-evidence -q -k se --per-class -p "$PC" -M "$method" --multiclass=ovr X3.txt y3.txt
        assert_success
        echo "$output" > ovr.txt
        assert_shape ovr.txt 1 7
        gpc-evidence -q -k se -p "$PC1" -M "$method" X3.txt yb-setosa.txt > b1.txt
        gpc-evidence -q -k se -p "$PC2" -M "$method" X3.txt yb-versicolor.txt > b2.txt
        gpc-evidence -q -k se -p "$PC3" -M "$method" X3.txt yb-virginica.txt > b3.txt
        cat b1.txt b2.txt b3.txt |
            awk '{ v += $1; g = g sprintf(" %.17g %.17g", $2, $3) } END { printf "%.17g%s\n", v, g }' > want.txt
        assert_matrices_close ovr.txt want.txt 1e-10
    done
}

@test "multiclass --multiclass=ovr: laplace-ovr, ep-ovr, naive-ovr; latent moments of the binary fits, p theirs normalised" {
    for method in laplace ep naive; do
        gpc-fit -q -k se -O none -p "$HP" -M "$method" --multiclass=ovr -m out/m.txt X3.txt y3.txt
        assert_equal "$(model_value out/m.txt method)" "$method-ovr"
        run grep -x "classes $CLASSES" out/m.txt
        assert_success
        for c in $CLASSES; do
            gpc-fit -q -k se -O none -p "$HP" -M "$method" -m "out/b-$c.txt" X3.txt "yb-$c.txt"
            gpc-predict -m "out/b-$c.txt" -c p,mean,var Xt3.txt > "b-$c.txt"
        done
        gpc-predict -m out/m.txt -c p,mean,var,cov,label Xt3.txt > ovr.txt
        assert_equal "$(head -n 1 ovr.txt | cut -d' ' -f1-4)" '# p.setosa p.versicolor p.virginica'
        assert_probs ovr.txt 3
        assert_label_argmax ovr.txt 3 "setosa versicolor virginica"
        for k in 1 2 3; do
            paste -d' ' b-setosa.txt b-versicolor.txt b-virginica.txt | grep -v '^#' | cut -d' ' -f$k,$((k + 3)),$((k + 6)) > bk.txt
            if [ "$k" = 1 ]; then normalise_rows bk.txt > want.txt; else cp bk.txt want.txt; fi
            data_rows ovr.txt | cut -d' ' -f$((3 * k - 2))-$((3 * k)) > got.txt
            assert_matrices_close got.txt want.txt 1e-12
        done
        # independent classifiers: the latent covariance is diagonal
        run awk '/^#/ { next } { for (c = 1; c <= 3; c++) for (e = 1; e <= 3; e++)
                     if (c != e && $(9 + 3 * (c - 1) + e) != 0) { print "row " NR ": cov " c "," e " = " $(9 + 3 * (c - 1) + e); exit 1 } }' ovr.txt
        assert_success
    done
    # the model's evidence is the sum of the binary models' (laplace and ep;
    # naive mean field has none)
    for method in laplace ep; do
        gpc-fit -q -k se -O none -p "$HP" -M "$method" --multiclass=ovr -m out/m.txt X3.txt y3.txt
        for c in $CLASSES; do
            gpc-fit -q -k se -O none -p "$HP" -M "$method" -m "out/b-$c.txt" X3.txt "yb-$c.txt"
            model_value "out/b-$c.txt" log_evidence
        done > ev.txt
        assert_close "$(awk '{ s += $1 } END { printf "%.17g", s }' ev.txt)" "$(model_value out/m.txt log_evidence)" 1e-10
    done
}

@test "multiclass --multiclass=ovr: the laplace-ovr latent mode is the binary modes side by side" {
    gpc-fit -q -k se -O none -p "$HP" --multiclass=ovr -m out/m.txt X3.txt y3.txt
    run grep -x '# y f1 f2 f3 x1..x4' out/m.txt
    assert_success
    for c in $CLASSES; do
        gpc-fit -q -k se -O none -p "$HP" -m "out/b-$c.txt" X3.txt "yb-$c.txt"
        model_training "out/b-$c.txt" | cut -d' ' -f2 > "f-$c.txt"
    done
    model_training out/m.txt > tr.txt
    assert_equal "$(cut -d' ' -f1 tr.txt)" "$(cat y123.txt)"
    cut -d' ' -f2-4 tr.txt > f.txt
    paste -d' ' f-setosa.txt f-versicolor.txt f-virginica.txt > want.txt
    assert_matrices_close f.txt want.txt 1e-12
}

@test "multiclass --multiclass=ovr with two classes is status 2: it would be the binary classifier twice" {
    for method in laplace ep; do
        run gpc-fit -q -k se -O none -p "$HP" -M "$method" --multiclass=ovr -m out/o.txt X2.txt y2.txt
        assert_failure 2
        assert_output --partial "--multiclass=ovr with two classes (versicolor virginica) is the binary classifier twice"
        run gpc-evidence -k se -p "$HP" -M "$method" --multiclass=ovr X2.txt y2.txt
        assert_failure 2
    done
    assert_dir_empty out
}

@test "multiclass --multiclass=softmax forces the joint model with two classes; bad combinations are status 2" {
    gpc-fit -q -k se -O none -p "$HP" --multiclass=softmax -m out/m.txt X2.txt y2.txt
    assert_equal "$(model_value out/m.txt method)" laplace
    assert_equal "$(model_value out/m.txt likelihood)" softmax
    run grep -x -e 'classes versicolor virginica' -e '# y f1 f2 x1..x4' out/m.txt
    assert_success
    assert_equal "${#lines[@]}" 2
    gpc-predict -m out/m.txt Xt3.txt > p.txt
    # two classes predict as a binary model does: p of the later class
    assert_equal "$(head -n 1 p.txt)" '# p mean var label'
    run awk '/^#/ { next } $1 < 0 || $1 > 1 || ($1 >= 0.5) != ($4 == "virginica") { print; exit 1 }' p.txt
    assert_success
    rm out/m.txt
    for tool in "gpc-fit -q -O none -m out/m.txt" "gpc-evidence -q -o out/e.txt"; do
        for data in "X3.txt y3.txt" "X2.txt y2.txt"; do
            run $tool -k se -M ep --multiclass=softmax $data
            assert_failure 2
            assert_output --partial "--multiclass=softmax is multiclass Laplace"
            run $tool -k se --multiclass=ovr -l softmax $data
            assert_failure 2
            if [ "$data" = "X3.txt y3.txt" ]; then
                assert_output --partial "one-vs-rest takes a binary method"
            else
                assert_output --partial "with two classes (versicolor virginica)"
            fi
            run $tool -k se --multiclass=bogus $data
            assert_failure 2
            assert_output --partial "'bogus' is not softmax or ovr"
        done
    done
    assert_dir_empty out
}

@test "multiclass: a third class with a binary method is status 2 naming the classes, no output left" {
    # gpc-evidence has no naive mean field (no evidence), gpc-hmc only Laplace
    for run in "gpc-fit -q -O none -m out/m.txt -M ep -l probit" "gpc-fit -q -O none -m out/m.txt -M naive" \
               "gpc-fit -q -O none -m out/m.txt -l logistic" "gpc-fit -q -O none -m out/m.txt -l probit" \
               "gpc-evidence -q -o out/e.txt -M ep -l probit" "gpc-evidence -q -o out/e.txt -l logistic" \
               "gpc-evidence -q -o out/e.txt -l probit" "gpc-hmc -q -n 2 -L 3 -o out/c.txt -l logistic" \
               "gpc-hmc -q -n 2 -L 3 -o out/c.txt -l probit"; do
        run $run -k se X3.txt y3.txt
        assert_failure 2
        assert_output --partial "${run%% *}: the labels have 3 classes (setosa versicolor virginica), but"
    done
    assert_dir_empty out
}

# ---- two classes: softmax is the binary logistic model ----------------------------------------

@test "multiclass: softmax on two classes is binary logistic with twice the signal variance" {
    # f2 - f1 of two independent GPs with variance v0 is a GP with 2 v0, and
    # softmax gives the later class sigma(f2 - f1)
    a=0.5
    a2=$(awk -v a="$a" 'BEGIN { printf "%.17g", a + log(2) }')
    gpc-fit -q -k se -O none -l softmax -p "log_v0=$a,log_w=-1" -m out/s.txt X2.txt y2.txt
    gpc-fit -q -k se -O none -l logistic -p "log_v0=$a2,log_w=-1" -m out/b.txt X2.txt y2.txt
    assert_equal "$(model_value out/s.txt likelihood)" softmax
    assert_equal "$(model_value out/b.txt likelihood)" logistic
    assert_close "$(model_value out/s.txt log_evidence)" "$(model_value out/b.txt log_evidence)" 1e-10
    gpc-predict -m out/s.txt -c p Xt3.txt > s.txt
    gpc-predict -m out/b.txt -c p Xt3.txt > b.txt
    data_rows s.txt | cut -d' ' -f2 > s2.txt
    assert_matrices_close s2.txt b.txt 1e-8
    # and not trivially: the probabilities spread over (0, 1)
    run awk '$1 < 0.3 { lo = 1 } $1 > 0.7 { hi = 1 } $1 > 0.3 && $1 < 0.7 { mid = 1 } END { exit !(lo && hi && mid) }' b.txt
    assert_success
}

# ---- gpc-evidence: gradients against finite differences -------------------------------------------

@test "multiclass gpc-evidence: the gradient (kernels se and ard) agrees with central differences of the value" {
    evidence_fd X3.txt y3.txt se "$HP"
    evidence_fd X3.txt y3.txt ard 'log_v0=0.5,log_w1=-1.5,log_w2=-2.5,log_w3=-1,log_w4=-0.5'
}

@test "multiclass gpc-evidence --per-class: the gradient agrees with central differences, for every class" {
    evidence_fd X3.txt y3.txt se:per-class=3 "$PC"
    evidence_fd X3.txt y3.txt ard:per-class=3 'log_v0.c1=0.5,log_w1.c1=-1.5,log_w2.c1=-2.5,log_w3.c1=-1,log_w4.c1=-0.5,log_v0.c2=1,log_w1.c2=-2,log_w2.c2=-1,log_w3.c2=-1.5,log_w4.c2=-1,log_v0.c3=0,log_w1.c3=-1,log_w2.c3=-2,log_w3.c3=-0.5,log_w4.c3=-1.5'
    # the --per-class option gives the same row as the spec
    gpc-evidence -q -k se -p "$PC" --per-class X3.txt y3.txt > a.txt
    gpc-evidence -q -k se:per-class=3 -p "$PC" X3.txt y3.txt > b.txt
    assert_files_equal a.txt b.txt
}

# ---- gpc-hmc and predictions from a chain -----------------------------------------------------------

@test "multiclass gpc-hmc: softmax by default; 2 iterations extended by 2 equal 4, byte for byte" {
    for opts in "" "--per-class"; do
        rm -f out/c4.txt out/c2.txt
        gpc-hmc -q -k se $opts -n 4 -L 3 -o out/c4.txt X3.txt y3.txt
        gpc-hmc -q -k se $opts -n 2 -L 3 -o out/c2.txt X3.txt y3.txt
        run grep -x '# likelihood softmax' out/c4.txt
        assert_success
        assert_equal "$(grep -v '^#' out/c4.txt | grep -vc '^iteration')" 4
        gpc-hmc -q -x out/c2.txt -n 2 X3.txt y3.txt
        assert_files_equal out/c2.txt out/c4.txt
    done
    # the per-class chain samples all six hyperparameters
    run grep '^iteration' out/c4.txt
    assert_success
    assert_output --partial "log_v0.c1 log_w.c1 log_v0.c2 log_w.c2 log_v0.c3 log_w.c3"
}

@test "multiclass gpc-predict --chain: rows sum to 1, and p is the mean of the samples' predictions" {
    gpc-hmc -q -k se -n 4 -L 3 --adapt=1 -o out/c.txt X3.txt y3.txt
    gpc-fit -q -k se -O none -m out/m.txt X3.txt y3.txt
    gpc-predict -m out/m.txt --chain out/c.txt Xt3.txt > all.txt
    assert_equal "$(head -n 1 all.txt)" '# p.setosa p.versicolor p.virginica label'
    assert_shape all.txt 30 4
    assert_probs all.txt 3
    assert_label_argmax all.txt 3 "setosa versicolor virginica"
    # with the first two samples burnt: the average of two fits
    gpc-predict -m out/m.txt --chain out/c.txt -b 2 -c p Xt3.txt > chain.txt
    for it in 3 4; do
        params=$(awk -v it="$it" '$1 == "iteration" { for (j = 1; j <= NF; j++) col[$j] = j; next }
                                  !/^#/ && $1 == it { printf "log_v0=%s,log_w=%s", $col["log_v0"], $col["log_w"] }' out/c.txt)
        [ -n "$params" ] || fail "no iteration $it in the chain"
        gpc-fit -q -k se -O none -p "$params" -m "out/m$it.txt" X3.txt y3.txt
        gpc-predict -m "out/m$it.txt" -c p Xt3.txt > "p$it.txt"
    done
    data_rows p3.txt > a.txt
    data_rows p4.txt > b.txt
    paste -d' ' a.txt b.txt | awk '{ printf "%.17g %.17g %.17g\n", ($1 + $4) / 2, ($2 + $5) / 2, ($3 + $6) / 2 }' > want.txt
    assert_matrices_close chain.txt want.txt 1e-12
}

# ---- gpc-score -----------------------------------------------------------------------------------

@test "multiclass gpc-score: without -m, labels of 3 classes read columns 1..3: errors, mlpp and Brier" {
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    gpc-predict -m out/m.txt Xt3.txt > p.txt
    run --separate-stderr gpc-score --precise -t p.txt yt3.txt
    assert_success
    echo "$output" > got.txt
    data_rows p.txt > rows.txt
    awk 'NR == FNR { y[NR] = ($1 == "setosa") ? 1 : ($1 == "versicolor") ? 2 : 3; next }
         { n++; k = 1; for (c = 2; c <= 3; c++) if ($c > $k) k = c
           if (k != y[n]) e++
           m += log($(y[n])); for (c = 1; c <= 3; c++) b += ($c - (c == y[n])) ^ 2 }
         END { printf "%d %d %.17g %.17g %.17g\n", e, n, e / n, m / n, b / n }' yt3.txt rows.txt > want.txt
    assert_equal "$(cut -d' ' -f1-2 got.txt)" "$(cut -d' ' -f1-2 want.txt)"
    assert_matrices_close got.txt want.txt 1e-12
    # words against the numeric model's predictions: the same numbers
    gpc-fit -q -k se -O none -p "$HP" -m out/m357.txt X3.txt y357.txt
    gpc-predict -m out/m357.txt Xt3.txt > p357.txt
    awk '{ print ($1 == "setosa") ? 3 : ($1 == "versicolor") ? 5 : 7 }' yt3.txt > yt357.txt
    run --separate-stderr gpc-score --precise -t p357.txt yt357.txt
    assert_success
    assert_equal "$output" "$(cat got.txt)"
}

@test "multiclass gpc-score -m: a test set without a class has a row of zeros; a foreign label is status 3" {
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    # the test cases of setosa and virginica only
    awk '$1 != "versicolor"' yt3.txt > y2t.txt
    paste -d' ' yt3.txt Xt3.txt | awk '$1 != "versicolor"' | cut -d' ' -f2- > X2t.txt
    gpc-predict -m out/m.txt X2t.txt > p.txt
    run --separate-stderr gpc-score -c -m out/m.txt p.txt y2t.txt
    assert_success
    assert_line --index 0 --partial "of 20 ("
    assert_line --index 1 '# true\predicted setosa versicolor virginica'
    assert_line --index 3 'versicolor 0 0 0'
    # the other rows count the labels (argmax) of each true class
    data_rows p.txt > rows.txt
    for t in setosa virginica; do
        want=$(awk -v t="$t" 'NR == FNR { y[NR] = $1; next }
                   y[FNR] == t { n[$4]++ } END { printf "%s %d %d %d", t, n["setosa"], n["versicolor"], n["virginica"] }' y2t.txt rows.txt)
        assert_line "$want"
    done
    # a label that is not one of the model's classes
    sed '5s/.*/rose/' y2t.txt > yb.txt
    run gpc-score -m out/m.txt p.txt yb.txt
    assert_failure 3
    assert_output --partial "gpc-score: yb.txt:5: label 'rose' is not one of the model's classes (setosa versicolor virginica)"
}

# ---- bad labels ---------------------------------------------------------------------------------

@test "multiclass labels: a blank line, one class of words, a NUL byte are status 3, no output left" {
    sed '9s/.*//' y3.txt > yb.txt
    awk '{ print "setosa" }' y3.txt > y1.txt
    { head -n 6 y3.txt; printf 'versi\0color\n'; tail -n +8 y3.txt; } > yn.txt
    [ "$(wc -l < yn.txt)" = 30 ]
    for tool in "gpc-fit -q -O none -k se -m out/m.txt" "gpc-evidence -q -k se -o out/e.txt" \
                "gpc-hmc -q -k se -n 2 -L 3 -o out/c.txt"; do
        name=${tool%% *}
        run $tool X3.txt yb.txt
        assert_failure 3
        assert_output --partial "$name: yb.txt:9: blank line"
        run $tool X3.txt y1.txt
        assert_failure 3
        assert_output --partial "$name: y1.txt: every one of the 30 labels is 'setosa'"
        run $tool X3.txt yn.txt
        assert_failure 3
        assert_output --partial "$name: yn.txt:7: a NUL byte"
    done
    assert_dir_empty out
    assert_no_tmp_files
}

# ---- malformed multiclass models ------------------------------------------------------------------

@test "multiclass models: without the classes line is status 3" {
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    gpc-fit -q -k se -O none -p "$HP" --multiclass=ovr -m out/o.txt X3.txt y3.txt
    for m in m o; do
        grep -v '^classes ' "out/$m.txt" > nc.txt
        run gpc-predict -m nc.txt -o out/p.txt Xt3.txt
        assert_failure 3
        assert_output --partial "gpc-predict: nc.txt:"
        assert_output --partial "needs its 'classes' line"
    done
    rm out/m.txt out/o.txt
    assert_dir_empty out
}

@test "multiclass models: a training label 0 or C+1 is status 3 naming its line" {
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    gpc-fit -q -k se -O none -p "$HP" --multiclass=ovr -m out/o.txt X3.txt y3.txt
    for m in m o; do
        first=$(awk '/^training / { print NR + 2; exit }' "out/$m.txt")
        for bad in "$first 0" "$((first + 12)) 4" "$((first + 29)) 1.5"; do
            set -- $bad
            awk -v l="$1" -v v="$2" 'NR == l { $1 = v } { print }' "out/$m.txt" > bad.txt
            run gpc-predict -m bad.txt -o out/p.txt Xt3.txt
            assert_failure 3
            assert_output --partial "gpc-predict: bad.txt:$1: label must be a class number from 1 to 3"
        done
    done
    rm out/m.txt out/o.txt
    assert_dir_empty out
}

@test "multiclass models: a class named twice is status 3" {
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    line=$(grep -n '^classes ' out/m.txt | cut -d: -f1)
    sed "${line}s/.*/classes setosa versicolor setosa/" out/m.txt > dup.txt
    run gpc-predict -m dup.txt -o out/p.txt Xt3.txt
    assert_failure 3
    assert_output --partial "gpc-predict: dup.txt:$line: class 'setosa' is named twice"
    rm out/m.txt
    assert_dir_empty out
}

@test "multiclass models: a classes line naming a class too many or too few is status 3 counting the numbers" {
    gpc-fit -q -k se -O none -p "$HP" -m out/m.txt X3.txt y3.txt
    line=$(grep -n '^classes ' out/m.txt | cut -d: -f1)
    first=$(awk '/^training / { print NR + 2; exit }' out/m.txt)
    # four classes: each training line needs y, f1..f4 and 4 inputs
    sed "${line}s/\$/ rose/" out/m.txt > c4.txt
    run gpc-predict -m c4.txt -o out/p.txt Xt3.txt
    assert_failure 3
    assert_output --partial "gpc-predict: c4.txt:$first: expected 9 numbers, found 8"
    # two classes: y, f1, f2 and the inputs
    sed "${line}s/ virginica\$//" out/m.txt > c2.txt
    run gpc-predict -m c2.txt -o out/p.txt Xt3.txt
    assert_failure 3
    assert_output --partial "gpc-predict: c2.txt:$first: expected 7 numbers, found 8"
    # a training line cut short
    awk -v l="$((first + 3))" 'NR == l { NF = NF - 1 } { print }' out/m.txt > short.txt
    run gpc-predict -m short.txt -o out/p.txt Xt3.txt
    assert_failure 3
    assert_output --partial "gpc-predict: short.txt:$((first + 3)): expected 8 numbers, found 7"
    rm out/m.txt
    assert_dir_empty out
}

@test "multiclass --per-class with a spec that already has :per-class=C is the same request" {
    printf '0 0\n1 0\n0 1\n1 1\n2 2\n' > xs.txt
    printf 'a\nb\nc\na\nc\n' > ys.txt
    gpc-fit -q -O none -k 'se:per-class=3' --per-class -m a.txt xs.txt ys.txt
    gpc-fit -q -O none -k se --per-class -m b.txt xs.txt ys.txt
    assert_files_equal a.txt b.txt
    run gpc-fit -q -O none -k 'se:per-class=4' --per-class -m c.txt xs.txt ys.txt
    assert_failure 2
    assert_output --partial "has hyperparameters for 4 classes, the labels have 3"
}

# The classes of a softmax model run side by side from
# GPC_PARALLEL_MIN_CLASS_ROWS rows up to GPC_PARALLEL_MAX_CLASS_ROWS, each on
# one-thread BLAS; their sums are formed in a fixed order, so the results do
# not depend on the number of OpenMP threads, nor, from GPC_PARALLEL_MIN_ROWS
# up (where the loops over pairs of cases are spread too), on OpenBLAS's.
# The problems are sized from the source so that the test cannot go vacuous.
threshold() { sed -n "s/^#define $1 \([0-9][0-9]*\).*/\1/p" "$REPO/src/lib/base/parallel.h"; }

@test "multiclass: softmax results do not depend on the number of OpenMP threads" {
    local min rows n t f
    min="$(threshold GPC_PARALLEL_MIN_CLASS_ROWS)"
    rows="$(threshold GPC_PARALLEL_MIN_ROWS)"
    [ -n "$min" ] && [ -n "$rows" ] || fail "no class thresholds in src/lib/base/parallel.h"
    n=$(( (min + rows) / 2 ))
    angle_data "$n" 11
    export OPENBLAS_NUM_THREADS=1
    fixed_threads
    for t in 1 2; do
        mkdir "t$t"
        export OMP_NUM_THREADS=$t
        gpc-evidence -k se -p "$HP" Xp.txt yp.txt > "t$t/e.txt"
        gpc-fit -q -O ml -k se -m "t$t/m.txt" Xp.txt yp.txt
        gpc-predict -m "t$t/m.txt" -c p,mean,cov Xp.txt > "t$t/p.txt"
        gpc-hmc -q -n 2 -L 3 -k se -o "t$t/chain.txt" Xp.txt yp.txt
    done
    for f in e m p chain; do
        assert_files_equal "t1/$f.txt" "t2/$f.txt"
    done
}

@test "multiclass: nested EP results do not depend on the number of OpenMP threads" {
    # between the class thresholds the classes' factors, inverses and
    # solves run side by side on per-thread scratch, the fitted form too
    local min rows n t f
    min="$(threshold GPC_PARALLEL_MIN_CLASS_ROWS)"
    rows="$(threshold GPC_PARALLEL_MIN_ROWS)"
    [ -n "$min" ] && [ -n "$rows" ] || fail "no class thresholds in src/lib/base/parallel.h"
    n=$(( (min + rows) / 2 ))
    angle_data "$n" 11
    export OPENBLAS_NUM_THREADS=1
    fixed_threads
    for t in 1 2; do
        mkdir "t$t"
        export OMP_NUM_THREADS=$t
        gpc-evidence -M ep -k se -p "$HP" Xp.txt yp.txt > "t$t/e.txt"
        gpc-evidence -M ep -k se --per-class -p "$PC" Xp.txt yp.txt > "t$t/epc.txt"
        gpc-fit -q -M ep -O none -k se -p "$HP" -m "t$t/m.txt" Xp.txt yp.txt
        gpc-predict -m "t$t/m.txt" -c p,mean,cov Xp.txt > "t$t/p.txt"
    done
    for f in e epc m p; do
        assert_files_equal "t1/$f.txt" "t2/$f.txt"
    done
    [ "$(awk 'NF { n++ } END { print n }' t1/e.txt)" -ge 1 ] || fail "no evidence written"
}

@test "multiclass: above the BLAS threshold, softmax results do not depend on the number of threads either" {
    local rows max n t f
    rows="$(threshold GPC_PARALLEL_MIN_ROWS)"
    max="$(threshold GPC_PARALLEL_MAX_CLASS_ROWS)"
    [ -n "$rows" ] && [ -n "$max" ] || fail "no thresholds in src/lib/base/parallel.h"
    n=$(( rows + 50 ))
    [ "$n" -lt "$max" ] || fail "no room between the thresholds"
    angle_data "$n" 11
    fixed_threads
    for t in 1 2; do
        mkdir "t$t"
        export OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t
        gpc-evidence -k se -p "$HP" Xp.txt yp.txt > "t$t/e.txt"
        gpc-fit -q -O none -k se -p "$HP" -m "t$t/m.txt" Xp.txt yp.txt
        gpc-predict -m "t$t/m.txt" -c p,mean,cov Xp.txt > "t$t/p.txt"
    done
    for f in e m p; do
        assert_files_equal "t1/$f.txt" "t2/$f.txt"
    done
}

@test "multiclass: gpc-predict warns when softmax Laplace's averaged probabilities fall far below its plug-in ones, and only then" {
    # ML-II's large signal variance: the averages shrink (about 0.54 against 0.96)
    gpc-fit -q -k se -m ml.txt X3.txt y3.txt
    run --separate-stderr gpc-predict -m ml.txt -o p.txt Xt3.txt
    assert_success
    [[ "$stderr" == *"gpc-predict: the averaged probabilities are much less confident than the plug-in ones (mean probability of the most probable class 0."*" against 0."*"compare --plugin, or fit by nested EP (-M ep)"* ]] || fail "stderr: $stderr"
    # the warning's figures are the mean top-class probabilities of the two outputs
    gpc-predict -q -m ml.txt -c p,plugin -o pp.txt Xt3.txt
    read -r avg plug < <(awk '!/^#/ { t = 4; for (c = 5; c <= 6; c++) if ($c > $t) t = c
                                      a += $(t - 3); p += $t; n++ }
                              END { printf "%.3f %.3f\n", a / n, p / n }' pp.txt)
    [[ "$stderr" == *"class $avg against $plug)"* ]] || fail "expected $avg against $plug in: $stderr"
    # the same model with --plugin, or as a chain's averages, or a weak kernel: no warning
    run --separate-stderr gpc-predict -m ml.txt --plugin -o p.txt Xt3.txt
    assert_success
    [ -z "$stderr" ] || fail "stderr: $stderr"
    gpc-fit -q -k se -O none -p log_v0=0,log_w=-1 -m weak.txt X3.txt y3.txt
    run --separate-stderr gpc-predict -m weak.txt -o p.txt Xt3.txt
    assert_success
    [ -z "$stderr" ] || fail "stderr: $stderr"
    # nested EP at its own ML-II hyperparameters: averages close to the plug-in ones
    gpc-fit -q -k se -M ep -m ep.txt X3.txt y3.txt
    run --separate-stderr gpc-predict -m ep.txt -o p.txt Xt3.txt
    assert_success
    [ -z "$stderr" ] || fail "stderr: $stderr"
}
