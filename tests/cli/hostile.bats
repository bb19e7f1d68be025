#!/usr/bin/env bats
# Hostile and unlucky input: outputs that are devices, FIFOs and links,
# counts in model files that the file cannot hold, impossible method and
# likelihood combinations, two inputs on one standard input, directories
# given as files, signals mid-run.  Every failure has its exit status, a
# message saying what is wrong, and leaves no output file.

load test_helper

setup() {
    common_setup
    require_tools gpc-fit gpc-predict gpc-evidence gpc-kernel gpc-scale gpc-score
    gpc-fit -q -O none -k se -p log_v0=0,log_w=-2 -m s.model Xz.txt y.txt
    gpc-fit -q -M ep -O none -k se -p log_v0=0,log_w=-2 -m ep.model Xz.txt y.txt
}

# expect_failure STATUS MESSAGE CMD...: CMD exits with STATUS, its standard
# error contains MESSAGE, out/ stays empty and no temporary file is left.
expect_failure() {
    local want="$1" message="$2"
    shift 2
    run --separate-stderr "$@"
    [ "$status" -eq "$want" ] || fail "$*: exit status $status, expected $want: $stderr"
    [ -z "$output" ] || fail "standard output was not empty: $output"
    case "$stderr" in
    *"$message"*) ;;
    *) fail "expected '$message' in the message, got: $stderr" ;;
    esac
    assert_dir_empty out
    assert_no_tmp_files
}

# A model file with one "key value" line changed by sed expression $2.
model_with() {
    sed "$2" "$1" > bad.model
    ! cmp -s "$1" bad.model || fail "sed '$2' changed nothing in $1"
}

# ---- outputs are written into, never replaced ------------------------------------

@test "outputs: a character device that fails (a copy of /dev/full) stays a device, exit 3" {
    [ "$(id -u)" = 0 ] || skip "mknod needs root"
    mknod full c 1 7
    run -3 --separate-stderr gpc-predict -m s.model -o full Xtz.txt
    [[ "$stderr" == *"full: write error: No space left on device"* ]] || fail "$stderr"
    [ -c full ] || fail "full is no longer a character device: $(ls -l full)"
    assert_no_tmp_files
}

@test "outputs: a copy of /dev/null stays a device and the run succeeds" {
    [ "$(id -u)" = 0 ] || skip "mknod needs root"
    mknod null c 1 3
    run -0 gpc-predict -m s.model -o null Xtz.txt
    [ -c null ] || fail "null is no longer a character device: $(ls -l null)"
    run -0 gpc-fit -q -O none -k se -m null -P null Xz.txt y.txt
    [ -c null ] || fail "null is no longer a character device after gpc-fit"
    assert_no_tmp_files
}

@test "outputs: a full device is a write error (exit 3) for every tool" {
    # as root a copy of /dev/full, so that a regression cannot replace the
    # machine's own; other users cannot replace /dev/full
    local full=/dev/full
    if [ "$(id -u)" = 0 ]; then
        mknod full c 1 7
        full=full
    fi
    run -3 gpc-predict -m s.model -o $full Xtz.txt
    assert_output --partial "$full: write error"
    run -3 gpc-kernel -k se -o $full Xz.txt
    run -3 gpc-kernel -k se --list -o $full Xz.txt
    run -3 gpc-scale -o $full Xz.txt
    run -3 gpc-evidence -k se -o $full Xz.txt y.txt
    run -3 gpc-fit -q -O none -k se -m $full Xz.txt y.txt
    run -3 gpc-fit -q -O none -k se -m out/m.model -P $full Xz.txt y.txt
    assert_dir_empty out
    run -3 gpc-fit -q -O none -k se -m $full -P out/p.txt Xz.txt y.txt
    assert_dir_empty out
    run -3 gpc-scale -s $full -o out/x.txt Xz.txt
    assert_dir_empty out
    [ -c $full ] || fail "$full is no longer a character device"
    assert_no_tmp_files
}

@test "outputs: --help and --version to a full device are a write error (exit 3) for every tool" {
    local tool
    for tool in "$REPO"/bin/gpc-*; do
        for opt in --help --version; do
            run --separate-stderr bash -c "'$tool' $opt > /dev/full"
            [ "$status" -eq 3 ] || fail "$(basename "$tool") $opt: status $status"
            [[ "$stderr" == *"write error: No space left on device"* ]] || fail "$stderr"
        done
    done
}

