#!/usr/bin/env bash
# Instructions and allocations per BlueZ notification (issue 37's measure; docs/benchmarks.md,
# "Instructions and allocations per notification"). callgrind runs the static release strapd in
# BlueZ mode (`--record`, as the lab runs it) against the test suite's mock bluetoothd on a
# private bus (Benchmarks/mockbus.sh: four sensors at HZ notifications/s each, StartNotify's
# PropertiesChanged signals, one `strapctl live` subscriber), instrumented for SECS seconds once
# the sensors stream. Prints strapd's instructions (every thread) and its calls to malloc,
# calloc, realloc and posix_memalign, each divided by the pipeline events of the window.
#
#   Benchmarks/notification-cost.sh [SECS] [STRAPD]   (defaults: 40; a static release build of this checkout)
#
# NOTIFY_MODE=acquire measures the AcquireNotify path (one datagram per notification on the
# link's socket) instead of the default StartNotify's PropertiesChanged signals.
#
# CALLGRIND_OUT=DIR keeps the profile (DIR/cg.*) for callgrind_annotate, e.g. who allocates:
#   callgrind_annotate --inclusive=yes --tree=caller DIR/cg.1 | grep -B8 '\* .*malloc'
#
# Needs valgrind and the test packages (scripts/deps.sh test bench). Deterministic enough to
# compare two builds one after the other (instructions vary by about 1 % between runs).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-40}
hz=${HZ:-4}
command -v valgrind > /dev/null || { echo "notification-cost: valgrind missing (scripts/deps.sh bench)" >&2; exit 1; }
cd "$repo"
if [ -n "${2:-}" ]; then
	strapd=$(realpath "$2")
else
	swift build -c release --static-swift-stdlib --product strapd 2>&1 | tail -1
	strapd=$(swift build -c release --static-swift-stdlib --show-bin-path)/strapd
fi
strapctl=$(dirname "$strapd")/strapctl
[ -x "$strapctl" ] || { swift build -c release --static-swift-stdlib --product strapctl 2>&1 | tail -1; strapctl=$(swift build -c release --static-swift-stdlib --show-bin-path)/strapctl; }
work=$(mktemp -d /tmp/strapd-notecost-XXXXXX)
state=$(mktemp -d /dev/shm/strapd-notecost-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work" "$state"; }
trap cleanup EXIT

# valgrind cannot read the DWARF of Swift 6 builds; the symbol table is enough. Under valgrind
# strapd must keep its pages (scripts/hot-path-order.sh says why): madvise/mprotect do nothing.
objcopy --strip-debug "$strapd" "$work/strapd"
printf '#include <stddef.h>\nint madvise(void *a, size_t n, int f) { (void)a; (void)n; (void)f; return 0; }\nint mprotect(void *a, size_t n, int p) { (void)a; (void)n; (void)p; return 0; }\n' > "$work/keep.c"
cc -shared -fPIC -o "$work/keep.so" "$work/keep.c"
printf '#!/bin/sh\nLD_PRELOAD=%s/keep.so exec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=%s/cg %s/strapd --record %s/capture.jsonl "$@"\n' \
	"$work" "$work" "$work" "$work" > "$work/strapd-vg"
chmod +x "$work/strapd-vg"

# shellcheck source=mockbus.sh
. "$repo/Benchmarks/mockbus.sh"
mockbus_start "$work"
mockbluez_start "$work" "$hz" true
strapd_streaming "$work" "$state" "$work/strapd-vg" "$strapctl" --set "bluetooth.notify_mode=${NOTIFY_MODE:-notify}"
vg=$(pgrep -f "callgrind-out-file=$work/cg" | head -1)
sleep 15   # every link streaming, the live subscriber attached

e0=$(strapd_events "$work" "$strapctl")
callgrind_control -i on "$vg" > /dev/null
sleep "$secs"
callgrind_control -i off "$vg" > /dev/null
e1=$(strapd_events "$work" "$strapctl")
callgrind_control -d "$vg" > /dev/null
sleep 3
events=$((e1 - e0))
[ -n "${CALLGRIND_OUT:-}" ] && mkdir -p "$CALLGRIND_OUT" && cp "$work"/cg.* "$CALLGRIND_OUT"/
[ "$events" -gt 0 ] || { echo "notification-cost: no pipeline events in the window; strapd's log:" >&2; cat "$work/strapd.log" >&2; exit 1; }

# Instructions: the summary line of each dump. Allocations: the calls= lines under a callee of
# the malloc family (names are compressed: "(id) name" the first time, "(id)" after).
read -r instructions allocations < <(cat "$work"/cg.* | awk '
	/^(summary|totals):/ { ir += $2; next }
	/^c?fn=\(/ {
		match($0, /\([0-9]+\)/); id = substr($0, RSTART, RLENGTH); rest = substr($0, RSTART + RLENGTH + 1)
		if (rest != "") name[id] = rest
		if ($0 ~ /^cfn=/) callee = name[id]
		next
	}
	/^calls=/ { split(substr($0, 7), c, " "); if (callee ~ /^(malloc|calloc|realloc|posix_memalign)$/) allocs += c[1] }
	END { printf "%d %d\n", ir, allocs }')
printf 'notification-cost: %d pipeline events in %d s (HZ=%s, 4 sensors, notify_mode=%s)\n' "$events" "$secs" "$hz" "${NOTIFY_MODE:-notify}"
printf 'notification-cost: %.1f k instructions and %.1f allocations per notification\n' \
	"$(echo "$instructions / $events / 1000" | bc -l)" "$(echo "$allocations / $events" | bc -l)"
