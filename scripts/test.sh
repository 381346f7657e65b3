#!/usr/bin/env bash
# The whole test suite (what .ci/run runs): the Swift tests (unit + integration, including
# the mock-BlueZ, socket, crash and disk-full tests), bounded fuzzing of every byte parser,
# then the end-to-end lab against real bluetoothd when the host can run it.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0

swift build --build-tests || exit 1
# The export tests check strapd's files with third-party readers from this venv.
scripts/pyvenv.sh || exit 1
swift test --skip-build --disable-xctest 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
tests=$(grep -oE 'Test run with [0-9]+ tests' "$log" | tail -1 | grep -oE '[0-9]+' || echo 0)
issues=$(grep -oE 'with [0-9]+ issues?' "$log" | tail -1 | grep -oE '[0-9]+' || echo 0)

scripts/fuzz.sh "${CI_FUZZ_SECONDS:-15}" 2>&1 | tee "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
fuzzed=$(grep -c 'stat::number_of_executed_units' "$log" || true)
crashes=$(grep -c 'FOUND A CRASH' "$log" || true)

lab_passed=0 lab_failed=0
if [ -x scripts/lab-ci.sh ]; then
  scripts/lab-ci.sh 2>&1 | tee "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
  read -r lab_passed lab_failed < <(grep -oE '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1 | grep -oE '[0-9]+' | tr '\n' ' ')
fi

echo
echo "swift tests: $tests run, $issues issues; fuzz: $fuzzed families clean, $crashes crashed; lab: ${lab_passed:-0} passed, ${lab_failed:-0} failed"
echo "ci: $(( tests - (issues > 0 ? 1 : 0) + fuzzed + ${lab_passed:-0} )) passed, $(( (issues > 0 ? 1 : 0) + crashes + ${lab_failed:-0} )) failed"
exit $failed
