#!/usr/bin/env bats
# Threads on a busy machine: with more busy processes than cores, the tools
# run on one thread whatever OMP_NUM_THREADS says (no thread then waits at a
# barrier for one the scheduler has set aside), OPENBLAS_NUM_THREADS when
# set still fixes OpenBLAS's count, and results are those of one thread.
# The runs are measured in CPU time, which spinning threads inflate many
# times over and which a loaded machine does not (wall time would).

load test_helper

setup() {
    common_setup
    unset OMP_WAIT_POLICY GOMP_SPINCOUNT GPC_THREAD_POLICY OPENBLAS_NUM_THREADS
    export OMP_NUM_THREADS=2
    BUSY=()
}

teardown() {
    [ "${#BUSY[@]}" -eq 0 ] || kill "${BUSY[@]}" 2>/dev/null || true
}

# Two busy processes per core, as on a shared node under make -j.
start_load() {
    local cores k
    cores="$(getconf _NPROCESSORS_ONLN)"
    for ((k = 0; k < 2 * cores; k++)); do
        sh -c 'while :; do :; done' 3>&- &
        BUSY+=("$!")
    done
    sleep 0.3
}

# The user + system CPU seconds of a command (its status checked), from the
# shell's children times.
cpu_seconds() {
    local out
    out="$( ("$@" > /dev/null || exit 99; times) | tail -n 1)" || fail "$* failed"
    echo "$out" | awk '{ n = 0; for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); n += 60 * t[1] + t[2] }
                         printf "%.3f\n", n }'
}

@test "threads: --version names the count and the policy, and a busy machine gets one" {
    run --separate-stderr gpc-fit --version
    assert_success
    assert_line --index 2 --regexp '^Threads: [12] now, at most 2 \(fewer while other processes keep the cores busy\)$'
    GPC_THREAD_POLICY=fixed run --separate-stderr gpc-fit --version
    assert_success
    assert_line --index 2 'Threads: 2 (GPC_THREAD_POLICY=fixed)'
    start_load
    run --separate-stderr gpc-fit --version
    assert_success
    assert_line --index 2 --regexp '^Threads: 1 now, at most 2 '
}

@test "threads: under load a multiclass fit in the class-parallel range costs the CPU time of one thread" {
    local min one two
    min="$(sed -n 's/^#define GPC_PARALLEL_MIN_CLASS_ROWS \([0-9][0-9]*\).*/\1/p' "$REPO/src/lib/base/parallel.h")"
    [ -n "$min" ] || fail "no GPC_PARALLEL_MIN_CLASS_ROWS in parallel.h"
    angle_data $((min + 50)) 5
    start_load
    one="$(OMP_NUM_THREADS=1 cpu_seconds gpc-fit -q -k se -O map -m m1.txt Xp.txt yp.txt)"
    two="$(cpu_seconds gpc-fit -q -k se -O map -m m2.txt Xp.txt yp.txt)"
    assert_files_equal m1.txt m2.txt
    awk -v a="$one" -v b="$two" 'BEGIN { exit !(b <= 2 * a + 0.2) }' ||
        fail "default threads took $two s of CPU against $one s on one thread"
}

@test "threads: under load a binary fit above the BLAS threshold costs the CPU time of one thread" {
    local rows one two
    rows="$(sed -n 's/^#define GPC_PARALLEL_MIN_ROWS \([0-9][0-9]*\).*/\1/p' "$REPO/src/lib/base/parallel.h")"
    [ -n "$rows" ] || fail "no GPC_PARALLEL_MIN_ROWS in parallel.h"
    angle_data $((rows + 100)) 9
    awk '{ print ($1 == 1 ? 1 : -1) }' yp.txt > yb.txt
    start_load
    one="$(OMP_NUM_THREADS=1 cpu_seconds gpc-fit -q -k se -O ml -m m1.txt Xp.txt yb.txt)"
    two="$(cpu_seconds gpc-fit -q -k se -O ml -m m2.txt Xp.txt yb.txt)"
    awk -v a="$one" -v b="$two" 'BEGIN { exit !(b <= 2 * a + 0.2) }' ||
        fail "default threads took $two s of CPU against $one s on one thread"
}

@test "threads: OPENBLAS_NUM_THREADS=1 makes a run above the BLAS threshold match one thread bit for bit, loaded or not" {
    local rows
    rows="$(sed -n 's/^#define GPC_PARALLEL_MIN_ROWS \([0-9][0-9]*\).*/\1/p' "$REPO/src/lib/base/parallel.h")"
    angle_data $((rows + 50)) 3
    awk '{ print ($1 == 1 ? 1 : -1) }' yp.txt > yb.txt
    OMP_NUM_THREADS=1 gpc-fit -q -k se -O ml -m m1.txt Xp.txt yb.txt
    OPENBLAS_NUM_THREADS=1 gpc-fit -q -k se -O ml -m m2.txt Xp.txt yb.txt
    assert_files_equal m1.txt m2.txt
    start_load
    OPENBLAS_NUM_THREADS=1 gpc-fit -q -k se -O ml -m m3.txt Xp.txt yb.txt
    assert_files_equal m1.txt m3.txt
}
