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

sed "s|LISTEN_DIR|$work|" "$repo/Tests/Fixtures/mockbluez/bus.conf" > "$work/bus.conf"
dbus-daemon --config-file="$work/bus.conf" --nofork --nopidfile --nosyslog --print-address=1 > "$work/address" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/address" ] && break; sleep 0.05; done
bus=$(head -1 "$work/address")
sensors=""
for n in 1 2 3 4; do
	kind=$(echo "hr hr csc rsc" | cut -d' ' -f$n)
	sensors="$sensors${sensors:+,}{\"address\":\"C0:00:00:00:00:0$n\",\"kind\":\"$kind\",\"hz\":$hz}"
done
echo "{\"streaming\":true,\"known\":true,\"adapters\":[\"hci0\"],\"sensors\":[$sensors]}" > "$work/mock.json"
DBUS_SYSTEM_BUS_ADDRESS=$bus /usr/bin/python3 -u "$repo/Tests/Fixtures/mockbluez/mockbluez.py" \
	--config "$work/mock.json" --state "$work/mock-state.json" > "$work/mock.log" 2>&1 &
pids+=($!)
for _ in $(seq 200); do grep -q ready "$work/mock.log" && break; sleep 0.05; done
printf '[daemon]\nstate_dir = %s\nsocket = %s/s.sock\nsocket_group =\n[bluetooth]\npair_agent = yes\n' "$state" "$work" > "$work/strapd.conf"
DBUS_SYSTEM_BUS_ADDRESS=$bus "$strapd" --config "$work/strapd.conf" > "$work/strapd.log" 2>&1 &
pid=$!
pids+=($pid)
for _ in $(seq 600); do [ -S "$work/s.sock" ] && break; sleep 0.05; done   # 30 s: a slow strapd (valgrind)
# strapd sees org.bluez on the bus a moment after its socket is up (longer under valgrind).
for _ in $(seq 60); do "$strapctl" --socket "$work/s.sock" pair "C0:00:00:00:00:01" > /dev/null 2>&1 && break; sleep 0.5; done
for n in 1 2 3 4; do
	"$strapctl" --socket "$work/s.sock" pair "C0:00:00:00:00:0$n" > /dev/null
	"$strapctl" --socket "$work/s.sock" connect "C0:00:00:00:00:0$n" > /dev/null
done
"$strapctl" --socket "$work/s.sock" live > /dev/null 2>&1 &
pids+=($!)
sleep 5

events() { "$strapctl" --socket "$work/s.sock" status | awk '/pipeline:/{print $5}'; }
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
switches() { cat /proc/$pid/task/*/status | awk '/ctxt_switches/{s += $2} END{print s}'; }
# Run time in ns per thread (schedstat), exact where the ticks are a sample; a thread that
# ends within the window takes its share with it, so the thread ids are compared too.
runtime() { cat /proc/$pid/task/*/schedstat | awk '{s += $1} END{printf "%d", s}'; }
threads() { ls /proc/$pid/task | sort | tr '\n' ' '; }
e0=$(events); t0=$(ticks); s0=$(switches); r0=$(runtime); th0=$(threads)
sleep "$secs"
e1=$(events); t1=$(ticks); s1=$(switches); r1=$(runtime); th1=$(threads)
n=$((e1 - e0))
[ "$n" -gt 0 ] || { echo "bluez-path-cost: no events (see $work/strapd.log)" >&2; exit 1; }
echo "strapd $(basename "$strapd"): $n events in ${secs} s; CPU $(( (t1 - t0) * 10 )) ms," \
	"$(( (t1 - t0) * 10000 / n )) us per event; $(( s1 - s0 )) context switches," \
	"$(awk -v s=$((s1 - s0)) -v n=$n 'BEGIN{printf "%.2f", s / n}') per event; VmRSS $(awk '/VmRSS/{print $2}' /proc/$pid/status) kB;" \
	"run time $(( (r1 - r0) / 1000 / n )) us per event$([ "$th0" = "$th1" ] || echo " (threads came and went: a lower bound)")"
