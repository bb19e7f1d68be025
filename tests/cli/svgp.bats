#!/usr/bin/env bats
# The sparse variational method (-M svgp) through the tools, as a user runs
# it: the bound's gradient against central differences of the bound, a fit
# whose model file's predictions an independent numpy reading reproduces
# (tests/ref/svgp_predict.py), the same model for the same seed, the
# downstream tools (gpc-predict, gpc-cv, gpc-plot), and every refusal with
# its exit status and message.

load test_helper

REF="$REPO/tests/ref/svgp_predict.py"

setup() {
    require_tools gpc-fit gpc-predict gpc-evidence gpc-cv gpc-plot gpc-hmc
    common_setup
    # iris: X3.txt y3.txt (30 cases, 3 species), Xt3.txt (30 test cases)
    iris_fixtures
}

# The rows of an svgp model's inducing block.
inducing_rows() {
    awk '$1 == "inducing" { print $2 }' "$1"
}

@test "svgp: the bound's gradient matches central differences (ard, a product, probit)" {
    evidence_fd Xz.txt y.txt ard 'log_v0=0.5,log_w1=-1,log_w3=-1.5' -M svgp --inducing 12 --tol=1e-15
    evidence_fd Xz.txt y.txt 'matern32ard@1-2*periodic@3+bias' \
        't1.log_v0=0.3,t1.log_w1=-1,t1.log_w2=-0.5,t2.log_p=0.8' -M svgp --inducing 15 --tol=1e-15
    evidence_fd Xz.txt y.txt se 'log_v0=1,log_w=-2' -M svgp -l probit --inducing 40 --tol=1e-15
}

@test "svgp: with every case an inducing input the bound is at most the log evidence EP estimates, and close to it" {
    # the bound of Gaussian q(f) over all 40 cases at fixed hyperparameters
    # is a lower bound of log p(y); EP's estimate is accurate for probit
    run gpc-evidence -q -n -M svgp -l probit --inducing 40 -p 'log_v0=1,log_w=-2' -k se Xz.txt y.txt
    assert_success
    local bound="$output"
    run gpc-evidence -q -n -M ep -p 'log_v0=1,log_w=-2' -k se Xz.txt y.txt
    assert_success
    num_lt "$bound" "$output"
    num_lt "$output" "$(awk -v b="$bound" 'BEGIN { print b + 1 }')"
}

@test "svgp: a fit's model file predicts what an independent reading of it gives" {
    run gpc-fit -q -M svgp --inducing 15 -m m.txt Xz.txt y.txt
    assert_success
    assert_equal "$(model_value m.txt method)" svgp
    assert_equal "$(inducing_rows m.txt)" 15
    # the block: m, the 15 entries of S's row and the 7 inputs per row
    run awk '$1 == "inducing" { n = $2; getline; getline; w = NF; for (i = 2; i <= n; i++) { getline; if (NF != w) exit 1 } print w }' m.txt
    assert_success
    assert_output 23
    run gpc-predict -q -m m.txt -c p,mean,var -o p.txt Xtz.txt
    assert_success
    "$REF" m.txt Xtz.txt > ref.txt
    assert_matrices_close p.txt ref.txt 1e-10
}

@test "svgp: the same seed makes the same model, another seed other inducing inputs" {
    gpc-fit -q -M svgp --inducing 10 -S 3 -m a.txt Xz.txt y.txt
    gpc-fit -q -M svgp --inducing 10 -S 3 -m b.txt Xz.txt y.txt
    assert_files_equal a.txt b.txt
    gpc-fit -q -M svgp --inducing 10 -S 4 -m c.txt Xz.txt y.txt
    run cmp -s a.txt c.txt
    assert_failure
}

@test "svgp: more inducing inputs than cases takes every case; the bound grows towards it" {
    run gpc-fit -q -M svgp --inducing 1000 -O none -m all.txt Xz.txt y.txt
    assert_success
    assert_equal "$(inducing_rows all.txt)" 40
    gpc-fit -q -M svgp --inducing 5 -O none -m five.txt Xz.txt y.txt
    num_lt "$(model_value five.txt log_evidence)" "$(model_value all.txt log_evidence)"
}

