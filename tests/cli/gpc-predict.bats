#!/usr/bin/env bats
# gpc-predict: probabilities, latent means and variances, labels from a model.

load test_helper

P8='0.5,-1,-1,-1,-1,-1,-1,-1'

setup_file() {
    make_fixtures
    # the model every test starts from, fitted once
    [ -x "$REPO/bin/gpc-fit" ] && gpc-fit -q -O none -p "$P8" -m "$FIXTURES/m.txt" "$FIXTURES/Xz.txt" "$FIXTURES/y.txt"
    return 0
}

setup() {
    require_tools gpc-fit gpc-predict
    common_setup
    [ -f m.txt ] || fail "could not fit the fixture model"
}

@test "gpc-predict --help lists every option and exits 0" {
    check_help gpc-predict model columns plugin output format quiet verbose help version
    check_help_covers_source gpc-predict
}

@test "gpc-predict --version prints name, package and version" {
    check_version gpc-predict
}

# ---- values ---------------------------------------------------------------------------

@test "gpc-predict: default columns p, mean, var, label, one row per case" {
    gpc-predict -m m.txt Xtz.txt > pr.txt
    assert_shape pr.txt 20 4
}

@test "gpc-predict: p is in [0,1], var is positive, label is +-1 and agrees with p >= 0.5" {
    gpc-predict -m m.txt Xtz.txt > pr.txt
    run awk '/^#/ { next } { p = $1; v = $3; l = $4
               if (p < 0 || p > 1) { print NR ": p = " p; exit 1 }
               if (!(v > 0)) { print NR ": var = " v; exit 1 }
               if (l != 1 && l != -1) { print NR ": label = " l; exit 1 }
               if ((p >= 0.5) != (l == 1)) { print NR ": label " l " with p " p; exit 1 } }' pr.txt
    assert_success
}

@test "gpc-predict: latent variance at a new input is at most the prior variance v0" {
    gpc-predict -m m.txt -c var Xtz.txt > v.txt
    run awk '{ if ($1 > exp(0.5) * (1 + 1e-12)) { print NR ": " $1; exit 1 } }' v.txt
    assert_success
}

@test "gpc-predict: the latent mean at the training inputs is the model's latent mode" {
    gpc-predict -m m.txt -c mean Xz.txt > mean.txt
    awk '/^# /{ s = 1; next } s { printf "%.17g\n", $2 }' m.txt > f.txt
    assert_matrices_close mean.txt f.txt 1e-8
}

@test "gpc-predict: plugin is the logistic function of the latent mean" {
    gpc-predict -m m.txt -c plugin,mean Xtz.txt > pm.txt
    run awk '/^#/ { next } { s = 1 / (1 + exp(-$2)); d = $1 - s; if (d > 1e-12 || d < -1e-12) { print NR ": " $1 " vs " s; exit 1 } }' pm.txt
    assert_success
}

@test "gpc-predict: the averaged p is pulled towards 1/2 from the plug-in value" {
    gpc-predict -m m.txt -c p,plugin Xtz.txt > pp.txt
    run awk '{ a = $1 - 0.5; b = $2 - 0.5; if (a < 0) a = -a; if (b < 0) b = -b
               if (a > b + 1e-15 || ($1 - 0.5) * ($2 - 0.5) < 0) { print NR ": " $0; exit 1 } }' pp.txt
    assert_success
}

@test "gpc-predict: probit p = Phi(mean / sqrt(1 + var))" {
    gpc-fit -q -O none -l probit -p "$P8" -m mp.txt Xz.txt y.txt
    gpc-predict -m mp.txt -c p,mean,var Xtz.txt > pr.txt
    # Phi by Abramowitz & Stegun 7.1.26 (error below 1.5e-7)
    run awk 'function Phi(x,   z, t, e) { z = (x < 0 ? -x : x) / sqrt(2); t = 1 / (1 + 0.3275911 * z)
                 e = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))) * exp(-z * z)
                 return x < 0 ? e / 2 : 1 - e / 2 }
             /^#/ { next } { want = Phi($2 / sqrt(1 + $3)); d = $1 - want
               if (d > 1e-6 || d < -1e-6) { print NR ": " $1 " vs " want; exit 1 } }' pr.txt
    assert_success
}

