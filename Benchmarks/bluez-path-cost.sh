#!/usr/bin/env bash
# What one BlueZ notification costs strapd, on this host, without a Bluetooth controller:
# a private dbus-daemon, the test suite's mock bluetoothd (Tests/Fixtures/mockbluez; its
# notifications are PropertiesChanged signals, as bluetoothd's StartNotify path sends them),
# four sensors at HZ notifications/s each, strapd in BlueZ mode with its store in /dev/shm
# (like the lab's RAM store) and one `strapctl live` subscriber. Over SECS seconds it prints
# strapd's CPU (utime+stime, 10 ms ticks) and context switches (every thread, voluntary and
# not) per pipeline event. docs/benchmarks.md, "strapd beside a bleak logger", has the use.
#
#   Benchmarks/bluez-path-cost.sh [STRAPD] [SECS]   (defaults: .build/release/strapd, 60)
#
# Needs the test packages (dbus-daemon, Debian's python3 with dbus and dbusmock:
# scripts/deps.sh test). One run is one sample: compare builds one after the other, more than
# once, on an otherwise idle machine.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
strapd=$(realpath "${1:-$repo/.build/release/strapd}")
secs=${2:-60}
hz=${HZ:-4}
strapctl=$repo/.build/release/strapctl
[ -x "$strapctl" ] || strapctl=$(dirname "$strapd")/strapctl
work=$(mktemp -d /tmp/strapd-bluezcost-XXXXXX)
state=$(mktemp -d /dev/shm/strapd-bluezcost-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work" "$state"; }
trap cleanup EXIT

# shellcheck source=mockbus.sh
. "$repo/Benchmarks/mockbus.sh"
mockbus_start "$work"
mockbluez_start "$work" "$hz" true
strapd_streaming "$work" "$state" "$strapd" "$strapctl"
pid=$STRAPD_PID
sleep 5

events() { strapd_events "$work" "$strapctl"; }
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
switches() { cat /proc/$pid/task/*/status | awk '/ctxt_switches/{s += $2} END{print s}'; }
e0=$(events); t0=$(ticks); s0=$(switches); r0=$(runtime "$pid"); th0=$(threads "$pid")
sleep "$secs"
e1=$(events); t1=$(ticks); s1=$(switches); r1=$(runtime "$pid"); th1=$(threads "$pid")
n=$((e1 - e0))
[ "$n" -gt 0 ] || { echo "bluez-path-cost: no events (see $work/strapd.log)" >&2; exit 1; }
echo "strapd $(basename "$strapd"): $n events in ${secs} s; CPU $(( (t1 - t0) * 10 )) ms," \
	"$(( (t1 - t0) * 10000 / n )) us per event; $(( s1 - s0 )) context switches," \
	"$(awk -v s=$((s1 - s0)) -v n=$n 'BEGIN{printf "%.2f", s / n}') per event; VmRSS $(awk '/VmRSS/{print $2}' /proc/$pid/status) kB;" \
	"run time $(( (r1 - r0) / 1000 / n )) us per event$([ "$th0" = "$th1" ] || echo " (threads came and went: a lower bound)")"