@test "svgp: gpc-cv and gpc-plot take the method and its model" {
    run gpc-cv -q -K 3 -o cv.txt Xz.txt y.txt -- -M svgp --inducing 8
    assert_success
    assert_shape cv.txt 40 4
    gpc-fit -q -M svgp --inducing 8 -m m.txt Xz.txt y.txt
    run gpc-plot surface -q -o s.svg m.txt
    assert_success
    [ -s s.svg ] || fail "no picture"
}

@test "svgp: what the method cannot do is refused with the exit status of a usage error" {
    gpc-fit -q -M svgp --inducing 8 -m m.txt Xz.txt y.txt
    run gpc-predict -m m.txt --loo
    assert_failure 2
    assert_output --partial "cross-validation (gpc-cv)"
    run gpc-predict -m m.txt --loo=exact
    assert_failure 2
    assert_output --partial "keeps only its inducing inputs"
    run gpc-fit -M laplace --inducing 8 Xz.txt y.txt
    assert_failure 2
    assert_output --partial "--inducing applies to -M svgp"
    run gpc-fit -M svgp -l step Xz.txt y.txt
    assert_failure 2
    assert_output --partial "logistic or the probit likelihood"
    awk '{ print NR % 3 + 1 }' y.txt > y3.txt
    run gpc-fit -M svgp -l logistic Xz.txt y3.txt
    assert_failure 2
    assert_output --partial "binary"
    run gpc-hmc -M svgp Xz.txt y.txt
    assert_failure 2
}

@test "svgp: a damaged model is refused naming the file" {
    gpc-fit -q -M svgp --inducing 6 -m m.txt Xz.txt y.txt
    # a variational covariance that is not positive definite: S's first entry -1
    awk 'seen == 1 && !/^#/ { $2 = -1; seen = 2 } $1 == "inducing" { seen = 1 } { print }' m.txt > bad.txt
    run gpc-predict -m bad.txt Xtz.txt
    assert_failure 3
    assert_output --partial "not positive definite"
    # one inducing row short
    head -n -1 m.txt > short.txt
    run gpc-predict -m short.txt Xtz.txt
    assert_failure 3
    assert_output --partial "truncated"
    # a row with a number missing
    awk '$1 == "inducing" { n = NR } n && NR == n + 2 { $NF = "" } { print }' m.txt > narrow.txt
    run gpc-predict -m narrow.txt Xtz.txt
    assert_failure 3
    assert_output --partial "expected 14 numbers"
}

# ---- minibatches ------------------------------------------------------------------

@test "svgp --batch: a fit by minibatches predicts, and the same seed makes the same model" {
    run gpc-fit -M svgp --inducing 12 --batch 8 --epochs 4 -m a.txt Xz.txt y.txt
    assert_success
    assert_output --partial "epoch 4 of 4"
    assert_output --partial "after 4 epochs (20 steps)"
    assert_equal "$(model_value a.txt fit)" ml
    run gpc-predict -q -m a.txt -c p,mean,var -o p.txt Xtz.txt
    assert_success
    "$REF" a.txt Xtz.txt > ref.txt
    assert_matrices_close p.txt ref.txt 1e-10
    gpc-fit -q -M svgp --inducing 12 --batch 8 --epochs 4 -m b.txt Xz.txt y.txt
    assert_files_equal a.txt b.txt
}

