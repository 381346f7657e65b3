#!/usr/bin/env bash
# strapd beside the bleak + SQLite logger users run today, on this host instead of the lab VM:
# the same logger (Tests/lab/guest/py/bleak_logger.py, bleak and dbus-fast as pinned for the lab
# image) and strapd, one after the other, each against a fresh mock bluetoothd on a private bus
# (Benchmarks/mockbus.sh: four sensors, hr hr csc rsc, HZ notifications a second each, the
# StartNotify path's PropertiesChanged signals) for the same window. It measures each process
# the way the lab's peer-bleak does (Tests/lab/guest/py/procstat.py: resident set from
# smaps_rollup, peak and end; utime+stime) and counts what each received (strapd's pipeline
# events, the logger's SQLite rows), then prints both and the ratios.
#
# Why beside the lab: the lab VM runs under TCG here (no hardware KVM), where a notification's
# cost follows the emulator more than the code; on the host both run on the real CPU. It has no
# radio, no bluetoothd and no latency figure: the lab table stays the one for issue 14; this is
# the same comparison with the emulator taken out (docs/benchmarks.md).
#
#   Benchmarks/bleak-host.sh [SECS]   (default 60; HZ=4; RECORD=1 runs strapd with --record as
#                                      the lab does; STRAPD=path skips the build)
# Without STRAPD it builds strapd and strapctl as `make install` ships them (release,
# --static-swift-stdlib): a build against the shared Swift libraries maps 2-3 MiB more.
# Needs the test packages (scripts/deps.sh test) and PyPI for the venv (.build/bleak-venv).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
hz=${HZ:-4}
if [ -z "${STRAPD:-}" ]; then
	for p in strapd strapctl; do swift build --package-path "$repo" -c release --static-swift-stdlib --product $p 2>&1 | tail -1; done
	STRAPD=$(swift build --package-path "$repo" -c release --static-swift-stdlib --show-bin-path)/strapd
fi
strapd=$(realpath "$STRAPD")
strapctl=$(dirname "$strapd")/strapctl
[ -x "$strapctl" ] || strapctl=$repo/.build/release/strapctl
work=$(mktemp -d /tmp/strapd-bleakhost-XXXXXX)
ram=$(mktemp -d /dev/shm/strapd-bleakhost-XXXXXX)   # both stores in RAM, as in the lab
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work" "$ram"; }
trap cleanup EXIT
# shellcheck source=mockbus.sh
. "$repo/Benchmarks/mockbus.sh"

# The logger's packages as pinned for the lab image (not Bumble, which only the guest runs).
venv=$repo/.build/bleak-venv
grep -E '^(bleak|dbus-fast|typing-extensions)==' "$repo/Tests/lab/image/pip-requirements.txt" > "$work/bleak-requirements.txt"
"$repo/scripts/pyvenv.sh" "$venv" "$work/bleak-requirements.txt" > /dev/null

# CPU is the run time of the threads (mockbus.sh's runtime): utime+stime are 10 ms ticks, too
# coarse for a minute of either side on this CPU; they are printed as a check.
watch() {   # NAME PID COUNT-COMMAND: the window, with the count and run time before and after
	local c0 c1 r0 r1 t0
	sleep 5
	c0=$($3); r0=$(runtime "$2"); t0=$(threads "$2")
	python3 "$repo/Tests/lab/guest/py/procstat.py" "$2" "$secs" > "$work/$1-stat.json"
	c1=$($3); r1=$(runtime "$2")
	[ "$t0" = "$(threads "$2")" ] || echo "bleak-host: $1's threads came and went in the window: its run time is a lower bound" >&2
	echo "$((c1 - c0)) $((r1 - r0))" > "$work/$1-count"
}

