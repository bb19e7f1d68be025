#!/usr/bin/env bats
# gpc-hmc chains survive interruption: a run stopped by a signal leaves every
# finished iteration on disk and --extend continues it into exactly the chain
# one uninterrupted run writes; a numerical failure keeps the rows before it.

load test_helper

setup() {
    require_tools gpc-hmc
    common_setup
}

# Rows of a chain (lines that are neither '#' lines nor the column line).
rows() { awk '!/^#/ && !/^iteration/' "$1" | wc -l; }

# interrupt SIG K FILE COMMAND...: run COMMAND in the background (with SIG at
# its default action, which a shell without job control would not give a
# background SIGINT), wait until FILE holds at least K rows, send SIG and
# wait; the command's exit status is left in $killed_status.
interrupt() {
    local sig="$1" k="$2" file="$3" pid tries=0
    shift 3
    env --default-signal="$sig" "$@" 2> stop.err &
    pid=$!
    until [ -f "$file" ] && [ "$(rows "$file")" -ge "$k" ]; do
        if ! kill -0 "$pid" 2>/dev/null || [ $((tries += 1)) -gt 1500 ]; then
            kill -KILL "$pid" 2>/dev/null || true
            fail "the run ended or stalled before $file had $k rows"
        fi
        sleep 0.02
    done
    kill -s "$sig" "$pid"
    killed_status=0
    wait "$pid" || killed_status=$?
}

# stop_and_extend SIG [OPTION...]: a run stopped by SIG after a random number
# of rows, then extended by 5, equals one run of as many iterations.
stop_and_extend() {
    local sig="$1" k=$((RANDOM % 15 + 2)) r
    shift
    echo "stopping after at least $k rows"
    interrupt "$sig" "$k" c.txt gpc-hmc -k se -L 5 -q "$@" -n 1000000 -o c.txt Xz.txt y.txt
    local num
    num=$(kill -l "$sig")
    [ "$killed_status" -eq $((128 + num)) ] ||
        fail "status $killed_status after $sig, expected $((128 + num))"
    r=$(rows c.txt)
    run grep -c "stopped by SIG$sig after iteration $r; c.txt holds every finished" stop.err
    assert_output 1
    assert_no_tmp_files
    run tail -c 1 c.txt
    assert_output ""    # the file ends with a newline: every row is whole
    run gpc-hmc -q -x c.txt -n 5 Xz.txt y.txt
    assert_success
    gpc-hmc -k se -L 5 -q "$@" -n $((r + 5)) -o one.txt Xz.txt y.txt
    assert_files_equal one.txt c.txt
    assert_no_tmp_files
}

@test "chain: stopped by SIGTERM and extended, it equals one uninterrupted run" {
    stop_and_extend TERM
}

@test "chain: stopped by SIGINT and extended, it equals one uninterrupted run" {
    stop_and_extend INT
}

@test "chain: stopped by SIGHUP, with persistent momenta, extended exactly" {
    stop_and_extend HUP -a 0.5
}

@test "chain: a chain extended in place is stopped and extended again exactly" {
    gpc-hmc -k se -L 5 -q -n 3 -o c.txt Xz.txt y.txt
    interrupt TERM 8 c.txt gpc-hmc -q -x c.txt -n 1000000 Xz.txt y.txt
    [ "$killed_status" -eq 143 ]
    r=$(rows c.txt)
    gpc-hmc -q -x c.txt -n 2 Xz.txt y.txt
    gpc-hmc -k se -L 5 -q -n $((r + 2)) -o one.txt Xz.txt y.txt
    assert_files_equal one.txt c.txt
    assert_no_tmp_files
}

@test "chain: a copy extended into -o is in place once its first new row is" {
    gpc-hmc -k se -L 5 -q -n 3 -o a.txt Xz.txt y.txt
    cp a.txt before.txt
    interrupt TERM 5 b.txt gpc-hmc -q -x a.txt -n 1000000 -o b.txt Xz.txt y.txt
    [ "$killed_status" -eq 143 ]
    assert_files_equal a.txt before.txt
    r=$(rows b.txt)
    gpc-hmc -k se -L 5 -q -n "$r" -o one.txt Xz.txt y.txt
    assert_files_equal one.txt b.txt
    assert_no_tmp_files
}

@test "chain: a signal ignored at the start (nohup) does not stop the run" {
    # SIG_IGN is inherited: the shell's trap '' HUP ignores SIGHUP in the child
    (
        trap '' HUP
        exec gpc-hmc -k se -L 5 -q -n 40 -o c.txt Xz.txt y.txt
    ) &
    pid=$!
    until [ -f c.txt ]; do sleep 0.01; done
    kill -HUP "$pid" 2>/dev/null || true
    wait "$pid"
    [ "$(rows c.txt)" -eq 40 ]
}