@test "svgp --batch: the length scales start from the inducing inputs' distances unless values are given or fixed" {
    # the inputs times 100: the start moves log_w by -2 log 100 with them
    awk -v CONVFMT=%.17g '!/^#/ { for (j = 1; j <= NF; j++) $j = 100 * $j "" } 1' Xz.txt > X100.txt
    run gpc-fit -M svgp -k se --inducing 12 --batch 8 --epochs 1 -O none -m n.txt Xz.txt y.txt
    assert_success
    refute_output --partial "length scales start"
    local default="$(model_value n.txt log_w)"
    for x in Xz X100; do
        run gpc-fit -M svgp -k se --inducing 12 --batch 8 --epochs 1 --learning-rate 1e-12 \
            -m $x.model $x.txt y.txt
        assert_success
        assert_output --partial "the length scales start where the inducing inputs' median pair is one apart (log_w "
    done
    run awk -v a="$(model_value Xz.model log_w)" -v b="$(model_value X100.model log_w)" \
        'BEGIN { d = a - b - 2 * log(100); exit !(d < 1e-9 && d > -1e-9 && a < 0) }'
    assert_success
    run gpc-fit -M svgp -k se --inducing 12 --batch 8 --epochs 1 -p log_w=-0.5 -m p.txt Xz.txt y.txt
    assert_success
    refute_output --partial "length scales start"
    run gpc-fit -M svgp -k se --inducing 12 --batch 8 --epochs 1 --fix log_w -m f.txt Xz.txt y.txt
    assert_success
    refute_output --partial "length scales start"
    assert_equal "$(model_value f.txt log_w)" "$default"
    run awk -v a="$(model_value Xz.model log_w)" -v d="$default" 'BEGIN { exit !(a - d > 0.1 || d - a > 0.1) }'
    assert_success
}

@test "svgp --batch: stopped by the time limit after any step and run again, it ends in the model of an uninterrupted run, byte for byte" {
    binary_data 300 5
    gpc-fit -q -M svgp --inducing 15 --batch 32 --epochs 5 --checkpoint whole.ckpt -m whole.txt Xb.txt yb.txt
    # a time limit of 0 s stops after every step: three steps, then to the end
    local i
    for i in 1 2 3; do
        run gpc-fit -M svgp --inducing 15 --batch 32 --epochs 5 -T 1e-9 --checkpoint part.ckpt \
            -m part.txt Xb.txt yb.txt
        assert_success
        assert_output --partial "time limit reached"
        assert_equal "$(awk '$1 == "step" { print $2 }' part.ckpt)" "$i"
    done
    run gpc-fit -M svgp --inducing 15 --batch 32 --epochs 5 --checkpoint part.ckpt -m part.txt Xb.txt yb.txt
    assert_success
    assert_output --partial "continuing from part.ckpt: epoch 0, step 3"
    assert_files_equal whole.txt part.txt
    assert_files_equal whole.ckpt part.ckpt
}

@test "svgp --batch: stopped by SIGTERM it keeps its checkpoint, writes no model, and continues to the uninterrupted run's model" {
    binary_data 3000 7
    gpc-fit -q -M svgp --inducing 20 --batch 50 --epochs 30 -m whole.txt Xb.txt yb.txt
    gpc-fit -q -M svgp --inducing 20 --batch 50 --epochs 30 --checkpoint run.ckpt -m part.txt \
        Xb.txt yb.txt &
    local pid=$! status=0 i
    for i in $(seq 100); do [ -s run.ckpt ] && break; sleep 0.05; done
    kill -TERM "$pid"
    wait "$pid" || status=$?
    # the signal came after the first of 30 epochs: the run was stopped by it
    assert_equal "$status" 143
    [ ! -e part.txt ] || fail "a model was written by a stopped run"
    [ -s run.ckpt ] || fail "no checkpoint"
    num_lt "$(awk '$1 == "epoch" { print $2 }' run.ckpt)" 30
    run gpc-fit -M svgp --inducing 20 --batch 50 --epochs 30 --checkpoint run.ckpt -m part.txt Xb.txt yb.txt
    assert_success
    assert_files_equal whole.txt part.txt
}

