#!/usr/bin/env bash
# Builds one libFuzzer binary per decoder family (StrapGATT's sources + one entry point,
# compiled with -sanitize=fuzzer,address) and runs each for SECONDS (default 60).
# Usage: scripts/fuzz.sh [SECONDS] [FAMILY...]   families: heart-rate cycling power running device wire fit
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
FAMILIES=("$@")
[ ${#FAMILIES[@]} -gt 0 ] || FAMILIES=(heart-rate cycling power running device wire fit)
mkdir -p fuzz/bin
declare -A ENTRY=([heart-rate]=HeartRateFuzz [cycling]=CyclingFuzz [power]=TrainerFuzz [running]=RunningFuzz [device]=DeviceFuzz [wire]=WireFuzz [fit]=FITFuzz)
# Which module's sources each entry point is compiled with (all pure, no dependencies).
declare -A MODULE=([heart-rate]=StrapGATT [cycling]=StrapGATT [power]=StrapGATT [running]=StrapGATT [device]=StrapGATT [wire]=StrapWire [fit]=StrapExport)
# A FIT workout file of a few steps is a few hundred bytes.
declare -A MAX_LEN=([fit]=1024)
status=0
for family in "${FAMILIES[@]}"; do
  entry=${ENTRY[$family]:?unknown family $family}
  bin=fuzz/bin/$family
  srcs=(Sources/${MODULE[$family]}/*.swift Tests/Fuzz/FuzzInput.swift "Tests/Fuzz/$entry.swift")
  if [ "$family" = fit ]; then
    # The FIT reader and workout mapping need StrapModel and StrapWire: their sources and the
    # FIT files become one module, each file's imports of the other two removed.
    fitsrcs=(Sources/StrapWire/*.swift Sources/StrapModel/*.swift Sources/StrapExport/{FITReader,FITProtocol,FITWorkoutFile,FITWorkoutFile+Decode,ActivityMapping,ByteSink}.swift)
    srcs=("${fitsrcs[@]}" Tests/Fuzz/FuzzInput.swift "Tests/Fuzz/$entry.swift")
    rm -rf fuzz/src-fit && mkdir -p fuzz/src-fit
    for f in "${fitsrcs[@]}"; do sed -E '/^import (StrapWire|StrapModel)$/d' "$f" > "fuzz/src-fit/$(basename "$(dirname "$f")")-$(basename "$f")"; done
  fi
  if [ ! -x "$bin" ] || [ -n "$(find "${srcs[@]}" scripts/fuzz.sh -newer "$bin" 2>/dev/null)" ]; then
    echo "fuzz: building $family"
    # ld.gold warns about ASan-internal symbols it cannot export; harmless, so filtered.
    build=("${srcs[@]}")
    [ "$family" = fit ] && build=(fuzz/src-fit/*.swift Tests/Fuzz/FuzzInput.swift "Tests/Fuzz/$entry.swift")
    swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name "${MODULE[$family]}Fuzz" \
      "${build[@]}" -o "$bin" 2> >(grep -v "Cannot export local symbol" >&2)
  fi
  corpus=fuzz/corpus-$family
  mkdir -p "$corpus"
  # Committed seeds (a valid input of the family) start the corpus where random bytes rarely get.
  [ -d "Tests/Fuzz/seeds/$family" ] && cp -n "Tests/Fuzz/seeds/$family"/* "$corpus"/
  echo "fuzz: running $family for ${SECONDS_EACH}s"
  if ! SWIFT_BACKTRACE=enable=no "$bin" -artifact_prefix=fuzz/ -max_total_time="$SECONDS_EACH" -max_len="${MAX_LEN[$family]:-256}" -print_final_stats=1 "$corpus" \
        > "fuzz/$family.log" 2>&1; then
    echo "fuzz: $family FOUND A CRASH — see fuzz/$family.log and the crash-* file"
    tail -n 30 "fuzz/$family.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "fuzz/$family.log" | tail -n 1 | sed "s/^/fuzz: $family: /"
  fi
done
exit $status