@test "gpc-predict -c chooses and orders the columns" {
    gpc-predict -m m.txt Xtz.txt > all.txt
    gpc-predict -m m.txt -c label,p Xtz.txt > lp.txt
    awk '/^#/ { next } { print $4, $1 }' all.txt > want.txt
    grep -v '^#' lp.txt > body.txt
    assert_files_equal want.txt body.txt
    assert_equal "$(head -1 lp.txt)" "# label p"
    gpc-predict -m m.txt --columns=p,p Xtz.txt > pp.txt
    assert_shape pp.txt 20 2
}

@test "gpc-predict --plugin uses the plug-in probability for p and label" {
    gpc-predict -m m.txt --plugin -c p,plugin,label Xtz.txt > a.txt
    run awk '/^#/ { next } $1 != $2 || ($1 >= 0.5) != ($3 == 1) { print NR ": " $0; exit 1 }' a.txt
    assert_success
}

# ---- streams, formats, -o, determinism ----------------------------------------------------

@test "gpc-predict reads XS from a file, '-', a pipe and default standard input" {
    gpc-predict -m m.txt Xtz.txt > file.txt
    gpc-predict -m m.txt - < Xtz.txt > dash.txt
    cat Xtz.txt | gpc-predict -m m.txt > pipe.txt
    gpc-predict -m m.txt < Xtz.txt > def.txt
    assert_files_equal file.txt dash.txt
    assert_files_equal file.txt pipe.txt
    assert_files_equal file.txt def.txt
}

@test "gpc-predict reads the model from '-'" {
    gpc-predict -m m.txt Xtz.txt > a.txt
    cat m.txt | gpc-predict -m - Xtz.txt > b.txt
    assert_files_equal a.txt b.txt
}

@test "gpc-predict -F npy: .npy 1.0 of shape (20, 4) holding the text numbers" {
    require_tools gpc-scale
    gpc-predict -m m.txt -F npy Xtz.txt > pr.npy
    assert_npy pr.npy "(20, 4)"
    gpc-predict -m m.txt Xtz.txt > pr.txt
    gpc-scale -r <(printf '0 0 0 0\n1 1 1 1\n') pr.npy > back.txt
    grep -v '^#' pr.txt > body.txt
    assert_files_equal body.txt back.txt
}

@test "gpc-predict: npy output scored by gpc-score equals the text result" {
    require_tools gpc-score
    gpc-predict -m m.txt -F npy -o pr.npy Xtz.txt
    gpc-predict -m m.txt -o pr.txt Xtz.txt
    gpc-score -t pr.npy yt.txt > s_npy.txt
    gpc-score -t pr.txt yt.txt > s_txt.txt
    assert_files_equal s_txt.txt s_npy.txt
    gpc-predict -m m.txt -F npy Xtz.txt | gpc-score - yt.txt > s_pipe.txt
    gpc-score pr.txt yt.txt > s_txt2.txt
    assert_files_equal s_txt2.txt s_pipe.txt
}

@test "gpc-predict reads .npy inputs" {
    require_tools gpc-scale
    gpc-scale -r id7.txt -F npy Xtz.txt > Xtz.npy
    gpc-predict -m m.txt Xtz.txt > a.txt
    gpc-predict -m m.txt Xtz.npy > b.txt
    gpc-predict -m m.txt < Xtz.npy > c.txt
    assert_files_equal a.txt b.txt
    assert_files_equal a.txt c.txt
}

@test "gpc-predict -o writes the file and nothing to stdout" {
    run --separate-stderr gpc-predict -m m.txt -o out/pr.txt Xtz.txt
    assert_success
    assert_output ""
    gpc-predict -m m.txt Xtz.txt > pr.txt
    assert_files_equal pr.txt out/pr.txt
    gpc-predict -m m.txt --output=- Xtz.txt > pr2.txt
    assert_files_equal pr.txt pr2.txt
    assert_no_tmp_files
}