@test "svgp --batch: a checkpoint of other settings or data is refused, and the options' errors" {
    gpc-fit -q -M svgp --inducing 6 --batch 10 --epochs 1 --checkpoint c.ckpt -m m.txt Xz.txt y.txt
    run gpc-fit -M svgp --inducing 6 --batch 8 --epochs 2 --checkpoint c.ckpt -m m2.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "batch 10 there, 8 here"
    [ ! -e m2.txt ] || fail "a model was written"
    run gpc-fit -M svgp --inducing 7 --batch 10 --epochs 2 --checkpoint c.ckpt -m m2.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "7 here"
    head -n 30 y.txt > y30.txt
    head -n 30 Xz.txt > X30.txt
    run gpc-fit -M svgp --inducing 6 --batch 10 --epochs 2 --checkpoint c.ckpt -m m2.txt X30.txt y30.txt
    assert_failure 3
    assert_output --partial "cases 40 there, 30 here"
    head -c 200 c.ckpt > cut.ckpt
    run gpc-fit -M svgp --inducing 6 --batch 10 --epochs 2 --checkpoint cut.ckpt -m m2.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "cut.ckpt"
    run gpc-fit -M laplace --batch 10 Xz.txt y.txt
    assert_failure 2
    assert_output --partial "--batch is for -M svgp"
    run gpc-fit -M svgp --epochs 3 Xz.txt y.txt
    assert_failure 2
    assert_output --partial "--epochs is for minibatch fits"
    run gpc-fit -M svgp --batch 10 --natural-step 1.5 Xz.txt y.txt
    assert_failure 2
    run gpc-fit -M svgp --batch 10 -O map Xz.txt y.txt
    assert_failure 2
}

@test "svgp --batch: X and Y as .npy files are read a batch at a time and give the text files' model, byte for byte" {
    binary_data 500 11
    awk '{ print ($1 > 0) ? 1 : 0 }' yb.txt > y01.txt
    printf '0 0 0\n1 1 1\n' > id3.txt
    printf '0\n1\n' > id1.txt
    gpc-scale -r id3.txt -F npy -o Xb.npy Xb.txt
    gpc-scale -r id1.txt -F npy -o y01.npy y01.txt
    gpc-fit -q -M svgp --inducing 12 --batch 40 --epochs 3 -m text.txt Xb.txt y01.txt
    run gpc-fit -q -M svgp --inducing 12 --batch 40 --epochs 3 -m npy.txt Xb.npy y01.npy
    assert_success
    assert_files_equal text.txt npy.txt
    # the checkpoint of one continues the other: the same numbers, the same hash
    gpc-fit -q -M svgp --inducing 12 --batch 40 --epochs 1 --checkpoint c.ckpt -m a.txt Xb.txt y01.txt
    run gpc-fit -q -M svgp --inducing 12 --batch 40 --epochs 3 --checkpoint c.ckpt -m b.txt Xb.npy y01.npy
    assert_success
    assert_files_equal text.txt b.txt
    # a third class in Y.npy: read whole, and the multiclass method fits it
    awk 'NR % 7 == 0 { print 2; next } { print }' y01.txt > y3.txt
    gpc-scale -r id1.txt -F npy -o y3.npy y3.txt
    run gpc-fit -M svgp --inducing 8 --batch 40 --epochs 1 -m c.txt Xb.npy y3.npy
    assert_success
    assert_equal "$(model_value c.txt likelihood)" mprobit
    assert_equal "$(awk '$1 == "classes" { print NF - 1 }' c.txt)" 3
}

@test "svgp --batch, three classes: the multinomial probit by minibatches predicts and continues from its checkpoint byte for byte" {
    gpc-fit -q -M svgp --inducing 8 --batch 8 --epochs 4 --checkpoint w.ckpt -m whole.txt X3.txt y3.txt
    gpc-fit -q -M svgp --inducing 8 --batch 8 --epochs 4 -T 1e-9 --checkpoint p.ckpt -m part.txt X3.txt y3.txt
    run gpc-fit -q -M svgp --inducing 8 --batch 8 --epochs 4 --checkpoint p.ckpt -m part.txt X3.txt y3.txt
    assert_success
    assert_files_equal whole.txt part.txt
    assert_equal "$(awk '$1 == "latent" { print $2 }' w.ckpt)" 3
    gpc-predict -q -m whole.txt -c p -o p.txt Xt3.txt
    assert_probs p.txt 3 30
}

