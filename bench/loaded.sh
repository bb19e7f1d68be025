#!/bin/sh
# Run COMMAND with two busy processes per core for the whole time (started
# here and stopped when it ends), as on a shared node under make -j.
#
#   bench/loaded.sh COMMAND [ARG]...
set -eu
busy=
# KILL, which no shell can catch: a TERM that reaches a loop's shell between
# its fork and its exec finds the trap below still set and is lost.
stop_load() {
    # shellcheck disable=SC2086 # one word per process id
    [ -z "$busy" ] || kill -KILL $busy 2>/dev/null || true
}
trap stop_load EXIT
trap 'exit 130' INT TERM
for _ in $(seq $((2 * $(nproc)))); do
    sh -c 'while :; do :; done' &
    busy="$busy $!"
done
"$@"