# strapd, as bluez-path-cost.sh runs it: sensors known to the mock, paired and connected
# through strapctl, one live subscriber (the reader the logger's commit stands for).
mkdir "$work/a"
mockbus_start "$work/a"
mockbluez_start "$work/a" "$hz" true
record=()
[ "${RECORD:-0}" = 1 ] && record=(--record "$ram/capture.jsonl")
strapd_streaming "$work" "$ram/strapd" "$strapd" "$strapctl" "${record[@]}"
spid=$STRAPD_PID
events() { strapd_events "$work" "$strapctl"; }
watch strapd "$spid" events
kill "$spid" "$MOCKBLUEZ"

# The logger: its own mock, sensors unknown until it scans for them, as a user's script meets
# them; its database in RAM.
mkdir "$work/b"
mockbus_start "$work/b"
mockbluez_start "$work/b" "$hz" false
DBUS_SYSTEM_BUS_ADDRESS=$MOCKBUS "$venv/bin/python" "$repo/Tests/lab/guest/py/bleak_logger.py" \
	--db "$ram/log.sqlite" --ready-file "$work/logger.ready" \
	C0:00:00:00:00:01 C0:00:00:00:00:02 C0:00:00:00:00:03 C0:00:00:00:00:04 > "$work/logger.log" 2>&1 &
lpid=$!
pids+=($lpid)
for _ in $(seq 600); do [ -e "$work/logger.ready" ] && break; sleep 0.1; done
[ -e "$work/logger.ready" ] || { cat "$work/logger.log" >&2; echo "bleak-host: the logger did not subscribe" >&2; exit 1; }
rows() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM notifications").fetchone()[0])' "$ram/log.sqlite"; }
watch logger "$lpid" rows
kill "$lpid"

python3 - "$work" "$secs" "$hz" "${RECORD:-0}" <<'PY'
import json, sys
work, secs, hz, record = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == '1'
side = {}
for name in ('strapd', 'logger'):
    st = json.load(open('%s/%s-stat.json' % (work, name)))
    n, ns = map(int, open('%s/%s-count' % (work, name)).read().split())
    if n <= 0:
        sys.exit('bleak-host: %s received nothing in the window' % name)
    st['n'] = n
    st['cpu_ms_per_n'] = ns / 1e6 / n
    st['tick_ms_per_n'] = st['cpu_s'] * 1000 / n
    st['cpu_s_per_h'] = ns / 1e9 * 3600 / st['window_s']
    side[name] = st
s, l = side['strapd'], side['logger']
mib = lambda kb: '%.1f' % (kb / 1024)
print('bleak-host: %s s per side, 4 mock sensors at %s Hz, strapd%s' % (secs, hz, ' --record' if record else ' as installed'))
print('| | strapd | bleak logger | strapd / logger | target |')
print('|---|---|---|---|---|')
print('| notifications received in the window | %d | %d | | |' % (s['n'], l['n']))
print('| CPU per notification (ms; run time, schedstat) | %.3f | %.3f | %.2f | <= 0.33 |' % (s['cpu_ms_per_n'], l['cpu_ms_per_n'], s['cpu_ms_per_n'] / l['cpu_ms_per_n']))
print('| the same from utime+stime (10 ms ticks; counts threads that ended too) | %.3f | %.3f | %.2f | |' % (s['tick_ms_per_n'], l['tick_ms_per_n'], s['tick_ms_per_n'] / l['tick_ms_per_n']))
print('| CPU (s per hour) | %.1f | %.1f | | |' % (s['cpu_s_per_h'], l['cpu_s_per_h']))
print('| RSS peak (MiB; smaps_rollup) | %s | %s | %.2f | <= 0.20 |' % (mib(s['rss_peak_kb']), mib(l['rss_peak_kb']), s['rss_peak_kb'] / l['rss_peak_kb']))
print('| RSS at the end (MiB) | %s | %s | %.2f | |' % (mib(s['rss_end_kb']), mib(l['rss_end_kb']), s['rss_end_kb'] / l['rss_end_kb']))
print('| of it anonymous / mapped files (MiB) | %s / %s | %s / %s | | |' % (mib(s['anon_kb']), mib(s['file_kb']), mib(l['anon_kb']), mib(l['file_kb'])))
PY