# ---- multiclass: the multinomial probit -------------------------------------------

@test "svgp, three classes: the multinomial probit, with every case an inducing input, is -M vb's fit (bound and probabilities)" {
    run gpc-fit -k se -O none -p log_v0=1,log_w=-1 -M svgp --inducing 100 --tol 1e-15 -m sv.txt X3.txt y3.txt
    assert_success
    assert_output --partial "the sparse variational method with the multinomial probit likelihood"
    assert_equal "$(model_value sv.txt likelihood)" mprobit
    gpc-fit -q -k se -O none -p log_v0=1,log_w=-1 -M vb --objective=bound --tol 1e-13 -m vb.txt X3.txt y3.txt
    assert_close "$(model_value sv.txt log_evidence)" "$(model_value vb.txt log_evidence)" 1e-8
    gpc-predict -q -m sv.txt -c p -o ps.txt Xt3.txt
    gpc-predict -q -m vb.txt -c p -o pv.txt Xt3.txt
    assert_matrices_close ps.txt pv.txt 1e-6
    assert_probs ps.txt 3 30
}

@test "svgp, three classes: the bound's gradient matches central differences, and a fit predicts" {
    evidence_fd X3.txt y3.txt ard 'log_v0=0.5,log_w1=-1,log_w3=-1.5' -M svgp --inducing 10 --tol 1e-15
    run gpc-fit -q -M svgp --inducing 10 -m m.txt X3.txt y3.txt
    assert_success
    gpc-predict -q -m m.txt -c p -o p.txt Xt3.txt
    assert_probs p.txt 3 30
    run gpc-cv -q -K 3 -o cv.txt X3.txt y3.txt -- -M svgp --inducing 8
    assert_success
    run gpc-fit -M svgp -l step X3.txt y3.txt
    assert_failure 2
}

@test "svgp, a kernel per class: the bound's gradient matches central differences; equal copies give the shared kernel's bound" {
    local pc='log_v0.c1=0.5,log_w.c1=-1,log_v0.c2=0.2,log_w.c2=-0.4,log_v0.c3=0.9,log_w.c3=-1.6'
    evidence_fd X3.txt y3.txt se:per-class=3 "$pc" -M svgp --inducing 10 --tol 1e-15
    evidence_fd X3.txt y3.txt se:per-class=3 "$pc" -M svgp -l softmax --inducing 10 --tol 1e-15
    # equal copies: the shared kernel, at the same inducing inputs
    head -n 10 X3.txt > Z.txt
    run gpc-evidence -q -n -M svgp --inducing-inputs Z.txt -k se -p log_v0=0.5,log_w=-1 \
        --tol 1e-15 X3.txt y3.txt
    assert_success
    local shared="$output"
    run gpc-evidence -q -n -M svgp --inducing-inputs Z.txt --per-class -k se \
        -p log_v0.c1=0.5,log_w.c1=-1,log_v0.c2=0.5,log_w.c2=-1,log_v0.c3=0.5,log_w.c3=-1 \
        --tol 1e-15 X3.txt y3.txt
    assert_success
    assert_close "$output" "$shared" 1e-11
    # and another copy's values change it
    run gpc-evidence -q -n -M svgp --inducing-inputs Z.txt -k se:per-class=3 -p "$pc" \
        --tol 1e-15 X3.txt y3.txt
    assert_success
    run awk -v a="$output" -v b="$shared" 'BEGIN { exit !(a - b > 1e-3 || b - a > 1e-3) }'
    assert_success
}