@test "gpc-predict is deterministic" {
    gpc-predict -m m.txt Xtz.txt > a.txt
    gpc-predict -m m.txt Xtz.txt > b.txt
    assert_files_equal a.txt b.txt
    gpc-predict -m m.txt -F npy Xtz.txt > a.npy
    gpc-predict -m m.txt -F npy Xtz.txt > b.npy
    assert_files_equal a.npy b.npy
}

@test "gpc-predict: predictions do not depend on the other rows of XS" {
    gpc-predict -m m.txt Xtz.txt > all.txt
    sed -n 7p Xtz.txt > one.txt
    gpc-predict -m m.txt one.txt > p7.txt
    grep -v '^#' all.txt | sed -n 7p > all7.txt
    # equal up to rounding (blocked BLAS may sum in another order)
    assert_matrices_close p7.txt all7.txt 1e-12
}

@test "gpc-predict: a model from an optimised fit predicts like the one it wrote" {
    gpc-fit -q -k ard+bias -m mo.txt Xz.txt y.txt
    gpc-predict -m mo.txt Xtz.txt > a.txt
    cp mo.txt copy.txt
    gpc-predict -m copy.txt Xtz.txt > b.txt
    assert_files_equal a.txt b.txt
}

# ---- input errors (status 3) -----------------------------------------------------------------

@test "gpc-predict: XS of the wrong width is status 3 naming the file and both widths" {
    cut -d' ' -f1-6 Xtz.txt > Xt6.txt
    run gpc-predict -m m.txt -o out/pr.txt Xt6.txt
    assert_failure 3
    assert_output --partial "gpc-predict: Xt6.txt"
    assert_output --partial "6 columns"
    assert_output --partial "7"
    assert_dir_empty out
    paste -d' ' Xtz.txt <(cut -d' ' -f1 Xtz.txt) > Xt8.txt
    run gpc-predict -m m.txt -o out/pr.txt Xt8.txt
    assert_failure 3
    assert_output --partial "8 columns"
    assert_dir_empty out
}

@test "gpc-predict: XS of the wrong width on stdin names <stdin>" {
    run gpc-predict -m m.txt -o out/pr.txt < <(cut -d' ' -f1-6 Xtz.txt)
    assert_failure 3
    assert_output --partial "gpc-predict: <stdin>"
    assert_output --partial "6 columns"
    assert_dir_empty out
}

@test "gpc-predict: missing model or XS is status 3" {
    run gpc-predict -m nosuch.txt -o out/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "gpc-predict: nosuch.txt"
    run gpc-predict -m m.txt -o out/pr.txt nosuch.txt
    assert_failure 3
    assert_output --partial "gpc-predict: nosuch.txt"
    assert_dir_empty out
}

@test "gpc-predict: unreadable model is status 3" {
    chmod 000 m.txt
    run without_dac_override gpc-predict -m m.txt -o out/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "m.txt"
    assert_dir_empty out
}

@test "gpc-predict: empty XS is status 3" {
    : > E.txt
    run gpc-predict -m m.txt -o out/pr.txt E.txt
    assert_failure 3
    assert_output --partial "E.txt"
    assert_output --partial "empty"
    run gpc-predict -m m.txt -o out/pr.txt < /dev/null
    assert_failure 3
    assert_output --partial "<stdin>"
    assert_dir_empty out
}

@test "gpc-predict: ragged, non-numeric, NaN and Inf XS are status 3 with file:line" {
    { head -n 2 Xtz.txt; sed -n 3p Xtz.txt | cut -d' ' -f1-5; } > R.txt
    run gpc-predict -m m.txt -o out/pr.txt R.txt
    assert_failure 3
    assert_output --partial "gpc-predict: R.txt:3: expected 7 columns, found 5"
    sed '2s/^[^ ]*/one/' Xtz.txt > B.txt
    run gpc-predict -m m.txt -o out/pr.txt B.txt
    assert_failure 3
    assert_output --partial "B.txt:2"
    assert_output --partial "one"
    sed '4s/^[^ ]*/NaN/' Xtz.txt > N.txt
    run gpc-predict -m m.txt -o out/pr.txt N.txt
    assert_failure 3
    assert_output --partial "N.txt:4"
    sed '5s/^[^ ]*/inf/' Xtz.txt > I.txt
    run gpc-predict -m m.txt -o out/pr.txt I.txt
    assert_failure 3
    assert_output --partial "I.txt:5"
    assert_dir_empty out
    assert_no_tmp_files
}

