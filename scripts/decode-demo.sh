#!/usr/bin/env bash
# Offline decoding demo: real-world packets decoded with strapctl, the way a user pastes
# them from btmon. No daemon and no Bluetooth needed.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --product strapctl >/dev/null
S=.build/debug/strapctl
show() { printf '\n$ strapctl decode %s\n' "$*"; "$S" decode "$@" || printf '(exit %d)\n' "$?"; }
echo "strapd demo — offline GATT decoding (no daemon, no Bluetooth needed)"
show 2a37 16 4a 3e 03                       # HR 74 bpm, contact detected, one RR interval
show heart-rate-measurement 19 4a 00 2c 01 3e 03 00 04  # uint16 HR, energy expended, two RR
show 2a37 10 48 00 04 07                    # dangling odd octet: kept what is whole, warned
show 2a5b 03 10 00 00 00 00 04 05 00 00 08  # CSC wheel + crank counters
show 2a53 07 00 02 b4 64 00 10 27 00 00     # RSC running 2 m/s, 180/min, stride 1 m, 1 km
show 2a19 64                                # battery 100 %
show 2a38 01                                # body sensor location: chest
show 2a19 ff                                # invalid: battery above 100
printf '\n$ strapctl decode csc-measurement --sequence ... --circumference 2.105\n'
"$S" decode csc-measurement --sequence \
  "03 feffffff 00f8 feff 00f8" "03 00000000 00fc ffff 00fc" "03 02000000 0000 0000 0000" \
  "03 02000000 0000 0000 0000" "03 02000000 0000 0000 0000" "03 02000000 0000 0000 0000" \
  --circumference 2.105