@test "svgp, a kernel per class: fits full-batch and by minibatches from .npy files predict, and a continued run ends in the same model" {
    run gpc-fit -M svgp --per-class --inducing 8 -m m.txt X3.txt y3.txt
    assert_success
    assert_output --partial "15 hyperparameters of 'ard:per-class=3'"
    assert_equal "$(model_value m.txt kernel)" ard:per-class=3
    gpc-predict -q -m m.txt -c p -o p.txt Xt3.txt
    assert_probs p.txt 3 30
    # each class's latent marginals through its own kernel, read independently
    gpc-predict -q -m m.txt -c mean,var -o mv.txt Xt3.txt
    "$REF" m.txt Xt3.txt > ref.txt
    assert_matrices_close mv.txt ref.txt 1e-10
    printf '0 0 0 0\n1 1 1 1\n' > id.txt
    gpc-scale -r id.txt -F npy -o X3.npy X3.txt
    gpc-fit -q -M svgp -k se:per-class=3 --inducing 8 --batch 8 --epochs 3 -m whole.txt X3.npy y3.txt
    gpc-fit -q -M svgp -k se:per-class=3 --inducing 8 --batch 8 --epochs 3 -T 1e-9 --checkpoint p.ckpt \
        -m part.txt X3.npy y3.txt
    run gpc-fit -q -M svgp -k se:per-class=3 --inducing 8 --batch 8 --epochs 3 --checkpoint p.ckpt \
        -m part.txt X3.npy y3.txt
    assert_success
    assert_files_equal whole.txt part.txt
    gpc-predict -q -m whole.txt -c p -o pb.txt Xt3.txt
    assert_probs pb.txt 3 30
    run gpc-fit -M svgp -k se:per-class=2 --batch 8 X3.npy y3.txt
    assert_failure 2
    assert_output --partial "for 2 classes, the labels have 3"
}

@test "svgp --batch --validation: the last epoch's held-out scores are gpc-score's of the model's predictions" {
    run gpc-fit -M svgp --inducing 10 --batch 8 --epochs 3 --validation Xtz.txt \
        --validation-labels yt.txt -m m.txt Xz.txt y.txt
    assert_success
    local note want
    note=$(printf '%s\n' "$output" | sed -n 's/.*epoch 3 of 3.*held-out \(errors .*\), mean log predictive probability \(.*\)$/\1 \2/p')
    [ -n "$note" ] || fail "no held-out note on the last epoch: $output"
    want=$(gpc-predict -q -m m.txt Xtz.txt | gpc-score - yt.txt |
        sed -n 's/^\(errors .*\), mean log predictive probability \([^,]*\),.*/\1 \2/p')
    assert_equal "$note" "$want"
    # three classes, every second epoch
    run gpc-fit -M svgp --inducing 8 --batch 8 --epochs 4 --validate-every 2 --validation Xt3.txt \
        --validation-labels yt3.txt -m m3.txt X3.txt y3.txt
    assert_success
    [ "$(printf '%s\n' "$output" | grep -c 'held-out errors')" -eq 2 ] || fail "$output"
    note=$(printf '%s\n' "$output" | sed -n 's/.*epoch 4 of 4.*held-out \(errors .*\), mean log predictive probability \(.*\)$/\1 \2/p')
    want=$(gpc-predict -q -m m3.txt Xt3.txt | gpc-score - yt3.txt |
        sed -n 's/^\(errors .*\), mean log predictive probability \([^,]*\),.*/\1 \2/p')
    assert_equal "$note" "$want"
    run gpc-fit -M svgp --batch 8 --validation Xtz.txt Xz.txt y.txt
    assert_failure 2
    run gpc-fit -M svgp --batch 8 --validate-every 2 Xz.txt y.txt
    assert_failure 2
    printf 'cat\n' > bad.txt
    head -n 1 Xtz.txt > x1.txt
    run gpc-fit -M svgp --batch 8 --validation x1.txt --validation-labels bad.txt -m m.txt Xz.txt y.txt
    assert_failure 3
    assert_output --partial "bad.txt"
}