@test "chain: the standard output gets each row as it is finished" {
    # a reader of the pipe sees the first rows long before the run ends
    env --default-signal=TERM gpc-hmc -k se -L 5 -q -n 1000000 Xz.txt y.txt > out.txt 2>/dev/null &
    pid=$!
    tries=0
    until [ "$(rows out.txt)" -ge 3 ]; do
        [ $((tries += 1)) -lt 1500 ] || { kill -KILL "$pid"; fail "no rows on standard output"; }
        sleep 0.02
    done
    kill -TERM "$pid"
    st=0
    wait "$pid" || st=$?
    [ "$st" -eq 143 ]
    r=$(rows out.txt)
    gpc-hmc -k se -L 5 -q -n "$r" -o one.txt Xz.txt y.txt
    assert_files_equal one.txt out.txt
}

@test "chain: a numerical failure when extending is status 1 and keeps the chain" {
    gpc-hmc -k se -L 5 -q -n 2 -o c.txt Xz.txt y.txt
    # a last state whose kernel matrix overflows: the next iteration cannot start
    awk '/^2 / { $2 = 1000 } { print }' c.txt > bad.txt
    cp bad.txt before.txt
    run gpc-hmc -q -x bad.txt -n 3 Xz.txt y.txt
    assert_failure 1
    assert_output --partial "iteration 3: "
    assert_output --partial "the iterations before it are in bad.txt"
    assert_files_equal bad.txt before.txt
    run gpc-hmc -q -x bad.txt -n 3 -o out/c.txt Xz.txt y.txt
    assert_failure 1
    assert_dir_empty out
    assert_no_tmp_files
}

@test "chain: a last row cut short (killed while writing) is left out and rewritten" {
    # with the step adapted over the first iteration: the rows after it
    # replay the adaptation when the chain is continued
    gpc-hmc -k se -L 5 -q -n 6 --adapt=1 -o one.txt Xz.txt y.txt
    head -c -15 one.txt > c.txt
    run gpc-hmc --summary --burn 1 c.txt
    assert_success
    assert_output --partial "c.txt:19: the last row has no end of line"
    assert_output --partial "iterations 2..5 of each"
    run gpc-hmc -q -x c.txt -n 1 Xz.txt y.txt
    assert_success
    assert_output --partial "c.txt:19: the last row has no end of line"
    assert_files_equal one.txt c.txt
}

@test "chain: extending in place needs a regular file; -o works from a pipe" {
    gpc-hmc -k se -L 5 -q -n 3 -o c.txt Xz.txt y.txt
    run gpc-hmc -q -x <(cat c.txt) -n 2 Xz.txt y.txt
    assert_failure 3
    assert_output --partial "not a regular file, so it cannot be extended in place; give -o"
    gpc-hmc -q -x <(cat c.txt) -n 2 -o ext.txt Xz.txt y.txt
    gpc-hmc -q -x - -n 2 Xz.txt y.txt < c.txt > std.txt
    gpc-hmc -k se -L 5 -q -n 5 -o one.txt Xz.txt y.txt
    assert_files_equal one.txt ext.txt
    assert_files_equal one.txt std.txt
}

@test "chain: -o names a device, a pipe or a link: written through, never replaced" {
    # a file renamed over the name would replace the device, pipe or link;
    # links in this directory keep a failure of this test from touching /dev
    ln -s /dev/full full
    run gpc-hmc -k se -L 5 -q -n 2 -o full Xz.txt y.txt
    assert_failure 3
    assert_output --partial "full: write error: No space left on device"
    [ -L full ] || fail "the link to /dev/full was replaced"
    gpc-hmc -k se -L 5 -q -n 2 -o one.txt Xz.txt y.txt
    ln -s /dev/stdout out.lnk
    gpc-hmc -k se -L 5 -q -n 2 -o out.lnk Xz.txt y.txt > dev.txt
    assert_files_equal one.txt dev.txt
    [ -L out.lnk ] || fail "the link to /dev/stdout was replaced"
    mkfifo pipe
    cat pipe > fifo.txt &
    gpc-hmc -k se -L 5 -q -n 2 -o pipe Xz.txt y.txt
    wait $!
    assert_files_equal one.txt fifo.txt
    [ -p pipe ] || fail "the FIFO was replaced"
    assert_no_tmp_files
}

