#!/usr/bin/env bats
# make install and make uninstall: the tools, their pages, and under
# share/gpc the batch examples beside the data sets they run by default, laid
# out as in the source tree; the examples run from an installed copy with
# only the installed tools on PATH.

load test_helper

setup() {
    require_tools gpc-fit gpc-predict gpc-evidence gpc-scale gpc-score gpc-folds gpc-cv
    common_setup
    DEST="$BATS_TEST_TMPDIR/dest"
    # the flavour the tools were built in, so that make's "all" finds them
    # up to date instead of relinking them for another
    FLAVOUR=""
    if [ "$(cat "$REPO/bin/.flavour" 2>/dev/null)" = sanitize ]; then FLAVOUR="SANITIZE=1"; fi
}

install_to() {
    # shellcheck disable=SC2086
    make -s -C "$REPO" $FLAVOUR install DESTDIR="$DEST" PREFIX=/usr
}

# The files of a directory, relative to it, sorted.
files_of() {
    (cd "$1" && find . -type f | sort)
}

@test "install: tools, pages, examples and data under PREFIX; uninstall removes them all" {
    run install_to
    assert_success
    local t
    for t in gpc-kernel gpc-fit gpc-predict gpc-evidence gpc-hmc gpc-scale gpc-score \
             gpc-combine gpc-plot gpc-folds gpc-cv; do
        [ -x "$DEST/usr/bin/$t" ] || fail "no $DEST/usr/bin/$t"
        [ -f "$DEST/usr/share/man/man1/$t.1" ] || fail "no page $t.1"
    done
    [ -f "$DEST/usr/share/man/man5/gpc-formats.5" ] || fail "no gpc-formats.5"
    [ -f "$DEST/usr/share/man/man7/gpc.7" ] || fail "no gpc.7"
    # every example, the same bytes, the scripts executable
    local share="$DEST/usr/share/gpc"
    (cd "$REPO/examples" && git ls-files 2>/dev/null || find . -type f) |
        sed 's,^\./,,' | sort > want.txt
    files_of "$share/examples" | sed 's,^\./,,' > got.txt
    assert_files_equal got.txt want.txt
    while read -r f; do
        cmp -s "$REPO/examples/$f" "$share/examples/$f" || fail "examples/$f differs"
        case "$f" in
        *.sh | *.sbatch) [ -x "$share/examples/$f" ] || fail "examples/$f is not executable" ;;
        esac
    done < want.txt
    # the data sets examples/Makefile runs by default, and their provenance
    local d
    for d in $(sed -n 's/^SETS ?= //p' "$REPO/examples/Makefile"); do
        for t in X-train X-test y-train y-test; do
            cmp -s "$REPO/data/$d/$t.txt" "$share/data/$d/$t.txt" || fail "data/$d/$t.txt"
        done
        grep -q "^## $d " "$share/data/README.md" || fail "README.md does not describe $d"
    done
    run make -s -C "$REPO" $FLAVOUR uninstall DESTDIR="$DEST" PREFIX=/usr
    assert_success
    [ -z "$(find "$DEST" -type f)" ] || fail "left behind: $(find "$DEST" -type f)"
    [ ! -e "$share" ] || fail "$share is left"
}

@test "install: uninstall leaves a share directory that holds other files" {
    install_to
    touch "$DEST/usr/share/gpc/data/mine.txt"
    run make -s -C "$REPO" $FLAVOUR uninstall DESTDIR="$DEST" PREFIX=/usr
    assert_success
    [ -f "$DEST/usr/share/gpc/data/mine.txt" ] || fail "a file of the user's was removed"
    [ ! -e "$DEST/usr/share/gpc/examples" ] || fail "examples left"
    [ ! -e "$DEST/usr/share/gpc/data/pima" ] || fail "data/pima left"
}

@test "install: the examples run from an installed copy with the installed tools on PATH" {
    install_to
    command -v parallel > /dev/null || fail "GNU parallel is not installed (sh scripts/deps.sh)"
    # the commands gpc(7) gives: copy the share directory, run from its top
    cp -r "$DEST/usr/share/gpc" copy
    local path="$DEST/usr/bin:$(dirname "$(command -v parallel)"):/usr/bin:/bin"
    run env PATH="$path" sh -c 'command -v gpc-fit'
    assert_output "$DEST/usr/bin/gpc-fit"
    cd copy
    run env PATH="$path" make -s -C examples -j2 SETS='pima crabs'
    assert_success
    # what the source tree's examples and tools give on the same sets
    run make -s -C "$REPO/examples" -j2 SETS='pima crabs' DATA="$REPO/data" \
        OUT="$BATS_TEST_TMPDIR/ref"
    assert_success
    assert_files_equal examples/out/summary.txt "$BATS_TEST_TMPDIR/ref/summary.txt"
    assert_shape examples/out/summary.txt 2 6
    # the parallel cross-validation and grid, on crabs
    run env PATH="$path" JOBS=2 examples/cv.sh 4 data/crabs/X-train.txt \
        data/crabs/y-train.txt cv-out
    assert_success
    assert_output --regexp '^errors [0-9]+ of 80 '
    run env PATH="$path" LOG_V0=0 LOG_W="-1 0" JOBS=2 examples/grid.sh \
        data/crabs/X-train.txt data/crabs/y-train.txt data/crabs/X-test.txt data/crabs/y-test.txt
    assert_success
    assert_line --index 0 "# log_v0 log_w log_evidence errors cases rate mlpp brier"
    [ "${#lines[@]}" -eq 3 ] || fail "grid: $output"
}

@test "install: the examples' Makefile runs in place, writing only to OUT" {
    install_to
    local share="$DEST/usr/share/gpc" path="$DEST/usr/bin:/usr/bin:/bin"
    files_of "$share" > before.txt
    run env PATH="$path" make -s -C "$share/examples" SETS=crabs OUT="$PWD/inplace"
    assert_success
    assert_shape inplace/summary.txt 1 6
    files_of "$share" > after.txt
    assert_files_equal after.txt before.txt
}