@test "outputs: a FIFO is written into and stays a FIFO" {
    mkfifo fifo
    gpc-predict -m s.model Xtz.txt > want.txt
    # the reader gives up after a while, should the FIFO have been replaced
    timeout 30 cat fifo > got.txt &
    local reader=$!
    run -0 gpc-predict -m s.model -o fifo Xtz.txt
    wait "$reader"
    [ -p fifo ] || fail "fifo is no longer a FIFO: $(ls -l fifo)"
    assert_files_equal got.txt want.txt
}

@test "outputs: a symlink stays a link and its target gets the output" {
    gpc-predict -m s.model Xtz.txt > want.txt
    echo old > target.txt
    ln -s target.txt link.txt
    mkdir -p d
    ln -s ../target.txt d/rel.txt
    run -0 gpc-predict -m s.model -o link.txt Xtz.txt
    [ -L link.txt ] || fail "link.txt was replaced by a regular file"
    assert_files_equal target.txt want.txt
    echo old > target.txt
    run -0 gpc-predict -m s.model -o d/rel.txt Xtz.txt
    [ -L d/rel.txt ] || fail "d/rel.txt was replaced by a regular file"
    assert_files_equal target.txt want.txt
    ln -s new.txt dangling.txt
    run -0 gpc-predict -m s.model -o dangling.txt Xtz.txt
    [ -L dangling.txt ] || fail "dangling.txt was replaced by a regular file"
    assert_files_equal new.txt want.txt
    ln -s loop1 loop2 && ln -s loop2 loop1
    run -3 gpc-predict -m s.model -o loop1 Xtz.txt
    assert_output --partial "symbolic links"
    assert_no_tmp_files
}

@test "outputs: a replaced file keeps its permissions" {
    echo old > kept.txt
    chmod 640 kept.txt
    run -0 gpc-predict -m s.model -o kept.txt Xtz.txt
    [ "$(stat -c %a kept.txt)" = 640 ] || fail "mode became $(stat -c %a kept.txt)"
}

@test "outputs: /dev/fd/1 is the descriptor itself, so >> appends" {
    # /dev/fd/N rather than /dev/stdout: as root a regression would rename a
    # file over the machine's /dev/stdout, while /proc refuses it
    echo first > log.txt
    gpc-predict -m s.model -o /dev/fd/1 Xtz.txt >> log.txt
    [ "$(head -n 1 log.txt)" = first ] || fail "the earlier content was truncated"
    [ "$(wc -l < log.txt)" -eq 22 ] || fail "expected 22 lines (a header and 20 rows after the first), found $(wc -l < log.txt)"
}

@test "outputs: a directory or an empty name is refused before any work" {
    expect_failure 3 "out: is a directory" gpc-predict -m s.model -o out Xtz.txt
    expect_failure 2 "output file name is empty" gpc-predict -m s.model -o '' Xtz.txt
    expect_failure 2 "output file name is empty" gpc-fit -O none -k se -m '' Xz.txt y.txt
    expect_failure 2 "output file name is empty" gpc-kernel -k se -o '' Xz.txt
    expect_failure 2 "output file name is empty" gpc-scale -s '' -o out/x Xz.txt
    expect_failure 2 "output file name is empty" gpc-evidence -k se -o '' Xz.txt y.txt
}

@test "outputs: an unwritable second output leaves no first one (gpc-fit -P, gpc-scale -s)" {
    expect_failure 3 "/nonexistent/p: cannot create" \
        gpc-fit -O none -k se -m out/m.model -P /nonexistent/p Xz.txt y.txt
    expect_failure 3 "/nonexistent/s: cannot create" gpc-scale -s /nonexistent/s -o out/x Xz.txt
}

