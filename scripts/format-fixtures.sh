#!/bin/sh
# Writes the format fixture of this build's release into Tests/Fixtures/format/<release>/
# (state directory + manifest.json) by driving today's store, journal, workout engine and
# profile book (Tests/StrapDaemonTests/FormatFixtures.swift). Run it once per format change,
# in the release that makes it, and commit the result; it refuses to overwrite a fixture:
# the committed bytes are what every later version must read (docs/storage.md, "Format versions").
set -eu
cd "$(dirname "$0")/.."
swift build --build-tests
STRAP_WRITE_FORMAT_FIXTURE=1 swift test --skip-build --disable-xctest --filter 'FormatCompatibilityTests/writeAFormatFixture'
