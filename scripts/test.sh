#!/usr/bin/env bash
# The whole test suite: Swift tests (unit + integration), then bounded fuzzing.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
swift test --skip-build --disable-xctest
scripts/fuzz.sh "${CI_FUZZ_SECONDS:-15}"