@test "chain: a chain that a run is writing cannot be extended by another" {
    env --default-signal=TERM gpc-hmc -k se -L 5 -q -n 1000000 -o c.txt Xz.txt y.txt 2>/dev/null &
    pid=$!
    tries=0
    until [ -f c.txt ] && [ "$(rows c.txt)" -ge 3 ]; do
        [ $((tries += 1)) -lt 1500 ] || { kill -KILL "$pid"; fail "no rows"; }
        sleep 0.02
    done
    run gpc-hmc -q -x c.txt -n 1 Xz.txt y.txt
    kill -TERM "$pid"
    wait "$pid" || true
    assert_failure 3
    assert_output --partial "c.txt: another run is writing this chain"
    r=$(rows c.txt)
    # the chain is the first run's alone, and can be extended now
    gpc-hmc -q -x c.txt -n 1 Xz.txt y.txt
    gpc-hmc -k se -L 5 -q -n $((r + 1)) -o one.txt Xz.txt y.txt
    assert_files_equal one.txt c.txt
}

# second_writer_refused ARGS...: a long chain run `gpc-hmc -q ARGS` writes
# c.txt; while it does, another gpc-hmc run, a Gibbs run and a gpc-fit given
# the same path are refused (exit 3, naming the file).  Then the first run is
# stopped, and its chain equals one run of as many iterations.
second_writer_refused() {
    local pid tries=0 r
    env --default-signal=TERM gpc-hmc -q "$@" -n 1000000 -o c.txt 2> first.err &
    pid=$!
    until [ -f c.txt ] && [ "$(rows c.txt)" -ge 2 ]; do
        [ $((tries += 1)) -lt 1500 ] || { kill -KILL "$pid"; fail "no rows"; }
        sleep 0.02
    done
    run --separate-stderr gpc-hmc -q "$@" -n 40 -S 2 -o c.txt
    local hmc_status=$status hmc_err=$stderr
    run --separate-stderr gpc-hmc -q -M gibbs -k se -n 3 -o c.txt X3.txt y3.txt
    local gibbs_status=$status
    run --separate-stderr gpc-fit -q -O none -k se -m c.txt Xz.txt y.txt
    kill -TERM "$pid"
    wait "$pid" || true
    [ "$hmc_status" -eq 3 ] || fail "second gpc-hmc: status $hmc_status: $hmc_err"
    [[ "$hmc_err" == *"c.txt: another run is writing this file"* ]] || fail "$hmc_err"
    [ "$gibbs_status" -eq 3 ] || fail "gibbs run: status $gibbs_status"
    [ "$status" -eq 3 ] || fail "gpc-fit -m: status $status: $stderr"
    [[ "$stderr" == *"c.txt: another run is writing this file"* ]] || fail "$stderr"
    r=$(rows c.txt)
    gpc-hmc -q "$@" -n "$r" -o one.txt
    assert_files_equal one.txt c.txt
    assert_no_tmp_files
}

@test "chain: a second run given the path of a chain being written is refused; the chain completes" {
    iris_fixtures
    second_writer_refused -k se -L 5 Xz.txt y.txt
}

@test "chain: a Gibbs chain being written is not replaced by another run either" {
    iris_fixtures
    second_writer_refused -M gibbs -k se X3.txt y3.txt
}

@test "chain: two runs started together on one path: one is refused, the other's chain stands" {
    local pid s1=0 s2=0 r
    # a long run and a short one: whichever puts its first row in place
    # first keeps the path, and the other is refused when it tries
    env --default-signal=TERM gpc-hmc -q -k se -L 5 -n 1000000 -o c.txt Xz.txt y.txt 2> first.err &
    pid=$!
    gpc-hmc -q -k se -L 5 -n 30 -S 2 -o c.txt Xz.txt y.txt 2> second.err || s2=$?
    if [ "$s2" -eq 0 ]; then
        wait "$pid" || s1=$?
        [ "$s1" -eq 3 ] || fail "both runs wrote c.txt (first: status $s1)"
        grep -q "c.txt: another run is writing this file" first.err
        gpc-hmc -q -k se -L 5 -n 30 -S 2 -o one.txt Xz.txt y.txt
    else
        kill -TERM "$pid"
        wait "$pid" || true
        [ "$s2" -eq 3 ] || fail "second: status $s2: $(cat second.err)"
        grep -q "c.txt: another run is writing this file" second.err
        r=$(rows c.txt)
        gpc-hmc -q -k se -L 5 -n "$r" -o one.txt Xz.txt y.txt
    fi
    assert_files_equal one.txt c.txt
    assert_no_tmp_files
}