@test "outputs: two outputs naming one file are a usage error (exit 2), however spelt" {
    ln -s m out-link
    expect_failure 2 "same: named for two outputs" \
        gpc-fit -O none -k se -m same -P same Xz.txt y.txt
    expect_failure 2 "../$(basename "$PWD")/same: named for two outputs" \
        gpc-fit -O none -k se -m same -P "../$(basename "$PWD")/same" Xz.txt y.txt
    expect_failure 2 "out-link: named for two outputs" \
        gpc-fit -O none -k se -m m -P out-link Xz.txt y.txt
    expect_failure 2 "s: named for two outputs" gpc-scale -s s -o ./s Xz.txt
    expect_failure 2 "p: named for two outputs" gpc-cv -K 2 --per-fold=p -o p Xz.txt y.txt -- -k se
    [ ! -e same ] && [ ! -e s ] && [ ! -e m ] && [ ! -e p ] || fail "an output was written"
    rm out-link
    # a device may take both (nothing is replaced)
    run -0 gpc-fit -q -O none -k se -m /dev/null -P /dev/null Xz.txt y.txt
}

@test "outputs: names of 250 to 255 bytes are written (the temporary's name is cut to fit)" {
    local n name
    for n in 250 254 255; do
        name=$(printf 'm%.0s' $(seq "$n"))
        run -0 gpc-fit -q -O none -k se -m "$name" Xz.txt y.txt
        [ -s "$name" ] || fail "no model of a $n-byte name"
        run -0 gpc-predict -m "$name" -o "$name" Xtz.txt
        [ "$(wc -l < "$name")" -eq 21 ] || fail "the predictions are not whole"
        rm "$name"
    done
    # cut at a character boundary: a name of two-byte characters
    name=$(printf '\303\251%.0s' $(seq 127))
    run -0 gpc-predict -m s.model -o "$name" Xtz.txt
    [ "$(wc -l < "$name")" -eq 21 ] || fail "the output is not whole"
    assert_no_tmp_files
}

@test "outputs: SIGTERM, SIGINT and SIGHUP mid-run leave no temporary file" {
    local sig pid status
    # job control, so that the background job does not start with SIGINT
    # ignored as a non-interactive shell's background jobs do
    set -m
    for sig in TERM INT HUP; do
        # many restarts keep the fit busy long enough to be interrupted
        gpc-fit -q -R 10000 -k se -m out/m.model Xz.txt y.txt &
        pid=$!
        for _ in $(seq 100); do
            [ -n "$(find out -name '*.tmp*')" ] && break
            sleep 0.05
        done
        [ -n "$(find out -name '*.tmp*')" ] || fail "no temporary output appeared"
        kill -s "$sig" "$pid"
        status=0
        wait "$pid" || status=$?
        [ "$status" -gt 128 ] || fail "SIG$sig: exit status $status, expected death by signal"
        assert_dir_empty out
    done
}

# ---- model files: counts the file cannot hold, impossible combinations -----------

@test "models: counts larger than the file can hold are refused before allocating" {
    model_with s.model 's/^training 40$/training 999999999/'
    expect_failure 3 "bad.model:" gpc-predict -m bad.model -o out/p Xtz.txt
    model_with s.model 's/^dim 7$/dim 1000000000/'
    expect_failure 3 "bad.model:6: dim 1000000000 is more than" gpc-predict -m bad.model -o out/p Xtz.txt
    model_with s.model 's/^dim 7$/dim 1e9/'
    expect_failure 3 "bad.model:6:" gpc-predict -m bad.model -o out/p Xtz.txt
    model_with s.model 's/^hyperparameters 2$/hyperparameters 1000000/'
    expect_failure 3 "bad.model:7:" gpc-predict -m bad.model -o out/p Xtz.txt
    model_with ep.model 's/^training 40$/training 41/'
    expect_failure 3 "bad.model:" gpc-predict -m bad.model -o out/p Xtz.txt
}

@test "models: method and likelihood combinations no tool writes are refused" {
    model_with s.model 's/^likelihood logistic$/likelihood step/'
    expect_failure 3 "bad.model:3: method laplace with the step likelihood" \
        gpc-predict -m bad.model -o out/p Xtz.txt
    model_with s.model 's/^likelihood logistic$/likelihood logistic 0.1/'
    expect_failure 3 "bad.model:3: method laplace takes no label noise" \
        gpc-predict -m bad.model -o out/p Xtz.txt
    model_with ep.model 's/^likelihood probit$/likelihood logistic/'
    expect_failure 3 "bad.model:3: method ep with the logistic likelihood" \
        gpc-predict -m bad.model -o out/p Xtz.txt
    model_with s.model '/^gpc-model 1$/d'
    expect_failure 3 "not a gpc model file" gpc-predict -m bad.model -o out/p Xtz.txt
    model_with s.model 's/^method laplace$/method svm/'
    expect_failure 3 "unknown method 'svm'" gpc-predict -m bad.model -o out/p Xtz.txt
}

