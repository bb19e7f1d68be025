#!/bin/sh
# Run every unit test binary given as an argument, then the Bats tests, and
# print one summary line over all of them: "N passed, N failed, N skipped".
# A skipped test (TAP "ok N ... # skip") did not show anything works, so it is
# counted apart from the passes, and listed.  The run fails if any test failed
# or none passed.
cd "$(dirname "$0")/.." || exit 3
log=$(mktemp) || exit 3
trap 'rm -f "$log"' EXIT
for t in "$@"; do
    echo "# $t"
    "$t" 2>&1 || echo "not ok - $t exited with status $?"
done | tee -a "$log"
if command -v bats >/dev/null 2>&1; then
    bats --tap tests/cli 2>&1 | tee -a "$log"
else
    echo "not ok - bats is not installed" | tee -a "$log"
fi
# TAP directives are case-insensitive; "# TODO" marks an expected failure,
# which gpc does not use, so it is counted as what it printed.
skipped=$(grep -ci '^ok .*# *skip' "$log")
passed=$(($(grep -c '^ok ' "$log") - skipped))
failed=$(grep -c '^not ok ' "$log")
if [ "$skipped" -gt 0 ]; then
    echo "skipped:"
    grep -i '^ok .*# *skip' "$log" | sed 's/^/    /'
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