@test "svgp: gpc-evidence at a model's inducing inputs and hyperparameters gives the model's bound" {
    gpc-fit -q -M svgp --inducing 12 -m m.txt -P m.params Xz.txt y.txt
    run gpc-evidence -q -n -M svgp --inducing-inputs m.txt -H m.params Xz.txt y.txt
    assert_success
    assert_close "$output" "$(model_value m.txt log_evidence)" 1e-9
    # the same inducing inputs as a matrix of the inputs' columns
    awk '$1 == "inducing" { n = $2; next } n > 0 && !/^#/ { for (j = 14; j <= NF; j++) printf "%s%s", $j, (j < NF ? " " : "\n"); n-- }' m.txt > Z.txt
    assert_shape Z.txt 12 7
    run gpc-evidence -q -n -M svgp --inducing-inputs Z.txt -H m.params Xz.txt y.txt
    assert_success
    assert_close "$output" "$(model_value m.txt log_evidence)" 1e-9
    run gpc-evidence -M laplace --inducing-inputs Z.txt Xz.txt y.txt
    assert_failure 2
    run gpc-evidence -M svgp --inducing 5 --inducing-inputs Z.txt Xz.txt y.txt
    assert_failure 2
    cut -d' ' -f1-6 Z.txt > Z6.txt
    run gpc-evidence -M svgp --inducing-inputs Z6.txt Xz.txt y.txt
    assert_failure 3
}

@test "svgp: a full-batch fit moves the inducing inputs with the hyperparameters to a higher bound; --fix-inducing keeps k-means's" {
    gpc-fit -q -M svgp --inducing 8 -O none -m start.txt Xz.txt y.txt
    gpc-fit -q -M svgp --inducing 8 --fix-inducing -m fixed.txt Xz.txt y.txt
    gpc-fit -q -M svgp --inducing 8 -m moved.txt Xz.txt y.txt
    for f in start fixed moved; do
        awk '$1 == "inducing" { n = $2; next } n > 0 && !/^#/ { for (j = 10; j <= NF; j++) printf "%s%s", $j, (j < NF ? " " : "\n"); n-- }' $f.txt > Z-$f.txt
        assert_shape Z-$f.txt 8 7
    done
    assert_files_equal Z-start.txt Z-fixed.txt
    run cmp -s Z-start.txt Z-moved.txt
    assert_failure
    num_lt "$(model_value fixed.txt log_evidence)" "$(model_value moved.txt log_evidence)"
    run gpc-fit -M ep --fix-inducing Xz.txt y.txt
    assert_failure 2
    assert_output --partial "--fix-inducing applies to -M svgp"
}

@test "svgp -l softmax: the bound's gradient matches central differences; fits full-batch and by minibatches predict" {
    evidence_fd X3.txt y3.txt se 'log_v0=0.5,log_w=-1' -M svgp -l softmax --inducing 8 --tol 1e-15
    run gpc-fit -q -M svgp -l softmax --inducing 10 -m m.txt X3.txt y3.txt
    assert_success
    assert_equal "$(model_value m.txt likelihood)" softmax
    gpc-predict -q -m m.txt -c p -o p.txt Xt3.txt
    assert_probs p.txt 3 30
    run gpc-fit -q -M svgp -l softmax --inducing 8 --batch 8 --epochs 3 -m mb.txt X3.txt y3.txt
    assert_success
    gpc-predict -q -m mb.txt -c p -o pb.txt Xt3.txt
    assert_probs pb.txt 3 30
}

@test "svgp, three classes: predictions on one thread and on two are the same bits (above the parallel threshold)" {
    fixed_threads
    gpc-fit -q -M svgp --inducing 10 -m m.txt X3.txt y3.txt
    # 600 test cases x 3 classes, above the 1500 at which the integrals run on threads
    for i in $(seq 20); do cat Xt3.txt; done > X600.txt
    assert_shape X600.txt 600 4
    OMP_NUM_THREADS=1 gpc-predict -q -m m.txt -o one.txt X600.txt
    OMP_NUM_THREADS=2 gpc-predict -q -m m.txt -o two.txt X600.txt
    assert_files_equal one.txt two.txt
    assert_probs one.txt 3 600
}