@test "gpc-predict: truncated .npy XS is status 3" {
    require_tools gpc-scale
    gpc-scale -r id7.txt -F npy Xtz.txt > Xtz.npy
    head -c 700 Xtz.npy > T.npy
    run gpc-predict -m m.txt -o out/pr.txt T.npy
    assert_failure 3
    assert_output --partial "T.npy"
    assert_output --partial "truncated"
    run bash -c "head -c 700 Xtz.npy | gpc-predict -m m.txt -o out/pr.txt"
    assert_failure 3
    assert_output --partial "<stdin>"
    assert_dir_empty out
}

@test "gpc-predict: a file that is not a model is status 3" {
    run gpc-predict -m Xz.txt -o out/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "gpc-predict: Xz.txt:1: not a gpc model file"
    : > empty.txt
    run gpc-predict -m empty.txt -o out/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "empty.txt"
    assert_dir_empty out
}

@test "gpc-predict: an unsupported model version is status 3 with file:line" {
    sed '1s/.*/gpc-model 2/' m.txt > m2.txt
    run gpc-predict -m m2.txt -o out/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "m2.txt:1"
    assert_output --partial "version 2"
    assert_dir_empty out
}

@test "gpc-predict: a corrupt model line is status 3 with file:line" {
    sed '10s/ .*/ abc/' m.txt > bad.txt     # line 10 is log_w2
    run gpc-predict -m bad.txt -o out/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "gpc-predict: bad.txt:10: "
    sed '5s/.*/kernel wavelet/' m.txt > badk.txt
    run gpc-predict -m badk.txt -o out/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "badk.txt:"
    assert_output --partial "wavelet"
    awk '/^# /{ s = 1; print; next } s && ++n == 3 { $1 = 3 } { print }' m.txt > badl.txt
    line=$(grep -n '^3 ' badl.txt | cut -d: -f1)
    run gpc-predict -m badl.txt -o out/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "badl.txt:$line"
    assert_dir_empty out
}

@test "gpc-predict: a model with an unknown likelihood is status 3, message intact" {
    sed '3s/.*/likelihood cauchy/' m.txt > badlik.txt
    run gpc-predict -m badlik.txt -o out/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "gpc-predict: badlik.txt:3: "
    assert_output --partial "unknown likelihood 'cauchy'"
    assert_dir_empty out
}

@test "gpc-predict: a truncated model is status 3" {
    head -n 30 m.txt > short.txt
    run gpc-predict -m short.txt -o out/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "short.txt"
    assert_output --partial "truncated"
    head -n 12 m.txt > short2.txt
    run gpc-predict -m short2.txt -o out/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "short2.txt"
    { cat m.txt; echo "1 2 3"; } > long.txt
    run gpc-predict -m long.txt -o out/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "long.txt:$(($(wc -l < m.txt) + 1))"
    assert_dir_empty out
}

# Model file $1 whole predicts XS $2; cut short by 1 byte (its newline), by
# a few more (into its last number, whose prefix still reads as a number,
# and past it) and by every 997th, it is refused with status 3 and writes
# nothing.
assert_cuts_refused() {
    local m="$1" xs="$2" size k
    run gpc-predict -q -m "$m" -o out/whole.txt "$xs"
    assert_success
    rm out/whole.txt
    size=$(wc -c < "$m")
    for k in 1 2 3 5 8 13 21 30 $(seq 100 997 "$size"); do
        head -c "-$k" "$m" > cut.model
        run gpc-predict -q -m cut.model -o out/p.txt "$xs"
        [ "$status" -eq 3 ] || fail "$m cut $k bytes short: status $status: $output"
    done
    head -c -1 "$m" > cut.model
    run gpc-predict -q -m cut.model -o out/p.txt "$xs"
    assert_output --partial "cut.model:$(wc -l < "$m"): the last line has no end of line"
    assert_dir_empty out
}

