#!/bin/sh
# Run every unit test binary given as an argument, then the Bats tests, and
# print one summary line over all of them: "N passed, N failed".
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
passed=$(grep -c '^ok ' "$log")
failed=$(grep -c '^not ok ' "$log")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