# ---- inputs: one standard input, no directories -------------------------------------

@test "inputs: two inputs on standard input are a usage error (exit 2)" {
    expect_failure 2 "cannot both be standard input" \
        gpc-fit -O none -k se -H - -m out/m Xz.txt - < y.txt
    expect_failure 2 "cannot both be standard input" \
        gpc-evidence -k se -g - -o out/e - y.txt < Xz.txt
    expect_failure 2 "cannot both be standard input" gpc-predict -m - -o out/p < s.model
    expect_failure 2 "cannot both be standard input" gpc-kernel -k se -H - -o out/k - < Xz.txt
    expect_failure 2 "cannot both be standard input" gpc-scale -r - -o out/x < Xz.txt
    expect_failure 2 "cannot both be standard input" gpc-score - - < y.txt
}

@test "inputs: a directory given as a file is an input error naming it" {
    mkdir adir
    expect_failure 3 "adir: is a directory" gpc-fit -O none -k se -H adir -m out/m Xz.txt y.txt
    expect_failure 3 "adir: is a directory" gpc-fit -O none -k se -m out/m adir y.txt
    expect_failure 3 "adir: is a directory" gpc-fit -O none -k se -m out/m Xz.txt adir
    expect_failure 3 "adir: is a directory" gpc-predict -m adir -o out/p Xtz.txt
    expect_failure 3 "adir: is a directory" gpc-scale -r adir -o out/x Xz.txt
}

# ---- gpc-scale: statistics stay finite --------------------------------------------

@test "gpc-scale: values near the double range give finite statistics, or exit 3" {
    printf '1e307 1\n-1e307 2\n1e307 3\n' > big.txt
    run -0 gpc-scale -s stats.txt -o scaled.txt big.txt
    ! grep -qi 'inf\|nan' stats.txt scaled.txt || fail "$(cat stats.txt scaled.txt)"
    awk 'NR == 1 && ($1 < 0.577 || $1 > 0.578) { exit 1 }' scaled.txt ||
        fail "first scaled value is not 1/sqrt(3): $(head -n 1 scaled.txt)"
    printf '1.7e308 1\n-1.7e308 2\n' > huge.txt
    expect_failure 3 "huge.txt: column 1:" gpc-scale -s out/s -o out/x huge.txt
}

# ---- memory -----------------------------------------------------------------------------

@test "memory: an allocation that fails is 'out of memory', exit 3, no output" {
    # K for 20000 cases needs 3.2 GB; the address space is capped at 1.5 GB
    awk 'BEGIN { for (i = 0; i < 20000; i++) print i % 7, i % 11 }' > X20k.txt
    if [ "$(cat "$REPO/bin/.flavour" 2>/dev/null)" = sanitize ]; then
        # AddressSanitizer reserves terabytes of address space, so the cap is
        # its own allocation limit, past which malloc returns NULL
        run -3 --separate-stderr env \
            ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=1500 \
            gpc-kernel -k se -o out/K.txt X20k.txt
    else
        run -3 --separate-stderr bash -c 'ulimit -v 1500000 && gpc-kernel -k se -o out/K.txt X20k.txt'
    fi
    [[ "$stderr" == *"gpc-kernel: out of memory (3200000000 bytes)"* ]] || fail "$stderr"
    assert_dir_empty out
}

@test "results: a model whose hyperparameters overflow gives exit 1, not NaN" {
    # refused where the model is loaded (Laplace), or where the result is
    # written (EP): either way exit 1 saying what is not finite
    model_with s.model 's/^log_v0 .*/log_v0 1000/'
    expect_failure 1 "not finite" gpc-predict -m bad.model -o out/p Xtz.txt
    model_with ep.model 's/^log_v0 .*/log_v0 1000/'
    expect_failure 1 "not a finite number" gpc-predict -m bad.model -o out/p Xtz.txt
}