@test "gpc-predict: a model cut short anywhere is status 3, whatever its method; whole ones read" {
    assert_cuts_refused m.txt Xtz.txt
    gpc-fit -q -O none -M ep -l step -k se -m ep.txt Xz.txt y.txt
    assert_cuts_refused ep.txt Xtz.txt
    gpc-fit -q -O none -M naive -k se -m naive.txt Xz.txt y.txt
    assert_cuts_refused naive.txt Xtz.txt
    gpc-fit -q -O none -l probit -k se -m probit.txt Xz.txt y.txt
    assert_cuts_refused probit.txt Xtz.txt
    iris_fixtures
    gpc-fit -q -O none -l softmax -k se -m softmax.txt X3.txt y3.txt
    assert_cuts_refused softmax.txt Xt3.txt
    gpc-fit -q -O none -M vb -k se -m vb.txt X3.txt y3.txt
    assert_cuts_refused vb.txt Xt3.txt
    gpc-fit -q -O none --multiclass=ovr -M ep -k se -m ovr.txt X3.txt y3.txt
    assert_cuts_refused ovr.txt Xt3.txt
}

# ---- usage errors (status 2) -----------------------------------------------------------------

@test "gpc-predict: no model is status 2" {
    run gpc-predict Xtz.txt
    assert_failure 2
    assert_output --partial "model"
    assert_output --partial "Try 'gpc-predict --help'"
}

@test "gpc-predict: unknown option is status 2" {
    run gpc-predict -m m.txt --probability -o out/pr.txt Xtz.txt
    assert_failure 2
    assert_output --partial "probability"
    assert_dir_empty out
}

@test "gpc-predict: two inputs, or model and XS both on stdin, are status 2" {
    run gpc-predict -m m.txt Xtz.txt Xtz.txt
    assert_failure 2
    run gpc-predict -m - < m.txt
    assert_failure 2
    assert_output --partial "standard input"
    run gpc-predict -m - - < m.txt
    assert_failure 2
}

@test "gpc-predict: bad --columns is status 2" {
    run gpc-predict -m m.txt -c p,prob -o out/pr.txt Xtz.txt
    assert_failure 2
    assert_output --partial "prob"
    run gpc-predict -m m.txt -c , -o out/pr.txt Xtz.txt
    assert_failure 2
    run gpc-predict -m m.txt -c '' -o out/pr.txt Xtz.txt
    assert_failure 2
    run gpc-predict -m m.txt -c p,p,p,p,p,p,p,p,p,p,p,p,p,p,p,p,p -o out/pr.txt Xtz.txt
    assert_failure 2
    assert_dir_empty out
}

@test "gpc-predict: bad --format is status 2" {
    run gpc-predict -m m.txt -F json -o out/pr.txt Xtz.txt
    assert_failure 2
    assert_output --partial "json"
    assert_dir_empty out
}

# ---- output errors --------------------------------------------------------------------------

@test "gpc-predict: write error on standard output (/dev/full) is status 3" {
    run bash -c "gpc-predict -m m.txt Xtz.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
    run bash -c "gpc-predict -m m.txt -F npy Xtz.txt > /dev/full"
    assert_failure 3
    assert_output --partial "write error"
}

@test "gpc-predict: -o into a missing directory is status 3" {
    run gpc-predict -m m.txt -o nodir/pr.txt Xtz.txt
    assert_failure 3
    assert_output --partial "nodir/pr.txt"
}

@test "gpc-predict: a failed run leaves an existing output untouched" {
    echo old > out/pr.txt
    run gpc-predict -m m.txt -o out/pr.txt <(cut -d' ' -f1-3 Xtz.txt)
    assert_failure 3
    assert_equal "$(cat out/pr.txt)" old
    assert_equal "$(ls -A out)" pr.txt
}
