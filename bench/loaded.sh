#!/bin/sh
# Run COMMAND with two busy processes per core for the whole time (started
# here and stopped when it ends), as on a shared node under make -j.
#
#   bench/loaded.sh COMMAND [ARG]...
set -eu
busy=
stop_load() {
    [ -z "$busy" ] || kill $busy 2>/dev/null || true
}
trap stop_load EXIT
trap 'exit 130' INT TERM
for k in $(seq $((2 * $(nproc)))); do
    sh -c 'while :; do :; done' &
    busy="$busy $!"
done
"$@"
