#!/usr/bin/env bats
# Every example in README.md, doc/methods.md and the man pages' EXAMPLES
# sections (gpc(7): PIPELINES) runs as shown and prints what the document
# shows; repro/README.md and bench/README.md hold tables and reports only,
# and are checked for command blocks that would not run.
# tests/examples/examples.py extracts them ("$ " lines are commands, the lines
# under a command what it prints, "..." elides), runs each document's
# examples in order in one shell in a scratch directory (mktemp -d, with
# bin/ and data/ of this tree linked into a stand-in for a fresh clone's
# root, never the source tree itself), checks each command's exit status and
# compares every line shown with the line printed, whole (a number shown
# with 12 or more significant digits within 1e-9 of the printed one).  A
# failure names the document, the example and the line.  It also fails on a
# block of commands without prompts that is not marked "not run".
#
# The expected values are the documents' own text: written from the tools'
# output when the example was made, and checked by reading against the
# methods (see the prose around each example), not pasted in by this test.

load test_helper

setup() {
    require_tools gpc-kernel gpc-fit gpc-predict gpc-evidence gpc-hmc gpc-scale \
        gpc-score gpc-combine gpc-plot gpc-folds
    cd "$BATS_TEST_TMPDIR" || return 1
    PY=python3
    [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
    # gpc-predict(1) reads predictions with numpy, as its reader would:
    # Debian's python3 has it (scripts/deps.sh), a python3 found earlier on
    # PATH may not
    if ! python3 -c 'import numpy' 2>/dev/null && "$PY" -c 'import numpy' 2>/dev/null; then
        mkdir -p "$BATS_TEST_TMPDIR/pybin"
        ln -sf "$PY" "$BATS_TEST_TMPDIR/pybin/python3"
        PATH="$BATS_TEST_TMPDIR/pybin:$PATH"
    fi
}

# run_examples DOC: run DOC's examples; on failure show the runner's report.
# Under the sanitizers (make check SANITIZE=1 sets GPC_SANITIZED) the tools
# are compiled otherwise and round otherwise in the last digits, and a
# chain whose step accepts by a hair then takes another path: there every
# command must succeed (a sanitizer's finding is status 86), and what they
# print is compared in the plain build.
run_examples() {
    local mode=run
    [ -z "${GPC_SANITIZED:-}" ] || mode=run-status
    run "$PY" "$REPO/tests/examples/examples.py" "$mode" "$REPO/$1"
    if [ "$status" -ne 0 ]; then
        printf '%s\n' "$output" | grep -v '^# ' >&2
        fail "examples of $1 failed (status $status)"
    fi
    # at least one example ran, so a document whose prompts were lost fails
    [[ "$output" =~ \#\ $1:\ ([1-9][0-9]*)\ examples ]] ||
        fail "no runnable example found in $1"
}

@test "examples: README.md" {
    run_examples README.md
}

@test "examples: doc/methods.md" {
    run_examples doc/methods.md
}

@test "examples: repro/README.md and bench/README.md have no unmarked command blocks" {
    run "$PY" "$REPO/tests/examples/examples.py" lint "$REPO/repro/README.md" \
        "$REPO/bench/README.md"
    assert_success
    assert_output ''
}

@test "examples: gpc(7)" {
    run_examples man/gpc.7
}

@test "examples: gpc-kernel(1)" {
    run_examples man/gpc-kernel.1
}

@test "examples: gpc-fit(1)" {
    run_examples man/gpc-fit.1
}

@test "examples: gpc-predict(1)" {
    run_examples man/gpc-predict.1
}

@test "examples: gpc-evidence(1)" {
    run_examples man/gpc-evidence.1
}

@test "examples: gpc-hmc(1)" {
    run_examples man/gpc-hmc.1
}

@test "examples: gpc-scale(1)" {
    run_examples man/gpc-scale.1
}

@test "examples: gpc-score(1)" {
    run_examples man/gpc-score.1
}

@test "examples: gpc-combine(1)" {
    run_examples man/gpc-combine.1
}

@test "examples: gpc-plot(1)" {
    run_examples man/gpc-plot.1
}

@test "examples: gpc-folds(1)" {
    run_examples man/gpc-folds.1
}

@test "examples: gpc-cv(1)" {
    require_tools gpc-cv
    run_examples man/gpc-cv.1
}

@test "examples: gpc-formats(5) has no unmarked command blocks" {
    run "$PY" "$REPO/tests/examples/examples.py" lint "$REPO/man/gpc-formats.5"
    assert_success
    assert_output ''
}

# The checker itself, on a small document: a right example passes, and a
# number rounded by hand, a wrong word, a line cut inside a number, a failing
# command and an unmarked block each fail with the document, the example and
# the line named; a full-precision number passes within 1e-9 only.
@test "examples: the checker reports rot by document, example and line" {
    cat > good.md <<'EOF'
Intro.

    $ printf '%s\n' 'errors 69 of 332 (20.8%), mlpp -0.43958' 'x' 'y'
    errors 69 of 332 (20.8%), mlpp -0.43958
    ...
    $ printf 'a b 1.25 more\n'
    a b 1.25 ...
EOF
    run "$PY" "$REPO/tests/examples/examples.py" run "$PWD/good.md"
    assert_success

    # lines compare whole: -0.4396 is not what was printed
    sed 's/-0\.43958$/-0.4396/' good.md > number.md
    run "$PY" "$REPO/tests/examples/examples.py" run "$PWD/number.md"
    [ "$status" -eq 1 ]
    assert_output --partial 'number.md: example 1 (line 3): line 4: shows'
    assert_output --partial 'errors 69 of 332 (20.8%), mlpp -0.4396'

    sed 's/^    errors 69 of 332/    errors 68 of 332/' good.md > integer.md
    run "$PY" "$REPO/tests/examples/examples.py" run "$PWD/integer.md"
    [ "$status" -eq 1 ]
    assert_output --partial 'integer.md: example 1 (line 3): line 4: shows'

    sed 's/^    a b 1.25/    a c 1.25/' good.md > word.md
    run "$PY" "$REPO/tests/examples/examples.py" run "$PWD/word.md"
    [ "$status" -eq 1 ]
    assert_output --partial 'word.md: example 1 (line 3): line 7: shows'

    # " ..." leaves out whole words only, never the end of a number
    sed 's/^    a b 1\.25 \.\.\./    a b 1.2 .../' good.md > cut.md
    run "$PY" "$REPO/tests/examples/examples.py" run "$PWD/cut.md"
    [ "$status" -eq 1 ]
    assert_output --partial 'cut.md: example 1 (line 3): line 7: shows'

    # numbers of 12 or more significant digits (a matrix's, written for a
    # round trip) may differ by 1e-9 relative in their last digits, as they
    # do between CPUs' kernels; shorter ones, and larger differences, not
    printf 'Intro.\n\n    $ printf "%%s\\n" "ev -106.58509044343899 1 0.25"\n' > full.md
    printf '    ev -106.58509044343901 1 0.25\n' >> full.md
    run "$PY" "$REPO/tests/examples/examples.py" run "$PWD/full.md"
    assert_success
    sed 's/-106\.58509044343901/-106.58519044343901/' full.md > far.md
    run "$PY" "$REPO/tests/examples/examples.py" run "$PWD/far.md"
    [ "$status" -eq 1 ]
    assert_output --partial 'far.md: example 1 (line 3): line 4: shows'
    sed 's/-106\.58509044343901/-106.585090443439/; s/ 0\.25$/ 0.250/' full.md > short.md
    run "$PY" "$REPO/tests/examples/examples.py" run "$PWD/short.md"
    [ "$status" -eq 1 ]
    sed 's/-106\.58509044343901 1/-106.58509044343901 2/' full.md > integer2.md
    run "$PY" "$REPO/tests/examples/examples.py" run "$PWD/integer2.md"
    [ "$status" -eq 1 ]

    printf '\nThen:\n\n    $ gpc-score no-such-file.txt no-such-labels.txt\n' >> good.md
    run "$PY" "$REPO/tests/examples/examples.py" run "$PWD/good.md"
    [ "$status" -eq 1 ]
    assert_output --partial 'good.md: example 2 (line 11): line 11: exit status 3 from'
    assert_output --partial 'gpc-score: no-such-file.txt: cannot open'

    printf 'Intro.\n\n    gpc-fit -m m x.txt y.txt\n' > unmarked.md
    run "$PY" "$REPO/tests/examples/examples.py" lint "$PWD/unmarked.md"
    [ "$status" -eq 1 ]
    assert_output --partial 'unmarked.md:3: commands without "$ " prompts'
    printf 'Intro.\n\n<!-- example: not run: needs your data -->\n\n    gpc-fit -m m x.txt y.txt\n' \
        > marked.md
    run "$PY" "$REPO/tests/examples/examples.py" lint "$PWD/marked.md"
    assert_success
}
